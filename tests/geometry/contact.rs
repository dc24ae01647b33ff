//! Contacts (minimum push-out) against hand-computed cases and a brute-force oracle, in
//! 2D and 3D.
//!
//! The oracle never calls the crate: it tests overlap from the definitions in `f64` (a box
//! is a product of intervals, a ball the points within the radius of its center) and finds
//! the shortest separating translation of the second shape by search: for many directions
//! (a fine grid of the circle, or a Fibonacci lattice of the sphere) the distance along it
//! at which the shapes stop overlapping, by bisection (the set of overlapping translations
//! is convex and holds 0, so along a direction it is one interval); then a local search
//! around the best direction. Its minimum is the depth.

use crate::kit::rng;

use bevy_aabb_tree::geometry::{
    Contact, Shape, contact_ball_box, contact_balls, contact_box_ball, contact_boxes,
};
use bevy_aabb_tree::{Ball, BoundingBox, Vector};
use glam::{Vec2, Vec3};

use super::oracle::{ball_shape as ball, box_shape as bbox, vec};
use rng::Rng;

// ---------------------------------------------------------------------------------------
// The oracle
// ---------------------------------------------------------------------------------------

/// A shape in `f64`, components past the dimension zero.
#[derive(Clone, Copy, Debug)]
enum O {
    Box([f64; 3], [f64; 3]),
    Ball([f64; 3], f64),
}

fn to_o<V: Vector>(s: &Shape<V>) -> O {
    let f = |v: V| {
        let v = v.extend_to_3d();
        [v.x as f64, v.y as f64, v.z as f64]
    };
    match s {
        Shape::Box(b) => O::Box(f(b.min), f(b.max)),
        Shape::Ball(b) => O::Ball(f(b.center), b.radius as f64),
        Shape::Rounded(_) => unreachable!("boxes and balls only"),
    }
}

/// Squared distance from `p` to the box (per axis, how far outside its interval).
fn box_dist2(min: [f64; 3], max: [f64; 3], p: [f64; 3], dim: usize) -> f64 {
    (0..dim)
        .map(|i| {
            let out = if p[i] < min[i] {
                min[i] - p[i]
            } else if p[i] > max[i] {
                p[i] - max[i]
            } else {
                0.0
            };
            out * out
        })
        .sum()
}

/// Whether `a` and `b` moved by `t` overlap (inclusive).
fn o_overlaps(a: O, b: O, t: [f64; 3], dim: usize) -> bool {
    let add = |p: [f64; 3]| [p[0] + t[0], p[1] + t[1], p[2] + t[2]];
    match (a, b) {
        (O::Box(amin, amax), O::Box(bmin, bmax)) => {
            let (bmin, bmax) = (add(bmin), add(bmax));
            (0..dim).all(|i| amin[i] <= bmax[i] && bmin[i] <= amax[i])
        }
        (O::Ball(ca, ra), O::Ball(cb, rb)) => {
            let cb = add(cb);
            let d2: f64 = (0..dim).map(|i| (cb[i] - ca[i]).powi(2)).sum();
            d2 <= (ra + rb) * (ra + rb)
        }
        (O::Box(min, max), O::Ball(c, r)) => box_dist2(min, max, add(c), dim) <= r * r,
        (O::Ball(c, r), O::Box(min, max)) => {
            // Moving the box by t is moving the ball by -t.
            let c = [c[0] - t[0], c[1] - t[1], c[2] - t[2]];
            box_dist2(min, max, c, dim) <= r * r
        }
    }
}

/// The distance along unit `u` at which `b` stops overlapping `a`.
fn exit_along(a: O, b: O, u: [f64; 3], dim: usize, far: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, far);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if o_overlaps(a, b, [u[0] * mid, u[1] * mid, u[2] * mid], dim) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

