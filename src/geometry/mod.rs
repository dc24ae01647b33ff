//! Geometry: boxes, balls (spheres or circles), rounded boxes (capsules among them), rays,
//! and every test between them.
//!
//! All tests are generic over the dimension ([`Vector`](crate::Vector)) and
//! **inclusive**: shapes that touch overlap. Times returned by swept tests are
//! normalized to the step (`0..=1`); parameters returned by ray tests are in units of the
//! ray's direction. Functions ending in `_at` return such a time or parameter.
//!
//! | test | function |
//! |---|---|
//! | box vs box (min/max form) | [`BoundingBox::overlaps`] |
//! | box vs box (center/half-extents form) | [`overlaps_center_half_extents`] |
//! | point vs box | [`BoundingBox::contains_point`] |
//! | point vs ball | [`Ball::contains_point`] |
//! | ball vs ball | [`Ball::overlaps`] |
//! | ball vs box | [`Ball::overlaps_box`] (closest point by clamping) |
//! | two moving boxes | [`sweep_boxes`] (first and last time of overlap, normal) |
//! | two moving balls | [`sweep_balls`] |
//! | moving ball vs moving box | [`sweep_ball_box`] |
//! | ray vs box | [`Ray::box_hit_at`] (slab test) |
//! | ray vs ball | [`Ray::ball_hit_at`] |
//! | box cast | [`box_cast_at`] |
//! | contact of two shapes (push-out) | [`Shape::contact`], [`contact_boxes`], [`contact_balls`], [`contact_ball_box`], [`contact_box_ball`] |
//! | shape cast that blocks a motion | [`cast_shape`], [`cast_shapes`] |
//! | move and slide | [`move_and_slide`] |
//! | rounded boxes (boxes, balls, capsules): overlap, distance, closest points | [`RoundedBox`] (see [`rounded`] for a guide) |
//! | contact of two rounded boxes | [`contact_rounded`] |
//! | two moving rounded boxes | [`sweep_rounded`] |
//! | ray vs rounded box | [`Ray::rounded_box_hit_at`] |
//! | rounded box cast | [`rounded_cast_at`] |

mod ball;
mod bounding_box;
mod character;
mod contact;
mod ray;
pub mod rounded;
mod slide;
mod sweep;

pub use ball::Ball;
pub use bounding_box::{BoundingBox, overlaps_center_half_extents};
pub use character::{
    CharacterConfig, CharacterMove, CharacterWorld, move_character, one_way_blocks, one_way_push,
};
pub use contact::{
    Contact, Shape, contact_ball_box, contact_balls, contact_box_ball, contact_boxes,
};
pub use ray::Ray;
pub(crate) use ray::RaySlabs;
pub use rounded::{RoundedBox, contact_rounded, rounded_cast_at, sweep_rounded};
pub use slide::{CastHit, SlideConfig, SlideOutcome, cast_shape, cast_shapes, move_and_slide};
pub use sweep::{SweepInterval, box_cast_at, sweep_ball_box, sweep_balls, sweep_boxes};
pub(crate) use sweep::{point_slab, sweep_point, sweep_point_in};

/// The cosine of `x`: the platform's, or with the feature `enhanced-determinism` `libm`'s
/// (pure Rust), which gives the same bits on every CPU and operating system.
#[inline]
pub(crate) fn cos(x: f32) -> f32 {
    #[cfg(feature = "enhanced-determinism")]
    {
        libm::cosf(x)
    }
    #[cfg(not(feature = "enhanced-determinism"))]
    {
        x.cos()
    }
}
