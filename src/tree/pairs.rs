//! Finding the new overlapping pairs after a step of moves.

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::{DynamicTree, NodeId, ProxyId};

/// [`BoundingBox::overlaps`] (touching counts) computed without branches: every axis is
/// compared and the results are combined with `&`, which leaves the walks one branch per
/// test rather than one per comparison, most of them hard to predict.
#[inline(always)]
fn overlap<V: Vector>(a: &BoundingBox<V>, b: &BoundingBox<V>) -> bool {
    let mut result = true;
    for axis in 0..V::DIM {
        result &= (a.min.axis(axis) <= b.max.axis(axis)) & (b.min.axis(axis) <= a.max.axis(axis));
    }
    result
}

/// The two stacks of the pair walk, kept by the tree between updates.
#[derive(Debug, Default)]
pub(crate) struct PairStacks {
    /// Pending tasks: `(x, x)` is self(x), `(x, null)` refit(x), `(x, y)` cross(x, y).
    tasks: Vec<(NodeId, NodeId)>,
    /// Pending nodes of a leaf-against-subtree walk.
    walk: Vec<NodeId>,
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Finishes a step of moves: tightens and rebalances the changed part of the tree, then
    /// appends to `pairs` every pair of proxies whose fat boxes overlap and of which at
    /// least one moved (or was created) since the last call, and forgets the moves.
    ///
    /// Each pair appears once, as `(a, b)` with `a < b`, in an order that depends only on
    /// the sequence of operations applied to the tree (the same operations give the same
    /// order). `pairs` is not cleared first.
    pub fn update_pairs(&mut self, pairs: &mut Vec<(ProxyId, ProxyId)>) {
        let mut stacks = core::mem::take(&mut self.pair_stacks);
        self.refit_and_pairs(&mut stacks, |a, b| {
            pairs.push(if a < b { (a, b) } else { (b, a) })
        });
        self.pair_stacks = stacks;
        self.finish_update();
    }

    /// Like [`Self::update_pairs`] but hands each pair to `f` instead of collecting them.
    pub fn update_pairs_with(&mut self, mut f: impl FnMut(ProxyId, ProxyId)) {
        let mut stacks = core::mem::take(&mut self.pair_stacks);
        self.refit_and_pairs(&mut stacks, |a, b| if a < b { f(a, b) } else { f(b, a) });
        self.pair_stacks = stacks;
        self.finish_update();
    }

    /// Forgets the moves, then lets the tree improve itself (see [`Self::optimize`]).
    fn finish_update(&mut self) {
        self.clear_marks();
        self.optimize();
    }

    /// One walk over the changed part of the tree that calls `f` for each overlapping pair
    /// of leaves with at least one moved leaf, and refits the changed nodes on its way
    /// back up.
    ///
    /// Pairs. Two leaves overlap only if every pair of their ancestors does, and each pair
    /// of leaves has exactly one lowest common ancestor, where one leaf is under `child1`
    /// and the other under `child2`. So the walk has these tasks:
    /// - *self(N)*, N internal and changed: the pairs inside N's subtree: self(child) for
    ///   each internal changed child (an unchanged subtree has no moved leaf, so no new
    ///   pair), and the pair (child1, child2); and, once all of that is done, refit(N);
    /// - *cross(X, Y)*, both internal: the pairs with one leaf in X and one in Y. Both are
    ///   split at once: each of the four pairs of a child of X and a child of Y is a pair
    ///   of nodes;
    /// - *a pair of nodes* A, B ([`Self::node_pair`]) is dropped when neither changed or
    ///   their boxes do not overlap. Otherwise: two leaves, report them; two internal
    ///   nodes, cross(A, B); a leaf and an internal node, walk the internal node's subtree
    ///   against the leaf right away ([`Self::leaf_against_subtree`]).
    ///
    /// Refits. *refit(N)* gives N its exact box back (moves only ever grow ancestors),
    /// lets it rotate when few proxies moved (when many did, the incremental optimization
    /// rebuilds parts of the tree after every update, which does more for the tree than
    /// rotations, for less), and notes it as a candidate for [`Self::optimize`] when it is
    /// a changed subtree of the size that rebuilds. Tasks run last pushed first, and
    /// self(N) pushes refit(N) before anything else, so refit(N) runs once every task
    /// inside N's subtree has, and no task left refers to it: rotating there is safe, and
    /// the refits run children first. The pair tests therefore see boxes that are not yet
    /// tight (the exact boxes of the last update grown by this step's moves): they may
    /// look further, never miss a pair, and leaves' boxes are always exact.
    pub(crate) fn refit_and_pairs(
        &mut self,
        stacks: &mut PairStacks,
        mut f: impl FnMut(ProxyId, ProxyId),
    ) {
        self.optimizer.candidates.clear();
        if self.root.is_null()
            || !self.is_changed(self.root)
            || self.nodes[self.root.index()].is_leaf()
        {
            return;
        }
        let epoch = self.epoch;
        let subtree_height = self.optimizer.subtree_height(self.proxy_count);
        let rotate = self.moved_count * 16 < self.proxy_count;
        let mut visited = 0u64;
        let mut reported = 0u64;
        stacks.tasks.clear();
        stacks.tasks.push((self.root, self.root));
        while let Some((x, y)) = stacks.tasks.pop() {
            visited += 1;
            if y.is_null() {
                self.refit_node(x);
                if rotate {
                    self.rotate(x);
                }
                let node = &self.nodes[x.index()];
                let parent = node.parent;
                if node.height <= subtree_height
                    && (parent.is_null() || self.nodes[parent.index()].height > subtree_height)
                {
                    self.optimizer.candidates.push(x);
                }
                continue;
            }
            let nodes = &self.nodes;
            let nx = &nodes[x.index()];
            if x == y {
                stacks.tasks.push((x, NodeId::NULL));
                let (c1, c2) = (nx.child1, nx.child2);
                let (n1, n2) = (&nodes[c1.index()], &nodes[c2.index()]);
                if n2.stamp == epoch && !n2.is_leaf() {
                    stacks.tasks.push((c2, c2));
                }
                if n1.stamp == epoch && !n1.is_leaf() {
                    stacks.tasks.push((c1, c1));
                }
                self.node_pair(c1, c2, stacks, &mut visited, &mut reported, &mut f);
            } else {
                let ny = &nodes[y.index()];
                let (x1, x2, y1, y2) = (nx.child1, nx.child2, ny.child1, ny.child2);
                self.node_pair(x1, y1, stacks, &mut visited, &mut reported, &mut f);
                self.node_pair(x1, y2, stacks, &mut visited, &mut reported, &mut f);
                self.node_pair(x2, y1, stacks, &mut visited, &mut reported, &mut f);
                self.node_pair(x2, y2, stacks, &mut visited, &mut reported, &mut f);
            }
        }
        self.count_visits(visited, reported);
    }