fn directions(dim: usize) -> Vec<[f64; 3]> {
    super::rounded_oracle::lattice(dim, 2048, 0.37, 4000)
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// The oracle's answer: the shortest separating distance, its direction, and the
/// shortest among directions more than `0.5` rad away from it (how unique the minimum is).
fn oracle(a: O, b: O, dim: usize) -> (f64, [f64; 3], f64) {
    let far = 20.0;
    let exit = |u: &[f64; 3]| exit_along(a, b, *u, dim, far);
    super::rounded_oracle::min_over_directions(dim, &directions(dim), exit, 1e-7)
}

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------

/// Checks `contact(a, b)` against the oracle: depth, the normal as a separating direction
/// of that length, the normal against the oracle's where the minimum is unique, and the
/// point in both shapes.
fn check<V: Vector>(a: &Shape<V>, b: &Shape<V>) {
    let dim = V::DIM;
    let (oa, ob) = (to_o(a), to_o(b));
    let overlapping = o_overlaps(oa, ob, [0.0; 3], dim);
    let c = a.contact(b);
    let Some(c) = c else {
        assert!(!overlapping, "no contact for overlapping {a:?} {b:?}");
        return;
    };
    assert!(overlapping, "contact {c:?} for apart {a:?} {b:?}");
    let n = c.normal.extend_to_3d();
    let n64 = [n.x as f64, n.y as f64, n.z as f64];
    assert!(
        (dot(n64, n64).sqrt() - 1.0).abs() < 1e-5,
        "normal not unit: {c:?}"
    );
    assert!(c.depth >= 0.0 && c.depth.is_finite() && c.point.is_finite());
    let (depth, u, runner_up) = oracle(oa, ob, dim);
    let tol = 2e-4 * (1.0 + depth);
    assert!(
        (c.depth as f64 - depth).abs() <= tol,
        "depth {} vs oracle {depth} for {a:?} {b:?}",
        c.depth
    );
    // Moving b by a bit more than the depth along the normal separates; by a bit less it
    // still overlaps.
    let eps = 1e-4;
    let s = c.depth as f64 + eps;
    assert!(
        !o_overlaps(oa, ob, [n64[0] * s, n64[1] * s, n64[2] * s], dim),
        "normal * depth does not separate: {c:?} for {a:?} {b:?}"
    );
    if c.depth as f64 > eps {
        let s = c.depth as f64 - eps;
        assert!(
            o_overlaps(oa, ob, [n64[0] * s, n64[1] * s, n64[2] * s], dim),
            "a shorter push separates: {c:?} for {a:?} {b:?}"
        );
    }
    if runner_up > depth + 0.05 {
        assert!(
            dot(n64, u) > 0.05f64.cos(),
            "normal {n64:?} vs oracle {u:?} for {a:?} {b:?}"
        );
    }
    // The point is in both shapes (within rounding).
    let p = c.point.extend_to_3d();
    let p = O::Ball([p.x as f64, p.y as f64, p.z as f64], 1e-4);
    assert!(o_overlaps(oa, p, [0.0; 3], dim), "point outside a: {c:?}");
    assert!(o_overlaps(ob, p, [0.0; 3], dim), "point outside b: {c:?}");
}

fn random_shape<V: Vector>(rng: &mut Rng) -> Shape<V> {
    let c = [
        rng.range(-1.5, 1.5),
        rng.range(-1.5, 1.5),
        rng.range(-1.5, 1.5),
    ];
    if rng.chance(0.5) {
        let size = |rng: &mut Rng| {
            if rng.chance(0.1) {
                0.0
            } else {
                rng.range(0.0, 2.0)
            }
        };
        let h = [size(rng), size(rng), size(rng)];
        bbox(
            [c[0] - h[0], c[1] - h[1], c[2] - h[2]],
            [c[0] + h[0], c[1] + h[1], c[2] + h[2]],
        )
    } else {
        let r = if rng.chance(0.1) {
            0.0
        } else {
            rng.range(0.0, 1.5)
        };
        ball(c, r)
    }
}

fn random_cases<V: Vector>(seed: u64, cases: usize) {
    let mut rng = Rng::new(seed);
    let mut checked = 0;
    while checked < cases {
        let a = random_shape::<V>(&mut rng);
        let mut b = random_shape::<V>(&mut rng);
        if rng.chance(0.1) {
            // Coincident centers.
            let ca = a.bounding_box().center();
            let cb = b.bounding_box().center();
            b = b.translated(ca - cb);
        }
        if a.overlaps(&b) {
            check(&a, &b);
            checked += 1;
        } else {
            assert_eq!(a.contact(&b), None);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

crate::kit::tests_2d_3d!(
    random_cases:
    random_pairs_match_the_oracle_2d(1, 300),
    random_pairs_match_the_oracle_3d(2, 120)
);

fn hand_cases<V: Vector>() {
    let x = vec::<V>([1.0, 0.0, 0.0]);
    let y = vec::<V>([0.0, 1.0, 0.0]);
    // Boxes: b overlaps a's right face by 0.5.
    let a = BoundingBox::from_min_max(vec::<V>([0.0; 3]), vec([2.0, 2.0, 2.0]));
    let b = BoundingBox::from_min_max(vec::<V>([1.5, 0.5, 0.5]), vec([3.5, 1.5, 1.5]));
    let c = contact_boxes(&a, &b).unwrap();
    assert_eq!((c.normal, c.depth), (x, 0.5));
    assert_eq!(c.point, vec([1.75, 1.0, 1.0]));
    // And seen from b.
    assert_eq!(contact_boxes(&b, &a).unwrap().normal, -x);
    // b inside a, nearer the top: out through the top, by the distance to it plus b's
    // height.
    let b = BoundingBox::from_min_max(vec::<V>([0.8, 1.5, 0.8]), vec([1.2, 1.7, 1.2]));
    let c = contact_boxes(&a, &b).unwrap();
    assert_eq!(c.normal, y);
    assert!((c.depth - 0.5).abs() < 1e-6);
    // Coincident equal boxes: +x, by the full width.
    let c = contact_boxes(&a, &a).unwrap();
    assert_eq!((c.normal, c.depth), (x, 2.0));
    // Touching faces: depth 0.
    let b = BoundingBox::from_min_max(vec::<V>([2.0, 0.0, 0.0]), vec([3.0, 1.0, 1.0]));
    let c = contact_boxes(&a, &b).unwrap();
    assert_eq!((c.normal, c.depth), (x, 0.0));
    // Apart.
    let b = b.translated(x * 0.001);
    assert_eq!(contact_boxes(&a, &b), None);
    // Zero-size boxes at the same point.
    let p = BoundingBox::from_min_max(vec::<V>([1.0; 3]), vec([1.0; 3]));
    let c = contact_boxes(&p, &p).unwrap();
    assert_eq!((c.normal, c.depth, c.point), (x, 0.0, vec([1.0; 3])));

    // Balls: a 3-4-5 triangle.
    let a = Ball::new(vec::<V>([0.0; 3]), 3.0);
    let b = Ball::new(vec::<V>([3.0, 4.0, 0.0]), 3.0);
    let c = contact_balls(&a, &b).unwrap();
    assert!((c.depth - 1.0).abs() < 1e-6);
    assert!((c.normal - vec([0.6, 0.8, 0.0])).abs().max_element() < 1e-6);
    // Midway between b's surface (distance 2 along the normal) and a's (distance 3).
    assert!((c.point - vec([1.5, 2.0, 0.0])).abs().max_element() < 1e-6);
    // Coincident: +x by the sum of the radii.
    let c = contact_balls(&a, &a).unwrap();
    assert_eq!((c.normal, c.depth), (x, 6.0));
    // Points (radius 0) at the same place: touching.
    let p = Ball::new(vec::<V>([1.0; 3]), 0.0);
    assert_eq!(contact_balls(&p, &p).unwrap().depth, 0.0);
    // Touching.
    let b = Ball::new(vec::<V>([5.0, 0.0, 0.0]), 2.0);
    let c = contact_balls(&a, &b).unwrap();
    assert_eq!((c.normal, c.depth), (x, 0.0));
    assert_eq!(c.point, vec([3.0, 0.0, 0.0]));

    // Box and ball: center outside, beside the right face.
    let bx = BoundingBox::from_min_max(vec::<V>([0.0; 3]), vec([2.0, 2.0, 2.0]));
    let bl = Ball::new(vec::<V>([2.5, 1.0, 1.0]), 1.0);
    let c = contact_box_ball(&bx, &bl).unwrap();
    assert_eq!((c.normal, c.depth), (x, 0.5));
    assert_eq!(c.point, vec([2.0, 1.0, 1.0]));
    let c = contact_ball_box(&bl, &bx).unwrap();
    assert_eq!((c.normal, c.depth), (-x, 0.5));
    // Center outside near the corner (2, 2): along the diagonal.
    let bl = Ball::new(vec::<V>([2.3, 2.4, 1.0]), 1.0);
    let c = contact_box_ball(&bx, &bl).unwrap();
    assert!((c.depth - 0.5).abs() < 1e-6);
    assert!((c.normal - vec([0.6, 0.8, 0.0])).abs().max_element() < 1e-6);
    // Center inside, nearest the top face (0.2 away): out through it by 0.2 + radius.
    let bl = Ball::new(vec::<V>([1.0, 1.8, 1.0]), 0.5);
    let c = contact_box_ball(&bx, &bl).unwrap();
    assert_eq!(c.normal, y);
    assert!((c.depth - 0.7).abs() < 1e-6);
    // Center at the box's center: +x, by half the width plus the radius.
    let bl = Ball::new(vec::<V>([1.0; 3]), 0.5);
    let c = contact_box_ball(&bx, &bl).unwrap();
    assert_eq!((c.normal, c.depth), (x, 1.5));
    // Touching the right face: depth 0.
    let bl = Ball::new(vec::<V>([3.0, 1.0, 1.0]), 1.0);
    let c = contact_box_ball(&bx, &bl).unwrap();
    assert_eq!((c.normal, c.depth), (x, 0.0));
    // Invalid input: no contact, no panic.
    let nan = Ball::new(vec::<V>([f32::NAN; 3]), 1.0);
    assert_eq!(contact_box_ball(&bx, &nan), None);
    assert_eq!(contact_balls(&nan, &nan), None);
    let inverted = BoundingBox::from_min_max(vec::<V>([1.0; 3]), vec([0.0; 3]));
    assert_eq!(contact_boxes(&bx, &inverted), None);
}

#[test]
fn hand_computed_contacts() {
    hand_cases::<Vec2>();
    hand_cases::<Vec3>();
}

/// Every pair's contact, both ways round, is the same contact flipped.
fn symmetry<V: Vector>(seed: u64) {
    let mut rng = Rng::new(seed);
    for _ in 0..2000 {
        let a = random_shape::<V>(&mut rng);
        let b = random_shape::<V>(&mut rng);
        let (ab, ba) = (a.contact(&b), b.contact(&a));
        assert_eq!(ab.is_some(), ba.is_some());
        if let (Some(ab), Some(ba)) = (ab, ba) {
            let ab: Contact<V> = ab;
            assert!((ab.depth - ba.depth).abs() <= 1e-5 * (1.0 + ab.depth));
            // Normals agree reversed except where the minimum is not unique.
            if ab.normal != -ba.normal {
                check(&a, &b);
                check(&b, &a);
            }
        }
    }
}

#[test]
fn contacts_are_symmetric() {
    symmetry::<Vec2>(3);
    symmetry::<Vec3>(4);
}
