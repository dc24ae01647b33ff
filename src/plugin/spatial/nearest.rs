//! The nearest collider to a point: [`SpatialQuery::closest_point`].

use crate::Vector;
use crate::geometry::Ball;
use crate::plugin::QueryFilter;
use crate::plugin::spatial::SpatialQuery;

use bevy::prelude::*;

/// The point of a collider closest to a query point ([`SpatialQuery::closest_point`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointProjection<V: Vector> {
    /// The collider.
    pub entity: Entity,
    /// The point of its shape closest to the query point (the query point itself when it
    /// is inside).
    pub point: V,
    /// The distance from the query point to `point`: 0 inside.
    pub distance: f32,
    /// The unit normal of the surface at `point`, pointing towards the query point; zero
    /// when the query point is inside.
    pub normal: V,
}

impl<V: Vector> SpatialQuery<'_, V> {
    /// The collider nearest to `point` within `max_distance` (inclusive), filtered: its
    /// entity, the point of its shape closest to `point`, the distance and the normal
    /// there. A collider containing `point` is at distance 0; ties go to the smallest
    /// entity. `None` when no collider is that close (or `point` or `max_distance` is not
    /// a finite number, or the distance is negative).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_aabb_tree::d2::*;
    /// fn nearest_cover(query: SpatialQuery, player: Single<(Entity, &Transform)>) {
    ///     let (me, transform) = *player;
    ///     let filter = QueryFilter::default().excluding([me]);
    ///     if let Some(near) = query.closest_point(transform.translation.truncate(), 10.0, &filter) {
    ///         info!("cover {} at {:.1} units, at {}", near.entity, near.distance, near.point);
    ///     }
    /// }
    /// # bevy::ecs::system::assert_is_system(nearest_cover);
    /// ```
    pub fn closest_point(
        &self,
        point: V,
        max_distance: f32,
        filter: &QueryFilter,
    ) -> Option<PointProjection<V>> {
        if !point.is_finite() || !max_distance.is_finite() || max_distance < 0.0 {
            return None;
        }
        let mut best: Option<PointProjection<V>> = None;
        for (tree, key_of) in self.trees() {
            // The fat boxes within reach: those of every collider within reach.
            let mut reach = best.map_or(max_distance, |b| b.distance);
            let search = Ball::new(point, reach);
            tree.query_ball_in(&search, filter.layer_test(), |id, _| {
                let Some(body) = self.accepted(key_of(id), filter) else {
                    return true;
                };
                let distance = body.shape.distance_to_point(point);
                let nearer = match best {
                    None => distance <= reach,
                    Some(b) => (distance, body.entity) < (b.distance, b.entity),
                };
                if nearer {
                    let on = body.shape.closest_point(point);
                    let d = point - on;
                    let normal = if distance > 0.0 {
                        d / d.dot(d).sqrt()
                    } else {
                        V::ZERO
                    };
                    best = Some(PointProjection {
                        entity: body.entity,
                        point: on,
                        distance,
                        normal,
                    });
                    reach = distance;
                }
                true
            });
        }
        best
    }
}
