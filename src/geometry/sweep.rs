//! Swept tests: when do two moving shapes first and last overlap during a step?

use crate::Vector;
use crate::geometry::{Ball, BoundingBox, Ray};

/// The result of a swept test over one step, in normalized time (0 = start of the step,
/// 1 = end).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepInterval<V: Vector> {
    /// First time of overlap, in `[0, 1]`. 0 when the shapes already overlap at the start.
    pub u0: f32,
    /// Last time of overlap, in `[u0, 1]`. 1 when they still overlap at the end.
    pub u1: f32,
    /// Unit contact normal at `u0`, pointing from the first shape towards the second.
    /// Zero when the shapes overlap at the start (no first contact to speak of).
    pub normal: V,
}

/// Sweeps two boxes that both move during the step and returns when they first and last
/// overlap, or `None` if they never do.
///
/// `a` and `b` are the boxes at the start of the step; `da` and `db` their displacements
/// over the step. Touching counts as overlapping (inclusive, like
/// [`BoundingBox::overlaps`]).
///
/// The problem is solved in `a`'s frame: `b` moves by `v = db - da`. On each axis the
/// projections overlap for an interval of time; the boxes overlap when all these
/// intervals do, so `u0` is the latest entry and `u1` the earliest exit. Cases per axis:
/// - `v = 0`: the projections overlap for all time if they overlap now, else never (the
///   whole sweep misses);
/// - `v > 0`: `b` slides towards `+`: it enters at `(a.min - b.max) / v` and leaves at
///   `(a.max - b.min) / v`;
/// - `v < 0`: the same two times, swapped.
///
/// The pair overlaps during the step when `max(u0, 0) <= min(u1, 1)`. Three cases need
/// care: boxes separated on an axis along which they do not move never meet (per-axis
/// defaults of 0 and 1 would report a hit); boxes that overlap at the start have `u0 = 0`
/// and their real exit time as `u1`; and an entry time past the end of the step is a miss
/// even when no axis clips `u1` below 1.
#[inline(always)]
pub fn sweep_boxes<V: Vector>(
    a: &BoundingBox<V>,
    da: V,
    b: &BoundingBox<V>,
    db: V,
) -> Option<SweepInterval<V>> {
    let v = db - da;
    let mut u0 = f32::NEG_INFINITY;
    let mut u1 = f32::INFINITY;
    let mut entry_axis = 0;
    for axis in 0..V::DIM {
        let vi = v.axis(axis);
        let (a_lo, a_hi) = (a.min.axis(axis), a.max.axis(axis));
        let (b_lo, b_hi) = (b.min.axis(axis), b.max.axis(axis));
        let (enter, exit) = if vi == 0.0 {
            if b_hi < a_lo || a_hi < b_lo {
                return None;
            }
            (f32::NEG_INFINITY, f32::INFINITY)
        } else {
            let t_lo = (a_lo - b_hi) / vi;
            let t_hi = (a_hi - b_lo) / vi;
            if vi > 0.0 { (t_lo, t_hi) } else { (t_hi, t_lo) }
        };
        if enter > u0 {
            u0 = enter;
            entry_axis = axis;
        }
        u1 = u1.min(exit);
    }
    if u0 > u1 || u0 > 1.0 || u1 < 0.0 {
        return None;
    }
    let mut normal = V::ZERO;
    if u0 > 0.0 {
        // b approaches along `entry_axis`: moving towards + it meets a's min face, so
        // from a towards b is the negative direction.
        let sign = if v.axis(entry_axis) > 0.0 { -1.0 } else { 1.0 };
        normal.set_axis(entry_axis, sign);
    }
    Some(SweepInterval {
        u0: u0.max(0.0),
        u1: u1.min(1.0),
        normal,
    })
}

