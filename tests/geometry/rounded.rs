//! Rounded boxes (boxes, balls, capsules, boxes with rounded edges): hand-computed cases,
//! and agreement with the box and ball functions on those shapes. The random cases of every
//! pair kind against the `f64` oracle of `rounded_oracle` are in `rounded_random`.

use super::rounded_oracle::*;
use super::*;
use bevy_aabb_tree::RoundedBox;
use bevy_aabb_tree::geometry::{
    Shape, contact_ball_box, contact_balls, contact_box_ball, contact_boxes, contact_rounded,
    rounded_cast_at, sweep_rounded,
};

pub(crate) const ONE: Judge = Judge {
    tol: ROUND,
    unit: 1.0,
};

/// Values on the dyadic grid: overlap and touching are decided exactly; the sweeps and
/// rays of round shapes are still found within their tolerances.
const GRID: Tol = Tol {
    exact: true,
    clear: 1e-6,
    time: 1e-4,
    contact: 1e-3,
};

pub(crate) const ON_GRID: Judge = Judge {
    tol: GRID,
    unit: 1.0,
};

#[track_caller]
fn close<V: Vector>(got: V, expected: [f32; 3], eps: f32) {
    assert!(
        max_abs_diff(got, vec(expected)) <= eps,
        "got {got:?}, expected {expected:?}"
    );
}

#[track_caller]
fn close_f(got: f32, expected: f64, eps: f64) {
    assert!(
        (f64::from(got) - expected).abs() <= eps,
        "got {got}, expected {expected}"
    );
}

// ---------------------------------------------------------------------------------------
// Hand-computed cases
// ---------------------------------------------------------------------------------------

/// A capsule along y (segment from (0, -1) to (0, 1), radius 0.5) and a ball of radius
/// 0.5 at (1, 1.2). The point of the segment nearest the ball's center is its end (0, 1),
/// at sqrt(1² + 0.2²) = sqrt(1.04) = 1.0198039; the shapes are that less 1 apart.
fn capsule_and_ball<V: Vector>() {
    let capsule = RoundedBox::<V>::capsule(V::ZERO, 1, 1.0, 0.5);
    assert_eq!(capsule.half_extents, vec([0.0, 1.0, 0.0]));
    let ball = RoundedBox::<V>::ball(vec([1.0, 1.2, 0.0]), 0.5);
    let root = 1.04f64.sqrt();
    for (x, y) in [(&capsule, &ball), (&ball, &capsule)] {
        close_f(x.distance(y), root - 1.0, 1e-6);
        assert!(!x.overlaps(y));
        assert_eq!(contact_rounded(x, y), None);
    }
    // The closest points: each surface point on the line from (0, 1) to (1, 1.2).
    let u = [1.0 / root, 0.2 / root];
    let (pa, pb) = capsule.closest_points(&ball);
    close(
        pa,
        [(0.5 * u[0]) as f32, (1.0 + 0.5 * u[1]) as f32, 0.0],
        1e-6,
    );
    close(
        pb,
        [(1.0 - 0.5 * u[0]) as f32, (1.2 - 0.5 * u[1]) as f32, 0.0],
        1e-6,
    );
    close(
        capsule.closest_point(ball.center),
        [(0.5 * u[0]) as f32, (1.0 + 0.5 * u[1]) as f32, 0.0],
        1e-6,
    );
    close_f(capsule.distance_to_point(ball.center), root - 0.5, 1e-6);
    assert!(!capsule.contains_point(ball.center));
    assert!(capsule.contains_point(vec([0.0, 1.5, 0.0])));
    assert!(!capsule.contains_point(vec([0.0, 1.5f32.next_up(), 0.0])));
    assert!(capsule.contains_point(vec([0.5, -1.0, 0.0])));
    assert!(!capsule.contains_point(vec([0.5, -1.01, 0.0])));

    // The ball moving left by 0.1: the center at (1 - 0.1 u, 1.2) is 1 from (0, 1) when
    // 1 - 0.1 u = sqrt(0.96). The normal from the capsule towards the ball is then
    // (sqrt(0.96), 0.2). The bounding boxes overlap to the end of the step (u1 = 1).
    let hit = sweep_rounded(&capsule, V::ZERO, &ball, vec([-0.1, 0.0, 0.0])).expect("a hit");
    let s = 0.96f64.sqrt();
    close_f(hit.u0, (1.0 - s) / 0.1, 5e-4);
    assert_eq!(hit.u1, 1.0);
    close(hit.normal, [s as f32, 0.2, 0.0], 1e-3);
    // The same motion seen from the ball: the capsule moving right; normal reversed.
    let back = sweep_rounded(&ball, V::ZERO, &capsule, vec([0.1, 0.0, 0.0])).expect("a hit");
    close_f(back.u0, (1.0 - s) / 0.1, 5e-4);
    close(back.normal, [-s as f32, -0.2, 0.0], 1e-3);

    // Moved by 0.1 the ball overlaps by 1 - sqrt(0.85), along (0.9, 0.2) / sqrt(0.85). The
    // segment of that line in both shapes runs from 0.4220 to 0.5 past (0, 1).
    let moved = RoundedBox::<V>::ball(vec([0.9, 1.2, 0.0]), 0.5);
    let c = contact_rounded(&capsule, &moved).expect("overlapping");
    let len = 0.85f64.sqrt();
    close_f(c.depth, 1.0 - len, 1e-6);
    let n = [0.9 / len, 0.2 / len];
    close(c.normal, [n[0] as f32, n[1] as f32, 0.0], 1e-6);
    let mid = 0.5 * ((len - 0.5) + 0.5);
    close(
        c.point,
        [(mid * n[0]) as f32, (1.0 + mid * n[1]) as f32, 0.0],
        1e-6,
    );
    let (p, q) = capsule.closest_points(&moved);
    assert_eq!(p, q);
    close(
        p,
        [(mid * n[0]) as f32, (1.0 + mid * n[1]) as f32, 0.0],
        1e-6,
    );

    // Rays along +x at several heights.
    let hit = |y: f32| {
        let r = ray::<V>([-3.0, y, 0.0], [1.0, 0.0, 0.0]);
        let got = r.rounded_box_hit_with_normal_at(&capsule, 10.0);
        assert_eq!(r.rounded_box_hit_at(&capsule, 10.0), got.map(|h| h.0));
        got
    };
    // The cylinder's side: x = -0.5.
    let (t, n) = hit(0.5).expect("side");
    close_f(t, 2.5, 1e-4);
    close(n, [-1.0, 0.0, 0.0], 1e-6);
    // The top cap: 0.3 above the segment's end, x = -sqrt(0.25 - 0.09) = -0.4.
    let (t, n) = hit(1.3).expect("cap");
    close_f(t, 2.6, 1e-4);
    close(n, [-0.8, 0.6, 0.0], 1e-3);
    // Grazing the top of the cap (y = 1.5, at x = 0) counts; a little higher misses.
    let (t, n) = hit(1.5).expect("graze");
    close_f(t, 3.0, 1e-2);
    close(n, [0.0, 1.0, 0.0], 1e-2);
    assert_eq!(hit(1.51), None);
    // max_t short of the side.
    let r = ray::<V>([-3.0, 0.0, 0.0], [1.0, 0.0, 0.0]);
    assert_eq!(r.rounded_box_hit_at(&capsule, 2.4), None);
    // From inside: 0, no normal.
    let r = ray::<V>([0.2, -1.1, 0.0], [1.0, 0.0, 0.0]);
    assert_eq!(
        r.rounded_box_hit_with_normal_at(&capsule, 10.0),
        Some((0.0, V::ZERO))
    );

    // Casting the ball (radius 0.5) from (-3, 1.3) along +x: its center meets the
    // capsule grown by 0.5 (radius 1) where x² + 0.3² = 1.
    let b = RoundedBox::<V>::ball(vec([-3.0, 1.3, 0.0]), 0.5);
    let (t, n) = rounded_cast_at(&b, vec([1.0, 0.0, 0.0]), 10.0, &capsule).expect("cast");
    let x = 0.91f64.sqrt();
    close_f(t, 3.0 - x, 1e-4);
    close(n, [-x as f32, 0.3, 0.0], 1e-3);

    // The oracle agrees on all of it.
    assert!(check_static(&capsule, &ball, vec([0.3, 0.4, 0.0]), ONE));
    check_sweep(&capsule, V::ZERO, &ball, vec([-0.1, 0.0, 0.0]), ONE);
    assert!(check_contact(&capsule, &moved, ONE));
    for y in [0.5, 1.3, 1.6] {
        assert!(check_ray(
            &ray([-3.0, y, 0.0], [1.0, 0.0, 0.0]),
            &capsule,
            10.0,
            ONE
        ));
    }
    assert!(check_cast(&b, vec([1.0, 0.0, 0.0]), 10.0, &capsule, ONE));
}