    /// A pair of nodes of the pair walk (see [`Self::for_each_changed_pair`]).
    #[inline(always)]
    fn node_pair(
        &self,
        a: NodeId,
        b: NodeId,
        stacks: &mut PairStacks,
        visited: &mut u64,
        reported: &mut u64,
        f: &mut impl FnMut(ProxyId, ProxyId),
    ) {
        let (na, nb) = (&self.nodes[a.index()], &self.nodes[b.index()]);
        let changed = (na.stamp == self.epoch) | (nb.stamp == self.epoch);
        if !(changed & overlap(&na.aabb, &nb.aabb)) {
            return;
        }
        match (na.is_leaf(), nb.is_leaf()) {
            (true, true) => {
                *reported += 1;
                f(ProxyId(a.0), ProxyId(b.0));
            }
            (false, false) => stacks.tasks.push((a, b)),
            (true, false) => {
                self.leaf_against_subtree(a, b, &mut stacks.walk, visited, reported, f)
            }
            (false, true) => {
                self.leaf_against_subtree(b, a, &mut stacks.walk, visited, reported, f)
            }
        }
    }

    /// Reports every leaf under the internal node `top` whose box overlaps the leaf `leaf`'s,
    /// of which one of the two moved; `top`'s own box overlaps and one of the two changed.
    ///
    /// Depth first, the leaf's box and mark held at hand. At each internal node both
    /// children are tested: a passing leaf is reported, a passing internal child is
    /// walked next (the second one, when both pass, waits on `walk`).
    #[inline]
    fn leaf_against_subtree(
        &self,
        leaf: NodeId,
        top: NodeId,
        walk: &mut Vec<NodeId>,
        visited: &mut u64,
        reported: &mut u64,
        f: &mut impl FnMut(ProxyId, ProxyId),
    ) {
        let epoch = self.epoch;
        let nodes = &self.nodes;
        let leaf_node = &nodes[leaf.index()];
        let aabb = leaf_node.aabb;
        let leaf_changed = leaf_node.stamp == epoch;
        let mut current = top;
        loop {
            *visited += 1;
            let node = &nodes[current.index()];
            let (c1, c2) = (node.child1, node.child2);
            let (n1, n2) = (&nodes[c1.index()], &nodes[c2.index()]);
            let hit1 = (leaf_changed | (n1.stamp == epoch)) & overlap(&n1.aabb, &aabb);
            let hit2 = (leaf_changed | (n2.stamp == epoch)) & overlap(&n2.aabb, &aabb);
            let mut next = NodeId::NULL;
            if hit1 {
                if n1.is_leaf() {
                    *reported += 1;
                    f(ProxyId(leaf.0), ProxyId(c1.0));
                } else {
                    next = c1;
                }
            }
            if hit2 {
                if n2.is_leaf() {
                    *reported += 1;
                    f(ProxyId(leaf.0), ProxyId(c2.0));
                } else if next.is_null() {
                    next = c2;
                } else {
                    walk.push(c2);
                }
            }
            if next.is_null() {
                match walk.pop() {
                    Some(id) => next = id,
                    None => return,
                }
            }
            current = next;
        }
    }
}
