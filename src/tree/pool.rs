//! Worker threads that live between parallel stages.
//!
//! The tree's own parallel calls ([`DynamicTree::move_proxies_parallel`],
//! [`DynamicTree::update_pairs_parallel`]) run several stages a step (the moves'
//! decisions, the refit, the pair walk, the rebuild plans), each a handful of tasks that
//! last a fraction of a millisecond. Starting a thread costs tens of microseconds, about
//! as much as a small task; so the tree keeps `threads - 1` workers instead, started on
//! its first parallel call and ended when the tree is dropped, or replaced when a call
//! asks for another number of threads.
//!
//! Waking a sleeping thread costs about as much as starting one on some systems (virtual
//! machines especially), so a thread that waits (a worker for the next stage, the caller
//! for the workers to finish) first watches for what it waits for during [`SPIN_FOR`],
//! which the stages of one step, close together, rarely outlast; then it sleeps.
//!
//! # Why `unsafe`
//!
//! A stage ([`WorkerPool::run`]) publishes its tasks, takes tasks on the calling thread
//! too, and returns once every worker has let go of them. The tasks borrow from the
//! caller; the workers are not scoped threads, so the borrow is lent to them with its
//! lifetime erased (a raw pointer), which `run` makes sound by not returning, nor
//! unwinding, before every worker has said it is done with the stage (`Shared::busy`),
//! its own tasks' panics caught meanwhile. `docs/bench/README.md` ("The worker pool")
//! measures the gain over threads started for each stage.
//!
//! [`DynamicTree::move_proxies_parallel`]: crate::tree::DynamicTree::move_proxies_parallel
//! [`DynamicTree::update_pairs_parallel`]: crate::tree::DynamicTree::update_pairs_parallel

use crate::Vector;
use crate::tree::DynamicTree;
use crate::tree::constants::SPIN_FOR;
use crate::tree::parallel::TaskRunner;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::any::Any;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

/// A panic caught in a task, kept to go on in the calling thread.
type Panic = Box<dyn Any + Send>;

/// The tasks of one stage, as the workers see them.
#[derive(Clone, Copy)]
struct Job {
    /// The caller's task, its lifetime erased: valid until [`WorkerPool::run`] returns.
    task: *const (dyn Fn(usize) + Sync + 'static),
    count: usize,
    /// The next task not yet taken, on the caller's stack.
    next: *const AtomicUsize,
}

// SAFETY: a `Job` is only read while its `run` call waits for the reader (see
// `WorkerPool::run`), and what it points to is `Sync` (the task, an atomic).
#[allow(unsafe_code)]
unsafe impl Send for Job {}

/// What the workers and the caller share, under [`Shared::state`].
struct State {
    /// The stage being run, if any.
    job: Option<Job>,
    /// The first panic of the current stage.
    panic: Option<Panic>,
    /// Set when the pool is dropped: the workers return.
    stop: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Counts the stages published (a worker runs each stage once), and the workers that
    /// have not finished the current stage yet. Both change under the lock only, and are
    /// atomics so that a waiting thread can watch them without it (see [`spin_until`]).
    stage: AtomicU64,
    busy: AtomicUsize,
    /// Whether a stage is being run ([`WorkerPool::run`] calls do not overlap).
    running: AtomicBool,
    /// Wakes the workers: a stage was published, or the pool stops.
    wake: Condvar,
    /// Wakes the caller: the last worker finished the stage.
    done: Condvar,
}

/// Watches `done` until it is true or [`SPIN_FOR`] has passed.
fn spin_until(done: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while start.elapsed() < SPIN_FOR {
        for _ in 0..64 {
            if done() {
                return;
            }
            core::hint::spin_loop();
        }
    }
}

impl Shared {
    /// The state; a poisoned lock is taken as is (nothing that holds it can panic: the
    /// tasks run outside it, and a task's panic payload is only moved under it).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `threads - 1` worker threads and the calling thread, running the tasks of one stage at
/// a time (see the module docs).
///
/// A panic in a stage leaves the pool as it was (its tasks' panics are caught until the
/// stage ends), so the pool is unwind safe.
pub(crate) struct WorkerPool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    /// The threads asked for (more than [`Self::threads`] when some did not start).
    asked: usize,
}

impl std::panic::UnwindSafe for WorkerPool {}
impl std::panic::RefUnwindSafe for WorkerPool {}

impl core::fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("WorkerPool")
            .field("threads", &self.threads())
            .finish()
    }
}

