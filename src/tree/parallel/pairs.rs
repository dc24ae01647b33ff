//! Finding pairs on several threads.
//!
//! The pair walk of [`DynamicTree::update_pairs`] splits into independent pieces: the
//! pairs inside a subtree are those inside each child plus those across the two children,
//! and the pairs across two subtrees are those across each pair of their children. So:
//!
//! 1. the changed part of the tree is refitted first, alone (it writes nodes);
//! 2. the walk's first levels are unrolled, breadth first, into tasks that share no pair,
//!    enough to keep every thread busy; or, when the update searches leaf by leaf, the
//!    moved leaves are cut into as many even slices;
//! 3. the tasks run on any threads, reading the tree only, each into its own list;
//! 4. the lists are joined in task order, and the moves are forgotten;
//! 5. the incremental rebuilds that end every update are planned as tasks on the same
//!    threads and written in order (`ParallelPairs::finish_on`; a job dropped instead
//!    rebuilds on the dropping thread).
//!
//! The pairs are exactly those of the serial update, in an order that depends only on the
//! operations applied to the tree and the number of tasks asked for, never on the threads.

use crate::Vector;
use crate::tree::constants::{MAX_THREADS, TASKS_PER_THREAD};
use crate::tree::pairs::{Entry, PairStacks, children, pop_task};
use crate::tree::parallel::runner::TaskRunner;
use crate::tree::{DynamicTree, NodeId, ProxyId};
use core::cell::RefCell;
use core::sync::atomic::{AtomicBool, Ordering};
use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

/// The pairs of one task of a parallel walk, kept between updates.
pub(crate) type TaskPairs = Mutex<Vec<(ProxyId, ProxyId)>>;

std::thread_local! {
    /// The stacks of the pair tasks run on this thread, kept between tasks.
    static TASK_STACKS: RefCell<PairStacks> = RefCell::new(PairStacks::default());
}

/// Room for the tasks of a split into at least `min_tasks` (a split never makes more than
/// `min_tasks + 2`, see [`DynamicTree::split_pair_walk`]), capped at what the largest
/// [`DynamicTree::update_pairs_parallel`] asks for: larger splits grow their lists.
fn task_room(min_tasks: usize) -> usize {
    min_tasks.min(MAX_THREADS * TASKS_PER_THREAD) + 3
}

/// One independent piece of a parallel pair walk: the pairs inside one subtree, or the
/// pairs across two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PairTask {
    a: NodeId,
    b: NodeId,
}

/// A pair update split into tasks, made by [`DynamicTree::parallel_pairs`], holding the
/// tree until it is dropped. Dropping it ends the update as [`DynamicTree::update_pairs`]
/// does: the moves are forgotten and the tree optimizes itself.
///
/// Run every task before dropping it: the pairs of a task never run are not reported by
/// any later update, nor are those of tasks run with [`ParallelPairs::run_buffered`]
/// when [`ParallelPairs::append_buffered`] is not called before the drop.
#[must_use = "dropping the job without running its tasks loses this update's pairs"]
pub struct ParallelPairs<'a, V: Vector, T> {
    tree: &'a mut DynamicTree<V, T>,
    tasks: Vec<PairTask>,
    /// A list of pairs per task for [`Self::run_buffered`], taken from the tree and given
    /// back on drop.
    buffers: Vec<TaskPairs>,
    /// When the update searches leaf by leaf: its tasks are this many even slices of the
    /// changed leaves instead of `tasks`.
    leaf_slices: Option<usize>,
    /// Proxies moved in this update, the tree's count of nodes visited at its start, and
    /// whether any task ran: the search cost is noted on drop when tasks ran.
    moved: usize,
    visits_from: u64,
    ran: AtomicBool,
    /// [`Self::finish_on`] ended the update already.
    finished: bool,
}

