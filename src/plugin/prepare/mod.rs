//! The prepare stage: world shapes, validity, proxies and fat boxes.

mod statics;

use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::query::QueryItem;
use bevy::platform::time::Instant;
use bevy::prelude::*;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::plugin::lifecycle::forget_foreign_proxy;
use crate::plugin::pairs::Pair;
use crate::plugin::pool::pool_for;
use crate::plugin::shape::{Hierarchy, Problem, ancestor_teleported, invalid_reason, world_shape};
use crate::plugin::state::{Body, Key, next_run};
use crate::plugin::{
    Aabb, AabbTree, BoundingSphere, CollisionConfig, CollisionLayers, EndReason, Sensor, Static,
    StaticChanges, Teleported, TrackedCollider, Velocity,
};
use crate::tree::parallel::{CallingThread, TaskRunner};
use crate::tree::{DynamicTree, ProxyId};

/// What `prepare` reads of a collider.
type ColliderData<'a, V> = (
    Entity,
    &'a mut TrackedCollider<V>,
    &'a Transform,
    Option<&'a ChildOf>,
    Option<&'a Aabb<V>>,
    Option<&'a BoundingSphere<V>>,
    Option<&'a Velocity<V>>,
    Option<&'a CollisionLayers>,
    Has<Static>,
    Has<Teleported>,
    Has<Sensor>,
);

/// One item of [`ColliderData`].
type ColliderItem<'a, V> = QueryItem<'a, 'a, ColliderData<'static, V>>;

/// The colliders whose own inputs changed since the pipeline's last run, or that have
/// [`Teleported`]: a filter Bevy evaluates on change ticks alone, without reading the
/// components.
type ChangedInputs<V> = Or<(
    Changed<Transform>,
    Changed<Aabb<V>>,
    Changed<BoundingSphere<V>>,
    Changed<Velocity<V>>,
    Changed<CollisionLayers>,
    Changed<TrackedCollider<V>>,
    With<Teleported>,
)>;

/// The inputs of one collider, as `prepare` reads them.
struct Inputs<'a, V: Vector> {
    entity: Entity,
    transform: &'a Transform,
    parent: Option<&'a ChildOf>,
    aabb: Option<&'a Aabb<V>>,
    sphere: Option<&'a BoundingSphere<V>>,
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
    swept: bool,
    /// `dt × velocity_multiplier`: the prediction is `velocity × predict`.
    predict: f32,
    /// Colliders processed this tick, those left out for invalid values included.
    processed: usize,
    /// Colliders processed so far, over all ticks (see [`Body::processed_at`]).
    processed_at: u64,
    /// New static colliders of this tick, with their fat boxes: given ids, put in the
    /// static tree together at the end.
    new_static: Vec<(ProxyId, BoundingBox<V>)>,
    /// Pairs of a collider changing trees, carried over to its new key, and its old key.
    carried: Vec<Pair>,
    carried_from: Option<Key>,
}

