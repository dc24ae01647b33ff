//! A small 2D platformer on the collision world, without a physics engine.
//!
//! - The level is a text map (`LEVEL` below): `#` a wall tile, `=` a one-way platform,
//!   `/` and `\` stairs rising to the right and to the left, `M` the moving platform and
//!   `-` its track, `~` water, `o` a coin, `P` the player's start, `.` (or a space)
//!   nothing. The tiles are `Static` colliders under one map entity, as a tile-map crate
//!   spawns them.
//! - The player is a capsule moved by [`CharacterController`] ([`CharacterPlugin`]): gravity
//!   pulls it down, the arrow keys (or A / D) run, Space (or W / Up) jumps when it stands
//!   on ground, Down (or S) drops through the one-way platform it stands on. It climbs the
//!   stairs' steps (its rounded bottom stands on their edges on the way), keeps to the ground going down them, rides the moving platform, jumps
//!   up through the one-way platforms and lands on them, and never snags on the seams
//!   between tiles.
//! - The water is a `Sensor`: it never blocks, and the collision events say when the
//!   player enters and leaves it (`CollisionStarted` / `CollisionEnded`): in the water
//!   the player turns blue, runs slower and sinks slowly.
//! - Coins are `Sensor` circles picked up through `CollisionStarted`; the score is shown
//!   above the level.
//! - The debug overlay is on: green the player's capsule, slate blue the static tiles and the
//!   static tree's nodes, circles the coins (F1 hides it). A yellow line traces where the
//!   player went.
//!
//! Run: `cargo run --features examples --example platformer`
//! Headless check: `... --example platformer -- --screenshot shot.png --frames 150`: with
//! no keyboard, an autopilot runs right, waits at the edge of a drop for ground ahead
//! (the moving platform) and jumps over what blocks it.

#[path = "support/demo.rs"]
#[allow(dead_code)] // The platformer uses the command line and the screenshot only.
mod demo;

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy::window::WindowResolution;
use bevy_aabb_tree::d2::*;
use demo::DemoArgs;

/// Collision layers: what the player stands on and runs into (tiles, stairs, platforms),
/// what it picks up, the water, and the player.
const WALL: u32 = 1 << 0;
const COIN: u32 = 1 << 1;
const WATER: u32 = 1 << 2;
const PLAYER: u32 = 1 << 3;

/// One tile is one world unit; every length below is in tiles. The player is a capsule
/// standing along y: this radius, and half this height overall (0.9 tall).
const PLAYER_RADIUS: f32 = 0.35;
const PLAYER_HALF_HEIGHT: f32 = 0.45;
const COIN_RADIUS: f32 = 0.3;
/// Running speed, tiles per second.
const RUN_SPEED: f32 = 7.0;
/// Jump take-off speed and gravity: a jump rises `JUMP_SPEED² / (2 GRAVITY)`, about 3.8
/// tiles, enough to clear a wall three tiles high.
const JUMP_SPEED: f32 = 17.0;
const GRAVITY: f32 = 38.0;
/// The fastest fall, so that a long fall stays readable.
const MAX_FALL: f32 = 20.0;
/// In the water: the running speed is scaled by this, and the player sinks no faster
/// than `WATER_MAX_FALL`.
const WATER_DRAG: f32 = 0.5;
const WATER_MAX_FALL: f32 = 3.0;
/// The character controller's highest step and how far down it follows the ground, in
/// tiles. The stairs' steps (`STEP`) must stay below `MAX_STEP` to be climbed by walking;
/// the snap reaches past one step, so running down the stairs keeps to them instead of
/// hopping from step to step.
const MAX_STEP: f32 = 0.25;
const SNAP: f32 = 0.3;
/// The stairs: each stair tile holds `STEPS` steps, each `STEP` high and wide, so a run
/// of stair tiles climbs one tile per tile (45°).
const STEPS: usize = 5;
const STEP: f32 = 1.0 / STEPS as f32;
/// A one-way platform's thickness: a slab at the top of its tiles, thinner than a wall.
const ONE_WAY_THICKNESS: f32 = 0.25;
/// The moving platform's thickness and speed (tiles per second).
const MOVER_THICKNESS: f32 = 0.4;
const MOVER_SPEED: f32 = 5.0;
/// The fixed tick: Bevy's default (64 Hz), which the plugin's step (`FixedPostUpdate`) follows.
const TICK: f64 = 1.0 / 64.0;
/// Points kept in the trail (three seconds of ticks).
const TRAIL: usize = 192;

