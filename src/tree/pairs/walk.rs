//! The walk of the changed part of the tree against itself, which refits and rotates the
//! changed nodes on its way back up.

use crate::Vector;
use crate::tree::prefetch::prefetch_children;
use crate::tree::{DynamicTree, NodeId, ProxyId, Stamp};

use super::{Entry, LeafTasks, PairStacks, TASK_ROOM, children, pop_task};

impl<V: Vector, T> DynamicTree<V, T> {
    /// One walk over the changed part of the tree that calls `f` for each overlapping pair
    /// of leaves with at least one moved leaf, and refits the changed nodes on its way
    /// back up.
    ///
    /// Pairs. Two leaves overlap only if every pair of their ancestors does, and each pair
    /// of leaves has one lowest common ancestor, with one leaf under each child. Tasks:
    /// - *self(N)*, N internal and changed: self(child) for each internal changed child
    ///   (an unchanged subtree has no new pair), the pair (child1, child2), and, once all
    ///   of that is done, refit(N);
    /// - *cross(X, Y)*, both internal: the four pairs of a child of X and a child of Y;
    /// - *a pair of nodes* A, B is dropped unless one changed and their boxes overlap
    ///   ([`Self::hit`]). Two internal nodes become cross(A, B); a pair with a leaf becomes
    ///   a *leaf task* ([`LeafTasks`]): two leaves reported, or the internal node's subtree
    ///   walked against the leaf ([`Self::leaf_against_subtree`]).
    ///
    /// Whether a pair passes, and so its kind, is hard to predict, so neither takes a
    /// branch ([`Self::node_pair`]). Leaf tasks run in small batches (when a few wait,
    /// before any refit, and at the end), so the main loop pops only self, cross and refit
    /// tasks.
    ///
    /// Refits ([`Self::refit_changed_node`]). Tasks run last pushed first, and self(N) pushes
    /// refit(N) before anything else, so refit(N) runs once every task inside N's subtree
    /// has and none left refers to it: rotating there is safe, and the refits run children
    /// first. The pair tests therefore see boxes not yet tight (last update's exact boxes
    /// grown by this step's moves): they may look further, never miss a pair, and leaves'
    /// boxes are always exact. When no refit is needed ([`Self::refits_needed`]), none is
    /// pushed: self(N) notes the candidate itself.
    pub(crate) fn refit_and_pairs(
        &mut self,
        stacks: &mut PairStacks,
        mut f: impl FnMut(ProxyId, ProxyId),
    ) -> u64 {
        self.optimizer.candidates.clear();
        if !self.has_walk() {
            return 0;
        }
        let (rotate, subtree_height) = self.refit_settings();
        let refits = self.refits_needed(rotate);
        let mut counts = (0u64, 0u64);
        stacks.start((self.root, self.root));
        let (mut fill, mut leaf_fill) = (1, 0);
        while fill > 0 {
            let (x, y) = pop_task(&mut stacks.tasks, &mut fill);
            counts.0 += 1;
            if y.is_null() {
                // The leaf tasks found so far may lie under x: they run before x changes.
                let waiting = core::mem::take(&mut leaf_fill);
                self.run_leaf_tasks(stacks, waiting, &mut counts, &mut f);
                self.refit_changed_node(x, rotate, subtree_height);
                continue;
            }
            if !refits && x == y {
                self.note_candidate(x, subtree_height);
            }
            let fills = (&mut fill, &mut leaf_fill);
            self.run_task((x, y), refits, stacks, fills, &mut counts, &mut f);
        }
        self.run_leaf_tasks(stacks, leaf_fill, &mut counts, &mut f);
        self.count_visits(counts.0, counts.1);
        counts.0
    }

    /// Whether an update has a walk to do: the root is an internal node and changed.
    pub(crate) fn has_walk(&self) -> bool {
        !self.root.is_null() && !self.root.is_leaf() && self.root_stamp == self.epoch
    }

