//! The model of the tree's operations, one for every driver of random operations (the
//! proptests of `tests/tree/tree.rs`, the fuzz target `fuzz/fuzz_targets/tree_ops.rs`):
//! a map of the live proxies (tight box, fat box, payload) and of the proxies moved since
//! the last pair update, each operation applied to the tree and to the map with its
//! outcome checked, and after every operation the whole tree checked against the map.
//! The drivers differ in how they choose operations, not in what they check.
//!
//! The model computes fat boxes, box validity and the rule that decides whether a move
//! keeps its fat box with its own formulas ([`fat_box`], [`valid`], [`keep_rule`]), from
//! the tree's documented rule, not with the tree's helpers. After every operation
//! ([`TreeModel::check`]): `validate()` passes, and the tree holds the same proxies,
//! payloads and fat boxes as the map, the same moved count and `2n - 1` nodes. Pair
//! updates and queries are compared with a linear scan over the map, touching counting as
//! overlapping.
//!
//! Operations may get hostile values (NaN, infinities, negative extents, huge
//! coordinates): the tree must refuse them with the documented error and stay unchanged.
//!
//! Bevy-free. The kit includes it; the fuzz target includes it with `#[path]`, next to
//! `tree_queries.rs` (which it uses as `super::tree_queries`).

use std::collections::{BTreeMap, BTreeSet};

use bevy_aabb_tree::{BoundingBox, DynamicTree, ProxyId, TreeError, Vec3, Vector};

use super::tree_queries;

/// Most ids remembered in [`TreeModel::issued`].
const MAX_ISSUED: usize = 512;

/// What the model knows about one live proxy.
#[derive(Clone, Copy, Debug)]
pub struct Entry<V: Vector> {
    pub tight: BoundingBox<V>,
    pub fat: BoundingBox<V>,
    pub tag: u32,
}

/// One move of a batch: the proxy, its new tight box, its displacement.
pub type Move<V> = (ProxyId, BoundingBox<V>, V);

/// A tree and the model of it.
pub struct TreeModel<V: Vector> {
    pub tree: DynamicTree<V, u32>,
    /// The live proxies.
    pub live: BTreeMap<ProxyId, Entry<V>>,
    /// The live proxies moved (created, given a new fat box, touched) since the last pair
    /// update.
    pub moved: BTreeSet<ProxyId>,
    /// Every id handed out (some destroyed since, some reused), the first [`MAX_ISSUED`].
    pub issued: Vec<ProxyId>,
    next_tag: u32,
    /// The margin the tree was given last (and accepted).
    margin: f32,
}

/// A vector's coordinates (the dimension's first components).
pub fn coords<V: Vector>(v: V) -> [f32; 3] {
    v.extend_to_3d().to_array()
}

/// Whether a box is one the tree accepts: finite corners, `min <= max` on every axis.
pub fn valid<V: Vector>(b: &BoundingBox<V>) -> bool {
    let (lo, hi) = (coords(b.min), coords(b.max));
    (0..V::DIM).all(|i| lo[i].is_finite() && hi[i].is_finite() && lo[i] <= hi[i])
}

fn finite<V: Vector>(d: V) -> bool {
    coords(d).iter().all(|x| x.is_finite())
}

/// The fat box the tree documents for a tight box and a displacement `d`: the tight box
/// extended along `d` (the lower corner by the negative part of `d`, the upper one by its
/// positive part), then grown by `margin` on every side. Computed in the order the
/// documentation states it (extend, then grow), so the `f32` result is exact to compare.
pub fn fat_box<V: Vector>(tight: &BoundingBox<V>, d: V, margin: f32) -> BoundingBox<V> {
    let (lo, hi, d) = (coords(tight.min), coords(tight.max), coords(d));
    let mut min = [0.0f32; 3];
    let mut max = [0.0f32; 3];
    for i in 0..3 {
        let (down, up) = if d[i] < 0.0 { (d[i], 0.0) } else { (0.0, d[i]) };
        min[i] = (lo[i] + down) - margin;
        max[i] = (hi[i] + up) + margin;
    }
    BoundingBox::from_min_max(
        V::truncate_from_3d(Vec3::from_array(min)),
        V::truncate_from_3d(Vec3::from_array(max)),
    )
}

/// The outcome the model expects of the keep rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Keep {
    /// The move keeps its fat box.
    Yes,
    /// The move gets a new fat box.
    No,
    /// Too close to the rule's boundary for `f32` rounding to settle (or an `f32`
    /// measure overflows): either outcome is right.
    Either,
}