crate::kit::tests_2d_3d!(capsule_and_ball: capsule_and_ball_2d, capsule_and_ball_3d);

/// Capsules against boxes and capsules; rounded boxes corner to corner.
fn capsules_and_rounded_boxes<V: Vector>() {
    let n = V::DIM as f64;
    // A capsule along x (segment -2..2, radius 1) and the box [3, 4] x [-1, 1]: the
    // segment's end is 1 from the box's face, so they touch, with depth 0, the normal +x
    // and the point on the face.
    let capsule = RoundedBox::<V>::capsule(V::ZERO, 0, 2.0, 1.0);
    let block = RoundedBox::from_box(&bbox::<V>([3.0, -1.0, -1.0], [4.0, 1.0, 1.0]));
    assert!(capsule.overlaps(&block));
    assert_eq!(capsule.distance(&block), 0.0);
    let c = contact_rounded(&capsule, &block).expect("touching");
    assert_eq!(
        (c.normal, c.depth, c.point),
        (vec([1.0, 0.0, 0.0]), 0.0, vec([3.0, 0.0, 0.0]))
    );
    let c = contact_rounded(&block, &capsule).expect("touching");
    assert_eq!(
        (c.normal, c.depth, c.point),
        (vec([-1.0, 0.0, 0.0]), 0.0, vec([3.0, 0.0, 0.0]))
    );
    let apart = block.translated(vec([1e-6, 0.0, 0.0]));
    assert!(!capsule.overlaps(&apart));
    assert_eq!(contact_rounded(&capsule, &apart), None);
    close_f(capsule.distance(&apart), 1e-6, 1e-7);

    // Two capsules crossing, along x and along y, radius 0.5, the second 0.8 up z (3D):
    // the segments are 0.8 apart, the shapes overlap by 0.2 along +z, and the part of
    // the line between the segments in both runs from z = 0.3 to 0.5.
    let along_x = RoundedBox::<V>::capsule(V::ZERO, 0, 2.0, 0.5);
    let along_y = RoundedBox::<V>::capsule(vec([0.0, 0.0, 0.8]), 1, 2.0, 0.5);
    let c = contact_rounded(&along_x, &along_y).expect("crossing");
    if V::DIM == 3 {
        close_f(c.depth, 0.2, 1e-6);
        close(c.normal, [0.0, 0.0, 1.0], 0.0);
        close(c.point, [0.0, 0.0, 0.4], 1e-6);
    } else {
        // In 2D the segments cross: b leaves through a face of the difference, along x
        // or y (3 either way: the lowest axis, +), by 2 + 0.5 + 0.5.
        assert_eq!((c.normal, c.depth), (vec([1.0, 0.0, 0.0]), 3.0));
        assert_eq!(c.point, V::ZERO);
    }
    assert!(check_contact(&along_x, &along_y, ONE));

    // Rounded boxes (half extents 1, radius 0.5) at the origin and at (3, 3, 3): the
    // inner boxes are 1 apart on every axis, sqrt(n) in all, the shapes sqrt(n) - 1.
    let a = rounded::<V>([0.0; 3], [1.0; 3], 0.5);
    let b = rounded::<V>([3.0; 3], [1.0; 3], 0.5);
    close_f(a.distance(&b), n.sqrt() - 1.0, 1e-6);
    let (pa, pb) = a.closest_points(&b);
    let k = (1.0 + 0.5 / n.sqrt()) as f32;
    close(pa, [k; 3], 1e-6);
    close(pb, [3.0 - k; 3], 1e-6);
    // b moving by (-3, -3, -3): the inner gap 1 - 3 u on every axis; they touch when
    // sqrt(n) (1 - 3 u) = 1, along the diagonal.
    let hit = sweep_rounded(&a, V::ZERO, &b, V::splat(-3.0)).expect("corner hit");
    close_f(hit.u0, (1.0 - 1.0 / n.sqrt()) / 3.0, 1e-4);
    close(hit.normal, [(1.0 / n.sqrt()) as f32; 3], 1e-4);
    check_sweep(&a, V::ZERO, &b, V::splat(-3.0), ONE);
    check_sweep(&b, V::splat(-1.5), &a, V::splat(1.5), ONE);
    // Face on: b at (3.5, 0, 0) moving by (-2, 0, 0): the faces of the inner boxes are
    // 1.5 apart and touch the shapes when 1.5 - 2 u = 1 (the radii), at u = 0.25.
    let b = rounded::<V>([3.5, 0.0, 0.0], [1.0; 3], 0.5);
    let hit = sweep_rounded(&a, V::ZERO, &b, vec([-2.0, 0.0, 0.0])).expect("face hit");
    close_f(hit.u0, 0.25, 1e-5);
    close(hit.normal, [1.0, 0.0, 0.0], 1e-6);
}

