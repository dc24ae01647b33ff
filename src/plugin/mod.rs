//! The Bevy plugin: components, the collision pipeline, events and spatial queries.
//!
//! # Setup
//!
//! Add [`AabbTreePlugin`] for each dimension you use, give entities an [`Aabb`], a
//! [`RoundedAabb`], a [`Capsule`] or a [`BoundingSphere`] (and a [`Velocity`] if they move
//! fast), and read
//! [`CollisionStarted`] / [`CollisionEnded`].
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_aabb_tree::prelude::*;
//!
//! fn main() {
//!     App::new()
//!         .add_plugins((MinimalPlugins, bevy::log::LogPlugin::default(), bevy::transform::TransformPlugin))
//!         .add_plugins(AabbTreePlugin::<Vec3>::default())
//!         .add_systems(Startup, setup)
//!         .add_systems(Update, report)
//!         .run();
//! }
//!
//! fn setup(mut commands: Commands) {
//!     commands.spawn((Transform::from_xyz(0.0, 1.0, 0.0), Aabb::new(Vec3::splat(0.5))));
//!     commands.spawn((
//!         Transform::from_xyz(-5.0, 1.0, 0.0),
//!         BoundingSphere::<Vec3>::new(0.5),
//!         Velocity(Vec3::X * 20.0),
//!     ));
//! }
//!
//! fn report(mut started: MessageReader<CollisionStarted<Vec3>>) {
//!     for hit in started.read() {
//!         info!("{} hit {} at t = {}", hit.entity, hit.other, hit.time_of_impact);
//!     }
//! }
//! ```
//!
//! 2D is the same with `Vec2` (`AabbTreePlugin::<Vec2>`, `Aabb::new(Vec2::splat(0.5))`);
//! an app may add both, and each dimension has its own tree. Only the x and y of a 2D
//! entity's transform matter.
//!
//! # Events
//!
//! Each event is both a [`Message`] (read with `MessageReader`, one per pair) and an
//! [`EntityEvent`] triggered on both entities, so an observer on one entity sees only its
//! own collisions with itself as `entity`:
//!
//! ```
//! # use bevy::prelude::*;
//! # use bevy_aabb_tree::prelude::*;
//! fn spawn_door(mut commands: Commands) {
//!     commands
//!         .spawn((Transform::default(), Aabb::new(Vec2::new(0.5, 2.0))))
//!         .observe(|hit: On<CollisionStarted<Vec2>>| info!("door touched by {}", hit.other));
//! }
//! ```
//!
//! Every `CollisionStarted` gets exactly one `CollisionEnded`, also when an entity is
//! despawned, loses its collider, is [`Disabled`],
//! gets invalid values, or its [`CollisionLayers`] stop matching ([`EndReason`] says
//! which). An object that passes completely through another within one tick gets both in
//! that tick, the start with its time of impact.
//!
//! [`CollisionMessage`] carries both kinds in one stream, in the order they happened:
//! applied in the order read, it gives exactly the touching pairs and every
//! [`CollidingEntities`] after every tick. The order: ends of contacts broken between
//! ticks (despawns, removals, [`Disabled`]) as they happen; then, per tick, the ends of
//! contacts broken before its motion (teleports, invalid values), its starts earliest
//! first (by `time_of_impact`, then by pair), and its other ends (separations,
//! pass-throughs), sorted by pair. Each message names the entity of smaller index as
//! `entity`: the same scene gives the same sequence, whatever order unrelated entities
//! were spawned in. [`CollisionStarted`] and [`CollisionEnded`] are the same messages
//! split by kind, and entity events follow the same order, even when an observer
//! despawns an entity. A fast object can start several
//! contacts in one tick (a wall and the enemy behind it): the first start it sees is its
//! earliest; the later ones still reach it, also after it has queued its own despawn
//! (despawn with `try_despawn`; [`CollisionStarted`] shows the pattern).
//!
//! To change an entity's shape without ending its contacts, insert the new shape before
//! removing the old one (`insert(BoundingSphere::new(r)).remove::<Aabb<V>>()`); with
//! several present the `Aabb` counts, then a [`RoundedAabb`], then a [`Capsule`], then
//! the `BoundingSphere`.
//! The guide's [what happens when…](crate::guide::events) lists every case.
//!
//! # Layers
//!
//! [`CollisionLayers`] holds two `u32` masks; two entities interact when each one's
//! memberships meet the other's filters. No component means every layer. The trees'
//! nodes keep the union of their colliders' layers, so a query with a mask and a moving
//! collider's search for static partners skip whole regions of layers they cannot meet;
//! a level spawned at once puts the colliders that interact with nothing (memberships or
//! filters 0) in a subtree of their own, which costs the other colliders nothing.
//!
//! # Spatial queries
//!
//! [`SpatialQuery`] is a system parameter over the same trees: closest ray hit, every ray
//! hit, point, box, sphere, capsule and rounded box overlap, and casts of those shapes
//! (the first hit, or every hit), each with a [`QueryFilter`]. A hit ([`ShapeHit`]) gives the entity, the parameter
//! `t` along the direction, the ray's point or the cast shape's center at `t`, the outward
//! normal of the surface hit (zero when the query starts inside) and a contact point.
//! Casts sweep the shape continuously, so a fast cast never passes through a thin wall.
//!
//! Every query with several results has a form named with the suffix `_with` that calls
//! a function for each result instead of returning a `Vec`, and allocates nothing; the
//! function returns `false` to stop the query. Those forms give results in the order the
//! trees are walked; the `Vec` forms of ray and cast hits sort theirs nearest first.
//!
//! ```
//! # use bevy::prelude::*;
//! # use bevy_aabb_tree::prelude::*;
//! fn probe(query: SpatialQuery<Vec2>) {
//!     let filter = QueryFilter::default();
//!     // Will a ball of radius 0.5 falling from (0, 10) land within 20 units?
//!     let start = Vec2::new(0.0, 10.0);
//!     if let Some(hit) = query.cast_sphere(start, 0.5, Vec2::NEG_Y, 20.0, &filter) {
//!         info!("lands on {} at {} (normal {})", hit.entity, hit.point, hit.normal);
//!     }
//!     // The first entity under the cursor, without collecting them all.
//!     let mut under = None;
//!     query.point_with(Vec2::new(3.0, 4.0), &filter, |entity| {
//!         under = Some(entity);
//!         false
//!     });
//! }
//! ```
//!
//! # Configuration
//!
//! [`CollisionConfig`] (a resource) holds the margin, the velocity multiplier for fat
//! boxes, whether swept tests run, when the pair walk goes parallel, whether the tree
//! keeps its move cache, and a switch for the whole pipeline. The schedule is
//! set on the plugin: `AabbTreePlugin::<Vec3>::new(Update)`; the default is
//! `FixedPostUpdate`. Order your systems with [`CollisionSystems`].
//!
//! # Static colliders
//!
//! Mark level geometry (walls, floors, tiles) with [`Static`]. Static colliders live in a
//! tree of their own and never pair with each other: a tile map of a million touching
//! tiles has no pair, no event and no work among its tiles. Each tick, the colliders that
//! moved look up the static colliders they overlap; the static tree is never walked
//! against itself. Each moving collider keeps a short list of the static colliders around
//! it and queries the static tree only when it leaves that neighbourhood or a static
//! collider in it changes, so the pair search costs what moves, not the size of the level
//! (with [`StaticChangeDetection::OnInsert`], below, so does the whole tick). A level spawned in
//! one frame goes into the static tree with one build.
//!
//! Bevy skips the transforms of a still hierarchy only with its `multi_threaded` feature
//! (on in Bevy's defaults); without it, Bevy's own transform propagation visits every
//! child of every parent each frame. A child whose transform changes makes Bevy
//! propagate its parent's whole subtree: keep what moves out from under a large map
//! entity.
//!
//! ```
//! # use bevy::prelude::*;
//! # use bevy_aabb_tree::prelude::*;
//! fn spawn_level(mut commands: Commands) {
//!     let map = commands.spawn(Transform::default()).id();
//!     for x in 0..100 {
//!         for y in 0..100 {
//!             commands.spawn((
//!                 Transform::from_xyz(x as f32, y as f32, 0.0),
//!                 Aabb::new(Vec2::splat(0.5)),
//!                 Static,
//!                 ChildOf(map),
//!             ));
//!         }
//!     }
//! }
//! ```
//!
//! A static collider may still be moved, resized, or lose or gain the marker: that is
//! correct (its pairs with moving colliders follow, and contacts go on without events),
//! but costs a re-insertion into its tree. When the marker is added while it touches
//! another static collider, that contact ends with [`EndReason::BothStatic`].
//!
//! [`CollisionConfig::static_changes`] says how the pipeline notices such changes:
//!
//! - [`StaticChangeDetection::Scan`] (the default): each tick tests every static collider's
//!   change ticks, like a moving collider's, so any write is seen (a few nanoseconds per
//!   static collider per tick: a few milliseconds for a million);
//! - [`StaticChangeDetection::OnInsert`]: static colliders are never scanned; one is processed
//!   again when a component it reads is inserted (even with the same value) or removed,
//!   when it gets or loses the marker or `Disabled`, or when an ancestor's `Transform`
//!   changes. A write through `&mut` on the collider itself is not seen until then: move a
//!   static collider with `commands.entity(e).insert(Transform::from_xyz(..))`. An idle
//!   level then costs nothing per tick, however large.
//!
//! ```
//! # use bevy::prelude::*;
//! # use bevy_aabb_tree::prelude::*;
//! # let mut app = App::new();
//! app.insert_resource(CollisionConfig {
//!     static_changes: StaticChangeDetection::OnInsert,
//!     ..default()
//! });
//! ```
//!
//! # Gameplay
//!
//! - [`CollidingEntities`] (opt-in component): who touches an entity now, kept from the
//!   events.
//! - [`Sensor`] (marker): a collider that raises events but never blocks the helpers
//!   below.
//! - [`SpatialQuery::closest_point`] and [`Contacts::distance`]: the nearest collider
//!   to a point, and the distance between two colliders.
//! - [`Contacts`] (system parameter): depth, normal and point of a contact, and
//!   [`Contacts::push_out`], the way out of everything an entity overlaps.
//! - [`SpatialQuery::cast_box`] and [`SpatialQuery::cast_sphere`] (and their `_all`
//!   forms): continuous shape casts.
//! - [`AabbTree::move_and_slide`]: move a box or ball by a displacement, sliding along
//!   what it hits, without snagging on the seams of tiled floors and walls;
//!   [`AabbTree::cast_blocking`] is the cast it is built on.
//! - [`CollisionConfig::length_unit`]: the same behaviour for a game in pixels.
//! - `bevy_aabb_tree::d2` and `d3`: the same names without the dimension parameter.
//!
//! # Idle colliders
//!
//! The prepare stage skips a collider whose inputs did not change since the pipeline's
//! last run: `Transform`, [`Aabb`], [`BoundingSphere`], [`Velocity`], [`CollisionLayers`]
//! and [`Static`] are read through Bevy's change ticks (any write through `Mut`, or an
//! insert, counts, even of the same value; a removal counts too), and so are the
//! `Transform` and `ChildOf` of its ancestors: a child of a still parent is idle, and a
//! parent that moves moves every collider below it, swept, in the same tick. Colliders
//! that moved at the tick before (to read as still), that have [`Teleported`] (or an
//! ancestor has), that are out of the tree, and every collider once after a
//! [`CollisionConfig`] change are processed too. Static colliders under
//! [`StaticChangeDetection::OnInsert`] are the exception: writes in place on them are not seen
//! (see [Static colliders](#static-colliders)). A skipped collider costs a few
//! change-tick tests, and the narrow phase tests only the pairs of processed colliders:
//! a pair of two idle colliders keeps its state at no cost. [`StepStats::processed`]
//! counts the processed ones. Changes made with `bypass_change_detection` are not seen
//! until the next real change. In a world of mostly idle moving colliders,
//! `CollisionConfig { move_cache: false, .. }` also saves the moving tree's copy of every
//! fat box (16 bytes a collider in 2D, 24 in 3D), which only moving colliders read; the
//! static tree never keeps one.
//!
//! # Teleports
//!
//! Swept tests follow each entity from where it was at the previous tick; a new collider's
//! first tick follows it from where it was spawned (where its shape was inserted), so a
//! bullet spawned and moved in the same frame is swept from the muzzle. For a move that is
//! a jump, not a motion, set the new place and insert [`Teleported`]: the next tick sweeps
//! from the place the entity had when the marker went in, so the jump hits nothing while
//! a motion after it (in the same frame) is still swept. Inserted on a parent, it covers
//! every collider below it.
//!
//! # FAQ: why no events?
//!
//! - The schedule did not run: with the default `FixedPostUpdate`, the app needs
//!   `TimePlugin` (in `MinimalPlugins` and `DefaultPlugins`) and some time to pass. Tests
//!   can use `AabbTreePlugin::new(Update)` or advance `Time<Fixed>`.
//! - Layers: both entities' memberships must meet the other's filters.
//! - You read `MessageReader<CollisionStarted>` in a system that runs before the
//!   pipeline in the same frame: it sees the events next frame.
//! - The entity got invalid values (NaN, negative size): look for the warning naming it.
//! - You imported Bevy's `Aabb` (`bevy::camera::primitives::Aabb`) instead of this
//!   crate's.

