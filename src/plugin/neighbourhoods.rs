//! Each moving collider's static neighbourhood, kept between ticks.
//!
//! A moving collider whose fat box changes looks for new pairs in the static tree. In a
//! large level that query is a walk from the root of a tree of up to millions of leaves,
//! through nodes no other work of the tick keeps in the caches. Most such colliders have
//! moved a little: the static colliders near them are those of the last query.
//!
//! So each moving collider keeps the static colliders found around it, in a list of its
//! own: their proxies and fat boxes, for a box (its *reach*) around the fat box it had
//! then, grown by half that box's size on each side. While its fat box stays inside its
//! reach, its static candidates are read off that list, in order, without touching the
//! static tree. A list is dropped when a static collider whose new fat box overlaps its
//! reach moved (or is new); every list is dropped when many static colliders moved at
//! once, and while that happens tick after tick, lists are refilled for the fat box
//! alone (a query as without lists). A static collider that is removed can leave its
//! proxy behind in lists; the broad phase checks each new pair from a list against the
//! static tree, so such a proxy (or a new one that took its id) never gives a pair its
//! fat box does not.
//!
//! A list keeps the room of a few entries when its collider leaves the moving tree, so
//! that colliders spawned and despawned every tick do not allocate a list each; a list
//! that has grown far larger than it needs is shrunk at its next refill.

use smallvec::SmallVec;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::{DynamicTree, LayerTest, Layers, ProxyId};

/// Static colliders that moved in one tick, up to which each list is tested against
/// their boxes; from more, every list is dropped.
const FORGET_EACH_UP_TO: usize = 32;

/// The longest list kept. A collider whose reach holds more static colliders keeps only
/// those its fat box overlaps (its reach is its fat box), until a later query finds few.
const LONGEST: usize = 1024;

/// The room a list keeps when its collider leaves, and below which a list is not shrunk.
const KEPT_ROOM: usize = 16;

/// One moving collider's list.
#[derive(Clone, Debug)]
struct Neighbourhood<V: Vector> {
    /// The box the list covers; the list holds every static collider whose fat box
    /// overlaps it.
    reach: BoundingBox<V>,
    /// Whether the list is up to date.
    valid: bool,
    /// Whether its last reach held more than [`LONGEST`] static colliders.
    crowded: bool,
    /// The collider's layers when the list was filled: the list holds only the static
    /// colliders that interact with them.
    layers: Layers,
    statics: Vec<(ProxyId, BoundingBox<V>)>,
}

impl<V: Vector> Default for Neighbourhood<V> {
    fn default() -> Self {
        Self {
            reach: BoundingBox::from_min_max(V::ZERO, V::ZERO),
            valid: false,
            crowded: false,
            layers: Layers::ALL,
            statics: Vec::new(),
        }
    }
}

/// The lists of every moving collider, by proxy id of the moving tree.
///
/// A list depends only on its reach and on the static tree, not on which collider owns
/// it; the list of a collider that leaves the moving tree is dropped all the same
/// ([`Self::release`]).
#[derive(Clone, Debug)]
pub(crate) struct Neighbourhoods<V: Vector> {
    lists: Vec<Neighbourhood<V>>,
    /// The room of every list's entries, kept up to date so that [`Self::bytes`] is O(1).
    room: usize,
    /// Whether the last [`Self::forget_near`] dropped every list: refills are then for the
    /// fat box alone, which many static colliders moving every tick would make stale
    /// before the next.
    churn: bool,
}

impl<V: Vector> Default for Neighbourhoods<V> {
    fn default() -> Self {
        Self {
            lists: Vec::new(),
            room: 0,
            churn: false,
        }
    }
}

impl<V: Vector> Neighbourhoods<V> {
    /// Drops the lists that the static colliders that moved or are new this tick may have
    /// made stale: those whose reach overlaps one of their new fat boxes, `changed`, or
    /// every list when there are many (their boxes are then not read). Called once a
    /// tick.
    pub(crate) fn forget_near(&mut self, changed: impl ExactSizeIterator<Item = BoundingBox<V>>) {
        self.churn = changed.len() > FORGET_EACH_UP_TO;
        match changed.len() {
            0 => {}
            n if n > FORGET_EACH_UP_TO => {
                for list in &mut self.lists {
                    list.valid = false;
                }
            }
            _ => {
                let changed: SmallVec<[BoundingBox<V>; FORGET_EACH_UP_TO]> = changed.collect();
                for list in self.lists.iter_mut().filter(|l| l.valid) {
                    list.valid = !changed.iter().any(|b| b.overlaps(&list.reach));
                }
            }
        }
    }

