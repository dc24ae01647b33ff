//! The collision world resource: the two trees, what the pipeline keeps per collider, the
//! pairs, the figures of the last tick, and the buffers of one tick ([`tick`]).

mod tick;

use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::plugin::neighbourhoods::Neighbourhoods;
use crate::plugin::pairs::PairTable;
use crate::plugin::{CollisionLayers, EndReason, WorldShape};
use crate::tree::{DynamicTree, ProxyId, TreeStats};

use crate::plugin::key::{ByKey, Key};

pub(crate) use tick::{EndRecord, EntityEventBatch, StartRecord, TickBuffers, TreeMove, next_run};

/// A tree and the function naming its proxies' keys.
pub(crate) type TreeAndKeys<'a, V> = (&'a DynamicTree<V, Entity>, fn(ProxyId) -> Key);

/// What the pipeline keeps per collider, by [`Key`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Body<V: Vector> {
    pub entity: Entity,
    pub shape: WorldShape<V>,
    /// Displacement over the last tick (zero for a collider back in the tree after being
    /// out, and for a teleport whose destination was not recorded). Zero too
    /// for a collider `prepare` skipped: it skips only colliders whose displacement was
    /// zero at their last processing.
    pub displacement: V,
    pub layers: CollisionLayers,
    /// It has [`Sensor`](crate::plugin::Sensor): blocking casts pass through it.
    pub sensor: bool,
    /// When the prepare stage last processed it: the pipeline's count of processed
    /// colliders, over all ticks, at that moment. The narrow phase tests a pair once,
    /// from the side processed first this tick.
    pub processed_at: u64,
}

/// What the narrow phase reads of a static collider, copied beside each of its pairs (see
/// [`PairTable`]): its record's fields the tests read and its fat box, which decides
/// whether a pair that stopped touching stays a candidate. A crowd's pairs with a large
/// level are then tested without reading the level's scattered records and tree nodes.
/// A copy holds while the collider is not processed again: [`AabbTree::set_body`] drops
/// its pairs' copies.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StaticSide<V: Vector> {
    pub entity: Entity,
    pub shape: WorldShape<V>,
    pub layers: CollisionLayers,
    pub sensor: bool,
    pub fat: BoundingBox<V>,
}

impl<V: Vector> StaticSide<V> {
    /// The copy of the record and fat box of a collider not processed this tick. It has
    /// no displacement: an idle collider has none (save one that moved and could not be
    /// processed again, whose stale displacement the copy drops).
    #[inline]
    pub(crate) fn of(body: &Body<V>, fat: BoundingBox<V>) -> Self {
        Self {
            entity: body.entity,
            shape: body.shape,
            layers: body.layers,
            sensor: body.sensor,
            fat,
        }
    }

    /// The record the copy stands for, as the narrow phase reads it: not moved, and not
    /// processed this tick (a processed collider's pairs have no copy).
    #[inline]
    pub(crate) fn body(&self) -> Body<V> {
        Body {
            entity: self.entity,
            shape: self.shape,
            displacement: V::ZERO,
            layers: self.layers,
            sensor: self.sensor,
            processed_at: 0,
        }
    }
}

