//! Shape casts that block a motion, and move-and-slide built on them.

use smallvec::SmallVec;

use crate::Vector;
use crate::geometry::{Ball, BoundingBox, Shape, sweep_ball_box, sweep_balls};

/// Where a cast shape is first blocked: the parameter `t` along the motion, the normal and
/// the point, and what it hit (an id chosen by the caller; `()` for a single target). As
/// in the spatial queries' `ShapeHit` and in [`RayHit`](crate::RayHit), `t` is the
/// parameter along the vector the cast was given: the shape is at `start + t * motion`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CastHit<V: Vector, Id = ()> {
    /// Fraction of the motion done at the hit, in `[0, 1]`.
    pub t: f32,
    /// Unit normal of the hit surface, pointing from the hit shape towards the cast one.
    pub normal: V,
    /// A point where the shapes touch at `t`.
    pub point: V,
    /// What was hit.
    pub id: Id,
}

impl<V: Vector, Id> CastHit<V, Id> {
    /// The same hit with another id.
    #[inline]
    pub fn with_id<J>(self, id: J) -> CastHit<V, J> {
        CastHit {
            t: self.t,
            normal: self.normal,
            point: self.point,
            id,
        }
    }

    /// Whether `self` is the hit to report rather than `other`, for a cast along `motion`:
    /// the earlier one; of two simultaneous ones, the one whose normal opposes the motion
    /// least (the larger `normal · motion`).
    ///
    /// A box landing on a floor of tiles reaches the top of the tile under it and the
    /// corner of the next one at the same time; that corner may report its side face, a
    /// wall across the motion. The top face opposes the motion less, so it wins, and the
    /// box keeps sliding over the seam. Times are compared exactly: the faces of a flat
    /// floor are met at bit-identical times, and a ball landing near a seam meets the face
    /// under it strictly before the corner of the next tile, whose tilted normal would
    /// nudge it.
    #[inline]
    pub fn precedes<J>(&self, other: &CastHit<V, J>, motion: V) -> bool {
        if self.t != other.t {
            self.t < other.t
        } else {
            self.normal.dot(motion) > other.normal.dot(motion)
        }
    }
}

/// The unit vector along `axis`, pointing towards `+` if `positive`.
fn axis_normal<V: Vector>(axis: usize, positive: bool) -> V {
    let mut n = V::ZERO;
    n.set_axis(axis, if positive { 1.0 } else { -1.0 });
    n
}

