//! Smooth rendering between fixed ticks with `bevy_transform_interpolation`, in 2D.
//!
//! The collision pipeline runs at a deliberately low 10 ticks a second. Two rows of boxes
//! move right at the same speed: the top row has `TransformInterpolation` and glides, the
//! bottom row steps ten times a second. Each box jumps back to the left edge when it
//! leaves the screen, with `Teleported` (in `FixedUpdate`): the jump is drawn as a jump,
//! not eased across the screen, and not swept through the gate. The gate (a sensor)
//! turns white while a box is inside it: the events come from the fixed-step positions,
//! the same for both rows.
//!
//! Run: `cargo run --features examples,interpolation --example interpolation`
//! Headless check: `... --example interpolation -- --screenshot shot.png --frames 150`.

#[path = "support/demo.rs"]
#[allow(dead_code)] // The command line and the screenshot only.
mod demo;

use bevy::prelude::*;
use bevy_aabb_tree::d2::*;
use bevy_transform_interpolation::prelude::*;

/// The horizontal extent of the track: boxes jump back from the right edge to the left.
const EDGE: f32 = 12.0;
/// How far the world is drawn: pixels per unit.
const SCALE: f32 = 40.0;

/// The gate the boxes pass through.
#[derive(Component)]
struct Gate;

fn main() {
    let args = demo::DemoArgs::parse();
    let mut app = App::new();
    app.add_plugins(DefaultPlugins)
        .add_plugins((
            AabbTreePlugin::default(),
            VelocityPlugin::default(),
            TransformInterpolationPlugin::default(),
        ))
        .insert_resource(Time::<Fixed>::from_hz(10.0))
        .add_systems(Startup, setup)
        .add_systems(FixedUpdate, wrap.after(VelocitySystems::Integrate))
        .add_systems(Update, light_gate);
    demo::screenshot_plugin(&mut app, args);
    app.run();
}

fn setup(mut commands: Commands) {
    commands.spawn((Camera2d, Transform::from_scale(Vec3::splat(1.0 / SCALE))));
    for (y, eased) in [(2.0, true), (-2.0, false)] {
        for i in 0..5 {
            let x = -EDGE + i as f32 * 4.8;
            let mut entity = commands.spawn((
                Sprite::from_color(
                    if eased {
                        Color::srgb(0.3, 0.8, 0.4)
                    } else {
                        Color::srgb(0.9, 0.5, 0.2)
                    },
                    Vec2::splat(1.0),
                ),
                Transform::from_xyz(x, y, 1.0),
                Aabb::new(Vec2::splat(0.5)),
                Velocity(Vec2::X * 6.0),
            ));
            if eased {
                entity.insert(TransformInterpolation);
            }
        }
    }
    commands.spawn((
        Gate,
        Sprite::from_color(Color::srgb(0.3, 0.3, 0.5), Vec2::new(0.4, 8.0)),
        Transform::from_xyz(4.0, 0.0, 0.0),
        Aabb::new(Vec2::new(0.2, 4.0)),
        Static,
        Sensor,
        CollidingEntities::default(),
    ));
}

/// A box past the right edge jumps back to the left one: a jump, so `Teleported`.
fn wrap(mut commands: Commands, mut boxes: Query<(Entity, &mut Transform), With<Velocity>>) {
    for (entity, mut transform) in &mut boxes {
        if transform.translation.x > EDGE {
            transform.translation.x -= 2.0 * EDGE;
            commands.entity(entity).insert(Teleported);
        }
    }
}

/// The gate is white while a box is inside it.
fn light_gate(mut gate: Single<(&mut Sprite, &CollidingEntities), With<Gate>>) {
    let (ref mut sprite, inside) = *gate;
    sprite.color = if inside.is_empty() {
        Color::srgb(0.3, 0.3, 0.5)
    } else {
        Color::WHITE
    };
}
