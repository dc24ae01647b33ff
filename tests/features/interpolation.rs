//! Smooth rendering with `bevy_transform_interpolation` (feature `interpolation`): the
//! collision tick sees the fixed-step positions (the same events as without
//! interpolation), the frames between ticks show eased positions, and a `Teleported`
//! jump made in `FixedUpdate` is shown at its destination, not slid there.
#![cfg(feature = "interpolation")]

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::d2::*;
use bevy_transform_interpolation::prelude::*;

/// Where the bullet jumps, and at which fixed tick (counted by `Jump::ticks`).
#[derive(Resource, Default)]
struct Jump {
    ticks: u32,
    at: Option<u32>,
    to: f32,
    marker: bool,
}

#[derive(Component)]
struct Bullet;

/// Counts fixed ticks and makes the jump (in `FixedUpdate`, after the velocity moved it).
fn jump(
    mut commands: Commands,
    mut jump: ResMut<Jump>,
    mut bullet: Single<(Entity, &mut Transform), With<Bullet>>,
) {
    jump.ticks += 1;
    if Some(jump.ticks) == jump.at {
        bullet.1.translation.x = jump.to;
        if jump.marker {
            commands.entity(bullet.0).insert(Teleported);
        }
    }
}

/// The bullet's x at every frame (rendered) and the wall hits.
#[derive(Resource, Default)]
struct Seen {
    frames: Vec<f32>,
    hits: Vec<(u32, f32)>,
}

fn watch_frame(bullet: Single<&Transform, With<Bullet>>, mut seen: ResMut<Seen>) {
    seen.frames.push(bullet.translation.x);
}

fn watch_hits(
    mut started: MessageReader<CollisionStarted>,
    jump: Res<Jump>,
    mut seen: ResMut<Seen>,
) {
    for hit in started.read() {
        seen.hits.push((jump.ticks, hit.time_of_impact));
    }
}

/// A bullet at 12 units a second, ticks at 20 Hz, frames at 60: walls at x = 3 and 9.
fn app(interpolate: bool, jump_at: Option<u32>, marker: bool) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins((AabbTreePlugin::default(), VelocityPlugin::default()))
        .insert_resource(Time::<Fixed>::from_hz(20.0))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .insert_resource(Jump {
            at: jump_at,
            to: 20.0,
            marker,
            ..default()
        })
        .init_resource::<Seen>()
        .add_systems(FixedUpdate, jump.after(VelocitySystems::Integrate))
        .add_systems(FixedPostUpdate, watch_hits.after(CollisionSystems::Events))
        .add_systems(PostUpdate, watch_frame);
    if interpolate {
        app.add_plugins(TransformInterpolationPlugin::default());
    }
    let mut bullet = app.world_mut().spawn((
        Bullet,
        Transform::default(),
        Aabb::new(Vec2::splat(0.1)),
        Velocity(Vec2::X * 12.0),
    ));
    if interpolate {
        bullet.insert(TransformInterpolation);
    }
    for x in [3.0, 9.0] {
        app.world_mut().spawn((
            Transform::from_xyz(x, 0.0, 0.0),
            Aabb::new(Vec2::new(0.05, 2.0)),
            Static,
        ));
    }
    // What `App::run` does first (the easing plugin adds its core in `finish`).
    app.finish();
    app.cleanup();
    app
}

fn run(app: &mut App, frames: usize) -> Seen {
    for _ in 0..frames {
        app.update();
    }
    std::mem::take(&mut *app.world_mut().resource_mut::<Seen>())
}

#[test]
fn same_events_and_eased_frames() {
    let plain = run(&mut app(false, None, false), 90);
    let eased = run(&mut app(true, None, false), 90);
    // The tick reads the fixed-step positions: the same hits, at the same times.
    assert_eq!(plain.hits.len(), 2, "{:?}", plain.hits);
    assert_eq!(plain.hits, eased.hits);
    // Without easing, the bullet is drawn at the same x for the three frames of a tick;
    // eased, it moves every frame, never backwards and never further than a frame's share
    // of the fixed step (12 units a second for a 60th of a second: 0.2, a third of the
    // tick's 0.6), and once it moves, by exactly that share each frame.
    let distinct = |xs: &[f32]| xs.windows(2).filter(|w| w[1] != w[0]).count();
    assert!(distinct(&plain.frames) < plain.frames.len() / 2);
    assert!(distinct(&eased.frames) > eased.frames.len() * 3 / 4);
    let frame_step = 12.0 / 60.0;
    for w in eased.frames.windows(2) {
        assert!(w[1] >= w[0] - 1e-4, "eased backwards: {w:?}");
        assert!(
            w[1] - w[0] <= frame_step + 1e-4,
            "eased past a frame's step: {w:?}"
        );
    }
    let moving: Vec<f32> = eased
        .frames
        .windows(2)
        .map(|w| w[1] - w[0])
        .skip_while(|&d| d < frame_step / 2.0)
        .collect();
    assert!(moving.len() > eased.frames.len() * 3 / 4);
    for d in &moving {
        assert!(
            (d - frame_step).abs() < 1e-4,
            "an uneven frame: moved {d}, not {frame_step}"
        );
    }
}

#[test]
fn teleports_do_not_smear() {
    // The jump at tick 3 (x about 1.8) to x = 20: past both walls, which it must not hit.
    for marker in [true, false] {
        let seen = run(&mut app(true, Some(3), marker), 45);
        let smeared = seen.frames.iter().filter(|&&x| x > 2.5 && x < 19.5).count();
        if marker {
            assert_eq!(smeared, 0, "drawn along the jump: {:?}", seen.frames);
            assert!(seen.hits.is_empty(), "the jump was swept: {:?}", seen.hits);
        } else {
            // A jump without the marker is a motion: eased across (and swept).
            assert!(smeared > 0, "{:?}", seen.frames);
            assert!(!seen.hits.is_empty());
        }
    }
}
