//! Stress test of the whole plugin, headless: the plugin's cost per tick, stage by stage,
//! against the bare tree step on the same scene.
//!
//! `cargo run --release -p bevy_aabb_tree_bench --features plugin --bin stress -- N [2d|3d]
//! [fast|slow] [--idle-fraction F] [--threads T] [--shape box|capsule|ball]
//! [--compare-shapes]` (defaults: 10000 2d fast, idle fraction 0, 1 thread, boxes).
//!
//! N entities of the "uniform boxes" scene (`benches/support/scene.rs`), each with an [`Aabb`]
//! and a [`Velocity`], moved by a `FixedUpdate` system that bounces them off the region's walls
//! exactly as `Scene::step` does. `MinimalPlugins` + `TransformPlugin`, a fixed 60 Hz step and
//! `TimeUpdateStrategy::FixedTimesteps(1)`, so every `app.update()` runs one fixed tick. After
//! a warm-up, 300 ticks are measured and a table of medians printed: the plugin's stages from
//! [`AabbTree::stats`], the whole `app.update()`, and the bare tree step on the same scene
//! (`benches/support/ours_driver.rs`, same process), with the ratio "full tick / bare step".
//! The tick is also split into the moving tree's own work (`StepStats::tree_ms`: its batch
//! of moves and its pair update, the work the bare step does too) and the work around it.
//! Last, every collider is despawned in one frame (a level unloaded) and that is timed; the
//! run stops if a proxy is left in the tree or the ends are not one per touching pair.
//!
//! `--idle-fraction F` (0 to 1) makes that fraction of the entities static: they get no
//! `Velocity`, the mover never touches their `Transform`, and the bare scene gives them a
//! zero velocity (so the bare tree step only moves the others). This is the scene where
//! change detection in the prepare stage matters: idle entities should cost next to nothing.
//!
//! `--threads T` (T > 1) runs the pair walk in parallel: the compute task pool gets T
//! threads, `CollisionConfig::parallel_pairs_from` is `Some(0)`, and the bare tree step
//! uses `DynamicTree::update_pairs_parallel` with T threads. Bevy's task pool has more
//! than one thread only with its `multi_threaded` feature (this package's feature of that
//! name): `cargo run --release -p bevy_aabb_tree_bench --features multi_threaded --bin
//! stress -- N --threads T`. Without it the plugin's walk stays serial, which the line
//! "pair-walk tasks on the compute pool" shows as 0.
//!
//! `--shape` gives the colliders another component in place of the [`Aabb`] of half
//! extent 0.5: `capsule`, a [`Capsule`] along y of radius 0.3 and half length 0.2 (as tall
//! as the box, 0.6 wide), or `ball`, a [`BoundingSphere`] of radius 0.5. The bare tree step
//! stays the boxes' (it has no shapes). `--compare-shapes` builds one app per shape on the
//! same scene instead and ticks them in turn, the order rotating at each tick (box,
//! capsule, ball; capsule, ball, box; ...), and prints the median of each one's
//! `app.update()`, plugin tick and narrow phase (also per candidate pair: the capsules'
//! narrower boxes make fewer candidates) and the ratios capsule/box and ball/box.

#[path = "../dim.rs"]
mod dim;
#[path = "../../../benches/support/ours_driver.rs"]
mod ours_driver;
#[path = "../../../benches/support/scene.rs"]
mod scene;

use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::Vector;
use bevy_aabb_tree::prelude::*;
use dim::Dim;
use ours_driver::{Displacement, FromArray, OursBroadPhase};
use scene::{Scene, bounce_axis};

/// Ticks run before measuring (the first one inserts every collider).
const WARMUP: usize = 30;
/// Ticks measured.
const TICKS: usize = 300;

/// The scene's region and step, for the mover.
#[derive(Resource, Clone, Copy)]
struct Region {
    side: f32,
    dt: f32,
}

