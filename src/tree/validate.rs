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

fn fail(node: Option<NodeId>, message: impl Into<String>) -> Result<(), ValidationError> {
    Err(ValidationError {
        node,
        message: message.into(),
    })
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Checks every invariant of the tree and says what is wrong:
    /// - the root hangs at the root; every child's link names its parent and its slot;
    /// - every node and leaf reachable from the root is allocated (live) and reached once
    ///   (no cycles, no sharing); every allocated node and live leaf is reachable;
    /// - each leaf reached names a live proxy with a payload; every other proxy id is on
    ///   the free list of ids, once, without a payload, its leaf marked free;
    /// - the move cache holds a box per proxy id when it is on (each live proxy's equal to
    ///   the box its parent's slot holds) and nothing when it is off;
    /// - heights: 1 + the larger child height for internal nodes (leaves count 0);
    /// - every box is valid, and the box a slot holds for an internal child (or the
    ///   root's box) encloses that child's two boxes, and equals their union when the tree
    ///   holds its boxes to be exact (after the one-pass refit of a large batch of moves);
    /// - a changed child makes its holder changed (the marks form paths to the root), no
    ///   mark is more recent than its holder's (a subtree's mark is its latest change),
    ///   and the moved count equals the number of marked leaves;
    /// - the free list holds only free nodes, has no cycle, and free + allocated nodes
    ///   make up the arena; the proxy and node counts match;
    /// - the count of proxies with layers other than `ALL` is right, free ids keep none,
    ///   and unions held fresh are each the union of their children's.
    ///
    /// O(nodes). Meant for tests and debugging.
    ///
    /// # Errors
    ///
    /// The first broken invariant found, as a [`ValidationError`] naming the node or
    /// proxy.
    pub fn validate(&self) -> Result<(), ValidationError> {
        let n = self.nodes.len();
        if self.data.len() != self.leaves.len() {
            return fail(None, "payload slots and leaves differ in number");
        }
        let cached = if self.move_cache {
            self.leaves.len()
        } else {
            0
        };
        if self.fat_boxes.len() != cached {
            return fail(
                None,
                format!(
                    "the move cache holds {} boxes for {cached} proxy ids",
                    self.fat_boxes.len()
                ),
            );
        }
        let mut seen = vec![false; n];
        let mut seen_leaf = vec![false; self.leaves.len()];
        let mut reached = 0usize;
        let mut leaves = 0usize;
        let mut moved = 0usize;
        if !self.root.is_null() {
            if !self.root.is_leaf() && self.root.index() >= n {
                return fail(Some(self.root), "root out of range");
            }
            if self.root.is_leaf() && self.root.proxy().index() >= self.leaves.len() {
                return fail(Some(self.root), "root leaf out of range");
            }
            if !self.link_of(self.root).is_root() {
                return fail(Some(self.root), "root has a parent");
            }
            // (node, the box and mark its holder keeps for it)
            let mut stack = vec![(self.root, self.root_box, self.root_stamp)];
            while let Some((id, held, stamp)) = stack.pop() {
                if !held.is_valid() {
                    return fail(Some(id), format!("invalid box {held:?}"));
                }
                if id.is_leaf() {
                    let proxy = id.proxy().index();
                    if proxy >= self.leaves.len() {
                        return fail(Some(id), "leaf out of range");
                    }
                    if seen_leaf[proxy] {
                        return fail(Some(id), "leaf reached twice (cycle or shared child)");
                    }
                    seen_leaf[proxy] = true;
                    leaves += 1;
                    let leaf = &self.leaves[proxy];
                    if !leaf.is_live() {
                        return fail(Some(id), format!("reachable leaf of free proxy {proxy}"));
                    }
                    if self.move_cache && self.fat_boxes[proxy] != held {
                        return fail(
                            Some(id),
                            format!(
                                "proxy {proxy}'s box in the move cache {:?} differs from its \
                                 slot's {held:?}",
                                self.fat_boxes[proxy]
                            ),
                        );
                    }
                    if self.data[proxy].is_none() {
                        return fail(Some(id), format!("proxy {proxy} without data"));
                    }
                    if stamp == self.epoch {
                        moved += 1;
                    }
                    continue;
                }
                if id.index() >= n {
                    return fail(Some(id), "index out of range");
                }
                if seen[id.index()] {
                    return fail(Some(id), "reached twice (cycle or shared child)");
                }
                seen[id.index()] = true;
                reached += 1;
                let node = &self.nodes[id.index()];
                if !node.is_allocated() {
                    return fail(Some(id), "reachable but free");
                }
                let own = node.own_box();
                if !held.contains(&own) {
                    return fail(
                        Some(id),
                        format!("held box {held:?} does not enclose the children's {own:?}"),
                    );
                }
                if self.exact && held != own {
                    return fail(
                        Some(id),
                        format!(
                            "the boxes are said to be exact, but the held box {held:?} is not \
                             the children's {own:?}"
                        ),
                    );
                }
                let mut max_height = 0;
                let mut any_changed = false;
                for (k, child) in node.children.into_iter().enumerate() {
                    let in_range = if child.is_null() {
                        false
                    } else if child.is_leaf() {
                        child.proxy().index() < self.leaves.len()
                    } else {
                        child.index() < n
                    };
                    if !in_range {
                        return fail(Some(id), "child missing or out of range");
                    }
                    let link = self.link_of(child);
                    if link.is_root() || link.parent() != id || link.slot() != k {
                        return fail(
                            Some(child),
                            format!("link is {link:?}, expected node {} slot {k}", id.0),
                        );
                    }
                    max_height = max_height.max(self.height_of(child));
                    any_changed |= node.stamps[k] == self.epoch;
                    if self.mark_age(node.stamps[k]) < self.mark_age(stamp) {
                        return fail(
                            Some(child),
                            format!(
                                "mark {} more recent than its holder's {stamp}",
                                node.stamps[k]
                            ),
                        );
                    }
                    stack.push((child, node.boxes[k], node.stamps[k]));
                }
                if node.height != max_height + 1 {
                    return fail(
                        Some(id),
                        format!(
                            "height {} but children give {}",
                            node.height,
                            max_height + 1
                        ),
                    );
                }
                if any_changed && stamp != self.epoch {
                    return fail(Some(id), "a child is marked changed but the node is not");
                }
            }
        }
        let allocated = self.nodes.iter().filter(|node| node.is_allocated()).count();
        if allocated != reached {
            return fail(
                None,
                format!("{allocated} allocated nodes but {reached} reachable"),
            );
        }
        if allocated != self.node_count {
            return fail(
                None,
                format!("node count {} but {allocated} allocated", self.node_count),
            );
        }
        if leaves != self.proxy_count {
            return fail(
                None,
                format!("proxy count {} but {leaves} leaves", self.proxy_count),
            );
        }
        if moved != self.moved_count {
            return fail(
                None,
                format!("moved count {} but {moved} marked leaves", self.moved_count),
            );
        }
        let live = self.leaves.iter().filter(|leaf| leaf.is_live()).count();
        if live != leaves {
            return fail(
                None,
                format!("{live} live leaves but {leaves} leaves are reachable"),
            );
        }
        let mut free_ids = vec![false; self.leaves.len()];
        for &id in &self.free_proxies {
            let i = id as usize;
            if i >= free_ids.len() || free_ids[i] {
                return fail(
                    None,
                    format!("free proxy id {id} out of range or listed twice"),
                );
            }
            free_ids[i] = true;
            if self.leaves[i].is_live() || self.data[i].is_some() {
                return fail(None, format!("free proxy id {id} has a leaf or a payload"));
            }
        }
        if live + self.free_proxies.len() != self.leaves.len() {
            return fail(
                None,
                format!(
                    "{live} live + {} free proxy ids != {} ids",
                    self.free_proxies.len(),
                    self.leaves.len()
                ),
            );
        }
        let mut free = 0usize;
        let mut index = self.free_list;
        while !index.is_null() {
            if index.index() >= n {
                return fail(Some(index), "free list points out of range");
            }
            if self.nodes[index.index()].is_allocated() {
                return fail(Some(index), "allocated node on the free list");
            }
            free += 1;
            if free > n {
                return fail(None, "cycle in the free list");
            }
            index = NodeId(self.nodes[index.index()].parent.0);
        }
        if free + allocated != n {
            return fail(
                None,
                format!("{free} free + {allocated} allocated != {n} nodes"),
            );
        }
        if let Err((node, message)) = self.check_layers() {
            return fail(node, message);
        }
        Ok(())
    }
}
