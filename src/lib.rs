#![cfg_attr(feature = "plugin", doc = include_str!("crate_doc.md"))]
#![cfg_attr(
    not(feature = "plugin"),
    doc = "Collision detection without a physics engine: geometry and a dynamic AABB tree \
           (this build has no Bevy plugin; enable the `plugin` feature for it). The \
           [`guide`] shows [the tree without Bevy](guide::tree_without_bevy)."
)]
// docs.rs builds with every feature and `--cfg docsrs`: each feature-gated item is shown
// with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]
// Two exceptions, allowed where they stand: the prefetch hint of `tree::prefetch` and the
// arena shared by the parallel refit's tasks (`tree::refit::parallel`).
#![deny(unsafe_code)]
// Nothing that comes from user data may panic: errors are returned or logged instead.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(feature = "gizmos")]
pub mod debug;
mod dims;
pub mod geometry;
pub mod guide;
#[cfg(feature = "plugin")]
pub mod plugin;
pub mod tree;
mod vector;

pub use dims::{d2, d3};

pub use geometry::{Ball, BoundingBox, Ray, RoundedBox, SweepInterval};
pub use glam::{Vec2, Vec3};

// The README's examples are compiled as doc tests too.
#[cfg(all(doctest, feature = "plugin"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
pub use tree::{BatchThresholds, DynamicTree, NodeId, ProxyId, RayHit, TreeError, TreeStats};
pub use vector::Vector;

#[cfg(feature = "plugin")]
pub use plugin::{
    Aabb, AabbTree, AabbTreePlugin, AskPairFilter, BoundingSphere, Capsule, CapsuleAxis,
    CharacterController, CharacterPlugin, CharacterState, CharacterSystems, CollidingEntities,
    CollisionConfig, CollisionEnded, CollisionLayer, CollisionLayers, CollisionStarted,
    CollisionSystems, Contacts, EndReason, NotIntegrated, OneWay, PairFilter, QueryFilter,
    RoundedAabb, Sensor, SpatialQuery, Static, StaticChangeDetection, Teleported, TrackedCollider,
    Velocity, VelocityPlugin, VelocitySystems,
};

/// Everything a game needs: `use bevy_aabb_tree::prelude::*;`.
pub mod prelude {
    pub use crate::geometry::{
        Ball, BoundingBox, CastHit, CharacterConfig, CharacterMove, Contact, Ray, RoundedBox,
        Shape, SlideConfig, SlideOutcome,
    };
    #[cfg(feature = "ggrs")]
    pub use crate::plugin::AabbTreeRollbackPlugin;
    #[cfg(feature = "plugin")]
    pub use crate::plugin::RestoringWorld;
    #[cfg(feature = "plugin")]
    pub use crate::plugin::{
        Aabb, AabbTree, AabbTreePlugin, AskPairFilter, BoundingSphere, Capsule, CapsuleAxis,
        CharacterController, CharacterPlugin, CharacterState, CharacterSystems, CollidingEntities,
        CollisionConfig, CollisionEnded, CollisionLayer, CollisionLayers, CollisionMessage,
        CollisionStarted, CollisionSystems, Contacts, EndReason, NotIntegrated, OneWay, PairFilter,
        PassThrough, PointProjection, QueryFilter, RoundedAabb, Sensor, ShapeHit, SpatialQuery,
        Static, StaticChangeDetection, StepStats, Teleported, TrackedCollider, Velocity,
        VelocityPlugin, VelocitySystems, WorldShape,
    };
}