/// Moves every entity by its velocity and bounces it off the region's walls, exactly as
/// `Scene::step` does (same operations in the same order, so the ECS scene and the bare
/// scene stay bit for bit the same).
fn move_boxes<V: Vector, const D: usize>(
    region: Res<Region>,
    mut q: Query<(&mut Transform, &mut Velocity<V>)>,
) {
    let Region { side, dt } = *region;
    for (mut transform, mut velocity) in &mut q {
        let mut c = transform.translation;
        let mut v = velocity.0.extend_to_3d();
        let mut flipped = false;
        for k in 0..D {
            flipped |= bounce_axis(&mut c[k], &mut v[k], dt, 0.0, side);
        }
        transform.translation = c;
        if flipped {
            velocity.0 = V::truncate_from_3d(v);
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Medians of the plugin's run.
struct PluginRun {
    prepare: f64,
    broad: f64,
    narrow: f64,
    events: f64,
    plugin_total: f64,
    /// The moving tree's own work in the tick: its batch of moves and its pair update
    /// (`StepStats::tree_ms`).
    tree_work: f64,
    /// The stages' time less the tree's own work, per tick.
    around_tree: f64,
    update: f64,
    events_per_tick: f64,
    swept_per_tick: f64,
    touching: f64,
    candidates: f64,
    moved: f64,
    processed: f64,
    tree_bytes_per_proxy: f64,
    /// The whole resource's (`AabbTree::bytes`): the tree, bodies, pairs and their links.
    plugin_bytes_per_proxy: f64,
    /// Milliseconds to despawn every collider at once, after the measured ticks.
    despawn_all_ms: f64,
    /// Pairs that the despawns ended (`CollisionEnded` messages).
    despawn_ended: usize,
    /// Pair-walk tasks run on the compute task pool per tick (0: serial walk).
    parallel_tasks_per_tick: f64,
    setup_s: f64,
}

/// The colliders' shape (`--shape`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ShapeKind {
    Box,
    Capsule,
    Ball,
}

impl ShapeKind {
    const ALL: [ShapeKind; 3] = [ShapeKind::Box, ShapeKind::Capsule, ShapeKind::Ball];

    fn name(self) -> &'static str {
        match self {
            ShapeKind::Box => "box",
            ShapeKind::Capsule => "capsule",
            ShapeKind::Ball => "ball",
        }
    }

    /// The size in bytes of the collider component.
    fn component_bytes<V: Vector>(self) -> usize {
        match self {
            ShapeKind::Box => size_of::<Aabb<V>>(),
            ShapeKind::Capsule => size_of::<Capsule<V>>(),
            ShapeKind::Ball => size_of::<BoundingSphere<V>>(),
        }
    }
}

/// The capsules' radius (`--shape capsule`).
const CAPSULE_RADIUS: f32 = 0.3;
/// The capsules' half length: radius plus half length is the box's half extent.
const CAPSULE_HALF_LENGTH: f32 = 0.2;

/// Spawns the scene's colliders with `collider` as their shape: the moving ones with a
/// `Velocity`, the idle ones without.
fn spawn_with<V: FromArray<D>, C: Component + Copy, const D: usize>(
    world: &mut World,
    scene: &Scene<D>,
    collider: C,
) {
    let translation = |i: usize| {
        let mut t = Vec3::ZERO;
        for k in 0..D {
            t[k] = scene.centers[i][k];
        }
        Transform::from_translation(t)
    };
    let is_idle = |i: usize| scene.velocities[i].iter().all(|&v| v == 0.0);
    let moving: Vec<_> = (0..scene.len())
        .filter(|&i| !is_idle(i))
        .map(|i| {
            (
                translation(i),
                collider,
                Velocity(V::from_array(scene.velocities[i])),
            )
        })
        .collect();
    // Idle entities: no `Velocity`, so the mover's query never visits them.
    let idle: Vec<_> = (0..scene.len())
        .filter(|&i| is_idle(i))
        .map(|i| (translation(i), collider))
        .collect();
    world.spawn_batch(moving);
    world.spawn_batch(idle);
}

/// The plugin's app on `scene`, its colliders of `shape`, ready to tick.
fn plugin_app<V, const D: usize>(scene: &Scene<D>, threads: usize, shape: ShapeKind) -> App
where
    V: FromArray<D> + Dim,
{
    if threads > 1 {
        // Before any app: `TaskPoolPlugin` keeps a pool that already exists.
        bevy::tasks::ComputeTaskPool::get_or_init(|| {
            bevy::tasks::TaskPoolBuilder::new()
                .num_threads(threads)
                .build()
        });
    }
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins(AabbTreePlugin::<V>::default())
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(
            scene.dt,
        )))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
        .insert_resource(CollisionConfig {
            parallel_pairs_from: (threads > 1).then_some(0),
            ..default()
        })
        .insert_resource(Region {
            side: scene.side,
            dt: scene.dt,
        })
        .add_systems(FixedUpdate, move_boxes::<V, D>);
    let world = app.world_mut();
    match shape {
        ShapeKind::Box => spawn_with::<V, _, D>(world, scene, Aabb::new(V::splat(scene.half))),
        ShapeKind::Capsule => spawn_with::<V, _, D>(
            world,
            scene,
            Capsule::<V>::new(CAPSULE_HALF_LENGTH, CAPSULE_RADIUS),
        ),
        ShapeKind::Ball => {
            spawn_with::<V, _, D>(world, scene, BoundingSphere::<V>::new(scene.half))
        }
    }
    // What `App::run` does before the first update.
    app.finish();
    app.cleanup();
    app
}

