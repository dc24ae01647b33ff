//! Incremental optimization: rebuilding a little of the tree after every update, so that it
//! stays good while its boxes wander.
//!
//! Moves grow ancestors in place and rotations only swap neighbours, so a leaf that drifts
//! away from its siblings keeps them, and their common ancestors, large: left alone, a tree
//! of moving boxes degrades steadily. Rebuilding parts of it with the binned SAH split of
//! [`DynamicTree::build`] (`DynamicTree::rebuild_subtree`) repairs that at a bounded cost
//! per step.
//!
//! Where only some boxes move, the rebuilds set still and moving boxes apart: mixed in one
//! subtree, a moving box widens every node above its still neighbours as it goes, and the
//! pair walk then tests the still boxes under those wide nodes again and again.
//!
//! A rebuild is planned ([`plan`], which may run on another thread) and then written over
//! the slots the old subtree held, laid out depth first ([`layout`]).

use crate::Vector;
use std::sync::PoisonError;

use crate::tree::constants::{LEAVES_PER_MOVES, MAX_PLANS, STILL_AFTER};
use crate::tree::parallel::runner::TaskRunner;
use crate::tree::{DynamicTree, NodeId};

pub(crate) mod layout;
pub(crate) mod plan;

/// One optimization run: the height of the subtrees it rebuilds, the leaves it may place
/// anew, and the candidate it starts at.
struct Run {
    subtree_height: u16,
    credit: usize,
    start: usize,
}

/// What an optimization run rebuilt: candidates and the items placed anew.
#[derive(Clone, Copy, Default)]
struct Rebuilt {
    candidates: usize,
    items: usize,
}

impl Rebuilt {
    fn add(&mut self, items: usize) {
        self.candidates += 1;
        self.items += items;
    }
}

/// Where the incremental optimization stands.
#[derive(Clone, Debug, Default)]
pub(crate) struct Optimizer {
    /// Changed subtrees of about [`Self::subtree_height`], found by the last refit.
    pub candidates: Vec<NodeId>,
    /// Moves not yet paid for by rebuilds.
    pub changes: usize,
    /// Optimizations run so far.
    pub runs: u32,
    /// Items placed anew per candidate rebuilt, over the last run that rebuilt one (0 before):
    /// how many candidates a parallel run plans ahead for the credit it has.
    pub items_per_candidate: usize,
}

/// `ceil(log2(x))` for `x >= 1`, as a height.
fn ceil_log2(x: f32) -> u16 {
    x.max(1.0).log2().ceil() as u16
}

impl Optimizer {
    /// Height of the subtrees rebuilt from their leaves: about `4 * sqrt(n)` leaves, at least 2.
    pub(crate) fn subtree_height(&self, proxies: usize) -> u16 {
        ceil_log2(4.0 * (proxies as f32).sqrt()).max(2)
    }

