//! Queries with a rounded box: overlap and casts, and the overlap test the capsule
//! queries share.

use bevy::prelude::*;

use crate::Vector;
use crate::geometry::{RoundedBox, Shape};
use crate::plugin::QueryFilter;
use crate::plugin::spatial::{ShapeHit, SpatialQuery, collect, sort_hits};

impl<V: Vector> SpatialQuery<'_, V> {
    /// Every entity whose shape overlaps `rounded` (inclusive: touching counts), a box
    /// with rounded edges in world space, such as the world shape of a
    /// [`RoundedAabb`](crate::plugin::RoundedAabb) (`RoundedBox::new(center, half_extents,
    /// radius)`). Exact: a box beside a rounded corner but inside the bounding box is not
    /// reported.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_aabb_tree::prelude::*;
    /// // What would a crate of outer size 1 with edges rounded by 0.2 touch at (3, 1)?
    /// fn crate_fits(query: SpatialQuery<Vec2>) -> bool {
    ///     let shape = RoundedBox::new(Vec2::new(3.0, 1.0), Vec2::splat(0.3), 0.2);
    ///     query.rounded_box(&shape, &QueryFilter::default()).is_empty()
    /// }
    /// # bevy::ecs::system::assert_is_system(crate_fits);
    /// ```
    pub fn rounded_box(&self, rounded: &RoundedBox<V>, filter: &QueryFilter) -> Vec<Entity> {
        collect(|f| self.rounded_box_with(rounded, filter, f))
    }

    /// Calls `f` with every entity whose shape overlaps `rounded`; return `false` from
    /// `f` to stop. [`Self::rounded_box`] without the `Vec`.
    pub fn rounded_box_with(
        &self,
        rounded: &RoundedBox<V>,
        filter: &QueryFilter,
        f: impl FnMut(Entity) -> bool,
    ) {
        self.rounded_overlapping(rounded, filter, f);
    }

    /// Sweeps `rounded` (a box with rounded edges in world space) along `direction` up to
    /// `max_t`: the first entity it touches (ties: the smallest entity).
    /// [`ShapeHit::point`] is the rounded box's center at the hit, [`ShapeHit::normal`]
    /// the outward normal of the surface hit (zero when it starts overlapping).
    pub fn cast_rounded_box(
        &self,
        rounded: &RoundedBox<V>,
        direction: V,
        max_t: f32,
        filter: &QueryFilter,
    ) -> Option<ShapeHit<V>> {
        self.cast_first(Shape::Rounded(*rounded), direction, max_t, filter)
    }

    /// Every entity that `rounded` touches when swept along `direction` up to `max_t`,
    /// nearest first (by `t`, then by entity); each hit is the first contact with that
    /// entity.
    pub fn cast_rounded_box_all(
        &self,
        rounded: &RoundedBox<V>,
        direction: V,
        max_t: f32,
        filter: &QueryFilter,
    ) -> Vec<ShapeHit<V>> {
        let mut hits = Vec::new();
        self.cast_rounded_box_all_with(rounded, direction, max_t, filter, |hit| {
            hits.push(hit);
            true
        });
        sort_hits(&mut hits);
        hits
    }

    /// Calls `f` with every hit of [`Self::cast_rounded_box_all`], in no particular order;
    /// return `false` from `f` to stop.
    pub fn cast_rounded_box_all_with(
        &self,
        rounded: &RoundedBox<V>,
        direction: V,
        max_t: f32,
        filter: &QueryFilter,
        f: impl FnMut(ShapeHit<V>) -> bool,
    ) {
        self.cast_all(Shape::Rounded(*rounded), direction, max_t, filter, f);
    }

    /// The overlap query of a rounded box (a capsule is one): the trees' walks with its
    /// bounding box find the candidates, the exact test confirms each. An invalid rounded
    /// box finds nothing.
    pub(super) fn rounded_overlapping(
        &self,
        rounded: &RoundedBox<V>,
        filter: &QueryFilter,
        f: impl FnMut(Entity) -> bool,
    ) {
        if !rounded.is_valid() {
            return;
        }
        let query = Shape::Rounded(*rounded);
        let bounds = rounded.bounding_box();
        self.overlapping(
            filter,
            f,
            |tree, hit| tree.query_box_in(&bounds, filter.layer_test(), hit),
            |s| query.overlaps(s),
        );
    }
}
