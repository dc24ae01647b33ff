//! The checks of each function against the oracle: the static tests, the swept tests and the casts.

use super::*;

// ---------------------------------------------------------------------------------------
// Checks of the static tests
// ---------------------------------------------------------------------------------------

/// Box vs box in both forms, against seed 000's test done in `f64` and the plain min/max
/// test. Returns false when (float mode) the case is too close to touching to judge.
pub(crate) fn check_box_box<V: Vector>(ca: V, ha: V, cb: V, hb: V, tol: Tol) -> bool {
    let (fca, fha, fcb, fhb) = (f64s(ca), f64s(ha), f64s(cb), f64s(hb));
    // Margin of seed 000's test: max over axes of |ca - cb| - (ha + hb), exact in f64.
    let margin = (0..V::DIM)
        .map(|i| (fca[i] - fcb[i]).abs() - (fha[i] + fhb[i]))
        .fold(f64::NEG_INFINITY, f64::max);
    let expected = margin <= 0.0;
    // The same boxes in min/max form must give the same answer (exact in f64).
    let exact_a = Iv {
        n: V::DIM,
        lo: minus(&fca, &fha),
        hi: along(&fca, &fha, 1.0),
    };
    let exact_b = Iv {
        n: V::DIM,
        lo: minus(&fcb, &fhb),
        hi: along(&fcb, &fhb, 1.0),
    };
    assert_eq!(
        exact_a.overlaps(&exact_b),
        expected,
        "oracle forms disagree"
    );
    if !tol.exact && margin.abs() <= tol.clear {
        return false;
    }
    let a = BoundingBox::from_center_half_extents(ca, ha);
    let b = BoundingBox::from_center_half_extents(cb, hb);
    assert_eq!(
        overlaps_center_half_extents(ca, ha, cb, hb),
        expected,
        "overlaps_center_half_extents({ca:?}, {ha:?}, {cb:?}, {hb:?}), margin {margin}"
    );
    assert_eq!(a.overlaps(&b), expected, "{a:?}.overlaps({b:?})");
    assert_eq!(b.overlaps(&a), expected, "{b:?}.overlaps({a:?})");
    true
}

/// From min/max boxes: `center`/`half_extents` and the center/half-extents test agree
/// with `overlaps`, and with the plain test in `f64`.
pub(crate) fn check_min_max_forms<V: Vector>(
    a: &BoundingBox<V>,
    b: &BoundingBox<V>,
    tol: Tol,
) -> bool {
    let (ia, ib) = (Iv::of(a), Iv::of(b));
    let expected = ia.overlaps(&ib);
    // overlaps() only compares corners: exact in every mode.
    assert_eq!(a.overlaps(b), expected, "{a:?}.overlaps({b:?})");
    for (bx, i) in [(a, &ia), (b, &ib)] {
        let (c, h) = (f64s(bx.center()), f64s(bx.half_extents()));
        for k in 0..V::DIM {
            let (ec, eh) = ((i.lo[k] + i.hi[k]) / 2.0, (i.hi[k] - i.lo[k]) / 2.0);
            let slack = if tol.exact {
                0.0
            } else {
                1e-6 * (1.0 + ec.abs())
            };
            assert!((c[k] - ec).abs() <= slack, "center of {bx:?}");
            assert!((h[k] - eh).abs() <= slack, "half extents of {bx:?}");
        }
    }
    if !tol.exact && ia.gap(&ib).abs() <= tol.clear {
        return false;
    }
    let got =
        overlaps_center_half_extents(a.center(), a.half_extents(), b.center(), b.half_extents());
    assert_eq!(got, expected, "center/half-extents form of {a:?} vs {b:?}");
    true
}

pub(crate) fn check_point_box<V: Vector>(b: &BoundingBox<V>, p: V) {
    // Comparisons only: exact in every mode.
    let expected = Iv::of(b).contains(&f64s(p));
    assert_eq!(b.contains_point(p), expected, "{b:?}.contains_point({p:?})");
}

