//! The prepare stage
//! ([`CollisionSystems::Prepare`](crate::plugin::CollisionSystems::Prepare)): world shapes
//! from transforms, validity, proxies and fat boxes, for the colliders whose inputs
//! changed. `prepare` runs these steps in order:
//!
//! 1. [`read_config`]: the margin and the velocity multiplier (checked, with a warning
//!    when the config changed to a value that is not a finite number), the move caches,
//!    whether everything is processed this tick.
//! 2. [`remove_dead_statics`]: the static proxies of colliders gone since the last tick
//!    leave the static tree, together.
//! 3. [`begin_tick`]: the arrays reserved for the colliders spawned since the last tick,
//!    the tick's buffers cleared, the run numbered.
//! 4. [`Prepare::scan_changes`] (`scan`): the changed colliders, those listed at the last
//!    tick, and those below a parent that moved, each processed once
//!    ([`Prepare::process`], in `process`: its shape and validity, its place in its
//!    tree, its body).
//! 5. [`Prepare::insert_new_static`] (`statics`): the tick's new static colliders into the
//!    static tree together (`DynamicTree::create_proxies`: one build when they are many).
//! 6. [`Prepare::finish`]: the counts kept, and the list of the colliders to process
//!    again at the next tick.
//! 7. [`apply_moves`]: the moving colliders' moves handed to the tree in one batch
//!    (`DynamicTree::move_proxies_on`), which decides which fat boxes change.
//!
//! The stage changes the trees only through `DynamicTree`'s public calls.
//! 8. [`record_stats`]: the stage's figures in [`StepStats`](crate::plugin::StepStats).
//!
//! What it fills for the later stages is in `TickBuffers::prepare`.

mod process;
mod scan;
mod statics;

use bevy::platform::time::Instant;
use bevy::prelude::*;

use crate::Vector;
use crate::plugin::key::Key;
use crate::plugin::pairs::Pair;
use crate::plugin::pool::pool_for;
use crate::plugin::shape::Hierarchy;
use crate::plugin::state::next_run;
use crate::plugin::{AabbTree, CollisionConfig, CollisionLayers, Static, TrackedCollider};
use crate::tree::{CallingThread, TaskRunner};

use scan::{AllChildren, Colliders, MovedParents};

/// The inputs of one collider, as `prepare` reads them.
struct Inputs<'a, V: Vector> {
    entity: Entity,
    transform: &'a Transform,
    parent: Option<&'a ChildOf>,
    shapes: crate::plugin::shape::ShapeComponents<'a, V>,
    velocity: V,
    layers: CollisionLayers,
    is_static: bool,
    teleported: bool,
    sensor: bool,
}

/// What processing one collider needs besides the collider itself.
struct Prepare<'a, 'cw, 'cs, 'hw, 'hs, V: Vector> {
    commands: &'a mut Commands<'cw, 'cs>,
    state: &'a mut AabbTree<V>,
    hierarchy: &'a Hierarchy<'hw, 'hs>,
    /// This run's number, which marks the colliders it processed.
    tick: u32,
    swept: bool,
    /// `dt × velocity_multiplier`: the prediction is `velocity × predict`.
    predict: f32,
    /// Colliders processed this tick, those left out for invalid values included.
    processed: usize,
    /// Colliders processed so far, over all ticks (see [`Body::processed_at`]).
    ///
    /// [`Body::processed_at`]: crate::plugin::state::Body
    processed_at: u64,
    /// The colliders the last tick listed to process at this one (the buffers gather the
    /// next tick's list meanwhile).
    listed: Vec<(Entity, Option<Key>)>,
    /// Pairs of a collider changing trees, carried over to its new key, and its old key.
    carried: Vec<Pair>,
    carried_from: Option<Key>,
}

impl<V: Vector> Prepare<'_, '_, '_, '_, '_, V> {
    /// Ends the scan: keeps the count of processed colliders over all ticks, and the
    /// emptied list of the last tick for its room (the colliders listed during this one
    /// are in the buffers' list). Returns the count of colliders processed this tick.
    fn finish(self) -> usize {
        let Self {
            state,
            processed,
            processed_at,
            mut listed,
            ..
        } = self;
        let prepared = &mut state.tick.colliders;
        prepared.processed_total = processed_at;
        // The scans leave the last tick's list empty; it lends its room to the next.
        prepared.revisit.append(&mut listed);
        prepared.revisit_spare = listed;
        processed
    }
}

/// What the config sets for one tick.
struct Settings {
    /// [`CollisionConfig`] changed: every collider is processed.
    everything: bool,
    /// `dt × velocity_multiplier`.
    predict: f32,
}

