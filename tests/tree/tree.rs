//! The dynamic tree against a brute-force oracle, in 2D and 3D.
//!
//! The random tests apply random operations to a tree through the kit's model of it
//! (`tests/kit/tree_model.rs`, which the fuzz target drives too): each operation's
//! outcome checked, `validate` and the tree's agreement with the model's map of the live
//! proxies after every operation, and every query and the pair set against a linear scan
//! of the map. The others check bulk builds, bulk removals, removal orders, bad input,
//! the fat-box rule, batches of moves and the marks' epochs against brute force.

use std::collections::{BTreeMap, BTreeSet};

use bevy_aabb_tree::{BoundingBox, DynamicTree, ProxyId, Vector};
use glam::{Vec2, Vec3};
use proptest::prelude::*;

use crate::kit::tree_model::TreeModel;
use crate::kit::tree_scene;

use tree_scene::{jump_moves, lcg, uniform_tree, unknown_id, v};

/// One operation of the random sequences, applied to the model by [`apply`].
#[derive(Clone, Debug)]
enum Op {
    /// `create_proxy`.
    Insert {
        center: [f32; 3],
        half: [f32; 3],
    },
    /// `create_proxy_with` a displacement (NaN ones refused).
    InsertWith {
        center: [f32; 3],
        half: [f32; 3],
        predicted: [f32; 3],
    },
    /// Remove the proxy at this position (modulo the count) in id order.
    Remove(usize),
    /// Move a proxy by `to` (`teleport = false`) or to `to`.
    Move {
        which: usize,
        to: [f32; 3],
        half: [f32; 3],
        predicted: [f32; 3],
        teleport: bool,
    },
    /// `touch_proxy` on the proxy at this position.
    Touch(usize),
    /// `touch_proxy` on an id destroyed before.
    TouchDead,
    Pairs,
    Rebuild,
    /// Turn the move cache on or off.
    MoveCache(bool),
    Queries {
        a: [f32; 3],
        b: [f32; 3],
        r: f32,
    },
}

/// Updates the pairs of a tree moved in batches and of a copy moved one call at a time,
/// validates both, and checks that the batched one reported each pair once and the same
/// set as the copy; returns that set.
pub(crate) fn same_pairs<V: Vector>(
    batched: &mut DynamicTree<V, u32>,
    single: &mut DynamicTree<V, u32>,
    step: usize,
) -> BTreeSet<(ProxyId, ProxyId)> {
    let (mut pairs_b, mut pairs_s) = (Vec::new(), Vec::new());
    batched.update_pairs(&mut pairs_b);
    single.update_pairs(&mut pairs_s);
    batched.validate().unwrap();
    single.validate().unwrap();
    let got: BTreeSet<_> = pairs_b.iter().copied().collect();
    assert_eq!(got.len(), pairs_b.len(), "a pair reported twice");
    assert_eq!(
        got,
        pairs_s.iter().copied().collect::<BTreeSet<_>>(),
        "step {step}"
    );
    got
}

fn point() -> impl Strategy<Value = [f32; 3]> {
    prop::array::uniform3(-20.0f32..20.0)
}

fn half() -> impl Strategy<Value = [f32; 3]> {
    prop::array::uniform3(0.0f32..3.0)
}

fn insert() -> impl Strategy<Value = Op> {
    (point(), half()).prop_map(|(center, half)| Op::Insert { center, half })
}

/// The operations of the general random test: creation, removal, moves by small steps
/// and teleports, pair updates, rebuilds, the move cache and queries.
fn op_strategy() -> impl Strategy<Value = Op> {
    let moves = (
        any::<usize>(),
        prop::array::uniform3(-1.0f32..1.0),
        half(),
        prop::array::uniform3(-2.0f32..2.0),
        prop::bool::weighted(0.1),
    );
    prop_oneof![
        4 => insert(),
        2 => any::<usize>().prop_map(Op::Remove),
        6 => moves.prop_map(|(which, to, half, predicted, teleport)| {
            let to = to.map(|x| x * if teleport { 20.0 } else { 0.3 });
            Op::Move { which, to, half, predicted, teleport }
        }),
        2 => Just(Op::Pairs),
        1 => Just(Op::Rebuild),
        1 => any::<bool>().prop_map(Op::MoveCache),
        2 => (point(), point(), 0.0f32..6.0).prop_map(|(a, b, r)| Op::Queries { a, b, r }),
    ]
}

