//! Removal of a leaf.

use crate::Vector;
use crate::tree::{DynamicTree, NodeId};

impl<V: Vector, T> DynamicTree<V, T> {
    /// Unlinks a leaf (its proxy stays allocated). Cases:
    /// - the leaf is the root: the tree becomes empty;
    /// - otherwise its parent P is freed and its sibling S, with the box and mark P held
    ///   for it, takes P's place under the grandparent G (or becomes the root when P was
    ///   the root); the ancestors from G up are refitted so that their boxes shrink and
    ///   their heights stay exact.
    pub(crate) fn remove_leaf(&mut self, leaf: NodeId) {
        if leaf == self.root {
            self.root = NodeId::NULL;
            self.root_stamp = 0;
            return;
        }
        let link = self.link_of(leaf);
        let parent = link.parent();
        let (sibling, aabb, stamp, parent_link) = {
            let p = &self.nodes[parent.index()];
            let other = 1 - link.slot();
            (p.children[other], p.boxes[other], p.stamps[other], p.parent)
        };
        let grand = parent_link.parent_or_null();
        self.attach(grand, parent_link.slot(), sibling, aabb, stamp);
        self.free_node(parent);
        let mut index = grand;
        while !index.is_null() {
            self.refit_node(index);
            index = self.parent_of(index);
        }
    }
}
