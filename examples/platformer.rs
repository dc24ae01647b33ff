//! A small 2D platformer on the collision world, without a physics engine.
//!
//! - The level is a text map, `assets/level.txt`: `#` a wall tile, `o` a coin, `P` the
//!   player's start, `.` (or a space) nothing. The tiles are `Static` colliders under one
//!   map entity, as a tile-map crate spawns them.
//! - The player is a box moved by [`AabbTree::move_and_slide`]: gravity pulls it down, the
//!   arrow keys (or A / D) run, Space (or W / Up) jumps when the slide says it stands on
//!   ground. It slides along the floors and walls and never snags on the seams between
//!   their tiles.
//! - Coins are circles picked up through `CollisionStarted`, the collision event the
//!   plugin sends when the player first touches one; the score is shown above the level.
//! - The debug overlay is on: green the player's box, slate blue the static tiles and the
//!   static tree's nodes, circles the coins (F1 hides it).
//!
//! Run: `cargo run --features examples --example platformer`
//! Headless check: `... --example platformer -- --screenshot shot.png --frames 150`: with
//! no keyboard, an autopilot runs right and jumps over what blocks it.

#[path = "support/demo.rs"]
#[allow(dead_code)] // The platformer uses the command line and the screenshot only.
mod demo;

use std::time::Duration;

use bevy::asset::io::file::FileAssetReader;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy::window::WindowResolution;
use bevy_aabb_tree::d2::*;
use demo::DemoArgs;

/// Collision layers: what the player runs into, what it picks up, and the player.
const WALL: u32 = 1 << 0;
const COIN: u32 = 1 << 1;
const PLAYER: u32 = 1 << 2;

/// One tile is one world unit; every length below is in tiles.
const PLAYER_HALF: Vec2 = Vec2::new(0.4, 0.45);
const COIN_RADIUS: f32 = 0.3;
/// Running speed, tiles per second.
const RUN_SPEED: f32 = 7.0;
/// Jump take-off speed and gravity: a jump rises `JUMP_SPEED² / (2 GRAVITY)`, about 3.8
/// tiles, enough to clear a wall three tiles high.
const JUMP_SPEED: f32 = 17.0;
const GRAVITY: f32 = 38.0;
/// The fastest fall, so that a long fall stays readable.
const MAX_FALL: f32 = 20.0;
/// The fixed tick: Bevy's default (64 Hz), which the plugin's step (`FixedPostUpdate`) follows.
const TICK: f64 = 1.0 / 64.0;

/// The level map, relative to the asset folder.
const LEVEL_PATH: &str = "level.txt";
/// The level used when `assets/level.txt` cannot be read: a floor, a wall and two coins.
const FALLBACK_LEVEL: &str = "\
##########
#........#
#....o...#
#.P..#.o.#
##########";

/// The player's motion state, kept between ticks.
#[derive(Component, Default)]
struct Player {
    /// Velocity in tiles per second: horizontal from the input, vertical from gravity and
    /// jumps; the parts that run into walls are removed after each slide.
    velocity: Vec2,
    /// Whether the last slide ended on ground (a hit whose normal points up): jumping is
    /// allowed only then.
    on_ground: bool,
    /// Whether the last slide ran into a wall (a hit whose normal is horizontal); the
    /// autopilot jumps then.
    blocked: bool,
}

/// A coin: gone when the player touches it.
#[derive(Component)]
struct Coin;

/// The text showing the score.
#[derive(Component)]
struct ScoreText;

/// Coins picked up, out of how many the level holds.
#[derive(Resource, Default)]
struct Score {
    taken: u32,
    total: u32,
}

/// Present in the headless screenshot mode: the player runs right on its own and jumps
/// over what blocks it.
#[derive(Resource)]
struct Autopilot;

/// A parsed level: its size in tiles and what each cell holds.
struct Level {
    width: usize,
    height: usize,
    walls: Vec<IVec2>,
    coins: Vec<IVec2>,
    start: IVec2,
}

