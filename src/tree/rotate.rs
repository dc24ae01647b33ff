//! Tree rotations: local swaps that lower the surface-area cost.

use crate::Vector;
use crate::tree::{DynamicTree, Link, NodeId};

impl<V: Vector, T> DynamicTree<V, T> {
    /// Tries the rotations at node A and applies the one that lowers the summed area of the
    /// nodes below A the most, if any. A's own box is the same after any of them.
    ///
    /// ```text
    ///         A
    ///       /   \
    ///      B     C
    ///     / \   / \
    ///    D   E F   G
    /// ```
    ///
    /// Cases:
    /// - A is a leaf or has height 1: nothing to rotate;
    /// - B is a leaf (C is not): swap B with F or with G; C then encloses B and the other
    ///   grandchild, so the cost is `area(B ∪ G)` or `area(B ∪ F)` against `area(C)`;
    /// - C is a leaf (B is not): the mirror image, swapping C with D or E;
    /// - both internal: the four swaps above, each changing one of B and C, and the two
    ///   grandchild swaps D↔F and D↔G, each changing both; every candidate is scored by the
    ///   change in `area(B) + area(C)`.
    pub(crate) fn rotate(&mut self, a: NodeId) {
        if a.is_leaf() {
            return;
        }
        let na = &self.nodes[a.index()];
        if na.height < 2 {
            return;
        }
        let [b, c] = na.children;
        let [box_b, box_c] = na.boxes;
        // The children of an internal node, with their boxes.
        let below = |x: NodeId| {
            let n = &self.nodes[x.index()];
            (n.children, n.boxes)
        };
        // The best swap so far, as the two nodes to swap.
        let mut best = None;
        let mut best_delta = 0.0f32;
        let mut consider = |x: NodeId, y: NodeId, delta: f32| {
            if delta < best_delta {
                best_delta = delta;
                best = Some((x, y));
            }
        };
        if b.is_leaf() {
            let ([f, g], [box_f, box_g]) = below(c);
            let area_c = box_c.area();
            consider(b, f, box_b.merged(&box_g).area() - area_c);
            consider(b, g, box_b.merged(&box_f).area() - area_c);
        } else if c.is_leaf() {
            let ([d, e], [box_d, box_e]) = below(b);
            let area_b = box_b.area();
            consider(c, d, box_c.merged(&box_e).area() - area_b);
            consider(c, e, box_c.merged(&box_d).area() - area_b);
        } else {
            let ([d, e], [box_d, box_e]) = below(b);
            let ([f, g], [box_f, box_g]) = below(c);
            let area_b = box_b.area();
            let area_c = box_c.area();
            consider(b, f, box_b.merged(&box_g).area() - area_c);
            consider(b, g, box_b.merged(&box_f).area() - area_c);
            consider(c, d, box_c.merged(&box_e).area() - area_b);
            consider(c, e, box_c.merged(&box_d).area() - area_b);
            let base = area_b + area_c;
            consider(
                d,
                f,
                box_f.merged(&box_e).area() + box_d.merged(&box_g).area() - base,
            );
            consider(
                d,
                g,
                box_g.merged(&box_e).area() + box_f.merged(&box_d).area() - base,
            );
        }
        let Some((x, y)) = best else {
            return;
        };
        self.swap_subtrees(x, y);
        // B and C are refitted unless swapped away themselves (B for F or G, C for D or E).
        if x != b {
            self.refit_node(b);
        }
        if x != c {
            self.refit_node(c);
        }
        self.refit_node(a);
    }

    /// Exchanges two subtrees that have different parents (neither is an ancestor of the
    /// other), each with the box and mark its parent holds for it. The parents' own boxes
    /// are not refitted here.
    ///
    /// Two internal nodes exchange their records instead of their places: each arena slot
    /// stays its parent's child, so a pair of children laid out side by side (see
    /// [`layout`](super::layout)) stays side by side. The ids `x` and `y` then name the
    /// other subtree's top; callers name only the parents and nodes above them afterwards.
    pub(super) fn swap_subtrees(&mut self, x: NodeId, y: NodeId) {
        self.shape_changed();
        let (lx, ly) = (self.link_of(x), self.link_of(y));
        debug_assert!(lx.parent() != ly.parent());
        let (px, py) = (lx.parent().index(), ly.parent().index());
        let (sx, sy) = (lx.slot(), ly.slot());
        let (box_x, stamp_x) = (self.nodes[px].boxes[sx], self.nodes[px].stamps[sx]);
        let (box_y, stamp_y) = (self.nodes[py].boxes[sy], self.nodes[py].stamps[sy]);
        if x.is_leaf() || y.is_leaf() {
            self.attach(ly.parent(), sy, x, box_x, stamp_x);
            self.attach(lx.parent(), sx, y, box_y, stamp_y);
            return;
        }
        self.nodes.swap(x.index(), y.index());
        self.nodes[x.index()].parent = lx;
        self.nodes[y.index()].parent = ly;
        for id in [x, y] {
            let children = self.nodes[id.index()].children;
            for (k, child) in children.into_iter().enumerate() {
                self.set_link(child, Link::new(id, k));
            }
        }
        let parent_x = &mut self.nodes[px];
        (parent_x.boxes[sx], parent_x.stamps[sx]) = (box_y, stamp_y);
        let parent_y = &mut self.nodes[py];
        (parent_y.boxes[sy], parent_y.stamps[sy]) = (box_x, stamp_x);
    }
}
