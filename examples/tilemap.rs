//! A platformer on a `bevy_ecs_tilemap` map, with colliders from the map's tiles.
//!
//! - The level (`LEVEL` below: `#` stone, `G` grass-topped earth, `B` brick, `P` the
//!   player's start) is a real tile map: a `TileStorage` of tile entities drawn by the
//!   tile-map crate from `assets/tilemap_tiles.png` (written by
//!   `scripts/make_tile_texture.py`). `TilemapColliders` on the map gives every tile a
//!   collider, merged into rectangles: the debug overlay draws them (slate blue) over the
//!   tiles.
//! - The player (orange) is a box moved by `CharacterController`: arrow keys or A / D
//!   run, Space / W / Up jump.
//! - Left click removes the tile under the cursor, right click adds one: only the
//!   rectangles around the tile are merged again. The tile the player stands on, found
//!   from a ray's hit on a merged rectangle with `TilemapHits::tile_of`, is outlined in
//!   yellow.
//!
//! Run: `cargo run --features examples,tilemap --example tilemap`
//! Headless check: `... --example tilemap -- --screenshot shot.png --frames 150`: an
//! autopilot runs right and, when a wall blocks it, digs a tunnel through the wall (tiles
//! removed at run time) and lays a bridge of new tiles over the pit beyond it.

#[path = "support/demo.rs"]
#[allow(dead_code)] // This example uses the command line and the screenshot only.
mod demo;

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy::window::{PrimaryWindow, WindowResolution};
use bevy_aabb_tree::d2::*;
use bevy_aabb_tree::plugin::tilemap::{AabbTreeTilemapPlugin, TilemapColliders, TilemapHits};
use bevy_ecs_tilemap::prelude::*;
use demo::DemoArgs;

/// One tile is 16 texture pixels and one world unit: the map entity is scaled by 1/16, and
/// the colliders under it follow.
const TILE_PIXELS: f32 = 16.0;
const PLAYER_HALF: Vec2 = Vec2::new(0.4, 0.45);
const RUN_SPEED: f32 = 7.0;
const JUMP_SPEED: f32 = 17.0;
const GRAVITY: f32 = 38.0;
const MAX_FALL: f32 = 20.0;
const TICK: f64 = 1.0 / 64.0;

/// The level, top row first.
const LEVEL: &str = "\
########################################
#......................................#
#......................................#
#......................................#
#.............BBBBB....................#
#......................................#
#.......................BBBB...........#
#..BBBB......................BBBBB.....#
#..................#...................#
#..................#...................#
#..................#...................#
#........BBB.......#...................#
#..................#.........B.........#
#..................#........BBB........#
#.P................#.......BBBBB.......#
GGGGGGGGGGGGGGGGGGGGGG.......GGGGGGGGGGG
########################################
########################################";

/// The map: its entity and size, for the edits.
#[derive(Resource)]
struct Level {
    map: Entity,
    size: TilemapSize,
    start: Vec2,
}

#[derive(Component)]
struct Player;

/// Present in the headless screenshot mode: runs right, digs through walls and bridges
/// pits.
#[derive(Resource, Default)]
struct Autopilot {
    dug: bool,
    bridged: bool,
}

fn main() {
    let args = DemoArgs::parse();
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: Some(Window {
                    title: "bevy_aabb_tree: tile map".into(),
                    resolution: WindowResolution::new(1280, 720),
                    ..default()
                }),
                ..default()
            })
            .set(ImagePlugin::default_nearest()),
    )
    .add_plugins((
        TilemapPlugin,
        AabbTreePlugin::default(),
        AabbTreeTilemapPlugin::default(),
        CharacterPlugin::default(),
        AabbTreeDebugPlugin::default(),
    ))
    .insert_resource(DebugOverlay {
        panel: false,
        depth_range: (0, 1),
        pass_throughs: false,
        ..default()
    })
    .insert_resource(ClearColor(Color::srgb(0.07, 0.08, 0.1)))
    .insert_resource(Time::<Fixed>::from_seconds(TICK))
    .add_systems(Startup, setup)
    .add_systems(FixedUpdate, control_player)
    .add_systems(Update, (edit_with_mouse, outline_ground_tile));
    if args.screenshot.is_some() {
        app.init_resource::<Autopilot>()
            .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
                TICK,
            )));
    }
    demo::screenshot_plugin(&mut app, args);
    app.run();
}

