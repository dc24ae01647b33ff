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
    /// - the root has no parent; every child's parent link points back to its parent;
    /// - every node reachable from the root is allocated and reached once (no cycles, no
    ///   sharing); every allocated node is reachable;
    /// - internal nodes have two children, leaves none; each leaf names a proxy whose
    ///   table entry names the leaf back and which has a payload; every other proxy id is
    ///   on the free list of ids, once, without a payload;
    /// - heights: 0 for leaves, 1 + the larger child height for internal nodes;
    /// - every box is valid and encloses its children's boxes;
    /// - a changed child has a changed parent (the marks form paths to the root), and the
    ///   moved count equals the number of marked leaves;
    /// - the free list holds only free nodes, has no cycle, and free + allocated nodes
    ///   make up the arena; the proxy and node counts match.
    ///
    /// O(nodes). Meant for tests and debugging.
    pub fn validate(&self) -> Result<(), ValidationError> {
        let n = self.nodes.len();
        if self.data.len() != self.leaf_of.len() || self.fat_of.len() != self.leaf_of.len() {
            return fail(None, "payload slots and proxy slots differ in number");
        }
        let mut seen = vec![false; n];
        let mut reached = 0usize;
        let mut leaves = 0usize;
        let mut moved = 0usize;
        if !self.root.is_null() {
            if self.root.index() >= n {
                return fail(Some(self.root), "root out of range");
            }
            if !self.nodes[self.root.index()].parent.is_null() {
                return fail(Some(self.root), "root has a parent");
            }
            let mut stack = vec![self.root];
            while let Some(id) = stack.pop() {
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
                if !node.aabb.is_valid() {
                    return fail(Some(id), format!("invalid box {:?}", node.aabb));
                }
                if node.is_leaf() {
                    leaves += 1;
                    let proxy = node.proxy().index();
                    if self.leaf_of.get(proxy) != Some(&id) {
                        return fail(
                            Some(id),
                            format!("leaf names proxy {proxy}, which does not name it back"),
                        );
                    }
                    if self.fat_of.get(proxy) != Some(&node.aabb) {
                        return fail(
                            Some(id),
                            format!("proxy {proxy}'s copy of the fat box differs from the leaf's"),
                        );
                    }
                    if node.height != 0 {
                        return fail(Some(id), format!("leaf with height {}", node.height));
                    }
                    if self.data[proxy].is_none() {
                        return fail(Some(id), format!("proxy {proxy} without data"));
                    }
                    if node.stamp == self.epoch {
                        moved += 1;
                    }
                    continue;
                }
                if node.child2.is_null() {
                    return fail(Some(id), "internal node with one child");
                }
                let mut max_height = 0;
                let mut any_changed = false;
                for child in [node.child1, node.child2] {
                    if child.index() >= n {
                        return fail(Some(id), "child out of range");
                    }
                    let c = &self.nodes[child.index()];
                    if c.parent != id {
                        return fail(
                            Some(child),
                            format!("parent link is {:?}, expected {:?}", c.parent, id),
                        );
                    }
                    if !node.aabb.contains(&c.aabb) {
                        return fail(
                            Some(id),
                            format!(
                                "box {:?} does not enclose child {} {:?}",
                                node.aabb, child.0, c.aabb
                            ),
                        );
                    }
                    max_height = max_height.max(c.height);
                    any_changed |= c.stamp == self.epoch;
                    stack.push(child);
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
                if any_changed && node.stamp != self.epoch {
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
        let live = self.leaf_of.iter().filter(|leaf| !leaf.is_null()).count();
        if live != leaves {
            return fail(
                None,
                format!("{live} proxies name a leaf but {leaves} leaves are reachable"),
            );
        }
        let mut free_ids = vec![false; self.leaf_of.len()];
        for &id in &self.free_proxies {
            let i = id as usize;
            if i >= free_ids.len() || free_ids[i] {
                return fail(
                    None,
                    format!("free proxy id {id} out of range or listed twice"),
                );
            }
            free_ids[i] = true;
            if !self.leaf_of[i].is_null() || self.data[i].is_some() {
                return fail(None, format!("free proxy id {id} has a leaf or a payload"));
            }
        }
        if live + self.free_proxies.len() != self.leaf_of.len() {
            return fail(
                None,
                format!(
                    "{live} live + {} free proxy ids != {} ids",
                    self.free_proxies.len(),
                    self.leaf_of.len()
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
            index = self.nodes[index.index()].parent;
        }
        if free + allocated != n {
            return fail(
                None,
                format!("{free} free + {allocated} allocated != {n} nodes"),
            );
        }
        Ok(())
    }
}
