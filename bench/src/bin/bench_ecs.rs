//! The "ECS tick" comparison: this crate's plugin against avian 0.7 set up for collision
//! detection only, in one process, on the same scene, in 2D (avian2d) or 3D (avian3d).
//!
//! `cargo run --release -p bevy_aabb_tree_bench --features ecs --bin bench_ecs -- [2d|3d]
//! [N] [fast|slow]` (defaults: 2d, 10000, fast), or `scripts/bench_ecs.sh`.
//!
//! Both apps: `MinimalPlugins` + `TransformPlugin`, fixed 60 Hz, one fixed tick per
//! `app.update()` (`TimeUpdateStrategy::FixedTimesteps(1)`), N entities of the "uniform boxes"
//! scene (`benches/support/scene.rs`) spawned in the same order, moved by the same generic
//! `FixedUpdate` system (`move_boxes`, which bounces them as `Scene::step` does) writing
//! `Transform`. Collision work runs in `FixedPostUpdate` in both.
//!
//! - Ours: `AabbTreePlugin` with its defaults (swept tests on), `Aabb` half 0.5 and
//!   `Velocity` (which the mover also reads and bounces).
//! - avian: only the plugins that collision detection needs (the physics schedule and the
//!   solver's system sets that order it, the collider hierarchy, transforms and backend,
//!   the collider trees, the broad and narrow phases, and the sync of `Transform` to
//!   avian's positions); no solver, integrator, joints, islands and sleeping, mass
//!   properties, forces, spatial queries or interpolation. Every entity is a `RigidBody::Kinematic` (pairs of colliders without a
//!   body are static-static and never tested) with a box `Collider`, `Sensor` and
//!   `CollisionEventsEnabled`. The mover writes `Transform`, which avian syncs to `Position`.
//!   `NarrowPhaseConfig::contact_tolerance` is 0 so that "touching" means overlapping, as it
//!   does for us (avian's default 0.005 also counts boxes up to 0.005 apart).
//!
//! `--avian-default` gives avian its whole `PhysicsPlugins::default()` instead (zero
//! gravity, the same bodies), which is what a user who adds avian without trimming it runs.
//!
//! Ticks interleave and the order alternates (ours first on even ticks, avian first on odd
//! ones), so that neither app always runs with the other's data in cache: 30 warm-up ticks,
//! then 300 measured. Printed: median ms of the whole `app.update()` and of the collision
//! schedule alone (from a timestamp before the first collision set to one after the last),
//! events per tick (both read their start/end messages), touching pairs, and the touching
//! pair sets of the last tick compared pair by pair. The process exits with status 1 when
//! the two sets differ.

#[path = "../dim.rs"]
mod dim;
#[path = "../../../benches/support/scene.rs"]
mod scene;

use std::collections::HashSet;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use bevy::ecs::component::Mutable;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::prelude::{
    Aabb, AabbTree, AabbTreePlugin, CollisionEnded, CollisionStarted, CollisionSystems, Static,
    Velocity,
};
use dim::Dim;
use scene::{Scene, bounce_axis};

const WARMUP: usize = 30;
const TICKS: usize = 300;

/// The scene's region and step, for the mover.
#[derive(Resource, Clone, Copy)]
struct Region {
    side: f32,
    dt: f32,
    /// Axes that move: 2 or 3.
    dims: usize,
}

/// The box's index in the scene (to compare pair sets across the two worlds).
#[derive(Component, Clone, Copy)]
struct Idx(u32);

/// avian's entities' velocity for the mover (not `LinearVelocity`: avian would integrate it).
/// In 2D its `z` is 0.
#[derive(Component, Clone, Copy)]
struct MoveVelocity(Vec3);

/// A velocity the mover can read and bounce, as a `Vec3` (`z` = 0 in 2D).
trait MoverVelocity: Component<Mutability = Mutable> {
    fn get(&self) -> Vec3;
    fn set(&mut self, v: Vec3);
}

impl<V: Dim> MoverVelocity for Velocity<V> {
    fn get(&self) -> Vec3 {
        self.0.extend_to_3d()
    }
    fn set(&mut self, v: Vec3) {
        self.0 = V::truncate_from_3d(v);
    }
}

impl MoverVelocity for MoveVelocity {
    fn get(&self) -> Vec3 {
        self.0
    }
    fn set(&mut self, v: Vec3) {
        self.0 = v;
    }
}

