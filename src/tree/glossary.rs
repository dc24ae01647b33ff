//! A glossary of the terms the tree's code uses, and the published methods it follows.
//!
//! # Glossary
//!
//! The shape of the tree:
//!
//! - **Proxy, leaf**: a proxy is one box with its payload, named by a [`ProxyId`] (dense,
//!   stable, reused once destroyed: `free_proxies`, `mod.rs`); its leaf, in the table of
//!   leaves by proxy id (`Leaf`, `node.rs`), holds only its link, not in the arena.
//! - **Internal node**: an entry of the arena (`Node`, `node.rs`): its two children, their
//!   boxes and marks, its own link and its height (0 for a leaf, 1 + the children's).
//! - **Root**: the top of the tree, an internal node, a leaf or null; it has no parent
//!   slot, so its box and mark are the tree's own `root_box` and `root_stamp` (`mod.rs`).
//! - **Node id**: a [`NodeId`], the arena index of an internal node or a proxy id with the
//!   leaf tag bit (`LEAF`, `node.rs`); an internal node's id lasts until the shape changes.
//! - **Arena, free list**: the vector of internal nodes; free ones (height `FREE_HEIGHT`)
//!   are chained through their `parent` field from `free_list` (`arena.rs`, `node.rs`).
//! - **Slot**: one of an internal node's two child positions, holding the child's id, box
//!   and mark; a node's own box and mark live in its parent's slot (`slot_box`,
//!   `arena.rs`). In `rebuild/layout.rs` and `rebuild/plan.rs`, a slot is a position in the arena.
//! - **Link**: where a node or leaf hangs: the parent's index with a bit for the second
//!   slot, or `Link::ROOT`, or `Link::FREE` for a free proxy id (`Link`, `node.rs`).
//! - **Tight box, fat box, margin, keep rule**: the fat box is the caller's tight box swept
//!   along the predicted displacement and grown by the margin (`fatten`, `proxy.rs`); the
//!   tree stores and tests fat boxes only. A move keeps the fat box while it holds the
//!   tight box and is at most four times the area of the one the move would give
//!   (`keeps_fat_box`, `proxy.rs`).
//! - **Move cache**: a copy of every fat box by proxy id (`fat_boxes`, `mod.rs`), which the
//!   moves decide against in proxy order (see [`set_move_cache`]).
//!
//! Change marks:
//!
//! - **Epoch**: the tree's update counter (`epoch`, `mod.rs`), advanced by `clear_marks`
//!   (`arena.rs`) at the end of each pair update; on wrapping, every mark goes back by 128.
//! - **Stamp, mark**: a `Stamp` (`node.rs`), the epoch at which a slot last changed, one
//!   per slot in `Node::stamps`; its age (`mark_age`, `arena.rs`) is counted in updates.
//! - **Moved, changed**: a leaf whose mark equals the epoch has moved (or is new) in this
//!   update; an internal node so marked is changed: it holds a moved leaf (`mark_moved`,
//!   `arena.rs`).
//! - **Recent**: a mark younger than `RECENT` updates (`constants.rs`). The *recent refit*
//!   (`refit_recent`, `refit/mod.rs`) visits only recent subtrees; `RecentRefits` notes
//!   how much of the tree it visited, to choose how middling batches update ancestors.
//! - **Still**: a subtree in which no leaf moved for `STILL_AFTER` updates (`constants.rs`);
//!   rebuilds keep it whole and set it apart from the moving leaves.
//!
//! Moves and updates:
//!
//! - **Grow**: the walk up from a leaf whose fat box changed, enlarging and marking each
//!   ancestor until one encloses the box and is marked already (`grow_from`, `arena.rs`).
//! - **Refit, exact**: recomputing internal boxes, heights and marks from the children,
//!   children first (`refit_node`, `arena.rs`): of the whole tree, of the recent subtrees
//!   or of the changed paths (`refit/mod.rs`), in the pair walk (`pairs/walk.rs`), or as
//!   parallel tasks (`refit/parallel.rs`). The flag `exact` (`mod.rs`) is set while every
//!   internal box is its children's union, after a batch's one-pass refit.
//! - **Batch**: the moves of one [`move_proxies`] or [`move_proxies_parallel`] call
//!   (`moves/`), decided one by one; their ancestors are then grown in memory order, or
//!   refit in one pass when many leaves changed.
//! - **Pending moves, pending bits**: `PendingMoves` (`moves/mod.rs`) holds a batch's
//!   decided leaves (link and new box) until their ancestors are updated; its `changed`
//!   bits, one per proxy, note changes whose new boxes are so far in the move cache only.
//! - **Update**: one [`update_pairs`] call (`pairs/mod.rs`): the changed part is refit and
//!   searched for pairs, a new epoch starts, then the incremental optimization runs.
//! - **Pair walk**: the search that walks the changed part of the tree against itself in
//!   tasks *self(N)*, *cross(X, Y)*, *refit(N)* and *leaf tasks* (`pairs/walk.rs`,
//!   `pairs/stacks.rs`), refitting and rotating changed nodes on its way back up.
//! - **Leaf-by-leaf search**: the other search, each moved leaf walked against the whole
//!   tree (`pairs/leaves.rs`). When fewer than one proxy in eight moved, `Search`
//!   (`pairs/search.rs`) picks the search that cost less per moved proxy lately (nodes
//!   visited, a leaf-by-leaf visit weighted 1.5), trying the other now and then.
//! - **Child ref**: the pair walk's name for a child: an internal node's id, or a leaf's
//!   parent and slot with the leaf tag (`child_ref`, `pairs/mod.rs`).
//!
//! Rebuilds and rotations:
//!
//! - **Rotation**: a swap of a child with a grandchild, or of two grandchildren, at one
//!   node when it lowers the summed area below it (`rotate.rs`): on the way up after an
//!   insertion, and in the pair walk's refits of low nodes when few proxies moved.
//! - **Build, split, item**: a top-down build over *items* (`BuildItem`, `build.rs`),
//!   leaves and subtrees kept whole, each range of items cut in two by `split`.
//! - **Rebuild, plan**: `rebuild_subtree` (`build.rs`) rebuilds one subtree over the same
//!   arena slots in two steps: `plan_rebuild` makes a `RebuildPlan`, reading the tree
//!   only, and `apply_rebuild` writes it (`rebuild/plan.rs`).
//! - **Candidate**: a changed subtree of the rebuild height, noted by an update's refit
//!   for the next optimization run (`Optimizer::candidates`, `rebuild/mod.rs`).
//! - **Credit**: the leaves an optimization run may place anew, one per five fat-box
//!   changes counted in `Optimizer::changes` (`rebuild/mod.rs`); a run starts once it covers
//!   a subtree of the rebuild size. Every other run also rebuilds the *top* of the tree
//!   over subtrees of about `sqrt(n)` leaves, kept whole.
//! - **Layout**: the order in which rebuilds place a subtree's nodes in the arena, depth
//!   first with siblings side by side (`rebuild/layout.rs`).
//!
//! Layers, threads and memory:
//!
//! - **Layers, unions, stale**: each proxy's [`Layers`] and each internal node's unions of
//!   its leaves' (`LayerTable`, `layers.rs`); a change of shape makes the unions stale,
//!   and walks prune by them again only after [`refresh_layers`].
//! - **Task, stage, workers**: a stage is a set of independent tasks that one
//!   `TaskRunner::run` call (`parallel/runner.rs`) hands out and that all end before it returns;
//!   the workers are the tree's own threads, a rayon pool kept between calls with the
//!   `parallel` feature (`WorkerPool`, `parallel/workers.rs`).
//! - **Prefetch, scratch**: `prefetch_node` (`prefetch.rs`) starts loading a node's
//!   children before a walk reads them; `Scratch` (`mod.rs`) holds the buffers that
//!   operations reuse from one call to the next.
//!
//! # Methods
//!
//! - Fat boxes with a margin and a predicted displacement, one leaf per proxy: Box2D's
//!   dynamic tree (Erin Catto) (`proxy.rs`).
//! - Insertion by surface-area cost with branch-and-bound lower bounds (Bittner, Hapala and
//!   Havran 2013, "Fast Insertion-Based Optimization of Bounding Volume Hierarchies"),
//!   taken as a single descent as in Box2D v3 (`insert.rs`).
//! - Tree rotations that lower the surface area (Kopta et al. 2012, "Fast, Effective BVH
//!   Updates for Animated Scenes") (`rotate.rs`).
//! - Binned SAH builds (Wald 2007, "On fast Construction of SAH-based Bounding Volume
//!   Hierarchies"), for whole builds and for rebuilt subtrees (`build.rs`).
//! - Incremental rebuilds of changed subtrees and of the tree's top with the binned SAH,
//!   unchanged subtrees kept whole (`rebuild/mod.rs`, `rebuild.rs`).
//! - Pairs of moved proxies found by querying each against the tree, as Box2D's broad
//!   phase does: the leaf-by-leaf search (`pairs/leaves.rs`).
//!
//! [`ProxyId`]: super::ProxyId
//! [`NodeId`]: super::NodeId
//! [`Layers`]: super::Layers
//! [`set_move_cache`]: super::DynamicTree::set_move_cache
//! [`move_proxies`]: super::DynamicTree::move_proxies
//! [`move_proxies_parallel`]: super::DynamicTree::move_proxies_parallel
//! [`update_pairs`]: super::DynamicTree::update_pairs
//! [`refresh_layers`]: super::DynamicTree::refresh_layers
