//! An invalid collider is reported by one warning that names the entity and the bad
//! value, not one per tick; when it is valid again and later breaks again, it is reported
//! again, once.
//!
//! The test runs in a process of its own (`kit::process::alone`): it installs a global
//! `tracing` subscriber that counts the warnings, which must not see other tests' apps.

use std::time::Duration;

use bevy::log::tracing_subscriber::layer::SubscriberExt;
use bevy::log::tracing_subscriber::registry::Registry;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::prelude::*;

use crate::kit::dim::Dim;

use crate::kit::process::{alone, test_name};
use crate::kit::warnings;
use warnings::Warnings;

fn warnings_about(warnings: &Warnings, entity: Entity) -> Vec<String> {
    warnings.containing(&format!("entity {entity} "))
}

fn run<V: Dim>(warnings: &Warnings) {
    // Entity ids repeat between apps: forget the other run's warnings.
    warnings.0.lock().unwrap().clear();
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins(AabbTreePlugin::<V>::new(Update))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )));
    let bad = app
        .world_mut()
        .spawn((Transform::default(), Aabb::new(V::splat(0.5))))
        .id();
    let good = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.8, 0.0, 0.0),
            BoundingSphere::<V>::new(0.5),
        ))
        .id();
    app.update();

    // Broken for 20 frames: one warning, naming the entity and the value.
    app.world_mut()
        .get_mut::<Transform>(bad)
        .unwrap()
        .translation
        .x = f32::NAN;
    for _ in 0..20 {
        app.update();
    }
    let seen = warnings_about(warnings, bad);
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert!(seen[0].contains("NaN"), "the value is named: {}", seen[0]);
    assert!(seen[0].contains("translation"), "{}", seen[0]);

    // Repaired: no new warning, back in the tree.
    app.world_mut()
        .get_mut::<Transform>(bad)
        .unwrap()
        .translation
        .x = 0.0;
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(warnings_about(warnings, bad).len(), 1);
    assert!(app.world().resource::<AabbTree<V>>().is_touching(bad, good));

    // Broken again in another way: one more warning, with that value.
    app.world_mut()
        .entity_mut(bad)
        .insert(Aabb::new(V::splat(-1.0)));
    for _ in 0..20 {
        app.update();
    }
    let seen = warnings_about(warnings, bad);
    assert_eq!(seen.len(), 2, "{seen:#?}");
    assert!(seen[1].contains("half extents"), "{}", seen[1]);
    // The valid entity was never warned about.
    assert!(warnings_about(warnings, good).is_empty());

    // A capsule with a negative radius: one warning naming it and the value; valid
    // again, back in; a NaN half length, one more.
    let capsule = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.0, 2.0, 0.0),
            Capsule::<V>::new(0.5, -0.25),
        ))
        .id();
    for _ in 0..20 {
        app.update();
    }
    let seen = warnings_about(warnings, capsule);
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert!(
        seen[0].contains("Capsule") && seen[0].contains("-0.25"),
        "{}",
        seen[0]
    );
    app.world_mut()
        .entity_mut(capsule)
        .insert(Capsule::<V>::new(0.5, 0.25));
    for _ in 0..5 {
        app.update();
    }
    assert!(
        app.world()
            .get::<TrackedCollider<V>>(capsule)
            .unwrap()
            .proxy()
            .is_some()
    );
    app.world_mut()
        .entity_mut(capsule)
        .insert(Capsule::<V>::new(f32::NAN, 0.25));
    for _ in 0..20 {
        app.update();
    }
    let seen = warnings_about(warnings, capsule);
    assert_eq!(seen.len(), 2, "{seen:#?}");
    assert!(seen[1].contains("NaN"), "{}", seen[1]);
    app.world_mut().despawn(capsule);

    // A rounded box: a negative radius, a NaN extent, an infinite radius, a negative
    // extent; each one warning naming the entity and the value, valid values in between
    // put it back in the tree.
    let rounded = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.0, 2.0, 0.0),
            RoundedAabb::<V>::new(V::splat(0.25), 0.1),
        ))
        .id();
    let mut nan_extents = V::splat(0.25);
    nan_extents.set_axis(1, f32::NAN);
    let bad_values: [(RoundedAabb<V>, &str); 4] = [
        (RoundedAabb::new(V::splat(0.25), -0.75), "-0.75"),
        (RoundedAabb::new(nan_extents, 0.1), "NaN"),
        (RoundedAabb::new(V::splat(0.25), f32::INFINITY), "inf"),
        (RoundedAabb::new(V::splat(-0.5), 0.1), "-0.5"),
    ];
    for (k, (value, shown)) in bad_values.into_iter().enumerate() {
        app.world_mut().entity_mut(rounded).insert(value);
        for _ in 0..20 {
            app.update();
        }
        let seen = warnings_about(warnings, rounded);
        assert_eq!(seen.len(), k + 1, "{value:?}: {seen:#?}");
        assert!(
            seen[k].contains("RoundedAabb") && seen[k].contains(shown),
            "{}",
            seen[k]
        );
        let tracked = app.world().get::<TrackedCollider<V>>(rounded).unwrap();
        assert!(tracked.proxy().is_none(), "{value:?} is in the tree");
        app.world_mut()
            .entity_mut(rounded)
            .insert(RoundedAabb::<V>::new(V::splat(0.25), 0.1));
        for _ in 0..5 {
            app.update();
        }
        let tracked = app.world().get::<TrackedCollider<V>>(rounded).unwrap();
        assert!(tracked.proxy().is_some(), "not back after {value:?}");
    }
    app.world_mut().despawn(rounded);

    // Finite values whose fat box overflows (near the edge of `f32`'s range, with a
    // velocity): one warning for the whole episode, not one per frame.
    let edge = app
        .world_mut()
        .spawn((
            Transform::from_xyz(3.39e38, 0.0, 0.0),
            Aabb::new(V::splat(1e36)),
            Velocity(V::truncate_from_3d(Vec3::X * 1e37)),
        ))
        .id();
    for _ in 0..20 {
        app.update();
    }
    let seen = warnings_about(warnings, edge);
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert!(seen[0].contains("overflows"), "{}", seen[0]);
    // Only `good` is in the tree (`bad` is still invalid): no proxy left behind.
    assert_eq!(app.world().resource::<AabbTree<V>>().tree().len(), 1);

    // A config whose knobs are not finite: one warning per field, naming it, and the
    // defaults used; the colliders are not blamed and stay in.
    app.world_mut().despawn(bad);
    app.world_mut().despawn(edge);
    let other = app
        .world_mut()
        .spawn((
            Transform::from_xyz(1.6, 0.0, 0.0),
            Aabb::new(V::splat(0.5)),
            Velocity(V::truncate_from_3d(Vec3::X)),
        ))
        .id();
    *app.world_mut().resource_mut::<CollisionConfig>() = CollisionConfig {
        margin: f32::INFINITY,
        velocity_multiplier: f32::NAN,
        ..default()
    };
    for _ in 0..20 {
        app.update();
    }
    let about_config: Vec<String> = warnings
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|w| w.contains("CollisionConfig::"))
        .cloned()
        .collect();
    assert_eq!(about_config.len(), 2, "{about_config:#?}");
    assert!(about_config[0].contains("margin") && about_config[0].contains("inf"));
    assert!(about_config[1].contains("velocity_multiplier") && about_config[1].contains("NaN"));
    assert!(warnings_about(warnings, good).is_empty());
    assert!(warnings_about(warnings, other).is_empty());
    let state = app.world().resource::<AabbTree<V>>();
    assert_eq!(state.tree().margin(), CollisionConfig::default().margin);
    assert_eq!(state.tree().len(), 2);
    assert!(state.is_touching(good, other));
}