/// Runs tasks from `next` up to `count` until none is left.
fn take_tasks(task: &(dyn Fn(usize) + Sync), count: usize, next: &AtomicUsize) {
    loop {
        let index = next.fetch_add(1, Ordering::Relaxed);
        if index >= count {
            return;
        }
        task(index);
    }
}

impl WorkerPool {
    /// A pool of `threads` threads: the calling one and `threads - 1` workers (fewer if
    /// the system refuses to start some: the others take their tasks).
    pub(crate) fn new(threads: usize) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                job: None,
                panic: None,
                stop: false,
            }),
            stage: AtomicU64::new(0),
            busy: AtomicUsize::new(0),
            running: AtomicBool::new(false),
            wake: Condvar::new(),
            done: Condvar::new(),
        });
        let workers = (1..threads)
            .filter_map(|index| {
                let shared = Arc::clone(&shared);
                std::thread::Builder::new()
                    .name(format!("aabb-tree-worker-{index}"))
                    .spawn(move || work(&shared))
                    .ok()
            })
            .collect();
        Self {
            shared,
            workers,
            asked: threads,
        }
    }

    /// Threads the pool runs tasks on, the calling one included.
    pub(crate) fn threads(&self) -> usize {
        self.workers.len() + 1
    }

    /// Runs tasks `0..count`, each once, on the workers and the calling thread; returns
    /// when every task has returned. A task's panic goes on in the calling thread then.
    ///
    /// A call made while another runs (from a task, or from another thread) runs its
    /// tasks on its own thread, in order: the workers serve one stage at a time.
    pub(crate) fn run(&self, count: usize, task: &(dyn Fn(usize) + Sync)) {
        let next = AtomicUsize::new(0);
        if self.workers.is_empty()
            || count <= 1
            || self.shared.running.swap(true, Ordering::Acquire)
        {
            take_tasks(task, count, &next);
            return;
        }
        // SAFETY: only the lifetime changes (the pointee type is the same trait object).
        // The pointer is published below and taken back before this function returns or
        // unwinds: the workers read it only while `busy` counts them, and `Stage`'s drop,
        // which runs on every way out of this function, waits for `busy` to reach zero.
        #[allow(unsafe_code)]
        let erased: *const (dyn Fn(usize) + Sync + 'static) =
            unsafe { core::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), _>(task) };
        let job = Job {
            task: erased,
            count,
            next: &next,
        };
        let shared = &*self.shared;
        let mut workers_panic = None;
        let stage = Stage {
            shared,
            panic: &mut workers_panic,
        };
        {
            let mut state = shared.lock();
            state.job = Some(job);
            shared.busy.store(self.workers.len(), Ordering::Relaxed);
            shared.stage.fetch_add(1, Ordering::Release);
        }
        shared.wake.notify_all();
        let own = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            take_tasks(task, count, &next);
        }));
        // The workers done, the stage taken back; then its first panic goes on.
        drop(stage);
        let panic = match (workers_panic, own.err()) {
            (Some(first), Some(second)) => {
                // The second payload is forgotten, not dropped (its drop could panic).
                core::mem::forget(second);
                Some(first)
            }
            (first, second) => first.or(second),
        };
        if let Some(panic) = panic {
            std::panic::resume_unwind(panic);
        }
    }
}

/// A stage published to the workers: dropping it (at the end of [`WorkerPool::run`], or
/// while unwinding from it) waits until every worker is done with the stage, then takes
/// the stage back, and a worker's panic into `panic`.
struct Stage<'a> {
    shared: &'a Shared,
    panic: &'a mut Option<Panic>,
}

