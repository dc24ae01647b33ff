//! Removal of a leaf.

use crate::Vector;
use crate::tree::{DynamicTree, NodeId};

impl<V: Vector, T> DynamicTree<V, T> {
    /// Unlinks a leaf (its proxy stays allocated). Cases:
    /// - the leaf is the root: the tree becomes empty;
    /// - otherwise its parent P is freed and its sibling S takes P's place under the
    ///   grandparent G (or becomes the root when P was the root); the ancestors from G up
    ///   are refitted so that their boxes shrink and their heights stay exact.
    pub(crate) fn remove_leaf(&mut self, leaf: NodeId) {
        if leaf == self.root {
            self.root = NodeId::NULL;
            return;
        }
        let parent = self.parent_of(leaf);
        let grand = self.nodes[parent.index()].parent;
        let sibling = {
            let p = &self.nodes[parent.index()];
            if p.child1 == leaf { p.child2 } else { p.child1 }
        };
        self.set_parent(leaf, NodeId::NULL);
        if grand.is_null() {
            self.root = sibling;
            self.set_parent(sibling, NodeId::NULL);
            self.free_node(parent);
            return;
        }
        {
            let g = &mut self.nodes[grand.index()];
            if g.child1 == parent {
                g.child1 = sibling;
            } else {
                g.child2 = sibling;
            }
        }
        self.set_parent(sibling, grand);
        self.free_node(parent);
        let mut index = grand;
        while !index.is_null() {
            self.refit_node(index);
            index = self.nodes[index.index()].parent;
        }
    }
}
