//! The rounded-box oracle: `f64` geometry of boxes grown by a radius, from the definition,
//! and the checks of every rounded-box function against it.
//!
//! A rounded box is the set of points within its radius of its inner box (a product of
//! intervals). From that definition alone, in `f64`:
//! - the distance between two inner boxes is the length of the vector of per-axis interval
//!   gaps (zero on an axis where the intervals overlap); two rounded boxes overlap when it
//!   is at most the sum of the radii, and their signed gap is it less the radii;
//! - a point's distance to a rounded box is its distance to the inner box (clamped per
//!   axis) less the radius;
//! - the contact's depth is the shortest translation of the second shape that leaves them
//!   touching, found by search: along many directions the distance at which the shapes stop
//!   overlapping, by bisection, then a local search around the best;
//! - sweeps, rays and casts: the signed gap sampled along the motion (see
//!   [`Samples`]), then the first and last contact refined by bisection on it (it is convex
//!   in time: the distance between convex sets moving linearly).
//!
//! Closest points are judged by what defines them (a point of each shape, their distance
//! the oracle's), not against a formula.

use super::*;
use bevy_aabb_tree::RoundedBox;
use bevy_aabb_tree::geometry::{contact_rounded, rounded_cast_at, sweep_rounded};

// ---------------------------------------------------------------------------------------
// Building values
// ---------------------------------------------------------------------------------------

/// The shapes of the family, as the random cases pick them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Kind {
    /// Radius 0.
    Box,
    /// Half extents 0.
    Ball,
    /// Along the axis (2 in 2D: a ball, as `RoundedBox::capsule` documents).
    Capsule(usize),
    /// Any half extents and radius.
    General,
}

/// A rounded box as 3D arrays, built in either dimension with the crate's constructors.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spec {
    pub(crate) kind: Kind,
    pub(crate) c: [f32; 3],
    pub(crate) h: [f32; 3],
    pub(crate) r: f32,
}

impl Spec {
    pub(crate) fn build<V: Vector>(&self) -> RoundedBox<V> {
        let c = vec::<V>(self.c);
        match self.kind {
            Kind::Box => RoundedBox::new(c, vec(self.h), 0.0),
            Kind::Ball => RoundedBox::ball(c, self.r),
            Kind::Capsule(axis) => RoundedBox::capsule(c, axis, self.h[axis], self.r),
            Kind::General => RoundedBox::new(c, vec(self.h), self.r),
        }
    }

    /// Every length multiplied by `s` (a power of two: exact).
    pub(crate) fn scaled(&self, s: f32) -> Self {
        Self {
            c: self.c.map(|x| x * s),
            h: self.h.map(|x| x * s),
            r: self.r * s,
            ..*self
        }
    }
}

pub(crate) fn rounded<V: Vector>(c: [f32; 3], h: [f32; 3], r: f32) -> RoundedBox<V> {
    RoundedBox::new(vec(c), vec(h), r)
}

// ---------------------------------------------------------------------------------------
// The oracle
// ---------------------------------------------------------------------------------------

/// A rounded box in `f64`: the inner box as intervals, and the radius.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Orb {
    pub(crate) inner: Iv,
    pub(crate) r: f64,
}

pub(crate) fn dot(a: &F, b: &F) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub(crate) fn scale(a: &F, k: f64) -> F {
    a.map(|x| x * k)
}

impl Orb {
    /// The inner box `center ± half_extents`, computed in `f64` (exactly, for the values
    /// here), and the radius.
    pub(crate) fn of<V: Vector>(s: &RoundedBox<V>) -> Self {
        let (c, h) = (f64s(s.center), f64s(s.half_extents));
        Self {
            inner: Iv {
                n: V::DIM,
                lo: minus(&c, &h),
                hi: along(&c, &h, 1.0),
            },
            r: f64::from(s.radius),
        }
    }

    pub(crate) fn at(&self, d: &F, t: f64) -> Self {
        Self {
            inner: self.inner.at(d, t),
            ..*self
        }
    }

    /// On each axis, how far apart the two inner intervals are (0 where they overlap).
    pub(crate) fn gaps(&self, o: &Self) -> F {
        let mut g = [0.0; 3];
        for (i, gi) in g.iter_mut().enumerate().take(self.inner.n) {
            let apart = (self.inner.lo[i] - o.inner.hi[i]).max(o.inner.lo[i] - self.inner.hi[i]);
            *gi = apart.max(0.0);
        }
        g
    }

