//! Contacts: how deep two overlapping shapes are, and the shortest way to separate them.

use crate::Vector;
use crate::geometry::{Ball, BoundingBox, RoundedBox, contact_rounded};

/// A box, a ball or a rounded box (a capsule among them): the collider shapes, for
/// functions that take any.
///
/// Boxes and balls have variants of their own so that their tests keep their fast paths;
/// a pair with a [`Shape::Rounded`] in it is tested as two rounded boxes (a box is a
/// rounded box of radius 0, a ball one of half extents 0; see
/// [`rounded`](crate::geometry::rounded)).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "plugin", derive(bevy::reflect::Reflect))]
pub enum Shape<V: Vector> {
    /// An axis-aligned box.
    Box(BoundingBox<V>),
    /// A ball (a sphere in 3D, a circle in 2D).
    Ball(Ball<V>),
    /// A rounded box: an axis-aligned capsule, or a box with rounded edges.
    Rounded(RoundedBox<V>),
}

impl<V: Vector> Default for Shape<V> {
    /// An empty box at the origin.
    fn default() -> Self {
        Shape::Box(BoundingBox::default())
    }
}

impl<V: Vector> Shape<V> {
    /// The shape's center.
    #[inline]
    pub fn center(&self) -> V {
        match self {
            Shape::Box(b) => b.center(),
            Shape::Ball(b) => b.center,
            Shape::Rounded(r) => r.center,
        }
    }

    /// The shape moved by `offset`.
    #[inline]
    pub fn translated(&self, offset: V) -> Self {
        match self {
            Shape::Box(b) => Shape::Box(b.translated(offset)),
            Shape::Ball(b) => Shape::Ball(b.translated(offset)),
            Shape::Rounded(r) => Shape::Rounded(r.translated(offset)),
        }
    }

    /// The smallest box enclosing the shape.
    #[inline]
    pub fn bounding_box(&self) -> BoundingBox<V> {
        match self {
            Shape::Box(b) => *b,
            Shape::Ball(b) => b.bounding_box(),
            Shape::Rounded(r) => r.bounding_box(),
        }
    }

    /// Whether the shape is valid ([`BoundingBox::is_valid`], [`Ball::is_valid`]).
    #[inline]
    pub fn is_valid(&self) -> bool {
        match self {
            Shape::Box(b) => b.is_valid(),
            Shape::Ball(b) => b.is_valid(),
            Shape::Rounded(r) => r.is_valid(),
        }
    }

    /// The point of the shape closest to `point`: `point` itself when it is inside (or
    /// on the surface).
    #[inline]
    pub fn closest_point(&self, point: V) -> V {
        match self {
            Shape::Box(b) => b.closest_point(point),
            Shape::Ball(b) => {
                let d = point - b.center;
                let len = d.dot(d).sqrt();
                if len <= b.radius {
                    point
                } else {
                    b.center + d * (b.radius / len)
                }
            }
            Shape::Rounded(r) => r.closest_point(point),
        }
    }

    /// The distance from `point` to the shape: 0 inside or on the surface.
    #[inline]
    pub fn distance_to_point(&self, point: V) -> f32 {
        match self {
            Shape::Box(b) => b.distance_squared_to_point(point).sqrt(),
            Shape::Ball(b) => {
                let d = point - b.center;
                (d.dot(d).sqrt() - b.radius).max(0.0)
            }
            Shape::Rounded(r) => r.distance_to_point(point),
        }
    }

    /// The distance between two shapes: the length of the shortest segment from one to
    /// the other, 0 when they overlap or touch.
    ///
    /// Two boxes: the gap on each axis (zero where their extents overlap) makes the
    /// segment. Two balls: the distance between the centers less the radii. A ball and
    /// a box: the distance from the ball's center to the box, less the radius.
    pub fn distance(&self, other: &Self) -> f32 {
        match (self, other) {
            (Shape::Box(a), Shape::Box(b)) => {
                let gap = (a.min - b.max).max(b.min - a.max).max(V::ZERO);
                gap.dot(gap).sqrt()
            }
            (Shape::Ball(a), Shape::Ball(b)) => {
                let d = b.center - a.center;
                (d.dot(d).sqrt() - a.radius - b.radius).max(0.0)
            }
            (Shape::Ball(a), Shape::Box(b)) | (Shape::Box(b), Shape::Ball(a)) => {
                (b.distance_squared_to_point(a.center).sqrt() - a.radius).max(0.0)
            }
            _ => self.to_rounded().distance(&other.to_rounded()),
        }
    }

