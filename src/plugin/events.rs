//! Collision events: each is both a buffered [`Message`] and an [`EntityEvent`].

use bevy::platform::time::Instant;
use bevy::prelude::*;

use crate::Vector;
use crate::plugin::state::{EventBuffers, TickBuffers};
use crate::plugin::{AabbTree, CollidingEntities};

/// Two colliders started touching during the last tick.
///
/// - As a [`Message`]: one per pair and tick, read with `MessageReader<CollisionStarted>`.
///   `entity` is the one of smaller index (`Entity::index`), and a tick's messages are
///   sorted by `time_of_impact`, earliest first, and then by pair, so the same scene gives
///   the same sequence whatever the tree's shape.
/// - As an [`EntityEvent`]: triggered once for each of the two entities, with that entity
///   as `entity` and its partner as `other`, so `commands.entity(door).observe(..)` sees
///   every collision of the door with the door first. Global observers see both. They
///   come in the messages' order.
///
/// A fast object can start several contacts in one tick (two tiles, a wall and the enemy
/// behind it): the first start an entity sees in a tick, as a message or as an entity
/// event, is its earliest. A bullet that stops at its first hit acts on the first start it
/// sees and ignores the rest of the tick's (all of them are delivered, even after it has
/// queued its own despawn: despawn with `try_despawn`, or remember which bullets are
/// spent, as the `bullets` example does).
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::d2::*;
/// # use bevy::platform::collections::HashSet;
/// #[derive(Component)]
/// struct Bullet;
///
/// fn first_hits(
///     mut commands: Commands,
///     mut started: MessageReader<CollisionStarted>,
///     bullets: Query<(), With<Bullet>>,
/// ) {
///     let mut spent = HashSet::new();
///     for hit in started.read() {
///         for (bullet, target) in [(hit.entity, hit.other), (hit.other, hit.entity)] {
///             // The first start of a bullet in this tick is its earliest hit.
///             if bullets.contains(bullet) && spent.insert(bullet) {
///                 info!("{bullet} stopped at {target}, t = {:.2}", hit.time_of_impact);
///                 commands.entity(bullet).try_despawn();
///             }
///         }
///     }
/// }
/// # bevy::ecs::system::assert_is_system(first_hits);
/// ```
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
    /// Both are now [`Static`](crate::plugin::Static) (the marker was added to one of
    /// them while they touched): static colliders never pair with each other.
    BothStatic,
    /// The game's [`PairFilter`](crate::plugin::PairFilter) vetoed the pair.
    Filtered,
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

// The events stage (`CollisionSystems::Events`).

/// Triggers the batch of entity events in `events` (`start_events`, then `end_events`) in
/// one command: every start, then every end, each to its target only if it still exists
/// when the command runs. One command, because Bevy applies what observers queue (a
/// despawn, say) between commands: with a command per event, an observer despawning its
/// entity on a start would send its partner the end before the partner's own start.
///
/// The command takes the two buffers and gives them back to the resource once it has
/// triggered them, so that a steady stream of events allocates nothing.
pub(crate) fn trigger_batch<V: Vector>(commands: &mut Commands, events: &mut EventBuffers) {
    if events.start_events.is_empty() && events.end_events.is_empty() {
        return;
    }
    let mut started = core::mem::take(&mut events.start_events);
    let mut ended = core::mem::take(&mut events.end_events);
    commands.queue(move |world: &mut World| {
        // The contact sets first, so that observers see them up to date.
        for event in &started {
            if let Some(mut contacts) = world.get_mut::<CollidingEntities>(event.entity) {
                contacts.0.insert(event.other);
            }
        }
        for event in &ended {
            if let Some(mut contacts) = world.get_mut::<CollidingEntities>(event.entity) {
                contacts.0.remove(&event.other);
            }
        }
        for event in started.drain(..) {
            if world.get_entity(event.entity).is_ok() {
                world.trigger(event);
            }
        }
        for event in ended.drain(..) {
            if world.get_entity(event.entity).is_ok() {
                world.trigger(event);
            }
        }
        // Observers may have queued batches of their own meanwhile: keep the larger
        // buffers.
        if let Some(mut state) = world.get_resource_mut::<AabbTree<V>>() {
            let events = &mut state.bypass_change_detection().tick.events;
            if events.start_events.is_empty() && events.start_events.capacity() < started.capacity()
            {
                events.start_events = started;
            }
            if events.end_events.is_empty() && events.end_events.capacity() < ended.capacity() {
                events.end_events = ended;
            }
        }
    });
}

