//! The tile-map level scene, headless: what a level of colliders that never move costs
//! per tick.
//!
//! `cargo run --release -p bevy_aabb_tree_bench --features multi_threaded --bin tilemap -- [2d|3d]`
//!
//! Bevy's `multi_threaded` feature is on, as in Bevy's default features and so in most
//! games: without it Bevy propagates transforms with its serial version, which visits
//! every child of every parent each frame, still or not, which costs more than the
//! plugin's tick on a large level and leaves nothing of the level in the caches.
//!
//! A square grid of touching unit tiles (half extents 0.5, centres one unit apart), spawned
//! in one frame as children of one map entity and marked [`Static`], plus 1,000 movers
//! (half extents 0.3) walking over it, moved by a system before the pipeline. The plugin
//! runs in `Update`, one tick a frame, at a fixed 60 Hz step. Each scene runs in this
//! process, one after the other:
//!
//! - the movers over no level;
//! - 10k, 100k and 1M `Static` tiles under a map entity, with each
//!   [`StaticChangeDetection`] mode (the default `Scan` tests every tile's change ticks each
//!   tick; `OnInsert` does not scan tiles);
//! - the 1M level with `OnInsert` and one more static collider, outside the map, moved
//!   every tick by an insert of its `Transform` (a platform marked `Static`; under the map
//!   it would make Bevy propagate the transforms of the map's million children each
//!   frame);
//! - 90k plain tiles (no `Static`, no parent), which pair with each other;
//! - a level unlike the tiles, 10k and 1M `Static` colliders with `OnInsert`: boxes of
//!   sizes from 0.15 to 1.2 per axis overlapping each other, one in eight a ball, on a
//!   jittered grid.
//!
//! For each: the first tick (the level goes in), the median of later ticks (the plugin's
//! stages from [`AabbTree::stats`], and the whole `app.update()` with Bevy's own systems),
//! the collision events among tiles, and bytes per collider (the resource's arrays over
//! every collider, and the components the plugin adds to each). The first tick of the 1M
//! level is also set against `DynamicTree::build` of the same boxes alone.
//!
//! `TILEMAP_ONLY="1M Static, OnInsert"` (a row's name) runs that scene alone, for a
//! profiler. With `NO_TRANSFORM=1` in the environment the app runs without Bevy's transform
//! systems: the difference shows how much of a large level's tick comes from the caches
//! those systems leave cold.

#[path = "../dim.rs"]
mod dim;

use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::prelude::*;
use bevy_aabb_tree::{DynamicTree, Vector};
use dim::Dim;

/// Movers in every scene.
const MOVERS: usize = 1000;
/// Ticks run before measuring, after the first.
const WARMUP: usize = 10;
/// Ticks measured.
const TICKS: usize = 200;

/// Marks the tiles, to count events among them.
#[derive(Component)]
struct Tile;

/// A mover's velocity in the grid's plane.
#[derive(Component)]
struct Walk(Vec2);

/// The grid's side (the movers stay over it).
#[derive(Resource)]
struct Side(f32);

/// Starts among tiles, counted by a reader after the pipeline.
#[derive(Resource, Default)]
struct TileEvents(usize);

/// The static tile moved every tick, and the tick count.
#[derive(Resource)]
struct Platform(Entity, u32);

/// Moves the platform along a row of the level, by inserting its `Transform`.
fn move_platform(mut commands: Commands, platform: Option<ResMut<Platform>>) {
    if let Some(mut platform) = platform {
        platform.1 += 1;
        let x = (platform.1 % 200) as f32 * 0.25;
        commands
            .entity(platform.0)
            .insert(Transform::from_xyz(x, 5.5, 0.0));
    }
}

fn walk(side: Res<Side>, mut q: Query<(&mut Transform, &mut Walk)>) {
    let dt = 1.0 / 60.0;
    for (mut t, mut w) in &mut q {
        let mut p = t.translation.truncate() + w.0 * dt;
        for k in 0..2 {
            if p[k] < 0.0 || p[k] > side.0 {
                w.0[k] = -w.0[k];
                p[k] = p[k].clamp(0.0, side.0);
            }
        }
        t.translation = p.extend(t.translation.z);
    }
}

