//! What a rollback needs of the plugin, whatever the rollback library: the collision
//! state as a value to save and restore ([`AabbTree`] is `Clone`), the entities it names
//! mapped when the library gives restored entities new ids ([`MapEntities`]), and
//! observers kept quiet while the library writes the world back ([`RestoringWorld`]).
//!
//! The feature `ggrs` builds on this for `bevy_ggrs` (see `AabbTreeRollbackPlugin`).

use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::prelude::*;

use crate::Vector;
use crate::plugin::{AabbTree, CollidingEntities};

/// Set while a rollback library writes the world back to an earlier frame: the plugin's
/// observers then ignore what they see (components inserted, removed or restored,
/// entities despawned or spawned again) and write no message, because the collision
/// state is restored as a whole with the rest. Default `false`; the plugin inserts it.
///
/// `AabbTreeRollbackPlugin` (feature `ggrs`) sets it around `bevy_ggrs`'s load. With
/// another rollback library, set it before the library restores the world and clear it
/// once [`AabbTree`], [`TrackedCollider`](crate::plugin::TrackedCollider) and the other
/// components are back: the next tick then goes on from the restored state as it did the
/// first time.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Resource, Debug, Default)]
pub struct RestoringWorld(pub bool);

/// The run condition of the plugin's observers: no rollback is restoring the world.
pub(crate) fn not_restoring(restoring: Option<Res<RestoringWorld>>) -> bool {
    !restoring.is_some_and(|r| r.0)
}

/// The entities the collision state names, mapped (a rollback library that spawned a
/// restored entity again under a new id maps the state's references to it): the
/// colliders' records, both trees' payloads, the copies beside pairs, the one-way
/// platforms, and what the tick buffers hold between ticks.
impl<V: Vector> MapEntities for AabbTree<V> {
    fn map_entities<E: EntityMapper>(&mut self, mapper: &mut E) {
        for body in self.bodies.iter_mut().flatten() {
            body.entity = mapper.get_mapped(body.entity);
        }
        for tree in [&mut self.tree, &mut self.static_tree] {
            let ids: Vec<_> = tree.proxies().map(|(id, _, _)| id).collect();
            for id in ids {
                if let Some(entity) = tree.data_mut(id) {
                    *entity = mapper.get_mapped(*entity);
                }
            }
        }
        for copy in self.pairs.copies_mut() {
            copy.entity = mapper.get_mapped(copy.entity);
        }
        self.one_ways = self
            .one_ways
            .drain()
            .map(|(entity, normal)| (mapper.get_mapped(entity), normal))
            .collect();
        let tick = &mut self.tick;
        for (entity, _) in &mut tick.colliders.revisit {
            *entity = mapper.get_mapped(*entity);
        }
        for (_, body) in &mut tick.colliders.new_static {
            body.entity = mapper.get_mapped(body.entity);
        }
        for start in &mut tick.starts.started {
            start.a = mapper.get_mapped(start.a);
            start.b = mapper.get_mapped(start.b);
        }
        for hit in &mut tick.starts.pass_throughs {
            hit.entity = mapper.get_mapped(hit.entity);
            hit.other = mapper.get_mapped(hit.other);
        }
        for end in tick.ends.broken.iter_mut().chain(&mut tick.ends.tested) {
            end.a = mapper.get_mapped(end.a);
            end.b = mapper.get_mapped(end.b);
        }
    }
}

/// The entities touched, mapped.
impl MapEntities for CollidingEntities {
    fn map_entities<E: EntityMapper>(&mut self, mapper: &mut E) {
        self.0 = self.0.drain().map(|e| mapper.get_mapped(e)).collect();
    }
}