/// Sweeps two moving balls: first and last overlap during the step, or `None`.
///
/// In `a`'s frame `b`'s center moves along `m(u) = (cb - ca) + u v` with `v = db - da`;
/// they overlap while `|m(u)| <= ra + rb`, a quadratic inequality in `u`. Cases: zero
/// relative motion (overlap for all time or never), negative discriminant (never), else
/// the two roots clipped to `[0, 1]`. The normal is `m(u0)` normalized; when both radii
/// are zero the centers coincide at contact and it is the direction `b` came from, `-v`.
pub fn sweep_balls<V: Vector>(a: &Ball<V>, da: V, b: &Ball<V>, db: V) -> Option<SweepInterval<V>> {
    let m = b.center - a.center;
    let v = db - da;
    let r = a.radius + b.radius;
    let c = m.dot(m) - r * r;
    let vv = v.dot(v);
    if vv == 0.0 {
        return (c <= 0.0).then_some(SweepInterval {
            u0: 0.0,
            u1: 1.0,
            normal: V::ZERO,
        });
    }
    let bq = m.dot(v);
    let disc = bq * bq - vv * c;
    if disc < 0.0 {
        return None;
    }
    let sq = disc.sqrt();
    let t0 = (-bq - sq) / vv;
    let t1 = (-bq + sq) / vv;
    if t0 > 1.0 || t1 < 0.0 {
        return None;
    }
    let (u0, normal) = if c <= 0.0 || t0 <= 0.0 {
        (0.0, V::ZERO)
    } else {
        let n = m + v * t0;
        let len = n.dot(n).sqrt();
        // Two points meet center on center (len = 0): b arrived from -v.
        (t0, if len > 0.0 { n / len } else { -v / vv.sqrt() })
    };
    Some(SweepInterval {
        u0,
        u1: t1.min(1.0),
        normal,
    })
}

/// Sweeps a moving ball against a moving box: the first time of overlap during the step,
/// or `None`. `u1` is the last time of overlap of the ball's bounding box with the box,
/// an upper bound of the exact exit time.
///
/// In the box's frame the ball's center moves along a segment and must come within the
/// radius of the box (a box with rounded edges and corners). Within the box grown by the
/// radius the center's distance to the box is, between crossings of the box's face
/// planes, a quadratic in time: the first contact is found in closed form, region by
/// region (a face, an edge, a corner). A pass within `1e-5` of the box's size (at least
/// `1e-5`) counts as a hit. The normal points from the center to the closest point of the
/// box; for a radius of zero (a point reaching a face, the two coincide) it is the normal
/// of the face crossed.
pub fn sweep_ball_box<V: Vector>(
    ball: &Ball<V>,
    d_ball: V,
    aabb: &BoundingBox<V>,
    d_box: V,
) -> Option<SweepInterval<V>> {
    sweep_point(ball.center, d_ball - d_box, aabb, ball.radius)
}

/// A point moving from `c` by `v` over the step against the box `inner` rounded by
/// `r >= 0` (every point within `r` of it): the first and last time the point is in the
/// rounded box, the normal pointing from the point towards the box at the first (zero
/// when it is in at the start). A ball against a box, and any two rounded boxes in one's
/// frame, are this.
///
/// The rounded box lies in `inner` grown by `r`, so the point's interval in that grown
/// box (a slab test) bounds everything: a miss there is a miss, and its end is `u1`.
/// Inside, the point's distance to `inner` is a convex function of time, and the point is
/// in the rounded box once that distance is at most `r`. The distance's form changes only
/// where the point crosses a face plane of `inner` (at most two per axis): between two
/// crossings the axes `S` on which the point lies outside `inner` stay the same (a
/// region: a face, an edge or a corner of the rounded box), and the squared distance is
/// the quadratic `|q + v_S t|^2` over them. Cases per region, in time order:
/// - the point is outside on at most one axis: within the grown box that is within `r`,
///   a hit at the region's start (a face of the rounded box, or a contact found exactly
///   at a crossing);
/// - in the rounded box already at the region's start: a hit there;
/// - moving away from `inner`: the distance only grows from here (it is convex), so no
///   hit;
/// - the quadratic reaches `r` while the point is still in the region: the smaller root
///   (an edge or a corner);
/// - its minimum, or the end of the step before the root, comes while the point is in the
///   region: the closest the point comes, a hit only as a graze (below);
/// - otherwise the next region, from the next crossing.
///
/// A pass whose closest approach is within `1e-5` of the box's size (at least `1e-5`) is
/// a hit at that approach: a graze computed in floats may come out a hair apart.
///
/// The slab test and a start in the rounded box, which decide most pairs, are inlined
/// into the callers; the walk over the regions is a call of its own.
#[inline(always)]
pub(crate) fn sweep_point<V: Vector>(
    c: V,
    v: V,
    inner: &BoundingBox<V>,
    r: f32,
) -> Option<SweepInterval<V>> {
    let grown = BoundingBox::from_min_max(inner.min - V::splat(r), inner.max + V::splat(r));
    let slab = point_slab(c, v, &grown)?;
    sweep_point_in(c, v, inner, r, slab)
}

