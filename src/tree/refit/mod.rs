//! Refits: giving internal nodes their exact boxes back after moves grew them.
//!
//! Every refit lives here, except the one node step every operation uses
//! (`DynamicTree::refit_node`, in `arena.rs`):
//! - of the changed paths alone, children first (`refit_order`), as [`DynamicTree::refit`]
//!   does for a few moves and the parallel or leaf-by-leaf update does before its search
//!   (`refit_changed`);
//! - during the pair walk, node by node as the walk comes back up (`refit_changed_node`,
//!   called from `pairs/walk.rs`), rotating when few proxies moved;
//! - of the whole tree or its recent subtrees in one pass after a large batch of moves
//!   (`refit_all`, `refit_recent`), depth first;
//! - the same as tasks on several threads ([`parallel`]).

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::arena::age_at;
use crate::tree::{DynamicTree, Link, NodeId, Stamp};

use crate::tree::constants::BULK_FROM;
use crate::tree::constants::{MAX_RECURSIVE_REFIT, RECENT, ROTATE_BELOW, ROTATE_MAX_HEIGHT};

use crate::tree::moves::set_bits;

pub(crate) mod parallel;

impl<V: Vector, T> DynamicTree<V, T> {
    /// Finishes a step of moves without looking for pairs: every internal node gets its exact box
    /// back, the moves are forgotten and the tree improves itself as after [`Self::update_pairs`].
    /// For a tree whose proxies are never paired with each other (a level's static colliders,
    /// found only by queries and by the searches of another tree's proxies).
    ///
    /// A few moves refit only the paths from the moved leaves up, so that moving one proxy of a
    /// large tree costs a path, not the tree; at least one moved leaf in eight refits the whole
    /// tree in memory order (`BULK_FROM`).
    pub fn refit(&mut self) {
        self.optimizer.candidates.clear();
        if self.moved_count.saturating_mul(BULK_FROM) >= self.len() {
            self.refit_all();
        } else {
            self.refit_order(true, |tree, id| tree.refit_node(id));
        }
        self.finish_update();
    }

    /// Gives every internal node its exact box, children first, and marks it changed when a child
    /// is; the pair walk then finds the boxes exact and leaves them alone.
    pub(super) fn refit_all(&mut self) -> usize {
        self.refit_younger_than(u16::MAX)
    }

    /// [`Self::refit_all`] over the recent subtrees only (a mark younger than [`RECENT`] updates),
    /// after [`Self::mark_stale_path`] for each of the batch's leaves: every changed leaf then lies
    /// under recent nodes only, so an older subtree keeps its exact boxes.
    pub(super) fn refit_recent(&mut self) -> usize {
        self.refit_younger_than(RECENT.into())
    }

    /// The refit of every internal node that hangs under recent nodes only, recent meaning a mark
    /// younger than `age` updates (`u16::MAX`: every node); returns the internal nodes refitted. A
    /// tree too tall to recurse (rare, given the rotations) is refit whole with a stack.
    pub(crate) fn refit_younger_than(&mut self, age: u16) -> usize {
        let mut visited = 0;
        if self.refits_recursively() {
            let (aabb, changed) = self.refit_below(self.root, self.epoch, age, &mut visited);
            self.root_box = aabb;
            if changed {
                self.root_stamp = self.epoch;
            }
        } else if !self.root.is_null() && !self.root.is_leaf() {
            self.refit_all_stacked();
            visited = self.node_count;
        }
        self.exact = true;
        visited
    }

    /// Whether [`Self::refit_below`] and [`Self::refit_root_parallel`] may recurse from the root.
    pub(super) fn refits_recursively(&self) -> bool {
        !self.root.is_null()
            && !self.root.is_leaf()
            && self.nodes[self.root.index()].height <= MAX_RECURSIVE_REFIT
    }

    /// Makes every ancestor of the leaf at `link` recent ([`RECENT`]) for [`Self::refit_recent`]:
    /// marks each changed, from the leaf's parent up, until one recent already. No mark is more
    /// recent than its holder's (checked by [`Self::validate`]), so all above it are recent too.
    pub(super) fn mark_stale_path(&mut self, link: Link) {
        if link.is_root() {
            return;
        }
        let epoch = self.epoch;
        let mut up = self.nodes[link.parent().index()].parent;
        while !up.is_root() {
            let node = &mut self.nodes[up.parent().index()];
            let stamp = &mut node.stamps[up.slot()];
            if age_at(epoch, *stamp) < RECENT {
                break;
            }
            *stamp = epoch;
            up = node.parent;
        }
    }

    /// [`Self::mark_stale_path`] for the leaf of each proxy whose bit is set in `bits`.
    pub(super) fn mark_stale_paths_of_bits(&mut self, bits: &[u64]) {
        for id in set_bits(bits) {
            if let Some(leaf) = self.leaves.get(id).filter(|leaf| leaf.is_live()) {
                self.mark_stale_path(leaf.parent);
            }
        }
    }

