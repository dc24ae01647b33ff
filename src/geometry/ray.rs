//! Rays and the ray tests.

use glam::{Vec4, Vec4Swizzles};

use crate::Vector;
use crate::geometry::{Ball, BoundingBox};

/// A ray: the points `origin + t * direction` for `t >= 0`.
///
/// `direction` need not be unit length: every `t` returned by the `*_at` methods is in
/// units of `direction` (with a unit direction it is a distance). A zero direction is
/// allowed and only "hits" what contains the origin.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "plugin", derive(bevy::reflect::Reflect))]
pub struct Ray<V: Vector> {
    /// Where the ray starts.
    pub origin: V,
    /// Where it goes, per unit of `t`.
    pub direction: V,
}

impl<V: Vector> Ray<V> {
    /// The ray from `origin` along `direction`.
    #[inline]
    pub fn new(origin: V, direction: V) -> Self {
        Self { origin, direction }
    }

    /// The point at parameter `t`.
    #[inline]
    pub fn at(&self, t: f32) -> V {
        self.origin + self.direction * t
    }

    /// Finite origin and direction.
    #[inline]
    pub fn is_valid(&self) -> bool {
        self.origin.is_finite() && self.direction.is_finite()
    }

    /// The first `t` in `[0, max_t]` at which the ray is inside `aabb` (0 when the origin is
    /// inside), or `None`.
    ///
    /// Slab test. For each axis the ray is inside the slab `min..=max` for an interval of
    /// `t`; the ray meets the box where all these intervals overlap. Cases per axis:
    /// - direction component zero, or so small (subnormal) that `1 / d` overflows: the ray
    ///   is parallel to the slab; it is inside for every `t` when the origin's coordinate
    ///   lies in the slab (faces included), else never;
    /// - otherwise the slab is entered and left at `(min - o) / d` and `(max - o) / d`, in
    ///   either order depending on the sign of `d`.
    ///
    /// Computing the parallel case by its own branch avoids `0 * inf = NaN` when the
    /// origin lies exactly on a face. Treating a subnormal `d` as zero changes only hits at
    /// parameters of `1e31` and beyond (for coordinates of order 1), and keeps the results
    /// bit-identical to the tree's traversals, which multiply by the same reciprocals. A
    /// negative or NaN `max_t` leaves no `t` to hit at (checked first: with a zero
    /// direction no slab would clip the range).
    #[inline]
    pub fn box_hit_at(&self, aabb: &BoundingBox<V>, max_t: f32) -> Option<f32> {
        self.box_hit_with_normal_at(aabb, max_t).map(|(t, _)| t)
    }

    /// Like [`Self::box_hit_at`], with the outward unit normal of the face the ray enters
    /// through (zero when the origin is inside the box).
    #[inline]
    pub fn box_hit_with_normal_at(&self, aabb: &BoundingBox<V>, max_t: f32) -> Option<(f32, V)> {
        if max_t.is_nan() || max_t < 0.0 {
            return None;
        }
        let mut t_enter = 0.0f32;
        let mut t_exit = max_t;
        let mut normal = V::ZERO;
        for axis in 0..V::DIM {
            let o = self.origin.axis(axis);
            let d = self.direction.axis(axis);
            let lo = aabb.min.axis(axis);
            let hi = aabb.max.axis(axis);
            let inv = 1.0 / d;
            if !inv.is_finite() {
                if o < lo || o > hi {
                    return None;
                }
            } else {
                let t1 = (lo - o) * inv;
                let t2 = (hi - o) * inv;
                let (near, far) = if t1 <= t2 { (t1, t2) } else { (t2, t1) };
                if near > t_enter {
                    t_enter = near;
                    normal = V::ZERO;
                    // Moving towards + the ray enters through the min face.
                    normal.set_axis(axis, if d > 0.0 { -1.0 } else { 1.0 });
                }
                t_exit = t_exit.min(far);
                if t_enter > t_exit {
                    return None;
                }
            }
        }
        Some((t_enter, normal))
    }

