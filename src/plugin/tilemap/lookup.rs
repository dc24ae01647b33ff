//! From a hit on a tile collider to the tile: [`TilemapHits`].

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_ecs_tilemap::tiles::TilePos;

use super::TileCollider;
use super::sync::TilemapColliderState;
use crate::plugin::ShapeHit;

/// A tile of a map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TileHit {
    /// The map entity.
    pub map: Entity,
    /// The tile's position in the map.
    pub position: TilePos,
}

/// A system parameter that tells which tile a hit on a tile collider hit, for merged
/// colliders as for one per tile.
///
/// It reads the map's `GlobalTransform` (as of the last transform propagation) and the
/// colliders the plugin keeps; a hit on an entity that is not a tile collider gives
/// `None`.
///
/// # Examples
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::d2::*;
/// use bevy_aabb_tree::plugin::tilemap::TilemapHits;
///
/// /// Logs the tile straight below (0, 50).
/// fn tile_below(spatial: SpatialQuery, hits: TilemapHits) {
///     let ray = Ray::new(Vec2::new(0.0, 50.0), Vec2::NEG_Y);
///     if let Some(hit) = spatial.cast_ray(&ray, 100.0, &QueryFilter::default())
///         && let Some(tile) = hits.tile_of(&hit)
///     {
///         info!("standing above tile {:?} of map {}", tile.position, tile.map);
///     }
/// }
/// # bevy::ecs::system::assert_is_system(tile_below);
/// ```
#[derive(SystemParam)]
pub struct TilemapHits<'w, 's> {
    colliders: Query<'w, 's, &'static TileCollider>,
    maps: Query<'w, 's, (&'static GlobalTransform, &'static TilemapColliderState)>,
}

impl TilemapHits<'_, '_> {
    /// The tile of `collider` at the world `point` of a hit whose surface normal is
    /// `normal` (outward from the collider, as in [`ShapeHit`]; zero when unknown, as for
    /// a query that starts inside). The point is moved a quarter tile against the normal,
    /// into the collider, and the tile under it, clamped into the collider's rectangle,
    /// is the answer: a point on the face between two tiles gives the tile behind the
    /// face. `None` when `collider` is not a tile collider or its map is gone.
    pub fn tile_at(&self, collider: Entity, point: Vec2, normal: Vec2) -> Option<TileHit> {
        let tile = self.colliders.get(collider).ok()?;
        let (transform, state) = self.maps.get(tile.map).ok()?;
        let frame = state.frame;
        let inverse = transform.affine().inverse();
        let local = inverse
            .transform_point3(point.extend(transform.translation().z))
            .truncate();
        let local_normal = inverse
            .transform_vector3(normal.extend(0.0))
            .truncate()
            .normalize_or_zero();
        let inside = local - local_normal * frame.grid * 0.25;
        if !inside.is_finite() {
            return None;
        }
        let cell = frame.cell(inside);
        let min = IVec2::new(tile.min.x as i32, tile.min.y as i32);
        let max = IVec2::new(tile.max.x as i32, tile.max.y as i32);
        let cell = cell.clamp(min, max);
        Some(TileHit {
            map: tile.map,
            position: TilePos::new(cell.x as u32, cell.y as u32),
        })
    }

    /// The tile a ray or shape-cast hit hit: [`Self::tile_at`] of its entity, point and
    /// normal.
    pub fn tile_of(&self, hit: &ShapeHit<Vec2>) -> Option<TileHit> {
        self.tile_at(hit.entity, hit.point, hit.normal)
    }

    /// The tile of `map` under a world point, solid or not: `None` outside the map or for
    /// a map without colliders. The reverse of the map's placement of its tiles.
    pub fn tile_under(&self, map: Entity, point: Vec2) -> Option<TilePos> {
        let (transform, state) = self.maps.get(map).ok()?;
        let size = state.size()?;
        let local = transform
            .affine()
            .inverse()
            .transform_point3(point.extend(transform.translation().z))
            .truncate();
        let cell = state.frame.cell(local);
        (cell.cmpge(IVec2::ZERO).all() && cell.x < size.x as i32 && cell.y < size.y as i32)
            .then(|| TilePos::new(cell.x as u32, cell.y as u32))
    }
}
