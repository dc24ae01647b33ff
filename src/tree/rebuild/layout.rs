//! Where nodes sit in the arena: laying subtrees out so that the walks read memory in order.
//!
//! Every walk of the tree (the pair walk above all) reads a node, which holds both of its
//! children's boxes, then goes down into one or both children; nodes placed at random make
//! each of those reads a cache miss once the tree outgrows the caches. So a rebuilt
//! subtree's nodes are moved, over the same set of arena slots, into this order: its top
//! first, then the two internal children of each node side by side, the pairs in depth-first
//! order (a pair, the pair below its first child and so on down, then the pairs of the second
//! child's side). A region of space, which is a subtree, is then one stretch of memory.
//!
//! Rebuilds around a subtree and of the top of the tree leave its slots scattered, so they
//! are handed out by pairs (see [`assign_slots`]), and a rebuilt subtree's top goes back to
//! the old top's slot, beside its sibling. A rotation that exchanges two internal nodes
//! exchanges their records rather than their places (`rotate`), so it leaves every pair
//! where it was; one that exchanges a leaf with an internal node moves the internal node
//! under another parent, away from its new sibling.
//!
//! Leaves are not in the arena (they sit in the table of leaves, by proxy id) and never
//! move; only their links are rewritten. Subtrees that a rebuild keeps whole stay where they
//! are too.

use crate::Vector;
use crate::tree::{DynamicTree, Link, Node, NodeId};

/// Marks a node as its parent's second child in [`LayoutScratch::parent`].
pub(crate) const SECOND: u32 = 1 << 31;
/// No parent among the moved nodes (the top).
pub(crate) const NO_PARENT: u32 = u32::MAX;

/// Buffers reused by re-layouts.
#[derive(Debug, Default)]
pub(crate) struct LayoutScratch<V: Vector> {
    /// The nodes moved, in their new order.
    order: Vec<NodeId>,
    /// For each of `order`: the position of its parent in `order`, with [`SECOND`] set
    /// for a second child ([`NO_PARENT`] for the top).
    parent: Vec<u32>,
    /// Leaves whose parent moves, with that parent as in [`Self::parent`].
    kept: Vec<(NodeId, u32)>,
    /// The slots the moved nodes go to.
    slots: Vec<NodeId>,
    /// Copies of the moved nodes, links rewritten.
    copies: Vec<Node<V>>,
    /// Nodes waiting to have their children placed, with their position in `order`.
    stack: Vec<(NodeId, u32)>,
}