/// `|p - c|` against `r` in f64; false when too close to the surface to judge.
pub(crate) fn check_point_ball<V: Vector>(ball: &Ball<V>, p: V, tol: Tol) -> bool {
    let d = length(&minus(&f64s(p), &f64s(ball.center)));
    let r = f64::from(ball.radius);
    if !tol.exact && (d - r).abs() <= tol.clear {
        return false;
    }
    assert_eq!(
        ball.contains_point(p),
        d <= r,
        "{ball:?}.contains_point({p:?}), distance {d}"
    );
    true
}

pub(crate) fn check_ball_ball<V: Vector>(a: &Ball<V>, b: &Ball<V>, tol: Tol) -> bool {
    let d = length(&minus(&f64s(a.center), &f64s(b.center)));
    let r = f64::from(a.radius) + f64::from(b.radius);
    if !tol.exact && (d - r).abs() <= tol.clear {
        return false;
    }
    assert_eq!(a.overlaps(b), d <= r, "{a:?}.overlaps({b:?}), distance {d}");
    assert_eq!(b.overlaps(a), d <= r, "{b:?}.overlaps({a:?}), distance {d}");
    true
}

/// Ball vs box: the closest point computed per axis in f64, and a brute-force scan of
/// points of the box and of the ball (any such point in both shapes proves an overlap).
pub(crate) fn check_ball_box<V: Vector>(ball: &Ball<V>, b: &BoundingBox<V>, tol: Tol) -> bool {
    let (c, r, ib) = (f64s(ball.center), f64::from(ball.radius), Iv::of(b));
    let d = ib.dist(&c);
    let got = ball.overlaps_box(b);
    // Brute force: a lattice of points of the box, and of the ball's bounding box kept when
    // inside the ball.
    const K: usize = 8;
    let lattice = |lo: &F, hi: &F| -> Vec<F> {
        let mut pts = Vec::new();
        let ticks = |i: usize| (0..=K).map(move |k| lo[i] + (hi[i] - lo[i]) * k as f64 / K as f64);
        for x in ticks(0) {
            for y in ticks(1) {
                if V::DIM == 3 {
                    for z in ticks(2) {
                        pts.push([x, y, z]);
                    }
                } else {
                    pts.push([x, y, 0.0]);
                }
            }
        }
        pts
    };
    let witness = lattice(&ib.lo, &ib.hi)
        .into_iter()
        .any(|p| length(&minus(&p, &c)) <= r)
        || {
            let bb = Iv::around_ball(V::DIM, &c, r);
            lattice(&bb.lo, &bb.hi)
                .into_iter()
                .any(|p| length(&minus(&p, &c)) <= r && ib.contains(&p))
        };
    if witness {
        assert!(
            got,
            "{ball:?}.overlaps_box({b:?}): a sampled point lies in both"
        );
    }
    if !tol.exact && (d - r).abs() <= tol.clear {
        return false;
    }
    assert_eq!(got, d <= r, "{ball:?}.overlaps_box({b:?}), distance {d}");
    true
}

// ---------------------------------------------------------------------------------------
// Checks of the swept tests and the casts
// ---------------------------------------------------------------------------------------