/// `value`, or `default` when it is not a finite number (NaN or infinite), with one
/// warning naming the [`CollisionConfig`] field when `warn` (the config changed).
fn finite_or_default(value: f32, default: f32, field: &str, warn: bool) -> f32 {
    if value.is_finite() {
        return value;
    }
    if warn {
        warn!(
            "bevy_aabb_tree: CollisionConfig::{field} is {value}, not a finite number: using its default, {default}"
        );
    }
    default
}

/// Reads [`CollisionConfig`] for this tick: the trees' margin (in length units), the
/// prediction of the fat boxes, the move caches. A value that is not a finite number
/// falls back to its default, with a warning when the config changed (once, not every
/// tick).
fn read_config<V: Vector>(
    config: &Res<CollisionConfig>,
    time: &Time,
    state: &mut AabbTree<V>,
) -> Settings {
    let everything = config.is_changed();
    let defaults = CollisionConfig::default();
    if everything && config.unit() != config.length_unit {
        warn!(
            "bevy_aabb_tree: CollisionConfig::length_unit is {}, not a finite positive number: using 1.0",
            config.length_unit
        );
    }
    let unit = config.unit();
    // Finite, and a negative margin counts as 0: `set_margin` always takes it.
    let margin =
        finite_or_default(config.margin, defaults.margin, "margin", everything).max(0.0) * unit;
    let multiplier = finite_or_default(
        config.velocity_multiplier,
        defaults.velocity_multiplier,
        "velocity_multiplier",
        everything,
    );
    for tree in [&mut state.tree, &mut state.static_tree] {
        if tree.margin() != margin {
            let _ = tree.set_margin(margin);
        }
    }
    state.tree.set_move_cache(config.move_cache);
    // Static colliders rarely move: their tree keeps no copy of their fat boxes.
    state.static_tree.set_move_cache(false);
    Settings {
        everything,
        predict: time.delta_secs() * multiplier,
    }
}

/// Takes the static proxies of the colliders gone since the last tick out of the static
/// tree, all at once: a level unloaded in one frame leaves with one rebuild.
fn remove_dead_statics<V: Vector>(state: &mut AabbTree<V>) {
    if !state.tick.colliders.dead_static.is_empty() {
        let dead = core::mem::take(&mut state.tick.colliders.dead_static);
        state.static_tree.destroy_proxies(&dead);
        state.tick.colliders.dead_static = dead;
        state.tick.colliders.dead_static.clear();
    }
}

/// Starts the tick: room for `total` colliders (`moving` of them without [`Static`]) in
/// the trees and the tables by key, the figures and buffers this stage fills cleared,
/// and the run's number.
///
/// Colliders spawned in bulk get their proxies without the arrays growing a doubling at
/// a time, which would leave up to half of them unused.
fn begin_tick<V: Vector>(state: &mut AabbTree<V>, total: usize, moving: usize) {
    state.tree.reserve(moving.saturating_sub(state.tree.len()));
    let fixed = total.saturating_sub(moving);
    state
        .static_tree
        .reserve(fixed.saturating_sub(state.static_tree.len()));
    state.reserve_key_tables(moving, fixed);
    state.stats.started = 0;
    // The last tick's, shown until the narrow phase finds this tick's.
    state.tick.starts.pass_throughs.clear();
    let prepared = &mut state.tick.colliders;
    prepared.processed.clear();
    prepared.moved.clear();
    prepared.processed_before = prepared.processed_total;
    prepared.number = next_run(prepared.number);
}

/// Hands the moving colliders' moves to the tree in one batch
/// (`DynamicTree::move_proxies_on`), which decides which fat boxes change: those count as
/// moved, with those whose layers changed (the tree is told to report their pairs again).
/// A large batch refits the tree on the compute task pool, like the pair search.
///
/// Every id is a live proxy and every box valid (checked when processed), so the tree
/// refuses none; should it, the collider would keep a stale fat box, which is logged.
fn apply_moves<V: Vector>(state: &mut AabbTree<V>, config: &CollisionConfig) {
    let AabbTree { tree, tick, .. } = state;
    let prepared = &mut tick.colliders;
    let moves = core::mem::take(&mut prepared.to_move);
    let pool = pool_for(config, moves.len());
    let runner: &dyn TaskRunner = match &pool {
        Some(pool) => pool,
        None => &CallingThread,
    };
    let mut touched = core::mem::take(&mut prepared.touched);
    let mut next = moves.iter();
    tree.move_proxies_on(
        moves.iter().map(|m| (m.id, m.swept, m.predicted)),
        runner,
        |id, result| {
            // One result per move, in order.
            let layers_changed = next.next().is_some_and(|m| m.layers_changed);
            match result {
                Ok(true) => prepared.moved.push(Key::moving(id)),
                Ok(false) if layers_changed => {
                    touched.push(id);
                    prepared.moved.push(Key::moving(id));
                }
                Ok(false) => {}
                Err(e) => error!("bevy_aabb_tree: proxy {id:?} kept its old fat box: {e}"),
            }
        },
    );
    for id in touched.drain(..) {
        let _ = tree.touch_proxy(id);
    }
    let mut moves = moves;
    moves.clear();
    prepared.to_move = moves;
    prepared.touched = touched;
}

