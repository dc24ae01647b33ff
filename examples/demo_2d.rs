//! The 2D demo: a few thousand crates (half of them with rounded corners), balls and
//! capsules bouncing around, thin walls, and bullets far faster than the walls are thick,
//! which the swept test stops anyway. The debug overlay shows the boxes, the tree and the
//! numbers (F1 hides it).
//!
//! Run: `cargo run --release --features examples --example demo_2d`
//! Headless check: `... --example demo_2d -- --screenshot shot.png --frames 150`

#[path = "support/demo.rs"]
mod demo;

use bevy::prelude::*;
use bevy::window::WindowResolution;
use bevy_aabb_tree::d2::*;
use demo::{Arena, Bouncy, DemoArgs, Lcg};

const BODIES: usize = 2000;
/// The demo's layers.
#[derive(Clone, Copy)]
enum Layer {
    Body,
    Wall,
    Bullet,
}

impl CollisionLayer for Layer {
    fn index(self) -> u32 {
        self as u32
    }
}

#[derive(Component)]
struct Bullet;

#[derive(Resource)]
struct Textures {
    bullet: Handle<Image>,
}

fn main() {
    let args = DemoArgs::parse();
    let mut app = App::new();
    app.add_plugins(DefaultPlugins.set(WindowPlugin {
        primary_window: Some(Window {
            title: "bevy_aabb_tree: 2D demo".into(),
            resolution: WindowResolution::new(1280, 720),
            ..default()
        }),
        ..default()
    }))
    .add_plugins((
        AabbTreePlugin::default(),
        VelocityPlugin::default(),
        AabbTreeDebugPlugin::default(),
    ))
    .insert_resource(ClearColor(Color::srgb(0.07, 0.08, 0.1)))
    .insert_resource(Arena(Vec3::new(76.0, 42.0, 0.0)))
    .add_systems(Startup, setup)
    .add_systems(FixedUpdate, (demo::bounce::<Vec2>, fire, cull_bullets))
    .add_observer(stop_bullet);
    demo::screenshot_plugin(&mut app, args);
    app.run();
}

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    commands.spawn((
        Camera2d,
        Projection::Orthographic(OrthographicProjection {
            scale: 1.0 / 7.5,
            ..OrthographicProjection::default_2d()
        }),
        Transform::from_xyz(-6.0, 0.0, 0.0),
    ));
    let crate_tex = assets.load("crate.png");
    let ball_tex = assets.load("ball.png");
    commands.insert_resource(Textures {
        bullet: assets.load("bullet.png"),
    });

    // Capsules (a third of the bodies) are drawn as a capsule mesh the size of their shape.
    let capsule_color = materials.add(Color::srgb(0.55, 0.8, 0.5));
    let mut rng = Lcg(2024);
    for i in 0..BODIES {
        let p = Vec2::new(rng.range(-75.0, 75.0), rng.range(-41.0, 41.0));
        let angle = rng.range(0.0, std::f32::consts::TAU);
        let speed = rng.range(1.0, 6.0);
        let size = rng.range(0.25, 0.5);
        let mut entity = commands.spawn((
            Transform::from_translation(p.extend(0.0)),
            Velocity(Vec2::from_angle(angle) * speed),
            CollisionLayers::from_layers([Layer::Body], [Layer::Body, Layer::Bullet]),
            Bouncy,
        ));
        if i % 3 == 2 {
            // Half as long again as it is wide, standing or lying.
            let capsule = if i % 2 == 0 {
                Capsule::new(0.5 * size, size)
            } else {
                Capsule::new(0.5 * size, size).along(CapsuleAxis::X)
            };
            let mesh = meshes.add(bevy::math::primitives::Capsule2d::new(size, size));
            let turn = if i % 2 == 0 {
                0.0
            } else {
                std::f32::consts::FRAC_PI_2
            };
            entity.insert(capsule);
            entity.with_child((
                Transform::from_rotation(Quat::from_rotation_z(turn)),
                Mesh2d(mesh),
                MeshMaterial2d(capsule_color.clone()),
            ));
        } else if i % 2 == 0 {
            entity.insert(Sprite {
                image: crate_tex.clone(),
                custom_size: Some(Vec2::splat(2.0 * size)),
                ..default()
            });
            // Every other crate has its corners rounded by a third of its half size: the
            // same outer size, its corners slide off the others'.
            if i % 6 == 0 {
                entity.insert(RoundedAabb::from_outer(Vec2::splat(size), size / 3.0));
            } else {
                entity.insert(Aabb::new(Vec2::splat(size)));
            }
        } else {
            entity.insert((
                BoundingSphere::new(size),
                Sprite {
                    image: ball_tex.clone(),
                    custom_size: Some(Vec2::splat(2.0 * size)),
                    ..default()
                },
            ));
        }
    }
    // Thin walls: 0.2 units thick, far thinner than a bullet moves in a tick. They never
    // move: `Static` puts them in the static tree, where they cost nothing per tick.
    for x in [-40.0, -10.0, 20.0, 50.0] {
        commands.spawn((
            Transform::from_xyz(x, 0.0, 1.0),
            Aabb::new(Vec2::new(0.1, 18.0)),
            CollisionLayers::from_layers([Layer::Wall], [Layer::Bullet]),
            Static,
            Sprite::from_color(Color::WHITE, Vec2::new(0.2, 36.0)),
        ));
    }
    // A floor and a ceiling of unit tiles, edge to edge, under one map entity as a
    // tile-map crate spawns them. Static tiles never pair with each other.
    let map = commands
        .spawn((Transform::default(), Visibility::default()))
        .id();
    for y in [-42.5, 42.5] {
        for i in 0..152 {
            commands.spawn((
                Transform::from_xyz(i as f32 - 75.5, y, 0.5),
                Aabb::new(Vec2::splat(0.5)),
                CollisionLayers::from_layers([Layer::Wall], [Layer::Body]),
                Static,
                Sprite::from_color(Color::srgb(0.25, 0.3, 0.45), Vec2::splat(0.92)),
                ChildOf(map),
            ));
        }
    }
}

/// Fires a bullet at 300 units/s (about 4.7 units per tick) every few ticks.
fn fire(mut commands: Commands, textures: Res<Textures>, mut tick: Local<u32>) {
    *tick += 1;
    if !(*tick).is_multiple_of(4) {
        return;
    }
    let y = ((*tick / 4) % 36) as f32 - 17.5;
    commands.spawn((
        Bullet,
        Transform::from_xyz(-76.0, y, 2.0),
        BoundingSphere::new(0.3),
        Velocity(Vec2::X * 300.0),
        CollisionLayers::from_layers([Layer::Bullet], [Layer::Wall, Layer::Body]),
        Sprite {
            image: textures.bullet.clone(),
            custom_size: Some(Vec2::splat(0.6)),
            ..default()
        },
    ));
}

/// A bullet that touches anything is gone; without the swept test it would fly through
/// the walls.
fn stop_bullet(
    hit: On<CollisionStarted>,
    bullets: Query<(), With<Bullet>>,
    mut commands: Commands,
) {
    if bullets.contains(hit.entity) {
        commands.entity(hit.entity).try_despawn();
    }
}

fn cull_bullets(mut commands: Commands, q: Query<(Entity, &Transform), With<Bullet>>) {
    for (e, t) in &q {
        if t.translation.x > 80.0 {
            commands.entity(e).despawn();
        }
    }
}
