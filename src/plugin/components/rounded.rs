//! The rounded box collider.

use bevy::prelude::*;

use crate::Vector;
use crate::plugin::TrackedCollider;
#[cfg(doc)]
use crate::plugin::{Aabb, BoundingSphere, Capsule, Sensor, Static, Velocity};

/// A box with rounded edges and corners: the box of `half_extents` around `offset` in the
/// entity's local space, grown by `radius` in every direction (every point within
/// `radius` of that box). A crate, a platform or a wall whose corners a character slides
/// around instead of catching on.
///
/// A component of its own rather than a radius on [`Aabb`]: an `Aabb` is exactly the box
/// the tree stores and tests (its pairs cost one box test), and stays that plain fast
/// path; a rounded box pays for the exact test of its rounded edges only where it is
/// used. Everything that takes an [`Aabb`] takes it: events and
/// [`CollidingEntities`](crate::plugin::CollidingEntities), swept first contacts,
/// fattening by [`Velocity`], [`CollisionLayers`](crate::plugin::CollisionLayers),
/// [`Sensor`], [`OneWay`](crate::plugin::OneWay), [`Static`], pair filters,
/// [`SpatialQuery`](crate::plugin::SpatialQuery) (ray, point, overlap and cast queries hit
/// it as a rounded box, and
/// [`cast_rounded_box`](crate::plugin::SpatialQuery::cast_rounded_box) casts one),
/// picking, rollback, saved scenes and the debug overlay.
///
/// Exactly, not as its bounding box: two rounded boxes touch when their inner boxes are
/// at most the sum of their radii apart. Its world shape is a
/// [`RoundedBox`](crate::geometry::RoundedBox) ([`WorldShape::Rounded`](crate::plugin::WorldShape)):
/// - translation moves it and scale scales it: the inner box as an [`Aabb`]'s box, the
///   radius by the largest scale factor (as a [`BoundingSphere`]'s);
/// - rotation is not rotation of the rounded box: the world shape is the rounded box
///   whose inner box encloses the rotated inner box (as a rotated [`Aabb`]'s world box
///   encloses the rotated box), rounded by the radius. A quarter turn swaps the extents
///   exactly.
///
/// Values: `half_extents >= 0` on every axis and `radius >= 0`, finite (zero radius is a
/// plain box, zero half extents a ball). Others leave the entity out of collision
/// detection with one warning naming it, until they are valid again. An entity with
/// several shapes uses one, in this order: [`Aabb`], `RoundedAabb`, [`Capsule`],
/// [`BoundingSphere`] (insert the new shape before removing the old one to change shapes
/// without ending contacts).
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::prelude::*;
/// // A crate 1 wide whose edges are rounded by 0.1: the inner box is 0.8 wide.
/// let crate_box = RoundedAabb::new(Vec3::splat(0.4), 0.1);
/// assert_eq!(crate_box.outer_half_extents(), Vec3::splat(0.5));
/// // A platform in a 2D level 4.5 wide and 0.5 thick, its edges rounded by 0.125, its
/// // top on the entity's origin.
/// let platform = RoundedAabb::from_outer(Vec2::new(2.25, 0.25), 0.125).with_offset(Vec2::Y * -0.25);
/// assert_eq!(platform.half_extents, Vec2::new(2.125, 0.125));
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component, Debug, PartialEq)]
#[require(Transform, TrackedCollider<V>)]
pub struct RoundedAabb<V: Vector> {
    /// Half the size of the inner box on each axis, `>= 0`: the shape's half size on an
    /// axis is `half_extents + radius`.
    pub half_extents: V,
    /// How far the inner box is grown in every direction, `>= 0`.
    pub radius: f32,
    /// The box's center in the entity's local space. Default zero.
    pub offset: V,
}

impl<V: Vector> RoundedAabb<V> {
    /// A rounded box with these inner half extents and this radius, centered on the
    /// entity.
    pub fn new(half_extents: V, radius: f32) -> Self {
        Self {
            half_extents,
            radius,
            offset: V::ZERO,
        }
    }

    /// The rounded box of this outer size (half extents, the rounding included) and this
    /// radius: the inner half extents are `outer - radius`, zero where the radius is
    /// larger.
    pub fn from_outer(outer_half_extents: V, radius: f32) -> Self {
        Self::new((outer_half_extents - V::splat(radius)).max(V::ZERO), radius)
    }

    /// The same rounded box centered at `offset` in local space.
    pub fn with_offset(mut self, offset: V) -> Self {
        self.offset = offset;
        self
    }

    /// Half the size of its bounding box on each axis: `half_extents + radius`.
    pub fn outer_half_extents(&self) -> V {
        self.half_extents + V::splat(self.radius)
    }

    /// Whether its values are valid: finite, half extents and radius `>= 0`.
    pub fn is_valid(&self) -> bool {
        self.half_extents.is_finite()
            && V::ZERO.all_le(self.half_extents)
            && self.radius.is_finite()
            && self.radius >= 0.0
            && self.offset.is_finite()
    }
}
