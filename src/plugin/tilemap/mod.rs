//! Colliders for [`bevy_ecs_tilemap`] 0.19 tile layers. Feature `tilemap`.
//!
//! Insert [`TilemapColliders`] on a tile-map entity (the one with `TileStorage`,
//! `TilemapSize`, `TilemapGridSize` and `TilemapType::Square`) and add
//! [`AabbTreeTilemapPlugin`] beside `AabbTreePlugin::<Vec2>`: the plugin gives the layer's
//! solid tiles [`Static`](crate::plugin::Static) box colliders, spawned as children of the map entity (so they
//! follow the map's `Transform`), each with a [`TileCollider`] saying which tiles it
//! covers. The map's own rendering is untouched.
//!
//! - **Which tiles are solid**: [`SolidTiles::All`] (the default), every tile of the
//!   layer (a collision layer, or a layer of walls); [`SolidTiles::Marked`], the tiles
//!   with the [`SolidTile`] marker (a game puts it on the tiles whose texture is a wall).
//! - **One collider per tile, or merged** ([`TileColliderMode`]): `Merged` (the default)
//!   covers the solid tiles with rectangles (a greedy merge: runs along rows, grown
//!   upwards), at most [`TilemapColliders::max_rect`] tiles on a side, so a level of a
//!   million tiles becomes a few thousand colliders; `PerTile` spawns one collider per
//!   solid tile. Both answer every query and contact the same way; merged colliders have
//!   no seams inside a rectangle, and the character controller and `move_and_slide`
//!   already glide over the seams between tiles.
//! - **Which tile was hit**: [`TilemapHits::tile_at`] turns a hit (a ray or shape cast's
//!   point and normal, or a contact) on any tile collider into the tile: the point is
//!   moved a quarter tile inside along the normal and clamped into the collider's
//!   rectangle.
//! - **Edits at run time**: spawning or despawning a tile entity, inserting its `TilePos`
//!   or `TilemapId`, and inserting or removing [`SolidTile`] are seen (by observers, at
//!   once) and applied at the next tick: only the rectangle that covered the tile, or the
//!   rectangles beside a new solid tile, are despawned and merged again. Changing
//!   [`TilemapColliders`], or inserting the map's `TileStorage`, `TilemapType`,
//!   `TilemapGridSize` or `TilemapAnchor`, rebuilds the map's colliders.
//!
//! A collider's box is its tiles' cells: `TilemapGridSize` per tile (the distance between
//! tile centers, not the texture's `TilemapTileSize`), placed as the tile-map crate places
//! its tiles (the map's `TilemapAnchor` included).
//!
//! # Examples
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_aabb_tree::d2::*;
//! use bevy_aabb_tree::plugin::tilemap::{AabbTreeTilemapPlugin, TilemapColliders, TilemapHits};
//! use bevy_ecs_tilemap::prelude::*;
//!
//! fn main() {
//!     App::new()
//!         .add_plugins(DefaultPlugins)
//!         .add_plugins((TilemapPlugin, AabbTreePlugin::default(), AabbTreeTilemapPlugin::default()))
//!         .add_systems(Startup, spawn_map)
//!         .add_systems(Update, dig)
//!         .run();
//! }
//!
//! fn spawn_map(mut commands: Commands) {
//!     let size = TilemapSize { x: 32, y: 8 };
//!     let map = commands.spawn_empty().id();
//!     let mut storage = TileStorage::empty(size);
//!     for x in 0..size.x {
//!         let position = TilePos { x, y: 0 };
//!         let tile = commands
//!             .spawn(TileBundle { position, tilemap_id: TilemapId(map), ..default() })
//!             .id();
//!         storage.set(&position, tile);
//!     }
//!     // What the colliders are made from (a drawn map uses the tile-map crate's
//!     // `TilemapBundle`, which holds these and what drawing needs).
//!     commands.entity(map).insert((
//!         size,
//!         storage,
//!         TilemapGridSize { x: 16.0, y: 16.0 },
//!         TilemapTileSize { x: 16.0, y: 16.0 },
//!         TilemapType::Square,
//!         Transform::default(),
//!         TilemapColliders::default(),
//!     ));
//! }
//!
//! /// Removes the tile a ray straight down from (40, 100) hits first.
//! fn dig(
//!     spatial: SpatialQuery,
//!     hits: TilemapHits,
//!     mut maps: Query<&mut TileStorage>,
//!     mut commands: Commands,
//! ) {
//!     let ray = Ray::new(Vec2::new(40.0, 100.0), Vec2::NEG_Y);
//!     let Some(hit) = spatial.cast_ray(&ray, 200.0, &QueryFilter::default()) else { return };
//!     if let Some(tile) = hits.tile_of(&hit)
//!         && let Ok(mut storage) = maps.get_mut(tile.map)
//!         && let Some(entity) = storage.remove(&tile.position)
//!     {
//!         commands.entity(entity).despawn();
//!     }
//! }
//! ```
//!
//! # Limits
//!
//! - 2D only (`AabbTreePlugin::<Vec2>`), square maps only: a map of another
//!   `TilemapType` gets one warning naming it, and no colliders.
//! - A tile moved by writing its `TilePos` in place, or a `TileStorage` edited without
//!   spawning, despawning or re-inserting a tile, is not seen until the map is rebuilt:
//!   insert the new `TilePos` instead.
//! - Edits are applied at the pipeline's next tick, before its prepare stage; a query in
//!   between still sees the old colliders.

