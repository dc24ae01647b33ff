//! The `bevy_ecs_tilemap` integration on real tile maps (`TileStorage`, `TilePos`,
//! `TilemapId`) in headless apps, against brute force over the tiles: the tiles' boxes
//! come from the tile-map crate's own placement (`TilePos::center_in_world`), the ray
//! tests from a slab test written here.
#![cfg(feature = "tilemap")]

use bevy::ecs::schedule::SingleThreadedExecutor;
use bevy::ecs::system::RunSystemOnce;
use bevy::log::tracing_subscriber::layer::SubscriberExt;
use bevy::log::tracing_subscriber::registry::Registry;
use bevy::prelude::*;
use bevy::transform::TransformPlugin;
use bevy_aabb_tree::d2::*;
use bevy_aabb_tree::plugin::tilemap::{
    AabbTreeTilemapPlugin, SolidTile, SolidTiles, TileCollider, TileColliderMode,
    TilemapColliderStats, TilemapColliders, TilemapHits,
};
use bevy_ecs_tilemap::anchor::TilemapAnchor;
use bevy_ecs_tilemap::map::{
    IsoCoordSystem, TilemapGridSize, TilemapId, TilemapSize, TilemapTileSize, TilemapType,
};
use bevy_ecs_tilemap::tiles::{TilePos, TileStorage};

use crate::kit::rng::Rng;
use crate::kit::warnings;
use warnings::Warnings;

const GRID: TilemapGridSize = TilemapGridSize { x: 2.0, y: 1.5 };
const MAP_AT: Vec3 = Vec3::new(10.0, -5.0, 0.0);

/// An app with the collision plugin and the tile-map plugin in `Update`.
fn app() -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, TransformPlugin))
        .add_plugins((
            AabbTreePlugin::new(Update),
            AabbTreeTilemapPlugin::new(Update),
        ));
    app
}

/// The map under test: its entity, size, anchor and which cells are solid.
struct Map {
    entity: Entity,
    size: TilemapSize,
    anchor: TilemapAnchor,
}

/// Spawns a map of `size` with a tile at each cell where `tile(x, y)`, and the colliders.
fn spawn_map(
    app: &mut App,
    size: UVec2,
    anchor: TilemapAnchor,
    colliders: TilemapColliders,
    mut tile: impl FnMut(u32, u32) -> bool,
) -> Map {
    let world = app.world_mut();
    let map = world.spawn_empty().id();
    let size = TilemapSize {
        x: size.x,
        y: size.y,
    };
    let mut storage = TileStorage::empty(size);
    for y in 0..size.y {
        for x in 0..size.x {
            if tile(x, y) {
                let position = TilePos { x, y };
                let entity = world.spawn((position, TilemapId(map))).id();
                storage.set(&position, entity);
            }
        }
    }
    world.entity_mut(map).insert((
        storage,
        size,
        GRID,
        TilemapTileSize { x: 2.0, y: 1.5 },
        TilemapType::Square,
        anchor,
        Transform::from_translation(MAP_AT),
        colliders,
    ));
    settle(app);
    Map {
        entity: map,
        size,
        anchor,
    }
}

fn settle(app: &mut App) {
    for _ in 0..2 {
        app.update();
    }
}

/// The solid cells now, read from the map's storage (every tile there is solid unless
/// `marked`, then only those with `SolidTile`).
fn solid_cells(app: &mut App, map: &Map, marked: bool) -> Vec<bool> {
    let world = app.world_mut();
    let storage = world.get::<TileStorage>(map.entity).unwrap().clone();
    (0..map.size.y)
        .flat_map(|y| (0..map.size.x).map(move |x| TilePos { x, y }))
        .map(|p| {
            storage
                .get(&p)
                .is_some_and(|e| !marked || world.get::<SolidTile>(e).is_some())
        })
        .collect()
}

/// The world box of a tile, from the tile-map crate's placement.
fn tile_box(map: &Map, tile: TilePos) -> (Vec2, Vec2) {
    let center = tile.center_in_world(
        &map.size,
        &GRID,
        &TilemapTileSize { x: 2.0, y: 1.5 },
        &TilemapType::Square,
        &map.anchor,
    ) + MAP_AT.truncate();
    let half = Vec2::new(GRID.x, GRID.y) / 2.0;
    (center - half, center + half)
}