impl<V: Vector, T> ParallelPairs<'_, V, T> {
    /// The number of tasks: run each of `0..task_count()` once with [`Self::run`], in any
    /// order and on any threads. Their pairs joined in index order are deterministic.
    pub fn task_count(&self) -> usize {
        self.leaf_slices.unwrap_or(self.tasks.len())
    }

    /// Runs task `index`, calling `f` for each of its pairs (`(a, b)` with `a < b`); an
    /// index past the last task does nothing. Only reads the tree, so tasks may run at
    /// the same time on different threads.
    pub fn run(&self, index: usize, mut f: impl FnMut(ProxyId, ProxyId)) {
        let f = |a, b| if a < b { f(a, b) } else { f(b, a) };
        if let Some(slices) = self.leaf_slices {
            if index < slices {
                self.ran.store(true, Ordering::Relaxed);
                let leaves = &self.tree.scratch.pairs.changed_leaves;
                // Slice `index` of `slices` even ones (in 64 bits: the product may not fit
                // a 32-bit `usize`, and the quotient is at most the length).
                let at = |i: usize| (i as u64 * leaves.len() as u64 / slices as u64) as usize;
                self.tree
                    .run_leaf_slice(&leaves[at(index)..at(index + 1)], f);
            }
        } else if let Some(&task) = self.tasks.get(index) {
            self.ran.store(true, Ordering::Relaxed);
            self.tree.run_pair_task(task, f);
        }
    }

    /// Runs task `index` (as [`Self::run`]) into the job's own list for that task, which
    /// [`Self::append_buffered`] reads. Tasks may run at the same time on different
    /// threads: each locks only its own list.
    ///
    /// The lists are kept between updates, but one grows whenever its task reports more
    /// pairs than it ever has, so a warm tree may still allocate here now and then; with
    /// [`Self::run`] into one list of the caller's, it does not.
    pub fn run_buffered(&self, index: usize) {
        if index < self.task_count() {
            // Filled out of the job's array, so that its length is not on a cache line the
            // neighbouring tasks' lists share. The lock is never contended (one task per
            // list) nor poisoned (the walk has no path that panics).
            let lock = || {
                self.buffers[index]
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
            };
            let mut out = core::mem::take(&mut *lock());
            out.clear();
            self.run(index, |a, b| out.push((a, b)));
            *lock() = out;
        }
    }

    /// Moves the pairs of the tasks run with [`Self::run_buffered`] to the end of `pairs`,
    /// in task order: the same pairs in the same order as every task run in turn with
    /// [`Self::run`], whatever threads ran them.
    pub fn append_buffered(&mut self, pairs: &mut Vec<(ProxyId, ProxyId)>) {
        let count = self.task_count();
        for list in &mut self.buffers[..count] {
            // `append` leaves the list empty with its room kept for the next update.
            pairs.append(list.get_mut().unwrap_or_else(PoisonError::into_inner));
        }
    }
}

impl<V: Vector, T: Sync> ParallelPairs<'_, V, T> {
    /// Ends the update as dropping the job does, with the tree's improvements that follow
    /// (the incremental rebuilds that end every update) planned on `runner`'s threads: the
    /// same tree.
    pub fn finish_on(mut self, runner: &dyn TaskRunner) {
        self.end();
        // Set first: should the rebuilds panic, the drop does not end the update again.
        self.finished = true;
        self.tree.finish_update_on(runner);
    }
}

impl<V: Vector, T> ParallelPairs<'_, V, T> {
    /// Gives the tree back its lists and notes what the search cost.
    fn end(&mut self) {
        self.tree.scratch.pairs.split_tasks = core::mem::take(&mut self.tasks);
        self.tree.scratch.pairs.task_pairs = core::mem::take(&mut self.buffers);
        let tree = &mut *self.tree;
        if *self.ran.get_mut() {
            let visited = tree.nodes_visited.load(Ordering::Relaxed) - self.visits_from;
            let update = (self.moved, tree.proxy_count);
            tree.search
                .note(self.leaf_slices.is_some(), visited, update);
        }
    }
}