    /// Whether two shapes overlap (inclusive: touching counts).
    #[inline]
    pub fn overlaps(&self, other: &Self) -> bool {
        match (self, other) {
            (Shape::Box(a), Shape::Box(b)) => a.overlaps(b),
            (Shape::Ball(a), Shape::Ball(b)) => a.overlaps(b),
            (Shape::Ball(a), Shape::Box(b)) | (Shape::Box(b), Shape::Ball(a)) => a.overlaps_box(b),
            _ => self.to_rounded().overlaps(&other.to_rounded()),
        }
    }

    /// The contact of two overlapping shapes, or `None` when they are apart: see
    /// [`Contact`] for its conventions, and the functions per pair ([`contact_boxes`],
    /// [`contact_balls`], [`contact_ball_box`], [`contact_box_ball`]) for how it is found.
    #[inline]
    pub fn contact(&self, other: &Self) -> Option<Contact<V>> {
        match (self, other) {
            (Shape::Box(a), Shape::Box(b)) => contact_boxes(a, b),
            (Shape::Ball(a), Shape::Ball(b)) => contact_balls(a, b),
            (Shape::Ball(a), Shape::Box(b)) => contact_ball_box(a, b),
            (Shape::Box(a), Shape::Ball(b)) => contact_box_ball(a, b),
            _ => contact_rounded(&self.to_rounded(), &other.to_rounded()),
        }
    }

    /// The shape as a rounded box: a box with radius 0 (its center and half extents), a
    /// ball with half extents 0.
    #[inline]
    pub fn to_rounded(&self) -> RoundedBox<V> {
        match self {
            Shape::Box(b) => RoundedBox::from_box(b),
            Shape::Ball(b) => RoundedBox::from(*b),
            Shape::Rounded(r) => *r,
        }
    }
}

/// The contact of two overlapping shapes `a` and `b`: the minimum push-out.
///
/// Conventions, the same for every pair:
/// - `normal` is a unit vector pointing from `a` towards `b`;
/// - `depth >= 0` is the length of the shortest translation that separates them:
///   moving `b` by `normal * depth` (or `a` by `-normal * depth`, or each by half) leaves
///   them touching, and no shorter translation does; shapes that only touch have depth 0;
/// - `point` is a point of both shapes: for two boxes the center of their intersection,
///   for two balls the middle of the part of the line between the centers that lies in
///   both, for a box and a ball the point of the box closest to the ball's center.
///
/// Where several directions separate equally well (coincident centers, a ball's center
/// at the center of a box), the lowest axis wins, in its positive direction; so two
/// coincident balls get the normal `+x`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "plugin", derive(bevy::reflect::Reflect))]
pub struct Contact<V: Vector> {
    /// Unit normal, from the first shape towards the second.
    pub normal: V,
    /// How far the second shape must move along `normal` to only touch the first.
    pub depth: f32,
    /// A point of both shapes where they meet.
    pub point: V,
}

impl<V: Vector> Contact<V> {
    /// The same contact seen from the other shape: the normal reversed.
    #[inline]
    pub fn flipped(self) -> Self {
        Self {
            normal: -self.normal,
            ..self
        }
    }
}

/// The unit vector along `axis`, with the sign of `sign`.
fn axis_normal<V: Vector>(axis: usize, sign: f32) -> V {
    let mut n = V::ZERO;
    n.set_axis(axis, if sign < 0.0 { -1.0 } else { 1.0 });
    n
}