impl Drop for Stage<'_> {
    fn drop(&mut self) {
        let shared = self.shared;
        spin_until(|| shared.busy.load(Ordering::Acquire) == 0);
        let mut state = shared.lock();
        while shared.busy.load(Ordering::Acquire) > 0 {
            state = shared
                .done
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.job = None;
        *self.panic = state.panic.take();
        drop(state);
        shared.running.store(false, Ordering::Release);
    }
}

/// A worker: runs each stage published once, until the pool stops.
fn work(shared: &Shared) {
    let mut seen = 0;
    loop {
        spin_until(|| shared.stage.load(Ordering::Acquire) != seen);
        let job = {
            let mut state = shared.lock();
            while shared.stage.load(Ordering::Acquire) == seen && !state.stop {
                state = shared
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if state.stop {
                return;
            }
            seen = shared.stage.load(Ordering::Acquire);
            state.job
        };
        let result = match job {
            // SAFETY: the stage's `run` call is waiting for this worker (`busy` counts it
            // until the decrement below), so the task and the counter it points to live.
            #[allow(unsafe_code)]
            Some(job) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
                take_tasks(&*job.task, job.count, &*job.next);
            })),
            None => Ok(()),
        };
        let mut state = shared.lock();
        if let Err(panic) = result {
            if state.panic.is_none() {
                state.panic = Some(panic);
            } else {
                // Only the first panic goes on; this one is forgotten, not dropped (its
                // drop could panic in turn, before this worker says it is done).
                core::mem::forget(panic);
            }
        }
        if shared.busy.fetch_sub(1, Ordering::AcqRel) == 1 {
            shared.done.notify_one();
        }
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_all();
        for worker in self.workers.drain(..) {
            // A worker never panics outside the tasks, whose panics it catches.
            let _ = worker.join();
        }
    }
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Workers for a parallel call on `threads` threads, taken out of the tree while the
    /// call uses them (it puts them back): those of an earlier call, or new ones when
    /// there are none yet or the earlier call asked for another count.
    pub(crate) fn take_workers(&mut self, threads: usize) -> WorkerPool {
        match self.scratch.workers.take() {
            Some(workers) if workers.asked == threads => workers,
            other => {
                // The old threads end before the new ones start.
                drop(other);
                WorkerPool::new(threads)
            }
        }
    }
}

// SAFETY: `WorkerPool::run` returns only once the calling thread's own tasks have
// returned and every worker has finished the stage (`busy` is zero), or, when another
// stage is running, after running every task on the calling thread.
#[allow(unsafe_code)]
unsafe impl TaskRunner for WorkerPool {
    fn threads(&self) -> usize {
        WorkerPool::threads(self)
    }

    fn run(&self, count: usize, task: &(dyn Fn(usize) + Sync)) {
        WorkerPool::run(self, count, task);
    }
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::panic)] // Tests: failures and panicking tasks.
mod tests {
    use super::WorkerPool;
    use core::sync::atomic::{AtomicUsize, Ordering};

    /// Every task of every stage runs exactly once, on any of the pool's threads, and a
    /// stage's tasks have all returned when `run` does.
    #[test]
    fn each_task_runs_once_per_stage() {
        for threads in [1, 2, 3, 8] {
            let pool = WorkerPool::new(threads);
            for count in [0, 1, 2, 7, 64, 1000] {
                let runs: Vec<AtomicUsize> = (0..count).map(|_| AtomicUsize::new(0)).collect();
                for stage in 1..=20 {
                    pool.run(count, &|task| {
                        runs[task].fetch_add(1, Ordering::Relaxed);
                    });
                    for (task, run) in runs.iter().enumerate() {
                        assert_eq!(
                            run.load(Ordering::Relaxed),
                            stage,
                            "{threads} threads, {count} tasks: task {task} after stage {stage}"
                        );
                    }
                }
            }
        }
    }

