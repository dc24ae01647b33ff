//! The Bevy plugin: components, the collision pipeline, events and spatial queries.
//!
//! # Setup
//!
//! Add [`AabbTreePlugin`] for each dimension you use, give entities an [`Aabb`] or a
//! [`BoundingSphere`] (and a [`Velocity`] if they move fast), and read
//! [`CollisionStarted`] / [`CollisionEnded`].
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_aabb_tree::prelude::*;
//!
//! fn main() {
//!     App::new()
//!         .add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
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
//! fn report(mut started: MessageReader<CollisionStarted>) {
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
//!         .observe(|hit: On<CollisionStarted>| info!("door touched by {}", hit.other));
//! }
//! ```
//!
//! Every `CollisionStarted` gets exactly one `CollisionEnded`, also when an entity is
//! despawned, loses its collider, is [`Disabled`],
//! gets invalid values, or its [`CollisionLayers`] stop matching ([`EndReason`] says
//! which). An object that passes completely through another within one tick gets both in
//! that tick, the start with its time of impact.
//!
//! Within a tick the messages come starts first, then ends, each sorted by pair, and each
//! names the entity of smaller index as `entity`: the same scene gives the same sequence,
//! whatever order unrelated entities were spawned in. Entity events follow the same
//! order, all starts of a tick before its ends, even when an observer despawns an entity.
//!
//! To change an entity's shape without ending its contacts, insert the new shape before
//! removing the old one (`insert(BoundingSphere::new(r)).remove::<Aabb<V>>()`); with both
//! present the `Aabb` counts. README.md's "What happens when…" table lists every case.
//!
//! # Layers
//!
//! [`CollisionLayers`] holds two `u32` masks; two entities interact when each one's
//! memberships meet the other's filters. No component means every layer.
//!
//! # Spatial queries
//!
//! [`SpatialQuery`] is a system parameter over the same tree: closest ray hit, every ray
//! hit, point, box and sphere overlap, and box cast, each with a [`QueryFilter`].
//!
//! # Configuration
//!
//! [`CollisionConfig`] (a resource) holds the margin, the velocity multiplier for fat
//! boxes, whether swept tests run, when the pair walk goes parallel, whether the tree
//! keeps its move cache, and a switch for the whole pipeline. The schedule is
//! set on the plugin: `AabbTreePlugin::<Vec3>::new(Update)`; the default is
//! `FixedPostUpdate`. Order your systems with [`CollisionSystems`].
//!
//! # Idle colliders
//!
//! The prepare stage skips a collider whose inputs did not change since the pipeline's
//! last run: `Transform`, [`Aabb`], [`BoundingSphere`], [`Velocity`] and
//! [`CollisionLayers`] are read through Bevy's change ticks (any write through `Mut`, or
//! an insert, counts, even of the same value; a removal counts too). Colliders with a
//! `ChildOf` are processed every tick (a parent's move is no change of the child), and so
//! are colliders that moved at the tick before (to read as still), that have
//! [`Teleported`], that are out of the tree, and every collider once after a
//! [`CollisionConfig`] change. A skipped collider costs a few change-tick tests, so a
//! world of mostly static colliders costs about as much as its moving ones;
//! [`StepStats::processed`] counts the others. Changes made with
//! `bypass_change_detection` are not seen until the next real change. In such a world,
//! `CollisionConfig { move_cache: false, .. }` also saves the tree's copy of every fat
//! box (16 bytes a collider in 2D, 24 in 3D), which only moving colliders read.
//!
//! # Teleports
//!
//! Swept tests follow each entity from where it was at the previous tick. For a move that
//! is a jump, not a motion, insert [`Teleported`] with it and the next tick does not
//! sweep. Inserted on a parent, it covers every collider below it.
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

mod components;
mod events;
mod motion;
mod pipeline;
mod spatial;
mod state;

use core::marker::PhantomData;

use bevy::diagnostic::{Diagnostic, DiagnosticPath, Diagnostics, RegisterDiagnostic};
use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy::prelude::*;