/// The contact of two boxes ([`Contact`]), or `None` if they are apart or invalid.
///
/// Moving `b` by `t` overlaps `a` while `t` lies in the box `[a.min - b.max, a.max - b.min]`
/// (their Minkowski difference), which holds 0; the shortest way out is through its
/// nearest face. On each axis `b` leaves by moving `a.max - b.min` towards `+` or
/// `b.max - a.min` towards `-`; the depth is the smallest of these `2 * DIM` distances.
/// The two on an axis differ by twice the offset of the centers, so `b` goes out on the
/// side of its center (the `+` side when the centers agree).
pub fn contact_boxes<V: Vector>(a: &BoundingBox<V>, b: &BoundingBox<V>) -> Option<Contact<V>> {
    if !a.is_valid() || !b.is_valid() || !a.overlaps(b) {
        return None;
    }
    let (mut depth, mut normal) = (f32::INFINITY, V::ZERO);
    for axis in 0..V::DIM {
        let plus = a.max.axis(axis) - b.min.axis(axis);
        let minus = b.max.axis(axis) - a.min.axis(axis);
        let (d, sign) = if plus <= minus {
            (plus, 1.0)
        } else {
            (minus, -1.0)
        };
        if d < depth {
            depth = d;
            normal = axis_normal(axis, sign);
        }
    }
    let point = (a.min.max(b.min) + a.max.min(b.max)) * 0.5;
    Some(Contact {
        normal,
        depth: depth.max(0.0),
        point,
    })
}

/// The contact of two balls ([`Contact`]), or `None` if they are apart or invalid.
///
/// The normal is the direction between the centers (`+x` when they coincide), the depth
/// the sum of the radii less the distance between the centers.
pub fn contact_balls<V: Vector>(a: &Ball<V>, b: &Ball<V>) -> Option<Contact<V>> {
    if !a.is_valid() || !b.is_valid() || !a.overlaps(b) {
        return None;
    }
    let d = b.center - a.center;
    let len = d.dot(d).sqrt();
    let normal = if len > 0.0 {
        d / len
    } else {
        axis_normal(0, 1.0)
    };
    let depth = (a.radius + b.radius - len).max(0.0);
    // Along the normal from a's center, a covers `-ra..=ra` and b `len - rb..=len + rb`.
    let lo = (-a.radius).max(len - b.radius);
    let hi = a.radius.min(len + b.radius);
    let point = a.center + normal * (0.5 * (lo + hi));
    Some(Contact {
        normal,
        depth,
        point,
    })
}

/// The contact of a box `a` and a ball `b` ([`Contact`]: the normal points from the box
/// towards the ball), or `None` if they are apart or invalid.
///
/// Moving the ball by `t` overlaps the box while its center lies within the radius of the
/// box (the box with rounded edges and corners), which is convex. Two cases:
/// - the center is outside the box: the nearest way out is straight away from the box's
///   closest point `q`, by the radius less the distance to `q`;
/// - the center is inside the box or on its boundary: out through the nearest face, by
///   the distance to that face plus the radius (the lowest axis wins ties, then the `+`
///   face).
pub fn contact_box_ball<V: Vector>(a: &BoundingBox<V>, b: &Ball<V>) -> Option<Contact<V>> {
    if !a.is_valid() || !b.is_valid() || !b.overlaps_box(a) {
        return None;
    }
    let c = b.center;
    let q = a.closest_point(c);
    let d = c - q;
    let len = d.dot(d).sqrt();
    let (normal, depth) = if len > 0.0 {
        (d / len, b.radius - len)
    } else {
        let (mut face, mut normal) = (f32::INFINITY, V::ZERO);
        for axis in 0..V::DIM {
            let plus = a.max.axis(axis) - c.axis(axis);
            let minus = c.axis(axis) - a.min.axis(axis);
            let (f, sign) = if plus <= minus {
                (plus, 1.0)
            } else {
                (minus, -1.0)
            };
            if f < face {
                face = f;
                normal = axis_normal(axis, sign);
            }
        }
        (normal, face + b.radius)
    };
    Some(Contact {
        normal,
        depth: depth.max(0.0),
        point: q,
    })
}

/// The contact of a ball `a` and a box `b` ([`Contact`]: the normal points from the ball
/// towards the box), or `None`: [`contact_box_ball`] with the normal reversed.
#[inline]
pub fn contact_ball_box<V: Vector>(a: &Ball<V>, b: &BoundingBox<V>) -> Option<Contact<V>> {
    contact_box_ball(b, a).map(Contact::flipped)
}
