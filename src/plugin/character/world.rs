//! The collision world as one character sees it: the trees, with the character's layers,
//! pair filter and one-way platforms, and the characters moved before it.

use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;

use crate::Vector;
use crate::geometry::{CastHit, CharacterWorld, Shape, cast_shape, one_way_blocks, one_way_push};
use crate::plugin::state::Body;
use crate::plugin::{AabbTree, CollisionLayers, QueryFilter};
use crate::tree::LayerTest;

use super::*;

/// A unit vector along `v`, or zero when `v` is zero or not finite.
fn unit<V: Vector>(v: V) -> V {
    let len = v.dot(v).sqrt();
    if len > 0.0 && len.is_finite() {
        v / len
    } else {
        V::ZERO
    }
}

/// The push that moves `shape` along the unit vector `dir` until it only touches `other`
/// (zero when they are apart): from far enough along `dir` to be clear of `other`, a cast
/// back says where it meets it.
fn push_along<V: Vector>(shape: &Shape<V>, other: &Shape<V>, dir: V) -> V {
    if !shape.overlaps(other) {
        return V::ZERO;
    }
    let diagonal = |s: &Shape<V>| {
        let b = s.bounding_box();
        let d = b.max - b.min;
        d.dot(d).sqrt()
    };
    let apart = other.center() - shape.center();
    let far = diagonal(shape) + diagonal(other) + apart.dot(apart).sqrt();
    match cast_shape(&shape.translated(dir * far), -dir * far, other) {
        Some(hit) if far.is_finite() => dir * (far * (1.0 - hit.t)),
        _ => V::ZERO,
    }
}

/// The collision world as one character sees it.
pub(super) struct TreeWorld<'a, 'w, 's, V: Vector, A> {
    pub(super) tree: &'a AabbTree<V>,
    pub(super) me: Entity,
    pub(super) layers: CollisionLayers,
    /// One-way platforms it drops through.
    pub(super) passing: &'a [Entity],
    /// The ground, while the character rides its motion.
    pub(super) ignore: Option<Entity>,
    /// The pair filter's answer for the character and another entity.
    pub(super) allow: A,
    pub(super) is_character: &'a Query<'w, 's, (), With<CharacterController<V>>>,
    /// The characters moved before this one in this tick, by their displacement.
    pub(super) moved: &'a EntityHashMap<V>,
    /// The largest coordinate of those displacements.
    pub(super) reach: f32,
    /// The ground it stood on at its last move: it pushes the character only up.
    pub(super) ground: Option<Entity>,
    /// Up (any length; zero for a top-down character).
    pub(super) up: V,
}