/// Casts `shape` along `motion` against `target`: the first time in `[0, 1]` at which
/// `target` blocks the motion, or `None`.
///
/// Blocking means going deeper: shapes that touch or overlap at the start block at time 0
/// only if the motion increases their depth ([`Shape::contact`]), so a box resting on a
/// floor slides along it and a shape that starts inside another may move out. A motion
/// that only grazes a ball or a rounded edge (normal across the motion at the first
/// contact) never goes deeper and does not block.
///
/// Boxes block only where their insides would overlap: a box sliding along a face it
/// touches, or past an edge it only touches, is not blocked.
///
/// Two boxes can meet on several axes at once (edge or corner first): the normal is then
/// that of the axis along which the motion is fastest, the face it drives into the most.
/// With [`CastHit::precedes`] choosing among targets, this keeps a box landing on a
/// tiled floor from reporting the side face of a tile at a seam.
///
/// Invalid shapes or a non-finite motion give `None`.
pub fn cast_shape<V: Vector>(shape: &Shape<V>, motion: V, target: &Shape<V>) -> Option<CastHit<V>> {
    if !shape.is_valid() || !target.is_valid() || !motion.is_finite() {
        return None;
    }
    let (shape, target) = (&simplest(shape), &simplest(target));
    if let Some(contact) = shape.contact(target) {
        let normal = blocking_normal_at_start(shape, motion, target, contact.normal)?;
        return Some(CastHit {
            t: 0.0,
            normal,
            point: contact.point,
            id: (),
        });
    }
    let (time, normal) = match (shape, target) {
        (Shape::Box(a), Shape::Box(b)) => {
            // The Minkowski form of `sweep_boxes`, with target still: per axis the
            // interval of times during which the projections overlap.
            let (mut u0, mut u1) = (f32::NEG_INFINITY, f32::INFINITY);
            let mut axis_u0 = [f32::NEG_INFINITY; 3];
            for (axis, axis_enter) in axis_u0.iter_mut().enumerate().take(V::DIM) {
                let m = motion.axis(axis);
                let (a_lo, a_hi) = (a.min.axis(axis), a.max.axis(axis));
                let (b_lo, b_hi) = (b.min.axis(axis), b.max.axis(axis));
                let (enter, exit) = if m == 0.0 {
                    // Apart, or face to face and staying so: never deeper.
                    if a_hi <= b_lo || b_hi <= a_lo {
                        return None;
                    }
                    (f32::NEG_INFINITY, f32::INFINITY)
                } else {
                    let t_lo = (b_lo - a_hi) / m;
                    let t_hi = (b_hi - a_lo) / m;
                    if m > 0.0 { (t_lo, t_hi) } else { (t_hi, t_lo) }
                };
                *axis_enter = enter;
                u0 = u0.max(enter);
                u1 = u1.min(exit);
            }
            // Touching for an instant only (`u0 == u1`) is no overlap in depth.
            if u0 >= u1 || !(0.0..=1.0).contains(&u0) {
                return None;
            }
            // Of the axes entered last (an edge or corner meets first), the fastest.
            let mut best = 0;
            let mut speed = -1.0f32;
            for (axis, &enter) in axis_u0.iter().enumerate().take(V::DIM) {
                if enter == u0 && motion.axis(axis).abs() > speed {
                    speed = motion.axis(axis).abs();
                    best = axis;
                }
            }
            (u0, axis_normal(best, motion.axis(best) < 0.0))
        }
        (Shape::Ball(a), Shape::Ball(b)) => {
            let hit = sweep_balls(b, V::ZERO, a, motion)?;
            (hit.u0, hit.normal)
        }
        (Shape::Ball(a), Shape::Box(b)) => {
            let hit = sweep_ball_box(a, motion, b, V::ZERO)?;
            let (u, n) = refine_ball_box(a, motion, b, hit.u0, hit.normal);
            (u, -n)
        }
        (Shape::Box(a), Shape::Ball(b)) => {
            let hit = sweep_ball_box(b, -motion, a, V::ZERO)?;
            refine_ball_box(b, -motion, a, hit.u0, hit.normal)
        }
        // A rounded box with both a size and a radius on one side: the shape's center as
        // a ball of the summed radii against the box of the summed half extents, in the
        // target's frame (the Minkowski sum), refined as a ball against a box.
        _ => {
            let (a, b) = (shape.to_rounded(), target.to_rounded());
            let ball = Ball::new(a.center - b.center, a.radius + b.radius);
            let sum =
                BoundingBox::from_center_half_extents(V::ZERO, a.half_extents + b.half_extents);
            let hit = sweep_ball_box(&ball, motion, &sum, V::ZERO)?;
            let (u, n) = refine_ball_box(&ball, motion, &sum, hit.u0, hit.normal);
            (u, -n)
        }
    };
    // Grazing (or a degenerate normal): the motion never goes deeper. Only a normal
    // nearly across the motion can be a graze; a clear approach always blocks.
    let across = normal.dot(motion) > -0.01 * length(motion);
    if normal.dot(motion) >= 0.0 || (across && grazes(shape, motion, target, time)) {
        return None;
    }
    let at = shape.translated(motion * time);
    let point = match at.contact(target) {
        Some(c) => c.point,
        // Within the sweep's tolerance of touching: the target's point nearest the shape.
        None => target
            .bounding_box()
            .closest_point(at.bounding_box().center()),
    };
    Some(CastHit {
        t: time,
        normal,
        point,
        id: (),
    })
}

/// Closes the gap that [`sweep_ball_box`] leaves within its tolerance of touching: from
/// `u`, conservative advancement (the gap shrinks at most at the speed) up to the first
/// contact, and the normal there (from the ball's center towards the box). Simultaneous
/// hits are then told apart by their true times: a ball landing on a tiled floor just past
/// a seam reaches the face under it before the corner of the tile behind.
fn refine_ball_box<V: Vector>(
    ball: &Ball<V>,
    motion: V,
    aabb: &BoundingBox<V>,
    mut u: f32,
    normal: V,
) -> (f32, V) {
    let speed = length(motion);
    if speed == 0.0 || !speed.is_finite() {
        return (u, normal);
    }
    let scale = aabb.size().max_element().max(ball.radius).max(1.0);
    // In the box's frame: small coordinates, so gaps are resolved far below the ulp of
    // coordinates far from the origin.
    let origin = aabb.center();
    let local = aabb.translated(-origin);
    let start = ball.center - origin;
    for _ in 0..16 {
        let c = start + motion * u;
        let gap = local.distance_squared_to_point(c).sqrt() - ball.radius;
        if gap <= 1e-7 * scale {
            break;
        }
        u = (u + gap / speed).min(1.0);
    }
    let c = start + motion * u;
    let d = local.closest_point(c) - c;
    let len = d.dot(d).sqrt();
    (u, if len > 0.0 { d / len } else { normal })
}

