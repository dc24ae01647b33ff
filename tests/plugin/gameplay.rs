//! The gameplay API: `CollidingEntities` against the events and a brute-force oracle,
//! the length unit, and the dimension modules (no turbofish), 2D and 3D.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::Vector;
use bevy_aabb_tree::prelude::*;

use crate::harness::SpawnInApp;
use crate::kit::dim::Dim;

use crate::kit::rng;
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

/// Reads the combined stream, in the order the contacts started and ended.
fn record<V: Vector>(mut log: ResMut<Log>, mut messages: MessageReader<CollisionMessage<V>>) {
    log.tick += 1;
    let tick = log.tick;
    for m in messages.read() {
        log.events.push(match m {
            CollisionMessage::Started(s) => (tick, key(s.entity, s.other), true),
            CollisionMessage::Ended(e) => (tick, key(e.entity, e.other), false),
        });
    }
}

fn app<V: Dim>(config: CollisionConfig) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins(AabbTreePlugin::<V>::new(Update))
        .insert_resource(config)
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .init_resource::<Log>()
        .add_systems(Update, record::<V>.after(CollisionSystems::Events));
    app
}

/// Boxes walking at random, a third of them with `CollidingEntities` from the start and
/// more given one later (while touching). After every tick each set equals the partners
/// the events imply and the pairs a brute-force test of the boxes finds.
fn colliding_entities<V: Dim>(seed: u64) {
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
fn length_unit<V: Dim>() {
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
            let e = app.spawn_id((
                Transform::from_translation(p * scale),
                Aabb::<V>::new(V::splat(0.4 * scale)),
                Velocity(V::truncate_from_3d(v * scale)),
            ));
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
    let a = app.spawn_id((
        Transform::default(),
        d2::Aabb::new(Vec2::splat(0.5)),
        d2::Velocity(Vec2::X),
    ));
    let b = app.spawn_id((
        Transform::from_xyz(0.8, 0.0, 0.0),
        d2::BoundingSphere::new(0.5),
    ));
    let c = app.spawn_id((Transform::default(), d3::Aabb::new(Vec3::splat(0.5))));
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

/// Boxes and balls in random overlapping pairs: `Contacts::contact` gives a unit normal
/// and a depth that separate them when `b` moves by `normal × (depth + ε)` and do not
/// when it moves by `normal × (depth − ε)` (checked with this file's own overlap test),
/// and no other direction of a fan separates them in a shorter move.
fn contacts_separate<V: Dim>(seed: u64) {
    use bevy_aabb_tree::plugin::Contacts;
    let mut rng = Rng::new(seed);
    let mut app = app::<V>(CollisionConfig::default());
    let mut specs = Vec::new();
    for _ in 0..40 {
        let mut spec = |rng: &mut Rng, at: Vec3| {
            let ball = rng.chance(0.4);
            let size = Vec3::new(
                rng.range(0.2, 1.0),
                rng.range(0.2, 1.0),
                rng.range(0.2, 1.0),
            );
            let at = V::truncate_from_3d(at).extend_to_3d();
            let size = if ball {
                Vec3::splat(size.x)
            } else {
                V::truncate_from_3d(size).extend_to_3d()
            };
            let mut e = app.world_mut().spawn(Transform::from_translation(at));
            if ball {
                e.insert(BoundingSphere::<V>::new(size.x));
            } else {
                e.insert(Aabb::<V>::new(V::truncate_from_3d(size)));
            }
            (e.id(), at, size, ball)
        };
        let at = Vec3::new(
            rng.range(-50.0, 50.0),
            rng.range(-50.0, 50.0),
            rng.range(-50.0, 50.0),
        );
        let a = spec(&mut rng, at);
        let offset = Vec3::new(
            rng.range(-0.8, 0.8),
            rng.range(-0.8, 0.8),
            rng.range(-0.8, 0.8),
        );
        let b = spec(&mut rng, at + offset);
        specs.push((a, b));
    }
    app.update();
    let overlap = |a: &(Entity, Vec3, Vec3, bool), b: &(Entity, Vec3, Vec3, bool), shift: Vec3| {
        let (ca, cb) = (a.1, b.1 + shift);
        match (a.3, b.3) {
            (false, false) => {
                let d = (ca - cb).abs();
                let r = a.2 + b.2;
                d.x <= r.x && d.y <= r.y && d.z <= r.z
            }
            (true, true) => (ca - cb).length() <= a.2.x + b.2.x,
            (true, false) => (ca - ca.clamp(cb - b.2, cb + b.2)).length() <= a.2.x,
            (false, true) => (cb - cb.clamp(ca - a.2, ca + a.2)).length() <= b.2.x,
        }
    };
    let mut checked = 0;
    let mut state = bevy::ecs::system::SystemState::<Contacts<V>>::new(app.world_mut());
    let contacts = state.get(app.world()).unwrap();
    for (a, b) in &specs {
        let c = contacts.contact(a.0, b.0);
        assert_eq!(
            c.is_some(),
            overlap(a, b, Vec3::ZERO),
            "seed {seed}: contact of {a:?} {b:?}"
        );
        let Some(c) = c else { continue };
        checked += 1;
        let n = c.normal.extend_to_3d();
        assert!((n.length() - 1.0).abs() < 1e-4 && c.depth >= 0.0, "{c:?}");
        let eps = 1e-3;
        assert!(
            !overlap(a, b, n * (c.depth + eps)),
            "seed {seed}: {c:?} does not separate"
        );
        if c.depth > eps {
            assert!(
                overlap(a, b, n * (c.depth - eps)),
                "seed {seed}: {c:?} is not the least"
            );
        }
        // No direction of a fan separates them in a clearly shorter move.
        for k in 0..64 {
            let angle = k as f32 / 64.0 * std::f32::consts::TAU;
            let dir = V::truncate_from_3d(Vec3::new(
                angle.cos(),
                angle.sin(),
                (angle * 3.0).sin() * 0.5,
            ))
            .extend_to_3d()
            .normalize();
            let shorter = (c.depth - 0.01).max(0.0);
            assert!(
                shorter == 0.0 || overlap(a, b, dir * shorter),
                "seed {seed}: {dir} separates {a:?} {b:?} by less than {c:?}"
            );
        }
    }
    assert!(checked >= 15, "too few contacts: {checked}");
}

#[test]
fn contacts_2d() {
    for seed in 0..4 {
        contacts_separate::<Vec2>(seed);
    }
}

#[test]
fn contacts_3d() {
    for seed in 0..4 {
        contacts_separate::<Vec3>(seed);
    }
}

/// A box over a floor of 60 static unit tiles under a map entity, pushed along it with
/// gravity at several speeds: it never snags on a seam (the whole horizontal motion is
/// done), never enters a tile, and stands on ground. Against a wall of tiles it stops a
/// skin short and stays put without jitter. `Contacts::push_out` lifts a box sunk into
/// two tiles once, not twice.
fn slide_on_tiles<V: Dim>() {
    use bevy_aabb_tree::geometry::SlideConfig;
    use bevy_aabb_tree::plugin::Contacts;
    let mut app = app::<V>(CollisionConfig::default());
    let map = app.spawn_id(Transform::default());
    let mut tiles = Vec::new();
    for x in 0..60 {
        tiles.push(Vec3::new(x as f32, 0.0, 0.0));
    }
    for y in 1..4 {
        tiles.push(Vec3::new(59.0, y as f32, 0.0));
    }
    for &t in &tiles {
        app.world_mut().spawn((
            Transform::from_translation(t),
            Aabb::<V>::new(V::splat(0.5)),
            Static,
            ChildOf(map),
        ));
    }
    let sunk = app.spawn_id((
        Transform::from_xyz(10.5, 0.9, 0.0),
        Aabb::<V>::new(V::splat(0.5)),
    ));
    app.update();
    let mut state = bevy::ecs::system::SystemState::<Contacts<V>>::new(app.world_mut());
    let contacts = state.get(app.world()).unwrap();
    let touching: Vec<Entity> = app
        .world()
        .resource::<AabbTree<V>>()
        .colliding_with(sunk)
        .collect();
    assert_eq!(touching.len(), 2);
    let out = contacts.push_out(sunk, touching).extend_to_3d();
    assert!(
        (out - Vec3::new(0.0, 0.1, 0.0)).length() < 1e-5,
        "push out {out}"
    );

    let tree = app.world().resource::<AabbTree<V>>();
    let config = SlideConfig::new(V::truncate_from_3d(Vec3::Y));
    let half = 0.3;
    let inside_tile = |p: Vec3| {
        let p = V::truncate_from_3d(p).extend_to_3d();
        tiles.iter().any(|t| {
            let d = (p - V::truncate_from_3d(*t).extend_to_3d()).abs();
            let r = 0.5 + half - 1e-5;
            d.x < r && d.y < r && (V::DIM == 2 || d.z < r)
        })
    };
    for speed in [0.05f32, 0.37, 1.0, 2.3] {
        let mut at = Vec3::new(1.0, 0.5 + half + 0.01, 0.0);
        let mut steps = 0;
        while at.x < 50.0 {
            let shape = bevy_aabb_tree::geometry::Shape::Box(
                bevy_aabb_tree::BoundingBox::from_center_half_extents(
                    V::truncate_from_3d(at),
                    V::splat(half),
                ),
            );
            let motion = V::truncate_from_3d(Vec3::new(speed, -0.2, 0.0));
            let slide = tree.move_and_slide(
                &shape,
                motion,
                &config,
                &QueryFilter::default().excluding([sunk]),
            );
            let d = slide.displacement.extend_to_3d();
            assert!(
                (d.x - speed).abs() < 1e-4,
                "speed {speed}: snagged at x = {} (moved {d})",
                at.x
            );
            assert!(slide.on_ground, "speed {speed}: not on ground at {at}");
            at += d;
            assert!(!inside_tile(at), "speed {speed}: inside a tile at {at}");
            steps += 1;
        }
        assert!(steps > 10);
        // Into the wall at x = 59 (its face at 58.5): a skin short, then no jitter.
        let mut stopped = false;
        for _ in 0..(10.0 / speed) as usize + 100 {
            let shape = bevy_aabb_tree::geometry::Shape::Box(
                bevy_aabb_tree::BoundingBox::from_center_half_extents(
                    V::truncate_from_3d(at),
                    V::splat(half),
                ),
            );
            let motion = V::truncate_from_3d(Vec3::new(speed, -0.2, 0.0));
            let slide = tree.move_and_slide(
                &shape,
                motion,
                &config,
                &QueryFilter::default().excluding([sunk]),
            );
            let d = slide.displacement.extend_to_3d();
            at += d;
            assert!(!inside_tile(at), "speed {speed}: inside at {at}");
            // Once it stops against the wall, it stays: no jitter.
            assert!(
                !stopped || d.length() == 0.0,
                "speed {speed}: jitter by {d} at {at}"
            );
            stopped |= d.length() == 0.0;
        }
        assert!(stopped, "speed {speed}: never stopped");
        assert!(
            at.x > 58.5 - half - 0.05 && at.x <= 58.5 - half,
            "speed {speed}: stopped at {at}"
        );
    }
}

#[test]
fn slide_on_tiles_2d() {
    slide_on_tiles::<Vec2>();
}

#[test]
fn slide_on_tiles_3d() {
    slide_on_tiles::<Vec3>();
}

/// Sensors never block: random boxes, one in three a `Sensor`, and a box moved by
/// `move_and_slide` from many starts in many directions gets exactly the outcome of the
/// pure `move_and_slide` over the solid boxes alone (a brute-force cast over a list), hit
/// by hit and entity by entity, many of these casts crossing a sensor before any solid;
/// `cast_blocking` returns the first solid of the brute-force cast; `push_out` ignores
/// sensors, also where the walker overlaps a solid and a sensor at once; the sensors
/// still raise events, and spatial queries see them unless told not to.
fn sensors_never_block<V: Dim>(seed: u64) {
    use bevy_aabb_tree::geometry::{
        CastHit, Shape, SlideConfig, cast_shape, cast_shapes, move_and_slide,
    };
    use bevy_aabb_tree::plugin::Contacts;
    let mut rng = Rng::new(seed);
    let mut app = app::<V>(CollisionConfig::default());
    let mut solids = Vec::new();
    let mut sensors = Vec::new();
    for i in 0..40 {
        let at = V::truncate_from_3d(Vec3::new(
            rng.range(-10.0, 10.0),
            rng.range(-10.0, 10.0),
            rng.range(-10.0, 10.0),
        ));
        let half = V::truncate_from_3d(Vec3::new(
            rng.range(0.3, 1.5),
            rng.range(0.3, 1.5),
            rng.range(0.3, 1.5),
        ));
        let mut e = app.world_mut().spawn((
            Transform::from_translation(at.extend_to_3d()),
            Aabb::<V>::new(half),
            Static,
        ));
        let shape = Shape::Box(bevy_aabb_tree::BoundingBox::from_center_half_extents(
            at, half,
        ));
        if i % 3 == 0 {
            e.insert(Sensor);
            sensors.push((e.id(), shape));
        } else {
            solids.push((shape, e.id()));
        }
    }
    // A solid ledge across the walk below (which goes along x through the first sensor's
    // center): from x = c - 0.5 to c + 1.5, its bottom 0.1 above the center, so that the
    // walker (half extent 0.3) overlaps it by 0.2 from below.
    let through = sensors[0].1.center().extend_to_3d();
    let ledge_at = through + Vec3::new(0.5, 0.5, 0.0);
    let ledge_half = V::truncate_from_3d(Vec3::new(1.0, 0.4, 0.4));
    let ledge = app.spawn_id((
        Transform::from_translation(ledge_at),
        Aabb::<V>::new(ledge_half),
        Static,
    ));
    solids.push((
        Shape::Box(bevy_aabb_tree::BoundingBox::from_center_half_extents(
            V::truncate_from_3d(ledge_at),
            ledge_half,
        )),
        ledge,
    ));
    // A walker that crosses the scene, with its contacts at hand.
    let walker = app.spawn_id((
        Transform::from_xyz(-12.0, 0.0, 0.0),
        Aabb::<V>::new(V::splat(0.3)),
        CollidingEntities::default(),
    ));
    app.update();
    let config = SlideConfig::new(V::truncate_from_3d(Vec3::Y));
    let filter = QueryFilter::default().excluding([walker]);
    let tree = app.world().resource::<AabbTree<V>>();
    // The solids hit first by a cast, all of them when several are hit at the same time
    // with the same normal (the broad phase may name any one of those).
    let tied = |s: &Shape<V>, m: V, best: &CastHit<V, Entity>| -> Vec<Entity> {
        solids
            .iter()
            .filter(|(t, _)| {
                cast_shape(s, m, t).is_some_and(|h| (h.t, h.normal) == (best.t, best.normal))
            })
            .map(|&(_, e)| e)
            .collect()
    };
    let (mut across, mut hits, mut blocked) = (0, 0, 0);
    for _ in 0..1000 {
        let start = V::truncate_from_3d(Vec3::new(
            rng.range(-12.0, 12.0),
            rng.range(-12.0, 12.0),
            rng.range(-12.0, 12.0),
        ));
        let shape = Shape::Box(bevy_aabb_tree::BoundingBox::from_center_half_extents(
            start,
            V::splat(0.3),
        ));
        let motion = V::truncate_from_3d(Vec3::new(
            rng.range(-15.0, 15.0),
            rng.range(-15.0, 15.0),
            rng.range(-15.0, 15.0),
        ));
        // A sensor lies across the cast: the motion reaches it before any solid.
        let first_solid = cast_shapes(&shape, motion, solids.iter().copied());
        let first_sensor = cast_shapes(&shape, motion, sensors.iter().map(|&(e, s)| (s, e)));
        if let Some(sensor) = &first_sensor
            && first_solid.as_ref().is_none_or(|solid| sensor.t < solid.t)
        {
            across += 1;
        }
        let got = tree.move_and_slide(&shape, motion, &config, &filter);
        // Each cast of the brute-force slide, with the solids it may name.
        let mut named: Vec<Vec<Entity>> = Vec::new();
        let want = move_and_slide(&shape, motion, &config, |s, m| {
            let best = cast_shapes(s, m, solids.iter().copied())?;
            named.push(tied(s, m, &best));
            Some(best)
        });
        assert_eq!(
            got.displacement, want.displacement,
            "from {start:?} by {motion:?}"
        );
        // The same hits, of the same solids (of several hit at the same time with the same
        // normal, either may be named).
        assert_eq!(got.hits.len(), want.hits.len());
        for ((g, w), names) in got.hits.iter().zip(&want.hits).zip(&named) {
            assert_eq!((g.t, g.normal), (w.t, w.normal));
            assert!(
                names.contains(&g.id),
                "from {start:?} by {motion:?}: hit {:?}, brute force {names:?}",
                g.id
            );
            hits += 1;
        }
        // `cast_blocking` names the first solid of the brute-force cast.
        let blocking = tree.cast_blocking(&shape, motion, &filter);
        match (&blocking, &first_solid) {
            (None, None) => {}
            (Some(g), Some(w)) => {
                assert_eq!((g.t, g.normal), (w.t, w.normal));
                let names = tied(&shape, motion, w);
                assert!(
                    names.contains(&g.id),
                    "from {start:?} by {motion:?}: blocked by {:?}, brute force {names:?}",
                    g.id
                );
                blocked += 1;
            }
            (got, want) => panic!("from {start:?} by {motion:?}: {got:?}, brute force {want:?}"),
        }
    }
    // Many casts met a sensor first, which a cast that sensors block would have stopped at.
    assert!(across >= 40, "only {across} casts crossed a sensor first");
    assert!(
        hits >= 100 && blocked >= 100,
        "{hits} hits, {blocked} blocked"
    );
    // Walk the walker through the first sensor and under the ledge: it meets sensors
    // (events, contacts) but a push out of a sensor is nothing, and the push out of the
    // solids it touches is the same with the sensors among them.
    let push_down = V::truncate_from_3d(Vec3::new(0.0, -0.2, 0.0));
    let (mut met_sensor, mut under_ledge, mut mixed) = (false, 0, 0);
    for step in 0..48 {
        let x = -12.0 + step as f32 * 0.5;
        app.world_mut()
            .get_mut::<Transform>(walker)
            .unwrap()
            .translation = Vec3::new(x, through.y, through.z);
        app.update();
        let touching: Vec<Entity> = app
            .world()
            .get::<CollidingEntities>(walker)
            .unwrap()
            .iter()
            .collect();
        let in_sensors: Vec<Entity> = touching
            .iter()
            .copied()
            .filter(|e| sensors.iter().any(|(s, _)| s == e))
            .collect();
        met_sensor |= !in_sensors.is_empty();
        let mut state: bevy::ecs::system::SystemState<Contacts<V>> =
            bevy::ecs::system::SystemState::new(app.world_mut());
        let contacts = state.get(app.world()).unwrap();
        assert_eq!(
            contacts.push_out(walker, in_sensors.iter().copied()),
            V::ZERO
        );
        let solid: Vec<Entity> = touching
            .iter()
            .copied()
            .filter(|e| !in_sensors.contains(e))
            .collect();
        let out_of_solids = contacts.push_out(walker, solid.iter().copied());
        assert_eq!(
            contacts.push_out(walker, touching.iter().copied()),
            out_of_solids
        );
        if !in_sensors.is_empty() && out_of_solids != V::ZERO {
            mixed += 1;
        }
        // Wholly under the ledge along x: pushed down by the 0.2 it overlaps the ledge,
        // with or without the first sensor.
        if x - 0.3 >= ledge_at.x - 1.0 && x + 0.3 <= ledge_at.x + 1.0 {
            under_ledge += 1;
            assert!(touching.contains(&ledge), "x {x}: not touching the ledge");
            for others in [vec![ledge], vec![ledge, sensors[0].0]] {
                let push = contacts.push_out(walker, others);
                assert!(
                    (push - push_down).abs().max_element() < 1e-5,
                    "x {x}: pushed out of the ledge by {push:?}"
                );
            }
        }
    }
    assert!(met_sensor, "the walk met no sensor");
    assert!(under_ledge >= 2, "{under_ledge} steps under the ledge");
    assert!(
        mixed >= 1,
        "no step touched a sensor and pushed out of a solid"
    );
    // Spatial queries see sensors unless told not to.
    let (sensor, shape) = sensors[0];
    let bounds = shape.bounding_box();
    let mut state: bevy::ecs::system::SystemState<SpatialQuery<V>> =
        bevy::ecs::system::SystemState::new(app.world_mut());
    let query = state.get(app.world()).unwrap();
    assert!(
        query
            .aabb(&bounds, &QueryFilter::default())
            .contains(&sensor)
    );
    assert!(
        !query
            .aabb(&bounds, &QueryFilter::default().without_sensors())
            .contains(&sensor)
    );
}

#[test]
fn sensors_never_block_2d() {
    sensors_never_block::<Vec2>(5);
}

#[test]
fn sensors_never_block_3d() {
    sensors_never_block::<Vec3>(6);
}
