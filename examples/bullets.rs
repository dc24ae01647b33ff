//! Fast bullets against thin walls, in 2D with the debug overlay: every bullet moves about
//! ten times a wall's thickness per tick, yet none gets through a wall. A gun fires from
//! `Update` (as a game fires on input): new bullets are swept from the muzzle at their
//! first tick, and spent bullets are reused from a pool with `Teleported`, swept from the
//! muzzle again. A bullet stops at its earliest hit of the tick: the walls have gaps, and
//! the enemies (red) behind them are hit only by bullets that found a way through.
//! The yellow rings are swept hits. Press S to switch the swept tests off and watch the
//! bullets tunnel; F1 hides the overlay.
//!
//! Run: `cargo run --features examples --example bullets`
//! Headless check: `... --example bullets -- --screenshot shot.png --frames 150`.

#[path = "support/demo.rs"]
#[allow(dead_code)] // The bullets use the command line and the screenshot only.
mod demo;

use bevy::platform::collections::HashSet;
use bevy::prelude::*;
use bevy_aabb_tree::d2::*;

/// A bullet in flight.
#[derive(Component)]
struct Bullet;

/// A spent bullet, parked out of sight until the gun reuses it.
#[derive(Component)]
struct Parked;

/// A target behind the walls.
#[derive(Component)]
struct Enemy;

/// Where spent bullets wait: far from everything.
const PARK: Vec3 = Vec3::new(0.0, -1000.0, 1.0);
/// The muzzle.
const GUN: Vec3 = Vec3::new(-30.0, 0.0, 1.0);
/// The bullets' layer: they hit everything but each other (three leave the muzzle
/// together). Parked bullets are in no layer.
const FLYING: CollisionLayers = CollisionLayers::new(1, !1);

/// The bullets that stopped in this frame's ticks: a bullet acts on its first start only,
/// which is its earliest hit (a tick's starts come earliest first).
#[derive(Resource, Default)]
struct Spent(HashSet<Entity>);

/// How many hits of each kind, for the log.
#[derive(Resource, Default)]
struct Score {
    walls: u32,
    enemies: u32,
}

fn main() {
    let mut app = App::new();
    app.add_plugins(DefaultPlugins)
        .add_plugins((
            AabbTreePlugin::default(),
            VelocityPlugin::default(),
            AabbTreeDebugPlugin::default(),
        ))
        .init_resource::<Spent>()
        .init_resource::<Score>()
        .add_systems(Startup, setup)
        .add_systems(Update, (fire, toggle_sweeps, report))
        .add_systems(FixedUpdate, cull)
        .add_observer(stop_at_first_hit);
    demo::screenshot_plugin(&mut app, demo::DemoArgs::parse());
    app.run();
}

fn setup(mut commands: Commands) {
    commands.spawn((
        Camera2d,
        Projection::Orthographic(OrthographicProjection {
            scale: 1.0 / 16.0,
            ..OrthographicProjection::default_2d()
        }),
    ));
    // Three walls, 0.1 units thick, each with a gap 3 units high: the gaps line up for
    // the bullets fired about 0.2 radians up.
    for (x, gap) in [(-10.0, 4.0), (5.0, 7.0), (20.0, 10.0)] {
        for (from, to) in [(-12.0, gap - 1.5), (gap + 1.5, 12.0)] {
            let half = Vec2::new(0.05, (to - from) * 0.5);
            commands.spawn((
                Transform::from_xyz(x, (from + to) * 0.5, 0.0),
                Aabb::new(half),
                Static,
                Sprite::from_color(Color::WHITE, half * 2.0),
            ));
        }
    }
    for y in -5..=8 {
        commands.spawn((
            Enemy,
            Transform::from_xyz(30.0, y as f32 * 2.0, 0.0),
            Aabb::new(Vec2::splat(0.6)),
            Sprite::from_color(Color::srgb(0.9, 0.2, 0.2), Vec2::splat(1.2)),
        ));
    }
}

/// Three bullets a frame at 600 units/s (10 units per tick at 60 Hz), fanned out: a
/// parked bullet is reused when there is one (moved to the muzzle, then `Teleported`, so
/// the jump from the park hits nothing and the flight from the muzzle is swept), a new one
/// spawned otherwise (swept from the muzzle at its first tick).
fn fire(
    mut commands: Commands,
    mut parked: Query<(Entity, &mut Transform, &mut Velocity), With<Parked>>,
    mut spent: ResMut<Spent>,
    mut n: Local<u32>,
) {
    spent.0.clear();
    let mut pool = parked.iter_mut();
    for _ in 0..3 {
        *n += 1;
        let angle = ((*n * 37) % 100) as f32 / 100.0 * 0.5 - 0.25;
        let velocity = Vec2::from_angle(angle) * 600.0;
        match pool.next() {
            Some((entity, mut transform, mut v)) => {
                transform.translation = GUN;
                v.0 = velocity;
                commands.entity(entity).remove::<Parked>().insert((
                    Teleported,
                    FLYING,
                    Visibility::Visible,
                ));
            }
            None => {
                commands.spawn((
                    Bullet,
                    Transform::from_translation(GUN),
                    Aabb::new(Vec2::splat(0.15)),
                    Velocity(velocity),
                    FLYING,
                    Sprite::from_color(Color::srgb(1.0, 0.8, 0.2), Vec2::splat(0.3)),
                ));
            }
        }
    }
}

/// A bullet stops at the first start it sees, its earliest hit in the tick; the tick's
/// later starts of the same bullet (a wall behind the first, an enemy) are ignored.
fn stop_at_first_hit(
    hit: On<CollisionStarted>,
    bullets: Query<(), Flying>,
    enemies: Query<(), With<Enemy>>,
    mut spent: ResMut<Spent>,
    mut score: ResMut<Score>,
    mut commands: Commands,
) {
    let bullet = hit.entity;
    if !bullets.contains(bullet) || !spent.0.insert(bullet) {
        return;
    }
    if enemies.contains(hit.other) {
        score.enemies += 1;
    } else {
        score.walls += 1;
    }
    park(&mut commands, bullet);
}

fn park(commands: &mut Commands, bullet: Entity) {
    commands.entity(bullet).insert((
        Parked,
        Transform::from_translation(PARK),
        Velocity(Vec2::ZERO),
        CollisionLayers::NONE,
        Teleported,
        Visibility::Hidden,
    ));
}

/// Bullets in flight.
type Flying = (With<Bullet>, Without<Parked>);

/// Bullets that flew off screen are parked.
fn cull(mut commands: Commands, q: Query<(Entity, &Transform), Flying>) {
    for (e, t) in &q {
        if t.translation.x > 40.0 || t.translation.y.abs() > 30.0 {
            park(&mut commands, e);
        }
    }
}

fn report(score: Res<Score>, time: Res<Time>, mut last: Local<f32>) {
    if time.elapsed_secs() - *last >= 2.0 {
        *last = time.elapsed_secs();
        info!("hits: {} walls, {} enemies", score.walls, score.enemies);
    }
}

fn toggle_sweeps(keys: Res<ButtonInput<KeyCode>>, mut config: ResMut<CollisionConfig>) {
    if keys.just_pressed(KeyCode::KeyS) {
        config.swept = !config.swept;
        info!("swept tests {}", if config.swept { "on" } else { "off" });
    }
}
