//! Batches of moves decided on several threads (`move_proxies_parallel`), and their tasks' lists.

use std::sync::{Mutex, PoisonError};

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::constants::{MAX_THREADS, MOVE_TASKS_PER_THREAD};
use crate::tree::parallel::runner::{CallingThread, TaskRunner};
use crate::tree::{DynamicTree, Link, ProxyId, TreeError};

use super::{Batch, set_bit};

/// The moves one task of [`DynamicTree::move_proxies_parallel`] decided, in batch order. A task
/// that owns a run of the move cache stores its changes there and notes each by its proxy's bit;
/// another lists them for the calling thread to store.
#[derive(Debug, Default)]
pub(crate) struct Decided<V: Vector> {
    /// The listed changes (where each leaf hangs and its new fat box), and their proxies.
    moves: Vec<(Link, BoundingBox<V>)>,
    ids: Vec<ProxyId>,
    /// The changes stored in the task's run, one bit per proxy of the run from word `first_word` of
    /// the batch's bits, and their count (a proxy moved twice counts twice).
    bits: Vec<u64>,
    first_word: usize,
    in_bits: usize,
    /// The moves left to the calling thread (their index in the batch).
    deferred: Vec<usize>,
}

/// A task's list of [`Decided`] moves, taken out of the job's array while the task fills it, so
/// that its lengths live in the thread's own memory rather than on a cache line that the
/// neighbouring lists share, and put back when dropped, whether the task ends or unwinds.
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

impl<V: Vector, T> DynamicTree<V, T> {
    /// [`Self::move_proxies`] on up to `threads` threads (the calling one included; at most 256):
    /// move `i` (`i < count`) is `moves(i)`, a `(id, tight, displacement)`. Returns how many moves
    /// changed their proxy's fat box; `result` is told each move's outcome, from the thread that
    /// decided it.
    ///
    /// Give each proxy at most once: the fat boxes, the tree and the next update's pairs are then
    /// exactly those of `move_proxies` on the same moves, whatever the threads. A proxy given twice
    /// may be decided against its box from before the batch both times, and keeps the box of one of
    /// its moves. `moves` must give the same move for the same index on every call (the first move
    /// of each run is read twice).
    ///
    /// Each thread decides runs of consecutive moves. When the runs' first ids increase (a batch in
    /// id order), each thread also stores its changes in its own stretch of the move cache, and the
    /// few moves whose id lies outside it are decided on the calling thread at the end; otherwise
    /// the calling thread stores every change, in batch order. A batch that refits the tree in one
    /// pass (see [`Self::move_proxies`]) refits whole subtrees on each thread, storing the changed
    /// leaves' boxes as it passes them, except in small trees and without the move cache
    /// ([`Self::set_move_cache`]). A batch of fewer than 16,384 moves runs on the calling thread
    /// alone (handing it out would cost more than it saves). The other threads are the tree's rayon
    /// pool with the `parallel` feature (see [`Self::update_pairs_parallel`]); without it every
    /// task runs on the calling thread, with the same result.
    ///
    /// A panic in `moves` or `result` goes on in the calling thread once every thread has stopped,
    /// leaving the tree valid with the changes decided so far applied; the other threads decide
    /// their runs to the end.
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
        let thresholds = self.thresholds;
        let threads = if count < thresholds.parallel_moves_from {
            1
        } else {
            threads.clamp(1, MAX_THREADS)
        };
        let tasks = if threads == 1 {
            1
        } else {
            threads
                .saturating_mul(MOVE_TASKS_PER_THREAD)
                .min(count / thresholds.min_moves_per_task)
                .max(1)
        };
        // Task `t` decides moves `at(t)..at(t + 1)` (in 64 bits: the product may not fit a 32-bit
        // `usize`, and the quotient is at most `count`).
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
        // Each later task's first id: when these increase (a batch in id order, the usual one),
        // each task owns the run of the move cache from its start to the next.
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
        // Cleared here rather than by each task: a task that never starts (its thread stopped at a
        // panic) leaves its list empty, not as the last batch left it.
        for list in &mut lists[..tasks] {
            list.get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .clear();
        }
        let tree = &*batch.tree;
        let decide = |task: usize| {
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
                    // A box outside the task's run is left for the calling thread.
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
            let words = batch.tree.leaves.len().div_ceil(64);
            batch.pending.changed.resize(words, 0);
        }
        let mut changed = 0;
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
        // Kept for the next call, even after a task's panic: the stage caught it, the workers idle.
        if let Some(workers) = workers {
            self.scratch.workers = Some(workers);
        }
        if let Some(panic) = panicked {
            std::panic::resume_unwind(panic);
        }
        changed
    }
}