impl<V: Vector, T> Drop for ParallelPairs<'_, V, T> {
    fn drop(&mut self) {
        if !self.finished {
            self.end();
            self.tree.finish_update();
        }
    }
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Starts a pair update whose walk is split into at least `min_tasks` independent tasks
    /// where the tree allows (or, when the update searches leaf by leaf, `min_tasks` slices
    /// of the moved leaves, fewer when fewer moved). The tasks only read the tree, so they
    /// may run on any threads at once.
    ///
    /// The update ends when the returned value is dropped; the pairs of all its tasks are
    /// exactly those [`Self::update_pairs`] would have reported.
    #[must_use = "dropping the job without running its tasks loses this update's pairs"]
    pub fn parallel_pairs(&mut self, min_tasks: usize) -> ParallelPairs<'_, V, T> {
        let min_tasks = min_tasks.max(1);
        let moved = self.moved_count;
        let by_leaves = self.choose_search();
        let visits_from = self.nodes_visited.load(Ordering::Relaxed);
        self.refit_changed();
        let mut tasks = core::mem::take(&mut self.scratch.pairs.split_tasks);
        let leaf_slices = if by_leaves {
            tasks.clear();
            let mut stacks = core::mem::take(&mut self.scratch.pairs);
            self.collect_changed_leaves(&mut stacks.changed_leaves, &mut stacks.walk);
            let slices = min_tasks.min(stacks.changed_leaves.len());
            self.scratch.pairs = stacks;
            Some(slices)
        } else {
            self.split_pair_walk(min_tasks, &mut tasks);
            None
        };
        let count = leaf_slices.unwrap_or(tasks.len());
        // At least one list per task, grown at most once for this `min_tasks` (lists past
        // the task count are kept until the tree is dropped), and emptied: a job dropped
        // without `append_buffered` may have left pairs.
        let mut buffers = core::mem::take(&mut self.scratch.pairs.task_pairs);
        if buffers.len() < count {
            buffers.reserve(task_room(min_tasks).saturating_sub(buffers.len()));
            buffers.resize_with(count, Default::default);
        }
        for list in &mut buffers[..count] {
            list.get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .clear();
        }
        ParallelPairs {
            tree: self,
            tasks,
            buffers,
            leaf_slices,
            moved,
            visits_from,
            ran: AtomicBool::new(false),
            finished: false,
        }
    }

    /// [`Self::update_pairs`] with the walk spread over `threads` threads (the calling one
    /// included; at most 256). The pairs are the same; their order depends on `threads`
    /// but not on how the threads ran.
    ///
    /// The work is split into about sixteen tasks per thread; each thread takes the next
    /// task not yet taken until none is left, so a thread that drew small tasks goes on
    /// with more. With one thread (or a walk that does not split), the tasks run in order
    /// straight into `pairs`, and a warm tree allocates nothing. With more, and the
    /// `parallel` feature, they run on the calling thread and a rayon pool of `threads - 1`
    /// workers that the tree keeps until it is dropped or a call asks for another number
    /// of threads; without the feature, on the calling thread alone, with the same result.
    /// To run the tasks on a pool of your own (as the plugin does on Bevy's), use
    /// [`Self::update_pairs_on`] or [`Self::parallel_pairs`].
    pub fn update_pairs_parallel(&mut self, pairs: &mut Vec<(ProxyId, ProxyId)>, threads: usize)
    where
        T: Sync,
        V: Sync,
    {
        let threads = threads.clamp(1, MAX_THREADS);
        let mut job = self.parallel_pairs(threads.saturating_mul(TASKS_PER_THREAD));
        let count = job.task_count();
        if threads.min(count) <= 1 {
            for task in 0..count {
                job.run(task, |a, b| pairs.push((a, b)));
            }
            return;
        }
        let workers = job.tree.take_workers(threads);
        let job_ref = &job;
        workers.run(count, &|task| job_ref.run_buffered(task));
        job.append_buffered(pairs);
        job.finish_on(&workers);
        self.scratch.workers = Some(workers);
    }

    /// [`Self::update_pairs`] with the walk's tasks (about sixteen per thread of `runner`) run
    /// by `runner` (see [`TaskRunner`]): the pairs of the tasks joined in task order, then the
    /// improvements that end the update planned on the same threads. Returns the number of
    /// tasks. The pairs are the same as the serial update's; their order depends on the
    /// runner's number of threads only.
    pub fn update_pairs_on(
        &mut self,
        pairs: &mut Vec<(ProxyId, ProxyId)>,
        runner: &dyn TaskRunner,
    ) -> usize
    where
        T: Sync,
    {
        let threads = runner.threads().clamp(1, MAX_THREADS);
        let mut job = self.parallel_pairs(threads.saturating_mul(TASKS_PER_THREAD));
        let count = job.task_count();
        let job_ref = &job;
        runner.run(count, &|task| job_ref.run_buffered(task));
        job.append_buffered(pairs);
        job.finish_on(runner);
        count
    }

    /// Unrolls the first levels of the pair walk, breadth first, into `tasks` (cleared
    /// first), until there are `min_tasks` or nothing left to unroll.
    fn split_pair_walk(&mut self, min_tasks: usize, tasks: &mut Vec<PairTask>) {
        tasks.clear();
        if !self.has_walk() {
            return;
        }
        let mut queue = core::mem::take(&mut self.scratch.pairs.split_queue);
        queue.clear();
        // The unrolling splits only while there are fewer than `min_tasks - 1` tasks, and a
        // split adds at most 4: never more than `min_tasks + 2`, so that once these have
        // the room, later splits never grow them.
        tasks.reserve(task_room(min_tasks));
        queue.reserve(task_room(min_tasks));
        self.unroll_pair_walk(min_tasks, &mut queue, tasks);
        self.scratch.pairs.split_queue = queue;
    }

    /// The breadth-first unrolling of [`Self::split_pair_walk`], `queue` empty at first.
    fn unroll_pair_walk(
        &self,
        min_tasks: usize,
        queue: &mut VecDeque<PairTask>,
        tasks: &mut Vec<PairTask>,
    ) {
        let epoch = self.epoch;
        queue.push_back(PairTask {
            a: self.root,
            b: self.root,
        });
        // The tasks split here count as visited, as they would in a task: the update's
        // count does not depend on where the split stops.
        let mut visited = 0u64;
        // Tasks that cannot be split (a leaf against something) are final.
        while let Some(task) = queue.pop_front() {
            if queue.len() + tasks.len() + 1 >= min_tasks {
                queue.push_front(task);
                break;
            }
            let hits = |(a, ea): (NodeId, Entry<'_, V>), (b, eb): (NodeId, Entry<'_, V>)| {
                Self::hit(ea, eb, epoch).then_some(PairTask { a, b })
            };
            if task.a == task.b {
                // self(N): self of each changed internal child, and child against child.
                visited += 1;
                let [c1, c2] = children(task.a, &self.nodes[task.a.index()]);
                for (child, (_, stamp)) in [c1, c2] {
                    if !child.is_leaf() && stamp == epoch {
                        queue.push_back(PairTask { a: child, b: child });
                    }
                }
                queue.extend(hits(c1, c2));
            } else if !task.a.is_leaf() && !task.b.is_leaf() {
                visited += 1;
                for x in children(task.a, &self.nodes[task.a.index()]) {
                    for y in children(task.b, &self.nodes[task.b.index()]) {
                        queue.extend(hits(x, y));
                    }
                }
            } else {
                tasks.push(task);
            }
        }
        tasks.extend(queue.drain(..));
        self.count_visits(visited, 0);
    }

    /// Runs one task of a parallel walk (no refits: [`Self::refit_changed`] did them),
    /// with this thread's stacks, kept between tasks so that a pool's long-lived threads
    /// allocate nothing once warm. A task started from `f` gets stacks of its own.
    fn run_pair_task(&self, task: PairTask, f: impl FnMut(ProxyId, ProxyId)) {
        TASK_STACKS.with(|cell| match cell.try_borrow_mut() {
            Ok(mut stacks) => self.run_pair_task_with(task, &mut stacks, f),
            Err(_) => self.run_pair_task_with(task, &mut PairStacks::default(), f),
        });
    }

    /// [`Self::search_leaves`] for one slice of the changed leaves, with this thread's
    /// stacks (as [`Self::run_pair_task`]).
    fn run_leaf_slice(&self, leaves: &[NodeId], f: impl FnMut(ProxyId, ProxyId)) {
        TASK_STACKS.with(|cell| match cell.try_borrow_mut() {
            Ok(mut stacks) => self.search_leaves(leaves, &mut stacks.walk, f),
            Err(_) => self.search_leaves(leaves, &mut Vec::new(), f),
        });
    }

    fn run_pair_task_with(
        &self,
        task: PairTask,
        stacks: &mut PairStacks,
        mut f: impl FnMut(ProxyId, ProxyId),
    ) {
        stacks.start((task.a, task.b));
        let (mut fill, mut leaf_fill) = (1, 0);
        let mut counts = (0u64, 0u64);
        while fill > 0 {
            let popped = pop_task(&mut stacks.tasks, &mut fill);
            counts.0 += 1;
            let fills = (&mut fill, &mut leaf_fill);
            self.run_task(popped, false, stacks, fills, &mut counts, &mut f);
        }
        self.run_leaf_tasks(stacks, leaf_fill, &mut counts, &mut f);
        self.count_visits(counts.0, counts.1);
    }
}
