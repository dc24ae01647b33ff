//! Our tree against parry's `Bvh` (driven like rapier's broad phase) on the benchmark
//! scenarios, in one process, on the same scene.
//!
//! `cargo run --release -p bevy_aabb_tree_bench --bin bench_compare -- SCENARIO [FILTER]`,
//! where `SCENARIO` is one of:
//!
//! - `uniform`: "uniform boxes", 2D and 3D × 10k and 100k boxes × fast and slow;
//! - `rays`: closest-hit rays on 10k boxes, 2D and 3D, right after the build and again after
//!   300 fast steps;
//! - `rays-mixed`: the same rays on scenes unlike the uniform one: "clustered, mixed
//!   sizes" and "touching grid" (see `clustered` below), 2D and 3D × 20k boxes, right
//!   after the build and again after 300 steps of the scene;
//! - `queries`: box queries (areas of interest a few boxes across, see
//!   `Scene::query_boxes`) on 10k boxes, 2D and 3D, after the build and after 300 fast
//!   steps, against parry's `Bvh::intersect_aabb`;
//! - `queries-mixed`: the same box queries right after the build on the scenes of
//!   `rays-mixed`;
//! - `static`: "static world", 1,000,000 static boxes on a grid and 1,000 fast movers, with
//!   our move cache on and off;
//! - `clustered`: "clustered, mixed sizes", 2D and 3D × 20k and 100k boxes
//!   (`Scene::clustered`: Gaussian clusters of varied spread, sides log-uniform in
//!   `[0.1, 3]` plus a few of 10 to 40, 30 % of the boxes moving within their cluster, the
//!   rest still), then "streams, mixed sizes", 2D and 3D × 20k and 100k boxes
//!   (`Scene::streams`: long thin bands along one axis each, crossing one another, the
//!   same sizes, a third of the boxes running up and down their stream), then "touching
//!   grid", 2D and 3D × 20k and 100k boxes (`Scene::grid`: equal boxes packed edge to
//!   edge on a lattice, a quarter jiggling in their cell), scenes where the pairs
//!   reported dominate the step; each line also gives both sides' time per reported pair
//!   and per moving box;
//! - `sparse`: "sparse crowd", 2D and 3D × 20k and 100k boxes (`Scene::sparse`: the
//!   uniform scene with every box moving at 1 to 5 units/s, in a region twice as wide on
//!   each axis), where few boxes touch and the step is moves, refits and the walk;
//! - `parallel`: our pair update on several threads (`AABB_THREADS`, else every core)
//!   against our serial one, "uniform boxes, fast", 10k and 100k;
//! - `all` (the default): all of the above.
//!
//! The optional `FILTER` limits `uniform`, `clustered` and `parallel` to the cases whose label contains
//! it (for example `2d n=10000`), which helps re-running a noisy case.
//!
//! Method. Both drivers (`benches/support/ours_driver.rs`, `bench/src/parry_driver.rs`)
//! are built from the same scene, then for each of 300 steps the scene moves once and each
//! driver does its step on it: move every moving box in its tree, update the tree, report the
//! candidate pairs. Only the drivers' steps are timed (the scene's motion is shared and not
//! part of either tree), in alternating order (ours first on even steps, parry first on odd
//! ones) so that neither always runs with the other's data in cache. Figures are medians over
//! the steps. Each step also checks that both report the same number of pairs; every 25 steps,
//! and at any step where the counts differ, the two pair sets are compared (fat boxes are the
//! same bit for bit, so the sets must be equal).
//!
//! Rays and queries "after the build" run on trees built at once from the scene: ours by
//! `DynamicTree::build`, parry's by its binned SAH builder (`Bvh::from_leaves`), each side's
//! best build for a tree that is only queried. "After 300 fast steps" they run on the two
//! broad phases' trees, stepped as above. Every ray's closest hit and every query's boxes
//! are compared first, then 21 rounds are timed, alternating which side goes first.
//!
//! Each line ends with `ratio=<ours/parry>`. Bytes per proxy: ours is
//! `TreeStats::bytes / n` (internal nodes, leaves and payload slots, by capacity); parry's is
//! `Bvh::heap_memory_size() / n` (wide nodes, parent indices, leaf index map, by capacity).
//! Parry's figure counts 8 bytes per entry of its leaf map, whose entries are really
//! `Option<usize>` (16 bytes), so it is slightly low.
//!
//! A disagreement anywhere (a pair, a ray's hit, a query's boxes) is printed where it occurs
//! and makes the process exit with status 1 once every scenario asked for has run.

