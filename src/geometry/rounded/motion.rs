//! Rounded boxes in motion: swept tests, shape casts and rays, each a ray against the
//! Minkowski sum of two rounded boxes.

use crate::Vector;
use crate::geometry::rounded::{
    QUARTIC, RoundedBox, SQUARE, largest, length, rescaling, times_pow2, unscaled, valid_pair,
};
use crate::geometry::{
    Ball, BoundingBox, Ray, SweepInterval, box_cast_at, point_slab, sweep_ball_box, sweep_balls,
    sweep_boxes, sweep_point, sweep_point_in,
};

/// Sweeps two moving rounded boxes: when they first and last overlap during the step, or
/// `None` if they never do (or either is invalid, or a displacement is not finite).
///
/// `a` and `b` are the shapes at the start of the step, `da` and `db` their displacements
/// over it. The normal at `u0` points from `a` towards `b`; it is zero when they overlap
/// (or touch) at the start, as in every sweep of the crate, and a pass that only touches
/// (a graze) is a hit with `u0 = u1`.
///
/// Boxes and balls go to the sweeps made for them: two boxes (both radii 0) to
/// [`sweep_boxes`], two balls (both half extents 0) to [`sweep_balls`], a ball and a box
/// to [`sweep_ball_box`] (with the normal reversed when the box comes first). The rest is
/// a point against a rounded box: in `b`'s frame `a`'s center moves by `da - db` against
/// the rounded box of center `b.center`, half extents `a.half_extents + b.half_extents`
/// and radius `a.radius + b.radius`, solved piece by piece in closed form (a face, an
/// edge, a corner). As for [`sweep_ball_box`], `u1` is then the last time the two
/// bounding boxes overlap, an upper bound of the exact exit time, and a pass within `1e-5`
/// of the shapes' size (at least `1e-5`) of touching counts as a hit.
///
/// Where the lengths are so large (or, for two balls, so small) that the squares those
/// sweeps compute would overflow (fourth powers, for two balls), the input is first
/// scaled by a power of two, which changes no answer that does not overflow (see the
/// [module documentation](crate::geometry::rounded)).
pub fn sweep_rounded<V: Vector>(
    a: &RoundedBox<V>,
    da: V,
    b: &RoundedBox<V>,
    db: V,
) -> Option<SweepInterval<V>> {
    let (a_ball, b_ball) = (a.half_extents == V::ZERO, b.half_extents == V::ZERO);
    let (a_box, b_box) = (a.radius == 0.0, b.radius == 0.0);
    // Each pair of boxes and balls has a sweep of its own; the rest is a point against
    // a rounded box.
    if !((a_box || a_ball) && (b_box || b_ball)) {
        // In b's frame, about b's center: the relative position is rounded once, and the
        // Minkowski sum is centered on the origin, `g` the half extents of the box that
        // holds it. A sum or a difference of two floats is finite only when both are,
        // so these are finite exactly when the input is and nothing overflowed (`x * 0.0`
        // is zero exactly for finite `x`).
        let (c, v) = (a.center - b.center, da - db);
        let (h, r) = (a.half_extents + b.half_extents, a.radius + b.radius);
        let g = h + V::splat(r);
        if (c * 0.0 + v * 0.0 + g * 0.0).dot(V::ONE) == 0.0 {
            // Most pairs miss the box that holds the sum, and that is final, at any scale:
            // the slab test only subtracts and divides, so it needs no scaling to decide
            // a miss (its times may differ in the last bits from a scaled run's, and a
            // scaling that flushes subnormal lengths would change the input itself).
            // Invalid input is found before anything is reported (a miss needs no
            // check). The Minkowski sum's lengths bound every square the rest computes,
            // so they alone decide whether it must be scaled.
            let slab = point_slab(c, v, &BoundingBox::from_min_max(-g, g))?;
            let signs = a
                .half_extents
                .min(b.half_extents)
                .min_element()
                .min(a.radius.min(b.radius));
            let size = c.abs().max(v.abs()).max(h).max_element().max(r);
            if signs >= 0.0 && unscaled(size, SQUARE) {
                return sweep_point_in(c, v, &BoundingBox::from_min_max(-h, h), r, slab);
            }
        }
    }
    sweep_checked(a, da, b, db)
}

