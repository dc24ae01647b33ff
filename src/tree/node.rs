//! Node storage and typed indices.

use crate::Vector;
use crate::geometry::BoundingBox;

/// Index of a node in the tree's arena.
///
/// Valid until the tree next changes shape: internal nodes come and go as it is
/// rebalanced, and every update may move nodes, leaves included, to new slots (rebuilt
/// parts are re-laid out). Use [`ProxyId`] to refer to a proxy. Node ids are useful for
/// inspecting the tree (the debug overlay's inspector).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "plugin", derive(bevy::reflect::Reflect))]
pub struct NodeId(pub(crate) u32);

impl NodeId {
    /// "No node".
    pub(crate) const NULL: NodeId = NodeId(u32::MAX);

    /// The arena index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    #[inline]
    pub(crate) fn is_null(self) -> bool {
        self.0 == u32::MAX
    }
}

/// A handle to one proxy (leaf) of a [`DynamicTree`](crate::DynamicTree).
///
/// Stable for the proxy's lifetime: rebalancing and re-laying out the arena never change
/// it. After the proxy is destroyed its id may be reused by a later proxy. Ids are dense
/// (from 0 up to about the most proxies alive at once), so they index side tables well.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "plugin", derive(bevy::reflect::Reflect))]
pub struct ProxyId(pub(crate) u32);

impl ProxyId {
    /// The id as an index, for side tables.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The height that marks a free node.
pub(crate) const FREE_HEIGHT: u16 = u16::MAX;

/// A change mark: the tree's epoch when the mark was made. 16 bits keep a 2D node at
/// 32 bytes, two of them a cache line; the tree clears every mark when the epoch wraps.
pub(crate) type Stamp = u16;

/// One node of the arena: 32 bytes in 2D, 40 in 3D. A leaf has no children (`child1` is
/// null) and holds its proxy id in `child2`; an internal node has exactly two children. A
/// free node has height [`FREE_HEIGHT`] and `parent` links the free list.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node<V: Vector> {
    /// Leaf: the fat box. Internal: encloses both children.
    pub aabb: BoundingBox<V>,
    /// Parent, or `NULL` at the root. In a free node: the next free node.
    pub parent: NodeId,
    /// The first child, or `NULL` in a leaf.
    pub child1: NodeId,
    /// The second child; in a leaf, the proxy id (see [`Node::proxy`]).
    pub child2: NodeId,
    /// The epoch at which this node's subtree last held a moved leaf; the subtree is
    /// "changed" when this equals the tree's current epoch.
    pub stamp: Stamp,
    /// 0 for leaves, else 1 + the larger height of the children; [`FREE_HEIGHT`] for a
    /// free node.
    pub height: u16,
}

impl<V: Vector> Node<V> {
    pub(crate) fn free(next: NodeId) -> Self {
        Self {
            aabb: BoundingBox::default(),
            parent: next,
            child1: NodeId::NULL,
            child2: NodeId::NULL,
            stamp: 0,
            height: FREE_HEIGHT,
        }
    }

    #[inline]
    pub(crate) fn is_leaf(&self) -> bool {
        self.child1.is_null()
    }

    /// The proxy of a leaf (meaningless for an internal node).
    #[inline]
    pub(crate) fn proxy(&self) -> ProxyId {
        ProxyId(self.child2.0)
    }

    #[inline]
    pub(crate) fn is_allocated(&self) -> bool {
        self.height != FREE_HEIGHT
    }
}

/// A read-only view of one node, for inspecting the tree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeView<V: Vector> {
    /// The node's box: the fat box of a leaf, or the box enclosing both children.
    pub aabb: BoundingBox<V>,
    /// The parent, `None` at the root.
    pub parent: Option<NodeId>,
    /// The two children of an internal node; `None` for a leaf.
    pub children: Option<(NodeId, NodeId)>,
    /// 0 for a leaf, else 1 + the larger height of the children.
    pub height: u16,
    /// The proxy, for a leaf.
    pub proxy: Option<ProxyId>,
}