/// `sweep_boxes` against the sampled motion. Returns false when the case is unclear.
pub(crate) fn check_sweep_boxes<V: Vector>(
    a: &BoundingBox<V>,
    da: V,
    b: &BoundingBox<V>,
    db: V,
    tol: Tol,
) -> bool {
    let got = sweep_boxes(a, da, b, db);
    let (ia, ib, va, vb) = (Iv::of(a), Iv::of(b), f64s(da), f64s(db));
    let at = |t: f64| (ia.at(&va, t), ib.at(&vb, t));
    let probe = |t: f64| {
        let (x, y) = at(t);
        (x.overlaps(&y), x.gap(&y))
    };
    let w = minus(&vb, &va);
    let s = Samples::new(
        1.0,
        &face_times(V::DIM, &ib.lo, &ib.hi, &w, &ia.lo, &ia.hi),
        probe,
    );
    let ctx = || {
        format!(
            "sweep_boxes({a:?}, {da:?}, {b:?}, {db:?}) = {got:?}; oracle: min gap {}",
            s.min_gap
        )
    };
    match s.verdict(tol) {
        Verdict::Unclear => return false,
        Verdict::Miss => assert!(got.is_none(), "{}: they never overlap", ctx()),
        Verdict::Hit => {
            let hit = got.unwrap_or_else(|| panic!("{}: they overlap", ctx()));
            let (u0, _) = check_interval(&s, tol, (hit.u0, hit.u1), &probe, &ctx);
            // Whether they overlap at the start is decided exactly by the crate (the sign of
            // a difference of floats is exact), so no tolerance here.
            if check_start(
                Start::exact(&probe),
                u0,
                hit.normal,
                &probe,
                tol.touching(),
                &ctx,
            ) {
                // The normal is the axis of a face pair that meets at u0, pointing from a
                // towards b, with b moving (relative to a) against it.
                let (x, y) = at(u0);
                let what = "b does not arrive on the face of a that the normal names";
                assert_arrives_on_face(hit.normal, &x, &y, &w, tol.contact, what, &ctx);
            }
        }
    }
    true
}

/// `sweep_balls` against the sampled motion. Returns false when the case is unclear.
pub(crate) fn check_sweep_balls<V: Vector>(
    a: &Ball<V>,
    da: V,
    b: &Ball<V>,
    db: V,
    tol: Tol,
) -> bool {
    let got = sweep_balls(a, da, b, db);
    let (ca, cb, va, vb) = (f64s(a.center), f64s(b.center), f64s(da), f64s(db));
    let r = f64::from(a.radius) + f64::from(b.radius);
    let offset = |t: f64| minus(&along(&cb, &vb, t), &along(&ca, &va, t));
    let probe = |t: f64| {
        let d = length(&offset(t));
        (d <= r, d - r)
    };
    let s = Samples::new(1.0, &[], probe);
    let ctx = || {
        format!(
            "sweep_balls({a:?}, {da:?}, {b:?}, {db:?}) = {got:?}; oracle: min gap {}",
            s.min_gap
        )
    };
    match s.verdict(tol) {
        Verdict::Unclear => return false,
        Verdict::Miss => assert!(got.is_none(), "{}: they never overlap", ctx()),
        Verdict::Hit => {
            let hit = got.unwrap_or_else(|| panic!("{}: they overlap", ctx()));
            let (u0, _) = check_interval(&s, tol, (hit.u0, hit.u1), &probe, &ctx);
            let start = Start::by_gap(&probe, tol);
            if check_start(start, u0, hit.normal, &probe, tol.touching(), &ctx) {
                assert_unit_along(hit.normal, &offset(u0), r, &ctx);
            }
        }
    }
    true
}

