//! The dynamic AABB tree: a bounding volume hierarchy that stays good while its boxes
//! move, in the style of Box2D's dynamic tree.
//!
//! The [`glossary`] defines the terms the code uses and names the published methods the
//! tree follows. The tuning constants, with their reasons, are in `constants`.
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
//!   boxes and change marks beside their links (48 bytes in 2D, 64 in 3D), so a walk tests
//!   both children without reading them. Leaves are not nodes: a [`ProxyId`] indexes a
//!   table of leaves, and a parent names a leaf child by its proxy id with a tag bit
//!   ([`NodeId::is_leaf`]). Rebuilds lay subtrees out depth first, so that a region of
//!   space is one stretch of memory.
//! - Each leaf has a *fat* box: the tight box extended along the predicted displacement
//!   and grown by a margin. [`DynamicTree::move_proxy`] touches the tree only when the
//!   tight box leaves the fat box; it then grows the ancestors and marks the path to the
//!   root as changed. The *move cache* keeps a copy of every fat box by proxy id, so that
//!   moves decide in proxy order ([`DynamicTree::set_move_cache`]).
//! - Insertion picks the sibling with the lowest surface-area cost (branch and bound) and
//!   rotates nodes on the way up. [`DynamicTree::update_pairs`] refits and rotates the
//!   changed part of the tree and walks it against itself; when under one proxy in eight
//!   moved, it may instead walk each moved leaf against the whole tree, whichever cost less
//!   per moved proxy lately, in nodes visited (the pairs are the same either way).
//! - [`DynamicTree::move_proxies`] applies a batch of moves with the result of one
//!   [`DynamicTree::move_proxy`] call each, but grows the ancestors in memory order, or,
//!   when a large share of the leaves changed, refits the whole tree (or only the subtrees
//!   changed in the last few updates) in one pass.
//! - The pair walk and the queries prefetch a node's children as soon as they reach it,
//!   so that in a tree larger than the caches the loads overlap (on x86_64).
//! - [`DynamicTree::move_proxies_parallel`] and [`DynamicTree::update_pairs_parallel`] (or
//!   [`DynamicTree::parallel_pairs`], for another thread pool) run the step on several
//!   threads with the same result as on one: the moves in runs, the refit as independent
//!   subtrees, the walk as tasks, the rebuilds planned ahead. The threads are a rayon pool
//!   with the `parallel` feature; without it the tasks run on the calling thread.
//! - [`DynamicTree::build`] builds a whole tree at once with a binned SAH split. After
//!   every update a bounded part of the tree is rebuilt with the same split, paid for by
//!   the moves (one leaf placed anew per five fat-box changes): changed subtrees of about
//!   `4 * sqrt(n)` leaves, and every other time the top of the tree, so that a box that
//!   travels ends up among its new neighbours. Parts where nothing moved for 64 updates
//!   are kept whole and set apart from the moving boxes.
//! - [`DynamicTree::validate`] checks every invariant; the tests call it after every
//!   operation.
//!
//! # Reading the code
//!
//! The top-level files hold the algorithm, one subject each, as a reader learns it:
//! `node.rs` (ids, nodes, leaves, links), `arena.rs` (the arena, its free list, growing
//! and refitting one node), `proxy.rs` (create, move, destroy one proxy), `insert.rs`,
//! `remove.rs`, `rotate.rs`, `query.rs` (queries and casts), `pairs/` (the pair walk and
//! the leaf-by-leaf search), `build.rs` (the binned SAH build), `layers.rs`, `stats.rs`
//! and `validate.rs`. The [`glossary`] defines the terms they use.
//!
//! The folders hold the speed machinery, named for what it does: `moves/` (batches of
//! moves), `refit/` (every refit, and its parallel form), `rebuild/` (the incremental
//! rebuilds: planning, laying out, choosing what to rebuild), and `parallel/` (the pair
//! search as tasks, the task runner and the tree's own worker threads). `prefetch.rs` and
//! `constants.rs` serve them all.
//!
//! # The API by task
//!
//! | task | methods |
//! |---|---|
//! | create and destroy | [`new`](DynamicTree::new), [`with_margin`](DynamicTree::with_margin), [`create_proxy`](DynamicTree::create_proxy), [`build`](DynamicTree::build), [`destroy_proxy`](DynamicTree::destroy_proxy), [`destroy_proxies`](DynamicTree::destroy_proxies), [`clear`](DynamicTree::clear) |
//! | moves | [`move_proxy`](DynamicTree::move_proxy), [`move_proxies`](DynamicTree::move_proxies), [`move_proxies_parallel`](DynamicTree::move_proxies_parallel) |
//! | pairs | [`update_pairs`](DynamicTree::update_pairs), [`update_pairs_parallel`](DynamicTree::update_pairs_parallel), [`parallel_pairs`](DynamicTree::parallel_pairs) |
//! | queries | [`query_box`](DynamicTree::query_box), [`query_point`](DynamicTree::query_point), [`query_ball`](DynamicTree::query_ball), [`cast_ray`](DynamicTree::cast_ray), [`cast_box`](DynamicTree::cast_box), [`ray_hits`](DynamicTree::ray_hits) |
//! | proxies | [`data`](DynamicTree::data), [`data_mut`](DynamicTree::data_mut), [`fat_box`](DynamicTree::fat_box), [`contains`](DynamicTree::contains), [`proxies`](DynamicTree::proxies), [`len`](DynamicTree::len), [`is_empty`](DynamicTree::is_empty) |
//! | settings | [`margin`](DynamicTree::margin), [`set_margin`](DynamicTree::set_margin), [`move_cache`](DynamicTree::move_cache), [`set_move_cache`](DynamicTree::set_move_cache), [`reserve`](DynamicTree::reserve) |
//! | inspection | [`stats`](DynamicTree::stats), [`bytes`](DynamicTree::bytes), [`validate`](DynamicTree::validate), [`root`](DynamicTree::root), [`node`](DynamicTree::node), [`visit_nodes`](DynamicTree::visit_nodes) |

