//! Finding the new overlapping pairs after a step of moves.

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::parallel::TaskRunner;
use crate::tree::prefetch::prefetch_children;
use crate::tree::{DynamicTree, LEAF, NodeId, ProxyId, Stamp};

/// What the walk reads of a node or leaf: its box and its change mark.
pub(crate) type Entry<'a, V> = (&'a BoundingBox<V>, Stamp);

/// The walk's name for child `slot` of `parent`: an internal child's own id, or, for a
/// leaf, where it hangs (the parent's index and the slot, with the leaf tag), so that a
/// task that reaches it reads its box, mark and proxy from the parent just read, not from
/// the table of leaves.
#[inline(always)]
pub(crate) fn child_ref(parent: NodeId, slot: usize, child: NodeId) -> NodeId {
    if child.is_leaf() {
        NodeId(LEAF | (parent.0 << 1) | slot as u32)
    } else {
        child
    }
}

/// The highest nodes the refit rotates. Rotations higher up swap large subtrees, which
/// rarely lowers the cost, and each one reads six nodes far apart; rotating the low
/// nodes alone keeps the tree as good for less work.
const ROTATE_MAX_HEIGHT: u16 = 6;

/// Changed nodes rotate only in updates where fewer than one proxy in this many moved.
/// When more move, the incremental optimization rebuilds parts of the tree after every
/// update, which keeps it as good for less, and rotating as well costs more than it
/// saves the walk. A mostly static world, where few proxies move, relies on rotations.
const ROTATE_BELOW: usize = 64;

/// Updates where fewer than one proxy in this many moved may find their pairs leaf by
/// leaf ([`DynamicTree::pairs_by_leaves`]); see [`Search`].
const LEAVES_BELOW: usize = 8;

/// What a node visited by the leaf-by-leaf search costs against one visited by the walk.
/// Every leaf's walk starts at the root and ends at the leaves it meets, a branch on
/// each; the walk reads each node once for many pairs. Set on touching lattices, where
/// the two searches visit about as many nodes in 2D and the walk is the faster there.
const LEAF_VISIT_COST: f32 = 1.5;

/// Updates that may search leaf by leaf between two runs of the search not preferred, so
/// that its cost is known again when the scene has changed.
const PROBE_EVERY: u32 = 32;

/// How a pair update finds its pairs, serial or parallel.
///
/// The walk of [`DynamicTree::refit_and_pairs`] goes down two changed subtrees side by
/// side, testing the boxes of both at every level: where many leaves moved it shares the
/// work of their paths. Where the moved leaves are few and scattered, a changed subtree
/// is mostly still leaves, and where boxes touch (a packed crowd, a wall of crates, a
/// lattice of cells) its box overlaps its neighbours' along whole faces: the walk follows
/// those faces far down on both sides before it narrows to the moved leaves, and a walk
/// from each moved leaf ([`DynamicTree::pairs_by_leaves`]) narrows at once. Which wins
/// depends on the shapes as much as on the count, so the tree measures: each search
/// notes the nodes it visited and the proxies moved, as running averages; an update with
/// fewer than one proxy in [`LEAVES_BELOW`] moved takes the one that has cost less per
/// moved proxy recently (the leaf-by-leaf visits weighted by [`LEAF_VISIT_COST`]), and
/// every [`PROBE_EVERY`] such updates it runs the other once. Updates with more moves
/// always walk.
///
/// Cases: a search never run yet is run (the walk first); counts alone decide, so the
/// same operations give the same searches and the same order of pairs. A parallel
/// walk's count includes the levels its split unrolled, so it does not depend on the
/// number of tasks; it differs from a serial walk's (which also counts its refits), so a
/// tree updated both ways chooses from both.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Search {
    /// The recent walks.
    walk: SearchCost,
    /// The recent leaf-by-leaf searches.
    leaves: SearchCost,
    /// Updates that could search leaf by leaf since the search not preferred last ran.
    since_probe: u32,
}

/// Running averages of one search's nodes visited and proxies moved per update (zero
/// before its first run).
#[derive(Clone, Copy, Debug, Default)]
struct SearchCost {
    visits: f32,
    moves: f32,
}