/// The public single-proxy operations: creation with and without a predicted
/// displacement (a NaN one, refused, a quarter of the time), removals, moves of boxes of
/// half extent 1, touches of live proxies and of a dead id, pair updates.
fn single_op_strategy() -> impl Strategy<Value = Op> {
    let d = || prop::array::uniform3(-2.0f32..2.0);
    prop_oneof![
        4 => insert(),
        1 => any::<usize>().prop_map(Op::Remove),
        3 => (any::<usize>(), prop::array::uniform3(-1.0f32..1.0), d())
            .prop_map(|(which, to, predicted)| Op::Move { which, to, half: [1.0; 3], predicted, teleport: false }),
        3 => (point(), half(), d(), 0u8..4).prop_map(|(center, half, predicted, kind)| {
            let predicted = if kind == 3 { [f32::NAN; 3] } else { predicted };
            Op::InsertWith { center, half, predicted }
        }),
        2 => any::<usize>().prop_map(Op::Touch),
        1 => Just(Op::TouchDead),
        2 => Just(Op::Pairs),
    ]
}

/// Applies `op` to the model (which checks its outcome and the whole tree).
fn apply<V: Vector>(m: &mut TreeModel<V>, op: &Op) {
    let tight = |center, half| BoundingBox::from_center_half_extents(v(center), v(half));
    match *op {
        Op::Insert { center, half } => {
            m.create(tight(center, half), None);
        }
        Op::InsertWith {
            center,
            half,
            predicted,
        } => {
            m.create(tight(center, half), Some(v(predicted)));
        }
        Op::Remove(i) => {
            if let Some(id) = m.nth_live(i) {
                m.destroy(id);
            }
        }
        Op::Move {
            which,
            to,
            half,
            predicted,
            teleport,
        } => {
            let Some(id) = m.nth_live(which) else { return };
            let center = if teleport {
                v::<V>(to)
            } else {
                m.live[&id].tight.center() + v::<V>(to)
            };
            let tight = BoundingBox::from_center_half_extents(center, v(half));
            m.move_one(id, tight, v(predicted));
        }
        Op::Touch(i) => {
            if let Some(id) = m.nth_live(i) {
                m.touch(id);
            }
        }
        Op::TouchDead => {
            if let Some(id) = m.dead_id() {
                m.touch(id);
            }
        }
        Op::Pairs => m.pairs(1),
        Op::Rebuild => m.rebuild(),
        Op::MoveCache(on) => m.set_move_cache(on),
        Op::Queries { a, b, r } => m.queries(v(a), v(b), r, 1.5),
    }
}

fn run<V: Vector>(ops: &[Op]) {
    let mut m = TreeModel::<V>::new(DynamicTree::with_margin(0.1));
    for op in ops {
        apply(&mut m, op);
    }
    m.finish();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn random_ops_2d(ops in prop::collection::vec(op_strategy(), 1..200)) {
        run::<Vec2>(&ops);
    }

    #[test]
    fn random_ops_3d(ops in prop::collection::vec(op_strategy(), 1..200)) {
        run::<Vec3>(&ops);
    }

    #[test]
    fn single_ops_2d(ops in prop::collection::vec(single_op_strategy(), 1..160)) {
        run::<Vec2>(&ops);
    }

    #[test]
    fn single_ops_3d(ops in prop::collection::vec(single_op_strategy(), 1..160)) {
        run::<Vec3>(&ops);
    }
}