/// The order events name entities in: by index, then generation.
#[inline]
fn entity_order(e: Entity) -> (u32, u32) {
    (e.index_u32(), e.generation().to_bits())
}

/// The pair with the entity of smaller index first, and whether it was swapped. Messages
/// name pairs this way so that their content and order follow the entities, not the
/// tree's shape (which depends on insertion order).
#[inline]
fn canonical(a: Entity, b: Entity) -> (Entity, Entity, bool) {
    if entity_order(b) < entity_order(a) {
        (b, a, true)
    } else {
        (a, b, false)
    }
}

/// Writes the recorded ends as messages (one batch), sorted by pair, and appends their
/// entity events (one per entity) to the tick's `end_events`.
pub(crate) fn write_ended<V: Vector>(
    tick: &mut TickBuffers<V>,
    writer: &mut MessageWriter<CollisionEnded>,
) {
    for end in &mut tick.narrow.ended {
        (end.a, end.b, _) = canonical(end.a, end.b);
    }
    tick.narrow
        .ended
        .sort_by_key(|end| (entity_order(end.a), entity_order(end.b)));
    let first = tick.events.end_events.len();
    for end in tick.narrow.ended.drain(..) {
        tick.events.end_events.push(CollisionEnded {
            entity: end.a,
            other: end.b,
            reason: end.reason,
        });
        tick.events.end_events.push(CollisionEnded {
            entity: end.b,
            other: end.a,
            reason: end.reason,
        });
    }
    // The messages are the events with the smaller index first: every other one.
    writer.write_batch(tick.events.end_events[first..].iter().step_by(2).copied());
}

/// The system of [`CollisionSystems::Events`](crate::plugin::CollisionSystems::Events):
/// writes this tick's messages and triggers the entity events: starts before
/// ends (a pass-through gives both, in that order), the starts sorted by time of impact
/// and then by pair, the ends by pair, each with the entity of smaller index first, so
/// the same scene gives the same sequence whatever the tree's shape.
pub(crate) fn emit_events<V: Vector>(
    mut commands: Commands,
    mut state: ResMut<AabbTree<V>>,
    mut started: MessageWriter<CollisionStarted>,
    mut ended: MessageWriter<CollisionEnded>,
) {
    let start = Instant::now();
    let state = &mut *state;
    let tick = &mut state.tick;
    state.stats.started = tick.narrow.started.len();
    state.stats.ended += tick.narrow.ended.len();
    for s in &mut tick.narrow.started {
        let swapped;
        (s.a, s.b, swapped) = canonical(s.a, s.b);
        if swapped {
            s.normal = -s.normal;
        }
    }
    // Earliest first, then by pair: an entity's first start of a tick is its earliest
    // contact, whatever the pairs' order.
    tick.narrow.started.sort_unstable_by(|x, y| {
        x.time_of_impact.total_cmp(&y.time_of_impact).then_with(|| {
            (entity_order(x.a), entity_order(x.b)).cmp(&(entity_order(y.a), entity_order(y.b)))
        })
    });
    let first = tick.events.start_events.len();
    for s in tick.narrow.started.drain(..) {
        let n = s.normal.extend_to_3d();
        tick.events.start_events.push(CollisionStarted {
            entity: s.a,
            other: s.b,
            time_of_impact: s.time_of_impact,
            normal: n,
        });
        tick.events.start_events.push(CollisionStarted {
            entity: s.b,
            other: s.a,
            time_of_impact: s.time_of_impact,
            normal: -n,
        });
    }
    started.write_batch(tick.events.start_events[first..].iter().step_by(2).copied());
    write_ended(tick, &mut ended);
    trigger_batch::<V>(&mut commands, &mut tick.events);
    state.stats.events_ms = start.elapsed().as_secs_f32() * 1000.0;
}
