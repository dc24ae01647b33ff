//! Where nodes sit in the arena: laying subtrees out so that the walks read memory in
//! order.
//!
//! Every walk of the tree (the pair walk above all) reads a node, which holds both of its
//! children's boxes, then goes down into one or both children. Nodes placed at random in
//! the arena make each of those reads a cache miss once the tree outgrows the caches. So
//! whenever a subtree is rebuilt, its nodes are moved, over the same set of arena slots,
//! into this order:
//!
//! - the subtree's top first;
//! - the two internal children of a node side by side;
//! - the pairs in depth-first order, first child first: a pair of children is followed by
//!   the pair below the first child, and so on down, then the pairs of the second child's
//!   side. A region of space, which is a subtree, is then one stretch of memory.
//!
//! Leaves are not in the arena (they sit in the table of leaves, by proxy id) and never
//! move; only their links are rewritten.

use crate::Vector;
use crate::tree::{DynamicTree, Link, Node, NodeId};

/// Marks a node as its parent's second child in [`LayoutScratch::parent`].
const SECOND: u32 = 1 << 31;
/// No parent among the moved nodes (the top).
const NO_PARENT: u32 = u32::MAX;

/// Buffers reused by re-layouts.
#[derive(Debug)]
pub(crate) struct LayoutScratch<V: Vector> {
    /// The nodes moved, in their new order.
    order: Vec<NodeId>,
    /// For each of `order`: the position of its parent in `order`, with [`SECOND`] set
    /// for a second child ([`NO_PARENT`] for the top).
    parent: Vec<u32>,
    /// Nodes kept in place (and leaves) whose parent moves: (node, parent's position in
    /// `order`, with [`SECOND`] set for a second child).
    kept: Vec<(NodeId, u32)>,
    /// The slots the moved nodes go to.
    slots: Vec<NodeId>,
    /// Copies of the moved nodes, links rewritten.
    copies: Vec<Node<V>>,
    /// Nodes waiting to have their children placed, with their position in `order`.
    stack: Vec<(NodeId, u32)>,
}

impl<V: Vector> Default for LayoutScratch<V> {
    fn default() -> Self {
        Self {
            order: Vec::new(),
            parent: Vec::new(),
            kept: Vec::new(),
            slots: Vec::new(),
            copies: Vec::new(),
            stack: Vec::new(),
        }
    }
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Moves the nodes of the subtree under `top` into the [module's order](self), over the
    /// slots they occupy now. With `keep_height` `Some(h)`, `h > 0`, nodes of height `h` or
    /// less stay where they are, with their subtrees; only their parent links change.
    /// Boxes, heights, marks, payloads and proxy ids are kept.
    pub(crate) fn relayout(&mut self, top: NodeId, keep_height: Option<u16>) {
        if top.is_leaf() {
            return;
        }
        let mut scratch = core::mem::take(&mut self.scratch.layout);
        self.collect_layout(top, keep_height, &mut scratch);
        scratch.slots.clear();
        scratch.slots.extend_from_slice(&scratch.order);
        scratch.slots.sort_unstable();
        if scratch.slots != scratch.order {
            self.move_nodes(&mut scratch);
        }
        self.scratch.layout = scratch;
    }

    /// Lays the whole tree out in the [module's order](self) from slot 0 and drops the
    /// free slots: the arena ends up exactly as large as the tree.
    pub(crate) fn compact(&mut self) {
        if self.root.is_null() || self.root.is_leaf() {
            self.node_count = 0;
            self.nodes.clear();
            self.free_list = NodeId::NULL;
            return;
        }
        let mut scratch = core::mem::take(&mut self.scratch.layout);
        self.collect_layout(self.root, None, &mut scratch);
        let count = scratch.order.len();
        scratch.slots.clear();
        scratch.slots.extend((0..count as u32).map(NodeId));
        self.move_nodes(&mut scratch);
        self.nodes.truncate(count);
        self.free_list = NodeId::NULL;
        self.scratch.layout = scratch;
    }

    /// Puts in `scratch.order` the nodes under `top` to move, in their new order, with
    /// their parents' positions, and in `scratch.kept` the nodes kept in place under them.
    fn collect_layout(
        &self,
        top: NodeId,
        keep_height: Option<u16>,
        scratch: &mut LayoutScratch<V>,
    ) {
        let keep = keep_height.unwrap_or(0);
        let moves =
            |id: NodeId| !id.is_leaf() && (keep == 0 || self.nodes[id.index()].height > keep);
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
                if moves(child) {
                    let at = scratch.order.len() as u32;
                    scratch.order.push(child);
                    scratch.parent.push(link);
                    pending[k] = Some((child, at));
                } else {
                    scratch.kept.push((child, link));
                }
            }
            // First child's side first: pushed last.
            scratch.stack.extend(pending[1]);
            scratch.stack.extend(pending[0]);
        }
    }

    /// Moves node `order[i]` to slot `slots[i]` for every `i` and rewrites the links that
    /// named the old slots: children's, kept nodes' and leaves' parent links, parents'
    /// child links (the top's parent, or the root, included). No node outside `order` may
    /// sit in one of `slots`.
    fn move_nodes(&mut self, scratch: &mut LayoutScratch<V>) {
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
