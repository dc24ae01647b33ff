//! The "ECS tick" scenario of `shared/benchmark-scenario.md`: this crate's plugin against
//! avian3d 0.7 configured for detection only, in one process, on the same scene.
//!
//! The 3D variant of `src/main.rs` (avian3d 0.7, `Collider::cuboid`, the 3D scene):
//! `cargo run --release --bin bench-ecs-3d -- [N] [fast|slow]` (defaults: 10000 fast).
//!
//! Both apps: `MinimalPlugins` + `TransformPlugin`, fixed 60 Hz, one fixed tick per
//! `app.update()` (`TimeUpdateStrategy::FixedTimesteps(1)`), N entities of the "uniform boxes"
//! 3D scene (`benches/support/scene.rs`) spawned in the same order, moved by the same generic
//! `FixedUpdate` system (`move_boxes`, which bounces them as `Scene::step` does) writing
//! `Transform`. Collision work runs in `FixedPostUpdate` in both.
//!
//! - Ours: `AabbTreePlugin::<Vec3>` with its defaults (swept tests on), `Aabb` half 0.5 and
//!   `Velocity` (which the mover also reads and bounces).
//! - avian3d: `PhysicsPlugins::default()`, `Gravity::ZERO`, every entity a
//!   `RigidBody::Kinematic` with `Collider::cuboid(1, 1, 1)`, `Sensor` (no constraints, no
//!   solver response) and `CollisionEventsEnabled`. Its `LinearVelocity` stays zero (the mover
//!   writes `Transform`, which avian syncs to `Position`), so avian does not move the bodies
//!   a second time. `NarrowPhaseConfig::contact_tolerance` is set to 0 so that "touching"
//!   means overlapping, as it does for us (avian's default 0.005 also counts boxes up to
//!   0.005 apart).
//!
//! Each app's ticks interleave (ours, avian, ours, ...), 30 warm-up ticks then 300 measured.
//! Printed: median ms of the whole `app.update()` and of the collision schedule alone (from a
//! timestamp before the first collision set to one after the last), events per tick (both read
//! their start/end messages), touching pairs, and the touching pair sets of the last tick
//! compared pair by pair.

#[path = "../../../benches/support/scene.rs"]
mod scene;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use avian3d::prelude::{
    Collider, CollisionEnd, CollisionEventsEnabled, CollisionStart, ContactGraph, Gravity,
    NarrowPhaseConfig, PhysicsPlugins, PhysicsSystems, RigidBody, Sensor,
};
use bevy::ecs::component::Mutable;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::prelude::{
    Aabb, AabbTree, AabbTreePlugin, CollisionEnded, CollisionStarted, CollisionSystems, Velocity,
};
use scene::Scene;

const WARMUP: usize = 30;
const TICKS: usize = 300;

/// The scene's region and step, for the mover.
#[derive(Resource, Clone, Copy)]
struct Region {
    side: f32,
    dt: f32,
}

/// The box's index in the scene (to compare pair sets across the two worlds).
#[derive(Component, Clone, Copy)]
struct Idx(u32);

/// avian's entities' velocity for the mover (not `LinearVelocity`: avian would integrate it).
#[derive(Component, Clone, Copy)]
struct MoveVelocity(Vec3);

/// A velocity the mover can read and bounce.
trait MoverVelocity: Component<Mutability = Mutable> {
    fn get(&self) -> Vec3;
    fn set(&mut self, v: Vec3);
}

