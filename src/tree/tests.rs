//! Tests of the tree's crate-private operations, those the plugin drives: fat boxes set
//! by the caller (`set_fat_box`, `set_fat_boxes`), the keep rule (`keeps_fat_box` with
//! `fatten`) and the refit without pairs (`refit`). The public operations are tested
//! from outside the crate (`tests/tree.rs`, the fuzz target).
//!
//! Each test checks against an independent oracle: a brute-force scan of the fat boxes,
//! the same operation applied one call at a time on a copy of the tree, or the state
//! recorded from earlier calls; `validate` runs after every operation.

use std::collections::{BTreeMap, BTreeSet};

use glam::{Vec2, Vec3};
use proptest::prelude::*;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::{DynamicTree, NodeId, ProxyId, TreeError};

#[path = "../../tests/common/tree_scene.rs"]
pub(crate) mod tree_scene;

use tree_scene::{jump_moves, lcg, side_by_side, uniform_tree, unknown_id, v};

/// Every overlapping pair of fat boxes with at least one proxy in `moved`, as `(a, b)`
/// with `a < b`, by brute force.
fn brute_pairs<V: Vector>(
    boxes: &BTreeMap<ProxyId, BoundingBox<V>>,
    moved: &BTreeSet<ProxyId>,
) -> BTreeSet<(ProxyId, ProxyId)> {
    let mut want = BTreeSet::new();
    for a in moved {
        let Some(fa) = boxes.get(a) else { continue };
        for (b, fb) in boxes {
            if a != b && fa.overlaps(fb) {
                want.insert((*a.min(b), *a.max(b)));
            }
        }
    }
    want
}

/// `set_fat_boxes` against `set_fat_box` called once per box on two copies of a tree:
/// the same results (an unknown id and invalid boxes refused), fat boxes, moved counts
/// and pairs, with batches above and below the size from which the batch sorts.
fn batch_fat_boxes<V: Vector>() {
    let mut r = lcg(99);
    let n = 1500;
    let side = 2.5 * (n as f32).sqrt();
    let (_, mut batched, ids) = uniform_tree::<V>(&mut r, n);
    let mut single = batched.clone();
    let (mut pb, mut ps) = (Vec::new(), Vec::new());
    batched.update_pairs(&mut pb);
    single.update_pairs(&mut ps);
    let unknown = unknown_id::<V>(n, 3);
    for step in 0..12 {
        let count = if step % 3 == 2 { 50 } else { n };
        let boxes: Vec<_> = (0..count)
            .map(|k| {
                let i = (k * 389 + step) % n;
                let c = v::<V>([r() * side, r() * side, r() * side]);
                let fat = BoundingBox::from_center_half_extents(c, V::splat(0.5 + r()));
                match k % 101 {
                    3 => (unknown, fat),
                    4 => (ids[i], BoundingBox::from_min_max(V::ONE, V::ZERO)),
                    _ => (ids[i], fat),
                }
            })
            .collect();
        let mut got = Vec::new();
        batched.set_fat_boxes(boxes.iter().copied(), |id, res| got.push((id, res)));
        let want: Vec<_> = boxes
            .iter()
            .map(|&(id, fat)| (id, single.set_fat_box(id, fat)))
            .collect();
        assert_eq!(got, want, "step {step}");
        assert!(want.iter().any(|(_, r)| r.is_err()));
        batched.validate().unwrap();
        assert_eq!(batched.moved_count(), single.moved_count());
        for &id in &ids {
            assert_eq!(batched.fat_box(id), single.fat_box(id));
        }
        pb.clear();
        ps.clear();
        batched.update_pairs(&mut pb);
        single.update_pairs(&mut ps);
        batched.validate().unwrap();
        let set_b: BTreeSet<_> = pb.iter().copied().collect();
        assert_eq!(set_b.len(), pb.len());
        assert_eq!(
            set_b,
            ps.iter().copied().collect::<BTreeSet<_>>(),
            "step {step}"
        );
    }
}

#[test]
fn batch_fat_boxes_2d() {
    batch_fat_boxes::<Vec2>();
}

#[test]
fn batch_fat_boxes_3d() {
    batch_fat_boxes::<Vec3>();
}

/// `set_fat_box` refuses a box with a NaN or infinite corner or `min > max`, and leaves
/// the proxy's fat box and the tree as they were.
fn set_fat_box_bad_input<V: Vector>() {
    let mut tree = DynamicTree::<V, u32>::new();
    let good = BoundingBox::from_center_half_extents(V::ZERO, V::ONE);
    let id = tree.create_proxy(good, 1).unwrap();
    for bad in [
        BoundingBox::from_min_max(V::splat(f32::NAN), V::ONE),
        BoundingBox::from_min_max(V::ZERO, V::splat(f32::INFINITY)),
        BoundingBox::from_min_max(V::ONE, V::ZERO),
    ] {
        assert_eq!(tree.set_fat_box(id, bad), Err(TreeError::InvalidBox));
    }
    tree.validate().unwrap();
    assert_eq!(tree.fat_box(id), Some(good.grown(tree.margin())));
    tree.destroy_proxy(id).unwrap();
    assert_eq!(tree.set_fat_box(id, good), Err(TreeError::UnknownProxy(id)));
    tree.validate().unwrap();
}

#[test]
fn set_fat_box_bad_input_2d() {
    set_fat_box_bad_input::<Vec2>();
}

#[test]
fn set_fat_box_bad_input_3d() {
    set_fat_box_bad_input::<Vec3>();
}

/// The keep rule the plugin applies itself (`keeps_fat_box` with the fat box `fatten`
/// gives) says what `move_proxy` does, over the moves of the batch test in
/// `tests/tree.rs`: most boxes jumping a little every step, with and without a predicted
/// displacement, some twice in a step, some with invalid boxes or unknown ids.
fn keep_rule_is_the_move_rule<V: Vector>() {
    let mut r = lcg(4242);
    let n = 3000;
    let (mut centers, mut tree, ids) = uniform_tree::<V>(&mut r, n);
    tree.update_pairs(&mut Vec::new());
    let unknown = unknown_id::<V>(n, 5);
    let (mut kept, mut replaced) = (0, 0);
    for step in 0..40 {
        let count = [n, n, 500, 100][step % 4];
        let moves = jump_moves(&mut r, step, count, &mut centers, &ids, unknown);
        for (id, tight, d) in moves {
            let old = tree.fat_box(id);
            let result = tree.move_proxy(id, tight, d);
            if let (Some(old), Ok(changed)) = (old, result) {
                let fat = tree.fatten(&tight, d);
                assert_eq!(
                    changed,
                    !DynamicTree::<V, u32>::keeps_fat_box(&old, &tight, &fat),
                    "step {step}: {id:?}"
                );
                if changed {
                    replaced += 1;
                    assert_eq!(tree.fat_box(id), Some(fat));
                } else {
                    kept += 1;
                }
            }
        }
        tree.validate().unwrap();
        tree.update_pairs(&mut Vec::new());
    }
    assert!(
        kept > 1000 && replaced > 1000,
        "{kept} kept, {replaced} replaced"
    );
}

#[test]
fn keep_rule_is_the_move_rule_2d() {
    keep_rule_is_the_move_rule::<Vec2>();
}

#[test]
fn keep_rule_is_the_move_rule_3d() {
    keep_rule_is_the_move_rule::<Vec3>();
}