    /// Calls `f` for every static collider whose fat box overlaps `fat`, the fat box of
    /// the moving collider `id`, and whose layers interact with `layers`, the collider's:
    /// from its list when `fat` lies within its reach (and the layers are those of the
    /// list), from a query of `statics` (which refills the list) otherwise. A static
    /// collider removed since the list was filled may be among them.
    pub(crate) fn overlapping<T>(
        &mut self,
        id: ProxyId,
        fat: &BoundingBox<V>,
        layers: Layers,
        statics: &DynamicTree<V, T>,
        mut f: impl FnMut(ProxyId),
    ) {
        if self.lists.len() <= id.index() {
            self.lists.resize_with(id.index() + 1, Default::default);
        }
        let list = &mut self.lists[id.index()];
        if !(list.valid && list.layers == layers && list.reach.contains(fat)) {
            let room = list.statics.capacity();
            list.layers = layers;
            refill(list, fat, statics, !self.churn);
            self.room = self.room - room + list.statics.capacity();
        }
        for (s, b) in &list.statics {
            if b.overlaps(fat) {
                f(*s);
            }
        }
    }

    /// Drops the list of the moving collider `id`, which leaves the moving tree, keeping
    /// the room of a few entries for the next collider given its id.
    pub(crate) fn release(&mut self, id: ProxyId) {
        if let Some(list) = self.lists.get_mut(id.index()) {
            let room = list.statics.capacity();
            list.valid = false;
            list.crowded = false;
            list.statics.clear();
            list.statics.shrink_to(KEPT_ROOM);
            self.room = self.room - room + list.statics.capacity();
        }
    }

    /// Bytes of the lists, by capacity. O(1).
    pub(crate) fn bytes(&self) -> usize {
        self.lists.capacity() * core::mem::size_of::<Neighbourhood<V>>()
            + self.room * core::mem::size_of::<(ProxyId, BoundingBox<V>)>()
    }
}

/// Fills `list` for a collider whose fat box is `fat`: the static colliders within
/// `fat` grown by half its size on each side (when `grow`), or within `fat` alone when
/// that holds more than [`LONGEST`] of them (or did at an earlier refill, see `crowded`).
/// A list whose room is over four times what it holds is shrunk.
fn refill<V: Vector, T>(
    list: &mut Neighbourhood<V>,
    fat: &BoundingBox<V>,
    statics: &DynamicTree<V, T>,
    grow: bool,
) {
    list.valid = true;
    list.statics.clear();
    fill(list, fat, statics, grow);
    let len = list.statics.len();
    if list.statics.capacity() > KEPT_ROOM.max(4 * len) {
        list.statics.shrink_to(KEPT_ROOM.max(2 * len));
    }
}

