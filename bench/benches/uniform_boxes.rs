//! Criterion benchmarks of the "uniform boxes" scenario: the crate's tree and parry's `Bvh` (driven like rapier's broad phase) side by side, on
//! the same scene, through the drivers (`benches/support/ours_driver.rs` at the
//! workspace root, `bench/src/parry_driver.rs`).
//!
//! `cargo bench -p bevy_aabb_tree_bench --bench uniform_boxes`
//!
//! Groups, each with an `ours` and a `parry` function:
//! - `uniform 2d|3d n=10000 fast|slow`: one step (move every box, update the tree, produce
//!   the candidate pairs). Each side has its own copy of the scene; the scene's motion is not
//!   timed, and every 300 steps the scene and the tree start over from the build (not timed
//!   either), so that the figures cover the scenario's 300 steps after a build;
//! - `rays 2d|3d n=10000`: one closest-hit ray against the tight boxes, cycling through the
//!   scenario's rays, on the trees right after the build;
//! - `clustered 2d|3d n=20000`: one step of the "clustered, mixed sizes" scene
//!   (`Scene::clustered`), as the uniform groups (`cargo bench -p bevy_aabb_tree_bench
//!   --bench uniform_boxes -- clustered` runs these alone);
//! - `streams 2d|3d n=20000`: the same for the "streams, mixed sizes" scene
//!   (`Scene::streams`).
//!
//! `bench_compare` runs the full set (100k boxes, the static world) with pair
//! count checks and prints ratios; this is the smaller set, with criterion's statistics.

#[path = "../../benches/support/ours_driver.rs"]
mod ours_driver;
#[path = "../src/parry_driver.rs"]
mod parry_driver;
#[path = "../../benches/support/scene.rs"]
mod scene;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ours_driver::{OursBroadPhase2d, OursBroadPhase3d};
use parry_driver::{ParryBroadPhase2d, ParryBroadPhase3d};
use scene::{Lcg, Scene};

/// Steps after which a run starts over from the build.
const STEPS: usize = 300;
/// Boxes per scene.
const N: usize = 10_000;

/// What the benchmarks need from a driver.
trait Driver<const D: usize> {
    fn build(scene: &Scene<D>) -> Self;
    fn step(&mut self, scene: &Scene<D>) -> usize;
    fn closest_ray(&self, origin: [f32; D], dir: [f32; D], scene: &Scene<D>) -> Option<(u32, f32)>;
}

macro_rules! impl_driver {
    ($ty:ident, $dim:literal) => {
        impl Driver<$dim> for $ty {
            fn build(scene: &Scene<$dim>) -> Self {
                $ty::new(scene)
            }
            fn step(&mut self, scene: &Scene<$dim>) -> usize {
                $ty::step(self, scene)
            }
            fn closest_ray(
                &self,
                origin: [f32; $dim],
                dir: [f32; $dim],
                scene: &Scene<$dim>,
            ) -> Option<(u32, f32)> {
                $ty::closest_ray(self, origin, dir, f32::MAX, scene)
            }
        }
    };
}

impl_driver!(OursBroadPhase2d, 2);
impl_driver!(OursBroadPhase3d, 3);
impl_driver!(ParryBroadPhase2d, 2);
impl_driver!(ParryBroadPhase3d, 3);

/// A driver stepping its own copy of the scene, starting over every [`STEPS`] steps.
struct Run<const D: usize, P> {
    initial: Scene<D>,
    scene: Scene<D>,
    driver: P,
    steps: usize,
}

impl<const D: usize, P: Driver<D>> Run<D, P> {
    fn new(initial: &Scene<D>) -> Self {
        Self {
            initial: initial.clone(),
            scene: initial.clone(),
            driver: P::build(initial),
            steps: 0,
        }
    }