/// Removal orders: in order, reverse, interleaved, random; validate after each.
fn removal_orders<V: Vector>() {
    let n = 100u32;
    let orders: Vec<Vec<usize>> = {
        let fwd: Vec<usize> = (0..n as usize).collect();
        let rev: Vec<usize> = fwd.iter().rev().copied().collect();
        let inter: Vec<usize> = (0..n as usize / 2)
            .flat_map(|i| [i, n as usize - 1 - i])
            .collect();
        let mut rnd = fwd.clone();
        let mut s = 7u32;
        for i in (1..rnd.len()).rev() {
            s = s.wrapping_mul(1664525).wrapping_add(1013904223);
            rnd.swap(i, (s >> 8) as usize % (i + 1));
        }
        vec![fwd, rev, inter, rnd]
    };
    for order in orders {
        let mut tree = DynamicTree::<V, u32>::new();
        let ids: Vec<ProxyId> = (0..n)
            .map(|i| {
                let c = v::<V>([(i % 10) as f32 * 1.5, (i / 10) as f32 * 1.5, (i % 3) as f32]);
                tree.create_proxy(BoundingBox::from_center_half_extents(c, V::splat(0.5)), i)
                    .unwrap()
            })
            .collect();
        tree.validate().unwrap();
        let mut alive: BTreeSet<ProxyId> = ids.iter().copied().collect();
        for &k in &order {
            assert_eq!(tree.destroy_proxy(ids[k]), Ok(k as u32));
            alive.remove(&ids[k]);
            tree.validate().unwrap();
            let live: BTreeSet<ProxyId> = tree.proxies().map(|(id, _, _)| id).collect();
            assert_eq!(live, alive);
        }
        assert!(tree.is_empty());
        assert_eq!(tree.root(), None);
    }
}

crate::kit::tests_2d_3d!(removal_orders: removal_orders_2d, removal_orders_3d);

/// The first `update_pairs` of a freshly built tree: every pair of proxies among `ids`
/// whose fat boxes overlap (all are new), each once, checked against brute force over the
/// fat boxes. Returns the pairs.
fn first_pairs_against_brute_force<V: Vector>(
    tree: &mut DynamicTree<V, u32>,
    ids: &[ProxyId],
) -> Vec<(ProxyId, ProxyId)> {
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    let got: BTreeSet<_> = pairs.iter().copied().collect();
    let mut want = BTreeSet::new();
    for i in 0..ids.len() {
        for j in i + 1..ids.len() {
            let (a, b) = (tree.fat_box(ids[i]).unwrap(), tree.fat_box(ids[j]).unwrap());
            if a.overlaps(&b) {
                want.insert((ids[i].min(ids[j]), ids[i].max(ids[j])));
            }
        }
    }
    assert_eq!(got, want);
    assert_eq!(got.len(), pairs.len(), "a pair reported twice");
    pairs
}

/// Bulk build gives the same pairs as brute force and a valid tree.
fn bulk_build<V: Vector>() {
    let mut tree = DynamicTree::<V, u32>::new();
    let mut r = lcg(99);
    let boxes: Vec<BoundingBox<V>> = (0..2000)
        .map(|_| {
            let c = v::<V>([r() * 60.0, r() * 60.0, r() * 60.0]);
            BoundingBox::from_center_half_extents(c, V::splat(0.5))
        })
        .collect();
    let ids = tree.build(boxes.iter().copied().zip(0u32..)).unwrap();
    tree.validate().unwrap();
    assert_eq!(tree.len(), boxes.len());
    first_pairs_against_brute_force(&mut tree, &ids);
    // An invalid box is refused and nothing is added.
    let bad = BoundingBox::from_min_max(V::splat(f32::NAN), V::ONE);
    assert!(tree.build([(bad, 0u32)]).is_err());
    assert_eq!(tree.len(), boxes.len());
    tree.validate().unwrap();
}

crate::kit::tests_2d_3d!(bulk_build: bulk_build_2d, bulk_build_3d);