#[path = "../alloc_count.rs"]
mod alloc_count;
#[path = "../../../benches/support/ours_driver.rs"]
mod ours_driver;
#[path = "../parry_driver.rs"]
mod parry_driver;
#[path = "../../../benches/support/scene.rs"]
mod scene;

use std::collections::HashSet;
use std::hint::black_box;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use alloc_count::allocations;
use glam::{Vec2, Vec3};
use ours_driver::{FromArray, OursBroadPhase};
use parry_driver::{ParryBroadPhase2d, ParryBroadPhase3d};
use scene::{Lcg, Scene};

/// Steps after the build, as in the scenario.
const STEPS: usize = 300;
/// Pair sets are compared every this many steps.
const SET_CHECK_EVERY: usize = 25;
/// Timed rounds over all the rays.
const RAY_ROUNDS: usize = 21;

/// Set when the two sides disagree anywhere (pairs, rays or queries): the process then
/// exits with status 1 after printing every scenario.
static DISAGREED: AtomicBool = AtomicBool::new(false);

/// One side of the comparison.
trait Driver<const D: usize>: Sized {
    fn build(scene: &Scene<D>) -> Self;
    /// The tree a user who only queries it builds: the side's best build from scratch.
    fn build_for_queries(scene: &Scene<D>) -> Self {
        Self::build(scene)
    }
    fn step(&mut self, scene: &Scene<D>) -> usize;
    /// The last step's pairs as `(min, max)` box indices.
    fn pair_set(&self) -> HashSet<(u32, u32)>;
    fn closest_ray(
        &self,
        origin: [f32; D],
        dir: [f32; D],
        max_toi: f32,
        scene: &Scene<D>,
    ) -> Option<(u32, f32)>;
    /// How many boxes' fat boxes overlap `(min, max)`, and the sum of their indices.
    fn query_box(&self, min: [f32; D], max: [f32; D]) -> (u32, u64);
    fn bytes_per_proxy(&self, n: usize) -> f64;
}

fn ordered((a, b): (u32, u32)) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// Our tree as a driver: the serial pair update, or (`PARALLEL`) the pair walk spread over
/// [`parallel_threads`] threads; with its move cache (the default), or without it
/// (`MOVE_CACHE = false`, `DynamicTree::set_move_cache`).
struct Ours<V: FromArray<D>, const D: usize, const PARALLEL: bool, const MOVE_CACHE: bool = true>(
    OursBroadPhase<V, D>,
);