fn run_plugin<V, const D: usize>(scene: &Scene<D>, threads: usize, shape: ShapeKind) -> PluginRun
where
    V: FromArray<D> + Dim,
{
    let start = Instant::now();
    let mut app = plugin_app::<V, D>(scene, threads, shape);
    for _ in 0..WARMUP {
        app.update();
    }
    let setup_s = start.elapsed().as_secs_f64();
    let mut parallel_tasks = 0usize;

    let mut cols: [Vec<f64>; 14] = Default::default();
    for _ in 0..TICKS {
        let t = Instant::now();
        app.update();
        let update = t.elapsed().as_secs_f64() * 1e3;
        let s = *app.world().resource::<AabbTree<V>>().stats();
        parallel_tasks += s.parallel_tasks;
        let row = [
            s.prepare_ms as f64,
            s.broad_ms as f64,
            s.narrow_ms as f64,
            s.events_ms as f64,
            s.total_ms() as f64,
            update,
            (s.started + s.ended) as f64,
            s.touching as f64,
            s.candidates as f64,
            s.moved as f64,
            s.pass_throughs as f64,
            s.processed as f64,
            s.tree_ms as f64,
            (s.total_ms() - s.tree_ms) as f64,
        ];
        for (c, x) in cols.iter_mut().zip(row) {
            c.push(x);
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let events_per_tick = mean(&cols[6]);
    let swept_per_tick = mean(&cols[10]);
    let tree = app.world().resource::<AabbTree<V>>();
    let tree_bytes_per_proxy = tree.tree_stats().bytes as f64 / scene.len().max(1) as f64;
    let plugin_bytes_per_proxy = tree.bytes() as f64 / scene.len().max(1) as f64;
    let touching_before = tree.touching_pairs().count();
    // A level unloaded: every collider despawned in one frame. Each despawn ends its
    // touching pairs at once (observers), so this times the plugin's removal path.
    let entities: Vec<Entity> = app
        .world_mut()
        .query_filtered::<Entity, With<TrackedCollider<V>>>()
        .iter(app.world())
        .collect();
    let ended_so_far = |app: &App| {
        app.world()
            .resource::<Messages<CollisionEnded>>()
            .iter_current_update_messages()
            .count()
    };
    let ended_before = ended_so_far(&app);
    let t = Instant::now();
    for e in entities {
        app.world_mut().despawn(e);
    }
    let despawn_all_ms = t.elapsed().as_secs_f64() * 1e3;
    let despawn_ended = ended_so_far(&app) - ended_before;
    let tree = app.world().resource::<AabbTree<V>>();
    assert_eq!(tree.tree().len(), 0, "colliders left in the tree");
    assert_eq!(despawn_ended, touching_before, "one end per touching pair");
    let [
        prepare,
        broad,
        narrow,
        events,
        plugin_total,
        update,
        _,
        touching,
        candidates,
        moved,
        _,
        processed,
        tree_work,
        around_tree,
    ] = &mut cols;
    PluginRun {
        prepare: median(prepare),
        broad: median(broad),
        narrow: median(narrow),
        events: median(events),
        plugin_total: median(plugin_total),
        tree_work: median(tree_work),
        around_tree: median(around_tree),
        update: median(update),
        events_per_tick,
        swept_per_tick,
        touching: median(touching),
        candidates: median(candidates),
        moved: median(moved),
        processed: median(processed),
        tree_bytes_per_proxy,
        plugin_bytes_per_proxy,
        despawn_all_ms,
        despawn_ended,
        parallel_tasks_per_tick: parallel_tasks as f64 / TICKS as f64,
        setup_s,
    }
}

/// Median ms per step of the bare tree driven on the scene (after the same warm-up), and the
/// median number of pairs it reported.
fn run_bare<V: FromArray<D>, const D: usize>(
    scene: &Scene<D>,
    displacement: Displacement,
    threads: usize,
) -> (f64, f64) {
    let mut scene = scene.clone();
    let mut bare = OursBroadPhase::<V, D>::with_displacement(&scene, displacement);
    bare.set_threads(threads);
    for _ in 0..WARMUP {
        scene.step();
        bare.step(&scene);
    }
    let mut times = Vec::with_capacity(TICKS);
    let mut pairs = Vec::with_capacity(TICKS);
    for _ in 0..TICKS {
        scene.step();
        let t = Instant::now();
        let n = std::hint::black_box(bare.step(&scene));
        times.push(t.elapsed().as_secs_f64() * 1e3);
        pairs.push(n as f64);
    }
    (median(&mut times), median(&mut pairs))
}

/// The scene of the run: uniform, the last `idle_fraction` of its boxes still.
fn stress_scene<const D: usize>(n: usize, vs: f32, idle_fraction: f32) -> (Scene<D>, usize)
where
    Scene<D>: UniformDyn,
{
    let mut scene = Scene::<D>::uniform_dyn(n, vs);
    // The first `moving` boxes (a random subset: the centers are uniform) keep moving.
    let moving = n - ((n as f64 * idle_fraction as f64).round() as usize).min(n);
    for v in &mut scene.velocities[moving..] {
        *v = [0.0; D];
    }
    (scene, moving)
}

/// `--compare-shapes`: one app per shape on the same scene, ticked in turn (the order
/// rotating), the medians of each and the ratios to the boxes'.
fn compare_shapes<V, const D: usize>(
    n: usize,
    vs: f32,
    label: &str,
    idle_fraction: f32,
    threads: usize,
) where
    Scene<D>: UniformDyn,
    V: FromArray<D> + Dim,
{
    let (scene, moving) = stress_scene::<D>(n, vs, idle_fraction);
    println!(
        "stress --compare-shapes: {n} entities, {D}D, {label} (vs = {vs}), idle fraction \
         {idle_fraction} ({moving} moving), pair walk on {threads} thread(s), {WARMUP} warm-up \
         ticks, {TICKS} measured per shape, shapes ticked in turn (capsule: radius \
         {CAPSULE_RADIUS}, half length {CAPSULE_HALF_LENGTH}; ball: radius {})",
        scene.half
    );
    let mut apps: Vec<App> = ShapeKind::ALL
        .iter()
        .map(|&shape| plugin_app::<V, D>(&scene, threads, shape))
        .collect();
    for _ in 0..WARMUP {
        for app in &mut apps {
            app.update();
        }
    }
    let kinds = ShapeKind::ALL.len();
    // Per shape: app.update() ms, plugin tick ms, narrow ms, touching, candidates.
    let mut cols: Vec<[Vec<f64>; 5]> = (0..kinds).map(|_| Default::default()).collect();
    for tick in 0..TICKS {
        for k in 0..kinds {
            let s = (tick + k) % kinds;
            let app = &mut apps[s];
            let t = Instant::now();
            app.update();
            let update = t.elapsed().as_secs_f64() * 1e3;
            let stats = *app.world().resource::<AabbTree<V>>().stats();
            let row = [
                update,
                stats.total_ms() as f64,
                stats.narrow_ms as f64,
                stats.touching as f64,
                stats.candidates as f64,
            ];
            for (c, x) in cols[s].iter_mut().zip(row) {
                c.push(x);
            }
        }
    }
    let medians: Vec<[f64; 5]> = cols
        .iter_mut()
        .map(|c| c.each_mut().map(|v| median(v)))
        .collect();
    println!();
    println!(
        "| shape (median of {TICKS} ticks) | app.update() ms | plugin tick ms | narrow ms | narrow ns per candidate | touching pairs | candidate pairs |"
    );
    println!("|---|---|---|---|---|---|---|");
    let per_candidate = |m: &[f64; 5]| m[2] * 1e6 / m[4].max(1.0);
    for (shape, m) in ShapeKind::ALL.iter().zip(&medians) {
        println!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.1} | {:.0} | {:.0} |",
            shape.name(),
            m[0],
            m[1],
            m[2],
            per_candidate(m),
            m[3],
            m[4]
        );
    }
    println!();
    let base = medians[0];
    for (shape, m) in ShapeKind::ALL.iter().zip(&medians).skip(1) {
        println!(
            "ratio {}/box: app.update() {:.3}, plugin tick {:.3}, narrow {:.3}, narrow per candidate {:.3}",
            shape.name(),
            m[0] / base[0],
            m[1] / base[1],
            m[2] / base[2],
            per_candidate(m) / per_candidate(&base)
        );
    }
}

