//! Queries with a capsule (or any rounded box): overlap and casts. The rounded box's
//! own forms are in `rounded_box`.

use bevy::prelude::*;

use crate::Vector;
use crate::geometry::{RoundedBox, Shape};
use crate::plugin::QueryFilter;
use crate::plugin::spatial::{ShapeHit, SpatialQuery, collect, sort_hits};

impl<V: Vector> SpatialQuery<'_, V> {
    /// Every entity whose shape overlaps `capsule` (inclusive: touching counts), a
    /// capsule or any rounded box in world space, such as
    /// [`RoundedBox::capsule`]`(center, 1, half_length, radius)` for one standing along y.
    /// Exact: a box beside a capsule's rounded end but inside its bounding box is not
    /// reported.
    pub fn capsule(&self, capsule: &RoundedBox<V>, filter: &QueryFilter) -> Vec<Entity> {
        collect(|f| self.capsule_with(capsule, filter, f))
    }

    /// Calls `f` with every entity whose shape overlaps `capsule`; return `false` from
    /// `f` to stop. [`Self::capsule`] without the `Vec`.
    pub fn capsule_with(
        &self,
        capsule: &RoundedBox<V>,
        filter: &QueryFilter,
        f: impl FnMut(Entity) -> bool,
    ) {
        self.rounded_overlapping(capsule, filter, f);
    }

    /// Sweeps `capsule` (a capsule or any rounded box in world space) along `direction`
    /// up to `max_t`: the first entity it touches (ties: the smallest entity).
    /// [`ShapeHit::point`] is the capsule's center at the hit, [`ShapeHit::normal`] the
    /// outward normal of the surface hit (zero when it starts overlapping).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_aabb_tree::prelude::*;
    /// // Would a person 1.8 tall fit down this corridor for 5 units?
    /// fn clear_ahead(query: SpatialQuery<Vec3>, me: Single<(Entity, &Transform)>) -> bool {
    ///     let (entity, transform) = *me;
    ///     let body = RoundedBox::capsule(transform.translation + Vec3::Y * 0.9, 1, 0.6, 0.3);
    ///     let filter = QueryFilter::default().excluding([entity]);
    ///     query.cast_capsule(&body, Vec3::X, 5.0, &filter).is_none()
    /// }
    /// # bevy::ecs::system::assert_is_system(clear_ahead);
    /// ```
    pub fn cast_capsule(
        &self,
        capsule: &RoundedBox<V>,
        direction: V,
        max_t: f32,
        filter: &QueryFilter,
    ) -> Option<ShapeHit<V>> {
        self.cast_first(Shape::Rounded(*capsule), direction, max_t, filter)
    }

    /// Every entity that `capsule` touches when swept along `direction` up to `max_t`,
    /// nearest first (by `t`, then by entity); each hit is the first contact with that
    /// entity.
    pub fn cast_capsule_all(
        &self,
        capsule: &RoundedBox<V>,
        direction: V,
        max_t: f32,
        filter: &QueryFilter,
    ) -> Vec<ShapeHit<V>> {
        let mut hits = Vec::new();
        self.cast_capsule_all_with(capsule, direction, max_t, filter, |hit| {
            hits.push(hit);
            true
        });
        sort_hits(&mut hits);
        hits
    }

    /// Calls `f` with every hit of [`Self::cast_capsule_all`], in no particular order;
    /// return `false` from `f` to stop.
    pub fn cast_capsule_all_with(
        &self,
        capsule: &RoundedBox<V>,
        direction: V,
        max_t: f32,
        filter: &QueryFilter,
        f: impl FnMut(ShapeHit<V>) -> bool,
    ) {
        self.cast_all(Shape::Rounded(*capsule), direction, max_t, filter, f);
    }
}