/// The level. The autopilot's way (for the headless check) goes right from `P`, up the
/// stairs, waits on the ledge for the moving platform, rides it over the water to the far
/// ledge and goes down the other stairs.
const LEVEL: &str = "\
########################################
#......................................#
#......................................#
#..o.o.....o.o...........o.o...........#
#.======..######........======.........#
#......................................#
#..o.o...........o.o.o.........o.o.o...#
#.======........=======.......######...#
#......................................#
#..o.o.................................#
#.======../###---------MMM###\\...=====.#
#......../####~~~~~~~~~~~~####\\........#
#.P.o.o./#####~~~~~~~~~~~~#####\\.o.o.o.#
########################################";

/// The player, and how many water colliders it is in.
#[derive(Component, Default)]
struct Player {
    /// Water colliders it touches (from the collision events): it is in the water while
    /// this is above zero.
    in_water: u32,
    /// The run input of the last tick, for the autopilot's blocked test.
    last_run: f32,
}

/// A coin: gone when the player touches it.
#[derive(Component)]
struct Coin;

/// A water collider.
#[derive(Component)]
struct Water;

/// A platform moving back and forth along its track at `MOVER_SPEED`.
#[derive(Component)]
struct MovingPlatform {
    /// The center's x at the track's left end.
    left: f32,
    /// How far the center travels from the left end to the right end.
    travel: f32,
    /// Where along the track it is at time zero, and which way it goes first: the
    /// position of a ping-pong motion over `[0, 2 travel)` (`travel..2 travel` going
    /// back left).
    phase: f32,
}

/// The text showing the score.
#[derive(Component)]
struct ScoreText;

/// Coins picked up, out of how many the level holds.
#[derive(Resource, Default)]
struct Score {
    taken: u32,
    total: u32,
}

/// Where the player has been, drawn as a line.
#[derive(Component, Default)]
struct Trail(Vec<Vec2>);

/// Present in the headless screenshot mode: the player runs right on its own, waits at
/// drops and jumps over what blocks it.
#[derive(Resource)]
struct Autopilot;

/// A block of cells of one kind: its top-left cell, its length along x and its rows.
#[derive(Clone, Copy)]
struct Run {
    start: IVec2,
    len: i32,
    rows: i32,
}

/// A moving platform in the map: its cells and its track (the run of `-` and `M` cells
/// around it).
struct Mover {
    platform: Run,
    track: Run,
}

/// A parsed level: its size in tiles and what each cell holds.
#[derive(Default)]
struct Level {
    width: usize,
    height: usize,
    walls: Vec<IVec2>,
    /// Stair cells: rising to the right (`true`) or to the left.
    stairs: Vec<(IVec2, bool)>,
    /// One-way platforms, each horizontal run one collider: a player standing across two
    /// one-way tiles then drops through both at once.
    one_ways: Vec<Run>,
    /// Water, each block of runs of the same columns in successive rows one collider:
    /// moving about in the water raises no events at the seams.
    water: Vec<Run>,
    movers: Vec<Mover>,
    coins: Vec<IVec2>,
    start: IVec2,
}

