//! Moving many proxies at once.

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::arena::age_at;
use crate::tree::parallel::{CallingThread, MAX_THREADS, TaskRunner};
use crate::tree::{DynamicTree, Link, NodeId, ProxyId, Stamp, TreeError, UNCONDITIONAL_LEVELS};
use std::sync::{Mutex, PoisonError};

/// Batches smaller than this are applied in the order given: sorting would cost more than
/// it saves. The fuzz target's small trees use small batches, so that they reach every
/// path of a batch.
#[cfg(not(fuzzing))]
const SORT_FROM: usize = 256;
#[cfg(fuzzing)]
const SORT_FROM: usize = 16;

/// Batches that change at least one leaf per this many proxies (and at least
/// [`SORT_FROM`]) refit the tree in one pass (whole, or its recent subtrees, see
/// [`RECENT`]) instead of growing each leaf's ancestors. The refit costs one visit per
/// internal node it refits, in depth-first order (which the re-layouts make close to
/// memory order); growing costs two or more scattered ancestors per leaf.
/// From about one leaf in eight changed, the refit wins, and the pair walk gains too
/// (exact boxes prune better, and its own refit has nothing left to do); when fewer
/// change, growing the ancestors costs less.
const BULK_FROM: usize = 8;

/// Batches that change at least one leaf per this many proxies (and at least
/// [`SORT_FROM`]) but fewer than one per [`BULK_FROM`] refit the recent subtrees in one
/// pass when the tree's recent part is small: when the last such refit visited less than
/// half of the internal nodes (see [`RecentRefits`]). Where many boxes stand still (a level, a crowd
/// of which a part jiggles), the still parts are skipped whole and the one pass costs less
/// than growing every changed leaf's scattered ancestors and refitting them again in the
/// pair walk; where nearly everything moves, it visits most of the tree and growing the
/// ancestors costs less.
const MID_BULK_FROM: usize = 16;

/// Middling batches (see [`MID_BULK_FROM`]) that grow ancestors in a row before one
/// refits the recent subtrees regardless, so that the share is measured again as the
/// scene changes.
const REMEASURE_EVERY: u32 = 32;

/// A subtree whose mark is younger than this many updates is *recent*: the refit after a
/// batch that changes fewer than one leaf in [`RECENT_BELOW`] visits only the recent
/// subtrees, after making recent every ancestor of a changed leaf (see
/// `DynamicTree::refit_recent`). Where some boxes stand still (a level, the still parts
/// that the incremental rebuilds set apart), their subtrees are skipped whole; a subtree
/// with a moving box is most often recent already, so that its leaves' walks up stop at
/// once.
const RECENT: Stamp = 4;

/// Batches that change at least one leaf in this many refit the whole tree: with that
/// many changes nearly every subtree holds one, and checking each leaf's ancestors would
/// cost more than the subtrees it lets the refit skip.
const RECENT_BELOW: usize = 2;

/// The tallest tree whose whole-tree refit recurses (see `DynamicTree::refit_below`);
/// taller ones, which rotations make rare, take the walk with a stack of its own.
const MAX_RECURSIVE_REFIT: u16 = 256;

/// What the last refit of the recent subtrees visited, which decides how a batch of
/// middling size (see [`MID_BULK_FROM`]) updates the ancestors of its leaves.
///
/// Cases: before the first such refit, and after [`REMEASURE_EVERY`] batches that grew
/// ancestors instead, the batch refits (and so measures); otherwise it refits when the
/// last refit visited less than half of the internal nodes. Counts alone decide, so the
/// same operations take the same path, on any number of threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RecentRefits {
    /// Internal nodes the last refit of the recent subtrees visited.
    visited: usize,
    /// Internal nodes in the tree at that refit (0 before the first).
    nodes: usize,
    /// Middling batches that grew ancestors since.
    grown: u32,
}

impl RecentRefits {
    /// Whether a middling batch refits the recent subtrees; counts the batch when it
    /// grows ancestors instead.
    fn refit_pays(&mut self) -> bool {
        if self.nodes == 0 || self.grown >= REMEASURE_EVERY {
            return true;
        }
        let pays = self.visited.saturating_mul(2) < self.nodes;
        self.grown += u32::from(!pays);
        pays
    }

    /// Notes a refit of the recent subtrees that visited `visited` of `nodes` internal
    /// nodes.
    fn note(&mut self, visited: usize, nodes: usize) {
        *self = Self {
            visited,
            nodes,
            grown: 0,
        };
    }
}

/// The fewest moves a task of [`DynamicTree::move_proxies_parallel`] decides (a smaller
/// batch makes fewer tasks): a decision takes nanoseconds, and each task costs a
/// hand-over to a thread. The unit tests and the fuzz target use small tasks, so that
/// small trees make many.
#[cfg(not(any(test, fuzzing)))]
pub(crate) const MIN_MOVES_PER_TASK: usize = 4096;
#[cfg(any(test, fuzzing))]
pub(crate) const MIN_MOVES_PER_TASK: usize = 8;

/// The smallest batch that [`DynamicTree::move_proxies_parallel`] spreads over threads:
/// a smaller one gains too little from more threads to pay for handing the work out
/// (waking the workers, merging the tasks' lists).
/// The unit tests and the fuzz target use small batches.
#[cfg(not(any(test, fuzzing)))]
const PARALLEL_MOVES_FROM: usize = 16_384;
#[cfg(any(test, fuzzing))]
const PARALLEL_MOVES_FROM: usize = 32;

/// Tasks per thread that [`DynamicTree::move_proxies_parallel`] cuts a batch into: the
/// moves cost about the same each, so a few are enough to even out a thread that the
/// system delays.
pub(crate) const MOVE_TASKS_PER_THREAD: usize = 4;

/// Walks up the tree that a large batch keeps in flight at once (see
/// `DynamicTree::grow_ancestors_interleaved`).
const LANES: usize = 8;

