//! Random sequences of tree operations against a brute-force oracle.
//!
//! The first input byte picks the dimension (2D or 3D); the rest decodes into operations:
//! insert, remove (also of ids already removed), bulk remove, move (small steps and
//! teleports), batches of moves (large enough to sort and to refit the whole tree, serial
//! and parallel), set margin, bulk build, rebuild (a build of no items), move cache on
//! and off, clear, pair updates (serial, and parallel with the rebuilds that follow
//! planned on the update's threads) and every query. Some
//! operations get hostile values (NaN, infinities, negative extents, huge coordinates):
//! the tree must refuse them with an error and stay unchanged, never panic.
//!
//! After every operation `validate()` must pass and the tree must agree with the oracle (a
//! plain map of the live proxies' tight and fat boxes): the same proxies, payloads, fat
//! boxes and moved count. The oracle computes fat boxes, box validity and the rule that
//! decides whether a move keeps its fat box with its own formulas (see [`fat_box`],
//! [`valid`] and [`keep_rule`]), from the tree's documented rule, not with the tree's
//! helpers. Pair updates and queries are compared with a linear scan over
//! the fat boxes, touching counting as overlapping (the same conventions as
//! tests/tree/tree.rs).

#![no_main]

use std::collections::{BTreeMap, BTreeSet};

use arbitrary::{Result, Unstructured};
use bevy_aabb_tree::{
    BatchThresholds, BoundingBox, DynamicTree, ProxyId, TreeError, Vec2, Vec3, Vector,
};
use libfuzzer_sys::fuzz_target;

// The queries' check, shared with the integration tests.
#[path = "../../tests/kit/tree_queries.rs"]
mod tree_queries;

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(three_d) = u.arbitrary::<bool>() else {
        return;
    };
    if three_d {
        run::<Vec3>(&mut u);
    } else {
        run::<Vec2>(&mut u);
    }
});

/// Most operations per input: keeps one input's run short.
const MAX_OPS: usize = 400;
/// Most ids remembered for later removes and moves (live or not).
const MAX_ISSUED: usize = 512;

fn run<V: Vector>(u: &mut Unstructured) {
    let margin = match u.int_in_range(0u8..=3) {
        Ok(0) => 0.0,
        Ok(1) => 0.05,
        Ok(2) => 0.1,
        _ => 1.0,
    };
    // Half of the inputs run at the default batch thresholds, half at small ones, with
    // which the small trees of an input take every path of a batch (sorted, refitted,
    // spread over threads in many tasks).
    let mut tree = DynamicTree::with_margin(margin);
    if u.arbitrary::<bool>().unwrap_or(false) {
        tree.set_batch_thresholds(BatchThresholds {
            sort_from: 16,
            parallel_moves_from: 32,
            min_moves_per_task: 8,
            min_proxies_per_task: 8,
        });
    }
    let mut h = Harness::<V> {
        tree,
        oracle: BTreeMap::new(),
        moved: BTreeSet::new(),
        issued: Vec::new(),
        next_tag: 0,
        margin,
    };
    for _ in 0..MAX_OPS {
        if u.is_empty() {
            break;
        }
        if h.step(u).is_err() {
            break;
        }
        h.check_state();
    }
    h.check_pairs(1);
    h.check_state();
}

/// What the oracle knows about one live proxy.
#[derive(Clone, Copy, Debug)]
struct Entry<V: Vector> {
    tight: BoundingBox<V>,
    fat: BoundingBox<V>,
    tag: u32,
}

struct Harness<V: Vector> {
    tree: DynamicTree<V, u32>,
    oracle: BTreeMap<ProxyId, Entry<V>>,
    moved: BTreeSet<ProxyId>,
    /// Every id handed out (some destroyed since, some reused).
    issued: Vec<ProxyId>,
    next_tag: u32,
    /// The margin the tree was given last (and accepted).
    margin: f32,
}