use crate::Vector;

pub use components::{
    Aabb, BoundingSphere, CollisionLayers, Teleported, TrackedCollider, Velocity, WorldShape,
};
pub use events::{CollisionEnded, CollisionStarted, EndReason};
pub use motion::VelocityPlugin;
pub use spatial::{QueryFilter, ShapeHit, SpatialQuery};
pub use state::{AabbTree, StepStats, SweptHit};

/// The stages of one collision tick, in order. Order your systems against them, for
/// example `.after(CollisionSystems::Events)` to read this tick's events.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CollisionSystems {
    /// World shapes from transforms, new colliders into the tree, fat boxes and tree
    /// updates.
    Prepare,
    /// New candidate pairs from the tree (layers filter here).
    BroadPhase,
    /// Exact and swept tests of every candidate pair.
    NarrowPhase,
    /// Messages written and entity events triggered.
    Events,
}

/// Settings of the collision pipeline, shared by 2D and 3D.
///
/// Changing it (any write through `ResMut`) makes the next tick process every collider
/// once, idle ones included, so a new margin or multiplier reaches every fat box that
/// needs it.
#[derive(Resource, Clone, Debug, PartialEq, Reflect)]
#[reflect(Resource, Debug, Default)]
pub struct CollisionConfig {
    /// Extra room around each fat box, in world units, so that small motions do not
    /// touch the tree. Default `0.05`. A negative margin counts as `0`.
    ///
    /// A margin or [`velocity_multiplier`](Self::velocity_multiplier) that is not a
    /// finite number (NaN or infinite) is replaced by its default, with one warning each
    /// time the config changes.
    pub margin: f32,
    /// Fat boxes are also extended along `Velocity × step × velocity_multiplier`, so a
    /// moving entity updates the tree about once every `velocity_multiplier` ticks.
    /// Default `2.0`. Only the tree's update rate depends on it, never the events.
    ///
    /// The time step is the one of the tick that processes the collider; a change of the
    /// time step alone (a variable `dt` with the plugin in `Update`) does not reprocess
    /// idle colliders, which keep the fat box they have: only the tree's update rate can
    /// differ, never the events.
    pub velocity_multiplier: f32,
    /// Whether pairs that do not overlap at the end of a tick are swept over the tick's
    /// displacements, so fast objects cannot tunnel. Default `true`.
    pub swept: bool,
    /// Whether the pipeline runs at all. Default `true`.
    pub enabled: bool,
    /// Spread the pair walk over Bevy's `ComputeTaskPool` in ticks where at least this
    /// many colliders moved (see [`DynamicTree::parallel_pairs`](crate::DynamicTree::parallel_pairs)),
    /// when the pool has more than one thread (Bevy's `multi_threaded` feature, which
    /// `DefaultPlugins` apps have, on a machine with about four cores or more). The pairs,
    /// and so the events, are exactly those of the serial walk. `None`: always serial.
    ///
    /// Default `Some(2_000)`. On two threads (`examples/stress.rs --threads 2`), the
    /// broad-phase stage broke even at about 730 moved colliders a tick and was 1.2x
    /// faster at 1,900, 1.3x at 3,900 and 1.4 – 1.5x at 100,000 (`BENCHMARKS.md`). The
    /// moves, the refit and the tree's upkeep stay serial.
    pub parallel_pairs_from: Option<usize>,
    /// Whether the tree keeps its move cache: a copy of every collider's fat box by proxy
    /// id, 16 bytes a collider in 2D and 24 in 3D, which lets the prepare stage read a
    /// moving collider's fat box in proxy order rather than from the tree (see
    /// [`DynamicTree::set_move_cache`](crate::DynamicTree::set_move_cache)). Default
    /// `true`. Turn it off for a world of mostly static colliders (a tile map, a level's
    /// geometry): idle colliders never read it. The events are the same either way.
    pub move_cache: bool,
}