/// A build sets a box much larger than the rest apart (a level-sized trigger volume over
/// clusters of small boxes): it hangs from the root, where the pair walk meets it once,
/// rather than among the boxes near its center, where it would widen every node above
/// them. Pairs equal brute force.
fn build_sets_a_large_box_apart<V: Vector>() {
    let mut tree = DynamicTree::<V, u32>::new();
    let mut r = lcg(7);
    // Four clusters of small boxes in a 100-unit region, and one box over all of it,
    // 200 units a side, among them in the input.
    let mut boxes: Vec<BoundingBox<V>> = Vec::new();
    for k in 0..4 {
        let at = [
            20.0 + 60.0 * (k % 2) as f32,
            20.0 + 60.0 * (k / 2) as f32,
            50.0,
        ];
        for _ in 0..150 {
            let c = v::<V>([at[0] + 8.0 * r(), at[1] + 8.0 * r(), at[2] + 8.0 * r()]);
            boxes.push(BoundingBox::from_center_half_extents(c, V::splat(0.4)));
        }
    }
    let large = 321;
    boxes.insert(
        large,
        BoundingBox::from_center_half_extents(V::splat(50.0), V::splat(100.0)),
    );
    let ids = tree.build(boxes.iter().copied().zip(0u32..)).unwrap();
    tree.validate().unwrap();
    let root = tree.node(tree.root().unwrap()).unwrap();
    let (c1, c2) = root.children.unwrap();
    let proxies: Vec<_> = [c1, c2]
        .iter()
        .filter_map(|&c| tree.node(c).unwrap().proxy)
        .collect();
    assert_eq!(proxies, [ids[large]], "the large box hangs from the root");
    let pairs = first_pairs_against_brute_force(&mut tree, &ids);
    // The large box overlaps every other.
    let with_large = pairs
        .iter()
        .filter(|p| p.0 == ids[large] || p.1 == ids[large]);
    assert_eq!(with_large.count(), boxes.len() - 1);
}

crate::kit::tests_2d_3d!(
    build_sets_a_large_box_apart:
    build_sets_a_large_box_apart_2d,
    build_sets_a_large_box_apart_3d
);

/// `destroy_proxies`, in bulk (a rebuild) and in small batches (one removal each), with
/// repeats (dead by then) among the ids: exactly the live ones go, the tree stays valid,
/// the rest keep their ids and fat boxes, box queries equal a brute-force scan of the
/// remaining boxes, and the moves pending before (marks) still report their pairs.
fn bulk_destroy<V: Vector>() {
    let mut r = lcg(7);
    let (_, mut tree, ids) = uniform_tree::<V>(&mut r, 3000);
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    let mut alive: BTreeMap<ProxyId, BoundingBox<V>> = ids
        .iter()
        .map(|&id| (id, tree.fat_box(id).unwrap()))
        .collect();
    // A few pending moves, so that some removed and some kept leaves carry marks.
    for &id in ids.iter().step_by(97) {
        let c = tree.fat_box(id).unwrap().center() + V::splat(3.0);
        let tight = BoundingBox::from_center_half_extents(c, V::splat(0.5));
        tree.move_proxy(id, tight, V::ZERO).unwrap();
        alive.insert(id, tree.fat_box(id).unwrap());
    }
    for (round, take) in [(0, 2000), (1, 40), (2, 600)] {
        let victims: Vec<ProxyId> = alive
            .keys()
            .copied()
            .filter(|_| r() < 0.9)
            .take(take)
            .collect();
        let mut ids_given = victims.clone();
        ids_given.extend(victims.iter().take(5).copied()); // repeats
        let removed = tree.destroy_proxies(&ids_given);
        assert_eq!(removed, victims.len(), "round {round}");
        for id in &victims {
            alive.remove(id);
            assert!(!tree.contains(*id));
        }
        tree.validate().unwrap();
        assert_eq!(tree.len(), alive.len());
        for (&id, fat) in &alive {
            assert_eq!(
                tree.fat_box(id),
                Some(*fat),
                "round {round}: {id:?} kept its box"
            );
        }
        for k in 0..50 {
            let c = v::<V>([r() * 140.0, r() * 140.0, r() * 140.0]);
            let q = BoundingBox::from_center_half_extents(c, V::splat(3.0 + k as f32 * 0.1));
            let mut got = BTreeSet::new();
            tree.query_box(&q, |id, _| {
                got.insert(id);
                true
            });
            let want: BTreeSet<ProxyId> = alive
                .iter()
                .filter(|(_, b)| b.overlaps(&q))
                .map(|(&id, _)| id)
                .collect();
            assert_eq!(got, want, "round {round}, query {k}");
        }
    }
    // The surviving moved proxies still report their new pairs.
    pairs.clear();
    tree.update_pairs(&mut pairs);
    tree.validate().unwrap();
    for &(a, b) in &pairs {
        assert!(alive.contains_key(&a) && alive.contains_key(&b));
    }
    // Everything at once: an empty, valid tree.
    let rest: Vec<ProxyId> = alive.keys().copied().collect();
    assert_eq!(tree.destroy_proxies(&rest), rest.len());
    assert!(tree.is_empty());
    tree.validate().unwrap();
}

