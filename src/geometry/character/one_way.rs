//! The one-way rule: a collider open from every side but one face, which blocks only a
//! shape coming onto that face from outside.

use crate::Vector;
use crate::geometry::Shape;

use super::reach;

/// How deep `shape` may sink into a one-way collider and still count as on top of it: a
/// twentieth of its reach along the normal (rounding, and a platform that rose a little
/// into its feet since the last tick).
fn one_way_tolerance<V: Vector>(shape: &Shape<V>, normal: V) -> f32 {
    0.05 * reach(shape, normal)
}

/// How deep `shape` lies below the top (along `normal`) of `platform`: negative when it
/// is wholly above.
fn depth_below_top<V: Vector>(shape: &Shape<V>, platform: &Shape<V>, normal: V) -> f32 {
    let top = platform.center().dot(normal) + reach(platform, normal);
    let bottom = shape.center().dot(normal) - reach(shape, normal);
    top - bottom
}

/// Whether a one-way collider `platform`, open from every side but its `normal` face
/// (unit length: `up` for a platform landed on from above), blocks `shape` moving by
/// `motion`: only a motion against `normal` that starts on top of it (wholly on the
/// `normal` side, or sunk into it by at most a twentieth of the shape's reach along
/// `normal`). A shape jumping up through it, walking in from the side or partly inside
/// it passes.
pub fn one_way_blocks<V: Vector>(
    shape: &Shape<V>,
    motion: V,
    platform: &Shape<V>,
    normal: V,
) -> bool {
    motion.dot(normal) < 0.0
        && depth_below_top(shape, platform, normal) <= one_way_tolerance(shape, normal)
}

/// The push out of a one-way collider `platform` (see [`one_way_blocks`]): along
/// `normal`, by the depth, when `shape` overlaps it and is on top of it; zero otherwise,
/// so a shape passing through it is never pushed.
pub fn one_way_push<V: Vector>(shape: &Shape<V>, platform: &Shape<V>, normal: V) -> V {
    let depth = depth_below_top(shape, platform, normal);
    if depth > 0.0 && depth <= one_way_tolerance(shape, normal) && shape.overlaps(platform) {
        normal * depth
    } else {
        V::ZERO
    }
}