/// [`sweep_rounded`] for boxes and balls, invalid input and lengths that need scaling.
#[inline(never)]
fn sweep_checked<V: Vector>(
    a: &RoundedBox<V>,
    da: V,
    b: &RoundedBox<V>,
    db: V,
) -> Option<SweepInterval<V>> {
    if !valid_motion(a, da, b, db) {
        return None;
    }
    let (a_ball, b_ball) = (a.half_extents == V::ZERO, b.half_extents == V::ZERO);
    let (a_box, b_box) = (a.radius == 0.0, b.radius == 0.0);
    if a_box && b_box {
        return sweep_boxes(&a.inner_box(), da, &b.inner_box(), db);
    }
    let balls = a_ball && b_ball;
    let (lo, hi) = if balls { QUARTIC } else { SQUARE };
    let size = largest(
        &[a.center, a.half_extents, b.center, b.half_extents, da, db],
        &[a.radius, b.radius],
    );
    let k = rescaling(size, lo, hi);
    if k == 0 {
        return sweep_round(a, da, b, db);
    }
    let (da, db) = (times_pow2(da, k), times_pow2(db, k));
    sweep_round(&a.scaled(k), da, &b.scaled(k), db)
}

/// Whether both shapes are valid ([`RoundedBox::is_valid`]) and both displacements
/// finite.
#[inline]
fn valid_motion<V: Vector>(a: &RoundedBox<V>, da: V, b: &RoundedBox<V>, db: V) -> bool {
    valid_pair(a, b, da * 0.0 + db * 0.0)
}

/// [`sweep_rounded`] for valid shapes not both boxes, at a scale where the ball and box
/// sweeps neither overflow nor underflow.
fn sweep_round<V: Vector>(
    a: &RoundedBox<V>,
    da: V,
    b: &RoundedBox<V>,
    db: V,
) -> Option<SweepInterval<V>> {
    let (a_ball, b_ball) = (a.half_extents == V::ZERO, b.half_extents == V::ZERO);
    let (a_box, b_box) = (a.radius == 0.0, b.radius == 0.0);
    if a_ball && b_ball {
        let (x, y) = (Ball::new(a.center, a.radius), Ball::new(b.center, b.radius));
        return sweep_balls(&x, da, &y, db);
    }
    if a_ball && b_box {
        return sweep_ball_box(&Ball::new(a.center, a.radius), da, &b.inner_box(), db);
    }
    if a_box && b_ball {
        let ball = Ball::new(b.center, b.radius);
        return sweep_ball_box(&ball, db, &a.inner_box(), da).map(|hit| SweepInterval {
            normal: -hit.normal,
            ..hit
        });
    }
    let h = a.half_extents + b.half_extents;
    let inner = BoundingBox::from_min_max(-h, h);
    sweep_point(a.center - b.center, da - db, &inner, a.radius + b.radius)
}

/// Casts `shape` along `direction` against `target`: the first `t` in `[0, max_t]` at
/// which they touch (0 when they overlap at the start), with the outward unit normal of
/// `target` where it is hit (zero at `t = 0`), or `None` (also for invalid shapes).
///
/// A ray from `shape`'s center against the Minkowski sum of the two, the rounded box with
/// `target`'s center, the summed half extents and the summed radii
/// ([`Ray::rounded_box_hit_with_normal_at`]). Two boxes go to [`box_cast_at`], which
/// gives the same answers on them bit for bit.
pub fn rounded_cast_at<V: Vector>(
    shape: &RoundedBox<V>,
    direction: V,
    max_t: f32,
    target: &RoundedBox<V>,
) -> Option<(f32, V)> {
    if !shape.is_valid() || !target.is_valid() {
        return None;
    }
    if shape.radius == 0.0 && target.radius == 0.0 {
        return box_cast_at(&shape.inner_box(), direction, max_t, &target.inner_box());
    }
    let sum = RoundedBox::new(
        target.center,
        shape.half_extents + target.half_extents,
        shape.radius + target.radius,
    );
    Ray::new(shape.center, direction).rounded_box_hit_with_normal_at(&sum, max_t)
}

impl<V: Vector> Ray<V> {
    /// The first `t` in `[0, max_t]` at which the ray is inside `rounded` (0 when the
    /// origin is inside), or `None`: [`Self::rounded_box_hit_with_normal_at`] without the
    /// normal.
    #[inline]
    pub fn rounded_box_hit_at(&self, rounded: &RoundedBox<V>, max_t: f32) -> Option<f32> {
        self.rounded_box_hit_with_normal_at(rounded, max_t)
            .map(|(t, _)| t)
    }

