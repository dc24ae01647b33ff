//! Gameplay helpers over the collision world: how deep colliders overlap and the way out
//! ([`Contacts`]), shape casts that block, and move-and-slide
//! ([`AabbTree::move_and_slide`]).

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

use crate::Vector;
use crate::geometry::{
    CastHit, Contact, Shape, SlideConfig, SlideOutcome, cast_shape, move_and_slide, one_way_blocks,
    one_way_push,
};
use crate::plugin::state::Body;
use crate::plugin::{AabbTree, OneWay, QueryFilter, Sensor, TrackedCollider};

/// What [`Contacts`] reads of a collider.
type ContactData<V> = (
    &'static TrackedCollider<V>,
    Has<Sensor>,
    Option<&'static OneWay<V>>,
);

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
    colliders: Query<'w, 's, ContactData<V>>,
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
            .filter(|(t, ..)| t.proxy().is_some())
            .map(|(t, ..)| t.world_shape())
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
    /// [`Sensor`] colliders among `others` push nothing; a [`OneWay`] collider pushes
    /// only an entity on top of it, along its normal
    /// ([`one_way_push`](crate::geometry::one_way_push)).
    pub fn push_out(&self, entity: Entity, others: impl IntoIterator<Item = Entity>) -> V {
        let Some(shape) = self.shape(entity) else {
            return V::ZERO;
        };
        let mut pushes = PushOut::default();
        for other in others {
            let Ok((tracked, sensor, one_way)) = self.colliders.get(other) else {
                continue;
            };
            if sensor || tracked.proxy().is_none() {
                continue;
            }
            pushes.add_from(&shape, &tracked.world_shape(), one_way.map(OneWay::normal));
        }
        pushes.total()
    }
}

/// Pushes out of several colliders, combined: per axis, the largest push in each
/// direction (two floor tiles under a shape push it up once, not twice).
#[derive(Default)]
pub(crate) struct PushOut<V: Vector> {
    up: V,
    down: V,
}

impl<V: Vector> PushOut<V> {
    /// Adds the push of `shape` out of `other`: along `one_way`'s normal only, when
    /// `other` is a one-way collider ([`one_way_push`]); nothing when they are apart.
    pub(crate) fn add_from(&mut self, shape: &Shape<V>, other: &Shape<V>, one_way: Option<V>) {
        let push = match one_way {
            Some(normal) => one_way_push(shape, other, normal),
            None => other.contact(shape).map_or(V::ZERO, |c| c.normal * c.depth),
        };
        self.up = self.up.max(push);
        self.down = self.down.min(push);
    }

    pub(crate) fn total(&self) -> V {
        self.up + self.down
    }
}

impl<V: Vector> AabbTree<V> {
    /// The first collider that `shape`, moved by `motion`, runs into, with the fraction
    /// of the motion done at the hit (a cast that blocks: only what the motion drives
    /// deeper counts, so a shape resting on a floor can slide along it). Static and
    /// moving colliders alike, filtered by `filter`; [`Sensor`] colliders never block, and
    /// [`OneWay`] colliders block only a motion against their normal from on top of them.
    /// Shapes are those of the last tick.
    pub fn cast_blocking(
        &self,
        shape: &Shape<V>,
        motion: V,
        filter: &QueryFilter,
    ) -> Option<CastHit<V, Entity>> {
        self.cast_blocking_by(shape, motion, filter, |_| true)
    }

    /// [`Self::cast_blocking`] that also skips the entities `allow` refuses: the way a
    /// game's own casts honour its [`PairFilter`](crate::plugin::PairFilter)
    /// (`|other| filter.allows(me, other)`).
    pub fn cast_blocking_where(
        &self,
        shape: &Shape<V>,
        motion: V,
        filter: &QueryFilter,
        mut allow: impl FnMut(Entity) -> bool,
    ) -> Option<CastHit<V, Entity>> {
        self.cast_blocking_by(shape, motion, filter, |body| allow(body.entity))
    }

    /// [`Self::cast_blocking`] over the bodies `allow` accepts.
    pub(crate) fn cast_blocking_by(
        &self,
        shape: &Shape<V>,
        motion: V,
        filter: &QueryFilter,
        mut allow: impl FnMut(&Body<V>) -> bool,
    ) -> Option<CastHit<V, Entity>> {
        if !shape.is_valid() || !motion.is_finite() {
            return None;
        }
        // Every collider the swept shape reaches, those it touches at the start included.
        let reach = shape.bounding_box().swept(motion);
        let mut best: Option<CastHit<V, Entity>> = None;
        for (tree, key_of) in self.trees() {
            tree.query_box_in(&reach, filter.layer_test(), |id, _| {
                // Sensors never block; one-way colliders only from their side.
                if let Some(body) = self.body(key_of(id)).filter(|b| {
                    !b.sensor
                        && filter.accepts(b)
                        && !self.one_way_passes(shape, motion, b)
                        && allow(b)
                }) && let Some(hit) = cast_shape(shape, motion, &body.shape)
                    && best.as_ref().is_none_or(|b| hit.precedes(b, motion))
                {
                    best = Some(hit.with_id(body.entity));
                }
                true
            });
        }
        best
    }

    /// Whether `body` is a [`OneWay`] collider that lets `shape` moving by `motion` pass.
    #[inline]
    pub(crate) fn one_way_passes(&self, shape: &Shape<V>, motion: V, body: &Body<V>) -> bool {
        !self.one_ways.is_empty()
            && self
                .one_ways
                .get(&body.entity)
                .is_some_and(|&normal| !one_way_blocks(shape, motion, &body.shape, normal))
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

    /// [`Self::move_and_slide`] that also passes through the entities `allow` refuses
    /// (see [`Self::cast_blocking_where`]).
    pub fn move_and_slide_where(
        &self,
        shape: &Shape<V>,
        motion: V,
        config: &SlideConfig<V>,
        filter: &QueryFilter,
        mut allow: impl FnMut(Entity) -> bool,
    ) -> SlideOutcome<V, Entity> {
        move_and_slide(shape, motion, config, |at, rest| {
            self.cast_blocking_where(at, rest, filter, &mut allow)
        })
    }
}
