//! What colliders in a layer that interacts with nothing cost the others: a level of
//! 3,000 wall tiles and 500 movers, alone and beside 40,000 floor tiles (`Static`, in a
//! layer of their own, interacting with nothing) under the same area.
//!
//! `cargo run --release -p bevy_aabb_tree_bench --features multi_threaded --bin layers -- [2d|3d]`
//!
//! Two apps, one without the floor and one with it, run tick for tick, alternating which
//! goes first: 30 warm-up ticks, then 300 measured. The plugin runs in `Update`, one tick
//! a frame at a fixed 60 Hz step; the movers walk and bounce over the level, moved by a
//! system before the pipeline. Printed for each app: the median broad phase
//! (`StepStats::broad_ms`), the median whole tick of the plugin, and the median time of a
//! closest-hit ray whose mask leaves the floor out (10,000 rays across the level through
//! `SpatialQuery::cast_ray`, each timed in batches of 100), and the ratios of the app with
//! the floor to the app without. Both apps must report the same touching pairs and ray
//! hits (the process exits with status 1 otherwise). With `LAYERS_ON_INSERT=1` both apps
//! run with `StaticChangeDetection::OnInsert`, which does not scan the static colliders' change
//! ticks each tick (the part of the plugin's tick that grows with the floor).

#[path = "../dim.rs"]
mod dim;

use std::time::{Duration, Instant};

use bevy::ecs::system::SystemState;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::Vector;
use bevy_aabb_tree::prelude::*;
use dim::Dim;

/// The level's walls and the movers interact with everything.
const WALL: u32 = 1 << 0;
/// The floor: in a layer of its own, interacting with nothing.
const FLOOR: u32 = 1 << 1;
const MOVERS: usize = 500;
const WARMUP: usize = 30;
const TICKS: usize = 300;
/// The side of the square the level covers: 200 units (in 3D a slab 10 units deep).
const SIDE: f32 = 200.0;
const DEPTH: f32 = 10.0;

/// A mover's velocity, in units per tick.
#[derive(Component)]
struct Walk(Vec3);

fn lcg(seed: u32) -> impl FnMut() -> f32 {
    let mut s = seed;
    move || {
        s = s.wrapping_mul(1664525).wrapping_add(1013904223);
        (s >> 8) as f32 / 16_777_216.0
    }
}

fn v<V: Vector>(x: f32, y: f32, z: f32) -> V {
    V::truncate_from_3d(Vec3::new(x, y, z))
}

fn walk(mut q: Query<(&mut Transform, &mut Walk)>) {
    for (mut t, mut w) in &mut q {
        t.translation += w.0;
        for (axis, side) in [SIDE, SIDE, DEPTH].into_iter().enumerate() {
            if t.translation[axis] < 0.0 || t.translation[axis] > side {
                w.0[axis] = -w.0[axis];
            }
        }
    }
}

fn app<V: Dim>(floor: bool) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, TransformPlugin))
        .add_plugins(AabbTreePlugin::<V>::new(Update))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .add_systems(Update, walk.before(CollisionSystems::Prepare));
    if std::env::var_os("LAYERS_ON_INSERT").is_some() {
        app.insert_resource(CollisionConfig {
            static_changes: StaticChangeDetection::OnInsert,
            ..default()
        });
    }
    let world = app.world_mut();
    let mut r = lcg(7);
    let z = |r: &mut dyn FnMut() -> f32| if V::DIM == 3 { r() * DEPTH } else { 0.0 };
    // The walls: 3,000 unit boxes scattered over the level.
    for _ in 0..3000 {
        let at = Vec3::new(r() * SIDE, r() * SIDE, z(&mut r));
        world.spawn((
            Transform::from_translation(at),
            Aabb::new(V::splat(0.5)),
            CollisionLayers::new(WALL, u32::MAX),
            Static,
        ));
    }
    for _ in 0..MOVERS {
        let at = Vec3::new(r() * SIDE, r() * SIDE, z(&mut r));
        let dir = Vec3::new(
            r() - 0.5,
            r() - 0.5,
            if V::DIM == 3 { r() - 0.5 } else { 0.0 },
        );
        world.spawn((
            Transform::from_translation(at),
            Aabb::new(V::splat(0.4)),
            Velocity(v::<V>(dir.x, dir.y, dir.z) * 60.0),
            Walk(dir),
        ));
    }
    // The floor, spawned last so that the walls and movers have the same entities in
    // both apps: a 200 × 200 grid of touching unit tiles under the whole level (in 3D
    // at depths spread through the slab, among the walls and movers).
    if floor {
        for i in 0..200 {
            for j in 0..200 {
                let z = if V::DIM == 3 {
                    (j % 4) as f32 * 50.0
                } else {
                    0.0
                };
                world.spawn((
                    Transform::from_xyz(i as f32 + 0.5, j as f32 + 0.5, z),
                    Aabb::new(V::splat(0.5)),
                    CollisionLayers::new(FLOOR, 0),
                    Static,
                ));
            }
        }
    }
    app
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// The rays: from one side of the level to the other.
fn rays<V: Dim>() -> Vec<Ray<V>> {
    let mut r = lcg(11);
    (0..10_000)
        .map(|_| {
            let a = v::<V>(0.0, r() * SIDE, r() * DEPTH);
            let b = v::<V>(SIDE, r() * SIDE, r() * DEPTH);
            Ray::new(a, b - a)
        })
        .collect()
}

