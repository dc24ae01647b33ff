//! Swept boxes: first and last contact of two moving boxes.

use super::*;

// ---------------------------------------------------------------------------------------
// Swept boxes (seed 001)
// ---------------------------------------------------------------------------------------

/// Seed 001's Listing 4 (`AABBSweep`), transcribed as printed. `ea`, `eb` are the boxes'
/// extents (half sizes: its `AABB` class has `min = P - E`), `a0`, `a1`, `b0`, `b1` the
/// positions at the start and end of the step. Returns `(hit, u0, u1)`.
pub(crate) fn listing_4<V: Vector>(ea: V, a0: V, a1: V, eb: V, b0: V, b1: V) -> (bool, f32, f32) {
    let v = (b1 - b0) - (a1 - a0);
    let mut u_0 = [0.0f32; 3];
    let mut u_1 = [1.0f32; 3];
    if (0..V::DIM).all(|i| (b0.axis(i) - a0.axis(i)).abs() <= ea.axis(i) + eb.axis(i)) {
        return (true, 0.0, 0.0);
    }
    for (i, (first, last)) in u_0.iter_mut().zip(u_1.iter_mut()).enumerate().take(V::DIM) {
        let (a_min, a_max) = (a0.axis(i) - ea.axis(i), a0.axis(i) + ea.axis(i));
        let (b_min, b_max) = (b0.axis(i) - eb.axis(i), b0.axis(i) + eb.axis(i));
        let vi = v.axis(i);
        if a_max < b_min && vi < 0.0 {
            *first = (a_max - b_min) / vi;
        } else if b_max < a_min && vi > 0.0 {
            *first = (a_min - b_max) / vi;
        }
        if b_max > a_min && vi < 0.0 {
            *last = (a_min - b_max) / vi;
        } else if a_max > b_min && vi > 0.0 {
            *last = (a_max - b_min) / vi;
        }
    }
    let u0 = u_0[..V::DIM].iter().copied().fold(f32::MIN, f32::max);
    let u1 = u_1[..V::DIM].iter().copied().fold(f32::MAX, f32::min);
    (u0 <= u1, u0, u1)
}

pub(crate) fn seed_001_listing_cases<V: Vector>() {
    let e: V = vec([0.5; 3]);
    let a0: V = vec([0.5; 3]); // a = [0, 1] on every axis, at rest
    let a = BoundingBox::from_center_half_extents(a0, e);
    let run = |b0: [f32; 3], db: [f32; 3]| {
        let (b0, db): (V, V) = (vec(b0), vec(db));
        let listing = listing_4(e, a0, a0, e, b0, b0 + db);
        let b = BoundingBox::from_center_half_extents(b0, e);
        (listing, sweep_boxes(&a, V::ZERO, &b, db), b, db)
    };

    // The transcription is faithful where the listing is right: b = [3, 4] on x comes
    // at a from the right, entering at 0.5 and still inside at the end.
    let ((hit, u0, u1), got, _, _) = run([3.5, 0.5, 0.5], [-4.0, 0.0, 0.0]);
    assert!(hit && u0 == 0.5 && u1 == 1.0);
    assert_sweep(got, 0.5, 1.0, PLUS_X);

    // 1. Separated on an axis along which they do not move: b = [2, 3] x [5, 6] (x [0, 1])
    // falls along y only, so it passes beside a. The listing leaves that axis at its
    // defaults (u_0 = 0, u_1 = 1) and reports a hit over 0.4..0.6 (the y interval).
    // Right answer: no hit.
    let ((hit, u0, u1), got, b, db) = run([2.5, 5.5, 0.5], [0.0, -10.0, 0.0]);
    assert!(
        hit && (u0 - 0.4).abs() < 1e-6 && (u1 - 0.6).abs() < 1e-6,
        "listing: {hit} {u0} {u1}"
    );
    assert_eq!(got, None);
    assert!(check_sweep_boxes(&a, V::ZERO, &b, db, FLAT));

    // 2. Overlapping at the start: b = [0.5, 1.5] on x moves right by 2. The listing returns
    // u0 = u1 = 0. Right answer: u0 = 0 and u1 = 0.25, when b's min face leaves a's max
    // face (0.5 + 2 u = 1); normal zero.
    let ((hit, u0, u1), got, b, db) = run([1.0, 0.5, 0.5], [2.0, 0.0, 0.0]);
    assert!(hit && u0 == 0.0 && u1 == 0.0, "listing: {hit} {u0} {u1}");
    assert_sweep(got, 0.0, 0.25, [0.0; 3]);
    assert!(check_sweep_boxes(&a, V::ZERO, &b, db, EXACT));

    // 3. Entry after the step ends: b = [3, 4] on x comes at a at speed 1 (entering at
    // u = 2), and drifts on the other axes, along which it overlaps a, so that no axis
    // clips u1 to 1. The listing returns a hit with u0 = 2, u1 = 4. Right answer: no hit.
    let ((hit, u0, u1), got, b, db) = run([3.5, 0.5, 0.5], [-1.0, -0.1, -0.1]);
    assert!(
        hit && u0 == 2.0 && (u1 - 4.0).abs() < 1e-6,
        "listing: {hit} {u0} {u1}"
    );
    assert_eq!(got, None);
    assert!(check_sweep_boxes(&a, V::ZERO, &b, db, FLAT));
}