impl<V: Vector, A: FnMut(Entity) -> bool> TreeWorld<'_, '_, '_, V, A> {
    /// Whether the character meets `entity` at all (layers, itself, the platforms it
    /// drops through, the ground it rides, the pair filter).
    fn meets(&mut self, entity: Entity, layers: &CollisionLayers) -> bool {
        entity != self.me
            && self.layers.interacts_with(layers)
            && !self.passing.contains(&entity)
            && self.ignore != Some(entity)
            && (self.allow)(entity)
    }

    /// Where `body` is now: a character moved this tick where its move left it.
    fn current(&self, body: &Body<V>) -> Shape<V> {
        if self.moved.is_empty() {
            return body.shape;
        }
        self.moved
            .get(&body.entity)
            .map_or(body.shape, |d| body.shape.translated(*d))
    }

    /// The colliders that block the character within `distance` of `shape` (one-way
    /// colliders only with `shape` on top of them), characters where they are now.
    pub(super) fn near(&mut self, shape: &Shape<V>, distance: f32) -> SmallVec<[Entity; 4]> {
        let mut found = SmallVec::new();
        let test = LayerTest::Memberships(self.layers.filters);
        let tree = self.tree;
        let area = shape.bounding_box().grown(distance + self.reach);
        let limit = distance * (1.0 + 1e-4);
        for (trees, key_of) in tree.trees() {
            trees.query_box_in(&area, test, |id, _| {
                let Some(body) = tree.body(key_of(id)) else {
                    return true;
                };
                if body.sensor || !self.meets(body.entity, &body.layers) {
                    return true;
                }
                let blocks = tree
                    .one_ways
                    .get(&body.entity)
                    .is_none_or(|&normal| one_way_blocks(shape, -normal, &body.shape, normal));
                if blocks && self.current(body).distance(shape) <= limit {
                    found.push(body.entity);
                }
                true
            });
        }
        found
    }

    /// Calls `each` with the push of `shape` out of every collider that blocks the
    /// character and overlaps it (characters where they are now).
    ///
    /// The push is the least that separates, except that a collider never pushes the
    /// character through itself: the ground it stood on pushes it up only (a platform
    /// that rose into its feet), and a collider that moved into it this tick (it did
    /// not overlap it where it was) pushes it along that motion, however deep it came.
    fn each_push(&mut self, shape: &Shape<V>, mut each: impl FnMut(V)) {
        let test = LayerTest::Memberships(self.layers.filters);
        let tree = self.tree;
        let area = shape.bounding_box().grown(self.reach);
        let up = unit(self.up);
        for (trees, key_of) in tree.trees() {
            trees.query_box_in(&area, test, |id, _| {
                let Some(body) = tree.body(key_of(id)) else {
                    return true;
                };
                if body.sensor || !self.meets(body.entity, &body.layers) {
                    return true;
                }
                let other = self.current(body);
                let push = if let Some(&normal) = tree.one_ways.get(&body.entity) {
                    one_way_push(shape, &other, normal)
                } else if let Some(contact) = other.contact(shape) {
                    let least = contact.normal * contact.depth;
                    let motion = body.displacement;
                    if least == V::ZERO {
                        least
                    } else if Some(body.entity) == self.ground && up != V::ZERO {
                        push_along(shape, &other, up)
                    } else if motion != V::ZERO
                        && least.dot(motion) < 0.0
                        && !self.moved.contains_key(&body.entity)
                        && !other.translated(-motion).overlaps(shape)
                    {
                        push_along(shape, &other, unit(motion))
                    } else {
                        least
                    }
                } else {
                    V::ZERO
                };
                if push != V::ZERO {
                    each(push);
                }
                true
            });
        }
    }
}

impl<V: Vector, A: FnMut(Entity) -> bool> CharacterWorld<V> for TreeWorld<'_, '_, '_, V, A> {
    type Id = Entity;

    fn cast(&mut self, shape: &Shape<V>, motion: V) -> Option<CastHit<V, Entity>> {
        if !shape.is_valid() || !motion.is_finite() {
            return None;
        }
        let filter = QueryFilter::default().with_mask(self.layers.filters);
        let tree = self.tree;
        // Every collider the swept shape reaches, characters where they are now.
        let area = shape.bounding_box().swept(motion).grown(self.reach);
        let mut best: Option<CastHit<V, Entity>> = None;
        for (trees, key_of) in tree.trees() {
            trees.query_box_in(&area, filter.layer_test(), |id, _| {
                let Some(body) = tree.body(key_of(id)) else {
                    return true;
                };
                // Sensors never block; one-way colliders only from their side.
                if body.sensor
                    || !filter.accepts(body)
                    || !self.meets(body.entity, &body.layers)
                    || tree.one_way_passes(shape, motion, body)
                {
                    return true;
                }
                if let Some(hit) = cast_shape(shape, motion, &self.current(body))
                    && best.as_ref().is_none_or(|b| hit.precedes(b, motion))
                {
                    best = Some(hit.with_id(body.entity));
                }
                true
            });
        }
        best
    }

    fn push_out(&mut self, shape: &Shape<V>) -> V {
        // Per axis, the largest push each way (two floor tiles push it up once).
        let (mut most, mut least) = (V::ZERO, V::ZERO);
        self.each_push(shape, |push| {
            most = most.max(push);
            least = least.min(push);
        });
        most + least
    }

    fn overlaps(&mut self, shape: &Shape<V>, tolerance: f32) -> bool {
        let mut deep = false;
        self.each_push(shape, |push| deep |= push.dot(push) > tolerance * tolerance);
        deep
    }

    fn can_stand_on(&mut self, id: Entity) -> bool {
        !self.is_character.contains(id)
    }
}
