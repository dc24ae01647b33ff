//! Rays and box casts, and the tree queries built on them.

use super::*;

// ---------------------------------------------------------------------------------------
// Rays and box casts
// ---------------------------------------------------------------------------------------

pub(crate) fn ray_box_cases<V: Vector>() {
    let unit = bbox::<V>([0.0; 3], [1.0; 3]);
    let hit = |r: Ray<V>, max_t: f32| {
        let t = r.box_hit_at(&unit, max_t);
        let tn = r.box_hit_with_normal_at(&unit, max_t);
        assert_eq!(t, tn.map(|h| h.0), "{r:?}, max_t {max_t}");
        tn.map(|(t, n)| (t, n.extend_to_3d().to_array()))
    };
    // Straight at the x = 0 face.
    assert_eq!(
        hit(ray([-5.0, 0.5, 0.5], [1.0, 0.0, 0.0]), 10.0),
        Some((5.0, [-1.0, 0.0, 0.0]))
    );
    assert_eq!(
        hit(ray([5.0, 0.5, 0.5], [-2.0, 0.0, 0.0]), 10.0),
        Some((2.0, [1.0, 0.0, 0.0]))
    );
    assert_eq!(
        hit(ray([0.5, 3.0, 0.5], [0.0, -0.5, 0.0]), 10.0),
        Some((4.0, [0.0, 1.0, 0.0]))
    );
    // Parallel to x with the origin exactly on the y = 1 face (and on the y = 0 face): the
    // ray slides along the face, which counts. A float further out misses.
    assert_eq!(
        hit(ray([-5.0, 1.0, 0.5], [1.0, 0.0, 0.0]), 10.0),
        Some((5.0, [-1.0, 0.0, 0.0]))
    );
    assert_eq!(
        hit(ray([-5.0, 0.0, 0.5], [1.0, 0.0, 0.0]), 10.0),
        Some((5.0, [-1.0, 0.0, 0.0]))
    );
    assert_eq!(
        hit(ray([-5.0, 1.0f32.next_up(), 0.5], [1.0, 0.0, 0.0]), 10.0),
        None
    );
    // Along an edge (parallel on two axes in 3D, both on faces).
    assert_eq!(
        hit(ray([-5.0, 1.0, 1.0], [1.0, 0.0, 0.0]), 10.0),
        Some((5.0, [-1.0, 0.0, 0.0]))
    );
    // Origin inside, on a face, on a corner: t = 0 and no normal, whatever the direction.
    for o in [[0.5; 3], [0.0, 0.5, 0.5], [1.0; 3]] {
        for d in [[1.0, 0.0, 0.0], [-1.0, -1.0, -1.0], [0.0; 3]] {
            assert_eq!(hit(ray(o, d), 10.0), Some((0.0, [0.0; 3])), "{o:?} {d:?}");
            assert_eq!(hit(ray(o, d), 0.0), Some((0.0, [0.0; 3])), "{o:?} {d:?}");
        }
    }
    // max_t clipping: the hit at t = 5 needs max_t >= 5.
    let r = ray::<V>([-5.0, 0.5, 0.5], [1.0, 0.0, 0.0]);
    assert_eq!(hit(r, 4.75), None);
    assert_eq!(hit(r, 5.0), Some((5.0, [-1.0, 0.0, 0.0])));
    assert_eq!(hit(r, f32::INFINITY), Some((5.0, [-1.0, 0.0, 0.0])));
    // An empty range [0, max_t] never hits, even from inside (also with no direction).
    for d in [[1.0, 0.0, 0.0], [0.0; 3]] {
        assert_eq!(hit(ray([0.5; 3], d), -1.0), None, "{d:?}");
        assert_eq!(hit(ray([0.5; 3], d), f32::NAN), None, "{d:?}");
    }
    // Zero direction outside; pointing away; passing beside.
    assert_eq!(hit(ray([-1.0, 0.5, 0.5], [0.0; 3]), 10.0), None);
    assert_eq!(hit(ray([-1.0, 0.5, 0.5], [-1.0, 0.0, 0.0]), 10.0), None);
    assert_eq!(hit(ray([-1.0, 2.0, 0.5], [1.0, 0.0, 0.0]), 10.0), None);
    // Through the corner (0, 1) and away: touches at that one point, t = 1, arriving last
    // on x. Crossing the box through that corner enters there too.
    assert_eq!(
        hit(ray([-1.0, 0.0, 0.5], [1.0, 1.0, 0.0]), 10.0),
        Some((1.0, [-1.0, 0.0, 0.0]))
    );
    assert_eq!(
        hit(ray([-1.0, 2.0, 0.5], [1.0, -1.0, 0.0]), 10.0),
        Some((1.0, [-1.0, 0.0, 0.0]))
    );
    // A direction component so small that its reciprocal overflows, with the origin on
    // the face of that axis: still inside that slab for all t.
    let tiny = f32::from_bits(1); // the smallest subnormal
    assert_eq!(
        hit(ray([0.0, -1.0, 0.5], [tiny, 1.0, 0.0]), 10.0),
        Some((1.0, [0.0, -1.0, 0.0]))
    );
    assert_eq!(
        hit(ray([0.0, 0.5, 0.5], [tiny, 0.0, 0.0]), 10.0),
        Some((0.0, [0.0; 3]))
    );
    assert_eq!(
        hit(ray([1.0, 0.5, 0.5], [-tiny, 1.0, 0.0]), 10.0),
        Some((0.0, [0.0; 3]))
    );
    // A zero-size box.
    let p = bbox::<V>([2.0; 3], [2.0; 3]);
    assert_eq!(ray::<V>([0.0; 3], [1.0; 3]).box_hit_at(&p, 10.0), Some(2.0));
    assert_eq!(
        ray::<V>([0.0; 3], [1.0, 1.0, 0.5]).box_hit_at(&p, 10.0),
        if V::DIM == 2 { Some(2.0) } else { None }
    );
    for (o, d, m) in [
        ([-5.0, 1.0, 0.5], [1.0, 0.0, 0.0], 10.0),
        ([-1.0, 0.0, 0.5], [1.0, 1.0, 0.0], 10.0),
        ([-1.0, 2.0, 0.5], [1.0, -1.0, 0.0], 10.0),
        ([0.5; 3], [0.0; 3], 2.0),
    ] {
        check_ray_box(&ray::<V>(o, d), &unit, m, EXACT);
    }
}