    /// The stages of a pool run on several threads when there are tasks enough to share.
    #[test]
    fn tasks_spread_over_the_workers() {
        let pool = WorkerPool::new(2);
        let caller = std::thread::current().id();
        let elsewhere = AtomicUsize::new(0);
        for _ in 0..200 {
            pool.run(2, &|_| {
                if std::thread::current().id() != caller {
                    elsewhere.fetch_add(1, Ordering::Relaxed);
                }
                // Long enough for the worker to wake before the caller takes both.
                std::thread::sleep(std::time::Duration::from_micros(200));
            });
        }
        assert!(elsewhere.load(Ordering::Relaxed) > 0);
    }

    /// A task's panic, on a worker or on the calling thread, goes on in the calling thread
    /// once the stage has ended (every other task run), and the pool runs later stages.
    #[test]
    fn a_panic_goes_on_in_the_caller() {
        let pool = WorkerPool::new(3);
        for panicking in [0, 5, 31] {
            let runs: Vec<AtomicUsize> = (0..32).map(|_| AtomicUsize::new(0)).collect();
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool.run(32, &|task| {
                    runs[task].fetch_add(1, Ordering::Relaxed);
                    assert_ne!(task, panicking, "task {task} panics");
                });
            }));
            let panic = outcome.expect_err("the task's panic goes on");
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .unwrap_or_default();
            assert!(
                message.contains(&format!("task {panicking} panics")),
                "{message}"
            );
            assert!(runs.iter().all(|run| run.load(Ordering::Relaxed) == 1));
            assert_runs_every_task(&pool);
        }
    }

    /// The pool still runs a stage, each of its tasks once (after a panic, say).
    fn assert_runs_every_task(pool: &WorkerPool) {
        let after = AtomicUsize::new(0);
        pool.run(10, &|_| {
            after.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(after.load(Ordering::Relaxed), 10);
    }

    /// A stage run from a task of another stage (or while another runs) runs on its own
    /// thread, each task once, instead of waiting for workers that are busy.
    #[test]
    fn a_stage_inside_a_stage_runs_on_its_thread() {
        let pool = WorkerPool::new(3);
        let inner: Vec<AtomicUsize> = (0..8 * 5).map(|_| AtomicUsize::new(0)).collect();
        pool.run(8, &|outer| {
            pool.run(5, &|task| {
                inner[outer * 5 + task].fetch_add(1, Ordering::Relaxed);
            });
        });
        assert!(inner.iter().all(|run| run.load(Ordering::Relaxed) == 1));
    }

    /// Two threads sharing a pool run their stages without mixing them up.
    #[test]
    fn stages_from_two_threads() {
        let pool = WorkerPool::new(3);
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    for count in 0..200 {
                        let runs: Vec<AtomicUsize> =
                            (0..count).map(|_| AtomicUsize::new(0)).collect();
                        pool.run(count, &|task| {
                            runs[task].fetch_add(1, Ordering::Relaxed);
                        });
                        assert!(runs.iter().all(|run| run.load(Ordering::Relaxed) == 1));
                    }
                });
            }
        });
    }

    /// A payload whose drop panics: several tasks panic with one, on the workers and the
    /// caller; the stage still ends and one of them goes on.
    #[test]
    fn panics_whose_payload_panics_on_drop() {
        struct Bomb;
        impl Drop for Bomb {
            fn drop(&mut self) {
                std::panic::panic_any("a payload's drop panics");
            }
        }
        let pool = WorkerPool::new(4);
        for _ in 0..20 {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool.run(16, &|_| {
                    std::thread::sleep(std::time::Duration::from_micros(100));
                    std::panic::panic_any(Bomb);
                });
            }));
            let payload = outcome.expect_err("a task's panic goes on");
            assert!(payload.is::<Bomb>());
            core::mem::forget(payload);
        }
        assert_runs_every_task(&pool);
    }

    /// The tree keeps what it promised before it had workers.
    #[test]
    fn the_tree_stays_send_sync_and_unwind_safe() {
        fn check<T: Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}
        check::<crate::tree::DynamicTree<glam::Vec2, u32>>();
        check::<crate::tree::DynamicTree<glam::Vec3, u32>>();
    }
}
