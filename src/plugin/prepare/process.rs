//! One collider's processing in the prepare stage, step by step: its teleport markers,
//! its world shape and validity, its place in its tree (changing trees, updated or
//! created), and its body.

use bevy::prelude::*;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::plugin::key::Key;
use crate::plugin::lifecycle::forget_foreign_proxy;
use crate::plugin::shape::{Problem, ancestor_teleported, invalid_reason, world_shape};
use crate::plugin::state::{Body, TreeMove};
use crate::plugin::{CollisionLayers, EndReason, Teleported, TrackedCollider, WorldShape};
use crate::tree::Layers;

use super::{Inputs, Prepare};

/// A collider's shape this tick, checked: every value finite, every box valid.
struct Checked<V: Vector> {
    shape: WorldShape<V>,
    /// From where the sweep starts to `shape` (zero when it is not swept).
    displacement: V,
    /// The tight box over the tick's motion.
    swept: BoundingBox<V>,
    /// The motion predicted until the next tick, which the fat box leaves room for.
    predicted: V,
}

/// Why a collider is left out of its tree this tick.
enum Unfit<V: Vector> {
    /// Both shapes removed by one command: each `Remove` observer saw the other still
    /// there and kept the proxy.
    NoShape,
    /// Invalid values (warned once, re-checked every tick until valid).
    Invalid(Problem<V>),
}

