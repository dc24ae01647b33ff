//! Smoke test of the plugin: a fast box through a thin wall.

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::prelude::*;

#[derive(Resource, Default)]
struct Log(Vec<String>);

fn collect(
    mut s: MessageReader<CollisionStarted<Vec3>>,
    mut e: MessageReader<CollisionEnded>,
    mut log: ResMut<Log>,
) {
    for ev in s.read() {
        log.0.push(format!(
            "start {} {} {:.3}",
            ev.entity, ev.other, ev.time_of_impact
        ));
    }
    for ev in e.read() {
        log.0
            .push(format!("end {} {} {:?}", ev.entity, ev.other, ev.reason));
    }
}

#[test]
fn bullet_through_wall() {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins((
            AabbTreePlugin::<Vec3>::default(),
            VelocityPlugin::<Vec3>::default(),
        ))
        .insert_resource(Time::<Fixed>::from_hz(60.0))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .init_resource::<Log>()
        .add_systems(FixedPostUpdate, collect.after(CollisionSystems::Events));
    app.world_mut().spawn((
        Transform::from_xyz(0.0, 0.0, 0.0),
        Aabb::new(Vec3::new(0.05, 2.0, 2.0)),
    ));
    app.world_mut().spawn((
        Transform::from_xyz(-25.0, 0.0, 0.0),
        Aabb::new(Vec3::splat(0.25)),
        Velocity(Vec3::X * 600.0),
    ));
    for _ in 0..20 {
        app.update();
    }
    let log = &app.world().resource::<Log>().0;
    println!("{log:#?}");
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log[0].starts_with("start"));
    assert!(log[1].contains("PassedThrough"));
}