    /// Height of the subtrees kept whole when the top of the tree is rebuilt: about
    /// `sqrt(n)` leaves each, so about `sqrt(n)` of them.
    fn top_keep_height(proxies: usize) -> u16 {
        ceil_log2((proxies as f32).sqrt()).max(1)
    }
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Called after each pair update (marks already cleared).
    ///
    /// The work follows the moves: every move that changed a fat box (counted by `move_proxy`
    /// and the batches; new proxies are placed well and count for nothing) earns the right
    /// to place 1/[`LEAVES_PER_MOVES`] of a leaf anew; a fat box changes each time its proxy
    /// has gone about a margin, fast or slow, so this measures the damage done. Once the
    /// credit covers a subtree of the rebuild size (about `4 * sqrt(n)` leaves), a run:
    /// - rebuilds candidate subtrees (changed subtrees of that size noted by the refit, so the
    ///   work goes where boxes moved), starting at a different candidate each run, while
    ///   credit is left (at most `n / 10` leaves a run). A candidate's parts where nothing
    ///   moved for [`STILL_AFTER`] updates are kept whole on one side of its top, the rest is
    ///   rebuilt from its leaves on the other: still boxes stay in tight subtrees that are not
    ///   rebuilt again while still, and moving boxes are rebuilt among themselves;
    /// - every other run, rebuilds the top of the tree over its subtrees of about `sqrt(n)`
    ///   leaves, kept whole, which regroups them (still parts included), so that a leaf can
    ///   migrate to the part of the tree it has moved into.
    ///
    /// A static tree is never touched. Each candidate is checked again before its rebuild
    /// (see [`Self::is_candidate`]).
    pub(crate) fn optimize(&mut self) {
        let Some(run) = self.start_optimizing() else {
            return;
        };
        let candidates = core::mem::take(&mut self.optimizer.candidates);
        let count = candidates.len();
        let mut rebuilt = Rebuilt::default();
        for k in 0..count {
            let id = candidates[(run.start + k) % count];
            if self.is_candidate(id, run.subtree_height) {
                rebuilt.add(self.rebuild_subtree(id, 0, STILL_AFTER));
                if rebuilt.items >= run.credit {
                    break;
                }
            }
        }
        self.optimizer.candidates = candidates;
        self.finish_optimizing(&run, rebuilt);
    }

    /// [`Self::optimize`] with the candidates' rebuilds planned ahead on `runner`'s threads
    /// (see `tree::rebuild::plan`): the same rebuilds in the same order, so the same tree.
    ///
    /// The candidates valid now are planned a batch at a time, about as many as the credit
    /// left will take, each plan on any thread (a plan only reads the tree); the plans are
    /// then carried out in the candidates' order, each candidate checked again first, as the
    /// serial run does. The valid candidates' subtrees share no node (each hangs from a node
    /// above the rebuild height, and holds none), so carrying out one plan leaves the others
    /// exact. A candidate that became valid only after an earlier rebuild (it got lower, or
    /// its parent taller) is rebuilt there and then, and the candidates after it are planned
    /// again.
    pub(crate) fn optimize_on(&mut self, runner: &dyn TaskRunner)
    where
        T: Sync,
    {
        if runner.threads() <= 1 {
            self.optimize();
            return;
        }
        let Some(run) = self.start_optimizing() else {
            return;
        };
        let candidates = core::mem::take(&mut self.optimizer.candidates);
        let mut plans = core::mem::take(&mut self.scratch.plans);
        let mut ahead = core::mem::take(&mut self.scratch.ahead);
        let count = candidates.len();
        let at = |k: usize| candidates[(run.start + k) % count];
        // Items of a typical candidate (those of the last run, else half a full subtree of
        // the height): the credit left over this, plus one, is about how many more candidates
        // the run takes. A batch that falls short is followed by another, a stage of its own.
        let per_candidate = match self.optimizer.items_per_candidate {
            0 => (1usize << (run.subtree_height - 1)) / 2,
            items => items,
        };
        let mut rebuilt = Rebuilt::default();
        let mut k = 0;
        while k < count && rebuilt.items < run.credit {
            let wanted = ((run.credit - rebuilt.items) / per_candidate.max(1) + 1).min(MAX_PLANS);
            ahead.clear();
            let mut next = k;
            while next < count && ahead.len() < wanted {
                let id = at(next);
                // A candidate listed twice is rebuilt again in turn, from the tree as the
                // first rebuild left it: planned then, not now.
                if self.is_candidate(id, run.subtree_height)
                    && !ahead.iter().any(|&planned| at(planned) == id)
                {
                    ahead.push(next);
                }
                next += 1;
            }
            if plans.len() < ahead.len() {
                plans.resize_with(ahead.len(), Default::default);
            }
            let tree = &*self;
            let (plans_ref, ahead_ref) = (&plans, &ahead);
            runner.run(ahead.len(), &|task| {
                // The plan is made out of the array and put back, so that its buffers' lengths
                // live in this thread's own memory meanwhile, not on cache lines that the
                // neighbouring plans share. The lock is never contended (one task per plan)
                // nor poisoned (a panic in a task goes on in the calling thread before any
                // plan is read).
                let lock = || {
                    plans_ref[task]
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                };
                let mut plan = core::mem::take(&mut *lock());
                tree.plan_rebuild(at(ahead_ref[task]), 0, STILL_AFTER, &mut plan);
                *lock() = plan;
            });
            let mut planned = ahead.iter().enumerate().peekable();
            while k < next && rebuilt.items < run.credit {
                let plan = planned.next_if(|&(_, &position)| position == k);
                let id = at(k);
                k += 1;
                if !self.is_candidate(id, run.subtree_height) {
                    continue;
                }
                match plan {
                    Some((task, _)) => {
                        let plan = plans[task]
                            .get_mut()
                            .unwrap_or_else(PoisonError::into_inner);
                        self.apply_rebuild(plan);
                        rebuilt.add(plan.items.len());
                    }
                    None => {
                        // Not planned: an earlier rebuild made it a candidate. Its subtree
                        // may hold planned candidates that stopped being ones, and its
                        // rebuild may make them candidates again, with plans of nodes it has
                        // rewritten: the rest of the batch is planned again.
                        rebuilt.add(self.rebuild_subtree(id, 0, STILL_AFTER));
                        break;
                    }
                }
            }
        }
        self.scratch.plans = plans;
        self.scratch.ahead = ahead;
        self.optimizer.candidates = candidates;
        self.finish_optimizing(&run, rebuilt);
    }

