//! The refit without pairs (`refit`) after moves.

use std::collections::{BTreeMap, BTreeSet};

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::ProxyId;

use super::brute_pairs;
use super::tree_scene::{lcg, uniform_tree, v};

/// `refit` after moves: every internal box is its children's union again (checked node by
/// node through the public inspection), the moves are forgotten (the next update reports
/// no pair, though moved boxes overlap others), fat boxes are kept and box queries equal
/// a brute-force scan. Every `stride`-th proxy moves at each step: a third of them refits
/// the whole tree, a few refit only their paths up.
fn refit_every<V: Vector>(stride: usize) {
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

/// [`refit_every`] with every third proxy moving, then every 37th.
fn refit<V: Vector>() {
    refit_every::<V>(3);
    refit_every::<V>(37);
}

both_dims!(refit);
