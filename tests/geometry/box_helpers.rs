//! Box helpers: merge, growth, sweeps, closest points, area, validity.

use super::*;

// ---------------------------------------------------------------------------------------
// Box helpers
// ---------------------------------------------------------------------------------------

pub(crate) fn check_box_helpers<V: Vector>(
    a: &BoundingBox<V>,
    b: &BoundingBox<V>,
    p: V,
    d: V,
    amount: f32,
) {
    let (ia, ib, fp, fd) = (Iv::of(a), Iv::of(b), f64s(p), f64s(d));
    let n = V::DIM;
    assert!(a.is_valid());
    assert!(!BoundingBox::from_min_max(a.max + V::ONE, a.min).is_valid());
    let size = f64s(a.size());
    let half = f64s(a.half_extents());
    let center = f64s(a.center());
    for i in 0..n {
        assert_eq!(size[i], ia.hi[i] - ia.lo[i]);
        assert_eq!(half[i], (ia.hi[i] - ia.lo[i]) / 2.0);
        assert_eq!(center[i], (ia.hi[i] + ia.lo[i]) / 2.0);
    }
    let area = if n == 2 {
        size[0] + size[1]
    } else {
        size[0] * size[1] + size[1] * size[2] + size[2] * size[0]
    };
    assert_eq!(f64::from(a.area()), area);
    let contains = (0..n).all(|i| ia.lo[i] <= ib.lo[i] && ib.hi[i] <= ia.hi[i]);
    assert_eq!(a.contains(b), contains, "{a:?}.contains({b:?})");
    assert_eq!(f64s(a.closest_point(p)), ia.closest(&fp));
    assert_eq!(f64::from(a.distance_squared_to_point(p)), ia.dist2(&fp));
    let merged = Iv::of(&a.merged(b));
    let swept = Iv::of(&a.swept(d));
    let grown = Iv::of(&a.grown(amount));
    let moved = Iv::of(&a.translated(d));
    let amount64 = f64::from(amount);
    for (i, di) in fd.into_iter().enumerate().take(n) {
        assert_eq!(
            (merged.lo[i], merged.hi[i]),
            (ia.lo[i].min(ib.lo[i]), ia.hi[i].max(ib.hi[i]))
        );
        let (lo_end, hi_end) = (ia.lo[i] + di, ia.hi[i] + di);
        assert_eq!(
            (swept.lo[i], swept.hi[i]),
            (ia.lo[i].min(lo_end), ia.hi[i].max(hi_end))
        );
        assert_eq!(
            (grown.lo[i], grown.hi[i]),
            (ia.lo[i] - amount64, ia.hi[i] + amount64)
        );
        assert_eq!((moved.lo[i], moved.hi[i]), (lo_end, hi_end));
    }
    let mut m = *a;
    m.merge(b);
    assert_eq!(m, a.merged(b));
    let mut g = *a;
    g.grow(amount);
    assert_eq!(g, a.grown(amount));
    let mut s = *a;
    s.sweep(d);
    assert_eq!(s, a.swept(d));
    let from = BoundingBox::from_points([a.min, b.max, p, b.min, a.max]);
    for (i, pi) in fp.into_iter().enumerate().take(n) {
        let lo = [ia.lo[i], ib.lo[i], pi]
            .into_iter()
            .fold(f64::INFINITY, f64::min);
        let hi = [ia.hi[i], ib.hi[i], pi]
            .into_iter()
            .fold(f64::NEG_INFINITY, f64::max);
        assert_eq!((f64s(from.min)[i], f64s(from.max)[i]), (lo, hi));
    }
    assert!(!BoundingBox::<V>::from_points([]).is_valid());
    assert_eq!(
        BoundingBox::<V>::default(),
        BoundingBox::from_min_max(V::ZERO, V::ZERO)
    );
}

pub(crate) fn check_ball_and_ray_helpers<V: Vector>(c: V, r: f32, o: V, d: V, t: f32) {
    let b = Ball::new(c, r);
    assert!(b.is_valid());
    assert!(!Ball::new(c, -1.0).is_valid() && !Ball::new(c, f32::NAN).is_valid());
    let bb = Iv::of(&b.bounding_box());
    let fc = f64s(c);
    for (i, ci) in fc.into_iter().enumerate().take(V::DIM) {
        assert_eq!((bb.lo[i], bb.hi[i]), (ci - f64::from(r), ci + f64::from(r)));
    }
    assert_eq!(b.translated(d), Ball::new(c + d, r));
    let ray = Ray::new(o, d);
    assert!(ray.is_valid());
    assert!(!Ray::new(o, V::splat(f32::INFINITY)).is_valid());
    let p = f64s(ray.at(t));
    let expected = along(&f64s(o), &f64s(d), f64::from(t));
    for i in 0..V::DIM {
        assert_eq!(p[i], expected[i]);
    }
}

proptest! {
    #![proptest_config(config())]

    /// The small box, ball and ray helpers, on the grid (everything exact).
    #[test]
    fn helpers_exact(
        a in grid_box(), b in grid_box(), p in grid3(16), d in grid3(8), amount in grid(4),
        r in grid_radius(), t in grid(8),
    ) {
        check_box_helpers::<Vec2>(&bbox(a.0, a.1), &bbox(b.0, b.1), vec(p), vec(d), amount);
        check_box_helpers::<Vec3>(&bbox(a.0, a.1), &bbox(b.0, b.1), vec(p), vec(d), amount);
        check_ball_and_ray_helpers::<Vec2>(vec(a.0), r, vec(p), vec(d), t);
        check_ball_and_ray_helpers::<Vec3>(vec(a.0), r, vec(p), vec(d), t);
    }
}