/// Buffers of [`DynamicTree::move_proxies`], reused.
#[derive(Debug)]
pub(crate) struct PendingMoves<V: Vector> {
    /// Where the leaves hang whose new fat boxes are decided (and in the move cache, when
    /// the tree keeps one), with the boxes, in the order of the moves (those listed from
    /// `changed` after them, in proxy order): their parents' slots and their ancestors
    /// wait to be updated.
    moves: Vec<(Link, BoundingBox<V>)>,
    /// The same, grouped by where the parents sit in the arena.
    sorted: Vec<(Link, BoundingBox<V>)>,
    /// Start of each group in `sorted`.
    starts: Vec<u32>,
    /// The proxies of `moves`, in the same order.
    ids: Vec<ProxyId>,
    /// One bit per proxy, set for the changes that the tasks of a parallel batch decided
    /// and stored in the move cache themselves (counted in `in_bits`, not listed in
    /// `moves`), and for those of `ids` while a parallel refit stores their boxes itself
    /// (see [`DynamicTree::apply_pending`]); all clear otherwise.
    changed: Vec<u64>,
    /// How many changes are noted only by their bit in `changed` (a proxy moved twice
    /// counts twice): the leaf's link and its box are then read from the table of leaves
    /// and the move cache.
    in_bits: usize,
    /// What each task of [`DynamicTree::move_proxies_parallel`] decided, and the first
    /// proxy id of each task after the first.
    decided: Vec<Mutex<Decided<V>>>,
    task_starts: Vec<usize>,
}

/// Sets bit `index` of `words` (one bit per proxy, 64 to a word); an index beyond them
/// sets nothing.
#[inline(always)]
fn set_bit(words: &mut [u64], index: usize) {
    if let Some(word) = words.get_mut(index / 64) {
        *word |= 1 << (index % 64);
    }
}

/// The indices of the bits set in `words`, in increasing order.
fn set_bits(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(|(w, &word)| {
        let mut rest = word;
        core::iter::from_fn(move || {
            (rest != 0).then(|| {
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                w * 64 + bit
            })
        })
    })
}

/// The moves one task of [`DynamicTree::move_proxies_parallel`] decided, in batch order.
///
/// A task that owns a run of the move cache stores its changes there and notes each by
/// its proxy's bit (`bits`, from word `first_word` of the batch's bits); another lists
/// them (`moves`, `ids`) for the calling thread to store.
#[derive(Debug)]
pub(crate) struct Decided<V: Vector> {
    /// The changes: where each leaf hangs and its new fat box.
    moves: Vec<(Link, BoundingBox<V>)>,
    /// Their proxies.
    ids: Vec<ProxyId>,
    /// The changes stored in the task's run, one bit per proxy of the run.
    bits: Vec<u64>,
    /// The index of `bits[0]` among the words of the batch's bits.
    first_word: usize,
    /// How many changes are noted in `bits` (a proxy moved twice counts twice).
    in_bits: usize,
    /// The moves left to the calling thread (their index in the batch).
    deferred: Vec<usize>,
}

impl<V: Vector> Default for Decided<V> {
    fn default() -> Self {
        Self {
            moves: Vec::new(),
            ids: Vec::new(),
            bits: Vec::new(),
            first_word: 0,
            in_bits: 0,
            deferred: Vec::new(),
        }
    }
}

/// A task's list of [`Decided`] moves, taken out of the job's array and put back when
/// dropped, whether the task ends or unwinds.
struct PutBack<'a, V: Vector> {
    slot: &'a Mutex<Decided<V>>,
    list: Decided<V>,
}

impl<'a, V: Vector> PutBack<'a, V> {
    fn new(slot: &'a Mutex<Decided<V>>) -> Self {
        let list = core::mem::take(&mut *slot.lock().unwrap_or_else(PoisonError::into_inner));
        Self { slot, list }
    }
}

impl<V: Vector> Drop for PutBack<'_, V> {
    fn drop(&mut self) {
        *self.slot.lock().unwrap_or_else(PoisonError::into_inner) = core::mem::take(&mut self.list);
    }
}

impl<V: Vector> Decided<V> {
    fn clear(&mut self) {
        self.moves.clear();
        self.ids.clear();
        self.bits.clear();
        self.in_bits = 0;
        self.deferred.clear();
    }

    /// Makes `bits` the clear bits of the proxies `base..end` (the task's run).
    fn start_bits(&mut self, base: usize, end: usize) {
        self.first_word = base / 64;
        self.bits.resize(end.div_ceil(64) - self.first_word, 0);
    }

    /// Notes a change of proxy `id`, in the task's run, by its bit.
    #[inline(always)]
    fn note_bit(&mut self, id: ProxyId) {
        let index = id.index().wrapping_sub(self.first_word * 64);
        debug_assert!(
            index / 64 < self.bits.len(),
            "{id:?} outside the task's run"
        );
        set_bit(&mut self.bits, index);
        self.in_bits += 1;
    }
}

impl<V: Vector> Default for PendingMoves<V> {
    fn default() -> Self {
        Self {
            moves: Vec::new(),
            sorted: Vec::new(),
            starts: Vec::new(),
            ids: Vec::new(),
            changed: Vec::new(),
            in_bits: 0,
            decided: Vec::new(),
            task_starts: Vec::new(),
        }
    }
}

/// A batch of leaf updates under way. Its pending ancestor updates are applied when it is
/// dropped, so that a panic in the caller's iterator or callback, halfway through a batch,
/// still leaves every ancestor enclosing its leaves.
struct Batch<'a, V: Vector, T> {
    tree: &'a mut DynamicTree<V, T>,
    pending: PendingMoves<V>,
    /// Where the refit's tasks run.
    runner: &'a dyn TaskRunner,
    /// The tree's move cache while the tasks of a parallel batch hold it (empty
    /// otherwise): given back first if the batch ends in a panic.
    cache: Vec<BoundingBox<V>>,
}