/// The shape in its plainest form: a rounded box of radius 0 as its box, one of half
/// extents 0 as its ball (so that a capsule of radius 0 is cast as a box).
fn simplest<V: Vector>(shape: &Shape<V>) -> Shape<V> {
    match shape {
        Shape::Rounded(r) if r.radius == 0.0 => Shape::Box(r.inner_box()),
        Shape::Rounded(r) if r.half_extents == V::ZERO => {
            Shape::Ball(Ball::new(r.center, r.radius))
        }
        other => *other,
    }
}

/// Whether a ball's motion from `time` on never brings the shapes deeper than a
/// rounding tolerance (a graze: the sweep reports contacts within its own tolerance of
/// touching, with a normal that barely opposes the motion).
///
/// The signed gap between the shapes (distance between them, negative inside) is a
/// convex function of the time along a straight motion, so a ternary search finds its
/// minimum over `time..=1`.
fn grazes<V: Vector>(shape: &Shape<V>, motion: V, target: &Shape<V>, time: f32) -> bool {
    let gap = |u: f32| -> f32 {
        match (&shape.translated(motion * u), target) {
            (Shape::Ball(a), Shape::Ball(b)) => {
                let d = b.center - a.center;
                d.dot(d).sqrt() - a.radius - b.radius
            }
            (Shape::Ball(a), Shape::Box(b)) | (Shape::Box(b), Shape::Ball(a)) => {
                b.distance_squared_to_point(a.center).sqrt() - a.radius
            }
            // Boxes meet on a face, edge or corner entered along an axis: never a graze.
            (Shape::Box(_), Shape::Box(_)) => f32::NEG_INFINITY,
            // The distance between the inner boxes less the radii: convex in the time,
            // and at most minus the radii while the inner boxes overlap.
            (a, b) => {
                let (a, b) = (a.to_rounded(), b.to_rounded());
                let (amin, amax) = (a.center - a.half_extents, a.center + a.half_extents);
                let (bmin, bmax) = (b.center - b.half_extents, b.center + b.half_extents);
                let gap = (amin - bmax).max(bmin - amax).max(V::ZERO);
                length(gap) - a.radius - b.radius
            }
        }
    };
    // Rounding of the gap: relative to the moving shape and its motion, plus a few ulps
    // of the coordinates where it is. Not relative to the target's size: a ball sinking
    // a thousandth into a floor two thousand units wide is no graze.
    let scale = shape
        .bounding_box()
        .size()
        .max_element()
        .max(length(motion))
        .max(1.0);
    let coordinates = shape
        .center()
        .abs()
        .max(target.center().abs())
        .max_element();
    let tolerance = 1e-6 * scale + 2.0 * f32::EPSILON * coordinates;
    let (mut lo, mut hi) = (time, 1.0f32);
    for _ in 0..48 {
        let (m1, m2) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
        if gap(m1) <= gap(m2) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    gap(0.5 * (lo + hi)).min(gap(1.0)) >= -tolerance
}

/// For shapes that overlap at the start: the normal (from target towards shape) with which
/// `target` blocks `motion`, or `None` if the motion does not make them overlap deeper.
fn blocking_normal_at_start<V: Vector>(
    shape: &Shape<V>,
    motion: V,
    target: &Shape<V>,
    contact_normal: V,
) -> Option<V> {
    if let (Shape::Box(a), Shape::Box(b)) = (shape, target) {
        // The depth is the least of the push distances per axis and side; each grows at
        // the rate `motion · n` of its normal `n`. It grows only if all the least grow;
        // touching on an edge or a corner while sliding along one face does not block.
        let mut depth = f32::INFINITY;
        for axis in 0..V::DIM {
            let plus = a.max.axis(axis) - b.min.axis(axis);
            let minus = b.max.axis(axis) - a.min.axis(axis);
            depth = depth.min(plus).min(minus);
        }
        let (mut best, mut best_rate) = (V::ZERO, 0.0f32);
        for axis in 0..V::DIM {
            let plus = a.max.axis(axis) - b.min.axis(axis);
            let minus = b.max.axis(axis) - a.min.axis(axis);
            for (push, positive) in [(plus, true), (minus, false)] {
                if push == depth {
                    let n = axis_normal::<V>(axis, positive);
                    let rate = motion.dot(n);
                    if rate <= 0.0 {
                        return None;
                    }
                    // The most opposed face, as for a cast that meets an edge.
                    if rate > best_rate {
                        best_rate = rate;
                        best = -n;
                    }
                }
            }
        }
        return (best_rate > 0.0).then_some(best);
    }
    (motion.dot(contact_normal) > 0.0).then_some(-contact_normal)
}

/// The first hit of `shape` moving along `motion` among `targets`, each with its id:
/// [`cast_shape`] on each, the best by [`CastHit::precedes`].
pub fn cast_shapes<V: Vector, Id>(
    shape: &Shape<V>,
    motion: V,
    targets: impl IntoIterator<Item = (Shape<V>, Id)>,
) -> Option<CastHit<V, Id>> {
    let mut best: Option<CastHit<V, Id>> = None;
    for (target, id) in targets {
        if let Some(hit) = cast_shape(shape, motion, &target)
            && best.as_ref().is_none_or(|b| hit.precedes(b, motion))
        {
            best = Some(hit.with_id(id));
        }
    }
    best
}

/// Settings of [`move_and_slide`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "plugin", derive(bevy::reflect::Reflect))]
pub struct SlideConfig<V: Vector> {
    /// The gap kept between the shape and what it hits, measured along the hit's normal
    /// (in world units: a fraction of the smallest collider, such as `0.01` for
    /// unit-sized tiles). It keeps a shape sliding on a floor off the floor's seams.
    pub skin: f32,
    /// The most casts per call (each hit costs one; 4 covers a corner in 3D).
    pub max_iterations: usize,
    /// The up direction, for ground detection (need not be unit length).
    pub up: V,
    /// The steepest slope, in radians from `up`, that counts as ground.
    pub max_slope: f32,
}

impl<V: Vector> SlideConfig<V> {
    /// The settings with `up`: a skin of `0.01`, 4 iterations, and slopes up to 45° as
    /// ground.
    pub fn new(up: V) -> Self {
        Self {
            skin: 0.01,
            max_iterations: 4,
            up,
            max_slope: core::f32::consts::FRAC_PI_4,
        }
    }
}

/// What [`move_and_slide`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct SlideOutcome<V: Vector, Id> {
    /// The displacement done (to add to the shape's position).
    pub displacement: V,
    /// Every hit, in order, with its time as a fraction of the cast that found it.
    pub hits: SmallVec<[CastHit<V, Id>; 4]>,
    /// Whether some hit's normal is within `max_slope` of `up`: the shape stands on
    /// ground (a game applies gravity in the motion so that standing still probes it).
    pub on_ground: bool,
}

