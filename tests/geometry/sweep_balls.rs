//! Swept balls, and a swept ball against a box.

use super::*;

// ---------------------------------------------------------------------------------------
// Swept balls, swept ball vs box
// ---------------------------------------------------------------------------------------

pub(crate) fn sweep_balls_cases<V: Vector>() {
    let zero = V::ZERO;
    let x = |k: f32| vec::<V>([k, 0.0, 0.0]);
    let a = ball::<V>([0.0; 3], 1.0);
    let b = ball::<V>([5.0, 0.0, 0.0], 1.0);
    // Head-on: contact when the centers are 2 apart (5 - 6 u = 2), still overlapping at
    // the end (they separate at 7/6).
    assert_sweep(sweep_balls(&a, zero, &b, x(-6.0)), 0.5, 1.0, PLUS_X);
    assert_sweep(sweep_balls(&a, x(3.0), &b, x(-3.0)), 0.5, 1.0, PLUS_X);
    assert_sweep(sweep_balls(&a, x(6.0), &b, zero), 0.5, 1.0, PLUS_X);
    assert_sweep(sweep_balls(&b, x(-6.0), &a, zero), 0.5, 1.0, MINUS_X);
    // Passing through: contact at 3/12, separation at 7/12.
    assert_sweep(
        sweep_balls(&a, zero, &b, x(-12.0)),
        0.25,
        7.0 / 12.0,
        PLUS_X,
    );
    // Zero relative velocity, apart and overlapping.
    assert_eq!(sweep_balls(&a, x(2.0), &b, x(2.0)), None);
    let near = ball::<V>([1.0, 0.0, 0.0], 1.0);
    assert_sweep(sweep_balls(&a, x(2.0), &near, x(2.0)), 0.0, 1.0, [0.0; 3]);
    // Moving apart.
    assert_eq!(sweep_balls(&a, x(-1.0), &b, x(1.0)), None);
    // Touching at the start (3-4-5): static, then moving apart.
    let (c, d) = (ball::<V>([0.0; 3], 2.0), ball::<V>([3.0, 4.0, 0.0], 3.0));
    assert_sweep(sweep_balls(&c, zero, &d, zero), 0.0, 1.0, [0.0; 3]);
    assert_sweep(
        sweep_balls(&c, zero, &d, vec([3.0, 4.0, 0.0])),
        0.0,
        0.0,
        [0.0; 3],
    );
    // Grazing: b passes a at exactly the sum of the radii, touching at u = 0.5.
    let side = ball::<V>([-5.0, 2.0, 0.0], 1.0);
    assert_sweep(
        sweep_balls(&a, zero, &side, x(10.0)),
        0.5,
        0.5,
        [0.0, 1.0, 0.0],
    );
    let side = ball::<V>([-5.0, 2.01, 0.0], 1.0);
    assert_eq!(sweep_balls(&a, zero, &side, x(10.0)), None);
    // Contact exactly at the end of the step, and beyond it.
    assert_sweep(sweep_balls(&a, zero, &b, x(-3.0)), 1.0, 1.0, PLUS_X);
    assert_eq!(sweep_balls(&a, zero, &b, x(-2.5)), None);
    // Zero radii: two points meeting at u = 0.5. The normal points from a towards where b
    // came from (+x).
    let (p, q) = (ball::<V>([0.0; 3], 0.0), ball::<V>([2.0, 0.0, 0.0], 0.0));
    assert_sweep(sweep_balls(&p, zero, &q, x(-4.0)), 0.5, 0.5, PLUS_X);
    // A point reaching a ball.
    assert_sweep(sweep_balls(&a, zero, &q, x(-2.0)), 0.5, 1.0, PLUS_X);
    for (bb, d) in [(b, x(-6.0)), (b, x(-12.0)), (near, zero), (q, x(-2.0))] {
        check_sweep_balls(&a, zero, &bb, d, ROUND);
        check_sweep_balls(&bb, d, &a, zero, ROUND);
    }
}

crate::kit::tests_2d_3d!(sweep_balls_cases: sweep_balls_cases_2d, sweep_balls_cases_3d);

