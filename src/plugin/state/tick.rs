//! The buffers of one tick, grouped by the stage that fills each part. They are kept
//! between ticks, so that a steady stream of moves, pairs and events allocates nothing.

use bevy::prelude::*;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::plugin::{CollisionEnded, CollisionStarted, EndReason};
use crate::tree::ProxyId;

use super::{Body, Key, PassThrough};

/// A pair whose contact started this tick, before the events stage names it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StartRecord<V: Vector> {
    pub a: Entity,
    pub b: Entity,
    pub time_of_impact: f32,
    /// From `a` towards `b`.
    pub normal: V,
}

/// A pair whose contact ended since the last events stage.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EndRecord {
    pub a: Entity,
    pub b: Entity,
    pub reason: EndReason,
}

/// Buffers of one tick, named by what they carry: the colliders the prepare stage
/// processed and moved (for the broad and narrow phases), the broad phase's pair search,
/// the contacts that started (for the events stage), the ends in their order, and a
/// batch of entity events.
#[derive(Clone, Default)]
pub(crate) struct TickBuffers<V: Vector> {
    pub colliders: ColliderLists<V>,
    pub pair_search: PairSearchLists,
    pub starts: StartLists<V>,
    pub ends: EndBuffers,
    pub entity_events: EntityEventBatch<V>,
}

/// What [`CollisionSystems::Prepare`](crate::plugin::CollisionSystems::Prepare) fills:
/// the colliders it processed and moved, for the broad and narrow phases, and its own
/// lists and counts from one tick to the next.
#[derive(Clone, Default)]
pub(crate) struct ColliderLists<V: Vector> {
    /// The prepare stage's count of runs, which marks the colliders it processed.
    pub number: u32,
    /// Colliders processed over all ticks (see [`Body::processed_at`](super::Body)).
    pub processed_total: u64,
    /// [`Self::processed_total`] before this tick.
    pub processed_before: u64,
    /// Colliders to process at the next tick whatever their change ticks say: those that
    /// moved at this one (to read as still) or were left out for invalid values, and the
    /// static colliders the observers list under `StaticChangeDetection::OnInsert`.
    /// With the key each had then, which tells at a glance whether this tick has
    /// processed it already.
    pub revisit: Vec<(Entity, Option<Key>)>,
    /// The list [`Self::revisit`] held at the start of the last tick, emptied: kept for
    /// its room, where the next tick lists its colliders (in a busy scene every moving
    /// one), so that the list does not grow from nothing at every tick.
    pub revisit_spare: Vec<(Entity, Option<Key>)>,
    /// Static proxies whose colliders are gone (removed by the observers or by the
    /// stages), leaving the static tree at the next prepare stage.
    pub dead_static: Vec<ProxyId>,
    /// The moves of the moving colliders processed this tick, handed to the tree in one
    /// batch at the end of the stage (`DynamicTree::move_proxies_on`), which decides which
    /// change their fat boxes.
    pub to_move: Vec<TreeMove<V>>,
    /// New static colliders without pairs to carry, put in the static tree together at the
    /// end of the stage (`DynamicTree::create_proxies`: one build for a level spawned at
    /// once), with the body each gets then.
    pub new_static: Vec<(BoundingBox<V>, Body<V>)>,
    /// Moving colliders whose fat box stays but whose pairs are looked for again (their
    /// layers changed): the scratch list of `apply_moves`.
    pub touched: Vec<ProxyId>,
    /// Colliders whose fat box changed this tick (or that are new), both trees: the broad
    /// phase looks for their new pairs.
    pub moved: Vec<Key>,
    /// Colliders processed this tick: the narrow phase tests their pairs only. The
    /// filter stage adds those whose pair's veto changed
    /// ([`AabbTree::mark_for_narrow_phase`](super::AabbTree::mark_for_narrow_phase)).
    pub processed: Vec<Key>,
}