    /// Whether `id` is still a candidate to rebuild (an earlier rebuild may have freed and
    /// reused the node, or changed the heights around it): an internal node of at most
    /// `subtree_height` whose parent is above that height, and not still itself (nothing to
    /// rebuild there).
    fn is_candidate(&self, id: NodeId, subtree_height: u16) -> bool {
        let node = &self.nodes[id.index()];
        node.is_allocated()
            && node.height <= subtree_height
            && (node.parent.is_root()
                || self.nodes[node.parent.parent().index()].height > subtree_height)
            && self.mark_age(self.slot_stamp(node.parent)) < STILL_AFTER
    }

    /// The start of an optimization run: `None` (and the candidates dropped) when the credit
    /// does not cover a subtree of the rebuild size yet.
    fn start_optimizing(&mut self) -> Option<Run> {
        let n = self.proxy_count;
        let subtree_height = self.optimizer.subtree_height(n);
        // Leaves of a typical subtree of that height.
        let subtree_leaves = 1usize << (subtree_height - 1);
        let credit = (self.optimizer.changes / LEAVES_PER_MOVES).min(n / 10);
        if self.root.is_null() || n < 16 || credit < subtree_leaves.min(n / 10) {
            self.optimizer.candidates.clear();
            return None;
        }
        self.optimizer.runs = self.optimizer.runs.wrapping_add(1);
        let count = self.optimizer.candidates.len().max(1);
        Some(Run {
            subtree_height,
            credit,
            start: (self.optimizer.runs as usize).wrapping_mul(0x9E37_79B9) % count,
        })
    }

    /// The end of an optimization run: the credit spent, the candidates dropped, the
    /// items per candidate noted, and every other run the top of the tree rebuilt.
    fn finish_optimizing(&mut self, run: &Run, rebuilt: Rebuilt) {
        self.optimizer.candidates.clear();
        if rebuilt.candidates > 0 {
            self.optimizer.items_per_candidate = rebuilt.items.div_ceil(rebuilt.candidates);
        }
        let rebuilt = rebuilt.items;
        // Spend what was used (and drop what could not be: no candidates).
        self.optimizer.changes = self
            .optimizer
            .changes
            .saturating_sub(rebuilt.max(run.credit) * LEAVES_PER_MOVES);
        if self.optimizer.runs % 2 == 1 {
            self.rebuild_subtree(self.root, Optimizer::top_keep_height(self.proxy_count), 0);
        }
    }
}
