//! A [`bevy_picking`](bevy::picking) backend: pointer hits from this crate's ray casts (3D)
//! and point queries (2D), so `Pointer<Over>`, `Pointer<Click>` and the other pointer
//! events reach colliders without meshes or sprites to pick. Feature `picking`.
//!
//! Add [`AabbTreePickingPlugin`] beside the [`AabbTreePlugin`](crate::AabbTreePlugin) of
//! the same dimension; Bevy's picking plugins (in `DefaultPlugins` with Bevy's
//! `bevy_picking` feature, which `picking` turns on) turn the hits into pointer events.
//!
//! - **3D** (`AabbTreePickingPlugin::<Vec3>`): each pointer's ray (Bevy's
//!   [`RayMap`]) is cast with [`SpatialQuery::ray_hits`]; every collider it crosses is a hit,
//!   with depth the distance along the ray, the point where the ray enters it and the
//!   normal of the face hit.
//! - **2D** (`AabbTreePickingPlugin::<Vec2>`): colliders lie in the XY plane. The point
//!   where the pointer's ray meets the plane z = 0 (for a 2D camera, the cursor's world
//!   position) is a [`SpatialQuery::point`] query; every collider containing it is a hit,
//!   with depth the distance along the ray to the plane of the entity's z (its
//!   `GlobalTransform`'s translation), so, as for sprites, the entity of greater z is on
//!   top.
//!
//! Every collider is pickable by default. [`Pickable::IGNORE`] on an entity leaves it out;
//! [`AabbTreePickingFilter`] on a camera sets which layers (and entities) it can pick;
//! [`AabbTreePickingSettings::require_markers`] makes picking opt-in, with
//! [`AabbTreePickable`] on the cameras and the entities that take part.
//!
//! # Examples
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_aabb_tree::d2::*;
//!
//! fn main() {
//!     App::new()
//!         .add_plugins(DefaultPlugins)
//!         .add_plugins((AabbTreePlugin::default(), AabbTreePickingPlugin::default()))
//!         .add_systems(Startup, setup)
//!         .run();
//! }
//!
//! fn setup(mut commands: Commands) {
//!     commands.spawn(Camera2d);
//!     commands
//!         .spawn((Transform::from_xyz(0.0, 0.0, 0.0), Aabb::new(Vec2::splat(50.0))))
//!         .observe(|click: On<Pointer<Click>>| info!("clicked {}", click.entity));
//! }
//! ```

use core::marker::PhantomData;

use bevy::camera::Camera;
use bevy::picking::backend::ray::RayMap;
use bevy::picking::backend::{HitData, PointerHits};
use bevy::picking::{Pickable, PickingSystems};
use bevy::prelude::*;

use crate::Vector;
use crate::geometry::Ray;
use crate::plugin::{QueryFilter, SpatialQuery};

/// The picking backend of one dimension: `AabbTreePickingPlugin::<Vec2>` or
/// `AabbTreePickingPlugin::<Vec3>` (`d2::AabbTreePickingPlugin`,
/// `d3::AabbTreePickingPlugin`).
///
/// Adds a system in `PreUpdate`, in [`PickingSystems::Backend`], that writes one
/// [`PointerHits`] message for each ray of Bevy's [`RayMap`] (one per pointer and active
/// camera) that hits a collider: every collider hit, nearest first (by depth, then by
/// entity), in the camera's `order`. It reads the shapes of the collision pipeline's last
/// tick (see [`SpatialQuery`]). Also adds [`AabbTreePickingSettings`] (if absent) and,
/// for apps without Bevy's picking plugins (tests), the [`RayMap`] and the messages.
///
/// Needs the [`AabbTreePlugin`](crate::AabbTreePlugin) of the same dimension: the system
/// reads its [`AabbTree`](crate::AabbTree). Pointer events need Bevy's picking plugins
/// (`DefaultPickingPlugins`, in `DefaultPlugins` with Bevy's `bevy_picking` feature).
/// With both dimensions' backends, a 2D and a 3D collider under the same pointer are both
/// reported, each by its own backend.
///
/// See [the module](self) for what a hit is in each dimension.
///
/// # Examples
///
/// A 3D scene where clicking a box logs it:
///
/// ```no_run
/// use bevy::prelude::*;
/// use bevy_aabb_tree::d3::*;
///
/// App::new()
///     .add_plugins(DefaultPlugins)
///     .add_plugins((AabbTreePlugin::default(), AabbTreePickingPlugin::default()))
///     .add_systems(Startup, |mut commands: Commands| {
///         commands.spawn((Camera3d::default(), Transform::from_xyz(0.0, 2.0, 8.0)));
///         commands
///             .spawn((Transform::default(), Aabb::new(Vec3::splat(1.0))))
///             .observe(|click: On<Pointer<Click>>| info!("clicked {}", click.entity));
///     })
///     .run();
/// ```
pub struct AabbTreePickingPlugin<V: Vector> {
    _marker: PhantomData<fn() -> V>,
}

impl<V: Vector> Default for AabbTreePickingPlugin<V> {
    fn default() -> Self {
        Self {
            _marker: PhantomData,
        }
    }
}

impl<V: Vector> Plugin for AabbTreePickingPlugin<V> {
    fn build(&self, app: &mut App) {
        app.init_resource::<AabbTreePickingSettings>()
            .init_resource::<RayMap>()
            .add_message::<PointerHits>()
            .register_type::<AabbTreePickingSettings>()
            .register_type::<AabbTreePickable>()
            .add_systems(PreUpdate, update_hits::<V>.in_set(PickingSystems::Backend));
    }
}

