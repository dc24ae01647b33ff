//! The parallel refit's tasks against the serial refit, and a task that meets a wrong
//! link.

use glam::Vec2;

use crate::geometry::BoundingBox;
use crate::tree::{DynamicTree, NodeId};

use super::assert_same_tree;
use super::tree_scene::{lcg, uniform_tree};

/// A runner that runs every task but one, on the calling thread.
struct SkipOne(usize);

impl crate::tree::parallel::runner::TaskRunner for SkipOne {
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
    tree.set_batch_thresholds(super::SMALL_BATCHES);
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
    use super::ScopedThreads;
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
    let pool = ScopedThreads(4);
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
    use super::ScopedThreads;
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
    tree.refit_root_parallel(u16::MAX, &bits, &ScopedThreads(4));
    assert_eq!(
        tree.nodes[p.index()].boxes[0],
        sentinel,
        "the wrong link was followed"
    );
    assert_ne!(tree.nodes[y.index()].parent, crate::tree::Link::new(p, 0));
}
