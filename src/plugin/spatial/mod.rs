//! Spatial queries over the collision tree.

mod capsule;
mod cast;
mod nearest;
mod rounded_box;

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use smallvec::SmallVec;

use crate::Vector;
use crate::geometry::{Ball, BoundingBox, Ray, Shape};
use crate::plugin::key::Key;
use crate::plugin::state::{Body, TreeAndKeys};
use crate::plugin::{AabbTree, WorldShape};
use crate::tree::{DynamicTree, LayerTest, ProxyId};

pub use nearest::PointProjection;

/// Which entities a spatial query may return.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryFilter {
    /// An entity is a candidate when its `CollisionLayers::memberships` share a bit with
    /// this mask. Default: every layer.
    pub mask: u32,
    /// Entities never returned (for example the caster itself). Default: none.
    pub excluded: SmallVec<[Entity; 4]>,
    /// Whether [`Sensor`](crate::plugin::Sensor) colliders are candidates. Default:
    /// `true` for the spatial queries; the blocking casts and `move_and_slide` never
    /// see sensors, whatever this says.
    pub sensors: bool,
    /// Whether the shape casts (`cast_box`, `cast_sphere`, `cast_capsule`,
    /// `cast_rounded_box` and their `_all` forms) leave
    /// out the colliders the cast shape overlaps (or touches) where it starts, which they
    /// otherwise report at `t = 0`: a cast from inside a trigger zone or a wall then
    /// finds what lies beyond it. Default: `false`. Rays and the blocking casts of
    /// `move_and_slide` ignore it.
    pub ignore_start_overlaps: bool,
}

impl Default for QueryFilter {
    fn default() -> Self {
        Self {
            mask: u32::MAX,
            excluded: SmallVec::new(),
            sensors: true,
            ignore_start_overlaps: false,
        }
    }
}

impl QueryFilter {
    /// Only entities in these layers.
    pub fn with_mask(mut self, mask: u32) -> Self {
        self.mask = mask;
        self
    }

    /// Only entities in these layers, by name (see
    /// [`CollisionLayer`](crate::plugin::CollisionLayer)).
    pub fn with_layers<L: crate::plugin::CollisionLayer>(
        self,
        layers: impl IntoIterator<Item = L>,
    ) -> Self {
        self.with_mask(L::mask_of(layers))
    }

    /// Shape casts leave out what the cast shape overlaps where it starts (see
    /// [`Self::ignore_start_overlaps`]).
    pub fn ignoring_start_overlaps(mut self) -> Self {
        self.ignore_start_overlaps = true;
        self
    }

    /// Never return [`Sensor`](crate::plugin::Sensor) colliders.
    pub fn without_sensors(mut self) -> Self {
        self.sensors = false;
        self
    }

    /// Never return these entities.
    pub fn excluding(mut self, entities: impl IntoIterator<Item = Entity>) -> Self {
        self.excluded.extend(entities);
        self
    }

    /// The tree's layer test for the mask: the trees skip the subtrees of other layers.
    #[inline]
    pub(crate) fn layer_test(&self) -> LayerTest {
        if self.mask == u32::MAX {
            LayerTest::Any
        } else {
            LayerTest::Memberships(self.mask)
        }
    }

    #[inline]
    pub(crate) fn accepts<V: Vector>(&self, body: &Body<V>) -> bool {
        body.layers.memberships & self.mask != 0
            && (self.sensors || !body.sensor)
            && !self.excluded.contains(&body.entity)
    }
}

/// A ray or cast hit on an entity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeHit<V: Vector> {
    /// The entity hit.
    pub entity: Entity,
    /// The parameter of the hit along the query's direction: the ray or the cast shape
    /// is at `origin + t * direction` (a distance for a unit direction). 0 when the query
    /// starts touching or inside the entity's shape.
    pub t: f32,
    /// Where the ray is at the hit; for a cast, where the cast shape's center is at the
    /// hit (`center + t * direction`).
    pub point: V,
    /// Outward unit normal of the entity's surface where it is hit; zero when the query
    /// starts touching or inside the entity's shape (no first contact to speak of).
    pub normal: V,
    /// Where the two touch: a point of both the entity's shape and the cast shape at `t`
    /// (up to rounding). For a ray the same as `point`.
    pub contact: V,
}

