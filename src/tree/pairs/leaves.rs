//! The leaf-by-leaf search: each changed leaf walked against the whole tree.

use crate::Vector;
use crate::tree::constants::LEAVES_BELOW;
use crate::tree::prefetch::prefetch_children;
use crate::tree::{DynamicTree, NodeId, ProxyId};

use super::{Entry, PairStacks, child_ref};

impl<V: Vector, T> DynamicTree<V, T> {
    /// The pairs of an update searched leaf by leaf (see [`Search`](super::Search)), the
    /// changed part of the tree refitted already. Returns the nodes visited.
    pub(crate) fn pairs_by_leaves(
        &self,
        stacks: &mut PairStacks,
        f: impl FnMut(ProxyId, ProxyId),
    ) -> u64 {
        let mut leaves = core::mem::take(&mut stacks.changed_leaves);
        let mut visited = self.collect_changed_leaves(&mut leaves, &mut stacks.walk);
        visited += self.search_leaves(&leaves, &mut stacks.walk, f);
        stacks.changed_leaves = leaves;
        visited
    }

    /// Puts the changed leaves in `leaves` (as [`child_ref`]s, cleared first), found from
    /// the root down the changed nodes; returns the nodes visited (also counted).
    pub(crate) fn collect_changed_leaves(
        &self,
        leaves: &mut Vec<NodeId>,
        walk: &mut Vec<NodeId>,
    ) -> u64 {
        leaves.clear();
        if !self.has_walk() {
            return 0;
        }
        // Room for as many as an update searched leaf by leaf can have, and for two nodes a
        // level of any tree short of the tallest: both grow only with the tree.
        leaves.reserve(self.proxy_count / LEAVES_BELOW + 1);
        let epoch = self.epoch;
        walk.clear();
        walk.reserve(2 * 128);
        walk.push(self.root);
        let mut visited = 0u64;
        while let Some(id) = walk.pop() {
            visited += 1;
            let node = &self.nodes[id.index()];
            for k in [1, 0] {
                let child = node.children[k];
                if node.stamps[k] == epoch {
                    if child.is_leaf() {
                        leaves.push(child_ref(id, k, child));
                    } else {
                        walk.push(child);
                    }
                }
            }
        }
        self.count_visits(visited, 0);
        visited
    }

    /// Walks each of the changed `leaves` against the whole tree; returns the nodes visited
    /// (also added to the tree's count).
    pub(crate) fn search_leaves(
        &self,
        leaves: &[NodeId],
        walk: &mut Vec<NodeId>,
        mut f: impl FnMut(ProxyId, ProxyId),
    ) -> u64 {
        let mut counts = (0u64, 0u64);
        for &leaf in leaves {
            let held = self.leaf_ref(leaf);
            self.leaf_against_subtree::<true>(held, self.root, walk, &mut counts, &mut f);
        }
        self.count_visits(counts.0, counts.1);
        counts.0
    }

    /// Reports every leaf under the internal node `top` whose box overlaps the leaf of
    /// `proxy` (`held`: its box and mark), of which one of the two moved; `top`'s own box
    /// overlaps and one of the two changed. Adds the nodes visited and the pairs reported
    /// to `counts`.
    ///
    /// In 3D the walk goes breadth first (`walk` is a queue, read at `head`): with several
    /// nodes queued, the next one's address does not wait on the tests of the node just
    /// read, and the processor loads several 64-byte nodes at once. In 2D it goes depth
    /// first (`walk` is a stack, read at `tail`): the next node, the one a test has just
    /// chosen, lies next in memory (subtrees are laid out depth first) among smaller nodes,
    /// and that order is the faster one there.
    ///
    /// Which children continue is hard to predict, so it is settled without branching:
    /// both are written at the tail, which moves by one for each passing internal child.
    /// Only a passing leaf (a pair to report, rarer) and the end of the walk branch. `walk`
    /// is used as a fixed array (its length is its capacity), compacted or grown when the
    /// tail reaches its end.
    ///
    /// With `ONCE`, the leaf changed and `top` may hold it and other changed leaves: the
    /// leaf itself is skipped, and another changed leaf is reported only when its proxy id
    /// is higher, so that each pair of changed leaves is reported once.
    #[inline]
    pub(super) fn leaf_against_subtree<const ONCE: bool>(
        &self,
        (proxy, held): (ProxyId, Entry<'_, V>),
        top: NodeId,
        walk: &mut Vec<NodeId>,
        counts: &mut (u64, u64),
        f: &mut impl FnMut(ProxyId, ProxyId),
    ) {
        let epoch = self.epoch;
        // Plain slices and local counts stay in registers, where through the vectors they
        // would be read again after every pair reported (the tree holds atomics, so `f`'s
        // writes may alias it as far as the compiler knows).
        let nodes = self.nodes.as_slice();
        let aabb = *held.0;
        let leaf_changed = held.1 == epoch;
        if walk.len() < 64 {
            walk.resize(64, NodeId::NULL);
        }
        let (mut visits, mut found) = (0u64, 0u64);
        let mut queue = walk.as_mut_slice();
        // A constant of the dimension: the branches on it compile away.
        let breadth_first = V::DIM == 3;
        queue[0] = top;
        let (mut head, mut tail) = (0, 1);
        while head < tail {
            visits += 1;
            let at = if breadth_first {
                head += 1;
                queue[head - 1]
            } else {
                tail -= 1;
                queue[tail]
            };
            let node = &nodes[at.index()];
            let [c1, c2] = node.children;
            prefetch_children(nodes, at, [c1, c2]);
            let hit1 = (leaf_changed | (node.stamps[0] == epoch)) & node.boxes[0].overlaps(&aabb);
            let hit2 = (leaf_changed | (node.stamps[1] == epoch)) & node.boxes[1].overlaps(&aabb);
            let (leaf1, leaf2) = (c1.is_leaf(), c2.is_leaf());
            if (hit1 & leaf1) | (hit2 & leaf2) {
                let once =
                    |k: usize, c: NodeId| !ONCE || node.stamps[k] != epoch || c.proxy() > proxy;
                if hit1 & leaf1 && once(0, c1) {
                    found += 1;
                    f(proxy, c1.proxy());
                }
                if hit2 & leaf2 && once(1, c2) {
                    found += 1;
                    f(proxy, c2.proxy());
                }
            }
            if tail + 2 > queue.len() {
                // Once at least half of the array has been read (breadth first only), the
                // unread part moves to the front; otherwise the array doubles. Either way
                // each entry moves at most once per doubling.
                if 2 * head >= queue.len() {
                    queue.copy_within(head..tail, 0);
                    (head, tail) = (0, tail - head);
                } else {
                    let len = queue.len();
                    walk.resize(2 * len, NodeId::NULL);
                    queue = walk.as_mut_slice();
                }
            }
            // The first child is read first: queued first, or stacked last.
            let (first, second) = if breadth_first {
                ((c1, hit1 & !leaf1), (c2, hit2 & !leaf2))
            } else {
                ((c2, hit2 & !leaf2), (c1, hit1 & !leaf1))
            };
            queue[tail] = first.0;
            tail += first.1 as usize;
            queue[tail] = second.0;
            tail += second.1 as usize;
        }
        counts.0 += visits;
        counts.1 += found;
    }
}