impl<V: Vector> Prepare<'_, '_, '_, '_, '_, V> {
    /// The prepare stage for one collider: its world shape, validity, its proxy in its
    /// tree and its body, in the steps below. Done again with unchanged inputs and a zero
    /// displacement, this changes nothing, which is what lets `prepare` skip idle
    /// colliders.
    pub(super) fn process(&mut self, tracked: &mut TrackedCollider<V>, inputs: Inputs<'_, V>) {
        let entity = inputs.entity;
        self.processed += 1;
        forget_foreign_proxy(tracked, entity, self.state);
        let teleported = self.take_teleports(&inputs);
        if teleported && let Some(key) = tracked.proxy {
            // A jump is no motion: the contacts at the old place end, and the narrow phase
            // tests its pairs as new ones, from the destination.
            self.state.end_contacts_of(key, EndReason::Teleported);
        }
        let checked = match self.shape_and_validity(tracked, &inputs, teleported) {
            Ok(checked) => checked,
            Err(unfit) => {
                self.leave_out(tracked, entity, unfit);
                return;
            }
        };
        if tracked.invalid {
            info!("bevy_aabb_tree: entity {entity} is valid again and back in collision detection");
            tracked.invalid = false;
        }
        let body = self.record_shape(tracked, &inputs, &checked);
        self.change_tree(tracked, inputs.is_static);
        let key = match tracked.proxy {
            Some(key) if key.is_static() => {
                self.update_static_proxy(key, &checked, inputs.layers, entity);
                key
            }
            Some(key) => {
                self.update_moving_proxy(key, &checked, inputs.layers);
                key
            }
            None if inputs.is_static && self.carried.is_empty() => {
                // Into the static tree with the tick's other new static colliders, at the
                // end of the stage (`insert_new_static`).
                let new = &mut self.state.tick.colliders.new_static;
                new.push((checked.swept, body));
                return;
            }
            None => match self.create_proxy(tracked, &checked, inputs.is_static, entity) {
                Some(key) => key,
                None => return,
            },
        };
        self.store_layers_and_body(key, body, entity);
    }

    /// Takes off the collider's [`Teleported`] marker and its ancestors' (every one,
    /// always walked, so that each goes this tick even when the collider has its own), and
    /// returns whether any was there: then the sweep does not start at the last tick.
    fn take_teleports(&mut self, inputs: &Inputs<'_, V>) -> bool {
        if inputs.teleported {
            self.commands.entity(inputs.entity).remove::<Teleported>();
        }
        let from_ancestor = inputs.parent.is_some()
            && ancestor_teleported(inputs.parent, self.hierarchy, self.commands);
        inputs.teleported || from_ancestor
    }

    /// The collider's world shape, its sweep and its fat box, checked; or why it is left
    /// out. Clears the recorded start of the sweep, which this tick uses.
    fn shape_and_validity(
        &self,
        tracked: &mut TrackedCollider<V>,
        inputs: &Inputs<'_, V>,
        teleported: bool,
    ) -> Result<Checked<V>, Unfit<V>> {
        let shapes = inputs.shapes;
        let Some(shape) = world_shape(inputs.transform, inputs.parent, self.hierarchy, shapes)
        else {
            return Err(Unfit::NoShape);
        };
        let mut problem = invalid_reason(&shape, shapes, inputs.velocity, inputs.transform);

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
        let predicted = inputs.velocity * self.predict;
        // The fat box too: finite values near the edge of `f32`'s range can overflow it.
        // Past this check, the trees take `swept` and `predicted`.
        if problem.is_none()
            && !(swept.is_valid()
                && predicted.is_finite()
                && self.state.tree.fatten(&swept, predicted).is_valid())
        {
            problem = Some(Problem::Overflow(swept, predicted));
        }
        match problem {
            Some(what) => Err(Unfit::Invalid(what)),
            None => Ok(Checked {
                shape,
                displacement,
                swept,
                predicted,
            }),
        }
    }

    /// Takes an unfit collider out of its tree, ending its contacts; invalid values are
    /// warned about once, when they appear.
    fn leave_out(&mut self, tracked: &mut TrackedCollider<V>, entity: Entity, unfit: Unfit<V>) {
        let reason = match unfit {
            Unfit::NoShape => EndReason::Removed,
            Unfit::Invalid(what) => {
                if !tracked.invalid {
                    warn!(
                        "bevy_aabb_tree: entity {entity} left out of collision detection until its values are valid: {what}"
                    );
                    tracked.invalid = true;
                }
                EndReason::Invalid
            }
        };
        if let Some(key) = tracked.proxy.take() {
            self.state.remove_proxy(key, reason);
        }
    }

    /// Counts the collider as processed now, keeps its shape where the next sweep starts,
    /// and returns its body.
    fn record_shape(
        &mut self,
        tracked: &mut TrackedCollider<V>,
        inputs: &Inputs<'_, V>,
        checked: &Checked<V>,
    ) -> Body<V> {
        let (shape, displacement) = (checked.shape, checked.displacement);
        self.processed_at += 1;
        tracked.previous = shape.center() - displacement;
        tracked.shape = shape;
        tracked.moved = displacement != V::ZERO;
        Body {
            entity: inputs.entity,
            shape,
            displacement,
            layers: inputs.layers,
            sensor: inputs.sensor,
            processed_at: self.processed_at,
        }
    }

    /// The `Static` marker added or removed: the collider leaves its old tree, its pairs
    /// kept aside (`carried`) for its new key.
    fn change_tree(&mut self, tracked: &mut TrackedCollider<V>, is_static: bool) {
        self.carried.clear();
        let state = &mut *self.state;
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
    }

    /// A static collider changed: the static tree moves it when it left its fat box
    /// (`DynamicTree::move_proxy`). It counts as moved then, or when its layers changed
    /// (its pairs must be looked for again).
    fn update_static_proxy(
        &mut self,
        key: Key,
        checked: &Checked<V>,
        layers: CollisionLayers,
        entity: Entity,
    ) {
        let state = &mut *self.state;
        let id = key.proxy();
        let layers_changed = state.body(key).is_some_and(|b| b.layers != layers);
        match state
            .static_tree
            .move_proxy(id, checked.swept, checked.predicted)
        {
            Ok(true) => state.tick.colliders.moved.push(key),
            Ok(false) if layers_changed => {
                let _ = state.static_tree.touch_proxy(id);
                state.tick.colliders.moved.push(key);
            }
            Ok(false) => {}
            Err(e) => error!("bevy_aabb_tree: static collider {entity} kept its old fat box: {e}"),
        }
    }

    /// A moving collider: its move goes to the tree with the others' in one batch at the
    /// end of the stage (`apply_moves`), which decides by the tree's rule which fat boxes
    /// change.
    fn update_moving_proxy(&mut self, key: Key, checked: &Checked<V>, layers: CollisionLayers) {
        let state = &mut *self.state;
        let layers_changed = state.body(key).is_some_and(|b| b.layers != layers);
        state.tick.colliders.to_move.push(TreeMove {
            id: key.proxy(),
            swept: checked.swept,
            predicted: checked.predicted,
            layers_changed,
        });
    }

    /// A collider without a proxy gets one at once: a moving one (new or back in), or a
    /// static one changing trees with pairs to carry. When the tree refuses it, it is left
    /// out with a warning, and the pairs it carried end.
    fn create_proxy(
        &mut self,
        tracked: &mut TrackedCollider<V>,
        checked: &Checked<V>,
        is_static: bool,
        entity: Entity,
    ) -> Option<Key> {
        let state = &mut *self.state;
        let tree = if is_static {
            &mut state.static_tree
        } else {
            &mut state.tree
        };
        let created = tree
            .create_proxy_with(checked.swept, checked.predicted, entity)
            .map(if is_static { Key::fixed } else { Key::moving });
        match created {
            Ok(key) => {
                tracked.proxy = Some(key);
                state.tick.colliders.moved.push(key);
                Some(key)
            }
            Err(e) => {
                warn!("bevy_aabb_tree: entity {entity} left out of collision detection: {e}");
                tracked.invalid = true;
                self.end_carried(entity, EndReason::Removed);
                None
            }
        }
    }

    /// The tree's copy of the layers (which its searches and queries prune by), the body,
    /// the collider listed as processed for the narrow phase, and the pairs it carried
    /// from its old tree given to its new key.
    #[inline(always)]
    pub(super) fn store_layers_and_body(&mut self, key: Key, body: Body<V>, entity: Entity) {
        let state = &mut *self.state;
        let layers: Layers = body.layers.into();
        let tree = state.tree_of_mut(key);
        if tree.layers(key.proxy()) != layers {
            let _ = tree.set_layers(key.proxy(), layers);
        }
        state.set_body(key, body);
        state.tick.colliders.processed.push(key);
        if let Some(old) = self.carried_from.take() {
            self.carry_pairs(entity, old, key);
        }
    }
}