impl Level {
    /// Parses a text map. Row 0 is the top line; cells are returned as (column, row from
    /// the bottom), so that `y` grows upwards as in the world. Unknown characters are
    /// empty cells, with a warning; a map without `P` starts the player in the top-left
    /// corner.
    fn parse(text: &str) -> Level {
        let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
        let height = lines.len();
        let width = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        let mut level = Level {
            width,
            height,
            walls: Vec::new(),
            coins: Vec::new(),
            start: IVec2::new(1, height as i32 - 2),
        };
        let mut start_found = false;
        for (row, line) in lines.iter().enumerate() {
            let y = (height - 1 - row) as i32;
            for (x, c) in line.chars().enumerate() {
                let cell = IVec2::new(x as i32, y);
                match c {
                    '#' => level.walls.push(cell),
                    'o' => level.coins.push(cell),
                    'P' => {
                        level.start = cell;
                        start_found = true;
                    }
                    '.' | ' ' => {}
                    other => warn!(
                        "level: unknown tile {other:?} at line {}, column {}",
                        row + 1,
                        x + 1
                    ),
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
    .add_plugins((AabbTreePlugin::default(), AabbTreeDebugPlugin::default()))
    // The level is small: the overlay's statistics panel would hide part of it, and the
    // tree's nodes are shown only near the root.
    .insert_resource(DebugOverlay {
        panel: false,
        depth_range: (0, 2),
        ..default()
    })
    .insert_resource(ClearColor(Color::srgb(0.07, 0.08, 0.1)))
    .insert_resource(Time::<Fixed>::from_seconds(TICK))
    .init_resource::<Score>()
    .add_systems(Startup, setup)
    // Moving the player in `FixedUpdate` puts it before the plugin's step
    // (`FixedPostUpdate`), so the coins it reaches are found in the same tick.
    .add_systems(FixedUpdate, move_player)
    .add_systems(Update, show_score)
    .add_observer(pick_up_coin);
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

/// Reads the level map from the asset folder, falling back to a built-in level (with an
/// error in the log) when it cannot be read.
fn load_level() -> Level {
    let path = FileAssetReader::get_base_path()
        .join("assets")
        .join(LEVEL_PATH);
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => Level::parse(&text),
        Ok(_) => {
            error!("{} is empty; using the built-in level", path.display());
            Level::parse(FALLBACK_LEVEL)
        }
        Err(e) => {
            error!(
                "cannot read {}: {e}; using the built-in level",
                path.display()
            );
            Level::parse(FALLBACK_LEVEL)
        }
    }
}

/// Spawns the level (tiles under a map entity, coins), the player, the score text and a
/// camera framing the whole level.
fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
    mut score: ResMut<Score>,
) {
    let level = load_level();

    // One map entity owns the tiles. The tiles are `Static`: the plugin keeps them in a
    // separate tree that costs nothing per tick, and they never pair with each other.
    let map = commands
        .spawn((
            Name::new("Map"),
            Transform::default(),
            Visibility::default(),
        ))
        .id();
    for &cell in &level.walls {
        commands.spawn((
            Transform::from_translation(level.world(cell).extend(0.0)),
            Aabb::new(Vec2::splat(0.5)),
            CollisionLayers::new(WALL, PLAYER),
            Static,
            Sprite::from_color(Color::srgb(0.25, 0.3, 0.45), Vec2::splat(0.94)),
            ChildOf(map),
        ));
    }

    // Coins never move either, so they are `Static` too; a static collider still pairs
    // with moving ones, which is all a pickup needs.
    let coin_mesh = meshes.add(Circle::new(COIN_RADIUS));
    let coin_color = materials.add(Color::srgb(1.0, 0.8, 0.2));
    for &cell in &level.coins {
        commands.spawn((
            Coin,
            Transform::from_translation(level.world(cell).extend(1.0)),
            BoundingSphere::new(COIN_RADIUS),
            CollisionLayers::new(COIN, PLAYER),
            Static,
            Mesh2d(coin_mesh.clone()),
            MeshMaterial2d(coin_color.clone()),
        ));
    }
    score.total = level.coins.len() as u32;

    // The player is a collider too (for the coin events), in its own layer. Its motion
    // does not come from a `Velocity`: `move_player` moves its `Transform` itself.
    commands.spawn((
        Player::default(),
        Transform::from_translation(level.world(level.start).extend(2.0)),
        Aabb::new(PLAYER_HALF),
        CollisionLayers::new(PLAYER, WALL | COIN),
        Sprite::from_color(Color::srgb(0.95, 0.45, 0.3), 2.0 * PLAYER_HALF),
    ));

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

/// The input of one tick: the run direction (-1, 0 or 1) and whether to jump.
///
/// Read with `pressed` rather than `just_pressed`: a fixed tick can run zero or several
/// times per frame, and would miss or repeat a one-frame press; holding the jump key
/// jumps again on landing.
fn read_input(keys: &ButtonInput<KeyCode>, autopilot: bool, player: &Player) -> (f32, bool) {
    if autopilot {
        // Run right; jump when a wall blocks the way.
        return (1.0, player.blocked);
    }
    let left = keys.any_pressed([KeyCode::ArrowLeft, KeyCode::KeyA]);
    let right = keys.any_pressed([KeyCode::ArrowRight, KeyCode::KeyD]);
    let jump = keys.any_pressed([KeyCode::Space, KeyCode::ArrowUp, KeyCode::KeyW]);
    (right as i32 as f32 - left as i32 as f32, jump)
}

/// Moves the player one tick: input and gravity set the velocity, move-and-slide moves
/// the box against the walls, and what the slide ran into shapes the next tick.
fn move_player(
    time: Res<Time>,
    keys: Res<ButtonInput<KeyCode>>,
    autopilot: Option<Res<Autopilot>>,
    tree: Res<AabbTree>,
    player: Single<(Entity, &mut Transform, &mut Player)>,
) {
    let (entity, mut transform, mut player) = player.into_inner();
    let dt = time.delta_secs();
    let (run, jump) = read_input(&keys, autopilot.is_some(), &player);

    player.velocity.x = run * RUN_SPEED;
    if jump && player.on_ground {
        player.velocity.y = JUMP_SPEED;
    }
    // Gravity applies even on the ground: the slide then pushes into the floor, is
    // stopped by it, and reports `on_ground`. Without it, standing still would not
    // probe the floor and the player could not jump.
    player.velocity.y = (player.velocity.y - GRAVITY * dt).max(-MAX_FALL);

    // The player's box where its `Transform` is now (the tree's copy is from the last
    // tick). The slide sees only the walls' layer, so coins do not block it, and never
    // the player itself.
    let here = transform.translation.truncate();
    let shape = WorldShape::Box(BoundingBox::from_center_half_extents(here, PLAYER_HALF));
    let filter = QueryFilter::default().with_mask(WALL).excluding([entity]);
    let slide = tree.move_and_slide(
        &shape,
        player.velocity * dt,
        &SlideConfig::new(Vec2::Y),
        &filter,
    );
    transform.translation += slide.displacement.extend(0.0);

    // Each hit stops the velocity going into its surface: landing ends a fall, a ceiling
    // ends a jump, a wall stops the run (the input sets it again next tick).
    for hit in &slide.hits {
        let into = player.velocity.dot(hit.normal);
        if into < 0.0 {
            player.velocity -= hit.normal * into;
        }
    }
    player.on_ground = slide.on_ground;
    player.blocked = slide.hits.iter().any(|hit| hit.normal.x.abs() > 0.5);
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

/// Writes the score when it changes.
fn show_score(score: Res<Score>, mut text: Single<&mut Text2d, With<ScoreText>>) {
    if score.is_changed() {
        text.0 = format!("coins: {} / {}", score.taken, score.total);
    }
}
