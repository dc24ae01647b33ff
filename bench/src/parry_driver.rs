//! The parry peer of the benchmarks: parry's [`Bvh`](parry2d::partitioning::Bvh) driven
//! exactly the way rapier's broad phase drives it.
//!
//! The reference is rapier's `BroadPhaseBvh` (dimforge/rapier, `src/geometry/broad_phase_bvh/
//! mod.rs` and `update.rs`, the version written against parry 0.31), built without its
//! `parallel` feature. One [`step`](ParryBroadPhase2d::step) replays `BroadPhaseBvh::update` for
//! a scene in which every box with a non-zero velocity is a "modified collider" and nothing is
//! added or removed:
//!
//! 1. run the optimization the previous step deferred, if any (`optimize_incremental` then
//!    `refit_without_resolve`), as `update` does when nothing ran it in between;
//! 2. for every moving box, `update_partially_if_present(tight box, i, margin)` (in-place
//!    update), or, in the regime where few leaves change, `reinsert_or_update_if_present`
//!    (removal + SAH re-insertion). Both leave the leaf untouched when its stored fat box still
//!    contains the tight box, and otherwise store `tight box ± margin` and flag the leaf as
//!    changed;
//! 3. rapier's scheduling: decide whether `optimize_incremental` runs (and whether it is
//!    deferred to the next step), then `refit` (full) or `refit_partial` (ancestors of the
//!    leaves changed this step and the previous one);
//! 4. `traverse_bvtt_single_tree::<true>`: the tree walked against itself, visiting only
//!    subtrees holding a changed leaf. It reports every overlapping pair of stored (fat) boxes
//!    with at least one changed leaf, each once.
//!
//! Rapier then keeps the persistent pair set up to date (a hash map of pairs, per-collider
//! adjacency lists and a stale-pair scan around the changed colliders). That part is optional
//! here: [`new`](ParryBroadPhase2d::new) leaves it out, [`with_pair_tracking`](
//! ParryBroadPhase2d::with_pair_tracking) mirrors it.
//!
//! A binary of this package includes it with `#[path = "../parry_driver.rs"] mod
//! parry_driver;` next to the scene module (the driver reads `super::scene::Scene`).

#![allow(dead_code)]

use super::scene::Scene;

/// What one [`step`](ParryBroadPhase2d::step) did, for reports and sanity checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepStats {
    /// Leaves whose stored fat box was rewritten (or relocated) this step.
    pub updated_leaves: usize,
    /// Whether leaves were relocated by SAH re-insertion instead of updated in place.
    pub reinserted: bool,
    /// Whether the optimization deferred by the previous step ran at the start of this one.
    pub ran_deferred_optimize: bool,
    /// Whether `optimize_incremental` ran inline (before the refit) this step.
    pub ran_inline_optimize: bool,
    /// Whether this step scheduled an optimization for the start of the next step.
    pub deferred_optimize: bool,
    /// Whether the refit was a full `refit` (otherwise `refit_partial`).
    pub full_refit: bool,
    /// Pairs reported by the changed-subtree traversal.
    pub candidates: usize,
    /// Pairs added to the persistent pair set (pair tracking only).
    pub added: usize,
    /// Pairs removed from the persistent pair set (pair tracking only).
    pub removed: usize,
}

