//! Node storage and typed indices.

use crate::Vector;
use crate::geometry::BoundingBox;

/// A node of the tree: an internal node, by its index in the tree's arena, or a leaf, by
/// its proxy's index with [`NodeId::is_leaf`]'s tag bit set.
///
/// A leaf's id is its proxy's, so it is stable for the proxy's lifetime. An internal
/// node's id is valid until the tree next changes shape: internal nodes come and go as it
/// is rebalanced, and updates may move them to new slots (rebuilt parts are re-laid out).
/// Use [`ProxyId`] to refer to a proxy. Node ids are useful for inspecting the tree (the
/// debug overlay's inspector).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "plugin", derive(bevy::reflect::Reflect))]
pub struct NodeId(pub(crate) u32);

/// The tag bit of a leaf's [`NodeId`].
pub(crate) const LEAF: u32 = 1 << 31;

/// The most proxies a tree holds: a leaf's id must not be [`NodeId::NULL`] or
/// [`NodeId::FREE`].
pub(crate) const MAX_PROXIES: u32 = LEAF - 2;

impl NodeId {
    /// "No node".
    pub(crate) const NULL: NodeId = NodeId(u32::MAX);

    /// The parent link of a free proxy id's leaf slot.
    pub(crate) const FREE: NodeId = NodeId(u32::MAX - 1);

    /// The leaf of a proxy.
    #[inline(always)]
    pub(crate) fn leaf(proxy: ProxyId) -> NodeId {
        NodeId(LEAF | proxy.0)
    }

    /// The raw index: the arena index of an internal node, the proxy's index with the tag
    /// bit set for a leaf.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// Whether this is a leaf's id (not [`NodeId::NULL`]).
    #[inline(always)]
    pub fn is_leaf(self) -> bool {
        self.0 & LEAF != 0
    }

    /// The proxy of a leaf's id (meaningless for an internal node).
    #[inline(always)]
    pub fn proxy(self) -> ProxyId {
        ProxyId(self.0 & !LEAF)
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

/// One internal node of the arena: 32 bytes in 2D, 40 in 3D, with exactly two children
/// (internal nodes, or leaves by their tagged ids). A free node has height
/// [`FREE_HEIGHT`] and `parent` links the free list.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node<V: Vector> {
    /// Encloses both children.
    pub aabb: BoundingBox<V>,
    /// Parent, or `NULL` at the root. In a free node: the next free node.
    pub parent: NodeId,
    /// The first child.
    pub child1: NodeId,
    /// The second child.
    pub child2: NodeId,
    /// The epoch at which this node's subtree last held a moved leaf; the subtree is
    /// "changed" when this equals the tree's current epoch.
    pub stamp: Stamp,
    /// 1 + the larger height of the children (a leaf's is 0); [`FREE_HEIGHT`] for a free
    /// node.
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
    pub(crate) fn is_allocated(&self) -> bool {
        self.height != FREE_HEIGHT
    }
}

/// One leaf, in the tree's table of leaves by proxy id: 24 bytes in 2D, 32 in 3D. Leaves
/// are not nodes of the arena: a parent names its leaf child by [`NodeId::leaf`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Leaf<V: Vector> {
    /// The fat box.
    pub aabb: BoundingBox<V>,
    /// The parent, `NULL` for a leaf that is the root, [`NodeId::FREE`] for a free proxy
    /// id.
    pub parent: NodeId,
    /// The epoch at which the leaf last moved; it is "moved" when this equals the tree's
    /// current epoch.
    pub stamp: Stamp,
}

impl<V: Vector> Leaf<V> {
    pub(crate) const FREE: Self = Self {
        aabb: BoundingBox {
            min: V::ZERO,
            max: V::ZERO,
        },
        parent: NodeId::FREE,
        stamp: 0,
    };

    #[inline(always)]
    pub(crate) fn is_live(&self) -> bool {
        self.parent != NodeId::FREE
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