/// Every tile collider with its world box (from its `Aabb` and `GlobalTransform`).
fn colliders(app: &mut App) -> Vec<(Entity, TileCollider, Vec2, Vec2)> {
    let mut query = app
        .world_mut()
        .query::<(Entity, &TileCollider, &Aabb, &GlobalTransform)>();
    query
        .iter(app.world())
        .map(|(e, t, aabb, gt)| {
            let c = gt.translation().truncate() + aabb.offset;
            (e, *t, c - aabb.half_extents, c + aabb.half_extents)
        })
        .collect()
}

/// The colliders cover each solid cell once and no empty cell, each is the union of its
/// tiles' boxes, and no merged rectangle is larger than the limit.
fn check_cover(app: &mut App, map: &Map, solid: &[bool], max: UVec2) {
    let mut count = vec![0u32; solid.len()];
    for (_, tile, min, max_corner) in colliders(app) {
        assert_eq!(tile.map, map.entity);
        assert!(tile.max.x - tile.min.x < max.x && tile.max.y - tile.min.y < max.y);
        let (lo, _) = tile_box(map, tile.min);
        let (_, hi) = tile_box(map, tile.max);
        assert!(
            lo.distance(min) < 1e-3 && hi.distance(max_corner) < 1e-3,
            "{tile:?}: {min} {max_corner} vs {lo} {hi}"
        );
        for y in tile.min.y..=tile.max.y {
            for x in tile.min.x..=tile.max.x {
                count[(y * map.size.x + x) as usize] += 1;
            }
        }
    }
    for (i, (&n, &s)) in count.iter().zip(solid).enumerate() {
        let cell = (i as u32 % map.size.x, i as u32 / map.size.x);
        assert_eq!(n, u32::from(s), "cell {cell:?} solid {s} covered {n} times");
    }
}

/// The entry parameter of a ray into a closed box, if it meets it within `max_t`: the
/// kit's `f64` ray oracle, in the plane z = 0.
fn ray_box(origin: Vec2, dir: Vec2, lo: Vec2, hi: Vec2, max_t: f32) -> Option<f32> {
    use crate::kit::oracle::{Solid, ray_entry};
    let flat = |v: Vec2| v.extend(0.0).as_dvec3();
    let solid = Solid::Box {
        min: flat(lo),
        max: flat(hi),
    };
    ray_entry(flat(origin), flat(dir), solid, f64::from(max_t)).map(|t| t as f32)
}