mod broad_phase;
mod character;
mod components;
mod config;
pub mod diagnostics;
mod events;
mod filter;
mod gameplay;
#[cfg(feature = "interpolation")]
mod interpolation;
mod key;
mod lifecycle;
mod motion;
mod narrow_phase;
mod neighbourhoods;
mod one_way;
mod pairs;
#[cfg(feature = "picking")]
pub mod picking;
mod pool;
mod prepare;
mod rollback;
#[cfg(feature = "ggrs")]
mod rollback_ggrs;
mod shape;
mod spatial;
mod state;
#[cfg(feature = "tilemap")]
pub mod tilemap;

use core::marker::PhantomData;

use bevy::diagnostic::{Diagnostic, RegisterDiagnostic};
use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy::prelude::*;

use crate::Vector;

pub use character::{CharacterController, CharacterPlugin, CharacterState, CharacterSystems};
pub use components::{
    Aabb, BoundingSphere, Capsule, CapsuleAxis, CollidingEntities, CollisionLayer, CollisionLayers,
    RoundedAabb, Sensor, Static, Teleported, TrackedCollider, Velocity, WorldShape,
};
pub use config::{CollisionConfig, StaticChangeDetection};
pub use events::{CollisionEnded, CollisionMessage, CollisionStarted, EndReason};
pub use filter::{AskPairFilter, PairFilter};
pub use gameplay::Contacts;
pub use motion::{NotIntegrated, VelocityPlugin, VelocitySystems};
pub use one_way::OneWay;
#[cfg(feature = "picking")]
pub use picking::{
    AabbTreePickable, AabbTreePickingFilter, AabbTreePickingPlugin, AabbTreePickingSettings,
};
pub use rollback::RestoringWorld;
#[cfg(feature = "ggrs")]
pub use rollback_ggrs::AabbTreeRollbackPlugin;
pub use spatial::{PointProjection, QueryFilter, ShapeHit, SpatialQuery};
pub use state::{AabbTree, PassThrough, StepStats};
#[cfg(feature = "tilemap")]
pub use tilemap::{
    AabbTreeTilemapPlugin, SolidTile, SolidTiles, TileCollider, TileColliderMode, TileHit,
    TilemapColliderStats, TilemapColliders, TilemapCollidersSystems, TilemapHits,
};