    /// The first `t` in `[0, max_t]` at which the ray is inside `rounded`, with the
    /// outward unit normal of the surface there (zero when the origin is inside), or
    /// `None`. A negative or NaN `max_t` leaves no `t` to hit at.
    ///
    /// A box (radius 0) is [`Self::box_hit_with_normal_at`] on the inner box, a ball
    /// (half extents 0) [`Self::ball_hit_at`], with the same `t` bit for bit. Otherwise
    /// the ray is first cast against the inner box grown by the radius, which holds the
    /// rounded box: a miss there is a miss. Over the part of the ray inside that box, a
    /// point sweeping it against the rounded box is [`sweep_ball_box`] (a ball of the
    /// radius against the inner box), whose contacts are within `1e-5` of the box's size
    /// (at least `1e-5`) of the surface. The normal points from the closest point of the
    /// inner box to the point hit.
    ///
    /// As in [`sweep_rounded`], input whose squares (fourth powers, for a ball) would
    /// overflow is first scaled by a power of two.
    pub fn rounded_box_hit_with_normal_at(
        &self,
        rounded: &RoundedBox<V>,
        max_t: f32,
    ) -> Option<(f32, V)> {
        if max_t.is_nan() || max_t < 0.0 {
            return None;
        }
        if rounded.radius == 0.0 {
            return self.box_hit_with_normal_at(&rounded.inner_box(), max_t);
        }
        let ball_like = rounded.half_extents == V::ZERO;
        let (lo, hi) = if ball_like { QUARTIC } else { SQUARE };
        let size = largest(
            &[
                self.origin,
                self.direction,
                rounded.center,
                rounded.half_extents,
            ],
            &[rounded.radius],
        );
        let k = rescaling(size, lo, hi);
        if k == 0 {
            return self.round_hit_at(rounded, max_t);
        }
        let ray = Ray::new(times_pow2(self.origin, k), times_pow2(self.direction, k));
        ray.round_hit_at(&rounded.scaled(k), max_t)
    }

    /// [`Self::rounded_box_hit_with_normal_at`] for a radius above 0 and `max_t >= 0`, at
    /// a scale where the ball and box tests neither overflow nor underflow.
    fn round_hit_at(&self, rounded: &RoundedBox<V>, max_t: f32) -> Option<(f32, V)> {
        if rounded.half_extents == V::ZERO {
            let ball = Ball::new(rounded.center, rounded.radius);
            let t = self.ball_hit_at(&ball, max_t)?;
            if ball.contains_point(self.origin) {
                return Some((t, V::ZERO));
            }
            let n = self.at(t) - ball.center;
            let len = length(n);
            return Some((t, if len > 0.0 { n / len } else { V::ZERO }));
        }
        if rounded.contains_point(self.origin) {
            return Some((0.0, V::ZERO));
        }
        let inner = rounded.inner_box();
        let grown = rounded.bounding_box();
        let (t_in, entry_normal) = self.box_hit_with_normal_at(&grown, max_t)?;
        // Where the ray leaves the grown box (or max_t).
        let mut t_out = max_t;
        for axis in 0..V::DIM {
            let inv = 1.0 / self.direction.axis(axis);
            if inv.is_finite() {
                let o = self.origin.axis(axis);
                let t1 = (grown.min.axis(axis) - o) * inv;
                let t2 = (grown.max.axis(axis) - o) * inv;
                t_out = t_out.min(t1.max(t2));
            }
        }
        if !t_out.is_finite() {
            // Parallel to every axis (and max_t unbounded): the ray stays at its origin,
            // outside.
            return None;
        }
        let t_out = t_out.max(t_in);
        let ball = Ball::new(self.at(t_in), rounded.radius);
        let hit = sweep_ball_box(&ball, self.direction * (t_out - t_in), &inner, V::ZERO)?;
        let t = (t_in + hit.u0 * (t_out - t_in)).min(t_out);
        let p = self.at(t);
        let n = p - inner.closest_point(p);
        let len = length(n);
        Some((t, if len > 0.0 { n / len } else { entry_normal }))
    }
}