/// `sweep_ball_box` against the sampled motion. Returns false when the case is unclear.
pub(crate) fn check_sweep_ball_box<V: Vector>(
    ball: &Ball<V>,
    d_ball: V,
    aabb: &BoundingBox<V>,
    d_box: V,
    tol: Tol,
) -> bool {
    let got = sweep_ball_box(ball, d_ball, aabb, d_box);
    let (c, vc, ix, vx) = (f64s(ball.center), f64s(d_ball), Iv::of(aabb), f64s(d_box));
    let r = f64::from(ball.radius);
    let center = |t: f64| along(&c, &vc, t);
    let probe = |t: f64| {
        let d = ix.at(&vx, t).dist(&center(t));
        (d <= r, d - r)
    };
    let s = Samples::new(1.0, &[], probe);
    // u1 is documented as the exit time of the ball's bounding box.
    let ball_box = Iv::around_ball(V::DIM, &c, r);
    let box_probe = |t: f64| {
        let (x, y) = (ball_box.at(&vc, t), ix.at(&vx, t));
        (x.overlaps(&y), x.gap(&y))
    };
    let w = minus(&vc, &vx);
    let sb = Samples::new(
        1.0,
        &face_times(V::DIM, &ball_box.lo, &ball_box.hi, &w, &ix.lo, &ix.hi),
        box_probe,
    );
    let ctx = || {
        format!(
            "sweep_ball_box({ball:?}, {d_ball:?}, {aabb:?}, {d_box:?}) = {got:?}; oracle: min gap {}",
            s.min_gap
        )
    };
    // The crate counts distances below this as contact.
    let scale = f64::from(aabb.size().max_element()).max(r).max(1.0);
    let crate_tolerance = 1e-5 * scale;
    match s.verdict(tol) {
        Verdict::Unclear => return false,
        Verdict::Miss => assert!(got.is_none(), "{}: they never overlap", ctx()),
        Verdict::Hit => {
            let hit = got.unwrap_or_else(|| panic!("{}: they overlap", ctx()));
            let (u0, u1) = (f64::from(hit.u0), f64::from(hit.u1));
            let (first, last) = (s.first(), s.last());
            assert!(0.0 <= u0 && u0 <= u1 && u1 <= 1.0, "{}", ctx());
            // The crate counts a gap below `crate_tolerance` as contact, so where the gap
            // closes slowly (a ball grazing a corner) it may report the contact earlier
            // than the first sampled overlap by more than a step; it must then be within
            // that tolerance of touching at `u0` (and it must never be late).
            assert!(
                u0 <= first + s.slack(tol)
                    && (u0 >= first - s.slack(tol) || probe(u0).1 <= crate_tolerance + tol.contact),
                "{}: first overlap sampled at {first}",
                ctx()
            );
            assert!(
                u1 >= last - s.slack(tol),
                "{}: u1 must bound the last overlap, sampled at {last}",
                ctx()
            );
            assert!(
                (u1 - sb.last()).abs() <= sb.slack(tol),
                "{}: the ball's bounding box last overlaps at {}",
                ctx(),
                sb.last()
            );
            let touching = (-tol.contact, crate_tolerance + tol.contact);
            if check_start(
                Start::by_gap(&probe, tol),
                u0,
                hit.normal,
                &probe,
                touching,
                &ctx,
            ) {
                // From the ball's center towards the closest point of the box.
                let p = center(u0);
                assert_unit_along(hit.normal, &minus(&ix.at(&vx, u0).closest(&p), &p), r, &ctx);
                if r == 0.0 {
                    // A point reaching a face: the normal points into the box, across it.
                    assert_enters_face(-hit.normal, &p, &ix.at(&vx, u0), &w, tol.contact, &ctx);
                }
            }
        }
    }
    true
}

/// Asserts that `normal` has unit length and, for a radius `r` of at least 0.05 (where
/// the sampled contact gives its direction well), points along `towards`.
fn assert_unit_along<V: Vector>(normal: V, towards: &F, r: f64, ctx: &dyn Fn() -> String) {
    let n = f64s(normal);
    assert!(
        (length(&n) - 1.0).abs() <= 1e-5,
        "{}: normal not unit",
        ctx()
    );
    if r >= 0.05 {
        let expected = along(&[0.0; 3], towards, 1.0 / length(towards));
        assert!(
            length(&minus(&n, &expected)) <= 1e-3,
            "{}: normal, expected {expected:?}",
            ctx()
        );
    }
}

