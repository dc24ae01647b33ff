//! Gameplay helpers over the collision world: how deep colliders overlap and the way out
//! ([`Contacts`]), shape casts that block, and move-and-slide
//! ([`AabbTree::move_and_slide`]).

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

use crate::Vector;
use crate::geometry::{
    CastHit, Contact, Shape, SlideConfig, SlideOutcome, cast_shape, move_and_slide,
};
use crate::plugin::{AabbTree, QueryFilter, Sensor, TrackedCollider};

/// Contacts between colliders, from their world shapes at the last tick: depth, normal
/// and point, and the displacement that pushes a collider out of others.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::d2::*;
/// # use bevy_aabb_tree::plugin::Contacts;
/// #[derive(Component)]
/// struct Player;
///
/// // Pushes the player out of the walls it overlaps.
/// fn push_out(
///     contacts: Contacts<Vec2>,
///     mut player: Single<(Entity, &mut Transform, &CollidingEntities), With<Player>>,
/// ) {
///     let (entity, ref mut transform, touching) = *player;
///     let out = contacts.push_out(entity, touching.iter());
///     transform.translation += out.extend(0.0);
/// }
/// # bevy::ecs::system::assert_is_system(push_out);
/// ```
#[derive(SystemParam)]
pub struct Contacts<'w, 's, V: Vector> {
    colliders: Query<'w, 's, (&'static TrackedCollider<V>, Has<Sensor>)>,
}

impl<V: Vector> Contacts<'_, '_, V> {
    /// The contact of `a` and `b` when their shapes overlap (touching counts, with depth
    /// 0): `normal` points from `a` towards `b`, moving `b` by `normal × depth` (or `a` by
    /// its opposite) separates them, and `point` lies in both. `None` when they are apart
    /// or either is not a collider in the tree.
    pub fn contact(&self, a: Entity, b: Entity) -> Option<Contact<V>> {
        self.shape(a)?.contact(&self.shape(b)?)
    }

    /// The world shape of a collider in the tree.
    fn shape(&self, entity: Entity) -> Option<Shape<V>> {
        self.colliders
            .get(entity)
            .ok()
            .filter(|(t, _)| t.proxy().is_some())
            .map(|(t, _)| t.world_shape())
    }

    /// The distance between the shapes of `a` and `b` (0 when they overlap or touch), or
    /// `None` when either is not a collider in the tree.
    pub fn distance(&self, a: Entity, b: Entity) -> Option<f32> {
        Some(self.shape(a)?.distance(&self.shape(b)?))
    }

    /// The displacement that moves `entity` out of every one of `others` it overlaps.
    ///
    /// Each contact asks for a push along its normal; per axis, the largest push in
    /// each direction is kept (rather than their sum), so two floor tiles under a
    /// player push it up once, not twice. Zero when it overlaps none of them.
    /// [`Sensor`] colliders among `others` push nothing.
    pub fn push_out(&self, entity: Entity, others: impl IntoIterator<Item = Entity>) -> V {
        let (mut up, mut down) = (V::ZERO, V::ZERO);
        for other in others {
            if self.colliders.get(other).is_ok_and(|(_, sensor)| sensor) {
                continue;
            }
            let Some(c) = self.contact(entity, other) else {
                continue;
            };
            let push = c.normal * -c.depth;
            up = up.max(push);
            down = down.min(push);
        }
        up + down
    }
}

impl<V: Vector> AabbTree<V> {
    /// The first collider that `shape`, moved by `motion`, runs into, with the fraction
    /// of the motion done at the hit (a cast that blocks: only what the motion drives
    /// deeper counts, so a shape resting on a floor can slide along it). Static and
    /// moving colliders alike, filtered by `filter`; [`Sensor`] colliders never block.
    /// Shapes are those of the last tick.
    pub fn cast_blocking(
        &self,
        shape: &Shape<V>,
        motion: V,
        filter: &QueryFilter,
    ) -> Option<CastHit<V, Entity>> {
        if !shape.is_valid() || !motion.is_finite() {
            return None;
        }
        // Every collider the swept shape reaches, those it touches at the start included.
        let reach = shape.bounding_box().swept(motion);
        let mut best: Option<CastHit<V, Entity>> = None;
        for (tree, key_of) in self.trees() {
            tree.query_box_in(&reach, filter.layer_test(), |id, _| {
                // Sensors never block.
                if let Some(body) = self
                    .body(key_of(id))
                    .filter(|b| !b.sensor && filter.accepts(b))
                    && let Some(hit) = cast_shape(shape, motion, &body.shape)
                    && best.as_ref().is_none_or(|b| hit.precedes(b, motion))
                {
                    best = Some(hit.with_id(body.entity));
                }
                true
            });
        }
        best
    }

    /// Moves `shape` by `motion` against the colliders, sliding along what it hits: up to
    /// `config.max_iterations` blocking casts ([`Self::cast_blocking`]), each stopping a
    /// skin short and removing the part of the motion into the surface hit. Returns the
    /// displacement done (add it to the collider's translation), the hits (with the
    /// entities hit), and whether it stands on ground (a hit within `config.max_slope`
    /// of `config.up`).
    ///
    /// It does not snag on the seams between the tiles of a flat floor or wall, stops in
    /// corners without jitter, and never ends inside a collider it started outside of.
    /// Shapes are those of the last tick; exclude the moving collider itself with the
    /// filter. For a game in pixels, scale the skin by the length unit
    /// ([`CollisionConfig::unit`](crate::plugin::CollisionConfig::unit)).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_aabb_tree::d2::*;
    /// # use bevy_aabb_tree::geometry::SlideConfig;
    /// fn walk(
    ///     tree: Res<AabbTree>,
    ///     time: Res<Time>,
    ///     mut player: Single<(Entity, &mut Transform, &TrackedCollider, &Velocity)>,
    /// ) {
    ///     let (entity, ref mut transform, tracked, velocity) = *player;
    ///     let filter = QueryFilter::default().excluding([entity]);
    ///     let slide = tree.move_and_slide(
    ///         &tracked.world_shape(),
    ///         velocity.0 * time.delta_secs(),
    ///         &SlideConfig::new(Vec2::Y),
    ///         &filter,
    ///     );
    ///     transform.translation += slide.displacement.extend(0.0);
    /// }
    /// # bevy::ecs::system::assert_is_system(walk);
    /// ```
    pub fn move_and_slide(
        &self,
        shape: &Shape<V>,
        motion: V,
        config: &SlideConfig<V>,
        filter: &QueryFilter,
    ) -> SlideOutcome<V, Entity> {
        move_and_slide(shape, motion, config, |at, rest| {
            self.cast_blocking(at, rest, filter)
        })
    }
}
