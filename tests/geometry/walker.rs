//! The character tests' world and walker, shared by `character` (boxes and balls) and
//! `character_capsule` (capsules and balls on steps, edges, slopes).
//!
//! The world is a list of shapes cast one by one (the crate's `cast_shape` for a single
//! target) with the one-way rule applied per target. The walker steps a character as a
//! game would (velocity across the ground from input, gravity along `up`, the velocity
//! clipped by each move) and checks after every move, independently, that it is inside
//! none of the shapes it must not enter: penetration is measured in `f64` from the
//! shapes' definitions.

use bevy_aabb_tree::Vector;
use bevy_aabb_tree::geometry::{
    CastHit, CharacterConfig, CharacterMove, CharacterWorld, Shape, cast_shape, move_character,
    one_way_blocks, one_way_push,
};

use super::oracle::vec;

/// Up: `+y`.
pub(super) fn up<V: Vector>() -> V {
    vec([0.0, 1.0, 0.0])
}

/// A shape of the world.
pub(super) struct Target<V: Vector> {
    pub(super) shape: Shape<V>,
    pub(super) one_way: Option<V>,
    pub(super) character: bool,
}

/// A list of shapes, cast one by one.
pub(super) struct World<V: Vector> {
    pub(super) targets: Vec<Target<V>>,
}

impl<V: Vector> World<V> {
    pub(super) fn new(shapes: impl IntoIterator<Item = Shape<V>>) -> Self {
        Self {
            targets: shapes
                .into_iter()
                .map(|shape| Target {
                    shape,
                    one_way: None,
                    character: false,
                })
                .collect(),
        }
    }

    /// A world of shapes, each one-way (with its normal) or not; none a character.
    pub(super) fn with_one_way(targets: impl IntoIterator<Item = (Shape<V>, Option<V>)>) -> Self {
        let mut world = Self::new([]);
        for (shape, one_way) in targets {
            world.push(shape, one_way, false);
        }
        world
    }

    pub(super) fn push(&mut self, shape: Shape<V>, one_way: Option<V>, character: bool) -> usize {
        self.targets.push(Target {
            shape,
            one_way,
            character,
        });
        self.targets.len() - 1
    }
}

impl<V: Vector> CharacterWorld<V> for World<V> {
    type Id = usize;

    fn cast(&mut self, shape: &Shape<V>, motion: V) -> Option<CastHit<V, usize>> {
        let mut best: Option<CastHit<V, usize>> = None;
        for (i, t) in self.targets.iter().enumerate() {
            if t.one_way
                .is_some_and(|n| !one_way_blocks(shape, motion, &t.shape, n))
            {
                continue;
            }
            if let Some(hit) = cast_shape(shape, motion, &t.shape)
                && best.as_ref().is_none_or(|b| hit.precedes(b, motion))
            {
                best = Some(hit.with_id(i));
            }
        }
        best
    }

    fn push_out(&mut self, shape: &Shape<V>) -> V {
        let (mut hi, mut lo) = (V::ZERO, V::ZERO);
        for t in &self.targets {
            let push = match t.one_way {
                Some(n) => one_way_push(shape, &t.shape, n),
                None => t
                    .shape
                    .contact(shape)
                    .map_or(V::ZERO, |c| c.normal * c.depth),
            };
            hi = hi.max(push);
            lo = lo.min(push);
        }
        hi + lo
    }

    fn can_stand_on(&mut self, id: usize) -> bool {
        !self.targets[id].character
    }
}

/// How deep two shapes overlap, from their definitions in `f64` (0 when apart).
pub(super) fn penetration<V: Vector>(a: &Shape<V>, b: &Shape<V>) -> f64 {
    let coords = |v: V| (0..V::DIM).map(move |i| f64::from(v.axis(i)));
    match (a, b) {
        (Shape::Box(x), Shape::Box(y)) => coords(x.min)
            .zip(coords(x.max))
            .zip(coords(y.min).zip(coords(y.max)))
            .map(|((a0, a1), (b0, b1))| a1.min(b1) - a0.max(b0))
            .fold(f64::INFINITY, f64::min)
            .max(0.0),
        (Shape::Ball(s), Shape::Box(x)) | (Shape::Box(x), Shape::Ball(s)) => {
            let c: Vec<f64> = coords(s.center).collect();
            let d2: f64 = coords(x.min)
                .zip(coords(x.max))
                .zip(&c)
                .map(|((lo, hi), &p)| (p - p.clamp(lo, hi)).powi(2))
                .sum();
            // Only the outside case matters here: a ball's center never enters a box.
            (f64::from(s.radius) - d2.sqrt()).max(0.0)
        }
        (Shape::Ball(s), Shape::Ball(t)) => {
            let d2: f64 = coords(s.center)
                .zip(coords(t.center))
                .map(|(p, q)| (p - q).powi(2))
                .sum();
            (f64::from(s.radius + t.radius) - d2.sqrt()).max(0.0)
        }
        _ => rounded_penetration(a, b),
    }
}