crate::kit::tests_2d_3d!(bulk_destroy: bulk_destroy_2d, bulk_destroy_3d);

/// Invalid input is refused with an error and leaves the tree untouched.
fn bad_input<V: Vector>() {
    let mut tree = DynamicTree::<V, u32>::new();
    let good = BoundingBox::from_center_half_extents(V::ZERO, V::ONE);
    let id = tree.create_proxy(good, 1).unwrap();
    for bad in [
        BoundingBox::from_min_max(V::splat(f32::NAN), V::ONE),
        BoundingBox::from_min_max(V::ZERO, V::splat(f32::INFINITY)),
        BoundingBox::from_min_max(V::ONE, V::ZERO),
    ] {
        assert!(tree.create_proxy(bad, 2).is_err());
        assert!(tree.move_proxy(id, bad, V::ZERO).is_err());
    }
    assert!(tree.move_proxy(id, good, V::splat(f32::NAN)).is_err());
    assert!(tree.set_margin(-1.0).is_err());
    assert!(tree.set_margin(f32::NAN).is_err());
    // Huge but finite coordinates are fine.
    let far = BoundingBox::from_center_half_extents(V::splat(1e30), V::ONE);
    let far_id = tree.create_proxy(far, 3).unwrap();
    tree.validate().unwrap();
    assert_eq!(tree.len(), 2);
    assert_eq!(tree.fat_box(id), Some(good.grown(tree.margin())));
    tree.destroy_proxy(far_id).unwrap();
    assert!(tree.move_proxy(far_id, good, V::ZERO).is_err());
    tree.validate().unwrap();
}

crate::kit::tests_2d_3d!(bad_input: bad_input_2d, bad_input_3d);

/// The rule of a move, on hand-computed boxes (margin 0.05), through `move_proxy` and a
/// one-move batch: a fat box is kept while it holds the tight box and is at most four
/// times the area of the fat box the move would give, else replaced.
fn fat_box_rule<V: Vector>(batch: bool) {
    let mut tree = DynamicTree::<V, u32>::with_margin(0.05);
    let unit = |min: [f32; 3], max: [f32; 3]| BoundingBox::from_min_max(v::<V>(min), v::<V>(max));
    let a = tree.create_proxy(unit([0.0; 3], [1.0; 3]), 0).unwrap();
    let b = tree
        .create_proxy(unit([8.0, 0.5, 0.5], [9.0, 1.5, 1.5]), 1)
        .unwrap();
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    let step = |tree: &mut DynamicTree<V, u32>, tight, d: [f32; 3]| {
        let result = if batch {
            let mut got = None;
            tree.move_proxies([(a, tight, v::<V>(d))], |_, r| got = Some(r));
            got.unwrap()
        } else {
            tree.move_proxy(a, tight, v::<V>(d))
        };
        tree.validate().unwrap();
        let mut pairs = Vec::new();
        tree.update_pairs(&mut pairs);
        tree.validate().unwrap();
        (result, pairs)
    };
    let shifted = unit([0.5; 3], [1.5; 3]);
    // Leaves the fat box: a new one, swept 10 along x, which reaches `b`.
    assert_eq!(
        step(&mut tree, shifted, [10.0, 0.0, 0.0]),
        (Ok(true), vec![(a, b)])
    );
    let long = unit([0.5 - 0.05; 3], [11.5 + 0.05, 1.5 + 0.05, 1.5 + 0.05]);
    assert_eq!(tree.fat_box(a), Some(long));
    // Inside it, and still moving as fast: far larger than the tight box, but no larger
    // than the fat box this move gives, so kept.
    let further = unit([1.0, 0.5, 0.5], [2.0, 1.5, 1.5]);
    assert_eq!(
        step(&mut tree, further, [10.0, 0.0, 0.0]),
        (Ok(false), vec![])
    );
    assert_eq!(tree.fat_box(a), Some(long));
    // Stopped: the long box is over four times the area of `further` grown by the margin,
    // so it is replaced, and `b` is no longer near.
    assert_eq!(step(&mut tree, further, [0.0; 3]), (Ok(true), vec![]));
    let short = unit(
        [1.0 - 0.05, 0.5 - 0.05, 0.5 - 0.05],
        [2.0 + 0.05, 1.5 + 0.05, 1.5 + 0.05],
    );
    assert_eq!(tree.fat_box(a), Some(short));
    assert_eq!(step(&mut tree, further, [0.0; 3]), (Ok(false), vec![]));
}

