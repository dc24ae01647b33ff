//! The stacks and buffers of the pair walks, kept between updates, and the fixed-room
//! task arrays the walks push to without branching.

use crate::tree::NodeId;
use crate::tree::constants::LEAF_TASK_ROOM;

/// The stacks and buffers of the pair walks, serial and parallel.
#[derive(Debug, Default)]
pub(crate) struct PairStacks {
    /// Pending tasks: `(x, x)` is self(x), `(x, null)` refit(x), `(x, y)` cross(x, y) (or,
    /// as the first task of a parallel walk, any pair of nodes).
    pub tasks: Vec<(NodeId, NodeId)>,
    /// Pending nodes of a leaf-against-subtree walk, or of the walks that collect the
    /// changed leaves or the optimizer's candidates.
    pub walk: Vec<NodeId>,
    /// Pending nodes of a refit of the whole tree or of its changed part: (node, children
    /// done).
    pub refits: Vec<(NodeId, bool)>,
    pub split_tasks: Vec<crate::tree::parallel::pairs::PairTask>,
    pub split_queue: std::collections::VecDeque<crate::tree::parallel::pairs::PairTask>,
    /// One list of pairs per task of a parallel update (`ParallelPairs::run_buffered`).
    pub task_pairs: Vec<crate::tree::parallel::pairs::TaskPairs>,
    pub leaf_tasks: LeafTasks,
    /// The changed leaves of an update searched leaf by leaf, as
    /// [`child_ref`](super::child_ref)s.
    pub changed_leaves: Vec<NodeId>,
}

/// Pairs of nodes of which one or both are leaves that passed the pair test, waiting to
/// run: a leaf and a leaf (a pair to report) or a leaf and an internal node (a walk of its
/// subtree against the leaf). They run in batches, apart from the other tasks, so that the
/// walk's main loop never branches on the kind of a task it pops, an outcome hard to
/// predict. A pair is written to its slot in any case and kept by moving the count by 0
/// or 1.
///
/// The walk keeps the count of waiting tasks in a local variable: as a field beside the
/// slots it would be read from and written to memory at every push.
#[derive(Debug)]
pub(crate) struct LeafTasks {
    pub(super) tasks: [(NodeId, NodeId); LEAF_TASK_ROOM],
}

impl Default for LeafTasks {
    fn default() -> Self {
        Self {
            tasks: [(NodeId::NULL, NodeId::NULL); LEAF_TASK_ROOM],
        }
    }
}

impl LeafTasks {
    /// Whether, with `fill` tasks waiting, fewer than the four slots a task may fill are free.
    #[inline(always)]
    pub fn is_full(fill: usize) -> bool {
        fill + 4 > LEAF_TASK_ROOM
    }

    /// Writes the pair of nodes `(a, b)` above the `fill` tasks waiting, kept when
    /// `keep`. There must be room (see [`Self::is_full`]).
    #[inline(always)]
    pub(super) fn push(&mut self, fill: &mut usize, a: NodeId, b: NodeId, keep: bool) {
        // In range whatever `fill` is; `is_full` keeps it from wrapping.
        self.tasks[*fill & (LEAF_TASK_ROOM - 1)] = (a, b);
        *fill += keep as usize;
    }
}

impl PairStacks {
    /// Readies `tasks` to hold `first` alone. `tasks` is used as a fixed array (its length
    /// is its capacity, the walk's `fill` the part in use), so that a push can write its
    /// slot and move `fill` by 0 or 1 without a branch.
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
