//! Insertion: choosing a sibling by surface-area cost.

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::{DynamicTree, NodeId};

impl<V: Vector, T> DynamicTree<V, T> {
    /// Finds the best sibling for a new leaf with box `leaf_box`.
    ///
    /// Inserting leaf D next to node S creates a new parent P = S ∪ D and enlarges every
    /// ancestor of S. The cost of that choice is `area(S ∪ D)` (the new parent) plus the
    /// *inherited* cost: the area each ancestor gains from enclosing D. The search is a branch
    /// and bound descent from the root:
    /// - at an internal node, the cost of choosing the node itself is its direct cost plus the
    ///   inherited cost; record it if best so far;
    /// - a leaf child is scored exactly, the same way;
    /// - an internal child C gets a lower bound: inherited cost (now including the current
    ///   node's growth) + `area(C ∪ D)` + `min(area(D) - area(C), 0)` (the best any
    ///   descendant of C could do, since a smaller node still needs `area(D)`);
    /// - stop when both children are leaves or neither lower bound beats the best cost;
    ///   otherwise descend into the child with the lower bound. When both bounds are equal
    ///   (both children already contain D) break the tie by the distance between centers.
    pub(crate) fn find_best_sibling(&self, leaf_box: &BoundingBox<V>) -> NodeId {
        let area_d = leaf_box.area();
        let center_d = leaf_box.center();
        let mut index = self.root;
        let root_box = self.root_box;
        let mut area_base = root_box.area();
        let mut direct_cost = root_box.merged(leaf_box).area();
        let mut inherited_cost = 0.0f32;
        let mut best_sibling = index;
        let mut best_cost = direct_cost;

        while !index.is_leaf() {
            let node = &self.nodes[index.index()];
            let [child1, child2] = node.children;
            let (box1, box2) = (&node.boxes[0], &node.boxes[1]);
            let cost = direct_cost + inherited_cost;
            if cost < best_cost {
                best_sibling = index;
                best_cost = cost;
            }
            inherited_cost += direct_cost - area_base;

            let (leaf1, leaf2) = (child1.is_leaf(), child2.is_leaf());
            let direct1 = box1.merged(leaf_box).area();
            let direct2 = box2.merged(leaf_box).area();
            // A child's lower bound and area (`f32::MAX` and 0 for a leaf, scored here).
            let mut score = |child: NodeId, child_box: &BoundingBox<V>, direct: f32| {
                if child.is_leaf() {
                    let cost = direct + inherited_cost;
                    if cost < best_cost {
                        best_sibling = child;
                        best_cost = cost;
                    }
                    (f32::MAX, 0.0)
                } else {
                    let area = child_box.area();
                    (inherited_cost + direct + (area_d - area).min(0.0), area)
                }
            };
            let (mut lower1, area1) = score(child1, box1, direct1);
            let (mut lower2, area2) = score(child2, box2, direct2);
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

    /// Links a proxy's unlinked leaf into the tree: a new parent takes the best sibling's
    /// place and holds the sibling and the leaf, then every ancestor is refitted and
    /// rotated on the way up. The leaf, whose fat box is `leaf_box`, comes in unmarked.
    pub(crate) fn insert_leaf(&mut self, leaf: NodeId, leaf_box: BoundingBox<V>) {
        if self.root.is_null() {
            self.attach(NodeId::NULL, 0, leaf, leaf_box, 0);
            return;
        }
        let sibling = self.find_best_sibling(&leaf_box);
        let link = self.link_of(sibling);
        let (sibling_box, sibling_stamp) = (*self.slot_box(link), self.slot_stamp(link));
        let sibling_height = self.height_of(sibling);
        let new_parent = self.allocate_node();
        // The new parent takes the sibling's place and mark: its subtree holds whatever changed
        // in the sibling's.
        self.attach(
            link.parent_or_null(),
            link.slot(),
            new_parent,
            sibling_box.merged(&leaf_box),
            sibling_stamp,
        );
        self.nodes[new_parent.index()].height = sibling_height + 1;
        self.attach(new_parent, 0, sibling, sibling_box, sibling_stamp);
        self.attach(new_parent, 1, leaf, leaf_box, 0);

        let mut index = new_parent;
        while !index.is_null() {
            self.refit_node(index);
            self.rotate(index);
            index = self.parent_of(index);
        }
    }
}
