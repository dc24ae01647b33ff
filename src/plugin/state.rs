//! The tree resource: the tree, what the pipeline knows about each proxy, and the pairs.

use bevy::platform::collections::HashMap;
use bevy::prelude::*;

use crate::Vector;
use crate::plugin::{CollisionEnded, CollisionLayers, CollisionStarted, EndReason, WorldShape};
use crate::tree::{DynamicTree, ProxyId, TreeStats};

/// What the pipeline keeps per proxy, indexed by the proxy's index.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Body<V: Vector> {
    pub entity: Entity,
    pub shape: WorldShape<V>,
    /// Displacement over the last tick (zero for teleports and new colliders). Zero too
    /// for a collider `prepare` skipped: it skips only colliders whose displacement was
    /// zero at their last processing.
    pub displacement: V,
    pub layers: CollisionLayers,
}

/// A candidate pair: fat boxes overlapping, layers matching.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pair {
    pub a: ProxyId,
    pub b: ProxyId,
    pub touching: bool,
}

#[inline]
pub(crate) fn pair_key(a: ProxyId, b: ProxyId) -> u64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    ((lo.index() as u64) << 32) | hi.index() as u64
}

/// Counts and timings of the last tick, per pipeline stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Reflect)]
pub struct StepStats {
    /// Colliders in the tree.
    pub proxies: usize,
    /// Colliders the prepare stage processed this tick: those whose inputs changed, that
    /// moved at their last processing, that have a `ChildOf` or no proxy, or every one
    /// when [`CollisionConfig`](crate::plugin::CollisionConfig) changed. The others are
    /// skipped at the cost of a change-tick test each.
    pub processed: usize,
    /// Proxies whose fat box changed this tick.
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
    pub swept_hits: usize,
    /// Milliseconds in the prepare stage (world boxes, tree updates).
    pub prepare_ms: f32,
    /// Milliseconds in the broad phase (tree refit and pair finding).
    pub broad_ms: f32,
    /// Milliseconds in the narrow phase (exact and swept tests).
    pub narrow_ms: f32,
    /// Milliseconds writing and triggering events.
    pub events_ms: f32,
}

impl StepStats {
    /// Total milliseconds of the tick's stages.
    pub fn total_ms(&self) -> f32 {
        self.prepare_ms + self.broad_ms + self.narrow_ms + self.events_ms
    }
}

/// A pass-through caught by the swept test, for drawing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweptHit<V: Vector> {
    /// The first entity.
    pub entity: Entity,
    /// The second entity.
    pub other: Entity,
    /// Where the first entity's shape center was at the time of impact.
    pub position: V,
    /// The time of impact within the tick.
    pub time_of_impact: f32,
}

/// The collision world of one dimension: the tree, the tracked pairs and statistics.
///
/// Read it with `Res<AabbTree<Vec2>>` or `Res<AabbTree<Vec3>>`: touching pairs, the
/// entities touching one entity, the tree itself (for statistics and drawing).
#[derive(Resource)]
pub struct AabbTree<V: Vector> {
    pub(crate) tree: DynamicTree<V, Entity>,
    pub(crate) bodies: Vec<Option<Body<V>>>,
    pub(crate) pairs: Vec<Pair>,
    pub(crate) pair_index: HashMap<u64, u32>,
    pub(crate) scratch_pairs: Vec<(ProxyId, ProxyId)>,
    /// New fat boxes of the tick, handed to the tree in one batch at the end of `prepare`.
    pub(crate) pending_fat: Vec<(ProxyId, crate::BoundingBox<V>)>,
    pub(crate) started: Vec<(Entity, Entity, f32, V)>,
    pub(crate) ended: Vec<(Entity, Entity, EndReason)>,
    pub(crate) swept_hits: Vec<SweptHit<V>>,
    pub(crate) stats: StepStats,
    /// Buffers for the entity events of one batch, kept between ticks (see
    /// `pipeline::trigger_batch`).
    pub(crate) start_events: Vec<CollisionStarted>,
    pub(crate) end_events: Vec<CollisionEnded>,
}

impl<V: Vector> Default for AabbTree<V> {
    fn default() -> Self {
        Self {
            tree: DynamicTree::new(),
            bodies: Vec::new(),
            pairs: Vec::new(),
            pair_index: HashMap::default(),
            scratch_pairs: Vec::new(),
            pending_fat: Vec::new(),
            started: Vec::new(),
            ended: Vec::new(),
            swept_hits: Vec::new(),
            stats: StepStats::default(),
            start_events: Vec::new(),
            end_events: Vec::new(),
        }
    }
}

impl<V: Vector> AabbTree<V> {
    /// The dynamic tree (payload: the entity). Read-only: the pipeline owns it.
    pub fn tree(&self) -> &DynamicTree<V, Entity> {
        &self.tree
    }

    /// The tree's shape statistics (walks the tree: O(nodes)).
    pub fn tree_stats(&self) -> TreeStats {
        self.tree.stats()
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
    pub fn swept_hits(&self) -> &[SweptHit<V>] {
        &self.swept_hits
    }

    pub(crate) fn entity_of(&self, id: ProxyId) -> Option<Entity> {
        self.bodies
            .get(id.index())
            .copied()
            .flatten()
            .map(|b| b.entity)
    }

    pub(crate) fn body(&self, id: ProxyId) -> Option<&Body<V>> {
        self.bodies.get(id.index()).and_then(Option::as_ref)
    }

    #[inline(always)]
    pub(crate) fn set_body(&mut self, id: ProxyId, body: Body<V>) {
        if self.bodies.len() <= id.index() {
            self.bodies.resize(id.index() + 1, None);
        }
        self.bodies[id.index()] = Some(body);
    }

    /// Takes a proxy out of the tree and drops its pairs, recording an end event for each
    /// touching one in `self.ended`.
    pub(crate) fn remove_proxy(&mut self, id: ProxyId, reason: EndReason) {
        let mut i = 0;
        while i < self.pairs.len() {
            let p = self.pairs[i];
            if p.a == id || p.b == id {
                if p.touching
                    && let (Some(a), Some(b)) = (self.entity_of(p.a), self.entity_of(p.b))
                {
                    self.ended.push((a, b, reason));
                }
                self.remove_pair_at(i);
            } else {
                i += 1;
            }
        }
        let _ = self.tree.destroy_proxy(id);
        if let Some(slot) = self.bodies.get_mut(id.index()) {
            *slot = None;
        }
    }

    pub(crate) fn remove_pair_at(&mut self, i: usize) {
        let p = self.pairs.swap_remove(i);
        self.pair_index.remove(&pair_key(p.a, p.b));
        if let Some(moved) = self.pairs.get(i) {
            self.pair_index.insert(pair_key(moved.a, moved.b), i as u32);
        }
    }
}