/// Moves every entity by its velocity and bounces it off the walls, as `Scene::step` does.
fn move_boxes<C: MoverVelocity>(region: Res<Region>, mut q: Query<(&mut Transform, &mut C)>) {
    let Region { side, dt, dims } = *region;
    for (mut transform, mut velocity) in &mut q {
        let mut c = transform.translation;
        let mut v = velocity.get();
        let mut flipped = false;
        for k in 0..dims {
            flipped |= bounce_axis(&mut c[k], &mut v[k], dt, 0.0, side);
        }
        transform.translation = c;
        if flipped {
            velocity.set(v);
        }
    }
}

/// Milliseconds of the collision schedule of the last tick, and events read.
#[derive(Resource, Default)]
struct Probe {
    begin: Option<Instant>,
    ms: f64,
    events: usize,
}

fn probe_begin(mut probe: ResMut<Probe>) {
    probe.begin = Some(Instant::now());
}

fn probe_end(mut probe: ResMut<Probe>) {
    if let Some(b) = probe.begin.take() {
        probe.ms = b.elapsed().as_secs_f64() * 1e3;
    }
}

fn read_ours<V: Dim>(
    mut probe: ResMut<Probe>,
    mut started: MessageReader<CollisionStarted<V>>,
    mut ended: MessageReader<CollisionEnded>,
) {
    probe.events = started.read().count() + ended.read().count();
}

/// A scene point as a `Vec3` (`z` = 0 in 2D).
fn vec3<const D: usize>(a: [f32; D]) -> Vec3 {
    let mut v = Vec3::ZERO;
    for (k, x) in a.into_iter().enumerate() {
        v[k] = x;
    }
    v
}

/// The avian app of a dimension: avian2d or avian3d.
trait Peer {
    /// The peer's name in the printed table.
    const NAME: &'static str;
    /// Adds avian's detection plugins (or, with `default_plugins`, its whole
    /// `PhysicsPlugins::default()` with zero gravity) and configuration, the probe and the
    /// event reader.
    fn add_physics(app: &mut App, default_plugins: bool);
    /// Spawns one box: center, velocity, side, index.
    fn spawn_batch(world: &mut World, boxes: Vec<(Vec3, Vec3, f32, u32)>);
    /// Spawns unit tiles (center, index) as colliders without a rigid body (static),
    /// children of `map`.
    fn spawn_static_batch(world: &mut World, map: Entity, tiles: Vec<(Vec3, u32)>);
    /// The touching pairs (colliders) of avian's contact graph.
    fn touching(world: &World) -> Vec<(Entity, Entity)>;
}

/// Implements [`Peer`] for one avian crate; `$collider` makes the box of a side.
macro_rules! avian_peer {
    ($peer:ident, $avian:ident, $name:literal, |$size:ident| $collider:expr) => {
        /// avian, as lean as a detection-only user makes it.
        struct $peer;

        impl Peer for $peer {
            const NAME: &'static str = $name;

            fn add_physics(app: &mut App, default_plugins: bool) {
                use $avian::prelude::*;

                fn read_avian(
                    mut probe: ResMut<Probe>,
                    mut started: MessageReader<CollisionStart>,
                    mut ended: MessageReader<CollisionEnd>,
                ) {
                    probe.events = started.read().count() + ended.read().count();
                }

                if default_plugins {
                    app.add_plugins(PhysicsPlugins::default())
                        .insert_resource(Gravity::ZERO);
                } else {
                    app.add_plugins((
                        PhysicsSchedulePlugin::default(),
                        // Only the solver's system sets, which place the end of the collider
                        // trees' optimization in the step; its substep schedule stays empty.
                        SolverSchedulePlugin,
                        ColliderHierarchyPlugin,
                        ColliderTransformPlugin::default(),
                        ColliderBackendPlugin::<Collider>::default(),
                        ColliderTreePlugin::<Collider>::default(),
                        BroadPhaseCorePlugin,
                        BvhBroadPhasePlugin::<()>::default(),
                        NarrowPhasePlugin::<Collider>::default(),
                        PhysicsTransformPlugin::default(),
                    ));
                }
                app.insert_resource(NarrowPhaseConfig {
                    contact_tolerance: 0.0,
                    ..default()
                })
                .add_systems(
                    FixedPostUpdate,
                    (
                        probe_begin.in_set(PhysicsSystems::First),
                        (probe_end, read_avian).chain().in_set(PhysicsSystems::Last),
                    ),
                );
            }

            fn spawn_batch(world: &mut World, boxes: Vec<(Vec3, Vec3, f32, u32)>) {
                use $avian::prelude::*;
                world.spawn_batch(boxes.into_iter().map(|(c, v, $size, i)| {
                    (
                        Transform::from_translation(c),
                        RigidBody::Kinematic,
                        $collider,
                        Sensor,
                        CollisionEventsEnabled,
                        MoveVelocity(v),
                        Idx(i),
                    )
                }));
            }

            fn spawn_static_batch(world: &mut World, map: Entity, tiles: Vec<(Vec3, u32)>) {
                use $avian::prelude::*;
                world.spawn_batch(tiles.into_iter().map(|(c, i)| {
                    let $size = 1.0;
                    (
                        Transform::from_translation(c),
                        $collider,
                        ChildOf(map),
                        Idx(i),
                    )
                }));
            }

            fn touching(world: &World) -> Vec<(Entity, Entity)> {
                let graph = world.resource::<$avian::prelude::ContactGraph>();
                graph
                    .iter_active_touching()
                    .chain(graph.iter_sleeping_touching())
                    .map(|p| (p.collider1, p.collider2))
                    .collect()
            }
        }
    };
}