/// The keep rule of `DynamicTree::move_proxy`, as its documentation states it: a move
/// keeps the fat box `old` when the new tight box lies inside it (faces may touch) and
/// `old` measures at most four times the fat box the move would give (`new_fat`). The
/// measure is half the perimeter in 2D, half the surface area in 3D; the model computes
/// it in `f64`.
pub fn keep_rule<V: Vector>(
    old: &BoundingBox<V>,
    tight: &BoundingBox<V>,
    new_fat: &BoundingBox<V>,
) -> Keep {
    let (olo, ohi) = (coords(old.min), coords(old.max));
    let (tlo, thi) = (coords(tight.min), coords(tight.max));
    if !(0..V::DIM).all(|i| olo[i] <= tlo[i] && thi[i] <= ohi[i]) {
        return Keep::No;
    }
    let measure = |b: &BoundingBox<V>| -> (f64, bool) {
        let (lo, hi) = (coords(b.min), coords(b.max));
        let s: Vec<f64> = (0..V::DIM)
            .map(|i| f64::from(hi[i]) - f64::from(lo[i]))
            .collect();
        let m = if V::DIM == 2 {
            s[0] + s[1]
        } else {
            s[0] * s[1] + s[1] * s[2] + s[2] * s[0]
        };
        // The tree measures in `f32`: a size or a measure past its range is a tie.
        let overflows =
            s.iter().any(|&x| x >= f64::from(f32::MAX)) || 4.0 * m >= f64::from(f32::MAX);
        (m, overflows)
    };
    let (m_old, old_overflows) = measure(old);
    let (m_new, new_overflows) = measure(new_fat);
    if old_overflows || new_overflows || !new_fat.min.is_finite() || !new_fat.max.is_finite() {
        return Keep::Either;
    }
    let slack = 4.0 * m_new - m_old;
    if slack.abs() <= 1e-5 * (m_old + 4.0 * m_new) {
        Keep::Either
    } else if slack > 0.0 {
        Keep::Yes
    } else {
        Keep::No
    }
}

impl<V: Vector> TreeModel<V> {
    /// The model of `tree`, which must be empty (its margin and settings are kept).
    pub fn new(tree: DynamicTree<V, u32>) -> Self {
        assert!(tree.is_empty(), "the model starts from an empty tree");
        let margin = tree.margin();
        let model = Self {
            tree,
            live: BTreeMap::new(),
            moved: BTreeSet::new(),
            issued: Vec::new(),
            next_tag: 0,
            margin,
        };
        model.check("new");
        model
    }

    /// The live proxy at position `i` (modulo their count) in id order.
    pub fn nth_live(&self, i: usize) -> Option<ProxyId> {
        (!self.live.is_empty()).then(|| *self.live.keys().nth(i % self.live.len()).unwrap())
    }

    /// The last id issued that names no live proxy now.
    pub fn dead_id(&self) -> Option<ProxyId> {
        self.issued
            .iter()
            .rev()
            .find(|id| !self.live.contains_key(id))
            .copied()
    }

    /// The fat box the documented rule gives `tight` moving by `d`, at the current margin.
    pub fn fat_of(&self, tight: &BoundingBox<V>, d: V) -> BoundingBox<V> {
        fat_box(tight, d, self.margin)
    }

    fn next_tag(&mut self) -> u32 {
        self.next_tag += 1;
        self.next_tag - 1
    }

    fn issue(&mut self, id: ProxyId, tight: BoundingBox<V>, fat: BoundingBox<V>, tag: u32) {
        assert!(
            !self.live.contains_key(&id),
            "id {id:?} handed out while live"
        );
        assert_eq!(self.tree.fat_box(id), Some(fat), "new {id:?}");
        self.live.insert(id, Entry { tight, fat, tag });
        self.moved.insert(id);
        if self.issued.len() < MAX_ISSUED {
            self.issued.push(id);
        }
    }

