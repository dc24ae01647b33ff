//! Invariant checks.

use core::fmt;

use crate::Vector;
use crate::tree::{DynamicTree, NodeId};

/// What [`DynamicTree::validate`] found wrong, naming the node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationError {
    /// The node where the problem shows.
    pub node: Option<NodeId>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.node {
            Some(n) => write!(f, "node {}: {}", n.0, self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for ValidationError {}

/// Returns a [`ValidationError`] at `node` whose message is `format!` of the rest.
macro_rules! fail {
    ($node:expr, $($message:tt)+) => {
        return Err(ValidationError {
            node: $node,
            message: format!($($message)+),
        })
    };
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Checks every invariant of the tree and says what is wrong:
    /// - the root hangs at the root; every child's link names its parent and its slot;
    /// - every node and leaf reachable from the root is allocated (live) and reached once (no
    ///   cycles, no sharing); every allocated node and live leaf is reachable;
    /// - each leaf reached names a live proxy with a payload; every other proxy id is on the
    ///   free list of ids, once, without a payload, its leaf marked free;
    /// - the move cache holds a box per proxy id when it is on (each live proxy's equal to the
    ///   box its parent's slot holds) and nothing when it is off;
    /// - heights: 1 + the larger child height for internal nodes (leaves count 0);
    /// - every box is valid, and the box a slot holds for an internal child (or the root's
    ///   box) encloses that child's two boxes, and equals their union when the tree holds its
    ///   boxes to be exact (after the one-pass refit of a large batch of moves);
    /// - a changed child makes its holder changed (the marks form paths to the root), no mark
    ///   is more recent than its holder's (a subtree's mark is its latest change), and the
    ///   moved count equals the number of marked leaves;
    /// - the free list holds only free nodes, has no cycle, and free + allocated nodes make
    ///   up the arena; the proxy and node counts match;
    /// - the count of proxies with layers other than `ALL` is right, free ids keep none, and
    ///   unions held fresh are each the union of their children's.
    ///
    /// O(nodes). Meant for tests and debugging.
    ///
    /// # Errors
    ///
    /// The first broken invariant found, as a [`ValidationError`] naming the node or proxy.
    pub fn validate(&self) -> Result<(), ValidationError> {
        let n = self.nodes.len();
        let ids = self.leaves.len();
        if self.data.len() != ids {
            fail!(None, "payload slots and leaves differ in number");
        }
        let cached = if self.move_cache { ids } else { 0 };
        let boxes = self.fat_boxes.len();
        if boxes != cached {
            fail!(
                None,
                "the move cache holds {boxes} boxes for {cached} proxy ids"
            );
        }
        let mut seen = vec![false; n];
        let mut seen_leaf = vec![false; ids];
        let mut reached = 0usize;
        let mut leaves = 0usize;
        let mut moved = 0usize;
        if !self.root.is_null() {
            if !self.root.is_leaf() && self.root.index() >= n {
                fail!(Some(self.root), "root out of range");
            }
            if self.root.is_leaf() && self.root.proxy().index() >= ids {
                fail!(Some(self.root), "root leaf out of range");
            }
            if !self.link_of(self.root).is_root() {
                fail!(Some(self.root), "root has a parent");
            }
            // (node, the box and mark its holder keeps for it)
            let mut stack = vec![(self.root, self.root_box, self.root_stamp)];
            while let Some((id, held, stamp)) = stack.pop() {
                if !held.is_valid() {
                    fail!(Some(id), "invalid box {held:?}");
                }
                if id.is_leaf() {
                    let proxy = id.proxy().index();
                    if proxy >= ids {
                        fail!(Some(id), "leaf out of range");
                    }
                    if seen_leaf[proxy] {
                        fail!(Some(id), "leaf reached twice (cycle or shared child)");
                    }
                    seen_leaf[proxy] = true;
                    leaves += 1;
                    if !self.leaves[proxy].is_live() {
                        fail!(Some(id), "reachable leaf of free proxy {proxy}");
                    }
                    if self.move_cache && self.fat_boxes[proxy] != held {
                        fail!(
                            Some(id),
                            "proxy {proxy}'s box in the move cache {:?} differs from its slot's \
                             {held:?}",
                            self.fat_boxes[proxy]
                        );
                    }
                    if self.data[proxy].is_none() {
                        fail!(Some(id), "proxy {proxy} without data");
                    }
                    if stamp == self.epoch {
                        moved += 1;
                    }
                    continue;
                }
                if id.index() >= n {
                    fail!(Some(id), "index out of range");
                }
                if seen[id.index()] {
                    fail!(Some(id), "reached twice (cycle or shared child)");
                }
                seen[id.index()] = true;
                reached += 1;
                let node = &self.nodes[id.index()];
                if !node.is_allocated() {
                    fail!(Some(id), "reachable but free");
                }
                let own = node.own_box();
                if !held.contains(&own) {
                    fail!(
                        Some(id),
                        "held box {held:?} does not enclose the children's {own:?}"
                    );
                }
                if self.exact && held != own {
                    fail!(
                        Some(id),
                        "the boxes are said to be exact, but the held box {held:?} is not the \
                         children's {own:?}"
                    );
                }
                let mut max_height = 0;
                let mut any_changed = false;
                for (k, child) in node.children.into_iter().enumerate() {
                    let in_range = if child.is_null() {
                        false
                    } else if child.is_leaf() {
                        child.proxy().index() < ids
                    } else {
                        child.index() < n
                    };
                    if !in_range {
                        fail!(Some(id), "child missing or out of range");
                    }
                    let link = self.link_of(child);
                    if link.is_root() || link.parent() != id || link.slot() != k {
                        fail!(
                            Some(child),
                            "link is {link:?}, expected node {} slot {k}",
                            id.0
                        );
                    }
                    max_height = max_height.max(self.height_of(child));
                    any_changed |= node.stamps[k] == self.epoch;
                    if self.mark_age(node.stamps[k]) < self.mark_age(stamp) {
                        fail!(
                            Some(child),
                            "mark {} more recent than its holder's {stamp}",
                            node.stamps[k]
                        );
                    }
                    stack.push((child, node.boxes[k], node.stamps[k]));
                }
                let height = max_height + 1;
                if node.height != height {
                    fail!(
                        Some(id),
                        "height {} but children give {height}",
                        node.height
                    );
                }
                if any_changed && stamp != self.epoch {
                    fail!(Some(id), "a child is marked changed but the node is not");
                }
            }
        }
        let allocated = self.nodes.iter().filter(|node| node.is_allocated()).count();
        if allocated != reached {
            fail!(None, "{allocated} allocated nodes but {reached} reachable");
        }
        if allocated != self.node_count {
            fail!(
                None,
                "node count {} but {allocated} allocated",
                self.node_count
            );
        }
        if leaves != self.proxy_count {
            fail!(None, "proxy count {} but {leaves} leaves", self.proxy_count);
        }
        if moved != self.moved_count {
            fail!(
                None,
                "moved count {} but {moved} marked leaves",
                self.moved_count
            );
        }
        let live = self.leaves.iter().filter(|leaf| leaf.is_live()).count();
        if live != leaves {
            fail!(None, "{live} live leaves but {leaves} leaves are reachable");
        }
        let mut free_ids = vec![false; ids];
        for &id in &self.free_proxies {
            let i = id as usize;
            if i >= free_ids.len() || free_ids[i] {
                fail!(None, "free proxy id {id} out of range or listed twice");
            }
            free_ids[i] = true;
            if self.leaves[i].is_live() || self.data[i].is_some() {
                fail!(None, "free proxy id {id} has a leaf or a payload");
            }
        }
        let free_count = self.free_proxies.len();
        if live + free_count != ids {
            fail!(
                None,
                "{live} live + {free_count} free proxy ids != {ids} ids"
            );
        }
        let mut free = 0usize;
        let mut index = self.free_list;
        while !index.is_null() {
            if index.index() >= n {
                fail!(Some(index), "free list points out of range");
            }
            if self.nodes[index.index()].is_allocated() {
                fail!(Some(index), "allocated node on the free list");
            }
            free += 1;
            if free > n {
                fail!(None, "cycle in the free list");
            }
            index = NodeId(self.nodes[index.index()].parent.0);
        }
        if free + allocated != n {
            fail!(None, "{free} free + {allocated} allocated != {n} nodes");
        }
        self.check_layers()
            .map_err(|(node, message)| ValidationError { node, message })
    }
}
