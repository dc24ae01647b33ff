//! The arena's plumbing: where each node and leaf hangs, the boxes and change marks held in
//! parents' slots, node allocation, and the walks up that grow, mark and refit ancestors.

use core::sync::atomic::Ordering;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::constants::{EPOCH_SHIFT, UNCONDITIONAL_LEVELS};
use crate::tree::{DynamicTree, Link, Node, NodeId, Stamp};

/// [`DynamicTree::mark_age`] at `epoch`, for loops that hold a node mutably.
#[inline(always)]
pub(crate) fn age_at(epoch: Stamp, stamp: Stamp) -> Stamp {
    epoch.saturating_sub(stamp)
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Where a node or leaf hangs.
    #[inline(always)]
    pub(crate) fn link_of(&self, id: NodeId) -> Link {
        if id.is_leaf() {
            self.leaves[id.proxy().index()].parent
        } else {
            self.nodes[id.index()].parent
        }
    }

    #[inline(always)]
    pub(crate) fn set_link(&mut self, id: NodeId, link: Link) {
        if id.is_leaf() {
            self.leaves[id.proxy().index()].parent = link;
        } else {
            self.nodes[id.index()].parent = link;
        }
    }

    /// The parent of a node or leaf, null at the root.
    #[inline(always)]
    pub(crate) fn parent_of(&self, id: NodeId) -> NodeId {
        self.link_of(id).parent_or_null()
    }

    /// The box held at a link: the parent's slot, or the root's box.
    #[inline(always)]
    pub(crate) fn slot_box(&self, link: Link) -> &BoundingBox<V> {
        if link.is_root() {
            &self.root_box
        } else {
            &self.nodes[link.parent().index()].boxes[link.slot()]
        }
    }

    /// The mark held at a link: the parent's slot, or the root's mark.
    #[inline(always)]
    pub(crate) fn slot_stamp(&self, link: Link) -> Stamp {
        if link.is_root() {
            self.root_stamp
        } else {
            self.nodes[link.parent().index()].stamps[link.slot()]
        }
    }

    /// How many updates ago a mark was made: 0 in this epoch (changed), 1 in the last update,
    /// and so on (exact up to 127, see `clear_marks`).
    #[inline(always)]
    pub(crate) fn mark_age(&self, stamp: Stamp) -> Stamp {
        age_at(self.epoch, stamp)
    }

    /// The height of a node or leaf (0).
    #[inline(always)]
    pub(crate) fn height_of(&self, id: NodeId) -> u16 {
        if id.is_leaf() {
            0
        } else {
            self.nodes[id.index()].height
        }
    }

    /// Hangs `child` with its box and mark in slot `slot` of `parent` (at the root if null).
    #[inline(always)]
    pub(crate) fn attach(
        &mut self,
        parent: NodeId,
        slot: usize,
        child: NodeId,
        aabb: BoundingBox<V>,
        stamp: Stamp,
    ) {
        self.shape_changed();
        let link = if parent.is_null() {
            self.root = child;
            self.root_box = aabb;
            self.root_stamp = stamp;
            Link::ROOT
        } else {
            let node = &mut self.nodes[parent.index()];
            node.children[slot] = child;
            node.boxes[slot] = aabb;
            node.stamps[slot] = stamp;
            Link::new(parent, slot)
        };
        self.set_link(child, link);
    }

    /// Finishes a leaf's new fat box after [`Self::store_fat_box`]: writes it in the parent's
    /// slot (already done there when the move cache is off) and grows the ancestors.
    #[inline(always)]
    pub(crate) fn set_leaf_box(&mut self, link: Link, fat: BoundingBox<V>) {
        if self.move_cache {
            self.write_slot(link, fat);
        }
        self.grow_from(link, fat);
    }

    /// Stores a leaf's new fat box in its parent's slot and marks it moved. The ancestors
    /// must then be grown ([`Self::grow_from`]) or refit before the tree is used.
    #[inline(always)]
    pub(crate) fn write_slot(&mut self, link: Link, fat: BoundingBox<V>) {
        let epoch = self.epoch;
        self.exact = false;
        let stamp = if link.is_root() {
            self.root_box = fat;
            &mut self.root_stamp
        } else {
            let node = &mut self.nodes[link.parent().index()];
            node.boxes[link.slot()] = fat;
            &mut node.stamps[link.slot()]
        };
        self.moved_count += (*stamp != epoch) as usize;
        *stamp = epoch;
    }

    /// Grows the ancestors of the leaf at `link`, whose box became `fat`, to enclose it and
    /// marks them changed, in one walk up from the leaf's parent.
    ///
    /// Growing each ancestor by `fat` rather than by its child's new box is enough: it already
    /// encloses the child's old box, and the new one is the old one plus `fat`. The walk may
    /// stop at an ancestor that already enclosed `fat` and was marked: all above it are too.
    ///
    /// Where it stops is hard to predict, and a mispredicted stop also throws away the work
    /// the processor had started on the next calls (the memory loads above all). So the first
    /// [`UNCONDITIONAL_LEVELS`] ancestors are always updated, without a branch on the data,
    /// and the stop is tested from there on.
    pub(crate) fn grow_from(&mut self, link: Link, fat: BoundingBox<V>) {
        if link.is_root() {
            return;
        }
        let mut link = self.nodes[link.parent().index()].parent;
        let mut level = 0;
        loop {
            let (done, up) = self.grow_step(link, &fat);
            level += 1;
            match up {
                Some(up) if !(done & (level >= UNCONDITIONAL_LEVELS)) => link = up,
                _ => return,
            }
        }
    }

    /// One step up: grows the box held at `link` to enclose `fat` and marks it changed. Returns
    /// whether it enclosed `fat` and was marked already, and the link above (`None` at root).
    #[inline(always)]
    pub(crate) fn grow_step(&mut self, link: Link, fat: &BoundingBox<V>) -> (bool, Option<Link>) {
        let epoch = self.epoch;
        if link.is_root() {
            self.root_box = self.root_box.merged(fat);
            self.root_stamp = epoch;
            return (true, None);
        }
        let node = &mut self.nodes[link.parent().index()];
        let k = link.slot();
        let done = node.boxes[k].contains(fat) & (node.stamps[k] == epoch);
        node.boxes[k] = node.boxes[k].merged(fat);
        node.stamps[k] = epoch;
        (done, Some(node.parent))
    }

    /// Marks a leaf moved and its ancestors changed, up to one already marked (as are those above).
    pub(crate) fn mark_moved(&mut self, leaf: NodeId) {
        let epoch = self.epoch;
        let mut link = self.link_of(leaf);
        if self.slot_stamp(link) == epoch {
            return;
        }
        self.moved_count += 1;
        loop {
            if link.is_root() {
                self.root_stamp = epoch;
                return;
            }
            let node = &mut self.nodes[link.parent().index()];
            if node.stamps[link.slot()] == epoch {
                return;
            }
            node.stamps[link.slot()] = epoch;
            link = node.parent;
        }
    }

    /// Starts a new epoch, in which nothing is changed yet. When the epochs run out, every
    /// mark and the epoch go back by [`EPOCH_SHIFT`] (older marks become 0), so that how long
    /// ago a subtree last changed (see `rebuild_subtree`) stays known across the wrap, up to
    /// that many updates.
    pub(crate) fn clear_marks(&mut self) {
        self.moved_count = 0;
        if self.epoch == Stamp::MAX {
            for node in &mut self.nodes {
                for stamp in &mut node.stamps {
                    *stamp = stamp.saturating_sub(EPOCH_SHIFT);
                }
            }
            self.root_stamp = self.root_stamp.saturating_sub(EPOCH_SHIFT);
            self.epoch -= EPOCH_SHIFT - 1;
        } else {
            self.epoch += 1;
        }
    }

    pub(crate) fn allocate_node(&mut self) -> NodeId {
        self.shape_changed();
        let id = if self.free_list.is_null() {
            self.nodes.push(Node::free(NodeId::NULL));
            NodeId((self.nodes.len() - 1) as u32)
        } else {
            let id = self.free_list;
            self.free_list = NodeId(self.nodes[id.index()].parent.0);
            id
        };
        let node = &mut self.nodes[id.index()];
        *node = Node::free(NodeId::NULL);
        node.height = 1;
        self.node_count += 1;
        id
    }

    pub(crate) fn free_node(&mut self, id: NodeId) {
        debug_assert!(!id.is_leaf());
        self.shape_changed();
        self.nodes[id.index()] = Node::free(self.free_list);
        self.free_list = id;
        self.node_count -= 1;
    }

    /// Recomputes an internal node's box (in its parent's slot), height and mark from its
    /// children. The mark is the later of its children's: when a leaf below it last moved.
    #[inline(always)]
    pub(crate) fn refit_node(&mut self, id: NodeId) {
        let n = &self.nodes[id.index()];
        let (c1, c2) = (n.children[0], n.children[1]);
        let aabb = n.own_box();
        let stamp = n.stamps[0].max(n.stamps[1]);
        let link = n.parent;
        let height = 1 + self.height_of(c1).max(self.height_of(c2));
        self.nodes[id.index()].height = height;
        if link.is_root() {
            self.root_box = aabb;
            self.root_stamp = stamp;
        } else {
            let parent = &mut self.nodes[link.parent().index()];
            parent.boxes[link.slot()] = aabb;
            parent.stamps[link.slot()] = stamp;
        }
    }

    pub(crate) fn count_visits(&self, nodes: u64, leaves: u64) {
        self.nodes_visited.fetch_add(nodes, Ordering::Relaxed);
        self.leaves_visited.fetch_add(leaves, Ordering::Relaxed);
    }
}