    /// `create_proxy(tight)`, or `create_proxy_with(tight, d)` for `Some(d)`: accepted
    /// exactly when the box, the displacement and the fat box are valid (else the
    /// documented error), with the documented fat box, counting as moved.
    pub fn create(&mut self, tight: BoundingBox<V>, d: Option<V>) -> Option<ProxyId> {
        let tag = self.next_tag();
        let disp = d.unwrap_or(V::ZERO);
        let fat = self.fat_of(&tight, disp);
        let created = match d {
            None => self.tree.create_proxy(tight, tag),
            Some(d) => self.tree.create_proxy_with(tight, d, tag),
        };
        let id = match created {
            Ok(id) => {
                assert!(
                    valid(&tight) && finite(disp) && valid(&fat),
                    "accepted {tight:?} {d:?}"
                );
                // The tree's own helper gives the documented box.
                assert_eq!(self.tree.fatten(&tight, disp), fat);
                self.issue(id, tight, fat, tag);
                Some(id)
            }
            Err(e) => {
                let want = if valid(&tight) && !finite(disp) {
                    TreeError::InvalidValue
                } else {
                    TreeError::InvalidBox
                };
                assert_eq!(e, want, "{tight:?} {d:?}");
                assert!(
                    !(valid(&tight) && finite(disp) && valid(&fat)),
                    "refused {tight:?} {d:?}"
                );
                None
            }
        };
        self.check("create");
        id
    }

    /// `destroy_proxy(id)`: a live proxy's payload, then (and for a dead id) an unknown
    /// proxy.
    pub fn destroy(&mut self, id: ProxyId) {
        if let Some(entry) = self.live.remove(&id) {
            assert_eq!(self.tree.destroy_proxy(id), Ok(entry.tag));
            self.moved.remove(&id);
        }
        assert_eq!(
            self.tree.destroy_proxy(id),
            Err(TreeError::UnknownProxy(id)),
            "destroying a dead proxy must fail"
        );
        self.check("destroy");
    }

    /// `destroy_proxies(ids)` (live, dead or repeated ids): exactly the live ones go.
    pub fn destroy_many(&mut self, ids: &[ProxyId]) {
        let live: BTreeSet<ProxyId> = ids
            .iter()
            .copied()
            .filter(|id| self.live.contains_key(id))
            .collect();
        assert_eq!(self.tree.destroy_proxies(ids), live.len());
        for id in &live {
            self.live.remove(id);
            self.moved.remove(id);
            assert!(!self.tree.contains(*id));
            assert_eq!(
                self.tree.destroy_proxy(*id),
                Err(TreeError::UnknownProxy(*id))
            );
        }
        self.check("destroy_many");
    }

    /// `touch_proxy(id)`: a live proxy counts as moved, a dead id is unknown.
    pub fn touch(&mut self, id: ProxyId) {
        if self.live.contains_key(&id) {
            assert_eq!(self.tree.touch_proxy(id), Ok(()));
            self.moved.insert(id);
        } else {
            assert_eq!(self.tree.touch_proxy(id), Err(TreeError::UnknownProxy(id)));
        }
        self.check("touch");
    }

    /// `move_proxy(id, tight, d)`, checked as [`Self::check_move`] says, with the fat box
    /// read back: the documented one when replaced, the old one when kept or refused.
    pub fn move_one(&mut self, id: ProxyId, tight: BoundingBox<V>, d: V) {
        let before = self.live.get(&id).copied();
        let was_moved = self.moved.contains(&id);
        let res = self.tree.move_proxy(id, tight, d);
        self.check_move(id, tight, d, res);
        if let Some(entry) = before {
            let fat = match res {
                Ok(true) => {
                    let fat = self.fat_of(&tight, d);
                    // The tree's own helper gives the documented box.
                    assert_eq!(self.tree.fatten(&tight, d), fat);
                    fat
                }
                _ => entry.fat,
            };
            assert_eq!(self.tree.fat_box(id), Some(fat), "move of {id:?}");
            if res.is_err() {
                assert_eq!(self.moved.contains(&id), was_moved);
            }
        }
        self.check("move");
    }

    /// One `move_proxies` batch: one outcome per move, in order, each checked as
    /// [`Self::check_move`] says, applied to the moves in order.
    pub fn move_batch(&mut self, moves: &[Move<V>]) {
        let mut got = Vec::new();
        self.tree
            .move_proxies(moves.iter().copied(), |id, res| got.push((id, res)));
        assert_eq!(got.len(), moves.len());
        for (&(id, tight, d), &(got_id, res)) in moves.iter().zip(&got) {
            assert_eq!(id, got_id);
            self.check_move(id, tight, d, res);
        }
        self.check("move_proxies");
    }