    /// The vector from the nearest part of `self`'s inner box to the nearest part of
    /// `o`'s: on each axis the gap, signed by which side `o` lies on.
    pub(crate) fn offset_to(&self, o: &Self) -> F {
        let mut w = [0.0; 3];
        for (i, wi) in w.iter_mut().enumerate().take(self.inner.n) {
            if o.inner.lo[i] > self.inner.hi[i] {
                *wi = o.inner.lo[i] - self.inner.hi[i];
            } else if self.inner.lo[i] > o.inner.hi[i] {
                *wi = o.inner.hi[i] - self.inner.lo[i];
            }
        }
        w
    }

    pub(crate) fn inner_distance(&self, o: &Self) -> f64 {
        length(&self.gaps(o))
    }

    /// Signed: the distance between the inner boxes less both radii (0 touching, negative
    /// overlapping; not the depth).
    pub(crate) fn gap(&self, o: &Self) -> f64 {
        self.inner_distance(o) - self.r - o.r
    }

    /// The definition, compared squared (exact for values on a dyadic grid).
    pub(crate) fn overlaps(&self, o: &Self) -> bool {
        let g = self.gaps(o);
        let r = self.r + o.r;
        dot(&g, &g) <= r * r
    }

    /// Signed: the distance from `p` to the inner box less the radius.
    pub(crate) fn point_gap(&self, p: &F) -> f64 {
        self.inner.dist(p) - self.r
    }

    pub(crate) fn contains(&self, p: &F) -> bool {
        self.inner.dist2(p) <= self.r * self.r
    }

    /// The bounding box, for the upper bound some sweeps give as their last time.
    pub(crate) fn bounds(&self) -> Iv {
        let mut b = self.inner;
        for i in 0..b.n {
            b.lo[i] -= self.r;
            b.hi[i] += self.r;
        }
        b
    }

    /// The largest coordinate or size, for tolerances relative to the case.
    pub(crate) fn extent(&self) -> f64 {
        (0..self.inner.n)
            .map(|i| self.inner.lo[i].abs().max(self.inner.hi[i].abs()))
            .fold(self.r, f64::max)
    }
}