crate::kit::tests_2d_3d!(ray_box_cases: ray_box_cases_2d, ray_box_cases_3d);

/// The tree's ray traversals test boxes with precomputed slabs (`RaySlabs`, in
/// `geometry::ray`, not public): the subnormal-direction case above, through the tree.
pub(crate) fn tree_ray_subnormal_direction<V: Vector>() {
    let mut tree = DynamicTree::<V, u32>::with_margin(0.0);
    let id = tree.create_proxy(bbox([0.0; 3], [1.0; 3]), 7).unwrap();
    let fat = tree.fat_box(id).unwrap();
    let tiny = f32::from_bits(1);
    let mut below: V = fat.min;
    below.set_axis(1, fat.min.axis(1) - 1.0);
    let mut on_face: V = fat.center();
    on_face.set_axis(0, fat.min.axis(0));
    for r in [
        Ray::new(below, vec([tiny, 1.0, 0.0])),
        Ray::new(on_face, vec([tiny, 0.0, 0.0])),
        Ray::new(on_face, vec([-tiny, 0.5, 0.0])),
    ] {
        let expected = r.box_hit_at(&fat, 10.0).expect("the ray reaches the box");
        let mut hits = Vec::new();
        tree.ray_hits(&r, 10.0, |_, &tag, t| {
            hits.push((tag, t));
            true
        });
        assert_eq!(hits, [(7, expected)], "{r:?}");
        let best = tree.cast_ray(&r, 10.0, |_, _| r.box_hit_at(&fat, 10.0));
        assert_eq!(best.map(|h| h.t), Some(expected), "{r:?}");
    }
}

crate::kit::tests_2d_3d!(
    tree_ray_subnormal_direction:
    tree_ray_subnormal_direction_2d,
    tree_ray_subnormal_direction_3d
);