impl SearchCost {
    fn known(self) -> bool {
        self.moves > 0.0
    }
}

impl Search {
    /// Whether an update with `moved` of `proxies` moved searches leaf by leaf; counts the
    /// update.
    pub(crate) fn by_leaves(&mut self, moved: usize, proxies: usize) -> bool {
        if moved.saturating_mul(LEAVES_BELOW) >= proxies {
            return false;
        }
        if !self.walk.known() {
            return false;
        }
        if !self.leaves.known() {
            return true;
        }
        // Both are known: visits per moved proxy, weighted.
        let (walk, leaves) = (self.walk, self.leaves);
        let preferred = leaves.visits * LEAF_VISIT_COST * walk.moves < walk.visits * leaves.moves;
        self.since_probe += 1;
        if self.since_probe >= PROBE_EVERY {
            self.since_probe = 0;
            return !preferred;
        }
        preferred
    }

    /// Whether both searches have run.
    #[cfg(test)]
    pub(crate) fn ran_both(&self) -> bool {
        self.walk.known() && self.leaves.known()
    }

    /// Notes the cost of an update's search: `visited` nodes for `moved` of `proxies`.
    /// Only updates that could search leaf by leaf are noted, so that the two costs come
    /// from like updates; one with nothing moved searched nothing and teaches nothing.
    ///
    /// Visits and moves are averaged apart, over the last few runs, and compared as a
    /// ratio: the updates with many moves weigh most, as they do in time (a walk for a
    /// handful of moves visits many nodes per move, and costs next to nothing).
    pub(crate) fn note(&mut self, by_leaves: bool, visited: u64, (moved, proxies): (usize, usize)) {
        if moved == 0 || visited == 0 || moved.saturating_mul(LEAVES_BELOW) >= proxies {
            return;
        }
        let noted = if by_leaves {
            &mut self.leaves
        } else {
            &mut self.walk
        };
        let (visits, moves) = (visited as f32, moved as f32);
        *noted = if noted.known() {
            SearchCost {
                visits: 0.75 * noted.visits + 0.25 * visits,
                moves: 0.75 * noted.moves + 0.25 * moves,
            }
        } else {
            SearchCost { visits, moves }
        };
    }
}

/// The stacks and buffers of the pair walks, serial and parallel, kept by the tree
/// between updates.
#[derive(Debug, Default)]
pub(crate) struct PairStacks {
    /// Pending tasks: `(x, x)` is self(x), `(x, null)` refit(x), `(x, y)` cross(x, y) (or,
    /// as the first task of a parallel walk, any pair of nodes).
    pub tasks: Vec<(NodeId, NodeId)>,
    /// Pending nodes of a leaf-against-subtree walk; also the stack that collects the
    /// changed leaves and notes the optimizer's candidates.
    pub walk: Vec<NodeId>,
    /// Pending nodes of a refit (of the whole tree after a large batch of moves, or of the
    /// changed part before a parallel or leaf-by-leaf update): (node, children done).
    pub refits: Vec<(NodeId, bool)>,
    /// The tasks of the last parallel split, kept for the next one.
    pub split_tasks: Vec<crate::tree::parallel::PairTask>,
    /// The queue of the parallel split's breadth-first unrolling.
    pub split_queue: std::collections::VecDeque<crate::tree::parallel::PairTask>,
    /// The pairs of each task of a parallel update (`ParallelPairs::run_buffered`), one
    /// list per task.
    pub task_pairs: Vec<crate::tree::parallel::TaskPairs>,
    /// The leaf tasks waiting to run.
    pub leaf_tasks: LeafTasks,
    /// The changed leaves of an update searched leaf by leaf
    /// ([`DynamicTree::pairs_by_leaves`]), as [`child_ref`]s.
    pub changed_leaves: Vec<NodeId>,
}

/// The room of [`LeafTasks`] (a power of two): its tasks run once fewer than four slots
/// are free. Small batches run while the nodes their walks start from, just read, are
/// still in cache.
const LEAF_TASK_ROOM: usize = 16;

