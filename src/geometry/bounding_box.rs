//! Axis-aligned bounding boxes.

use crate::Vector;

/// An axis-aligned box stored as its two corners.
///
/// Every test here is **inclusive**: boxes whose faces touch overlap, and a point on a
/// face is inside. A box with `min == max` on an axis is flat (zero size) and is still a
/// valid box; a box with `min > max` on any axis, or with a non-finite corner, is not
/// ([`BoundingBox::is_valid`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "plugin", derive(bevy::reflect::Reflect))]
#[repr(C)]
pub struct BoundingBox<V: Vector> {
    /// The corner with the smallest coordinates.
    pub min: V,
    /// The corner with the largest coordinates.
    pub max: V,
}

impl<V: Vector> Default for BoundingBox<V> {
    fn default() -> Self {
        Self::from_min_max(V::ZERO, V::ZERO)
    }
}

impl<V: Vector> BoundingBox<V> {
    /// The box from its two corners. The corners are taken as given (see [`Self::is_valid`]).
    #[inline]
    pub fn from_min_max(min: V, max: V) -> Self {
        Self { min, max }
    }

    /// The box with `center` and `half_extents` (half the size on each axis).
    #[inline]
    pub fn from_center_half_extents(center: V, half_extents: V) -> Self {
        Self::from_min_max(center - half_extents, center + half_extents)
    }

    /// The smallest box holding every point (an empty iterator gives an inverted box,
    /// `min = +inf`, `max = -inf`, which [`Self::is_valid`] rejects).
    pub fn from_points(points: impl IntoIterator<Item = V>) -> Self {
        let mut b = Self::from_min_max(V::INFINITY, V::NEG_INFINITY);
        for p in points {
            b.min = b.min.min(p);
            b.max = b.max.max(p);
        }
        b
    }

    /// The center.
    #[inline]
    pub fn center(&self) -> V {
        (self.min + self.max) * 0.5
    }

    /// Half the size on each axis.
    #[inline]
    pub fn half_extents(&self) -> V {
        (self.max - self.min) * 0.5
    }

    /// The size on each axis.
    #[inline]
    pub fn size(&self) -> V {
        self.max - self.min
    }

    /// Finite corners and `min <= max` on every axis (zero size allowed).
    ///
    /// Tested as `-inf < min <= max < inf`, which holds exactly for finite corners with
    /// `min <= max` (a NaN fails every comparison, an infinite corner an outer one), every
    /// comparison made and combined without a branch: a move checks its box this way on
    /// every call.
    #[inline]
    pub fn is_valid(&self) -> bool {
        V::NEG_INFINITY.all_lt(self.min) & self.min.all_le(self.max) & self.max.all_lt(V::INFINITY)
    }

    /// The surface-area heuristic measure: half the perimeter in 2D, half the surface area
    /// in 3D. Only ratios of it matter.
    #[inline]
    pub fn area(&self) -> f32 {
        V::area_of_size(self.max - self.min)
    }

    /// Whether the boxes overlap (min/max form). Touching faces count as overlapping.
    ///
    /// Two boxes are disjoint exactly when some axis separates them, so this is the AND of
    /// one interval test per axis. Every axis is compared and the results are combined
    /// with `&`, without a branch: the tree's walks call it on outcomes hard to predict,
    /// and are left with one branch per test rather than one per comparison.
    #[inline(always)]
    pub fn overlaps(&self, other: &Self) -> bool {
        V::overlap(self.min, self.max, other.min, other.max)
    }

    /// Whether `other` lies entirely inside `self` (faces may touch).
    ///
    /// Both corners are compared, without a branch between them: the tree's hot paths
    /// (a move's keep test, growing ancestors) call it on outcomes hard to predict.
    #[inline]
    pub fn contains(&self, other: &Self) -> bool {
        self.min.all_le(other.min) & other.max.all_le(self.max)
    }

    /// Whether `point` is inside or on the boundary.
    #[inline]
    pub fn contains_point(&self, point: V) -> bool {
        self.min.all_le(point) && point.all_le(self.max)
    }

    /// The point of the box closest to `point` (the point itself when inside), found by
    /// clamping each coordinate to the box.
    #[inline]
    pub fn closest_point(&self, point: V) -> V {
        point.max(self.min).min(self.max)
    }

    /// Squared distance from `point` to the box (0 inside).
    #[inline]
    pub fn distance_squared_to_point(&self, point: V) -> f32 {
        let d = self.closest_point(point) - point;
        d.dot(d)
    }

    /// Grows `self` to also enclose `other`.
    #[inline]
    pub fn merge(&mut self, other: &Self) {
        *self = self.merged(other);
    }

    /// The smallest box enclosing both.
    #[inline]
    pub fn merged(&self, other: &Self) -> Self {
        Self::from_min_max(self.min.min(other.min), self.max.max(other.max))
    }

    /// Grows every face outwards by `amount` (a negative amount shrinks).
    #[inline]
    pub fn grow(&mut self, amount: f32) {
        *self = self.grown(amount);
    }

    /// The box with every face moved outwards by `amount`.
    #[inline]
    pub fn grown(&self, amount: f32) -> Self {
        let a = V::splat(amount);
        Self::from_min_max(self.min - a, self.max + a)
    }

    /// Extends `self` to enclose itself moved by `displacement` (the swept box).
    #[inline]
    pub fn sweep(&mut self, displacement: V) {
        *self = self.swept(displacement);
    }

    /// The box enclosing `self` and `self` moved by `displacement`.
    #[inline]
    pub fn swept(&self, displacement: V) -> Self {
        Self::from_min_max(
            self.min + displacement.min(V::ZERO),
            self.max + displacement.max(V::ZERO),
        )
    }

    /// The box moved by `offset`.
    #[inline]
    pub fn translated(&self, offset: V) -> Self {
        Self::from_min_max(self.min + offset, self.max + offset)
    }
}

/// Whether two boxes given as center and half extents overlap: for every axis,
/// `|ca - cb| <= ha + hb` (the distance between the centers is at most the sum of the
/// half extents). Touching boxes overlap. Gives the same answer as
/// [`BoundingBox::overlaps`] on the same boxes.
#[inline]
pub fn overlaps_center_half_extents<V: Vector>(
    center_a: V,
    half_a: V,
    center_b: V,
    half_b: V,
) -> bool {
    (center_a - center_b).abs().all_le(half_a + half_b)
}