    /// Runs a popped task other than a refit: self(x) when `x == y` (pushing refit(x) first
    /// when `refits`), else a pair of nodes that passed [`Self::hit`]; then the waiting
    /// leaf tasks if they fill up. [`pop_task`] leaves the [`TASK_ROOM`] slots it needs, and
    /// `leaf_fill` must leave room for four leaf tasks (as the previous call leaves it).
    /// `counts`: the nodes visited and the pairs reported.
    #[inline(always)]
    pub(crate) fn run_task(
        &self,
        (x, y): (NodeId, NodeId),
        refits: bool,
        stacks: &mut PairStacks,
        (fill, leaf_fill): (&mut usize, &mut usize),
        counts: &mut (u64, u64),
        f: &mut impl FnMut(ProxyId, ProxyId),
    ) {
        let epoch = self.epoch;
        // A plain slice, kept in registers (see `leaf_against_subtree`).
        let nodes = self.nodes.as_slice();
        // The free slots as an array: one bounds check here, not one per slot written.
        let Some(room) = stacks
            .tasks
            .get_mut(*fill..)
            .and_then(|free| free.first_chunk_mut::<TASK_ROOM>())
        else {
            unreachable!("pop_task leaves TASK_ROOM slots above fill");
        };
        let leaf_tasks = &mut stacks.leaf_tasks;
        let mut pushed = 0;
        match (x.is_leaf(), y.is_leaf()) {
            _ if x == y => {
                // self(x).
                let nx = &nodes[x.index()];
                room[0] = (x, NodeId::NULL);
                pushed += refits as usize;
                // The children's nodes are read by the tasks pushed here, if they pass.
                prefetch_children(nodes, x, nx.children);
                let [(c1, e1), (c2, e2)] = children(x, nx);
                room[pushed & (TASK_ROOM - 1)] = (c2, c2);
                pushed += ((e2.1 == epoch) & !c2.is_leaf()) as usize;
                room[pushed & (TASK_ROOM - 1)] = (c1, c1);
                pushed += ((e1.1 == epoch) & !c1.is_leaf()) as usize;
                let leaf_tasks = (leaf_tasks, &mut *leaf_fill);
                self.node_pair((c1, e1), (c2, e2), epoch, (room, &mut pushed), leaf_tasks);
            }
            (true, true) => {
                counts.1 += 1;
                f(self.leaf_ref(x).0, self.leaf_ref(y).0);
            }
            (true, false) => {
                let held = self.leaf_ref(x);
                self.leaf_against_subtree::<false>(held, y, &mut stacks.walk, counts, f)
            }
            (false, true) => {
                let held = self.leaf_ref(y);
                self.leaf_against_subtree::<false>(held, x, &mut stacks.walk, counts, f)
            }
            (false, false) => {
                // cross(x, y): the four pairs of a child of each.
                let (nx, ny) = (&nodes[x.index()], &nodes[y.index()]);
                prefetch_children(nodes, x, nx.children);
                prefetch_children(nodes, y, ny.children);
                let ([x1, x2], [y1, y2]) = (children(x, nx), children(y, ny));
                for (a, b) in [(x2, y2), (x2, y1), (x1, y2), (x1, y1)] {
                    let leaf_tasks = (&mut *leaf_tasks, &mut *leaf_fill);
                    self.node_pair(a, b, epoch, (room, &mut pushed), leaf_tasks);
                }
            }
        }
        *fill += pushed;
        if LeafTasks::is_full(*leaf_fill) {
            self.run_leaf_tasks(stacks, core::mem::take(leaf_fill), counts, f);
        }
    }

    /// Whether a pair of nodes can hold a new pair of leaves: one of them changed and
    /// their boxes overlap.
    #[inline(always)]
    pub(crate) fn hit(a: Entry<'_, V>, b: Entry<'_, V>, epoch: Stamp) -> bool {
        ((a.1 == epoch) | (b.1 == epoch)) & a.0.overlaps(b.0)
    }

    /// A pair of nodes met by the walk, with their entries: kept when it passes, as a task
    /// when both are internal, else as a leaf task (`leaf_tasks` must have room for one).
    ///
    /// Both are written in any case and kept by moving `pushed` (or the leaf tasks' count)
    /// by 0 or 1, without a branch: whether a pair passes follows no pattern a predictor
    /// learns, and the mispredictions would cost more than the writes.
    #[inline(always)]
    fn node_pair(
        &self,
        (a, ea): (NodeId, Entry<'_, V>),
        (b, eb): (NodeId, Entry<'_, V>),
        epoch: Stamp,
        (room, pushed): (&mut [(NodeId, NodeId); TASK_ROOM], &mut usize),
        (leaf_tasks, leaf_fill): (&mut LeafTasks, &mut usize),
    ) {
        let hit = Self::hit(ea, eb, epoch);
        let internal = !a.is_leaf() & !b.is_leaf();
        // A task pushes at most four, so this is in range.
        room[*pushed & (TASK_ROOM - 1)] = (a, b);
        *pushed += (hit & internal) as usize;
        leaf_tasks.push(leaf_fill, a, b, hit & !internal);
    }

    /// Runs the `fill` leaf tasks waiting in `stacks.leaf_tasks`, in the order found.
    #[inline]
    pub(crate) fn run_leaf_tasks(
        &self,
        stacks: &mut PairStacks,
        fill: usize,
        counts: &mut (u64, u64),
        f: &mut impl FnMut(ProxyId, ProxyId),
    ) {
        for &(a, b) in &stacks.leaf_tasks.tasks[..fill] {
            let (leaf, other) = if a.is_leaf() { (a, b) } else { (b, a) };
            let held = self.leaf_ref(leaf);
            if other.is_leaf() {
                counts.1 += 1;
                f(held.0, self.leaf_ref(other).0);
            } else {
                self.leaf_against_subtree::<false>(held, other, &mut stacks.walk, counts, f);
            }
        }
        // Each leaf task counts as a task popped, as the walk's other tasks do.
        counts.0 += fill as u64;
    }
}