/// Counts and timings of the last tick, per pipeline stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Reflect)]
pub struct StepStats {
    /// Colliders in the moving tree.
    pub proxies: usize,
    /// Colliders in the static tree (those with [`Static`](crate::plugin::Static)).
    pub static_proxies: usize,
    /// Colliders the prepare stage processed this tick: those whose inputs (or an
    /// ancestor's transform) changed, that moved at their last processing, that have no
    /// proxy, or every one when [`CollisionConfig`](crate::plugin::CollisionConfig)
    /// changed. The others are skipped at the cost of a few change-tick tests each, and
    /// their pairs are not tested again.
    pub processed: usize,
    /// Proxies whose fat box changed this tick (both trees).
    pub moved: usize,
    /// New candidate pairs the broad phase found this tick.
    pub new_candidates: usize,
    /// Tasks the pair walk ran on the compute task pool this tick; 0 when it ran serially
    /// (see [`CollisionConfig::parallel_pairs_from`](crate::plugin::CollisionConfig::parallel_pairs_from)).
    pub parallel_tasks: usize,
    /// Candidate pairs tracked (fat boxes overlapping).
    pub candidates: usize,
    /// Pairs touching after this tick.
    pub touching: usize,
    /// `CollisionStarted` events this tick.
    pub started: usize,
    /// `CollisionEnded` events this tick (including removals since the last tick).
    pub ended: usize,
    /// Pairs caught by the swept test only (they do not overlap at the end of the tick).
    pub pass_throughs: usize,
    /// Milliseconds in the prepare stage (world boxes, tree updates).
    pub prepare_ms: f32,
    /// Milliseconds in the broad phase (tree refit and pair finding).
    pub broad_ms: f32,
    /// Milliseconds in the narrow phase (exact and swept tests).
    pub narrow_ms: f32,
    /// Milliseconds writing and triggering events.
    pub events_ms: f32,
    /// Milliseconds of [`Self::prepare_ms`] and [`Self::broad_ms`] taken by the moving
    /// tree's batch of moves and its pair update, the work a bare tree step does. The
    /// rest of the stages is the work around them: reading and checking the colliders,
    /// keeping their records and pairs, the static tree and the searches into either
    /// tree, testing the pairs, writing events.
    pub tree_ms: f32,
}

impl StepStats {
    /// Total milliseconds of the tick's stages.
    pub fn total_ms(&self) -> f32 {
        self.prepare_ms + self.broad_ms + self.narrow_ms + self.events_ms
    }
}

/// A pass-through caught by the swept test, for drawing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PassThrough<V: Vector> {
    /// The first entity.
    pub entity: Entity,
    /// The second entity.
    pub other: Entity,
    /// Where the first entity's shape center was at the time of impact.
    pub position: V,
    /// The time of impact within the tick.
    pub time_of_impact: f32,
}

/// The collision world of one dimension: the two trees, the tracked pairs and statistics.
///
/// Read it with `Res<AabbTree<Vec2>>` or `Res<AabbTree<Vec3>>`: touching pairs, the
/// entities touching one entity, the trees themselves (for statistics and drawing).
/// Colliders with [`Static`](crate::plugin::Static) live in [`Self::static_tree`], every
/// other one in [`Self::tree`].
#[derive(Resource, Clone)]
pub struct AabbTree<V: Vector> {
    pub(crate) tree: DynamicTree<V, Entity>,
    pub(crate) static_tree: DynamicTree<V, Entity>,
    pub(crate) bodies: ByKey<Option<Body<V>>>,
    pub(crate) pairs: PairTable<StaticSide<V>>,
    /// Each moving collider's static neighbourhood (see the module's docs).
    pub(crate) neighbourhoods: Neighbourhoods<V>,
    pub(crate) tick: TickBuffers<V>,
    pub(crate) stats: StepStats,
    /// The open-side normal of every collider with [`OneWay`](crate::plugin::OneWay),
    /// kept by its observers (the component is immutable).
    pub(crate) one_ways: EntityHashMap<V>,
}

impl<V: Vector> Default for AabbTree<V> {
    fn default() -> Self {
        Self {
            tree: DynamicTree::new(),
            static_tree: DynamicTree::new(),
            bodies: ByKey::default(),
            pairs: PairTable::default(),
            neighbourhoods: Neighbourhoods::default(),
            tick: TickBuffers::default(),
            stats: StepStats::default(),
            one_ways: EntityHashMap::default(),
        }
    }
}

impl<V: Vector> AabbTree<V> {
    /// The tree of moving colliders (payload: the entity). Read-only: the pipeline owns it.
    pub fn tree(&self) -> &DynamicTree<V, Entity> {
        &self.tree
    }

    /// The tree of [`Static`](crate::plugin::Static) colliders. Read-only.
    pub fn static_tree(&self) -> &DynamicTree<V, Entity> {
        &self.static_tree
    }

    /// The moving tree's shape statistics (walks the tree: O(nodes)).
    pub fn tree_stats(&self) -> TreeStats {
        self.tree.stats()
    }