/// The texture index of a level character, `None` for an empty cell.
fn texture_of(c: char) -> Option<u32> {
    match c {
        '#' => Some(0),
        'G' => Some(1),
        'B' => Some(2),
        _ => None,
    }
}

/// Spawns a tile of the map at `position`, in its storage.
fn spawn_tile(
    commands: &mut Commands,
    map: Entity,
    storage: &mut TileStorage,
    position: TilePos,
    texture: u32,
) {
    let tile = commands
        .spawn(TileBundle {
            position,
            tilemap_id: TilemapId(map),
            texture_index: TileTextureIndex(texture),
            ..default()
        })
        .id();
    storage.set(&position, tile);
}

fn setup(mut commands: Commands, assets: Res<AssetServer>) {
    let rows: Vec<&str> = LEVEL.lines().collect();
    let size = TilemapSize {
        x: rows.iter().map(|r| r.len()).max().unwrap_or(0) as u32,
        y: rows.len() as u32,
    };
    let map = commands.spawn_empty().id();
    let mut storage = TileStorage::empty(size);
    let mut start = UVec2::new(1, 1);
    for (row, line) in rows.iter().enumerate() {
        let y = size.y - 1 - row as u32;
        for (x, c) in line.chars().enumerate() {
            let position = TilePos { x: x as u32, y };
            if c == 'P' {
                start = UVec2::new(x as u32, y);
            }
            if let Some(texture) = texture_of(c) {
                spawn_tile(&mut commands, map, &mut storage, position, texture);
            }
        }
    }
    let tile_size = TilemapTileSize {
        x: TILE_PIXELS,
        y: TILE_PIXELS,
    };
    commands.entity(map).insert((
        TilemapBundle {
            grid_size: tile_size.into(),
            map_type: TilemapType::Square,
            size,
            storage,
            texture: TilemapTexture::Single(assets.load("tilemap_tiles.png")),
            tile_size,
            anchor: TilemapAnchor::Center,
            transform: Transform::from_scale(Vec3::splat(1.0 / TILE_PIXELS)),
            ..default()
        },
        // Merged rectangles (the default), every tile solid.
        TilemapColliders::default(),
    ));
    // With `TilemapAnchor::Center` the map's center is the origin; tile (x, y)'s center
    // in world units is its offset from the middle.
    let start = start.as_vec2() - (Vec2::new(size.x as f32, size.y as f32) - 1.0) / 2.0;
    commands.insert_resource(Level { map, size, start });

    commands.spawn((
        Player,
        Transform::from_translation(start.extend(2.0)),
        Aabb::new(PLAYER_HALF),
        CharacterController::new(Vec2::Y).with_config(CharacterConfig {
            max_step_height: 0.25,
            snap_distance: 0.3,
            ..CharacterConfig::new(Vec2::Y)
        }),
        Sprite::from_color(Color::srgb(0.95, 0.45, 0.3), 2.0 * PLAYER_HALF),
    ));

    let view = Vec2::new(size.x as f32 + 1.0, size.y as f32 + 1.0);
    let scale = (view.x / 1280.0).max(view.y / 720.0);
    commands.spawn((
        Camera2d,
        Projection::Orthographic(OrthographicProjection {
            scale,
            ..OrthographicProjection::default_2d()
        }),
    ));
}