/// Spatial queries on the collision tree of one dimension, as a system parameter.
///
/// Shapes are those of the last tick, in both trees (moving and [`Static`](crate::Static)
/// colliders alike). Every query takes a [`QueryFilter`]. Invalid input (a NaN or
/// infinite coordinate, a negative radius or extent, a NaN or negative `max_t`) finds
/// nothing.
///
/// Queries with several results come in two forms: one that returns a `Vec`, and one
/// named with the suffix `_with` that calls a function for each result instead and
/// allocates nothing. Return `false` from that function to stop the query early. The
/// `_with` forms give their results in the order the trees are walked (no particular
/// order); the `Vec` forms of ray and cast hits sort them nearest first (by `t`, then by
/// entity), those of overlaps keep the walk's order.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::prelude::*;
/// fn aim(query: SpatialQuery<Vec3>, player: Single<Entity, With<Velocity<Vec3>>>) {
///     let ray = Ray::new(Vec3::ZERO, Vec3::X);
///     let filter = QueryFilter::default().excluding([*player]);
///     if let Some(hit) = query.cast_ray(&ray, 100.0, &filter) {
///         info!("hit {} at distance {}", hit.entity, hit.t);
///     }
///     // Everything within 5 units, without a `Vec`.
///     let mut near = 0;
///     query.sphere_with(Vec3::ZERO, 5.0, &filter, |_entity| {
///         near += 1;
///         true
///     });
/// }
/// ```
#[derive(SystemParam)]
pub struct SpatialQuery<'w, V: Vector> {
    state: Res<'w, AabbTree<V>>,
}

