//! Moving many proxies at once: the batch's buffers, the guard that applies a batch even when the
//! caller panics, and the sizes that choose how its ancestors are updated.

use std::sync::Mutex;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::constants::REMEASURE_EVERY;
use crate::tree::parallel::runner::TaskRunner;
use crate::tree::{DynamicTree, Link, ProxyId, TreeError};

use parallel_batch::Decided;

mod apply;
mod parallel_batch;
mod serial;

/// What the last refit of the recent subtrees visited, which decides how a middling batch (see
/// [`MID_BULK_FROM`](crate::tree::constants::MID_BULK_FROM)) updates its leaves' ancestors: it
/// refits (and so measures) before the first such refit and after [`REMEASURE_EVERY`] batches that
/// grew ancestors instead, and otherwise when the last refit visited less than half of the internal
/// nodes. Counts alone decide, so the same operations take the same path on any number of threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RecentRefits {
    /// Internal nodes the last refit visited, of the `nodes` in the tree then (0 before it).
    visited: usize,
    nodes: usize,
    /// Middling batches that grew ancestors since.
    grown: u32,
}

impl RecentRefits {
    /// Whether a middling batch refits the recent subtrees; counts it when it grows ancestors.
    fn refit_pays(&mut self) -> bool {
        if self.nodes == 0 || self.grown >= REMEASURE_EVERY {
            return true;
        }
        let pays = self.visited.saturating_mul(2) < self.nodes;
        self.grown += u32::from(!pays);
        pays
    }

    /// Notes a refit of the recent subtrees that visited `visited` of `nodes` internal nodes.
    fn note(&mut self, visited: usize, nodes: usize) {
        self.visited = visited;
        self.nodes = nodes;
        self.grown = 0;
    }
}

/// Buffers of [`DynamicTree::move_proxies`], reused.
#[derive(Debug, Default)]
pub(crate) struct PendingMoves<V: Vector> {
    /// Decided changes whose parents' slots and ancestors wait to be updated: each leaf's link and
    /// new fat box, in move order (then those listed from `changed`, in proxy order).
    moves: Vec<(Link, BoundingBox<V>)>,
    /// The same, grouped by where the parents sit in the arena, and where each group starts.
    sorted: Vec<(Link, BoundingBox<V>)>,
    starts: Vec<u32>,
    /// The proxies of `moves`, in the same order.
    ids: Vec<ProxyId>,
    /// One bit per proxy: set for the changes a parallel batch's tasks stored in the move cache
    /// themselves (counted in `in_bits`, not listed in `moves`), and for those of `ids` while a
    /// parallel refit stores their boxes (see [`DynamicTree::apply_pending`]); clear otherwise.
    changed: Vec<u64>,
    /// Changes noted only by their bit in `changed` (a proxy moved twice counts twice).
    in_bits: usize,
    /// What each task of [`DynamicTree::move_proxies_parallel`] decided; later tasks' first ids.
    decided: Vec<Mutex<Decided<V>>>,
    task_starts: Vec<usize>,
}

/// Sets bit `index` of `words` (one bit per proxy, 64 to a word); an index beyond sets nothing.
#[inline(always)]
fn set_bit(words: &mut [u64], index: usize) {
    if let Some(word) = words.get_mut(index / 64) {
        *word |= 1 << (index % 64);
    }
}

/// The indices of the bits set in `words`, in increasing order.
pub(crate) fn set_bits(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
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

/// A batch of leaf updates under way. Dropping it applies the pending ancestor updates, so that a
/// panic in the caller's iterator or callback midway still leaves ancestors enclosing leaves.
struct Batch<'a, V: Vector, T> {
    tree: &'a mut DynamicTree<V, T>,
    pending: PendingMoves<V>,
    /// Where the refit's tasks run.
    runner: &'a dyn TaskRunner,
    /// The move cache while a parallel batch's tasks hold it (else empty); a panic gives it
    /// back first, before the pending moves that read it are applied.
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
    /// [`DynamicTree::new_fat_box`] for one move, its change (if any) noted for the end of the
    /// batch and its outcome (whether the fat box changed) told to `result` where it is known, so
    /// that a caller's count of the changes compiles to an increment.
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
