//! The dynamic AABB tree: a bounding volume hierarchy that stays good while its boxes
//! move, in the style of Box2D's dynamic tree.
//!
//! # Using the tree on its own
//!
//! ```
//! use bevy_aabb_tree::{BoundingBox, DynamicTree, Ray};
//! use glam::Vec2;
//!
//! let mut tree: DynamicTree<Vec2, &str> = DynamicTree::new();
//! let a = tree
//!     .create_proxy(BoundingBox::from_center_half_extents(Vec2::ZERO, Vec2::splat(0.5)), "a")
//!     .unwrap();
//! tree.create_proxy(BoundingBox::from_center_half_extents(Vec2::new(5.0, 0.0), Vec2::ONE), "b")
//!     .unwrap();
//!
//! // Move `a` next to `b`; the tree changes only when the box leaves its fat box.
//! let tight = BoundingBox::from_center_half_extents(Vec2::new(3.8, 0.0), Vec2::splat(0.5));
//! assert!(tree.move_proxy(a, tight, Vec2::new(1.0, 0.0)).unwrap());
//!
//! // Overlapping fat boxes that involve a moved proxy, each pair once.
//! let mut pairs = Vec::new();
//! tree.update_pairs(&mut pairs);
//! assert_eq!(pairs.len(), 1);
//!
//! // Closest ray hit; the callback tests the exact shape behind each fat box.
//! let ray = Ray::new(Vec2::new(-10.0, 0.0), Vec2::X);
//! let hit = tree.cast_ray(&ray, 100.0, |_, _| Some(0.0)).unwrap();
//! # let _ = hit;
//! ```
//!
//! # How it works
//!
//! - One arena of internal nodes with a free list. Each node holds its two children's
//!   boxes and change marks beside their links (48 bytes in 2D, 64 in 3D), so a walk that
//!   reaches a node tests both children without reading them. Leaves are not nodes: a
//!   [`ProxyId`] indexes a table of leaves (where each leaf hangs), and a parent names a
//!   leaf child by its proxy id with a tag bit ([`NodeId::is_leaf`]). Rebuilds lay every
//!   subtree they make out in depth-first order, so that the nodes of one region sit next
//!   to each other in memory.
//! - Each leaf has a *fat* box: the tight box extended along the predicted displacement
//!   and grown by a margin, held in its parent's slot. [`DynamicTree::move_proxy`] touches
//!   the tree only when the tight box leaves the fat box; it then grows the ancestors that
//!   no longer enclose the leaf and marks the path to the root as changed.
//! - The *move cache* keeps a copy of every fat box by proxy id, so that moves decide in
//!   proxy order rather than with a cache miss each. A tree with a `u32` payload takes 76
//!   bytes per proxy in 2D and 100 in 3D with it, 60 and 76 without; turn it off with
//!   [`DynamicTree::set_move_cache`] for a mostly static world.
//! - Insertion picks the sibling with the lowest surface-area cost (branch and bound) and
//!   rotates nodes on the way up; [`DynamicTree::update_pairs`] refits and rotates the
//!   changed part of the tree, then walks it against itself to find the new pairs.
//! - [`DynamicTree::move_proxies`] applies a batch of moves: the same result as one
//!   [`DynamicTree::move_proxy`] call each, but the leaves' parents and ancestors are
//!   updated in the order they sit in memory, which is much faster for thousands of
//!   moves; when a
//!   batch changes a large share of the leaves, one refit of the whole tree replaces the
//!   growing of their ancestors.
//! - [`DynamicTree::update_pairs_parallel`] (or [`DynamicTree::parallel_pairs`], to use
//!   another thread pool) finds the same pairs with the walk split over threads.
//! - [`DynamicTree::build`] builds a whole tree at once with a binned SAH split.
//! - [`DynamicTree::validate`] checks every invariant; the tests call it after every
//!   operation.

mod build;
mod insert;
mod layout;
mod moves;
mod node;
mod optimize;
mod pairs;
pub mod parallel;
mod query;
mod remove;
mod rotate;
mod stats;
mod validate;

use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::Vector;
use crate::geometry::BoundingBox;

pub(crate) use node::{LEAF, Leaf, Link, MAX_PROXIES, Node, Stamp};
pub use node::{NodeId, NodeView, ProxyId};
pub use parallel::ParallelPairs;
pub use query::RayHit;
pub use stats::TreeStats;
pub use validate::ValidationError;

/// Why a tree operation was refused. The tree is unchanged when one is returned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TreeError {
    /// The id names no live proxy (never created, or already destroyed).
    UnknownProxy(ProxyId),
    /// A box with a NaN or infinite corner, or with `min > max` on some axis.
    InvalidBox,
    /// A displacement or margin that is NaN or infinite, or a negative margin.
    InvalidValue,
    /// The tree holds as many proxies as it can (2³⁰).
    Full,
}