/// A coordinate. Sane values sit on a coarse grid (so faces often touch exactly) or are
/// uniform in -20..20; hostile ones are NaN, infinities, huge, subnormal or any bit
/// pattern.
fn value(u: &mut Unstructured, hostile: bool) -> Result<f32> {
    if hostile && u.ratio(1u8, 2)? {
        return Ok(match u.int_in_range(0u8..=11)? {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            3 => 1e30,
            4 => -1e30,
            5 => f32::MAX,
            6 => -f32::MAX,
            7 => f32::MIN_POSITIVE * 0.5,
            8 => -0.0,
            9 => 3.0e38,
            10 => -1e-30,
            _ => f32::from_bits(u.arbitrary()?),
        });
    }
    Ok(if u.arbitrary::<bool>()? {
        f32::from(u.arbitrary::<i8>()?) * 0.25
    } else {
        f32::from(u.arbitrary::<u16>()?) / 65535.0 * 40.0 - 20.0
    })
}

/// A half extent: small and non-negative when sane; negative or hostile otherwise.
fn half_value(u: &mut Unstructured, hostile: bool) -> Result<f32> {
    if hostile {
        return value(u, true);
    }
    Ok(f32::from(u.int_in_range(0u8..=15)?) * 0.25)
}

fn vector<V: Vector>(u: &mut Unstructured, hostile: bool) -> Result<V> {
    Ok(V::truncate_from_3d(Vec3::new(
        value(u, hostile)?,
        value(u, hostile)?,
        value(u, hostile)?,
    )))
}

fn half_vector<V: Vector>(u: &mut Unstructured, hostile: bool) -> Result<V> {
    Ok(V::truncate_from_3d(Vec3::new(
        half_value(u, hostile)?,
        half_value(u, hostile)?,
        half_value(u, hostile)?,
    )))
}

/// A vector's coordinates (the dimension's first components).
fn coords<V: Vector>(v: V) -> [f32; 3] {
    v.extend_to_3d().to_array()
}

/// Whether a box is one the tree accepts: finite corners, `min <= max` on every axis.
fn valid<V: Vector>(b: &BoundingBox<V>) -> bool {
    let (lo, hi) = (coords(b.min), coords(b.max));
    (0..V::DIM).all(|i| lo[i].is_finite() && hi[i].is_finite() && lo[i] <= hi[i])
}