avian_peer!(Avian2d, avian2d, "avian2d 0.7", |size| Collider::rectangle(
    size, size
));
avian_peer!(Avian3d, avian3d, "avian3d 0.7", |size| Collider::cuboid(
    size, size, size
));

fn base_app<const D: usize>(scene: &Scene<D>) -> App {
    app_with(Region {
        side: scene.side,
        dt: scene.dt,
        dims: D,
    })
}

/// A headless app ticking the fixed schedule once per update at the region's step.
fn app_with(region: Region) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(
            region.dt,
        )))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
        .insert_resource(region)
        .init_resource::<Probe>();
    app
}

/// Runs the plugins' `finish` and `cleanup` (which `App::run` does and a bare `update` loop
/// does not; avian registers resources in `finish`).
fn ready(mut app: App) -> App {
    app.finish();
    app.cleanup();
    app
}

fn ours_app<V: Dim, const D: usize>(scene: &Scene<D>) -> App {
    let mut app = base_app(scene);
    app.add_plugins(AabbTreePlugin::<V>::default())
        .add_systems(FixedUpdate, move_boxes::<Velocity<V>>)
        .add_systems(
            FixedPostUpdate,
            (
                probe_begin.before(CollisionSystems::Prepare),
                (probe_end, read_ours::<V>)
                    .chain()
                    .after(CollisionSystems::Events),
            ),
        );
    let boxes: Vec<_> = (0..scene.len())
        .map(|i| {
            (
                Transform::from_translation(vec3(scene.centers[i])),
                Aabb::new(V::truncate_from_3d(Vec3::splat(scene.half))),
                Velocity(V::truncate_from_3d(vec3(scene.velocities[i]))),
                Idx(i as u32),
            )
        })
        .collect();
    app.world_mut().spawn_batch(boxes);
    ready(app)
}

fn avian_app<P: Peer, const D: usize>(scene: &Scene<D>, default_plugins: bool) -> App {
    let mut app = base_app(scene);
    P::add_physics(&mut app, default_plugins);
    app.add_systems(FixedUpdate, move_boxes::<MoveVelocity>);
    let size = 2.0 * scene.half;
    let boxes = (0..scene.len())
        .map(|i| {
            (
                vec3(scene.centers[i]),
                vec3(scene.velocities[i]),
                size,
                i as u32,
            )
        })
        .collect();
    P::spawn_batch(app.world_mut(), boxes);
    ready(app)
}