impl Default for CollisionConfig {
    fn default() -> Self {
        Self {
            margin: crate::tree::DEFAULT_MARGIN,
            velocity_multiplier: 2.0,
            swept: true,
            enabled: true,
            parallel_pairs_from: Some(2_000),
            move_cache: true,
        }
    }
}

/// Collision detection for one dimension: `AabbTreePlugin::<Vec2>` or
/// `AabbTreePlugin::<Vec3>`. Adds the [`AabbTree`] resource, the [`CollisionConfig`]
/// resource (if absent), the events and the pipeline. Draws nothing (see the `debug`
/// feature) and never moves entities (see [`VelocityPlugin`]).
pub struct AabbTreePlugin<V: Vector> {
    schedule: InternedScheduleLabel,
    _marker: PhantomData<fn() -> V>,
}

impl<V: Vector> AabbTreePlugin<V> {
    /// The plugin running its pipeline in `schedule`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
            _marker: PhantomData,
        }
    }
}

impl<V: Vector> Default for AabbTreePlugin<V> {
    /// Runs in `FixedPostUpdate`.
    fn default() -> Self {
        Self::new(FixedPostUpdate)
    }
}

/// Diagnostic paths: `aabb_tree_2d/...` and `aabb_tree_3d/...`, one measurement per tick
/// each, registered with Bevy's diagnostics (read them from `Res<DiagnosticsStore>`, or log
/// them with `LogDiagnosticsPlugin`). The same figures are in [`AabbTree::stats`].
pub mod diagnostics {
    use bevy::diagnostic::DiagnosticPath;

    macro_rules! paths {
        ($($name:ident = $path:literal, $doc:literal;)*) => {
            $(
                #[doc = $doc]
                pub const $name: DiagnosticPath = DiagnosticPath::const_new($path);
            )*
        };
    }

    paths! {
        TICK_MS_2D = "aabb_tree_2d/tick_ms", "Milliseconds of the whole tick, 2D.";
        PREPARE_MS_2D = "aabb_tree_2d/prepare_ms", "Milliseconds of the prepare stage, 2D.";
        BROAD_MS_2D = "aabb_tree_2d/broad_ms", "Milliseconds of the broad phase, 2D.";
        NARROW_MS_2D = "aabb_tree_2d/narrow_ms", "Milliseconds of the narrow phase, 2D.";
        EVENTS_MS_2D = "aabb_tree_2d/events_ms", "Milliseconds writing events, 2D.";
        MOVED_2D = "aabb_tree_2d/moved", "Proxies whose fat box changed, 2D.";
        CANDIDATES_2D = "aabb_tree_2d/candidates", "Candidate pairs tracked, 2D.";
        TOUCHING_2D = "aabb_tree_2d/touching", "Touching pairs, 2D.";
        EVENTS_2D = "aabb_tree_2d/events", "Collision events (starts and ends), 2D.";
        TICK_MS_3D = "aabb_tree_3d/tick_ms", "Milliseconds of the whole tick, 3D.";
        PREPARE_MS_3D = "aabb_tree_3d/prepare_ms", "Milliseconds of the prepare stage, 3D.";
        BROAD_MS_3D = "aabb_tree_3d/broad_ms", "Milliseconds of the broad phase, 3D.";
        NARROW_MS_3D = "aabb_tree_3d/narrow_ms", "Milliseconds of the narrow phase, 3D.";
        EVENTS_MS_3D = "aabb_tree_3d/events_ms", "Milliseconds writing events, 3D.";
        MOVED_3D = "aabb_tree_3d/moved", "Proxies whose fat box changed, 3D.";
        CANDIDATES_3D = "aabb_tree_3d/candidates", "Candidate pairs tracked, 3D.";
        TOUCHING_3D = "aabb_tree_3d/touching", "Touching pairs, 3D.";
        EVENTS_3D = "aabb_tree_3d/events", "Collision events (starts and ends), 3D.";
    }
}