/// The fat box the tree documents for a tight box and a displacement `d`: the tight box
/// extended along `d` (the lower corner by the negative part of `d`, the upper one by its
/// positive part), then grown by `margin` on every side. Computed in the order the
/// documentation states it (extend, then grow), so the `f32` result is exact to compare.
fn fat_box<V: Vector>(tight: &BoundingBox<V>, d: V, margin: f32) -> BoundingBox<V> {
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

/// The outcome the oracle expects of the keep rule.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Keep {
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
/// measure is half the perimeter in 2D, half the surface area in 3D; the oracle computes
/// it in `f64`.
fn keep_rule<V: Vector>(
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

impl<V: Vector> Harness<V> {
    /// An id handed out earlier (possibly destroyed, possibly reused since).
    fn pick(&self, u: &mut Unstructured) -> Result<Option<ProxyId>> {
        if self.issued.is_empty() {
            return Ok(None);
        }
        // Prefer live ids: a random issued id is mostly dead once many were removed.
        if !self.oracle.is_empty() && u.ratio(3u8, 4)? {
            let i = u.choose_index(self.oracle.len())?;
            return Ok(self.oracle.keys().nth(i).copied());
        }
        let i = u.choose_index(self.issued.len())?;
        Ok(Some(self.issued[i]))
    }

    fn issue(&mut self, id: ProxyId, tight: BoundingBox<V>, fat: BoundingBox<V>, tag: u32) {
        assert!(
            !self.oracle.contains_key(&id),
            "id {id:?} handed out while live"
        );
        self.oracle.insert(id, Entry { tight, fat, tag });
        self.moved.insert(id);
        if self.issued.len() < MAX_ISSUED {
            self.issued.push(id);
        }
    }

    fn fat_of(&self, tight: &BoundingBox<V>, d: V) -> BoundingBox<V> {
        fat_box(tight, d, self.margin)
    }

    fn step(&mut self, u: &mut Unstructured) -> Result<()> {
        let hostile = u.ratio(1u8, 8)?;
        match u.int_in_range(0u8..=31)? {
            0..=7 => {
                let tight = BoundingBox::from_center_half_extents(
                    vector(u, hostile)?,
                    half_vector(u, hostile)?,
                );
                let tag = self.next_tag;
                self.next_tag += 1;
                let expected_fat = self.fat_of(&tight, V::ZERO);
                match self.tree.create_proxy(tight, tag) {
                    Ok(id) => {
                        assert!(valid(&tight) && valid(&expected_fat), "accepted {tight:?}");
                        assert_eq!(self.tree.fat_box(id), Some(expected_fat));
                        self.issue(id, tight, expected_fat, tag);
                    }
                    Err(e) => {
                        assert_eq!(e, TreeError::InvalidBox);
                        assert!(
                            !(valid(&tight) && valid(&expected_fat)),
                            "refused {tight:?}"
                        );
                    }
                }
            }
            8..=10 => {
                let Some(id) = self.pick(u)? else {
                    return Ok(());
                };
                match self.oracle.remove(&id) {
                    Some(entry) => {
                        assert_eq!(self.tree.destroy_proxy(id), Ok(entry.tag));
                        self.moved.remove(&id);
                        assert_eq!(
                            self.tree.destroy_proxy(id),
                            Err(TreeError::UnknownProxy(id)),
                            "double destroy must fail"
                        );
                    }
                    None => {
                        assert_eq!(
                            self.tree.destroy_proxy(id),
                            Err(TreeError::UnknownProxy(id))
                        )
                    }
                }
            }
            11..=18 => {
                let Some(id) = self.pick(u)? else {
                    return Ok(());
                };
                let teleport = u.ratio(1u8, 6)?;
                let step = vector::<V>(u, hostile)?;
                let half = half_vector::<V>(u, hostile)?;
                let d = if u.ratio(1u8, 4)? {
                    V::ZERO
                } else {
                    vector::<V>(u, hostile)? * 0.1
                };
                let Some(entry) = self.oracle.get(&id).copied() else {
                    let tight = BoundingBox::from_center_half_extents(step, half);
                    assert_eq!(
                        self.tree.move_proxy(id, tight, d),
                        Err(TreeError::UnknownProxy(id))
                    );
                    return Ok(());
                };
                let center = if teleport {
                    step
                } else {
                    entry.tight.center() + step * 0.05
                };
                let tight = BoundingBox::from_center_half_extents(center, half);
                let was_moved = self.moved.contains(&id);
                let d_finite = coords(d).iter().all(|x| x.is_finite());
                let fat = self.fat_of(&tight, d);
                let rule = keep_rule(&entry.fat, &tight, &fat);
                match self.tree.move_proxy(id, tight, d) {
                    Ok(true) => {
                        assert!(valid(&tight) && d_finite);
                        assert_ne!(
                            rule,
                            Keep::Yes,
                            "replaced {:?} for {tight:?} {d:?}",
                            entry.fat
                        );
                        assert_eq!(self.tree.fat_box(id), Some(fat));
                        self.record_move(id, entry, tight, Some(fat));
                    }
                    Ok(false) => {
                        assert!(valid(&tight) && d_finite);
                        assert_ne!(rule, Keep::No, "kept {:?} for {tight:?} {d:?}", entry.fat);
                        assert_eq!(self.tree.fat_box(id), Some(entry.fat));
                        self.record_move(id, entry, tight, None);
                    }
                    Err(e) => {
                        match e {
                            TreeError::InvalidBox => assert!(
                                !valid(&tight) || (rule != Keep::Yes && !valid(&fat)),
                                "{tight:?} {d:?}"
                            ),
                            TreeError::InvalidValue => {
                                assert!(valid(&tight) && !d_finite, "{tight:?} {d:?}")
                            }
                            TreeError::UnknownProxy(_) => panic!("live proxy unknown: {e}"),
                            TreeError::Full => panic!("a move never fills the tree: {e}"),
                        }
                        assert_eq!(self.tree.fat_box(id), Some(entry.fat));
                        assert_eq!(self.moved.contains(&id), was_moved);
                    }
                }
            }
            19 => {
                let margin = if hostile {
                    value(u, true)?
                } else {
                    f32::from(u.int_in_range(0u8..=8)?) * 0.125
                };
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
            }
            20 => {
                // Many ids at once: picked ones (live, dead or repeated), and now and then
                // every live one (the bulk path rebuilds what remains).
                let mut ids = Vec::new();
                for _ in 0..u.int_in_range(0u8..=16)? {
                    if let Some(id) = self.pick(u)? {
                        ids.push(id);
                    }
                }
                if u.ratio(1u8, 8)? {
                    ids.extend(self.oracle.keys().copied());
                }
                let live: BTreeSet<ProxyId> = ids
                    .iter()
                    .copied()
                    .filter(|id| self.oracle.contains_key(id))
                    .collect();
                assert_eq!(self.tree.destroy_proxies(&ids), live.len());
                for id in &live {
                    self.oracle.remove(id);
                    self.moved.remove(id);
                    assert!(!self.tree.contains(*id));
                    assert_eq!(
                        self.tree.destroy_proxy(*id),
                        Err(TreeError::UnknownProxy(*id))
                    );
                }
            }
            21..=22 => {
                let n = u.int_in_range(0u8..=12)?;
                let mut items = Vec::new();
                for _ in 0..n {
                    let bad = hostile && u.ratio(1u8, 4)?;
                    let tight = BoundingBox::from_center_half_extents(
                        vector(u, bad)?,
                        half_vector(u, bad)?,
                    );
                    items.push((tight, self.next_tag));
                    self.next_tag += 1;
                }
                let all_valid = items
                    .iter()
                    .all(|(t, _)| valid(t) && valid(&self.fat_of(t, V::ZERO)));
                let len = self.tree.len();
                match self.tree.build(items.iter().copied()) {
                    Ok(ids) => {
                        assert!(all_valid);
                        assert_eq!(ids.len(), items.len());
                        let distinct: BTreeSet<_> = ids.iter().collect();
                        assert_eq!(distinct.len(), ids.len(), "build handed out an id twice");
                        for (id, (tight, tag)) in ids.into_iter().zip(items) {
                            let fat = self.fat_of(&tight, V::ZERO);
                            assert_eq!(self.tree.fat_box(id), Some(fat));
                            self.issue(id, tight, fat, tag);
                        }
                    }
                    Err(e) => {
                        assert_eq!(e, TreeError::InvalidBox);
                        assert!(!all_valid);
                        assert_eq!(self.tree.len(), len);
                    }
                }
            }
            23 => {
                if u.ratio(1u8, 4)? {
                    // The move cache on or off: the same tree either way.
                    let on = !self.tree.move_cache();
                    self.tree.set_move_cache(on);
                } else {
                    // A build of no items rebuilds the tree as it stands.
                    assert_eq!(self.tree.build(std::iter::empty()), Ok(Vec::new()));
                }
            }
            24 => {
                if u.ratio(1u8, 8)? {
                    self.tree.clear();
                    self.oracle.clear();
                    self.moved.clear();
                } else {
                    self.batch_move(u)?;
                }
            }
            25..=27 => {
                let threads = u.int_in_range(1u8..=4)?;
                self.check_pairs(usize::from(threads));
            }
            _ => {
                let a = vector::<V>(u, hostile)?;
                let b = vector::<V>(u, hostile)?;
                let r = if hostile {
                    value(u, true)?
                } else {
                    f32::from(u.int_in_range(0u8..=24)?) * 0.25
                };
                let max_t = match u.int_in_range(0u8..=7)? {
                    0 => f32::INFINITY,
                    1 => 0.0,
                    2 if hostile => value(u, true)?,
                    3 => 1.0,
                    _ => 1.5,
                };
                self.check_queries(a, b, r, max_t);
            }
        }
        Ok(())
    }

    /// The tree's invariants and its agreement with the oracle.
    fn check_state(&self) {
        if let Err(e) = self.tree.validate() {
            panic!("invalid tree: {e}");
        }
        assert_eq!(self.tree.len(), self.oracle.len());
        for (id, e) in &self.oracle {
            assert!(self.tree.contains(*id));
            assert_eq!(self.tree.data(*id), Some(&e.tag));
            assert_eq!(self.tree.fat_box(*id), Some(e.fat));
        }
        let live: Vec<_> = self
            .tree
            .proxies()
            .map(|(id, tag, fat)| (id, *tag, fat))
            .collect();
        let want: Vec<_> = self
            .oracle
            .iter()
            .map(|(id, e)| (*id, e.tag, e.fat))
            .collect();
        assert_eq!(live, want);
        let stats = self.tree.stats();
        assert_eq!(stats.proxies, self.oracle.len());
        assert_eq!(stats.moved, self.moved.len());
        let nodes = (2 * self.oracle.len()).saturating_sub(1);
        assert_eq!(stats.nodes, nodes);
    }

    /// Moves every live proxy in one `move_proxies` batch, in rounds until the batch holds
    /// at least 256 moves (so that it sorts its leaves, and refits the whole tree when
    /// enough leaves change), plus one move of an id that may be dead. The oracle applies
    /// the single-move rule to each entry in order.
    ///
    /// Or, half the time, one `move_proxies_parallel` batch on 2 to 4 threads: every live
    /// proxy once (a parallel batch decides each proxy against its box from before the
    /// batch), in id order or reversed, plus one move of an id that is dead. The fuzz
    /// build's small batches and tasks make even a small tree take the parallel paths
    /// (decisions in runs of the move cache, the refit as subtree tasks).
    fn batch_move(&mut self, u: &mut Unstructured) -> Result<()> {
        let live: Vec<ProxyId> = self.oracle.keys().copied().collect();
        if live.is_empty() {
            return Ok(());
        }
        if u.arbitrary::<bool>()? {
            return self.parallel_batch_move(u, live);
        }
        let mut s: u32 = u.arbitrary()?;
        let spread = f32::from(u.int_in_range(0u8..=8)?) * 0.05;
        let mut r = move || {
            s = s.wrapping_mul(1664525).wrapping_add(1013904223);
            (s >> 8) as f32 / 16_777_216.0 - 0.5
        };
        let rounds = 256usize.div_ceil(live.len());
        let mut moves = Vec::new();
        let mut centers: BTreeMap<ProxyId, V> = self
            .oracle
            .iter()
            .map(|(id, e)| (*id, e.tight.center()))
            .collect();
        for _ in 0..rounds {
            for &id in &live {
                let c = centers.get_mut(&id).unwrap();
                let step = V::truncate_from_3d(Vec3::new(r(), r(), r())) * spread;
                *c += step;
                let half = self.oracle[&id].tight.half_extents();
                moves.push((id, BoundingBox::from_center_half_extents(*c, half), step));
            }
        }
        if let Some(id) = self.pick(u)? {
            let tight = BoundingBox::from_center_half_extents(V::ZERO, V::ONE);
            moves.push((id, tight, V::ZERO));
        }
        let mut got = Vec::new();
        self.tree
            .move_proxies(moves.iter().copied(), |id, res| got.push((id, res)));
        assert_eq!(got.len(), moves.len());
        for (&(id, tight, d), &(got_id, res)) in moves.iter().zip(&got) {
            assert_eq!(id, got_id);
            self.check_batch_move(id, tight, d, res);
        }
        Ok(())
    }

    /// One outcome of a batch of moves against the oracle, which records the move: an
    /// unknown id refused, then (the order of `move_proxy`'s checks) the inputs, the rule,
    /// the new box.
    fn check_batch_move(
        &mut self,
        id: ProxyId,
        tight: BoundingBox<V>,
        d: V,
        res: std::result::Result<bool, TreeError>,
    ) {
        let Some(entry) = self.oracle.get(&id).copied() else {
            assert_eq!(res, Err(TreeError::UnknownProxy(id)));
            return;
        };
        let fat = self.fat_of(&tight, d);
        if !(valid(&tight) && coords(d).iter().all(|x| x.is_finite())) {
            assert!(res.is_err(), "accepted {tight:?} {d:?}");
            return;
        }
        let rule = keep_rule(&entry.fat, &tight, &fat);
        match res {
            Ok(false) => {
                assert_ne!(rule, Keep::No, "batch move of {id:?} kept {:?}", entry.fat);
                self.record_move(id, entry, tight, None);
            }
            Ok(true) => {
                assert_ne!(
                    rule,
                    Keep::Yes,
                    "batch move of {id:?} replaced {:?}",
                    entry.fat
                );
                assert!(valid(&fat), "batch move of {id:?} to {fat:?}");
                self.record_move(id, entry, tight, Some(fat));
            }
            Err(e) => {
                assert_eq!(e, TreeError::InvalidBox, "batch move of {id:?}");
                assert!(rule != Keep::Yes && !valid(&fat), "{tight:?} {d:?}");
            }
        }
    }

    /// The parallel batch of [`Self::batch_move`].
    fn parallel_batch_move(&mut self, u: &mut Unstructured, mut live: Vec<ProxyId>) -> Result<()> {
        let threads = usize::from(u.int_in_range(2u8..=4)?);
        let spread = f32::from(u.int_in_range(0u8..=8)?) * 0.05;
        if u.arbitrary::<bool>()? {
            live.reverse();
        }
        let mut moves = Vec::new();
        for &id in &live {
            let hostile = u.ratio(1u8, 32)?;
            let step = vector::<V>(u, hostile)? * spread;
            let tight = BoundingBox::from_center_half_extents(
                self.oracle[&id].tight.center() + step,
                self.oracle[&id].tight.half_extents(),
            );
            moves.push((id, tight, step));
        }
        if let Some(id) = self.pick(u)?.filter(|id| !self.oracle.contains_key(id)) {
            moves.push((
                id,
                BoundingBox::from_center_half_extents(V::ZERO, V::ONE),
                V::ZERO,
            ));
        }
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
        for &(id, tight, d) in &moves {
            self.check_batch_move(id, tight, d, got[&id]);
        }
        Ok(())
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
        self.oracle.insert(
            id,
            Entry {
                tight,
                fat: fat.unwrap_or(entry.fat),
                ..entry
            },
        );
    }

    /// One pair update (serial, or parallel on `threads` threads) against the oracle.
    fn check_pairs(&mut self, threads: usize) {
        let mut expected = BTreeSet::new();
        let entries: Vec<_> = self.oracle.iter().collect();
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
        // A second update with nothing moved reports nothing.
        let mut again = Vec::new();
        self.tree.update_pairs(&mut again);
        assert!(again.is_empty(), "pairs with nothing moved: {again:?}");
    }

    fn check_queries(&self, a: V, b: V, r: f32, max_t: f32) {
        let boxes = |e: &Entry<V>| (e.tight, e.fat);
        tree_queries::check_queries(&self.tree, &self.oracle, boxes, (a, b, r, max_t));
    }
}
