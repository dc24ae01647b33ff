//! Spatial queries over the collision tree.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use smallvec::SmallVec;

use crate::Vector;
use crate::geometry::{Ball, BoundingBox, Ray, sweep_ball_box};
use crate::plugin::state::{Body, Key};
use crate::plugin::{AabbTree, WorldShape};
use crate::tree::{DynamicTree, ProxyId};

/// Which entities a spatial query may return.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryFilter {
    /// An entity is a candidate when its `CollisionLayers::memberships` share a bit with
    /// this mask. Default: every layer.
    pub mask: u32,
    /// Entities never returned (for example the caster itself). Default: none.
    pub excluded: SmallVec<[Entity; 4]>,
}

impl Default for QueryFilter {
    fn default() -> Self {
        Self {
            mask: u32::MAX,
            excluded: SmallVec::new(),
        }
    }
}

impl QueryFilter {
    /// Only entities in these layers.
    pub fn with_mask(mut self, mask: u32) -> Self {
        self.mask = mask;
        self
    }

    /// Never return these entities.
    pub fn excluding(mut self, entities: impl IntoIterator<Item = Entity>) -> Self {
        self.excluded.extend(entities);
        self
    }

    #[inline]
    fn accepts<V: Vector>(&self, body: &Body<V>) -> bool {
        body.layers.memberships & self.mask != 0 && !self.excluded.contains(&body.entity)
    }
}

/// A ray or cast hit on an entity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeHit<V: Vector> {
    /// The entity hit.
    pub entity: Entity,
    /// The ray parameter (a distance for a unit direction).
    pub t: f32,
    /// Where the ray (or the cast shape's center) is at the hit.
    pub point: V,
    /// Outward unit normal of the surface hit (zero when the ray starts inside).
    pub normal: V,
}

/// Spatial queries on the collision tree of one dimension, as a system parameter.
///
/// Shapes are those of the last tick. Every query takes a [`QueryFilter`].
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
/// }
/// ```
#[derive(SystemParam)]
pub struct SpatialQuery<'w, V: Vector> {
    state: Res<'w, AabbTree<V>>,
}

/// A tree and the function naming its proxies' keys.
type TreeAndKeys<'a, V> = (&'a DynamicTree<V, Entity>, fn(ProxyId) -> Key);

