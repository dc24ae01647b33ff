//! The plugin's parallel pair search (`CollisionConfig::parallel_pairs_from`) against the
//! serial one: the same scene, run both ways, gives byte-identical message sequences, and
//! the parallel run did run its search as tasks on the compute task pool: the walk of the
//! changed tree in a scattered scene, the moved leaves' own walks in a packed crowd, and
//! the refit after a large batch of moves in a swarm.
//!
//! Each test runs in a process of its own (`kit::process::alone`), so that it can set up
//! the (process-wide) compute task pool with several threads before any app does,
//! whatever the machine's core count.

use crate::kit::rng;

use std::time::Duration;

use bevy::prelude::*;
use bevy::tasks::{ComputeTaskPool, TaskPoolBuilder};
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::prelude::*;
use rng::Rng;

use crate::kit::dim::Dim;
use crate::kit::process::{alone, test_name};

#[derive(Resource, Default)]
struct Log {
    lines: Vec<String>,
    /// Each tick's moved colliders and pair-walk tasks.
    ticks: Vec<(usize, usize)>,
    /// Each tick's `touching_pairs()`, in their order.
    touching: Vec<Vec<(Entity, Entity)>>,
    /// Pair updates of the moving tree that searched leaf by leaf, over the run.
    leaf_searches: u64,
    /// Refits of the moving tree run as tasks, over the run.
    parallel_refits: u64,
}

impl Log {
    /// Pair-walk tasks run on the pool, over all ticks.
    fn parallel_tasks(&self) -> usize {
        self.ticks.iter().map(|&(_, tasks)| tasks).sum()
    }

    /// Ticks with moves whose walk ran serially.
    fn serial_ticks(&self) -> usize {
        self.ticks
            .iter()
            .filter(|&&(moved, tasks)| moved > 0 && tasks == 0)
            .count()
    }
}

fn collect<V: Dim>(
    mut started: MessageReader<CollisionStarted<V>>,
    mut ended: MessageReader<CollisionEnded>,
    tree: Res<AabbTree<V>>,
    mut log: ResMut<Log>,
) {
    for e in started.read() {
        log.lines.push(format!(
            "start {} {} {:.4} {:?}",
            e.entity, e.other, e.time_of_impact, e.normal
        ));
    }
    for e in ended.read() {
        log.lines
            .push(format!("end {} {} {:?}", e.entity, e.other, e.reason));
    }
    let stats = tree.stats();
    log.ticks.push((stats.moved, stats.parallel_tasks));
    log.touching.push(tree.touching_pairs().collect());
}

/// The scene a run spawns.
#[derive(Clone, Copy)]
enum Scene {
    /// 600 colliders scattered in a box, boxes and spheres of mixed sizes, all moving (one
    /// in ten fast).
    Scattered,
    /// A packed crowd: unit boxes edge to edge on a lattice (24 a side in 2D, 8 in 3D),
    /// one in 16 walking slowly through the others, the rest still: few moves a tick,
    /// scattered among touching boxes, where the tree searches leaf by leaf.
    Crowd,
    /// 3000 colliders scattered as above in a smaller box, all moving: most ticks change
    /// more than an eighth of the fat boxes, and the tree refits itself as tasks on the
    /// pool.
    Swarm,
}

/// `scene` run for 90 ticks (40 for the swarm), with the parallel stages on from
/// `parallel_from` moved colliders; returns the log.
fn run<V: Dim>(parallel_from: Option<usize>, scene: Scene) -> Log {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins((
            AabbTreePlugin::<V>::default(),
            VelocityPlugin::<V>::default(),
        ))
        .insert_resource(CollisionConfig {
            parallel_pairs_from: parallel_from,
            ..default()
        })
        .insert_resource(Time::<Fixed>::from_hz(60.0))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .init_resource::<Log>()
        .add_systems(
            FixedPostUpdate,
            collect::<V>.after(CollisionSystems::Events),
        );
    let mut rng = Rng::new(2024);
    match scene {
        Scene::Scattered => spawn_scattered::<V>(&mut app, &mut rng, 600, 40.0),
        Scene::Crowd => spawn_crowd::<V>(&mut app, &mut rng),
        Scene::Swarm => spawn_scattered::<V>(&mut app, &mut rng, 3000, 30.0),
    }
    let ticks = if matches!(scene, Scene::Swarm) {
        40
    } else {
        90
    };
    for _ in 0..ticks {
        app.update();
    }
    let stats = app.world().resource::<AabbTree<V>>().tree_stats();
    let mut log = app.world_mut().remove_resource::<Log>().unwrap_or_default();
    log.leaf_searches = stats.leaf_searches;
    log.parallel_refits = stats.parallel_refits;
    log
}

