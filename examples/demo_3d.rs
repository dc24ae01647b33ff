//! The 3D demo: crates (half of them with rounded edges), balls and capsules bouncing in a
//! box, thin walls, and bullets far faster than the walls are thick, which the swept test
//! stops anyway. The debug overlay shows the boxes, the tree and the numbers (F1 hides it).
//!
//! Run: `cargo run --release --features examples --example demo_3d`
//! Headless check: `... --example demo_3d -- --screenshot shot.png --frames 150`

#[path = "support/demo.rs"]
mod demo;

use bevy::prelude::*;
use bevy::window::WindowResolution;
use bevy_aabb_tree::d3::*;
use demo::{Arena, Bouncy, DemoArgs, Lcg};

const BODIES: usize = 1500;
const BODY: u32 = 1 << 0;
const WALL: u32 = 1 << 1;
const BULLET: u32 = 1 << 2;

#[derive(Component)]
struct Bullet;

#[derive(Resource)]
struct BulletLook(Handle<Mesh>, Handle<StandardMaterial>);

fn main() {
    let args = DemoArgs::parse();
    let mut app = App::new();
    app.add_plugins(DefaultPlugins.set(WindowPlugin {
        primary_window: Some(Window {
            title: "bevy_aabb_tree: 3D demo".into(),
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
    .insert_resource(Arena(Vec3::new(30.0, 12.0, 18.0)))
    // Fewer tree levels than the default, so the bodies stay visible in 3D.
    .insert_resource(bevy_aabb_tree::debug::DebugOverlay {
        depth_range: (1, 3),
        ..default()
    })
    .add_systems(Startup, setup)
    .add_systems(FixedUpdate, (demo::bounce::<Vec3>, fire, cull_bullets))
    .add_observer(stop_bullet);
    demo::screenshot_plugin(&mut app, args);
    app.run();
}

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    commands.spawn((
        Camera3d::default(),
        Transform::from_xyz(-4.0, 42.0, 80.0).looking_at(Vec3::new(8.0, -4.0, 0.0), Vec3::Y),
    ));
    commands.spawn((
        DirectionalLight {
            illuminance: 8000.0,
            ..default()
        },
        Transform::from_xyz(10.0, 30.0, 20.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    let crate_mat = materials.add(StandardMaterial {
        base_color_texture: Some(assets.load("crate.png")),
        ..default()
    });
    let ball_mat = materials.add(StandardMaterial {
        base_color_texture: Some(assets.load("ball.png")),
        ..default()
    });
    let cube = meshes.add(Cuboid::new(1.0, 1.0, 1.0));
    let sphere = meshes.add(Sphere::new(1.0).mesh().uv(12, 8));
    // A capsule standing along y: radius 0.5, its segment 1 long (half length 0.5).
    let capsule = meshes.add(bevy::math::primitives::Capsule3d::new(0.5, 1.0));
    let capsule_mat = materials.add(StandardMaterial {
        base_color: Color::srgb(0.55, 0.8, 0.5),
        ..default()
    });
    commands.insert_resource(BulletLook(
        meshes.add(Sphere::new(0.3).mesh().uv(8, 6)),
        materials.add(StandardMaterial {
            base_color: Color::srgb(1.0, 0.85, 0.2),
            emissive: LinearRgba::rgb(2.0, 1.6, 0.2),
            ..default()
        }),
    ));

    let mut rng = Lcg(7);
    for i in 0..BODIES {
        let p = Vec3::new(
            rng.range(-30.0, 30.0),
            rng.range(-12.0, 12.0),
            rng.range(-18.0, 18.0),
        );
        let dir = Vec3::new(
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
        )
        .normalize_or(Vec3::X);
        let speed = rng.range(1.0, 5.0);
        let size = rng.range(0.3, 0.6);
        let mut entity = commands.spawn((
            Transform::from_translation(p).with_scale(Vec3::splat(size)),
            Velocity(dir * speed),
            CollisionLayers::new(BODY, BODY | BULLET),
            Bouncy,
        ));
        // The colliders are in local space: the transform's scale sizes them.
        if i % 3 == 2 {
            entity.insert((
                Capsule::new(0.5, 0.5),
                Mesh3d(capsule.clone()),
                MeshMaterial3d(capsule_mat.clone()),
            ));
        } else if i % 2 == 0 {
            entity.insert((Mesh3d(cube.clone()), MeshMaterial3d(crate_mat.clone())));
            // Every other crate has its edges rounded by 0.15: the same outer size.
            if i % 6 == 0 {
                entity.insert(RoundedAabb::from_outer(Vec3::splat(0.5), 0.15));
            } else {
                entity.insert(Aabb::new(Vec3::splat(0.5)));
            }
        } else {
            entity.insert((
                BoundingSphere::new(1.0),
                Mesh3d(sphere.clone()),
                MeshMaterial3d(ball_mat.clone()),
            ));
        }
    }
    // Thin walls across the bullets' path: 0.2 thick.
    let wall_mat = materials.add(StandardMaterial {
        base_color: Color::srgba(0.9, 0.9, 1.0, 0.35),
        alpha_mode: AlphaMode::Blend,
        ..default()
    });
    let wall_mesh = meshes.add(Cuboid::new(0.2, 16.0, 24.0));
    for x in [-12.0, 6.0, 24.0] {
        commands.spawn((
            Transform::from_xyz(x, 0.0, 0.0),
            Aabb::new(Vec3::new(0.1, 8.0, 12.0)),
            CollisionLayers::new(WALL, BULLET),
            Static,
            Mesh3d(wall_mesh.clone()),
            MeshMaterial3d(wall_mat.clone()),
        ));
    }
}

/// Fires a bullet at 300 units/s (about 4.7 units per tick) every few ticks.
fn fire(mut commands: Commands, look: Res<BulletLook>, mut tick: Local<u32>) {
    *tick += 1;
    if !(*tick).is_multiple_of(4) {
        return;
    }
    let k = *tick / 4;
    let (y, z) = ((k % 12) as f32 - 5.5, ((k / 12) % 16) as f32 * 1.4 - 10.5);
    commands.spawn((
        Bullet,
        Transform::from_xyz(-31.0, y, z),
        BoundingSphere::new(0.3),
        Velocity(Vec3::X * 300.0),
        CollisionLayers::new(BULLET, WALL | BODY),
        Mesh3d(look.0.clone()),
        MeshMaterial3d(look.1.clone()),
    ));
}

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
        if t.translation.x > 40.0 {
            commands.entity(e).despawn();
        }
    }
}