/// A panic in the caller's callback (or iterator) halfway through a batch leaves a valid
/// tree: every change decided so far is applied, the tree agrees with its own fat boxes,
/// and the next update reports exactly the brute-force pairs.
fn batch_panic_safety<V: Vector>(move_cache: bool) {
    let n = 600;
    let side = 2.5 * (n as f32).sqrt();
    let mut r = lcg(31);
    let mut tree = DynamicTree::<V, u32>::new();
    tree.set_move_cache(move_cache);
    let ids = tree
        .build((0..n as u32).map(|i| {
            let c = v::<V>([r() * side, r() * side, r() * side]);
            (BoundingBox::from_center_half_extents(c, V::splat(0.5)), i)
        }))
        .unwrap();
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    let moves: Vec<_> = ids
        .iter()
        .map(|&id| {
            let c = v::<V>([r() * side, r() * side, r() * side]);
            (
                id,
                BoundingBox::from_center_half_extents(c, V::splat(0.5)),
                V::ZERO,
            )
        })
        .collect();
    let mut seen = 0;
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tree.move_proxies(moves.iter().copied(), |_, _| {
            seen += 1;
            assert!(seen < 400, "the caller's callback panics");
        });
    }));
    assert!(caught.is_err());
    tree.validate().unwrap();
    let mut caught_boxes = 0;
    let caught_fat = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let boxes = ids.iter().map(|&id| {
            caught_boxes += 1;
            assert!(caught_boxes < 300, "the caller's iterator panics");
            (
                id,
                BoundingBox::from_center_half_extents(V::ZERO, V::splat(0.5)),
            )
        });
        tree.set_fat_boxes(boxes, |_, _| {});
    }));
    assert!(caught_fat.is_err());
    tree.validate().unwrap();
    pairs.clear();
    tree.update_pairs(&mut pairs);
    tree.validate().unwrap();
    let got: BTreeSet<_> = pairs.iter().copied().collect();
    assert_eq!(got.len(), pairs.len());
    let fat: Vec<_> = ids.iter().map(|&id| tree.fat_box(id).unwrap()).collect();
    // Every reported pair overlaps, and the 299 boxes set before the iterator panicked
    // (all at the origin, so all overlapping) are reported with one another.
    for &(a, b) in &pairs {
        assert!(tree.fat_box(a).unwrap().overlaps(&tree.fat_box(b).unwrap()));
    }
    for i in 0..299 {
        for j in i + 1..299 {
            assert!(fat[i].overlaps(&fat[j]));
            assert!(got.contains(&(ids[i].min(ids[j]), ids[i].max(ids[j]))));
        }
    }
}

#[test]
fn batch_panic_safety_2d() {
    batch_panic_safety::<Vec2>(true);
}

#[test]
fn batch_panic_safety_3d() {
    batch_panic_safety::<Vec3>(true);
}

/// Without the move cache, where a move writes its parent's slot before the batch grows
/// the ancestors.
#[test]
fn batch_panic_safety_without_move_cache() {
    batch_panic_safety::<Vec2>(false);
    batch_panic_safety::<Vec3>(false);
}

/// `refit` after moves: every internal box is its children's union again (checked node by
/// node through the public inspection), the moves are forgotten (the next update reports
/// no pair, though moved boxes overlap others), fat boxes are kept and box queries equal
/// a brute-force scan. Every `stride`-th proxy moves at each step: a third of them refits
/// the whole tree, a few refit only their paths up.
fn refit<V: Vector>(stride: usize) {
    let mut r = lcg(17);
    let n = 800;
    let (mut centers, mut tree, ids) = uniform_tree::<V>(&mut r, n);
    tree.update_pairs(&mut Vec::new());
    let mut overlapping_steps = 0;
    for step in 0..6 {
        let mut moved = BTreeSet::new();
        for k in (step..n).step_by(stride) {
            if stride > 3 {
                // Few moves: each jumps next to another box, so that the moved boxes
                // overlap others.
                centers[k] = centers[(k + 1) % n];
            }
            centers[k] += v::<V>([r() - 0.5, r() - 0.5, r() - 0.5]) * 1.5;
            let tight = BoundingBox::from_center_half_extents(centers[k], V::splat(0.5));
            if tree.move_proxy(ids[k], tight, V::ZERO).unwrap() {
                moved.insert(ids[k]);
            }
        }
        let boxes: BTreeMap<ProxyId, BoundingBox<V>> = ids
            .iter()
            .map(|&id| (id, tree.fat_box(id).unwrap()))
            .collect();
        // The update after the refit reports nothing, where it would have reported these.
        let overlaps_moved = !brute_pairs(&boxes, &moved).is_empty();
        assert_eq!(tree.moved_count(), moved.len());
        tree.refit();
        tree.validate().unwrap();
        assert_eq!(tree.moved_count(), 0, "step {step}: moves forgotten");
        let mut stack: Vec<_> = tree.root().into_iter().collect();
        let mut internal = 0;
        while let Some(id) = stack.pop() {
            let node = tree.node(id).unwrap();
            if let Some(proxy) = node.proxy {
                assert_eq!(Some(node.aabb), tree.fat_box(proxy));
                continue;
            }
            let (c1, c2) = node.children.unwrap();
            let union = tree
                .node(c1)
                .unwrap()
                .aabb
                .merged(&tree.node(c2).unwrap().aabb);
            assert_eq!(node.aabb, union, "step {step}: node {id:?} not exact");
            internal += 1;
            stack.extend([c1, c2]);
        }
        assert_eq!(internal, n - 1);
        overlapping_steps += usize::from(overlaps_moved);
        let mut pairs = Vec::new();
        tree.update_pairs(&mut pairs);
        assert!(pairs.is_empty(), "step {step}: {} pairs", pairs.len());
        for (&id, fat) in &boxes {
            assert_eq!(tree.fat_box(id), Some(*fat));
        }
        for q in 0..20 {
            let c = v::<V>([r() * 70.0, r() * 70.0, r() * 70.0]);
            let query = BoundingBox::from_center_half_extents(c, V::splat(2.0 + q as f32));
            let mut got = BTreeSet::new();
            tree.query_box(&query, |id, _| got.insert(id));
            let want: BTreeSet<ProxyId> = boxes
                .iter()
                .filter(|(_, b)| b.overlaps(&query))
                .map(|(&id, _)| id)
                .collect();
            assert_eq!(got, want, "step {step}, query {q}");
        }
    }
    // The check that the update after a refit reports nothing means something only
    // where it would have reported pairs.
    assert!(overlapping_steps > 0, "no moved box overlaps another");
}

#[test]
fn refit_2d() {
    refit::<Vec2>(3);
    refit::<Vec2>(37);
}

#[test]
fn refit_3d() {
    refit::<Vec3>(3);
    refit::<Vec3>(37);
}

/// One operation of the random sequences below.
#[derive(Clone, Debug)]
enum Op {
    Insert {
        center: [f32; 3],
        half: [f32; 3],
    },
    /// Remove the proxy at this position (modulo the count) in id order.
    Remove(usize),
    /// Move a proxy a small step with `move_proxy`.
    Move {
        which: usize,
        to: [f32; 3],
        predicted: [f32; 3],
    },
    /// Set a proxy's fat box with `set_fat_box`: ordered corners, or as given (maybe
    /// inverted, refused), or a NaN corner (refused).
    SetFatBox {
        which: usize,
        a: [f32; 3],
        b: [f32; 3],
        kind: u8,
    },
    /// `set_fat_box` on an id destroyed before.
    SetDead,
    Pairs,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let p = || prop::array::uniform3(-20.0f32..20.0);
    let h = || prop::array::uniform3(0.0f32..3.0);
    prop_oneof![
        4 => (p(), h()).prop_map(|(center, half)| Op::Insert { center, half }),
        1 => any::<usize>().prop_map(Op::Remove),
        3 => (any::<usize>(), prop::array::uniform3(-1.0f32..1.0), prop::array::uniform3(-2.0f32..2.0))
            .prop_map(|(which, to, predicted)| Op::Move { which, to, predicted }),
        4 => (any::<usize>(), p(), p(), 0u8..4).prop_map(|(which, a, b, kind)| Op::SetFatBox { which, a, b, kind }),
        1 => Just(Op::SetDead),
        2 => Just(Op::Pairs),
    ]
}