/// Sets the player's velocity from the keys, or from the autopilot, which digs and
/// bridges through the map's edit path when the way is blocked.
#[allow(clippy::too_many_arguments)]
fn control_player(
    time: Res<Time>,
    keys: Res<ButtonInput<KeyCode>>,
    autopilot: Option<ResMut<Autopilot>>,
    level: Res<Level>,
    spatial: SpatialQuery,
    hits: TilemapHits,
    mut storages: Query<&mut TileStorage>,
    player: Single<
        (
            Entity,
            &mut Transform,
            &mut CharacterController,
            &CharacterState,
        ),
        With<Player>,
    >,
    mut commands: Commands,
) {
    let (entity, mut transform, mut controller, state) = player.into_inner();
    let dt = time.delta_secs();
    let position = transform.translation.truncate();
    let (run, jump) = match autopilot {
        Some(mut pilot) => {
            // The rays start inside the player: leave it out.
            let filter = QueryFilter::default().excluding([entity]);
            // A wall ahead: dig a tunnel two tiles high through it.
            let ahead = Ray::new(position, Vec2::X);
            if !pilot.dug
                && let Some(hit) = spatial.cast_ray(&ahead, PLAYER_HALF.x + 0.6, &filter)
                && let Some(tile) = hits.tile_of(&hit)
                && let Ok(mut storage) = storages.get_mut(tile.map)
            {
                for dx in 0..2 {
                    for dy in 0..2 {
                        let p = TilePos::new(tile.position.x + dx, tile.position.y + dy);
                        if let Some(entity) = storage.remove(&p) {
                            commands.entity(entity).despawn();
                        }
                    }
                }
                pilot.dug = true;
            }
            // A pit ahead: lay a bridge of bricks over it.
            let down = Ray::new(position + Vec2::new(1.5, 0.0), Vec2::NEG_Y);
            if !pilot.bridged
                && state.grounded
                && spatial.cast_ray(&down, 2.0, &filter).is_none()
                && let Some(below) = hits.tile_under(level.map, position - Vec2::new(0.0, 1.0))
                && let Ok(mut storage) = storages.get_mut(level.map)
            {
                for dx in 1..10 {
                    let p = TilePos::new(below.x + dx, below.y);
                    if p.x < level.size.x && storage.get(&p).is_none() {
                        spawn_tile(&mut commands, level.map, &mut storage, p, 2);
                    }
                }
                pilot.bridged = true;
            }
            (1.0, false)
        }
        None => {
            let left = keys.any_pressed([KeyCode::ArrowLeft, KeyCode::KeyA]);
            let right = keys.any_pressed([KeyCode::ArrowRight, KeyCode::KeyD]);
            let jump = keys.any_pressed([KeyCode::Space, KeyCode::ArrowUp, KeyCode::KeyW]);
            (right as i32 as f32 - left as i32 as f32, jump)
        }
    };
    let velocity = &mut controller.velocity;
    velocity.x = run * RUN_SPEED;
    if jump && state.grounded {
        velocity.y = JUMP_SPEED;
    }
    velocity.y = (velocity.y - GRAVITY * dt).max(-MAX_FALL);
    if position.y < -(level.size.y as f32) {
        // Fell out of the map: back to the start.
        transform.translation = level.start.extend(2.0);
        controller.velocity = Vec2::ZERO;
        commands.entity(entity).insert(Teleported);
    }
}

/// Left click removes the tile under the cursor, right click adds a brick there.
fn edit_with_mouse(
    buttons: Res<ButtonInput<MouseButton>>,
    window: Single<&Window, With<PrimaryWindow>>,
    camera: Single<(&Camera, &GlobalTransform)>,
    level: Res<Level>,
    hits: TilemapHits,
    mut storages: Query<&mut TileStorage>,
    mut commands: Commands,
) {
    let remove = buttons.just_pressed(MouseButton::Left);
    let add = buttons.just_pressed(MouseButton::Right);
    if !(remove || add) {
        return;
    }
    let (camera, camera_transform) = *camera;
    let Some(point) = window
        .cursor_position()
        .and_then(|cursor| camera.viewport_to_world_2d(camera_transform, cursor).ok())
    else {
        return;
    };
    let (Some(position), Ok(mut storage)) = (
        hits.tile_under(level.map, point),
        storages.get_mut(level.map),
    ) else {
        return;
    };
    match storage.get(&position) {
        Some(tile) if remove => {
            storage.remove(&position);
            commands.entity(tile).despawn();
        }
        None if add => spawn_tile(&mut commands, level.map, &mut storage, position, 2),
        _ => {}
    }
}

/// Outlines the tile the player stands on: a ray down from its feet hits a (merged)
/// collider, and `TilemapHits::tile_of` names the tile.
fn outline_ground_tile(
    mut gizmos: Gizmos,
    spatial: SpatialQuery,
    hits: TilemapHits,
    level: Res<Level>,
    player: Single<(Entity, &Transform), With<Player>>,
) {
    let (entity, transform) = *player;
    let ray = Ray::new(transform.translation.truncate(), Vec2::NEG_Y);
    let filter = QueryFilter::default().excluding([entity]);
    let Some(hit) = spatial.cast_ray(&ray, 3.0, &filter) else {
        return;
    };
    if let Some(tile) = hits.tile_of(&hit) {
        let center = Vec2::new(tile.position.x as f32, tile.position.y as f32)
            - (Vec2::new(level.size.x as f32, level.size.y as f32) - 1.0) / 2.0;
        gizmos.rect_2d(center, Vec2::splat(0.9), Color::srgb(1.0, 0.85, 0.2));
    }
}