mod lookup;
mod merge;
mod sync;

use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy::prelude::*;
use bevy_ecs_tilemap::anchor::TilemapAnchor;
use bevy_ecs_tilemap::map::{
    TilemapGridSize, TilemapId, TilemapSize, TilemapTileSize, TilemapType,
};
use bevy_ecs_tilemap::tiles::{TilePos, TileStorage};

use crate::plugin::{CollisionLayers, CollisionSystems};

pub use lookup::{TileHit, TilemapHits};

/// Colliders for a tile layer: insert it on the map entity (the one with `TileStorage`).
/// [`AabbTreeTilemapPlugin`] then keeps a [`Static`](crate::plugin::Static) collider
/// under the map for each solid tile, or for each rectangle of solid tiles. Changing it
/// rebuilds the map's colliders; removing it despawns them.
///
/// # Examples
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::prelude::*;
/// use bevy_aabb_tree::plugin::tilemap::{SolidTiles, TileColliderMode, TilemapColliders};
/// // Walls are the tiles marked `SolidTile`, one collider per tile, on layer 1.
/// let colliders = TilemapColliders {
///     mode: TileColliderMode::PerTile,
///     solid: SolidTiles::Marked,
///     layers: CollisionLayers::new(1, u32::MAX),
///     ..default()
/// };
/// ```
#[derive(Component, Clone, Debug, PartialEq, Reflect)]
#[reflect(Component, Debug, PartialEq, Default)]
pub struct TilemapColliders {
    /// One collider per tile, or merged rectangles. Default [`TileColliderMode::Merged`].
    pub mode: TileColliderMode,
    /// Which tiles are solid. Default [`SolidTiles::All`].
    pub solid: SolidTiles,
    /// The layers of every collider of the map. Default [`CollisionLayers::ALL`].
    pub layers: CollisionLayers,
    /// The largest merged rectangle, in tiles on each axis (each at least 1). It bounds
    /// the work of an edit, which merges again at most the rectangles around the tile.
    /// Default 32 × 32. Unused with [`TileColliderMode::PerTile`].
    pub max_rect: UVec2,
}

impl Default for TilemapColliders {
    fn default() -> Self {
        Self {
            mode: TileColliderMode::Merged,
            solid: SolidTiles::All,
            layers: CollisionLayers::ALL,
            max_rect: UVec2::splat(32),
        }
    }
}

/// How [`TilemapColliders`] covers the solid tiles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Debug, PartialEq, Default)]
pub enum TileColliderMode {
    /// One collider per solid tile.
    PerTile,
    /// Rectangles of solid tiles: each row's runs of solid tiles, grown upwards over the
    /// rows with the same run, at most [`TilemapColliders::max_rect`] tiles on a side.
    #[default]
    Merged,
}

/// Which tiles of a layer are solid.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Debug, PartialEq, Default)]
pub enum SolidTiles {
    /// Every tile in the map's `TileStorage`.
    #[default]
    All,
    /// The tiles with [`SolidTile`].
    Marked,
}