/// A tree driven by random operations among which `set_fat_box` is frequent, against a
/// map of the fat boxes and the set of proxies moved since the last update: every call's
/// result, every fat box and the moved count after each operation, and every update's
/// pairs against a brute-force scan.
fn set_fat_box_ops<V: Vector>(ops: &[Op]) {
    let mut tree = DynamicTree::<V, u32>::with_margin(0.1);
    let mut boxes: BTreeMap<ProxyId, BoundingBox<V>> = BTreeMap::new();
    let mut moved = BTreeSet::new();
    let mut dead = Vec::new();
    let nth = |boxes: &BTreeMap<ProxyId, BoundingBox<V>>, i: usize| {
        (!boxes.is_empty()).then(|| *boxes.keys().nth(i % boxes.len()).unwrap())
    };
    let check_pairs = |tree: &mut DynamicTree<V, u32>,
                       boxes: &BTreeMap<ProxyId, BoundingBox<V>>,
                       moved: &mut BTreeSet<ProxyId>| {
        let mut pairs = Vec::new();
        tree.update_pairs(&mut pairs);
        let got: BTreeSet<_> = pairs.iter().copied().collect();
        assert_eq!(got.len(), pairs.len(), "a pair was reported twice");
        assert_eq!(got, brute_pairs(boxes, moved));
        moved.clear();
    };
    for (k, op) in ops.iter().enumerate() {
        match *op {
            Op::Insert { center, half } => {
                let tight = BoundingBox::from_center_half_extents(v(center), v(half));
                let id = tree.create_proxy(tight, k as u32).unwrap();
                boxes.insert(id, tight.grown(0.1));
                moved.insert(id);
            }
            Op::Remove(i) => {
                let Some(id) = nth(&boxes, i) else { continue };
                tree.destroy_proxy(id).unwrap();
                boxes.remove(&id);
                moved.remove(&id);
                dead.push(id);
            }
            Op::Move {
                which,
                to,
                predicted,
            } => {
                let Some(id) = nth(&boxes, which) else {
                    continue;
                };
                let old = boxes[&id];
                let tight =
                    BoundingBox::from_center_half_extents(old.center() + v::<V>(to), V::ONE);
                let d: V = v(predicted);
                let changed = tree.move_proxy(id, tight, d).unwrap();
                let fat = tree.fat_box(id).unwrap();
                if changed {
                    assert_eq!(fat, tight.swept(d).grown(0.1));
                    boxes.insert(id, fat);
                    moved.insert(id);
                } else {
                    assert_eq!(fat, old, "an unchanged move keeps the fat box");
                    assert!(old.contains(&tight));
                }
            }
            Op::SetFatBox { which, a, b, kind } => {
                let Some(id) = nth(&boxes, which) else {
                    continue;
                };
                let (a, b): (V, V) = (v(a), v(b));
                let (fat, valid) = match kind {
                    0 | 1 => (BoundingBox::from_min_max(a.min(b), a.max(b)), true),
                    2 => {
                        let fat = BoundingBox::from_min_max(a, b);
                        (fat, a.all_le(b))
                    }
                    _ => (BoundingBox::from_min_max(V::splat(f32::NAN), b), false),
                };
                if valid {
                    assert_eq!(tree.set_fat_box(id, fat), Ok(()));
                    boxes.insert(id, fat);
                    moved.insert(id);
                } else {
                    assert_eq!(tree.set_fat_box(id, fat), Err(TreeError::InvalidBox));
                }
            }
            Op::SetDead => {
                if let Some(&id) = dead.last()
                    && !boxes.contains_key(&id)
                {
                    let any = BoundingBox::from_center_half_extents(V::ZERO, V::ONE);
                    assert_eq!(tree.set_fat_box(id, any), Err(TreeError::UnknownProxy(id)));
                }
            }
            Op::Pairs => check_pairs(&mut tree, &boxes, &mut moved),
        }
        if let Err(e) = tree.validate() {
            panic!("invalid after {op:?}: {e}");
        }
        assert_eq!(tree.len(), boxes.len());
        assert_eq!(tree.moved_count(), moved.len(), "after {op:?}");
        for (&id, fat) in &boxes {
            assert_eq!(tree.fat_box(id), Some(*fat), "after {op:?}");
        }
    }
    check_pairs(&mut tree, &boxes, &mut moved);
    tree.validate().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn set_fat_box_ops_2d(ops in prop::collection::vec(op_strategy(), 1..160)) {
        set_fat_box_ops::<Vec2>(&ops);
    }

    #[test]
    fn set_fat_box_ops_3d(ops in prop::collection::vec(op_strategy(), 1..160)) {
        set_fat_box_ops::<Vec3>(&ops);
    }
}

/// The proxies under a node (a leaf's own), sorted.
fn proxies_under<V: Vector>(tree: &DynamicTree<V, u32>, top: NodeId) -> Vec<ProxyId> {
    let mut found = Vec::new();
    let mut stack = vec![top];
    while let Some(id) = stack.pop() {
        if id.is_leaf() {
            found.push(id.proxy());
        } else {
            stack.extend(tree.nodes[id.index()].children);
        }
    }
    found.sort_unstable();
    found
}

/// A rotation's exchange of two internal subtrees (B of A with F of A's other child C):
/// each parent slot then holds the other subtree's leaves, with the box held for it; the
/// tree validates; and every pair of internal children that sat side by side still does.
fn rotation_exchange<V: Vector>() {
    let mut r = lcg(31);
    let (_, mut tree, _) = uniform_tree::<V>(&mut r, 600);
    let before = side_by_side(&tree);
    assert_eq!(before.0, before.1, "a build lays every pair side by side");
    let mut exchanged = 0;
    let mut stack = vec![tree.root];
    while let Some(a) = stack.pop() {
        if a.is_leaf() {
            continue;
        }
        let [b, c] = tree.nodes[a.index()].children;
        stack.extend([b, c]);
        if b.is_leaf() || c.is_leaf() {
            continue;
        }
        let f = tree.nodes[c.index()].children[0];
        if f.is_leaf() {
            continue;
        }
        let (leaves_b, leaves_f) = (proxies_under(&tree, b), proxies_under(&tree, f));
        let (box_b, box_f) = (
            tree.nodes[a.index()].boxes[0],
            tree.nodes[c.index()].boxes[0],
        );
        tree.swap_subtrees(b, f);
        tree.refit_node(c);
        let mut up = a;
        while !up.is_null() {
            tree.refit_node(up);
            up = tree.parent_of(up);
        }
        let (na, nc) = (&tree.nodes[a.index()], &tree.nodes[c.index()]);
        assert_eq!(proxies_under(&tree, na.children[0]), leaves_f);
        assert_eq!(proxies_under(&tree, nc.children[0]), leaves_b);
        assert_eq!((na.boxes[0], nc.boxes[0]), (box_f, box_b));
        tree.validate().unwrap();
        exchanged += 1;
    }
    assert!(exchanged > 20, "{exchanged} exchanges");
    assert_eq!(side_by_side(&tree), before);
}

#[test]
fn rotation_exchange_2d() {
    rotation_exchange::<Vec2>();
}

#[test]
fn rotation_exchange_3d() {
    rotation_exchange::<Vec3>();
}

/// Moves every proxy of `moving` by a random step (fat boxes change: the steps exceed the
/// margin) and runs an update; returns the update's pairs.
/// Every proxy's fat box, by id.
fn fat_boxes<V: Vector>(
    tree: &DynamicTree<V, u32>,
    ids: &[ProxyId],
) -> BTreeMap<ProxyId, BoundingBox<V>> {
    ids.iter()
        .map(|&id| (id, tree.fat_box(id).unwrap()))
        .collect()
}

