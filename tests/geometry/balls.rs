//! Point against box and ball, ball against ball and box.

use super::*;

// ---------------------------------------------------------------------------------------
// Point vs box, point vs ball, ball vs ball, ball vs box (seed 004)
// ---------------------------------------------------------------------------------------

pub(crate) fn static_cases<V: Vector>() {
    let unit = bbox::<V>([0.0; 3], [1.0; 3]);
    // Points on faces, edges and corners are inside; a float beyond is not.
    for p in [
        [0.0, 0.5, 0.5],
        [1.0, 0.5, 0.5],
        [1.0, 1.0, 0.5],
        [1.0, 1.0, 1.0],
        [0.0; 3],
        [0.5; 3],
    ] {
        assert!(unit.contains_point(vec(p)), "{p:?}");
    }
    for p in [
        [1.0f32.next_up(), 0.5, 0.5],
        [0.5, (-0.0f32).next_down(), 0.5],
        [2.0, 0.5, 0.5],
    ] {
        assert!(!unit.contains_point(vec(p)), "{p:?}");
    }
    // A zero-size box contains exactly its point.
    let point = bbox::<V>([2.0, 3.0, 4.0], [2.0, 3.0, 4.0]);
    assert!(point.contains_point(vec([2.0, 3.0, 4.0])));
    assert!(!point.contains_point(vec([2.0, 3.0f32.next_up(), 4.0])));
    // A flat box.
    let flat = bbox::<V>([0.0, 1.0, 0.0], [1.0, 1.0, 1.0]);
    assert!(flat.contains_point(vec([0.5, 1.0, 0.5])));
    assert!(!flat.contains_point(vec([0.5, 0.5, 0.5])));

    // Balls: the 3-4-5 triangle gives exact touching.
    let b = ball::<V>([0.0; 3], 5.0);
    assert!(b.contains_point(vec([3.0, 4.0, 0.0])));
    assert!(!b.contains_point(vec([3.0, 4.0f32.next_up(), 0.0])));
    assert!(b.contains_point(vec([0.0; 3])));
    let zero = ball::<V>([1.0, 2.0, 3.0], 0.0);
    assert!(zero.contains_point(vec([1.0, 2.0, 3.0])));
    assert!(!zero.contains_point(vec([1.0, 2.0f32.next_up(), 3.0])));
    assert!(ball::<V>([0.0; 3], 2.0).overlaps(&ball([3.0, 4.0, 0.0], 3.0)));
    assert!(!ball::<V>([0.0; 3], 2.0).overlaps(&ball([3.0, 4.0f32.next_up(), 0.0], 3.0)));
    assert!(zero.overlaps(&zero));
    assert!(!zero.overlaps(&ball([1.0, 2.5, 3.0], 0.0)));
    assert!(zero.overlaps(&ball([1.0, 2.5, 3.0], 0.5)));
    // Ball vs box: touching a face, an edge or a corner (distance 5 from the corner).
    assert!(ball::<V>([-1.0, 0.5, 0.5], 1.0).overlaps_box(&unit));
    assert!(!ball::<V>([(-1.0f32).next_down(), 0.5, 0.5], 1.0).overlaps_box(&unit));
    assert!(ball::<V>([-3.0, -4.0, 0.5], 5.0).overlaps_box(&unit));
    assert!(!ball::<V>([-3.0, -4.0, 0.5], 5.0f32.next_down()).overlaps_box(&unit));
    // The ball's bounding box overlaps the unit box, the ball does not (corner gap).
    assert!(!ball::<V>([-0.8, -0.8, 0.5], 1.0).overlaps_box(&unit));
    assert!(
        ball::<V>([-0.8, -0.8, 0.5], 1.0)
            .bounding_box()
            .overlaps(&unit)
    );
    // Center inside, zero radius on the surface, zero-size box inside a ball.
    assert!(ball::<V>([0.5; 3], 0.0).overlaps_box(&unit));
    assert!(ball::<V>([1.0, 0.5, 0.5], 0.0).overlaps_box(&unit));
    assert!(!ball::<V>([1.0f32.next_up(), 0.5, 0.5], 0.0).overlaps_box(&unit));
    assert!(ball::<V>([0.0; 3], 1.0).overlaps_box(&point.translated(vec([-2.0, -3.0, -4.5]))));
    for (c, r) in [
        ([-1.0, 0.5, 0.5], 1.0),
        ([-3.0, -4.0, 0.5], 5.0),
        ([-0.8, -0.8, 0.5], 1.0),
    ] {
        assert!(check_ball_box(&ball::<V>(c, r), &unit, EXACT));
    }
}

crate::kit::tests_2d_3d!(static_cases: static_cases_2d, static_cases_3d);

proptest! {
    #![proptest_config(config())]

    /// On the grid (every square and sum exact): point vs box, point vs ball, ball vs
    /// ball, ball vs box must match the f64 oracle exactly, touching included.
    #[test]
    fn static_tests_exact(
        b in grid_box(), p in grid3(14), c1 in grid3(12), r1 in grid_radius(), c2 in grid3(12),
        r2 in grid_radius(),
    ) {
        check_point_box::<Vec2>(&bbox(b.0, b.1), vec(p));
        check_point_box::<Vec3>(&bbox(b.0, b.1), vec(p));
        check_point_ball::<Vec2>(&ball(c1, r1), vec(p), EXACT);
        check_point_ball::<Vec3>(&ball(c1, r1), vec(p), EXACT);
        check_ball_ball::<Vec2>(&ball(c1, r1), &ball(c2, r2), EXACT);
        check_ball_ball::<Vec3>(&ball(c1, r1), &ball(c2, r2), EXACT);
        check_ball_box::<Vec2>(&ball(c1, r1), &bbox(b.0, b.1), EXACT);
        check_ball_box::<Vec3>(&ball(c1, r1), &bbox(b.0, b.1), EXACT);
    }

    /// Random floats, away from the boundaries.
    #[test]
    fn static_tests_float(
        b in float_box(), p in prop::array::uniform3(-9.0f32..9.0),
        c1 in prop::array::uniform3(-6.0f32..6.0), r1 in float_radius(),
        c2 in prop::array::uniform3(-6.0f32..6.0), r2 in float_radius(),
    ) {
        check_point_box::<Vec2>(&bbox(b.0, b.1), vec(p));
        check_point_box::<Vec3>(&bbox(b.0, b.1), vec(p));
        let clear = check_point_ball::<Vec2>(&ball(c1, r1), vec(p), FLAT)
            & check_point_ball::<Vec3>(&ball(c1, r1), vec(p), FLAT)
            & check_ball_ball::<Vec2>(&ball(c1, r1), &ball(c2, r2), FLAT)
            & check_ball_ball::<Vec3>(&ball(c1, r1), &ball(c2, r2), FLAT)
            & check_ball_box::<Vec2>(&ball(c1, r1), &bbox(b.0, b.1), FLAT)
            & check_ball_box::<Vec3>(&ball(c1, r1), &bbox(b.0, b.1), FLAT);
        prop_assume!(clear);
    }
}