impl fmt::Display for TreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TreeError::UnknownProxy(id) => write!(f, "no live proxy with id {}", id.0),
            TreeError::InvalidBox => {
                write!(f, "box has a non-finite corner or min > max on some axis")
            }
            TreeError::InvalidValue => write!(f, "displacement or margin is not finite"),
            TreeError::Full => write!(f, "the tree holds as many proxies as it can"),
        }
    }
}

impl std::error::Error for TreeError {}

/// Ancestors that a move always updates before it tests whether it may stop (see
/// `DynamicTree::grow_from`).
pub(crate) const UNCONDITIONAL_LEVELS: u32 = 2;

/// The default margin by which fat boxes grow beyond the tight box, in world units.
pub const DEFAULT_MARGIN: f32 = 0.05;

/// A dynamic AABB tree over proxies carrying a payload `T` (an entity, an index...).
///
/// See the [module documentation](self) for a guide.
pub struct DynamicTree<V: Vector, T = ()> {
    /// The internal nodes.
    pub(crate) nodes: Vec<Node<V>>,
    /// The leaves, by proxy id (free ids have [`Leaf::FREE`]'s parent link).
    pub(crate) leaves: Vec<Leaf>,
    /// The move cache: each proxy's fat box by proxy id, as long as `leaves` when
    /// `move_cache` is on, empty when it is off. Moves decide against it in proxy order.
    pub(crate) fat_boxes: Vec<BoundingBox<V>>,
    /// Whether the move cache is kept (see [`DynamicTree::set_move_cache`]).
    pub(crate) move_cache: bool,
    /// Each proxy's payload, by proxy id.
    pub(crate) data: Vec<Option<T>>,
    /// Proxy ids free for reuse, the last freed on top.
    pub(crate) free_proxies: Vec<u32>,
    pub(crate) root: NodeId,
    /// The root's box (every other node's and leaf's box is its parent's slot).
    pub(crate) root_box: BoundingBox<V>,
    /// The root's change mark.
    pub(crate) root_stamp: Stamp,
    pub(crate) free_list: NodeId,
    pub(crate) proxy_count: usize,
    pub(crate) node_count: usize,
    /// Nodes whose stamp equals the epoch are "changed" (hold a moved leaf).
    pub(crate) epoch: Stamp,
    pub(crate) moved_count: usize,
    /// Whether every internal node's box is exactly its children's: set by a whole-tree
    /// refit, cleared when a move grows ancestors instead.
    pub(crate) exact: bool,
    margin: f32,
    /// Buffers reused by rebuilds.
    pub(crate) scratch: build::BuildScratch<V>,
    /// Buffers reused by re-layouts.
    pub(crate) layout_scratch: layout::LayoutScratch<V>,
    /// State of the incremental optimization.
    pub(crate) optimizer: optimize::Optimizer,
    /// Leaves of a batch of moves waiting for their new boxes (see `move_proxies`).
    pub(crate) pending_moves: moves::PendingMoves<V>,
    /// Stacks of the pair walk, reused.
    pub(crate) pair_stacks: pairs::PairStacks,
    pub(crate) nodes_visited: AtomicU64,
    pub(crate) leaves_visited: AtomicU64,
}

impl<V: Vector, T> Default for DynamicTree<V, T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: Vector, T: fmt::Debug> fmt::Debug for DynamicTree<V, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicTree")
            .field("proxies", &self.proxy_count)
            .field("nodes", &self.node_count)
            .field("height", &self.height())
            .field("margin", &self.margin)
            .finish_non_exhaustive()
    }
}

impl<V: Vector, T: Clone> Clone for DynamicTree<V, T> {
    fn clone(&self) -> Self {
        Self {
            nodes: self.nodes.clone(),
            leaves: self.leaves.clone(),
            fat_boxes: self.fat_boxes.clone(),
            move_cache: self.move_cache,
            data: self.data.clone(),
            free_proxies: self.free_proxies.clone(),
            root: self.root,
            root_box: self.root_box,
            root_stamp: self.root_stamp,
            free_list: self.free_list,
            proxy_count: self.proxy_count,
            node_count: self.node_count,
            epoch: self.epoch,
            moved_count: self.moved_count,
            exact: self.exact,
            margin: self.margin,
            scratch: Default::default(),
            layout_scratch: Default::default(),
            pending_moves: Default::default(),
            optimizer: self.optimizer.clone(),
            pair_stacks: Default::default(),
            nodes_visited: AtomicU64::new(self.nodes_visited.load(Ordering::Relaxed)),
            leaves_visited: AtomicU64::new(self.leaves_visited.load(Ordering::Relaxed)),
        }
    }
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// An empty tree with the [default margin](DEFAULT_MARGIN).
    pub fn new() -> Self {
        Self {
            nodes: Vec::new(),
            leaves: Vec::new(),
            fat_boxes: Vec::new(),
            move_cache: true,
            data: Vec::new(),
            free_proxies: Vec::new(),
            root: NodeId::NULL,
            root_box: BoundingBox::default(),
            root_stamp: 0,
            free_list: NodeId::NULL,
            proxy_count: 0,
            node_count: 0,
            epoch: 1,
            moved_count: 0,
            exact: false,
            margin: DEFAULT_MARGIN,
            scratch: Default::default(),
            layout_scratch: Default::default(),
            pending_moves: Default::default(),
            optimizer: Default::default(),
            pair_stacks: Default::default(),
            nodes_visited: AtomicU64::new(0),
            leaves_visited: AtomicU64::new(0),
        }
    }