pub(crate) fn ray_ball_cases<V: Vector>() {
    let b = ball::<V>([0.0; 3], 1.0);
    let hit = |o: [f32; 3], d: [f32; 3], max_t: f32| ray::<V>(o, d).ball_hit_at(&b, max_t);
    assert_eq!(hit([-5.0, 0.0, 0.0], [1.0, 0.0, 0.0], 10.0), Some(4.0));
    assert_eq!(hit([-5.0, 0.0, 0.0], [2.0, 0.0, 0.0], 10.0), Some(2.0));
    assert_eq!(hit([0.0, 5.0, 0.0], [0.0, -1.0, 0.0], 10.0), Some(4.0));
    // Tangent: touches at (0, 1, 0) at t = 5. A bit further out misses (one float further
    // is below the precision of the squared distances, 25 + 1 - 1).
    assert_eq!(hit([-5.0, 1.0, 0.0], [1.0, 0.0, 0.0], 10.0), Some(5.0));
    assert_eq!(hit([-5.0, 1.001, 0.0], [1.0, 0.0, 0.0], 10.0), None);
    // Origin inside or on the surface: 0, whatever the direction.
    for o in [[0.0; 3], [0.5, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]] {
        for d in [[1.0, 0.0, 0.0], [0.0; 3], [-1.0, 1.0, 0.0]] {
            assert_eq!(hit(o, d, 10.0), Some(0.0), "{o:?} {d:?}");
            assert_eq!(hit(o, d, 0.0), Some(0.0), "{o:?} {d:?}");
        }
    }
    // max_t clipping.
    assert_eq!(hit([-5.0, 0.0, 0.0], [1.0, 0.0, 0.0], 3.75), None);
    assert_eq!(hit([-5.0, 0.0, 0.0], [1.0, 0.0, 0.0], 4.0), Some(4.0));
    assert_eq!(
        hit([-5.0, 0.0, 0.0], [1.0, 0.0, 0.0], f32::INFINITY),
        Some(4.0)
    );
    // An empty range [0, max_t] never hits, even from inside.
    assert_eq!(hit([0.0; 3], [1.0, 0.0, 0.0], -1.0), None);
    assert_eq!(hit([0.0; 3], [1.0, 0.0, 0.0], f32::NAN), None);
    // Zero direction outside; pointing away; perpendicular; passing beside.
    assert_eq!(hit([-5.0, 0.0, 0.0], [0.0; 3], 10.0), None);
    assert_eq!(hit([-5.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 10.0), None);
    assert_eq!(hit([-5.0, 0.0, 0.0], [0.0, 1.0, 0.0], 10.0), None);
    assert_eq!(hit([-5.0, 2.0, 0.0], [1.0, 0.0, 0.0], 10.0), None);
    // Zero radius: a ray through the point.
    let p = ball::<V>([3.0, 0.0, 0.0], 0.0);
    assert_eq!(
        ray::<V>([0.0; 3], [1.0, 0.0, 0.0]).ball_hit_at(&p, 10.0),
        Some(3.0)
    );
    assert_eq!(
        ray::<V>([0.0; 3], [1.0, 0.0, 0.0]).ball_hit_at(&p, 2.0),
        None
    );
    assert_eq!(
        ray::<V>([0.0, 0.5, 0.0], [1.0, 0.0, 0.0]).ball_hit_at(&p, 10.0),
        None
    );
    for (o, d) in [
        ([-5.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
        ([-5.0, 0.5, 0.0], [1.0, 0.25, 0.0]),
    ] {
        check_ray_ball(&ray::<V>(o, d), &b, 10.0, ROUND);
    }
}

crate::kit::tests_2d_3d!(ray_ball_cases: ray_ball_cases_2d, ray_ball_cases_3d);

pub(crate) fn box_cast_cases<V: Vector>() {
    let shape = bbox::<V>([-0.5; 3], [0.5; 3]);
    let target = bbox::<V>([2.0, -1.0, -1.0], [3.0, 1.0, 1.0]);
    let cast = |s: &BoundingBox<V>, d: [f32; 3], max_t: f32| {
        box_cast_at(s, vec(d), max_t, &target).map(|(t, n)| (t, n.extend_to_3d().to_array()))
    };
    // Straight on: the shape's max face (0.5 + t) reaches the target's min face (2).
    assert_eq!(
        cast(&shape, [1.0, 0.0, 0.0], 10.0),
        Some((1.5, [-1.0, 0.0, 0.0]))
    );
    assert_eq!(
        cast(&shape, [3.0, 0.0, 0.0], 10.0),
        Some((0.5, [-1.0, 0.0, 0.0]))
    );
    // max_t clipping.
    assert_eq!(cast(&shape, [1.0, 0.0, 0.0], 1.25), None);
    assert_eq!(
        cast(&shape, [1.0, 0.0, 0.0], 1.5),
        Some((1.5, [-1.0, 0.0, 0.0]))
    );
    assert_eq!(cast(&shape, [1.0, 0.0, 0.0], -1.0), None);
    // Grazing: the shape slides along the target's y = -1 face (touching counts).
    let low = shape.translated(vec([0.0, -1.5, 0.0]));
    assert_eq!(
        cast(&low, [1.0, 0.0, 0.0], 10.0),
        Some((1.5, [-1.0, 0.0, 0.0]))
    );
    let lower = shape.translated(vec([0.0, -1.5f32.next_up().next_up(), 0.0]));
    assert!(lower.max.axis(1) < -1.0);
    assert_eq!(cast(&lower, [1.0, 0.0, 0.0], 10.0), None);
    // Overlapping at the start (also touching): t = 0, no normal.
    let start = shape.translated(vec([2.0, 0.0, 0.0]));
    assert_eq!(cast(&start, [1.0, 0.0, 0.0], 10.0), Some((0.0, [0.0; 3])));
    let touch = shape.translated(vec([1.5, 0.0, 0.0]));
    assert_eq!(cast(&touch, [-1.0, 0.0, 0.0], 10.0), Some((0.0, [0.0; 3])));
    // Moving away; not moving.
    assert_eq!(cast(&shape, [-1.0, 0.0, 0.0], 10.0), None);
    assert_eq!(cast(&shape, [0.0; 3], 10.0), None);
    // Diagonal: x closes at 0.75, y at 1.5 (coming from below), so the y face.
    let below = shape.translated(vec([2.5, -3.0, 0.0]));
    assert_eq!(
        cast(&below, [0.0, 1.0, 0.0], 10.0),
        Some((1.5, [0.0, -1.0, 0.0]))
    );
    let diag = shape.translated(vec([0.0, -3.0, 0.0]));
    assert_eq!(
        cast(&diag, [2.0, 1.0, 0.0], 10.0),
        Some((1.5, [0.0, -1.0, 0.0]))
    );
    // A zero-size shape is a ray.
    let point = bbox::<V>([0.0; 3], [0.0; 3]);
    assert_eq!(
        cast(&point, [1.0, 0.0, 0.0], 10.0),
        Some((2.0, [-1.0, 0.0, 0.0]))
    );
    for (s, d) in [
        (shape, [1.0, 0.0, 0.0]),
        (low, [1.0, 0.0, 0.0]),
        (diag, [2.0, 1.0, 0.0]),
        (point, [1.0, 0.0, 0.0]),
    ] {
        check_box_cast(&s, vec(d), 10.0, &target, EXACT);
    }
}

crate::kit::tests_2d_3d!(box_cast_cases: box_cast_cases_2d, box_cast_cases_3d);

proptest! {
    #![proptest_config(config())]

    /// On the grid with power-of-two directions: exact agreement with points sampled along
    /// the ray, including origins on faces and rays along faces.
    #[test]
    fn ray_box_exact(
        b in grid_box(), o in grid3(16), d in prop::array::uniform3(pow2_or_zero()),
        max_t in grid_max_t(),
    ) {
        check_ray_box::<Vec2>(&ray(o, d), &bbox(b.0, b.1), max_t, EXACT);
        check_ray_box::<Vec3>(&ray(o, d), &bbox(b.0, b.1), max_t, EXACT);
    }

    #[test]
    fn ray_box_float(
        b in float_box(), o in prop::array::uniform3(-9.0f32..9.0),
        d in prop::array::uniform3(prop_oneof![1 => Just(0.0f32), 4 => -5.0f32..5.0]),
        max_t in float_max_t(),
    ) {
        let clear = check_ray_box::<Vec2>(&ray(o, d), &bbox(b.0, b.1), max_t, FLAT)
            & check_ray_box::<Vec3>(&ray(o, d), &bbox(b.0, b.1), max_t, FLAT);
        prop_assume!(clear);
    }

    #[test]
    fn ray_ball_float(
        c in prop::array::uniform3(-6.0f32..6.0), r in float_radius(),
        o in prop::array::uniform3(-9.0f32..9.0),
        d in prop::array::uniform3(prop_oneof![1 => Just(0.0f32), 4 => -5.0f32..5.0]),
        max_t in float_max_t(),
    ) {
        let clear = check_ray_ball::<Vec2>(&ray(o, d), &ball(c, r), max_t, ROUND)
            & check_ray_ball::<Vec3>(&ray(o, d), &ball(c, r), max_t, ROUND);
        prop_assume!(clear);
    }

    /// On the grid: centers, half extents and the grown target are exact.
    #[test]
    fn box_cast_exact(
        s in grid_box(), t in grid_box(), d in prop::array::uniform3(pow2_or_zero()),
        max_t in grid_max_t(),
    ) {
        check_box_cast::<Vec2>(&bbox(s.0, s.1), vec(d), max_t, &bbox(t.0, t.1), EXACT);
        check_box_cast::<Vec3>(&bbox(s.0, s.1), vec(d), max_t, &bbox(t.0, t.1), EXACT);
    }

    #[test]
    fn box_cast_float(
        s in float_box(), t in float_box(),
        d in prop::array::uniform3(prop_oneof![1 => Just(0.0f32), 4 => -5.0f32..5.0]),
        max_t in float_max_t(),
    ) {
        let clear = check_box_cast::<Vec2>(&bbox(s.0, s.1), vec(d), max_t, &bbox(t.0, t.1), FLAT)
            & check_box_cast::<Vec3>(&bbox(s.0, s.1), vec(d), max_t, &bbox(t.0, t.1), FLAT);
        prop_assume!(clear);
    }
}
