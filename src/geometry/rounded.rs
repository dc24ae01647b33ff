//! Rounded boxes: one primitive for boxes, balls, capsules and boxes with rounded edges.
//!
//! # What a rounded box is
//!
//! A [`RoundedBox`] is an axis-aligned box (its *inner box*, given by a center and half
//! extents) grown by a radius in every direction: every point within `radius` of the inner
//! box. In other words, the Minkowski sum of a box and a ball. Its faces are flat, its
//! edges are quarter cylinders (quarter circles in 2D) and its corners are eighths of a
//! sphere.
//!
//! Four shapes are rounded boxes:
//!
//! | shape | half extents | radius | constructor |
//! |---|---|---|---|
//! | box | the box's | 0 | [`RoundedBox::from_box`] (or `From<BoundingBox>`) |
//! | ball (sphere, circle) | 0 on every axis | the ball's | [`RoundedBox::ball`] (or `From<Ball>`) |
//! | axis-aligned capsule | half the segment's length on its axis, 0 on the others | the capsule's | [`RoundedBox::capsule`] |
//! | box with rounded edges | any | any | [`RoundedBox::new`] |
//!
//! A capsule is a segment grown by a radius, and an axis-aligned segment is a box of zero
//! width on all but one axis. A ball is a box of zero size grown by its radius, and a box is
//! a box grown by nothing.
//!
//! # Every test is one of two
//!
//! - **Distance.** The distance between two rounded boxes is the distance between their
//!   inner boxes (found axis by axis: on each, the gap between the two intervals, zero
//!   where they overlap) less the two radii. They overlap when it is at most zero:
//!   [`RoundedBox::overlaps`], [`RoundedBox::distance`], [`RoundedBox::closest_points`],
//!   and the contact (depth and normal of the shortest push-out, [`contact_rounded`]).
//! - **Ray.** Moving `a` against `b` is moving `a`'s center against the rounded box with
//!   `b`'s center, the sum of the half extents and the sum of the radii (their Minkowski
//!   sum): swept tests ([`sweep_rounded`]) and shape casts ([`rounded_cast_at`]) are a ray
//!   cast against a rounded box ([`Ray::rounded_box_hit_at`]).
//!
//! Tests are **inclusive**, as everywhere in the crate: shapes that touch overlap.
//!
//! # The special cases agree with the box and ball functions
//!
//! On boxes and balls the functions here give the same answers, bit for bit, as the
//! crate's functions for those shapes on the same boxes (built with
//! [`BoundingBox::from_center_half_extents`] from the same center and half extents) and
//! balls:
//!
//! | rounded boxes | box and ball functions |
//! |---|---|
//! | [`RoundedBox::overlaps`] | [`BoundingBox::overlaps`], [`Ball::overlaps`], [`Ball::overlaps_box`] |
//! | [`RoundedBox::contains_point`] | [`BoundingBox::contains_point`], [`Ball::contains_point`] |
//! | [`RoundedBox::distance`], [`RoundedBox::closest_point`], [`RoundedBox::distance_to_point`] | [`Shape::distance`], [`Shape::closest_point`], [`Shape::distance_to_point`] |
//! | [`contact_rounded`] | [`contact_boxes`], [`contact_balls`], [`contact_box_ball`], [`contact_ball_box`] |
//! | [`sweep_rounded`] | [`sweep_boxes`], [`sweep_balls`], [`sweep_ball_box`] (and it with the shapes swapped, normal reversed) |
//! | [`Ray::rounded_box_hit_at`] | [`Ray::box_hit_at`], [`Ray::ball_hit_at`] |
//! | [`rounded_cast_at`] | [`box_cast_at`] |
//!
//! A point (half extents 0, radius 0) is both a box and a ball, and the box and ball
//! functions may round differently on it: the sweeps and rays take it as a box, the
//! contact's point as a ball.
//!
//! Two exceptions, both where the box and ball functions are off:
//! - squared lengths that overflow `f32` or fall below `f32::MIN_POSITIVE` (coordinates
//!   beyond about `1e19`, or gaps and radii below about `1e-19`): the ball functions then
//!   compare infinities or zeros, and the functions here compare the lengths scaled by a
//!   power of two. So do the sweeps and rays of balls where the fourth powers of lengths
//!   would (inputs beyond `2^28`, about `2.7e8`, or below `2^-28`: at lengths of about
//!   `1e10` [`sweep_balls`] returns NaN times and [`Ray::ball_hit_at`] a hit at 0 from
//!   outside), and the other sweeps and rays where the squares would (beyond `2^60`, or
//!   where every length is subnormal). A power of two scales every rounding exactly, so
//!   this changes no answer where nothing overflows or underflows;
//! - [`contact_ball_box`] is [`contact_box_ball`] reversed, so where two ways out tie
//!   (a ball's center at a box's center) it pushes the box along the negative axis, while
//!   [`contact_rounded`] follows the rule of [`Contact`] (the lowest axis, the positive
//!   way); the depth and the point are the same.
//!
//! A rounded box built by [`RoundedBox::from_box`] stores the box's center and half
//! extents, rounded: its inner box may differ from the box by an ulp.
//!
//! # Example
//!
//! ```
//! use bevy_aabb_tree::geometry::{RoundedBox, contact_rounded, sweep_rounded};
//! use bevy_aabb_tree::{Ball, Vec2};
//!
//! // A capsule standing along y: a segment from (0, -1) to (0, 1), radius 0.5.
//! let capsule = RoundedBox::capsule(Vec2::ZERO, 1, 1.0, 0.5);
//! assert_eq!(capsule.half_extents, Vec2::new(0.0, 1.0));
//! // A ball of radius 0.5 at (1, 1.2): the point (0, 1) of the segment is nearest its
//! // center, sqrt(1 + 0.04) away, so the shapes are sqrt(1.04) - 1 apart.
//! let ball = RoundedBox::from(Ball::new(Vec2::new(1.0, 1.2), 0.5));
//! assert!((capsule.distance(&ball) - (1.04f32.sqrt() - 1.0)).abs() < 1e-6);
//! assert!(!capsule.overlaps(&ball));
//! assert!(contact_rounded(&capsule, &ball).is_none());
//!
//! // Moving the ball left by 0.1 brings it to the capsule when 1 - 0.1 u = sqrt(0.96).
//! let hit = sweep_rounded(&capsule, Vec2::ZERO, &ball, Vec2::new(-0.1, 0.0)).unwrap();
//! assert!((hit.u0 - (1.0 - 0.96f32.sqrt()) / 0.1).abs() < 1e-3);
//! // The normal points from the capsule towards the ball.
//! assert!(hit.normal.x > 0.9 && hit.normal.y > 0.1);
//!
//! // Moved by 0.1 the ball overlaps; the contact pushes it out along the same line.
//! let moved = RoundedBox::ball(Vec2::new(0.9, 1.2), 0.5);
//! let contact = contact_rounded(&capsule, &moved).unwrap();
//! assert!((contact.depth - (1.0 - 0.85f32.sqrt())).abs() < 1e-6);
//! ```