impl<V: Vector> Prepare<'_, '_, '_, '_, '_, V> {
    /// Processes a collider once this tick (`tick` marks it, so that the scans that may
    /// each find it process it once), and lists it for the next tick when it must be
    /// processed again (it moved, or is left out for invalid values).
    fn visit(&mut self, item: ColliderItem<'_, V>, tick: u32) {
        let (
            entity,
            mut tracked,
            transform,
            parent,
            aabb,
            sphere,
            velocity,
            layers,
            is_static,
            teleported,
            sensor,
        ) = item;
        // Without a shape there is nothing to do but to take out a proxy it still has.
        if tracked.seen == tick || (aabb.is_none() && sphere.is_none() && tracked.proxy.is_none()) {
            return;
        }
        let tracked = &mut *tracked;
        tracked.seen = tick;
        let inputs = Inputs {
            entity,
            transform,
            parent,
            aabb,
            sphere,
            velocity: velocity.map_or(V::ZERO, |v| v.0),
            layers: layers.map_or_else(CollisionLayers::default, |l| *l),
            is_static,
            teleported,
            sensor,
        };
        self.process(tracked, inputs);
        if tracked.moved || tracked.invalid {
            self.state.tick.revisit.push((entity, tracked.proxy));
        }
    }

    /// Stages 1–3 for one collider: its world shape, validity, its proxy in its tree and
    /// its body. Done again with unchanged inputs and a zero displacement, this changes
    /// nothing, which is what lets `prepare` skip idle colliders.
    fn process(&mut self, tracked: &mut TrackedCollider<V>, inputs: Inputs<'_, V>) {
        let (entity, transform, parent) = (inputs.entity, inputs.transform, inputs.parent);
        let (aabb, sphere) = (inputs.aabb, inputs.sphere);
        let (velocity, layers) = (inputs.velocity, inputs.layers);
        let (is_static, teleported) = (inputs.is_static, inputs.teleported);
        let sensor = inputs.sensor;
        self.processed += 1;
        let state = &mut *self.state;
        forget_foreign_proxy(tracked, entity, state);
        if teleported {
            self.commands.entity(entity).remove::<Teleported>();
        }
        // Always walked, so that every ancestor's marker goes this tick even when the
        // collider has its own.
        let from_ancestor = ancestor_teleported(parent, self.hierarchy, self.commands);
        let teleported = teleported || from_ancestor;
        let Some(shape) = world_shape(transform, parent, self.hierarchy, aabb, sphere) else {
            // Both shapes removed by one command: each `Remove` observer saw the other
            // still there and kept the proxy.
            if let Some(key) = tracked.proxy.take() {
                state.remove_proxy(key, EndReason::Removed);
            }
            return;
        };
        let mut problem = invalid_reason(&shape, aabb, sphere, velocity, transform);

        // Where the sweep starts: the pose the observers recorded (at the spawn, at the
        // shape's insertion, at a teleport), else the last tick's shape for a collider in
        // its tree; a teleport without a recorded pose, or a collider back in after being
        // out (disabled, invalid), is not swept.
        let from_last_tick = tracked.proxy.is_some() && !teleported;
        let displacement = if self.swept && (tracked.start_known || from_last_tick) {
            shape.center() - tracked.shape.center()
        } else {
            V::ZERO
        };
        tracked.start_known = false;
        let swept = shape.bounding_box().swept(-displacement);
        let predicted = velocity * self.predict;
        let fat = state.tree.fatten(&swept, predicted);
        // The fat box too: finite values near the edge of `f32`'s range can overflow it.
        // Past this check, `swept` and `fat` are valid boxes.
        if problem.is_none() && !(swept.is_valid() && predicted.is_finite() && fat.is_valid()) {
            problem = Some(Problem::Overflow(swept, predicted));
        }

        if let Some(what) = problem {
            if !tracked.invalid {
                warn!(
                    "bevy_aabb_tree: entity {entity} left out of collision detection until its values are valid: {what}"
                );
                tracked.invalid = true;
            }
            if let Some(key) = tracked.proxy.take() {
                state.remove_proxy(key, EndReason::Invalid);
            }
            return;
        }
        if tracked.invalid {
            info!("bevy_aabb_tree: entity {entity} is valid again and back in collision detection");
            tracked.invalid = false;
        }

        self.processed_at += 1;
        let body = Body {
            entity,
            shape,
            displacement,
            layers,
            sensor,
            processed_at: self.processed_at,
        };
        tracked.previous = shape.center() - displacement;
        tracked.shape = shape;
        tracked.moved = displacement != V::ZERO;

        // The marker added or removed: out of the old tree, pairs kept aside.
        self.carried.clear();
        if let Some(key) = tracked.proxy
            && key.is_static() != is_static
        {
            state.pairs.remove_all_of(key, |p| self.carried.push(p));
            self.carried_from = Some(key);
            let _ = state.tree_of_mut(key).destroy_proxy(key.proxy());
            if !key.is_static() {
                state.neighbourhoods.release(key.proxy());
            }
            *state.bodies.get_or_grow(key, None) = None;
            tracked.proxy = None;
        }

        let key = match tracked.proxy {
            Some(key) if key.is_static() => {
                // A static collider changed: a re-insertion when it left its fat box.
                let id = key.proxy();
                let keeps = state
                    .static_tree
                    .fat_box(id)
                    .is_some_and(|old| DynamicTree::<V, Entity>::keeps_fat_box(&old, &swept, &fat));
                let layers_changed = state.body(key).is_some_and(|b| b.layers != layers);
                if !keeps {
                    if let Err(e) = state.static_tree.set_fat_box(id, fat) {
                        error!(
                            "bevy_aabb_tree: static collider {entity} kept its old fat box: {e}"
                        );
                    }
                    state.tick.moved.push(key);
                } else if layers_changed {
                    state.tick.moved.push(key);
                }
                key
            }
            Some(key) => {
                // The move is decided here, by the tree's rule against the fat box the
                // tree holds (its move cache by proxy id, read in about the order colliders
                // are iterated; the parent's slot when the cache is off), and the changed
                // boxes are handed over in one batch at the end of `prepare`
                // (`DynamicTree::set_fat_boxes`).
                let id = key.proxy();
                let layers_changed = state.body(key).is_some_and(|b| b.layers != layers);
                match state.tree.fat_box(id) {
                    Some(old) if DynamicTree::<V, Entity>::keeps_fat_box(&old, &swept, &fat) => {
                        if layers_changed {
                            // Same box, but pairs must be looked for again.
                            state.tick.pending_fat.push((id, old));
                            state.tick.moved.push(key);
                        }
                    }
                    _ => {
                        state.tick.pending_fat.push((id, fat));
                        state.tick.moved.push(key);
                    }
                }
                key
            }
            None => {
                let created = if is_static && self.carried.is_empty() {
                    // A new static collider: its id now, its place in the static tree
                    // with the others' at the end of the stage (one build for a level
                    // spawned at once).
                    let new_static = &mut self.new_static;
                    state
                        .static_tree
                        .create_unlinked(swept, entity)
                        .map(|(id, fat)| {
                            new_static.push((id, fat));
                            Key::fixed(id)
                        })
                } else {
                    let tree = if is_static {
                        &mut state.static_tree
                    } else {
                        &mut state.tree
                    };
                    let id = tree.create_proxy(swept, entity).and_then(|id| {
                        match tree.set_fat_box(id, fat) {
                            Ok(()) => Ok(id),
                            Err(e) => {
                                // Not left behind in the tree.
                                let _ = tree.destroy_proxy(id);
                                Err(e)
                            }
                        }
                    });
                    id.map(if is_static { Key::fixed } else { Key::moving })
                };
                match created {
                    Ok(key) => {
                        tracked.proxy = Some(key);
                        state.tick.moved.push(key);
                        key
                    }
                    Err(e) => {
                        warn!(
                            "bevy_aabb_tree: entity {entity} left out of collision detection: {e}"
                        );
                        tracked.invalid = true;
                        self.end_carried(entity, EndReason::Removed);
                        return;
                    }
                }
            }
        };
        // The tree's copy of the layers, which its searches and queries prune by.
        let tree = state.tree_of_mut(key);
        if tree.layers(key.proxy()) != layers.into() {
            let _ = tree.set_layers(key.proxy(), layers.into());
        }
        state.set_body(key, body);
        state.tick.processed.push(key);
        if let Some(old) = self.carried_from.take() {
            self.carry_pairs(entity, old, key);
        }
    }
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

