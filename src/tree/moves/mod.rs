//! Moving many proxies at once: the batch's buffers, the guard that applies a batch
//! even when the caller panics, and the sizes that choose how its ancestors are updated.

use std::sync::Mutex;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::constants::REMEASURE_EVERY;
use crate::tree::parallel::TaskRunner;
use crate::tree::{DynamicTree, Link, ProxyId, TreeError};

use parallel_batch::Decided;

mod apply;
mod parallel_batch;
mod refit;
mod serial;

/// What the last refit of the recent subtrees visited, which decides how a batch of
/// middling size (see [`MID_BULK_FROM`](crate::tree::constants::MID_BULK_FROM)) updates the ancestors of its leaves.
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
