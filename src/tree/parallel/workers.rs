//! The threads of the tree's own parallel calls.
//!
//! [`DynamicTree::move_proxies_parallel`] and [`DynamicTree::update_pairs_parallel`] run several
//! stages a step, each a handful of tasks lasting a fraction of a millisecond. Starting a thread
//! costs about as much as a small task, so the tree keeps its threads between calls: a
//! [rayon](https://docs.rs/rayon) pool of `threads - 1` workers, built on the first parallel call
//! and dropped with the tree, or replaced when a call asks for another count; the calling thread
//! takes tasks too.
//!
//! The pool exists only with the crate's `parallel` feature. Without it the crate starts no thread
//! of its own (what a web build needs): [`WorkerPool::new`] makes a pool of the calling thread
//! alone, which runs the tasks in order. The plugin never uses this pool: it runs the same stages
//! on Bevy's compute task pool (`plugin::pool`).

use crate::Vector;
use crate::tree::DynamicTree;
#[cfg(feature = "parallel")]
use crate::tree::constants::SPIN_FOR;
use crate::tree::parallel::runner::TaskRunner;
use core::sync::atomic::{AtomicUsize, Ordering};

/// The tree's threads: the calling one and, with the `parallel` feature, a rayon pool of workers.
pub(crate) struct WorkerPool {
    /// Unwind safe: a task's panic goes on in the caller once the stage has ended, leaving the pool
    /// able to run the next.
    #[cfg(feature = "parallel")]
    workers: Option<std::panic::AssertUnwindSafe<rayon::ThreadPool>>,
    /// The threads the call that made the pool asked for.
    asked: usize,
}

impl core::fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("WorkerPool")
            .field("threads", &self.threads())
            .finish()
    }
}

/// Runs tasks from `next` up to `count` until none is left: each thread takes the next task when it
/// is done, which evens out tasks of very different sizes.
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
    /// A pool of `threads` threads: the calling one and `threads - 1` workers (none without the
    /// `parallel` feature, or if the system refuses to start them).
    pub(crate) fn new(threads: usize) -> Self {
        #[cfg(feature = "parallel")]
        let workers = (threads > 1)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads - 1)
                    .thread_name(|index| format!("aabb-tree-worker-{}", index + 1))
                    .build()
                    .ok()
                    .map(std::panic::AssertUnwindSafe)
            })
            .flatten();
        Self {
            #[cfg(feature = "parallel")]
            workers,
            asked: threads,
        }
    }

    /// Threads the pool runs tasks on, the calling one included.
    pub(crate) fn threads(&self) -> usize {
        #[cfg(feature = "parallel")]
        if let Some(workers) = &self.workers {
            return workers.current_num_threads() + 1;
        }
        1
    }

    /// Runs tasks `0..count`, each once, on the workers and the calling thread; returns when every
    /// task has returned. A task's panic goes on in the calling thread then.
    pub(crate) fn run(&self, count: usize, task: &(dyn Fn(usize) + Sync)) {
        let next = AtomicUsize::new(0);
        #[cfg(feature = "parallel")]
        if let Some(workers) = &self.workers
            && count > 1
        {
            let helpers = self.threads().min(count) - 1;
            let finished = AtomicUsize::new(0);
            workers.in_place_scope(|scope| {
                for _ in 0..helpers {
                    scope.spawn(|_| {
                        take_tasks(task, count, &next);
                        finished.fetch_add(1, Ordering::Release);
                    });
                }
                take_tasks(task, count, &next);
                // The scope puts the calling thread to sleep until the workers are done, and waking
                // it costs about as much as a small stage: it first watches for them for up to
                // `SPIN_FOR` (a worker that panics only makes it wait longer).
                let start = std::time::Instant::now();
                while finished.load(Ordering::Acquire) < helpers && start.elapsed() < SPIN_FOR {
                    core::hint::spin_loop();
                }
            });
            return;
        }
        take_tasks(task, count, &next);
    }
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Workers for a parallel call on `threads` threads, taken out of the tree while the call uses
    /// them (it puts them back): an earlier call's if it asked for as many, else new ones.
    pub(crate) fn take_workers(&mut self, threads: usize) -> WorkerPool {
        // Workers for another count end with this statement, before the new ones start.
        if let Some(workers) = self.scratch.workers.take()
            && workers.asked == threads
        {
            return workers;
        }
        WorkerPool::new(threads)
    }
}

impl TaskRunner for WorkerPool {
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

    /// With the `parallel` feature, a stage runs on several threads when there are tasks
    /// enough to share; without it, on the calling thread alone.
    #[test]
    fn tasks_run_where_the_feature_says() {
        let pool = WorkerPool::new(2);
        let caller = std::thread::current().id();
        let elsewhere = AtomicUsize::new(0);
        for _ in 0..200 {
            pool.run(2, &|_| {
                if std::thread::current().id() != caller {
                    elsewhere.fetch_add(1, Ordering::Relaxed);
                }
                // Long enough for a worker to take the second task.
                std::thread::sleep(std::time::Duration::from_micros(200));
            });
        }
        let elsewhere = elsewhere.load(Ordering::Relaxed);
        if cfg!(feature = "parallel") {
            assert!(elsewhere > 0);
        } else {
            assert_eq!(elsewhere, 0);
            assert_eq!(pool.threads(), 1);
        }
    }

    /// A task's panic goes on in the calling thread once the stage has ended (every other
    /// task run), and the pool runs later stages.
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
            // On the calling thread alone, the tasks after the panicking one do not run;
            // with workers, the threads that did not panic run them.
            let ran_once = |run: &AtomicUsize| run.load(Ordering::Relaxed) == 1;
            if pool.threads() > 1 {
                assert!(runs.iter().all(ran_once));
            } else {
                assert!(runs[..=panicking].iter().all(ran_once));
            }
            let after = AtomicUsize::new(0);
            pool.run(10, &|_| {
                after.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(after.load(Ordering::Relaxed), 10);
        }
    }

    /// A stage run from a task of another stage runs each of its tasks once.
    #[test]
    fn a_stage_inside_a_stage() {
        let pool = WorkerPool::new(3);
        let inner: Vec<AtomicUsize> = (0..8 * 5).map(|_| AtomicUsize::new(0)).collect();
        pool.run(8, &|outer| {
            pool.run(5, &|task| {
                inner[outer * 5 + task].fetch_add(1, Ordering::Relaxed);
            });
        });
        assert!(inner.iter().all(|run| run.load(Ordering::Relaxed) == 1));
    }

    /// The tree keeps what it promised before it had workers.
    #[test]
    fn the_tree_stays_send_sync_and_unwind_safe() {
        fn check<T: Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}
        check::<crate::tree::DynamicTree<glam::Vec2, u32>>();
        check::<crate::tree::DynamicTree<glam::Vec3, u32>>();
    }
}