/// The stages of one collision tick, in order. Order your systems against them, for
/// example `.after(CollisionSystems::Events)` to read this tick's events.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CollisionSystems {
    /// World shapes from transforms, new colliders into the tree, fat boxes and tree
    /// updates.
    Prepare,
    /// New candidate pairs from the tree (layers filter here).
    BroadPhase,
    /// The game's [`PairFilter`] asked about the pairs of colliders with
    /// [`AskPairFilter`] (empty without
    /// [`AabbTreePlugin::with_pair_filter`]).
    Filter,
    /// Exact and swept tests of every candidate pair.
    NarrowPhase,
    /// Messages written and entity events triggered.
    Events,
}

/// Collision detection for one dimension: `AabbTreePlugin::<Vec2>` or
/// `AabbTreePlugin::<Vec3>`. Adds the [`AabbTree`] resource, the [`CollisionConfig`]
/// resource (if absent), the events and the pipeline. Draws nothing (see the `debug`
/// feature) and never moves entities (see [`VelocityPlugin`]).
pub struct AabbTreePlugin<V: Vector> {
    schedule: InternedScheduleLabel,
    /// The filter stage, and the character controller honouring the same filter.
    filter: Option<(AddSystems, AddSystems)>,
    _marker: PhantomData<fn() -> V>,
}

