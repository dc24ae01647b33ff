//! Statistics about a tree's shape and work.

use core::sync::atomic::Ordering;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::{DynamicTree, Leaf, Node};

/// A snapshot of a tree's size, shape and the work its queries did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "plugin", derive(bevy::reflect::Reflect))]
pub struct TreeStats {
    /// Live proxies (leaves).
    pub proxies: usize,
    /// Nodes, leaves and internal (the leaves are the proxies).
    pub nodes: usize,
    /// Internal nodes the arena has room for without growing.
    pub capacity: usize,
    /// Height of the root (0 for one leaf).
    pub height: u16,
    /// Sum of the areas (perimeters in 2D) of the internal nodes divided by the root's:
    /// the expected number of internal nodes a random query visits. Lower is better.
    pub area_ratio: f32,
    /// Proxies moved since the last pair update.
    pub moved: usize,
    /// Bytes the tree's lasting arrays use: see [`DynamicTree::bytes`].
    pub bytes: usize,
    /// Nodes visited by queries and pair finding since the tree was made (a clone starts from
    /// its original's count). The work of a stretch of calls is the difference of two snapshots.
    pub nodes_visited: u64,
    /// Leaves reached (queries) or pairs reported (pair finding) since the tree was made,
    /// counted like [`Self::nodes_visited`].
    pub leaves_visited: u64,
    /// Pair updates, serial or parallel, that walked from each moved leaf rather than the
    /// changed part of the tree against itself (see [`DynamicTree::update_pairs`]), counted
    /// like [`Self::nodes_visited`].
    pub leaf_searches: u64,
    /// Refits after a large batch of moves that ran as tasks on several threads (see
    /// [`DynamicTree::move_proxies_parallel`]), counted like [`Self::nodes_visited`].
    pub parallel_refits: u64,
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Size, shape and work counters. Walks every node: O(nodes).
    pub fn stats(&self) -> TreeStats {
        let mut internal_area = 0.0f64;
        // Each internal node's box as its parent holds it (what queries test; between a move
        // and the next update it may be larger than the children's).
        for node in &self.nodes {
            if node.is_allocated() {
                internal_area += self.slot_box(node.parent).area() as f64;
            }
        }
        let root_area = if self.root.is_null() {
            0.0
        } else {
            self.root_box.area() as f64
        };
        TreeStats {
            proxies: self.proxy_count,
            nodes: self.node_count + self.proxy_count,
            capacity: self.nodes.capacity(),
            height: self.height(),
            area_ratio: if root_area > 0.0 {
                (internal_area / root_area) as f32
            } else {
                0.0
            },
            moved: self.moved_count(),
            bytes: self.bytes(),
            nodes_visited: self.nodes_visited.load(Ordering::Relaxed),
            leaves_visited: self.leaves_visited.load(Ordering::Relaxed),
            leaf_searches: self.leaf_searches,
            parallel_refits: self.parallel_refits,
        }
    }

    /// Bytes the tree's lasting arrays use: internal nodes, leaves and payload slots, by
    /// capacity (the scratch buffers kept between updates are not counted). O(1).
    pub fn bytes(&self) -> usize {
        self.nodes.capacity() * core::mem::size_of::<Node<V>>()
            + self.leaves.capacity() * core::mem::size_of::<Leaf>()
            + self.fat_boxes.capacity() * core::mem::size_of::<BoundingBox<V>>()
            + self.data.capacity() * core::mem::size_of::<Option<T>>()
            + self.free_proxies.capacity() * core::mem::size_of::<u32>()
            + self.layers.bytes()
    }
}