/// Random points and rays over the map: the point queries and the first ray hits agree
/// with brute force over the solid tiles, and `tile_at` of each hit is the first solid
/// tile along the ray. Returns the (point hits, ray hits) seen, to compare modes.
fn check_queries(
    app: &mut App,
    map: &Map,
    solid: &[bool],
    rng: &mut Rng,
) -> (Vec<bool>, Vec<Option<f32>>) {
    let tiles: Vec<(TilePos, Vec2, Vec2)> = (0..map.size.y)
        .flat_map(|y| (0..map.size.x).map(move |x| TilePos { x, y }))
        .filter(|p| solid[(p.y * map.size.x + p.x) as usize])
        .map(|p| {
            let (lo, hi) = tile_box(map, p);
            (p, lo, hi)
        })
        .collect();
    let (lo, _) = tile_box(map, TilePos { x: 0, y: 0 });
    let extent = Vec2::new(map.size.x as f32 * GRID.x, map.size.y as f32 * GRID.y);
    let mut points = Vec::new();
    let mut rays = Vec::new();
    for _ in 0..200 {
        let p = lo - 2.0 + Vec2::new(rng.unit(), rng.unit()) * (extent + 4.0);
        points.push(p);
        let origin = lo - 2.0 + Vec2::new(rng.unit(), rng.unit()) * (extent + 4.0);
        let angle = rng.unit() * std::f32::consts::TAU;
        rays.push((origin, Vec2::from_angle(angle)));
    }
    let map_entity = map.entity;
    let answers = app
        .world_mut()
        .run_system_once(move |spatial: SpatialQuery, hits: TilemapHits| {
            let (points, rays) = (points.clone(), rays.clone());
            let filter = QueryFilter::default();
            let on: Vec<bool> = points
                .iter()
                .map(|p| !spatial.point(*p, &filter).is_empty())
                .collect();
            let ray_hits: Vec<_> = rays
                .iter()
                .map(|(o, d)| {
                    let hit = spatial.cast_ray(&Ray::new(*o, *d), 100.0, &filter)?;
                    let tile = hits.tile_of(&hit).expect("a tile collider");
                    assert_eq!(tile.map, map_entity);
                    Some((hit.t, tile.position))
                })
                .collect();
            (points, rays, on, ray_hits)
        })
        .unwrap();
    let (points, rays, on, ray_hits) = answers;
    for (p, &got) in points.iter().zip(&on) {
        let want = tiles
            .iter()
            .any(|(_, a, b)| p.cmpge(*a).all() && p.cmple(*b).all());
        assert_eq!(got, want, "point {p}");
    }
    let mut ts = Vec::new();
    for ((o, d), got) in rays.iter().zip(&ray_hits) {
        let mut all: Vec<(f32, TilePos)> = tiles
            .iter()
            .filter_map(|(t, a, b)| ray_box(*o, *d, *a, *b, 100.0).map(|s| (s, *t)))
            .collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0));
        match (got, all.first()) {
            (None, None) => ts.push(None),
            (Some((t, tile)), Some((want_t, want_tile))) => {
                assert!((t - want_t).abs() < 1e-3, "ray {o} {d}: t {t} vs {want_t}");
                // Ties (a corner, or two tiles entered at once) have no single answer.
                let tied = all.get(1).is_some_and(|second| second.0 - want_t < 1e-3);
                if !tied {
                    assert_eq!(tile, want_tile, "ray {o} {d} at t {t}");
                }
                ts.push(Some(*t));
            }
            (got, want) => panic!("ray {o} {d}: got {got:?}, brute force {want:?}"),
        }
    }
    (on, ts)
}

/// A random map: each cell a tile with probability `density` percent, and a full bottom
/// row and left column (ground and a wall) that merging joins.
fn random_tiles(rng: &mut Rng, size: UVec2, density: u32) -> Vec<bool> {
    let mut cells = vec![false; (size.x * size.y) as usize];
    for cell in cells.iter_mut() {
        *cell = (rng.below(100) as u32) < density;
    }
    // Solid rows and a wall, as in a platformer.
    for x in 0..size.x {
        cells[x as usize] = true;
    }
    for y in 0..size.y {
        cells[(y * size.x) as usize] = true;
    }
    cells
}

/// How many rectangles the greedy merge of the module docs makes of `cells` (row-major
/// from the bottom row), by brute force: the cells are visited row by row from the bottom,
/// each row from the left; a solid cell no rectangle has taken yet starts one, which takes
/// the run of untaken solid cells to its right (at most `max.x` cells), then each row above
/// whose cells over that run are all untaken and solid (at most `max.y` rows in all).
fn greedy_rectangles(cells: &[bool], size: UVec2, max: UVec2) -> usize {
    let (width, height) = (size.x as usize, size.y as usize);
    let mut taken = vec![false; cells.len()];
    let free = |taken: &[bool], x: usize, y: usize| cells[y * width + x] && !taken[y * width + x];
    let mut rectangles = 0;
    for y in 0..height {
        for x in 0..width {
            if !free(&taken, x, y) {
                continue;
            }
            let run = (x..width)
                .take(max.x as usize)
                .take_while(|&cx| free(&taken, cx, y))
                .count();
            let rows = (y..height)
                .take(max.y as usize)
                .take_while(|&cy| (x..x + run).all(|cx| free(&taken, cx, cy)))
                .count();
            for cy in y..y + rows {
                taken[cy * width + x..cy * width + x + run].fill(true);
            }
            rectangles += 1;
        }
    }
    rectangles
}