use crate::Vector;
use crate::geometry::{Ball, BoundingBox, Contact};
#[cfg(doc)]
use crate::geometry::{
    Ray, Shape, box_cast_at, contact_ball_box, contact_balls, contact_box_ball, contact_boxes,
    sweep_ball_box, sweep_balls, sweep_boxes,
};

mod motion;

pub use motion::{rounded_cast_at, sweep_rounded};

/// An axis-aligned box grown by a radius: every point within `radius` of the box with
/// `center` and `half_extents` (its *inner box*).
///
/// A box has radius 0, a ball half extents 0, an axis-aligned capsule half extents 0 on
/// all axes but one; see the [module documentation](crate::geometry::rounded) for the
/// tests and how they relate to the box and ball ones.
///
/// Valid when every component is finite and the half extents and the radius are `>= 0`
/// ([`RoundedBox::is_valid`]); zero sizes are valid.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "plugin", derive(bevy::reflect::Reflect))]
pub struct RoundedBox<V: Vector> {
    /// The center.
    pub center: V,
    /// Half the size of the inner box on each axis, `>= 0`.
    pub half_extents: V,
    /// How far the inner box is grown in every direction, `>= 0`.
    pub radius: f32,
}

impl<V: Vector> Default for RoundedBox<V> {
    /// A point at the origin.
    fn default() -> Self {
        Self::new(V::ZERO, V::ZERO, 0.0)
    }
}

