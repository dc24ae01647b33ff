//! How a batch's changed leaves reach their ancestors: grown walk by walk in memory order, or left
//! to one refit when many changed.

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::constants::{
    BULK_FROM, LANES, MID_BULK_FROM, RECENT, RECENT_BELOW, REGION_BITS, UNCONDITIONAL_LEVELS,
};
use crate::tree::parallel::runner::TaskRunner;
use crate::tree::{DynamicTree, Link, ProxyId};

use super::{PendingMoves, set_bit, set_bits};

impl<V: Vector, T> DynamicTree<V, T> {
    /// Stores the pending leaves' new boxes in their parents' slots (unless the move cache is off:
    /// they are there already, see [`Self::store_fat_box`]) and updates their ancestors (see
    /// [`BULK_FROM`], [`MID_BULK_FROM`], [`RECENT_BELOW`]): grown leaf by leaf, in memory order
    /// from `sort_from` on, or by one refit of the recent subtrees ([`RECENT`]) or the whole tree.
    ///
    /// With more than one thread and the move cache on, that refit runs in parallel and stores the
    /// leaves' boxes itself, by their proxies' bits, spreading those scattered writes over the
    /// threads too (see [`Self::refit_root_parallel`]). The changes that a parallel batch's tasks
    /// stored themselves come as bits only ([`PendingMoves::changed`]): that refit reads them as
    /// they are, and any other update lists them first ([`Self::list_bits`]).
    pub(crate) fn apply_pending(&mut self, pending: &mut PendingMoves<V>, runner: &dyn TaskRunner) {
        let count = pending.moves.len() + pending.in_bits;
        let proxies = self.proxy_count;
        let sort_from = self.thresholds.sort_from;
        let bulk = count >= sort_from
            && (count * BULK_FROM >= proxies
                || (count * MID_BULK_FROM >= proxies && self.recent_refits.refit_pays()));
        let parallel = bulk && runner.threads() > 1 && self.move_cache && self.refits_recursively();
        if !parallel && pending.in_bits > 0 {
            self.list_bits(pending);
        }
        if bulk {
            let recent = count * RECENT_BELOW < self.proxy_count;
            if parallel {
                pending.changed.resize(self.leaves.len().div_ceil(64), 0);
                for id in &pending.ids {
                    set_bit(&mut pending.changed, id.index());
                }
                pending.in_bits = 0;
                if recent {
                    self.mark_stale_paths_of_bits(&pending.changed);
                }
            } else {
                self.write_slots(&pending.moves);
                if recent {
                    for &(link, _) in &pending.moves {
                        self.mark_stale_path(link);
                    }
                }
            }
            let visited = if parallel {
                let age = if recent { RECENT.into() } else { u16::MAX };
                let visited = self.refit_root_parallel(age, &pending.changed, runner);
                pending.changed.fill(0);
                visited
            } else if recent {
                self.refit_recent()
            } else {
                self.refit_all()
            };
            if recent {
                self.recent_refits.note(visited, self.node_count);
            }
        } else if count < sort_from {
            for &(link, fat) in &pending.moves {
                self.set_leaf_box(link, fat);
            }
        } else {
            self.group_by_place(pending);
            self.write_slots(&pending.sorted);
            self.grow_ancestors_interleaved(&pending.sorted);
        }
    }

    /// [`Self::write_slot`] for each `(link, fat)`, in order, when the move cache is on.
    fn write_slots(&mut self, items: &[(Link, BoundingBox<V>)]) {
        if self.move_cache {
            for &(link, fat) in items {
                self.write_slot(link, fat);
            }
        }
    }

    /// [`Self::grow_from`] for each `(link, fat)` (its slot holding `fat` already), with [`LANES`]
    /// walks up the tree in flight at once, one step of each in turn.
    ///
    /// A walk is a chain of dependent loads, so one walk at a time waits for each miss in turn;
    /// interleaved walks keep several misses outstanding. The outcome is that of serial walks: an
    /// ancestor's box ends as its old box grown by the box of every moved leaf below it, in any
    /// order. A walk stops at a node that already encloses its box and is marked; if another walk
    /// made it so and has not yet grown the ancestors above, that walk will, by a covering box.
    fn grow_ancestors_interleaved(&mut self, items: &[(Link, BoundingBox<V>)]) {
        // Each lane: the slot of the next ancestor's box, the box, the level (1: the parent).
        let mut lanes: [Option<(Link, BoundingBox<V>, u32)>; LANES] = [None; LANES];
        let mut next = 0;
        for lane in &mut lanes {
            *lane = self.next_walk(items, &mut next);
        }
        let mut active = lanes.iter().filter(|lane| lane.is_some()).count();
        while active > 0 {
            for lane in &mut lanes {
                let Some((link, fat, level)) = *lane else {
                    continue;
                };
                *lane = match self.grow_step(link, &fat) {
                    (done, Some(up)) if !(done & (level >= UNCONDITIONAL_LEVELS)) => {
                        Some((up, fat, level + 1))
                    }
                    _ => {
                        // This walk is over: start the next one in its lane.
                        let refill = self.next_walk(items, &mut next);
                        active -= usize::from(refill.is_none());
                        refill
                    }
                };
            }
        }
    }

