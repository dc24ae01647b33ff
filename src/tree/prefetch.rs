//! Asking the processor to start loading a node before a walk reads it.
//!
//! A walk knows its next nodes a few steps before it reads them (the children of the node
//! in hand), but which of them it reads next depends on the box tests, so the processor
//! cannot start those loads early on its own: in a tree larger than its caches each read
//! waits for memory in turn. A prefetch, issued where a node's children are first seen,
//! starts the loads at once and overlaps them with the work in between; the walk reads the
//! same nodes as without it.
//!
//! This is one of the crate's two `unsafe` uses (the other is `tree::refit::parallel`): the
//! prefetch instruction is reached only through an intrinsic that Rust marks `unsafe`. The
//! reasons it is sound are given beside it. On targets other than x86_64,
//! [`prefetch_node`] does nothing.

use crate::Vector;
use crate::tree::{Node, NodeId};

/// Hints the processor to start loading `nodes[index]` into its caches; a hint only, with
/// no effect on what the program reads, and none at all when `index` is out of range.
#[inline(always)]
// `unused_unsafe`: for a toolchain on which the intrinsic is a safe function.
#[allow(unsafe_code, unused_unsafe)]
pub(crate) fn prefetch_node<V: Vector>(nodes: &[Node<V>], index: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // `wrapping_add` forms the address for any index without undefined behaviour; the
        // pointer is never dereferenced.
        let address = nodes.as_ptr().wrapping_add(index).cast::<i8>();
        // SAFETY: `_mm_prefetch` needs SSE, which every x86_64 processor has (the target's
        // baseline enables it). The instruction only hints the cache: it reads nothing
        // into the program, writes nothing, and never faults, whatever the address (one
        // outside any allocation, or unmapped, is ignored).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (nodes, index);
}

/// [`prefetch_node`] for the internal ones of `children`, the children of the node `at`,
/// as soon as a walk reaches `at`, before their tests choose which are read (waiting for
/// the tests would start the loads later). A leaf child names `at` itself, already loaded.
#[inline(always)]
pub(crate) fn prefetch_children<V: Vector>(nodes: &[Node<V>], at: NodeId, children: [NodeId; 2]) {
    for child in children {
        let index = if child.is_leaf() { at } else { child }.index();
        prefetch_node(nodes, index);
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec2;

    use super::*;

    /// A prefetch is harmless whatever the index: in range, just past the end, far out of
    /// range, on an empty arena, and for a leaf child (which names the node in hand).
    #[test]
    fn any_index_is_harmless() {
        let empty: Vec<Node<Vec2>> = Vec::new();
        let nodes = vec![Node::<Vec2>::free(NodeId::NULL); 3];
        for index in [0, 2, 3, usize::MAX / 2, usize::MAX] {
            prefetch_node(&empty, index);
            prefetch_node(&nodes, index);
        }
        prefetch_children(
            &nodes,
            NodeId(1),
            [NodeId(2), NodeId::leaf(crate::ProxyId(7))],
        );
        prefetch_children(&nodes, NodeId(1), [NodeId::NULL, NodeId(u32::MAX - 1)]);
        // The arena is untouched.
        assert!(nodes.iter().all(|node| !node.is_allocated()));
    }
}
