//! The change scan of the prepare stage: which colliders it processes this tick, each
//! once.

use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::query::QueryItem;
use bevy::prelude::*;

use crate::Vector;
use crate::plugin::shape::{ShapeComponents, ShapeQuery};
use crate::plugin::{
    Aabb, BoundingSphere, Capsule, CollisionLayers, RoundedAabb, Sensor, Static,
    StaticChangeDetection, Teleported, TrackedCollider, Velocity,
};

use super::{Inputs, Prepare};

/// What `prepare` reads of a collider.
pub(super) type ColliderData<'a, V> = (
    Entity,
    &'a mut TrackedCollider<V>,
    &'a Transform,
    Option<&'a ChildOf>,
    ShapeQuery<'a, V>,
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
    Changed<RoundedAabb<V>>,
    Changed<BoundingSphere<V>>,
    Changed<Capsule<V>>,
    Changed<Velocity<V>>,
    Changed<CollisionLayers>,
    Changed<TrackedCollider<V>>,
    With<Teleported>,
)>;

/// Every collider.
pub(super) type AllColliders<'w, 's, V> = Query<'w, 's, ColliderData<'static, V>>;

/// The colliders the stage reads: the changed ones without [`Static`], every one, and
/// the changed static ones. (A `ParamSet` names its queries with `'static` lifetimes:
/// each one it lends borrows from the set.)
pub(super) type Colliders<'w, 's, V> = ParamSet<
    'w,
    's,
    (
        Query<'static, 'static, ColliderData<'static, V>, (ChangedInputs<V>, Without<Static>)>,
        AllColliders<'static, 'static, V>,
        Query<'static, 'static, ColliderData<'static, V>, (ChangedInputs<V>, With<Static>)>,
    ),
>;

/// The parents whose transform changed or that have [`Teleported`]. Disabled parents
/// too: a disabled parent that moves still moves its enabled children, whose transforms
/// follow it.
pub(super) type MovedParents<'w, 's> = Query<
    'w,
    's,
    (&'static Children, Ref<'static, Transform>),
    (Or<(Changed<Transform>, With<Teleported>)>, Allow<Disabled>),
>;

/// Every entity's children, disabled ones included.
pub(super) type AllChildren<'w, 's> = Query<'w, 's, &'static Children, Allow<Disabled>>;

