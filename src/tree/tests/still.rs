//! Still leaves set apart by the rebuilds, batches that refit the recent subtrees only,
//! and the age of marks across the epochs' wrap.

use std::collections::BTreeSet;

use glam::Vec2;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::{DynamicTree, NodeId, ProxyId};

use super::tree_scene::{lcg, uniform_tree, v};
use super::{brute_pairs, changed, fat_boxes, proxies_under};

/// Moves `center` by up to 0.3 on each axis and gives the unit box around it.
fn jiggle<V: Vector>(center: &mut V, r: &mut impl FnMut() -> f32) -> BoundingBox<V> {
    *center += v::<V>([r() - 0.5, r() - 0.5, r() - 0.5]) * 0.6;
    BoundingBox::from_center_half_extents(*center, V::splat(0.5))
}

/// Moves every proxy of `moving` by a random step (fat boxes change: the steps exceed the
/// margin) and runs an update; returns the update's pairs.
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

both_dims!(still_split, batches_wake_still_subtrees);

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