/// The slab test of [`sweep_point`]: the point as a box of no size, moving into the
/// grown box standing still. Its normal points from the grown box towards the point:
/// across the face it enters.
#[inline(always)]
pub(crate) fn point_slab<V: Vector>(
    c: V,
    v: V,
    grown: &BoundingBox<V>,
) -> Option<SweepInterval<V>> {
    sweep_boxes(grown, V::ZERO, &BoundingBox::from_min_max(c, c), v)
}

/// [`sweep_point`] once the point's interval in the grown box is `slab`.
#[inline(always)]
pub(crate) fn sweep_point_in<V: Vector>(
    c: V,
    v: V,
    inner: &BoundingBox<V>,
    r: f32,
    slab: SweepInterval<V>,
) -> Option<SweepInterval<V>> {
    if slab.u0 == 0.0 {
        // The position at time 0 as the region walk computes every position (`c + v * u`):
        // a -0 coordinate reads +0, and an infinite `v` gives NaN, as there.
        let p = c + v * 0.0;
        let g = inner.closest_point(p) - p;
        if g.dot(g) <= r * r {
            return Some(SweepInterval {
                u0: 0.0,
                u1: slab.u1,
                normal: V::ZERO,
            });
        }
    }
    sweep_regions(c, v, inner, r, slab)
}