/// Asserts that `normal` is a unit axis on which two faces meet: `gap(axis, sign)`, the
/// distance between the faces that the normal names, is within `contact` of zero, and
/// `motion` runs against the normal. `what` says what is wrong otherwise.
pub(crate) fn assert_faces_meet<V: Vector>(
    normal: V,
    gap: impl Fn(usize, f32) -> f64,
    motion: &F,
    contact: f64,
    what: &str,
    ctx: &dyn Fn() -> String,
) {
    let (axis, sign) =
        unit_axis(normal).unwrap_or_else(|| panic!("{}: normal not a unit axis", ctx()));
    assert!(
        gap(axis, sign).abs() <= contact && f64::from(sign) * motion[axis] < 0.0,
        "{}: normal {sign} on axis {axis}, {what}",
        ctx()
    );
}

/// Asserts that `normal` is a unit axis, the outward normal of a face of `target` that
/// the facing face of `mover` lies on (within `contact`), with `motion` running against
/// it: `mover` arrives on that face.
fn assert_arrives_on_face<V: Vector>(
    normal: V,
    target: &Iv,
    mover: &Iv,
    motion: &F,
    contact: f64,
    what: &str,
    ctx: &dyn Fn() -> String,
) {
    let gap = |axis: usize, sign: f32| {
        if sign > 0.0 {
            mover.lo[axis] - target.hi[axis]
        } else {
            mover.hi[axis] - target.lo[axis]
        }
    };
    assert_faces_meet(normal, gap, motion, contact, what, ctx);
}

/// Asserts that `outward` is a unit axis, the outward normal of a face of `x` on which `p`
/// lies (within `contact`), and that `motion` crosses that face inwards.
pub(crate) fn assert_enters_face<V: Vector>(
    outward: V,
    p: &F,
    x: &Iv,
    motion: &F,
    contact: f64,
    ctx: &dyn Fn() -> String,
) {
    let face = |axis: usize, sign: f32| if sign > 0.0 { x.hi[axis] } else { x.lo[axis] };
    let gap = |axis: usize, sign: f32| p[axis] - face(axis, sign);
    let what = "not entering through the face of the normal";
    assert_faces_meet(outward, gap, motion, contact, what, ctx);
}

/// `Ray::box_hit_at` and `Ray::box_hit_with_normal_at` against points sampled along the
/// ray. Returns false when the case is unclear.
pub(crate) fn check_ray_box<V: Vector>(
    ray: &Ray<V>,
    aabb: &BoundingBox<V>,
    max_t: f32,
    tol: Tol,
) -> bool {
    let got = ray.box_hit_at(aabb, max_t);
    let with_normal = ray.box_hit_with_normal_at(aabb, max_t);
    assert_eq!(
        got,
        with_normal.map(|h| h.0),
        "{ray:?} vs {aabb:?}: the two slab tests differ"
    );
    let (o, d, ib) = (f64s(ray.origin), f64s(ray.direction), Iv::of(aabb));
    let probe = |t: f64| {
        let p = along(&o, &d, t);
        (ib.contains(&p), ib.point_gap(&p))
    };
    let s = Samples::new(
        f64::from(max_t),
        &face_times(V::DIM, &o, &o, &d, &ib.lo, &ib.hi),
        probe,
    );
    let ctx = || {
        format!(
            "{ray:?}.box_hit_with_normal_at({aabb:?}, {max_t}) = {with_normal:?}; oracle: min gap {}",
            s.min_gap
        )
    };
    match s.verdict(tol) {
        Verdict::Unclear => return false,
        Verdict::Miss => assert!(got.is_none(), "{}: the ray misses", ctx()),
        Verdict::Hit => {
            let (t, n) = with_normal.unwrap_or_else(|| panic!("{}: the ray hits", ctx()));
            let t64 = check_first_time(&s, tol, max_t, t, &ctx);
            // Whether the origin is inside is decided exactly by the crate.
            if check_start(Start::exact(&probe), t64, n, &probe, tol.touching(), &ctx) {
                // The outward normal of the face entered: the ray reaches it moving inwards.
                assert_enters_face(n, &along(&o, &d, t64), &ib, &d, tol.contact, &ctx);
            }
        }
    }
    true
}

