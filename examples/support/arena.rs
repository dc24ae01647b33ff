//! The rollback arena: a 2D room of static walls, two players (characters) walking and
//! jumping on their inputs, and bullets from a pool that the players fire, which stop at
//! the first wall, player or bullet they hit and go back to the pool. Everything runs in
//! `bevy_ggrs`'s `GgrsSchedule`, registered for rollback with `AabbTreeRollbackPlugin`.
//!
//! Shared by the `rollback_arena` example and the `ggrs_synctest` test, which runs it
//! under `bevy_ggrs`'s `SyncTestSession`.

use std::time::Duration;

use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::d2::*;
use bevy_ggrs::ggrs::{PlayerType, SessionBuilder};
use bevy_ggrs::prelude::*;
use bevy_ggrs::{LocalInputs, LocalPlayers};

/// The inputs: one byte a player.
pub type ArenaConfig = GgrsConfig<u8>;

/// Input bits.
pub const LEFT: u8 = 1 << 0;
pub const RIGHT: u8 = 1 << 1;
pub const JUMP: u8 = 1 << 2;
pub const FIRE: u8 = 1 << 3;

/// Bullets in the pool.
pub const BULLETS: usize = 12;
/// Ticks a second.
pub const FPS: usize = 60;
/// Where spent bullets wait, far from the arena.
const PARKED: Vec3 = Vec3::new(0.0, -1000.0, 0.0);
const BULLET_SPEED: f32 = 30.0;
const GRAVITY: f32 = -30.0;

/// A player and its input slot.
#[derive(Component, Clone, Copy, Debug)]
pub struct Player {
    pub handle: usize,
    /// Ticks until it may fire again.
    pub cooldown: u32,
    /// Which way it faces: -1 or 1.
    pub facing: f32,
}

/// A bullet of the pool, in flight or parked.
#[derive(Component, Clone, Copy, Debug, Default)]
pub struct Bullet {
    pub live: bool,
    /// The player who fired it (its bullets do not hit it).
    pub owner: usize,
}

/// Counts the test reads: contacts started, bullets fired and stopped.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub struct Tally {
    pub started: u64,
    pub fired: u64,
    pub stopped: u64,
}

/// Random inputs from a seed: the same seed, the same inputs.
#[derive(Resource)]
pub struct InputSource(pub u64);

impl InputSource {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// The app of the arena, headless, stepping one rollback frame per update. A
/// `SyncTestSession` with `check_distance` rolls back and replays every frame;
/// `seed` picks the random inputs.
pub fn arena_app(check_distance: usize, seed: u64) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        // One rollback frame per update, whatever the machine's speed.
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_nanos(
            1_000_000_000 / FPS as u64 + 1,
        )))
        .add_plugins(GgrsPlugin::<ArenaConfig>::default())
        .insert_resource(RollbackFrameRate(FPS))
        .add_plugins((
            AabbTreePlugin::new(GgrsSchedule),
            CharacterPlugin::new(GgrsSchedule),
            AabbTreeRollbackPlugin::default(),
        ))
        .rollback_component_with_copy::<Transform>()
        .rollback_component_with_copy::<Player>()
        .rollback_component_with_copy::<Bullet>()
        .insert_resource(InputSource(seed))
        .init_resource::<Tally>()
        .add_systems(Startup, spawn_arena)
        .add_systems(ReadInputs, read_inputs)
        .add_systems(
            GgrsSchedule,
            (
                (steer_players, move_bullets)
                    .chain()
                    .before(CollisionSystems::Prepare),
                stop_bullets
                    .after(CollisionSystems::Events)
                    .before(CharacterSystems::Move),
            ),
        );
    let mut builder = SessionBuilder::<ArenaConfig>::new()
        .with_num_players(2)
        .expect("two players")
        .with_max_prediction_window(check_distance.max(1) + 1)
        .with_check_distance(check_distance);
    for handle in 0..2 {
        builder = builder
            .add_player(PlayerType::Local, handle)
            .expect("a local player");
    }
    let session = builder
        .start_synctest_session()
        .expect("a sync test session");
    app.insert_resource(Session::SyncTest(session));
    app
}