    /// The first `t` in `[0, max_t]` at which the ray is inside `ball` (0 when the origin is
    /// inside), or `None`.
    ///
    /// Solves `|o + t d - c|² = r²`, a quadratic `a t² + 2 b t + c = 0` with `a = d·d`,
    /// `b = d·(o - c)`, `c = |o - c|² - r²`. Cases: `c <= 0` the origin is inside (0);
    /// `b > 0` it starts outside moving away (miss); negative discriminant misses; else
    /// the smaller root. A negative or NaN `max_t` leaves no `t` to hit at, even from
    /// inside.
    #[inline]
    pub fn ball_hit_at(&self, ball: &Ball<V>, max_t: f32) -> Option<f32> {
        if max_t.is_nan() || max_t < 0.0 {
            return None;
        }
        let m = self.origin - ball.center;
        let c = m.dot(m) - ball.radius * ball.radius;
        if c <= 0.0 {
            return Some(0.0);
        }
        let b = m.dot(self.direction);
        if b >= 0.0 {
            return None;
        }
        let a = self.direction.dot(self.direction);
        let disc = b * b - a * c;
        if disc < 0.0 {
            return None;
        }
        let t = (-b - disc.sqrt()) / a;
        let t = t.max(0.0);
        (t <= max_t).then_some(t)
    }
}

/// Precomputed ray data for testing many boxes (the tree's traversals): see
/// [`RaySlabs::hit_at`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct RaySlabs<V: Vector> {
    origin: V,
    /// `1 / direction` on ordinary axes, 0 on parallel ones.
    inv_dir: V,
    /// The origin's coordinate on parallel axes (`-inf` and `+inf` elsewhere): a box's
    /// slab on such an axis must hold it.
    parallel_lo: V,
    parallel_hi: V,
    /// Whether any axis is parallel (only then is the origin tested against slabs).
    any_parallel: bool,
    /// The origin and the reciprocal direction on the axes of the numbers of a box's first
    /// window (see [`windows`]), then of its second.
    window_origin: [Vec4; 2],
    window_inv_dir: [Vec4; 2],
}

/// A box's `2 * DIM` numbers (`min` then `max`, as in memory) in SIMD windows of four: in 3D
/// the first four and the last four (`min.z` and `max.x` are in both), in 2D all four,
/// twice, from adjacent reads.
#[inline(always)]
fn windows<V: Vector>(aabb: &BoundingBox<V>) -> [Vec4; 2] {
    let value = |k: usize| {
        if k < V::DIM {
            aabb.min.axis(k)
        } else {
            aabb.max.axis(k - V::DIM)
        }
    };
    let at = |k: usize| Vec4::new(value(k), value(k + 1), value(k + 2), value(k + 3));
    [at(0), at(2 * V::DIM - 4)]
}

impl<V: Vector> RaySlabs<V> {
    /// Precomputes the reciprocal direction. On axes where the direction is zero the slab
    /// is handled by bounds instead (see [`Ray::box_hit_at`]). So is an axis where the
    /// direction is so small (subnormal) that its reciprocal overflows: an infinite
    /// reciprocal gives `0 * inf = NaN`, a miss, for a box face through the origin. Along
    /// such an axis the ray moves less than `3e-39` per unit of `t`, so treating it as
    /// parallel only changes hits at parameters of `1e31` and beyond (for coordinates of
    /// order 1).
    #[inline]
    pub fn new(ray: &Ray<V>) -> Self {
        let mut inv_dir = V::ZERO;
        let mut parallel_lo = V::NEG_INFINITY;
        let mut parallel_hi = V::INFINITY;
        let mut any_parallel = false;
        let origin = ray.origin;
        for axis in 0..V::DIM {
            let d = ray.direction.axis(axis);
            let inv = 1.0 / d;
            if !inv.is_finite() {
                // Parallel: inside for all t iff lo <= o <= hi, an interval test on the
                // origin done separately, with no t constraint.
                parallel_lo.set_axis(axis, origin.axis(axis));
                parallel_hi.set_axis(axis, origin.axis(axis));
                any_parallel = true;
            } else {
                inv_dir.set_axis(axis, inv);
            }
        }
        // A box of no size at `v` has `v`'s coordinate on every place's axis.
        let lanes = |v: V| windows(&BoundingBox::from_min_max(v, v));
        Self {
            origin,
            inv_dir,
            parallel_lo,
            parallel_hi,
            any_parallel,
            window_origin: lanes(origin),
            window_inv_dir: lanes(inv_dir),
        }
    }