/// The proxies whose fat box differs between `before` and `after`.
fn changed<V: Vector>(
    before: &BTreeMap<ProxyId, BoundingBox<V>>,
    after: &BTreeMap<ProxyId, BoundingBox<V>>,
) -> BTreeSet<ProxyId> {
    after
        .iter()
        .filter(|&(id, fat)| before[id] != *fat)
        .map(|(&id, _)| id)
        .collect()
}

/// Moves `center` by up to 0.3 on each axis and gives the unit box around it.
fn jiggle<V: Vector>(center: &mut V, r: &mut impl FnMut() -> f32) -> BoundingBox<V> {
    *center += v::<V>([r() - 0.5, r() - 0.5, r() - 0.5]) * 0.6;
    BoundingBox::from_center_half_extents(*center, V::splat(0.5))
}

fn step_some<V: Vector>(
    tree: &mut DynamicTree<V, u32>,
    centers: &mut [V],
    ids: &[ProxyId],
    moving: impl Fn(usize) -> bool,
    r: &mut impl FnMut() -> f32,
) -> Vec<(ProxyId, ProxyId)> {
    for (k, &id) in ids.iter().enumerate() {
        if moving(k) {
            let tight = jiggle(&mut centers[k], r);
            tree.move_proxy(id, tight, V::ZERO).unwrap();
        }
    }
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    pairs
}

/// A candidate rebuild with `still_for` sets the still leaves apart: after every third
/// proxy moved at each of 70 updates (the others never), a rebuild of the whole tree from
/// its leaves puts exactly the moving ones on one side of the root and the still ones on
/// the other. The updates' pairs (their own rebuilds split the same way) equal a brute
/// force scan, and the tree validates throughout.
fn still_split<V: Vector>() {
    let mut r = lcg(77);
    let n = 900;
    let (mut centers, mut tree, ids) = uniform_tree::<V>(&mut r, n);
    let moving = |k: usize| k.is_multiple_of(3);
    // The build's proxies are all new to the first update.
    tree.update_pairs(&mut Vec::new());
    for _ in 0..70 {
        let before = fat_boxes(&tree, &ids);
        let got = step_some(&mut tree, &mut centers, &ids, moving, &mut r);
        let got: BTreeSet<_> = got.into_iter().map(|(a, b)| (a.min(b), a.max(b))).collect();
        let boxes = fat_boxes(&tree, &ids);
        assert_eq!(got, brute_pairs::<V>(&boxes, &changed(&before, &boxes)));
        tree.validate().unwrap();
    }
    let moved: Vec<ProxyId> = ids
        .iter()
        .enumerate()
        .filter(|&(k, _)| moving(k))
        .map(|(_, &id)| id)
        .collect();
    let root = tree.root;
    tree.rebuild_subtree(root, 0, 64);
    tree.validate().unwrap();
    let [a, b] = tree.nodes[tree.root.index()].children;
    let mut sides = [proxies_under(&tree, a), proxies_under(&tree, b)];
    sides.sort_by_key(|side| side.len());
    assert_eq!(sides[0], moved);
    assert_eq!(sides[1].len(), n - moved.len());
}

#[test]
fn still_split_2d() {
    still_split::<Vec2>();
}

#[test]
fn still_split_3d() {
    still_split::<Vec3>();
}

/// Batches of moves that change between an eighth and a half of the leaves refit only
/// the recent subtrees: two sets of proxies take turns, each still for 10 updates (longer
/// than a subtree stays recent) while the other moves, then both move; the epochs wrap
/// on the way. At every update the batch's changes are in that range, the pairs equal a
/// brute force scan, and the tree validates (every box encloses its children's and is
/// exact after the batch, every mark is no more recent than its holder's).
fn batches_wake_still_subtrees<V: Vector>() {
    let mut r = lcg(91);
    let n = 1300;
    let (mut centers, mut tree, ids) = uniform_tree::<V>(&mut r, n);
    // Updates without moves bring the epochs near their wrap, which then falls among
    // the updates below.
    for _ in 0..230 {
        tree.update_pairs(&mut Vec::new());
    }
    let mut wrapped = false;
    let phases: [&dyn Fn(usize) -> bool; 3] = [&|k| k % 4 == 0, &|k| k % 4 == 1, &|k| {
        k % 4 == 0 || k % 8 == 1
    }];
    for moving in phases {
        for _ in 0..10 {
            let before = fat_boxes(&tree, &ids);
            let mut moves = Vec::new();
            for (k, &id) in ids.iter().enumerate() {
                if moving(k) {
                    moves.push((id, jiggle(&mut centers[k], &mut r), V::ZERO));
                }
            }
            tree.move_proxies(moves, |_, result| {
                result.unwrap();
            });
            tree.validate().unwrap();
            assert!(tree.exact, "a one-pass refit");
            let epoch = tree.epoch;
            let mut got = Vec::new();
            tree.update_pairs(&mut got);
            wrapped |= tree.epoch < epoch;
            let got: BTreeSet<_> = got.into_iter().map(|(a, b)| (a.min(b), a.max(b))).collect();
            let boxes = fat_boxes(&tree, &ids);
            let moved = changed(&before, &boxes);
            assert!(
                moved.len() >= 256 && moved.len() * 8 >= n && moved.len() * 2 < n,
                "{} changed",
                moved.len()
            );
            assert_eq!(got, brute_pairs::<V>(&boxes, &moved));
            tree.validate().unwrap();
        }
    }
    assert!(wrapped, "the epochs wrapped");
}

#[test]
fn batches_wake_still_subtrees_2d() {
    batches_wake_still_subtrees::<Vec2>();
}

#[test]
fn batches_wake_still_subtrees_3d() {
    batches_wake_still_subtrees::<Vec3>();
}

/// A square (cubic) lattice of unit boxes packed edge to edge, `per_row` a side, box `k`
/// in the cell given by `k`'s digits in base `per_row`, first axis first.
struct Lattice<V> {
    per_row: usize,
    n: usize,
    dim: core::marker::PhantomData<V>,
}

impl<V: Vector> Lattice<V> {
    /// `per_row_2d` boxes a side in 2D, `per_row_3d` in 3D.
    fn new(per_row_2d: usize, per_row_3d: usize) -> Self {
        let per_row = if V::DIM == 2 { per_row_2d } else { per_row_3d };
        Self {
            per_row,
            n: per_row.pow(V::DIM as u32),
            dim: core::marker::PhantomData,
        }
    }

    /// The center of box `k`'s cell.
    fn cell(&self, k: usize) -> V {
        let p = self.per_row;
        v::<V>([k % p, (k / p) % p, k / (p * p)].map(|a| a as f32 + 0.5))
    }

    /// The unit box around `center`.
    fn unit(center: V) -> BoundingBox<V> {
        BoundingBox::from_center_half_extents(center, V::splat(0.5))
    }

    /// Box `k` moved by up to a quarter on each axis from its cell's center.
    fn jiggled(&self, k: usize, r: &mut impl FnMut() -> f32) -> BoundingBox<V> {
        Self::unit(self.cell(k) + v::<V>([r() - 0.5, r() - 0.5, r() - 0.5]) * 0.5)
    }

    /// Every box built into a tree with margin 0.05 (proxy `k`'s payload is `k`), with
    /// the first update run: the tree and the ids.
    fn tree(&self) -> (DynamicTree<V, u32>, Vec<ProxyId>) {
        let mut tree = DynamicTree::<V, u32>::with_margin(0.05);
        let boxes = (0..self.n).map(|k| (Self::unit(self.cell(k)), k as u32));
        let ids = tree.build(boxes).unwrap();
        tree.update_pairs(&mut Vec::new());
        (tree, ids)
    }
}

