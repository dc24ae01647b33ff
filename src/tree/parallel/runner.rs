//! Who runs the tree's parallel tasks: [`TaskRunner`], and [`CallingThread`], which runs
//! them one after the other.

/// Runs the independent tasks of a parallel stage of the tree: tasks `0..count`, each
/// once, on any threads, returning when all have run. Implement it over the thread pool a
/// program already has (Bevy's compute task pool, a rayon pool, scoped threads) and hand
/// it to [`DynamicTree::move_proxies_on`](crate::DynamicTree::move_proxies_on) or
/// [`DynamicTree::update_pairs_on`](crate::DynamicTree::update_pairs_on); the results do
/// not depend on the runner.
///
/// The parallel refit (`tree::refit::parallel`) relies on `run` not returning before
/// every task it started has returned. A safe implementation cannot break this: `task`
/// is borrowed for the call alone, so handing it to a thread that outlives the call takes
/// `unsafe` code (scoped threads, rayon's and Bevy's scopes all wait for their tasks).
pub trait TaskRunner: Sync {
    /// How many threads the tasks may run on (1: the calling thread alone).
    fn threads(&self) -> usize;
    /// Runs `task(i)` once for every `i` in `0..count`, on any threads, and returns when
    /// every one has returned.
    fn run(&self, count: usize, task: &(dyn Fn(usize) + Sync));
}

/// The calling thread alone: the tasks in order, one after the other.
#[derive(Clone, Copy, Debug, Default)]
pub struct CallingThread;

impl TaskRunner for CallingThread {
    fn threads(&self) -> usize {
        1
    }

    fn run(&self, count: usize, task: &(dyn Fn(usize) + Sync)) {
        (0..count).for_each(task);
    }
}