impl Level {
    /// Parses a text map. Row 0 is the top line; cells are returned as (column, row from
    /// the bottom), so that `y` grows upwards as in the world. Unknown characters are
    /// empty cells, with a warning; a map without `P` starts the player in the top-left
    /// corner.
    fn parse(text: &str) -> Level {
        let lines: Vec<Vec<char>> = text
            .lines()
            .map(|l| l.trim_end_matches('\r').chars().collect())
            .collect();
        let height = lines.len();
        let width = lines.iter().map(Vec::len).max().unwrap_or(0);
        let mut level = Level {
            width,
            height,
            start: IVec2::new(1, height as i32 - 2),
            ..default()
        };
        let mut start_found = false;
        for (row, line) in lines.iter().enumerate() {
            let y = (height - 1 - row) as i32;
            for (x, &c) in line.iter().enumerate() {
                let cell = IVec2::new(x as i32, y);
                match c {
                    '#' => level.walls.push(cell),
                    '/' => level.stairs.push((cell, true)),
                    '\\' => level.stairs.push((cell, false)),
                    'o' => level.coins.push(cell),
                    'P' => {
                        level.start = cell;
                        start_found = true;
                    }
                    // Runs, gathered below.
                    '=' | '~' | 'M' | '-' | '.' | ' ' => {}
                    other => warn!(
                        "level: unknown tile {other:?} at line {}, column {}",
                        row + 1,
                        x + 1
                    ),
                }
            }
            level.one_ways.extend(runs(line, y, |c| c == '='));
            for run in runs(line, y, |c| c == '~') {
                // Rows are read top down: the same columns one row down extend a block.
                let above = level.water.iter_mut().find(|w| {
                    w.start.x == run.start.x && w.len == run.len && w.start.y - w.rows == y
                });
                match above {
                    Some(block) => block.rows += 1,
                    None => level.water.push(run),
                }
            }
            for track in runs(line, y, |c| c == 'M' || c == '-') {
                let cells = &line[track.start.x as usize..(track.start.x + track.len) as usize];
                let first = cells.iter().position(|&c| c == 'M');
                let last = cells.iter().rposition(|&c| c == 'M');
                if let (Some(first), Some(last)) = (first, last) {
                    let platform = Run {
                        start: IVec2::new(track.start.x + first as i32, y),
                        len: (last - first + 1) as i32,
                        rows: 1,
                    };
                    level.movers.push(Mover { platform, track });
                }
            }
        }
        if !start_found {
            warn!("level: no `P` (player start); starting in the top-left corner");
        }
        level
    }

    /// The world position of a cell's center: the map is centered on the origin.
    fn world(&self, cell: IVec2) -> Vec2 {
        cell.as_vec2() - Vec2::new(self.width as f32 - 1.0, self.height as f32 - 1.0) / 2.0
    }

    /// The world box of a run (center and half size): a slab `thickness` thick at the
    /// top of its top row (`rows` for the whole cells).
    fn run_box(&self, run: Run, thickness: f32) -> (Vec2, Vec2) {
        let first = self.world(run.start);
        let half = Vec2::new(run.len as f32 / 2.0, thickness / 2.0);
        let center = Vec2::new(first.x - 0.5 + half.x, first.y + 0.5 - half.y);
        (center, half)
    }
}

/// The maximal runs of the cells of `line` (row `y`) that `is` accepts.
fn runs(line: &[char], y: i32, is: impl Fn(char) -> bool) -> Vec<Run> {
    let mut out = Vec::new();
    let mut x = 0;
    while x < line.len() {
        if is(line[x]) {
            let start = x;
            while x < line.len() && is(line[x]) {
                x += 1;
            }
            out.push(Run {
                start: IVec2::new(start as i32, y),
                len: (x - start) as i32,
                rows: 1,
            });
        } else {
            x += 1;
        }
    }
    out
}

