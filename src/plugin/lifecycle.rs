//! Lifecycle observers: colliders that are despawned, disabled or lose a component.

use bevy::ecs::entity_disabling::Disabled;
use bevy::prelude::*;

use crate::Vector;
use crate::plugin::events::{CollisionWriters, deliver_removal};
use crate::plugin::key::Key;
use crate::plugin::shape::{
    HasShapes, Hierarchy, ShapeComponents, ShapeQuery, shape_count, world_shape,
};
use crate::plugin::state::next_run;
use crate::plugin::{
    Aabb, AabbTree, BoundingSphere, Capsule, CollidingEntities, CollisionConfig, EndReason,
    RoundedAabb, Static, StaticChangeDetection, Teleported, TrackedCollider,
};
use crate::tree::DynamicTree;

/// Observer: the entity is despawned or disabled. The proxy leaves the tree at once and
/// its touching pairs end (`EndReason::Removed`).
pub(crate) fn on_collider_gone<V: Vector, E: EntityEvent, C: Component>(
    event: On<E, C>,
    mut colliders: Query<&mut TrackedCollider<V>, Allow<Disabled>>,
    mut state: ResMut<AabbTree<V>>,
    mut writers: CollisionWriters<V>,
    mut commands: Commands,
) {
    let entity = event.event_target();
    if let Ok(mut tracked) = colliders.get_mut(entity) {
        drop_proxy(
            entity,
            &mut tracked,
            &mut state,
            &mut writers,
            &mut commands,
        );
    }
}

/// A collider's tracking state and which shapes it has.
type ShapesItem<'a, V> = (&'a mut TrackedCollider<V>, HasShapes<V>, Has<Static>);

/// Marks a collider for processing at the next tick: its `TrackedCollider` changed (which
/// the change scan sees), and, for a static collider the scan skips
/// ([`StaticChangeDetection::OnInsert`]), an entry in the list of colliders to revisit.
pub(crate) fn mark<V: Vector>(
    entity: Entity,
    tracked: &mut Mut<TrackedCollider<V>>,
    is_static: bool,
    config: &CollisionConfig,
    state: &mut AabbTree<V>,
) {
    tracked.set_changed();
    if is_static {
        queue_static(entity, tracked, config, state);
    }
}

/// Lists a static collider for the next tick when the change scan skips static ones,
/// once per tick.
fn queue_static<V: Vector>(
    entity: Entity,
    tracked: &mut TrackedCollider<V>,
    config: &CollisionConfig,
    state: &mut AabbTree<V>,
) {
    let next = next_run(state.tick.colliders.number);
    if config.static_changes == StaticChangeDetection::OnInsert && tracked.queued != next {
        tracked.queued = next;
        state.tick.colliders.revisit.push((entity, tracked.proxy));
    }
}

/// Observer: a shape component (`Aabb`, `RoundedAabb`, `Capsule` or `BoundingSphere`) is
/// being removed.
/// When the entity keeps another shape, it stays in the tree and the next tick tests the new
/// shape (contacts that still touch go on without events); otherwise it is gone as in
/// [`on_collider_gone`]. On despawn, `Despawn` observers have already dropped the proxy.
pub(crate) fn on_shape_removed<V: Vector, C: Component>(
    event: On<Remove, C>,
    mut colliders: Query<ShapesItem<V>, Allow<Disabled>>,
    config: Res<CollisionConfig>,
    mut state: ResMut<AabbTree<V>>,
    mut writers: CollisionWriters<V>,
    mut commands: Commands,
) {
    let entity = event.event_target();
    let Ok((mut tracked, has_shapes, is_static)) = colliders.get_mut(entity) else {
        return;
    };
    // `Remove` observers run while the component is still there: two shapes present
    // means one remains. The next tick processes the collider again (a removal is no
    // change Bevy's change ticks show): it tests the remaining shape.
    if shape_count(has_shapes) >= 2 {
        mark(entity, &mut tracked, is_static, &config, &mut state);
        return;
    }
    drop_proxy(
        entity,
        &mut tracked,
        &mut state,
        &mut writers,
        &mut commands,
    );
}