fn report<V, const D: usize>(
    n: usize,
    vs: f32,
    label: &str,
    idle_fraction: f32,
    threads: usize,
    shape: ShapeKind,
) where
    Scene<D>: UniformDyn,
    V: FromArray<D> + Dim,
{
    let (scene, moving) = stress_scene::<D>(n, vs, idle_fraction);
    println!(
        "stress: {n} entities ({}), {}D, {label} (vs = {vs}), idle fraction {idle_fraction} ({} idle, {moving} moving), pair walk on {threads} thread(s), {WARMUP} warm-up ticks, {TICKS} measured",
        shape.name(),
        D,
        n - moving
    );
    let p = run_plugin::<V, D>(&scene, threads, shape);
    let (bare_vel, bare_vel_pairs) = run_bare::<V, D>(&scene, Displacement::Velocity, threads);
    let (bare_zero, bare_zero_pairs) = run_bare::<V, D>(&scene, Displacement::Zero, threads);

    println!();
    println!("| stage (median of {TICKS} ticks) | ms |");
    println!("|---|---|");
    println!("| prepare | {:.3} |", p.prepare);
    println!("| broad | {:.3} |", p.broad);
    println!("| narrow | {:.3} |", p.narrow);
    println!("| events | {:.3} |", p.events);
    println!("| plugin tick (sum of stages) | {:.3} |", p.plugin_total);
    println!(
        "| of which the moving tree's own work (moves, pair update) | {:.3} |",
        p.tree_work
    );
    println!(
        "| of which the work around the tree (plugin tick less the tree's) | {:.3} |",
        p.around_tree
    );
    println!("| whole app.update() | {:.3} |", p.update);
    println!(
        "| bare tree step, displacement = velocity*dt | {:.3} |",
        bare_vel
    );
    println!("| bare tree step, displacement = 0 | {:.3} |", bare_zero);
    println!();
    println!(
        "events/tick (started + ended, mean): {:.1}, of which swept hits/tick (mean): {:.2}",
        p.events_per_tick, p.swept_per_tick
    );
    println!(
        "touching pairs: {:.0}, candidate pairs: {:.0}, proxies moved/tick: {:.0}, colliders processed/tick: {:.0}",
        p.touching, p.candidates, p.moved, p.processed
    );
    println!(
        "pair-walk tasks on the compute pool/tick (mean): {:.1}",
        p.parallel_tasks_per_tick
    );
    println!(
        "bare tree pairs reported/step: {:.0} (velocity), {:.0} (zero)",
        bare_vel_pairs, bare_zero_pairs
    );
    println!(
        "ratio plugin tick / bare step (velocity): {:.2}   app.update() / bare step (velocity): {:.2}",
        p.plugin_total / bare_vel,
        p.update / bare_vel
    );
    println!(
        "ratio tree's own work in the plugin / bare step (velocity): {:.2}   work around the tree / bare step (velocity): {:.2}",
        p.tree_work / bare_vel,
        p.around_tree / bare_vel
    );
    println!(
        "ratio plugin tick / bare step (zero): {:.2}   app.update() / bare step (zero): {:.2}",
        p.plugin_total / bare_zero,
        p.update / bare_zero
    );
    let ecs = size_of::<TrackedCollider<V>>()
        + shape.component_bytes::<V>()
        + size_of::<Velocity<V>>()
        + size_of::<Transform>();
    println!(
        "bytes per proxy: tree {:.1} + bodies and pairs {:.1} + ECS {} (TrackedCollider {} + {} {} + Velocity {} + Transform {}) = {:.1}",
        p.tree_bytes_per_proxy,
        p.plugin_bytes_per_proxy - p.tree_bytes_per_proxy,
        ecs,
        size_of::<TrackedCollider<V>>(),
        shape.name(),
        shape.component_bytes::<V>(),
        size_of::<Velocity<V>>(),
        size_of::<Transform>(),
        p.plugin_bytes_per_proxy + ecs as f64
    );
    println!(
        "despawn all {n} colliders in one frame: {:.2} ms ({} touching pairs ended)",
        p.despawn_all_ms, p.despawn_ended
    );
    println!("(setup + warm-up: {:.2} s)", p.setup_s);
}

