//! This crate's side of the benchmarks: [`DynamicTree`] driven on the shared scene
//! (`support/scene.rs`) the same way `support/parry_driver.rs` drives parry's `Bvh`.
//!
//! - [`new`](OursBroadPhase::new) builds the tree at once with [`DynamicTree::build`]
//!   (binned SAH) from the scene's tight boxes, with the scene's margin (0.05), and runs the
//!   first [`DynamicTree::update_pairs`], which reports every overlapping pair (every leaf is
//!   new), as the parry driver's first traversal does.
//! - One [`step`](OursBroadPhase::step): for every box with a non-zero velocity (the parry
//!   driver's "modified colliders"), [`DynamicTree::move_proxy`] with its new tight box, then
//!   [`DynamicTree::update_pairs`] into a reused `Vec`. Returns the number of pairs: every
//!   pair of overlapping fat boxes with at least one leaf whose fat box changed this step,
//!   each once, which is what parry's changed-subtree traversal reports.
//!
//! # Predicted displacement
//!
//! `move_proxy` takes the displacement expected before the next update and stretches the fat
//! box along it. rapier's broad phase (and so the parry driver) has no such thing: a leaf that
//! leaves its fat box gets `tight ± margin`. With [`Displacement::Zero`] (the default, used for
//! the headline figures) our fat boxes are `tight.swept(0).grown(margin)`, the same boxes bit
//! for bit, so both trees see exactly the same leaves change and must report exactly the same
//! pairs: the comparison is then between the two trees' algorithms alone, and the pair counts
//! check it. [`Displacement::Velocity`] passes `velocity * dt` instead, the way the Bevy plugin
//! does: fewer leaves change per step for fast boxes, at the price of larger fat boxes (more
//! pairs reported); it is a different workload and its pair counts differ from parry's.
//!
//! Both drivers pay their own conversions (`[f32; D]` to `Vec2`/`Vec3` here, to parry's
//! vectors there) inside the step.
//!
//! Included with `#[path = ...] mod ours_driver;` next to the scene module (the driver reads
//! `super::scene::Scene`) by the benchmark package (`bench/`) and `tests/tree/steady_state.rs`.

#![allow(dead_code)]

use bevy_aabb_tree::{BoundingBox, DynamicTree, ProxyId, Ray, Vector};
use glam::{Vec2, Vec3};

use super::scene::Scene;

/// A vector type built from the scene's `[f32; D]` arrays.
pub trait FromArray<const D: usize>: Vector {
    /// The vector with these components.
    fn from_array(a: [f32; D]) -> Self;
}

impl FromArray<2> for Vec2 {
    #[inline]
    fn from_array(a: [f32; 2]) -> Self {
        Vec2::from_array(a)
    }
}

impl FromArray<3> for Vec3 {
    #[inline]
    fn from_array(a: [f32; 3]) -> Self {
        Vec3::from_array(a)
    }
}

/// What `move_proxy` is told about the motion to come (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Displacement {
    /// Zero: fat boxes are `tight ± margin`, exactly parry's.
    #[default]
    Zero,
    /// `velocity * dt`: fat boxes stretched along the motion.
    Velocity,
}

/// [`DynamicTree`] driven on a [`Scene`] like a broad phase.
pub struct OursBroadPhase<V: FromArray<D>, const D: usize> {
    tree: DynamicTree<V, u32>,
    /// The proxy of each box.
    ids: Vec<ProxyId>,
    /// The boxes with a non-zero velocity, moved every step.
    moving: Vec<u32>,
    displacement: Displacement,
    /// Pairs of the last update, reused.
    pairs: Vec<(ProxyId, ProxyId)>,
    /// Leaves whose fat box changed in the last step.
    updated: usize,
    /// Threads of the pair update (1: the serial `update_pairs`).
    threads: usize,
}