/// Stage 1–3: world shapes from transforms, validity, insertion, fattening, tree update.
///
/// Only colliders whose inputs changed since the last run are processed; the others keep
/// their shape, proxy and body, which processing them again would leave as they are. A
/// collider is processed when:
/// - `Transform`, `Aabb`, `BoundingSphere`, `Velocity` or `CollisionLayers` changed (Bevy's
///   change ticks: inserted or written through `Mut` since the last run), or the plugin's
///   observers marked its `TrackedCollider` (one of those components was removed, `Static`
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
/// [`StaticChanges::Detect`] the first case's change ticks are tested on them too; with
/// [`StaticChanges::OnInsert`] they are not scanned, and the observers list the static
/// colliders that got a component inserted or removed, the marker, or `Disabled`
/// removed (the other cases apply to them as to any collider).
///
/// Finding the changed colliders costs a test of three or four change ticks per idle
/// collider that is scanned (Bevy's change detection), nothing more.
///
/// A change of the time step alone (a variable `dt` in `Update`) does not re-process idle
/// colliders: it only changes the fattening of their boxes, never the events.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(crate) fn prepare<V: Vector>(
    mut commands: Commands,
    time: Res<Time>,
    config: Res<CollisionConfig>,
    mut state: ResMut<AabbTree<V>>,
    mut colliders: ParamSet<(
        Query<ColliderData<V>, (ChangedInputs<V>, Without<Static>)>,
        Query<ColliderData<V>>,
        Query<ColliderData<V>, (ChangedInputs<V>, With<Static>)>,
    )>,
    moving_colliders: Query<(), (With<TrackedCollider<V>>, Without<Static>)>,
    // Disabled parents too: a disabled parent that moves still moves its enabled
    // children, whose transforms follow it.
    moved_parents: Query<
        (&Children, Ref<Transform>),
        (Or<(Changed<Transform>, With<Teleported>)>, Allow<Disabled>),
    >,
    children: Query<&Children, Allow<Disabled>>,
    hierarchy: Hierarchy,
) {
    let start = Instant::now();
    let state = &mut *state;
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
    if !state.tick.dead_static.is_empty() {
        let dead = core::mem::take(&mut state.tick.dead_static);
        state.static_tree.destroy_proxies(&dead);
        state.tick.dead_static = dead;
        state.tick.dead_static.clear();
    }
    // Static colliders rarely move: their tree keeps no copy of their fat boxes.
    state.static_tree.set_move_cache(false);
    // Colliders spawned in bulk get their proxies without the arrays growing a doubling
    // at a time, which would leave up to half of them unused. (Counting a query without
    // filters by archetype costs O(archetypes), not O(colliders).)
    let total = colliders.p1().iter().len();
    let moving_total = moving_colliders.iter().len();
    state
        .tree
        .reserve(moving_total.saturating_sub(state.tree.len()));
    let static_total = total.saturating_sub(moving_total);
    state
        .static_tree
        .reserve(static_total.saturating_sub(state.static_tree.len()));
    state.reserve_key_tables(moving_total, static_total);
    state.stats.started = 0;
    state.stats.ended = state.tick.ended.len();
    state.tick.swept_hits.clear();
    state.tick.processed.clear();
    state.tick.moved.clear();
    state.tick.processed_before = state.tick.processed_total;
    state.tick.number = next_run(state.tick.number);
    let tick = state.tick.number;
    let mut revisit = core::mem::take(&mut state.tick.revisit);
    let processed_total = state.tick.processed_total;
    let mut ctx = Prepare {
        commands: &mut commands,
        state,
        hierarchy: &hierarchy,
        swept: config.swept,
        predict: time.delta_secs() * multiplier,
        processed: 0,
        processed_at: processed_total,
        new_static: Vec::new(),
        carried: Vec::new(),
        carried_from: None,
    };
    if everything {
        // Every collider is processed: what the list holds is among them (and those that
        // must come back at the next tick list themselves again).
        revisit.clear();
        // Colliders without `Static` first, as in the scans below: a pair whose two sides
        // swap the marker this tick must see the side that lost it in the moving tree
        // before the side that gained it leaves that tree, or the pair would read as two
        // static colliders and end.
        let mut all = colliders.p1();
        for item in &mut all {
            if !item.8 {
                ctx.visit(item, tick);
            }
        }
        for item in &mut all {
            if item.8 {
                ctx.visit(item, tick);
            }
        }
    } else {
        for item in &mut colliders.p0() {
            ctx.visit(item, tick);
        }
        if config.static_changes == StaticChanges::Detect {
            for item in &mut colliders.p2() {
                ctx.visit(item, tick);
            }
        }
        let mut all = colliders.p1();
        let before = ctx.state.tick.processed_before;
        for (entity, key) in revisit.drain(..) {
            // Most are moving colliders the scan above has just processed: their bodies
            // say so, without a look-up of the entity.
            let done = key
                .and_then(|k| ctx.state.body(k))
                .is_some_and(|b| b.entity == entity && b.processed_at > before);
            if done {
                continue;
            }
            if let Ok(item) = all.get_mut(entity) {
                ctx.visit(item, tick);
            }
        }
        // Colliders below a parent that moved (or jumped), however deep.
        let mut below: Vec<Entity> = Vec::new();
        for (kids, transform) in &moved_parents {
            // A parent spawned this tick has new children (found by the scan above) or
            // children moved under it (their `ChildOf` marks them): no walk needed.
            if transform.is_added() {
                continue;
            }
            below.extend(kids.iter());
            while let Some(entity) = below.pop() {
                if let Ok(item) = all.get_mut(entity) {
                    ctx.visit(item, tick);
                }
                if let Ok(kids) = children.get(entity) {
                    below.extend(kids.iter());
                }
            }
        }
    }
    ctx.insert_new_static();
    let (processed, processed_at) = (ctx.processed, ctx.processed_at);
    let state = ctx.state;
    state.tick.processed_total = processed_at;
    revisit.append(&mut state.tick.revisit);
    state.tick.revisit = revisit;
    let mut pending = core::mem::take(&mut state.tick.pending_fat);
    // Every id is a live proxy and every box valid (checked above), so the tree refuses
    // none; should it, the collider would keep a stale fat box, which is logged.
    // A large batch refits the tree on the compute task pool, like the pair search.
    let pool = pool_for(&config, pending.len());
    let runner: &dyn TaskRunner = match &pool {
        Some(pool) => pool,
        None => &CallingThread,
    };
    state
        .tree
        .set_fat_boxes_on(pending.drain(..), runner, |id, result| {
            if let Err(e) = result {
                error!("bevy_aabb_tree: proxy {id:?} kept its old fat box: {e}");
            }
        });
    state.tick.pending_fat = pending;
    state.stats.processed = processed;
    state.stats.moved = state.tick.moved.len();
    state.stats.proxies = state.tree.len();
    state.stats.static_proxies = state.static_tree.len();
    state.stats.prepare_ms = start.elapsed().as_secs_f32() * 1000.0;
}