crate::kit::tests_2d_3d!(
    capsules_and_rounded_boxes:
    capsules_and_rounded_boxes_2d,
    capsules_and_rounded_boxes_3d
);

/// Sweeps that start in contact or only graze, as the box and ball sweeps treat them
/// (seed 001's rule: overlapping at the start is `u0 = 0`; touching counts).
fn starts_in_contact_and_grazes<V: Vector>() {
    let x = |k: f32| vec::<V>([k, 0.0, 0.0]);
    // A capsule along x (segment -1..1, radius 1) and a ball of radius 1 at (3, 0): the
    // ball's center is 2 from the segment's end, the sum of the radii. Touching at the
    // start: u0 = 0, no normal, whichever way they move.
    let capsule = RoundedBox::<V>::capsule(V::ZERO, 0, 1.0, 1.0);
    let ball = RoundedBox::<V>::ball(x(3.0), 1.0);
    assert!(capsule.overlaps(&ball));
    for d in [x(-1.0), x(1.0), vec([0.0, 2.0, 0.0]), V::ZERO] {
        let hit = sweep_rounded(&capsule, V::ZERO, &ball, d).expect("touching at the start");
        assert_eq!((hit.u0, hit.normal), (0.0, V::ZERO), "{d:?}");
    }
    // Moving straight apart: the bounding boxes only touch at the start, u1 = 0.
    let hit = sweep_rounded(&capsule, V::ZERO, &ball, x(1.0)).expect("touching");
    assert_eq!(hit.u1, 0.0);
    // A float further and moving apart: a miss.
    let away = RoundedBox::<V>::ball(x(3.0f32.next_up()), 1.0);
    assert_eq!(sweep_rounded(&capsule, V::ZERO, &away, x(1.0)), None);

    // A ball of radius 0.5 passing along y = 1 over a capsule along x (segment -1..1,
    // radius 0.5): it touches the capsule's side from x = -1 to 1, u = 0.4 to 0.6. The
    // first contact is a graze, found within the sweep's tolerance (early by at most
    // about 6e-4 here), with the normal +y.
    let capsule = RoundedBox::<V>::capsule(V::ZERO, 0, 1.0, 0.5);
    let ball = RoundedBox::<V>::ball(vec([-5.0, 1.0, 0.0]), 0.5);
    let hit = sweep_rounded(&capsule, V::ZERO, &ball, x(10.0)).expect("graze");
    assert!((0.399..=0.4).contains(&hit.u0), "{hit:?}");
    close(hit.normal, [0.0, 1.0, 0.0], 1e-2);
    // u1 is the bounding boxes' last overlap: the ball's leaves at x = 1.5 + 0.5.
    close_f(hit.u1, 0.7, 1e-6);
    // A thousandth higher: a miss.
    let above = RoundedBox::<V>::ball(vec([-5.0, 1.001, 0.0]), 0.5);
    assert_eq!(sweep_rounded(&capsule, V::ZERO, &above, x(10.0)), None);
    // The same graze between two boxes (radius 0): touching over an interval, exactly.
    let slab = rounded::<V>([0.0; 3], [1.0, 0.5, 0.5], 0.0);
    let cube = rounded::<V>([-5.0, 1.0, 0.0], [0.5; 3], 0.0);
    let hit = sweep_rounded(&slab, V::ZERO, &cube, x(10.0)).expect("box graze");
    assert_eq!((hit.u0, hit.u1), (0.35, 0.65));
    assert_eq!(hit.normal, vec([-1.0, 0.0, 0.0]));
    // And two balls passing at exactly the sum of the radii: one instant, u0 = u1.
    let a = RoundedBox::<V>::ball(V::ZERO, 1.0);
    let b = RoundedBox::<V>::ball(vec([-5.0, 2.0, 0.0]), 1.0);
    let hit = sweep_rounded(&a, V::ZERO, &b, x(10.0)).expect("ball graze");
    assert_eq!((hit.u0, hit.u1), (0.5, 0.5));
    assert_eq!(hit.normal, vec([0.0, 1.0, 0.0]));
    for (s, d) in [(&ball, x(10.0)), (&above, x(10.0))] {
        check_sweep(&capsule, V::ZERO, s, d, ON_GRID);
    }
}

