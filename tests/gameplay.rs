//! The gameplay API: `CollidingEntities` against the events and a brute-force oracle,
//! the length unit, and the dimension modules (no turbofish), 2D and 3D.
#![cfg(feature = "plugin")]

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::Vector;
use bevy_aabb_tree::prelude::*;

#[allow(dead_code)]
#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

type Pair = (Entity, Entity);

fn key(a: Entity, b: Entity) -> Pair {
    if a < b { (a, b) } else { (b, a) }
}

/// Every event, in order: `(tick, pair, started)`.
#[derive(Resource, Default)]
struct Log {
    tick: u32,
    events: Vec<(u32, Pair, bool)>,
}

fn record(
    mut log: ResMut<Log>,
    mut started: MessageReader<CollisionStarted>,
    mut ended: MessageReader<CollisionEnded>,
) {
    log.tick += 1;
    let tick = log.tick;
    for s in started.read() {
        log.events.push((tick, key(s.entity, s.other), true));
    }
    for e in ended.read() {
        log.events.push((tick, key(e.entity, e.other), false));
    }
}

fn app<V>(config: CollisionConfig) -> App
where
    V: Vector
        + bevy::reflect::FromReflect
        + bevy::reflect::TypePath
        + bevy::reflect::GetTypeRegistration
        + bevy::reflect::Typed,
{
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins(AabbTreePlugin::<V>::new(Update))
        .insert_resource(config)
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .init_resource::<Log>()
        .add_systems(Update, record.after(CollisionSystems::Events));
    app
}

/// Boxes walking at random, a third of them with `CollidingEntities` from the start and
/// more given one later (while touching). After every tick each set equals the partners
/// the events imply and the pairs a brute-force test of the boxes finds.
fn colliding_entities<V>(seed: u64)
where
    V: Vector
        + bevy::reflect::FromReflect
        + bevy::reflect::TypePath
        + bevy::reflect::GetTypeRegistration
        + bevy::reflect::Typed,
{
    let mut rng = Rng::new(seed);
    let mut app = app::<V>(CollisionConfig::default());
    let n = 30;
    let mut at: Vec<Vec3> = (0..n)
        .map(|_| {
            Vec3::new(
                rng.range(-4.0, 4.0),
                rng.range(-4.0, 4.0),
                rng.range(-4.0, 4.0),
            )
        })
        .collect();
    let half: Vec<Vec3> = (0..n).map(|_| Vec3::splat(rng.range(0.3, 0.9))).collect();
    let entities: Vec<Entity> = (0..n)
        .map(|i| {
            let mut e = app.world_mut().spawn((
                Transform::from_translation(at[i]),
                Aabb::<V>::new(V::truncate_from_3d(half[i])),
            ));
            if i % 3 == 0 {
                e.insert(CollidingEntities::default());
            }
            e.id()
        })
        .collect();
    let mut implied: BTreeMap<Entity, BTreeSet<Entity>> = BTreeMap::new();
    let mut busy = 0;
    for tick in 0..200 {
        for (i, &e) in entities.iter().enumerate() {
            at[i] = (at[i]
                + Vec3::new(
                    rng.range(-0.2, 0.2),
                    rng.range(-0.2, 0.2),
                    rng.range(-0.2, 0.2),
                ))
            .clamp(Vec3::splat(-4.0), Vec3::splat(4.0));
            app.world_mut()
                .entity_mut(e)
                .insert(Transform::from_translation(at[i]));
        }
        if tick == 100 {
            for &e in entities.iter().skip(1).step_by(3) {
                app.world_mut()
                    .entity_mut(e)
                    .insert(CollidingEntities::default());
            }
        }
        app.update();
        let log = app.world().resource::<Log>();
        for &(t, (a, b), started) in &log.events {
            if t != log.tick {
                continue;
            }
            for (x, y) in [(a, b), (b, a)] {
                let set = implied.entry(x).or_default();
                if started {
                    assert!(set.insert(y));
                } else {
                    assert!(set.remove(&y));
                }
            }
        }
        for (i, &e) in entities.iter().enumerate() {
            let brute: BTreeSet<Entity> = (0..n)
                .filter(|&j| j != i)
                .filter(|&j| {
                    let d = V::truncate_from_3d(at[i] - at[j]).extend_to_3d().abs();
                    let reach = V::truncate_from_3d(half[i] + half[j]).extend_to_3d();
                    d.x <= reach.x && d.y <= reach.y && d.z <= reach.z
                })
                .map(|j| entities[j])
                .collect();
            let from_events = implied.get(&e).cloned().unwrap_or_default();
            assert_eq!(
                from_events, brute,
                "seed {seed}, tick {tick}, entity {i}: events"
            );
            if let Some(contacts) = app.world().get::<CollidingEntities>(e) {
                let set: BTreeSet<Entity> = contacts.iter().collect();
                assert_eq!(set.len(), contacts.len());
                assert_eq!(
                    set, brute,
                    "seed {seed}, tick {tick}, entity {i}: CollidingEntities"
                );
                busy += usize::from(!set.is_empty());
            }
        }
    }
    assert!(busy > 200, "too few contacts to test: {busy}");
}

