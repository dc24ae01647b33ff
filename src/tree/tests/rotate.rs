//! The exchange of two subtrees that a rotation makes.

use crate::Vector;

use super::proxies_under;
use super::tree_scene::{lcg, side_by_side, uniform_tree};

/// A rotation's exchange of two internal subtrees (B of A with F of A's other child C):
/// each parent slot then holds the other subtree's leaves, with the box held for it; the
/// tree validates; and every pair of internal children that sat side by side still does.
fn rotation_exchange<V: Vector>() {
    let mut r = lcg(31);
    let (_, mut tree, _) = uniform_tree::<V>(&mut r, 600);
    let before = side_by_side(&tree);
    assert_eq!(before.0, before.1, "a build lays every pair side by side");
    let mut exchanged = 0;
    let mut stack = vec![tree.root];
    while let Some(a) = stack.pop() {
        if a.is_leaf() {
            continue;
        }
        let [b, c] = tree.nodes[a.index()].children;
        stack.extend([b, c]);
        if b.is_leaf() || c.is_leaf() {
            continue;
        }
        let f = tree.nodes[c.index()].children[0];
        if f.is_leaf() {
            continue;
        }
        let (leaves_b, leaves_f) = (proxies_under(&tree, b), proxies_under(&tree, f));
        let (box_b, box_f) = (
            tree.nodes[a.index()].boxes[0],
            tree.nodes[c.index()].boxes[0],
        );
        tree.swap_subtrees(b, f);
        tree.refit_node(c);
        let mut up = a;
        while !up.is_null() {
            tree.refit_node(up);
            up = tree.parent_of(up);
        }
        let (na, nc) = (&tree.nodes[a.index()], &tree.nodes[c.index()]);
        assert_eq!(proxies_under(&tree, na.children[0]), leaves_f);
        assert_eq!(proxies_under(&tree, nc.children[0]), leaves_b);
        assert_eq!((na.boxes[0], nc.boxes[0]), (box_f, box_b));
        tree.validate().unwrap();
        exchanged += 1;
    }
    assert!(exchanged > 20, "{exchanged} exchanges");
    assert_eq!(side_by_side(&tree), before);
}

both_dims!(rotation_exchange);
