//! Collision events: each is both a buffered [`Message`] and an [`EntityEvent`].

use bevy::prelude::*;

/// Two colliders started touching during the last tick.
///
/// - As a [`Message`]: one per pair and tick, read with `MessageReader<CollisionStarted>`.
///   `entity` is the one of smaller index (`Entity::index`), and a tick's messages are
///   sorted by pair, so the same scene gives the same sequence whatever the tree's shape.
/// - As an [`EntityEvent`]: triggered once for each of the two entities, with that entity
///   as `entity` and its partner as `other`, so `commands.entity(door).observe(..)` sees
///   every collision of the door with the door first. Global observers see both.
///
/// Every `CollisionStarted` is followed by exactly one [`CollisionEnded`] for the pair.
#[derive(Message, EntityEvent, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Debug, PartialEq)]
pub struct CollisionStarted {
    /// The entity this event is about (the observed entity for observers).
    #[event_target]
    pub entity: Entity,
    /// The entity it touched.
    pub other: Entity,
    /// When during the tick they first touched, from 0 (start of the tick, also when they
    /// already overlapped then) to 1 (end of the tick), from the swept test on both
    /// entities' displacements.
    pub time_of_impact: f32,
    /// Unit contact normal pointing from `entity` towards `other` (z = 0 in 2D); zero
    /// where none is defined (shapes at the same center).
    pub normal: Vec3,
}

/// Why a pair stopped touching.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
pub enum EndReason {
    /// They moved apart.
    Separated,
    /// One of them passed completely through the other within one tick: the matching
    /// [`CollisionStarted`] came in the same tick.
    PassedThrough,
    /// One of them was despawned, lost its collider component, or was disabled.
    Removed,
    /// Their [`CollisionLayers`](crate::plugin::CollisionLayers) stopped matching.
    LayersChanged,
    /// One of them got an invalid transform, size or velocity (NaN, infinite, negative)
    /// and left the tree until it is valid again.
    Invalid,
}

/// Two colliders stopped touching. Sent exactly once for every [`CollisionStarted`]: when
/// they separate, when one passes through the other in one tick, and when either one is
/// despawned, loses its collider, is disabled, becomes invalid or stops matching layers.
///
/// Delivered like [`CollisionStarted`]: one message per pair (smaller index first, sorted by
/// pair), and an entity event for each entity that still exists.
#[derive(Message, EntityEvent, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Debug, PartialEq)]
pub struct CollisionEnded {
    /// The entity this event is about.
    #[event_target]
    pub entity: Entity,
    /// The entity it stopped touching.
    pub other: Entity,
    /// Why.
    pub reason: EndReason,
}