/// A moving collider's move, for the tree's batch at the end of the prepare stage.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TreeMove<V: Vector> {
    pub id: ProxyId,
    /// The tight box over the tick's motion.
    pub swept: BoundingBox<V>,
    /// The motion predicted until the next tick, which the fat box leaves room for.
    pub predicted: V,
    /// Its layers changed: its pairs are looked for again even when its fat box stays.
    pub layers_changed: bool,
}

/// The working lists of
/// [`CollisionSystems::BroadPhase`](crate::plugin::CollisionSystems::BroadPhase), which
/// fills and reads them within the stage.
#[derive(Clone, Default)]
pub(crate) struct PairSearchLists {
    /// Pairs the trees report this tick, before layers and known pairs filter them.
    pub new_pairs: Vec<(Key, Key)>,
    /// Pairs of the moving tree's own walk.
    pub tree_pairs: Vec<(ProxyId, ProxyId)>,
    /// The static colliders among [`ColliderLists::moved`].
    pub moved_static: Vec<Key>,
    /// One moving collider's static partners, sorted (see `broad_phase::cross_pairs`).
    pub known_static: Vec<Key>,
}

/// What [`CollisionSystems::NarrowPhase`](crate::plugin::CollisionSystems::NarrowPhase)
/// fills: the contacts that started and ended, which
/// [`CollisionSystems::Events`](crate::plugin::CollisionSystems::Events) turns into
/// messages and entity events, and the swept hits the resource shows until the next
/// tick.
#[derive(Clone, Default)]
pub(crate) struct StartLists<V: Vector> {
    /// The processed static colliders, sorted, when the narrow phase takes its one pass
    /// for a crowd (see `narrow_phase`).
    pub processed_static: Vec<Key>,
    pub started: Vec<StartRecord<V>>,
    /// Cleared by the prepare stage, so that they last until the next tick's narrow phase.
    pub pass_throughs: Vec<PassThrough<V>>,
}

/// The contacts that ended and are not delivered yet, in the two places a tick's order
/// gives them (see `events`): before the tick's starts, or after them.
#[derive(Clone, Default)]
pub(crate) struct EndBuffers {
    /// Contacts broken before the tick's motion is tested: colliders removed, disabled or
    /// left out for invalid values, teleports, pairs that became both static. Delivered
    /// before the tick's starts: by the removal's observer at once between ticks, else by
    /// the events stage.
    pub broken: Vec<EndRecord>,
    /// Contacts the narrow phase saw end (separated, passed through, layers, veto), and
    /// those of colliders removed between the narrow phase and the events stage, which
    /// may have started in this tick. Delivered after the tick's starts.
    pub tested: Vec<EndRecord>,
    /// The narrow phase has run and the events stage has not: an end now goes to
    /// [`Self::tested`].
    pub after_tests: bool,
    /// Ends delivered since the last events stage (for
    /// [`StepStats::ended`](crate::plugin::StepStats::ended)).
    pub delivered: usize,
}

impl EndBuffers {
    /// Records the end of a contact that a collider's removal or change broke: before the
    /// tick's starts, unless the narrow phase has run since the last events stage.
    #[inline]
    pub(crate) fn push(&mut self, end: EndRecord) {
        if self.after_tests {
            self.tested.push(end);
        } else {
            self.broken.push(end);
        }
    }
}

/// The entity events of one batch, which
/// [`CollisionSystems::Events`](crate::plugin::CollisionSystems::Events) (or an observer
/// flushing the ends of a removal) fills and its command triggers (see
/// `events::trigger_batch`).
#[derive(Clone, Default)]
pub(crate) struct EntityEventBatch<V: Vector> {
    /// Ends of contacts broken before the tick's starts.
    pub broken_events: Vec<CollisionEnded>,
    pub start_events: Vec<CollisionStarted<V>>,
    /// Ends of the tick's tests, after its starts.
    pub end_events: Vec<CollisionEnded>,
}

/// The number of the prepare stage's run after run `number`. Never 0, which a new
/// collider's [`TrackedCollider`](crate::plugin::TrackedCollider) holds as "never
/// processed" and "never listed".
#[inline]
pub(crate) fn next_run(number: u32) -> u32 {
    number.wrapping_add(1).max(1)
}