/// Observer: a change of a collider that Bevy's change ticks do not show (a removal of
/// `Velocity`, `CollisionLayers` or `Static`, an added `Static`, a removed `Disabled`).
/// It marks the collider's [`TrackedCollider`] changed: the next tick processes it again
/// (default velocity and layers, the other tree, back in the tree).
pub(crate) fn on_input_changed<V: Vector, E: EntityEvent, C: Component>(
    event: On<E, C>,
    mut colliders: Query<(&mut TrackedCollider<V>, Has<Static>), Allow<Disabled>>,
    config: Res<CollisionConfig>,
    mut state: ResMut<AabbTree<V>>,
) {
    let entity = event.event_target();
    if let Ok((mut tracked, is_static)) = colliders.get_mut(entity) {
        mark(entity, &mut tracked, is_static, &config, &mut state);
    }
}

/// Observer: a component the pipeline reads is inserted on a static collider (a new value,
/// or the same one again). Under [`StaticChangeDetection::OnInsert`] the change scan skips static
/// colliders, so this lists it for the next tick; with [`StaticChangeDetection::Scan`] the scan
/// sees the insert and this does nothing.
pub(crate) fn on_static_insert<V: Vector, C: Component>(
    event: On<Insert, C>,
    mut colliders: Query<&mut TrackedCollider<V>, (With<Static>, Allow<Disabled>)>,
    config: Res<CollisionConfig>,
    mut state: ResMut<AabbTree<V>>,
) {
    if config.static_changes != StaticChangeDetection::OnInsert {
        return;
    }
    let entity = event.event_target();
    if let Ok(mut tracked) = colliders.get_mut(entity) {
        // Through `bypass_change_detection`: the mark is the list, not a change tick.
        queue_static(
            entity,
            tracked.bypass_change_detection(),
            &config,
            &mut state,
        );
    }
}

/// An entity whose `ChildOf` changes: its transform and, for a collider, its tracking
/// state and whether it is static.
type ReparentedItem<'a, V> = (
    &'a mut Transform,
    Option<&'a mut TrackedCollider<V>>,
    Has<Static>,
);

/// Observer: a `ChildOf` is inserted or removed. The entity's world transform changes
/// without any change Bevy's change ticks show, so this marks its `Transform` changed: the
/// next tick processes it if it is a collider, and every collider below it otherwise.
pub(crate) fn on_parent_changed<V: Vector, E: EntityEvent>(
    event: On<E, ChildOf>,
    mut transforms: Query<ReparentedItem<V>, Allow<Disabled>>,
    config: Res<CollisionConfig>,
    mut state: ResMut<AabbTree<V>>,
) {
    let entity = event.event_target();
    if let Ok((mut transform, tracked, is_static)) = transforms.get_mut(entity) {
        transform.set_changed();
        if let Some(mut tracked) = tracked.filter(|_| is_static) {
            queue_static(
                entity,
                tracked.bypass_change_detection(),
                &config,
                &mut state,
            );
        }
    }
}

/// What the start-pose observers read of a collider: its tracking state and what its
/// world shape comes from.
type PoseItem<'a, V> = (
    &'a mut TrackedCollider<V>,
    &'a Transform,
    Option<&'a ChildOf>,
    ShapeQuery<'a, V>,
    Has<Disabled>,
);