/// `Ray::ball_hit_at` against points sampled along the ray. False when unclear.
pub(crate) fn check_ray_ball<V: Vector>(
    ray: &Ray<V>,
    ball: &Ball<V>,
    max_t: f32,
    tol: Tol,
) -> bool {
    let got = ray.ball_hit_at(ball, max_t);
    let (o, d, c, r) = (
        f64s(ray.origin),
        f64s(ray.direction),
        f64s(ball.center),
        f64::from(ball.radius),
    );
    let probe = |t: f64| {
        let dist = length(&minus(&along(&o, &d, t), &c));
        (dist <= r, dist - r)
    };
    let s = Samples::new(f64::from(max_t), &[], probe);
    let ctx = || {
        format!(
            "{ray:?}.ball_hit_at({ball:?}, {max_t}) = {got:?}; oracle: min gap {}",
            s.min_gap
        )
    };
    match s.verdict(tol) {
        Verdict::Unclear => return false,
        Verdict::Miss => assert!(got.is_none(), "{}: the ray misses", ctx()),
        Verdict::Hit => {
            let t = got.unwrap_or_else(|| panic!("{}: the ray hits", ctx()));
            let t64 = check_first_time(&s, tol, max_t, t, &ctx);
            // A ball hit has no normal to check.
            let start = Start::by_gap(&probe, tol);
            check_start(start, t64, V::ZERO, &probe, tol.touching(), &ctx);
        }
    }
    true
}

/// `box_cast_at` against the moving box sampled along the cast. False when unclear.
pub(crate) fn check_box_cast<V: Vector>(
    shape: &BoundingBox<V>,
    dir: V,
    max_t: f32,
    target: &BoundingBox<V>,
    tol: Tol,
) -> bool {
    let got = box_cast_at(shape, dir, max_t, target);
    let (is, d, it) = (Iv::of(shape), f64s(dir), Iv::of(target));
    let probe = |t: f64| {
        let x = is.at(&d, t);
        (x.overlaps(&it), x.gap(&it))
    };
    let s = Samples::new(
        f64::from(max_t),
        &face_times(V::DIM, &is.lo, &is.hi, &d, &it.lo, &it.hi),
        probe,
    );
    let ctx = || {
        format!(
            "box_cast_at({shape:?}, {dir:?}, {max_t}, {target:?}) = {got:?}; oracle: min gap {}",
            s.min_gap
        )
    };
    match s.verdict(tol) {
        Verdict::Unclear => return false,
        Verdict::Miss => assert!(got.is_none(), "{}: the cast misses", ctx()),
        Verdict::Hit => {
            let (t, n) = got.unwrap_or_else(|| panic!("{}: the cast hits", ctx()));
            let t64 = check_first_time(&s, tol, max_t, t, &ctx);
            if check_start(
                Start::by_gap(&probe, tol),
                t64,
                n,
                &probe,
                tol.touching(),
                &ctx,
            ) {
                // The outward normal of the target's face that the moving box reaches.
                let x = is.at(&d, t64);
                let what = "not arriving on the face of the normal";
                assert_arrives_on_face(n, &it, &x, &d, tol.contact, what, &ctx);
            }
        }
    }
    true
}

// ---------------------------------------------------------------------------------------
// Hand-computed sweeps
// ---------------------------------------------------------------------------------------

#[track_caller]
pub(crate) fn assert_sweep<V: Vector>(
    got: Option<SweepInterval<V>>,
    u0: f32,
    u1: f32,
    normal: [f32; 3],
) {
    let hit = got.unwrap_or_else(|| panic!("expected a hit over {u0}..={u1}, got none"));
    assert!(
        (hit.u0 - u0).abs() <= 1e-5
            && (hit.u1 - u1).abs() <= 1e-5
            && max_abs_diff(hit.normal, vec(normal)) <= 1e-5,
        "expected u0 {u0}, u1 {u1}, normal {normal:?}; got {hit:?}"
    );
}