/// Marks a tile entity as solid for a map whose [`TilemapColliders::solid`] is
/// [`SolidTiles::Marked`]. Inserting or removing it updates the colliders at the next
/// tick.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Debug, PartialEq, Default)]
pub struct SolidTile;

/// On each collider the plugin spawns for a map: the map entity and the rectangle of
/// tiles it covers (both corners included; the same tile for
/// [`TileColliderMode::PerTile`]). Read it; the plugin owns these entities.
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component, Debug, PartialEq)]
pub struct TileCollider {
    /// The map entity (its parent).
    pub map: Entity,
    /// The bottom-left tile.
    pub min: TilePos,
    /// The top-right tile.
    pub max: TilePos,
}

impl TileCollider {
    /// Whether the tile is one of the collider's.
    pub fn contains(&self, tile: TilePos) -> bool {
        (self.min.x..=self.max.x).contains(&tile.x) && (self.min.y..=self.max.y).contains(&tile.y)
    }

    /// The number of tiles it covers.
    pub fn tile_count(&self) -> u64 {
        u64::from(self.max.x - self.min.x + 1) * u64::from(self.max.y - self.min.y + 1)
    }
}

/// What the plugin keeps for a map, on the map entity: how many colliders and solid
/// tiles, and the memory of its grid. Maintained by the plugin; read it.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Debug, PartialEq, Default)]
pub struct TilemapColliderStats {
    /// The colliders of the map now.
    pub colliders: usize,
    /// The colliders despawned (and as many or more spawned) by the edits of the last
    /// tick that had edits; 0 after a rebuild.
    pub last_edit_replaced: usize,
    /// The bytes of the grid the plugin keeps for the map (a flag and a rectangle index
    /// per cell, and the rectangles), besides the colliders' entities and the trees.
    pub grid_bytes: usize,
}

/// Keeps the colliders of every map with [`TilemapColliders`] (see
/// [the module](self)). Add it beside `AabbTreePlugin::<Vec2>` in the same schedule:
/// `AabbTreeTilemapPlugin::new(Update)` for an `AabbTreePlugin::new(Update)`; the
/// default is `FixedPostUpdate`, as the collision plugin's. Its system runs before
/// [`CollisionSystems::Prepare`], so an edit's colliders are in that tick's tree.
pub struct AabbTreeTilemapPlugin {
    schedule: InternedScheduleLabel,
}

impl AabbTreeTilemapPlugin {
    /// The plugin updating the colliders in `schedule`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
        }
    }
}

impl Default for AabbTreeTilemapPlugin {
    /// Runs in `FixedPostUpdate`.
    fn default() -> Self {
        Self::new(FixedPostUpdate)
    }
}

/// The system of [`AabbTreeTilemapPlugin`], to order against.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TilemapCollidersSystems;

impl Plugin for AabbTreeTilemapPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<sync::PendingTileEdits>()
            .register_type::<TilemapColliders>()
            .register_type::<SolidTile>()
            .register_type::<TileCollider>()
            .register_type::<TilemapColliderStats>()
            .configure_sets(
                self.schedule,
                TilemapCollidersSystems.before(CollisionSystems::Prepare),
            )
            .add_systems(
                self.schedule,
                (sync::warn_incomplete_maps, sync::sync_tilemaps).in_set(TilemapCollidersSystems),
            )
            .add_observer(sync::on_tile_changed::<Insert, TilePos>)
            .add_observer(sync::on_tile_changed::<Discard, TilePos>)
            .add_observer(sync::on_tile_changed::<Insert, TilemapId>)
            .add_observer(sync::on_tile_changed::<Discard, TilemapId>)
            .add_observer(sync::on_tile_changed::<Insert, SolidTile>)
            .add_observer(sync::on_tile_changed::<Discard, SolidTile>)
            .add_observer(sync::on_map_changed::<TileStorage>)
            .add_observer(sync::on_map_changed::<TilemapType>)
            .add_observer(sync::on_map_changed::<TilemapGridSize>)
            .add_observer(sync::on_map_changed::<TilemapSize>)
            .add_observer(sync::on_map_changed::<TilemapTileSize>)
            .add_observer(sync::on_map_changed::<TilemapAnchor>)
            .add_observer(sync::on_colliders_removed);
    }
}