crate::kit::tests_2d_3d!(
    seed_001_listing_cases:
    seed_001_listing_wrong_cases_2d,
    seed_001_listing_wrong_cases_3d
);

pub(crate) fn sweep_boxes_cases<V: Vector>() {
    let a = bbox::<V>([0.0; 3], [1.0; 3]);
    let zero = V::ZERO;
    let x = |k: f32| vec::<V>([k, 0.0, 0.0]);
    let check = |b: &BoundingBox<V>, da: V, db: V, tol: Tol| {
        check_sweep_boxes(&a, da, b, db, tol);
        check_sweep_boxes(b, db, &a, da, tol);
    };

    // Zero relative velocity: both move by the same amount.
    let same = vec([3.0, -2.0, 1.0]);
    let b = bbox([0.5; 3], [1.5; 3]);
    assert_sweep(sweep_boxes(&a, same, &b, same), 0.0, 1.0, [0.0; 3]);
    check(&b, same, same, EXACT);
    let b = bbox([2.0, 0.0, 0.0], [3.0, 1.0, 1.0]);
    assert_eq!(sweep_boxes(&a, same, &b, same), None);
    assert_eq!(sweep_boxes(&a, zero, &b, zero), None);
    check(&b, same, same, EXACT);

    // Moving apart, from apart and from touching.
    assert_eq!(sweep_boxes(&a, x(-1.0), &b, x(1.0)), None);
    check(&b, x(-1.0), x(1.0), EXACT);
    let touching = bbox([1.0, 0.0, 0.0], [2.0, 1.0, 1.0]);
    assert_sweep(
        sweep_boxes(&a, x(-1.0), &touching, x(1.0)),
        0.0,
        0.0,
        [0.0; 3],
    );
    check(&touching, x(-1.0), x(1.0), EXACT);
    // Touching and staying so; touching and sliding off along y (b.min.y = 4 u > 1).
    assert_sweep(sweep_boxes(&a, zero, &touching, zero), 0.0, 1.0, [0.0; 3]);
    let slide = vec([0.0, 4.0, 0.0]);
    assert_sweep(sweep_boxes(&a, zero, &touching, slide), 0.0, 0.25, [0.0; 3]);
    check(&touching, zero, slide, EXACT);
    // First contact exactly at the end of the step (inclusive).
    assert_sweep(sweep_boxes(&a, zero, &b, x(-1.0)), 1.0, 1.0, PLUS_X);
    check(&b, zero, x(-1.0), EXACT);
    // Just short of it.
    assert_eq!(sweep_boxes(&a, zero, &b, x(-0.75)), None);

    // One moving, the other moving, both moving: the same relative motion.
    assert_sweep(sweep_boxes(&a, zero, &b, x(-2.0)), 0.5, 1.0, PLUS_X);
    assert_sweep(sweep_boxes(&a, x(2.0), &b, zero), 0.5, 1.0, PLUS_X);
    assert_sweep(sweep_boxes(&a, x(1.0), &b, x(-1.0)), 0.5, 1.0, PLUS_X);
    // Seen from b, the normal flips.
    assert_sweep(sweep_boxes(&b, x(-1.0), &a, x(1.0)), 0.5, 1.0, MINUS_X);
    check(&b, x(1.0), x(-1.0), EXACT);

    // Head-on crossing that passes through: b = [-3, -2] on x moves right by 10, enters
    // at 0.2 (b.max = 0) and leaves at 0.4 (b.min = 1); it arrives on a's - face.
    let left = bbox([-3.0, 0.0, 0.0], [-2.0, 1.0, 1.0]);
    assert_sweep(sweep_boxes(&a, zero, &left, x(10.0)), 0.2, 0.4, MINUS_X);
    check(&left, zero, x(10.0), FLAT);
    check(&left, x(-2.0), x(8.0), FLAT);

    // Diagonal approach where y closes last: the normal is y.
    let above = bbox([2.0, 3.0, 0.0], [3.0, 4.0, 1.0]);
    let diag = vec([-2.0, -4.0, 0.0]);
    // x enters at (1 - 2) / -2 = 0.5, y at (1 - 3) / -4 = 0.5: a tie (corner contact).
    check(&above, zero, diag, EXACT);
    let diag = vec([-4.0, -4.0, 0.0]);
    // x enters at 0.25, y at 0.5; x leaves at 0.75, y at 1.
    assert_sweep(
        sweep_boxes(&a, zero, &above, diag),
        0.5,
        0.75,
        [0.0, 1.0, 0.0],
    );
    check(&above, zero, diag, EXACT);

    // Zero-size boxes: two points meeting at u = 0.5; a point crossing a box.
    let p = bbox::<V>([0.0; 3], [0.0; 3]);
    let q = bbox([2.0, 0.0, 0.0], [2.0, 0.0, 0.0]);
    assert_sweep(sweep_boxes(&p, zero, &q, x(-4.0)), 0.5, 0.5, PLUS_X);
    let wide = bbox([1.0, -1.0, -1.0], [2.0, 1.0, 1.0]);
    assert_sweep(sweep_boxes(&p, zero, &wide, x(-2.0)), 0.5, 1.0, PLUS_X);
    assert_sweep(sweep_boxes(&p, x(2.0), &wide, zero), 0.5, 1.0, PLUS_X);
    assert_sweep(sweep_boxes(&p, x(4.0), &wide, zero), 0.25, 0.5, PLUS_X);
    // A point passing a box's corner exactly (touches at one instant) and just beside it.
    // The point goes from (-2, 2) to (2, -2): it reaches x = 0 and y = 1 ... y = 0 over
    // 0.25..0.5 and x = 0 ... 1 over 0.5..0.75, so it touches a's corner (0, 0) at 0.5 only,
    // arriving last on x.
    let pt = bbox::<V>([-2.0, 2.0, 0.5], [-2.0, 2.0, 0.5]);
    let pass = vec([4.0, -4.0, 0.0]);
    assert_sweep(sweep_boxes(&a, zero, &pt, pass), 0.5, 0.5, MINUS_X);
    check(&pt, zero, pass, EXACT);
    let beside = bbox::<V>([-2.0, 1.75, 0.5], [-2.0, 1.75, 0.5]);
    assert_eq!(sweep_boxes(&a, zero, &beside, pass), None);
    check(&beside, zero, pass, EXACT);
    for (bb, d) in [(p, x(-4.0)), (wide, x(-2.0)), (q, zero)] {
        check(&bb, zero, d, EXACT);
    }
}