/// [`sweep_point`] past the slab test, for a point not in the rounded box at the start:
/// the regions of the grown box it passes through, in time order.
fn sweep_regions<V: Vector>(
    c: V,
    v: V,
    inner: &BoundingBox<V>,
    r: f32,
    slab: SweepInterval<V>,
) -> Option<SweepInterval<V>> {
    let (lo, hi) = (inner.min, inner.max);
    let (u0, u1) = (slab.u0, slab.u1);
    // From the point to the closest point of `inner`.
    let gap_at = |t: f32| {
        let p = c + v * t;
        inner.closest_point(p) - p
    };
    let tolerance = 1e-5 * (hi - lo).max_element().max(r).max(1.0);
    // A hit at `t`, where the gap from the point to `inner` is `n`.
    let hit_with = |t: f32, n: V| {
        let len = n.dot(n).sqrt();
        // On the face the point entered through (a radius of zero): across it, zero
        // when the point starts inside.
        let normal = if len > 0.0 { n / len } else { -slab.normal };
        Some(SweepInterval {
            u0: t,
            u1: u1.max(t),
            normal,
        })
    };
    let hit = |t: f32| hit_with(t, gap_at(t));
    // The closest approach at `t`: a hit only as a graze.
    let graze = |t: f32| {
        let g = gap_at(t);
        (g.dot(g).sqrt() - r <= tolerance)
            .then(|| hit_with(t, g))
            .flatten()
    };
    // Whether the point at `t` is in the region given by `side`: each axis's side of
    // `inner` (-1 below, 0 within, +1 above).
    let in_region = |t: f32, side: V| {
        let p = c + v * t;
        (0..V::DIM).all(|axis| {
            let (pi, si) = (p.axis(axis), side.axis(axis));
            let (l, h) = (lo.axis(axis), hi.axis(axis));
            if si == 0.0 {
                l <= pi && pi <= h
            } else if si > 0.0 {
                pi >= h
            } else {
                pi <= l
            }
        })
    };
    let r64 = f64::from(r);
    let mut t = u0;
    // The side of each axis fixed by the crossing that starts a region (2: read it from
    // the position): the computed position there may round to either side of the plane.
    let mut crossed = [2.0f32; 3];
    // Each face plane is crossed at most once: 2 * DIM + 1 regions at most.
    for _ in 0..=2 * V::DIM {
        let p = c + v * t;
        // The region just after `t`: the axes on which the point is outside `inner`, or
        // on a face plane and moving out. The quadratic in f64: its discriminant is a
        // fourth power of lengths, which f64 holds for any f32 input.
        let (mut side, mut outside) = (V::ZERO, 0);
        let (mut vv, mut vq, mut qq) = (0.0f64, 0.0f64, 0.0f64);
        for (axis, &crossed) in crossed.iter().enumerate().take(V::DIM) {
            let (pi, vi) = (p.axis(axis), v.axis(axis));
            let (l, h) = (lo.axis(axis), hi.axis(axis));
            let sign = if crossed != 2.0 {
                crossed
            } else if pi > h || pi == h && vi > 0.0 {
                1.0
            } else if pi < l || pi == l && vi < 0.0 {
                -1.0
            } else {
                0.0
            };
            if sign == 0.0 {
                continue;
            }
            let face = if sign > 0.0 { h } else { l };
            outside += 1;
            side.set_axis(axis, sign);
            let (q, vi) = (f64::from(pi - face), f64::from(vi));
            vv += vi * vi;
            vq += vi * q;
            qq += q * q;
        }
        let excess = qq - r64 * r64;
        if outside <= 1 || excess <= 0.0 {
            return hit(t);
        }
        if vq >= 0.0 {
            return (qq.sqrt() - r64 <= f64::from(tolerance))
                .then(|| hit(t))
                .flatten();
        }
        let disc = vq * vq - vv * excess;
        // The smaller root of vv τ² + 2 vq τ + excess (in the form that does not cancel),
        // or the time of the least distance.
        let tau = if disc >= 0.0 {
            excess / (disc.sqrt() - vq)
        } else {
            -vq / vv
        } as f32;
        // The root, the least distance, or the end of the step if either comes after it.
        let at = (t + tau).min(u1);
        if in_region(at, side) {
            if disc >= 0.0 && t + tau <= u1 {
                return hit(at);
            }
            // The closest the point comes in the rest of the step: a graze or a miss.
            return graze(at);
        }
        // The next crossing of a face plane. Per axis, the times the point crosses the
        // plane it leaves `inner` by and the one it enters by (NaN when it moves along
        // them).
        let mut planes = [(f32::NAN, f32::NAN); 3];
        let mut next = u1;
        for (axis, planes) in planes.iter_mut().enumerate().take(V::DIM) {
            let vi = v.axis(axis);
            if vi != 0.0 {
                let crossing = |plane: f32| (plane - c.axis(axis)) / vi;
                let (at_lo, at_hi) = (crossing(lo.axis(axis)), crossing(hi.axis(axis)));
                *planes = if vi > 0.0 {
                    (at_hi, at_lo)
                } else {
                    (at_lo, at_hi)
                };
                for x in [at_lo, at_hi] {
                    if x > t && x < next {
                        next = x;
                    }
                }
            }
        }
        if next >= u1 {
            return None;
        }
        // The side of each axis crossed at `next`: out past the plane left by (on a flat
        // axis both planes at once, the one left by wins), within past the one entered
        // by, else read from the position.
        for (axis, crossed) in crossed.iter_mut().enumerate().take(V::DIM) {
            let (leave, enter) = planes[axis];
            *crossed = if leave == next {
                v.axis(axis).signum()
            } else if enter == next {
                0.0
            } else {
                2.0
            };
        }
        t = next;
    }
    None
}

/// Casts `shape` along `direction` against `target`: the first `t` in `[0, max_t]` at
/// which they touch (0 when they overlap at the start), with the outward normal of
/// `target`'s face that is hit (zero at `t = 0`).
///
/// A box moving against a box is a point (the moving box's center) moving against the
/// target grown by the moving box's half extents (their Minkowski sum), so the cast is a
/// ray cast: [`Ray::box_hit_with_normal_at`].
pub fn box_cast_at<V: Vector>(
    shape: &BoundingBox<V>,
    direction: V,
    max_t: f32,
    target: &BoundingBox<V>,
) -> Option<(f32, V)> {
    let half = shape.half_extents();
    let grown = BoundingBox::from_min_max(target.min - half, target.max + half);
    Ray::new(shape.center(), direction).box_hit_with_normal_at(&grown, max_t)
}
