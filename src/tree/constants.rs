//! The tree's tuning constants, each with its reason, in the manner of Box2D's
//! `constants.h`.
//!
//! Constants of a type's encoding (the tag bits of [`NodeId`], the sentinels `NULL`,
//! `ROOT`, `FREE`) stay with their type, and the public [`DEFAULT_MARGIN`] stays in
//! [`tree`](crate::tree). The batch sizes from which a batch takes another path are the
//! defaults of [`BatchThresholds`], a setting of each tree, so that tests and the fuzz
//! target can reach every path with small trees.
//!
//! [`NodeId`]: crate::tree::NodeId
//! [`DEFAULT_MARGIN`]: crate::tree::DEFAULT_MARGIN

use crate::tree::Stamp;

// --- Moves: how a move, or a batch of moves, updates the leaves' ancestors. ---

/// Ancestors a move always updates before it tests whether it may stop (see
/// `DynamicTree::grow_from`): this close to the leaf, a branch per level costs more than
/// the writes it could save.
pub(crate) const UNCONDITIONAL_LEVELS: u32 = 2;

/// Batches smaller than this are applied in the order given: sorting would cost more than
/// it saves ([`BatchThresholds::sort_from`]).
pub(crate) const SORT_FROM: usize = 256;

/// Batches that change at least one leaf per this many proxies (and at least
/// [`SORT_FROM`]) refit the tree in one pass (whole, or its [`RECENT`] subtrees) instead
/// of growing each leaf's ancestors. The refit visits each internal node once, close to
/// memory order; growing reads two or more scattered ancestors per leaf. From about one
/// leaf in eight the refit wins, and the pair walk gains too, as exact boxes prune better.
pub(crate) const BULK_FROM: usize = 8;

/// New proxies from which [`DynamicTree::create_proxies`](crate::DynamicTree::create_proxies)
/// rebuilds the whole tree with them (when they are also at least a quarter of it) instead of
/// inserting each: a level spawned in one frame gets a tree built top-down, better than
/// insertions give, for less than they cost.
pub(crate) const BULK_INSERT_FROM: usize = 32;

/// Batches that change at least one leaf per this many proxies (and at least [`SORT_FROM`])
/// but fewer than one per [`BULK_FROM`] refit the recent subtrees in one pass when the last such refit visited
/// less than half of the internal nodes (see
/// [`RecentRefits`](crate::tree::moves::RecentRefits)). Where many boxes stand still, the
/// still parts are skipped whole and one pass costs less than growing every changed
/// leaf's scattered ancestors; where nearly everything moves, growing costs less.
pub(crate) const MID_BULK_FROM: usize = 16;

/// Middling batches (see [`MID_BULK_FROM`]) that grow ancestors in a row before one
/// refits regardless, so that the share is measured again as the scene changes.
pub(crate) const REMEASURE_EVERY: u32 = 32;

/// Batches that change at least one leaf in this many refit the whole tree: nearly every
/// subtree then holds a change, and marking each leaf's ancestors would cost more than
/// the subtrees it lets the refit skip.
pub(crate) const RECENT_BELOW: usize = 2;

/// Walks up the tree that a large batch keeps in flight at once (see
/// `DynamicTree::grow_ancestors_interleaved`): more walks hide more memory latency, up to
/// what the processor can keep loading at once.
pub(crate) const LANES: usize = 8;

/// The parent index's low bits one arena region of a batch's counting sort spans (see
/// `DynamicTree::group_by_place`): a region of 256 nodes stays in cache while it is worked
/// through; smaller regions make more counters to sort by.
pub(crate) const REGION_BITS: u32 = 8;

// --- Change marks: how long a subtree counts as recent or as still. ---

/// A subtree whose mark is younger than this many updates is *recent*: the refit after a
/// batch that changes fewer than one leaf in [`RECENT_BELOW`] visits only the recent
/// subtrees (see `DynamicTree::refit_recent`), so the subtrees of still boxes are skipped
/// whole, and a moving box's subtree is most often recent already, so that its leaves'
/// walks up stop at once.
pub(crate) const RECENT: Stamp = 4;

