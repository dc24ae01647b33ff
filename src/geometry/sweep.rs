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
/// radius of the box (a box with rounded edges and corners). The segment is first cast
/// against the box grown by the radius, which contains the rounded box: a miss there is a
/// miss. From the entry into the grown box, conservative advancement closes in: at each
/// step the center can move by the current distance minus the radius without touching, so
/// `u` advances by that over the speed; it converges on the first contact, or passes the
/// end of the step (miss). Distances below `1e-5` of the box's size count as contact.
/// Near a shallow approach to an edge or a corner each step gains less and less; if 64
/// steps have not converged, the convexity of the gap in `u` (the distance from a point
/// moving along a line to a convex set) finishes: a ternary search finds its minimum over
/// the rest of the step (above the tolerance: a miss), then bisection between `u` and
/// that minimum finds the first contact.
/// The normal points from the center to the closest point of the box; for a radius of
/// zero (a point reaching a face, the two coincide) it is the normal of the face crossed.
pub fn sweep_ball_box<V: Vector>(
    ball: &Ball<V>,
    d_ball: V,
    aabb: &BoundingBox<V>,
    d_box: V,
) -> Option<SweepInterval<V>> {
    let v = d_ball - d_box;
    let grown = aabb.grown(ball.radius);
    let bounds = sweep_boxes(&ball.bounding_box(), v, aabb, V::ZERO)?;
    if ball.overlaps_box(aabb) {
        return Some(SweepInterval {
            u0: 0.0,
            u1: bounds.u1,
            normal: V::ZERO,
        });
    }
    let ray = Ray::new(ball.center, v);
    let (mut u, entry_normal) = ray.box_hit_with_normal_at(&grown, 1.0)?;
    let speed = v.dot(v).sqrt();
    let scale = aabb.size().max_element().max(ball.radius).max(1.0);
    let tolerance = 1e-5 * scale;
    let gap_at = |u: f32| {
        let c = ray.at(u);
        let d = c - aabb.closest_point(c);
        d.dot(d).sqrt() - ball.radius
    };
    let contact = |u: f32| {
        let c = ray.at(u);
        let n = aabb.closest_point(c) - c;
        let len = n.dot(n).sqrt();
        SweepInterval {
            u0: u,
            u1: bounds.u1.max(u),
            // A point on the face it entered through (radius 0): across that face.
            normal: if len > 0.0 { n / len } else { -entry_normal },
        }
    };
    for _ in 0..64 {
        let gap = gap_at(u);
        if gap <= tolerance {
            return Some(contact(u));
        }
        u += gap / speed;
        if u > 1.0 {
            return None;
        }
    }
    // Not converged (shallow approach): minimum of the convex gap over [u, 1], then the
    // first contact between u (apart) and that minimum (touching).
    let (mut lo, mut hi) = (u, 1.0f32);
    for _ in 0..64 {
        let (m1, m2) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
        if gap_at(m1) <= gap_at(m2) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    let (mut apart, mut touching) = (u, 0.5 * (lo + hi));
    if gap_at(touching) > tolerance {
        return None;
    }
    for _ in 0..64 {
        let mid = 0.5 * (apart + touching);
        if gap_at(mid) > tolerance {
            apart = mid;
        } else {
            touching = mid;
        }
    }
    Some(contact(touching))
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