/// Both searches of a pair update, serial and parallel, against brute force on a lattice
/// of touching unit boxes (every box touches its neighbours, the case the leaf-by-leaf
/// search is for): at each of 150 updates a few proxies (about one in 16, so that both
/// searches may run) jiggle in their cell, and every 10th update two are destroyed and
/// two created (new proxies count as moved). A copy of the tree takes the same operations
/// and updates on 3 threads. Every update's pairs, on both, equal a brute-force scan,
/// none is reported twice (a pair of two moved leaves is found from both), both trees
/// validate, and both ran both searches.
fn lattice_searches<V: Vector + Sync>() {
    let mut r = lcg(17);
    let lattice = Lattice::<V>::new(40, 12);
    let (n, cell, unit) = (lattice.n, |k| lattice.cell(k), Lattice::<V>::unit);
    let (mut tree, mut ids) = lattice.tree();
    let mut par = tree.clone();
    let mut created = BTreeSet::new();
    for step in 0..150 {
        let before = fat_boxes(&tree, &ids);
        if step % 10 == 9 {
            for _ in 0..2 {
                let k = (r() * n as f32) as usize % n;
                for t in [&mut tree, &mut par] {
                    t.destroy_proxy(ids[k]).unwrap();
                }
                let id = tree.create_proxy(unit(cell(k)), k as u32).unwrap();
                assert_eq!(par.create_proxy(unit(cell(k)), k as u32), Ok(id));
                ids[k] = id;
                created.insert(id);
            }
        }
        for (k, &id) in ids.iter().enumerate() {
            if r() < 1.0 / 16.0 {
                let moved = lattice.jiggled(k, &mut r);
                for t in [&mut tree, &mut par] {
                    t.move_proxy(id, moved, V::ZERO).unwrap();
                }
            }
        }
        let boxes = fat_boxes(&tree, &ids);
        let mut moved: BTreeSet<ProxyId> = boxes
            .iter()
            .filter(|&(id, fat)| before.get(id) != Some(fat))
            .map(|(&id, _)| id)
            .collect();
        moved.append(&mut created);
        let want = brute_pairs::<V>(&boxes, &moved);
        let (mut serial, mut parallel) = (Vec::new(), Vec::new());
        tree.update_pairs(&mut serial);
        par.update_pairs_parallel(&mut parallel, 3);
        for (label, got) in [("serial", serial), ("parallel", parallel)] {
            let reported = got.len();
            let got: BTreeSet<_> = got.into_iter().map(|(a, b)| (a.min(b), a.max(b))).collect();
            assert_eq!(
                got.len(),
                reported,
                "step {step}, {label}: a pair reported twice"
            );
            assert_eq!(got, want, "step {step}, {label}");
        }
        tree.validate().unwrap();
        par.validate().unwrap();
    }
    assert!(tree.search.ran_both(), "{:?}", tree.search);
    assert!(par.search.ran_both(), "{:?}", par.search);
    assert!(tree.stats().leaf_searches > 0 && par.stats().leaf_searches > 0);
}

/// A parallel update counts the same nodes visited however many tasks it is split into
/// (the searches are chosen from those counts, so the choice, and with it the tree, does
/// not depend on the pool): three copies of a lattice of touching boxes take the same
/// moves and update as jobs of 1, 7 and 64 tasks, at 120 updates with about one box in
/// 12 moving. Each update's count and pairs (as sets) are the same on the three.
fn parallel_visits_ignore_the_split<V: Vector + Sync>() {
    let mut r = lcg(29);
    let lattice = Lattice::<V>::new(30, 10);
    let (first, ids) = lattice.tree();
    let mut trees = [first.clone(), first.clone(), first];
    for step in 0..120 {
        for (k, &id) in ids.iter().enumerate() {
            if r() < 1.0 / 12.0 {
                let moved = lattice.jiggled(k, &mut r);
                for tree in &mut trees {
                    tree.move_proxy(id, moved, V::ZERO).unwrap();
                }
            }
        }
        let mut outcomes = Vec::new();
        for (tree, min_tasks) in trees.iter_mut().zip([1, 7, 64]) {
            let before = tree.stats().nodes_visited;
            let mut pairs = BTreeSet::new();
            let job = tree.parallel_pairs(min_tasks);
            for task in 0..job.task_count() {
                job.run(task, |a, b| {
                    pairs.insert((a, b));
                });
            }
            drop(job);
            outcomes.push((tree.stats().nodes_visited - before, pairs));
            tree.validate().unwrap();
        }
        assert_eq!(outcomes[0], outcomes[1], "step {step}: 1 and 7 tasks");
        assert_eq!(outcomes[0], outcomes[2], "step {step}: 1 and 64 tasks");
    }
    assert!(trees.iter().all(|tree| tree.search.ran_both()));
}

#[test]
fn parallel_visits_ignore_the_split_2d() {
    parallel_visits_ignore_the_split::<Vec2>();
}

#[test]
fn parallel_visits_ignore_the_split_3d() {
    parallel_visits_ignore_the_split::<Vec3>();
}

#[test]
fn lattice_searches_2d() {
    lattice_searches::<Vec2>();
}

#[test]
fn lattice_searches_3d() {
    lattice_searches::<Vec3>();
}

/// How many updates ago a proxy's mark was set survives the epochs' wrap: a proxy moved
/// once, then 400 updates in which only others move; its mark's age (the epoch less the
/// mark) is exact while under the shift at the wrap (128) and stays at least that after.
#[test]
fn mark_age_across_the_wrap() {
    let mut r = lcg(5);
    let (mut centers, mut tree, ids) = uniform_tree::<Vec2>(&mut r, 300);
    // Some updates first, so that the wrap falls at a different place in the count.
    for _ in 0..37 {
        step_some(&mut tree, &mut centers, &ids, |k| k % 2 == 1, &mut r);
    }
    step_some(&mut tree, &mut centers, &ids, |k| k == 0, &mut r);
    for since in 1..=400u32 {
        let link = tree.link_of(NodeId::leaf(ids[0]));
        let age = u32::from(tree.epoch - tree.slot_stamp(link));
        if since < 128 {
            assert_eq!(age, since, "{since} updates since the move");
        } else {
            assert!(age >= 128, "{since} updates since the move: age {age}");
        }
        step_some(&mut tree, &mut centers, &ids, |k| k % 2 == 1, &mut r);
    }
}

/// Whether two trees hold the same nodes (boxes, marks, links, heights), leaves, move
/// cache, root, moved count and the counts that steer later updates (the last recent
/// refit's, the optimizer's changes): the same state, bit for bit, but for the scratch
/// space.
pub(crate) fn assert_same_tree<V: Vector, T>(
    a: &DynamicTree<V, T>,
    b: &DynamicTree<V, T>,
    what: &str,
) {
    assert_eq!(
        (a.root, a.root_box, a.root_stamp),
        (b.root, b.root_box, b.root_stamp),
        "{what}"
    );
    assert_eq!(a.moved_count, b.moved_count, "{what}");
    // What the last refit of the recent subtrees counted, which steers later batches.
    assert_eq!(a.recent_refits, b.recent_refits, "{what}");
    assert_eq!(a.leaves.len(), b.leaves.len(), "{what}");
    for (i, (x, y)) in a.leaves.iter().zip(&b.leaves).enumerate() {
        assert_eq!(x, y, "{what}: leaf {i}");
    }
    assert_eq!(a.optimizer.changes, b.optimizer.changes, "{what}");
    assert_eq!(a.fat_boxes.len(), b.fat_boxes.len(), "{what}");
    for (i, (x, y)) in a.fat_boxes.iter().zip(&b.fat_boxes).enumerate() {
        assert_eq!(x, y, "{what}: fat box {i}");
    }
    assert_eq!(a.nodes.len(), b.nodes.len(), "{what}");
    for (i, (x, y)) in a.nodes.iter().zip(&b.nodes).enumerate() {
        assert_eq!(
            (x.boxes, x.stamps, x.children, x.parent, x.height),
            (y.boxes, y.stamps, y.children, y.parent, y.height),
            "{what}: node {i}"
        );
    }
}