    /// [`Self::refit_all`] with a stack of its own, for any height.
    fn refit_all_stacked(&mut self) {
        self.refit_order(false, |tree, id| tree.refit_node(id));
    }

    /// The refit of the subtree under internal node `id`, depth first: each internal child whose
    /// mark is younger than `age` updates gets its exact box in `id`'s slot, and its mark when it
    /// holds a changed child (an older one holds no change, see [`Self::refit_recent`], and keeps
    /// both). Returns `id`'s exact box and whether it holds a changed child, for the caller's slot,
    /// so that each node is read and written once. Heights stay (moves change no shape); recursion
    /// depth is the height. Each node refitted counts in `visited`.
    fn refit_below(
        &mut self,
        id: NodeId,
        epoch: Stamp,
        age: u16,
        visited: &mut usize,
    ) -> (BoundingBox<V>, bool) {
        *visited += 1;
        let node = &self.nodes[id.index()];
        let (mut boxes, mut stamps, children) = (node.boxes, node.stamps, node.children);
        for k in 0..2 {
            if !children[k].is_leaf() && u16::from(age_at(epoch, stamps[k])) < age {
                let (aabb, changed) = self.refit_below(children[k], epoch, age, visited);
                boxes[k] = aabb;
                if changed {
                    stamps[k] = epoch;
                }
            }
        }
        let node = &mut self.nodes[id.index()];
        node.boxes = boxes;
        node.stamps = stamps;
        (
            boxes[0].merged(&boxes[1]),
            (stamps[0] == epoch) | (stamps[1] == epoch),
        )
    }

    /// Calls `visit` on every internal node (with `changed_only`, on the root and the changed
    /// nodes below it), children before parents: the order of a refit.
    pub(crate) fn refit_order(
        &mut self,
        changed_only: bool,
        mut visit: impl FnMut(&mut Self, NodeId),
    ) {
        if self.root.is_null() || self.root.is_leaf() {
            return;
        }
        let epoch = self.epoch;
        // (node, false): expand; (node, true): visit, its children being done.
        let mut stack = core::mem::take(&mut self.scratch.pairs.refits);
        stack.clear();
        // One pending sibling per level, the visited node and the root. Room for height 63 is
        // taken at once, so that a tree taller than ever does not allocate again.
        stack.reserve((2 * self.nodes[self.root.index()].height as usize + 1).max(127));
        stack.push((self.root, false));
        while let Some((id, expanded)) = stack.pop() {
            if expanded {
                visit(self, id);
                continue;
            }
            stack.push((id, true));
            let node = &self.nodes[id.index()];
            for k in [1, 0] {
                let child = node.children[k];
                if !child.is_leaf() && (!changed_only || node.stamps[k] == epoch) {
                    stack.push((child, false));
                }
            }
        }
        self.scratch.pairs.refits = stack;
    }

    /// Whether changed nodes rotate (when fewer than one proxy in [`ROTATE_BELOW`] moved),
    /// and the height of the subtrees the optimizer rebuilds.
    pub(crate) fn refit_settings(&self) -> (bool, u16) {
        (
            self.moved_count * ROTATE_BELOW < self.proxy_count,
            self.optimizer.subtree_height(self.proxy_count),
        )
    }

    /// Whether changed nodes need refit(x): to rotate, or because moves only grew their
    /// ancestors' boxes. Otherwise a refit would only note the optimizer's candidates.
    #[inline]
    pub(crate) fn refits_needed(&self, rotate: bool) -> bool {
        rotate || !self.exact
    }

    /// refit(x) of [`Self::refit_and_pairs`]: gives x its exact box back, rotates it (up
    /// to [`ROTATE_MAX_HEIGHT`]) when few proxies moved (when many did, the rebuilds after
    /// the update do more for the tree, for less), and notes it as a candidate.
    #[inline]
    pub(crate) fn refit_changed_node(&mut self, x: NodeId, rotate: bool, subtree_height: u16) {
        if self.refits_needed(rotate) {
            self.refit_node(x);
        }
        if rotate && self.nodes[x.index()].height <= ROTATE_MAX_HEIGHT {
            self.rotate(x);
        }
        self.note_candidate(x, subtree_height);
    }

    /// Notes the changed node `x` as a candidate for [`Self::optimize`] when it is a
    /// subtree of the size that rebuilds.
    #[inline]
    pub(crate) fn note_candidate(&mut self, x: NodeId, subtree_height: u16) {
        let node = &self.nodes[x.index()];
        let parent = node.parent;
        if node.height <= subtree_height
            && (parent.is_root() || self.nodes[parent.parent().index()].height > subtree_height)
        {
            self.optimizer.candidates.push(x);
        }
    }