impl<V: Vector> SpatialQuery<'_, V> {
    /// The two trees, each with the way to name its proxies' bodies.
    fn trees(&self) -> [TreeAndKeys<'_, V>; 2] {
        self.state.trees()
    }

    /// The body of a proxy the filter accepts.
    fn accepted(&self, key: Key, filter: &QueryFilter) -> Option<&Body<V>> {
        self.state.body(key).filter(|b| filter.accepts(b))
    }

    /// The closest entity hit by `ray` within `max_t`.
    pub fn cast_ray(&self, ray: &Ray<V>, max_t: f32, filter: &QueryFilter) -> Option<ShapeHit<V>> {
        let mut best: Option<ShapeHit<V>> = None;
        for (tree, key_of) in self.trees() {
            tree.cast_ray_in(
                ray,
                best.map_or(max_t, |b| b.t),
                filter.layer_test(),
                |id, _| {
                    let body = self.accepted(key_of(id), filter)?;
                    let hit = ray_hit(ray, body, best.map_or(max_t, |b| b.t))?;
                    keep_nearer(&mut best, hit);
                    Some(hit.t)
                },
            );
        }
        best
    }

    /// Every entity hit by `ray` within `max_t`, nearest first (by `t`, then by entity).
    pub fn ray_hits(&self, ray: &Ray<V>, max_t: f32, filter: &QueryFilter) -> Vec<ShapeHit<V>> {
        let mut hits = Vec::new();
        self.ray_hits_with(ray, max_t, filter, |hit| {
            hits.push(hit);
            true
        });
        sort_hits(&mut hits);
        hits
    }

    /// Calls `f` with every entity hit by `ray` within `max_t`, in no particular order;
    /// return `false` from `f` to stop. [`Self::ray_hits`] without the `Vec`.
    pub fn ray_hits_with(
        &self,
        ray: &Ray<V>,
        max_t: f32,
        filter: &QueryFilter,
        mut f: impl FnMut(ShapeHit<V>) -> bool,
    ) {
        let mut go = true;
        for (tree, key_of) in self.trees() {
            if !go {
                break;
            }
            tree.ray_hits_in(ray, max_t, filter.layer_test(), |id, _, _| {
                if let Some(body) = self.accepted(key_of(id), filter)
                    && let Some(hit) = ray_hit(ray, body, max_t)
                {
                    go = f(hit);
                }
                go
            });
        }
    }

    /// Every entity whose shape contains `point`.
    pub fn point(&self, point: V, filter: &QueryFilter) -> Vec<Entity> {
        collect(|f| self.point_with(point, filter, f))
    }

    /// Calls `f` with every entity whose shape contains `point`; return `false` from `f`
    /// to stop. [`Self::point`] without the `Vec`.
    pub fn point_with(&self, point: V, filter: &QueryFilter, f: impl FnMut(Entity) -> bool) {
        if !point.is_finite() {
            return;
        }
        let inside = |shape: &WorldShape<V>| match shape {
            WorldShape::Box(b) => b.contains_point(point),
            WorldShape::Ball(b) => b.contains_point(point),
            WorldShape::Rounded(r) => r.contains_point(point),
        };
        let layers = filter.layer_test();
        self.overlapping(
            filter,
            f,
            |tree, hit| tree.query_point_in(point, layers, hit),
            inside,
        );
    }

    /// Every entity whose shape overlaps `aabb`.
    pub fn aabb(&self, aabb: &BoundingBox<V>, filter: &QueryFilter) -> Vec<Entity> {
        collect(|f| self.aabb_with(aabb, filter, f))
    }

    /// Calls `f` with every entity whose shape overlaps `aabb`; return `false` from `f` to
    /// stop. [`Self::aabb`] without the `Vec`.
    pub fn aabb_with(
        &self,
        aabb: &BoundingBox<V>,
        filter: &QueryFilter,
        f: impl FnMut(Entity) -> bool,
    ) {
        // An inverted box (min above max on an axis) would pass the overlap test against
        // boxes on both sides of it.
        if !aabb.is_valid() {
            return;
        }
        let query = Shape::Box(*aabb);
        self.overlapping(
            filter,
            f,
            |tree, hit| tree.query_box_in(aabb, filter.layer_test(), hit),
            |s| query.overlaps(s),
        );
    }

    /// Every entity whose shape overlaps the sphere (circle in 2D).
    pub fn sphere(&self, center: V, radius: f32, filter: &QueryFilter) -> Vec<Entity> {
        collect(|f| self.sphere_with(center, radius, filter, f))
    }

    /// Calls `f` with every entity whose shape overlaps the sphere (circle in 2D); return
    /// `false` from `f` to stop. [`Self::sphere`] without the `Vec`.
    pub fn sphere_with(
        &self,
        center: V,
        radius: f32,
        filter: &QueryFilter,
        f: impl FnMut(Entity) -> bool,
    ) {
        let ball = Ball::new(center, radius);
        if !ball.is_valid() {
            return;
        }
        let query = Shape::Ball(ball);
        self.overlapping(
            filter,
            f,
            |tree, hit| tree.query_ball_in(&ball, filter.layer_test(), hit),
            |s| query.overlaps(s),
        );
    }

    /// The overlap queries' common part: `walk` runs one tree's query with a callback,
    /// each candidate the filter accepts is tested with `touches`, and `f` gets the
    /// entities that pass until it returns `false`.
    fn overlapping(
        &self,
        filter: &QueryFilter,
        mut f: impl FnMut(Entity) -> bool,
        walk: impl Fn(&DynamicTree<V, Entity>, &mut dyn FnMut(ProxyId, &Entity) -> bool),
        touches: impl Fn(&WorldShape<V>) -> bool,
    ) {
        let mut go = true;
        for (tree, key_of) in self.trees() {
            if !go {
                break;
            }
            walk(tree, &mut |id, _| {
                if let Some(body) = self.accepted(key_of(id), filter)
                    && touches(&body.shape)
                {
                    go = f(body.entity);
                }
                go
            });
        }
    }

    /// Sweeps `shape` (a box in world space) along `direction` up to `max_t`: the first
    /// entity it touches (ties: the smallest entity). [`ShapeHit::point`] is the box's
    /// center at the hit.
    pub fn cast_box(
        &self,
        shape: &BoundingBox<V>,
        direction: V,
        max_t: f32,
        filter: &QueryFilter,
    ) -> Option<ShapeHit<V>> {
        self.cast_first(Shape::Box(*shape), direction, max_t, filter)
    }

    /// Every entity that `shape` (a box in world space) touches when swept along
    /// `direction` up to `max_t`, nearest first (by `t`, then by entity); each hit is the
    /// first contact with that entity.
    pub fn cast_box_all(
        &self,
        shape: &BoundingBox<V>,
        direction: V,
        max_t: f32,
        filter: &QueryFilter,
    ) -> Vec<ShapeHit<V>> {
        let mut hits = Vec::new();
        self.cast_box_all_with(shape, direction, max_t, filter, |hit| {
            hits.push(hit);
            true
        });
        sort_hits(&mut hits);
        hits
    }

    /// Calls `f` with every hit of [`Self::cast_box_all`], in no particular order; return
    /// `false` from `f` to stop.
    pub fn cast_box_all_with(
        &self,
        shape: &BoundingBox<V>,
        direction: V,
        max_t: f32,
        filter: &QueryFilter,
        f: impl FnMut(ShapeHit<V>) -> bool,
    ) {
        self.cast_all(Shape::Box(*shape), direction, max_t, filter, f);
    }

    /// Sweeps the sphere (circle in 2D) of `radius` around `center` along `direction` up
    /// to `max_t`: the first entity it touches (ties: the smallest entity).
    /// [`ShapeHit::point`] is the sphere's center at the hit.
    pub fn cast_sphere(
        &self,
        center: V,
        radius: f32,
        direction: V,
        max_t: f32,
        filter: &QueryFilter,
    ) -> Option<ShapeHit<V>> {
        self.cast_first(
            Shape::Ball(Ball::new(center, radius)),
            direction,
            max_t,
            filter,
        )
    }

    /// Every entity that the sphere (circle in 2D) touches when swept along `direction` up
    /// to `max_t`, nearest first (by `t`, then by entity); each hit is the first contact
    /// with that entity.
    pub fn cast_sphere_all(
        &self,
        center: V,
        radius: f32,
        direction: V,
        max_t: f32,
        filter: &QueryFilter,
    ) -> Vec<ShapeHit<V>> {
        let mut hits = Vec::new();
        self.cast_sphere_all_with(center, radius, direction, max_t, filter, |hit| {
            hits.push(hit);
            true
        });
        sort_hits(&mut hits);
        hits
    }

    /// Calls `f` with every hit of [`Self::cast_sphere_all`], in no particular order;
    /// return `false` from `f` to stop.
    pub fn cast_sphere_all_with(
        &self,
        center: V,
        radius: f32,
        direction: V,
        max_t: f32,
        filter: &QueryFilter,
        f: impl FnMut(ShapeHit<V>) -> bool,
    ) {
        let caster = Shape::Ball(Ball::new(center, radius));
        self.cast_all(caster, direction, max_t, filter, f);
    }

    /// The first hit of a cast: the trees' box-cast walks with the caster's bounding box
    /// find the candidates nearest first, the exact sweep confirms each; the range shrinks
    /// to the best hit so far.
    fn cast_first(
        &self,
        caster: Shape<V>,
        direction: V,
        max_t: f32,
        filter: &QueryFilter,
    ) -> Option<ShapeHit<V>> {
        if !caster.is_valid() || !direction.is_finite() {
            return None;
        }
        let ray = Ray::new(caster.center(), direction);
        let mut best: Option<ShapeHit<V>> = None;
        let half = caster.bounding_box().half_extents();
        for (tree, key_of) in self.trees() {
            let reach = best.map_or(max_t, |b| b.t);
            tree.cast_box_in(&ray, half, reach, filter.layer_test(), |id, _| {
                let body = self.accepted(key_of(id), filter)?;
                if filter.ignore_start_overlaps && caster.overlaps(&body.shape) {
                    return None;
                }
                let hit = caster.query_hit(direction, best.map_or(max_t, |b| b.t), body)?;
                keep_nearer(&mut best, hit);
                Some(hit.t)
            });
        }
        best
    }

    /// Every hit of a cast: the trees' box-cast walks visit every candidate whose fat box
    /// the caster's bounding box reaches within `max_t` (the callback never reports a hit
    /// to the walk, so its range never shrinks); the exact sweep confirms each.
    fn cast_all(
        &self,
        caster: Shape<V>,
        direction: V,
        max_t: f32,
        filter: &QueryFilter,
        mut f: impl FnMut(ShapeHit<V>) -> bool,
    ) {
        if !caster.is_valid() || !direction.is_finite() {
            return;
        }
        let ray = Ray::new(caster.center(), direction);
        let mut go = true;
        for (tree, key_of) in self.trees() {
            if !go {
                break;
            }
            tree.cast_box_in(
                &ray,
                caster.bounding_box().half_extents(),
                max_t,
                filter.layer_test(),
                |id, _| {
                    if !go {
                        // Stopped: a hit at 0 shrinks the walk's range to `t = 0`, which
                        // prunes nearly all that is left of it.
                        return Some(0.0);
                    }
                    if let Some(body) = self.accepted(key_of(id), filter)
                        && !(filter.ignore_start_overlaps && caster.overlaps(&body.shape))
                        && let Some(hit) = caster.query_hit(direction, max_t, body)
                    {
                        go = f(hit);
                    }
                    None
                },
            );
        }
    }
}