/// A ray that reaches the side of a capsule along z exactly at `max_t`: the point
/// (-1.5, 0.5, 0.875) is 2.5 (the radius) from the axis x = -3.5, y = 2. It enters the
/// capsule's bounding box at t = 8/3, which floats round, so the closest approach comes
/// out a hair past `max_t` and is found as a graze: a hit at `max_t`, the normal from the
/// axis to the point. Stopping short of it is a miss.
#[test]
fn ray_touching_at_max_t() {
    let ray = Ray::new(Vec3::new(3.0, -2.5, 0.5), Vec3::new(-1.5, 1.0, 0.125));
    let capsule = RoundedBox::capsule(Vec3::new(-3.5, 2.0, 2.5), 2, 2.5, 2.5);
    let (t, n) = ray
        .rounded_box_hit_with_normal_at(&capsule, 3.0)
        .expect("touching at max_t");
    assert_eq!(t, 3.0);
    close(n, [0.8, -0.6, 0.0], 1e-5);
    assert_eq!(ray.rounded_box_hit_at(&capsule, 2.99), None);
}

crate::kit::tests_2d_3d!(
    starts_in_contact_and_grazes:
    starts_in_contact_and_grazes_2d,
    starts_in_contact_and_grazes_3d
);

/// Constructors, conversions and degenerate shapes.
fn conversions_and_degenerate<V: Vector>() {
    let c = vec::<V>([1.0, 2.0, 3.0]);
    let b = bbox::<V>([0.0, 1.0, 2.0], [2.0, 3.0, 4.0]);
    let r = RoundedBox::from_box(&b);
    assert_eq!(r, RoundedBox::from(b));
    assert_eq!((r.center, r.half_extents, r.radius), (c, V::ONE, 0.0));
    assert_eq!(r.to_box(), Some(b));
    assert_eq!(r.to_ball(), None);
    assert_eq!(r.inner_box(), b);
    assert_eq!(r.bounding_box(), b);
    let ball = Ball::new(c, 0.5);
    let r = RoundedBox::from(ball);
    assert_eq!(r, RoundedBox::ball(c, 0.5));
    assert_eq!(r.to_ball(), Some(ball));
    assert_eq!(r.to_box(), None);
    assert_eq!(r.bounding_box(), ball.bounding_box());
    assert_eq!(r.inner_box(), bbox([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]));
    // A capsule: half extents on its axis only; an axis past the dimension gives a ball.
    let cap = RoundedBox::<V>::capsule(c, 1, 2.0, 0.5);
    assert_eq!(cap.half_extents, vec([0.0, 2.0, 0.0]));
    assert_eq!(cap.bounding_box(), bbox([0.5, -0.5, 2.5], [1.5, 4.5, 3.5]));
    assert_eq!(
        RoundedBox::<V>::capsule(c, V::DIM, 2.0, 0.5),
        RoundedBox::ball(c, 0.5)
    );
    assert_eq!(
        RoundedBox::<V>::capsule(c, usize::MAX, 2.0, 0.5).half_extents,
        V::ZERO
    );
    assert_eq!(
        RoundedBox::<V>::capsule(c, 2, 2.0, 0.5).half_extents,
        if V::DIM == 3 {
            vec([0.0, 0.0, 2.0])
        } else {
            V::ZERO
        }
    );
    assert_eq!(cap.translated(V::ONE).center, c + V::ONE);
    // A point (zero size, zero radius) is a box and a ball.
    let point = RoundedBox::<V>::default();
    assert_eq!(point.to_box(), Some(bbox([0.0; 3], [0.0; 3])));
    assert_eq!(point.to_ball(), Some(Ball::new(V::ZERO, 0.0)));
    assert!(point.overlaps(&point) && point.contains_point(V::ZERO));
    assert!(!point.contains_point(vec([0.0, f32::MIN_POSITIVE / 8.0, 0.0])));
    let near = RoundedBox::<V>::ball(vec([0.0, 1e-30, 0.0]), 0.0);
    assert!(!point.overlaps(&near));
    assert_eq!(point.distance(&near), 1e-30);
    // A point touching a capsule's end, and a point against a flat box.
    assert!(point.overlaps(&RoundedBox::capsule(vec([0.0, 3.0, 0.0]), 1, 2.0, 1.0)));
    assert!(!point.overlaps(&RoundedBox::capsule(
        vec([0.0, 3.0f32.next_up(), 0.0]),
        1,
        2.0,
        1.0
    )));
    let flat = rounded::<V>([0.0, 1.0, 0.0], [1.0, 0.0, 1.0], 0.0);
    assert!(point.translated(vec([0.5, 1.0, 0.0])).overlaps(&flat));
    assert!(!point.overlaps(&flat));

    // Validity.
    assert!(RoundedBox::<V>::default().is_valid());
    for bad in [
        rounded::<V>([0.0; 3], [-1.0, 0.0, 0.0], 1.0),
        rounded::<V>([0.0; 3], [1.0; 3], -0.5),
        rounded::<V>([f32::NAN, 0.0, 0.0], [1.0; 3], 0.5),
        rounded::<V>([0.0; 3], [f32::INFINITY, 0.0, 0.0], 0.5),
        rounded::<V>([0.0; 3], [1.0; 3], f32::INFINITY),
        rounded::<V>([0.0; 3], [1.0; 3], f32::NAN),
    ] {
        assert!(!bad.is_valid(), "{bad:?}");
        let good = rounded::<V>([0.0; 3], [1.0; 3], 0.5);
        assert_eq!(contact_rounded(&bad, &good), None, "{bad:?}");
        assert_eq!(sweep_rounded(&bad, V::ONE, &good, V::ZERO), None, "{bad:?}");
        assert_eq!(rounded_cast_at(&bad, V::ONE, 1.0, &good), None, "{bad:?}");
    }
    // A NaN or a negative size never overlaps.
    let good = rounded::<V>([0.0; 3], [1.0; 3], 0.5);
    for bad in [
        rounded::<V>([f32::NAN, 0.0, 0.0], [1.0; 3], 0.5),
        rounded::<V>([0.0; 3], [f32::NAN, 1.0, 1.0], 0.5),
        rounded::<V>([0.0; 3], [-0.5, 1.0, 1.0], 0.5),
        rounded::<V>([0.0; 3], [1.0; 3], f32::NAN),
    ] {
        assert!(!bad.overlaps(&good) && !good.overlaps(&bad), "{bad:?}");
    }
    // A non-finite motion sweeps nothing.
    let other = rounded::<V>([5.0; 3], [1.0; 3], 0.5);
    assert_eq!(
        sweep_rounded(&good, vec([f32::NAN, 0.0, 0.0]), &other, V::ZERO),
        None
    );
    // Rays with a negative or NaN max_t, and a zero direction from outside.
    let r = ray::<V>([-5.0, 0.0, 0.0], [1.0, 0.0, 0.0]);
    assert_eq!(r.rounded_box_hit_at(&good, -1.0), None);
    assert_eq!(r.rounded_box_hit_at(&good, f32::NAN), None);
    assert_eq!(
        ray::<V>([-5.0, 0.0, 0.0], [0.0; 3]).rounded_box_hit_at(&good, 10.0),
        None
    );
    assert_eq!(
        ray::<V>([-1.2, 0.0, 0.0], [0.0; 3]).rounded_box_hit_at(&good, 10.0),
        Some(0.0)
    );
}