mod arena;
mod build;
/// The tuning constants (thresholds, batch sizes, limits), each with its reason.
pub(crate) mod constants;
pub mod glossary;
mod insert;
mod layers;
mod moves;
mod node;
mod pairs;
pub(crate) mod parallel;
mod prefetch;
mod proxy;
mod query;
mod rebuild;
mod refit;
mod remove;
mod rotate;
mod stats;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)] // A failed unwrap is a failed test.
pub(crate) mod tests;
mod validate;

use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::Vector;
use crate::geometry::BoundingBox;

pub use constants::BatchThresholds;
pub use layers::{LayerTest, Layers};
pub(crate) use node::{LEAF, Leaf, Link, MAX_PROXIES, Node, Stamp};
pub use node::{NodeId, NodeView, ProxyId};
pub use parallel::pairs::ParallelPairs;
pub use parallel::runner::{CallingThread, TaskRunner};
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

/// The default margin by which fat boxes grow beyond the tight box, in world units.
pub const DEFAULT_MARGIN: f32 = 0.05;

/// A dynamic AABB tree over proxies carrying a payload `T` (an entity, an index...).
///
/// See the [module documentation](self) for a guide.
#[derive(Clone)]
pub struct DynamicTree<V: Vector, T = ()> {
    /// The arena of internal nodes; free ones are chained from `free_list`.
    pub(crate) nodes: Vec<Node<V>>,
    /// Where each proxy's leaf hangs, by proxy id (free ids hold [`Leaf::FREE`]).
    pub(crate) leaves: Vec<Leaf>,
    /// The move cache: each proxy's fat box by proxy id, as long as `leaves` when
    /// `move_cache` is on, empty when it is off. Moves decide against it in proxy order.
    pub(crate) fat_boxes: Vec<BoundingBox<V>>,
    /// Whether the move cache is kept (see [`DynamicTree::set_move_cache`]).
    pub(crate) move_cache: bool,
    /// Each proxy's payload, by proxy id (`None` for free ids).
    pub(crate) data: Vec<Option<T>>,
    /// Proxy ids free for reuse, the last freed on top.
    pub(crate) free_proxies: Vec<u32>,
    /// The root: an internal node, a leaf, or null for an empty tree.
    pub(crate) root: NodeId,
    /// The root's box (every other node's and leaf's box is held in its parent's slot).
    pub(crate) root_box: BoundingBox<V>,
    /// The batch sizes from which batches take their other paths.
    pub(crate) thresholds: BatchThresholds,
    /// The root's change mark.
    pub(crate) root_stamp: Stamp,
    /// The first free internal node, null when none is free.
    pub(crate) free_list: NodeId,
    /// Live proxies.
    pub(crate) proxy_count: usize,
    /// Allocated internal nodes.
    pub(crate) node_count: usize,
    /// Nodes whose stamp equals the epoch are "changed" (hold a moved leaf).
    pub(crate) epoch: Stamp,
    /// Leaves marked moved in this epoch.
    pub(crate) moved_count: usize,
    /// Whether every internal node's box is exactly its children's: set by the one-pass
    /// refit of a large batch of moves (whole or of the recent subtrees), cleared when a
    /// move grows ancestors instead.
    pub(crate) exact: bool,
    /// How far fat boxes grow beyond the tight box.
    margin: f32,
    /// State of the incremental optimization.
    pub(crate) optimizer: rebuild::Optimizer,
    /// How pair updates search, and what each search has cost recently.
    pub(crate) search: pairs::Search,
    /// How much of the tree the refits of the recent subtrees visit, for the batches of
    /// moves that may refit that way or grow ancestors.
    pub(crate) recent_refits: moves::RecentRefits,
    /// Pair updates that searched leaf by leaf since the tree was made.
    pub(crate) leaf_searches: u64,
    /// Refits run as tasks, for [`TreeStats::parallel_refits`].
    pub(crate) parallel_refits: u64,
    /// Buffers the operations reuse from one call to the next.
    pub(crate) scratch: Scratch<V>,
    /// The proxies' collision layers and the nodes' unions of them (`tree::layers`).
    pub(crate) layers: layers::LayerTable,
    /// Nodes visited by queries and pair walks since the tree was made (see
    /// [`DynamicTree::stats`]); atomic so that queries can count through `&self`.
    pub(crate) nodes_visited: Counter,
    /// Leaves reached by queries, or pairs reported by pair walks, since the tree was made.
    pub(crate) leaves_visited: Counter,
}