/// Updates without a moved leaf after which a subtree counts as still: candidate rebuilds
/// keep it whole and set it apart from the moving leaves. About a second at 60 updates
/// per second.
pub(crate) const STILL_AFTER: Stamp = 64;

/// How far the marks and the epoch go back when the epochs run out: half of a mark's
/// range, so that every age below it ([`STILL_AFTER`] included) survives the wrap.
pub(crate) const EPOCH_SHIFT: Stamp = 128;

/// The tallest tree whose refit recurses (see `DynamicTree::refit_below`); taller ones,
/// which rotations make rare, are refit with a stack of their own.
pub(crate) const MAX_RECURSIVE_REFIT: u16 = 256;

// --- Pairs: which search an update takes, how it batches leaf tasks, what it rotates. ---

/// Updates where fewer than one proxy in this many moved may find their pairs leaf by
/// leaf (see [`Search`](crate::tree::pairs::Search)).
pub(crate) const LEAVES_BELOW: usize = 8;

/// What a node visited by the leaf-by-leaf search costs against one visited by the walk:
/// each leaf's search starts at the root, while the walk reads each node once for many
/// pairs. Set on touching lattices, where both visit about as many nodes in 2D and the
/// walk is the faster.
pub(crate) const LEAF_VISIT_COST: f32 = 1.5;

/// Updates that may search leaf by leaf between two runs of the search not preferred, so
/// that its cost is known again when the scene has changed.
pub(crate) const PROBE_EVERY: u32 = 32;

/// The room of [`LeafTasks`](crate::tree::pairs::LeafTasks) (a power of two); its tasks
/// run once fewer than four slots are free, while the nodes they start from are still in
/// cache.
pub(crate) const LEAF_TASK_ROOM: usize = 16;

/// The highest nodes the refit rotates. Higher rotations swap large subtrees, rarely lower
/// the cost, and each reads six nodes far apart.
pub(crate) const ROTATE_MAX_HEIGHT: u16 = 6;

/// Changed nodes rotate only in updates where fewer than one proxy in this many moved.
/// When more move, the incremental rebuilds keep the tree as good for less; a mostly
/// static world relies on rotations.
pub(crate) const ROTATE_BELOW: usize = 64;

// --- Builds and rebuilds (binned SAH). ---

/// Most bins a split considers: more bins find cuts closer to the best, at a cost per
/// item and per bin.
pub(crate) const BINS: usize = 16;

/// The spread of [`DynamicTree::split`](crate::tree::DynamicTree::split)'s size keys from
/// which it orders items by size as well. Two areas' keys differ by `1 << 23` per doubling,
/// so items whose areas lie within a factor of eight are ordered by place alone (boxes of
/// one size, which a cut by size would scatter).
pub(crate) const SIZES_FROM: f32 = (3 << 23) as f32;

/// The fewest items a range needs to be ordered by size as well: a smaller range is a few
/// levels above its leaves, where a large box widens few nodes.
pub(crate) const SIZES_MIN_ITEMS: usize = 16;

// --- Incremental optimization (see also [`STILL_AFTER`]). ---

/// Moves (fat box changes) that pay for one leaf placed anew by a rebuild: fewer keep the
/// tree better at a higher cost per step, more let it degrade further between rebuilds.
pub(crate) const LEAVES_PER_MOVES: usize = 5;

/// Most candidates an optimization run plans ahead at once (see
/// `DynamicTree::optimize_on`); it bounds the plans' buffers in very large trees.
pub(crate) const MAX_PLANS: usize = 64;

// --- Threads: how the parallel stages cut their work. ---

/// Most threads the parallel calls use; more are not useful before the walk runs out of
/// tasks.
pub(crate) const MAX_THREADS: usize = 256;

/// Tasks per thread that the parallel pair update (and the plugin) ask the split for: the
/// tasks can differ in size by orders of magnitude, so there are many, and each thread
/// takes the next one left.
pub(crate) const TASKS_PER_THREAD: usize = 16;

/// The fewest moves a task of a parallel batch decides: a decision takes nanoseconds and
/// a task costs a hand-over to a thread ([`BatchThresholds::min_moves_per_task`]).
pub(crate) const MIN_MOVES_PER_TASK: usize = 4096;