crate::kit::tests_2d_3d!(
    conversions_and_degenerate:
    conversions_and_degenerate_2d,
    conversions_and_degenerate_3d
);

/// Coordinates whose squares overflow `f32`, or lengths whose squares underflow: the
/// rounded boxes compare lengths scaled. (The ball tests square them: two balls of radius
/// 1e20 with centers 3e20 apart compare infinity with infinity.)
fn huge_and_tiny<V: Vector>() {
    // Powers of two, so that 3-4-5 stays exact when scaled.
    for s in [
        2f32.powi(66),
        2f32.powi(-80),
        2f32.powi(115),
        2f32.powi(-120),
    ] {
        let a = RoundedBox::<V>::ball(V::ZERO, s);
        let b = RoundedBox::<V>::ball(vec([3.0 * s, 0.0, 0.0]), s);
        assert!(!a.overlaps(&b), "{s}");
        close_f(a.distance(&b), f64::from(s), 1e-6 * f64::from(s));
        let c = RoundedBox::<V>::ball(vec([1.5 * s, 0.0, 0.0]), s);
        assert!(a.overlaps(&c), "{s}");
        let contact = contact_rounded(&a, &c).expect("overlapping");
        close_f(contact.depth, 0.5 * f64::from(s), 1e-6 * f64::from(s));
        assert_eq!(contact.normal, vec([1.0, 0.0, 0.0]));
        // A capsule and a box, 3-4-5 apart at scale s.
        let cap = RoundedBox::<V>::capsule(V::ZERO, 2, s, 5.0 * s);
        let block = rounded::<V>([4.0 * s, 5.0 * s, 0.0], [s, s, s], 0.0);
        assert!(cap.overlaps(&block), "{s}");
        let block = block.translated(vec([0.0, 1e-3 * s, 0.0]));
        assert!(!cap.overlaps(&block), "{s}");
        assert!(cap.contains_point(vec([3.0 * s, 4.0 * s, 0.0])));
        assert!(!cap.contains_point(vec([3.0 * s, 4.01 * s, 0.0])));
        close_f(
            cap.distance_to_point(vec([6.0 * s, 8.0 * s, 0.0])),
            5.0 * f64::from(s),
            1e-5 * f64::from(s),
        );
    }
    // Sweeps and rays at scales where the ball sweep's and ray's fourth powers overflow
    // or underflow (the rounded ones scale by a power of two first). A ball of radius s
    // at (5 s, s) moving by (-10 s, 0) meets one of radius s at the origin when
    // (5 - 10 u)² + 1 = 4, along (sqrt(3), 1) / 2.
    for s in [2f32.powi(36), 2f32.powi(-40), 2f32.powi(100)] {
        let a = RoundedBox::<V>::ball(V::ZERO, s);
        let b = RoundedBox::<V>::ball(vec([5.0 * s, s, 0.0]), s);
        let hit = sweep_rounded(&a, V::ZERO, &b, vec([-10.0 * s, 0.0, 0.0])).expect("a hit");
        let root3 = 3f64.sqrt();
        close_f(hit.u0, (5.0 - root3) / 10.0, 1e-6);
        close(hit.normal, [(root3 / 2.0) as f32, 0.5, 0.0], 1e-6);
        // A ray along x at height s / 2 enters the ball at x = -sqrt(3) s / 2.
        let r = ray::<V>([-5.0 * s, 0.5 * s, 0.0], [s, 0.0, 0.0]);
        let (t, n) = r
            .rounded_box_hit_with_normal_at(&a, 10.0)
            .expect("a ray hit");
        close_f(t, 5.0 - root3 / 2.0, 1e-5);
        close(n, [(-root3 / 2.0) as f32, 0.5, 0.0], 1e-5);
        // A ball of radius s reaching the face x = 0 of the box [0, s]: u0 = 1/2.
        let unit = RoundedBox::<V>::new(V::splat(0.5 * s), V::splat(0.5 * s), 0.0);
        let ball = RoundedBox::<V>::ball(vec([-3.0 * s, 0.5 * s, 0.5 * s]), s);
        let hit = sweep_rounded(&ball, vec([4.0 * s, 0.0, 0.0]), &unit, V::ZERO).expect("a hit");
        close_f(hit.u0, 0.5, 1e-6);
        assert_eq!(hit.normal, vec([1.0, 0.0, 0.0]));
        // Two capsules along y (radius s, half length s; their sum: half length 2 s,
        // radius 2 s), the second from (5 s, 3 s) moving by (-10 s, 0): its center passes
        // s above the sum's segment and meets the sum's cap around (0, 2 s) as the balls
        // above meet, at the same time, along the same normal. The smaller scales take
        // the sweep's unscaled path, 2^100 the scaled one; moved up by 2 s it misses (the
        // slab test of the box holding the sum decides that miss, before any scaling).
        let a = RoundedBox::<V>::capsule(V::ZERO, 1, s, s);
        let b = RoundedBox::<V>::capsule(vec([5.0 * s, 3.0 * s, 0.0]), 1, s, s);
        let hit = sweep_rounded(&a, V::ZERO, &b, vec([-10.0 * s, 0.0, 0.0])).expect("a hit");
        close_f(hit.u0, (5.0 - root3) / 10.0, 1e-6);
        close(hit.normal, [(root3 / 2.0) as f32, 0.5, 0.0], 1e-6);
        let above = b.translated(vec([0.0, 2.0 * s, 0.0]));
        assert_eq!(
            sweep_rounded(&a, V::ZERO, &above, vec([-10.0 * s, 0.0, 0.0])),
            None,
            "{s}"
        );
        // A miss inside that box, which only the walk over the sum's regions decides:
        // the path x + y = 5.8 s crosses the box's corner near (2 s, 4 s) and passes
        // 3.8 s / sqrt(2) (about 2.69 s) from the cap's center (0, 2 s), beyond its radius
        // 2 s. Along x + y = 4.8 s it passes 2.8 s / sqrt(2) (about 1.98 s) away and hits.
        // At the tiny scale the gap of 0.69 s is under the sweeps' absolute contact
        // tolerance of 1e-5, so that path counts as touching there.
        let diagonal = vec([-4.0 * s, 4.0 * s, 0.0]);
        let corner = RoundedBox::<V>::capsule(vec([4.0 * s, 1.8 * s, 0.0]), 1, s, s);
        let swept = sweep_rounded(&a, V::ZERO, &corner, diagonal);
        assert_eq!(swept.is_none(), 0.69 * s > 1e-5, "{s}: {swept:?}");
        let nearer = corner.translated(vec([0.0, -s, 0.0]));
        assert!(
            sweep_rounded(&a, V::ZERO, &nearer, diagonal).is_some(),
            "{s}"
        );
    }
    // Capsules whose relative position overflows f32 (centers 2^128 apart) are swept
    // scaled: the first closes at 1.5 * 2^127 per step on the second, and their sum
    // (radius 2^127) is reached when 2^128 - 1.5 * 2^127 u = 2^127, at u = 2/3, across +x.
    let s = 2f32.powi(127);
    let a = RoundedBox::<V>::capsule(vec([-s, 0.0, 0.0]), 1, s / 4.0, s / 2.0);
    let b = RoundedBox::<V>::capsule(vec([s, 0.0, 0.0]), 1, s / 4.0, s / 2.0);
    let hit = sweep_rounded(&a, vec([1.5 * s, 0.0, 0.0]), &b, V::ZERO).expect("a hit");
    close_f(hit.u0, 2.0 / 3.0, 1e-6);
    assert_eq!(hit.normal, vec([1.0, 0.0, 0.0]));

    // Two flat boxes a subnormal apart do not overlap (the gap squared is 0 in f32).
    let tiny = f32::MIN_POSITIVE / 4.0;
    let a = rounded::<V>([0.0; 3], [0.0, 1.0, 1.0], 0.0);
    let b = rounded::<V>([tiny, 0.0, 0.0], [0.0, 1.0, 1.0], 0.0);
    assert!(!a.overlaps(&b));
    assert_eq!(a.distance(&b), tiny);
    assert!(a.overlaps(&b.translated(vec([-tiny, 0.0, 0.0]))));
    // Nor two points, nor a point and a ball of subnormal radius just short of it.
    let (p, q) = (
        RoundedBox::<V>::ball(V::ZERO, 0.0),
        RoundedBox::<V>::ball(vec([tiny, 0.0, 0.0]), 0.0),
    );
    assert!(!p.overlaps(&q));
    assert!(p.overlaps(&RoundedBox::ball(q.center, tiny)));
    assert!(!p.overlaps(&RoundedBox::ball(q.center, tiny / 2.0)));
}