/// The query of [`refill`].
fn fill<V: Vector, T>(
    list: &mut Neighbourhood<V>,
    fat: &BoundingBox<V>,
    statics: &DynamicTree<V, T>,
    grow: bool,
) {
    if grow && !list.crowded {
        let half = fat.half_extents();
        list.reach = BoundingBox::from_min_max(fat.min - half, fat.max + half);
        let kept = &mut list.statics;
        let layers = LayerTest::InteractsWith(list.layers);
        statics.query_box_boxes(&list.reach, layers, |s, b| {
            kept.push((s, *b));
            kept.len() <= LONGEST
        });
        if list.statics.len() <= LONGEST {
            return;
        }
        list.statics.clear();
        list.crowded = true;
    }
    list.reach = *fat;
    let kept = &mut list.statics;
    let layers = LayerTest::InteractsWith(list.layers);
    statics.query_box_boxes(fat, layers, |s, b| {
        kept.push((s, *b));
        true
    });
    // Crowded until a query of the fat box alone finds an eighth of the limit or fewer:
    // the reach, at most eight times the fat box's volume, then likely holds fewer than
    // the limit.
    list.crowded = list.statics.len() * 8 > LONGEST;
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // A failed unwrap is a failed test.
mod tests {
    use std::collections::BTreeSet;
    use std::sync::atomic::Ordering;

    use bevy::math::Vec2;

    use super::*;

    use crate::tree::tests::tree_scene::lcg;

    /// A point in the square `[0, side)²`.
    fn point(r: &mut impl FnMut() -> f32, side: f32) -> Vec2 {
        Vec2::new(r() * side, r() * side)
    }

    fn square(center: Vec2, half: f32) -> BoundingBox<Vec2> {
        BoundingBox::from_center_half_extents(center, Vec2::splat(half))
    }

    /// Random static colliders that move, go and come (freed ids taken again), and
    /// moving colliders of three sizes (one reaching over more than [`LONGEST`] static
    /// ones) that drift. After every step each moving collider's answer holds every
    /// static collider its fat box overlaps (brute force), and nothing else but
    /// proxies of static colliders that moved or went since.
    #[test]
    fn lists_miss_no_static_collider() {
        let mut rng = lcg(5);
        let side = 60.0;
        let mut statics = DynamicTree::<Vec2, ()>::new();
        let mut live: Vec<ProxyId> = (0..2500)
            .map(|_| {
                statics
                    .create_proxy(square(point(&mut rng, side), 0.4), ())
                    .unwrap()
            })
            .collect();
        let mut movers: Vec<(Vec2, f32)> = (0..40)
            .map(|i| (point(&mut rng, side), [0.3, 2.0, 12.0][i % 3]))
            .collect();
        let mut lists = Neighbourhoods::default();
        let mut touched = BTreeSet::new();
        // Static colliders removed and not replaced yet: their ids stay free a while.
        let mut waiting = 0;
        let (mut lookups, mut served) = (0, 0);
        for step in 0..300 {
            let mut changed = Vec::new();
            // Most steps change nothing; some a few static colliders, some very many.
            let changes = match step % 10 {
                3 => 3,
                7 => 1,
                9 if step % 50 == 9 => 60,
                _ => 0,
            };
            for _ in 0..changes {
                let i = (rng() * live.len() as f32) as usize % live.len();
                let id = live[i];
                touched.insert(id);
                if rng() < 0.5 {
                    let _ = statics.move_proxy(id, square(point(&mut rng, side), 0.4), Vec2::ZERO);
                    changed.push(id);
                } else {
                    statics.destroy_proxy(id).unwrap();
                    live.swap_remove(i);
                    waiting += 1;
                }
            }
            // Replaced at once, or some ticks later.
            if step % 10 == 3 || step % 20 == 15 {
                for _ in 0..waiting {
                    let new = statics
                        .create_proxy(square(point(&mut rng, side), 0.4), ())
                        .unwrap();
                    live.push(new);
                    changed.push(new);
                }
                waiting = 0;
            }
            // (One moved and then removed in the same step has no box left.)
            let boxes: Vec<_> = changed
                .iter()
                .filter_map(|&id| statics.fat_box(id))
                .collect();
            lists.forget_near(boxes.into_iter());
            for (i, (center, half)) in movers.iter_mut().enumerate() {
                *center += Vec2::new(rng() - 0.5, rng() - 0.5) * 0.6;
                let fat = square(*center, *half).grown(0.1);
                let id = ProxyId(i as u32);
                if step % 97 == 96 {
                    // Its collider left and another took its id.
                    lists.release(id);
                }
                let mut got = BTreeSet::new();
                let visits = statics.nodes_visited.load(Ordering::Relaxed);
                lists.overlapping(id, &fat, Layers::ALL, &statics, |s| {
                    got.insert(s);
                });
                lookups += 1;
                served += usize::from(statics.nodes_visited.load(Ordering::Relaxed) == visits);
                let expected: BTreeSet<ProxyId> = statics
                    .proxies()
                    .filter(|(_, _, b)| b.overlaps(&fat))
                    .map(|(id, ..)| id)
                    .collect();
                assert!(
                    expected.is_subset(&got),
                    "step {step}, collider {i}: missed {:?}",
                    expected.difference(&got).collect::<Vec<_>>()
                );
                for extra in got.difference(&expected) {
                    assert!(
                        touched.contains(extra),
                        "step {step}, collider {i}: {extra:?} reported, never changed"
                    );
                }
            }
        }
        // Most answers come from the lists, without a walk of the static tree.
        assert!(
            served * 2 > lookups,
            "{served} of {lookups} answered by the lists"
        );
        // The big colliders' reach is crowded: they keep their fat box's statics alone.
        assert!(lists.lists.iter().any(|l| l.crowded));
        assert!(
            lists
                .lists
                .iter()
                .any(|l| !l.crowded && l.statics.len() > 4)
        );
    }
}
