//! Collision events: each is both a buffered [`Message`] and an [`EntityEvent`].

use bevy::ecs::system::SystemParam;
use bevy::platform::time::Instant;
use bevy::prelude::*;

use crate::Vector;
use crate::plugin::state::{EndRecord, EntityEventBatch, TickBuffers};
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
pub struct CollisionStarted<V: Vector> {
    /// The entity this event is about (the observed entity for observers).
    #[event_target]
    pub entity: Entity,
    /// The entity it touched.
    pub other: Entity,
    /// When during the tick they first touched, from 0 (start of the tick, also when they
    /// already overlapped then) to 1 (end of the tick), from the swept test on both
    /// entities' displacements.
    pub time_of_impact: f32,
    /// Unit contact normal pointing from `entity` towards `other` (a `Vec2` in 2D); zero
    /// where none is defined (shapes at the same center).
    pub normal: V,
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
    /// One of them jumped: it got [`Teleported`](crate::plugin::Teleported) (or an
    /// ancestor did). A jump ends every contact of the collider, in the tick that reads the
    /// marker and before that tick's starts; the contacts it has at its new place, or
    /// meets in its motion after the jump, start again in the same tick.
    Teleported,
}

/// Two colliders stopped touching. Sent exactly once for every [`CollisionStarted`]: when
/// they separate, when one passes through the other in one tick, and when either one is
/// despawned, loses its collider, is disabled, becomes invalid or stops matching layers.
///
/// Delivered like [`CollisionStarted`]: one message per pair (smaller index first, sorted by
/// pair within each group of [the order](CollisionMessage#the-order)), and an entity event
/// for each entity that still exists.
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

/// Every collision message, both kinds, in one stream: the order in which the contacts
/// started and ended. Applying them in the order read (insert the pair on `Started`,
/// remove it on `Ended`) gives exactly [`AabbTree::touching_pairs`] and every
/// [`CollidingEntities`] after every tick, whenever and however often a system reads.
///
/// [`CollisionStarted`] and [`CollisionEnded`] carry the same messages split by kind;
/// two readers of those cannot tell how the kinds interleave (a collider removed and put
/// back in one frame gives its pair an end, then a start), so a game that keeps its own
/// record of contacts reads this stream instead.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy::platform::collections::HashSet;
/// # use bevy_aabb_tree::d2::*;
/// #[derive(Resource, Default)]
/// struct Touching(HashSet<(Entity, Entity)>);
///
/// fn follow(mut messages: MessageReader<CollisionMessage>, mut touching: ResMut<Touching>) {
///     for message in messages.read() {
///         match message {
///             CollisionMessage::Started(s) => touching.0.insert((s.entity, s.other)),
///             CollisionMessage::Ended(e) => touching.0.remove(&(e.entity, e.other)),
///         };
///     }
/// }
/// # bevy::ecs::system::assert_is_system(follow);
/// ```
///
/// # The order
///
/// 1. Ends of contacts broken between ticks (a despawn, a shape removed, [`Disabled`],
///    [`TrackedCollider`] removed): written at once, when the observers see the change.
/// 2. In each tick, the ends of contacts broken before its motion is tested: colliders
///    left out (invalid values, both shapes gone), teleports ([`EndReason::Teleported`]),
///    pairs that became both static. Sorted by pair.
/// 3. The tick's starts, earliest first (by `time_of_impact`), then by pair.
/// 4. The tick's other ends (separated, passed through, layers, filtered, and removals
///    made after the narrow phase), sorted by pair.
///
/// A pair appears at most once in each group. Entity events are triggered in the same
/// order, and each message names the entity of smaller index as `entity`.
///
/// [`Disabled`]: bevy::ecs::entity_disabling::Disabled
/// [`TrackedCollider`]: crate::plugin::TrackedCollider
#[derive(Message, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Debug, PartialEq)]
pub enum CollisionMessage<V: Vector> {
    /// A contact started (the same message as [`CollisionStarted`]).
    Started(CollisionStarted<V>),
    /// A contact ended (the same message as [`CollisionEnded`]).
    Ended(CollisionEnded),
}

/// The writers of the three collision messages.
#[derive(SystemParam)]
pub(crate) struct CollisionWriters<'w, V: Vector> {
    started: MessageWriter<'w, CollisionStarted<V>>,
    ended: MessageWriter<'w, CollisionEnded>,
    all: MessageWriter<'w, CollisionMessage<V>>,
}

impl<V: Vector> CollisionWriters<'_, V> {
    fn write_ended(&mut self, events: &[CollisionEnded]) {
        // The messages are the events with the smaller index first: every other one.
        let messages = events.iter().step_by(2).copied();
        self.ended.write_batch(messages.clone());
        self.all.write_batch(messages.map(CollisionMessage::Ended));
    }

    fn write_started(&mut self, events: &[CollisionStarted<V>]) {
        let messages = events.iter().step_by(2).copied();
        self.started.write_batch(messages.clone());
        self.all
            .write_batch(messages.map(CollisionMessage::Started));
    }
}

// The events stage (`CollisionSystems::Events`).

