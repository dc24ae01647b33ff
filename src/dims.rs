//! Names without the dimension parameter: `use bevy_aabb_tree::d2::*;` in a 2D game,
//! `use bevy_aabb_tree::d3::*;` in a 3D one, and no type is ever written `::<Vec2>`.
//!
//! Each module holds the crate's generic types fixed to its dimension (`d2::Aabb` is
//! `Aabb<Vec2>`), and the names that do not depend on the dimension, so one glob import
//! is enough. The generic names stay available in [`crate::prelude`] for code written
//! once for both dimensions.

/// Declares one dimension's module.
macro_rules! dimension {
    ($module:ident, $v:ty, $doc:literal) => {
        #[doc = $doc]
        pub mod $module {
            /// A box by its minimum and maximum corners.
            pub type BoundingBox = crate::geometry::BoundingBox<$v>;
            /// A sphere (a circle in 2D).
            pub type Ball = crate::geometry::Ball<$v>;
            /// A ray: origin and direction.
            pub type Ray = crate::geometry::Ray<$v>;
            /// The dynamic AABB tree, with payload `T`.
            pub type DynamicTree<T> = crate::tree::DynamicTree<$v, T>;
            /// A box or a ball: what casts and `move_and_slide` move.
            pub type Shape = crate::geometry::Shape<$v>;
            /// A contact between two shapes: normal, depth, point.
            pub type Contact = crate::geometry::Contact<$v>;
            /// A shape cast's hit.
            pub type CastHit<Id = ()> = crate::geometry::CastHit<$v, Id>;
            /// The settings of `move_and_slide`.
            pub type SlideConfig = crate::geometry::SlideConfig<$v>;
            /// What `move_and_slide` did.
            pub type SlideOutcome<Id> = crate::geometry::SlideOutcome<$v, Id>;
            /// The settings of a character's motion.
            pub type CharacterConfig = crate::geometry::CharacterConfig<$v>;
            /// What `move_character` did.
            pub type CharacterMove<Id> = crate::geometry::CharacterMove<$v, Id>;

            #[cfg(feature = "plugin")]
            pub use crate::plugin::{
                AskPairFilter, CapsuleAxis, CharacterSystems, CollidingEntities, CollisionConfig,
                CollisionEnded, CollisionLayer, CollisionLayers, CollisionSystems, EndReason,
                NotIntegrated, PairFilter, QueryFilter, RestoringWorld, Sensor, Static,
                StaticChangeDetection, StepStats, Teleported, VelocitySystems,
            };
            /// Rollback with `bevy_ggrs` for this dimension.
            #[cfg(feature = "ggrs")]
            pub type AabbTreeRollbackPlugin = crate::plugin::AabbTreeRollbackPlugin<$v>;

            /// Two colliders of this dimension started touching (a message and an entity
            /// event; the normal is a vector of this dimension).
            #[cfg(feature = "plugin")]
            pub type CollisionStarted = crate::plugin::CollisionStarted<$v>;
            /// Both kinds of collision message of this dimension in one stream, in the order
            /// they happened.
            #[cfg(feature = "plugin")]
            pub type CollisionMessage = crate::plugin::CollisionMessage<$v>;
            /// The collision plugin of this dimension.
            #[cfg(feature = "plugin")]
            pub type AabbTreePlugin = crate::plugin::AabbTreePlugin<$v>;
            /// Moves entities by their `Velocity` (opt-in).
            #[cfg(feature = "plugin")]
            pub type VelocityPlugin = crate::plugin::VelocityPlugin<$v>;
            /// A box collider in the entity's local space.
            #[cfg(feature = "plugin")]
            pub type Aabb = crate::plugin::Aabb<$v>;
            /// A sphere (circle) collider in the entity's local space.
            #[cfg(feature = "plugin")]
            pub type BoundingSphere = crate::plugin::BoundingSphere<$v>;
            /// A capsule collider in the entity's local space.
            #[cfg(feature = "plugin")]
            pub type Capsule = crate::plugin::Capsule<$v>;
            /// A box collider with rounded edges in the entity's local space.
            #[cfg(feature = "plugin")]
            pub type RoundedAabb = crate::plugin::RoundedAabb<$v>;
            /// Linear velocity in world units per second.
            #[cfg(feature = "plugin")]
            pub type Velocity = crate::plugin::Velocity<$v>;
            /// What the plugin keeps for each collider.
            #[cfg(feature = "plugin")]
            pub type TrackedCollider = crate::plugin::TrackedCollider<$v>;
            /// The collision world resource.
            #[cfg(feature = "plugin")]
            pub type AabbTree = crate::plugin::AabbTree<$v>;
            /// Spatial queries, as a system parameter.
            #[cfg(feature = "plugin")]
            pub type SpatialQuery<'w> = crate::plugin::SpatialQuery<'w, $v>;
            /// A ray or cast hit.
            #[cfg(feature = "plugin")]
            pub type ShapeHit = crate::plugin::ShapeHit<$v>;
            /// The point of a collider nearest to a query point.
            #[cfg(feature = "plugin")]
            pub type PointProjection = crate::plugin::PointProjection<$v>;
            /// A collider's world shape.
            #[cfg(feature = "plugin")]
            pub type WorldShape = crate::plugin::WorldShape<$v>;
            /// Contacts and push-out, as a system parameter.
            #[cfg(feature = "plugin")]
            pub type Contacts<'w, 's> = crate::plugin::Contacts<'w, 's, $v>;
            /// A collider that blocks from one side only.
            #[cfg(feature = "plugin")]
            pub type OneWay = crate::plugin::OneWay<$v>;
            /// The character controller's plugin of this dimension.
            #[cfg(feature = "plugin")]
            pub type CharacterPlugin = crate::plugin::CharacterPlugin<$v>;
            /// A character moved by `CharacterPlugin`.
            #[cfg(feature = "plugin")]
            pub type CharacterController = crate::plugin::CharacterController<$v>;
            /// What a character's last move met.
            #[cfg(feature = "plugin")]
            pub type CharacterState = crate::plugin::CharacterState<$v>;
            /// A swept hit of the last tick.
            #[cfg(feature = "plugin")]
            pub type PassThrough = crate::plugin::PassThrough<$v>;
            /// The picking backend of this dimension.
            #[cfg(feature = "picking")]
            pub type AabbTreePickingPlugin = crate::plugin::AabbTreePickingPlugin<$v>;
            #[cfg(feature = "picking")]
            pub use crate::plugin::{
                AabbTreePickable, AabbTreePickingFilter, AabbTreePickingSettings,
            };
            /// The debug overlay of this dimension.
            #[cfg(feature = "gizmos")]
            pub type AabbTreeDebugPlugin = crate::debug::AabbTreeDebugPlugin<$v>;
            #[cfg(feature = "gizmos")]
            pub use crate::debug::{CollisionGizmos, DebugOverlay};

            /// Builds a `Velocity` (a type alias cannot be called like the tuple struct
            /// it names): `Velocity(direction * speed)`. To read one, use its field,
            /// `velocity.0` (a pattern `let Velocity(v) = velocity` needs the generic
            /// `bevy_aabb_tree::Velocity`; through this alias write
            /// `let Velocity { 0: v } = velocity`).
            #[cfg(feature = "plugin")]
            #[allow(non_snake_case)]
            pub const fn Velocity(velocity: $v) -> Velocity {
                crate::plugin::Velocity(velocity)
            }
        }
    };
}

dimension!(
    d2,
    glam::Vec2,
    "2D names, with no dimension parameter: `use bevy_aabb_tree::d2::*;`.\n\n\
     Each generic type of the crate fixed to `Vec2` (`d2::Aabb` is `Aabb<Vec2>`), and the \
     names that do not depend on the dimension, so one glob import is enough."
);
dimension!(
    d3,
    glam::Vec3,
    "3D names, with no dimension parameter: `use bevy_aabb_tree::d3::*;`.\n\n\
     Each generic type of the crate fixed to `Vec3` (`d3::Aabb` is `Aabb<Vec3>`), and the \
     names that do not depend on the dimension, so one glob import is enough."
);