/// The 2D driver.
pub type OursBroadPhase2d = OursBroadPhase<Vec2, 2>;
/// The 3D driver.
pub type OursBroadPhase3d = OursBroadPhase<Vec3, 3>;

impl<V: FromArray<D>, const D: usize> OursBroadPhase<V, D> {
    /// Builds the tree from the scene (zero predicted displacement).
    pub fn new(scene: &Scene<D>) -> Self {
        Self::with_displacement(scene, Displacement::Zero)
    }

    /// Builds the tree from the scene, telling `move_proxy` the displacement `displacement`.
    pub fn with_displacement(scene: &Scene<D>, displacement: Displacement) -> Self {
        let n = scene.len();
        let mut tree = DynamicTree::with_margin(scene.margin);
        let ids = tree
            .build((0..n).map(|i| (Self::tight(scene, i), i as u32)))
            .expect("the scene's boxes are valid");
        let mut this = Self {
            tree,
            ids,
            moving: (0..n as u32)
                .filter(|&i| scene.velocities[i as usize].iter().any(|&v| v != 0.0))
                .collect(),
            displacement,
            pairs: Vec::new(),
            updated: n,
            threads: 1,
        };
        this.tree.update_pairs(&mut this.pairs);
        this
    }

    /// Runs later pair updates on `threads` threads
    /// ([`DynamicTree::update_pairs_parallel`]); 1 is the serial update.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// Keeps the tree's move cache or frees it ([`DynamicTree::set_move_cache`]).
    pub fn set_move_cache(&mut self, on: bool) {
        self.tree.set_move_cache(on);
    }

    /// The pair update of a step, serial or parallel.
    fn update_pairs(&mut self) {
        self.pairs.clear();
        if self.threads > 1 {
            self.tree
                .update_pairs_parallel(&mut self.pairs, self.threads);
        } else {
            self.tree.update_pairs(&mut self.pairs);
        }
    }

    #[inline]
    fn tight(scene: &Scene<D>, i: usize) -> BoundingBox<V> {
        BoundingBox::from_min_max(V::from_array(scene.min(i)), V::from_array(scene.max(i)))
    }

    /// One step on the scene's current centers: move every moving box, then update the pairs.
    /// Returns the number of pairs reported (see [`Self::pairs`]).
    pub fn step(&mut self, scene: &Scene<D>) -> usize {
        self.move_all(scene);
        self.update_pairs();
        self.pairs.len()
    }

    /// [`Self::step`] with the pair update split into at least `min_tasks` tasks
    /// ([`DynamicTree::parallel_pairs`]) run here one after the other, as a task pool would
    /// run them: the parallel path without threads.
    pub fn step_with_tasks(&mut self, scene: &Scene<D>, min_tasks: usize) -> usize {
        self.move_all(scene);
        self.pairs.clear();
        let job = self.tree.parallel_pairs(min_tasks);
        for task in 0..job.task_count() {
            job.run(task, |a, b| self.pairs.push((a, b)));
        }
        drop(job);
        self.pairs.len()
    }

    /// [`Self::step`] with the pair update [`DynamicTree::update_pairs_parallel`] on
    /// `threads` threads, whatever [`Self::set_threads`] said.
    pub fn step_parallel(&mut self, scene: &Scene<D>, threads: usize) -> usize {
        self.move_all(scene);
        self.pairs.clear();
        self.tree.update_pairs_parallel(&mut self.pairs, threads);
        self.pairs.len()
    }