    /// One `move_proxies_parallel` batch on `threads` threads (each id once: a parallel
    /// batch decides each proxy against its box from before the batch): each outcome told
    /// once, the count of changed boxes returned, each outcome checked as
    /// [`Self::check_move`] says.
    pub fn move_batch_parallel(&mut self, moves: &[Move<V>], threads: usize) {
        let distinct: BTreeSet<_> = moves.iter().map(|m| m.0).collect();
        assert_eq!(
            distinct.len(),
            moves.len(),
            "a parallel batch moves each id once"
        );
        let got = std::sync::Mutex::new(BTreeMap::new());
        let changed = self.tree.move_proxies_parallel(
            moves.len(),
            |i| moves[i],
            threads,
            |id, res| {
                let earlier = got.lock().unwrap().insert(id, res);
                assert!(earlier.is_none(), "{id:?} told twice");
            },
        );
        let got = got.into_inner().unwrap();
        assert_eq!(got.len(), moves.len());
        assert_eq!(
            changed,
            got.values().filter(|res| **res == Ok(true)).count()
        );
        for &(id, tight, d) in moves {
            self.check_move(id, tight, d, got[&id]);
        }
        self.check("move_proxies_parallel");
    }

    /// One outcome of a move against the model, which records the move: an unknown id
    /// refused; invalid inputs refused (an invalid box first, then a non-finite
    /// displacement); the fat box kept or replaced as the keep rule says, a new one valid;
    /// refused only for a new fat box that is not valid.
    fn check_move(
        &mut self,
        id: ProxyId,
        tight: BoundingBox<V>,
        d: V,
        res: Result<bool, TreeError>,
    ) {
        let Some(entry) = self.live.get(&id).copied() else {
            assert_eq!(res, Err(TreeError::UnknownProxy(id)));
            return;
        };
        let fat = self.fat_of(&tight, d);
        let rule = keep_rule(&entry.fat, &tight, &fat);
        match res {
            Ok(changed) => {
                assert!(valid(&tight) && finite(d), "accepted {tight:?} {d:?}");
                if changed {
                    assert_ne!(rule, Keep::Yes, "{id:?} replaced {:?}", entry.fat);
                    assert!(valid(&fat), "{id:?} moved to {fat:?}");
                } else {
                    assert_ne!(rule, Keep::No, "{id:?} kept {:?}", entry.fat);
                }
                self.record_move(id, entry, tight, changed.then_some(fat));
            }
            Err(TreeError::InvalidBox) => assert!(
                !valid(&tight) || (rule != Keep::Yes && !valid(&fat)),
                "{id:?} refused {tight:?} {d:?}"
            ),
            Err(TreeError::InvalidValue) => {
                assert!(
                    valid(&tight) && !finite(d),
                    "{id:?} refused {tight:?} {d:?}"
                )
            }
            Err(e) => panic!("a move of live {id:?} refused: {e}"),
        }
    }

    /// Records an accepted move of a live proxy: its new tight box, and its new fat box
    /// (marking it moved) when the move changed it.
    fn record_move(
        &mut self,
        id: ProxyId,
        entry: Entry<V>,
        tight: BoundingBox<V>,
        fat: Option<BoundingBox<V>>,
    ) {
        if fat.is_some() {
            self.moved.insert(id);
        }
        let fat = fat.unwrap_or(entry.fat);
        self.live.insert(
            id,
            Entry {
                tight,
                fat,
                ..entry
            },
        );
    }

    /// `set_margin(margin)`: accepted when finite and not negative, else refused with the
    /// margin unchanged.
    pub fn set_margin(&mut self, margin: f32) {
        let old = self.tree.margin();
        match self.tree.set_margin(margin) {
            Ok(()) => {
                assert!(margin.is_finite() && margin >= 0.0);
                assert_eq!(self.tree.margin(), margin);
                self.margin = margin;
            }
            Err(e) => {
                assert_eq!(e, TreeError::InvalidValue);
                assert!(!(margin.is_finite() && margin >= 0.0));
                assert_eq!(self.tree.margin(), old);
            }
        }
        self.check("set_margin");
    }

    /// `build(items)` of the boxes `tights`: distinct ids with the documented fat boxes
    /// when every box is valid, else refused with nothing added. No boxes rebuilds the
    /// tree as it stands.
    pub fn build(&mut self, tights: &[BoundingBox<V>]) {
        let items: Vec<_> = tights.iter().map(|&t| (t, self.next_tag())).collect();
        let all_valid = tights
            .iter()
            .all(|t| valid(t) && valid(&self.fat_of(t, V::ZERO)));
        let len = self.tree.len();
        match self.tree.build(items.iter().copied()) {
            Ok(ids) => {
                assert!(all_valid);
                assert_eq!(ids.len(), items.len());
                let distinct: BTreeSet<_> = ids.iter().collect();
                assert_eq!(distinct.len(), ids.len(), "build handed out an id twice");
                for (id, (tight, tag)) in ids.into_iter().zip(items) {
                    let fat = self.fat_of(&tight, V::ZERO);
                    self.issue(id, tight, fat, tag);
                }
            }
            Err(e) => {
                assert_eq!(e, TreeError::InvalidBox);
                assert!(!all_valid);
                assert_eq!(self.tree.len(), len);
            }
        }
        self.check("build");
    }