/// Records the collider's world shape now as where its next sweep starts. A shape whose
/// center is not finite is not recorded (the tick then starts the collider where it is,
/// and its own checks warn about the values). Nor is anything recorded while the
/// collider is out of collision detection, disabled or left out for invalid values: it
/// comes back unswept, where it is then.
fn record_start<V: Vector>(
    item: bevy::ecs::query::QueryItem<'_, '_, PoseItem<'static, V>>,
    parent: Option<&ChildOf>,
    hierarchy: &Hierarchy,
) {
    let (mut tracked, transform, _, shapes, disabled) = item;
    if disabled || tracked.invalid {
        return;
    }
    let shapes = ShapeComponents::of(shapes);
    if let Some(shape) = world_shape(transform, parent, hierarchy, shapes)
        && shape.center().is_finite()
    {
        // Through `bypass_change_detection`: every path that calls this also makes the
        // next tick process the collider (it is new, has `Teleported`, or its parent
        // changed), and a static collider under `StaticChangeDetection::OnInsert` is listed by
        // its own insert observer.
        let tracked = tracked.bypass_change_detection();
        tracked.shape = shape;
        tracked.start_known = true;
    }
}

/// Observer: a shape component (`Aabb`, `RoundedAabb`, `Capsule` or `BoundingSphere`) is
/// inserted. A collider that
/// is not in a tree yet (spawned, or its shape put back) records where it is now: its
/// first tick sweeps from there, so a collider moved between its spawn and its first
/// tick (by a system in `FixedUpdate`, by several frames without a fixed step) does not
/// skip that motion. A collider already in a tree keeps sweeping from its last tick.
pub(crate) fn on_shape_inserted<V: Vector, C: Component>(
    event: On<Insert, C>,
    mut colliders: Query<PoseItem<V>, Allow<Disabled>>,
    hierarchy: Hierarchy,
) {
    if let Ok(item) = colliders.get_mut(event.event_target())
        && item.0.proxy.is_none()
    {
        let parent = item.2;
        record_start(item, parent, &hierarchy);
    }
}

/// Observer: [`Teleported`] is inserted. The collider, and every collider below the
/// entity, records where it is now (the destination of the jump): the next tick sweeps
/// from there instead of from its place at the last tick.
pub(crate) fn on_teleported<V: Vector>(
    event: On<Insert, Teleported>,
    mut colliders: Query<PoseItem<V>, Allow<Disabled>>,
    children: Query<&Children, Allow<Disabled>>,
    hierarchy: Hierarchy,
) {
    let mut stack = vec![event.event_target()];
    // A cycle cannot happen in Bevy's hierarchy; the bound only guards against a broken one.
    let mut visited = 0usize;
    while let Some(entity) = stack.pop() {
        if let Ok(item) = colliders.get_mut(entity) {
            let parent = item.2;
            record_start(item, parent, &hierarchy);
        }
        if let Ok(kids) = children.get(entity) {
            stack.extend(kids.iter());
        }
        visited += 1;
        if visited > 1 << 24 {
            break;
        }
    }
}

/// Observer: a `ChildOf` is inserted on a collider that is not in a tree yet and has
/// recorded its start (a `ChildOf` inserted by a command after the spawn): its start is
/// its place under the new parent.
pub(crate) fn on_parent_inserted<V: Vector>(
    event: On<Insert, ChildOf>,
    mut colliders: Query<PoseItem<V>, Allow<Disabled>>,
    hierarchy: Hierarchy,
) {
    if let Ok(item) = colliders.get_mut(event.event_target())
        && item.0.proxy.is_none()
        && item.0.start_known
    {
        let parent = item.2;
        record_start(item, parent, &hierarchy);
    }
}

/// Observer: a `ChildOf` is removed from a collider that is not in a tree yet and has
/// recorded its start: its start is its own transform, as a root. (The `ChildOf` is
/// still there while `Remove` observers run.)
pub(crate) fn on_parent_removed<V: Vector>(
    event: On<Remove, ChildOf>,
    mut colliders: Query<PoseItem<V>, Allow<Disabled>>,
    hierarchy: Hierarchy,
) {
    if let Ok(item) = colliders.get_mut(event.event_target())
        && item.0.proxy.is_none()
        && item.0.start_known
    {
        record_start(item, None, &hierarchy);
    }
}