fn main() {
    let args = DemoArgs::parse();
    let mut app = App::new();
    app.add_plugins(DefaultPlugins.set(WindowPlugin {
        primary_window: Some(Window {
            title: "bevy_aabb_tree: platformer".into(),
            resolution: WindowResolution::new(1280, 720),
            ..default()
        }),
        ..default()
    }))
    .add_plugins((
        AabbTreePlugin::default(),
        CharacterPlugin::default(),
        AabbTreeDebugPlugin::default(),
    ))
    // The level is small: the overlay's statistics panel would hide part of it, and the
    // tree's nodes are shown only near the root. Swept hits are off: the collision tick
    // sweeps each move of the player in a straight line, and a step up the stairs (up,
    // then across) cuts the next step's corner, which would ring every step climbed.
    .insert_resource(DebugOverlay {
        panel: false,
        depth_range: (0, 2),
        pass_throughs: false,
        ..default()
    })
    .insert_resource(ClearColor(Color::srgb(0.07, 0.08, 0.1)))
    .insert_resource(Time::<Fixed>::from_seconds(TICK))
    .init_resource::<Score>()
    .add_systems(Startup, setup)
    // The platform and the player's velocity are set in `FixedUpdate`, before the
    // collision tick (`FixedPostUpdate`): the tick then sees where the platform went, and
    // the character controller, which runs after it, carries the player by that motion.
    .add_systems(FixedUpdate, (move_platforms, control_player, record_trail))
    .add_systems(Update, (show_score, draw_trail))
    .add_observer(pick_up_coin)
    .add_observer(enter_water)
    .add_observer(leave_water);
    if args.screenshot.is_some() {
        // No keyboard: the autopilot plays. Each frame advances the clock by exactly one
        // tick, so the picture is the same however slowly a headless machine renders.
        app.insert_resource(Autopilot)
            .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
                TICK,
            )));
    }
    demo::screenshot_plugin(&mut app, args);
    app.run();
}