/// The dimension's diagnostics: path, whether it is in milliseconds, and its value.
fn measurements<V: Vector>(stats: &StepStats) -> [(DiagnosticPath, bool, f64); 9] {
    use diagnostics::*;
    let paths = if V::DIM == 2 {
        [
            TICK_MS_2D,
            PREPARE_MS_2D,
            BROAD_MS_2D,
            NARROW_MS_2D,
            EVENTS_MS_2D,
            MOVED_2D,
            CANDIDATES_2D,
            TOUCHING_2D,
            EVENTS_2D,
        ]
    } else {
        [
            TICK_MS_3D,
            PREPARE_MS_3D,
            BROAD_MS_3D,
            NARROW_MS_3D,
            EVENTS_MS_3D,
            MOVED_3D,
            CANDIDATES_3D,
            TOUCHING_3D,
            EVENTS_3D,
        ]
    };
    let values = [
        (true, stats.total_ms()),
        (true, stats.prepare_ms),
        (true, stats.broad_ms),
        (true, stats.narrow_ms),
        (true, stats.events_ms),
        (false, stats.moved as f32),
        (false, stats.candidates as f32),
        (false, stats.touching as f32),
        (false, (stats.started + stats.ended) as f32),
    ];
    core::array::from_fn(|i| (paths[i].clone(), values[i].0, values[i].1 as f64))
}

fn record_diagnostics<V: Vector>(state: Res<AabbTree<V>>, mut diagnostics: Diagnostics) {
    for (path, _, value) in measurements::<V>(state.stats()) {
        diagnostics.add_measurement(&path, || value);
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
            .add_message::<CollisionStarted>()
            .add_message::<CollisionEnded>()
            .register_type::<CollisionConfig>()
            .register_type::<Aabb<V>>()
            .register_type::<BoundingSphere<V>>()
            .register_type::<Velocity<V>>()
            .register_type::<CollisionLayers>()
            .register_type::<Teleported>()
            .register_type::<TrackedCollider<V>>()
            .register_type::<CollisionStarted>()
            .register_type::<CollisionEnded>()
            .configure_sets(
                schedule,
                (
                    CollisionSystems::Prepare,
                    CollisionSystems::BroadPhase,
                    CollisionSystems::NarrowPhase,
                    CollisionSystems::Events,
                )
                    .chain(),
            )
            .add_systems(
                schedule,
                (
                    pipeline::prepare::<V>.in_set(CollisionSystems::Prepare),
                    pipeline::broad_phase::<V>.in_set(CollisionSystems::BroadPhase),
                    pipeline::narrow_phase::<V>.in_set(CollisionSystems::NarrowPhase),
                    (pipeline::emit_events::<V>, record_diagnostics::<V>)
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
            .add_observer(pipeline::on_collider_gone::<V, Despawn, TrackedCollider<V>>)
            // `TrackedCollider` removed or overwritten by hand (its docs say not to write
            // it): the old value's proxy goes too, and the collider comes back at the next
            // tick. `Discard` runs for both, with the old value still in place.
            .add_observer(pipeline::on_collider_gone::<V, Discard, TrackedCollider<V>>)
            .add_observer(pipeline::on_shape_removed::<V, Aabb<V>>)
            .add_observer(pipeline::on_shape_removed::<V, BoundingSphere<V>>)
            .add_observer(pipeline::on_collider_gone::<V, Add, Disabled>)
            // Removals the prepare stage's change detection would not see.
            .add_observer(pipeline::on_input_removed::<V, Velocity<V>>)
            .add_observer(pipeline::on_input_removed::<V, CollisionLayers>)
            .add_observer(pipeline::on_input_removed::<V, ChildOf>);
        for (path, ms, _) in measurements::<V>(&StepStats::default()) {
            let diagnostic = Diagnostic::new(path);
            app.register_diagnostic(if ms {
                diagnostic.with_suffix("ms")
            } else {
                diagnostic
            });
        }
    }
}