/// `count` colliders at random in a box of half side `side`, one in ten fast.
fn spawn_scattered<V: Dim>(app: &mut App, rng: &mut Rng, count: usize, side: f32) {
    let point = |rng: &mut Rng| {
        Vec3::new(
            rng.range(-side, side),
            rng.range(-side, side),
            if V::DIM == 3 {
                rng.range(-side, side)
            } else {
                0.0
            },
        )
    };
    for k in 0..count {
        let at = point(rng);
        let speed = if k % 10 == 0 { 300.0 } else { 8.0 };
        let dir = point(rng).normalize_or(Vec3::X) * speed;
        let velocity = Velocity(V::truncate_from_3d(dir));
        let t = Transform::from_translation(at);
        if k % 3 == 0 {
            app.world_mut()
                .spawn((t, BoundingSphere::<V>::new(rng.range(0.3, 1.5)), velocity));
        } else {
            let half = V::truncate_from_3d(Vec3::new(
                rng.range(0.2, 1.5),
                rng.range(0.2, 1.5),
                rng.range(0.2, 1.5),
            ));
            app.world_mut().spawn((t, Aabb::new(half), velocity));
        }
    }
}

fn spawn_crowd<V: Dim>(app: &mut App, rng: &mut Rng) {
    let per_row = if V::DIM == 2 { 24 } else { 8 };
    let n = per_row * per_row * if V::DIM == 2 { 1 } else { per_row };
    for k in 0..n {
        let cell = [
            k % per_row,
            (k / per_row) % per_row,
            k / (per_row * per_row),
        ];
        let t = Transform::from_translation(Vec3::from_array(cell.map(|c| c as f32)));
        let collider = Aabb::new(V::splat(0.5));
        if k % 16 == 0 {
            let dir = Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), 0.3);
            let velocity = Velocity(V::truncate_from_3d(dir.normalize_or(Vec3::X) * 1.5));
            app.world_mut().spawn((t, collider, velocity));
        } else {
            app.world_mut().spawn((t, collider));
        }
    }
}

/// `scene` run serially and with the pair search on the pool from the first moved
/// collider: the pool's threads and the two logs. The serial run must have more than
/// `min_events` events to compare.
fn both_ways<V: Dim>(scene: Scene, min_events: usize) -> (usize, Log, Log) {
    // Several compute threads even on a one-core machine (the pool is process-wide; each
    // test runs in a process of its own). Without Bevy's
    // `multi_threaded` feature (it comes with `--all-features`, through `examples`) the
    // pool has one thread, and the plugin must fall back to the serial walk.
    ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(4).build());
    let threads = ComputeTaskPool::get().thread_num();
    let serial = run::<V>(None, scene);
    let parallel = run::<V>(Some(0), scene);
    assert!(
        serial.lines.len() > min_events,
        "too few events to compare: {}",
        serial.lines.len()
    );
    (threads, serial, parallel)
}

