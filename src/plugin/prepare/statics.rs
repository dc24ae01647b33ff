//! The static colliders' part of the prepare stage: bulk insertion into the static tree,
//! and the pairs of a collider that changes trees.

use bevy::prelude::*;

use crate::Vector;
use crate::plugin::EndReason;
use crate::plugin::key::Key;
use crate::plugin::pairs::Pair;
use crate::plugin::state::EndRecord;

use super::Prepare;
use super::scan::AllColliders;

impl<V: Vector> Prepare<'_, '_, '_, '_, '_, V> {
    /// Gives the pairs of a collider that changed trees to its new key; a pair of two
    /// static colliders ends instead ([`EndReason::BothStatic`] when it touched).
    pub(super) fn carry_pairs(&mut self, entity: Entity, old: Key, key: Key) {
        let state = &mut *self.state;
        let first = state.pairs.len();
        for pair in self.carried.drain(..) {
            let other = pair.other(old);
            if other.is_static() && key.is_static() {
                if pair.touching
                    && let Some(b) = state.entity_of(other)
                {
                    state.tick.ends.push(EndRecord {
                        a: entity,
                        b,
                        reason: EndReason::BothStatic,
                    });
                }
                continue;
            }
            let (a, b) = if key < other {
                (key, other)
            } else {
                (other, key)
            };
            state.pairs.push_unlinked(Pair {
                a,
                b,
                touching: pair.touching,
                vetoed: pair.vetoed,
            });
        }
        state.pairs.link_from(first);
    }

    /// Ends the touching pairs of a collider that changed trees but could not be put in
    /// its new one.
    pub(super) fn end_carried(&mut self, entity: Entity, reason: EndReason) {
        self.carried_from = None;
        let state = &mut *self.state;
        for pair in self.carried.drain(..) {
            for k in [pair.a, pair.b] {
                if pair.touching
                    && let Some(b) = state.entity_of(k)
                    && b != entity
                {
                    state.tick.ends.push(EndRecord {
                        a: entity,
                        b,
                        reason,
                    });
                }
            }
        }
    }

    /// Puts the tick's new static colliders in the static tree together
    /// (`DynamicTree::create_proxies`: one build when they are many, a level spawned in one
    /// frame), then gives each its key, body and place in the lists of the later stages.
    pub(super) fn insert_new_static(&mut self, all: &mut AllColliders<'_, '_, V>) {
        let mut new = core::mem::take(&mut self.state.tick.colliders.new_static);
        if new.is_empty() {
            self.state.tick.colliders.new_static = new;
            return;
        }
        let items = new.iter().map(|(swept, body)| (*swept, body.entity));
        match self.state.static_tree.create_proxies(items) {
            Ok(ids) => {
                for (id, &(_, body)) in ids.into_iter().zip(&new) {
                    let key = Key::fixed(id);
                    if let Ok(mut item) = all.get_mut(body.entity) {
                        item.1.proxy = Some(key);
                    }
                    self.state.tick.colliders.moved.push(key);
                    self.store_layers_and_body(key, body, body.entity);
                }
            }
            Err(e) => {
                for &(_, body) in &new {
                    warn!(
                        "bevy_aabb_tree: entity {} left out of collision detection: {e}",
                        body.entity
                    );
                    if let Ok(mut item) = all.get_mut(body.entity) {
                        item.1.invalid = true;
                    }
                }
            }
        }
        new.clear();
        self.state.tick.colliders.new_static = new;
    }
}