    /// The next walk up of `items` from `*next` on: the slot of the leaf's parent's box, the box,
    /// level 1 (a leaf at the root has no ancestor and is skipped); `None` when none is left.
    #[inline(always)]
    fn next_walk(
        &self,
        items: &[(Link, BoundingBox<V>)],
        next: &mut usize,
    ) -> Option<(Link, BoundingBox<V>, u32)> {
        while let Some(&(link, fat)) = items.get(*next) {
            *next += 1;
            if !link.is_root() {
                return Some((self.nodes[link.parent().index()].parent, fat, 1));
            }
        }
        None
    }

    /// Puts `pending.moves` into `pending.sorted` grouped by the arena region of the leaves'
    /// parents (small enough to stay in cache while worked through) with a stable counting sort:
    /// two moves of one proxy keep their order; a leaf at the root counts in region 0.
    fn group_by_place(&self, pending: &mut PendingMoves<V>) {
        let regions = (self.nodes.len() >> REGION_BITS) + 1;
        let region = |link: Link| {
            if link.is_root() {
                0
            } else {
                link.parent().index() >> REGION_BITS
            }
        };
        let PendingMoves {
            moves,
            sorted,
            starts,
            ..
        } = pending;
        starts.clear();
        starts.resize(regions + 1, 0);
        for &(link, _) in moves.iter() {
            starts[region(link) + 1] += 1;
        }
        for r in 1..=regions {
            starts[r] += starts[r - 1];
        }
        sorted.clear();
        sorted.resize(moves.len(), (Link::ROOT, BoundingBox::default()));
        for &(link, fat) in moves.iter() {
            let slot = &mut starts[region(link)];
            sorted[*slot as usize] = (link, fat);
            *slot += 1;
        }
    }