/// The stage's figures: colliders processed and moved, proxies in each tree, time.
fn record_stats<V: Vector>(state: &mut AabbTree<V>, processed: usize, start: Instant) {
    state.stats.processed = processed;
    state.stats.moved = state.tick.colliders.moved.len();
    state.stats.proxies = state.tree.len();
    state.stats.static_proxies = state.static_tree.len();
    state.stats.prepare_ms = start.elapsed().as_secs_f32() * 1000.0;
}

/// The system of the prepare stage: world shapes from transforms, validity, insertion,
/// fattening, tree update, in the steps listed in the module's docs.
///
/// Only colliders whose inputs changed since the last run are processed; the others keep
/// their shape, proxy and body, which processing them again would leave as they are. A
/// collider is processed when:
/// - `Transform`, a shape (`Aabb`, `RoundedAabb`, `Capsule`, `BoundingSphere`), `Velocity`
///   or `CollisionLayers` changed (Bevy's change ticks: inserted or written through `Mut`
///   since the last run), or the plugin's observers marked its `TrackedCollider` (one of those components was removed, `Static`
///   was added or removed, `Disabled` was removed), or it has `Teleported`;
/// - an ancestor's `Transform` changed or an ancestor has `Teleported` (found by walking
///   down from such parents: children of a still parent are idle like roots). Inserting
///   or removing a `ChildOf` marks the entity's `Transform` changed;
/// - [`CollisionConfig`] changed (everything is processed);
/// - at its last processing it moved (its displacement, non-zero then, must become zero,
///   its previous position its position, and its fat box may shrink back) or was left out
///   for invalid values (re-checked every tick until valid).
///
/// Static colliders follow [`CollisionConfig::static_changes`]: with
/// [`StaticChangeDetection::Scan`](crate::plugin::StaticChangeDetection::Scan) the first case's
/// change ticks are tested on them too; with
/// [`StaticChangeDetection::OnInsert`](crate::plugin::StaticChangeDetection::OnInsert) they are not
/// scanned, and the observers list the static colliders that got a component inserted or
/// removed, the marker, or `Disabled` removed (the other cases apply to them as to any
/// collider).
///
/// Finding the changed colliders costs a test of three or four change ticks per idle
/// collider that is scanned (Bevy's change detection), nothing more.
///
/// A change of the time step alone (a variable `dt` in `Update`) does not re-process idle
/// colliders: it only changes the fattening of their boxes, never the events.
#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare<V: Vector>(
    mut commands: Commands,
    time: Res<Time>,
    config: Res<CollisionConfig>,
    mut state: ResMut<AabbTree<V>>,
    mut colliders: Colliders<V>,
    moving_colliders: Query<(), (With<TrackedCollider<V>>, Without<Static>)>,
    moved_parents: MovedParents,
    children: AllChildren,
    hierarchy: Hierarchy,
) {
    let start = Instant::now();
    let state = &mut *state;
    let settings = read_config(&config, &time, state);
    remove_dead_statics(state);
    // Counting a query without filters by archetype costs O(archetypes), not
    // O(colliders).
    let total = colliders.p1().iter().len();
    let moving = moving_colliders.iter().len();
    begin_tick(state, total, moving);
    let prepared = &mut state.tick.colliders;
    let listed = core::mem::replace(
        &mut prepared.revisit,
        core::mem::take(&mut prepared.revisit_spare),
    );
    let mut ctx = Prepare {
        commands: &mut commands,
        tick: state.tick.colliders.number,
        processed_at: state.tick.colliders.processed_total,
        state,
        hierarchy: &hierarchy,
        swept: config.swept,
        predict: settings.predict,
        processed: 0,
        listed,
        carried: Vec::new(),
        carried_from: None,
    };
    ctx.scan_changes(
        &mut colliders,
        &moved_parents,
        &children,
        settings.everything,
        config.static_changes,
        config.replayable,
    );
    ctx.insert_new_static(&mut colliders.p1());
    let processed = ctx.finish();
    let moves = Instant::now();
    apply_moves(state, &config);
    state.stats.tree_ms = moves.elapsed().as_secs_f32() * 1000.0;
    record_stats(state, processed, start);
}