/// Triggers the batch of entity events in `events` (`broken_events`, `start_events`, then
/// `end_events`: [the order](CollisionMessage#the-order)) in one command, each to its
/// target only if it still exists when the command runs. One command, because Bevy
/// applies what observers queue (a despawn, say) between commands: with a command per
/// event, an observer despawning its entity on a start would send its partner the end
/// before the partner's own start.
///
/// The command takes the buffers and gives them back to the resource once it has
/// triggered them, so that a steady stream of events allocates nothing.
pub(crate) fn trigger_batch<V: Vector>(commands: &mut Commands, events: &mut EntityEventBatch<V>) {
    if events.broken_events.is_empty()
        && events.start_events.is_empty()
        && events.end_events.is_empty()
    {
        return;
    }
    let mut broken = core::mem::take(&mut events.broken_events);
    let mut started = core::mem::take(&mut events.start_events);
    let mut ended = core::mem::take(&mut events.end_events);
    commands.queue(move |world: &mut World| {
        // The contact sets first, in the events' order, so that observers see them up to
        // date.
        for event in &broken {
            if let Some(mut contacts) = world.get_mut::<CollidingEntities>(event.entity) {
                contacts.0.remove(&event.other);
            }
        }
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
        for event in broken.drain(..) {
            if world.get_entity(event.entity).is_ok() {
                world.trigger(event);
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
            let events = &mut state.bypass_change_detection().tick.entity_events;
            for (kept, used) in [
                (&mut events.broken_events, broken),
                (&mut events.end_events, ended),
            ] {
                if kept.is_empty() && kept.capacity() < used.capacity() {
                    *kept = used;
                }
            }
            if events.start_events.is_empty() && events.start_events.capacity() < started.capacity()
            {
                events.start_events = started;
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

/// Sorts the recorded ends by pair (smaller index first) and turns them into entity
/// events, two per end (the message's first), appended to `out`. Returns how many ends
/// there were.
fn end_events(records: &mut Vec<EndRecord>, out: &mut Vec<CollisionEnded>) -> usize {
    for end in records.iter_mut() {
        (end.a, end.b, _) = canonical(end.a, end.b);
    }
    records.sort_by_key(|end| (entity_order(end.a), entity_order(end.b)));
    let count = records.len();
    for end in records.drain(..) {
        out.push(CollisionEnded {
            entity: end.a,
            other: end.b,
            reason: end.reason,
        });
        out.push(CollisionEnded {
            entity: end.b,
            other: end.a,
            reason: end.reason,
        });
    }
    count
}

/// Delivers the ends of contacts broken before the tick's starts
/// ([`EndBuffers::broken`](crate::plugin::state::TickBuffers)): their messages now, their
/// entity events with the batch.
fn write_broken<V: Vector>(tick: &mut TickBuffers<V>, writers: &mut CollisionWriters<V>) {
    let first = tick.entity_events.broken_events.len();
    tick.ends.delivered += end_events(&mut tick.ends.broken, &mut tick.entity_events.broken_events);
    writers.write_ended(&tick.entity_events.broken_events[first..]);
}

/// Delivers at once the ends of a removal between ticks (a despawn, a shape removed,
/// `Disabled`): messages written, entity events triggered by one command. A removal
/// between the narrow phase and the events stage waits for the events stage instead,
/// which delivers it after the tick's starts.
pub(crate) fn deliver_removal<V: Vector>(
    tick: &mut TickBuffers<V>,
    writers: &mut CollisionWriters<V>,
    commands: &mut Commands,
) {
    if !tick.ends.after_tests {
        write_broken(tick, writers);
        trigger_batch::<V>(commands, &mut tick.entity_events);
    }
}

/// The system of [`CollisionSystems::Events`](crate::plugin::CollisionSystems::Events):
/// writes this tick's messages and triggers the entity events in
/// [the order](CollisionMessage#the-order): the ends of contacts broken before the
/// tick's motion, the starts (sorted by time of impact and then by pair), then the ends
/// of the tick's tests (by pair; a pass-through gives a start and an end, in that order),
/// each with the entity of smaller index first, so the same scene gives the same
/// sequence whatever the tree's shape.
pub(crate) fn emit_events<V: Vector>(
    mut commands: Commands,
    mut state: ResMut<AabbTree<V>>,
    mut writers: CollisionWriters<V>,
) {
    let start = Instant::now();
    let state = &mut *state;
    let tick = &mut state.tick;
    write_broken(tick, &mut writers);
    state.stats.started = tick.starts.started.len();
    for s in &mut tick.starts.started {
        let swapped;
        (s.a, s.b, swapped) = canonical(s.a, s.b);
        if swapped {
            s.normal = -s.normal;
        }
    }
    // Earliest first, then by pair: an entity's first start of a tick is its earliest
    // contact, whatever the pairs' order.
    tick.starts.started.sort_unstable_by(|x, y| {
        x.time_of_impact.total_cmp(&y.time_of_impact).then_with(|| {
            (entity_order(x.a), entity_order(x.b)).cmp(&(entity_order(y.a), entity_order(y.b)))
        })
    });
    let first = tick.entity_events.start_events.len();
    for s in tick.starts.started.drain(..) {
        let n = s.normal;
        tick.entity_events.start_events.push(CollisionStarted {
            entity: s.a,
            other: s.b,
            time_of_impact: s.time_of_impact,
            normal: n,
        });
        tick.entity_events.start_events.push(CollisionStarted {
            entity: s.b,
            other: s.a,
            time_of_impact: s.time_of_impact,
            normal: -n,
        });
    }
    writers.write_started(&tick.entity_events.start_events[first..]);
    let first = tick.entity_events.end_events.len();
    tick.ends.delivered += end_events(&mut tick.ends.tested, &mut tick.entity_events.end_events);
    writers.write_ended(&tick.entity_events.end_events[first..]);
    tick.ends.after_tests = false;
    state.stats.ended = core::mem::take(&mut tick.ends.delivered);
    trigger_batch::<V>(&mut commands, &mut tick.entity_events);
    state.stats.events_ms = start.elapsed().as_secs_f32() * 1000.0;
}
