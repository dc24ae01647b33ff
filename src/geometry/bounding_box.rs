//! Axis-aligned bounding boxes.

use glam::Vec4;

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

/// A box prepared to test a node's two child boxes for overlap at once (the tree's box
/// queries): the children's corners, read as the `4 * DIM` numbers they are in memory
/// (first box's `min` then `max`, then the second's), go four at a time into SIMD lanes,
/// each compared with the bound its place calls for.
///
/// A `min` coordinate overlaps when it is at most this box's `max` on its axis; a `max`
/// coordinate when it is at least this box's `min`, which is tested as the negated
/// coordinate being at most the negated `min` (negation is exact), so every lane is one
/// `<=`: the same comparisons as [`BoundingBox::overlaps`], NaN failing as there.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PairOverlap {
    /// 1 for a `min` lane, -1 for a `max` lane.
    sign: [Vec4; 3],
    bound: [Vec4; 3],
}

/// The number at place `k` of a pair of boxes laid out as in memory (see [`PairOverlap`]):
/// its box, whether it is a `max`, and its axis.
#[inline(always)]
fn place<V: Vector>(k: usize) -> (usize, bool, usize) {
    (k / (2 * V::DIM), (k / V::DIM) % 2 == 1, k % V::DIM)
}

impl<V: Vector> BoundingBox<V> {
    /// This box prepared for [`PairOverlap::overlaps`].
    #[inline]
    pub(crate) fn pair_overlap(&self) -> PairOverlap {
        // Per place, as in memory: the bounds of one box's corners, then the same again.
        let (mut sign, mut bound) = ([1.0f32; 12], [f32::INFINITY; 12]);
        for axis in 0..V::DIM {
            for b in 0..2 {
                let at = 2 * V::DIM * b + axis;
                bound[at] = self.max.axis(axis);
                sign[at + V::DIM] = -1.0;
                bound[at + V::DIM] = -self.min.axis(axis);
            }
        }
        let lanes =
            |v: &[f32; 12], w: usize| Vec4::new(v[4 * w], v[4 * w + 1], v[4 * w + 2], v[4 * w + 3]);
        PairOverlap {
            sign: [0, 1, 2].map(|w| lanes(&sign, w)),
            bound: [0, 1, 2].map(|w| lanes(&bound, w)),
        }
    }
}

impl PairOverlap {
    /// Whether each of `boxes` overlaps the box this was made from, as
    /// [`BoundingBox::overlaps`] says.
    #[inline(always)]
    pub(crate) fn overlaps<V: Vector>(&self, boxes: &[BoundingBox<V>; 2]) -> [bool; 2] {
        let value = |k: usize| {
            let (b, is_max, axis) = place::<V>(k);
            let corner = if is_max { boxes[b].max } else { boxes[b].min };
            corner.axis(axis)
        };
        let mut passed = 0u32;
        for w in 0..V::DIM {
            let k = 4 * w;
            let window = Vec4::new(value(k), value(k + 1), value(k + 2), value(k + 3));
            passed |= (window * self.sign[w]).cmple(self.bound[w]).bitmask() << k;
        }
        let all = (1u32 << (2 * V::DIM)) - 1;
        [passed & all == all, (passed >> (2 * V::DIM)) & all == all]
    }
}

#[cfg(test)]
mod tests {
    use glam::{Vec2, Vec3};

    use super::*;

    /// Boxes on a small grid of coordinates (faces often shared, zero of both signs,
    /// flat boxes and NaN corners included).
    fn boxes<V: Vector>() -> Vec<BoundingBox<V>> {
        let values = [-1.0, -0.0, 0.0, 0.5, 1.0, f32::NAN];
        let mut out = Vec::new();
        let mut k = 0usize;
        for _ in 0..400 {
            let mut min = V::ZERO;
            let mut max = V::ZERO;
            for axis in 0..V::DIM {
                k = k
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let (a, b) = (values[(k >> 33) % 6], values[(k >> 45) % 6]);
                let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
                min.set_axis(axis, lo);
                max.set_axis(axis, hi);
            }
            out.push(BoundingBox::from_min_max(min, max));
        }
        out
    }

    fn pair_overlap_agrees<V: Vector>() {
        let all = boxes::<V>();
        for query in &all {
            let pair = query.pair_overlap();
            for two in all.windows(2) {
                let two = [two[0], two[1]];
                let expected = [two[0].overlaps(query), two[1].overlaps(query)];
                assert_eq!(pair.overlaps(&two), expected, "{query:?} {two:?}");
            }
        }
    }

    /// The pair test says what [`BoundingBox::overlaps`] says, box by box.
    #[test]
    fn pair_overlap_is_overlaps() {
        pair_overlap_agrees::<Vec2>();
        pair_overlap_agrees::<Vec3>();
    }
}
