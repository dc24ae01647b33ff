//! Collision layers in the tree: each proxy's memberships and filters, and each internal
//! node's unions of its leaves', so that a query or a search with a layer test skips every
//! subtree none of whose leaves can pass it (as Box2D keeps category bits in its nodes).
//!
//! A proxy's [`Layers`] are [`Layers::ALL`] until [`DynamicTree::set_layers`] gives it
//! others. While every proxy has `ALL`, the tree keeps no table at all and no test prunes.
//!
//! The unions depend on the tree's shape and the proxies' layers, not on the boxes. Any
//! change of shape (an insertion, a removal, a rotation, a rebuild, a re-layout) marks
//! them stale until [`DynamicTree::refresh_layers`]; a walk over stale unions tests its
//! leaves only (the same results, without the pruning).

use smallvec::SmallVec;

use crate::Vector;
use crate::tree::{DynamicTree, NodeId, ProxyId, TreeError};

/// A proxy's collision layers: the layers it is in (`memberships`) and the layers it
/// interacts with (`filters`). Two proxies interact when each one's memberships meet the
/// other's filters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layers {
    /// The layers the proxy is in.
    pub memberships: u32,
    /// The layers it interacts with.
    pub filters: u32,
}

impl Layers {
    /// Every layer, interacting with every layer: every proxy's layers until set.
    pub const ALL: Self = Self {
        memberships: u32::MAX,
        filters: u32::MAX,
    };

    /// Layers from two masks.
    pub const fn new(memberships: u32, filters: u32) -> Self {
        Self {
            memberships,
            filters,
        }
    }

    /// Whether the two interact (see [`Layers`]).
    #[inline]
    pub const fn interacts_with(&self, other: &Self) -> bool {
        self.memberships & other.filters != 0 && other.memberships & self.filters != 0
    }

    /// Whether it can interact with anything at all.
    #[inline]
    pub const fn interacts_with_any(&self) -> bool {
        self.memberships != 0 && self.filters != 0
    }

    /// Both masks of both, or-ed: the layers of a subtree holding both.
    #[inline]
    pub const fn union(self, other: Self) -> Self {
        Self {
            memberships: self.memberships | other.memberships,
            filters: self.filters | other.filters,
        }
    }
}

impl Default for Layers {
    fn default() -> Self {
        Self::ALL
    }
}

/// A layer test for queries: a proxy (or a subtree, by its unions) passes when its
/// layers pass. Every test of this crate is monotone (a union passes whenever one of its
/// parts does), which is what makes the pruning exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerTest {
    /// Every proxy passes.
    Any,
    /// Proxies in one of these layers pass (the mask of a spatial query).
    Memberships(u32),
    /// Proxies that interact with these layers pass (a collider's neighbours).
    InteractsWith(Layers),
}

impl LayerTest {
    /// Whether layers (a proxy's, or a subtree's unions) pass.
    #[inline(always)]
    pub fn passes(self, layers: Layers) -> bool {
        match self {
            LayerTest::Any => true,
            LayerTest::Memberships(mask) => layers.memberships & mask != 0,
            LayerTest::InteractsWith(other) => layers.interacts_with(&other),
        }
    }
}

/// The tree's layer tables.
#[derive(Clone, Debug, Default)]
pub(crate) struct LayerTable {
    /// Each proxy's layers, by proxy id; empty while every proxy has [`Layers::ALL`].
    proxies: Vec<Layers>,
    /// Each internal node's unions, by arena index; meaningful when `fresh` and `masked > 0`.
    nodes: Vec<Layers>,
    /// Live proxies whose layers are not [`Layers::ALL`].
    masked: usize,
    /// Whether `nodes` matches the tree's shape and the proxies' layers.
    pub(crate) fresh: bool,
}

impl LayerTable {
    /// Bytes of the tables, by capacity.
    pub(crate) fn bytes(&self) -> usize {
        (self.proxies.capacity() + self.nodes.capacity()) * core::mem::size_of::<Layers>()
    }

    #[inline(always)]
    fn of(&self, id: ProxyId) -> Layers {
        self.proxies.get(id.index()).copied().unwrap_or(Layers::ALL)
    }

    /// The layers of a node or leaf (a node's unions must be fresh).
    #[inline(always)]
    fn of_node(&self, id: NodeId) -> Layers {
        if id.is_leaf() {
            self.of(id.proxy())
        } else {
            self.nodes[id.index()]
        }
    }
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// The layers of a proxy ([`Layers::ALL`] unless set; also for an unknown id).
    pub fn layers(&self, id: ProxyId) -> Layers {
        self.layers.of(id)
    }