    /// The first step of a parallel or leaf-by-leaf update, which leaves the pair search
    /// only reading: refit(N) of the walk for every changed internal node, children first,
    /// or only the candidates noted when no refit is needed.
    pub(crate) fn refit_changed(&mut self) {
        self.optimizer.candidates.clear();
        if !self.has_walk() {
            return;
        }
        let (rotate, subtree_height) = self.refit_settings();
        if self.refits_needed(rotate) {
            self.refit_order(true, |tree, id| {
                tree.refit_changed_node(id, rotate, subtree_height)
            });
        } else {
            self.note_changed_candidates(subtree_height);
        }
    }

    /// Notes the candidates for [`Self::optimize`] that refits would: the changed nodes of
    /// at most `subtree_height` whose parent is higher, found from the root down without
    /// visiting the changed nodes below them (after a large batch of moves, most of them).
    fn note_changed_candidates(&mut self, subtree_height: u16) {
        let epoch = self.epoch;
        let mut stack = core::mem::take(&mut self.scratch.pairs.walk);
        stack.clear();
        stack.push(self.root);
        while let Some(id) = stack.pop() {
            let node = &self.nodes[id.index()];
            if node.height <= subtree_height {
                self.optimizer.candidates.push(id);
                continue;
            }
            for k in [1, 0] {
                let child = node.children[k];
                if !child.is_leaf() && node.stamps[k] == epoch {
                    stack.push(child);
                }
            }
        }
        self.scratch.pairs.walk = stack;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // A failed unwrap is a failed test.
mod tests {
    use glam::Vec2;

    use super::*;

    /// The three refits after a batch of leaf writes give the same boxes and marks: the
    /// whole-tree refit (recursive), the same with a stack (for tall trees), and the refit
    /// of the recent subtrees only after their ancestors are marked (neither changes a
    /// height: the recursive ones never write them, the stacked one recomputes them).
    /// The tree first stands still for longer than [`RECENT`] updates, and the batch then
    /// moves the leaves of one region only, so that the recent refit skips most of it.
    #[test]
    fn refits_agree() {
        let mut tree = DynamicTree::<Vec2, u32>::with_margin(0.05);
        let mut seed = 12345u32;
        let mut r = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        let mut ids = Vec::new();
        for k in 0..2000 {
            let c = Vec2::new(r() * 100.0, r() * 100.0);
            let b = BoundingBox::from_center_half_extents(c, Vec2::splat(0.5));
            ids.push(tree.create_proxy(b, k).unwrap());
        }
        let mut pairs = Vec::new();
        for _ in 0..=RECENT {
            tree.update_pairs(&mut pairs);
        }
        assert!(
            tree.mark_age(tree.root_stamp) >= RECENT,
            "the tree stood still"
        );
        let mut items = Vec::new();
        for &id in &ids {
            let center = tree.fat_box(id).unwrap().center();
            if center.x < 30.0 && center.y < 50.0 {
                let c = center + Vec2::new(r() - 0.5, r() - 0.5) * 4.0;
                let b = BoundingBox::from_center_half_extents(c, Vec2::splat(0.5));
                if let Some((link, fat)) = tree.new_fat_box(id, b, Vec2::ZERO).unwrap() {
                    tree.write_slot(link, fat);
                    items.push((link, fat));
                }
            }
        }
        assert!(
            items.len() > 100 && items.len() < 500,
            "{} moved",
            items.len()
        );
        let mut stacked = tree.clone();
        let mut recent = tree.clone();
        assert_eq!(tree.refit_all(), tree.node_count, "every node refitted");
        stacked.refit_all_stacked();
        for &(link, _) in &items {
            recent.mark_stale_path(link);
        }
        let visited = recent.refit_recent();
        assert!(
            visited > 0 && 2 * visited < recent.node_count,
            "{visited} refitted"
        );
        for other in [&stacked, &recent] {
            tree.validate().unwrap();
            other.validate().unwrap();
            assert_eq!(tree.root_box, other.root_box);
            assert_eq!(tree.root_stamp, other.root_stamp);
            assert_eq!(tree.nodes.len(), other.nodes.len());
            for (a, b) in tree.nodes.iter().zip(&other.nodes) {
                assert_eq!(
                    (a.boxes, a.stamps, a.children, a.height),
                    (b.boxes, b.stamps, b.children, b.height)
                );
            }
        }
        // Most of the tree stayed old: the recent refit had most of it to skip.
        let old = recent
            .nodes
            .iter()
            .filter(|node| node.is_allocated())
            .flat_map(|node| node.stamps)
            .filter(|&stamp| recent.mark_age(stamp) >= RECENT)
            .count();
        assert!(old > 2000, "{old} old marks");
    }
}