/// The smallest batch of moves spread over threads: a smaller one gains too little to
/// pay for handing the work out ([`BatchThresholds::parallel_moves_from`]).
pub(crate) const PARALLEL_MOVES_FROM: usize = 16_384;

/// Tasks per thread a parallel batch of moves is cut into: the moves cost about the same
/// each, so a few even out a thread that the system delays.
pub(crate) const MOVE_TASKS_PER_THREAD: usize = 4;

/// How long the calling thread of a parallel stage (feature `parallel`) watches for the
/// workers to finish before it sleeps: stages last a fraction of a millisecond, and waking
/// a thread costs tens of microseconds on some systems, virtual machines especially.
#[cfg(feature = "parallel")]
pub(crate) const SPIN_FOR: std::time::Duration = std::time::Duration::from_micros(50);

/// Subtrees per thread that a parallel refit cuts the tree into: their sizes vary, and
/// each thread takes the next one left.
pub(crate) const REFIT_TASKS_PER_THREAD: usize = 4;

/// The fewest proxies per task of a parallel refit: a smaller subtree costs less to refit
/// than to hand to a thread ([`BatchThresholds::min_proxies_per_task`]).
pub(crate) const MIN_PROXIES_PER_TASK: usize = 1024;

// --- The thresholds as a setting. ---

/// The batch sizes from which a tree's batches of moves take their other paths: sorting
/// by place, spreading over threads, cutting into tasks.
///
/// The defaults are set for speed, and only change how fast a batch runs, never its
/// result. Small values make small trees take every path, which is what tests and fuzzing
/// use them for ([`DynamicTree::set_batch_thresholds`](crate::tree::DynamicTree::set_batch_thresholds)).
///
/// # Examples
///
/// ```
/// use bevy_aabb_tree::{BatchThresholds, DynamicTree, Vec2};
///
/// let mut tree: DynamicTree<Vec2> = DynamicTree::new();
/// assert_eq!(tree.batch_thresholds(), BatchThresholds::default());
/// // Every batch of 32 moves or more spreads over threads, in tasks of 8 or more.
/// tree.set_batch_thresholds(BatchThresholds {
///     parallel_moves_from: 32,
///     min_moves_per_task: 8,
///     ..BatchThresholds::default()
/// });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchThresholds {
    /// Batches of this many moves or more are applied sorted by place in the arena, and
    /// may refit the tree in one pass instead of growing each leaf's ancestors. Default
    /// 256.
    pub sort_from: usize,
    /// The smallest batch that
    /// [`DynamicTree::move_proxies_parallel`](crate::tree::DynamicTree::move_proxies_parallel)
    /// spreads over threads. Default 16,384.
    pub parallel_moves_from: usize,
    /// The fewest moves a task of a parallel batch decides. Default 4,096.
    pub min_moves_per_task: usize,
    /// The fewest proxies per task of a parallel refit. Default 1,024.
    pub min_proxies_per_task: usize,
}

impl Default for BatchThresholds {
    fn default() -> Self {
        Self {
            sort_from: SORT_FROM,
            parallel_moves_from: PARALLEL_MOVES_FROM,
            min_moves_per_task: MIN_MOVES_PER_TASK,
            min_proxies_per_task: MIN_PROXIES_PER_TASK,
        }
    }
}

impl<V: crate::Vector, T> crate::tree::DynamicTree<V, T> {
    /// The batch sizes from which this tree's batches take their other paths (see
    /// [`BatchThresholds`]).
    pub fn batch_thresholds(&self) -> BatchThresholds {
        self.thresholds
    }

    /// Sets the batch sizes from which this tree's batches take their other paths. A
    /// zero is taken as one. The results of every operation stay the same; only their
    /// speed changes.
    pub fn set_batch_thresholds(&mut self, thresholds: BatchThresholds) {
        self.thresholds = BatchThresholds {
            sort_from: thresholds.sort_from.max(1),
            parallel_moves_from: thresholds.parallel_moves_from.max(1),
            min_moves_per_task: thresholds.min_moves_per_task.max(1),
            min_proxies_per_task: thresholds.min_proxies_per_task.max(1),
        };
    }
}