/// Batches of distinct moves for [`parallel_moves`]: the share `share` of the proxies,
/// in id order, in reverse, in id order but for a few put at the end, or strided; each box jumps by up to `jump` (most leave their
/// fat box), with an invalid box and an unknown id among them.
fn distinct_moves<V: Vector>(
    r: &mut impl FnMut() -> f32,
    step: usize,
    share: f32,
    centers: &mut [V],
    ids: &[ProxyId],
    unknown: ProxyId,
) -> Vec<(ProxyId, BoundingBox<V>, V)> {
    let n = centers.len();
    let count = ((n as f32 * share) as usize).max(1);
    let mut chosen: Vec<usize> = match step / 4 % 4 {
        0 => (0..count).map(|k| k * n / count).collect(),
        1 => (0..count).rev().map(|k| k * n / count).collect(),
        2 => {
            // In id order but for a few moves taken out and put at the end.
            let (late, mut set): (Vec<_>, Vec<_>) = (0..count)
                .map(|k| k * n / count)
                .partition(|&i| i % 41 == 20);
            set.extend(late);
            set
        }
        _ => {
            let mut set: Vec<_> = (0..count).map(|k| (k * 389 + step) % n).collect();
            set.dedup();
            let mut seen = BTreeSet::new();
            set.retain(|&i| seen.insert(i));
            set
        }
    };
    chosen.dedup();
    let mut moves = Vec::new();
    for (k, &i) in chosen.iter().enumerate() {
        let jump = v::<V>([r() - 0.5, r() - 0.5, r() - 0.5]) * (2.0 * r());
        centers[i] += jump;
        let mut tight = BoundingBox::from_center_half_extents(centers[i], V::splat(0.5));
        let mut id = ids[i];
        match k % 211 {
            7 => tight = BoundingBox::from_min_max(V::splat(f32::NAN), V::ONE),
            8 if k < 300 => id = unknown,
            _ => {}
        }
        moves.push((id, tight, jump * (r() * 2.0)));
    }
    moves
}

/// `move_proxies_parallel` on 1 to 4 threads against `move_proxies` on copies of a tree,
/// batch after batch: the same outcomes (the unknown id and invalid boxes refused), the
/// same count of changes, and the same tree bit for bit (nodes, marks, leaves, move
/// cache); then the same pairs in the same order. The batches change all, a third, a
/// tenth and a fiftieth of the proxies (the whole-tree refit, the refit of the recent
/// subtrees, the ancestors grown in memory order, one by one), in id order (each task
/// owns a run of the move cache), in id order with a few out of place (the calling
/// thread decides those last), reversed and strided (the calling thread stores).
fn parallel_moves<V: Vector + Sync>(move_cache: bool) {
    let mut r = lcg(4242);
    let n = 3000;
    let (mut centers, mut serial, ids) = uniform_tree::<V>(&mut r, n);
    serial.set_move_cache(move_cache);
    let mut trees: Vec<_> = (1..=4).map(|_| serial.clone()).collect();
    let unknown = unknown_id::<V>(n, 5);
    let (mut want_pairs, mut got_pairs) = (Vec::new(), Vec::new());
    for step in 0..24 {
        let share = [1.0, 0.3, 0.1, 0.02][step % 4];
        let moves = distinct_moves(&mut r, step, share, &mut centers, &ids, unknown);
        let mut want = Vec::new();
        serial.move_proxies(moves.iter().copied(), |id, res| want.push((id, res)));
        serial.validate().unwrap();
        want.sort_by_key(|&(id, _)| id);
        let changes = want.iter().filter(|(_, res)| *res == Ok(true)).count();
        assert!(want.iter().any(|(_, res)| res.is_err()), "step {step}");
        want_pairs.clear();
        let mut stepped = serial.clone();
        stepped.update_pairs(&mut want_pairs);
        for (t, tree) in trees.iter_mut().enumerate() {
            let what = format!("step {step}, {} threads", t + 1);
            let got = std::sync::Mutex::new(Vec::new());
            let changed = tree.move_proxies_parallel(
                moves.len(),
                |i| moves[i],
                t + 1,
                |id, res| got.lock().unwrap().push((id, res)),
            );
            let mut got = got.into_inner().unwrap();
            got.sort_by_key(|&(id, _)| id);
            assert_eq!(got, want, "{what}");
            assert_eq!(changed, changes, "{what}");
            tree.validate().unwrap();
            assert_same_tree(tree, &serial, &what);
            got_pairs.clear();
            tree.update_pairs(&mut got_pairs);
            assert_eq!(got_pairs, want_pairs, "{what}");
            assert_same_tree(tree, &stepped, &what);
        }
        serial = stepped;
    }
}

#[test]
fn parallel_moves_2d() {
    parallel_moves::<Vec2>(true);
}

#[test]
fn parallel_moves_3d() {
    parallel_moves::<Vec3>(true);
}

#[test]
fn parallel_moves_without_move_cache() {
    parallel_moves::<Vec2>(false);
}

/// The side of the lattice of [`lattice_tree`].
pub(crate) const LATTICE_SIDE: usize = 64;

/// A tree of [`LATTICE_SIDE`]² unit boxes on a square lattice, 1.5 apart (none touching),
/// and their ids in cell order (row by row), after `updates` pair updates, which make
/// every mark that many updates old.
pub(crate) fn lattice_tree(updates: usize) -> (DynamicTree<Vec2, u32>, Vec<ProxyId>) {
    let mut tree = DynamicTree::<Vec2, u32>::with_margin(0.05);
    let ids = (0..LATTICE_SIDE * LATTICE_SIDE)
        .map(|i| tree.create_proxy(lattice_box(i, 0), i as u32).unwrap())
        .collect();
    let mut pairs = Vec::new();
    for _ in 0..updates {
        tree.update_pairs(&mut pairs);
    }
    (tree, ids)
}

/// The box of cell `i` of [`lattice_tree`] at update `update`: its home cell at first
/// (`update` 0 is the build), then 0.45 along both axes to one side of it on odd updates
/// and to the other on even ones: out of its fat box either way, and into the fat boxes
/// of the neighbours on that side that stayed home.
pub(crate) fn lattice_box(i: usize, update: usize) -> BoundingBox<Vec2> {
    let home = Vec2::new((i % LATTICE_SIDE) as f32, (i / LATTICE_SIDE) as f32) * 1.5;
    let shift = match update {
        0 => 0.0,
        u if u % 2 == 1 => 0.45,
        _ => -0.45,
    };
    BoundingBox::from_center_half_extents(home + Vec2::splat(shift), Vec2::splat(0.5))
}

