//! Finding the new overlapping pairs after a step of moves: the update itself and the
//! names the walks give the nodes and leaves they reach.

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::parallel::runner::TaskRunner;
use crate::tree::{DynamicTree, LEAF, Node, NodeId, ProxyId, Stamp};

mod leaves;
mod search;
mod stacks;
mod walk;

pub(crate) use search::Search;
pub(crate) use stacks::{LeafTasks, PairStacks, TASK_ROOM, pop_task};

/// What the walk reads of a node or leaf: its box and its change mark.
pub(crate) type Entry<'a, V> = (&'a BoundingBox<V>, Stamp);

/// The walk's name for child `slot` of `parent`: an internal child's own id, or, for a
/// leaf, the parent's index and the slot with the leaf tag, so that a task reaching it
/// reads its box, mark and proxy from the parent just read, not from the table of leaves.
#[inline(always)]
pub(crate) fn child_ref(parent: NodeId, slot: usize, child: NodeId) -> NodeId {
    if child.is_leaf() {
        NodeId(LEAF | (parent.0 << 1) | slot as u32)
    } else {
        child
    }
}

/// The children of the internal node `id` (`node`), as [`child_ref`]s with their entries.
#[inline(always)]
pub(crate) fn children<V: Vector>(id: NodeId, node: &Node<V>) -> [(NodeId, Entry<'_, V>); 2] {
    let child = |k: usize| {
        let entry = (&node.boxes[k], node.stamps[k]);
        (child_ref(id, k, node.children[k]), entry)
    };
    [child(0), child(1)]
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Finishes a step of moves: tightens and rebalances the changed part of the tree, then
    /// appends to `pairs` every pair of proxies whose fat boxes overlap and of which at
    /// least one moved (or was created) since the last call, and forgets the moves.
    ///
    /// The pairs are found by a walk of the changed part of the tree against itself or,
    /// when fewer than one proxy in eight moved, by a walk from each moved leaf if that
    /// has cost less recently: nodes visited per moved proxy, weighted (see the
    /// [module guide](crate::tree)).
    ///
    /// Each pair appears once, as `(a, b)` with `a < b`, in an order that depends only on
    /// the sequence of operations applied to the tree. `pairs` is not cleared first.
    pub fn update_pairs(&mut self, pairs: &mut Vec<(ProxyId, ProxyId)>) {
        let push = |a: ProxyId, b: ProxyId| pairs.push(if a < b { (a, b) } else { (b, a) });
        let moved = self.moved_count;
        let by_leaves = self.choose_search();
        if by_leaves {
            // Before the stacks are taken: the refit uses them.
            self.refit_changed();
        }
        let mut stacks = core::mem::take(&mut self.scratch.pairs);
        let visited = if by_leaves {
            self.pairs_by_leaves(&mut stacks, push)
        } else {
            self.refit_and_pairs(&mut stacks, push)
        };
        self.search
            .note(by_leaves, visited, (moved, self.proxy_count));
        self.scratch.pairs = stacks;
        self.finish_update();
    }

    /// Forgets the moves, then lets the tree improve itself (see [`Self::optimize`]).
    pub(crate) fn finish_update(&mut self) {
        self.clear_marks();
        self.optimize();
    }

    /// [`Self::finish_update`] with the improvements planned on `runner`'s threads (see
    /// [`Self::optimize_on`]).
    pub(crate) fn finish_update_on(&mut self, runner: &dyn TaskRunner)
    where
        T: Sync,
    {
        self.clear_marks();
        self.optimize_on(runner);
    }

    /// The proxy, box and mark of a leaf named by a [`child_ref`].
    #[inline(always)]
    pub(crate) fn leaf_ref(&self, r: NodeId) -> (ProxyId, Entry<'_, V>) {
        let node = &self.nodes[((r.0 & !LEAF) >> 1) as usize];
        let k = (r.0 & 1) as usize;
        (node.children[k].proxy(), (&node.boxes[k], node.stamps[k]))
    }
}
