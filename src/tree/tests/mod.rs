//! Tests of the tree's machinery from inside the crate: the batches against single calls
//! (`move_proxies_on`, `create_proxies`), the parallel stages against the serial ones, the
//! refits, rotations, searches and rebuilds. The public operations are tested from outside
//! the crate, through the tests' model of the tree (`tests/kit/tree_model.rs`: the random
//! operations of `tests/tree/tree.rs` and of the fuzz target).
//!
//! Each test checks against an independent oracle: a brute-force scan of the fat boxes,
//! the same operation applied one call at a time on a copy of the tree, or the state
//! recorded from earlier calls; `validate` runs after every operation.
//!
//! This module holds what the test files share: the macro that runs a generic test in
//! both dimensions, the oracles, and the scenes of boxes.

use std::collections::{BTreeMap, BTreeSet};

use glam::{Vec2, Vec3};

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::{DynamicTree, NodeId, ProxyId};

/// Batch thresholds small enough that the tests' trees of a few thousand proxies take
/// the parallel paths (many tasks, refits as tasks); the tests that need them set them
/// on their trees, and the random ones also run at the defaults.
pub(crate) const SMALL_BATCHES: crate::tree::BatchThresholds = crate::tree::BatchThresholds {
    sort_from: crate::tree::constants::SORT_FROM,
    parallel_moves_from: 32,
    min_moves_per_task: 8,
    min_proxies_per_task: 8,
};

/// A runner on `n` threads started for each stage (scoped threads): the tests of the
/// parallel stages run them on real threads with or without the `parallel` feature.
pub(crate) struct ScopedThreads(pub usize);

impl crate::tree::parallel::runner::TaskRunner for ScopedThreads {
    fn threads(&self) -> usize {
        self.0
    }

    fn run(&self, count: usize, task: &(dyn Fn(usize) + Sync)) {
        use core::sync::atomic::{AtomicUsize, Ordering};
        let next = AtomicUsize::new(0);
        let take = || {
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= count {
                    return;
                }
                task(index);
            }
        };
        std::thread::scope(|scope| {
            for _ in 1..self.0.min(count) {
                scope.spawn(take);
            }
            take();
        });
    }
}

/// Every generic test runs in both dimensions: `both_dims!(name, ..)` turns the generic
/// `name::<V>()` into the tests `name::d2` and `name::d3` (as the plugin's integration
/// tests do, `tests/plugin/main.rs`); `name(args)` passes `args` to both.
macro_rules! both_dims {
    ($($name:ident $(($($arg:expr),* $(,)?))?),* $(,)?) => {
        $(
            mod $name {
                #[test]
                fn d2() {
                    super::$name::<glam::Vec2>($($($arg),*)?);
                }
                #[test]
                fn d3() {
                    super::$name::<glam::Vec3>($($($arg),*)?);
                }
            }
        )*
    };
}

#[path = "../../../tests/kit/tree_scene.rs"]
pub(crate) mod tree_scene;

mod batches;
mod build;
mod parallel_moves;
mod parallel_rebuild;
mod parallel_refit;
mod refit;
mod rotate;
mod searches;
mod still;

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