/// Collects what a `_with` query gives.
fn collect<T>(query: impl FnOnce(&mut dyn FnMut(T) -> bool)) -> Vec<T> {
    let mut out = Vec::new();
    query(&mut |item| {
        out.push(item);
        true
    });
    out
}

/// Nearest first, ties by entity: the same order whatever the trees' shapes.
fn sort_hits<V: Vector>(hits: &mut [ShapeHit<V>]) {
    hits.sort_by(|a, b| a.t.total_cmp(&b.t).then(a.entity.cmp(&b.entity)));
}

/// Keeps `hit` when it is nearer than `best` (ties: the smaller entity).
fn keep_nearer<V: Vector>(best: &mut Option<ShapeHit<V>>, hit: ShapeHit<V>) {
    if best.is_none_or(|b| hit.t < b.t || (hit.t == b.t && hit.entity < b.entity)) {
        *best = Some(hit);
    }
}

/// The exact hit of `ray` on a body within `max_t`.
fn ray_hit<V: Vector>(ray: &Ray<V>, body: &Body<V>, max_t: f32) -> Option<ShapeHit<V>> {
    let (t, normal) = match body.shape {
        WorldShape::Box(b) => ray.box_hit_with_normal_at(&b, max_t)?,
        WorldShape::Ball(b) => {
            let t = ray.ball_hit_at(&b, max_t)?;
            let n = ray.at(t) - b.center;
            let len = n.dot(n).sqrt();
            let normal = if t > 0.0 && len > 0.0 {
                n / len
            } else {
                V::ZERO
            };
            (t, normal)
        }
        WorldShape::Rounded(r) => ray.rounded_box_hit_with_normal_at(&r, max_t)?,
    };
    let point = ray.at(t);
    Some(ShapeHit {
        entity: body.entity,
        t,
        point,
        normal,
        contact: point,
    })
}