/// Pairs of nodes of which one or both are leaves that passed the pair test, waiting to
/// run: a leaf and a leaf (a pair to report) or a leaf and an internal node (a walk of the
/// internal node's subtree against the leaf). They run in batches, apart from the other
/// tasks, so that the walk's main loop never branches on the kind of a task it pops, an
/// outcome hard to predict. A pair is written to its slot in any case and kept by moving
/// the count by 0 or 1.
///
/// The walk keeps the count of waiting tasks itself, in a local variable: as a field
/// beside the slots it would be read from and written to memory at every push.
#[derive(Debug)]
pub(crate) struct LeafTasks {
    tasks: [(NodeId, NodeId); LEAF_TASK_ROOM],
}

impl Default for LeafTasks {
    fn default() -> Self {
        Self {
            tasks: [(NodeId::NULL, NodeId::NULL); LEAF_TASK_ROOM],
        }
    }
}

impl LeafTasks {
    /// Whether, with `fill` tasks waiting, fewer than the four slots a task may fill are
    /// free.
    #[inline(always)]
    pub fn is_full(fill: usize) -> bool {
        fill + 4 > LEAF_TASK_ROOM
    }

    /// Writes the pair of nodes `(a, b)` above the `fill` tasks waiting, kept when
    /// `keep`. There must be room (see [`Self::is_full`]).
    #[inline(always)]
    fn push(&mut self, fill: &mut usize, a: NodeId, b: NodeId, keep: bool) {
        // In range whatever `fill` is; `is_full` keeps it from wrapping.
        self.tasks[*fill & (LEAF_TASK_ROOM - 1)] = (a, b);
        *fill += keep as usize;
    }
}

impl PairStacks {
    /// Readies `tasks` to hold `first` alone. `tasks` is used as a fixed array: its length
    /// is its capacity, the walk's `fill` how much of it is in use. Every push writes its
    /// slot and moves `fill` by 0 or 1, so that the outcome of a test that is hard to
    /// predict takes no branch.
    pub(crate) fn start(&mut self, first: (NodeId, NodeId)) {
        if self.tasks.len() < 256 {
            self.tasks.resize(256, (NodeId::NULL, NodeId::NULL));
        }
        self.tasks[0] = first;
    }
}

/// The room above a walk's `fill` that a task may write into: more than the four tasks
/// one pushes, a power of two so that a slot's index needs no bounds check.
pub(crate) const TASK_ROOM: usize = 8;