/// Median µs per ray over batches of 100, and the entities hit.
fn time_rays<V: Dim>(app: &mut App, rays: &[Ray<V>]) -> (f64, Vec<Option<Entity>>) {
    let mut state: SystemState<SpatialQuery<V>> = SystemState::new(app.world_mut());
    let query = state.get(app.world()).expect("the spatial query");
    let filter = QueryFilter::default().with_mask(WALL);
    let mut batches = Vec::new();
    let mut hits = Vec::new();
    for batch in rays.chunks(100) {
        let start = Instant::now();
        for ray in batch {
            hits.push(query.cast_ray(ray, 1.0, &filter).map(|h| h.entity));
        }
        batches.push(start.elapsed().as_secs_f64() * 1e6 / batch.len() as f64);
    }
    (median(batches), hits)
}

fn run<V: Dim>() -> bool {
    let mut apps = [app::<V>(false), app::<V>(true)];
    let mut broad = [Vec::new(), Vec::new()];
    let mut tick = [Vec::new(), Vec::new()];
    for t in 0..WARMUP + TICKS {
        let order = if t % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            apps[i].update();
            if t >= WARMUP {
                let stats = apps[i].world().resource::<AabbTree<V>>().stats();
                broad[i].push(stats.broad_ms as f64);
                tick[i].push(stats.total_ms() as f64);
            }
        }
    }
    let pairs: Vec<Vec<(Entity, Entity)>> = apps
        .iter()
        .map(|app| {
            let mut p: Vec<_> = app
                .world()
                .resource::<AabbTree<V>>()
                .touching_pairs()
                .collect();
            p.sort();
            p
        })
        .collect();
    let rays = rays::<V>();
    let (ray_a, hits_a) = time_rays(&mut apps[0], &rays);
    let (ray_b, hits_b) = time_rays(&mut apps[1], &rays);
    // Again, in the other order.
    let (ray_b2, _) = time_rays(&mut apps[1], &rays);
    let (ray_a2, _) = time_rays(&mut apps[0], &rays);
    let (ray_a, ray_b) = (ray_a.min(ray_a2), ray_b.min(ray_b2));
    let dim = if V::DIM == 2 { "2D" } else { "3D" };
    let (ba, bb) = (median(broad[0].clone()), median(broad[1].clone()));
    let (ta, tb) = (median(tick[0].clone()), median(tick[1].clone()));
    println!(
        "{dim}: 3,000 walls + {MOVERS} movers, without / with 40,000 floor tiles that interact with nothing"
    );
    println!(
        "  broad phase      {ba:8.4} / {bb:8.4} ms   ratio {:.2}",
        bb / ba
    );
    println!(
        "  plugin tick      {ta:8.4} / {tb:8.4} ms   ratio {:.2}",
        tb / ta
    );
    println!(
        "  masked ray       {ray_a:8.3} / {ray_b:8.3} µs   ratio {:.2}",
        ray_b / ray_a
    );
    println!(
        "  touching pairs   {} / {}; ray hits {}",
        pairs[0].len(),
        pairs[1].len(),
        hits_a.iter().filter(|h| h.is_some()).count()
    );
    let same = pairs[0] == pairs[1] && hits_a == hits_b;
    if !same {
        println!("  error: the two apps disagree");
    }
    same
}

fn main() -> std::process::ExitCode {
    let dim = std::env::args().nth(1).unwrap_or_else(|| "2d".into());
    let ok = match dim.as_str() {
        "3d" => run::<Vec3>(),
        "2d" => run::<Vec2>(),
        _ => {
            let a = run::<Vec2>();
            run::<Vec3>() && a
        }
    };
    if ok {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