    /// An empty tree whose fat boxes grow by `margin` beyond the tight box.
    ///
    /// A NaN, infinite or negative margin is replaced by the default.
    pub fn with_margin(margin: f32) -> Self {
        let mut tree = Self::new();
        let _ = tree.set_margin(margin);
        tree
    }

    /// The margin by which fat boxes grow beyond the tight box.
    pub fn margin(&self) -> f32 {
        self.margin
    }

    /// Sets the margin used by later moves. Returns an error (and keeps the old margin)
    /// for a NaN, infinite or negative value.
    pub fn set_margin(&mut self, margin: f32) -> Result<(), TreeError> {
        if !(margin.is_finite() && margin >= 0.0) {
            return Err(TreeError::InvalidValue);
        }
        self.margin = margin;
        Ok(())
    }

    /// Whether the tree keeps its move cache (on by default; see [`Self::set_move_cache`]).
    pub fn move_cache(&self) -> bool {
        self.move_cache
    }

    /// Turns the move cache on or off.
    ///
    /// The move cache is a copy of every proxy's fat box by proxy id: 16 bytes a proxy in
    /// 2D, 24 in 3D (a 2D tree with a `u32` payload takes 76 bytes a proxy with it, 60
    /// without). With it, [`Self::move_proxy`], [`Self::move_proxies`] and
    /// [`Self::fat_box`] read the box in proxy order; without it they read it in the
    /// proxy's parent node, wherever that sits in memory, which costs a cache miss per
    /// call in a large tree. Keep it (the default) when a good share of the proxies move
    /// every update; turn it off for a mostly static world (a level's geometry or a tile
    /// map with a few movers), where it would be memory spent on boxes that never change.
    ///
    /// Turning it on fills it from the tree (O(proxies)); turning it off frees it. The
    /// tree's shape, fat boxes, pairs and query results are the same either way.
    pub fn set_move_cache(&mut self, on: bool) {
        if on == self.move_cache {
            return;
        }
        self.move_cache = on;
        if on {
            let mut boxes = Vec::with_capacity(self.leaves.len());
            boxes.extend(self.leaves.iter().map(|leaf| {
                if leaf.is_live() {
                    *self.slot_box(leaf.parent)
                } else {
                    BoundingBox::default()
                }
            }));
            self.fat_boxes = boxes;
        } else {
            self.fat_boxes = Vec::new();
        }
    }

    /// Number of proxies.
    pub fn len(&self) -> usize {
        self.proxy_count
    }

    /// Makes room for at least `additional` more proxies, so that creating them one by
    /// one does not grow the tree's arrays a doubling at a time (each proxy takes a leaf
    /// and a payload slot, and an internal node joins it to the tree).
    pub fn reserve(&mut self, additional: usize) {
        let new_ids = additional.saturating_sub(self.free_proxies.len());
        self.leaves.reserve(new_ids);
        if self.move_cache {
            self.fat_boxes.reserve(new_ids);
        }
        self.data.reserve(new_ids);
        let free_nodes = self.nodes.len().saturating_sub(self.node_count);
        self.nodes.reserve(additional.saturating_sub(free_nodes));
    }

    /// Whether the tree holds no proxy.
    pub fn is_empty(&self) -> bool {
        self.proxy_count == 0
    }

    /// The root node, if the tree is not empty.
    pub fn root(&self) -> Option<NodeId> {
        (!self.root.is_null()).then_some(self.root)
    }

    /// Height of the tree: 0 for a single leaf or an empty tree.
    pub fn height(&self) -> u16 {
        if self.root.is_null() {
            0
        } else {
            self.height_of(self.root)
        }
    }

    /// Number of proxies moved (or inserted) since the last [`Self::update_pairs`].
    pub fn moved_count(&self) -> usize {
        self.moved_count
    }