/// Chooses `slots` for the nodes of a layout order whose parents' positions are `parent`
/// (see [`LayoutScratch::parent`]), among the slots in `pool` (as many as the nodes, in any
/// order; sorted here): `top_slot` for the top when it is one of them, and two side-by-side
/// slots for each pair of siblings. `spare` is scratch space.
///
/// Handing a scattered set of slots out in sorted order would split pairs. Cases, in order:
/// - a pair of siblings (consecutive in the order, same parent): the next two free slots
///   that are side by side, in increasing order; slots passed over are kept aside;
/// - a node without an internal sibling, or a pair when no two side-by-side slots are left:
///   a slot kept aside if there is one, else the next free slot.
///
/// Every position gets exactly one slot: the slots kept aside and those not reached yet
/// always number the positions left.
pub(crate) fn assign_slots(
    parent: &[u32],
    top_slot: NodeId,
    (pool, spare): (&mut Vec<NodeId>, &mut Vec<NodeId>),
    slots: &mut Vec<NodeId>,
) {
    pool.sort_unstable();
    let top = pool.binary_search(&top_slot).unwrap_or(0);
    slots.clear();
    slots.push(pool.remove(top));
    spare.clear();
    // As large as the pool at once: it grows only when the pool does.
    spare.reserve(pool.len());
    let mut next = 0;
    let mut i = 1;
    while i < parent.len() {
        let siblings = i + 1 < parent.len() && parent[i] & !SECOND == parent[i + 1] & !SECOND;
        if siblings {
            while next + 1 < pool.len() && pool[next + 1].0 != pool[next].0 + 1 {
                spare.push(pool[next]);
                next += 1;
            }
            if next + 1 < pool.len() {
                slots.extend_from_slice(&pool[next..next + 2]);
                next += 2;
                i += 2;
                continue;
            }
        }
        let slot = spare.pop().unwrap_or_else(|| {
            next += 1;
            pool[next - 1]
        });
        slots.push(slot);
        i += 1;
    }
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Lays the whole tree out in the [module's order](self) from slot 0 and drops the free
    /// slots: the arena ends up exactly as large as the tree.
    pub(crate) fn compact(&mut self) {
        self.shape_changed();
        if self.root.is_null() || self.root.is_leaf() {
            self.node_count = 0;
            self.nodes.clear();
            self.free_list = NodeId::NULL;
            return;
        }
        let mut scratch = core::mem::take(&mut self.scratch.layout);
        self.collect_layout(self.root, &mut scratch);
        let count = scratch.order.len();
        scratch.slots.clear();
        scratch.slots.extend((0..count as u32).map(NodeId));
        self.move_nodes(&mut scratch);
        self.nodes.truncate(count);
        self.free_list = NodeId::NULL;
        self.scratch.layout = scratch;
    }

    /// Puts in `scratch.order` the nodes under `top` to move, in their new order, with
    /// their parents' positions, and in `scratch.kept` the leaves under them.
    fn collect_layout(&self, top: NodeId, scratch: &mut LayoutScratch<V>) {
        scratch.order.clear();
        scratch.parent.clear();
        scratch.kept.clear();
        scratch.stack.clear();
        scratch.order.push(top);
        scratch.parent.push(NO_PARENT);
        scratch.stack.push((top, 0));
        while let Some((id, position)) = scratch.stack.pop() {
            let node = &self.nodes[id.index()];
            let mut pending = [None, None];
            for (k, child) in node.children.into_iter().enumerate() {
                let link = position | if k == 1 { SECOND } else { 0 };
                if child.is_leaf() {
                    scratch.kept.push((child, link));
                } else {
                    let at = scratch.order.len() as u32;
                    scratch.order.push(child);
                    scratch.parent.push(link);
                    pending[k] = Some((child, at));
                }
            }
            // First child's side first: pushed last.
            scratch.stack.extend(pending[1]);
            scratch.stack.extend(pending[0]);
        }
    }

    /// Moves node `order[i]` to slot `slots[i]` for every `i`, rewriting every link that
    /// named an old slot (the top's parent's, or the root, included). No node outside `order`
    /// may sit in one of `slots`.
    fn move_nodes(&mut self, scratch: &mut LayoutScratch<V>) {
        self.shape_changed();
        let LayoutScratch {
            order,
            parent,
            kept,
            slots,
            copies,
            ..
        } = scratch;
        copies.clear();
        copies.extend(order.iter().map(|id| self.nodes[id.index()]));
        let top_link = copies[0].parent;
        for i in 0..copies.len() {
            let slot = slots[i];
            let link = parent[i];
            if link == NO_PARENT {
                copies[i].parent = top_link;
            } else {
                let p = (link & !SECOND) as usize;
                let k = (link >> 31) as usize;
                copies[i].parent = Link::new(slots[p], k);
                copies[p].children[k] = slot;
            }
        }
        for (node, &slot) in copies.iter().zip(slots.iter()) {
            self.nodes[slot.index()] = *node;
        }
        for &(node, link) in kept.iter() {
            let p = slots[(link & !SECOND) as usize];
            self.set_link(node, Link::new(p, (link >> 31) as usize));
        }
        let new_top = slots[0];
        if top_link.is_root() {
            self.root = new_top;
        } else {
            self.nodes[top_link.parent().index()].children[top_link.slot()] = new_top;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pairs of siblings get side-by-side slots from a scattered set, the top gets its
    /// old slot, and every slot is used once (worked by hand).
    #[test]
    fn assign_slots_keeps_pairs_together() {
        // The top; a pair under it; the first of the pair has one internal child (its
        // other is a leaf); the second has a pair.
        let (mut pool, mut spare, mut slots) = (Vec::new(), Vec::new(), Vec::new());
        let mut assign = |order: &[u32], parent: &[u32], top: u32| {
            pool.clear();
            pool.extend(order.iter().map(|&i| NodeId(i)));
            assign_slots(parent, NodeId(top), (&mut pool, &mut spare), &mut slots);
            slots.clone()
        };
        let order = [10, 12, 13, 20, 30, 31];
        let parent = [NO_PARENT, 0, SECOND, 1, 2, 2 | SECOND];
        // Sorted without the top: 10 12 13 30 31. The pair skips 10 (kept aside) for
        // 12, 13; the single takes 10; the last pair 30, 31.
        assert_eq!(
            assign(&order, &parent, 20),
            [20, 12, 13, 10, 30, 31].map(NodeId).to_vec()
        );

        // No two side-by-side slots left: the pair is split, nothing lost.
        let (order, parent) = ([1, 3, 5], [NO_PARENT, 0, SECOND]);
        assert_eq!(assign(&order, &parent, 1), [1, 3, 5].map(NodeId).to_vec());

        // A top slot outside the set: the top takes the first.
        assert_eq!(assign(&order, &parent, 7), [1, 3, 5].map(NodeId).to_vec());
    }
}