/// How deep a rounded character (capsule or ball) is inside a box or a ball, in `f64`:
/// the two radii less the distance from the target's inner box (the box itself, or the
/// ball's center) to the character's segment, found by sampling the segment finely (the
/// distance is convex along it, so the samples' minimum is within the step of it).
fn rounded_penetration<V: Vector>(c: &Shape<V>, b: &Shape<V>) -> f64 {
    let (c, b) = (c.to_rounded(), b.to_rounded());
    let coords = |v: V| -> Vec<f64> { (0..V::DIM).map(|i| f64::from(v.axis(i))).collect() };
    let (center, half) = (coords(c.center), coords(c.half_extents));
    let inner = b.inner_box();
    let (lo, hi) = (coords(inner.min), coords(inner.max));
    let samples = if half.iter().all(|&h| h == 0.0) {
        0
    } else {
        2000
    };
    let mut nearest = f64::INFINITY;
    for k in 0..=samples {
        let s = if samples == 0 {
            0.0
        } else {
            -1.0 + 2.0 * f64::from(k) / f64::from(samples)
        };
        let d2: f64 = (0..V::DIM)
            .map(|i| {
                let p = center[i] + half[i] * s;
                (p - p.clamp(lo[i], hi[i])).powi(2)
            })
            .sum();
        nearest = nearest.min(d2.sqrt());
    }
    (f64::from(c.radius) + f64::from(b.radius) - nearest).max(0.0)
}

pub(super) const DT: f32 = 1.0 / 60.0;
pub(super) const GRAVITY: f32 = 20.0;

/// A character stepped by the tests: velocity across the ground from input, gravity
/// along `up`, the velocity clipped by each move.
pub(super) struct Walker<V: Vector> {
    pub(super) shape: Shape<V>,
    pub(super) velocity: V,
    pub(super) grounded: bool,
    pub(super) config: CharacterConfig<V>,
}

impl<V: Vector> Walker<V> {
    pub(super) fn new(shape: Shape<V>) -> Self {
        Self {
            shape,
            velocity: V::ZERO,
            grounded: false,
            config: CharacterConfig::new(up()),
        }
    }

    pub(super) fn bottom(&self) -> f32 {
        self.shape.bounding_box().min.axis(1)
    }

    pub(super) fn top(&self) -> f32 {
        self.shape.bounding_box().max.axis(1)
    }

    pub(super) fn x(&self) -> f32 {
        self.shape.center().axis(0)
    }

    /// One move by `motion` as a character in the air, its velocity and grounding left as
    /// they are: the shape moves by the displacement, and the move is returned.
    pub(super) fn shove(&mut self, world: &mut World<V>, motion: V) -> CharacterMove<V, usize> {
        let m = move_character(&self.shape, motion, false, &self.config, world);
        self.shape = self.shape.translated(m.displacement);
        m
    }

    /// One tick: `across` replaces the velocity across the ground, `jump` (when not
    /// `None`) the velocity up; then gravity; then the move.
    pub(super) fn tick(
        &mut self,
        world: &mut World<V>,
        across: V,
        jump: Option<f32>,
    ) -> CharacterMove<V, usize> {
        let u = up::<V>();
        let mut vertical = self.velocity.dot(u);
        if let Some(v) = jump {
            vertical = v;
        }
        vertical -= GRAVITY * DT;
        self.velocity = across + u * vertical;
        let m = move_character(
            &self.shape,
            self.velocity * DT,
            self.grounded,
            &self.config,
            world,
        );
        self.shape = self.shape.translated(m.displacement);
        self.velocity = m.clip_velocity(self.velocity);
        self.grounded = m.grounded;
        // Never inside what it started outside of (the one-way platforms aside).
        for t in world.targets.iter().filter(|t| t.one_way.is_none()) {
            let depth = penetration(&self.shape, &t.shape);
            assert!(
                depth < 1e-4,
                "inside {:?} by {depth}: step {} snap {} recovered {:?} hits {:?}",
                t.shape,
                m.step,
                m.snap,
                m.recovered,
                m.hits
            );
        }
        m
    }

    /// After walking from `x` 0 towards a step `h` high, `stepped` the largest step a
    /// move took: when `climbs`, on top of it past `x` 3 (within 0.02 above it), having
    /// stepped its height (within `tolerance`); else stopped before it (`x` under `stop`),
    /// on the floor, with no step taken. `what` leads every message.
    pub(super) fn assert_step_outcome(
        &self,
        what: &str,
        climbs: bool,
        h: f32,
        stepped: f32,
        tolerance: f32,
        stop: f32,
    ) {
        if climbs {
            assert!(self.x() > 3.0, "{what}: stopped at x {}", self.x());
            let above = self.bottom() - h;
            assert!(
                (0.0..0.02).contains(&above),
                "{what}: {above} above the step"
            );
            assert!(
                (stepped - h).abs() < tolerance,
                "{what}: stepped {stepped}, step {h}"
            );
        } else {
            assert!(self.x() < stop, "{what}: climbed to x {}", self.x());
            assert!(self.bottom() < 0.02, "{what}: bottom {}", self.bottom());
            assert_eq!(stepped, 0.0, "{what}");
        }
    }
}