impl<V: Vector> From<BoundingBox<V>> for RoundedBox<V> {
    /// [`RoundedBox::from_box`].
    #[inline]
    fn from(aabb: BoundingBox<V>) -> Self {
        Self::from_box(&aabb)
    }
}

impl<V: Vector> From<Ball<V>> for RoundedBox<V> {
    /// [`RoundedBox::ball`] with the ball's center and radius.
    #[inline]
    fn from(ball: Ball<V>) -> Self {
        Self::ball(ball.center, ball.radius)
    }
}

impl<V: Vector> RoundedBox<V> {
    /// The rounded box with `center`, `half_extents` and `radius`, taken as given (see
    /// [`Self::is_valid`]).
    #[inline]
    pub fn new(center: V, half_extents: V, radius: f32) -> Self {
        Self {
            center,
            half_extents,
            radius,
        }
    }

    /// The box as a rounded box of radius 0: its [`BoundingBox::center`] and
    /// [`BoundingBox::half_extents`], which are rounded, so the inner box may differ from
    /// `aabb` by an ulp (not at all for corners on a coarse dyadic grid, such as integers
    /// or halves). A box built from a center and half extents is best converted from
    /// those, with [`Self::new`].
    #[inline]
    pub fn from_box(aabb: &BoundingBox<V>) -> Self {
        Self::new(aabb.center(), aabb.half_extents(), 0.0)
    }

    /// A ball (a sphere in 3D, a circle in 2D): half extents 0.
    #[inline]
    pub fn ball(center: V, radius: f32) -> Self {
        Self::new(center, V::ZERO, radius)
    }

    /// A capsule along `axis` (0 = x, 1 = y, 2 = z): the segment through `center` from
    /// `-half_length` to `+half_length` on that axis, grown by `radius`.
    ///
    /// An axis the dimension does not have (2 or more in 2D, 3 or more in 3D) leaves the
    /// segment with no length: the capsule is then a ball.
    #[inline]
    pub fn capsule(center: V, axis: usize, half_length: f32, radius: f32) -> Self {
        let mut half_extents = V::ZERO;
        if axis < V::DIM {
            half_extents.set_axis(axis, half_length);
        }
        Self::new(center, half_extents, radius)
    }

    /// Finite center, half extents and radius, the half extents and the radius `>= 0`.
    #[inline]
    pub fn is_valid(&self) -> bool {
        self.center.is_finite()
            && self.half_extents.is_finite()
            && V::ZERO.all_le(self.half_extents)
            && self.radius.is_finite()
            && self.radius >= 0.0
    }

    /// The inner box: `center ± half_extents`, computed as
    /// [`BoundingBox::from_center_half_extents`] does.
    #[inline]
    pub fn inner_box(&self) -> BoundingBox<V> {
        BoundingBox::from_center_half_extents(self.center, self.half_extents)
    }

    /// The smallest box enclosing the rounded box: the inner box grown by the radius.
    /// For a ball it is [`Ball::bounding_box`], for a box the box.
    #[inline]
    pub fn bounding_box(&self) -> BoundingBox<V> {
        BoundingBox::from_center_half_extents(
            self.center,
            self.half_extents + V::splat(self.radius),
        )
    }

    /// The box, when the radius is 0 (its inner box), else `None`.
    #[inline]
    pub fn to_box(self) -> Option<BoundingBox<V>> {
        (self.radius == 0.0).then(|| self.inner_box())
    }