/// `VelocityPlugin` and a velocity that is not finite: the entity stays where it is (a
/// collider and an entity without a shape alike), one warning names it and the velocity
/// (for the collider, the pipeline's own), and a valid velocity moves it again.
fn velocity_plugin<V: Dim>(warnings: &Warnings) {
    warnings.0.lock().unwrap().clear();
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins((
            AabbTreePlugin::<V>::default(),
            VelocityPlugin::<V>::default(),
        ))
        // One fixed step per update.
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 64.0,
        )));
    let velocity = |x: f32| Velocity(V::truncate_from_3d(Vec3::new(x, 1.0, 0.0)));
    let start = Vec3::new(1.0, 2.0, 0.0);
    let collider = app
        .world_mut()
        .spawn((
            Transform::from_translation(start),
            Aabb::new(V::splat(0.5)),
            velocity(f32::NAN),
        ))
        .id();
    let plain = app
        .world_mut()
        .spawn((Transform::from_translation(start), velocity(f32::INFINITY)))
        .id();
    let moving = app
        .world_mut()
        .spawn((Transform::from_translation(start), velocity(2.0)))
        .id();
    for _ in 0..20 {
        app.update();
    }
    let at = |app: &App, e: Entity| app.world().get::<Transform>(e).unwrap().translation;
    assert_eq!(at(&app, collider), start);
    assert_eq!(at(&app, plain), start);
    // The valid one moved: (2, 1) per second over the steps run.
    let steps = (app.world().resource::<Time<Fixed>>().elapsed_secs() * 64.0).round();
    assert!(steps >= 15.0, "only {steps} fixed steps");
    let expected = start + Vec3::new(2.0, 1.0, 0.0) * (steps / 64.0);
    assert!((at(&app, moving) - expected).abs().max_element() < 1e-4);

    let seen = warnings_about(warnings, collider);
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert!(
        seen[0].contains("Velocity") && seen[0].contains("NaN"),
        "{}",
        seen[0]
    );
    assert!(!seen[0].contains("translation"), "{}", seen[0]);
    let seen = warnings_about(warnings, plain);
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert!(
        seen[0].contains("Velocity") && seen[0].contains("inf"),
        "{}",
        seen[0]
    );
    assert!(warnings_about(warnings, moving).is_empty());

    // Valid again: it moves; broken again: one more warning.
    app.world_mut().entity_mut(plain).insert(velocity(2.0));
    for _ in 0..5 {
        app.update();
    }
    assert!(at(&app, plain).x > start.x);
    let stopped = at(&app, plain);
    app.world_mut().entity_mut(plain).insert(velocity(f32::NAN));
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(at(&app, plain), stopped);
    assert_eq!(warnings_about(warnings, plain).len(), 2);
}

