//! The static colliders' part of the prepare stage: bulk insertion into the static tree,
//! and the pairs of a collider that changes trees.

use bevy::prelude::*;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::plugin::EndReason;
use crate::plugin::pairs::Pair;
use crate::plugin::state::{Body, EndRecord, Key};

use super::{ColliderData, Prepare};

/// New static colliders in one tick from which they go into the static tree with one
/// build (when they are also at least a quarter of the tree) rather than one insertion
/// each.
const BULK_STATIC_FROM: usize = 32;

/// A new static collider waiting for the bulk insertion at the end of `prepare`.
pub(super) struct NewStatic<V: Vector> {
    pub(super) entity: Entity,
    pub(super) tight: BoundingBox<V>,
    pub(super) body: Body<V>,
}

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
                    state.tick.ended.push(EndRecord {
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
                    state.tick.ended.push(EndRecord {
                        a: entity,
                        b,
                        reason,
                    });
                }
            }
        }
    }

    /// Puts the tick's new static colliders in the static tree: with one build when they
    /// are many (a level spawned in one frame), one insertion each otherwise.
    pub(super) fn insert_new_static(&mut self, colliders: &mut Query<ColliderData<V>>) {
        if self.new_static.is_empty() {
            return;
        }
        let state = &mut *self.state;
        let count = self.new_static.len();
        let bulk = count >= BULK_STATIC_FROM && count * 4 >= state.static_tree.len() + count;
        let built = if bulk {
            state
                .static_tree
                .build(self.new_static.iter().map(|n| (n.tight, n.entity)))
                .ok()
        } else {
            None
        };
        for (i, new) in self.new_static.drain(..).enumerate() {
            let id = match &built {
                Some(ids) => Ok(ids[i]),
                None => state.static_tree.create_proxy(new.tight, new.entity),
            };
            let Ok((_, mut tracked, ..)) = colliders.get_mut(new.entity) else {
                // Not reachable: the entity was iterated this tick. Not left in the tree.
                if let Ok(id) = id {
                    let _ = state.static_tree.destroy_proxy(id);
                }
                continue;
            };
            match id {
                Ok(id) => {
                    let key = Key::fixed(id);
                    tracked.proxy = Some(key);
                    // Numbered again, in the order of the processed list.
                    self.processed_at += 1;
                    let body = Body {
                        processed_at: self.processed_at,
                        ..new.body
                    };
                    state.set_body(key, body);
                    state.tick.moved.push(key);
                    state.tick.processed.push(key);
                }
                Err(e) => {
                    warn!(
                        "bevy_aabb_tree: entity {} left out of collision detection: {e}",
                        new.entity
                    );
                    tracked.invalid = true;
                    state.tick.revisit.push((new.entity, None));
                }
            }
        }
    }
}