crate::kit::tests_2d_3d!(sweep_boxes_cases: sweep_boxes_cases_2d, sweep_boxes_cases_3d);

proptest! {
    #![proptest_config(config())]

    /// On the grid with power-of-two relative speeds: exact agreement with the sampled
    /// motion, touching included, and exact first and last times.
    #[test]
    fn sweep_boxes_exact(
        a in grid_box(), b in grid_box(),
        da in prop_oneof![1 => Just([0.0f32; 3]), 3 => grid3(8)],
        rel in prop::array::uniform3(pow2_or_zero()),
    ) {
        let db = add3(da, rel);
        check_sweep_boxes::<Vec2>(&bbox(a.0, a.1), vec(da), &bbox(b.0, b.1), vec(db), EXACT);
        check_sweep_boxes::<Vec3>(&bbox(a.0, a.1), vec(da), &bbox(b.0, b.1), vec(db), EXACT);
    }

    /// Random floats, one, both or neither moving, sometimes at the same velocity.
    #[test]
    fn sweep_boxes_float(
        a in float_box(), da in float_disp(), b in float_box(), db in float_disp(),
        same in prop::bool::weighted(0.1),
    ) {
        let db = if same { da } else { db };
        let clear = check_sweep_boxes::<Vec2>(&bbox(a.0, a.1), vec(da), &bbox(b.0, b.1), vec(db), FLAT)
            & check_sweep_boxes::<Vec3>(&bbox(a.0, a.1), vec(da), &bbox(b.0, b.1), vec(db), FLAT);
        prop_assume!(clear);
    }
}