fn key(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// Entity pairs as pairs of scene indices, smaller first.
fn by_index(world: &mut World, pairs: Vec<(Entity, Entity)>) -> HashSet<(u32, u32)> {
    let mut idx = world.query::<&Idx>();
    pairs
        .into_iter()
        .map(|(a, b)| key(idx.get(world, a).unwrap().0, idx.get(world, b).unwrap().0))
        .collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One measured tick of an app: update ms, collision ms, events, touching pairs.
fn tick(app: &mut App, touching: impl Fn(&World) -> usize) -> [f64; 4] {
    let t = Instant::now();
    app.update();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let probe = app.world().resource::<Probe>();
    [
        ms,
        probe.ms,
        probe.events as f64,
        touching(app.world()) as f64,
    ]
}

/// Runs the comparison on one scene; returns whether the last tick's pair sets agree.
fn run<V: Dim, P: Peer, const D: usize>(scene: &Scene<D>, default_plugins: bool) -> bool {
    let ours = ours_app::<V, D>(scene);
    let avian = avian_app::<P, D>(scene, default_plugins);
    compare::<V, P>(ours, avian)
}

/// The tile-map level: a `side × side` grid of touching unit tiles (half extents 0.5),
/// children of one map entity, and `movers` boxes (half extents 0.3) walking over it in
/// the grid's plane. Ours: tiles with `Static`; avian: tiles are colliders without a
/// rigid body (static), movers kinematic sensors as in the uniform scene.
fn run_tilemap<V: Dim, P: Peer>(side: usize, movers: usize, default_plugins: bool) -> bool {
    let mut seed = 0x9E37_79B9u32;
    let mut r = move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / 16_777_216.0
    };
    let extent = (side - 1) as f32;
    let walkers: Vec<(Vec3, Vec3)> = (0..movers)
        .map(|_| {
            let c = Vec3::new(r() * extent, r() * extent, 0.0);
            let angle = r() * std::f32::consts::TAU;
            (c, Vec3::new(angle.cos(), angle.sin(), 0.0) * 3.0)
        })
        .collect();
    let tiles: Vec<Vec3> = (0..side * side)
        .map(|i| Vec3::new((i / side) as f32, (i % side) as f32, 0.0))
        .collect();
    // The movers walk in the grid's plane (x and y), over the tiles.
    let region = Region {
        side: extent,
        dt: 1.0 / 60.0,
        dims: 2,
    };
    let index = |i: usize| Idx((movers + i) as u32);

    let mut ours = app_with(region);
    let map = ours.world_mut().spawn(Transform::default()).id();
    ours.add_plugins(AabbTreePlugin::<V>::default())
        .add_systems(FixedUpdate, move_boxes::<Velocity<V>>)
        .add_systems(
            FixedPostUpdate,
            (
                probe_begin.before(CollisionSystems::Prepare),
                (probe_end, read_ours::<V>)
                    .chain()
                    .after(CollisionSystems::Events),
            ),
        );
    let world = ours.world_mut();
    world.spawn_batch(walkers.iter().enumerate().map(|(i, &(c, v))| {
        (
            Transform::from_translation(c),
            Aabb::new(V::truncate_from_3d(Vec3::splat(0.3))),
            Velocity(V::truncate_from_3d(v)),
            Idx(i as u32),
        )
    }));
    world.spawn_batch(tiles.iter().enumerate().map(|(i, &c)| {
        (
            Transform::from_translation(c),
            Aabb::new(V::truncate_from_3d(Vec3::splat(0.5))),
            Static,
            ChildOf(map),
            index(i),
        )
    }));
    let ours = ready(ours);

    let mut avian = app_with(region);
    let map = avian.world_mut().spawn(Transform::default()).id();
    P::add_physics(&mut avian, default_plugins);
    avian.add_systems(FixedUpdate, move_boxes::<MoveVelocity>);
    let world = avian.world_mut();
    P::spawn_batch(
        world,
        walkers
            .iter()
            .enumerate()
            .map(|(i, &(c, v))| (c, v, 0.6, i as u32))
            .collect(),
    );
    P::spawn_static_batch(
        world,
        map,
        tiles
            .iter()
            .enumerate()
            .map(|(i, &c)| (c, index(i).0))
            .collect(),
    );
    let avian = ready(avian);
    compare::<V, P>(ours, avian)
}

/// Ticks the two apps in turn (the order alternating), prints the table and returns
/// whether the last tick's touching pairs agree.
fn compare<V: Dim, P: Peer>(mut ours: App, mut avian: App) -> bool {
    let ours_touching = |w: &World| w.resource::<AabbTree<V>>().stats().touching;
    let avian_touching = |w: &World| P::touching(w).len();
    for _ in 0..WARMUP {
        ours.update();
        avian.update();
    }
    // Columns: update ms, collision ms, events, touching.
    let mut o: [Vec<f64>; 4] = Default::default();
    let mut a: [Vec<f64>; 4] = Default::default();
    let push = |cols: &mut [Vec<f64>; 4], row: [f64; 4]| {
        for (c, x) in cols.iter_mut().zip(row) {
            c.push(x);
        }
    };
    for t in 0..TICKS {
        if t % 2 == 0 {
            push(&mut o, tick(&mut ours, ours_touching));
            push(&mut a, tick(&mut avian, avian_touching));
        } else {
            push(&mut a, tick(&mut avian, avian_touching));
            push(&mut o, tick(&mut ours, ours_touching));
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (o_events, a_events) = (mean(&o[2]), mean(&a[2]));
    let [o_update, o_coll, _, o_touch] = &mut o;
    let [a_update, a_coll, _, a_touch] = &mut a;
    let (o_update, o_coll, o_touch) = (median(o_update), median(o_coll), median(o_touch));
    let (a_update, a_coll, a_touch) = (median(a_update), median(a_coll), median(a_touch));

    println!();
    println!(
        "| median of {TICKS} ticks | ours | {} | ours/avian |",
        P::NAME
    );
    println!("|---|---|---|---|");
    println!(
        "| app.update() ms | {o_update:.3} | {a_update:.3} | {:.3} |",
        o_update / a_update
    );
    println!(
        "| collision schedule ms | {o_coll:.3} | {a_coll:.3} | {:.3} |",
        o_coll / a_coll
    );
    println!("| events/tick (mean, start+end) | {o_events:.1} | {a_events:.1} | |");
    println!("| touching pairs | {o_touch:.0} | {a_touch:.0} | |");
    println!();

    let pairs = ours
        .world()
        .resource::<AabbTree<V>>()
        .touching_pairs()
        .collect();
    let so = by_index(ours.world_mut(), pairs);
    let pairs = P::touching(avian.world());
    let sa = by_index(avian.world_mut(), pairs);
    let both = so.intersection(&sa).count();
    println!(
        "last tick touching pairs: ours {}, avian {}, in both {}, only ours {}, only avian {}",
        so.len(),
        sa.len(),
        both,
        so.len() - both,
        sa.len() - both
    );
    println!("ratio={:.3}", o_update / a_update);
    println!("ratio_collision_schedule={:.3}", o_coll / a_coll);
    so == sa
}

const USAGE: &str =
    "usage: bench_ecs [2d|3d] [N] [fast|slow] [--avian-default] [--tilemap SIDE] (1,000 movers)";

fn main() -> ExitCode {
    let mut three_d = false;
    let mut n = 10_000;
    let mut fast = true;
    let mut default_plugins = false;
    let mut tilemap = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--tilemap" => match args.next().and_then(|s| s.parse().ok()) {
                Some(side) => tilemap = Some(side),
                None => {
                    eprintln!("{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "2d" => three_d = false,
            "3d" => three_d = true,
            "fast" => fast = true,
            "slow" => fast = false,
            "--avian-default" => default_plugins = true,
            other => match other.replace('_', "").parse() {
                Ok(v) => n = v,
                Err(_) => {
                    eprintln!("{USAGE}");
                    return ExitCode::from(2);
                }
            },
        }
    }
    println!(
        "ECS tick: {n} entities, {}, {}, {WARMUP} warm-up ticks, {TICKS} measured, {} threads, \
         avian {}",
        if three_d { "3D" } else { "2D" },
        if fast { "fast" } else { "slow" },
        std::thread::available_parallelism().map_or(1, |p| p.get()),
        if default_plugins {
            "PhysicsPlugins::default()"
        } else {
            "detection plugins only"
        }
    );
    let same = if let Some(side) = tilemap {
        println!("tile-map level: {side} x {side} Static tiles under a map entity, 1,000 movers");
        if three_d {
            run_tilemap::<Vec3, Avian3d>(side, 1000, default_plugins)
        } else {
            run_tilemap::<Vec2, Avian2d>(side, 1000, default_plugins)
        }
    } else if three_d {
        let vs = if fast {
            Scene::<3>::FAST
        } else {
            Scene::<3>::SLOW
        };
        run::<Vec3, Avian3d, 3>(&Scene::<3>::uniform(n, vs), default_plugins)
    } else {
        let vs = if fast {
            Scene::<2>::FAST
        } else {
            Scene::<2>::SLOW
        };
        run::<Vec2, Avian2d, 2>(&Scene::<2>::uniform(n, vs), default_plugins)
    };
    if same {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: the two apps' touching pairs differ");
        ExitCode::FAILURE
    }
}
