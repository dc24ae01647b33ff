//! The tree resource: the tree, what the pipeline knows about each proxy, and the pairs.

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

impl Pair {
    /// A pair not linked yet.
    pub(crate) fn new(a: ProxyId, b: ProxyId) -> Self {
        Self {
            a,
            b,
            touching: false,
        }
    }

    /// Which of the pair's two lists is `proxy`'s: 0 for `a`, 1 for `b`.
    #[inline]
    fn side(&self, proxy: ProxyId) -> usize {
        debug_assert!(
            self.a == proxy || self.b == proxy,
            "{proxy:?} not in {self:?}"
        );
        usize::from(self.a != proxy)
    }

    /// The proxy on the given side's other end.
    #[inline]
    fn other(&self, side: usize) -> ProxyId {
        if side == 0 { self.b } else { self.a }
    }
}

/// "No pair" in the per-proxy lists of pairs.
pub(crate) const NO_PAIR: u32 = u32::MAX;

/// A pair's place in the list of pairs of its `a` (`[0]`) and of its `b` (`[1]`): the
/// previous and the next pair's slot, [`NO_PAIR`] at either end.
pub(crate) type PairLinks = [[u32; 2]; 2];

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
    /// Each pair's links in its two proxies' lists, by the pair's slot (beside `pairs`
    /// rather than in it, so that the narrow phase's pass reads small pairs).
    pub(crate) pair_links: Vec<PairLinks>,
    /// Each proxy's first pair (a slot of `pairs`, or [`NO_PAIR`]); the rest of its
    /// pairs follow through `pair_links`. Removing a proxy visits its own pairs only,
    /// so a level's worth of colliders despawned at once costs what their pairs cost, not
    /// colliders × pairs; whether a pair is tracked is a walk of the shorter of two
    /// lists (no hashing).
    pub(crate) first_pair: Vec<u32>,
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
            pair_links: Vec::new(),
            first_pair: Vec::new(),
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

    /// Bytes this resource's lasting arrays use, by capacity: the tree's
    /// ([`DynamicTree::bytes`]), what the pipeline keeps per proxy, and the tracked pairs
    /// with their links. Buffers of one tick's events and pairs are not counted. O(1).
    ///
    /// With the components the plugin adds ([`TrackedCollider`](crate::plugin::TrackedCollider))
    /// and the collider's own, this is the memory collision detection takes.
    pub fn bytes(&self) -> usize {
        use core::mem::size_of;
        self.tree.bytes()
            + self.bodies.capacity() * size_of::<Option<Body<V>>>()
            + self.first_pair.capacity() * size_of::<u32>()
            + self.pairs.capacity() * size_of::<Pair>()
            + self.pair_links.capacity() * size_of::<PairLinks>()
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
    /// touching one in `self.ended`. Visits the proxy's own pairs only.
    pub(crate) fn remove_proxy(&mut self, id: ProxyId, reason: EndReason) {
        while let Some(&i) = self.first_pair.get(id.index()).filter(|&&i| i != NO_PAIR) {
            let p = self.pairs[i as usize];
            if p.touching
                && let (Some(a), Some(b)) = (self.entity_of(p.a), self.entity_of(p.b))
            {
                self.ended.push((a, b, reason));
            }
            self.remove_pair_at(i as usize);
        }
        let _ = self.tree.destroy_proxy(id);
        if let Some(slot) = self.bodies.get_mut(id.index()) {
            *slot = None;
        }
    }

    /// Gives the tables indexed by proxy id room for every id the tree has room for, so
    /// that a bulk spawn grows them once, exactly (see `DynamicTree::reserve`).
    pub(crate) fn reserve_proxy_tables(&mut self) {
        let ids = self.tree.data.capacity();
        self.bodies
            .reserve_exact(ids.saturating_sub(self.bodies.len()));
        self.first_pair
            .reserve_exact(ids.saturating_sub(self.first_pair.len()));
    }

    /// Whether a pair of `a` and `b` is tracked. Their two lists are walked side by side
    /// (the pair is in both), so this costs the shorter list: a box touching thousands
    /// costs nothing more to its small partners.
    pub(crate) fn has_pair(&self, a: ProxyId, b: ProxyId) -> bool {
        let head = |p: ProxyId| self.first_pair.get(p.index()).copied().unwrap_or(NO_PAIR);
        let (mut i, mut j) = (head(a), head(b));
        while i != NO_PAIR && j != NO_PAIR {
            let side_i = self.pairs[i as usize].side(a);
            let side_j = self.pairs[j as usize].side(b);
            if self.pairs[i as usize].other(side_i) == b
                || self.pairs[j as usize].other(side_j) == a
            {
                return true;
            }
            i = self.pair_links[i as usize][side_i][1];
            j = self.pair_links[j as usize][side_j][1];
        }
        false
    }

    /// Puts the pair in slot `i` at the head of its two proxies' lists.
    pub(crate) fn link_pair(&mut self, i: usize) {
        let pair = self.pairs[i];
        if self.pair_links.len() <= i {
            self.pair_links.resize(i + 1, [[NO_PAIR; 2]; 2]);
        }
        for (side, proxy) in [(0, pair.a), (1, pair.b)] {
            if self.first_pair.len() <= proxy.index() {
                self.first_pair.resize(proxy.index() + 1, NO_PAIR);
            }
            let head = self.first_pair[proxy.index()];
            self.pair_links[i][side] = [NO_PAIR, head];
            if head != NO_PAIR {
                let next_side = self.pairs[head as usize].side(proxy);
                self.pair_links[head as usize][next_side][0] = i as u32;
            }
            self.first_pair[proxy.index()] = i as u32;
        }
    }

    /// Points the neighbours of the pair in slot `i` (and the list heads) at `to`: with
    /// `to == NO_PAIR` its neighbours skip it (unlinked); otherwise it now lives in slot
    /// `to`.
    fn relink_pair(&mut self, i: usize, to: u32) {
        let pair = self.pairs[i];
        let links = self.pair_links[i];
        for (side, proxy) in [(0, pair.a), (1, pair.b)] {
            let [prev, next] = links[side];
            // Unlinking: the neighbours point at each other; moving: at the new slot.
            let (to_prev, to_next) = if to == NO_PAIR {
                (next, prev)
            } else {
                (to, to)
            };
            if prev == NO_PAIR {
                self.first_pair[proxy.index()] = to_prev;
            } else {
                let s = self.pairs[prev as usize].side(proxy);
                self.pair_links[prev as usize][s][1] = to_prev;
            }
            if next != NO_PAIR {
                let s = self.pairs[next as usize].side(proxy);
                self.pair_links[next as usize][s][0] = to_next;
            }
        }
    }

    /// Drops the pair in slot `i`; the last pair takes its slot.
    pub(crate) fn remove_pair_at(&mut self, i: usize) {
        self.relink_pair(i, NO_PAIR);
        let last = self.pairs.len() - 1;
        if i != last {
            self.relink_pair(last, i as u32);
        }
        self.pairs.swap_remove(i);
        self.pair_links.swap_remove(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::BoundingBox;
    use bevy::math::Vec2;

    /// Every proxy's list holds exactly the pairs that name it, each once, with matching
    /// back links; `has_pair` agrees with a scan of the pairs for every two proxies.
    fn check_lists(state: &AabbTree<Vec2>, proxies: u32) {
        for p in (0..proxies).map(ProxyId) {
            let mut expected: Vec<u32> = (0..state.pairs.len() as u32)
                .filter(|&i| {
                    let pair = state.pairs[i as usize];
                    pair.a == p || pair.b == p
                })
                .collect();
            let mut seen = Vec::new();
            let mut prev = NO_PAIR;
            let mut i = state.first_pair.get(p.index()).copied().unwrap_or(NO_PAIR);
            while i != NO_PAIR {
                assert!(seen.len() <= state.pairs.len(), "a cycle in {p:?}'s list");
                let pair = state.pairs[i as usize];
                let side = pair.side(p);
                assert!(side == 0 && pair.a == p || side == 1 && pair.b == p);
                let links = state.pair_links[i as usize][side];
                assert_eq!(links[0], prev, "back link of slot {i}");
                seen.push(i);
                prev = i;
                i = links[1];
            }
            seen.sort_unstable();
            expected.sort_unstable();
            assert_eq!(seen, expected, "the list of {p:?}");
        }
        assert_eq!(state.pair_links.len(), state.pairs.len());
        for a in (0..proxies).map(ProxyId) {
            for b in (0..proxies).map(ProxyId) {
                let tracked = state
                    .pairs
                    .iter()
                    .any(|p| (p.a, p.b) == (a, b) || (p.a, p.b) == (b, a));
                assert_eq!(state.has_pair(a, b), tracked, "{a:?} {b:?}");
            }
        }
    }

    /// Random pairs added, dropped and proxies removed, against a brute-force scan of the
    /// pairs: the lists stay exact, and removing a proxy ends exactly its touching pairs.
    #[test]
    fn pair_lists_follow_every_change() {
        const PROXIES: u32 = 24;
        let mut world = World::new();
        let entities: Vec<Entity> = (0..PROXIES).map(|_| world.spawn_empty().id()).collect();
        let mut state = AabbTree::<Vec2>::default();
        let body = |entity| Body {
            entity,
            shape: WorldShape::Box(BoundingBox::from_min_max(Vec2::ZERO, Vec2::ONE)),
            displacement: Vec2::ZERO,
            layers: CollisionLayers::ALL,
        };
        for (i, &e) in entities.iter().enumerate() {
            state.set_body(ProxyId(i as u32), body(e));
        }
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 33) as u32 % n
        };
        let mut removed_proxies = 0;
        for step in 0..4000 {
            match next(10) {
                0..=5 => {
                    // Up to four new pairs pushed, sorted, then linked, as the broad
                    // phase adds them.
                    let first = state.pairs.len();
                    for _ in 0..1 + next(4) {
                        let (a, b) = (ProxyId(next(PROXIES)), ProxyId(next(PROXIES)));
                        if a == b
                            || state
                                .pairs
                                .iter()
                                .any(|p| (p.a, p.b) == (a, b) || (p.a, p.b) == (b, a))
                        {
                            continue;
                        }
                        let mut pair = Pair::new(a, b);
                        pair.touching = next(2) == 0;
                        state.pairs.push(pair);
                    }
                    state.pairs[first..].sort_unstable_by_key(|p| (p.a, p.b));
                    for i in first..state.pairs.len() {
                        let p = state.pairs[i];
                        assert!(!state.has_pair(p.a, p.b));
                        state.link_pair(i);
                    }
                }
                6..=8 if !state.pairs.is_empty() => {
                    let i = next(state.pairs.len() as u32) as usize;
                    state.remove_pair_at(i);
                }
                _ => {
                    let p = ProxyId(next(PROXIES));
                    let touching: Vec<(Entity, Entity)> = state
                        .pairs
                        .iter()
                        .filter(|pair| pair.touching && (pair.a == p || pair.b == p))
                        .map(|pair| (entities[pair.a.index()], entities[pair.b.index()]))
                        .collect();
                    state.ended.clear();
                    state.remove_proxy(p, EndReason::Removed);
                    let ended: Vec<(Entity, Entity)> =
                        state.ended.iter().map(|&(a, b, _)| (a, b)).collect();
                    assert_eq!(ended.len(), touching.len(), "step {step}");
                    assert!(touching.iter().all(|t| ended.contains(t)), "step {step}");
                    assert!(state.pairs.iter().all(|pair| pair.a != p && pair.b != p));
                    removed_proxies += 1;
                    // Back, with no pairs.
                    state.set_body(p, body(entities[p.index()]));
                }
            }
            check_lists(&state, PROXIES);
        }
        assert!(removed_proxies > 100 && state.pairs.len() > 10);
    }
}