/// Spawns the level (tiles and stairs under a map entity, one-way platforms, the moving
/// platform, water, coins), the player, the score text and a camera framing the level.
fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
    mut score: ResMut<Score>,
) {
    let level = Level::parse(LEVEL);
    let wall_color = Color::srgb(0.25, 0.3, 0.45);
    let stair_color = Color::srgb(0.38, 0.44, 0.6);
    let one_way_color = Color::srgb(0.8, 0.6, 0.3);
    let mover_color = Color::srgb(0.3, 0.75, 0.55);

    // One map entity owns the tiles. The tiles are `Static`: the plugin keeps them in a
    // separate tree that costs nothing per tick, and they never pair with each other.
    let map = commands
        .spawn((
            Name::new("Map"),
            Transform::default(),
            Visibility::default(),
        ))
        .id();
    let mut solid = |center: Vec2, half: Vec2, sprite: Sprite| {
        commands.spawn((
            Transform::from_translation(center.extend(0.0)),
            Aabb::new(half),
            CollisionLayers::new(WALL, PLAYER),
            Static,
            sprite,
            ChildOf(map),
        ));
    };
    for &cell in &level.walls {
        let sprite = Sprite::from_color(wall_color, Vec2::splat(0.94));
        solid(level.world(cell), Vec2::splat(0.5), sprite);
    }
    // A stair tile is `STEPS` boxes standing on the tile's bottom, each `STEP` wide and
    // one `STEP` higher than the one before: a staircase the controller climbs step by
    // step, as the shapes are axis-aligned boxes (no slopes).
    for &(cell, rising_right) in &level.stairs {
        let corner = level.world(cell) - Vec2::splat(0.5);
        for i in 0..STEPS {
            let column = if rising_right { i } else { STEPS - 1 - i };
            let half = Vec2::new(STEP / 2.0, (i + 1) as f32 * STEP / 2.0);
            let center = corner + Vec2::new((column as f32 + 0.5) * STEP, half.y);
            solid(center, half, Sprite::from_color(stair_color, 2.0 * half));
        }
    }

    // One-way platforms: thin slabs at the top of their tiles, landed on from above and
    // passed from below; drawn thinner than the walls, in wood.
    for &run in &level.one_ways {
        let (center, half) = level.run_box(run, ONE_WAY_THICKNESS);
        commands.spawn((
            Transform::from_translation(center.extend(0.0)),
            Aabb::new(half),
            CollisionLayers::new(WALL, PLAYER),
            Static,
            OneWay::new(Vec2::Y),
            Sprite::from_color(one_way_color, 2.0 * half - Vec2::new(0.06, 0.0)),
        ));
    }

    // The moving platform: not `Static`, since `move_platforms` moves it every tick. Its
    // track is drawn as a thin rail.
    for mover in &level.movers {
        let (center, half) = level.run_box(mover.platform, MOVER_THICKNESS);
        let (track_center, track_half) = level.run_box(mover.track, MOVER_THICKNESS);
        let left = track_center.x - track_half.x + half.x;
        let travel = 2.0 * (track_half.x - half.x);
        let along = center.x - left;
        // It sets off towards the longer part of its track.
        let phase = if along > travel / 2.0 {
            2.0 * travel - along
        } else {
            along
        };
        commands.spawn((
            Transform::from_translation(track_center.extend(-0.5)),
            Sprite::from_color(
                Color::srgb(0.3, 0.32, 0.36),
                Vec2::new(2.0 * track_half.x, 0.05),
            ),
        ));
        commands.spawn((
            MovingPlatform {
                left,
                travel,
                phase,
            },
            Transform::from_translation(center.extend(0.0)),
            Aabb::new(half),
            CollisionLayers::new(WALL, PLAYER),
            Sprite::from_color(mover_color, 2.0 * half),
        ));
    }

    // Water: `Sensor` (never blocks, raises events), drawn translucent in front of the
    // player so that it looks submerged.
    for &run in &level.water {
        let (center, half) = level.run_box(run, run.rows as f32);
        commands.spawn((
            Water,
            Transform::from_translation(center.extend(3.0)),
            Aabb::new(half),
            CollisionLayers::new(WATER, PLAYER),
            Static,
            Sensor,
            Sprite::from_color(Color::srgba(0.2, 0.45, 0.95, 0.45), 2.0 * half),
        ));
    }

    // Coins never move either, so they are `Static` too; a static collider still pairs
    // with moving ones, which is all a pickup needs. They are sensors, so the character
    // controller runs through them.
    let coin_mesh = meshes.add(Circle::new(COIN_RADIUS));
    let coin_color = materials.add(Color::srgb(1.0, 0.8, 0.2));
    for &cell in &level.coins {
        commands.spawn((
            Coin,
            Transform::from_translation(level.world(cell).extend(1.0)),
            BoundingSphere::new(COIN_RADIUS),
            CollisionLayers::new(COIN, PLAYER),
            Static,
            Sensor,
            Mesh2d(coin_mesh.clone()),
            MeshMaterial2d(coin_color.clone()),
        ));
    }
    score.total = level.coins.len() as u32;

    // The player: a capsule moved by the character controller, which blocks it on the walls'
    // layer and lets it through the sensors (coins, water) it also meets for the events.
    // Lengths are in tiles, so the step and snap are set in tiles too.
    let config = CharacterConfig {
        max_step_height: MAX_STEP,
        snap_distance: SNAP,
        ..CharacterConfig::new(Vec2::Y)
    };
    let look = PlayerLook {
        dry: materials.add(PLAYER_COLOR),
        wet: materials.add(PLAYER_WET_COLOR),
    };
    let segment = PLAYER_HALF_HEIGHT - PLAYER_RADIUS;
    commands.spawn((
        Player::default(),
        Trail::default(),
        Transform::from_translation(level.world(level.start).extend(2.0)),
        Capsule::new(segment, PLAYER_RADIUS),
        CollisionLayers::new(PLAYER, WALL | COIN | WATER),
        CharacterController::new(Vec2::Y).with_config(config),
        Mesh2d(meshes.add(Capsule2d::new(PLAYER_RADIUS, 2.0 * segment))),
        MeshMaterial2d(look.dry.clone()),
    ));
    commands.insert_resource(look);

    // The score, just above the level.
    let top = level.height as f32 / 2.0;
    commands.spawn((
        ScoreText,
        Text2d::new(""),
        TextFont {
            font_size: FontSize::Px(40.0),
            ..default()
        },
        // Text is laid out in world units: a 40 px font scaled by 1/40 is one tile high
        // and stays sharp at this camera's zoom.
        Transform::from_xyz(0.0, top + 0.9, 3.0).with_scale(Vec3::splat(1.0 / 40.0)),
    ));

    // An orthographic camera that fits the level (and the score line) in the window.
    let view = Vec2::new(level.width as f32 + 1.0, level.height as f32 + 3.5);
    let scale = (view.x / 1280.0).max(view.y / 720.0);
    commands.spawn((
        Camera2d,
        Projection::Orthographic(OrthographicProjection {
            scale,
            ..OrthographicProjection::default_2d()
        }),
        Transform::from_xyz(0.0, 0.9, 0.0),
    ));
}

