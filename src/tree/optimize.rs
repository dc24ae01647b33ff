//! Incremental optimization: rebuilding a little of the tree after every update, so that
//! it stays good while its boxes wander.
//!
//! Moves grow ancestors in place and rotations only swap neighbours, so a leaf that drifts
//! away from its siblings keeps them, and their common ancestors, large; left alone, a tree
//! of boxes that all move degrades steadily (after 300 steps of the "uniform boxes, fast"
//! benchmark its internal nodes' summed area had doubled in 2D and grown sixfold in 3D).
//! Rebuilding parts of it with the binned SAH split of [`DynamicTree::rebuild`] repairs
//! that at a bounded cost per step, in the spirit of parry's `Bvh::optimize_incremental`.

use crate::Vector;
use crate::tree::{DynamicTree, NodeId};

/// Where the incremental optimization stands.
#[derive(Clone, Debug, Default)]
pub(crate) struct Optimizer {
    /// Changed subtrees of about [`Self::subtree_height`], found by the last refit.
    pub candidates: Vec<NodeId>,
    /// Moves since the last optimization.
    changes: usize,
    /// Optimizations run so far.
    runs: u32,
}

/// `ceil(log2(x))` for `x >= 1`, as a height.
fn ceil_log2(x: f32) -> u16 {
    x.max(1.0).log2().ceil() as u16
}

impl Optimizer {
    /// Height of the subtrees rebuilt from their leaves: about `4 * sqrt(n)` leaves, and at
    /// least 2.
    pub fn subtree_height(&self, proxies: usize) -> u16 {
        ceil_log2(4.0 * (proxies as f32).sqrt()).max(2)
    }

    /// Height of the subtrees kept whole when the top of the tree is rebuilt: about
    /// `sqrt(n)` leaves each, so about `sqrt(n)` of them.
    fn top_keep_height(proxies: usize) -> u16 {
        ceil_log2((proxies as f32).sqrt()).max(1)
    }
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Called after each pair update (marks already cleared) with the number of proxies
    /// that had moved.
    ///
    /// Runs once the moves since the last run reach 1/16 of the proxies (every update when
    /// most boxes move, now and then when few do; never for a static tree). A run:
    /// - rebuilds, from their leaves, candidate subtrees (changed subtrees of about
    ///   `4 * sqrt(n)` leaves noted by the refit, so the work goes where boxes moved),
    ///   starting at a different candidate each run, until about `n / 20` leaves have been
    ///   placed anew (at least one subtree);
    /// - every other run, rebuilds the top of the tree over its subtrees of about
    ///   `sqrt(n)` leaves, kept whole, which regroups them; together with the subtree
    ///   rebuilds this lets a leaf migrate to the part of the tree it has moved into.
    ///
    /// A candidate is checked again before it is rebuilt (an earlier rebuild may have freed
    /// and reused its node): it must be an internal node of at most the subtree height
    /// whose parent is above that height.
    pub(crate) fn optimize(&mut self, moved: usize) {
        let n = self.proxy_count;
        self.optimizer.changes += moved;
        if self.root.is_null() || n < 16 || self.optimizer.changes * 16 < n {
            self.optimizer.candidates.clear();
            return;
        }
        self.optimizer.changes = 0;
        self.optimizer.runs = self.optimizer.runs.wrapping_add(1);
        let runs = self.optimizer.runs;

        let subtree_height = self.optimizer.subtree_height(n);
        let budget = (n / 10).max(1);
        let candidates = core::mem::take(&mut self.optimizer.candidates);
        let count = candidates.len();
        if count > 0 {
            let start = (runs as usize).wrapping_mul(0x9E37_79B9) % count;
            let mut rebuilt = 0;
            for k in 0..count {
                let id = candidates[(start + k) % count];
                let node = &self.nodes[id.index()];
                let valid = node.is_allocated()
                    && !node.is_leaf()
                    && node.height <= subtree_height
                    && (node.parent.is_null()
                        || self.nodes[node.parent.index()].height > subtree_height);
                if !valid {
                    continue;
                }
                self.rebuild_subtree(id, 0);
                rebuilt += self.scratch.items.len();
                if rebuilt >= budget {
                    break;
                }
            }
        }
        self.optimizer.candidates = candidates;
        self.optimizer.candidates.clear();

        if runs % 2 == 1 {
            self.rebuild_subtree(self.root, Optimizer::top_keep_height(n));
        }
    }
}
