//! Tree rotations: local swaps that lower the surface-area cost.

use crate::Vector;
use crate::tree::{DynamicTree, NodeId};

#[derive(Clone, Copy, PartialEq)]
enum Rotation {
    None,
    /// Swap B with F.
    BF,
    /// Swap B with G.
    BG,
    /// Swap C with D.
    CD,
    /// Swap C with E.
    CE,
    /// Swap grandchildren D and F.
    DF,
    /// Swap grandchildren D and G.
    DG,
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Tries the rotations at node A and applies the one that lowers the summed area of
    /// the nodes below A the most, if any. A's own box is the same after any of them.
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
    ///   grandchild swaps D↔F and D↔G, each changing both; every candidate is scored by
    ///   the change in `area(B) + area(C)`.
    pub(crate) fn rotate(&mut self, a: NodeId) {
        let na = self.nodes[a.index()];
        if na.is_leaf() || na.height < 2 {
            return;
        }
        let (b, c) = (na.child1, na.child2);
        let nb = self.nodes[b.index()];
        let nc = self.nodes[c.index()];
        let mut best = Rotation::None;
        let mut best_delta = 0.0f32;
        let mut consider = |rotation: Rotation, delta: f32| {
            if delta < best_delta {
                best_delta = delta;
                best = rotation;
            }
        };
        if nb.is_leaf() {
            let (f, g) = (self.nodes[nc.child1.index()], self.nodes[nc.child2.index()]);
            let area_c = nc.aabb.area();
            consider(Rotation::BF, nb.aabb.merged(&g.aabb).area() - area_c);
            consider(Rotation::BG, nb.aabb.merged(&f.aabb).area() - area_c);
        } else if nc.is_leaf() {
            let (d, e) = (self.nodes[nb.child1.index()], self.nodes[nb.child2.index()]);
            let area_b = nb.aabb.area();
            consider(Rotation::CD, nc.aabb.merged(&e.aabb).area() - area_b);
            consider(Rotation::CE, nc.aabb.merged(&d.aabb).area() - area_b);
        } else {
            let (d, e) = (self.nodes[nb.child1.index()], self.nodes[nb.child2.index()]);
            let (f, g) = (self.nodes[nc.child1.index()], self.nodes[nc.child2.index()]);
            let area_b = nb.aabb.area();
            let area_c = nc.aabb.area();
            consider(Rotation::BF, nb.aabb.merged(&g.aabb).area() - area_c);
            consider(Rotation::BG, nb.aabb.merged(&f.aabb).area() - area_c);
            consider(Rotation::CD, nc.aabb.merged(&e.aabb).area() - area_b);
            consider(Rotation::CE, nc.aabb.merged(&d.aabb).area() - area_b);
            let base = area_b + area_c;
            consider(
                Rotation::DF,
                f.aabb.merged(&e.aabb).area() + d.aabb.merged(&g.aabb).area() - base,
            );
            consider(
                Rotation::DG,
                g.aabb.merged(&e.aabb).area() + f.aabb.merged(&d.aabb).area() - base,
            );
        }
        match best {
            Rotation::None => {}
            Rotation::BF => {
                self.swap_subtrees(b, nc.child1);
                self.refit_node(c);
            }
            Rotation::BG => {
                self.swap_subtrees(b, nc.child2);
                self.refit_node(c);
            }
            Rotation::CD => {
                self.swap_subtrees(c, nb.child1);
                self.refit_node(b);
            }
            Rotation::CE => {
                self.swap_subtrees(c, nb.child2);
                self.refit_node(b);
            }
            Rotation::DF => {
                self.swap_subtrees(nb.child1, nc.child1);
                self.refit_node(b);
                self.refit_node(c);
            }
            Rotation::DG => {
                self.swap_subtrees(nb.child1, nc.child2);
                self.refit_node(b);
                self.refit_node(c);
            }
        }
        if best != Rotation::None {
            self.refit_node(a);
        }
    }

    /// Exchanges two subtrees that have different parents (neither is an ancestor of the
    /// other). Boxes are not refitted here.
    fn swap_subtrees(&mut self, x: NodeId, y: NodeId) {
        let px = self.nodes[x.index()].parent;
        let py = self.nodes[y.index()].parent;
        debug_assert!(px != py);
        self.replace_child(px, x, y);
        self.replace_child(py, y, x);
        self.nodes[x.index()].parent = py;
        self.nodes[y.index()].parent = px;
    }

    fn replace_child(&mut self, parent: NodeId, old: NodeId, new: NodeId) {
        let p = &mut self.nodes[parent.index()];
        if p.child1 == old {
            p.child1 = new;
        } else {
            debug_assert!(p.child2 == old);
            p.child2 = new;
        }
    }
}