pub(crate) fn sweep_ball_box_cases<V: Vector>() {
    let zero = V::ZERO;
    let x = |k: f32| vec::<V>([k, 0.0, 0.0]);
    let unit = bbox::<V>([0.0; 3], [1.0; 3]);
    // Face-on: contact when the center reaches x = -1 (u = 0.5). The ball's bounding box
    // leaves at 1.25, so u1 = 1.
    let b = ball::<V>([-3.0, 0.5, 0.5], 1.0);
    assert_sweep(sweep_ball_box(&b, x(4.0), &unit, zero), 0.5, 1.0, PLUS_X);
    assert_sweep(sweep_ball_box(&b, zero, &unit, x(-4.0)), 0.5, 1.0, PLUS_X);
    assert_sweep(sweep_ball_box(&b, x(2.0), &unit, x(-2.0)), 0.5, 1.0, PLUS_X);
    // Passing through: contact at 0.25, exit at 0.625.
    assert_sweep(sweep_ball_box(&b, x(8.0), &unit, zero), 0.25, 0.625, PLUS_X);
    // Corner-on, along the diagonal: contact when the center is 1 from the corner,
    // 2 (1 - u) sqrt(n) = 1; the normal is the diagonal.
    let n = V::DIM as f32;
    let corner = ball::<V>([-2.0; 3], 1.0);
    let hit = sweep_ball_box(&corner, V::splat(2.0), &unit, zero).expect("corner hit");
    let u = 1.0 - 1.0 / (2.0 * n.sqrt());
    assert!((hit.u0 - u).abs() <= 1e-4, "{hit:?}, expected u0 {u}");
    assert!(
        max_abs_diff(hit.normal, V::splat(1.0 / n.sqrt())) <= 1e-3,
        "{hit:?}"
    );
    // The ball's bounding box overlaps the box's corner but the ball passes 1.13 from it.
    let by = ball::<V>([-2.3, 0.7, 0.5], 1.0);
    let d = vec::<V>([3.0, -3.0, 0.0]);
    assert!(sweep_boxes(&by.bounding_box(), d, &unit, zero).is_some());
    assert_eq!(sweep_ball_box(&by, d, &unit, zero), None);
    // Overlapping at the start: u0 = 0, normal zero, u1 from the bounding box (the ball's
    // box [-0.5, 1.5] on x leaves when -0.5 + 4 u > 1).
    let inside = ball::<V>([0.5; 3], 1.0);
    assert_sweep(
        sweep_ball_box(&inside, x(4.0), &unit, zero),
        0.0,
        0.375,
        [0.0; 3],
    );
    assert_sweep(
        sweep_ball_box(&inside, zero, &unit, zero),
        0.0,
        1.0,
        [0.0; 3],
    );
    // Not moving, apart.
    assert_eq!(sweep_ball_box(&b, zero, &unit, zero), None);
    assert_eq!(sweep_ball_box(&b, x(3.0), &unit, x(3.0)), None);
    // Moving away.
    assert_eq!(sweep_ball_box(&b, x(-4.0), &unit, zero), None);
    // Zero radius: a point reaching the x = 0 face at u = 0.75; the normal crosses it.
    let point = ball::<V>([-3.0, 0.5, 0.5], 0.0);
    assert_sweep(
        sweep_ball_box(&point, x(4.0), &unit, zero),
        0.75,
        1.0,
        PLUS_X,
    );
    // Zero-size box: a ball reaching a point at u = 0.5.
    let dot = bbox::<V>([0.0; 3], [0.0; 3]);
    let b2 = ball::<V>([-3.0, 0.0, 0.0], 1.0);
    assert_sweep(sweep_ball_box(&b2, x(4.0), &dot, zero), 0.5, 1.0, PLUS_X);
    // Grazing a corner at a shallow angle: the center passes 0.998 from the corner (0, 0),
    // entering the ball by 0.2% of its radius, along (1, -1). Contact when the center is 1
    // from the corner, at s = -sqrt(1 - 0.998²) along the line (s from -1 to 1 over the
    // step). Conservative advancement gains about 6% of the gap per step here.
    let k = std::f64::consts::FRAC_1_SQRT_2;
    let start = [(-0.998 * k - k) as f32, (-0.998 * k + k) as f32, 0.5];
    let graze = vec::<V>([(2.0 * k) as f32, (-2.0 * k) as f32, 0.0]);
    let u = (1.0 - (1.0f64 - 0.998 * 0.998).sqrt()) / 2.0;
    let hit = sweep_ball_box(&ball(start, 1.0), graze, &unit, zero).expect("grazing hit");
    assert!(
        (f64::from(hit.u0) - u).abs() <= 1e-4,
        "{hit:?}, expected u0 {u}"
    );
    // From the center at contact, 0.998 (-k, -k) + s (k, -k), towards the corner.
    let s_contact = -(1.0f64 - 0.998 * 0.998).sqrt();
    let normal = [(0.998 - s_contact) * k, (0.998 + s_contact) * k, 0.0].map(|x| x as f32);
    assert!(
        max_abs_diff(hit.normal, vec(normal)) <= 1e-3,
        "{hit:?}, expected {normal:?}"
    );
    // The same line 0.2% further out misses.
    let start = [(-1.002 * k - k) as f32, (-1.002 * k + k) as f32, 0.5];
    assert_eq!(sweep_ball_box(&ball(start, 1.0), graze, &unit, zero), None);
    // Found by the random test: a shallow approach to an edge of a flat box, entering the
    // ball by 0.0166 (0.7% of its radius); conservative advancement had not converged
    // after 64 steps and the sweep reported a miss.
    let (c, dc) = (
        [-5.007556, 1.8018159, 1.2078204],
        [-1.5782282, -2.410175, 1.8307637],
    );
    let flat = bbox::<V>(
        [-6.1570225, 3.257334, 3.629285],
        [-3.2157202, 3.257334, 8.29188],
    );
    let d_flat = vec::<V>([0.975793, 0.0, -2.2075267]);
    assert!(
        check_sweep_ball_box(&ball(c, 2.5074136), vec(dc), &flat, d_flat, ROUND) || V::DIM == 2
    );
    check_sweep_ball_box(&ball(c, 2.5074136), vec(dc), &flat, d_flat, ROUND);
    for (ba, d) in [
        (b, x(4.0)),
        (b, x(8.0)),
        (corner, V::splat(2.0)),
        (by, d),
        (point, x(4.0)),
        (b2, x(4.0)),
    ] {
        check_sweep_ball_box(&ba, d, &unit, zero, ROUND);
        check_sweep_ball_box(&ba, zero, &unit, -d, ROUND);
    }
}