fn count_tile_events<V: Vector>(
    mut started: MessageReader<CollisionStarted<V>>,
    tiles: Query<(), With<Tile>>,
    mut count: ResMut<TileEvents>,
) {
    for s in started.read() {
        if tiles.contains(s.entity) && tiles.contains(s.other) {
            count.0 += 1;
        }
    }
}

/// A small deterministic generator (SplitMix64), values in `[0, 1)`.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// How the level's tiles are spawned.
#[derive(Clone, Copy, PartialEq)]
enum Level {
    None,
    /// `Static`, children of one map entity, found by the given mode.
    Static(usize, StaticChangeDetection),
    /// As `Static(n, OnInsert)`, plus one more static tile moved every tick by inserting
    /// its `Transform` (a moving platform marked `Static`).
    Platform(usize),
    /// Neither `Static` nor a parent.
    Plain(usize),
    /// `Static` with `OnInsert`, children of the map, but not tiles: boxes of sizes drawn
    /// from 0.15 to 1.2 per axis (overlapping each other) and one in eight a ball, on a
    /// jittered grid.
    Mixed(usize),
}

struct Report {
    first_ms: f64,
    later_ms: f64,
    later_frame_ms: f64,
    tile_events: usize,
    colliders: usize,
    bytes: usize,
    candidates: usize,
    /// Medians of the stages over the measured ticks: prepare, broad, narrow, events.
    stages: [f64; 4],
    /// The stages of the first tick.
    first_stages: [f64; 4],
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn run<V>(level: Level, dim3: bool) -> Report
where
    V: Dim,
{
    let side = match level {
        Level::None => 100,
        Level::Static(n, _) | Level::Plain(n) | Level::Platform(n) | Level::Mixed(n) => n,
    };
    let static_changes = match level {
        Level::Static(_, mode) => mode,
        Level::Platform(_) | Level::Mixed(_) => StaticChangeDetection::OnInsert,
        _ => StaticChangeDetection::default(),
    };
    let mut app = App::new();
    app.add_plugins(MinimalPlugins);
    if std::env::var_os("NO_TRANSFORM").is_none() {
        app.add_plugins(bevy::transform::TransformPlugin);
    }
    app.add_plugins(AabbTreePlugin::<V>::new(Update))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .insert_resource(Side(side as f32 - 1.0))
        .insert_resource(CollisionConfig {
            static_changes,
            ..default()
        })
        .init_resource::<TileEvents>()
        .add_systems(
            Update,
            (walk, move_platform).before(CollisionSystems::Prepare),
        )
        .add_systems(
            Update,
            count_tile_events::<V>.after(CollisionSystems::Events),
        );
    app.update();
    let world = app.world_mut();
    let mut rng = Rng(7);
    for _ in 0..MOVERS {
        let p = Vec3::new(
            rng.unit() * (side - 1) as f32,
            rng.unit() * (side - 1) as f32,
            if dim3 { rng.unit() - 0.5 } else { 0.0 },
        );
        let angle = rng.unit() * std::f32::consts::TAU;
        world.spawn((
            Transform::from_translation(p),
            Aabb::<V>::new(V::splat(0.3)),
            Walk(Vec2::from_angle(angle) * 3.0),
        ));
    }
    let map = world.spawn(Transform::default()).id();
    if let Level::Platform(_) = level {
        let platform = world
            .spawn((
                Transform::default(),
                Aabb::<V>::new(V::splat(0.5)),
                Tile,
                Static,
            ))
            .id();
        world.insert_resource(Platform(platform, 0));
    }
    if let Level::Mixed(n) = level {
        let mut rng = Rng(11);
        let shapes: Vec<_> = (0..n * n)
            .map(|i| {
                let at = Vec3::new(
                    (i / n) as f32 + rng.unit() - 0.5,
                    (i % n) as f32 + rng.unit() - 0.5,
                    if dim3 { rng.unit() - 0.5 } else { 0.0 },
                );
                let half = Vec3::new(
                    0.15 + 1.05 * rng.unit(),
                    0.15 + 1.05 * rng.unit(),
                    0.15 + 1.05 * rng.unit(),
                );
                let ball = rng.unit() < 0.125;
                (
                    Transform::from_translation(at),
                    V::truncate_from_3d(half),
                    ball,
                )
            })
            .collect();
        let boxes = shapes
            .iter()
            .filter(|s| !s.2)
            .map(|&(t, half, _)| (t, Aabb::<V>::new(half), Tile, Static, ChildOf(map)));
        world.spawn_batch(boxes);
        let balls = shapes.iter().filter(|s| s.2).map(|&(t, half, _)| {
            let r = half.axis(0);
            (t, BoundingSphere::<V>::new(r), Tile, Static, ChildOf(map))
        });
        world.spawn_batch(balls);
    }
    if let Level::Static(n, _) | Level::Plain(n) | Level::Platform(n) = level {
        let tiles = (0..n * n).map(|i| {
            (
                Transform::from_xyz((i / n) as f32, (i % n) as f32, 0.0),
                Aabb::<V>::new(V::splat(0.5)),
                Tile,
            )
        });
        if matches!(level, Level::Static(..) | Level::Platform(_)) {
            world.spawn_batch(tiles.map(|t| (t, Static, ChildOf(map))));
        } else {
            world.spawn_batch(tiles);
        }
    }
    app.update();
    let stats = app.world().resource::<AabbTree<V>>().stats();
    let first_ms = stats.total_ms() as f64;
    let first_stages = [
        stats.prepare_ms,
        stats.broad_ms,
        stats.narrow_ms,
        stats.events_ms,
    ]
    .map(f64::from);
    for _ in 0..WARMUP {
        app.update();
    }
    let mut ticks = Vec::with_capacity(TICKS);
    let mut frames = Vec::with_capacity(TICKS);
    let mut stages: [Vec<f64>; 4] = Default::default();
    for _ in 0..TICKS {
        let start = Instant::now();
        app.update();
        frames.push(start.elapsed().as_secs_f64() * 1000.0);
        let stats = app.world().resource::<AabbTree<V>>().stats();
        ticks.push(stats.total_ms() as f64);
        for (list, ms) in stages.iter_mut().zip([
            stats.prepare_ms,
            stats.broad_ms,
            stats.narrow_ms,
            stats.events_ms,
        ]) {
            list.push(ms as f64);
        }
    }
    let state = app.world().resource::<AabbTree<V>>();
    Report {
        first_ms,
        later_ms: median(ticks),
        later_frame_ms: median(frames),
        tile_events: app.world().resource::<TileEvents>().0,
        colliders: state.tree().len() + state.static_tree().len(),
        bytes: state.bytes(),
        candidates: state.candidate_count(),
        stages: stages.map(median),
        first_stages,
    }
}

/// `DynamicTree::build` of the 1M level's boxes alone, in milliseconds (median of 3).
fn build_alone<V: Vector>(n: usize) -> f64 {
    let boxes: Vec<_> = (0..n * n)
        .map(|i| {
            let c = V::truncate_from_3d(Vec3::new((i / n) as f32, (i % n) as f32, 0.0));
            (
                bevy_aabb_tree::BoundingBox::from_center_half_extents(c, V::splat(0.5)),
                i,
            )
        })
        .collect();
    let times = (0..3)
        .map(|_| {
            let mut tree = DynamicTree::<V, usize>::new();
            let start = Instant::now();
            tree.build(boxes.iter().copied()).expect("valid boxes");
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    median(times)
}

fn scenes<V>(dim3: bool)
where
    V: Dim,
{
    let dim = if dim3 { "3D" } else { "2D" };
    println!("tile-map level, {dim}, {MOVERS} movers, median of {TICKS} ticks");
    println!(
        "{:<28} {:>10} {:>10} {:>12} {:>12} {:>10} {:>12}",
        "level", "first ms", "tick ms", "frame ms", "tile events", "pairs", "bytes/coll"
    );
    let mut rows = Vec::new();
    let only = std::env::var("TILEMAP_ONLY").ok();
    for (name, level) in [
        ("movers alone", Level::None),
        (
            "10k Static tiles",
            Level::Static(100, StaticChangeDetection::Scan),
        ),
        (
            "100k Static tiles",
            Level::Static(316, StaticChangeDetection::Scan),
        ),
        (
            "1M Static tiles",
            Level::Static(1000, StaticChangeDetection::Scan),
        ),
        (
            "10k Static, OnInsert",
            Level::Static(100, StaticChangeDetection::OnInsert),
        ),
        (
            "100k Static, OnInsert",
            Level::Static(316, StaticChangeDetection::OnInsert),
        ),
        (
            "1M Static, OnInsert",
            Level::Static(1000, StaticChangeDetection::OnInsert),
        ),
        ("1M Static, OnInsert, platform", Level::Platform(1000)),
        ("90k plain tiles", Level::Plain(300)),
        ("10k mixed Static, OnInsert", Level::Mixed(100)),
        ("1M mixed Static, OnInsert", Level::Mixed(1000)),
    ] {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let r = run::<V>(level, dim3);
        println!(
            "{:<28} {:>10.3} {:>10.4} {:>12.4} {:>12} {:>10} {:>12}",
            name,
            r.first_ms,
            r.later_ms,
            r.later_frame_ms,
            r.tile_events,
            r.candidates,
            r.bytes / r.colliders.max(1)
        );
        rows.push((name, r));
    }
    for (title, first) in [("a later tick (medians)", false), ("the first tick", true)] {
        println!("stages of {title}, ms: prepare, broad, narrow, events");
        for (name, r) in &rows {
            let [p, b, n, e] = if first { r.first_stages } else { r.stages };
            println!("{name:<28} {p:>10.4} {b:>10.4} {n:>10.4} {e:>10.4}");
        }
    }
    if only.is_some() {
        return;
    }
    let tick = |name: &str| {
        rows.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, r)| r)
            .expect("row")
    };
    let alone = tick("movers alone");
    let plain = tick("90k plain tiles");
    let build = build_alone::<V>(1000);
    for (mode, k10, m1) in [
        ("Detect", "10k Static tiles", "1M Static tiles"),
        ("OnInsert", "10k Static, OnInsert", "1M Static, OnInsert"),
    ] {
        let (k10, m1) = (tick(k10), tick(m1));
        println!(
            "later tick, 1M Static / 10k Static ({mode}):        {:.2}",
            m1.later_ms / k10.later_ms
        );
        println!(
            "first tick, 1M Static / DynamicTree::build ({mode}): {:.2} ({:.1} ms / {:.1} ms)",
            m1.first_ms / build,
            m1.first_ms,
            build
        );
    }
    println!(
        "later tick, 1M mixed Static / 10k mixed Static (OnInsert): {:.2}",
        tick("1M mixed Static, OnInsert").later_ms / tick("10k mixed Static, OnInsert").later_ms
    );
    println!(
        "later tick, 90k plain / movers alone:       {:.2}",
        plain.later_ms / alone.later_ms
    );
    println!(
        "later tick, 1M Static with one moved every tick / none moved (OnInsert): {:.2}",
        tick("1M Static, OnInsert, platform").later_ms / tick("1M Static, OnInsert").later_ms
    );
    use core::mem::size_of;
    let ecs = size_of::<Transform>()
        + size_of::<GlobalTransform>()
        + size_of::<ChildOf>()
        + size_of::<Aabb<V>>()
        + size_of::<TrackedCollider<V>>();
    println!(
        "ECS side per static tile: {ecs} bytes of components (Transform {}, GlobalTransform {}, \
         ChildOf {}, Aabb {}, Static 0, and TrackedCollider {} which the plugin adds)",
        size_of::<Transform>(),
        size_of::<GlobalTransform>(),
        size_of::<ChildOf>(),
        size_of::<Aabb<V>>(),
        size_of::<TrackedCollider<V>>()
    );
}

fn main() {
    let dim3 = std::env::args().any(|a| a == "3d");
    if dim3 {
        scenes::<Vec3>(true);
    } else {
        scenes::<Vec2>(false);
    }
}