#[test]
fn merged_and_per_tile_match_brute_force() {
    let mut rng = Rng::new(0x1234_5678_9abc_def1);
    for round in 0..6 {
        let size = UVec2::new(5 + rng.below(20) as u32, 4 + rng.below(14) as u32);
        let density = [20, 50, 80][round % 3];
        let cells = random_tiles(&mut rng, size, density);
        let anchor = [
            TilemapAnchor::None,
            TilemapAnchor::Center,
            TilemapAnchor::BottomLeft,
        ][round % 3];
        let max = UVec2::new(1 + rng.below(6) as u32, 1 + rng.below(6) as u32);
        let mut answers = Vec::new();
        for mode in [TileColliderMode::Merged, TileColliderMode::PerTile] {
            let mut app = app();
            let colliders = TilemapColliders {
                mode,
                max_rect: max,
                ..default()
            };
            let map = spawn_map(&mut app, size, anchor, colliders, |x, y| {
                cells[(y * size.x + x) as usize]
            });
            let solid = solid_cells(&mut app, &map, false);
            assert_eq!(solid, cells);
            let limit = if mode == TileColliderMode::PerTile {
                UVec2::ONE
            } else {
                max
            };
            check_cover(&mut app, &map, &solid, limit);
            let count = colliders_count(&mut app);
            let tiles = cells.iter().filter(|c| **c).count();
            if mode == TileColliderMode::PerTile {
                assert_eq!(count, tiles);
            } else {
                // The greedy merge's count; fewer than the tiles, as the bottom row and the
                // left column are runs that merge, unless rectangles are one tile.
                let greedy = greedy_rectangles(&cells, size, max);
                assert_eq!(
                    count, greedy,
                    "round {round}: a {size} map, rectangles of at most {max}"
                );
                assert!(max == UVec2::ONE || greedy < tiles, "round {round}");
            }
            let stats = *app.world().get::<TilemapColliderStats>(map.entity).unwrap();
            assert_eq!(stats.colliders, count);
            // The same random queries for both modes.
            let mut query_rng = Rng::new(0xfeed_0000 + round as u64);
            answers.push(check_queries(&mut app, &map, &solid, &mut query_rng));
        }
        assert_eq!(
            answers[0].0, answers[1].0,
            "round {round}: point answers differ"
        );
        for (a, b) in answers[0].1.iter().zip(&answers[1].1) {
            assert_eq!(a.is_some(), b.is_some());
            if let (Some(a), Some(b)) = (a, b) {
                assert!((a - b).abs() < 1e-3);
            }
        }
    }
}

fn colliders_count(app: &mut App) -> usize {
    app.world_mut()
        .query::<&TileCollider>()
        .iter(app.world())
        .count()
}

/// The colliders despawned, recorded by an observer of the test.
#[derive(Resource, Default)]
struct Despawned(Vec<TileCollider>);

#[test]
fn edits_replace_only_nearby_rectangles() {
    let mut rng = Rng::new(0x0bad_cafe_d00d_f00d);
    for marked in [false, true] {
        let size = UVec2::new(40, 24);
        let cells = random_tiles(&mut rng, size, 55);
        let mut app = app();
        app.init_resource::<Despawned>().add_observer(
            |gone: On<Remove, TileCollider>,
             tiles: Query<&TileCollider>,
             mut log: ResMut<Despawned>| {
                log.0.push(*tiles.get(gone.entity).unwrap());
            },
        );
        let max = UVec2::new(8, 6);
        let colliders = TilemapColliders {
            max_rect: max,
            solid: if marked {
                SolidTiles::Marked
            } else {
                SolidTiles::All
            },
            ..default()
        };
        let map = spawn_map(&mut app, size, TilemapAnchor::None, colliders, |x, y| {
            cells[(y * size.x + x) as usize]
        });
        if marked {
            // Every tile is there, marked or not: no collider yet.
            assert_eq!(colliders_count(&mut app), 0);
        } else {
            // Every tile solid: the greedy merge of the whole map.
            assert_eq!(
                colliders_count(&mut app),
                greedy_rectangles(&cells, size, max)
            );
        }
        for step in 0..120 {
            let edits = 1 + rng.below(3) as u32;
            let mut cells_edited = Vec::new();
            for _ in 0..edits {
                let position = TilePos {
                    x: rng.below(size.x as usize) as u32,
                    y: rng.below(size.y as usize) as u32,
                };
                cells_edited.push(position);
                let world = app.world_mut();
                let current = world.get::<TileStorage>(map.entity).unwrap().get(&position);
                match (current, marked) {
                    (Some(tile), false) => {
                        world.despawn(tile);
                        world
                            .get_mut::<TileStorage>(map.entity)
                            .unwrap()
                            .remove(&position);
                    }
                    (None, _) => {
                        let tile = world.spawn((position, TilemapId(map.entity))).id();
                        if marked {
                            world.entity_mut(tile).insert(SolidTile);
                        }
                        world
                            .get_mut::<TileStorage>(map.entity)
                            .unwrap()
                            .set(&position, tile);
                    }
                    (Some(tile), true) => {
                        if world.get::<SolidTile>(tile).is_some() {
                            world.entity_mut(tile).remove::<SolidTile>();
                        } else {
                            world.entity_mut(tile).insert(SolidTile);
                        }
                    }
                }
            }
            let before = colliders_count(&mut app);
            app.world_mut().resource_mut::<Despawned>().0.clear();
            settle(&mut app);
            let solid = solid_cells(&mut app, &map, marked);
            check_cover(&mut app, &map, &solid, max);
            let despawned = std::mem::take(&mut app.world_mut().resource_mut::<Despawned>().0);
            // At most the rectangle of each edited cell and those beside it.
            assert!(
                despawned.len() <= 4 * edits as usize,
                "step {step}: {} of {before} replaced",
                despawned.len()
            );
            for rect in despawned {
                let near = cells_edited.iter().any(|p| {
                    rect.min.x <= p.x + 1
                        && p.x <= rect.max.x + 1
                        && rect.min.y <= p.y + 1
                        && p.y <= rect.max.y + 1
                });
                assert!(
                    near,
                    "step {step}: {rect:?} replaced for edits at {cells_edited:?}"
                );
            }
        }
        let solid = solid_cells(&mut app, &map, marked);
        let mut query_rng = Rng::new(77);
        check_queries(&mut app, &map, &solid, &mut query_rng);
    }
}

