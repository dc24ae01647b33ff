//! The pipeline's settings.

use bevy::prelude::*;

/// Settings of the collision pipeline, shared by 2D and 3D.
///
/// Changing it (any write through `ResMut`) makes the next tick process every collider
/// once, idle ones included, so a new margin or multiplier reaches every fat box that
/// needs it.
#[derive(Resource, Clone, Debug, PartialEq, Reflect)]
#[reflect(Resource, Debug, Default)]
pub struct CollisionConfig {
    /// Extra room around each fat box, in [`length_unit`](Self::length_unit)s, so that
    /// small motions do not touch the tree. Default `0.05`. A negative margin counts as
    /// `0`.
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
    /// Whether the pipeline (and the character controller) runs at all. Default `true`.
    ///
    /// Paused (`false`), no tick runs: no start or end is reported, and
    /// [`CollidingEntities`](crate::plugin::CollidingEntities) stays what was last reported,
    /// except that a despawned, disabled or removed collider still ends its contacts at
    /// once. The first tick after resuming processes every collider and reports what
    /// changed meanwhile: pairs that separated end (`Separated`), pairs that began to
    /// touch start, as if the pause had been one long tick (swept like one: what passed
    /// through something meanwhile gets a start and a `PassedThrough` end).
    pub enabled: bool,
    /// Spread the tree's work over Bevy's `ComputeTaskPool` in ticks where at least this
    /// many colliders moved, when the pool has more than one thread (Bevy's
    /// `multi_threaded` feature, which `DefaultPlugins` apps have, on a machine with
    /// about four cores or more): the pair search (see
    /// [`DynamicTree::parallel_pairs`](crate::DynamicTree::parallel_pairs)) and, when the
    /// batch refits the tree in one pass (from an eighth of the colliders changing their
    /// fat box, or a sixteenth where most of the tree stands still), the refit that follows
    /// (see [`DynamicTree::move_proxies_parallel`](crate::DynamicTree::move_proxies_parallel)).
    /// The pairs, and so the events, are exactly those of the serial update. `None`:
    /// always serial.
    ///
    /// Default `Some(2_000)`: below a few thousand moved colliders, handing the work to
    /// the pool costs more than it saves. The pool also plans the tree's incremental
    /// rebuilds after a parallel pair search; the refit runs there only with the move
    /// cache on ([`Self::move_cache`]) and at least 256 changed fat boxes. The decisions
    /// of the moves (in the prepare stage) stay on one thread.
    pub parallel_pairs_from: Option<usize>,
    /// Whether the tree keeps its move cache: a copy of every collider's fat box by proxy
    /// id, 16 bytes a collider in 2D and 24 in 3D, which lets the prepare stage read a
    /// moving collider's fat box in proxy order rather than from the tree (see
    /// [`DynamicTree::set_move_cache`](crate::DynamicTree::set_move_cache)). Default
    /// `true`. Turn it off for a world of mostly static colliders (a tile map, a level's
    /// geometry): idle colliders never read it. The events are the same either way.
    pub move_cache: bool,
    /// World units in one unit of the lengths this config and the gameplay helpers
    /// default to (the margin, the skin of move-and-slide): `1.0` for a game in metres
    /// (the default), `100.0` for a 2D game in pixels at 100 pixels to the metre, so
    /// that it behaves as the same game in metres would. A value that is not finite
    /// and positive counts as `1.0`, with a warning.
    pub length_unit: f32,
    /// How the pipeline learns that a [`Static`](crate::plugin::Static) collider changed.
    /// Default [`StaticChangeDetection::Scan`]: every write is seen, at a few nanoseconds per
    /// static collider per tick. [`StaticChangeDetection::OnInsert`] makes an idle level cost
    /// nothing per tick, for levels of hundreds of thousands of colliders and more.
    pub static_changes: StaticChangeDetection,
    /// Whether each tick depends on the collision state and the components alone, so
    /// that a rollback that restores them replays the tick bit for bit. Default `false`;
    /// `AabbTreeRollbackPlugin` (feature `ggrs`) turns it on.
    ///
    /// Two things a restore does not bring back decide otherwise what a tick does:
    /// Bevy's change ticks (a restore marks every restored component changed) and the
    /// order in which Bevy stores entities (a restore moves entities between tables).
    /// When on, every collider is processed at every tick, whatever its change ticks say
    /// (idle colliders are no longer skipped: a tick costs what every collider costs,
    /// not what moved), in the order of their entities, moving colliders before static
    /// ones; and the character controller moves characters in the order of their
    /// entities, not in the order of its query. A run with it on is deterministic by
    /// itself, but not bit for bit the same as a run with it off (the trees' layout and a
    /// crowd of characters' order of moves differ).
    pub replayable: bool,
}

/// How the pipeline finds the [`Static`](crate::plugin::Static) colliders to process
/// again: see [`CollisionConfig::static_changes`].
///
/// Moving colliders are always found by Bevy's change detection. A static collider is
/// always processed again when it gets or loses the marker, when a collider component
/// is inserted or removed, when it is disabled or enabled, and when an ancestor's
/// `Transform` changes; the two modes differ on writes in place (through `&mut`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Debug, Default, PartialEq, Hash)]
pub enum StaticChangeDetection {
    /// Each tick tests every static collider's change ticks (its `Transform`, `Aabb`,
    /// `BoundingSphere`, `Velocity` and `CollisionLayers`), like a moving collider's:
    /// writes through `&mut` are seen at the next tick. The test costs a few
    /// nanoseconds per static collider per tick, a few milliseconds for a level of a
    /// million colliders.
    #[default]
    Scan,
    /// Static colliders are never scanned: one is processed again only on the changes
    /// every mode sees (the marker, a component inserted or removed, `Disabled`, an
    /// ancestor's `Transform`), after it moved or while its values are invalid, and when
    /// [`CollisionConfig`] changes (every collider is processed then). To move, resize or
    /// re-layer a static collider, insert the new component
    /// (`commands.entity(e).insert(Transform::from_xyz(..))`); a write through `&mut` on
    /// the collider itself is not seen until such an insert (a static collider that is
    /// also a parent still moves its children at once). An idle level costs nothing per
    /// tick, however large.
    OnInsert,
}

impl CollisionConfig {
    /// The length unit, `1.0` when it is not finite and positive.
    pub fn unit(&self) -> f32 {
        if self.length_unit.is_finite() && self.length_unit > 0.0 {
            self.length_unit
        } else {
            1.0
        }
    }
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
            length_unit: 1.0,
            static_changes: StaticChangeDetection::Scan,
            replayable: false,
        }
    }
}