#[test]
fn fat_box_rule_2d() {
    fat_box_rule::<Vec2>(false);
    fat_box_rule::<Vec2>(true);
}

#[test]
fn fat_box_rule_3d() {
    fat_box_rule::<Vec3>(false);
    fat_box_rule::<Vec3>(true);
}

/// Hundreds of thousands of random operations on a small tree, validated throughout.
fn long_run<V: Vector>(seed: u32) {
    let mut m = TreeModel::<V>::new(DynamicTree::with_margin(0.1));
    let mut r = lcg(seed);
    let ops = 150_000;
    for i in 0..ops {
        let x = r();
        let p = [r() * 40.0 - 20.0, r() * 40.0 - 20.0, r() * 40.0 - 20.0];
        let half = [r() * 2.0, r() * 2.0, r() * 2.0];
        let n = m.live.len();
        let op = if x < 0.3 && n < 64 || n < 8 {
            Op::Insert { center: p, half }
        } else if x < 0.4 {
            Op::Remove((r() * 1e6) as usize)
        } else if x < 0.9 {
            let to = [r() * 2.0 - 1.0, r() * 2.0 - 1.0, r() * 2.0 - 1.0];
            let predicted = [r() - 0.5, r() - 0.5, r() - 0.5];
            let teleport = r() < 0.05;
            Op::Move {
                which: (r() * 1e6) as usize,
                to: to.map(|x| x * if teleport { 20.0 } else { 0.3 }),
                half,
                predicted,
                teleport,
            }
        } else if x < 0.97 {
            Op::Pairs
        } else if x < 0.975 {
            Op::Rebuild
        } else {
            Op::Queries {
                a: p,
                b: [r() * 40.0 - 20.0, r() * 40.0 - 20.0, r() * 40.0 - 20.0],
                r: r() * 5.0,
            }
        };
        apply(&mut m, &op);
        if i % 50_000 == 0 {
            m.pairs(1);
        }
    }
}

crate::kit::tests_2d_3d!(long_run: long_run_2d(1), long_run_3d(2));