/// Batches of middling size (a sixteenth to an eighth of the proxies) on 2 and 3 threads
/// against the same batches on one: where the moved leaves keep to a band across the
/// lattice (the batches refit the recent subtrees, as tasks, the band reaching into
/// several) and where they are scattered (after the first few, they grow ancestors), the
/// same tree bit for bit, batch after batch, and the same pairs in the same order.
#[test]
fn parallel_middling_batches() {
    for region in [true, false] {
        let (mut serial, ids) = lattice_tree(8);
        let mut trees: Vec<_> = [2, 3].map(|threads| (threads, serial.clone())).into();
        let (mut refitted, mut grown, mut found) = (0, 0, 0);
        for update in 1..=12usize {
            let moves: Vec<_> = (0..ids.len())
                .filter(|&i| {
                    if region {
                        i / LATTICE_SIDE < 6
                    } else {
                        (i + update) % 11 == 0
                    }
                })
                .map(|i| (ids[i], lattice_box(i, update), Vec2::ZERO))
                .collect();
            serial.move_proxies(moves.iter().copied(), |_, result| {
                assert_eq!(result, Ok(true));
            });
            let refit = serial.exact;
            refitted += usize::from(refit);
            grown += usize::from(!refit);
            let mut want = Vec::new();
            serial.update_pairs(&mut want);
            found += want.len();
            for (threads, tree) in &mut trees {
                let what = format!("update {update}, {threads} threads, region {region}");
                let refits = tree.parallel_refits;
                let changed =
                    tree.move_proxies_parallel(moves.len(), |i| moves[i], *threads, |_, _| {});
                assert_eq!(changed, moves.len(), "{what}");
                // The same way as on one thread; a refit ran as tasks.
                assert_eq!(tree.exact, refit, "{what}");
                assert_eq!(tree.parallel_refits > refits, refit, "{what}");
                let mut got = Vec::new();
                tree.update_pairs(&mut got);
                tree.validate().unwrap();
                assert_eq!(got, want, "{what}");
                assert_same_tree(tree, &serial, &what);
            }
        }
        // Pairs were found, and both ways were taken: the band's batches all refit, the
        // scattered ones grow once the recent part covers most of the tree.
        assert!(found > 0, "region {region}");
        if region {
            assert_eq!((refitted, grown), (12, 0));
        } else {
            assert!(
                refitted >= 1 && grown >= 8,
                "{refitted} refitted, {grown} grown"
            );
        }
    }
}

/// A proxy given twice in one parallel batch (the one case where it differs from
/// `move_proxies`) keeps the box of one of its moves, and the tree stays valid: the next
/// update reports exactly the brute-force pairs of the moved proxies. A panic in the
/// caller's `moves` or `result` on a task's thread leaves a valid tree with its move
/// cache and the changes decided until then, whose pairs the next update reports.
fn parallel_moves_repeats_and_panics<V: Vector + Sync>() {
    let mut r = lcg(515);
    let n = 2000;
    let (mut centers, mut tree, ids) = uniform_tree::<V>(&mut r, n);
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    let unknown = unknown_id::<V>(n, 1);
    for step in 0..6 {
        let once = distinct_moves(&mut r, step, 0.6, &mut centers, &ids, unknown);
        // Each move twice, next to itself; then, on odd steps, again at the end of the
        // batch, further (the tasks' first ids no longer increase: the calling thread
        // stores every change); on even steps, the first move again in the middle of the
        // batch, inside a task whose run of the move cache does not hold it (that task
        // leaves it to the calling thread, the first task notes it by its bit). Steps 0
        // to 3 give the moves in id order, so that on even ones each task stores its
        // changes and notes them by their bits, a proxy moved twice counted twice.
        let mut moves = Vec::new();
        for &(id, tight, d) in &once {
            moves.push((id, tight, d));
            moves.push((id, tight, d * 2.0));
        }
        if step % 2 == 1 {
            for &(id, tight, d) in once.iter().step_by(3) {
                moves.push((id, tight.translated(d), d));
            }
        } else {
            use crate::tree::moves::{MIN_MOVES_PER_TASK, MOVE_TASKS_PER_THREAD};
            let count = moves.len() + 1;
            let tasks = (3 * MOVE_TASKS_PER_THREAD).min(count / MIN_MOVES_PER_TASK);
            let at = |t: usize| t * count / tasks;
            // One past the start of the middle task.
            let middle = at(tasks / 2) + 1;
            assert!(tasks > 2 && middle < at(tasks / 2 + 1), "step {step}");
            let (id, tight, d) = moves[0];
            moves.insert(middle, (id, tight.translated(d * 0.5), d));
        }
        let given: BTreeMap<ProxyId, Vec<BoundingBox<V>>> =
            moves.iter().fold(BTreeMap::new(), |mut m, &(id, t, d)| {
                m.entry(id).or_default().push(tree.fatten(&t, d));
                m
            });
        let old: BTreeMap<_, _> = ids
            .iter()
            .map(|&id| (id, tree.fat_box(id).unwrap()))
            .collect();
        tree.move_proxies_parallel(moves.len(), |i| moves[i], 3, |_, _| {});
        tree.validate().unwrap();
        let mut moved = BTreeSet::new();
        let mut boxes = BTreeMap::new();
        for &id in &ids {
            let fat = tree.fat_box(id).unwrap();
            if fat != old[&id] {
                assert!(
                    given[&id].contains(&fat),
                    "step {step}: {id:?} got a box it was not given"
                );
                moved.insert(id);
            }
            boxes.insert(id, fat);
        }
        pairs.clear();
        tree.update_pairs(&mut pairs);
        tree.validate().unwrap();
        let got: BTreeSet<_> = pairs.iter().copied().collect();
        assert_eq!(got.len(), pairs.len(), "step {step}: a pair reported twice");
        assert_eq!(got, brute_pairs(&boxes, &moved), "step {step}");
    }
    // A panic in the caller's `moves`, then in its `result`, on a thread of a task
    // (not at the first move of a run, which the calling thread also reads).
    for panic_in_result in [false, true] {
        let moves = distinct_moves(&mut r, 0, 1.0, &mut centers, &ids, unknown);
        let old: BTreeMap<_, _> = ids
            .iter()
            .map(|&id| (id, tree.fat_box(id).unwrap()))
            .collect();
        let last = moves.len() * 3 / 4 + 1;
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            tree.move_proxies_parallel(
                moves.len(),
                |i| {
                    assert!(panic_in_result || i != last, "the caller's moves panic");
                    moves[i]
                },
                4,
                |id, _| {
                    assert!(
                        !panic_in_result || id != moves[last].0,
                        "the caller's result panics"
                    )
                },
            );
        }));
        assert!(caught.is_err());
        assert!(tree.move_cache());
        // The changes decided before the panic are in the tree.
        let kept = assert_pairs_of_changes(&mut tree, &old);
        assert!(kept > 100, "{kept} moves were kept");
    }
}

/// Checks `tree` after a batch that may have panicked: valid, and its next update reports
/// exactly the brute-force pairs of the proxies whose fat box differs from `old` (every
/// live proxy's box before the batch). Returns how many differ.
fn assert_pairs_of_changes<V: Vector>(
    tree: &mut DynamicTree<V, u32>,
    old: &BTreeMap<ProxyId, BoundingBox<V>>,
) -> usize {
    tree.validate().unwrap();
    let mut moved = BTreeSet::new();
    let mut boxes = BTreeMap::new();
    for (&id, &before) in old {
        let fat = tree.fat_box(id).unwrap();
        if fat != before {
            moved.insert(id);
        }
        boxes.insert(id, fat);
    }
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    tree.validate().unwrap();
    let got: BTreeSet<_> = pairs.iter().copied().collect();
    assert_eq!(got, brute_pairs(&boxes, &moved));
    moved.len()
}

/// A parallel batch whose `result` panics at every move, so that each thread stops at
/// its first task and the other tasks never start, after a batch that moved every proxy:
/// the tasks that did not start add nothing (none of the earlier batch's changes is
/// taken again), and the next update reports exactly the brute-force pairs of the
/// proxies whose fat box changed.
#[test]
fn parallel_moves_panic_in_every_task() {
    let mut r = lcg(99);
    let n = 2000;
    let (mut centers, mut tree, ids) = uniform_tree::<Vec2>(&mut r, n);
    let unknown = unknown_id::<Vec2>(n, 1);
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    let moves = distinct_moves(&mut r, 0, 1.0, &mut centers, &ids, unknown);
    tree.move_proxies_parallel(moves.len(), |i| moves[i], 2, |_, _| {});
    tree.update_pairs(&mut pairs);
    let old: BTreeMap<_, _> = ids
        .iter()
        .map(|&id| (id, tree.fat_box(id).unwrap()))
        .collect();
    let moves = distinct_moves(&mut r, 0, 1.0, &mut centers, &ids, unknown);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tree.move_proxies_parallel(
            moves.len(),
            |i| moves[i],
            2,
            |_, _| panic!("the caller's result panics"),
        );
    }));
    assert!(caught.is_err());
    let kept = assert_pairs_of_changes(&mut tree, &old);
    assert!(kept <= 2, "{kept} moves kept");
}

