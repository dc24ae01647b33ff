//! Saved scenes (feature `serialize`): colliders saved to a `DynamicWorld`, written out as
//! RON, read back and loaded into a new app give the same contacts and, from then on,
//! the same events as the app they were saved from.
#![cfg(feature = "serialize")]

use crate::kit::rng;

use std::collections::BTreeSet;
use std::time::Duration;

use bevy::asset::{AssetPath, LoadFromPath, UntypedHandle};
use bevy::ecs::entity::EntityHashMap;
use bevy::ecs::message::MessageCursor;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy::world_serialization::serde::WorldDeserializer;
use bevy::world_serialization::{DynamicWorld, DynamicWorldBuilder};
use bevy_aabb_tree::d2::*;
use rng::Rng;
use serde::de::DeserializeSeed;

/// The scene holds no asset handle.
struct NoAssets;

impl LoadFromPath for NoAssets {
    fn load_from_path_erased(
        &mut self,
        _: std::any::TypeId,
        path: AssetPath<'static>,
    ) -> UntypedHandle {
        panic!("the scene holds no asset, but asked for {path}");
    }
}

/// Moves every collider by its velocity, before the collision tick.
fn advance(mut q: Query<(&mut Transform, &Velocity)>) {
    for (mut t, v) in &mut q {
        t.translation += v.0.extend(0.0) / 60.0;
    }
}

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins(AabbTreePlugin::new(Update))
        // A game's `DefaultPlugins` register it; `MinimalPlugins` here do not.
        .register_type::<Transform>()
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .add_systems(Update, advance.before(CollisionSystems::Prepare));
    app
}

/// One tick's events, as pairs in the order written.
type Tick = Vec<(bool, Entity, Entity)>;

struct Recorder {
    started: MessageCursor<CollisionStarted>,
    ended: MessageCursor<CollisionEnded>,
}

impl Recorder {
    fn new() -> Self {
        Self {
            started: MessageCursor::default(),
            ended: MessageCursor::default(),
        }
    }

    fn tick(&mut self, app: &mut App) -> Tick {
        app.update();
        let world = app.world();
        let mut out: Tick = self
            .started
            .read(world.resource::<Messages<CollisionStarted>>())
            .map(|s| (true, s.entity, s.other))
            .collect();
        out.extend(
            self.ended
                .read(world.resource::<Messages<CollisionEnded>>())
                .map(|e| (false, e.entity, e.other)),
        );
        out
    }
}

fn touching(app: &App) -> BTreeSet<(Entity, Entity)> {
    app.world()
        .resource::<AabbTree>()
        .touching_pairs()
        .map(|(a, b)| if a < b { (a, b) } else { (b, a) })
        .collect()
}