    /// The ball, when the half extents are 0, else `None`.
    #[inline]
    pub fn to_ball(self) -> Option<Ball<V>> {
        (self.half_extents == V::ZERO).then(|| Ball::new(self.center, self.radius))
    }

    /// The rounded box moved by `offset`.
    #[inline]
    pub fn translated(&self, offset: V) -> Self {
        Self::new(self.center + offset, self.half_extents, self.radius)
    }

    /// Every length multiplied by `2^k` (exactly, unless it becomes subnormal).
    #[inline]
    fn scaled(&self, k: i32) -> Self {
        Self::new(
            times_pow2(self.center, k),
            times_pow2(self.half_extents, k),
            times_pow2(self.radius, k),
        )
    }

    /// The inner box's corners.
    #[inline]
    fn corners(&self) -> (V, V) {
        let (c, h) = (self.center, self.half_extents);
        (c - h, c + h)
    }

    /// Whether `point` is inside or on the surface: its distance to the inner box is at
    /// most the radius.
    #[inline]
    pub fn contains_point(&self, point: V) -> bool {
        let (min, max) = self.corners();
        let gap = (min - point).max(point - max).max(V::ZERO);
        within(gap, self.radius)
    }

    /// The point of the rounded box closest to `point`: `point` itself when inside or on
    /// the surface; else the point of the inner box closest to `point` (found by
    /// clamping) moved towards `point` by the radius.
    #[inline]
    pub fn closest_point(&self, point: V) -> V {
        let inner = self.inner_box();
        let q = inner.closest_point(point);
        if self.radius == 0.0 {
            return q;
        }
        let d = point - q;
        let len = length(d);
        if len <= self.radius {
            point
        } else {
            q + d * (self.radius / len)
        }
    }

    /// The distance from `point` to the rounded box: its distance to the inner box less
    /// the radius, 0 inside or on the surface.
    #[inline]
    pub fn distance_to_point(&self, point: V) -> f32 {
        let d = self.inner_box().closest_point(point) - point;
        (length(d) - self.radius).max(0.0)
    }

    /// Whether two rounded boxes overlap (inclusive: touching counts): the distance
    /// between the inner boxes is at most the sum of the radii.
    ///
    /// On each axis the inner boxes are apart by the gap between their intervals (zero
    /// where they overlap); the distance is the length of the vector of these gaps,
    /// compared squared (no square root). With both radii 0 this is the box test (the
    /// gaps are all zero exactly when the intervals overlap on every axis), with both
    /// half extents 0 the ball test.
    ///
    /// A NaN in either rounded box, or negative half extents, give `false`.
    #[inline]
    pub fn overlaps(&self, other: &Self) -> bool {
        let (amin, amax) = self.corners();
        let (bmin, bmax) = other.corners();
        let gap = (amin - bmax).max(bmin - amax).max(V::ZERO);
        // `min <= max` fails for a NaN (which the gap's `max` would drop).
        amin.all_le(amax) & bmin.all_le(bmax) && within(gap, self.radius + other.radius)
    }

    /// The distance between two rounded boxes: the length of the shortest segment from
    /// one to the other, 0 when they overlap or touch. The distance between the inner
    /// boxes (per-axis gaps, see [`Self::overlaps`]) less the two radii.
    #[inline]
    pub fn distance(&self, other: &Self) -> f32 {
        let (amin, amax) = self.corners();
        let (bmin, bmax) = other.corners();
        let gap = (amin - bmax).max(bmin - amax).max(V::ZERO);
        (length(gap) - self.radius - other.radius).max(0.0)
    }