fn parallel_matches_serial<V: Dim>() {
    let (threads, serial, parallel) = both_ways::<V>(Scene::Scattered, 100);
    assert_eq!(serial.parallel_tasks(), 0);
    if threads > 1 {
        assert!(parallel.parallel_tasks() > 0, "the parallel walk never ran");
        assert_eq!(parallel.serial_ticks(), 0);
    } else {
        assert_eq!(parallel.parallel_tasks(), 0, "a one-thread pool ran tasks");
    }
    assert_eq!(serial.lines, parallel.lines);
    // Not only the messages (sorted by pair): the touching pairs come in the same order.
    assert!(serial.touching.iter().any(|t| t.len() > 1));
    assert_eq!(serial.touching, parallel.touching);
    // A threshold above the moves of every tick keeps the walk serial.
    let high = run::<V>(Some(1_000_000), Scene::Scattered);
    assert_eq!(high.parallel_tasks(), 0);
    assert_eq!(serial.lines, high.lines);
    // Thresholds at the most moves of a tick and one above: the walk is parallel exactly
    // on the ticks that moved at least that many colliders (the moves do not depend on
    // the walk).
    let most = serial.ticks.iter().map(|&(m, _)| m).max().unwrap_or(0);
    assert!(most > 0);
    for from in [most, most + 1] {
        let log = run::<V>(Some(from), Scene::Scattered);
        assert_eq!(serial.lines, log.lines);
        assert_eq!(log.ticks.len(), serial.ticks.len());
        for (tick, (&(m, tasks), &(serial_moved, _))) in
            log.ticks.iter().zip(&serial.ticks).enumerate()
        {
            assert_eq!(m, serial_moved, "tick {tick}: moves differ");
            assert_eq!(
                tasks > 0,
                threads > 1 && m >= from,
                "tick {tick}: {m} moved, threshold {from}, {tasks} tasks"
            );
        }
    }
}

#[test]
fn parallel_matches_serial_2d() {
    let name = test_name(module_path!(), "parallel_matches_serial_2d");
    alone(&name, &[], parallel_matches_serial::<Vec2>);
}

#[test]
fn parallel_matches_serial_3d() {
    let name = test_name(module_path!(), "parallel_matches_serial_3d");
    alone(&name, &[], parallel_matches_serial::<Vec3>);
}

/// In a packed crowd with few moves a tick the tree searches leaf by leaf, serially and
/// in the pool's tasks (slices of the moved leaves): the same messages and touching pairs
/// both ways.
fn crowd_parallel_matches_serial<V: Dim>() {
    let (threads, serial, parallel) = both_ways::<V>(Scene::Crowd, 50);
    assert!(
        serial.leaf_searches > 0,
        "the serial runs never searched leaf by leaf"
    );
    assert!(
        parallel.leaf_searches > 0,
        "the parallel runs never searched leaf by leaf"
    );
    if threads > 1 {
        assert!(
            parallel.parallel_tasks() > 0,
            "the parallel search never ran"
        );
    }
    assert_eq!(serial.lines, parallel.lines);
    assert_eq!(serial.touching, parallel.touching);
}

#[test]
fn crowd_parallel_matches_serial_2d() {
    let name = test_name(module_path!(), "crowd_parallel_matches_serial_2d");
    alone(&name, &[], crowd_parallel_matches_serial::<Vec2>);
}

#[test]
fn crowd_parallel_matches_serial_3d() {
    let name = test_name(module_path!(), "crowd_parallel_matches_serial_3d");
    alone(&name, &[], crowd_parallel_matches_serial::<Vec3>);
}

/// In a swarm where most ticks change more than an eighth of the fat boxes, the pool
/// refits the tree as tasks (as well as walking it): the same messages and touching
/// pairs as the serial run.
fn swarm_parallel_matches_serial<V: Dim>() {
    let (threads, serial, parallel) = both_ways::<V>(Scene::Swarm, 100);
    assert_eq!(serial.parallel_refits, 0);
    if threads > 1 {
        assert!(parallel.parallel_refits > 0, "the parallel refit never ran");
        assert!(parallel.parallel_tasks() > 0, "the parallel walk never ran");
    } else {
        assert_eq!(parallel.parallel_refits, 0, "a one-thread pool ran tasks");
    }
    assert_eq!(serial.lines, parallel.lines);
    assert_eq!(serial.touching, parallel.touching);
}

#[test]
fn swarm_parallel_matches_serial_2d() {
    let name = test_name(module_path!(), "swarm_parallel_matches_serial_2d");
    alone(&name, &[], swarm_parallel_matches_serial::<Vec2>);
}

#[test]
fn swarm_parallel_matches_serial_3d() {
    let name = test_name(module_path!(), "swarm_parallel_matches_serial_3d");
    alone(&name, &[], swarm_parallel_matches_serial::<Vec3>);
}
