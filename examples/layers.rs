//! Collision layers in 2D: who collides with whom. Headless.
//!
//! Players collide with coins and walls, coins only with players, ghosts with nothing but
//! walls. Two entities interact when each one's memberships meet the other's filters.
//! The layers are named by the game's own enum (`CollisionLayer`).
//! Run: `cargo run --example layers`.

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::d2::*;

/// The game's layers.
#[derive(Clone, Copy)]
enum Layer {
    Player,
    Coin,
    Wall,
    Ghost,
}

impl CollisionLayer for Layer {
    fn index(self) -> u32 {
        self as u32
    }
}

fn main() {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        bevy::transform::TransformPlugin,
        bevy::log::LogPlugin::default(),
    ))
    .add_plugins((AabbTreePlugin::default(), VelocityPlugin::default()))
    .insert_resource(Time::<Fixed>::from_hz(60.0))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 60.0,
    )))
    .add_systems(Startup, setup)
    .add_systems(
        FixedPostUpdate,
        (collect_coins, report).after(CollisionSystems::Events),
    );
    for _ in 0..240 {
        app.update();
    }
}

fn setup(mut commands: Commands) {
    // The player and a ghost both walk right, through a row of coins, into a wall.
    commands.spawn((
        Name::new("player"),
        Transform::from_xyz(0.0, 0.0, 0.0),
        Aabb::new(Vec2::new(0.4, 0.8)),
        Velocity(Vec2::X * 4.0),
        CollisionLayers::from_layers([Layer::Player], [Layer::Coin, Layer::Wall]),
    ));
    commands.spawn((
        Name::new("ghost"),
        Transform::from_xyz(0.0, 0.5, 0.0),
        BoundingSphere::new(0.4),
        Velocity(Vec2::X * 4.0),
        CollisionLayers::from_layers([Layer::Ghost], [Layer::Wall]),
    ));
    for i in 1..4 {
        commands.spawn((
            Name::new(format!("coin {i}")),
            Transform::from_xyz(i as f32 * 2.0, 0.0, 0.0),
            BoundingSphere::new(0.25),
            CollisionLayers::from_layers([Layer::Coin], [Layer::Player]),
        ));
    }
    commands.spawn((
        Name::new("wall"),
        Transform::from_xyz(9.0, 0.0, 0.0),
        Aabb::new(Vec2::new(0.25, 5.0)),
        CollisionLayers::from_layers([Layer::Wall], [Layer::Player, Layer::Ghost]),
    ));
}

/// A coin touched by the player is collected (despawned; its pair ends with
/// `EndReason::Removed`). The ghost passes coins without a word.
fn collect_coins(
    mut commands: Commands,
    mut started: MessageReader<CollisionStarted>,
    layers: Query<(&CollisionLayers, &Name)>,
) {
    for hit in started.read() {
        for e in [hit.entity, hit.other] {
            if let Ok((l, name)) = layers.get(e)
                && l.memberships == Layer::Coin.mask()
            {
                info!("collected {name}");
                commands.entity(e).despawn();
            }
        }
    }
}

/// Walkers stop at the wall.
fn report(
    mut started: MessageReader<CollisionStarted>,
    layers: Query<&CollisionLayers>,
    mut walkers: Query<(&Name, &mut Velocity)>,
) {
    for hit in started.read() {
        let is_wall = |e: Entity| {
            layers
                .get(e)
                .is_ok_and(|l| l.memberships == Layer::Wall.mask())
        };
        let walker = match (is_wall(hit.entity), is_wall(hit.other)) {
            (true, false) => hit.other,
            (false, true) => hit.entity,
            _ => continue,
        };
        if let Ok((name, mut velocity)) = walkers.get_mut(walker) {
            info!("{name} reached the wall and stops");
            velocity.0 = Vec2::ZERO;
        }
    }
}
