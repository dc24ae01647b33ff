//! Keeping the colliders of each map: the observers that note edited tiles and changed
//! maps, and the system that builds a map's colliders or applies its edits.

use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::prelude::*;
use bevy_ecs_tilemap::anchor::TilemapAnchor;
use bevy_ecs_tilemap::map::{TilemapGridSize, TilemapId, TilemapTileSize, TilemapType};
use bevy_ecs_tilemap::tiles::{TilePos, TileStorage};
use glam::UVec2;

use super::merge::MapFrame;
use super::merge::{CellRect, GridChange, TileGrid};
use super::{
    SolidTile, SolidTiles, TileCollider, TileColliderMode, TilemapColliderStats, TilemapColliders,
};
use crate::plugin::{Aabb, Static};

/// Edits noted by the observers since the last run of [`sync_tilemaps`].
#[derive(Resource, Default)]
pub(crate) struct PendingTileEdits {
    /// Cells whose solidity may have changed, per map.
    cells: EntityHashMap<Vec<TilePos>>,
    /// Maps to rebuild whole.
    rebuild: EntityHashSet,
}

/// What the plugin keeps for one map, on the map entity.
#[derive(Component, Default)]
pub(crate) struct TilemapColliderState {
    /// The grid and its rectangles; `None` for a map the plugin cannot handle.
    grid: Option<TileGrid>,
    /// The collider entity of each rectangle slot.
    entities: Vec<Entity>,
    pub(crate) frame: MapFrame,
    change: GridChange,
}

impl TilemapColliderState {
    /// The map's size in tiles, for a map with colliders.
    pub(crate) fn size(&self) -> Option<UVec2> {
        self.grid.as_ref().map(TileGrid::size)
    }
}

/// Notes the tile's cell as edited, for the map of its `TilemapId`, if that map has
/// [`TilemapColliders`]. Runs for inserts and discards (removal, despawn, overwrite) of
/// the tile components that decide where a tile is and whether it is solid.
pub(crate) fn on_tile_changed<E: EntityEvent, C: Component>(
    event: On<E, C>,
    tiles: Query<(&TilePos, &TilemapId)>,
    maps: Query<(), With<TilemapColliders>>,
    mut pending: ResMut<PendingTileEdits>,
) {
    if let Ok((position, map)) = tiles.get(event.event_target())
        && maps.contains(map.0)
    {
        pending.cells.entry(map.0).or_default().push(*position);
    }
}

/// Notes the map for a rebuild when one of the components its colliders are made from is
/// inserted (or overwritten).
pub(crate) fn on_map_changed<C: Component>(
    event: On<Insert, C>,
    maps: Query<(), With<TilemapColliders>>,
    mut pending: ResMut<PendingTileEdits>,
) {
    let map = event.event_target();
    if maps.contains(map) {
        pending.rebuild.insert(map);
    }
}

/// [`TilemapColliders`] removed (or the map despawned): its colliders and state go.
pub(crate) fn on_colliders_removed(
    event: On<Remove, TilemapColliders>,
    states: Query<&TilemapColliderState>,
    mut commands: Commands,
) {
    let map = event.event_target();
    if let Ok(state) = states.get(map) {
        despawn_all(state, &mut commands);
        commands
            .entity(map)
            .try_remove::<(TilemapColliderState, TilemapColliderStats)>();
    }
}

/// The map components [`sync_tilemaps`] reads.
type MapData = (
    Entity,
    Ref<'static, TilemapColliders>,
    &'static TileStorage,
    &'static TilemapType,
    &'static TilemapGridSize,
    Option<&'static TilemapTileSize>,
    Option<&'static TilemapAnchor>,
    Option<&'static mut TilemapColliderState>,
    Option<&'static mut TilemapColliderStats>,
);

/// Builds the colliders of new or changed maps, and applies the noted edits of the others.
pub(crate) fn sync_tilemaps(
    mut maps: Query<MapData>,
    tiles: Query<Has<SolidTile>, With<TilePos>>,
    mut pending: ResMut<PendingTileEdits>,
    mut commands: Commands,
) {
    let pending = &mut *pending;
    for (map, config, storage, map_type, grid_size, tile_size, anchor, state, stats) in &mut maps {
        let is_solid = |position: &TilePos| {
            storage.checked_get(position).is_some_and(|tile| {
                tiles
                    .get(tile)
                    .is_ok_and(|marked| config.solid == SolidTiles::All || marked)
            })
        };
        let edits = pending.cells.remove(&map);
        // A map seen for the first time gets its state and stats inserted after the build.
        let is_new = state.is_none();
        let mut new_state = None;
        let state = match state {
            Some(state) => state.into_inner(),
            None => new_state.insert(TilemapColliderState::default()),
        };
        let mut fresh = TilemapColliderStats::default();
        let stats = match stats {
            Some(stats) => stats.into_inner(),
            None => &mut fresh,
        };
        if is_new || config.is_changed() || pending.rebuild.contains(&map) {
            despawn_all(state, &mut commands);
            *state = TilemapColliderState::default();
            *stats = build(
                map,
                &config,
                storage,
                map_type,
                grid_size,
                tile_size,
                anchor,
                state,
                is_solid,
                &mut commands,
            );
            if let Some(state) = new_state {
                commands.entity(map).insert((state, *stats));
            }
            continue;
        }
        let (Some(edits), Some(grid)) = (edits, state.grid.as_mut()) else {
            continue;
        };
        let mut replaced = 0;
        for position in &edits {
            state.change.clear();
            if !grid.set(
                position.x,
                position.y,
                is_solid(position),
                &mut state.change,
            ) {
                continue;
            }
            // Each edit at once: a later edit of the batch may take out a rectangle this
            // one made. Freed slots first: a slot reused by a new rectangle gets its new
            // entity after.
            for &slot in &state.change.removed {
                if let Some(&entity) = state.entities.get(slot as usize) {
                    commands.entity(entity).try_despawn();
                }
            }
            for &slot in &state.change.added {
                if let Some(rect) = grid.rect(slot) {
                    let entity = spawn_collider(map, &config, &state.frame, rect, &mut commands);
                    set_slot(&mut state.entities, slot, entity);
                }
            }
            replaced += state.change.removed.len();
        }
        stats.colliders = grid.rect_count();
        stats.last_edit_replaced = replaced;
        stats.grid_bytes = grid.bytes() + state.entities.capacity() * size_of::<Entity>();
    }
    pending.cells.clear();
    pending.rebuild.clear();
}

