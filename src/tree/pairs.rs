//! Finding the new overlapping pairs after a step of moves.

use smallvec::SmallVec;

use crate::Vector;
use crate::tree::{DynamicTree, NodeId, ProxyId};

impl<V: Vector, T> DynamicTree<V, T> {
    /// Finishes a step of moves: tightens and rebalances the changed part of the tree, then
    /// appends to `pairs` every pair of proxies whose fat boxes overlap and of which at
    /// least one moved (or was created) since the last call, and forgets the moves.
    ///
    /// Each pair appears once, as `(a, b)` with `a < b`, in an order that depends only on
    /// the sequence of operations applied to the tree (the same operations give the same
    /// order). `pairs` is not cleared first.
    pub fn update_pairs(&mut self, pairs: &mut Vec<(ProxyId, ProxyId)>) {
        self.refit_changed();
        self.for_each_changed_pair(|a, b| pairs.push(if a < b { (a, b) } else { (b, a) }));
        self.finish_update();
    }

    /// Like [`Self::update_pairs`] but hands each pair to `f` instead of collecting them.
    pub fn update_pairs_with(&mut self, mut f: impl FnMut(ProxyId, ProxyId)) {
        self.refit_changed();
        self.for_each_changed_pair(|a, b| if a < b { f(a, b) } else { f(b, a) });
        self.finish_update();
    }

    /// Forgets the moves, then lets the tree improve itself (see [`Self::optimize`]).
    fn finish_update(&mut self) {
        let moved = self.moved_count;
        self.clear_marks();
        self.optimize(moved);
    }

    /// Post-order walk over the changed nodes: every changed internal node gets its exact
    /// box back (moves only ever grow ancestors) and a chance to rotate. The changed
    /// subtrees of the size [`Self::optimize`] rebuilds are noted as its candidates.
    pub(crate) fn refit_changed(&mut self) {
        self.optimizer.candidates.clear();
        if self.root.is_null() || !self.is_changed(self.root) {
            return;
        }
        let subtree_height = self.optimizer.subtree_height(self.proxy_count);
        // (node, children done)
        let mut stack: SmallVec<[(NodeId, bool); 64]> = SmallVec::new();
        stack.push((self.root, false));
        while let Some((id, done)) = stack.pop() {
            let node = &self.nodes[id.index()];
            if node.is_leaf() {
                continue;
            }
            if done {
                self.refit_node(id);
                self.rotate(id);
                let node = &self.nodes[id.index()];
                if node.height <= subtree_height
                    && (node.parent.is_null()
                        || self.nodes[node.parent.index()].height > subtree_height)
                {
                    self.optimizer.candidates.push(id);
                }
            } else {
                let (c1, c2) = (node.child1, node.child2);
                stack.push((id, true));
                if self.is_changed(c2) {
                    stack.push((c2, false));
                }
                if self.is_changed(c1) {
                    stack.push((c1, false));
                }
            }
        }
    }

    /// Walks the changed part of the tree against itself and calls `f` for each
    /// overlapping pair of leaves with at least one moved leaf.
    ///
    /// Two leaves overlap only if every pair of their ancestors does, and each pair of
    /// leaves has exactly one lowest common ancestor, where one leaf is under `child1`
    /// and the other under `child2`. So the walk has two kinds of task:
    /// - *self(N)*: the pairs inside N's subtree. A leaf has none; an internal node gives
    ///   self(child1), self(child2) and cross(child1, child2). Only changed subtrees are
    ///   entered (an unchanged one has no moved leaf, so no new pair).
    /// - *cross(X, Y)*: the pairs with one leaf in X and one in Y. Skipped when the boxes
    ///   do not overlap or neither subtree changed. Two leaves: report. Otherwise split the
    ///   internal node with the larger area (or the one internal node) into its children.
    pub(crate) fn for_each_changed_pair(&self, mut f: impl FnMut(ProxyId, ProxyId)) {
        if self.root.is_null() || !self.is_changed(self.root) {
            return;
        }
        let epoch = self.epoch;
        let nodes = &self.nodes;
        let mut visited = 0u64;
        let mut reported = 0u64;
        // Tasks: (x, x) is self(x); (x, y) with x != y is cross(x, y).
        let mut stack: SmallVec<[(NodeId, NodeId); 128]> = SmallVec::new();
        stack.push((self.root, self.root));
        while let Some((x, y)) = stack.pop() {
            visited += 1;
            let nx = &nodes[x.index()];
            if x == y {
                if nx.is_leaf() {
                    continue;
                }
                let (c1, c2) = (nx.child1, nx.child2);
                let (n1, n2) = (&nodes[c1.index()], &nodes[c2.index()]);
                let (ch1, ch2) = (n1.stamp == epoch, n2.stamp == epoch);
                if (ch1 || ch2) && n1.aabb.overlaps(&n2.aabb) {
                    stack.push((c1, c2));
                }
                if ch2 {
                    stack.push((c2, c2));
                }
                if ch1 {
                    stack.push((c1, c1));
                }
                continue;
            }
            let ny = &nodes[y.index()];
            match (nx.is_leaf(), ny.is_leaf()) {
                (true, true) => {
                    reported += 1;
                    f(ProxyId(x.0), ProxyId(y.0));
                }
                (leaf_x, leaf_y) => {
                    // Split y (swap roles so that y is the node to split).
                    let (keep, keep_node, split, split_node) =
                        if leaf_y || (!leaf_x && nx.aabb.area() > ny.aabb.area()) {
                            (y, ny, x, nx)
                        } else {
                            (x, nx, y, ny)
                        };
                    let keep_changed = keep_node.stamp == epoch;
                    for child in [split_node.child2, split_node.child1] {
                        let nc = &nodes[child.index()];
                        if (keep_changed || nc.stamp == epoch) && nc.aabb.overlaps(&keep_node.aabb)
                        {
                            stack.push((keep, child));
                        }
                    }
                    let _ = split;
                }
            }
        }
        self.count_visits(visited, reported);
    }
}