/// How a contact starts, as the oracle sees it at `t = 0`.
#[derive(Clone, Copy)]
enum Start {
    /// Overlapping (a ray's origin inside).
    Inside,
    /// Apart.
    Apart,
    /// Too close to touching to tell.
    Unclear,
}

impl Start {
    /// From the plain overlap test, where the crate decides the start exactly too.
    fn exact(probe: &dyn Fn(f64) -> (bool, f64)) -> Self {
        if probe(0.0).0 {
            Self::Inside
        } else {
            Self::Apart
        }
    }

    /// From the gap, clear of touching by the tolerance.
    fn by_gap(probe: &dyn Fn(f64) -> (bool, f64), tol: Tol) -> Self {
        let gap = probe(0.0).1;
        if gap <= -tol.clear {
            Self::Inside
        } else if gap > tol.clear {
            Self::Apart
        } else {
            Self::Unclear
        }
    }
}

/// What every first contact at `t` with `normal` must be, given its start: at 0 with no
/// normal when it starts inside; later, with the gap at `t` within `touching`, when it
/// starts apart. Returns whether the contact is reached from apart, so that the caller
/// checks its normal.
fn check_start<V: Vector>(
    start: Start,
    t: f64,
    normal: V,
    probe: &dyn Fn(f64) -> (bool, f64),
    (below, above): (f64, f64),
    ctx: &dyn Fn() -> String,
) -> bool {
    match start {
        Start::Inside => {
            assert!(
                t == 0.0 && normal == V::ZERO,
                "{}: inside at the start",
                ctx()
            );
            false
        }
        Start::Apart => {
            assert!(t > 0.0, "{}: apart at the start", ctx());
            let gap = probe(t).1;
            assert!(
                below <= gap && gap <= above,
                "{}: not touching at {t} (gap {gap})",
                ctx()
            );
            true
        }
        Start::Unclear => false,
    }
}

/// A ray's or a cast's first contact `t`: inside `[0, max_t]` and within the sampling's
/// slack of the first sampled contact. Returns it in `f64`.
fn check_first_time(s: &Samples, tol: Tol, max_t: f32, t: f32, ctx: &dyn Fn() -> String) -> f64 {
    let t = f64::from(t);
    assert!((0.0..=f64::from(max_t)).contains(&t), "{}", ctx());
    assert!(
        (t - s.first()).abs() <= s.slack(tol),
        "{}: first contact sampled at {}",
        ctx(),
        s.first()
    );
    t
}

/// A sweep's overlap interval `(u0, u1)` against the sampled motion: inside `[0, 1]`,
/// each end within the sampling's slack of the first and last sampled overlap, and
/// touching at `u1` when that is before the end. Returns the interval in `f64`.
fn check_interval(
    s: &Samples,
    tol: Tol,
    (u0, u1): (f32, f32),
    probe: &dyn Fn(f64) -> (bool, f64),
    ctx: &dyn Fn() -> String,
) -> (f64, f64) {
    let (u0, u1) = (f64::from(u0), f64::from(u1));
    let (first, last) = (s.first(), s.last());
    assert!(0.0 <= u0 && u0 <= u1 && u1 <= 1.0, "{}", ctx());
    assert!(
        (u0 - first).abs() <= s.slack(tol),
        "{}: first overlap sampled at {first}",
        ctx()
    );
    assert!(
        (u1 - last).abs() <= s.slack(tol),
        "{}: last overlap sampled at {last}",
        ctx()
    );
    if u1 < 1.0 {
        assert!(
            probe(u1).1.abs() <= tol.contact,
            "{}: not touching at u1",
            ctx()
        );
    }
    (u0, u1)
}