    /// Moves every moving box, in one batch: [`DynamicTree::move_proxies`], or
    /// [`DynamicTree::move_proxies_parallel`] on the driver's threads.
    fn move_all(&mut self, scene: &Scene<D>) {
        let displacement = self.displacement;
        let ids = &self.ids;
        let one = |i: u32| {
            let i = i as usize;
            let d = match displacement {
                Displacement::Zero => V::ZERO,
                Displacement::Velocity => V::from_array(scene.velocities[i]) * scene.dt,
            };
            (ids[i], Self::tight(scene, i), d)
        };
        let moving = &self.moving;
        if self.threads > 1 {
            self.updated = self.tree.move_proxies_parallel(
                moving.len(),
                |k| one(moving[k]),
                self.threads,
                |_, changed| {
                    changed.expect("a live proxy and a valid box");
                },
            );
        } else {
            // An iterator over the list (no index checked per move).
            let mut updated = 0;
            self.tree
                .move_proxies(moving.iter().map(|&i| one(i)), |_, changed| {
                    updated += changed.expect("a live proxy and a valid box") as usize;
                });
            self.updated = updated;
        }
    }

    /// [`Self::step`], also returning the time spent moving the boxes and the time spent in
    /// `update_pairs` (for profiling).
    pub fn step_timed(
        &mut self,
        scene: &Scene<D>,
    ) -> (usize, std::time::Duration, std::time::Duration) {
        let start = std::time::Instant::now();
        self.move_all(scene);
        let moved = start.elapsed();
        self.update_pairs();
        (self.pairs.len(), moved, start.elapsed() - moved)
    }

    /// The pairs the last update reported, as box indices.
    pub fn pairs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.pairs.iter().map(|&(a, b)| {
            let data = |id| *self.tree.data(id).expect("live proxy");
            (data(a), data(b))
        })
    }

    /// Leaves whose fat box changed in the last step.
    pub fn updated_leaves(&self) -> usize {
        self.updated
    }

    /// The fat box stored for box `i`, as `(min, max)`.
    pub fn fat_box(&self, i: u32) -> Option<BoundingBox<V>> {
        self.tree.fat_box(self.ids[i as usize])
    }

    /// The tree itself.
    pub fn tree(&self) -> &DynamicTree<V, u32> {
        &self.tree
    }

    /// The tree itself, mutably (for experiments: rebuilds, statistics).
    pub fn tree_mut(&mut self) -> &mut DynamicTree<V, u32> {
        &mut self.tree
    }

    /// Bytes the tree's arena takes per box ([`bevy_aabb_tree::TreeStats::bytes`] / boxes).
    pub fn bytes_per_proxy(&self) -> f64 {
        self.tree.stats().bytes as f64 / self.ids.len().max(1) as f64
    }

    /// Every box whose fat box overlaps the box `(min, max)` (touching counts), with
    /// [`DynamicTree::query_box`]: how many, and the sum of their indices (a checksum to
    /// compare with the parry driver, whose fat boxes are the same bit for bit).
    pub fn query_box(&self, min: [f32; D], max: [f32; D]) -> (u32, u64) {
        let aabb = BoundingBox::from_min_max(V::from_array(min), V::from_array(max));
        let (mut count, mut sum) = (0u32, 0u64);
        self.tree.query_box(&aabb, |_, &i| {
            count += 1;
            sum += u64::from(i);
            true
        });
        (count, sum)
    }

    /// Closest hit of the ray `origin + t * dir`, `t` in `[0, max_toi)`, against the scene's
    /// tight boxes: [`DynamicTree::cast_ray`] with a leaf test that runs the slab test
    /// ([`Ray::box_hit_at`]) on the tight box, bounded by the best hit so far (as parry's leaf
    /// test is). Returns the box index and `t`, in units of `dir`, like the parry driver.
    pub fn closest_ray(
        &self,
        origin: [f32; D],
        dir: [f32; D],
        max_toi: f32,
        scene: &Scene<D>,
    ) -> Option<(u32, f32)> {
        let ray = Ray::new(V::from_array(origin), V::from_array(dir));
        let mut best = max_toi;
        let hit = self.tree.cast_ray(&ray, max_toi, |_, &i| {
            let t = ray.box_hit_at(&Self::tight(scene, i as usize), best)?;
            best = t;
            Some(t)
        })?;
        let i = *self.tree.data(hit.proxy)?;
        (hit.t < max_toi).then_some((i, hit.t))
    }
}
