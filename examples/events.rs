//! Collision events, read two ways: as messages and with observers. Headless 3D.
//!
//! A fast box flies through a thin wall (the swept test catches it within one tick: the
//! start and the end come in the same tick) and a slow ball rolls through a crate (the
//! start and the end a second apart). Run: `cargo run --example events`.

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::d3::*;

fn main() {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        bevy::transform::TransformPlugin,
        bevy::log::LogPlugin::default(),
    ))
    // Collision detection in 3D, in FixedPostUpdate (the default).
    .add_plugins(AabbTreePlugin::default())
    // Moves entities by their Velocity in FixedUpdate (optional helper).
    .add_plugins(VelocityPlugin::default())
    // A fixed 60 Hz step, and time advancing by exactly one step per frame so the
    // example prints the same thing every run.
    .insert_resource(Time::<Fixed>::from_hz(60.0))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 60.0,
    )))
    .add_systems(Startup, setup)
    // Messages: one per pair. Read them after the pipeline so they are this tick's.
    .add_systems(
        FixedPostUpdate,
        read_messages.after(CollisionSystems::Events),
    )
    // A global observer sees the entity events of every entity.
    .add_observer(|ended: On<CollisionEnded>| {
        info!(
            "[global observer] {} is no longer touching {} ({:?})",
            ended.entity, ended.other, ended.reason
        );
    });
    // Run two seconds of game time, then stop.
    for _ in 0..120 {
        app.update();
    }
}

fn setup(mut commands: Commands) {
    // A wall 0.1 thick at x = 5.
    commands.spawn((
        Name::new("wall"),
        Transform::from_xyz(5.0, 0.0, 0.0),
        Aabb::new(Vec3::new(0.05, 2.0, 2.0)),
    ));
    // A bullet at 600 units/s: 10 units per tick, far more than the wall is thick.
    commands
        .spawn((
            Name::new("bullet"),
            Transform::from_xyz(-22.0, 0.0, 0.0),
            Aabb::new(Vec3::splat(0.1)),
            Velocity(Vec3::X * 600.0),
        ))
        // An entity observer fires only for this entity's collisions, with it as `entity`.
        .observe(|hit: On<CollisionStarted>, names: Query<&Name>| {
            let other = names.get(hit.other).map(Name::as_str).unwrap_or("?");
            info!(
                "[bullet observer] bullet hit {other} at t = {:.3} of the tick, normal {}",
                hit.time_of_impact, hit.normal
            );
        });
    // A ball rolling slowly through a crate.
    commands.spawn((
        Name::new("ball"),
        Transform::from_xyz(0.0, 10.0, 0.0),
        BoundingSphere::new(0.5),
        Velocity(Vec3::X * 2.0),
    ));
    commands.spawn((
        Name::new("crate"),
        Transform::from_xyz(2.0, 10.0, 0.0),
        Aabb::new(Vec3::splat(0.5)),
    ));
}

fn read_messages(
    mut started: MessageReader<CollisionStarted>,
    mut ended: MessageReader<CollisionEnded>,
    names: Query<&Name>,
) {
    let name = |e: Entity| {
        names
            .get(e)
            .map(|n| n.as_str().to_owned())
            .unwrap_or_else(|_| e.to_string())
    };
    for hit in started.read() {
        info!(
            "[messages] started: {} and {} (time of impact {:.3})",
            name(hit.entity),
            name(hit.other),
            hit.time_of_impact
        );
    }
    for end in ended.read() {
        info!(
            "[messages] ended: {} and {} ({:?})",
            name(end.entity),
            name(end.other),
            end.reason
        );
    }
}