/// Bisection for the time in `[lo, hi]` at which `f` changes from `f(lo) > 0` to
/// `f(hi) <= 0` (or the reverse when `rising`).
pub(crate) fn crossing(mut lo: f64, mut hi: f64, rising: bool, f: impl Fn(f64) -> f64) -> f64 {
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        if (f(mid) <= 0.0) != rising {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    if rising { lo } else { hi }
}

/// The directions searched for the contact: a fine grid of the circle, or a Fibonacci
/// lattice of the sphere.
pub(crate) fn directions(dim: usize) -> Vec<F> {
    lattice(dim, 720, 0.21, 1500)
}

/// `circle` directions of the circle, each `offset` of a step past a multiple of the
/// step, or a Fibonacci lattice of `sphere` directions of the sphere.
pub(crate) fn lattice(dim: usize, circle: usize, offset: f64, sphere: usize) -> Vec<F> {
    if dim == 2 {
        let n = circle;
        (0..n)
            .map(|i| {
                let a = (i as f64 + offset) * std::f64::consts::TAU / n as f64;
                [a.cos(), a.sin(), 0.0]
            })
            .collect()
    } else {
        let n = sphere;
        let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
        (0..n)
            .map(|i| {
                let y = 1.0 - 2.0 * (i as f64 + 0.5) / n as f64;
                let r = (1.0 - y * y).sqrt();
                let a = golden * i as f64;
                [r * a.cos(), y, r * a.sin()]
            })
            .collect()
    }
}

pub(crate) fn normalized(v: &F) -> F {
    scale(v, 1.0 / length(v))
}

/// The shortest translation of `b` that stops it overlapping `a`, by search: its length,
/// its direction, and the shortest among directions more than 0.5 rad away (how unique the
/// minimum is).
pub(crate) fn depth_search(a: &Orb, b: &Orb) -> (f64, F, f64) {
    let dim = a.inner.n;
    let far = 4.0 * (a.extent() + b.extent()) + 1.0;
    // Along unit `u` the translations that overlap form an interval holding 0 (the set of
    // them is convex): bisection finds where it ends.
    let exit = |u: &F| {
        let (mut lo, mut hi) = (0.0f64, far);
        for _ in 0..50 {
            let mid = 0.5 * (lo + hi);
            if a.overlaps(&b.at(u, mid)) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi
    };
    min_over_directions(dim, &directions(dim), exit, 1e-8)
}

/// The smallest of `exit` over the unit directions: its value and direction (the best of
/// `dirs`, refined by a pattern search whose step halves until it is under `min_step`),
/// and the smallest value among `dirs` pointing more than half a radian away from that
/// direction (how unique the minimum is).
pub(crate) fn min_over_directions(
    dim: usize,
    dirs: &[F],
    exit: impl Fn(&F) -> f64,
    min_step: f64,
) -> (f64, F, f64) {
    let depths: Vec<f64> = dirs.iter().map(&exit).collect();
    let (mut best, mut best_u) = (f64::INFINITY, [0.0; 3]);
    for (d, u) in depths.iter().zip(dirs) {
        if *d < best {
            best = *d;
            best_u = *u;
        }
    }
    let mut step = 0.05;
    while step > min_step {
        let mut improved = false;
        let tries: Vec<F> = if dim == 2 {
            vec![[-best_u[1], best_u[0], 0.0], [best_u[1], -best_u[0], 0.0]]
        } else {
            vec![
                [1.0, 0.0, 0.0],
                [-1.0, 0.0, 0.0],
                [0.0, 1.0, 0.0],
                [0.0, -1.0, 0.0],
                [0.0, 0.0, 1.0],
                [0.0, 0.0, -1.0],
            ]
        };
        for t in tries {
            let u = normalized(&along(&best_u, &t, step));
            let d = exit(&u);
            if d < best {
                best = d;
                best_u = u;
                improved = true;
            }
        }
        if !improved {
            step *= 0.5;
        }
    }
    let runner_up = depths
        .iter()
        .zip(dirs)
        .filter(|(_, u)| dot(u, &best_u) < 0.5f64.cos())
        .map(|(d, _)| *d)
        .fold(f64::INFINITY, f64::min);
    (best, best_u, runner_up)
}

/// The first sampled overlap refined: the first time the signed gap reaches 0 (0 when the
/// shapes overlap at the start).
pub(crate) fn first_contact(s: &Samples, g: impl Fn(f64) -> f64) -> f64 {
    let first = s.first();
    if g(0.0) <= 0.0 {
        0.0
    } else {
        crossing(0.0, first, false, g)
    }
}

/// The last sampled overlap refined: the last time in `[0, end]` the signed gap is at
/// most 0.
pub(crate) fn last_contact(s: &Samples, end: f64, g: impl Fn(f64) -> f64) -> f64 {
    let last = s.last();
    if g(end) <= 0.0 {
        end
    } else {
        crossing(last, end, true, g)
    }
}

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------

/// How a check judges a case: `unit` is the case's length scale (1, or the power of two
/// that scaled it); tolerances in `tol` are multiplied by it. With `exact`, values are on a
/// dyadic grid: whether shapes overlap (touching included) is decided without rounding.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Judge {
    pub(crate) tol: Tol,
    pub(crate) unit: f64,
}

impl Judge {
    pub(crate) fn clear(&self) -> f64 {
        self.tol.clear * self.unit
    }
    pub(crate) fn contact(&self) -> f64 {
        self.tol.contact * self.unit
    }
    /// Slack on lengths computed in `f32` from coordinates up to `extent`.
    pub(crate) fn length_slack(&self, extent: f64) -> f64 {
        1e-6 * (extent + self.unit)
    }
}

/// Overlap, distance, closest points of `a` and `b`, and point queries at `p`, against
/// the oracle. Returns false when the overlap is too close to call.
pub(crate) fn check_static<V: Vector>(
    a: &RoundedBox<V>,
    b: &RoundedBox<V>,
    p: V,
    judge: Judge,
) -> bool {
    let (oa, ob) = (Orb::of(a), Orb::of(b));
    let slack = judge.length_slack(oa.extent().max(ob.extent()));
    let ctx = || format!("{a:?} vs {b:?}");
    let expected = oa.overlaps(&ob);
    let gap = oa.gap(&ob);
    let distance = gap.max(0.0);

    // Brute force: a lattice of points of a's bounding box kept when in a; any of them in
    // b proves an overlap.
    const K: usize = 6;
    let bounds = oa.bounds();
    let ticks = |i: usize| {
        (0..=K).map(move |k| bounds.lo[i] + (bounds.hi[i] - bounds.lo[i]) * k as f64 / K as f64)
    };
    let mut witness = false;
    for x in ticks(0) {
        for y in ticks(1) {
            let zs: Vec<f64> = if V::DIM == 3 {
                ticks(2).collect()
            } else {
                vec![0.0]
            };
            for z in zs {
                let q = [x, y, z];
                witness |= oa.contains(&q) && ob.contains(&q);
            }
        }
    }
    if witness {
        assert!(
            expected,
            "{}: the oracle contradicts its own witness",
            ctx()
        );
    }

    // Distance and closest points: within rounding of the oracle's.
    for (x, y, ox, oy) in [(a, b, &oa, &ob), (b, a, &ob, &oa)] {
        let d = f64::from(x.distance(y));
        assert!(
            (d - distance).abs() <= slack,
            "{x:?}.distance({y:?}) = {d}, oracle {distance}"
        );
        let (px, py) = x.closest_points(y);
        let (fx, fy) = (f64s(px), f64s(py));
        assert!(
            ox.point_gap(&fx) <= slack && oy.point_gap(&fy) <= slack,
            "{x:?}.closest_points({y:?}) = {px:?}, {py:?}: not on the shapes ({}, {})",
            ox.point_gap(&fx),
            oy.point_gap(&fy)
        );
        let between = length(&minus(&fy, &fx));
        assert!(
            (between - distance).abs() <= 4.0 * slack,
            "{x:?}.closest_points({y:?}) = {px:?}, {py:?}: {between} apart, oracle distance {distance}"
        );
        if x.overlaps(y) {
            assert_eq!(px, py, "{x:?}.closest_points({y:?}) of overlapping shapes");
        }
    }

    // Point queries, at `p` and at b's center.
    for q in [p, b.center] {
        let fq = f64s(q);
        let pg = oa.point_gap(&fq);
        let c = a.closest_point(q);
        let fc = f64s(c);
        assert!(
            oa.point_gap(&fc) <= slack,
            "{a:?}.closest_point({q:?}) = {c:?} is not on it"
        );
        assert!(
            (length(&minus(&fc, &fq)) - pg.max(0.0)).abs() <= 4.0 * slack,
            "{a:?}.closest_point({q:?}) = {c:?}: not the nearest, the oracle's distance is {}",
            pg.max(0.0)
        );
        let dq = f64::from(a.distance_to_point(q));
        assert!(
            (dq - pg.max(0.0)).abs() <= slack,
            "{a:?}.distance_to_point({q:?}) = {dq}, oracle {}",
            pg.max(0.0)
        );
        if judge.tol.exact || pg.abs() > judge.clear() {
            assert_eq!(
                a.contains_point(q),
                oa.contains(&fq),
                "{a:?}.contains_point({q:?}), oracle gap {pg}"
            );
        }
    }

    if !judge.tol.exact && gap.abs() <= judge.clear() {
        return false;
    }
    assert_eq!(
        a.overlaps(b),
        expected,
        "{}.overlaps: oracle gap {gap}",
        ctx()
    );
    assert_eq!(
        b.overlaps(a),
        expected,
        "{}.overlaps, swapped: oracle gap {gap}",
        ctx()
    );
    true
}

/// `contact_rounded` against the oracle's search. Returns false when the overlap is too
/// close to call.
pub(crate) fn check_contact<V: Vector>(a: &RoundedBox<V>, b: &RoundedBox<V>, judge: Judge) -> bool {
    let (oa, ob) = (Orb::of(a), Orb::of(b));
    let got = contact_rounded(a, b);
    assert_eq!(got, a.contact(b), "the method and the function differ");
    let gap = oa.gap(&ob);
    let overlapping = oa.overlaps(&ob);
    let ctx = || format!("contact_rounded({a:?}, {b:?}) = {got:?}; oracle gap {gap}");
    if !judge.tol.exact && gap.abs() <= judge.clear() {
        return false;
    }
    if !overlapping {
        assert!(got.is_none(), "{}: apart", ctx());
        return true;
    }
    let c = got.unwrap_or_else(|| panic!("{}: they overlap", ctx()));
    let slack = judge.length_slack(oa.extent().max(ob.extent())) * 8.0;
    let n = f64s(c.normal);
    assert!(
        (length(&n) - 1.0).abs() <= 1e-6,
        "{}: normal not unit",
        ctx()
    );
    let depth = f64::from(c.depth);
    assert!(depth >= 0.0, "{}", ctx());
    // Moving b by normal * depth leaves the shapes touching.
    let moved = ob.at(&n, depth);
    let after = oa.gap(&moved);
    assert!(
        after.abs() <= slack,
        "{}: moved by the contact, b is {after} from a",
        ctx()
    );
    // No shorter way out.
    let (best, best_u, runner_up) = depth_search(&oa, &ob);
    assert!(
        depth <= best + slack + 1e-6 * judge.unit,
        "{}: the oracle separates them by {best} along {best_u:?}",
        ctx()
    );
    // Where the shortest way is unique, the normal is it.
    if runner_up - best > 0.05 * judge.unit {
        assert!(
            length(&minus(&n, &best_u)) <= 1e-3,
            "{}: the oracle's direction is {best_u:?}",
            ctx()
        );
    }
    // The point lies in both shapes, and is both closest points.
    assert_eq!(a.closest_points(b), (c.point, c.point), "{}", ctx());
    let p = f64s(c.point);
    assert!(
        oa.point_gap(&p) <= slack && ob.point_gap(&p) <= slack,
        "{}: the point is not in both ({}, {})",
        ctx(),
        oa.point_gap(&p),
        ob.point_gap(&p)
    );
    true
}

/// The tolerance within which the crate counts a ball against a box (and so any rounded
/// pair that is neither two boxes nor two balls) as touching: `1e-5` of the Minkowski
/// box's size, at least `1e-5`.
pub(crate) fn crate_tolerance(half: &F, r: f64) -> f64 {
    let size = 2.0 * half[0].max(half[1]).max(half[2]);
    1e-5 * size.max(r).max(1.0)
}

/// `sweep_rounded` against the sampled motion. Returns false when the case is unclear.
pub(crate) fn check_sweep<V: Vector>(
    a: &RoundedBox<V>,
    da: V,
    b: &RoundedBox<V>,
    db: V,
    judge: Judge,
) -> bool {
    let got = sweep_rounded(a, da, b, db);
    let (oa, ob, va, vb) = (Orb::of(a), Orb::of(b), f64s(da), f64s(db));
    let w = minus(&vb, &va);
    let g = |t: f64| oa.at(&va, t).gap(&ob.at(&vb, t));
    let probe = |t: f64| (g(t) <= 0.0, g(t));
    let s = Samples::new(
        1.0,
        &face_times(
            V::DIM,
            &ob.inner.lo,
            &ob.inner.hi,
            &w,
            &oa.inner.lo,
            &oa.inner.hi,
        ),
        probe,
    );
    let half = along(&f64s(a.half_extents), &f64s(b.half_extents), 1.0);
    let r = oa.r + ob.r;
    let boxes = a.radius == 0.0 && b.radius == 0.0;
    let balls = a.half_extents == V::ZERO && b.half_extents == V::ZERO;
    let crate_tol = if boxes {
        0.0
    } else {
        crate_tolerance(&half, r)
    };
    let ctx = || {
        format!(
            "sweep_rounded({a:?}, {da:?}, {b:?}, {db:?}) = {got:?}; oracle: min gap {}",
            s.min_gap
        )
    };
    let start_overlap = oa.overlaps(&ob);
    let clear = judge.clear();
    let touching_only = judge.tol.exact && s.min_gap.abs() <= 1e-12 * judge.unit;
    if s.min_gap > clear + crate_tol {
        assert!(got.is_none(), "{}: they never overlap", ctx());
        return true;
    }
    if s.min_gap >= -clear && !touching_only {
        // Unclear, but a start in contact is decided exactly.
        if start_overlap && judge.tol.exact {
            let hit = got.unwrap_or_else(|| panic!("{}: touching at the start", ctx()));
            assert!(hit.u0 == 0.0 && hit.normal == V::ZERO, "{}", ctx());
        }
        return false;
    }
    let hit = got.unwrap_or_else(|| panic!("{}: they overlap (or touch)", ctx()));
    let (u0, u1) = (f64::from(hit.u0), f64::from(hit.u1));
    assert!(0.0 <= u0 && u0 <= u1 && u1 <= 1.0, "{}", ctx());
    let slack = s.slack(judge.tol);
    if touching_only && s.first.is_none() {
        // A graze at one instant: the sweep reports a time at which they touch.
        assert!(
            g(u0) <= crate_tol + judge.contact(),
            "{}: not touching at u0",
            ctx()
        );
        return true;
    }
    let first = first_contact(&s, g);
    let last = last_contact(&s, 1.0, g);
    assert!(
        u0 <= first + slack && (u0 >= first - slack || g(u0) <= crate_tol + judge.contact()),
        "{}: first contact at {first}",
        ctx()
    );
    assert!(
        u1 >= last - slack,
        "{}: u1 must bound the last contact, at {last}",
        ctx()
    );
    if boxes || balls {
        assert!(
            (u1 - last).abs() <= slack,
            "{}: last contact at {last}",
            ctx()
        );
    } else {
        // The bounding boxes' last overlap bounds u1.
        let (ba, bb) = (oa.bounds(), ob.bounds());
        let sb = Samples::new(
            1.0,
            &face_times(V::DIM, &bb.lo, &bb.hi, &w, &ba.lo, &ba.hi),
            |t| {
                let (x, y) = (ba.at(&va, t), bb.at(&vb, t));
                (x.overlaps(&y), x.gap(&y))
            },
        );
        // Sampled (the exact time of a face pair may round either way in f64).
        let bound_slack = sb.step + judge.tol.time;
        assert!(
            u1 <= sb.last() + bound_slack,
            "{}: past the bounding boxes' last overlap {}",
            ctx(),
            sb.last()
        );
    }
    if start_overlap {
        assert!(
            u0 == 0.0 && hit.normal == V::ZERO,
            "{}: overlapping at the start",
            ctx()
        );
        return true;
    }
    if g(0.0) <= clear {
        return true;
    }
    assert!(u0 > 0.0, "{}: apart at the start", ctx());
    let gu = g(u0);
    assert!(
        -judge.contact() <= gu && gu <= crate_tol + judge.contact(),
        "{}: not touching at u0 (gap {gu})",
        ctx()
    );
    let n = f64s(hit.normal);
    assert!(
        (length(&n) - 1.0).abs() <= 1e-5,
        "{}: normal not unit",
        ctx()
    );
    let (x, y) = (oa.at(&va, u0), ob.at(&vb, u0));
    check_contact_normal(
        hit.normal,
        &x,
        &y,
        &w,
        r,
        judge,
        &ctx,
        "but those faces do not meet",
    );
    true
}

/// The normal `normal` at a first contact between `a` and `b` (the shapes at that
/// instant), from `a` towards `b`, `motion` `b`'s relative to `a`. Rounded (radius `r` at
/// least 5% of the unit): the direction from `a`'s inner box towards `b`'s. Sharp (`r`
/// zero): a unit axis on which the two faces meet, `b` arriving against it (`faces` says
/// what is wrong otherwise). In between, not checked.
#[allow(clippy::too_many_arguments)]
fn check_contact_normal<V: Vector>(
    normal: V,
    a: &Orb,
    b: &Orb,
    motion: &F,
    r: f64,
    judge: Judge,
    ctx: &dyn Fn() -> String,
    faces: &str,
) {
    if r >= 0.05 * judge.unit {
        let expected = normalized(&a.offset_to(b));
        assert!(
            length(&minus(&f64s(normal), &expected)) <= 2e-3,
            "{}: normal, expected {expected:?}",
            ctx()
        );
    } else if r == 0.0 {
        let meet = |axis: usize, sign: f32| {
            if sign > 0.0 {
                b.inner.lo[axis] - a.inner.hi[axis]
            } else {
                a.inner.lo[axis] - b.inner.hi[axis]
            }
        };
        assert_faces_meet(normal, meet, motion, judge.contact(), faces, ctx);
    }
}

/// Whether `1 / x` is exact for every component (0 or a power of two). The slab test of
/// a ray against a box multiplies by these reciprocals: where they round, a ray that only
/// touches a box's edge or corner (or a point) may come out a hair outside, a miss.
pub(crate) fn exact_reciprocals(d: &F) -> bool {
    d.iter()
        .all(|&x| x == 0.0 || (x.abs().log2().fract() == 0.0 && x.abs() >= 1e-30))
}

/// `Ray::rounded_box_hit_with_normal_at` (and `rounded_box_hit_at`) against points
/// sampled along the ray. Returns false when the case is unclear.
pub(crate) fn check_ray<V: Vector>(
    ray: &Ray<V>,
    target: &RoundedBox<V>,
    max_t: f32,
    judge: Judge,
) -> bool {
    let got = ray.rounded_box_hit_with_normal_at(target, max_t);
    assert_eq!(
        ray.rounded_box_hit_at(target, max_t),
        got.map(|h| h.0),
        "the two ray casts differ"
    );
    let (o, d, ot) = (f64s(ray.origin), f64s(ray.direction), Orb::of(target));
    let g = |t: f64| ot.point_gap(&along(&o, &d, t));
    let end = f64::from(max_t);
    let s = Samples::new(
        end,
        &face_times(V::DIM, &o, &o, &d, &ot.inner.lo, &ot.inner.hi),
        |t| (g(t) <= 0.0, g(t)),
    );
    let box_like = target.radius == 0.0;
    let crate_tol = if box_like || target.half_extents == V::ZERO {
        0.0
    } else {
        crate_tolerance(&f64s(target.half_extents), ot.r)
    };
    let ctx = || {
        format!(
            "{ray:?}.rounded_box_hit_with_normal_at({target:?}, {max_t}) = {got:?}; oracle: min gap {}",
            s.min_gap
        )
    };
    let inside = ot.contains(&o);
    // A box touched at one instant is decided exactly only with exact reciprocals.
    let exact = judge.tol.exact && (!box_like || exact_reciprocals(&d));
    let case = Entry {
        s: &s,
        judge,
        crate_tol,
        end,
        exact,
        start: inside,
        words: [
            "the ray misses",
            "origin on the surface",
            "the ray hits",
            "entry at",
        ],
    };
    let (t64, n) = match case.judge(got, &g, &ctx) {
        Ok(hit) => hit,
        Err(verdict) => return verdict,
    };
    let fnormal = f64s(n);
    let p = along(&o, &d, t64);
    if ot.r >= 0.05 * judge.unit {
        let expected = normalized(&minus(&p, &ot.inner.closest(&p)));
        assert!(
            length(&minus(&fnormal, &expected)) <= 2e-3,
            "{}: normal, expected {expected:?}",
            ctx()
        );
    } else if ot.r == 0.0 {
        assert_enters_face(n, &p, &ot.inner, &d, judge.contact(), &ctx);
    }
    true
}

/// `rounded_cast_at` against the cast shape sampled along its motion. Returns false when
/// the case is unclear.
pub(crate) fn check_cast<V: Vector>(
    shape: &RoundedBox<V>,
    dir: V,
    max_t: f32,
    target: &RoundedBox<V>,
    judge: Judge,
) -> bool {
    let got = rounded_cast_at(shape, dir, max_t, target);
    let (os, d, ot) = (Orb::of(shape), f64s(dir), Orb::of(target));
    let g = |t: f64| os.at(&d, t).gap(&ot);
    let end = f64::from(max_t);
    let s = Samples::new(
        end,
        &face_times(
            V::DIM,
            &os.inner.lo,
            &os.inner.hi,
            &d,
            &ot.inner.lo,
            &ot.inner.hi,
        ),
        |t| (g(t) <= 0.0, g(t)),
    );
    let half = along(&f64s(shape.half_extents), &f64s(target.half_extents), 1.0);
    let r = os.r + ot.r;
    let crate_tol = if r == 0.0 || half == [0.0; 3] {
        0.0
    } else {
        crate_tolerance(&half, r)
    };
    let ctx = || {
        format!(
            "rounded_cast_at({shape:?}, {dir:?}, {max_t}, {target:?}) = {got:?}; oracle: min gap {}",
            s.min_gap
        )
    };
    let start_overlap = os.overlaps(&ot);
    // Two boxes touching at one instant are decided exactly only with exact reciprocals.
    let exact = judge.tol.exact && (r != 0.0 || exact_reciprocals(&d));
    let case = Entry {
        s: &s,
        judge,
        crate_tol,
        end,
        exact,
        start: start_overlap,
        words: [
            "the cast misses",
            "touching at the start",
            "the cast hits",
            "first contact at",
        ],
    };
    let (t64, n) = match case.judge(got, &g, &ctx) {
        Ok(hit) => hit,
        Err(verdict) => return verdict,
    };
    let x = os.at(&d, t64);
    check_contact_normal(
        n,
        &ot,
        &x,
        &d,
        r,
        judge,
        &ctx,
        "not arriving on the face of the normal",
    );
    true
}

/// The entry time of a ray or a cast against the sampled motion, the part the two share:
/// a miss when the oracle's gap stays clear, an unclear case (only a start in contact
/// is decided, exactly), a graze at one instant, or an entry time within the sampling's
/// slack of the first sampled contact: at 0 with no normal when they start in contact,
/// later and touching, with a unit normal, when they start clear apart.
struct Entry<'a> {
    s: &'a Samples,
    judge: Judge,
    /// The distance the crate counts as contact.
    crate_tol: f64,
    end: f64,
    /// Whether a touch at one instant is decided exactly.
    exact: bool,
    /// Whether they touch at the start (the ray's origin is inside, the shapes overlap).
    start: bool,
    /// The assertions' words: a miss, a start in contact, a hit, the first contact.
    words: [&'static str; 4],
}

impl Entry<'_> {
    /// `Ok` with a hit reached from apart, whose normal's direction the caller checks, or
    /// `Err` with the case's verdict (false when unclear).
    fn judge<V: Vector>(
        &self,
        got: Option<(f32, V)>,
        g: &dyn Fn(f64) -> f64,
        ctx: &dyn Fn() -> String,
    ) -> Result<(f64, V), bool> {
        let (s, judge, crate_tol, end) = (self.s, self.judge, self.crate_tol, self.end);
        let [miss, start, hits, entry] = self.words;
        let clear = judge.clear();
        let touching_only = self.exact && s.min_gap.abs() <= 1e-12 * judge.unit;
        if s.min_gap > clear + crate_tol {
            assert!(got.is_none(), "{}: {miss}", ctx());
            return Err(true);
        }
        if s.min_gap >= -clear && !touching_only {
            if self.start && judge.tol.exact {
                assert_eq!(got, Some((0.0, V::ZERO)), "{}: {start}", ctx());
            }
            return Err(false);
        }
        let (t, n) = got.unwrap_or_else(|| panic!("{}: {hits}", ctx()));
        let t64 = f64::from(t);
        assert!((0.0..=end).contains(&t64), "{}", ctx());
        if touching_only && s.first.is_none() {
            assert!(
                g(t64) <= crate_tol + judge.contact(),
                "{}: not touching at t",
                ctx()
            );
            return Err(true);
        }
        let first = first_contact(s, g);
        let slack = s.step + judge.tol.time * end.max(1.0);
        assert!(
            t64 <= first + slack && (t64 >= first - slack || g(t64) <= crate_tol + judge.contact()),
            "{}: {entry} {first}",
            ctx()
        );
        if self.start {
            assert!(
                t == 0.0 && n == V::ZERO,
                "{}: in contact at the start",
                ctx()
            );
            return Err(true);
        }
        if g(0.0) <= clear {
            return Err(true);
        }
        assert!(t > 0.0, "{}: apart at the start", ctx());
        let gt = g(t64);
        assert!(
            -judge.contact() <= gt && gt <= crate_tol + judge.contact(),
            "{}: not touching at t (gap {gt})",
            ctx()
        );
        assert!(
            (length(&f64s(n)) - 1.0).abs() <= 1e-5,
            "{}: normal not unit",
            ctx()
        );
        Ok((t64, n))
    }
}