#[test]
fn parallel_moves_repeats_and_panics_2d() {
    parallel_moves_repeats_and_panics::<Vec2>();
}

#[test]
fn parallel_moves_repeats_and_panics_3d() {
    parallel_moves_repeats_and_panics::<Vec3>();
}

/// The rebuilds that end a parallel update, planned on 2 to 4 threads
/// (`ParallelPairs::finish_on`), against the serial ones (the job dropped) on a copy of
/// the tree: the same tree bit for bit (and the same items per candidate, which sizes
/// the batches planned ahead) after every update, over batches that change all,
/// a third, a tenth and a fiftieth of the proxies (runs that plan many candidates, a few,
/// or none), in 2D and 3D.
fn planned_rebuilds<V: Vector + Sync>() {
    use crate::tree::pool::WorkerPool;
    let mut r = lcg(777);
    let n = 6000;
    let (mut centers, mut serial, ids) = uniform_tree::<V>(&mut r, n);
    let mut trees: Vec<_> = (2..=4).map(|_| serial.clone()).collect();
    let unknown = unknown_id::<V>(n, 5);
    for step in 0..40 {
        let share = [1.0, 0.3, 0.1, 0.02][step % 4];
        let moves = distinct_moves(&mut r, step, share, &mut centers, &ids, unknown);
        let run = |tree: &mut DynamicTree<V, u32>, threads: usize| {
            tree.move_proxies(moves.iter().copied(), |_, _| {});
            let mut pairs = Vec::new();
            let job = tree.parallel_pairs(8);
            for task in 0..job.task_count() {
                job.run(task, |a, b| pairs.push((a, b)));
            }
            if threads > 1 {
                job.finish_on(&WorkerPool::new(threads));
            } else {
                drop(job);
            }
            tree.validate().unwrap();
            pairs
        };
        let want = run(&mut serial, 1);
        for (t, tree) in trees.iter_mut().enumerate() {
            let what = format!("step {step}, {} threads", t + 2);
            assert_eq!(run(tree, t + 2), want, "{what}");
            assert_same_tree(tree, &serial, &what);
            assert_eq!(tree.optimizer.changes, serial.optimizer.changes, "{what}");
            assert_eq!(
                tree.optimizer.items_per_candidate, serial.optimizer.items_per_candidate,
                "{what}"
            );
        }
    }
    assert!(
        serial.optimizer.runs > 10,
        "the optimizer ran {} times",
        serial.optimizer.runs
    );
    assert!(serial.optimizer.items_per_candidate > 0);
}

#[test]
fn planned_rebuilds_2d() {
    planned_rebuilds::<Vec2>();
}

#[test]
fn planned_rebuilds_3d() {
    planned_rebuilds::<Vec3>();
}

/// A runner that runs every task but one, on the calling thread.
struct SkipOne(usize);

// SAFETY: runs its tasks on the calling thread, each returning before `run` does.
#[allow(unsafe_code)]
unsafe impl crate::tree::parallel::TaskRunner for SkipOne {
    fn threads(&self) -> usize {
        4
    }

    fn run(&self, count: usize, task: &(dyn Fn(usize) + Sync)) {
        (0..count).filter(|&t| t != self.0).for_each(task);
    }
}

/// A tree, one bit per changed proxy, and the changed leaves with their new boxes.
type Moved = (
    DynamicTree<Vec2, u32>,
    Vec<u64>,
    Vec<(crate::tree::Link, BoundingBox<Vec2>)>,
);

/// A tree whose every leaf moved, its new fat boxes stored in the move cache and its
/// changed proxies' bits set, as a parallel batch leaves it for the refit.
fn moved_tree(seed: u32) -> Moved {
    let mut r = lcg(seed);
    let (centers, mut tree, ids) = uniform_tree::<Vec2>(&mut r, 3000);
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    let mut bits = vec![0u64; tree.leaves.len().div_ceil(64)];
    let mut changes = Vec::new();
    for (&id, &c) in ids.iter().zip(&centers) {
        let tight =
            BoundingBox::from_center_half_extents(c + Vec2::new(r(), r()), Vec2::splat(0.5));
        if let Some(change) = tree.new_fat_box(id, tight, Vec2::ZERO).unwrap() {
            bits[id.index() / 64] |= 1 << (id.index() % 64);
            changes.push(change);
        }
    }
    (tree, bits, changes)
}

/// The parallel refit's tasks against the serial refit (the leaves' slots written first):
/// the same tree bit for bit and the same count of nodes refitted, also when the runner
/// leaves a task out (the calling thread then refits that subtree itself).
#[test]
fn parallel_refit_matches_serial() {
    use crate::tree::pool::WorkerPool;
    let (mut serial, bits, changes) = moved_tree(5);
    assert!(changes.len() > 2000);
    let mut parallel = serial.clone();
    let mut skipped = serial.clone();
    for &(link, fat) in &changes {
        serial.write_slot(link, fat);
    }
    // Each refit counts every internal node once.
    let nodes = serial.node_count;
    assert_eq!(serial.refit_younger_than(u16::MAX), nodes);
    let pool = WorkerPool::new(4);
    assert_eq!(parallel.refit_root_parallel(u16::MAX, &bits, &pool), nodes);
    assert_eq!(
        skipped.refit_root_parallel(u16::MAX, &bits, &SkipOne(1)),
        nodes
    );
    assert_eq!(parallel.parallel_refits, 1);
    for tree in [&parallel, &skipped] {
        tree.validate().unwrap();
        assert_same_tree(tree, &serial, "parallel refit");
    }
}

/// A task takes a node only through the node's own link: a slot whose child names a node
/// that hangs elsewhere (a tree with a wrong link) is left as it was, not refitted twice.
#[test]
fn parallel_refit_follows_links_only() {
    use crate::tree::pool::WorkerPool;
    let (mut tree, bits, _) = moved_tree(6);
    // Two internal nodes deep in the tree (inside the tasks' subtrees), the second lower
    // than the first and elsewhere: the first's first child is made to name the second,
    // which keeps its own parent.
    let of_height = |h: u16| -> Vec<NodeId> {
        (0..tree.nodes.len() as u32)
            .map(NodeId)
            .filter(|id| {
                let node = &tree.nodes[id.index()];
                node.is_allocated() && node.height == h
            })
            .collect()
    };
    let p = of_height(3)[0];
    let lower = of_height(2);
    let y = lower[lower.len() / 2];
    assert!(
        tree.nodes[tree.nodes[y.index()].parent.parent().index()]
            .parent
            .parent()
            != p
    );
    let sentinel = BoundingBox::from_min_max(Vec2::splat(-1e6), Vec2::splat(1e6));
    tree.nodes[p.index()].children[0] = y;
    tree.nodes[p.index()].boxes[0] = sentinel;
    tree.refit_root_parallel(u16::MAX, &bits, &WorkerPool::new(4));
    assert_eq!(
        tree.nodes[p.index()].boxes[0],
        sentinel,
        "the wrong link was followed"
    );
    assert_ne!(tree.nodes[y.index()].parent, crate::tree::Link::new(p, 0));
}