impl MoverVelocity for Velocity<Vec3> {
    fn get(&self) -> Vec3 {
        self.0
    }
    fn set(&mut self, v: Vec3) {
        self.0 = v;
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
    let Region { side, dt } = *region;
    for (mut transform, mut velocity) in &mut q {
        let mut c = transform.translation;
        let mut v = velocity.get();
        let mut flipped = false;
        for k in 0..3 {
            c[k] += v[k] * dt;
            if c[k] < 0.0 {
                c[k] = 0.0;
                v[k] = v[k].abs();
                flipped = true;
            } else if c[k] > side {
                c[k] = side;
                v[k] = -v[k].abs();
                flipped = true;
            }
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

fn read_ours(
    mut probe: ResMut<Probe>,
    mut started: MessageReader<CollisionStarted>,
    mut ended: MessageReader<CollisionEnded>,
) {
    probe.events = started.read().count() + ended.read().count();
}

fn read_avian(
    mut probe: ResMut<Probe>,
    mut started: MessageReader<CollisionStart>,
    mut ended: MessageReader<CollisionEnd>,
) {
    probe.events = started.read().count() + ended.read().count();
}

fn base_app(scene: &Scene<3>) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(
            scene.dt,
        )))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
        .insert_resource(Region {
            side: scene.side,
            dt: scene.dt,
        })
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

fn ours_app(scene: &Scene<3>) -> App {
    let mut app = base_app(scene);
    app.add_plugins(AabbTreePlugin::<Vec3>::default())
        .add_systems(FixedUpdate, move_boxes::<Velocity<Vec3>>)
        .add_systems(
            FixedPostUpdate,
            (
                probe_begin.before(CollisionSystems::Prepare),
                (probe_end, read_ours)
                    .chain()
                    .after(CollisionSystems::Events),
            ),
        );
    let boxes: Vec<_> = (0..scene.len())
        .map(|i| {
            let [x, y, z] = scene.centers[i];
            (
                Transform::from_xyz(x, y, z),
                Aabb::new(Vec3::splat(scene.half)),
                Velocity(Vec3::from_array(scene.velocities[i])),
                Idx(i as u32),
            )
        })
        .collect();
    app.world_mut().spawn_batch(boxes);
    ready(app)
}

fn avian_app(scene: &Scene<3>) -> App {
    let mut app = base_app(scene);
    app.add_plugins(PhysicsPlugins::default())
        .insert_resource(Gravity(Vec3::ZERO))
        .insert_resource(NarrowPhaseConfig {
            contact_tolerance: 0.0,
            ..default()
        })
        .add_systems(FixedUpdate, move_boxes::<MoveVelocity>)
        .add_systems(
            FixedPostUpdate,
            (
                probe_begin.in_set(PhysicsSystems::First),
                (probe_end, read_avian).chain().in_set(PhysicsSystems::Last),
            ),
        );
    let size = 2.0 * scene.half;
    let boxes: Vec<_> = (0..scene.len())
        .map(|i| {
            let [x, y, z] = scene.centers[i];
            (
                Transform::from_xyz(x, y, z),
                RigidBody::Kinematic,
                Collider::cuboid(size, size, size),
                Sensor,
                CollisionEventsEnabled,
                MoveVelocity(Vec3::from_array(scene.velocities[i])),
                Idx(i as u32),
            )
        })
        .collect();
    app.world_mut().spawn_batch(boxes);
    ready(app)
}

fn key(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

fn ours_touching(app: &mut App) -> HashSet<(u32, u32)> {
    let world = app.world_mut();
    let pairs: Vec<(Entity, Entity)> = world
        .resource::<AabbTree<Vec3>>()
        .touching_pairs()
        .collect();
    let mut idx = world.query::<&Idx>();
    pairs
        .into_iter()
        .map(|(a, b)| key(idx.get(world, a).unwrap().0, idx.get(world, b).unwrap().0))
        .collect()
}

fn avian_touching(app: &mut App) -> HashSet<(u32, u32)> {
    let world = app.world_mut();
    let pairs: Vec<(Entity, Entity)> = {
        let graph = world.resource::<ContactGraph>();
        graph
            .iter_active_touching()
            .chain(graph.iter_sleeping_touching())
            .map(|p| (p.collider1, p.collider2))
            .collect()
    };
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

fn main() {
    let mut n = 10_000;
    let mut vs = Scene::<3>::FAST;
    let mut label = "fast";
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "fast" => (vs, label) = (Scene::<3>::FAST, "fast"),
            "slow" => (vs, label) = (Scene::<3>::SLOW, "slow"),
            other => {
                n = other
                    .replace('_', "")
                    .parse()
                    .expect("usage: bench-ecs-3d [N] [fast|slow]")
            }
        }
    }
    let scene = Scene::<3>::uniform(n, vs);
    println!(
        "ECS tick: {n} entities, 3D, {label}, {WARMUP} warm-up ticks, {TICKS} measured, {} threads",
        std::thread::available_parallelism().map_or(1, |p| p.get())
    );
    let mut ours = ours_app(&scene);
    let mut avian = avian_app(&scene);
    for _ in 0..WARMUP {
        ours.update();
        avian.update();
    }
    // Columns: update ms, collision ms, events, touching.
    let mut o: [Vec<f64>; 4] = Default::default();
    let mut a: [Vec<f64>; 4] = Default::default();
    let avian_touching_count = |app: &App| {
        let graph = app.world().resource::<ContactGraph>();
        (graph.iter_active_touching().count() + graph.iter_sleeping_touching().count()) as f64
    };
    for _ in 0..TICKS {
        let t = Instant::now();
        ours.update();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let probe = ours.world().resource::<Probe>();
        let touching = ours.world().resource::<AabbTree<Vec3>>().stats().touching as f64;
        for (c, x) in o
            .iter_mut()
            .zip([ms, probe.ms, probe.events as f64, touching])
        {
            c.push(x);
        }

        let t = Instant::now();
        avian.update();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let probe = avian.world().resource::<Probe>();
        let (pms, pev) = (probe.ms, probe.events as f64);
        let touching = avian_touching_count(&avian);
        for (c, x) in a.iter_mut().zip([ms, pms, pev, touching]) {
            c.push(x);
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (o_events, a_events) = (mean(&o[2]), mean(&a[2]));
    let [o_update, o_coll, _, o_touch] = &mut o;
    let [a_update, a_coll, _, a_touch] = &mut a;
    let (o_update, o_coll, o_touch) = (median(o_update), median(o_coll), median(o_touch));
    let (a_update, a_coll, a_touch) = (median(a_update), median(a_coll), median(a_touch));

    println!();
    println!("| median of {TICKS} ticks | ours | avian3d 0.7 | ours/avian |");
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

    let so = ours_touching(&mut ours);
    let sa = avian_touching(&mut avian);
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
}
