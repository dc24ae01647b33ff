//! Node storage and typed indices.

use crate::Vector;
use crate::geometry::BoundingBox;

/// A node of the tree: an internal node, by its index in the tree's arena, or a leaf, by its
/// proxy's index with [`NodeId::is_leaf`]'s tag bit set.
///
/// A leaf's id is its proxy's, so it is stable for the proxy's lifetime. An internal node's id
/// is valid until the tree next changes shape: internal nodes come and go as it is rebalanced,
/// and updates may move them to new slots (rebuilt parts are re-laid out). Use [`ProxyId`] to
/// refer to a proxy; node ids serve to inspect the tree (the debug overlay's inspector).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "plugin", derive(bevy::reflect::Reflect))]
pub struct NodeId(pub(crate) u32);

/// The tag bit of a leaf's [`NodeId`].
pub(crate) const LEAF: u32 = 1 << 31;

/// The most proxies a tree holds (2³⁰): the pair walk names a leaf by its parent's index
/// shifted left by one, with the leaf tag (see `tree::pairs`), so internal node indices (fewer
/// than the proxies) stay below 2³⁰.
pub(crate) const MAX_PROXIES: u32 = 1 << 30;

impl NodeId {
    pub(crate) const NULL: NodeId = NodeId(u32::MAX);

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

    /// Whether this is a leaf's id (a proxy's, see [`NodeId::proxy`]), not an internal node's.
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
/// Stable for the proxy's lifetime: rebalancing and re-laying out the arena never change it.
/// A destroyed proxy's id may be reused by a later proxy. Ids are dense (from 0 up to about the
/// most proxies alive at once), so they index side tables well.
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

/// A change mark: the tree's epoch when the mark was made. 8 bits keep a 2D node at 48 bytes;
/// a mark's age stays exact up to 127 updates when the epochs wrap (see `clear_marks`).
pub(crate) type Stamp = u8;

/// Where a node or leaf hangs: its parent's arena index, with [`SECOND`] set when it is the
/// parent's second child. [`Link::ROOT`] for the root, [`Link::FREE`] for a free leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Link(pub u32);

/// The slot bit of a [`Link`].
pub(crate) const SECOND: u32 = 1 << 31;

impl Link {
    pub(crate) const ROOT: Link = Link(u32::MAX);
    pub(crate) const FREE: Link = Link(u32::MAX - 1);

    /// The link to slot `slot` (0 or 1) of `parent`.
    #[inline(always)]
    pub(crate) fn new(parent: NodeId, slot: usize) -> Link {
        Link(parent.0 | ((slot as u32) << 31))
    }

    #[inline(always)]
    pub(crate) fn is_root(self) -> bool {
        self == Link::ROOT
    }

    /// The parent (meaningless for [`Link::ROOT`] and [`Link::FREE`]).
    #[inline(always)]
    pub(crate) fn parent(self) -> NodeId {
        NodeId(self.0 & !SECOND)
    }

    /// The slot, 0 or 1 (meaningless for [`Link::ROOT`] and [`Link::FREE`]).
    #[inline(always)]
    pub(crate) fn slot(self) -> usize {
        (self.0 >> 31) as usize
    }

    /// The parent, or [`NodeId::NULL`] at the root.
    #[inline(always)]
    pub(crate) fn parent_or_null(self) -> NodeId {
        if self.is_root() {
            NodeId::NULL
        } else {
            self.parent()
        }
    }
}

/// One internal node of the arena, holding its two children's boxes and marks: 48 bytes in
/// 2D, 64 in 3D. A child is an internal node or a leaf (by its tagged id). The node's own box
/// and mark are its parent's slot (the tree's root box and mark for the root).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node<V: Vector> {
    /// Each child's box: a leaf's fat box, or a box enclosing an internal child's two.
    pub boxes: [BoundingBox<V>; 2],
    pub children: [NodeId; 2],
    /// Where this node hangs. In a free node: the next free node (an index).
    pub parent: Link,
    /// Each child's change mark: the epoch at which the leaf last moved, or at which the
    /// internal child's subtree last held a moved leaf; "changed" when it is the current one.
    pub stamps: [Stamp; 2],
    /// 1 + the larger height of the children (a leaf's is 0); [`FREE_HEIGHT`] when free.
    pub height: u16,
}

impl<V: Vector> Node<V> {
    pub(crate) fn free(next: NodeId) -> Self {
        Self {
            boxes: [BoundingBox::default(); 2],
            children: [NodeId::NULL; 2],
            parent: Link(next.0),
            stamps: [0; 2],
            height: FREE_HEIGHT,
        }
    }

    #[inline]
    pub(crate) fn is_allocated(&self) -> bool {
        self.height != FREE_HEIGHT
    }

    /// The box enclosing both children's.
    #[inline(always)]
    pub(crate) fn own_box(&self) -> BoundingBox<V> {
        self.boxes[0].merged(&self.boxes[1])
    }
}

/// One leaf, in the tree's table of leaves by proxy id: where it hangs (4 bytes). Leaves are
/// not nodes of the arena: a parent names its leaf child by [`NodeId::leaf`] and holds its fat
/// box in its slot (the move cache, when on, copies it by proxy id, for moves in proxy order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Leaf {
    pub parent: Link,
}

impl Leaf {
    pub(crate) const FREE: Self = Self { parent: Link::FREE };

    #[inline(always)]
    pub(crate) fn is_live(&self) -> bool {
        self.parent != Link::FREE
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