/// Adds a generic stage to the pipeline's schedule.
type AddSystems = fn(&mut App, InternedScheduleLabel);

impl<V: Vector> AabbTreePlugin<V> {
    /// The plugin running its pipeline in `schedule`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
            filter: None,
            _marker: PhantomData,
        }
    }

    /// The plugin asking `F` about the pairs of colliders with [`AskPairFilter`] at every
    /// tick (see [`PairFilter`]): vetoed pairs never touch. The [`CharacterPlugin`] of the
    /// same app honours the same rule: a character passes through what it vetoes.
    pub fn with_pair_filter<F: PairFilter + 'static>(mut self) -> Self
    where
        for<'w, 's> bevy::ecs::system::SystemParamItem<'w, 's, F>: PairFilter,
    {
        self.filter = Some((
            filter::add_pair_filter::<V, F>,
            character::add_controller::<V, F>,
        ));
        self
    }
}

impl<V: Vector> Default for AabbTreePlugin<V> {
    /// Runs in `FixedPostUpdate`.
    fn default() -> Self {
        Self::new(FixedPostUpdate)
    }
}

impl<V: Vector> Plugin for AabbTreePlugin<V>
where
    V: bevy::reflect::FromReflect
        + bevy::reflect::TypePath
        + bevy::reflect::GetTypeRegistration
        + bevy::reflect::Typed,
{
    fn build(&self, app: &mut App) {
        let schedule = self.schedule;
        app.init_resource::<CollisionConfig>()
            .init_resource::<AabbTree<V>>()
            .init_resource::<RestoringWorld>()
            .add_message::<CollisionStarted<V>>()
            .add_message::<CollisionEnded>()
            .add_message::<CollisionMessage<V>>()
            .register_type::<CollisionConfig>()
            .register_type::<RestoringWorld>()
            .register_type::<Aabb<V>>()
            .register_type::<BoundingSphere<V>>()
            .register_type::<RoundedAabb<V>>()
            .register_type::<Capsule<V>>()
            .register_type::<CapsuleAxis>()
            .register_type::<Velocity<V>>()
            .register_type::<CollisionLayers>()
            .register_type::<Teleported>()
            .register_type::<Static>()
            .register_type::<Sensor>()
            .register_type::<AskPairFilter>()
            .register_type::<CollidingEntities>()
            .register_type::<OneWay<V>>()
            .register_type::<StaticChangeDetection>()
            .register_type::<TrackedCollider<V>>()
            .register_type::<CollisionStarted<V>>()
            .register_type::<CollisionEnded>()
            .register_type::<CollisionMessage<V>>()
            .configure_sets(
                schedule,
                (
                    CollisionSystems::Prepare,
                    CollisionSystems::BroadPhase,
                    CollisionSystems::Filter,
                    CollisionSystems::NarrowPhase,
                    CollisionSystems::Events,
                )
                    .chain(),
            )
            .add_systems(
                schedule,
                (
                    (lifecycle::restore_tracking::<V>, prepare::prepare::<V>)
                        .chain()
                        .in_set(CollisionSystems::Prepare),
                    broad_phase::broad_phase::<V>.in_set(CollisionSystems::BroadPhase),
                    narrow_phase::narrow_phase::<V>.in_set(CollisionSystems::NarrowPhase),
                    (
                        events::emit_events::<V>,
                        diagnostics::record_diagnostics::<V>,
                    )
                        .chain()
                        .in_set(CollisionSystems::Events),
                )
                    .run_if(|config: Res<CollisionConfig>| config.enabled),
            )
            // On despawn `Despawn` observers run before `Remove` ones: the proxy is gone
            // before the shape observers could keep it for a remaining shape. They watch
            // `TrackedCollider`, which holds the proxy and outlives the shapes: an entity
            // whose shapes were both removed by one command still holds its proxy until
            // the next tick, and may be despawned before it runs.
            .add_observer(
                lifecycle::on_collider_gone::<V, Despawn, TrackedCollider<V>>
                    .run_if(rollback::not_restoring),
            )
            // `TrackedCollider` removed or overwritten by hand (its docs say not to write
            // it): the old value's proxy goes too, and the collider comes back at the next
            // tick. `Discard` runs for both, with the old value still in place.
            .add_observer(
                lifecycle::on_collider_gone::<V, Discard, TrackedCollider<V>>
                    .run_if(rollback::not_restoring),
            )
            // Where a new collider, or a teleported one, starts its next sweep.
            .add_observer(
                lifecycle::on_shape_inserted::<V, Aabb<V>>.run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_shape_inserted::<V, BoundingSphere<V>>
                    .run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_shape_inserted::<V, Capsule<V>>.run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_shape_inserted::<V, RoundedAabb<V>>.run_if(rollback::not_restoring),
            )
            .add_observer(lifecycle::on_teleported::<V>.run_if(rollback::not_restoring))
            .add_observer(lifecycle::on_parent_inserted::<V>.run_if(rollback::not_restoring))
            .add_observer(lifecycle::on_parent_removed::<V>.run_if(rollback::not_restoring))
            .add_observer(lifecycle::on_shape_removed::<V, Aabb<V>>.run_if(rollback::not_restoring))
            .add_observer(
                lifecycle::on_shape_removed::<V, BoundingSphere<V>>.run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_shape_removed::<V, Capsule<V>>.run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_shape_removed::<V, RoundedAabb<V>>.run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_collider_gone::<V, Add, Disabled>.run_if(rollback::not_restoring),
            )
            // Removals the prepare stage's change detection would not see.
            .add_observer(
                lifecycle::on_input_changed::<V, Remove, Velocity<V>>
                    .run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_input_changed::<V, Remove, CollisionLayers>
                    .run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_input_changed::<V, Remove, Static>.run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_input_changed::<V, Add, Static>.run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_input_changed::<V, Add, Sensor>.run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_input_changed::<V, Remove, Sensor>.run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_input_changed::<V, Remove, Disabled>.run_if(rollback::not_restoring),
            )
            .add_observer(lifecycle::on_parent_changed::<V, Insert>.run_if(rollback::not_restoring))
            .add_observer(lifecycle::on_parent_changed::<V, Remove>.run_if(rollback::not_restoring))
            // Inserts on static colliders, which the change scan skips under
            // `StaticChangeDetection::OnInsert`.
            .add_observer(lifecycle::on_static_insert::<V, Static>.run_if(rollback::not_restoring))
            .add_observer(
                lifecycle::on_static_insert::<V, Transform>.run_if(rollback::not_restoring),
            )
            .add_observer(lifecycle::on_static_insert::<V, Aabb<V>>.run_if(rollback::not_restoring))
            .add_observer(
                lifecycle::on_static_insert::<V, BoundingSphere<V>>.run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_static_insert::<V, Capsule<V>>.run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_static_insert::<V, RoundedAabb<V>>.run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_static_insert::<V, Velocity<V>>.run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_static_insert::<V, CollisionLayers>.run_if(rollback::not_restoring),
            )
            .add_observer(
                lifecycle::on_static_insert::<V, Teleported>.run_if(rollback::not_restoring),
            )
            // A `TrackedCollider` written over by hand: `Discard` took the proxy out, and
            // the collider must come back at the next tick.
            .add_observer(
                lifecycle::on_static_insert::<V, TrackedCollider<V>>
                    .run_if(rollback::not_restoring),
            )
            .add_observer(lifecycle::on_contacts_added::<V>.run_if(rollback::not_restoring))
            .add_observer(filter::on_filter_removed::<V>.run_if(rollback::not_restoring))
            .add_observer(one_way::on_one_way_inserted::<V>.run_if(rollback::not_restoring))
            .add_observer(one_way::on_one_way_removed::<V>.run_if(rollback::not_restoring));
        #[cfg(feature = "interpolation")]
        app.add_observer(interpolation::on_teleported_easing);
        if let Some((add_filter, add_controller)) = self.filter {
            add_filter(app, schedule);
            character::add_controller_with_filter::<V>(app, add_controller);
        }
        for (path, ms, _) in diagnostics::measurements::<V>(&StepStats::default()) {
            let diagnostic = Diagnostic::new(path);
            app.register_diagnostic(if ms {
                diagnostic.with_suffix("ms")
            } else {
                diagnostic
            });
        }
    }
}