    /// A build of no items: the tree rebuilt as it stands.
    pub fn rebuild(&mut self) {
        assert_eq!(self.tree.build(std::iter::empty()), Ok(Vec::new()));
        self.check("rebuild");
    }

    /// `set_move_cache(on)`: the same tree either way.
    pub fn set_move_cache(&mut self, on: bool) {
        self.tree.set_move_cache(on);
        assert_eq!(self.tree.move_cache(), on);
        self.check("set_move_cache");
    }

    /// `clear()`: no proxy left.
    pub fn clear(&mut self) {
        self.tree.clear();
        self.live.clear();
        self.moved.clear();
        self.check("clear");
    }

    /// One pair update (serial, or parallel on `threads` threads): each pair once, as
    /// `(a, b)` with `a < b`, exactly the overlapping pairs of fat boxes with a proxy moved
    /// since the last update; no mark left, and a second update reports nothing.
    pub fn pairs(&mut self, threads: usize) {
        let mut expected = BTreeSet::new();
        let entries: Vec<_> = self.live.iter().collect();
        for (i, (a, ea)) in entries.iter().enumerate() {
            for (b, eb) in &entries[i + 1..] {
                if (self.moved.contains(a) || self.moved.contains(b)) && ea.fat.overlaps(&eb.fat) {
                    expected.insert((**a, **b));
                }
            }
        }
        let mut pairs = Vec::new();
        if threads > 1 {
            self.tree.update_pairs_parallel(&mut pairs, threads);
        } else {
            self.tree.update_pairs(&mut pairs);
        }
        let got: BTreeSet<_> = pairs.iter().copied().collect();
        assert_eq!(got.len(), pairs.len(), "a pair was reported twice");
        assert!(
            pairs.iter().all(|(a, b)| a < b),
            "pairs must be ordered (a < b)"
        );
        assert_eq!(got, expected, "pairs");
        self.moved.clear();
        assert_eq!(self.tree.stats().moved, 0);
        // Fat boxes are unchanged by the update's refit (and the rest of the state).
        self.check("update_pairs");
        // A second update with nothing moved reports nothing.
        let mut again = Vec::new();
        self.tree.update_pairs(&mut again);
        assert!(again.is_empty(), "pairs with nothing moved: {again:?}");
        self.check("second update_pairs");
    }

    /// The queries spanned by `a`, `b`, `r` up to `max_t` against a scan of the model
    /// (`tree_queries::check_queries`).
    pub fn queries(&self, a: V, b: V, r: f32, max_t: f32) {
        let boxes = |e: &Entry<V>| (e.tight, e.fat);
        tree_queries::check_queries(&self.tree, &self.live, boxes, (a, b, r, max_t));
        self.check("queries");
    }

    /// The end of a run: a last pair update and the checks.
    pub fn finish(&mut self) {
        self.pairs(1);
    }

    /// The tree's invariants (`validate`) and its agreement with the model: the same live
    /// proxies, in id order, with the same payloads and fat boxes, the same moved count,
    /// `2n - 1` nodes. `after` names the operation in the messages.
    pub fn check(&self, after: &str) {
        if let Err(e) = self.tree.validate() {
            panic!("invalid tree after {after}: {e}");
        }
        assert_eq!(self.tree.len(), self.live.len(), "after {after}");
        for (id, e) in &self.live {
            assert!(self.tree.contains(*id), "after {after}");
            assert_eq!(self.tree.data(*id), Some(&e.tag), "after {after}");
            assert_eq!(self.tree.fat_box(*id), Some(e.fat), "after {after}");
        }
        let live: Vec<_> = self
            .tree
            .proxies()
            .map(|(id, tag, fat)| (id, *tag, fat))
            .collect();
        let want: Vec<_> = self
            .live
            .iter()
            .map(|(id, e)| (*id, e.tag, e.fat))
            .collect();
        assert_eq!(live, want, "after {after}");
        assert_eq!(self.tree.moved_count(), self.moved.len(), "after {after}");
        let stats = self.tree.stats();
        assert_eq!(stats.proxies, self.live.len(), "after {after}");
        assert_eq!(stats.moved, self.moved.len(), "after {after}");
        let nodes = (2 * self.live.len()).saturating_sub(1);
        assert_eq!(stats.nodes, nodes, "after {after}");
    }
}
