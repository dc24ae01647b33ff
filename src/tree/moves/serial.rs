//! Batches on the calling thread: `move_proxies` and caller-set fat boxes (`set_fat_boxes_on`).

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::parallel::CallingThread;
#[cfg(any(feature = "plugin", test))]
use crate::tree::parallel::TaskRunner;
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
        mut result: impl FnMut(ProxyId, Result<bool, TreeError>),
    ) {
        let mut batch = Batch::new(self, &CallingThread);
        for (id, tight, displacement) in moves {
            batch.decide(id, tight, displacement, &mut result);
        }
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

    /// [`Self::set_fat_box`] for many proxies: the same as one call per `(id, fat)`, in order, with
    /// `result` told each call's outcome, but the leaves' ancestors are updated in memory order
    /// (see [`Self::move_proxies`]), and the refit after a large batch runs its tasks on `runner`
    /// (see [`Self::apply_pending`]). For the plugin, which keeps each proxy's fat box and decides
    /// itself which moves change it ([`Self::keeps_fat_box`], [`Self::fatten`]).
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
}