#[test]
fn saved_scene_gives_the_same_events() {
    let mut original = app();
    let mut rng = Rng::new(11);
    for i in 0..80 {
        let p = Vec3::new(rng.range(-8.0, 8.0), rng.range(-8.0, 8.0), 0.0);
        let mut e = original.world_mut().spawn((
            Transform::from_translation(p),
            Velocity(Vec2::new(rng.range(-2.0, 2.0), rng.range(-2.0, 2.0))),
            CollidingEntities::default(),
            CollisionLayers::new(1 << (i % 2), 0b11),
        ));
        if i % 3 == 0 {
            e.insert(BoundingSphere::new(rng.range(0.2, 0.8)));
        } else if i % 3 == 1 && i % 2 == 1 {
            let axis = if i % 4 == 1 {
                CapsuleAxis::X
            } else {
                CapsuleAxis::Y
            };
            e.insert(Capsule::new(rng.range(0.0, 0.6), rng.range(0.2, 0.5)).along(axis));
        } else if i % 3 == 2 && i % 2 == 0 {
            let half = Vec2::new(rng.range(0.0, 0.5), rng.range(0.0, 0.5));
            e.insert(RoundedAabb::new(half, rng.range(0.1, 0.4)));
        } else {
            e.insert(Aabb::new(Vec2::new(
                rng.range(0.2, 0.8),
                rng.range(0.2, 0.8),
            )));
        }
        if i % 7 == 0 {
            e.insert(Sensor);
        }
        if i % 5 == 0 {
            e.insert(OneWay::new(Vec2::Y));
        }
    }
    let mut rec = Recorder::new();
    for _ in 0..10 {
        rec.tick(&mut original);
    }

    // Save the colliders (every registered component, the plugin's own record included)
    // and write them out as RON.
    let registry = original.world().resource::<AppTypeRegistry>().clone();
    let entities: Vec<Entity> = original
        .world_mut()
        .query_filtered::<Entity, With<Velocity>>()
        .iter(original.world())
        .collect();
    let saved = DynamicWorldBuilder::from_world(original.world(), &registry.read())
        .extract_entities(entities.iter().copied())
        .build();
    let ron = saved.serialize(&registry.read()).expect("serializes");
    assert!(
        ron.contains("bevy_aabb_tree::plugin::components::Aabb"),
        "{ron}"
    );
    assert!(ron.contains("CollidingEntities"));
    assert!(
        ron.contains("bevy_aabb_tree::plugin::components::Capsule"),
        "{ron}"
    );
    assert!(ron.contains("RoundedAabb"), "{ron}");

    // Read it back into a new app.
    let mut loaded = app();
    let registry = loaded.world().resource::<AppTypeRegistry>().clone();
    let read: DynamicWorld = {
        let mut deserializer = ron::de::Deserializer::from_str(&ron).expect("RON");
        WorldDeserializer {
            type_registry: &registry.read(),
            load_from_path: &mut NoAssets,
        }
        .deserialize(&mut deserializer)
        .expect("reads back")
    };
    let mut map = EntityHashMap::default();
    read.write_to_world(loaded.world_mut(), &mut map)
        .expect("loads");
    // A scene is written one component at a time: each collider's shape arrived before
    // its `Transform` was set. `Teleported` makes its first tick start where it is now.
    for &e in map.values() {
        loaded.world_mut().entity_mut(e).insert(Teleported);
    }
    let to_original: EntityHashMap<Entity> = map.iter().map(|(&old, &new)| (new, old)).collect();
    let back = |e: Entity| to_original[&e];
    // The one-way platforms, sensors and rounded boxes came back too.
    for (&new, &old) in &to_original {
        let world = (original.world(), loaded.world());
        assert_eq!(
            world.0.get::<RoundedAabb>(old),
            world.1.get::<RoundedAabb>(new)
        );
        assert_eq!(
            world.0.get::<OneWay>(old).map(OneWay::normal),
            world.1.get::<OneWay>(new).map(OneWay::normal)
        );
        assert_eq!(world.0.get::<Sensor>(old), world.1.get::<Sensor>(new));
    }
    // The contact sets came back as saved, read before the loaded app's first tick (which
    // starts every contact anew and fills them again).
    let set = |app: &App, e: Entity| -> BTreeSet<Entity> {
        app.world()
            .get::<CollidingEntities>(e)
            .map(|c| c.iter().collect())
            .unwrap_or_default()
    };
    let mut saved_contacts = 0;
    for (&new, &old) in &to_original {
        let mapped: BTreeSet<Entity> = set(&loaded, new).into_iter().map(back).collect();
        assert_eq!(
            mapped,
            set(&original, old),
            "the contacts of {old} as loaded"
        );
        saved_contacts += mapped.len();
    }
    assert!(
        saved_contacts > 0,
        "nothing touched when the scene was saved"
    );

    // After the first tick of each, the loaded app touches what the original touches
    // (it started those contacts anew; the original kept them).
    let mut rec_loaded = Recorder::new();
    let first = rec_loaded.tick(&mut loaded);
    rec.tick(&mut original);
    assert!(first.iter().any(|(start, ..)| *start));
    let mapped: BTreeSet<_> = touching(&loaded)
        .into_iter()
        .map(|(a, b)| {
            let (a, b) = (back(a), back(b));
            if a < b { (a, b) } else { (b, a) }
        })
        .collect();
    assert!(!mapped.is_empty());
    assert_eq!(mapped, touching(&original));
    // Then the same events, tick by tick, and the same `CollidingEntities`.
    let mut events = 0;
    for tick in 0..120 {
        let a = rec.tick(&mut original);
        let b: Tick = rec_loaded
            .tick(&mut loaded)
            .into_iter()
            .map(|(s, x, y)| (s, back(x), back(y)))
            .collect();
        let norm = |t: &Tick| {
            let mut v: Vec<_> = t.iter().map(|&(s, x, y)| (s, x.min(y), x.max(y))).collect();
            v.sort();
            v
        };
        assert_eq!(norm(&a), norm(&b), "tick {tick}");
        events += a.len();
    }
    assert!(
        events > 20,
        "only {events} events: the scene does not test much"
    );
    for (&new, &old) in &to_original {
        let mapped: BTreeSet<Entity> = set(&loaded, new).into_iter().map(back).collect();
        assert_eq!(mapped, set(&original, old));
    }
}