    /// Sets the layers of a proxy, which queries with a [`LayerTest`] read. On a tree whose
    /// unions are fresh, the path to the root is updated at once; otherwise
    /// [`Self::refresh_layers`] does it.
    ///
    /// # Errors
    ///
    /// [`TreeError::UnknownProxy`] when `id` is not a live proxy.
    pub fn set_layers(&mut self, id: ProxyId, layers: Layers) -> Result<(), TreeError> {
        let Some(leaf) = self.live_leaf(id).copied() else {
            return Err(TreeError::UnknownProxy(id));
        };
        let old = self.layers.of(id);
        if old == layers {
            return Ok(());
        }
        let linked = self.is_linked(id);
        let table = &mut self.layers;
        // Without any masked proxy the unions were never computed: a full pass.
        let incremental = table.fresh && table.masked > 0 && linked;
        if table.proxies.len() < self.leaves.len() {
            table.proxies.resize(self.leaves.len(), Layers::ALL);
        }
        table.proxies[id.index()] = layers;
        table.masked =
            table.masked + (layers != Layers::ALL) as usize - (old != Layers::ALL) as usize;
        if !incremental {
            table.fresh = false;
            return Ok(());
        }
        // Each ancestor's unions again from its two children, up to the root.
        let mut link = leaf.parent;
        while !link.is_root() {
            let parent = link.parent();
            let [c1, c2] = self.nodes[parent.index()].children;
            let table = &mut self.layers;
            let union = table.of_node(c1).union(table.of_node(c2));
            if table.nodes[parent.index()] == union {
                break;
            }
            table.nodes[parent.index()] = union;
            link = self.nodes[parent.index()].parent;
        }
        Ok(())
    }

    /// Computes the layer unions of every internal node again, in one pass from the leaves
    /// up (O(nodes)), when the tree's shape changed since they were last computed. Call it
    /// after updates so that queries with a [`LayerTest`] skip the subtrees that cannot
    /// pass. Trees whose proxies all have [`Layers::ALL`] need nothing.
    pub fn refresh_layers(&mut self) {
        if self.layers.fresh {
            return;
        }
        self.layers.fresh = true;
        if self.layers.masked == 0 || self.root.is_null() || self.root.is_leaf() {
            return;
        }
        let table = &mut self.layers;
        table.nodes.clear();
        table.nodes.resize(self.nodes.len(), Layers::ALL);
        // Children before parents: (node, false) expands, (node, true) sums up.
        let mut stack: SmallVec<[(NodeId, bool); 64]> = SmallVec::new();
        stack.push((self.root, false));
        while let Some((id, expanded)) = stack.pop() {
            let [c1, c2] = self.nodes[id.index()].children;
            if expanded {
                table.nodes[id.index()] = table.of_node(c1).union(table.of_node(c2));
                continue;
            }
            stack.push((id, true));
            for child in [c2, c1] {
                if !child.is_leaf() {
                    stack.push((child, false));
                }
            }
        }
    }

    /// Whether walks prune by the unions: some proxy is masked and they are fresh.
    #[inline(always)]
    pub(crate) fn layers_prune(&self) -> bool {
        self.layers.fresh && self.layers.masked > 0
    }

    /// Whether the node or leaf `id` may hold a proxy that passes `test`: a leaf whose
    /// layers pass, or a node whose unions pass or are not to be used (`prune` false).
    #[inline(always)]
    pub(crate) fn may_pass(&self, prune: bool, test: LayerTest, id: NodeId) -> bool {
        if id.is_leaf() {
            test.passes(self.layers.of(id.proxy()))
        } else {
            !prune || test.passes(self.layers.nodes[id.index()])
        }
    }

    /// Forgets a destroyed proxy's layers (the id may be reused with [`Layers::ALL`]).
    #[inline]
    pub(crate) fn forget_layers(&mut self, id: ProxyId) {
        let table = &mut self.layers;
        if let Some(layers) = table.proxies.get_mut(id.index())
            && *layers != Layers::ALL
        {
            *layers = Layers::ALL;
            table.masked -= 1;
        }
    }

    /// Marks the unions stale: the tree's shape changed.
    #[inline(always)]
    pub(crate) fn shape_changed(&mut self) {
        self.layers.fresh = false;
    }

    /// For [`Self::validate`]: the number of masked proxies counted, and each fresh
    /// union checked against its children's.
    pub(crate) fn check_layers(&self) -> Result<(), (Option<NodeId>, String)> {
        let masked = (0..self.leaves.len())
            .map(|i| ProxyId(i as u32))
            .filter(|&id| self.live_leaf(id).is_some() && self.layers.of(id) != Layers::ALL)
            .count();
        if masked != self.layers.masked {
            return Err((
                None,
                format!("{masked} masked proxies, {} counted", self.layers.masked),
            ));
        }
        let dead = (0..self.leaves.len())
            .map(|i| ProxyId(i as u32))
            .any(|id| self.live_leaf(id).is_none() && self.layers.of(id) != Layers::ALL);
        if dead {
            return Err((None, "a free proxy id keeps its layers".into()));
        }
        if !self.layers_prune() || self.root.is_null() || self.root.is_leaf() {
            return Ok(());
        }
        let mut stack = vec![self.root];
        while let Some(id) = stack.pop() {
            let [c1, c2] = self.nodes[id.index()].children;
            let union = self.layers.of_node(c1).union(self.layers.of_node(c2));
            if self.layers.nodes.get(id.index()) != Some(&union) {
                return Err((Some(id), "stale layer unions marked fresh".into()));
            }
            stack.extend([c1, c2].into_iter().filter(|c| !c.is_leaf()));
        }
        Ok(())
    }
}