#[test]
fn changing_the_settings_or_removing_them_rebuilds_or_clears() {
    let mut app = app();
    let size = UVec2::new(12, 6);
    let map = spawn_map(
        &mut app,
        size,
        TilemapAnchor::None,
        TilemapColliders::default(),
        |_, y| y < 2,
    );
    // Two full rows merge within the limit of 32 tiles: one rectangle.
    assert_eq!(colliders_count(&mut app), 1);
    app.world_mut()
        .get_mut::<TilemapColliders>(map.entity)
        .unwrap()
        .mode = TileColliderMode::PerTile;
    settle(&mut app);
    assert_eq!(colliders_count(&mut app), 24);
    app.world_mut()
        .entity_mut(map.entity)
        .remove::<TilemapColliders>();
    settle(&mut app);
    assert_eq!(colliders_count(&mut app), 0);
    assert!(app.world().resource::<AabbTree>().static_tree().is_empty());
}

#[test]
fn a_non_square_map_warns_once_and_gets_no_colliders() {
    let warnings = Warnings::default();
    let subscriber = Registry::default().with(warnings.clone());
    let mut app = app();
    // The subscriber is this thread's: the systems must run on it.
    app.edit_schedule(Update, |schedule| {
        schedule.set_executor(SingleThreadedExecutor::new());
    });
    let map = bevy::log::tracing::subscriber::with_default(subscriber, || {
        let map = spawn_map(
            &mut app,
            UVec2::new(6, 6),
            TilemapAnchor::None,
            TilemapColliders::default(),
            |_, _| true,
        );
        app.world_mut()
            .entity_mut(map.entity)
            .insert(TilemapType::Isometric(IsoCoordSystem::Diamond));
        for _ in 0..5 {
            app.update();
        }
        map
    });
    // A map without a `TileStorage`: named in a warning too.
    let subscriber = Registry::default().with(warnings.clone());
    let incomplete = bevy::log::tracing::subscriber::with_default(subscriber, || {
        let entity = app
            .world_mut()
            .spawn((
                Transform::default(),
                TilemapType::Square,
                GRID,
                TilemapColliders::default(),
            ))
            .id();
        for _ in 0..5 {
            app.update();
        }
        entity
    });
    assert_eq!(colliders_count(&mut app), 0);
    let name = format!("tile map {}:", map.entity);
    let seen = warnings.containing(&name);
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert!(seen[0].contains("Isometric"), "{}", seen[0]);
    let name = format!("tile map {incomplete}:");
    let seen = warnings.containing(&name);
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert!(seen[0].contains("TileStorage"), "{}", seen[0]);
}