impl<V: Vector> Prepare<'_, '_, '_, '_, '_, V> {
    /// Processes the colliders this tick must process (see `prepare` for which), each
    /// once: every one when `everything` (the config changed); else those the change
    /// scans find, those listed at the last tick, and those below a parent that moved.
    pub(super) fn scan_changes(
        &mut self,
        colliders: &mut Colliders<'_, '_, V>,
        moved_parents: &MovedParents,
        children: &AllChildren,
        everything: bool,
        static_changes: StaticChangeDetection,
        replayable: bool,
    ) {
        if replayable {
            self.visit_in_entity_order(&mut colliders.p1());
            return;
        }
        if everything {
            self.visit_all(&mut colliders.p1());
            return;
        }
        for item in &mut colliders.p0() {
            self.visit(item);
        }
        if static_changes == StaticChangeDetection::Scan {
            for item in &mut colliders.p2() {
                self.visit(item);
            }
        }
        let mut all = colliders.p1();
        self.visit_listed(&mut all);
        self.visit_below_moved_parents(&mut all, moved_parents, children);
    }

    /// Processes every collider, those without `Static` first, as the scans do: a pair
    /// whose two sides swap the marker this tick must see the side that lost it in the
    /// moving tree before the side that gained it leaves that tree, or the pair would read
    /// as two static colliders and end.
    fn visit_all(&mut self, all: &mut AllColliders<'_, '_, V>) {
        // Every collider is processed: what the list holds is among them (and those that
        // must come back at the next tick list themselves again).
        self.listed.clear();
        for item in &mut *all {
            if !item.7 {
                self.visit(item);
            }
        }
        for item in &mut *all {
            if item.7 {
                self.visit(item);
            }
        }
    }

    /// Processes every collider, in the order of their entities, those without `Static`
    /// first (as [`Self::visit_all`], for the same reason): the order of a
    /// [`replayable`](crate::plugin::CollisionConfig::replayable) tick, which neither
    /// change ticks nor the order of Bevy's tables decide. Each entity is listed once, so
    /// a collider is processed whatever its mark of the last run processed says: a
    /// restored state may have an older run's number than the one the collider holds.
    fn visit_in_entity_order(&mut self, all: &mut AllColliders<'_, '_, V>) {
        self.listed.clear();
        let mut order: Vec<(bool, (u32, u32), Entity)> = all
            .iter()
            .map(|item| {
                let entity = item.0;
                (
                    item.7,
                    (entity.index_u32(), entity.generation().to_bits()),
                    entity,
                )
            })
            .collect();
        order.sort_unstable();
        for (_, _, entity) in order {
            if let Ok(mut item) = all.get_mut(entity) {
                item.1.seen = 0;
                self.visit(item);
            }
        }
    }

    /// Processes the colliders listed at the last tick (they moved, were left out for
    /// invalid values, or an observer listed them) that the scans have not processed.
    fn visit_listed(&mut self, all: &mut AllColliders<'_, '_, V>) {
        let mut listed = core::mem::take(&mut self.listed);
        let before = self.state.tick.colliders.processed_before;
        for (entity, key) in listed.drain(..) {
            // Most are moving colliders the scan has just processed: their bodies say so,
            // without a look-up of the entity.
            let done = key
                .and_then(|k| self.state.body(k))
                .is_some_and(|b| b.entity == entity && b.processed_at > before);
            if done {
                continue;
            }
            if let Ok(item) = all.get_mut(entity) {
                self.visit(item);
            }
        }
        self.listed = listed;
    }

    /// Processes the colliders below a parent that moved (or jumped), however deep.
    fn visit_below_moved_parents(
        &mut self,
        all: &mut AllColliders<'_, '_, V>,
        moved_parents: &MovedParents,
        children: &AllChildren,
    ) {
        let mut below: Vec<Entity> = Vec::new();
        for (kids, transform) in moved_parents {
            // A parent spawned this tick has new children (found by the scan) or children
            // moved under it (their `ChildOf` marks them): no walk needed.
            if transform.is_added() {
                continue;
            }
            below.extend(kids.iter());
            while let Some(entity) = below.pop() {
                if let Ok(item) = all.get_mut(entity) {
                    self.visit(item);
                }
                if let Ok(kids) = children.get(entity) {
                    below.extend(kids.iter());
                }
            }
        }
    }

    /// Processes a collider once this tick (its `seen` marks it, so that the scans that
    /// may each find it process it once), and lists it for the next tick when it must be
    /// processed again (it moved, or is left out for invalid values).
    fn visit(&mut self, item: ColliderItem<'_, V>) {
        let (
            entity,
            mut tracked,
            transform,
            parent,
            shapes,
            velocity,
            layers,
            is_static,
            teleported,
            sensor,
        ) = item;
        let shapes = ShapeComponents::of(shapes);
        // Without a shape there is nothing to do but to take out a proxy it still has.
        if tracked.seen == self.tick || (shapes.is_empty() && tracked.proxy.is_none()) {
            return;
        }
        let tracked = &mut *tracked;
        tracked.seen = self.tick;
        let inputs = Inputs {
            entity,
            transform,
            parent,
            shapes,
            velocity: velocity.map_or(V::ZERO, |v| v.0),
            layers: layers.map_or_else(CollisionLayers::default, |l| *l),
            is_static,
            teleported,
            sensor,
        };
        self.process(tracked, inputs);
        if tracked.moved || tracked.invalid {
            self.state
                .tick
                .colliders
                .revisit
                .push((entity, tracked.proxy));
        }
    }
}