crate::kit::tests_2d_3d!(sweep_ball_box_cases: sweep_ball_box_cases_2d, sweep_ball_box_cases_3d);

proptest! {
    #![proptest_config(config())]

    #[test]
    fn sweep_balls_float(
        ca in prop::array::uniform3(-6.0f32..6.0), ra in float_radius(), da in float_disp(),
        cb in prop::array::uniform3(-6.0f32..6.0), rb in float_radius(), db in float_disp(),
        same in prop::bool::weighted(0.1),
    ) {
        let db = if same { da } else { db };
        let clear = check_sweep_balls::<Vec2>(&ball(ca, ra), vec(da), &ball(cb, rb), vec(db), ROUND)
            & check_sweep_balls::<Vec3>(&ball(ca, ra), vec(da), &ball(cb, rb), vec(db), ROUND);
        prop_assume!(clear);
    }

    #[test]
    fn sweep_ball_box_float(
        c in prop::array::uniform3(-6.0f32..6.0), r in float_radius(), dc in float_disp(),
        b in float_box(), db in float_disp(), same in prop::bool::weighted(0.1),
    ) {
        let db = if same { dc } else { db };
        let clear = check_sweep_ball_box::<Vec2>(&ball(c, r), vec(dc), &bbox(b.0, b.1), vec(db), ROUND)
            & check_sweep_ball_box::<Vec3>(&ball(c, r), vec(dc), &bbox(b.0, b.1), vec(db), ROUND);
        prop_assume!(clear);
    }
}