/// The walls (static), two players and the pool, every one with `Rollback`.
fn spawn_arena(mut commands: Commands) {
    let wall = |commands: &mut Commands, x: f32, y: f32, hx: f32, hy: f32| {
        commands.spawn((
            Transform::from_xyz(x, y, 0.0),
            Aabb::new(Vec2::new(hx, hy)),
            Static,
            Rollback,
        ));
    };
    // Floor, ceiling, sides, and two pillars and a ledge in the middle.
    wall(&mut commands, 0.0, -0.5, 20.0, 0.5);
    wall(&mut commands, 0.0, 15.5, 20.0, 0.5);
    wall(&mut commands, -20.5, 7.5, 0.5, 8.0);
    wall(&mut commands, 20.5, 7.5, 0.5, 8.0);
    wall(&mut commands, -6.0, 1.5, 0.5, 1.5);
    wall(&mut commands, 6.0, 1.5, 0.5, 1.5);
    wall(&mut commands, 0.0, 5.0, 3.0, 0.25);
    for handle in 0..2 {
        let x = if handle == 0 { -10.0 } else { 10.0 };
        commands.spawn((
            Transform::from_xyz(x, 1.0, 0.0),
            Aabb::new(Vec2::new(0.4, 0.8)),
            CharacterController::new(Vec2::Y),
            CollidingEntities::default(),
            Player {
                handle,
                cooldown: 0,
                facing: if handle == 0 { 1.0 } else { -1.0 },
            },
            Rollback,
        ));
    }
    for _ in 0..BULLETS {
        commands.spawn((
            Transform::from_translation(PARKED),
            BoundingSphere::new(0.15),
            Velocity(Vec2::ZERO),
            Bullet::default(),
            Rollback,
        ));
    }
}

/// Random inputs for both players.
fn read_inputs(
    mut commands: Commands,
    players: Res<LocalPlayers>,
    mut source: ResMut<InputSource>,
) {
    let mut inputs = HashMap::new();
    for handle in &players.0 {
        inputs.insert(*handle, (source.next() >> 56) as u8);
    }
    commands.insert_resource(LocalInputs::<ArenaConfig>(inputs));
}

/// Walk, jump and fire on the inputs. A fired bullet jumps from the pool to the muzzle
/// (`Teleported`) and is swept from there.
fn steer_players(
    mut commands: Commands,
    inputs: Res<PlayerInputs<ArenaConfig>>,
    time: Res<Time>,
    mut players: Query<(
        &mut Player,
        &mut CharacterController,
        &CharacterState,
        &Transform,
    )>,
    mut bullets: Query<(Entity, &mut Bullet, &mut Transform, &mut Velocity), Without<Player>>,
    mut tally: ResMut<Tally>,
) {
    let dt = time.delta_secs();
    let mut sorted: Vec<_> = players.iter_mut().collect();
    sorted.sort_by_key(|p| p.0.handle);
    for (mut player, mut controller, state, at) in sorted {
        let (input, _) = inputs[player.handle];
        let mut x = 0.0;
        if input & LEFT != 0 {
            x -= 1.0;
        }
        if input & RIGHT != 0 {
            x += 1.0;
        }
        if x != 0.0 {
            player.facing = x;
        }
        let mut vy = controller.velocity.y + GRAVITY * dt;
        if state.grounded {
            vy = if input & JUMP != 0 { 12.0 } else { 0.0 };
        }
        controller.velocity = Vec2::new(x * 8.0, vy.max(-40.0));
        player.cooldown = player.cooldown.saturating_sub(1);
        if input & FIRE != 0 && player.cooldown == 0 {
            // The free bullet of lowest id: the same one on every run.
            let free = bullets.iter_mut().filter(|b| !b.1.live).min_by_key(|b| b.0);
            if let Some((entity, mut bullet, mut transform, mut velocity)) = free {
                player.cooldown = 12;
                *bullet = Bullet {
                    live: true,
                    owner: player.handle,
                };
                transform.translation = at.translation + Vec3::new(player.facing * 0.7, 0.2, 0.0);
                velocity.0 = Vec2::new(player.facing * BULLET_SPEED, 0.0);
                commands.entity(entity).insert(Teleported);
                tally.fired += 1;
            }
        }
    }
}

/// Bullets fly straight.
fn move_bullets(time: Res<Time>, mut bullets: Query<(&Bullet, &Velocity, &mut Transform)>) {
    let dt = time.delta_secs();
    for (bullet, velocity, mut transform) in &mut bullets {
        if bullet.live {
            transform.translation += velocity.0.extend(0.0) * dt;
        }
    }
}

/// A bullet's first contact of the tick stops it: back to the pool, where it jumps
/// (`Teleported`) so that its trip there hits nothing.
fn stop_bullets(
    mut commands: Commands,
    mut started: MessageReader<CollisionStarted>,
    players: Query<&Player>,
    mut bullets: Query<(&mut Bullet, &mut Transform, &mut Velocity)>,
    mut tally: ResMut<Tally>,
) {
    for hit in started.read() {
        tally.started += 1;
        for (me, other) in [(hit.entity, hit.other), (hit.other, hit.entity)] {
            let Ok((mut bullet, mut transform, mut velocity)) = bullets.get_mut(me) else {
                continue;
            };
            let own = players.get(other).is_ok_and(|p| p.handle == bullet.owner);
            if !bullet.live || own {
                continue;
            }
            bullet.live = false;
            transform.translation = PARKED;
            velocity.0 = Vec2::ZERO;
            commands.entity(me).insert(Teleported);
            tally.stopped += 1;
        }
    }
}
