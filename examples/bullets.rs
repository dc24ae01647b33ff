//! Fast bullets against thin walls, in 2D with the debug overlay: every bullet moves about
//! ten times the wall's thickness per tick, yet none gets through. The yellow rings are
//! swept hits: places where a bullet was caught between two ticks. Press S to switch the
//! swept tests off and watch the bullets tunnel; F1 hides the overlay.
//!
//! Run: `cargo run --features examples --example bullets`

use bevy::prelude::*;
use bevy_aabb_tree::d2::*;

/// A bullet and the tick it was fired at.
#[derive(Component)]
struct Bullet(u32);

fn main() {
    App::new()
        .add_plugins(DefaultPlugins)
        .add_plugins((
            AabbTreePlugin::default(),
            VelocityPlugin::default(),
            AabbTreeDebugPlugin::default(),
        ))
        .add_systems(Startup, setup)
        .add_systems(FixedUpdate, (fire, cull))
        .add_systems(Update, toggle_sweeps)
        // A bullet that touches a wall stops there (a real game would spawn sparks).
        .add_observer(
            |hit: On<CollisionStarted>, mut bullets: Query<&mut Velocity, With<Bullet>>| {
                if let Ok(mut v) = bullets.get_mut(hit.entity) {
                    v.0 = Vec2::ZERO;
                }
            },
        )
        .run();
}

fn setup(mut commands: Commands) {
    commands.spawn((
        Camera2d,
        Projection::Orthographic(OrthographicProjection {
            scale: 1.0 / 16.0,
            ..OrthographicProjection::default_2d()
        }),
    ));
    // Three walls, 0.1 units thick.
    for x in [-10.0, 5.0, 20.0] {
        commands.spawn((
            Transform::from_xyz(x, 0.0, 0.0),
            Aabb::new(Vec2::new(0.05, 12.0)),
            Sprite::from_color(Color::WHITE, Vec2::new(0.1, 24.0)),
        ));
    }
}

/// One bullet per tick from the left edge, 60 units/s × 10 = 600 units/s: 10 units per tick
/// at 60 Hz.
fn fire(mut commands: Commands, mut n: Local<u32>) {
    *n += 1;
    let y = ((*n % 40) as f32 - 20.0) * 0.5;
    commands.spawn((
        Bullet(*n),
        Transform::from_xyz(-30.0, y, 1.0),
        Aabb::new(Vec2::splat(0.15)),
        Velocity(Vec2::new(600.0, 30.0 * (*n as f32 * 0.37).sin())),
        Sprite::from_color(Color::srgb(1.0, 0.8, 0.2), Vec2::splat(0.3)),
    ));
}

/// Bullets leave after two seconds, stopped or not, or when they fly off screen.
fn cull(mut commands: Commands, q: Query<(Entity, &Transform, &Bullet)>, mut tick: Local<u32>) {
    *tick += 1;
    for (e, t, bullet) in &q {
        if t.translation.x > 40.0 || *tick - bullet.0 > 120 {
            commands.entity(e).despawn();
        }
    }
}

fn toggle_sweeps(keys: Res<ButtonInput<KeyCode>>, mut config: ResMut<CollisionConfig>) {
    if keys.just_pressed(KeyCode::KeyS) {
        config.swept = !config.swept;
        info!("swept tests {}", if config.swept { "on" } else { "off" });
    }
}