/// The player's colour, out of the water and in it.
const PLAYER_COLOR: Color = Color::srgb(0.95, 0.45, 0.3);
const PLAYER_WET_COLOR: Color = Color::srgb(0.45, 0.6, 1.0);

/// The player's materials, out of the water and in it.
#[derive(Resource)]
struct PlayerLook {
    dry: Handle<ColorMaterial>,
    wet: Handle<ColorMaterial>,
}

/// Moves each moving platform along its track: back and forth at `MOVER_SPEED`.
fn move_platforms(time: Res<Time>, mut platforms: Query<(&MovingPlatform, &mut Transform)>) {
    for (platform, mut transform) in &mut platforms {
        if platform.travel <= 0.0 {
            continue;
        }
        let s = (platform.phase + MOVER_SPEED * time.elapsed_secs()) % (2.0 * platform.travel);
        let along = if s <= platform.travel {
            s
        } else {
            2.0 * platform.travel - s
        };
        transform.translation.x = platform.left + along;
    }
}

/// The input of one tick.
#[derive(Default)]
struct Input {
    /// The run direction: -1, 0 or 1.
    run: f32,
    jump: bool,
    /// Drop through the one-way platform stood on.
    drop: bool,
}

/// Reads the keyboard. Read with `pressed` rather than `just_pressed`: a fixed tick can
/// run zero or several times per frame, and would miss or repeat a one-frame press;
/// holding the jump key jumps again on landing.
fn read_keys(keys: &ButtonInput<KeyCode>) -> Input {
    let left = keys.any_pressed([KeyCode::ArrowLeft, KeyCode::KeyA]);
    let right = keys.any_pressed([KeyCode::ArrowRight, KeyCode::KeyD]);
    Input {
        run: right as i32 as f32 - left as i32 as f32,
        jump: keys.any_pressed([KeyCode::Space, KeyCode::ArrowUp, KeyCode::KeyW]),
        drop: keys.any_pressed([KeyCode::ArrowDown, KeyCode::KeyS]),
    }
}

/// The autopilot's input: run right while there is ground ahead (a ray down from just
/// in front of the player finds something solid within one and a half tiles below its
/// feet: the next stairs down, but not the bottom of the pool), else wait at the edge;
/// jump when a wall blocked the last tick's run.
fn autopilot_input(
    spatial: &SpatialQuery,
    position: Vec2,
    player: &Player,
    state: &CharacterState,
    dt: f32,
) -> Input {
    let ahead = position + Vec2::new(PLAYER_RADIUS + 0.3, 0.0);
    let filter = QueryFilter::default().with_mask(WALL).without_sensors();
    let ray = Ray::new(ahead, Vec2::NEG_Y);
    let ground_ahead = spatial
        .cast_ray(&ray, PLAYER_HALF_HEIGHT + 1.5, &filter)
        .is_some();
    // Blocked: a wall met ahead, and little headway of its own (less the ride on a
    // moving platform); a stair's riser met while stepping up it is no block.
    let own = state.displacement.x - state.ground_velocity.x * dt;
    let wanted = player.last_run * RUN_SPEED * dt;
    let wall = state.hits.iter().any(|hit| hit.normal.x < -0.5);
    let blocked = wanted > 0.0 && wall && own < 0.3 * wanted;
    Input {
        run: if state.grounded && !ground_ahead {
            0.0
        } else {
            1.0
        },
        jump: state.grounded && blocked,
        drop: false,
    }
}