    /// Entry parameter of the ray into `aabb` within `[0, max_t]`, or `None`.
    ///
    /// Per axis the slab is entered at the smaller of the two face parameters and left at
    /// the larger; the ray is inside the box from the largest entry (and 0) to the
    /// smallest exit (and `max_t`). A parallel axis constrains no parameter: the origin
    /// must lie in its slab, the separate test done only for rays that have such an axis,
    /// which then take the axes one by one, the parallel ones left out.
    ///
    /// The general case, a ray with no parallel axis, is tested in SIMD lanes: the box's
    /// numbers in two windows of four ([`windows`]), every face parameter in one vector
    /// subtraction and multiplication per window (two in 3D, one in 2D), then each axis's
    /// two parameters side by side for one `min` and one `max`. No parameter is NaN in
    /// either form: the reciprocals used are finite and not zero, and a difference that
    /// overflows (a grown box's infinite corner) gives an infinite parameter. So the
    /// forms agree; they could differ only in the sign of a zero, which the clip to
    /// `[0, max_t]` makes `+0`.
    #[inline]
    pub fn hit_at(&self, aabb: &BoundingBox<V>, max_t: f32) -> Option<f32> {
        let (near, far) = if self.any_parallel {
            if !(aabb.min.all_le(self.parallel_hi) && self.parallel_lo.all_le(aabb.max)) {
                return None;
            }
            let (mut near, mut far) = (f32::NEG_INFINITY, f32::INFINITY);
            for axis in 0..V::DIM {
                let inv = self.inv_dir.axis(axis);
                if inv == 0.0 {
                    continue;
                }
                let o = self.origin.axis(axis);
                let t1 = (aabb.min.axis(axis) - o) * inv;
                let t2 = (aabb.max.axis(axis) - o) * inv;
                let (enter, exit) = if t1 < t2 { (t1, t2) } else { (t2, t1) };
                near = if enter > near { enter } else { near };
                far = if exit < far { exit } else { far };
            }
            (near, far)
        } else {
            let [w1, w2] = windows(aabb);
            let t1 = (w1 - self.window_origin[0]) * self.window_inv_dir[0];
            let t2 = (w2 - self.window_origin[1]) * self.window_inv_dir[1];
            // Each axis's two face parameters side by side in the two vectors: in 3D the
            // windows' parameters are those of `min.xyz, max.x` and `min.z, max.xyz`, so
            // `a` takes `min.xyz, min.x` and `b` `max.xyz, max.x`; in 2D the window is
            // `min.xy, max.xy`, against itself with its halves swapped.
            let (a, b) = if V::DIM == 3 {
                (t1.xyzx(), t2.yzwy())
            } else {
                (t1, t1.zwxy())
            };
            (a.min(b).max_element(), a.max(b).min_element())
        };
        // Comparisons: no NaN to handle, as `f32::max` and `f32::min` would.
        let near = if near > 0.0 { near } else { 0.0 };
        let far = if far < max_t { far } else { max_t };
        (near <= far).then_some(near)
    }
}

#[cfg(test)]
mod tests {
    use glam::{Vec2, Vec3};