#[test]
fn colliding_entities_2d() {
    for seed in 0..3 {
        colliding_entities::<Vec2>(seed);
    }
}

#[test]
fn colliding_entities_3d() {
    for seed in 0..3 {
        colliding_entities::<Vec3>(seed);
    }
}

/// The same scene in metres and in pixels (100 to the metre, `length_unit: 100.0`): the
/// same events in the same ticks, and fat boxes 100 times larger.
fn length_unit<V>()
where
    V: Vector
        + bevy::reflect::FromReflect
        + bevy::reflect::TypePath
        + bevy::reflect::GetTypeRegistration
        + bevy::reflect::Typed,
{
    let mut logs = Vec::new();
    let mut fat_sizes = Vec::new();
    for scale in [1.0f32, 100.0] {
        let mut app = app::<V>(CollisionConfig {
            length_unit: scale,
            ..default()
        });
        let mut rng = Rng::new(5);
        let mut movers = Vec::new();
        for _ in 0..40 {
            let p = Vec3::new(
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
            );
            let v = Vec3::new(
                rng.range(-2.0, 2.0),
                rng.range(-2.0, 2.0),
                rng.range(-2.0, 2.0),
            );
            let e = app
                .world_mut()
                .spawn((
                    Transform::from_translation(p * scale),
                    Aabb::<V>::new(V::splat(0.4 * scale)),
                    Velocity(V::truncate_from_3d(v * scale)),
                ))
                .id();
            movers.push((e, p, v));
        }
        for tick in 0..120 {
            for &(e, p, v) in &movers {
                let at = (p + v * (tick as f32 / 60.0)) * scale;
                app.world_mut()
                    .entity_mut(e)
                    .insert(Transform::from_translation(at));
            }
            app.update();
        }
        let tracked = app.world().get::<TrackedCollider<V>>(movers[0].0).unwrap();
        let state = app.world().resource::<AabbTree<V>>();
        let fat = tracked.fat_aabb(state).unwrap();
        fat_sizes.push((fat.half_extents() - tracked.world_aabb().half_extents()).extend_to_3d());
        let log = app.world().resource::<Log>();
        let events: Vec<(u32, usize, usize, bool)> = log
            .events
            .iter()
            .map(|&(t, (a, b), s)| {
                let i = movers.iter().position(|m| m.0 == a).unwrap();
                let j = movers.iter().position(|m| m.0 == b).unwrap();
                (t, i.min(j), i.max(j), s)
            })
            .collect();
        logs.push(events);
    }
    assert!(logs[0].len() > 10, "too few events: {}", logs[0].len());
    assert_eq!(logs[0], logs[1]);
    // The fat box's room beyond the tight box (margin and prediction) scales too.
    let ratio = fat_sizes[1].max_element() / fat_sizes[0].max_element();
    assert!((ratio - 100.0).abs() < 0.5, "fat room ratio {ratio}");
}

#[test]
fn length_unit_2d() {
    length_unit::<Vec2>();
}

#[test]
fn length_unit_3d() {
    length_unit::<Vec3>();
}

/// A 2D and a 3D setup written with the dimension modules: no `::<Vec2>` anywhere.
#[test]
fn dimension_modules_need_no_turbofish() {
    use bevy_aabb_tree::d2;
    use bevy_aabb_tree::d3;

    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins((
            d2::AabbTreePlugin::new(Update),
            d3::AabbTreePlugin::new(Update),
        ));
    let a = app
        .world_mut()
        .spawn((
            Transform::default(),
            d2::Aabb::new(Vec2::splat(0.5)),
            d2::Velocity(Vec2::X),
        ))
        .id();
    let b = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.8, 0.0, 0.0),
            d2::BoundingSphere::new(0.5),
        ))
        .id();
    let c = app
        .world_mut()
        .spawn((Transform::default(), d3::Aabb::new(Vec3::splat(0.5))))
        .id();
    app.update();
    let tree2 = app.world().resource::<d2::AabbTree>();
    assert!(tree2.is_touching(a, b));
    assert_eq!(app.world().resource::<d3::AabbTree>().tree().len(), 1);
    let velocity: &d2::Velocity = app.world().get(a).unwrap();
    assert_eq!(velocity.0, Vec2::X);
    let mut state = bevy::ecs::system::SystemState::<d2::SpatialQuery>::new(app.world_mut());
    let query = state.get(app.world()).unwrap();
    let hits = query.point(Vec2::new(0.4, 0.0), &QueryFilter::default());
    assert_eq!(hits.len(), 2);
    assert!(
        app.world()
            .get::<d3::TrackedCollider>(c)
            .unwrap()
            .proxy()
            .is_some()
    );
}
