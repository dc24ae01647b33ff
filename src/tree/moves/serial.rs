//! Batches decided on the calling thread: `move_proxies`, and `move_proxies_on` with the refit
//! of a large batch on a task runner's threads.

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::parallel::runner::{CallingThread, TaskRunner};
use crate::tree::{DynamicTree, ProxyId, TreeError};

use super::Batch;

impl<V: Vector, T> DynamicTree<V, T> {
    /// Moves many proxies: the same as [`Self::move_proxy`] on each `(id, tight, displacement)` in
    /// order, with `result` told each call's outcome, but faster for large batches.
    ///
    /// Deciding whether a move changes anything, and storing the new fat box, read and write the
    /// table of leaves and the move cache in proxy order (without the move cache, the parent's
    /// slot); the changed leaves' ancestors are then updated in the order they sit in memory rather
    /// than in move order, which turns most of their cache misses into hits.
    ///
    /// The results, the fat boxes and the pairs of the next update are exactly those of the single
    /// calls. The internal boxes may be tighter: a batch that changes at least an eighth as many
    /// leaves as the tree has proxies gives every internal node its exact box at once (one refit
    /// costs less than growing that many leaves' ancestors; it skips the subtrees where nothing
    /// changed for a few updates when fewer than half of the leaves changed), and so does a batch
    /// that changes at least a sixteenth where the last such refit visited less than half of the
    /// tree (most of it standing still); single calls only grow ancestors until the next update.
    pub fn move_proxies(
        &mut self,
        moves: impl IntoIterator<Item = (ProxyId, BoundingBox<V>, V)>,
        result: impl FnMut(ProxyId, Result<bool, TreeError>),
    ) {
        self.move_proxies_on(moves, &CallingThread, result);
    }

    /// [`Self::move_proxies`] with the refit after a large batch run as tasks on `runner`'s
    /// threads (see [`TaskRunner`]): the same results, fat boxes and tree. The decisions and
    /// `result` stay on the calling thread, in the batch's order.
    pub fn move_proxies_on(
        &mut self,
        moves: impl IntoIterator<Item = (ProxyId, BoundingBox<V>, V)>,
        runner: &dyn TaskRunner,
        mut result: impl FnMut(ProxyId, Result<bool, TreeError>),
    ) {
        let mut batch = Batch::new(self, runner);
        for (id, tight, displacement) in moves {
            batch.decide(id, tight, displacement, &mut result);
        }
    }
}