    /// The static tree's shape statistics (walks the tree: O(nodes)).
    pub fn static_tree_stats(&self) -> TreeStats {
        self.static_tree.stats()
    }

    /// Bytes this resource's lasting arrays use, by capacity: the two trees'
    /// ([`DynamicTree::bytes`]), what the pipeline keeps per collider, the tracked pairs
    /// with their links (and, once a pair has a static collider, room beside every pair
    /// for a copy of its static side), and each moving collider's list of the static
    /// colliders around it. Buffers of one tick's events and pairs are not counted.
    /// O(1).
    ///
    /// With the components the plugin adds ([`TrackedCollider`](crate::plugin::TrackedCollider))
    /// and the collider's own, this is the memory collision detection takes.
    pub fn bytes(&self) -> usize {
        self.tree.bytes()
            + self.static_tree.bytes()
            + self.bodies.bytes()
            + self.pairs.bytes()
            + self.neighbourhoods.bytes()
    }

    /// Counts and timings of the last tick.
    pub fn stats(&self) -> &StepStats {
        &self.stats
    }

    /// Every pair touching after the last tick, in a deterministic order: the same for the
    /// same sequence of ticks, whatever the machine and its number of threads.
    pub fn touching_pairs(&self) -> impl Iterator<Item = (Entity, Entity)> + '_ {
        self.pairs
            .iter()
            .filter(|p| p.touching)
            .filter_map(|p| Some((self.entity_of(p.a)?, self.entity_of(p.b)?)))
    }

    /// The entities touching `entity` after the last tick. O(pairs).
    pub fn colliding_with(&self, entity: Entity) -> impl Iterator<Item = Entity> + '_ {
        self.touching_pairs().filter_map(move |(a, b)| {
            if a == entity {
                Some(b)
            } else if b == entity {
                Some(a)
            } else {
                None
            }
        })
    }

    /// Whether `a` and `b` are touching after the last tick.
    pub fn is_touching(&self, a: Entity, b: Entity) -> bool {
        self.touching_pairs()
            .any(|(x, y)| (x, y) == (a, b) || (x, y) == (b, a))
    }

    /// Number of candidate pairs (fat boxes overlapping, layers matching).
    pub fn candidate_count(&self) -> usize {
        self.pairs.len()
    }

    /// The swept hits of the last tick: pairs that touched during the tick but no longer
    /// overlap at its end (one passed through the other), which only the swept test sees.
    pub fn pass_throughs(&self) -> &[PassThrough<V>] {
        &self.tick.starts.pass_throughs
    }

    /// The entities `key` touches after the last tick: a walk of its own pairs.
    pub(crate) fn touching_of(&self, key: Key) -> impl Iterator<Item = Entity> + '_ {
        let mut next = self.pairs.first_of(key);
        core::iter::from_fn(move || {
            while let Some(i) = next {
                next = self.pairs.next_of(i, key);
                let pair = self.pairs.get(i);
                if pair.touching
                    && let Some(other) = self.entity_of(pair.other(key))
                {
                    return Some(other);
                }
            }
            None
        })
    }

    /// The two trees, each with the way to name its proxies' keys: what every query over
    /// all colliders walks.
    pub(crate) fn trees(&self) -> [TreeAndKeys<'_, V>; 2] {
        [(&self.tree, Key::moving), (&self.static_tree, Key::fixed)]
    }

    /// The tree holding `key`.
    #[inline]
    pub(crate) fn tree_of(&self, key: Key) -> &DynamicTree<V, Entity> {
        if key.is_static() {
            &self.static_tree
        } else {
            &self.tree
        }
    }

    /// The tree holding `key`, to change.
    #[inline]
    pub(crate) fn tree_of_mut(&mut self, key: Key) -> &mut DynamicTree<V, Entity> {
        if key.is_static() {
            &mut self.static_tree
        } else {
            &mut self.tree
        }
    }

    /// The fat box of `key` in its tree.
    #[inline]
    pub(crate) fn fat_box(&self, key: Key) -> Option<BoundingBox<V>> {
        self.tree_of(key).fat_box(key.proxy())
    }

    pub(crate) fn entity_of(&self, key: Key) -> Option<Entity> {
        self.body(key).map(|b| b.entity)
    }

    #[inline]
    pub(crate) fn body(&self, key: Key) -> Option<&Body<V>> {
        self.bodies.get(key).and_then(Option::as_ref)
    }

    /// Stores a collider's record; a static collider's pairs lose their copies of the
    /// old one.
    #[inline(always)]
    pub(crate) fn set_body(&mut self, key: Key, body: Body<V>) {
        if key.is_static() {
            self.pairs.forget_copies_of(key);
        }
        *self.bodies.get_or_grow(key, None) = Some(body);
    }

    /// Drops every pair of `key`, recording an end event (with `reason`) for each
    /// touching one.
    pub(crate) fn end_pairs_of(&mut self, key: Key, reason: EndReason) {
        let AabbTree {
            pairs,
            bodies,
            tick,
            ..
        } = self;
        pairs.remove_all_of(key, |p| {
            let entity = |k| bodies.get(k).copied().flatten().map(|b| b.entity);
            if p.touching
                && let (Some(a), Some(b)) = (entity(p.a), entity(p.b))
            {
                tick.ends.push(EndRecord { a, b, reason });
            }
        });
    }

    /// Ends every contact of `key` (recording an end event with `reason` for each) and
    /// keeps its pairs as untouched candidates: the narrow phase of this tick tests them
    /// again as new ones. For a teleport: the contacts at the old place end, and those at
    /// the new place, or met by the motion after the jump, start again.
    pub(crate) fn end_contacts_of(&mut self, key: Key, reason: EndReason) {
        let mut next = self.pairs.first_of(key);
        while let Some(i) = next {
            next = self.pairs.next_of(i, key);
            let pair = self.pairs.get(i);
            if pair.touching
                && let (Some(a), Some(b)) = (self.entity_of(pair.a), self.entity_of(pair.b))
            {
                self.tick.ends.push(EndRecord { a, b, reason });
                self.pairs.set_touching(i, false);
            }
        }
    }

    /// Takes a collider out of its tree and drops its pairs, recording an end event for
    /// each touching one. Visits the collider's own pairs only.
    pub(crate) fn remove_proxy(&mut self, key: Key, reason: EndReason) {
        self.end_pairs_of(key, reason);
        if key.is_static() {
            // Out of the static tree at the next tick, together with the others of this
            // frame: a level unloaded at once leaves with one rebuild. Until then it has
            // no body, so no query or pair sees it.
            self.tick.colliders.dead_static.push(key.proxy());
            if let Some(owner) = self.static_tree.data_mut(key.proxy()) {
                *owner = Entity::PLACEHOLDER;
            }
        } else {
            let _ = self.tree.destroy_proxy(key.proxy());
            self.neighbourhoods.release(key.proxy());
        }
        if let Some(slot) = self
            .bodies
            .get(key)
            .is_some()
            .then(|| self.bodies.get_or_grow(key, None))
        {
            *slot = None;
        }
    }

    /// Has the narrow phase of this tick test `key`'s pairs, as if the prepare stage had
    /// processed it (for a pair whose veto changed between idle colliders). Only between
    /// the prepare stage and the narrow phase; a collider processed this tick is left as
    /// it is. An idle collider's displacement is zero, so its pairs are tested in place.
    pub(crate) fn mark_for_narrow_phase(&mut self, key: Key) {
        let before = self.tick.colliders.processed_before;
        if self.body(key).is_some_and(|b| b.processed_at <= before)
            && let Some(body) = self.bodies.get_or_grow(key, None)
        {
            let prepared = &mut self.tick.colliders;
            prepared.processed_total += 1;
            body.processed_at = prepared.processed_total;
            prepared.processed.push(key);
        }
    }

    /// Gives the tables indexed by key room for the colliders of both trees, so that a
    /// bulk spawn grows them once, exactly.
    pub(crate) fn reserve_key_tables(&mut self, moving: usize, fixed: usize) {
        self.bodies.reserve_to(moving, fixed);
        self.pairs.reserve_keys(moving, fixed);
    }
}