crate::kit::tests_2d_3d!(huge_and_tiny: huge_and_tiny_2d, huge_and_tiny_3d);

// ---------------------------------------------------------------------------------------
// Agreement with the box and ball functions
// ---------------------------------------------------------------------------------------

/// Whether every square met is a normal float: of the inputs, and of differences of two
/// of them summed over three axes (the rounded tests then square as the ball tests do;
/// outside, they scale, and the oracle judges them).
fn squares_normal(values: &[f32]) -> bool {
    values
        .iter()
        .all(|&x| x == 0.0 || (x * x).is_normal() && (16.0 * x * x).is_finite())
}

/// The rounded-box functions on boxes and balls against the box and ball functions, on
/// the same shapes: boxes built from the same center and half extents, balls from the
/// same center and radius (each shape given as center, half extents, radius). `normal`
/// says the case stays where squares are normal floats, `quartic` where fourth powers are
/// (see the module documentation of `rounded`); the box-only answers agree everywhere.
#[allow(clippy::too_many_arguments)]
fn agree<V: Vector>(
    a: ([f32; 3], [f32; 3], f32),
    b: ([f32; 3], [f32; 3], f32),
    p: [f32; 3],
    da: [f32; 3],
    db: [f32; 3],
    max_t: f32,
    normal: bool,
    quartic: bool,
) {
    let (c1, h1, r1) = (vec::<V>(a.0), vec::<V>(a.1), a.2);
    let (c2, h2, r2) = (vec::<V>(b.0), vec::<V>(b.1), b.2);
    let (p, da, db) = (vec::<V>(p), vec::<V>(da), vec::<V>(db));
    let (box1, box2) = (
        BoundingBox::from_center_half_extents(c1, h1),
        BoundingBox::from_center_half_extents(c2, h2),
    );
    let (rbox1, rbox2) = (RoundedBox::new(c1, h1, 0.0), RoundedBox::new(c2, h2, 0.0));
    let (ball1, ball2) = (Ball::new(c1, r1), Ball::new(c2, r2));
    let (rball1, rball2) = (RoundedBox::from(ball1), RoundedBox::from(ball2));
    let (sbox1, sbox2, sball1, sball2) = (
        Shape::Box(box1),
        Shape::Box(box2),
        Shape::Ball(ball1),
        Shape::Ball(ball2),
    );
    let ctx = format!("{c1:?} {h1:?} {r1} / {c2:?} {h2:?} {r2}");

    // Two boxes: everything, at every scale.
    assert_eq!(rbox1.inner_box(), box1);
    assert_eq!(rbox1.overlaps(&rbox2), box1.overlaps(&box2), "{ctx}");
    assert_eq!(rbox1.contains_point(p), box1.contains_point(p), "{ctx}");
    assert_eq!(rbox1.closest_point(p), sbox1.closest_point(p), "{ctx}");
    assert_eq!(
        contact_rounded(&rbox1, &rbox2),
        contact_boxes(&box1, &box2),
        "{ctx}"
    );
    assert_eq!(
        sweep_rounded(&rbox1, da, &rbox2, db),
        sweep_boxes(&box1, da, &box2, db),
        "{ctx}"
    );
    let r = Ray::new(c1, da);
    assert_eq!(
        r.rounded_box_hit_with_normal_at(&rbox2, max_t),
        r.box_hit_with_normal_at(&box2, max_t),
        "{ctx}"
    );
    assert_eq!(
        rounded_cast_at(&rbox1, da, max_t, &rbox2),
        box_cast_at(&box1, da, max_t, &box2),
        "{ctx}"
    );
    if !normal {
        return;
    }
    assert_eq!(rbox1.distance(&rbox2), sbox1.distance(&sbox2), "{ctx}");
    assert_eq!(
        rbox1.distance_to_point(p),
        sbox1.distance_to_point(p),
        "{ctx}"
    );
    // Balls.
    assert_eq!(rball1.overlaps(&rball2), ball1.overlaps(&ball2), "{ctx}");
    assert_eq!(rball1.contains_point(p), ball1.contains_point(p), "{ctx}");
    assert_eq!(rball1.distance(&rball2), sball1.distance(&sball2), "{ctx}");
    assert_eq!(rball1.closest_point(p), sball1.closest_point(p), "{ctx}");
    assert_eq!(
        rball1.distance_to_point(p),
        sball1.distance_to_point(p),
        "{ctx}"
    );
    assert_eq!(
        contact_rounded(&rball1, &rball2),
        contact_balls(&ball1, &ball2),
        "{ctx}"
    );
    // A ball and a box, both ways.
    assert_eq!(rball1.overlaps(&rbox2), ball1.overlaps_box(&box2), "{ctx}");
    assert_eq!(rbox2.overlaps(&rball1), ball1.overlaps_box(&box2), "{ctx}");
    assert_eq!(rball1.distance(&rbox2), sball1.distance(&sbox2), "{ctx}");
    assert_eq!(rbox2.distance(&rball1), sbox2.distance(&sball1), "{ctx}");
    assert_eq!(
        contact_rounded(&rbox2, &rball1),
        contact_box_ball(&box2, &ball1),
        "{ctx}"
    );
    let got = contact_rounded(&rball1, &rbox2);
    // A point is a ball here (contact_balls measures the point from the first ball's
    // center; contact_ball_box takes the box's point).
    let expected = if h2 == V::ZERO {
        contact_balls(&ball1, &Ball::new(c2, 0.0))
    } else {
        contact_ball_box(&ball1, &box2)
    };
    match (got, expected) {
        (Some(g), Some(e)) if g != e => {
            // Only where two ways out tie: contact_ball_box reverses contact_box_ball's
            // positive axis, contact_rounded keeps the positive one.
            assert_eq!(
                (g.depth, g.point, g.normal),
                (e.depth, e.point, -e.normal),
                "{ctx}"
            );
            let (axis, sign) = unit_axis(g.normal).expect("a face normal");
            assert_eq!(sign, 1.0, "{ctx}");
            let c = ball1.center.axis(axis);
            assert_eq!(
                box2.max.axis(axis) - c,
                c - box2.min.axis(axis),
                "{ctx}: no tie"
            );
        }
        _ => assert_eq!(got, expected, "{ctx}"),
    }
    // The sweeps and rays of balls scale their input where fourth powers of lengths would
    // overflow or underflow; a point (a ball of radius 0, a box of size 0) is a box first,
    // then a ball.
    if !quartic {
        return;
    }
    let (point1, point2) = (
        BoundingBox::from_center_half_extents(c1, V::ZERO),
        BoundingBox::from_center_half_extents(c2, V::ZERO),
    );
    let flip = |h: SweepInterval<V>| SweepInterval {
        normal: -h.normal,
        ..h
    };
    let expected = if r1 == 0.0 && r2 == 0.0 {
        sweep_boxes(&point1, da, &point2, db)
    } else {
        sweep_balls(&ball1, da, &ball2, db)
    };
    assert_eq!(sweep_rounded(&rball1, da, &rball2, db), expected, "{ctx}");
    let expected = if r1 == 0.0 {
        sweep_boxes(&point1, da, &box2, db)
    } else if h2 == V::ZERO {
        sweep_balls(&ball1, da, &Ball::new(c2, 0.0), db)
    } else {
        sweep_ball_box(&ball1, da, &box2, db)
    };
    assert_eq!(sweep_rounded(&rball1, da, &rbox2, db), expected, "{ctx}");
    let expected = if r2 == 0.0 {
        sweep_boxes(&box1, da, &point2, db)
    } else if h1 == V::ZERO {
        sweep_balls(&Ball::new(c1, 0.0), da, &ball2, db)
    } else {
        sweep_ball_box(&ball2, db, &box1, da).map(flip)
    };
    assert_eq!(sweep_rounded(&rbox1, da, &rball2, db), expected, "{ctx}");
    let expected = if r2 == 0.0 {
        r.box_hit_at(&point2, max_t)
    } else {
        r.ball_hit_at(&ball2, max_t)
    };
    assert_eq!(r.rounded_box_hit_at(&rball2, max_t), expected, "{ctx}");
}