/// Buffers that operations reuse from one call to the next, so that a steady stream of
/// updates allocates nothing once warm. Only their room matters between calls: a clone
/// starts with empty ones.
#[derive(Debug, Default)]
pub(crate) struct Scratch<V: Vector> {
    /// Rebuilds.
    pub build: build::BuildScratch<V>,
    /// Re-layouts.
    pub layout: rebuild::layout::LayoutScratch<V>,
    /// Leaves of a batch of moves waiting for their new boxes (see `move_proxies`).
    pub moves: moves::PendingMoves<V>,
    /// The pair walks, serial and parallel, and the refits.
    pub pairs: pairs::PairStacks,
    /// Subtree rebuilds on the calling thread.
    pub plan: rebuild::plan::RebuildPlan<V>,
    /// Subtree rebuilds planned ahead on several threads, and which candidates they are
    /// (see `DynamicTree::optimize_on`).
    pub plans: Vec<std::sync::Mutex<rebuild::plan::RebuildPlan<V>>>,
    pub ahead: Vec<usize>,
    /// Parallel refits.
    pub refit: refit::parallel::RefitScratch<V>,
    /// The worker threads of the parallel calls, kept between them (see `tree::parallel::workers`).
    pub workers: Option<parallel::workers::WorkerPool>,
}

impl<V: Vector> Clone for Scratch<V> {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// A statistics counter that queries bump through `&self`; a clone starts at the same count.
#[derive(Debug, Default)]
pub(crate) struct Counter(AtomicU64);

impl Clone for Counter {
    fn clone(&self) -> Self {
        Self(AtomicU64::new(self.load(Ordering::Relaxed)))
    }
}

impl core::ops::Deref for Counter {
    type Target = AtomicU64;

    fn deref(&self) -> &AtomicU64 {
        &self.0
    }
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

impl<V: Vector, T> DynamicTree<V, T> {
    /// An empty tree with the [default margin](DEFAULT_MARGIN).
    pub fn new() -> Self {
        Self {
            nodes: Vec::new(),
            leaves: Vec::new(),
            fat_boxes: Vec::new(),
            move_cache: true,
            thresholds: BatchThresholds::default(),
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
            optimizer: Default::default(),
            search: Default::default(),
            recent_refits: Default::default(),
            leaf_searches: 0,
            parallel_refits: 0,
            scratch: Default::default(),
            layers: Default::default(),
            nodes_visited: Counter::default(),
            leaves_visited: Counter::default(),
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

    /// Sets the margin used by later moves.
    ///
    /// # Errors
    ///
    /// [`TreeError::InvalidValue`] for a NaN, infinite or negative value; the old margin
    /// stays.
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
    pub(crate) fn height(&self) -> u16 {
        if self.root.is_null() {
            0
        } else {
            self.height_of(self.root)
        }
    }

    /// Number of proxies moved (or inserted) since the last [`Self::update_pairs`] (also
    /// reported by [`Self::stats`], which walks the tree).
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

    /// Every live proxy with its payload and fat box, in id order.
    pub fn proxies(&self) -> impl Iterator<Item = (ProxyId, &T, BoundingBox<V>)> + '_ {
        self.payloads().filter_map(|(id, data)| {
            let leaf = self.leaves[id.index()];
            leaf.is_live()
                .then(|| (id, data, self.stored_fat_box(id, leaf)))
        })
    }

    /// Every live proxy with its payload, in id order: [`Self::proxies`] without the fat
    /// boxes, which it does not read.
    pub(crate) fn payloads(&self) -> impl Iterator<Item = (ProxyId, &T)> + '_ {
        self.data
            .iter()
            .enumerate()
            .filter_map(|(i, data)| Some((ProxyId(i as u32), data.as_ref()?)))
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
        self.search = Default::default();
        self.recent_refits = Default::default();
        self.layers = Default::default();
    }

    /// The leaf of a live proxy. A live proxy always has a payload and a leaf linked into
    /// the tree ([`Self::validate`] checks both), so neither is read here.
    #[inline]
    pub(crate) fn live_leaf(&self, id: ProxyId) -> Option<&Leaf> {
        self.leaves.get(id.index()).filter(|leaf| leaf.is_live())
    }
}