/// `Scene::<D>::uniform` for either dimension.
trait UniformDyn {
    fn uniform_dyn(n: usize, vs: f32) -> Self;
}

impl UniformDyn for Scene<2> {
    fn uniform_dyn(n: usize, vs: f32) -> Self {
        Scene::<2>::uniform(n, vs)
    }
}

impl UniformDyn for Scene<3> {
    fn uniform_dyn(n: usize, vs: f32) -> Self {
        Scene::<3>::uniform(n, vs)
    }
}

fn main() {
    let mut n = 10_000;
    let mut three_d = false;
    let mut vs = Scene::<2>::FAST;
    let mut label = "fast";
    let mut idle_fraction = 0.0f32;
    let mut threads = 1usize;
    let mut shape = ShapeKind::Box;
    let mut compare = false;
    let usage = || -> ! {
        eprintln!(
            "usage: stress [N] [2d|3d] [fast|slow] [--idle-fraction F] [--threads T] \
             [--shape box|capsule|ball] [--compare-shapes]"
        );
        std::process::exit(2);
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--idle-fraction" => {
                idle_fraction = match args.next().map(|f| f.parse::<f32>()) {
                    Some(Ok(f)) if (0.0..=1.0).contains(&f) => f,
                    _ => usage(),
                }
            }
            "--threads" => {
                threads = match args.next().map(|t| t.parse::<usize>()) {
                    Some(Ok(t)) if t >= 1 => t,
                    _ => usage(),
                }
            }
            "--shape" => {
                shape = match args.next().as_deref() {
                    Some("box") => ShapeKind::Box,
                    Some("capsule") => ShapeKind::Capsule,
                    Some("ball") => ShapeKind::Ball,
                    _ => usage(),
                }
            }
            "--compare-shapes" => compare = true,
            "2d" => three_d = false,
            "3d" => three_d = true,
            "fast" => (vs, label) = (Scene::<2>::FAST, "fast"),
            "slow" => (vs, label) = (Scene::<2>::SLOW, "slow"),
            other => match other.replace('_', "").parse() {
                Ok(x) => n = x,
                Err(_) => usage(),
            },
        }
    }
    match (three_d, compare) {
        (true, true) => compare_shapes::<Vec3, 3>(n, vs, label, idle_fraction, threads),
        (false, true) => compare_shapes::<Vec2, 2>(n, vs, label, idle_fraction, threads),
        (true, false) => report::<Vec3, 3>(n, vs, label, idle_fraction, threads, shape),
        (false, false) => report::<Vec2, 2>(n, vs, label, idle_fraction, threads, shape),
    }
}