    /// The closest points of two rounded boxes: a point of `self` and a point of `other`
    /// whose distance is [`Self::distance`].
    ///
    /// From the closest points of the inner boxes (on each axis the facing ends of the
    /// two intervals, or the middle of their overlap), each moves towards the other by
    /// its radius. When the shapes touch or overlap, both are the same point of both
    /// shapes, the [`Contact::point`] of [`contact_rounded`].
    pub fn closest_points(&self, other: &Self) -> (V, V) {
        let (amin, amax) = self.corners();
        let (bmin, bmax) = other.corners();
        let (pa, pb) = inner_closest(amin, amax, bmin, bmax);
        let d = pb - pa;
        let len = length(d);
        let (ra, rb) = (self.radius, other.radius);
        // Apart exactly when `overlaps` says so (`|d|` is the vector of per-axis gaps).
        if !within(d.abs(), ra + rb) {
            let n = d / len;
            return (pa + n * ra, pb - n * rb);
        }
        let normal = if len > 0.0 {
            d / len
        } else {
            face_normal(amin, amax, bmin, bmax).0
        };
        let b_box = rb == 0.0 && other.half_extents != V::ZERO;
        let point = common_point(pa, pb, normal, len, ra, rb, b_box);
        (point, point)
    }

    /// The contact of two overlapping rounded boxes: [`contact_rounded`].
    #[inline]
    pub fn contact(&self, other: &Self) -> Option<Contact<V>> {
        contact_rounded(self, other)
    }
}

/// `2^k`, for `k` in `-126..=127` (a normal float, built from its exponent bits).
#[inline]
fn pow2(k: i32) -> f32 {
    f32::from_bits(((k.clamp(-126, 127) + 127) as u32) << 23)
}

/// The exponent `k` that brings `x` (finite, `> 0`) to about 1 when multiplied by `2^k`.
#[inline]
fn normalizing_exponent(x: f32) -> i32 {
    -(x.log2().floor() as i32)
}

/// `x · 2^k` for `k` in `-253..=253`, in two steps (each factor a normal float): exact
/// unless the result is subnormal.
#[inline]
fn times_pow2<T: core::ops::Mul<f32, Output = T>>(x: T, k: i32) -> T {
    let half = k / 2;
    x * pow2(half) * pow2(k - half)
}

/// The length of `v`: `v.dot(v).sqrt()` where the squared length is a normal finite
/// float (so the box and ball functions, which compute it so, agree bit for bit), else
/// computed on `v` scaled by a power of two (exactly) to about 1, so that it neither
/// overflows nor underflows.
#[inline]
fn length<V: Vector>(v: V) -> f32 {
    let squared = v.dot(v);
    if squared.is_finite() && squared >= f32::MIN_POSITIVE {
        return squared.sqrt();
    }
    let largest = v.abs().max_element();
    if largest == 0.0 || !largest.is_finite() {
        return largest;
    }
    let k = normalizing_exponent(largest);
    let unit = times_pow2(v, k);
    times_pow2(unit.dot(unit).sqrt(), -k)
}

/// Whether `|gap| <= radius` (for a gap vector and a radius `>= 0`): squared, as the ball
/// tests compare, where `radius²` lies in `2^-100..=2^100` (a `gap²` that underflows is
/// then below it, one that overflows above); else both scaled by the same power of two
/// (exactly) to about 1. With a radius of 0 it is exactly whether the gap is zero. An
/// infinite gap (corners whose difference overflows) is out of reach.
#[inline]
fn within<V: Vector>(gap: V, radius: f32) -> bool {
    let (g2, r2) = (gap.dot(gap), radius * radius);
    if (pow2(-100)..=pow2(100)).contains(&r2) {
        return g2 <= r2;
    }
    if radius.is_nan() {
        return false;
    }
    let largest = gap.abs().max_element().max(radius);
    if largest == 0.0 || !largest.is_finite() {
        return largest == 0.0;
    }
    let k = normalizing_exponent(largest);
    let (unit, r) = (times_pow2(gap, k), times_pow2(radius, k));
    unit.dot(unit) <= r * r
}

/// Whether `a` and `b` are valid ([`RoundedBox::is_valid`]) and every component of
/// `zeros` is zero (a caller passes `x * 0.0` to check that `x` is finite), without a
/// branch per component: `x * 0.0` is zero for a finite `x` and NaN otherwise, so the sum
/// of the products is zero only when every one is.
#[inline]
pub(crate) fn valid_pair<V: Vector>(a: &RoundedBox<V>, b: &RoundedBox<V>, zeros: V) -> bool {
    let zeros =
        (a.center * 0.0 + a.half_extents * 0.0) + (b.center * 0.0 + b.half_extents * 0.0) + zeros;
    let finite = zeros.dot(V::ONE) + (a.radius * 0.0 + b.radius * 0.0) == 0.0;
    finite
        && a.half_extents
            .min(b.half_extents)
            .min_element()
            .min(a.radius.min(b.radius))
            >= 0.0
}

