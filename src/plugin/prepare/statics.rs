//! The static colliders' part of the prepare stage: bulk insertion into the static tree,
//! and the pairs of a collider that changes trees.

use bevy::prelude::*;

use crate::Vector;
use crate::plugin::EndReason;
use crate::plugin::pairs::Pair;
use crate::plugin::state::{EndRecord, Key};

use super::Prepare;

/// New static colliders in one tick from which they go into the static tree with one
/// build (when they are also at least a quarter of the tree) rather than one insertion
/// each.
const BULK_STATIC_FROM: usize = 32;

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

    /// Puts the tick's new static colliders, given their ids as they were read, in the
    /// static tree: with one build when they are many (a level spawned in one frame), one
    /// insertion each otherwise.
    pub(super) fn insert_new_static(&mut self) {
        if self.new_static.is_empty() {
            return;
        }
        let tree = &mut self.state.static_tree;
        let count = self.new_static.len();
        // The tree counts them already.
        let bulk = count >= BULK_STATIC_FROM && count * 4 >= tree.len();
        tree.link_unlinked(&self.new_static, bulk);
        self.new_static.clear();
    }
}