/// The settings of the picking backend (both dimensions), a resource.
///
/// # Examples
///
/// Picking only what is marked:
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::d2::*;
/// # let mut app = App::new();
/// app.insert_resource(AabbTreePickingSettings { require_markers: true });
/// app.world_mut().spawn((Camera2d, AabbTreePickable));
/// app.world_mut().spawn((Transform::default(), Aabb::new(Vec2::ONE), AabbTreePickable));
/// ```
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Resource, Default)]
pub struct AabbTreePickingSettings {
    /// When `true`, only cameras with [`AabbTreePickable`] pick, and they pick only
    /// entities with [`AabbTreePickable`]. Default: `false` (every camera, every collider).
    pub require_markers: bool,
}

/// Marks the cameras and the colliders that take part in picking when
/// [`AabbTreePickingSettings::require_markers`] is `true`; ignored otherwise.
///
/// # Examples
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::d3::*;
/// fn spawn_button(mut commands: Commands) {
///     commands.spawn((Transform::default(), Aabb::new(Vec3::splat(0.5)), AabbTreePickable));
/// }
/// ```
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Default)]
pub struct AabbTreePickable;

/// On a camera: the [`QueryFilter`] of its picking queries, so that the camera picks only
/// some layers (by the colliders' `CollisionLayers` memberships), leaves out some entities
/// or sensors. Without it a camera picks every collider.
///
/// # Examples
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::d2::*;
/// fn spawn_camera(mut commands: Commands) {
///     // Picks the colliders in layer 0 only.
///     commands.spawn((Camera2d, AabbTreePickingFilter(QueryFilter::default().with_mask(1))));
/// }
/// ```
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct AabbTreePickingFilter(pub QueryFilter);

/// The backend: one [`PointerHits`] message for each ray of the [`RayMap`] that hits
/// something.
#[allow(clippy::too_many_arguments)]
fn update_hits<V: Vector>(
    ray_map: Res<RayMap>,
    settings: Res<AabbTreePickingSettings>,
    cameras: Query<(
        &Camera,
        Option<&AabbTreePickingFilter>,
        Has<AabbTreePickable>,
    )>,
    pickables: Query<&Pickable>,
    markers: Query<(), With<AabbTreePickable>>,
    transforms: Query<&GlobalTransform>,
    query: SpatialQuery<V>,
    mut hits_out: MessageWriter<PointerHits>,
) {
    let default_filter = QueryFilter::default();
    let accepts = |entity: Entity| {
        (!settings.require_markers || markers.contains(entity))
            && pickables
                .get(entity)
                .ok()
                .is_none_or(|pickable| *pickable != Pickable::IGNORE)
    };
    for (&ray_id, ray) in ray_map.iter() {
        let Ok((camera, filter, camera_marked)) = cameras.get(ray_id.camera) else {
            continue;
        };
        if !camera.is_active || (settings.require_markers && !camera_marked) {
            continue;
        }
        let filter = filter.map_or(&default_filter, |f| &f.0);
        let origin = ray.origin;
        let direction = *ray.direction;
        let mut picks: Vec<(Entity, HitData)> = Vec::new();
        if V::DIM == 3 {
            let cast = Ray::new(V::truncate_from_3d(origin), V::truncate_from_3d(direction));
            for hit in query.ray_hits(&cast, f32::MAX, filter) {
                if !accepts(hit.entity) {
                    continue;
                }
                let normal = hit.normal.extend_to_3d();
                let normal = (normal != Vec3::ZERO).then_some(normal);
                picks.push((
                    hit.entity,
                    HitData::new(ray_id.camera, hit.t, Some(hit.point.extend_to_3d()), normal),
                ));
            }
        } else {
            // Where the ray meets the plane z = 0: the pointer's place in the 2D world.
            if direction.z == 0.0 {
                continue;
            }
            let to_plane = -origin.z / direction.z;
            if !(to_plane >= 0.0 && to_plane.is_finite()) {
                continue;
            }
            let at = origin + direction * to_plane;
            // The side of the plane the ray comes from.
            let facing = if direction.z < 0.0 {
                Vec3::Z
            } else {
                Vec3::NEG_Z
            };
            query.point_with(V::truncate_from_3d(at), filter, |entity| {
                if accepts(entity) {
                    let z = transforms
                        .get(entity)
                        .map_or(0.0, |transform| transform.translation().z);
                    // The distance along the ray to the entity's plane; an entity behind
                    // the ray's origin (the camera's near plane) is not hit.
                    let depth = (z - origin.z) / direction.z;
                    if depth >= 0.0 && depth.is_finite() {
                        picks.push((
                            entity,
                            HitData::new(
                                ray_id.camera,
                                depth,
                                Some(Vec3::new(at.x, at.y, z)),
                                Some(facing),
                            ),
                        ));
                    }
                }
                true
            });
            picks.sort_by(|(a, hit_a), (b, hit_b)| {
                hit_a.depth.total_cmp(&hit_b.depth).then(a.cmp(b))
            });
        }
        if !picks.is_empty() {
            hits_out.write(PointerHits::new(ray_id.pointer, picks, camera.order as f32));
        }
    }
}
