//! Spheres (circles in 2D).

use crate::Vector;
use crate::geometry::BoundingBox;

/// A sphere in 3D, a circle in 2D: every point within `radius` of `center`.
///
/// Tests are inclusive (touching counts). A radius of zero is a point and is valid; a
/// negative or non-finite radius is not ([`Ball::is_valid`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "plugin", derive(bevy::reflect::Reflect))]
pub struct Ball<V: Vector> {
    /// The center.
    pub center: V,
    /// The radius, `>= 0`.
    pub radius: f32,
}

impl<V: Vector> Ball<V> {
    /// The ball with `center` and `radius`.
    #[inline]
    pub fn new(center: V, radius: f32) -> Self {
        Self { center, radius }
    }

    /// Finite center and a finite radius `>= 0`.
    #[inline]
    pub fn is_valid(&self) -> bool {
        self.center.is_finite() && self.radius.is_finite() && self.radius >= 0.0
    }

    /// The smallest box enclosing the ball.
    #[inline]
    pub fn bounding_box(&self) -> BoundingBox<V> {
        BoundingBox::from_center_half_extents(self.center, V::splat(self.radius))
    }

    /// Whether `point` is inside or on the surface: `|p - c|² <= r²`.
    #[inline]
    pub fn contains_point(&self, point: V) -> bool {
        let d = point - self.center;
        d.dot(d) <= self.radius * self.radius
    }

    /// Whether two balls overlap: the distance between centers is at most the sum of the
    /// radii (compared squared, so no square root).
    #[inline]
    pub fn overlaps(&self, other: &Self) -> bool {
        let d = other.center - self.center;
        let r = self.radius + other.radius;
        d.dot(d) <= r * r
    }

    /// Whether the ball overlaps a box: the point of the box closest to the center (found
    /// by clamping the center to the box) is within the radius.
    #[inline]
    pub fn overlaps_box(&self, aabb: &BoundingBox<V>) -> bool {
        aabb.distance_squared_to_point(self.center) <= self.radius * self.radius
    }

    /// The ball moved by `offset`.
    #[inline]
    pub fn translated(&self, offset: V) -> Self {
        Self::new(self.center + offset, self.radius)
    }
}