fn agree_arrays(
    a: ([f32; 3], [f32; 3], f32),
    b: ([f32; 3], [f32; 3], f32),
    p: [f32; 3],
    da: [f32; 3],
    db: [f32; 3],
    max_t: f32,
    normal: bool,
) {
    let largest = [a.0, a.1, b.0, b.1, p, da, db]
        .iter()
        .flatten()
        .chain(&[a.2, b.2])
        .fold(0.0f32, |m, x| m.max(x.abs()));
    let quartic = normal && (largest == 0.0 || (2f32.powi(-28)..2f32.powi(28)).contains(&largest));
    agree::<Vec2>(a, b, p, da, db, max_t, normal, quartic);
    agree::<Vec3>(a, b, p, da, db, max_t, normal, quartic);
}

/// Ties and touching, where contact_ball_box and contact_rounded part ways.
#[test]
fn agreement_hand_cases() {
    // A ball centered in a box: every axis ties.
    agree_arrays(
        ([0.0; 3], [0.0; 3], 0.5),
        ([0.0; 3], [1.0; 3], 0.5),
        [0.0; 3],
        [1.0; 3],
        [0.0; 3],
        2.0,
        true,
    );
    let g = contact_rounded(
        &RoundedBox::ball(Vec3::ZERO, 0.5),
        &rounded([0.0; 3], [1.0; 3], 0.0),
    );
    let e = contact_ball_box(&Ball::new(Vec3::ZERO, 0.5), &bbox([-1.0; 3], [1.0; 3]));
    assert_eq!(g.map(|c| c.normal), Some(Vec3::X));
    assert_eq!(e.map(|c| c.normal), Some(-Vec3::X));
    // 3-4-5 touching, coincident centers, a point inside a box.
    agree_arrays(
        ([0.0; 3], [0.0; 3], 2.0),
        ([3.0, 4.0, 0.0], [0.0; 3], 3.0),
        [3.0, 4.0, 0.0],
        [1.0; 3],
        [-1.0; 3],
        1.0,
        true,
    );
    agree_arrays(
        ([1.0; 3], [1.0; 3], 1.0),
        ([1.0; 3], [1.0; 3], 1.0),
        [1.0; 3],
        [0.0; 3],
        [0.0; 3],
        1.0,
        true,
    );
    agree_arrays(
        ([0.5; 3], [0.0; 3], 0.0),
        ([0.0; 3], [1.0; 3], 0.0),
        [2.0; 3],
        [4.0, 0.0, 0.0],
        [0.0; 3],
        1.0,
        true,
    );
}