/// Takes the top task off `tasks` (`fill` > 0), first making sure [`TASK_ROOM`] slots are
/// there above the new `fill`.
#[inline(always)]
pub(crate) fn pop_task(tasks: &mut Vec<(NodeId, NodeId)>, fill: &mut usize) -> (NodeId, NodeId) {
    *fill -= 1;
    if *fill + TASK_ROOM > tasks.len() {
        let len = tasks.len();
        tasks.resize(2 * len, (NodeId::NULL, NodeId::NULL));
    }
    tasks[*fill]
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Finishes a step of moves: tightens and rebalances the changed part of the tree, then
    /// appends to `pairs` every pair of proxies whose fat boxes overlap and of which at
    /// least one moved (or was created) since the last call, and forgets the moves.
    ///
    /// The pairs are found by a walk of the changed part of the tree against itself or,
    /// when fewer than one proxy in eight moved, by a walk from each moved leaf if that
    /// has cost less recently (see the [module guide](crate::tree)): the tree counts the
    /// nodes each visits.
    ///
    /// Each pair appears once, as `(a, b)` with `a < b`, in an order that depends only on
    /// the sequence of operations applied to the tree (the same operations give the same
    /// order). `pairs` is not cleared first.
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
    /// - *a pair of nodes* A, B is dropped when neither changed or their boxes do not
    ///   overlap ([`Self::hit`]). When it passes: two internal nodes become the task
    ///   cross(A, B); a pair with a leaf becomes a *leaf task* ([`LeafTasks`]), which
    ///   reports two leaves, or walks the internal node's subtree against the leaf
    ///   ([`Self::leaf_against_subtree`]).
    ///
    /// Whether a pair of nodes passes, and so its kind, is hard to predict, so neither
    /// takes a branch: a pair is written to both stacks in any case and kept or not by how
    /// far each top moves. Leaf tasks run in small batches (whenever a few are waiting,
    /// before any refit, and at the end), so the main loop pops only self, cross and refit
    /// tasks, and a batch's loop over leaf tasks branches on their kind only for the rarer
    /// pair of two leaves.
    ///
    /// Refits. *refit(N)* gives N its exact box back (single moves and small batches only
    /// grow ancestors), lets it rotate (up to [`ROTATE_MAX_HEIGHT`]) when few proxies
    /// moved (when many did, the incremental optimization rebuilds parts of the tree
    /// after every update, which does more for the tree than rotations, for less), and
    /// notes it as a candidate for [`Self::optimize`] when it is a changed subtree of the
    /// size that rebuilds. Tasks run last pushed first, and self(N) pushes refit(N) before
    /// anything else, so refit(N) runs once every task inside N's subtree has, and no task
    /// left refers to it: rotating there is safe, and the refits run children first. The
    /// pair tests therefore see boxes that are not yet tight (the exact boxes of the last
    /// update grown by this step's moves): they may look further, never miss a pair, and
    /// leaves' boxes are always exact. When a large batch of moves has refit the tree in
    /// one pass already (every box exact) and nothing rotates, no refit task is pushed:
    /// self(N) notes the candidate itself.
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
        // With every box exact and no rotation, a refit would only note candidates: that
        // is done when self(x) runs, and no refit task is pushed.
        let refits = self.refits_needed(rotate);
        let mut visited = 0u64;
        let mut reported = 0u64;
        stacks.start((self.root, self.root));
        let tasks = &mut stacks.tasks;
        let (mut fill, mut leaf_fill) = (1, 0);
        while fill > 0 {
            let (x, y) = pop_task(tasks, &mut fill);
            visited += 1;
            if y.is_null() {
                // The leaf tasks found so far may lie under x: they run before x changes.
                let counts = (&mut visited, &mut reported);
                let leaf_tasks = (&stacks.leaf_tasks, core::mem::take(&mut leaf_fill));
                self.run_leaf_tasks(leaf_tasks, &mut stacks.walk, counts, &mut f);
                self.refit_task(x, rotate, subtree_height);
                continue;
            }
            if !refits && x == y {
                self.note_candidate(x, subtree_height);
            }
            let mut counts = (&mut visited, &mut reported);
            self.run_task(
                x,
                y,
                refits,
                tasks,
                &mut fill,
                (&mut stacks.leaf_tasks, &mut leaf_fill),
                &mut stacks.walk,
                &mut counts,
                &mut f,
            );
            if LeafTasks::is_full(leaf_fill) {
                let counts = (&mut visited, &mut reported);
                let leaf_tasks = (&stacks.leaf_tasks, core::mem::take(&mut leaf_fill));
                self.run_leaf_tasks(leaf_tasks, &mut stacks.walk, counts, &mut f);
            }
        }
        let counts = (&mut visited, &mut reported);
        self.run_leaf_tasks(
            (&stacks.leaf_tasks, leaf_fill),
            &mut stacks.walk,
            counts,
            &mut f,
        );
        self.count_visits(visited, reported);
        visited
    }

    /// Whether this update searches leaf by leaf (see [`Search`]), counted in
    /// [`TreeStats::leaf_searches`](crate::TreeStats::leaf_searches) when it does.
    pub(crate) fn choose_search(&mut self) -> bool {
        let by_leaves = self.search.by_leaves(self.moved_count, self.proxy_count);
        self.leaf_searches += u64::from(by_leaves);
        by_leaves
    }

    /// The pairs of an update searched leaf by leaf (see [`Search`]), the changed part of
    /// the tree refitted already: each changed leaf is walked against the whole tree
    /// ([`Self::leaf_against_subtree`]), and a pair of two changed leaves is reported by
    /// the one of lower proxy id. Returns the nodes visited.
    pub(crate) fn pairs_by_leaves(
        &self,
        stacks: &mut PairStacks,
        f: impl FnMut(ProxyId, ProxyId),
    ) -> u64 {
        let mut leaves = core::mem::take(&mut stacks.changed_leaves);
        let mut visited = self.collect_changed_leaves(&mut leaves, &mut stacks.walk);
        visited += self.search_leaves(&leaves, &mut stacks.walk, f);
        stacks.changed_leaves = leaves;
        visited
    }

    /// Puts the changed leaves in `leaves` (as [`child_ref`]s, cleared first), found from
    /// the root down the changed nodes with `walk` as the stack; returns the nodes
    /// visited (also added to the tree's count).
    pub(crate) fn collect_changed_leaves(
        &self,
        leaves: &mut Vec<NodeId>,
        walk: &mut Vec<NodeId>,
    ) -> u64 {
        leaves.clear();
        if !self.has_walk() {
            return 0;
        }
        // Room for as many as an update searched leaf by leaf can have, so that it grows
        // only with the tree.
        leaves.reserve(self.proxy_count / LEAVES_BELOW + 1);
        let epoch = self.epoch;
        walk.clear();
        // Room for two nodes a level of any tree short of the tallest, which then grows it.
        walk.reserve(2 * 128);
        walk.push(self.root);
        let mut visited = 0u64;
        while let Some(id) = walk.pop() {
            visited += 1;
            let node = &self.nodes[id.index()];
            for k in [1, 0] {
                let child = node.children[k];
                if node.stamps[k] == epoch {
                    if child.is_leaf() {
                        leaves.push(child_ref(id, k, child));
                    } else {
                        walk.push(child);
                    }
                }
            }
        }
        self.count_visits(visited, 0);
        visited
    }

    /// Walks each of the changed `leaves` (from [`Self::collect_changed_leaves`]) against
    /// the whole tree, a pair of two changed leaves reported by the lower proxy id; returns
    /// the nodes visited (also added to the tree's count).
    pub(crate) fn search_leaves(
        &self,
        leaves: &[NodeId],
        walk: &mut Vec<NodeId>,
        mut f: impl FnMut(ProxyId, ProxyId),
    ) -> u64 {
        let (mut visited, mut reported) = (0u64, 0u64);
        for &leaf in leaves {
            let (proxy, held) = self.leaf_ref(leaf);
            self.leaf_against_subtree::<true>(
                proxy,
                held,
                self.root,
                walk,
                &mut visited,
                &mut reported,
                &mut f,
            );
        }
        self.count_visits(visited, reported);
        visited
    }

    /// Whether an update has a walk to do: the root is an internal node and changed.
    pub(crate) fn has_walk(&self) -> bool {
        !self.root.is_null() && !self.root.is_leaf() && self.root_stamp == self.epoch
    }

    /// How the refits of an update go: whether changed nodes rotate (only when fewer than
    /// one proxy in [`ROTATE_BELOW`] moved), and the height of the subtrees the optimizer
    /// rebuilds.
    pub(crate) fn refit_settings(&self) -> (bool, u16) {
        (
            self.moved_count * ROTATE_BELOW < self.proxy_count,
            self.optimizer.subtree_height(self.proxy_count),
        )
    }

    /// Whether the changed nodes need refit(x) this update: to rotate, or because moves
    /// only grew their ancestors (not every box is exact). Otherwise a refit would only
    /// note the optimizer's candidates.
    #[inline]
    pub(crate) fn refits_needed(&self, rotate: bool) -> bool {
        rotate || !self.exact
    }

    /// refit(x): x gets its exact box back (unless every box is exact already and nothing
    /// rotates), may rotate, and is noted as a candidate for [`Self::optimize`] when it is
    /// a changed subtree of the size that rebuilds.
    #[inline]
    pub(crate) fn refit_task(&mut self, x: NodeId, rotate: bool, subtree_height: u16) {
        if self.refits_needed(rotate) {
            self.refit_node(x);
        }
        if rotate && self.nodes[x.index()].height <= ROTATE_MAX_HEIGHT {
            self.rotate(x);
        }
        self.note_candidate(x, subtree_height);
    }

    /// Notes the changed node `x` as a candidate for [`Self::optimize`] when it is a
    /// subtree of the size that rebuilds.
    #[inline]
    fn note_candidate(&mut self, x: NodeId, subtree_height: u16) {
        let node = &self.nodes[x.index()];
        let parent = node.parent;
        if node.height <= subtree_height
            && (parent.is_root() || self.nodes[parent.parent().index()].height > subtree_height)
        {
            self.optimizer.candidates.push(x);
        }
    }

    /// The proxy, box and mark of a leaf named by a [`child_ref`].
    #[inline(always)]
    pub(crate) fn leaf_ref(&self, r: NodeId) -> (ProxyId, Entry<'_, V>) {
        let node = &self.nodes[((r.0 & !LEAF) >> 1) as usize];
        let k = (r.0 & 1) as usize;
        (node.children[k].proxy(), (&node.boxes[k], node.stamps[k]))
    }

    /// The box and mark of a task's operand: a [`child_ref`].
    #[inline(always)]
    pub(crate) fn ref_entry(&self, r: NodeId) -> Entry<'_, V> {
        if r.is_leaf() {
            self.leaf_ref(r).1
        } else {
            let link = self.link_of(r);
            (self.slot_box(link), self.slot_stamp(link))
        }
    }

    /// Runs one task of the walk other than a refit: self(x) when `x == y` (which first
    /// pushes refit(x) when `refits`), else a pair of nodes that passed [`Self::hit`].
    /// `tasks` must have [`TASK_ROOM`] slots above `fill` (as [`pop_task`] leaves it),
    /// `leaf_tasks` (the slots and the count of tasks waiting) room for four.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn run_task(
        &self,
        x: NodeId,
        y: NodeId,
        refits: bool,
        tasks: &mut [(NodeId, NodeId)],
        fill: &mut usize,
        leaf_tasks: (&mut LeafTasks, &mut usize),
        walk: &mut Vec<NodeId>,
        (visited, reported): &mut (&mut u64, &mut u64),
        f: &mut impl FnMut(ProxyId, ProxyId),
    ) {
        let epoch = self.epoch;
        // A plain slice: its address and length stay in registers (see
        // `leaf_against_subtree`).
        let nodes = self.nodes.as_slice();
        // The slots above `fill` as an array: each write is checked against its length
        // once, here, rather than once per slot written.
        let Some(room) = tasks
            .get_mut(*fill..)
            .and_then(|free| free.first_chunk_mut::<TASK_ROOM>())
        else {
            unreachable!("pop_task leaves TASK_ROOM slots above fill");
        };
        let mut pushed = 0;
        if x == y {
            let nx = &nodes[x.index()];
            room[0] = (x, NodeId::NULL);
            pushed += refits as usize;
            let (c1, c2) = (
                child_ref(x, 0, nx.children[0]),
                child_ref(x, 1, nx.children[1]),
            );
            // The children's nodes are read by the tasks pushed here, if they pass.
            prefetch_children(nodes, x, nx.children);
            let (e1, e2) = ((&nx.boxes[0], nx.stamps[0]), (&nx.boxes[1], nx.stamps[1]));
            room[pushed & (TASK_ROOM - 1)] = (c2, c2);
            pushed += ((e2.1 == epoch) & !c2.is_leaf()) as usize;
            room[pushed & (TASK_ROOM - 1)] = (c1, c1);
            pushed += ((e1.1 == epoch) & !c1.is_leaf()) as usize;
            self.node_pair(
                c1,
                c2,
                (e1, e2),
                epoch,
                (room, &mut pushed),
                (leaf_tasks.0, leaf_tasks.1),
            );
            *fill += pushed;
            return;
        }
        match (x.is_leaf(), y.is_leaf()) {
            (true, true) => {
                **reported += 1;
                f(self.leaf_ref(x).0, self.leaf_ref(y).0);
            }
            (true, false) => {
                let (proxy, held) = self.leaf_ref(x);
                self.leaf_against_subtree::<false>(proxy, held, y, walk, visited, reported, f)
            }
            (false, true) => {
                let (proxy, held) = self.leaf_ref(y);
                self.leaf_against_subtree::<false>(proxy, held, x, walk, visited, reported, f)
            }
            (false, false) => {
                // cross(x, y): the four pairs of a child of each.
                let (nx, ny) = (&nodes[x.index()], &nodes[y.index()]);
                let (x1, x2) = (
                    child_ref(x, 0, nx.children[0]),
                    child_ref(x, 1, nx.children[1]),
                );
                let (y1, y2) = (
                    child_ref(y, 0, ny.children[0]),
                    child_ref(y, 1, ny.children[1]),
                );
                prefetch_children(nodes, x, nx.children);
                prefetch_children(nodes, y, ny.children);
                let (ex1, ex2) = ((&nx.boxes[0], nx.stamps[0]), (&nx.boxes[1], nx.stamps[1]));
                let (ey1, ey2) = ((&ny.boxes[0], ny.stamps[0]), (&ny.boxes[1], ny.stamps[1]));
                let pairs = [
                    (x2, y2, (ex2, ey2)),
                    (x2, y1, (ex2, ey1)),
                    (x1, y2, (ex1, ey2)),
                    (x1, y1, (ex1, ey1)),
                ];
                for (a, b, entries) in pairs {
                    let leaf_tasks = (&mut *leaf_tasks.0, &mut *leaf_tasks.1);
                    self.node_pair(a, b, entries, epoch, (room, &mut pushed), leaf_tasks);
                }
                *fill += pushed;
            }
        }
    }

    /// Whether a pair of nodes can hold a new pair of leaves: one of them changed and
    /// their boxes overlap.
    #[inline(always)]
    pub(crate) fn hit(a: Entry<'_, V>, b: Entry<'_, V>, epoch: Stamp) -> bool {
        ((a.1 == epoch) | (b.1 == epoch)) & a.0.overlaps(b.0)
    }

    /// A pair of nodes met by the walk (see [`Self::refit_and_pairs`]): tested, and kept
    /// when it passes, as a task when both are internal, else as a leaf task.
    /// `leaf_tasks` must have room for one more.
    ///
    /// Both are written in any case (at `room[pushed]`, and above `leaf_tasks`' count)
    /// and kept by moving `pushed` (or that count) by 0 or 1, without a branch: whether a
    /// pair passes follows no pattern a predictor learns, and the mispredictions would
    /// cost more than the writes.
    #[inline(always)]
    fn node_pair(
        &self,
        a: NodeId,
        b: NodeId,
        (ea, eb): (Entry<'_, V>, Entry<'_, V>),
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

    /// Runs the `fill` leaf tasks waiting in `leaf_tasks`, in the order found.
    #[inline]
    pub(crate) fn run_leaf_tasks(
        &self,
        (leaf_tasks, fill): (&LeafTasks, usize),
        walk: &mut Vec<NodeId>,
        (visited, reported): (&mut u64, &mut u64),
        f: &mut impl FnMut(ProxyId, ProxyId),
    ) {
        for &(a, b) in &leaf_tasks.tasks[..fill] {
            let (leaf, other) = if a.is_leaf() { (a, b) } else { (b, a) };
            let (proxy, held) = self.leaf_ref(leaf);
            if other.is_leaf() {
                *reported += 1;
                f(proxy, self.leaf_ref(other).0);
            } else {
                self.leaf_against_subtree::<false>(proxy, held, other, walk, visited, reported, f);
            }
        }
        // Each leaf task counts as a task popped, as the walk's other tasks do.
        *visited += fill as u64;
    }

    /// Reports every leaf under the internal node `top` whose box overlaps the leaf of
    /// `proxy` (`held`: its box and mark), of which one of the two moved; `top`'s own box
    /// overlaps and one of the two changed.
    ///
    /// The leaf's box and mark are held at hand; `walk` holds the nodes still to visit,
    /// from `head` to `tail`. In 3D the walk goes breadth first (`walk` is a queue, read
    /// at `head`): when several nodes are queued, the next one's address does not wait
    /// on the tests of the node just read, and the processor loads several 64-byte nodes
    /// at once. In 2D it goes depth first (`walk` is a stack, read at `tail`): the next
    /// node is the one a test has just chosen, but it lies next in memory (subtrees are
    /// laid out depth first) among smaller nodes, and that order is the faster one there.
    ///
    /// At each internal node both children are tested, their boxes and marks read from
    /// the node itself. Which of them continue is hard to predict, so it is settled
    /// without branching: both are written at the tail and the tail moves by one for each
    /// passing internal child (in the order they are to be read). Only a passing leaf (a
    /// pair to report, rarer) and the end of the walk take a branch. `walk` is used as a
    /// fixed array (its length is its capacity); when the tail reaches its end, the part
    /// read moves out (once half of it is read) or the array grows.
    ///
    /// With `ONCE`, the leaf changed and `top` may hold it and other changed leaves: the
    /// leaf itself is skipped, and another changed leaf is reported only when its proxy id
    /// is higher, so that over the walks from all the changed leaves each pair of them is
    /// reported once.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn leaf_against_subtree<const ONCE: bool>(
        &self,
        proxy: ProxyId,
        held: Entry<'_, V>,
        top: NodeId,
        walk: &mut Vec<NodeId>,
        visited: &mut u64,
        reported: &mut u64,
        f: &mut impl FnMut(ProxyId, ProxyId),
    ) {
        let epoch = self.epoch;
        // The arena and the walk's array as plain slices: their addresses and lengths stay
        // in registers, where through the vectors they would be read again after every
        // pair reported (the tree holds atomics, so `f`'s writes may alias it as far as
        // the compiler knows). The counts stay local for the same reason.
        let nodes = self.nodes.as_slice();
        let aabb = *held.0;
        let leaf_changed = held.1 == epoch;
        if walk.len() < 64 {
            walk.resize(64, NodeId::NULL);
        }
        let (mut visits, mut found) = (0u64, 0u64);
        let mut queue = walk.as_mut_slice();
        // A constant of the dimension: the branches on it compile away.
        let breadth_first = V::DIM == 3;
        queue[0] = top;
        let (mut head, mut tail) = (0, 1);
        while head < tail {
            visits += 1;
            let at = if breadth_first {
                head += 1;
                queue[head - 1]
            } else {
                tail -= 1;
                queue[tail]
            };
            let node = &nodes[at.index()];
            let [c1, c2] = node.children;
            prefetch_children(nodes, at, [c1, c2]);
            let hit1 = (leaf_changed | (node.stamps[0] == epoch)) & node.boxes[0].overlaps(&aabb);
            let hit2 = (leaf_changed | (node.stamps[1] == epoch)) & node.boxes[1].overlaps(&aabb);
            let (leaf1, leaf2) = (c1.is_leaf(), c2.is_leaf());
            if (hit1 & leaf1) | (hit2 & leaf2) {
                // With `ONCE`, a changed leaf met is reported by the walk of the lower id.
                let once =
                    |k: usize, c: NodeId| !ONCE || node.stamps[k] != epoch || c.proxy() > proxy;
                if hit1 & leaf1 && once(0, c1) {
                    found += 1;
                    f(proxy, c1.proxy());
                }
                if hit2 & leaf2 && once(1, c2) {
                    found += 1;
                    f(proxy, c2.proxy());
                }
            }
            if tail + 2 > queue.len() {
                // The tail reached the end: when at least half of the array has been read
                // (breadth first only), the unread part moves to the front; otherwise the
                // array doubles. Either way each entry moves at most once per doubling.
                if 2 * head >= queue.len() {
                    queue.copy_within(head..tail, 0);
                    (head, tail) = (0, tail - head);
                } else {
                    let len = queue.len();
                    walk.resize(2 * len, NodeId::NULL);
                    queue = walk.as_mut_slice();
                }
            }
            // The first child is read first: queued first, or stacked last.
            let (first, second) = if breadth_first {
                ((c1, hit1 & !leaf1), (c2, hit2 & !leaf2))
            } else {
                ((c2, hit2 & !leaf2), (c1, hit1 & !leaf1))
            };
            queue[tail] = first.0;
            tail += first.1 as usize;
            queue[tail] = second.0;
            tail += second.1 as usize;
        }
        *visited += visits;
        *reported += found;
    }
}
