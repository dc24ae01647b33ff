//! The dimension trait: one source for 2D and 3D.
//!
//! Everything in the crate is generic over [`Vector`], which is implemented for
//! [`Vec2`] (2D) and [`Vec3`] (3D) and nothing else (the trait is sealed). User
//! code names the dimension once, for example `Aabb::<Vec3>` or
//! `DynamicTree::<Vec2, u32>`, and every method then reads naturally.

use core::fmt::Debug;
use core::ops::{Add, AddAssign, Div, Mul, Neg, Sub, SubAssign};

use glam::{Vec2, Vec3, Vec4};

mod sealed {
    pub trait Sealed {}
    impl Sealed for glam::Vec2 {}
    impl Sealed for glam::Vec3 {}
}

/// A point or direction in 2D ([`Vec2`]) or 3D ([`Vec3`]).
///
/// Sealed: the crate implements it for those two types only.
pub trait Vector:
    sealed::Sealed
    + Copy
    + Debug
    + Default
    + PartialEq
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + AddAssign
    + Sub<Output = Self>
    + SubAssign
    + Neg<Output = Self>
    + Mul<Output = Self>
    + Mul<f32, Output = Self>
    + Div<Output = Self>
    + Div<f32, Output = Self>
{
    /// Number of axes: 2 or 3.
    const DIM: usize;
    /// All zeros.
    const ZERO: Self;
    /// All ones.
    const ONE: Self;
    /// All components positive infinity.
    const INFINITY: Self;
    /// All components negative infinity.
    const NEG_INFINITY: Self;

    /// A vector with every component set to `v`.
    fn splat(v: f32) -> Self;
    /// Component-wise minimum.
    fn min(self, other: Self) -> Self;
    /// Component-wise maximum.
    fn max(self, other: Self) -> Self;
    /// Component-wise absolute value.
    fn abs(self) -> Self;
    /// The component on `axis` (0 = x, 1 = y, 2 = z).
    fn axis(self, axis: usize) -> f32;
    /// Sets the component on `axis`.
    fn set_axis(&mut self, axis: usize, value: f32);
    /// Smallest component.
    fn min_element(self) -> f32;
    /// Largest component.
    fn max_element(self) -> f32;
    /// Dot product.
    fn dot(self, other: Self) -> f32;
    /// True if every component of `self` is `<=` the one of `other`.
    fn all_le(self, other: Self) -> bool;
    /// True if every component of `self` is `<` the one of `other`.
    fn all_lt(self, other: Self) -> bool;
    /// True if every component is finite (neither NaN nor infinite).
    fn is_finite(self) -> bool;
    /// True if the box from `min` to `max` overlaps the box from `other_min` to
    /// `other_max` on every axis, faces touching included: `min <= other_max` and
    /// `other_min <= max` on each (false where a NaN is compared), without a branch; in
    /// 3D the comparisons run side by side in SIMD lanes.
    fn overlap(min: Self, max: Self, other_min: Self, other_max: Self) -> bool;
    /// The surface-area heuristic measure of a box with this size: the
    /// perimeter in 2D, the surface area in 3D (both up to a constant factor of 2).
    fn area_of_size(size: Self) -> f32;
    /// The vector as a 3D vector (z = 0 in 2D).
    fn extend_to_3d(self) -> Vec3;
    /// The first `DIM` components of a 3D vector.
    fn truncate_from_3d(v: Vec3) -> Self;
}

macro_rules! forward_common {
    () => {
        #[inline]
        fn splat(v: f32) -> Self {
            Self::splat(v)
        }
        #[inline]
        fn min(self, other: Self) -> Self {
            Self::min(self, other)
        }
        #[inline]
        fn max(self, other: Self) -> Self {
            Self::max(self, other)
        }
        #[inline]
        fn abs(self) -> Self {
            Self::abs(self)
        }
        #[inline]
        fn axis(self, axis: usize) -> f32 {
            self[axis]
        }
        #[inline]
        fn set_axis(&mut self, axis: usize, value: f32) {
            self[axis] = value;
        }
        #[inline]
        fn min_element(self) -> f32 {
            Self::min_element(self)
        }
        #[inline]
        fn max_element(self) -> f32 {
            Self::max_element(self)
        }
        #[inline]
        fn dot(self, other: Self) -> f32 {
            Self::dot(self, other)
        }
        #[inline]
        fn all_le(self, other: Self) -> bool {
            self.cmple(other).all()
        }
        #[inline]
        fn all_lt(self, other: Self) -> bool {
            self.cmplt(other).all()
        }
        #[inline]
        fn is_finite(self) -> bool {
            Self::is_finite(self)
        }
    };
}

impl Vector for Vec2 {
    const DIM: usize = 2;
    const ZERO: Self = Vec2::ZERO;
    const ONE: Self = Vec2::ONE;
    const INFINITY: Self = Vec2::INFINITY;
    const NEG_INFINITY: Self = Vec2::NEG_INFINITY;
    forward_common!();
    #[inline]
    fn area_of_size(size: Self) -> f32 {
        size.x + size.y
    }
    #[inline(always)]
    fn overlap(min: Self, max: Self, other_min: Self, other_max: Self) -> bool {
        // Four comparisons combined with `&` (no branch): as cheap as filling SIMD lanes.
        (min.x <= other_max.x)
            & (other_min.x <= max.x)
            & (min.y <= other_max.y)
            & (other_min.y <= max.y)
    }
    #[inline]
    fn extend_to_3d(self) -> Vec3 {
        self.extend(0.0)
    }
    #[inline]
    fn truncate_from_3d(v: Vec3) -> Self {
        v.truncate()
    }
}

impl Vector for Vec3 {
    const DIM: usize = 3;
    const ZERO: Self = Vec3::ZERO;
    const ONE: Self = Vec3::ONE;
    const INFINITY: Self = Vec3::INFINITY;
    const NEG_INFINITY: Self = Vec3::NEG_INFINITY;
    forward_common!();
    #[inline]
    fn area_of_size(size: Self) -> f32 {
        size.x * size.y + size.y * size.z + size.z * size.x
    }
    #[inline(always)]
    fn overlap(min: Self, max: Self, other_min: Self, other_max: Self) -> bool {
        // Two overlapping windows of the six corner coordinates (adjacent in a
        // `BoundingBox`, which is `repr(C)`, so each may load at once): `min` with
        // `max.x`, and `min.z` with `max`. A lane compared with an infinity holds for
        // every number and fails for NaN alone; `max.x` and `min.z`, each in a padded
        // lane of one window, are compared for real in the other.
        let low = Vec4::new(min.x, min.y, min.z, max.x);
        let high = Vec4::new(min.z, max.x, max.y, max.z);
        let below = Vec4::new(other_max.x, other_max.y, other_max.z, f32::INFINITY);
        let above = Vec4::new(f32::NEG_INFINITY, other_min.x, other_min.y, other_min.z);
        (low.cmple(below) & high.cmpge(above)).all()
    }
    #[inline]
    fn extend_to_3d(self) -> Vec3 {
        self
    }
    #[inline]
    fn truncate_from_3d(v: Vec3) -> Self {
        v
    }
}