/// The largest magnitude among the components of `vectors` and `scalars`.
#[inline]
fn largest<V: Vector>(vectors: &[V], scalars: &[f32]) -> f32 {
    let v = vectors.iter().fold(V::ZERO, |m, v| m.max(v.abs()));
    scalars.iter().fold(v.max_element(), |m, s| m.max(s.abs()))
}

/// The power-of-two exponent that brings `largest` to about 1 when it lies outside
/// `2^lo..2^hi` (and is finite and not zero), else 0: no scaling.
///
/// The ball tests square lengths, and the ball sweep and ray multiply squares: they
/// overflow for lengths beyond about `2^62` (`2^30` for fourth powers) and underflow
/// below the reciprocals. Scaled by a power of two their input gives the same answers
/// (times are ratios of lengths, normals unit vectors: every rounding is scaled
/// exactly) wherever no step over- or underflows.
#[inline]
fn rescaling(largest: f32, lo: i32, hi: i32) -> i32 {
    if !largest.is_finite() || unscaled(largest, (lo, hi)) {
        0
    } else {
        normalizing_exponent(largest)
    }
}

/// Whether lengths up to `largest` (zero, or in `2^lo..2^hi`) need no scaling.
#[inline]
fn unscaled(largest: f32, (lo, hi): (i32, i32)) -> bool {
    largest == 0.0 || (pow2(lo)..pow2(hi)).contains(&largest)
}

/// Fourth powers of lengths (the ball sweep's and ray's discriminants, products of two
/// sums of three products of differences: up to 144 times the fourth power of the
/// largest input) stay normal floats for inputs in `2^-28..2^28`.
const QUARTIC: (i32, i32) = (-28, 28);

/// Squares of lengths up to twice `2^60`, summed over three axes, stay finite. From the
/// smallest normal float up to `2^60` nothing is scaled: the sweeps against boxes count
/// gaps under an absolute `1e-5` as contact, which scaling would change. Only where every
/// length is subnormal are they scaled up.
const SQUARE: (i32, i32) = (-126, 60);

/// The middle of `lo..=hi` on each axis: `(lo + hi) / 2` as the box functions compute
/// it, halved first where the sum would overflow.
#[inline]
fn middle<V: Vector>(lo: V, hi: V) -> V {
    let m = (lo + hi) * 0.5;
    if m.is_finite() {
        m
    } else {
        lo * 0.5 + hi * 0.5
    }
}

/// The closest points of two boxes given by their corners, a point of each: on each axis
/// where the intervals overlap, the middle of the overlap (for both); where they are
/// apart, the facing ends.
///
/// Both are the middle of `max(amin, bmin)` and `min(amax, bmax)` clamped to each box:
/// on an axis where the intervals overlap that middle lies in both; where they are apart
/// it lies between the facing ends, and clamping moves it onto each.
#[inline]
fn inner_closest<V: Vector>(amin: V, amax: V, bmin: V, bmax: V) -> (V, V) {
    let m = middle(amin.max(bmin), amax.min(bmax));
    (m.max(amin).min(amax), m.max(bmin).min(bmax))
}