/// Entities with a shape and no [`TrackedCollider`].
type Untracked<V> = (
    Or<(
        With<Aabb<V>>,
        With<RoundedAabb<V>>,
        With<Capsule<V>>,
        With<BoundingSphere<V>>,
    )>,
    Without<TrackedCollider<V>>,
);

/// Colliders whose [`TrackedCollider`] was removed by hand (the plugin maintains it;
/// its docs say not to). The `Discard` observer has taken their proxies out; this puts a
/// new one on each, before the prepare stage, so the collider is back in this tick as a
/// new collider where it is now. The query matches no archetype while nobody removes the
/// component, so it costs nothing per collider.
pub(crate) fn restore_tracking<V: Vector>(
    mut commands: Commands,
    untracked: Query<Entity, Untracked<V>>,
) {
    for entity in &untracked {
        warn!(
            "bevy_aabb_tree: the TrackedCollider of {entity} was removed (the plugin \
             maintains it); the collider is put back as a new one"
        );
        commands
            .entity(entity)
            .try_insert(TrackedCollider::<V>::default());
    }
}

/// Observer: [`CollidingEntities`] is added. It starts with the entities the collider
/// touches now (a walk of its own pairs).
pub(crate) fn on_contacts_added<V: Vector>(
    event: On<Add, CollidingEntities>,
    mut colliders: Query<(&TrackedCollider<V>, &mut CollidingEntities), Allow<Disabled>>,
    state: Res<AabbTree<V>>,
) {
    if let Ok((tracked, mut contacts)) = colliders.get_mut(event.event_target())
        && let Some(key) = tracked.proxy
    {
        contacts.0.extend(state.touching_of(key));
    }
}

/// Mends a proxy id that does not hold this entity. A `TrackedCollider` written over by
/// hand (its docs say not to) may carry an id that the `Discard` observer has already
/// freed, or another collider's: such an id is neither updated nor removed. An insert
/// freed the entity's own proxy already (`Discard`), so it gets a new one at its next
/// processing; a write in place (through `&mut`, which no observer sees) left it in the
/// tree, so it is found again and kept.
#[inline]
pub(crate) fn forget_foreign_proxy<V: Vector>(
    tracked: &mut TrackedCollider<V>,
    entity: Entity,
    state: &AabbTree<V>,
) {
    if let Some(key) = tracked.proxy
        && state.tree_of(key).data(key.proxy()) != Some(&entity)
    {
        tracked.proxy = own_proxy(entity, state);
    }
}

/// The proxy holding `entity`, by a scan of both trees' proxies: only for the rare case
/// of a `TrackedCollider` written over by hand.
#[cold]
fn own_proxy<V: Vector>(entity: Entity, state: &AabbTree<V>) -> Option<Key> {
    warn!(
        "bevy_aabb_tree: the TrackedCollider of {entity} holds a proxy that is not its \
         own (written over by hand: the plugin maintains it); its own proxy is looked up"
    );
    let find = |tree: &DynamicTree<V, Entity>| {
        tree.proxies()
            .find(|(_, owner, _)| **owner == entity)
            .map(|(id, _, _)| id)
    };
    find(&state.tree)
        .map(Key::moving)
        .or_else(|| find(&state.static_tree).map(Key::fixed))
}

/// Takes the collider's proxy out of its tree and ends its touching pairs.
pub(crate) fn drop_proxy<V: Vector>(
    entity: Entity,
    tracked: &mut TrackedCollider<V>,
    state: &mut AabbTree<V>,
    writers: &mut CollisionWriters<V>,
    commands: &mut Commands,
) {
    forget_foreign_proxy(tracked, entity, state);
    // Back in a tree later (enabled again, a shape put back), it starts where it is then.
    tracked.start_known = false;
    if let Some(key) = tracked.proxy.take() {
        state.remove_proxy(key, EndReason::Removed);
        deliver_removal(&mut state.tick, writers, commands);
    }
}
