//! Which search an update takes, the walk or leaf by leaf, from what each has cost
//! recently.

use crate::Vector;
use crate::tree::DynamicTree;
use crate::tree::constants::{LEAF_VISIT_COST, LEAVES_BELOW, PROBE_EVERY};

/// How a pair update finds its pairs, serial or parallel.
///
/// The walk of [`DynamicTree::refit_and_pairs`] goes down two changed subtrees side by
/// side, sharing the work of many moved leaves' paths. Where the moved leaves are few and
/// scattered and boxes touch (a packed crowd, a wall of crates), a changed subtree's box
/// overlaps its neighbours' along whole faces: the walk follows those faces far down on
/// both sides before it narrows to the moved leaves, where a walk from each moved leaf
/// ([`DynamicTree::pairs_by_leaves`]) narrows at once. Which wins depends on the shapes, so
/// the tree measures: each search notes the nodes it visited and the proxies moved, as
/// running averages; an update with fewer than one proxy in [`LEAVES_BELOW`] moved takes
/// the one that has cost less per moved proxy recently (leaf-by-leaf visits weighted by
/// [`LEAF_VISIT_COST`]), and every [`PROBE_EVERY`] such updates runs the other once.
/// Updates with more moves always walk.
///
/// Cases: a search never run yet is run (the walk first); counts alone decide, so the
/// same operations give the same searches and order of pairs. A parallel walk's count
/// includes the levels its split unrolled, so it does not depend on the number of tasks;
/// it differs from a serial walk's (which counts its refits), so a tree updated both ways
/// chooses from both.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Search {
    walk: SearchCost,
    leaves: SearchCost,
    /// Updates that could search leaf by leaf since the search not preferred last ran.
    since_probe: u32,
}

/// Running averages of one search's nodes visited and proxies moved per update (zero
/// before its first run).
#[derive(Clone, Copy, Debug, Default)]
struct SearchCost {
    visits: f32,
    moves: f32,
}

impl SearchCost {
    fn known(self) -> bool {
        self.moves > 0.0
    }
}

impl Search {
    /// Whether an update with `moved` of `proxies` moved searches leaf by leaf; counts the
    /// update.
    pub(crate) fn by_leaves(&mut self, moved: usize, proxies: usize) -> bool {
        if moved.saturating_mul(LEAVES_BELOW) >= proxies {
            return false;
        }
        if !self.walk.known() {
            return false;
        }
        if !self.leaves.known() {
            return true;
        }
        let (walk, leaves) = (self.walk, self.leaves);
        let preferred = leaves.visits * LEAF_VISIT_COST * walk.moves < walk.visits * leaves.moves;
        self.since_probe += 1;
        if self.since_probe >= PROBE_EVERY {
            self.since_probe = 0;
            return !preferred;
        }
        preferred
    }

    #[cfg(test)]
    pub(crate) fn ran_both(&self) -> bool {
        self.walk.known() && self.leaves.known()
    }

    /// Notes the cost of an update's search: `visited` nodes for `moved` of `proxies`.
    /// Only updates that could search leaf by leaf are noted, so that the two costs come
    /// from like updates; one with nothing moved teaches nothing.
    ///
    /// Visits and moves are averaged apart, over the last few runs, and compared as a
    /// ratio: the updates with many moves weigh most, as they do in time (a walk for a
    /// handful of moves visits many nodes per move, and costs next to nothing).
    pub(crate) fn note(&mut self, by_leaves: bool, visited: u64, (moved, proxies): (usize, usize)) {
        if moved == 0 || visited == 0 || moved.saturating_mul(LEAVES_BELOW) >= proxies {
            return;
        }
        let noted = if by_leaves {
            &mut self.leaves
        } else {
            &mut self.walk
        };
        let (visits, moves) = (visited as f32, moved as f32);
        *noted = if noted.known() {
            SearchCost {
                visits: 0.75 * noted.visits + 0.25 * visits,
                moves: 0.75 * noted.moves + 0.25 * moves,
            }
        } else {
            SearchCost { visits, moves }
        };
    }
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Whether this update searches leaf by leaf (see [`Search`]), counted in
    /// [`TreeStats::leaf_searches`](crate::TreeStats::leaf_searches) when it does.
    pub(crate) fn choose_search(&mut self) -> bool {
        let by_leaves = self.search.by_leaves(self.moved_count, self.proxy_count);
        self.leaf_searches += u64::from(by_leaves);
        by_leaves
    }
}