/// Moves `shape` by `motion` against the world seen through `cast`, sliding along what it
/// hits.
///
/// `cast(shape, motion)` returns the first hit of `shape` moved along `motion` (a
/// fraction of it in `[0, 1]`, a unit normal pointing back towards the shape, a point, an
/// id): for a list of shapes, [`cast_shapes`]; a broad phase should keep its rules
/// (only what the motion drives deeper blocks; simultaneous hits by
/// [`CastHit::precedes`]).
///
/// Invalid input (an invalid shape, a non-finite motion, a negative or non-finite skin)
/// does not move the shape.
//
// The loop, up to `max_iterations` casts:
// - nothing left to move (`|remaining|` below a millionth of the motion): done;
// - no hit: move the rest, done;
// - a hit at fraction `t` with normal `n`, approached at `cos = -n · dir`: move up to it,
//   less `skin / cos` along the motion so that the gap along `n` is the skin (not at all
//   when already within the skin, or when `cos` is so small that the back-off exceeds
//   the travel, or when the step is under a thousandth of the skin: rounding, which
//   would let a shape at rest creep); the rest of the motion loses its component into
//   `n`;
// - the clipped motion runs into the plane of an earlier hit of this call (an inner
//   corner): in 3D it follows the crease between the two planes, if that enters no
//   earlier plane; otherwise (and always in 2D) it stops. A corner is therefore reached
//   in one call and the next calls stay put: no jitter between the walls.
// Each move stops before the first hit, so the shape never enters what it was outside of.
pub fn move_and_slide<V: Vector, Id, F>(
    shape: &Shape<V>,
    motion: V,
    config: &SlideConfig<V>,
    mut cast: F,
) -> SlideOutcome<V, Id>
where
    F: FnMut(&Shape<V>, V) -> Option<CastHit<V, Id>>,
{
    let mut outcome = SlideOutcome {
        displacement: V::ZERO,
        hits: SmallVec::new(),
        on_ground: false,
    };
    let skin = config.skin;
    if !shape.is_valid() || !motion.is_finite() || !skin.is_finite() || skin < 0.0 {
        return outcome;
    }
    let up_len = length(config.up);
    let up = if up_len > 0.0 && up_len.is_finite() {
        config.up / up_len
    } else {
        V::ZERO
    };
    let ground_cos = crate::geometry::cos(config.max_slope);
    let min_len = length(motion) * 1e-6;
    let mut remaining = motion;
    let mut planes: SmallVec<[V; 4]> = SmallVec::new();
    for _ in 0..config.max_iterations {
        let len = length(remaining);
        if len <= min_len || len == 0.0 || !len.is_finite() {
            break;
        }
        let at = shape.translated(outcome.displacement);
        let Some(hit) = cast(&at, remaining) else {
            outcome.displacement += remaining;
            break;
        };
        let dir = remaining / len;
        let n = hit.normal;
        let step = step_to_hit(hit.t, n, dir, len, skin);
        outcome.displacement += dir * step;
        remaining = clip_to_planes(dir * (len - step), n, &planes);
        planes.push(n);
        if up != V::ZERO && n.dot(up) >= ground_cos {
            outcome.on_ground = true;
        }
        outcome.hits.push(hit);
    }
    outcome
}