/// Characters with bad settings: one warning each, naming the character, the setting and
/// its value, and the documented fallback in use (the default setting: the character
/// lands on the floor a skin above it and reads as grounded; a non-finite up: top-down,
/// never grounded). A zero-size character is warned about. Repaired and broken again:
/// one more warning.
fn character_settings<V: Dim>(warnings: &Warnings) {
    warnings.0.lock().unwrap().clear();
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins((
            AabbTreePlugin::<V>::new(Update),
            CharacterPlugin::<V>::new(Update),
        ))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )));
    let up = V::truncate_from_3d(Vec3::Y);
    let vec = |x: f32, y: f32| V::truncate_from_3d(Vec3::new(x, y, 0.0));
    app.world_mut().spawn((
        Transform::from_xyz(0.0, -0.5, 0.0),
        Aabb::new(V::truncate_from_3d(Vec3::new(50.0, 0.5, 50.0))),
        Static,
    ));
    let default = CharacterConfig::new(up);
    // (what is wrong, the value as printed, the controller)
    let cases: Vec<(&str, &str, CharacterController<V>)> = vec![
        (
            "skin",
            "-0.1",
            CharacterConfig {
                skin: -0.1,
                ..default
            },
        ),
        (
            "max_slope",
            "NaN",
            CharacterConfig {
                max_slope: f32::NAN,
                ..default
            },
        ),
        (
            "max_step_height",
            "-1",
            CharacterConfig {
                max_step_height: -1.0,
                ..default
            },
        ),
        (
            "snap_distance",
            "-1",
            CharacterConfig {
                snap_distance: -1.0,
                ..default
            },
        ),
        (
            "max_iterations",
            "0",
            CharacterConfig {
                max_iterations: 0,
                ..default
            },
        ),
        ("up", "NaN", CharacterConfig::new(vec(f32::NAN, 1.0))),
    ]
    .into_iter()
    .map(|(what, value, config)| {
        (
            what,
            value,
            CharacterController::new(up).with_config(config),
        )
    })
    .collect();
    let mut characters = Vec::new();
    for (i, (what, value, mut controller)) in cases.into_iter().enumerate() {
        // Falling onto the floor from 0.3 above it.
        controller.velocity = vec(0.0, -3.0);
        let e = app
            .world_mut()
            .spawn((
                Transform::from_xyz(i as f32 * 2.0, 0.8, 0.0),
                Aabb::new(V::truncate_from_3d(Vec3::new(0.3, 0.5, 0.3))),
                controller,
            ))
            .id();
        characters.push((what, value, e));
    }
    let point = app
        .world_mut()
        .spawn((
            Transform::from_xyz(20.0, 0.01, 0.0),
            Aabb::new(V::ZERO),
            CharacterController::new(up),
        ))
        .id();
    let good = app
        .world_mut()
        .spawn((
            Transform::from_xyz(24.0, 0.8, 0.0),
            Aabb::new(V::truncate_from_3d(Vec3::new(0.3, 0.5, 0.3))),
            CharacterController {
                velocity: vec(0.0, -3.0),
                ..CharacterController::new(up)
            },
        ))
        .id();
    for _ in 0..30 {
        app.update();
    }
    let about = |e: Entity| warnings.containing(&format!("character {e} "));
    for &(what, value, e) in &characters {
        let seen = about(e);
        assert_eq!(seen.len(), 1, "{what}: {seen:#?}");
        assert!(
            seen[0].contains(&format!("CharacterConfig::{what} ")) && seen[0].contains(value),
            "{what}: {}",
            seen[0]
        );
        let state = app.world().get::<CharacterState<V>>(e).unwrap();
        let bottom = app.world().get::<Transform>(e).unwrap().translation.y - 0.5;
        assert!((0.0..0.021).contains(&bottom), "{what}: bottom at {bottom}");
        assert_eq!(state.grounded, what != "up", "{what}");
    }
    let seen = about(point);
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert!(seen[0].contains("zero size"), "{}", seen[0]);
    assert!(about(good).is_empty(), "{:#?}", about(good));
    assert!(app.world().get::<CharacterState<V>>(good).unwrap().grounded);

    // Repaired: no new warning; broken again: one more.
    let (_, _, skin) = characters[0];
    let set_skin = |app: &mut App, value: f32| {
        app.world_mut()
            .get_mut::<CharacterController<V>>(skin)
            .unwrap()
            .config
            .skin = value;
    };
    set_skin(&mut app, 0.01);
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(about(skin).len(), 1);
    set_skin(&mut app, f32::INFINITY);
    for _ in 0..5 {
        app.update();
    }
    let seen = about(skin);
    assert_eq!(seen.len(), 2, "{seen:#?}");
    assert!(seen[1].contains("inf"), "{}", seen[1]);
}

#[test]
fn one_warning_per_invalid_episode() {
    let name = test_name(module_path!(), "one_warning_per_invalid_episode");
    alone(&name, &[], every_invalid_episode);
}

fn every_invalid_episode() {
    let warnings = Warnings::default();
    let subscriber = Registry::default().with(warnings.clone());
    // Global, so that systems on any thread of the task pools report to it.
    bevy::log::tracing::subscriber::set_global_default(subscriber).unwrap();
    run::<Vec2>(&warnings);
    run::<Vec3>(&warnings);
    velocity_plugin::<Vec2>(&warnings);
    velocity_plugin::<Vec3>(&warnings);
    character_settings::<Vec2>(&warnings);
    character_settings::<Vec3>(&warnings);
}