impl<V: Vector> SpatialQuery<'_, V> {
    /// The two trees, each with the way to name its proxies' bodies.
    fn trees(&self) -> [TreeAndKeys<'_, V>; 2] {
        [
            (&self.state.tree, Key::moving),
            (&self.state.static_tree, Key::fixed),
        ]
    }

    /// The body of a proxy the filter accepts.
    fn accepted(&self, key: Key, filter: &QueryFilter) -> Option<&Body<V>> {
        self.state.body(key).filter(|b| filter.accepts(b))
    }

    /// The closest entity hit by `ray` within `max_t`.
    pub fn cast_ray(&self, ray: &Ray<V>, max_t: f32, filter: &QueryFilter) -> Option<ShapeHit<V>> {
        let mut best: Option<(f32, Key)> = None;
        for (tree, key_of) in self.trees() {
            let limit = best.map_or(max_t, |(t, _)| t);
            if let Some(hit) = tree.cast_ray(ray, limit, |id, _| {
                let body = self.accepted(key_of(id), filter)?;
                ray_shape(ray, &body.shape, limit).map(|(t, _)| t)
            }) && best.is_none_or(|(t, _)| hit.t < t)
            {
                best = Some((hit.t, key_of(hit.proxy)));
            }
        }
        let body = self.state.body(best?.1)?;
        let (t, normal) = ray_shape(ray, &body.shape, max_t)?;
        Some(ShapeHit {
            entity: body.entity,
            t,
            point: ray.at(t),
            normal,
        })
    }

    /// Every entity hit by `ray` within `max_t`, nearest first.
    pub fn ray_hits(&self, ray: &Ray<V>, max_t: f32, filter: &QueryFilter) -> Vec<ShapeHit<V>> {
        let mut hits = Vec::new();
        for (tree, key_of) in self.trees() {
            tree.ray_hits(ray, max_t, |id, _, _| {
                if let Some(body) = self.accepted(key_of(id), filter)
                    && let Some((t, normal)) = ray_shape(ray, &body.shape, max_t)
                {
                    hits.push(ShapeHit {
                        entity: body.entity,
                        t,
                        point: ray.at(t),
                        normal,
                    });
                }
                true
            });
        }
        hits.sort_by(|a, b| a.t.total_cmp(&b.t).then(a.entity.cmp(&b.entity)));
        hits
    }

    /// Every entity whose shape contains `point`.
    pub fn point(&self, point: V, filter: &QueryFilter) -> Vec<Entity> {
        let mut out = Vec::new();
        for (tree, key_of) in self.trees() {
            tree.query_point(point, |id, _| {
                if let Some(body) = self.accepted(key_of(id), filter) {
                    let inside = match body.shape {
                        WorldShape::Box(b) => b.contains_point(point),
                        WorldShape::Ball(b) => b.contains_point(point),
                    };
                    if inside {
                        out.push(body.entity);
                    }
                }
                true
            });
        }
        out
    }

    /// Every entity whose shape overlaps `aabb`.
    pub fn aabb(&self, aabb: &BoundingBox<V>, filter: &QueryFilter) -> Vec<Entity> {
        let mut out = Vec::new();
        for (tree, key_of) in self.trees() {
            tree.query_box(aabb, |id, _| {
                if let Some(body) = self.accepted(key_of(id), filter) {
                    let overlaps = match body.shape {
                        WorldShape::Box(b) => b.overlaps(aabb),
                        WorldShape::Ball(b) => b.overlaps_box(aabb),
                    };
                    if overlaps {
                        out.push(body.entity);
                    }
                }
                true
            });
        }
        out
    }

    /// Every entity whose shape overlaps the sphere (circle in 2D).
    pub fn sphere(&self, center: V, radius: f32, filter: &QueryFilter) -> Vec<Entity> {
        let ball = Ball::new(center, radius);
        let mut out = Vec::new();
        for (tree, key_of) in self.trees() {
            tree.query_ball(&ball, |id, _| {
                if let Some(body) = self.accepted(key_of(id), filter) {
                    let overlaps = match body.shape {
                        WorldShape::Box(b) => ball.overlaps_box(&b),
                        WorldShape::Ball(b) => ball.overlaps(&b),
                    };
                    if overlaps {
                        out.push(body.entity);
                    }
                }
                true
            });
        }
        out
    }

    /// Sweeps `shape` (a box in world space) along `direction` up to `max_t`: the first
    /// entity it touches. `point` is the box's center at the hit; `normal` the outward
    /// normal of the surface hit.
    pub fn cast_box(
        &self,
        shape: &BoundingBox<V>,
        direction: V,
        max_t: f32,
        filter: &QueryFilter,
    ) -> Option<ShapeHit<V>> {
        if !shape.is_valid() {
            return None;
        }
        let ray = Ray::new(shape.center(), direction);
        let mut best: Option<(f32, Key)> = None;
        for (tree, key_of) in self.trees() {
            let limit = best.map_or(max_t, |(t, _)| t);
            if let Some(hit) = tree.cast_box(&ray, shape.half_extents(), limit, |id, _| {
                let body = self.accepted(key_of(id), filter)?;
                cast_shape(shape, direction, limit, &body.shape).map(|h| h.0)
            }) && best.is_none_or(|(t, _)| hit.t < t)
            {
                best = Some((hit.t, key_of(hit.proxy)));
            }
        }
        let body = self.state.body(best?.1)?;
        let (t, normal) = cast_shape(shape, direction, max_t, &body.shape)?;
        Some(ShapeHit {
            entity: body.entity,
            t,
            point: ray.at(t),
            normal,
        })
    }
}

fn ray_shape<V: Vector>(ray: &Ray<V>, shape: &WorldShape<V>, max_t: f32) -> Option<(f32, V)> {
    match shape {
        WorldShape::Box(b) => ray.box_hit_with_normal_at(b, max_t),
        WorldShape::Ball(b) => {
            let t = ray.ball_hit_at(b, max_t)?;
            let n = ray.at(t) - b.center;
            let len = n.dot(n).sqrt();
            Some((
                t,
                if t > 0.0 && len > 0.0 {
                    n / len
                } else {
                    V::ZERO
                },
            ))
        }
    }
}

fn cast_shape<V: Vector>(
    shape: &BoundingBox<V>,
    direction: V,
    max_t: f32,
    target: &WorldShape<V>,
) -> Option<(f32, V)> {
    match target {
        WorldShape::Box(b) => crate::geometry::box_cast_at(shape, direction, max_t, b),
        WorldShape::Ball(ball) => {
            if max_t.is_nan() || max_t < 0.0 {
                return None;
            }
            // Once the box's center is further along `direction` than the ball's center
            // by the radius plus the box's half diagonal, every point of the box is more
            // than the radius ahead of the ball: no first contact lies beyond that. Sweep
            // only that far, which also keeps the sweep finite for an unbounded cast
            // (`max_t` infinite or huge) instead of missing every ball. The distances are
            // measured along the unit direction and divided by the direction's length to
            // give the parameter, so the bound holds for a direction of any length.
            let speed = direction.dot(direction).sqrt();
            let limit = if speed > 0.0 {
                let half = shape.half_extents();
                let ahead = (ball.center - shape.center()).dot(direction) / speed;
                let reach = ahead + ball.radius + half.dot(half).sqrt();
                max_t.min((reach / speed).max(0.0))
            } else {
                0.0
            };
            if !limit.is_finite() {
                return None;
            }
            // The ball moving by -direction against the still box is the same relative
            // motion. The sweep's normal points from the ball towards the box: that is the
            // ball's outward normal where the box touches it.
            let hit = sweep_ball_box(ball, -direction * limit, shape, V::ZERO)?;
            Some((hit.u0 * limit, hit.normal))
        }
    }
}