/// How far a slide moves along the unit direction `dir` of a motion `len` long that hits
/// a surface of normal `n` at fraction `time`: up to the hit, less `skin / cos` along the
/// motion so that the gap along `n` is the skin (nothing when already within the skin,
/// or when `cos` is so small that the back-off exceeds the travel). A step far below the
/// skin is rounding (a gap a few ulps off the skin): dropping it keeps a shape at rest
/// from creeping by an ulp at every call.
#[inline]
pub(crate) fn step_to_hit<V: Vector>(time: f32, n: V, dir: V, len: f32, skin: f32) -> f32 {
    let cos = -n.dot(dir);
    let travel = time.clamp(0.0, 1.0) * len;
    let back = if cos > 0.0 { skin / cos } else { skin };
    let step = (travel - back).max(0.0);
    if step < 1e-3 * skin { 0.0 } else { step }
}

/// `rest` less its component into the plane of `n`; if that runs into one of the earlier
/// `planes` (an inner corner), the crease between them instead ([`crease`]).
#[inline]
pub(crate) fn clip_to_planes<V: Vector>(rest: V, n: V, planes: &[V]) -> V {
    let clipped = clip(rest, n);
    if planes.iter().any(|&p| clipped.dot(p) < 0.0) {
        crease(rest, n, planes)
    } else {
        clipped
    }
}

/// The length of `v`, without the overflow of its squared length: finite for every
/// finite vector (a motion of 1e30 has length 1e30, not infinity).
#[inline]
pub(crate) fn length<V: Vector>(v: V) -> f32 {
    let largest = v.abs().max_element();
    if largest == 0.0 || !largest.is_finite() {
        return largest;
    }
    let unit = v / largest;
    largest * unit.dot(unit).sqrt()
}

/// `motion` less its component into the plane of normal `n` (unchanged if it leaves it).
#[inline]
pub(crate) fn clip<V: Vector>(motion: V, n: V) -> V {
    let into = motion.dot(n);
    if into < 0.0 {
        motion - n * into
    } else {
        motion
    }
}

/// `motion` along the crease between the plane of `n` and an earlier plane it would
/// enter once clipped, or zero where no such crease is free (2D, parallel planes, a
/// third plane in the way).
pub(crate) fn crease<V: Vector>(motion: V, n: V, planes: &[V]) -> V {
    if V::DIM < 3 {
        return V::ZERO;
    }
    for &p in planes {
        let c = p.extend_to_3d().cross(n.extend_to_3d());
        let c_len = c.length();
        if c_len <= 1e-6 {
            continue;
        }
        let d = V::truncate_from_3d(c / c_len);
        let along = d * motion.dot(d);
        if planes.iter().chain([&n]).all(|&q| along.dot(q) >= -1e-6) {
            return along;
        }
    }
    V::ZERO
}