/// For inner boxes that overlap: the way out of `b` from `a` through the nearest face of
/// their Minkowski difference, as [`contact_boxes`] finds it. On each axis `b` leaves by
/// `amax - bmin` towards `+` or `bmax - amin` towards `-`; the least of the `2 * DIM`
/// distances wins, the lowest axis and then `+` on ties. Returns the unit normal and the
/// distance.
#[inline]
fn face_normal<V: Vector>(amin: V, amax: V, bmin: V, bmax: V) -> (V, f32) {
    let (mut face, mut axis_won, mut sign_won) = (f32::INFINITY, 0, 1.0);
    for axis in 0..V::DIM {
        let plus = amax.axis(axis) - bmin.axis(axis);
        let minus = bmax.axis(axis) - amin.axis(axis);
        let (f, sign) = if plus <= minus {
            (plus, 1.0)
        } else {
            (minus, -1.0)
        };
        if f < face {
            face = f;
            axis_won = axis;
            sign_won = sign;
        }
    }
    let mut normal = V::ZERO;
    normal.set_axis(axis_won, sign_won);
    (normal, face)
}

/// A point of both shapes when they touch or overlap: the middle of the part of the line
/// through the inner closest points `pa` and `pb` (`len` apart, `normal` from `pa`
/// towards `pb`) that lies within `ra` of `pa` and `rb` of `pb`, measured from `pa` as
/// [`contact_balls`] does (for a box `a`, `ra = 0`, it is `pa`, the point of the box
/// closest to `b`'s inner box, as in [`contact_box_ball`]).
///
/// When `b` is a box with some size (`b_box`) and `a` is rounded, that part ends at `pb`,
/// the point of the box closest to `a`'s inner box: it is `pb`, exactly, as
/// [`contact_ball_box`] gives it. (A point is a ball here: measured from `pa`.)
#[inline]
fn common_point<V: Vector>(pa: V, pb: V, normal: V, len: f32, ra: f32, rb: f32, b_box: bool) -> V {
    if b_box && ra > 0.0 {
        return pb;
    }
    let lo = (-ra).max(len - rb);
    let hi = ra.min(len + rb);
    pa + normal * (0.5 * (lo + hi))
}

/// The contact of two rounded boxes ([`Contact`]: the normal points from `a` towards
/// `b`), or `None` if they are apart or invalid.
///
/// Moving `b` by `t` overlaps `a` while `t` lies in their Minkowski difference: the box
/// `[a.min - b.max, a.max - b.min]` of the inner boxes, rounded by the sum of the radii.
/// It holds 0; the shortest way out of it is the contact. Two cases:
/// - the inner boxes are apart (0 lies outside the difference's box): straight along the
///   line from the closest point of `a`'s inner box to that of `b`'s, by the sum of the
///   radii less their distance;
/// - the inner boxes overlap or touch: through the nearest face, by the distance to it
///   plus the sum of the radii (the lowest axis wins ties, then the `+` face).
///
/// The point is the middle of the part of the line between the inner closest points that
/// lies in both shapes (on a box the point closest to the other shape's inner box, for two
/// boxes the center of their intersection).
///
/// On boxes and balls it gives the answers of [`contact_boxes`], [`contact_balls`] and
/// [`contact_box_ball`] bit for bit, and of [`contact_ball_box`] but for the direction
/// chosen on ties (see the [module documentation](crate::geometry::rounded)).
pub fn contact_rounded<V: Vector>(a: &RoundedBox<V>, b: &RoundedBox<V>) -> Option<Contact<V>> {
    // Most candidate pairs are apart: the overlap test comes first, and tells nothing
    // wrong of invalid shapes, which the check after it turns away.
    if !a.overlaps(b) || !valid_pair(a, b, V::ZERO) {
        return None;
    }
    let (amin, amax) = a.corners();
    let (bmin, bmax) = b.corners();
    let (pa, pb) = inner_closest(amin, amax, bmin, bmax);
    let d = pb - pa;
    let len = length(d);
    let (ra, rb) = (a.radius, b.radius);
    let b_box = rb == 0.0 && b.half_extents != V::ZERO;
    let (normal, depth) = if len > 0.0 {
        (d / len, ra + rb - len)
    } else {
        let (normal, face) = face_normal(amin, amax, bmin, bmax);
        (normal, face + (ra + rb))
    };
    Some(Contact {
        normal,
        depth: depth.max(0.0),
        point: common_point(pa, pb, normal, len, ra, rb, b_box),
    })
}
