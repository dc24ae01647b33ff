//! The exact tests behind the shape casts: a box, ball or capsule swept against a collider.

use crate::Vector;
use crate::geometry::{
    BoundingBox, Shape, box_cast_at, rounded_cast_at, sweep_ball_box, sweep_balls,
};
use crate::plugin::WorldShape;
use crate::plugin::spatial::ShapeHit;
use crate::plugin::state::Body;

impl<V: Vector> Shape<V> {
    /// The exact first contact with a body within `max_t`, as a query reports it.
    pub(super) fn query_hit(
        &self,
        direction: V,
        max_t: f32,
        body: &Body<V>,
    ) -> Option<ShapeHit<V>> {
        let (t, normal) = self.sweep_at(direction, max_t, &body.shape)?;
        let offset = direction * t;
        Some(ShapeHit {
            entity: body.entity,
            t,
            point: self.center() + offset,
            normal,
            contact: self.contact_point(offset, &body.shape),
        })
    }

    /// The first `t` in `[0, max_t]` at which the caster moved by `t * direction` touches
    /// `target`, with `target`'s outward normal there (zero at `t = 0`).
    ///
    /// Box against box is a ray against the target grown by the caster's half extents.
    /// The sweeps with a ball run over one step, a displacement of `limit * direction`
    /// ([`sweep_limit`]), and scale their normalized time back to `t`.
    fn sweep_at(&self, direction: V, max_t: f32, target: &WorldShape<V>) -> Option<(f32, V)> {
        match (self, target) {
            (Shape::Box(shape), WorldShape::Box(b)) => box_cast_at(shape, direction, max_t, b),
            (Shape::Box(shape), WorldShape::Ball(ball)) => {
                let reach = half_diagonal(shape);
                let limit = sweep_limit(
                    shape.center(),
                    reach,
                    ball.center,
                    ball.radius,
                    direction,
                    max_t,
                )?;
                // The ball moving by -direction against the still box is the same relative
                // motion. The sweep's normal points from the ball towards the box: that is
                // the ball's outward normal where the box touches it.
                let hit = sweep_ball_box(ball, -direction * limit, shape, V::ZERO)?;
                Some((hit.u0 * limit, hit.normal))
            }
            (Shape::Ball(ball), WorldShape::Box(b)) => {
                let reach = half_diagonal(b);
                let limit = sweep_limit(
                    ball.center,
                    ball.radius,
                    b.center(),
                    reach,
                    direction,
                    max_t,
                )?;
                // The sweep's normal points from the ball towards the box: the box's outward
                // normal is its opposite.
                let hit = sweep_ball_box(ball, direction * limit, b, V::ZERO)?;
                Some((hit.u0 * limit, -hit.normal))
            }
            (Shape::Ball(ball), WorldShape::Ball(target)) => {
                let limit = sweep_limit(
                    ball.center,
                    ball.radius,
                    target.center,
                    target.radius,
                    direction,
                    max_t,
                )?;
                // From the still target towards the moving ball: the target's outward
                // normal at the contact.
                let hit = sweep_balls(target, V::ZERO, ball, direction * limit)?;
                Some((hit.u0 * limit, hit.normal))
            }
            // A capsule or rounded box on either side: a ray against the Minkowski sum,
            // which needs no bound on the step.
            _ => rounded_cast_at(&self.to_rounded(), direction, max_t, &target.to_rounded()),
        }
    }

    /// A point of both the caster moved by `offset` and `target` when they touch: the
    /// middle of the two boxes' overlap; the point of the box closest to the ball's
    /// center; for two balls, the point dividing the line of centers in the ratio of the
    /// radii (inside both whenever they touch or overlap).
    fn contact_point(&self, offset: V, target: &WorldShape<V>) -> V {
        match (self, target) {
            (Shape::Box(shape), WorldShape::Box(b)) => {
                let moved = shape.translated(offset);
                (moved.min.max(b.min) + moved.max.min(b.max)) * 0.5
            }
            (Shape::Box(shape), WorldShape::Ball(ball)) => {
                shape.translated(offset).closest_point(ball.center)
            }
            (Shape::Ball(ball), WorldShape::Box(b)) => b.closest_point(ball.center + offset),
            (Shape::Ball(ball), WorldShape::Ball(target)) => {
                let center = ball.center + offset;
                let radii = ball.radius + target.radius;
                if radii > 0.0 {
                    center + (target.center - center) * (ball.radius / radii)
                } else {
                    center
                }
            }
            _ => {
                let moved = self.to_rounded().translated(offset);
                moved.closest_points(&target.to_rounded()).1
            }
        }
    }
}

/// Half the length of a box's diagonal: no point of the box is further from its center.
fn half_diagonal<V: Vector>(b: &BoundingBox<V>) -> f32 {
    let half = b.half_extents();
    half.dot(half).sqrt()
}

/// How far (in units of `direction`) a cast from `from` must sweep at most to find its
/// first contact with a target at `to`, each shape within its reach of its center: once
/// the caster's center is further along `direction` than the target's center by the sum
/// of the two reaches, every point of the caster is ahead of every point of the target
/// and they can no longer meet. At most `max_t`; `None` for a range with no `t` in it.
///
/// The bound keeps the swept step finite for an unbounded cast (`max_t` infinite or
/// huge). Distances are measured along the unit direction and divided by the direction's
/// length to give the parameter, so the bound holds for a direction of any length; the
/// direction is scaled by its largest component first, so that neither a tiny nor a huge
/// one underflows or overflows on the way.
fn sweep_limit<V: Vector>(
    from: V,
    from_reach: f32,
    to: V,
    to_reach: f32,
    direction: V,
    max_t: f32,
) -> Option<f32> {
    if max_t.is_nan() || max_t < 0.0 {
        return None;
    }
    let scale = direction.abs().max_element();
    let limit = if scale > 0.0 {
        let unit = direction / scale;
        let length = unit.dot(unit).sqrt();
        let ahead = (to - from).dot(unit) / length;
        let distance = (ahead + from_reach + to_reach).max(0.0);
        max_t.min(distance / length / scale)
    } else {
        0.0
    };
    limit.is_finite().then_some(limit)
}