    use super::*;

    /// The slab test as defined, axis by axis in scalars: a parallel axis (a direction
    /// whose reciprocal is not finite) needs the origin in its slab and constrains no
    /// parameter. A zero entry comes out as `+0`.
    fn slab_test<V: Vector>(ray: &Ray<V>, aabb: &BoundingBox<V>, max_t: f32) -> Option<f32> {
        let (mut near, mut far) = (0.0f32, max_t);
        for axis in 0..V::DIM {
            let (o, inv) = (ray.origin.axis(axis), 1.0 / ray.direction.axis(axis));
            let (lo, hi) = (aabb.min.axis(axis), aabb.max.axis(axis));
            if !inv.is_finite() {
                if o < lo || o > hi {
                    return None;
                }
                continue;
            }
            let (t1, t2) = ((lo - o) * inv, (hi - o) * inv);
            near = near.max(t1.min(t2));
            far = far.min(t1.max(t2));
        }
        (near <= far).then_some(near + 0.0)
    }

    /// Rays and boxes on a grid of values (shared faces, both zeros, zero and subnormal
    /// directions, directions whose reciprocal is subnormal, coordinates near the end of
    /// `f32`), every box valid and grown as the box casts grow them (to infinite corners
    /// too).
    fn agrees<V: Vector>() {
        let coords = [-1.0, -0.0, 0.0, 0.5, 1.0, 3.0, 3e38, -3e38];
        let dirs = [
            -2.0,
            -0.0,
            0.0,
            f32::from_bits(1),
            5e-39,
            1.0,
            1e-30,
            f32::MAX,
        ];
        let grow = [0.0, 0.0, 1.0, 1e38];
        let limits = [0.0, 0.5, 10.0, f32::INFINITY];
        let mut k = 1u64;
        let mut next = |n: usize| {
            k = k
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (k >> 33) as usize % n
        };
        let (mut hits, mut misses, mut lanes, mut infinite) = (0, 0, 0, 0);
        for _ in 0..60_000 {
            let (mut origin, mut direction, mut min, mut max) =
                (V::ZERO, V::ZERO, V::ZERO, V::ZERO);
            for axis in 0..V::DIM {
                origin.set_axis(axis, coords[next(coords.len())]);
                direction.set_axis(axis, dirs[next(dirs.len())]);
                let (a, b) = (coords[next(coords.len())], coords[next(coords.len())]);
                min.set_axis(axis, a.min(b));
                max.set_axis(axis, a.max(b));
            }
            let e = V::splat(grow[next(grow.len())]);
            let aabb = BoundingBox::from_min_max(min - e, max + e);
            let ray = Ray::new(origin, direction);
            let max_t = limits[next(limits.len())];
            let expected = slab_test(&ray, &aabb, max_t);
            let slabs = RaySlabs::new(&ray);
            let got = slabs.hit_at(&aabb, max_t);
            assert_eq!(
                got.map(f32::to_bits),
                expected.map(f32::to_bits),
                "{ray:?} {aabb:?} {max_t}"
            );
            hits += usize::from(expected.is_some());
            misses += usize::from(expected.is_none());
            lanes += usize::from(!slabs.any_parallel);
            infinite += usize::from(!(aabb.min.is_finite() && aabb.max.is_finite()));
        }
        // Both outcomes, both forms and infinite corners are well represented.
        assert!(
            hits > 5_000 && misses > 5_000,
            "{hits} hits, {misses} misses"
        );
        assert!(lanes > 5_000 && lanes < 55_000, "{lanes} rays in lanes");
        assert!(infinite > 5_000, "{infinite} boxes with an infinite corner");
    }

    /// The slab test in lanes, and axis by axis for rays with a parallel axis, gives what
    /// the slab test defines, bit for bit.
    #[test]
    fn slabs_are_the_slab_test() {
        agrees::<Vec2>();
        agrees::<Vec3>();
    }
}
