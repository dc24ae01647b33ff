//! Insertion: choosing a sibling by surface-area cost.

use crate::Vector;
use crate::tree::{DynamicTree, NodeId};

impl<V: Vector, T> DynamicTree<V, T> {
    /// Finds the best sibling for a new leaf with box `leaf_box`.
    ///
    /// Inserting leaf D next to node S creates a new parent P = S ∪ D and enlarges every
    /// ancestor of S. The cost of that choice is `area(S ∪ D)` (the new parent) plus the
    /// *inherited* cost: the area each ancestor gains from enclosing D. The search is a
    /// branch and bound descent from the root:
    /// - at an internal node, the cost of choosing the node itself is its direct cost plus
    ///   the inherited cost; record it if best so far;
    /// - a leaf child is scored exactly, the same way;
    /// - an internal child C gets a lower bound: inherited cost (now including the current
    ///   node's growth) + `area(C ∪ D)` + `min(area(D) - area(C), 0)` (the best any
    ///   descendant of C could do, since a smaller node still needs `area(D)`);
    /// - stop when both children are leaves or neither lower bound beats the best cost;
    ///   otherwise descend into the child with the lower bound. When both bounds are equal
    ///   (both children already contain D) break the tie by the distance between centers.
    pub(crate) fn find_best_sibling(&self, leaf_box: &crate::BoundingBox<V>) -> NodeId {
        let area_d = leaf_box.area();
        let center_d = leaf_box.center();
        let mut index = self.root;
        let root_box = *self.bounds(index);
        let mut area_base = root_box.area();
        let mut direct_cost = root_box.merged(leaf_box).area();
        let mut inherited_cost = 0.0f32;
        let mut best_sibling = index;
        let mut best_cost = direct_cost;

        while !index.is_leaf() {
            let node = &self.nodes[index.index()];
            let (child1, child2) = (node.child1, node.child2);
            let cost = direct_cost + inherited_cost;
            if cost < best_cost {
                best_sibling = index;
                best_cost = cost;
            }
            inherited_cost += direct_cost - area_base;

            let (box1, box2) = (self.bounds(child1), self.bounds(child2));
            let (leaf1, leaf2) = (child1.is_leaf(), child2.is_leaf());
            let direct1 = box1.merged(leaf_box).area();
            let direct2 = box2.merged(leaf_box).area();
            let (mut lower1, mut lower2) = (f32::MAX, f32::MAX);
            let (mut area1, mut area2) = (0.0, 0.0);
            if leaf1 {
                let cost1 = direct1 + inherited_cost;
                if cost1 < best_cost {
                    best_sibling = child1;
                    best_cost = cost1;
                }
            } else {
                area1 = box1.area();
                lower1 = inherited_cost + direct1 + (area_d - area1).min(0.0);
            }
            if leaf2 {
                let cost2 = direct2 + inherited_cost;
                if cost2 < best_cost {
                    best_sibling = child2;
                    best_cost = cost2;
                }
            } else {
                area2 = box2.area();
                lower2 = inherited_cost + direct2 + (area_d - area2).min(0.0);
            }
            if leaf1 && leaf2 {
                break;
            }
            if best_cost <= lower1 && best_cost <= lower2 {
                break;
            }
            if lower1 == lower2 && !leaf1 {
                let d1 = box1.center() - center_d;
                let d2 = box2.center() - center_d;
                lower1 = d1.dot(d1);
                lower2 = d2.dot(d2);
            }
            if lower1 < lower2 && !leaf1 {
                index = child1;
                area_base = area1;
                direct_cost = direct1;
            } else {
                index = child2;
                area_base = area2;
                direct_cost = direct2;
            }
        }
        best_sibling
    }

    /// Links a proxy's unlinked leaf into the tree: a new parent joins it with the best
    /// sibling, then every ancestor is refitted and rotated on the way up.
    pub(crate) fn insert_leaf(&mut self, leaf: NodeId) {
        if self.root.is_null() {
            self.root = leaf;
            self.set_parent(leaf, NodeId::NULL);
            return;
        }
        let leaf_box = *self.bounds(leaf);
        let sibling = self.find_best_sibling(&leaf_box);

        let old_parent = self.parent_of(sibling);
        let (sibling_box, sibling_height, sibling_stamp) = (
            *self.bounds(sibling),
            self.height_of(sibling),
            self.stamp_of(sibling),
        );
        let new_parent = self.allocate_node();
        {
            let p = &mut self.nodes[new_parent.index()];
            p.parent = old_parent;
            p.child1 = sibling;
            p.child2 = leaf;
            p.aabb = sibling_box.merged(&leaf_box);
            p.height = sibling_height + 1;
            // The new parent's subtree holds whatever was changed in the sibling's.
            p.stamp = sibling_stamp;
        }
        if old_parent.is_null() {
            self.root = new_parent;
        } else {
            let op = &mut self.nodes[old_parent.index()];
            if op.child1 == sibling {
                op.child1 = new_parent;
            } else {
                op.child2 = new_parent;
            }
        }
        self.set_parent(sibling, new_parent);
        self.set_parent(leaf, new_parent);

        // Walk back up fixing boxes and heights, rotating as we go.
        let mut index = new_parent;
        while !index.is_null() {
            self.refit_node(index);
            self.rotate(index);
            index = self.nodes[index.index()].parent;
        }
    }
}