/// Threads of the parallel scenario: `AABB_THREADS`, else every core.
fn parallel_threads() -> usize {
    std::env::var("AABB_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

impl<V: FromArray<D>, const D: usize, const PARALLEL: bool, const MOVE_CACHE: bool> Driver<D>
    for Ours<V, D, PARALLEL, MOVE_CACHE>
{
    fn build(scene: &Scene<D>) -> Self {
        let mut ours = OursBroadPhase::new(scene);
        if PARALLEL {
            ours.set_threads(parallel_threads());
        }
        ours.set_move_cache(MOVE_CACHE);
        Self(ours)
    }
    fn step(&mut self, scene: &Scene<D>) -> usize {
        self.0.step(scene)
    }
    fn pair_set(&self) -> HashSet<(u32, u32)> {
        self.0.pairs().map(ordered).collect()
    }
    fn closest_ray(
        &self,
        origin: [f32; D],
        dir: [f32; D],
        max_toi: f32,
        scene: &Scene<D>,
    ) -> Option<(u32, f32)> {
        self.0.closest_ray(origin, dir, max_toi, scene)
    }
    fn query_box(&self, min: [f32; D], max: [f32; D]) -> (u32, u64) {
        self.0.query_box(min, max)
    }
    fn bytes_per_proxy(&self, _n: usize) -> f64 {
        self.0.bytes_per_proxy()
    }
}

/// The serial driver.
type OursSerial<V, const D: usize> = Ours<V, D, false>;
/// The serial driver without the move cache.
type OursLean<V, const D: usize> = Ours<V, D, false, false>;

macro_rules! impl_parry {
    ($ty:ident, $dim:literal) => {
        impl Driver<$dim> for $ty {
            fn build(scene: &Scene<$dim>) -> Self {
                $ty::new(scene)
            }
            fn build_for_queries(scene: &Scene<$dim>) -> Self {
                $ty::binned(scene)
            }
            fn step(&mut self, scene: &Scene<$dim>) -> usize {
                $ty::step(self, scene)
            }
            fn pair_set(&self) -> HashSet<(u32, u32)> {
                self.pairs().iter().copied().map(ordered).collect()
            }
            fn closest_ray(
                &self,
                origin: [f32; $dim],
                dir: [f32; $dim],
                max_toi: f32,
                scene: &Scene<$dim>,
            ) -> Option<(u32, f32)> {
                $ty::closest_ray(self, origin, dir, max_toi, scene)
            }
            fn query_box(&self, min: [f32; $dim], max: [f32; $dim]) -> (u32, u64) {
                $ty::query_box(self, min, max)
            }
            fn bytes_per_proxy(&self, n: usize) -> f64 {
                self.tree().heap_memory_size() as f64 / n.max(1) as f64
            }
        }
    };
}

impl_parry!(ParryBroadPhase2d, 2);
impl_parry!(ParryBroadPhase3d, 3);

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Times `f`, returning its result and the time in milliseconds and the allocations it made.
fn timed<R>(f: impl FnOnce() -> R) -> (R, f64, usize) {
    let before = allocations();
    let start = Instant::now();
    let r = f();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    (r, ms, allocations() - before)
}

/// Compares the two pair sets of the last step; returns a description of the difference.
fn compare_sets<const D: usize, O: Driver<D>, P: Driver<D>>(ours: &O, parry: &P) -> Option<String> {
    let (a, b) = (ours.pair_set(), parry.pair_set());
    if a == b {
        return None;
    }
    let only_ours: Vec<_> = a.difference(&b).take(3).collect();
    let only_parry: Vec<_> = b.difference(&a).take(3).collect();
    Some(format!(
        "{} pairs only in ours (e.g. {only_ours:?}), {} only in parry's (e.g. {only_parry:?})",
        a.difference(&b).count(),
        b.difference(&a).count()
    ))
}

/// The outcome of stepping both drivers.
struct Stepped<O, P, const D: usize> {
    ours: O,
    parry: P,
    scene: Scene<D>,
    ours_ms: f64,
    parry_ms: f64,
    ours_pairs: f64,
    parry_pairs: f64,
    /// Steps whose pair counts differ, and the first set difference seen.
    mismatches: usize,
    first_mismatch: Option<String>,
    /// Allocations during the second half of the steps.
    ours_allocs: usize,
    parry_allocs: usize,
}

/// Builds both drivers on `scene` and runs `STEPS` interleaved steps.
fn step_both<const D: usize, O: Driver<D>, P: Driver<D>>(mut scene: Scene<D>) -> Stepped<O, P, D> {
    let mut ours = O::build(&scene);
    let mut parry = P::build(&scene);
    let (mut ours_times, mut parry_times) = (Vec::with_capacity(STEPS), Vec::with_capacity(STEPS));
    let (mut ours_total, mut parry_total) = (0usize, 0usize);
    let (mut ours_allocs, mut parry_allocs) = (0, 0);
    let mut mismatches = 0;
    let mut first_mismatch = None;
    for step in 0..STEPS {
        scene.step();
        let run_ours = |ours: &mut O| timed(|| black_box(ours.step(black_box(&scene))));
        let run_parry = |parry: &mut P| timed(|| black_box(parry.step(black_box(&scene))));
        let (o, p) = if step % 2 == 0 {
            let o = run_ours(&mut ours);
            (o, run_parry(&mut parry))
        } else {
            let p = run_parry(&mut parry);
            (run_ours(&mut ours), p)
        };
        ours_times.push(o.1);
        parry_times.push(p.1);
        ours_total += o.0;
        parry_total += p.0;
        if step >= STEPS / 2 {
            ours_allocs += o.2;
            parry_allocs += p.2;
        }
        if o.0 != p.0 {
            mismatches += 1;
        }
        if (o.0 != p.0 || step % SET_CHECK_EVERY == 0)
            && first_mismatch.is_none()
            && let Some(diff) = compare_sets(&ours, &parry)
        {
            first_mismatch = Some(format!("step {step}: {diff}"));
        }
    }
    Stepped {
        ours,
        parry,
        scene,
        ours_ms: median(ours_times),
        parry_ms: median(parry_times),
        ours_pairs: ours_total as f64 / STEPS as f64,
        parry_pairs: parry_total as f64 / STEPS as f64,
        mismatches,
        first_mismatch,
        ours_allocs,
        parry_allocs,
    }
}

fn report<O: Driver<D>, P: Driver<D>, const D: usize>(label: &str, s: &Stepped<O, P, D>) {
    let n = s.scene.len();
    println!(
        "{label} ours={:.3}ms parry={:.3}ms pairs={:.0}/{:.0} bytes/proxy={:.1}/{:.1} \
         ratio={:.2}",
        s.ours_ms,
        s.parry_ms,
        s.ours_pairs,
        s.parry_pairs,
        s.ours.bytes_per_proxy(n),
        s.parry.bytes_per_proxy(n),
        s.ours_ms / s.parry_ms,
    );
    report_mismatches(s);
    if s.ours_allocs > 0 || s.parry_allocs > 0 {
        println!(
            "    allocations in the last {} steps: ours {}, parry {}",
            STEPS - STEPS / 2,
            s.ours_allocs,
            s.parry_allocs
        );
    }
}

fn uniform_case<const D: usize, O: Driver<D>, P: Driver<D>>(
    label: &str,
    scene: Scene<D>,
    filter: Option<&str>,
) {
    if filter.is_some_and(|f| !label.contains(f)) {
        return;
    }
    let s = step_both::<D, O, P>(scene);
    report(label, &s);
}

fn uniform(filter: Option<&str>) {
    for n in [10_000, 100_000] {
        for (speed, vs) in [("fast", Scene::<2>::FAST), ("slow", Scene::<2>::SLOW)] {
            uniform_case::<2, OursSerial<Vec2, 2>, ParryBroadPhase2d>(
                &format!("uniform 2d n={n} {speed}"),
                Scene::<2>::uniform(n, vs),
                filter,
            );
            uniform_case::<3, OursSerial<Vec3, 3>, ParryBroadPhase3d>(
                &format!("uniform 3d n={n} {speed}"),
                Scene::<3>::uniform(n, vs),
                filter,
            );
        }
    }
}

/// "Sparse crowd": every box moving, few pairs, 2D and 3D, 20k and 100k boxes.
fn sparse(filter: Option<&str>) {
    for n in [20_000, 100_000] {
        uniform_case::<2, OursSerial<Vec2, 2>, ParryBroadPhase2d>(
            &format!("sparse 2d n={n}"),
            Scene::sparse(Scene::<2>::uniform(n, Scene::<2>::FAST)),
            filter,
        );
        uniform_case::<3, OursSerial<Vec3, 3>, ParryBroadPhase3d>(
            &format!("sparse 3d n={n}"),
            Scene::sparse(Scene::<3>::uniform(n, Scene::<3>::FAST)),
            filter,
        );
    }
}

/// The scenes where the pairs reported dominate the step: "clustered, mixed sizes",
/// "streams, mixed sizes" and "touching grid", 2D and 3D, 20k and 100k boxes.
fn clustered(filter: Option<&str>) {
    /// A scene's name and its makers in 2D and 3D, from the box count.
    type Named = (&'static str, fn(usize) -> Scene<2>, fn(usize) -> Scene<3>);
    let scenes: [Named; 3] = [
        ("clustered", Scene::<2>::clustered, Scene::<3>::clustered),
        ("streams", Scene::<2>::streams, Scene::<3>::streams),
        ("grid", Scene::<2>::grid, Scene::<3>::grid),
    ];
    for (name, scene_2d, scene_3d) in scenes {
        for n in [20_000, 100_000] {
            clustered_case::<2, OursSerial<Vec2, 2>, ParryBroadPhase2d>(
                &format!("{name} 2d n={n}"),
                || scene_2d(n),
                filter,
            );
            clustered_case::<3, OursSerial<Vec3, 3>, ParryBroadPhase3d>(
                &format!("{name} 3d n={n}"),
                || scene_3d(n),
                filter,
            );
        }
    }
}

fn clustered_case<const D: usize, O: Driver<D>, P: Driver<D>>(
    label: &str,
    scene: impl FnOnce() -> Scene<D>,
    filter: Option<&str>,
) {
    if filter.is_some_and(|f| !label.contains(f)) {
        return;
    }
    let scene = scene();
    let moving = scene.moving_count();
    let s = step_both::<D, O, P>(scene);
    report(label, &s);
    let pairs = s.parry_pairs.max(1.0);
    println!(
        "    moving={moving} pairs/moving={:.2} ns/pair ours={:.1} parry={:.1} \
         ns/moving ours={:.1} parry={:.1}",
        s.parry_pairs / moving.max(1) as f64,
        s.ours_ms * 1e6 / pairs,
        s.parry_ms * 1e6 / pairs,
        s.ours_ms * 1e6 / moving.max(1) as f64,
        s.parry_ms * 1e6 / moving.max(1) as f64,
    );
}

/// Runs `ours` and `parry` over every `(a, b)` of `inputs` for [`RAY_ROUNDS`] timed rounds
/// each, alternating which goes first, and returns the median µs per input of each.
fn alternate_rounds<const D: usize, R, S>(
    inputs: &[([f32; D], [f32; D])],
    ours: impl Fn([f32; D], [f32; D]) -> R,
    parry: impl Fn([f32; D], [f32; D]) -> S,
) -> (f64, f64) {
    let round = |f: &dyn Fn([f32; D], [f32; D])| {
        let start = Instant::now();
        for &(a, b) in inputs {
            f(black_box(a), b);
        }
        start.elapsed().as_secs_f64() * 1e6 / inputs.len() as f64
    };
    let o = |a, b| {
        black_box(ours(a, b));
    };
    let p = |a, b| {
        black_box(parry(a, b));
    };
    let (mut ours_us, mut parry_us) = (Vec::new(), Vec::new());
    for r in 0..RAY_ROUNDS {
        if r % 2 == 0 {
            ours_us.push(round(&o));
            parry_us.push(round(&p));
        } else {
            parry_us.push(round(&p));
            ours_us.push(round(&o));
        }
    }
    (median(ours_us), median(parry_us))
}

/// Times the rays on both drivers (alternating rounds) after checking that they agree.
/// Returns the median µs per ray of each.
fn time_rays<const D: usize, O: Driver<D>, P: Driver<D>>(
    label: &str,
    ours: &O,
    parry: &P,
    scene: &Scene<D>,
    rays: &[([f32; D], [f32; D])],
) {
    let max_toi = f32::MAX;
    let (mut hits, mut disagreements) = (0, 0);
    for &(origin, dir) in rays {
        let a = ours.closest_ray(origin, dir, max_toi, scene);
        let b = parry.closest_ray(origin, dir, max_toi, scene);
        match (a, b) {
            (None, None) => {}
            (Some((i, t)), Some((j, u)))
                if (i == j || t == u) && (t - u).abs() <= 1e-4 * u.max(1.0) =>
            {
                hits += 1
            }
            _ => {
                if disagreements == 0 {
                    println!("    ray {origin:?} {dir:?}: ours {a:?}, parry {b:?}");
                }
                disagreements += 1;
            }
        }
    }
    if disagreements > 0 {
        DISAGREED.store(true, Ordering::Relaxed);
    }
    let (o, p) = alternate_rounds(
        rays,
        |origin, dir| ours.closest_ray(origin, dir, max_toi, scene),
        |origin, dir| parry.closest_ray(origin, dir, max_toi, scene),
    );
    println!(
        "{label} ours={o:.3}us parry={p:.3}us hits={hits}/{} disagree={disagreements} ratio={:.2}",
        rays.len(),
        o / p
    );
}

fn rays_case<const D: usize, O: Driver<D>, P: Driver<D>>(
    dim: &str,
    uniform: fn(usize, f32, &mut Lcg) -> Scene<D>,
) {
    let n = 10_000;
    let mut lcg = Lcg::new();
    let scene = uniform(n, Scene::<D>::FAST, &mut lcg);
    let rays = scene.rays(&mut lcg);
    let (ours, parry) = (O::build_for_queries(&scene), P::build_for_queries(&scene));
    time_rays(
        &format!("rays {dim} n={n} after build"),
        &ours,
        &parry,
        &scene,
        &rays,
    );
    drop((ours, parry));
    let s = step_both::<D, O, P>(scene);
    report_mismatches(&s);
    time_rays(
        &format!("rays {dim} n={n} after {STEPS} fast steps"),
        &s.ours,
        &s.parry,
        &s.scene,
        &rays,
    );
}

fn rays() {
    rays_case::<2, OursSerial<Vec2, 2>, ParryBroadPhase2d>("2d", Scene::<2>::uniform_with_lcg);
    rays_case::<3, OursSerial<Vec3, 3>, ParryBroadPhase3d>("3d", Scene::<3>::uniform_with_lcg);
}

/// The rays right after the build on one of the output-bound scenes, then on both broad
/// phases' trees after 300 steps of it.
fn rays_after_build<const D: usize, O: Driver<D>, P: Driver<D>>(label: &str, scene: Scene<D>) {
    let rays = scene.rays(&mut Lcg::new());
    let (ours, parry) = (O::build_for_queries(&scene), P::build_for_queries(&scene));
    time_rays(
        &format!("rays {label} after build"),
        &ours,
        &parry,
        &scene,
        &rays,
    );
    drop((ours, parry));
    let s = step_both::<D, O, P>(scene);
    report_mismatches(&s);
    time_rays(
        &format!("rays {label} after {STEPS} steps"),
        &s.ours,
        &s.parry,
        &s.scene,
        &rays,
    );
}

/// The `rays-mixed` scenario: the rays after the build on the clustered and touching-grid
/// scenes, 2D and 3D.
fn rays_mixed() {
    on_mixed_scenes(
        rays_after_build::<2, OursSerial<Vec2, 2>, ParryBroadPhase2d>,
        rays_after_build::<3, OursSerial<Vec3, 3>, ParryBroadPhase3d>,
    );
}

/// Runs `in_2d` and `in_3d` on the clustered and touching-grid scenes of 20k boxes, each
/// labelled with its dimension, scene and size: the scenes of `rays-mixed` and
/// `queries-mixed`.
fn on_mixed_scenes(in_2d: fn(&str, Scene<2>), in_3d: fn(&str, Scene<3>)) {
    let n = 20_000;
    type Make<const D: usize> = fn(usize) -> Scene<D>;
    let scenes: [(&str, Make<2>, Make<3>); 2] = [
        ("clustered", Scene::<2>::clustered, Scene::<3>::clustered),
        ("grid", Scene::<2>::grid, Scene::<3>::grid),
    ];
    for (name, make_2d, make_3d) in scenes {
        in_2d(&format!("2d {name} n={n}"), make_2d(n));
        in_3d(&format!("3d {name} n={n}"), make_3d(n));
    }
}

/// Times the box queries on both drivers (alternating rounds, as the rays) after checking
/// that they find the same boxes (count and index sum of each query). Prints the median µs
/// per query of each.
fn time_queries<const D: usize, O: Driver<D>, P: Driver<D>>(
    label: &str,
    ours: &O,
    parry: &P,
    queries: &[([f32; D], [f32; D])],
) {
    let (mut found, mut disagreements) = (0u64, 0);
    for &(min, max) in queries {
        let (a, b) = (ours.query_box(min, max), parry.query_box(min, max));
        if a != b {
            if disagreements == 0 {
                println!("    query {min:?} {max:?}: ours {a:?}, parry {b:?}");
            }
            disagreements += 1;
        }
        found += u64::from(a.0);
    }
    if disagreements > 0 {
        DISAGREED.store(true, Ordering::Relaxed);
    }
    let (o, p) = alternate_rounds(
        queries,
        |min, max| ours.query_box(min, max),
        |min, max| parry.query_box(min, max),
    );
    println!(
        "{label} ours={o:.3}us parry={p:.3}us found/query={:.1} disagree={disagreements} ratio={:.2}",
        found as f64 / queries.len() as f64,
        o / p
    );
}

fn queries_case<const D: usize, O: Driver<D>, P: Driver<D>>(
    dim: &str,
    uniform: fn(usize, f32, &mut Lcg) -> Scene<D>,
) {
    let n = 10_000;
    let mut lcg = Lcg::new();
    let scene = uniform(n, Scene::<D>::FAST, &mut lcg);
    let queries = scene.query_boxes(&mut lcg);
    let (ours, parry) = (O::build_for_queries(&scene), P::build_for_queries(&scene));
    time_queries(
        &format!("queries {dim} n={n} after build"),
        &ours,
        &parry,
        &queries,
    );
    drop((ours, parry));
    let s = step_both::<D, O, P>(scene);
    report_mismatches(&s);
    time_queries(
        &format!("queries {dim} n={n} after {STEPS} fast steps"),
        &s.ours,
        &s.parry,
        &queries,
    );
}

/// The `queries-mixed` scenario: the box queries after the build on the clustered and
/// touching-grid scenes, 2D and 3D, as [`rays_mixed`] for the rays.
fn queries_mixed() {
    on_mixed_scenes(
        queries_after_build::<2, OursSerial<Vec2, 2>, ParryBroadPhase2d>,
        queries_after_build::<3, OursSerial<Vec3, 3>, ParryBroadPhase3d>,
    );
}

/// The box queries right after the build on one of the output-bound scenes.
fn queries_after_build<const D: usize, O: Driver<D>, P: Driver<D>>(label: &str, scene: Scene<D>) {
    let queries = scene.query_boxes(&mut Lcg::new());
    let (ours, parry) = (O::build_for_queries(&scene), P::build_for_queries(&scene));
    time_queries(
        &format!("queries {label} after build"),
        &ours,
        &parry,
        &queries,
    );
}

fn queries() {
    queries_case::<2, OursSerial<Vec2, 2>, ParryBroadPhase2d>("2d", Scene::<2>::uniform_with_lcg);
    queries_case::<3, OursSerial<Vec3, 3>, ParryBroadPhase3d>("3d", Scene::<3>::uniform_with_lcg);
}

/// The "static world" scene in 2D: `movers` boxes moving as in "uniform boxes, fast" (drawn
/// like [`Scene::uniform`]: x, y, angle, speed per box), first, then a `grid × grid` regular
/// grid of static boxes with the spacing of the uniform scene's density (2.5), cell centers
/// at `(k + 0.5) * 2.5`, filling the same square `[0, 2.5 * grid]²` in which the movers move.
fn static_world(grid: usize, movers: usize) -> Scene<2> {
    let spacing = 2.5;
    let side = spacing * grid as f32;
    let mut lcg = Lcg::new();
    let mut centers = Vec::with_capacity(movers + grid * grid);
    let mut velocities = Vec::with_capacity(movers + grid * grid);
    for _ in 0..movers {
        let x = lcg.next_f32() * side;
        let y = lcg.next_f32() * side;
        let angle = lcg.next_f32() * std::f32::consts::TAU;
        let speed = lcg.range(1.0, 5.0) * Scene::<2>::FAST;
        centers.push([x, y]);
        velocities.push([angle.cos() * speed, angle.sin() * speed]);
    }
    for gy in 0..grid {
        for gx in 0..grid {
            centers.push([(gx as f32 + 0.5) * spacing, (gy as f32 + 0.5) * spacing]);
            velocities.push([0.0, 0.0]);
        }
    }
    Scene {
        half: Scene::<2>::HALF,
        halves: Vec::new(),
        side,
        centers,
        velocities,
        walls: Vec::new(),
        dt: Scene::<2>::DT,
        margin: Scene::<2>::MARGIN,
    }
}

/// Parallel pair finding: our tree with the pair update on every core against the serial
/// update, "uniform boxes, fast", in one run. `ratio` is parallel / serial (the speed-up
/// is its inverse).
fn parallel(filter: Option<&str>) {
    let threads = parallel_threads();
    for n in [10_000, 100_000] {
        let label = format!("parallel 2d n={n} fast threads={threads}");
        if filter.is_none_or(|f| label.contains(f)) {
            let s = step_both::<2, Ours<Vec2, 2, true>, OursSerial<Vec2, 2>>(Scene::<2>::uniform(
                n,
                Scene::<2>::FAST,
            ));
            report_parallel(&label, &s);
        }
        let label = format!("parallel 3d n={n} fast threads={threads}");
        if filter.is_none_or(|f| label.contains(f)) {
            let s = step_both::<3, Ours<Vec3, 3, true>, OursSerial<Vec3, 3>>(Scene::<3>::uniform(
                n,
                Scene::<3>::FAST,
            ));
            report_parallel(&label, &s);
        }
    }
}

/// The line saying where the two sides' pairs differed, if they did (which fails the run).
fn report_mismatches<O, P, const D: usize>(s: &Stepped<O, P, D>) {
    if s.mismatches > 0 || s.first_mismatch.is_some() {
        DISAGREED.store(true, Ordering::Relaxed);
        println!(
            "    pair counts differ on {} of {STEPS} steps; {}",
            s.mismatches,
            s.first_mismatch.as_deref().unwrap_or("sets compared equal")
        );
    }
}

fn report_parallel<O: Driver<D>, P: Driver<D>, const D: usize>(label: &str, s: &Stepped<O, P, D>) {
    println!(
        "{label} parallel={:.3}ms serial={:.3}ms pairs={:.0}/{:.0} speedup={:.2} ratio={:.2}",
        s.ours_ms,
        s.parry_ms,
        s.ours_pairs,
        s.parry_pairs,
        s.parry_ms / s.ours_ms,
        s.ours_ms / s.parry_ms,
    );
    report_mismatches(s);
}

/// The static world twice: our tree with its move cache (the default), then without it
/// (`DynamicTree::set_move_cache(false)`, which its docs advise for a mostly static world),
/// each against parry on the same scene.
fn static_scenario() {
    let (grid, movers) = (1000, 1000);
    let scene = static_world(grid, movers);
    let label = format!("static 2d n={}+{movers} fast", grid * grid);
    let start = Instant::now();
    let s = step_both::<2, OursSerial<Vec2, 2>, ParryBroadPhase2d>(scene.clone());
    report(&label, &s);
    drop(s);
    let s = step_both::<2, OursLean<Vec2, 2>, ParryBroadPhase2d>(scene);
    report(&format!("{label} move_cache=off"), &s);
    println!(
        "    (builds and {STEPS} steps, twice, took {:.1} s)",
        start.elapsed().as_secs_f64()
    );
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let scenario = args.next().unwrap_or_else(|| "all".into());
    let filter = args.next();
    println!(
        "bench_compare: {STEPS} steps, medians; ours = bevy_aabb_tree DynamicTree, parry = parry 0.31 \
         Bvh driven like rapier"
    );
    match scenario.as_str() {
        "uniform" => uniform(filter.as_deref()),
        "sparse" => sparse(filter.as_deref()),
        "rays" => rays(),
        "rays-mixed" => rays_mixed(),
        "queries" => queries(),
        "queries-mixed" => queries_mixed(),
        "static" => static_scenario(),
        "parallel" => parallel(filter.as_deref()),
        "clustered" => clustered(filter.as_deref()),
        "all" => {
            uniform(filter.as_deref());
            rays();
            rays_mixed();
            queries();
            queries_mixed();
            static_scenario();
            clustered(filter.as_deref());
            sparse(filter.as_deref());
            parallel(filter.as_deref());
        }
        other => {
            eprintln!(
                "unknown scenario {other:?}: expected uniform, sparse, rays, rays-mixed, queries, queries-mixed, static, clustered, parallel or all"
            );
            return ExitCode::from(2);
        }
    }
    if DISAGREED.load(Ordering::Relaxed) {
        eprintln!("error: the two sides disagreed (pairs, rays or queries): see above");
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
