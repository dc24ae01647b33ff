//! The cost of saving the collision state for rollback: the `stress` scene (N uniform
//! moving boxes, `fast`), ticked until warm, then per tick the time of one `app.update()`
//! and of one saved frame: a clone of `AabbTree` (what `AabbTreeRollbackPlugin` saves,
//! both trees, the pairs, the neighbourhood lists) and a copy of every collider's
//! `TrackedCollider` (the per-entity part). Once with `CollisionConfig::replayable` off,
//! once on (every collider processed at every tick, as under rollback).
//!
//! `cargo run --release -p bevy_aabb_tree_bench --features plugin --bin snapshot -- [N]
//! [2d|3d]` (defaults: 10000 2d). Prints medians and the ratio saved frame / tick.

#[path = "../dim.rs"]
mod dim;
#[path = "../mover.rs"]
mod mover;
#[path = "../../../benches/support/scene.rs"]
mod scene;

use std::hint::black_box;
use std::time::Instant;

use bevy::prelude::*;
use bevy_aabb_tree::prelude::*;
use dim::Dim;
use mover::scene_app;
use scene::{Scene, Uniform, size_and_dimension};

/// Ticks run before measuring.
const WARMUP: usize = 30;
/// Ticks measured.
const TICKS: usize = 200;

fn app<V: Dim, const D: usize>(scene: &Scene<D>, replayable: bool) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins(AabbTreePlugin::<V>::default())
        .insert_resource(CollisionConfig {
            replayable,
            ..default()
        });
    scene_app::<V, D>(app, scene, WARMUP, |_, _| {})
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Medians of a tick, of a clone of `AabbTree`, and of a copy of every `TrackedCollider`.
fn measure<V, const D: usize>(scene: &Scene<D>, replayable: bool) -> [f64; 3]
where
    V: Dim,
{
    let mut app = app::<V, D>(scene, replayable);
    let mut tracked = app.world_mut().query::<(Entity, &TrackedCollider<V>)>();
    let mut times: [Vec<f64>; 3] = Default::default();
    for _ in 0..TICKS {
        let t = Instant::now();
        app.update();
        times[0].push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let saved = app.world().resource::<AabbTree<V>>().clone();
        times[1].push(t.elapsed().as_secs_f64() * 1e3);
        black_box(&saved);
        drop(saved);
        let t = Instant::now();
        let copies: Vec<(Entity, TrackedCollider<V>)> =
            tracked.iter(app.world()).map(|(e, c)| (e, *c)).collect();
        times[2].push(t.elapsed().as_secs_f64() * 1e3);
        black_box(&copies);
    }
    times.each_mut().map(|t| median(t))
}

fn run<V, const D: usize>(n: usize)
where
    V: Dim,
    Scene<D>: Uniform,
{
    let scene = Scene::<D>::uniform_in(n, Scene::<2>::FAST);
    println!("{D}D, {n} moving boxes (fast), {TICKS} ticks, medians");
    println!(
        "| replayable | tick (ms) | AabbTree clone (ms) | TrackedCollider copies (ms) | saved frame / tick |"
    );
    println!("|---|---|---|---|---|");
    for replayable in [false, true] {
        let [tick, clone, copies] = measure::<V, D>(&scene, replayable);
        println!(
            "| {replayable} | {tick:.3} | {clone:.3} | {copies:.3} | {:.3} |",
            (clone + copies) / tick
        );
    }
}

fn main() {
    let (n, three_d) = size_and_dimension(10_000, "snapshot [N] [2d|3d]");
    if three_d {
        run::<Vec3, 3>(n);
    } else {
        run::<Vec2, 2>(n);
    }
}