    /// Runs `iters` steps and returns the time spent in the driver's steps.
    fn time_steps(&mut self, iters: u64) -> Duration {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            if self.steps == STEPS {
                self.scene = self.initial.clone();
                self.driver = P::build(&self.scene);
                self.steps = 0;
            }
            self.scene.step();
            let start = Instant::now();
            black_box(self.driver.step(black_box(&self.scene)));
            total += start.elapsed();
            self.steps += 1;
        }
        total
    }
}

fn step_group<const D: usize, O: Driver<D>, P: Driver<D>>(
    c: &mut Criterion,
    name: &str,
    scene: Scene<D>,
) {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let mut ours = Run::<D, O>::new(&scene);
    group.bench_function("ours", |b| b.iter_custom(|iters| ours.time_steps(iters)));
    drop(ours);
    let mut parry = Run::<D, P>::new(&scene);
    group.bench_function("parry", |b| b.iter_custom(|iters| parry.time_steps(iters)));
    group.finish();
}

fn ray_group<const D: usize, O: Driver<D>, P: Driver<D>>(
    c: &mut Criterion,
    name: &str,
    uniform: fn(usize, f32, &mut Lcg) -> Scene<D>,
) {
    let mut lcg = Lcg::new();
    let scene = uniform(N, Scene::<D>::FAST, &mut lcg);
    let rays = scene.rays(&mut lcg);
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let ours = O::build(&scene);
    let mut next = 0;
    group.bench_function("ours", |b| {
        b.iter(|| {
            let (origin, dir) = rays[next % rays.len()];
            next += 1;
            black_box(ours.closest_ray(black_box(origin), dir, &scene))
        })
    });
    let parry = P::build(&scene);
    let mut next = 0;
    group.bench_function("parry", |b| {
        b.iter(|| {
            let (origin, dir) = rays[next % rays.len()];
            next += 1;
            black_box(parry.closest_ray(black_box(origin), dir, &scene))
        })
    });
    group.finish();
}

fn uniform_boxes(c: &mut Criterion) {
    for (speed, vs) in [("fast", Scene::<2>::FAST), ("slow", Scene::<2>::SLOW)] {
        step_group::<2, OursBroadPhase2d, ParryBroadPhase2d>(
            c,
            &format!("uniform 2d n={N} {speed}"),
            Scene::<2>::uniform(N, vs),
        );
        step_group::<3, OursBroadPhase3d, ParryBroadPhase3d>(
            c,
            &format!("uniform 3d n={N} {speed}"),
            Scene::<3>::uniform(N, vs),
        );
    }
    ray_group::<2, OursBroadPhase2d, ParryBroadPhase2d>(
        c,
        &format!("rays 2d n={N}"),
        Scene::<2>::uniform_with_lcg,
    );
    ray_group::<3, OursBroadPhase3d, ParryBroadPhase3d>(
        c,
        &format!("rays 3d n={N}"),
        Scene::<3>::uniform_with_lcg,
    );
}

/// Boxes per clustered or streams scene.
const CLUSTERED_N: usize = 20_000;

fn clustered(c: &mut Criterion) {
    step_group::<2, OursBroadPhase2d, ParryBroadPhase2d>(
        c,
        &format!("clustered 2d n={CLUSTERED_N}"),
        Scene::<2>::clustered(CLUSTERED_N),
    );
    step_group::<3, OursBroadPhase3d, ParryBroadPhase3d>(
        c,
        &format!("clustered 3d n={CLUSTERED_N}"),
        Scene::<3>::clustered(CLUSTERED_N),
    );
    step_group::<2, OursBroadPhase2d, ParryBroadPhase2d>(
        c,
        &format!("streams 2d n={CLUSTERED_N}"),
        Scene::<2>::streams(CLUSTERED_N),
    );
    step_group::<3, OursBroadPhase3d, ParryBroadPhase3d>(
        c,
        &format!("streams 3d n={CLUSTERED_N}"),
        Scene::<3>::streams(CLUSTERED_N),
    );
}

criterion_group!(benches, uniform_boxes, clustered);
criterion_main!(benches);