/// Sets the player's velocity for this tick from the input: the run, gravity and jumps.
/// The character controller moves it after the collision tick and removes what ran into
/// surfaces (landing ends a fall, a ceiling a jump).
fn control_player(
    time: Res<Time>,
    keys: Res<ButtonInput<KeyCode>>,
    autopilot: Option<Res<Autopilot>>,
    spatial: SpatialQuery,
    player: Single<(
        &Transform,
        &mut Player,
        &mut CharacterController,
        &CharacterState,
    )>,
) {
    let (transform, mut player, mut controller, state) = player.into_inner();
    let dt = time.delta_secs();
    let position = transform.translation.truncate();
    let input = if autopilot.is_some() {
        autopilot_input(&spatial, position, &player, state, dt)
    } else {
        read_keys(&keys)
    };
    player.last_run = input.run;

    let wet = player.in_water > 0;
    let (speed, max_fall) = if wet {
        (RUN_SPEED * WATER_DRAG, WATER_MAX_FALL)
    } else {
        (RUN_SPEED, MAX_FALL)
    };
    let velocity = &mut controller.velocity;
    velocity.x = input.run * speed;
    if input.jump && state.grounded {
        velocity.y = JUMP_SPEED;
    }
    // Gravity applies even on the ground: the controller stops it on the floor and
    // removes it from the velocity.
    velocity.y = (velocity.y - GRAVITY * dt).max(-max_fall);
    controller.drop_through = input.drop;
}

/// Picks up a coin when the player first touches it. `CollisionStarted` is triggered for
/// each entity of the pair (the pair's entity as `entity`), so this global observer
/// sees the player-coin pair twice; reacting only to the player's side counts it once.
fn pick_up_coin(
    hit: On<CollisionStarted>,
    players: Query<(), With<Player>>,
    coins: Query<(), With<Coin>>,
    mut score: ResMut<Score>,
    mut commands: Commands,
) {
    if players.contains(hit.entity) && coins.contains(hit.other) {
        // The coin's despawn ends the pair at once (a `CollisionEnded` with reason
        // `Removed`).
        commands.entity(hit.other).despawn();
        score.taken += 1;
        info!("coin! {} of {}", score.taken, score.total);
    }
}

/// The player touches a water collider: it counts one more, and turns blue.
fn enter_water(
    hit: On<CollisionStarted>,
    mut players: Query<(&mut Player, &mut MeshMaterial2d<ColorMaterial>)>,
    water: Query<(), With<Water>>,
    look: Res<PlayerLook>,
) {
    if let Ok((mut player, mut material)) = players.get_mut(hit.entity)
        && water.contains(hit.other)
    {
        player.in_water += 1;
        material.0 = look.wet.clone();
    }
}

/// The player leaves a water collider: out of the last one, it gets its colour back.
fn leave_water(
    hit: On<CollisionEnded>,
    mut players: Query<(&mut Player, &mut MeshMaterial2d<ColorMaterial>)>,
    water: Query<(), With<Water>>,
    look: Res<PlayerLook>,
) {
    if let Ok((mut player, mut material)) = players.get_mut(hit.entity)
        && water.contains(hit.other)
    {
        player.in_water = player.in_water.saturating_sub(1);
        if player.in_water == 0 {
            material.0 = look.dry.clone();
        }
    }
}

/// Writes the score when it changes.
fn show_score(score: Res<Score>, mut text: Single<&mut Text2d, With<ScoreText>>) {
    if score.is_changed() {
        text.0 = format!("coins: {} / {}", score.taken, score.total);
    }
}

/// Adds the player's position to its trail, once per tick.
fn record_trail(player: Single<(&Transform, &mut Trail)>) {
    let (transform, mut trail) = player.into_inner();
    trail.0.push(transform.translation.truncate());
    if trail.0.len() > TRAIL {
        trail.0.remove(0);
    }
}

/// Draws the trail at the player's feet.
fn draw_trail(mut gizmos: Gizmos, trail: Single<&Trail>) {
    let feet = Vec2::new(0.0, -PLAYER_HALF_HEIGHT);
    gizmos.linestrip_2d(
        trail.0.iter().map(|p| *p + feet),
        Color::srgb(1.0, 0.85, 0.2),
    );
}