pub(crate) fn sized(lim: f32) -> impl Strategy<Value = [f32; 3]> {
    prop::array::uniform3(prop_oneof![1 => Just(0.0f32), 3 => 0.0f32..lim])
}

pub(crate) fn grid_half() -> impl Strategy<Value = [f32; 3]> {
    prop::array::uniform3(
        prop_oneof![1 => Just(0.0f32), 3 => (1i32..=6).prop_map(|k| k as f32 / 2.0)],
    )
}

pub(crate) fn scale_pow2() -> impl Strategy<Value = f32> {
    prop_oneof![
        (-120i32..=-60).prop_map(|e| 2f32.powi(e)),
        (60i32..=100).prop_map(|e| 2f32.powi(e)),
        (-20i32..=20).prop_map(|e| 2f32.powi(e)),
    ]
}

proptest! {
    #![proptest_config(rounded_config())]

    #[test]
    fn agreement_float(
        c1 in prop::array::uniform3(-6.0f32..6.0), h1 in sized(3.0), r1 in float_radius(),
        c2 in prop::array::uniform3(-6.0f32..6.0), h2 in sized(3.0), r2 in float_radius(),
        p in prop::array::uniform3(-8.0f32..8.0), da in float_disp(), db in float_disp(),
        max_t in float_max_t(),
    ) {
        agree_arrays((c1, h1, r1), (c2, h2, r2), p, da, db, max_t, true);
    }

    #[test]
    fn agreement_grid(
        c1 in grid3(12), h1 in grid_half(), r1 in grid_radius(),
        c2 in grid3(12), h2 in grid_half(), r2 in grid_radius(),
        p in grid3(16), da in prop::array::uniform3(pow2_or_zero()),
        db in prop::array::uniform3(pow2_or_zero()), max_t in grid_max_t(),
    ) {
        agree_arrays((c1, h1, r1), (c2, h2, r2), p, da, db, max_t, true);
    }

    /// Scaled by a power of two (exact): huge, tiny and in between. The box answers agree
    /// at every scale, the ball ones where the squares stay normal floats.
    #[test]
    fn agreement_scaled(
        c1 in prop::array::uniform3(-6.0f32..6.0), h1 in sized(3.0), r1 in float_radius(),
        c2 in prop::array::uniform3(-6.0f32..6.0), h2 in sized(3.0), r2 in float_radius(),
        p in prop::array::uniform3(-8.0f32..8.0), da in float_disp(), db in float_disp(),
        max_t in float_max_t(), s in scale_pow2(),
    ) {
        let k = |a: [f32; 3]| a.map(|x| x * s);
        let all: Vec<f32> = [c1, h1, c2, h2, p, da, db].iter().flatten().chain(&[r1, r2]).map(|x| x * s).collect();
        let normal = squares_normal(&all) && s >= 2f32.powi(-20);
        agree_arrays((k(c1), k(h1), r1 * s), (k(c2), k(h2), r2 * s), k(p), k(da), k(db), max_t, normal);
    }
}

/// [`config`], with room for the cases too close to touching to judge (under a tenth of
/// them here) when `PROPTEST_CASES` asks for many.
pub(crate) fn rounded_config() -> ProptestConfig {
    let base = config();
    ProptestConfig {
        max_global_rejects: base.max_global_rejects.max(base.cases / 4),
        ..base
    }
}

/// Half the cases of [`rounded_config`]: each overlapping case searches hundreds of
/// directions.
pub(crate) fn heavy_config() -> ProptestConfig {
    let base = rounded_config();
    ProptestConfig {
        cases: base.cases.div_ceil(2),
        ..base
    }
}
