//! Bevy's compute task pool as the runner of the tree's parallel stages.

use bevy::tasks::ComputeTaskPool;

use crate::plugin::CollisionConfig;
use crate::tree::TaskRunner;

/// The compute task pool, for a stage of a tick with `moved` moved colliders: when the
/// config's [`parallel_pairs_from`](CollisionConfig::parallel_pairs_from) lets that many
/// use it and the pool has more than one thread.
pub(crate) fn pool_for(config: &CollisionConfig, moved: usize) -> Option<Pool> {
    let pool = ComputeTaskPool::try_get().filter(|pool| pool.thread_num() > 1)?;
    config
        .parallel_pairs_from
        .is_some_and(|from| moved >= from)
        .then_some(Pool(pool))
}

/// The compute task pool running a stage's tasks: one pool task per stage task, handed
/// to whichever thread is free, which evens out tasks of very different sizes.
pub(crate) struct Pool(&'static ComputeTaskPool);

// `ComputeTaskPool::scope` returns only once every task spawned in it has completed.
impl TaskRunner for Pool {
    fn threads(&self) -> usize {
        self.0.thread_num()
    }

    fn run(&self, count: usize, task: &(dyn Fn(usize) + Sync)) {
        self.0.scope(|scope| {
            for index in 0..count {
                scope.spawn(async move { task(index) });
            }
        });
    }
}