    /// Whether `id` names a live proxy.
    pub fn contains(&self, id: ProxyId) -> bool {
        self.live_leaf(id).is_some()
    }

    /// The payload of a proxy.
    pub fn data(&self, id: ProxyId) -> Option<&T> {
        self.live_leaf(id)?;
        self.data[id.index()].as_ref()
    }

    /// The payload of a proxy, mutably.
    pub fn data_mut(&mut self, id: ProxyId) -> Option<&mut T> {
        self.live_leaf(id)?;
        self.data[id.index()].as_mut()
    }

    /// The fat box stored for a proxy.
    pub fn fat_box(&self, id: ProxyId) -> Option<BoundingBox<V>> {
        let leaf = *self.live_leaf(id)?;
        Some(self.stored_fat_box(id, leaf))
    }

    /// The leaf node of a proxy, for inspection: [`NodeId::leaf`]-tagged, the same for the
    /// proxy's whole life.
    pub fn leaf(&self, id: ProxyId) -> Option<NodeId> {
        self.live_leaf(id)?;
        Some(NodeId::leaf(id))
    }

    /// Every live proxy with its payload and fat box, in id order.
    pub fn proxies(&self) -> impl Iterator<Item = (ProxyId, &T, BoundingBox<V>)> + '_ {
        self.leaves
            .iter()
            .zip(&self.data)
            .enumerate()
            .filter_map(|(i, (leaf, data))| {
                let data = data.as_ref()?;
                let id = ProxyId(i as u32);
                leaf.is_live()
                    .then(|| (id, data, self.stored_fat_box(id, *leaf)))
            })
    }

    /// A read-only view of a node, for inspection.
    pub fn node(&self, id: NodeId) -> Option<NodeView<V>> {
        if id.is_null() {
            return None;
        }
        let parent = |link: Link| (!link.is_root()).then_some(link.parent());
        if id.is_leaf() {
            let leaf = self.live_leaf(id.proxy())?;
            return Some(NodeView {
                aabb: *self.slot_box(leaf.parent),
                parent: parent(leaf.parent),
                children: None,
                height: 0,
                proxy: Some(id.proxy()),
            });
        }
        let node = self.nodes.get(id.index())?;
        if !node.is_allocated() {
            return None;
        }
        Some(NodeView {
            aabb: *self.slot_box(node.parent),
            parent: parent(node.parent),
            children: Some((node.children[0], node.children[1])),
            height: node.height,
            proxy: None,
        })
    }

    /// Depth-first walk over every node: `f(node, depth)` (root at depth 0). Return `false`
    /// from `f` to skip the node's children.
    pub fn visit_nodes(&self, mut f: impl FnMut(NodeId, &NodeView<V>, u32) -> bool) {
        if self.root.is_null() {
            return;
        }
        let mut stack: smallvec::SmallVec<[(NodeId, u32); 64]> =
            smallvec::smallvec![(self.root, 0)];
        while let Some((id, depth)) = stack.pop() {
            let Some(view) = self.node(id) else { continue };
            if f(id, &view, depth)
                && let Some((c1, c2)) = view.children
            {
                stack.push((c2, depth + 1));
                stack.push((c1, depth + 1));
            }
        }
    }

    /// The fat box for a tight box and a predicted displacement: the tight box extended
    /// along the displacement and grown by the margin on every side.
    #[inline]
    pub fn fatten(&self, tight: &BoundingBox<V>, displacement: V) -> BoundingBox<V> {
        tight.swept(displacement).grown(self.margin)
    }

    /// Adds a proxy for `tight` with `data`; its fat box is `tight` grown by the margin.
    /// The new proxy counts as moved: its pairs are reported by the next
    /// [`Self::update_pairs`].
    pub fn create_proxy(&mut self, tight: BoundingBox<V>, data: T) -> Result<ProxyId, TreeError> {
        if !tight.is_valid() {
            return Err(TreeError::InvalidBox);
        }
        let fat = self.fatten(&tight, V::ZERO);
        if !fat.is_valid() {
            return Err(TreeError::InvalidBox);
        }
        if !self.has_room(1) {
            return Err(TreeError::Full);
        }
        let proxy = self.allocate_proxy(fat, data);
        let leaf = NodeId::leaf(proxy);
        self.insert_leaf(leaf, fat);
        self.mark_moved(leaf);
        Ok(proxy)
    }

    /// Removes a proxy and returns its payload.
    pub fn destroy_proxy(&mut self, id: ProxyId) -> Result<T, TreeError> {
        if self.live_leaf(id).is_none() {
            return Err(TreeError::UnknownProxy(id));
        }
        let leaf = NodeId::leaf(id);
        if self.slot_stamp(self.link_of(leaf)) == self.epoch {
            self.moved_count -= 1;
        }
        self.remove_leaf(leaf);
        self.proxy_count -= 1;
        self.leaves[id.index()] = Leaf::FREE;
        self.free_proxies.push(id.0);
        self.data[id.index()]
            .take()
            .ok_or(TreeError::UnknownProxy(id))
    }

    /// Moves a proxy: `tight` is its new tight box, `displacement` how far it is expected
    /// to move before the next update (velocity × step × any safety factor).
    ///
    /// Returns `Ok(true)` when the tree changed: the tight box left the fat box (or the fat
    /// box had grown far larger than needed), so the leaf got a new fat box and counts as
    /// moved. Returns `Ok(false)` when the fat box still encloses the tight box: nothing
    /// was touched.
    pub fn move_proxy(
        &mut self,
        id: ProxyId,
        tight: BoundingBox<V>,
        displacement: V,
    ) -> Result<bool, TreeError> {
        let fat = self.new_fat_box(id, tight, displacement)?;
        if let Some((link, fat)) = fat {
            self.set_leaf_box(link, fat);
        }
        Ok(fat.is_some())
    }

    /// The checks and decision of a move, reading the proxy's leaf and its fat box: when
    /// the fat box must change, it is stored ([`Self::store_fat_box`]) and the leaf's link
    /// and the box are returned, for the caller to finish with [`Self::set_leaf_box`];
    /// `None` when the move changes nothing.
    #[inline(always)]
    pub(crate) fn new_fat_box(
        &mut self,
        id: ProxyId,
        tight: BoundingBox<V>,
        displacement: V,
    ) -> Result<Option<(Link, BoundingBox<V>)>, TreeError> {
        let Some(&leaf) = self.leaves.get(id.index()) else {
            return Err(TreeError::UnknownProxy(id));
        };
        if !leaf.is_live() {
            return Err(TreeError::UnknownProxy(id));
        }
        let old = self.stored_fat_box(id, leaf);
        // Most calls change nothing, so the checks of the common path are cheap ones:
        // every comparison made, combined with `&` (see `valid_box`).
        if !(valid_box(&tight) & displacement.abs().all_lt(V::INFINITY)) {
            return Err(if valid_box(&tight) {
                TreeError::InvalidValue
            } else {
                TreeError::InvalidBox
            });
        }
        // The first half of `keeps_fat_box`, which needs no fat box: the common case keeps
        // its fat box without computing the new one.
        if old.contains(&tight) && Self::small_enough(&old, &tight) {
            return Ok(None);
        }
        let fat = self.fatten(&tight, displacement);
        if Self::keeps_fat_box(&old, &tight, &fat) {
            return Ok(None);
        }
        if !valid_box(&fat) {
            return Err(TreeError::InvalidBox);
        }
        self.store_fat_box(id, leaf.parent, fat);
        Ok(Some((leaf.parent, fat)))
    }

    /// Whether a move keeps the proxy's fat box `old` (the tree is not touched): the new
    /// tight box `tight` lies inside it, and it is at most four times the area of `fat`,
    /// the fat box the move would give. A fat box far larger than needed (a fast proxy
    /// that slowed down) is replaced, or it would report stale pairs forever.
    ///
    /// The area test is made against `tight` first, and against `fat` only when that
    /// fails: a fat box is never smaller than its tight box on any axis, so the outcome
    /// is the same (short of an area that overflows to infinity times zero), and most
    /// moves are decided without the new fat box.
    ///
    /// This is the rule of [`Self::move_proxy`], for callers that keep their proxies' fat
    /// boxes and hand the changed ones over with [`Self::set_fat_boxes`].
    #[inline(always)]
    pub fn keeps_fat_box(
        old: &BoundingBox<V>,
        tight: &BoundingBox<V>,
        fat: &BoundingBox<V>,
    ) -> bool {
        old.contains(tight) && (Self::small_enough(old, tight) || Self::small_enough(old, fat))
    }

    /// Whether `old` is at most four times the area of `new`.
    #[inline(always)]
    fn small_enough(old: &BoundingBox<V>, new: &BoundingBox<V>) -> bool {
        old.area() <= 4.0 * new.area()
    }

    /// Replaces a proxy's fat box with exactly `fat` (no margin added) and marks it moved.
    /// For callers that compute fat boxes themselves.
    pub fn set_fat_box(&mut self, id: ProxyId, fat: BoundingBox<V>) -> Result<(), TreeError> {
        let link = self.checked_link(id, &fat)?;
        self.store_fat_box(id, link, fat);
        self.set_leaf_box(link, fat);
        Ok(())
    }

    /// Where the leaf of proxy `id` hangs, if it is live and `fat` is a valid box: the
    /// checks of [`Self::set_fat_box`].
    #[inline]
    pub(crate) fn checked_link(
        &self,
        id: ProxyId,
        fat: &BoundingBox<V>,
    ) -> Result<Link, TreeError> {
        let leaf = self.live_leaf(id).ok_or(TreeError::UnknownProxy(id))?;
        if !fat.is_valid() {
            return Err(TreeError::InvalidBox);
        }
        Ok(leaf.parent)
    }

    /// Removes every proxy.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.leaves.clear();
        self.fat_boxes.clear();
        self.data.clear();
        self.free_proxies.clear();
        self.root = NodeId::NULL;
        self.root_stamp = 0;
        self.free_list = NodeId::NULL;
        self.proxy_count = 0;
        self.node_count = 0;
        self.moved_count = 0;
        self.optimizer = Default::default();
    }

    // ----- internals -------------------------------------------------------------------

    /// The leaf of a live proxy. A live proxy always has a payload and a leaf linked into
    /// the tree ([`Self::validate`] checks both), so neither is read here.
    #[inline]
    pub(crate) fn live_leaf(&self, id: ProxyId) -> Option<&Leaf> {
        self.leaves.get(id.index()).filter(|leaf| leaf.is_live())
    }

    /// Whether `count` more proxies fit ([`MAX_PROXIES`] ids at most, freed ones reused).
    #[inline]
    pub(crate) fn has_room(&self, count: usize) -> bool {
        self.leaves.len() + count.saturating_sub(self.free_proxies.len()) <= MAX_PROXIES as usize
    }

    /// Gives a new leaf with fat box `fat` a proxy id (the last one freed, or a new one)
    /// and its payload. The leaf is not linked into the tree yet. The caller checks
    /// [`Self::has_room`] first.
    pub(crate) fn allocate_proxy(&mut self, fat: BoundingBox<V>, data: T) -> ProxyId {
        let id = match self.free_proxies.pop() {
            Some(id) => id,
            None => {
                self.leaves.push(Leaf::FREE);
                self.data.push(None);
                if self.move_cache {
                    self.fat_boxes.push(fat);
                }
                (self.leaves.len() - 1) as u32
            }
        };
        self.leaves[id as usize] = Leaf { parent: Link::ROOT };
        if self.move_cache {
            self.fat_boxes[id as usize] = fat;
        }
        self.data[id as usize] = Some(data);
        self.proxy_count += 1;
        ProxyId(id)
    }

    /// The fat box that moves of proxy `id` (whose leaf is `leaf`) decide against: the
    /// move cache's copy, or, with the cache off, the box in the parent's slot.
    #[inline(always)]
    fn stored_fat_box(&self, id: ProxyId, leaf: Leaf) -> BoundingBox<V> {
        if self.move_cache {
            self.fat_boxes[id.index()]
        } else {
            *self.slot_box(leaf.parent)
        }
    }

    /// Stores a proxy's new fat box where moves decide against it: the move cache, or,
    /// with the cache off, the parent's slot at `link` (marking it moved), so that a later
    /// move of the same proxy in a batch decides against it. Counts the change for the
    /// optimizer. The slot (with the cache) and the ancestors are then updated by
    /// [`Self::set_leaf_box`], or by a batch's [`Self::apply_pending`].
    #[inline(always)]
    pub(crate) fn store_fat_box(&mut self, id: ProxyId, link: Link, fat: BoundingBox<V>) {
        if self.move_cache {
            self.fat_boxes[id.index()] = fat;
        } else {
            self.write_slot(link, fat);
        }
        self.optimizer.changes += 1;
    }

    /// Where a node or leaf hangs.
    #[inline(always)]
    pub(crate) fn link_of(&self, id: NodeId) -> Link {
        if id.is_leaf() {
            self.leaves[id.proxy().index()].parent
        } else {
            self.nodes[id.index()].parent
        }
    }

    /// Sets where a node or leaf hangs.
    #[inline(always)]
    pub(crate) fn set_link(&mut self, id: NodeId, link: Link) {
        if id.is_leaf() {
            self.leaves[id.proxy().index()].parent = link;
        } else {
            self.nodes[id.index()].parent = link;
        }
    }

    /// The parent of a node or leaf, null at the root.
    #[inline(always)]
    pub(crate) fn parent_of(&self, id: NodeId) -> NodeId {
        self.link_of(id).parent_or_null()
    }

    /// The box held at a link: the parent's slot, or the root's box.
    #[inline(always)]
    pub(crate) fn slot_box(&self, link: Link) -> &BoundingBox<V> {
        if link.is_root() {
            &self.root_box
        } else {
            &self.nodes[link.parent().index()].boxes[link.slot()]
        }
    }

    /// The mark held at a link: the parent's slot, or the root's mark.
    #[inline(always)]
    pub(crate) fn slot_stamp(&self, link: Link) -> Stamp {
        if link.is_root() {
            self.root_stamp
        } else {
            self.nodes[link.parent().index()].stamps[link.slot()]
        }
    }

    /// The height of a node or leaf (0).
    #[inline(always)]
    pub(crate) fn height_of(&self, id: NodeId) -> u16 {
        if id.is_leaf() {
            0
        } else {
            self.nodes[id.index()].height
        }
    }

    /// Hangs `child` (with its box and mark) in slot `slot` of `parent`, or at the root
    /// when `parent` is null.
    #[inline(always)]
    pub(crate) fn attach(
        &mut self,
        parent: NodeId,
        slot: usize,
        child: NodeId,
        aabb: BoundingBox<V>,
        stamp: Stamp,
    ) {
        let link = if parent.is_null() {
            self.root = child;
            self.root_box = aabb;
            self.root_stamp = stamp;
            Link::ROOT
        } else {
            let node = &mut self.nodes[parent.index()];
            node.children[slot] = child;
            node.boxes[slot] = aabb;
            node.stamps[slot] = stamp;
            Link::new(parent, slot)
        };
        self.set_link(child, link);
    }

    /// Finishes a leaf's new fat box, given to [`Self::store_fat_box`] already: stores it
    /// in the parent's slot (unless the move cache is off: it is there already) and grows
    /// the ancestors.
    #[inline(always)]
    pub(crate) fn set_leaf_box(&mut self, link: Link, fat: BoundingBox<V>) {
        if self.move_cache {
            self.write_slot(link, fat);
        }
        self.grow_from(link, fat);
    }

    /// Stores a leaf's new fat box in its parent's slot and marks it moved. Its ancestors
    /// must then be grown ([`Self::grow_from`]) or refit before the tree is used.
    #[inline(always)]
    pub(crate) fn write_slot(&mut self, link: Link, fat: BoundingBox<V>) {
        let epoch = self.epoch;
        self.exact = false;
        let stamp = if link.is_root() {
            self.root_box = fat;
            &mut self.root_stamp
        } else {
            let node = &mut self.nodes[link.parent().index()];
            node.boxes[link.slot()] = fat;
            &mut node.stamps[link.slot()]
        };
        self.moved_count += (*stamp != epoch) as usize;
        *stamp = epoch;
    }

    /// Grows the ancestors of a leaf hanging at `link`, whose box became `fat`, until they
    /// enclose it, and marks them changed, in one walk up from the leaf's parent.
    ///
    /// At each ancestor: its box (its own parent's slot) grows to enclose `fat` (a no-op
    /// when it already does) and is marked. Growing by `fat` rather than by the child's
    /// new box is enough: the ancestor already encloses the child's old box, and the new
    /// one is the old one plus `fat`. The walk may stop at an ancestor that already
    /// enclosed `fat` and was already marked: every ancestor above it encloses it and is
    /// marked too, so going on is harmless, only useless.
    ///
    /// Where it stops is hard to predict, and a mispredicted stop also throws away the
    /// work the processor had started on the next calls (the memory loads above all). So
    /// the first [`UNCONDITIONAL_LEVELS`] ancestors are always updated, without a branch
    /// on the data, and the stop is tested from there on.
    pub(crate) fn grow_from(&mut self, link: Link, fat: BoundingBox<V>) {
        if link.is_root() {
            return;
        }
        let mut link = self.nodes[link.parent().index()].parent;
        let mut level = 0;
        loop {
            let (done, up) = self.grow_step(link, &fat);
            level += 1;
            match up {
                Some(up) if !(done & (level >= UNCONDITIONAL_LEVELS)) => link = up,
                _ => return,
            }
        }
    }

    /// One step of a walk up: grows the box held at `link` (an ancestor's, in its parent's
    /// slot, or the root's) to enclose `fat` and marks it changed. Returns whether it
    /// enclosed `fat` and was marked already, and the link above (`None` at the root).
    #[inline(always)]
    pub(crate) fn grow_step(&mut self, link: Link, fat: &BoundingBox<V>) -> (bool, Option<Link>) {
        let epoch = self.epoch;
        if link.is_root() {
            self.root_box = self.root_box.merged(fat);
            self.root_stamp = epoch;
            return (true, None);
        }
        let node = &mut self.nodes[link.parent().index()];
        let k = link.slot();
        let done = node.boxes[k].contains(fat) & (node.stamps[k] == epoch);
        node.boxes[k] = node.boxes[k].merged(fat);
        node.stamps[k] = epoch;
        (done, Some(node.parent))
    }

    /// Marks a leaf as moved and every ancestor as changed (stopping at the first one
    /// already marked: its ancestors are marked too).
    pub(crate) fn mark_moved(&mut self, leaf: NodeId) {
        let epoch = self.epoch;
        let mut link = self.link_of(leaf);
        if self.slot_stamp(link) == epoch {
            return;
        }
        self.moved_count += 1;
        loop {
            if link.is_root() {
                self.root_stamp = epoch;
                return;
            }
            let node = &mut self.nodes[link.parent().index()];
            if node.stamps[link.slot()] == epoch {
                return;
            }
            node.stamps[link.slot()] = epoch;
            link = node.parent;
        }
    }

    /// Forgets every mark: the next epoch starts with nothing changed.
    pub(crate) fn clear_marks(&mut self) {
        self.moved_count = 0;
        if self.epoch == Stamp::MAX {
            for node in &mut self.nodes {
                node.stamps = [0; 2];
            }
            self.root_stamp = 0;
            self.epoch = 1;
        } else {
            self.epoch += 1;
        }
    }

    pub(crate) fn allocate_node(&mut self) -> NodeId {
        let id = if self.free_list.is_null() {
            self.nodes.push(Node::free(NodeId::NULL));
            NodeId((self.nodes.len() - 1) as u32)
        } else {
            let id = self.free_list;
            self.free_list = NodeId(self.nodes[id.index()].parent.0);
            id
        };
        let node = &mut self.nodes[id.index()];
        *node = Node::free(NodeId::NULL);
        node.height = 1;
        self.node_count += 1;
        id
    }

    pub(crate) fn free_node(&mut self, id: NodeId) {
        debug_assert!(!id.is_leaf());
        self.nodes[id.index()] = Node::free(self.free_list);
        self.free_list = id;
        self.node_count -= 1;
    }

    /// Recomputes an internal node's box (in its parent's slot), height and change mark
    /// from its children.
    #[inline(always)]
    pub(crate) fn refit_node(&mut self, id: NodeId) {
        let epoch = self.epoch;
        let n = &self.nodes[id.index()];
        let (c1, c2) = (n.children[0], n.children[1]);
        let aabb = n.own_box();
        let changed = (n.stamps[0] == epoch) | (n.stamps[1] == epoch);
        let link = n.parent;
        let height = 1 + self.height_of(c1).max(self.height_of(c2));
        self.nodes[id.index()].height = height;
        if link.is_root() {
            self.root_box = aabb;
            if changed {
                self.root_stamp = epoch;
            }
        } else {
            let parent = &mut self.nodes[link.parent().index()];
            parent.boxes[link.slot()] = aabb;
            if changed {
                parent.stamps[link.slot()] = epoch;
            }
        }
    }

    /// Calls `visit` on every internal node of the tree (only the changed ones, below a
    /// changed root, when `changed_only`), children before parents: the order of a refit.
    pub(crate) fn refit_order(
        &mut self,
        changed_only: bool,
        mut visit: impl FnMut(&mut Self, NodeId),
    ) {
        if self.root.is_null() || self.root.is_leaf() {
            return;
        }
        let epoch = self.epoch;
        // (node, false): expand; (node, true): visit, its children being done.
        let mut stack = core::mem::take(&mut self.pair_stacks.refits);
        stack.clear();
        // At most the node being visited and one pending sibling per level, and the root.
        // Room for trees up to height 63 is taken at once: growing with the height would
        // allocate again whenever an update makes the tree a level taller than ever.
        stack.reserve((2 * self.nodes[self.root.index()].height as usize + 1).max(127));
        stack.push((self.root, false));
        while let Some((id, expanded)) = stack.pop() {
            if expanded {
                visit(self, id);
                continue;
            }
            stack.push((id, true));
            let node = &self.nodes[id.index()];
            for k in [1, 0] {
                let child = node.children[k];
                if !child.is_leaf() && (!changed_only || node.stamps[k] == epoch) {
                    stack.push((child, false));
                }
            }
        }
        self.pair_stacks.refits = stack;
    }

    pub(crate) fn count_visits(&self, nodes: u64, leaves: u64) {
        self.nodes_visited.fetch_add(nodes, Ordering::Relaxed);
        self.leaves_visited.fetch_add(leaves, Ordering::Relaxed);
    }
}

/// [`BoundingBox::is_valid`] with three comparisons per axis and no branch:
/// `-inf < min <= max < inf` holds exactly for finite corners with `min <= max` (a NaN
/// fails every comparison, and an infinite corner fails the outer ones).
#[inline(always)]
fn valid_box<V: Vector>(b: &BoundingBox<V>) -> bool {
    V::NEG_INFINITY.all_lt(b.min) & b.min.all_le(b.max) & b.max.all_lt(V::INFINITY)
}