impl<'a, V: Vector, T> Batch<'a, V, T> {
    fn new(tree: &'a mut DynamicTree<V, T>, runner: &'a dyn TaskRunner) -> Self {
        let mut pending = core::mem::take(&mut tree.scratch.moves);
        pending.moves.clear();
        pending.ids.clear();
        debug_assert!(
            pending.in_bits == 0 && pending.changed.iter().all(|&word| word == 0),
            "bits left from the last batch"
        );
        Self {
            tree,
            pending,
            runner,
            cache: Vec::new(),
        }
    }
}

impl<V: Vector, T> Batch<'_, V, T> {
    /// [`DynamicTree::new_fat_box`] for one move, its change (if any) noted for the end
    /// of the batch and its outcome told to `result`: whether the move changed the fat
    /// box. (Each outcome is told where it is known, so that a caller's count of the
    /// changes compiles to an increment.)
    #[inline(always)]
    fn decide(
        &mut self,
        id: ProxyId,
        tight: BoundingBox<V>,
        displacement: V,
        result: &mut impl FnMut(ProxyId, Result<bool, TreeError>),
    ) -> bool {
        match self.tree.new_fat_box(id, tight, displacement) {
            Ok(Some(change)) => {
                self.pending.moves.push(change);
                self.pending.ids.push(id);
                result(id, Ok(true));
                true
            }
            Ok(None) => {
                result(id, Ok(false));
                false
            }
            Err(e) => {
                result(id, Err(e));
                false
            }
        }
    }
}