/// `move_proxies` against `move_proxy` called once per move, on two copies of one tree,
/// over steps that move most boxes (so the incremental rebuilds, which re-lay out the
/// arena, run every step): the same results, fat boxes and pairs, every pair set equal to
/// a brute-force scan, and `validate` passing after every step. Batches include repeated
/// ids, unknown ids and invalid boxes, and take each of the three paths: below the size
/// from which the batch sorts its leaves, above it, and large enough to refit the whole
/// tree. With `move_cache` false the batched tree keeps no move cache (the single one
/// does), so the two ways of deciding a move are checked against each other too.
fn batch_moves<V: Vector>(move_cache: bool) {
    let mut r = lcg(4242);
    let n = 3000;
    let (mut centers, mut batched, ids) = uniform_tree::<V>(&mut r, n);
    let mut single = batched.clone();
    batched.set_move_cache(move_cache);
    batched.validate().unwrap();
    let (mut pairs_b, mut pairs_s) = (Vec::new(), Vec::new());
    batched.update_pairs(&mut pairs_b);
    single.update_pairs(&mut pairs_s);
    assert_eq!(pairs_b, pairs_s);
    let unknown = unknown_id::<V>(n, 5);
    for step in 0..40 {
        // Every box (the whole-tree refit), 500 of 3000 (sorted leaves, interleaved
        // ancestor walks), or 100 (one walk after the other).
        let count = [n, n, 500, 100][step % 4];
        let moves = jump_moves(&mut r, step, count, &mut centers, &ids, unknown);
        let mut got = Vec::new();
        batched.move_proxies(moves.iter().copied(), |id, res| got.push((id, res)));
        let want: Vec<_> = moves
            .iter()
            .map(|&(id, tight, d)| (id, single.move_proxy(id, tight, d)))
            .collect();
        assert_eq!(got, want, "step {step}");
        assert!(got.iter().any(|(_, r)| r.is_err()));
        batched.validate().unwrap();
        assert_eq!(batched.stats().moved, single.stats().moved);
        for &id in &ids {
            assert_eq!(batched.fat_box(id), single.fat_box(id));
        }
        let got = same_pairs(&mut batched, &mut single, step);
        if step % 10 == 9 {
            // Every overlapping pair involving a proxy moved this step, by brute force.
            let moved: BTreeSet<ProxyId> = moves
                .iter()
                .map(|m| m.0)
                .filter(|id| want.iter().any(|(w, r)| w == id && r == &Ok(true)))
                .collect();
            let mut brute = BTreeSet::new();
            for a in 0..n {
                for b in a + 1..n {
                    let (ia, ib) = (ids[a], ids[b]);
                    if !(moved.contains(&ia) || moved.contains(&ib)) {
                        continue;
                    }
                    let (fa, fb) = (batched.fat_box(ia).unwrap(), batched.fat_box(ib).unwrap());
                    if fa.overlaps(&fb) {
                        brute.insert((ia.min(ib), ia.max(ib)));
                    }
                }
            }
            assert_eq!(got, brute, "step {step}");
        }
    }
}

crate::kit::tests_2d_3d!(batch_moves: batch_moves_2d(true), batch_moves_3d(true));

crate::kit::tests_2d_3d!(
    batch_moves:
    batch_moves_without_move_cache_2d(false),
    batch_moves_without_move_cache_3d(false)
);

/// Change marks are 8-bit epochs that the tree clears when they wrap (every 255
/// updates): 3,000 updates (eleven wraps), each after one move, report exactly the
/// brute-force pairs of the moved proxy, and the tree stays valid, checked around every
/// wrap.
fn epoch_wrap<V: Vector>() {
    let mut tree = DynamicTree::<V, u32>::with_margin(0.0);
    let ids: Vec<ProxyId> = (0..24)
        .map(|i| {
            let c = v::<V>([(i % 6) as f32 * 1.5, (i / 6) as f32 * 1.5, 0.0]);
            tree.create_proxy(BoundingBox::from_center_half_extents(c, V::splat(0.5)), i)
                .unwrap()
        })
        .collect();
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    for step in 0..3_000u32 {
        let k = (step as usize * 7) % ids.len();
        let id = ids[k];
        let x = (step % 11) as f32 * 0.8;
        let y = ((step / 11) % 5) as f32 * 1.2;
        let tight = BoundingBox::from_center_half_extents(v::<V>([x, y, 0.0]), V::splat(0.5));
        let changed = tree.move_proxy(id, tight, V::ZERO).unwrap();
        assert_eq!(tree.stats().moved, changed as usize);
        pairs.clear();
        tree.update_pairs(&mut pairs);
        assert_eq!(tree.stats().moved, 0, "marks are cleared by the update");
        if step % 255 < 3 || step % 255 > 252 {
            tree.validate().unwrap();
        }
        let got: BTreeSet<_> = pairs.iter().copied().collect();
        let mut want = BTreeSet::new();
        if changed {
            // Every pair of the moved proxy is new to the update; no other pair is.
            let fat = tree.fat_box(id).unwrap();
            for &other in &ids {
                if other != id && tree.fat_box(other).unwrap().overlaps(&fat) {
                    want.insert((id.min(other), id.max(other)));
                }
            }
        }
        assert_eq!(got, want, "step {step}");
        assert_eq!(got.len(), pairs.len());
    }
    tree.validate().unwrap();
}

crate::kit::tests_2d_3d!(epoch_wrap: epoch_wrap_2d, epoch_wrap_3d);