macro_rules! parry_broad_phase {
    ($(#[$meta:meta])* $name:ident, $tracker:ident, $parry:ident, $dim:literal) => {
        $(#[$meta])*
        pub struct $name {
            tree: $parry::partitioning::Bvh,
            workspace: $parry::partitioning::BvhWorkspace,
            /// Fat-box margin (rapier's "change detection skin").
            margin: f32,
            /// Rapier's `frame_index`.
            frame_index: u32,
            /// Rapier's `changes_since_optimize`.
            changes_since_optimize: u32,
            /// Rapier's `reinsert_leaf_updates`.
            reinsert_leaf_updates: bool,
            /// Rapier's `deferred_optimize_pending`.
            deferred_optimize_pending: bool,
            /// The "modified colliders" of every step: boxes with a non-zero velocity.
            moving: Vec<u32>,
            /// Rapier's `curr_updated_leaves` (also its `updated_colliders`: one leaf per box).
            curr_updated: Vec<u32>,
            /// Rapier's `prev_updated_leaves`.
            prev_updated: Vec<u32>,
            /// Pairs reported by the last traversal (rapier's `candidates_scratch`).
            candidates: Vec<(u32, u32)>,
            /// Rapier's persistent pair bookkeeping, when enabled.
            tracker: Option<$tracker>,
            stats: StepStats,
        }

        impl $name {
            /// Builds the tree from the scene as rapier's first `update` does: every box is
            /// inserted with `insert_or_update_partially` (SAH descent with rotations), then
            /// the tree is fully refitted and traversed (all leaves are new, so the traversal
            /// reports every overlapping pair: see [`Self::pairs`]).
            ///
            /// Unlike rapier, which inserts the un-fattened box, the stored leaves are the fat
            /// boxes (`tight ± margin`), so that pairs mean "fat boxes overlap" from the start.
            pub fn new(scene: &Scene<$dim>) -> Self {
                Self::build(scene, false, false)
            }

            /// The tree of the scene's fat boxes built at once by parry's binned SAH
            /// builder (`Bvh::from_leaves` with `BvhBuildStrategy::Binned`), as a user who
            /// builds a tree to query it would, then traversed as [`Self::new`] does (every
            /// leaf is new). The rows "after the build" of the ray and box-query scenarios
            /// use it.
            pub fn binned(scene: &Scene<$dim>) -> Self {
                Self::build(scene, false, true)
            }

            /// Same as [`Self::new`], and also maintains rapier's persistent pair set (pair map,
            /// adjacency lists, stale-pair removal) at every step, so that
            /// [`Self::tracked_pairs`] holds every overlapping pair of fat boxes.
            pub fn with_pair_tracking(scene: &Scene<$dim>) -> Self {
                Self::build(scene, true, false)
            }

            fn build(scene: &Scene<$dim>, track_pairs: bool, binned: bool) -> Self {
                let n = scene.len();
                let mut this = Self {
                    tree: $parry::partitioning::Bvh::new(),
                    workspace: $parry::partitioning::BvhWorkspace::default(),
                    margin: scene.margin,
                    frame_index: 0,
                    changes_since_optimize: 0,
                    reinsert_leaf_updates: false,
                    deferred_optimize_pending: false,
                    moving: (0..n as u32)
                        .filter(|&i| scene.velocities[i as usize].iter().any(|&v| v != 0.0))
                        .collect(),
                    curr_updated: Vec::with_capacity(n),
                    prev_updated: Vec::with_capacity(n),
                    candidates: Vec::new(),
                    tracker: track_pairs.then(|| $tracker::new(n)),
                    stats: StepStats::default(),
                };

                this.frame_index = 1;
                if binned {
                    let fat: Vec<_> = (0..n)
                        .map(|i| Self::aabb(scene.fat_min(i), scene.fat_max(i)))
                        .collect();
                    this.tree = $parry::partitioning::Bvh::from_leaves(
                        $parry::partitioning::BvhBuildStrategy::Binned,
                        &fat,
                    );
                    this.curr_updated.extend(0..n as u32);
                } else {
                    // Rapier's first `update`: every collider is new and inserted.
                    for i in 0..n {
                        let fat = Self::aabb(scene.fat_min(i), scene.fat_max(i));
                        let status =
                            this.tree.insert_or_update_partially(fat, i as u32, this.margin);
                        debug_assert_eq!(
                            status,
                            $parry::partitioning::BvhLeafUpdateStatus::Inserted
                        );
                        this.curr_updated.push(i as u32);
                    }
                }
                // `first_pass`: full refit, no optimization (insertions accrue no debt). The
                // binned builder refits the tree itself, which turns every leaf's pending
                // change into a change the traversal sees; a second refit would clear them.
                if !binned {
                    this.tree.refit(&mut this.workspace);
                }
                core::mem::swap(&mut this.prev_updated, &mut this.curr_updated);
                this.reinsert_leaf_updates = false;
                let (added, removed) = this.collect_pairs();
                this.stats = StepStats {
                    updated_leaves: n,
                    full_refit: true,
                    candidates: this.candidates.len(),
                    added,
                    removed,
                    ..StepStats::default()
                };
                this
            }

            #[inline]
            fn aabb(min: [f32; $dim], max: [f32; $dim]) -> $parry::bounding_volume::Aabb {
                $parry::bounding_volume::Aabb::new(
                    $parry::math::Vector::from(min),
                    $parry::math::Vector::from(max),
                )
            }

            /// One broad-phase step on the scene's current centers, following rapier's
            /// `BroadPhaseBvh::update` call for call. Returns the number of pairs the
            /// changed-subtree traversal reported (see [`Self::pairs`]).
            pub fn step(&mut self, scene: &Scene<$dim>) -> usize {
                use $parry::partitioning::BvhLeafUpdateStatus;

                let mut stats = StepStats::default();
                self.frame_index = self.frame_index.wrapping_add(1);

                // The optimization the previous step deferred (in rapier it overlaps the
                // narrow phase on another thread, or runs inline at the pipeline's join point
                // in a sequential build, or here when the broad phase is driven alone).
                if self.deferred_optimize_pending {
                    self.deferred_optimize_pending = false;
                    self.tree.optimize_incremental(&mut self.workspace);
                    self.tree.refit_without_resolve(&mut self.workspace);
                    stats.ran_deferred_optimize = true;
                }

                // No removals, no insertions after `new`.
                let first_pass = false;
                self.curr_updated.clear();

                let leaf_count = self.tree.leaf_count() as usize;
                let use_reinsert = self.reinsert_leaf_updates
                    && self.moving.len() * 16 < leaf_count
                    && !first_pass;
                stats.reinserted = use_reinsert;

                for &i in &self.moving {
                    let tight = Self::aabb(scene.min(i as usize), scene.max(i as usize));
                    let status = if use_reinsert {
                        self.tree.reinsert_or_update_if_present(tight, i, self.margin)
                    } else {
                        self.tree.update_partially_if_present(tight, i, self.margin)
                    };
                    match status.expect("every box has had a leaf since `new`") {
                        BvhLeafUpdateStatus::Unchanged => {}
                        status => {
                            if !use_reinsert && status == BvhLeafUpdateStatus::UpdatedInPlace {
                                self.changes_since_optimize =
                                    self.changes_since_optimize.saturating_add(1);
                            }
                            self.curr_updated.push(i);
                        }
                    }
                }

                // Rapier's optimizer / refit scheduling.
                let num_updated = self.curr_updated.len();
                stats.updated_leaves = num_updated;
                self.reinsert_leaf_updates = num_updated * 16 < self.tree.leaf_count() as usize;
                let run_optimizer = self.changes_since_optimize > 0
                    && (num_updated * 16 >= leaf_count
                        || (self.frame_index % 8 == 0
                            && self.changes_since_optimize as usize * 64 >= leaf_count));
                let must_full_refit = first_pass;
                let defer_optimize = run_optimizer && !must_full_refit;
                if run_optimizer {
                    self.changes_since_optimize = 0;
                }
                if run_optimizer && !defer_optimize {
                    self.tree.optimize_incremental(&mut self.workspace);
                    stats.ran_inline_optimize = true;
                }

                let partial_refit_too_expensive = (num_updated + self.prev_updated.len()) * 16
                    >= self.tree.leaf_count() as usize;
                let full_refit = must_full_refit
                    || (run_optimizer && !defer_optimize)
                    || partial_refit_too_expensive;
                if full_refit {
                    self.tree.refit(&mut self.workspace);
                } else {
                    self.tree.refit_partial(&self.prev_updated, &self.curr_updated);
                }
                stats.full_refit = full_refit;
                core::mem::swap(&mut self.prev_updated, &mut self.curr_updated);
                self.deferred_optimize_pending |= defer_optimize;
                stats.deferred_optimize = defer_optimize;

                (stats.added, stats.removed) = self.collect_pairs();
                stats.candidates = self.candidates.len();
                self.stats = stats;
                self.candidates.len()
            }

            /// The changed-subtree traversal, then rapier's pair bookkeeping if enabled. The
            /// leaves updated this step are in `prev_updated` (swapped by the caller). Returns
            /// the pairs added to and removed from the persistent pair set.
            fn collect_pairs(&mut self) -> (usize, usize) {
                self.candidates.clear();
                let candidates = &mut self.candidates;
                self.tree
                    .traverse_bvtt_single_tree::<true>(&mut self.workspace, &mut |a, b| {
                        candidates.push((a, b))
                    });
                match &mut self.tracker {
                    Some(tracker) => tracker.update(
                        &self.tree,
                        &self.candidates,
                        &self.prev_updated,
                        self.frame_index,
                    ),
                    None => (0, 0),
                }
            }

            /// The pairs the last traversal reported (the last [`Self::step`], or the build in
            /// [`Self::new`], where they are all the overlapping pairs): every pair of stored
            /// fat boxes that overlap and of which at least one changed, each once, in
            /// traversal order and orientation.
            pub fn pairs(&self) -> &[(u32, u32)] {
                &self.candidates
            }

            /// What the last step did.
            pub fn stats(&self) -> StepStats {
                self.stats
            }

            /// The persistent pair set (as `(min, max)` index pairs, in hash order), when built
            /// with [`Self::with_pair_tracking`].
            pub fn tracked_pairs(&self) -> Option<impl Iterator<Item = (u32, u32)> + '_> {
                self.tracker.as_ref().map(|t| t.pairs.keys().copied())
            }

            /// The fat box stored for box `i`, as `(min, max)`.
            pub fn fat_box(&self, i: u32) -> Option<([f32; $dim], [f32; $dim])> {
                self.tree
                    .leaf_node(i)
                    .map(|node| (node.mins().to_array(), node.maxs().to_array()))
            }

            /// The parry tree itself.
            pub fn tree(&self) -> &$parry::partitioning::Bvh {
                &self.tree
            }

            /// Every box whose fat box overlaps the box `(min, max)`, with `Bvh::intersect_aabb`
            /// (inclusive, as rapier's query pipeline uses it): how many, and the sum of their
            /// indices.
            pub fn query_box(&self, min: [f32; $dim], max: [f32; $dim]) -> (u32, u64) {
                let aabb = Self::aabb(min, max);
                let (mut count, mut sum) = (0u32, 0u64);
                for i in self.tree.intersect_aabb(&aabb) {
                    count += 1;
                    sum += u64::from(i);
                }
                (count, sum)
            }

            /// Closest hit of the ray `origin + t * dir`, `t` in `[0, max_toi)`, against the
            /// scene's tight boxes, as rapier's query pipeline casts a ray on its BVH (through
            /// parry's composite-shape ray cast): `Bvh::cast_ray` (a best-first walk pruned by
            /// the best hit so far) with a leaf test that casts the ray on the box, solid (a ray
            /// starting inside a box hits it at `t = 0`). Returns the box index and `t`, in units
            /// of `dir` (directions are not normalized).
            pub fn closest_ray(
                &self,
                origin: [f32; $dim],
                dir: [f32; $dim],
                max_toi: f32,
                scene: &Scene<$dim>,
            ) -> Option<(u32, f32)> {
                use $parry::query::RayCast;

                let ray = $parry::query::Ray::new(
                    $parry::math::Vector::from(origin),
                    $parry::math::Vector::from(dir),
                );
                let hit = self.tree.cast_ray(&ray, max_toi, |leaf, best_so_far| {
                    let i = leaf as usize;
                    Self::aabb(scene.min(i), scene.max(i)).cast_local_ray(&ray, best_so_far, true)
                })?;
                (hit.1 < max_toi).then_some(hit)
            }
        }

        /// Rapier's persistent pair bookkeeping (`pairs`, `pair_adjacency`, `updated_mask`,
        /// `stale_pairs` of `BroadPhaseBvh`), keyed by leaf index.
        struct $tracker {
            /// Pair `(min, max)` → frame of its creation.
            pairs: $parry::utils::hashmap::HashMap<(u32, u32), u32>,
            /// For each box, the boxes it currently forms a pair with.
            adjacency: Vec<Vec<u32>>,
            updated_mask: Vec<bool>,
            stale_pairs: Vec<(u32, u32)>,
        }

        impl $tracker {
            fn new(n: usize) -> Self {
                Self {
                    pairs: Default::default(),
                    adjacency: vec![Vec::new(); n],
                    updated_mask: Vec::new(),
                    stale_pairs: Vec::new(),
                }
            }

            /// Adds the traversal's new pairs, then removes the pairs next to an updated leaf
            /// whose fat boxes no longer overlap. Returns `(added, removed)`.
            fn update(
                &mut self,
                tree: &$parry::partitioning::Bvh,
                candidates: &[(u32, u32)],
                updated: &[u32],
                frame_index: u32,
            ) -> (usize, usize) {
                // New pairs: the candidates not already in the map.
                let mut added = 0;
                for &(a, b) in candidates {
                    let key = (a.min(b), a.max(b));
                    if self.pairs.contains_key(&key) {
                        continue;
                    }
                    self.pairs.insert(key, frame_index);
                    self.adjacency[key.0 as usize].push(key.1);
                    self.adjacency[key.1 as usize].push(key.0);
                    added += 1;
                }

                // Stale pairs: only pairs next to an updated leaf can stop overlapping. A pair
                // whose two sides were both updated is examined from its lower index only.
                self.stale_pairs.clear();
                self.updated_mask.clear();
                self.updated_mask.resize(
                    updated.iter().map(|&i| i as usize + 1).max().unwrap_or(0),
                    false,
                );
                for &i in updated {
                    self.updated_mask[i as usize] = true;
                }
                for &i in updated {
                    let node_self = tree.leaf_node(i);
                    for &other in &self.adjacency[i as usize] {
                        if i > other
                            && self.updated_mask.get(other as usize).copied().unwrap_or(false)
                        {
                            continue;
                        }
                        let key = (i.min(other), i.max(other));
                        let (Some(node0), Some(node1)) = (node_self, tree.leaf_node(other)) else {
                            self.stale_pairs.push(key);
                            continue;
                        };
                        if (node0.is_changed() || node1.is_changed()) && !node0.intersects(node1) {
                            self.stale_pairs.push(key);
                        }
                    }
                }

                self.stale_pairs.sort_unstable();
                let mut removed = 0;
                for &(a, b) in &self.stale_pairs {
                    if self.pairs.remove(&(a, b)).is_some() {
                        for (x, y) in [(a, b), (b, a)] {
                            let others = &mut self.adjacency[x as usize];
                            if let Some(pos) = others.iter().position(|&o| o == y) {
                                others.swap_remove(pos);
                            }
                        }
                        removed += 1;
                    }
                }
                (added, removed)
            }
        }
    };
}

parry_broad_phase!(
    /// parry2d's `Bvh` driven like rapier's 2D broad phase.
    ParryBroadPhase2d,
    PairTracker2d,
    parry2d,
    2
);

parry_broad_phase!(
    /// parry3d's `Bvh` driven like rapier's 3D broad phase.
    ParryBroadPhase3d,
    PairTracker3d,
    parry3d,
    3
);