    /// Lists the changes noted by their bits ([`PendingMoves::in_bits`]) after the others, in proxy
    /// order, each live leaf's link with its box from the move cache; clears the bits.
    fn list_bits(&self, pending: &mut PendingMoves<V>) {
        for id in set_bits(&pending.changed) {
            let leaf = self.leaves.get(id).filter(|leaf| leaf.is_live());
            if let (Some(leaf), Some(&fat)) = (leaf, self.fat_boxes.get(id)) {
                pending.moves.push((leaf.parent, fat));
                pending.ids.push(ProxyId(id as u32));
            }
        }
        pending.changed.fill(0);
        pending.in_bits = 0;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // A failed unwrap is a failed test.
mod tests {
    use glam::Vec2;

    use super::*;
    use crate::tree::moves::REMEASURE_EVERY;
    use crate::tree::parallel::runner::CallingThread;

    /// A batch of middling size (between one changed leaf in [`MID_BULK_FROM`] and one in
    /// [`BULK_FROM`]) refits the recent subtrees in one pass where the moved leaves keep
    /// to one region and the rest stands still, and grows the ancestors where the moves
    /// are scattered over the whole tree, after the refit that measured it. Either way the
    /// tree stays valid and reports the pairs a brute-force check finds.
    #[test]
    fn middling_batches_refit_where_most_stands_still() {
        use crate::tree::tests::{LATTICE_SIDE, lattice_box, lattice_tree};
        for region in [true, false] {
            let (mut tree, ids) = lattice_tree(usize::from(RECENT) + 1);
            let mut pairs = Vec::new();
            let (mut refitted, mut found) = (Vec::new(), 0);
            for update in 1..=40usize {
                // A region of 16 × 24 cells, or every eleventh proxy (a different set at
                // each update): a sixteenth to an eighth of the proxies. Every move leaves
                // the fat box, so each changes a leaf.
                let moving: Vec<usize> = (0..ids.len())
                    .filter(|&i| {
                        if region {
                            i % LATTICE_SIDE < 16 && i / LATTICE_SIDE < 24
                        } else {
                            (i + update) % 11 == 0
                        }
                    })
                    .collect();
                let count = moving.len();
                assert!(count >= tree.batch_thresholds().sort_from, "{count}");
                assert!(count * MID_BULK_FROM >= ids.len() && count * BULK_FROM < ids.len());
                let moves = moving
                    .iter()
                    .map(|&i| (ids[i], lattice_box(i, update), Vec2::ZERO));
                tree.move_proxies(moves, |id, result| {
                    assert_eq!(result, Ok(true), "{id:?} left its fat box");
                });
                refitted.push(tree.exact);
                tree.validate().unwrap();
                pairs.clear();
                tree.update_pairs(&mut pairs);
                tree.validate().unwrap();
                let boxes: Vec<_> = ids.iter().map(|&id| tree.fat_box(id).unwrap()).collect();
                let mut moved = vec![false; ids.len()];
                moving.iter().for_each(|&i| moved[i] = true);
                let mut want = Vec::new();
                for &i in &moving {
                    for (j, b) in boxes.iter().enumerate() {
                        if j != i && boxes[i].overlaps(b) && !(moved[j] && j < i) {
                            want.push((ids[i].min(ids[j]), ids[i].max(ids[j])));
                        }
                    }
                }
                want.sort();
                pairs.sort();
                assert_eq!(pairs, want, "update {update}, region {region}");
                found += want.len();
            }
            assert!(found > 0, "region {region}");
            if region {
                assert!(refitted.iter().all(|&r| r), "{refitted:?}");
            } else {
                // The first batches measure; once the recent part covers most of the tree,
                // the next REMEASURE_EVERY batches grow ancestors, and the one after
                // measures again.
                let first = refitted.iter().position(|&r| !r).unwrap();
                assert!((1..=4).contains(&first), "{refitted:?}");
                let grown = first + REMEASURE_EVERY as usize;
                assert!(refitted[first..grown].iter().all(|&r| !r), "{refitted:?}");
                assert!(refitted[grown], "{refitted:?}");
            }
        }
    }

    /// Changes noted by their bits alone, as a parallel batch's tasks note those they
    /// store, then applied on the calling thread (where the batch is not refitted in
    /// parallel: too few changes, or a tree too tall for the recursive refit), give the
    /// same tree bit for bit as the same moves through `move_proxies`, for batches that
    /// refit the whole tree, refit the recent subtrees (a large batch, and a middling
    /// one) and grow ancestors one by one; and they leave no bit set. (A proxy given
    /// twice is the one case where a batch that grows ancestors may end tighter than
    /// `move_proxies`, as `DynamicTree::move_proxies_parallel` allows.)
    #[test]
    fn bits_apply_on_the_calling_thread() {
        use crate::tree::tests::{assert_same_tree, lattice_box, lattice_tree};
        for (every, update) in [(1, 1), (3, 2), (10, 3), (20, 4)] {
            let (mut serial, ids) = lattice_tree(usize::from(RECENT) + 1);
            let mut bits = serial.clone();
            // Every `every`-th cell; in the batches that refit, cell 0 again, further
            // (counted twice; growing ancestors would keep the trace of its first move,
            // which its bit does not, while the refit keeps none).
            let mut moves: Vec<_> = (0..ids.len())
                .step_by(every)
                .map(|i| (ids[i], lattice_box(i, update), Vec2::ZERO))
                .collect();
            if every <= 10 {
                moves.push((ids[0], lattice_box(0, update + 1), Vec2::ZERO));
            }
            serial.move_proxies(moves.iter().copied(), |_, result| {
                assert_eq!(result, Ok(true));
            });
            let mut pending = PendingMoves::default();
            pending.changed.resize(bits.leaves.len().div_ceil(64), 0);
            for &(id, tight, displacement) in &moves {
                // Every move leaves its fat box.
                let (_, fat) = bits
                    .decide_fat_box(id, tight, displacement)
                    .unwrap()
                    .unwrap();
                bits.fat_boxes[id.index()] = fat;
                bits.optimizer.changes += 1;
                set_bit(&mut pending.changed, id.index());
                pending.in_bits += 1;
            }
            bits.apply_pending(&mut pending, &CallingThread);
            let what = format!("every {every}");
            assert_eq!(pending.in_bits, 0, "{what}");
            assert!(pending.changed.iter().all(|&w| w == 0), "{what}");
            bits.validate().unwrap();
            assert_same_tree(&bits, &serial, &what);
        }
    }
}