impl<V: Vector, T> Drop for Batch<'_, V, T> {
    fn drop(&mut self) {
        if !self.cache.is_empty() {
            self.tree.fat_boxes = core::mem::take(&mut self.cache);
        }
        let mut pending = core::mem::take(&mut self.pending);
        self.tree.apply_pending(&mut pending, self.runner);
        self.tree.scratch.moves = pending;
    }
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Moves many proxies: the same as calling [`Self::move_proxy`] on each `(id, tight,
    /// displacement)` in order, with `result` told each call's outcome, but faster for
    /// large batches.
    ///
    /// Deciding whether a move changes anything, and storing the new fat box, read and
    /// write the table of leaves and the move cache, in proxy order (without the move
    /// cache, the parent's slot); the ancestors of the leaves that changed are then
    /// updated in the order they sit in memory rather than in the order of the moves,
    /// which turns most of their cache misses into hits.
    ///
    /// The results, the fat boxes and the pairs of the next update are exactly those of
    /// the single calls. The internal boxes may be tighter: a batch that changes at least
    /// an eighth as many leaves as the tree has proxies gives every internal node its
    /// exact box at once (one refit costs less than growing the ancestors of that many
    /// leaves one by one; it skips the subtrees where nothing changed for a few updates
    /// when fewer than half of the leaves changed), and so does a batch that changes at
    /// least a sixteenth where the last such refit visited less than half of the tree
    /// (most of it standing still); single calls only grow ancestors until the next
    /// update.
    pub fn move_proxies(
        &mut self,
        moves: impl IntoIterator<Item = (ProxyId, BoundingBox<V>, V)>,
        mut result: impl FnMut(ProxyId, Result<bool, TreeError>),
    ) {
        let mut batch = Batch::new(self, &CallingThread);
        for (id, tight, displacement) in moves {
            batch.decide(id, tight, displacement, &mut result);
        }
    }

    /// [`Self::move_proxies`] on up to `threads` threads (the calling one
    /// included; at most 256): move `i`, for `i` in `0..count`, is `moves(i)`, a
    /// `(id, tight, displacement)`. Returns how many moves changed their proxy's fat box;
    /// `result` is told each move's outcome, from the thread that decided it.
    ///
    /// Give each proxy at most once: the fat boxes, the tree and the next update's pairs
    /// are then exactly those of `move_proxies` on the same moves, whatever the threads.
    /// A proxy given twice may be decided against its box from before the batch both
    /// times, and keeps the box of one of its moves. `moves` must give the same move for
    /// the same index each time it is called (the first move of each run is read twice).
    ///
    /// Each thread decides runs of consecutive moves. When the runs' first ids increase
    /// (a batch in id order), each thread also stores its changes, in its own stretch of
    /// the move cache, and the few moves whose id lies outside it are decided on the
    /// calling thread at the end; otherwise the calling thread stores every change, in
    /// batch order. When the batch refits the tree in one pass (see
    /// [`Self::move_proxies`]), each thread refits whole subtrees, storing
    /// the changed leaves' boxes in their parents as it passes them. A batch of fewer
    /// than 16,384 moves runs on the calling thread alone (handing it out would cost more
    /// than it saves); small trees and a tree without its move cache
    /// ([`Self::set_move_cache`]) refit on the calling thread. The other threads are the
    /// tree's workers, kept between calls (see [`Self::update_pairs_parallel`]).
    ///
    /// A panic in `moves` or `result` goes on in the calling thread once every thread has
    /// stopped, and leaves the tree valid, with the changes decided until then applied;
    /// the other threads' runs are decided to their end.
    pub fn move_proxies_parallel(
        &mut self,
        count: usize,
        moves: impl Fn(usize) -> (ProxyId, BoundingBox<V>, V) + Sync,
        threads: usize,
        result: impl Fn(ProxyId, Result<bool, TreeError>) + Sync,
    ) -> usize
    where
        T: Sync,
    {
        let threads = if count < PARALLEL_MOVES_FROM {
            1
        } else {
            threads.clamp(1, MAX_THREADS)
        };
        let tasks = if threads == 1 {
            1
        } else {
            threads
                .saturating_mul(MOVE_TASKS_PER_THREAD)
                .min(count / MIN_MOVES_PER_TASK)
                .max(1)
        };
        // Task `t` decides moves `at(t)..at(t + 1)` (in 64 bits: the product may not fit
        // a 32-bit `usize`, and the quotient is at most `count`).
        let at = |t: usize| (t as u64 * count as u64 / tasks as u64) as usize;
        let workers = (threads > 1).then(|| self.take_workers(threads));
        let runner: &dyn TaskRunner = match &workers {
            Some(workers) => workers,
            None => &CallingThread,
        };
        let mut batch = Batch::new(self, runner);
        let mut lists = core::mem::take(&mut batch.pending.decided);
        if lists.len() < tasks {
            lists.resize_with(tasks, Default::default);
        }
        // Where the ids of each task after the first start: its first move's. When they
        // increase from task to task (a batch in id order, the usual one), the tasks own
        // disjoint runs of the move cache, each from its start to the next, and store
        // their changes there themselves.
        let mut starts = core::mem::take(&mut batch.pending.task_starts);
        starts.clear();
        starts.extend((1..tasks).map(|t| moves(at(t)).0.index()));
        let owned = tasks > 1
            && batch.tree.move_cache
            && starts.windows(2).all(|w| w[0] < w[1])
            && starts
                .last()
                .is_none_or(|&s| s <= batch.tree.fat_boxes.len());
        let mut runs = Vec::new();
        if owned {
            batch.cache = core::mem::take(&mut batch.tree.fat_boxes);
            let mut rest = batch.cache.as_mut_slice();
            let mut base = 0;
            for &start in &starts {
                let (run, after) = rest.split_at_mut(start - base);
                runs.push(Mutex::new((run, base)));
                (rest, base) = (after, start);
            }
            runs.push(Mutex::new((rest, base)));
        }
        // Cleared here rather than by each task: a task that never starts (its thread
        // stopped at a panic) leaves its list empty, not as the last batch left it.
        for list in &mut lists[..tasks] {
            list.get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .clear();
        }
        let tree = &*batch.tree;
        let decide = |task: usize| {
            // The list is filled out of the array and put back (also when the caller's
            // closures panic), so that its lengths live in this thread's own memory
            // meanwhile, not on a cache line that the neighbouring tasks' lists share.
            // Locks are never contended (one task per list and run).
            let mut taken = PutBack::new(&lists[task]);
            let list = &mut taken.list;
            let mut run = runs
                .get(task)
                .map(|run| run.lock().unwrap_or_else(PoisonError::into_inner));
            if let Some((boxes, base)) = run.as_deref() {
                list.start_bits(*base, base + boxes.len());
            }
            for i in at(task)..at(task + 1) {
                let (id, tight, displacement) = moves(i);
                let decided = match run.as_deref_mut() {
                    // A box outside this task's run of the move cache is left for the
                    // calling thread.
                    Some((boxes, base)) => {
                        match tree.decide_in_run(boxes, *base, id, tight, displacement) {
                            Some(decided) => decided,
                            None => {
                                list.deferred.push(i);
                                continue;
                            }
                        }
                    }
                    None => tree.decide_fat_box(id, tight, displacement),
                };
                match decided {
                    // Stored in the task's run already: its bit says where.
                    Ok(Some(_)) if run.is_some() => {
                        list.note_bit(id);
                        result(id, Ok(true));
                    }
                    Ok(Some(change)) => {
                        list.moves.push(change);
                        list.ids.push(id);
                        result(id, Ok(true));
                    }
                    Ok(None) => result(id, Ok(false)),
                    Err(e) => result(id, Err(e)),
                }
            }
        };
        // A panic is held until the changes decided so far are applied.
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runner.run(tasks, &decide)));
        drop(runs);
        if owned {
            batch.tree.fat_boxes = core::mem::take(&mut batch.cache);
        }
        let mut changed = 0;
        if owned {
            let words = batch.tree.leaves.len().div_ceil(64);
            batch.pending.changed.resize(words, 0);
        }
        for list in &mut lists[..tasks] {
            let list = list.get_mut().unwrap_or_else(PoisonError::into_inner);
            if owned {
                // Stored in the move cache by the task: only the bits are gathered.
                let bits = batch.pending.changed.iter_mut().skip(list.first_word);
                for (word, &task_word) in bits.zip(&list.bits) {
                    *word |= task_word;
                }
                batch.tree.optimizer.changes += list.in_bits;
                batch.pending.in_bits += list.in_bits;
                changed += list.in_bits;
            } else {
                for (&id, &(link, fat)) in list.ids.iter().zip(&list.moves) {
                    batch.tree.store_fat_box(id, link, fat);
                }
                batch.pending.moves.extend_from_slice(&list.moves);
                batch.pending.ids.extend_from_slice(&list.ids);
                changed += list.ids.len();
            }
        }
        batch.pending.task_starts = starts;
        let panicked = outcome.err();
        if panicked.is_none() {
            // The moves whose proxy lay outside their task's run, in batch order.
            let mut tell = |id, outcome| result(id, outcome);
            for list in &mut lists[..tasks] {
                let list = list.get_mut().unwrap_or_else(PoisonError::into_inner);
                for &i in &list.deferred {
                    let (id, tight, displacement) = moves(i);
                    changed += usize::from(batch.decide(id, tight, displacement, &mut tell));
                }
            }
        }
        batch.pending.decided = lists;
        drop(batch);
        // Kept for the next call, also after a panic in a task (the stage caught it, and
        // the workers are idle).
        if let Some(workers) = workers {
            self.scratch.workers = Some(workers);
        }
        if let Some(panic) = panicked {
            std::panic::resume_unwind(panic);
        }
        changed
    }

    /// [`Self::set_fat_boxes_on`] on the calling thread alone.
    #[cfg(test)]
    pub(crate) fn set_fat_boxes(
        &mut self,
        boxes: impl IntoIterator<Item = (ProxyId, BoundingBox<V>)>,
        result: impl FnMut(ProxyId, Result<(), TreeError>),
    ) {
        self.set_fat_boxes_on(boxes, &CallingThread, result);
    }

    /// [`Self::set_fat_box`] for many proxies: the same as one call per `(id, fat)`, in
    /// order, with `result` told each call's outcome, but the leaves' ancestors are
    /// updated in memory order (see [`Self::move_proxies`]), and the refit after a large
    /// batch runs its tasks on `runner` (see [`Self::apply_pending`]).
    ///
    /// For the plugin, which keeps each proxy's fat box and decides itself, with
    /// [`Self::keeps_fat_box`] and [`Self::fatten`], which moves change it.
    #[cfg(any(feature = "plugin", test))]
    pub(crate) fn set_fat_boxes_on(
        &mut self,
        boxes: impl IntoIterator<Item = (ProxyId, BoundingBox<V>)>,
        runner: &dyn TaskRunner,
        mut result: impl FnMut(ProxyId, Result<(), TreeError>),
    ) {
        let mut batch = Batch::new(self, runner);
        for (id, fat) in boxes {
            match batch.tree.checked_link(id, &fat) {
                Ok(link) => {
                    batch.tree.store_fat_box(id, link, fat);
                    batch.pending.moves.push((link, fat));
                    batch.pending.ids.push(id);
                    result(id, Ok(()));
                }
                Err(e) => result(id, Err(e)),
            }
        }
    }

    /// Stores the pending leaves' new boxes in their parents' slots (unless the move cache
    /// is off: they are there already, see [`Self::store_fat_box`]) and updates their
    /// ancestors: grown leaf by leaf, in memory order when there are enough leaves, or by
    /// one refit when many changed (of the recent subtrees, see [`RECENT`], or of the
    /// whole tree when at least half of the leaves changed) and, for a batch of middling
    /// size, when the last refit of the recent subtrees visited little of the tree (see
    /// [`MID_BULK_FROM`]).
    ///
    /// A batch given more than one thread, with the move cache on, refits them in
    /// parallel ([`Self::refit_root_parallel`]), and that refit stores the leaves' boxes
    /// itself as it passes their parents: each changed proxy's bit is set, and a leaf
    /// whose bit is set takes its box from the move cache and its mark, as
    /// [`Self::write_slot`] would give them. The scattered writes of the slots are then
    /// spread over the threads too.
    ///
    /// The changes that the tasks of a parallel batch stored in their own runs of the
    /// move cache come as bits only (see [`PendingMoves::changed`]): that refit reads
    /// them as they are, and any other update lists them first ([`Self::list_bits`]).
    pub(crate) fn apply_pending(&mut self, pending: &mut PendingMoves<V>, runner: &dyn TaskRunner) {
        let count = pending.moves.len() + pending.in_bits;
        let proxies = self.proxy_count;
        let bulk = count >= SORT_FROM
            && (count * BULK_FROM >= proxies
                || (count * MID_BULK_FROM >= proxies && self.recent_refits.refit_pays()));
        let parallel = bulk && runner.threads() > 1 && self.move_cache && self.refits_recursively();
        if !parallel && pending.in_bits > 0 {
            self.list_bits(pending);
        }
        if bulk {
            let recent = count * RECENT_BELOW < self.proxy_count;
            if parallel {
                pending.changed.resize(self.leaves.len().div_ceil(64), 0);
                for id in &pending.ids {
                    set_bit(&mut pending.changed, id.index());
                }
                pending.in_bits = 0;
                if recent {
                    self.mark_stale_paths_of_bits(&pending.changed);
                }
            } else {
                self.write_slots(&pending.moves);
                if recent {
                    for &(link, _) in &pending.moves {
                        self.mark_stale_path(link);
                    }
                }
            }
            let visited = if parallel {
                let age = if recent { RECENT.into() } else { u16::MAX };
                let visited = self.refit_root_parallel(age, &pending.changed, runner);
                pending.changed.fill(0);
                visited
            } else if recent {
                self.refit_recent()
            } else {
                self.refit_all()
            };
            if recent {
                self.recent_refits.note(visited, self.node_count);
            }
        } else if count < SORT_FROM {
            for &(link, fat) in &pending.moves {
                self.set_leaf_box(link, fat);
            }
        } else {
            self.group_by_place(pending);
            self.write_slots(&pending.sorted);
            self.grow_ancestors_interleaved(&pending.sorted);
        }
    }

    /// [`Self::write_slot`] for each `(link, fat)`, in order, when the move cache is on.
    fn write_slots(&mut self, items: &[(Link, BoundingBox<V>)]) {
        if self.move_cache {
            for &(link, fat) in items {
                self.write_slot(link, fat);
            }
        }
    }

    /// [`Self::grow_from`] for each `(link, fat)` (whose slot holds `fat` already), with
    /// [`LANES`] walks up the tree in flight at once, one step of each in turn.
    ///
    /// A walk up is a chain of dependent loads (each parent is known only once its child
    /// is read), so one walk at a time waits for each miss in turn; several walks taken
    /// in turn have several misses outstanding together. The outcome is the same as one
    /// walk after the other: an ancestor's box ends as its old box grown by the box of
    /// every leaf below it that moved, whatever the order. A walk stops at a node that
    /// already encloses its box and is marked; if another walk made it so and has not yet
    /// grown the ancestors above, that walk will, by a box that covers the stopped one.
    fn grow_ancestors_interleaved(&mut self, items: &[(Link, BoundingBox<V>)]) {
        // Each lane: the slot holding the next ancestor's box, the box, the level (1 for
        // the leaf's parent).
        let mut lanes: [Option<(Link, BoundingBox<V>, u32)>; LANES] = [None; LANES];
        let mut next = 0;
        for lane in &mut lanes {
            *lane = self.next_walk(items, &mut next);
        }
        let mut active = lanes.iter().filter(|lane| lane.is_some()).count();
        while active > 0 {
            for lane in &mut lanes {
                let Some((link, fat, level)) = *lane else {
                    continue;
                };
                *lane = match self.grow_step(link, &fat) {
                    (done, Some(up)) if !(done & (level >= UNCONDITIONAL_LEVELS)) => {
                        Some((up, fat, level + 1))
                    }
                    _ => {
                        // This walk is over: start the next one in its lane.
                        let refill = self.next_walk(items, &mut next);
                        active -= usize::from(refill.is_none());
                        refill
                    }
                };
            }
        }
    }

    /// The next walk up of `items`, from `*next` on: the slot holding the box of the
    /// leaf's parent, the box, level 1 (a leaf at the root has no ancestor to grow and is
    /// skipped); `None` when none is left.
    #[inline(always)]
    fn next_walk(
        &self,
        items: &[(Link, BoundingBox<V>)],
        next: &mut usize,
    ) -> Option<(Link, BoundingBox<V>, u32)> {
        while let Some(&(link, fat)) = items.get(*next) {
            *next += 1;
            if !link.is_root() {
                return Some((self.nodes[link.parent().index()].parent, fat, 1));
            }
        }
        None
    }

    /// Puts `pending.moves` into `pending.sorted` grouped by the arena region of the
    /// leaves' parents (a counting sort on the parent index's high bits, stable, so that
    /// two moves of one proxy keep their order; a leaf at the root counts in region 0).
    /// Regions are small enough for the nodes of one to stay in cache while it is worked
    /// through.
    fn group_by_place(&self, pending: &mut PendingMoves<V>) {
        const REGION_BITS: u32 = 8;
        let regions = (self.nodes.len() >> REGION_BITS) + 1;
        let region = |link: Link| {
            if link.is_root() {
                0
            } else {
                link.parent().index() >> REGION_BITS
            }
        };
        let PendingMoves {
            moves,
            sorted,
            starts,
            ..
        } = pending;
        starts.clear();
        starts.resize(regions + 1, 0);
        for &(link, _) in moves.iter() {
            starts[region(link) + 1] += 1;
        }
        for r in 1..=regions {
            starts[r] += starts[r - 1];
        }
        sorted.clear();
        sorted.resize(moves.len(), (Link::ROOT, BoundingBox::default()));
        for &(link, fat) in moves.iter() {
            let slot = &mut starts[region(link)];
            sorted[*slot as usize] = (link, fat);
            *slot += 1;
        }
    }

    /// Finishes a step of moves without looking for pairs: every internal node gets its
    /// exact box back, the moves are forgotten and the tree improves itself as after
    /// [`Self::update_pairs`]. For a tree whose proxies are never paired with each other
    /// (the plugin's static tree, which other trees' proxies query).
    ///
    /// A few moves refit only the changed nodes (the paths from the moved leaves up), so
    /// that moving one static collider of a large level costs a path, not the level; at
    /// least one moved leaf per [`BULK_FROM`] proxies refits the whole tree in memory
    /// order.
    #[cfg(any(feature = "plugin", test))]
    pub(crate) fn refit(&mut self) {
        self.optimizer.candidates.clear();
        if self.moved_count.saturating_mul(BULK_FROM) >= self.len() {
            self.refit_all();
        } else {
            self.refit_order(true, |tree, id| tree.refit_node(id));
        }
        self.finish_update();
    }

    /// Gives every internal node its exact box, children first, and marks it changed when
    /// a child is; the pair walk then finds the boxes exact and leaves them alone.
    fn refit_all(&mut self) -> usize {
        self.refit_younger_than(u16::MAX)
    }

    /// [`Self::refit_all`] over the recent subtrees only (a mark younger than [`RECENT`]
    /// updates), after [`Self::mark_stale_path`] for each of the batch's leaves: every
    /// changed leaf then lies under recent nodes only, so an older subtree holds no
    /// change and keeps its exact boxes.
    fn refit_recent(&mut self) -> usize {
        self.refit_younger_than(RECENT.into())
    }

    /// The refit of every internal node that hangs under recent nodes only, counting as
    /// recent a mark younger than `age` updates (every node with `u16::MAX`). A tree too
    /// tall for the recursion, which rotations make rare, is refit whole with a stack.
    /// Returns the internal nodes refitted.
    pub(crate) fn refit_younger_than(&mut self, age: u16) -> usize {
        let mut visited = 0;
        if self.refits_recursively() {
            let (aabb, changed) = self.refit_below(self.root, self.epoch, age, &mut visited);
            self.root_box = aabb;
            if changed {
                self.root_stamp = self.epoch;
            }
        } else if !self.root.is_null() && !self.root.is_leaf() {
            self.refit_all_stacked();
            visited = self.node_count;
        }
        self.exact = true;
        visited
    }

    /// Whether the root is an internal node low enough for [`Self::refit_below`]'s
    /// recursion (and [`Self::refit_root_parallel`]'s).
    fn refits_recursively(&self) -> bool {
        !self.root.is_null()
            && !self.root.is_leaf()
            && self.nodes[self.root.index()].height <= MAX_RECURSIVE_REFIT
    }

    /// Makes every ancestor of the leaf at `link` recent (see [`RECENT`]) for
    /// [`Self::refit_recent`]: walks up from the leaf's parent, marking each ancestor
    /// changed, until one that is recent already. No mark is more recent than its
    /// holder's ([`Self::validate`] checks it), so every ancestor above that one is recent
    /// too.
    fn mark_stale_path(&mut self, link: Link) {
        if link.is_root() {
            return;
        }
        let epoch = self.epoch;
        let mut up = self.nodes[link.parent().index()].parent;
        while !up.is_root() {
            let node = &mut self.nodes[up.parent().index()];
            let stamp = &mut node.stamps[up.slot()];
            if age_at(epoch, *stamp) < RECENT {
                break;
            }
            *stamp = epoch;
            up = node.parent;
        }
    }

    /// [`Self::mark_stale_path`] for the leaf of each proxy whose bit is set in `bits`.
    fn mark_stale_paths_of_bits(&mut self, bits: &[u64]) {
        for id in set_bits(bits) {
            if let Some(leaf) = self.leaves.get(id).filter(|leaf| leaf.is_live()) {
                self.mark_stale_path(leaf.parent);
            }
        }
    }

    /// Lists the changes noted by their bits (see [`PendingMoves::in_bits`]) after the
    /// others, in proxy order, with each live leaf's link and its box from the move
    /// cache, and clears their bits.
    fn list_bits(&self, pending: &mut PendingMoves<V>) {
        for id in set_bits(&pending.changed) {
            let leaf = self.leaves.get(id).filter(|leaf| leaf.is_live());
            if let (Some(leaf), Some(&fat)) = (leaf, self.fat_boxes.get(id)) {
                pending.moves.push((leaf.parent, fat));
                pending.ids.push(ProxyId(id as u32));
            }
        }
        pending.changed.fill(0);
        pending.in_bits = 0;
    }

    /// [`Self::refit_all`] with a stack of its own, for any height.
    fn refit_all_stacked(&mut self) {
        self.refit_order(false, |tree, id| tree.refit_node(id));
    }

    /// The refit of the subtree under internal node `id`, depth first: each internal
    /// child whose mark is younger than `age` updates gets its exact box in `id`'s slot,
    /// and its mark when it holds a changed child (an older child holds no change, see
    /// [`Self::refit_recent`], and keeps both); returns `id`'s exact box and whether it
    /// holds a changed child (for the caller to store in its own slot). Heights are left
    /// alone: moves change no shape.
    ///
    /// A child's box comes back as the return value rather than through the parent's
    /// slot, so each node is read once and written once. Recursion depth is the height.
    /// Each node refitted counts in `visited`.
    fn refit_below(
        &mut self,
        id: NodeId,
        epoch: Stamp,
        age: u16,
        visited: &mut usize,
    ) -> (BoundingBox<V>, bool) {
        *visited += 1;
        let node = &self.nodes[id.index()];
        let (mut boxes, mut stamps, children) = (node.boxes, node.stamps, node.children);
        for k in 0..2 {
            if !children[k].is_leaf() && u16::from(age_at(epoch, stamps[k])) < age {
                let (aabb, changed) = self.refit_below(children[k], epoch, age, visited);
                boxes[k] = aabb;
                if changed {
                    stamps[k] = epoch;
                }
            }
        }
        let node = &mut self.nodes[id.index()];
        node.boxes = boxes;
        node.stamps = stamps;
        (
            boxes[0].merged(&boxes[1]),
            (stamps[0] == epoch) | (stamps[1] == epoch),
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // A failed unwrap is a failed test.
mod tests {
    use glam::Vec2;

    use super::*;

    /// The three refits after a batch of leaf writes give the same boxes and marks: the
    /// whole-tree refit (recursive), the same with a stack (for tall trees), and the refit
    /// of the recent subtrees only after their ancestors are marked (neither changes a
    /// height: the recursive ones never write them, the stacked one recomputes them).
    /// The tree first stands still for longer than [`RECENT`] updates, and the batch then
    /// moves the leaves of one region only, so that the recent refit skips most of it.
    #[test]
    fn refits_agree() {
        let mut tree = DynamicTree::<Vec2, u32>::with_margin(0.05);
        let mut seed = 12345u32;
        let mut r = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        let mut ids = Vec::new();
        for k in 0..2000 {
            let c = Vec2::new(r() * 100.0, r() * 100.0);
            let b = BoundingBox::from_center_half_extents(c, Vec2::splat(0.5));
            ids.push(tree.create_proxy(b, k).unwrap());
        }
        let mut pairs = Vec::new();
        for _ in 0..=RECENT {
            tree.update_pairs(&mut pairs);
        }
        assert!(
            tree.mark_age(tree.root_stamp) >= RECENT,
            "the tree stood still"
        );
        let mut items = Vec::new();
        for &id in &ids {
            let center = tree.fat_box(id).unwrap().center();
            if center.x < 30.0 && center.y < 50.0 {
                let c = center + Vec2::new(r() - 0.5, r() - 0.5) * 4.0;
                let b = BoundingBox::from_center_half_extents(c, Vec2::splat(0.5));
                if let Some((link, fat)) = tree.new_fat_box(id, b, Vec2::ZERO).unwrap() {
                    tree.write_slot(link, fat);
                    items.push((link, fat));
                }
            }
        }
        assert!(
            items.len() > 100 && items.len() < 500,
            "{} moved",
            items.len()
        );
        let mut stacked = tree.clone();
        let mut recent = tree.clone();
        assert_eq!(tree.refit_all(), tree.node_count, "every node refitted");
        stacked.refit_all_stacked();
        for &(link, _) in &items {
            recent.mark_stale_path(link);
        }
        let visited = recent.refit_recent();
        assert!(
            visited > 0 && 2 * visited < recent.node_count,
            "{visited} refitted"
        );
        for other in [&stacked, &recent] {
            tree.validate().unwrap();
            other.validate().unwrap();
            assert_eq!(tree.root_box, other.root_box);
            assert_eq!(tree.root_stamp, other.root_stamp);
            assert_eq!(tree.nodes.len(), other.nodes.len());
            for (a, b) in tree.nodes.iter().zip(&other.nodes) {
                assert_eq!(
                    (a.boxes, a.stamps, a.children, a.height),
                    (b.boxes, b.stamps, b.children, b.height)
                );
            }
        }
        // Most of the tree stayed old: the recent refit had most of it to skip.
        let old = recent
            .nodes
            .iter()
            .filter(|node| node.is_allocated())
            .flat_map(|node| node.stamps)
            .filter(|&stamp| recent.mark_age(stamp) >= RECENT)
            .count();
        assert!(old > 2000, "{old} old marks");
    }

    /// A batch of middling size (between one changed leaf in [`MID_BULK_FROM`] and one in
    /// [`BULK_FROM`]) refits the recent subtrees in one pass where the moved leaves keep
    /// to one region and the rest stands still, and grows the ancestors where the moves
    /// are scattered over the whole tree, after the refit that measured it. Either way the
    /// tree stays valid and reports the pairs a brute-force check finds.
    #[test]
    fn middling_batches_refit_where_most_stands_still() {
        use crate::tree::tests::{LATTICE_SIDE, lattice_box, lattice_tree};
        for region in [true, false] {
            let (mut tree, ids) = lattice_tree(usize::from(RECENT) + 1);
            let mut pairs = Vec::new();
            let (mut refitted, mut found) = (Vec::new(), 0);
            for update in 1..=40usize {
                // A region of 16 × 24 cells, or every eleventh proxy (a different set at
                // each update): a sixteenth to an eighth of the proxies. Every move leaves
                // the fat box, so each changes a leaf.
                let moving: Vec<usize> = (0..ids.len())
                    .filter(|&i| {
                        if region {
                            i % LATTICE_SIDE < 16 && i / LATTICE_SIDE < 24
                        } else {
                            (i + update) % 11 == 0
                        }
                    })
                    .collect();
                let count = moving.len();
                assert!(count >= SORT_FROM, "{count}");
                assert!(count * MID_BULK_FROM >= ids.len() && count * BULK_FROM < ids.len());
                let moves = moving
                    .iter()
                    .map(|&i| (ids[i], lattice_box(i, update), Vec2::ZERO));
                tree.move_proxies(moves, |id, result| {
                    assert_eq!(result, Ok(true), "{id:?} left its fat box");
                });
                refitted.push(tree.exact);
                tree.validate().unwrap();
                pairs.clear();
                tree.update_pairs(&mut pairs);
                tree.validate().unwrap();
                let boxes: Vec<_> = ids.iter().map(|&id| tree.fat_box(id).unwrap()).collect();
                let mut moved = vec![false; ids.len()];
                moving.iter().for_each(|&i| moved[i] = true);
                let mut want = Vec::new();
                for &i in &moving {
                    for (j, b) in boxes.iter().enumerate() {
                        if j != i && boxes[i].overlaps(b) && !(moved[j] && j < i) {
                            want.push((ids[i].min(ids[j]), ids[i].max(ids[j])));
                        }
                    }
                }
                want.sort();
                pairs.sort();
                assert_eq!(pairs, want, "update {update}, region {region}");
                found += want.len();
            }
            assert!(found > 0, "region {region}");
            if region {
                assert!(refitted.iter().all(|&r| r), "{refitted:?}");
            } else {
                // The first batches measure; once the recent part covers most of the tree,
                // the next REMEASURE_EVERY batches grow ancestors, and the one after
                // measures again.
                let first = refitted.iter().position(|&r| !r).unwrap();
                assert!((1..=4).contains(&first), "{refitted:?}");
                let grown = first + REMEASURE_EVERY as usize;
                assert!(refitted[first..grown].iter().all(|&r| !r), "{refitted:?}");
                assert!(refitted[grown], "{refitted:?}");
            }
        }
    }

    /// Changes noted by their bits alone, as a parallel batch's tasks note those they
    /// store, then applied on the calling thread (where the batch is not refitted in
    /// parallel: too few changes, or a tree too tall for the recursive refit), give the
    /// same tree bit for bit as the same moves through `move_proxies`, for batches that
    /// refit the whole tree, refit the recent subtrees (a large batch, and a middling
    /// one) and grow ancestors one by one; and they leave no bit set. (A proxy given
    /// twice is the one case where a batch that grows ancestors may end tighter than
    /// `move_proxies`, as `DynamicTree::move_proxies_parallel` allows.)
    #[test]
    fn bits_apply_on_the_calling_thread() {
        use crate::tree::tests::{assert_same_tree, lattice_box, lattice_tree};
        for (every, update) in [(1, 1), (3, 2), (10, 3), (20, 4)] {
            let (mut serial, ids) = lattice_tree(usize::from(RECENT) + 1);
            let mut bits = serial.clone();
            // Every `every`-th cell; in the batches that refit, cell 0 again, further
            // (counted twice; growing ancestors would keep the trace of its first move,
            // which its bit does not, while the refit keeps none).
            let mut moves: Vec<_> = (0..ids.len())
                .step_by(every)
                .map(|i| (ids[i], lattice_box(i, update), Vec2::ZERO))
                .collect();
            if every <= 10 {
                moves.push((ids[0], lattice_box(0, update + 1), Vec2::ZERO));
            }
            serial.move_proxies(moves.iter().copied(), |_, result| {
                assert_eq!(result, Ok(true));
            });
            let mut pending = PendingMoves::default();
            pending.changed.resize(bits.leaves.len().div_ceil(64), 0);
            for &(id, tight, displacement) in &moves {
                // Every move leaves its fat box.
                let (_, fat) = bits
                    .decide_fat_box(id, tight, displacement)
                    .unwrap()
                    .unwrap();
                bits.fat_boxes[id.index()] = fat;
                bits.optimizer.changes += 1;
                set_bit(&mut pending.changed, id.index());
                pending.in_bits += 1;
            }
            bits.apply_pending(&mut pending, &CallingThread);
            let what = format!("every {every}");
            assert_eq!(pending.in_bits, 0, "{what}");
            assert!(pending.changed.iter().all(|&w| w == 0), "{what}");
            bits.validate().unwrap();
            assert_same_tree(&bits, &serial, &what);
        }
    }
}