/// Which of the components the colliders are made from a map has.
type MapParts = (
    Entity,
    Has<TileStorage>,
    Has<TilemapType>,
    Has<TilemapGridSize>,
);

/// A map with [`TilemapColliders`] that lacks a component the colliders are made from:
/// one warning naming it and what it lacks (again if it lacks it again later).
pub(crate) fn warn_incomplete_maps(
    maps: Query<MapParts, With<TilemapColliders>>,
    mut warned: Local<EntityHashSet>,
) {
    for (map, storage, map_type, grid) in &maps {
        let missing: Vec<&str> = [
            (storage, "TileStorage"),
            (map_type, "TilemapType"),
            (grid, "TilemapGridSize"),
        ]
        .into_iter()
        .filter_map(|(has, name)| (!has).then_some(name))
        .collect();
        if missing.is_empty() {
            warned.remove(&map);
        } else if warned.insert(map) {
            warn!(
                "tile map {map}: it has TilemapColliders but no {}, so it has no colliders",
                missing.join(", ")
            );
        }
    }
}

/// Builds a map's grid and spawns its colliders; a map the plugin cannot handle gets a
/// warning naming it, and no colliders.
#[allow(clippy::too_many_arguments)]
fn build(
    map: Entity,
    config: &TilemapColliders,
    storage: &TileStorage,
    map_type: &TilemapType,
    grid_size: &TilemapGridSize,
    tile_size: Option<&TilemapTileSize>,
    anchor: Option<&TilemapAnchor>,
    state: &mut TilemapColliderState,
    is_solid: impl Fn(&TilePos) -> bool,
    commands: &mut Commands,
) -> TilemapColliderStats {
    if *map_type != TilemapType::Square {
        warn!(
            "tile map {map}: its TilemapType is {map_type:?}; TilemapColliders handles square maps only, so it has no colliders"
        );
        return TilemapColliderStats::default();
    }
    let grid = Vec2::new(grid_size.x, grid_size.y);
    if !grid.is_finite() || grid.cmple(Vec2::ZERO).any() {
        warn!(
            "tile map {map}: its TilemapGridSize {grid} is not positive and finite, so it has no colliders"
        );
        return TilemapColliderStats::default();
    }
    let size = storage.size;
    let offset = anchor.map_or(Vec2::ZERO, |anchor| {
        let tile_size = tile_size.copied().unwrap_or(TilemapTileSize {
            x: grid.x,
            y: grid.y,
        });
        anchor.as_offset(&size, grid_size, &tile_size, map_type)
    });
    state.frame = MapFrame {
        origin: offset,
        grid,
    };
    let max = match config.mode {
        TileColliderMode::PerTile => UVec2::ONE,
        TileColliderMode::Merged => config.max_rect.max(UVec2::ONE),
    };
    let built = TileGrid::build(
        size.x,
        size.y,
        max,
        |x, y| is_solid(&TilePos { x, y }),
        &mut state.change,
    );
    state.entities = Vec::with_capacity(state.change.added.len());
    for &slot in &state.change.added {
        if let Some(rect) = built.rect(slot) {
            let entity = spawn_collider(map, config, &state.frame, rect, commands);
            set_slot(&mut state.entities, slot, entity);
        }
    }
    let stats = TilemapColliderStats {
        colliders: built.rect_count(),
        last_edit_replaced: 0,
        grid_bytes: built.bytes() + state.entities.capacity() * size_of::<Entity>(),
    };
    state.change.clear();
    state.grid = Some(built);
    stats
}

/// Spawns the collider of one rectangle, a child of the map placed in the map's frame.
fn spawn_collider(
    map: Entity,
    config: &TilemapColliders,
    frame: &MapFrame,
    rect: CellRect,
    commands: &mut Commands,
) -> Entity {
    let (center, half) = frame.rect_box(rect.min, rect.max);
    commands
        .spawn((
            TileCollider {
                map,
                min: TilePos::new(rect.min.x, rect.min.y),
                max: TilePos::new(rect.max.x, rect.max.y),
            },
            Transform::from_translation(center.extend(0.0)),
            Aabb::new(half),
            Static,
            config.layers,
            ChildOf(map),
        ))
        .id()
}

/// Records the entity of a slot, growing the list for a new slot.
fn set_slot(entities: &mut Vec<Entity>, slot: u32, entity: Entity) {
    let slot = slot as usize;
    if entities.len() <= slot {
        entities.resize(slot + 1, Entity::PLACEHOLDER);
    }
    entities[slot] = entity;
}

/// Despawns every collider of the map.
fn despawn_all(state: &TilemapColliderState, commands: &mut Commands) {
    if let Some(grid) = &state.grid {
        for (slot, _) in grid.rects() {
            if let Some(&entity) = state.entities.get(slot as usize) {
                commands.entity(entity).try_despawn();
            }
        }
    }
}
