//! Building values, and the oracle: `f64` geometry from the definitions, first and last times of overlap found by sampling the motion.

use super::*;
use bevy_aabb_tree::geometry::Shape;

// ---------------------------------------------------------------------------------------
// Building values
// ---------------------------------------------------------------------------------------

/// The unit vector along `+x`, the normal of most hand-computed contacts.
pub(crate) const PLUS_X: [f32; 3] = [1.0, 0.0, 0.0];

/// The unit vector along `-x`.
pub(crate) const MINUS_X: [f32; 3] = [-1.0, 0.0, 0.0];

/// The first `V::DIM` components of `a`.
pub(crate) fn vec<V: Vector>(a: [f32; 3]) -> V {
    V::truncate_from_3d(Vec3::from_array(a))
}

pub(crate) fn bbox<V: Vector>(min: [f32; 3], max: [f32; 3]) -> BoundingBox<V> {
    BoundingBox::from_min_max(vec(min), vec(max))
}

pub(crate) fn ball<V: Vector>(center: [f32; 3], radius: f32) -> Ball<V> {
    Ball::new(vec(center), radius)
}

/// A box as a [`Shape`], for the shape casts, contacts and the character.
pub(crate) fn box_shape<V: Vector>(min: [f32; 3], max: [f32; 3]) -> Shape<V> {
    Shape::Box(bbox(min, max))
}

/// A ball as a [`Shape`].
pub(crate) fn ball_shape<V: Vector>(center: [f32; 3], radius: f32) -> Shape<V> {
    Shape::Ball(ball(center, radius))
}

pub(crate) fn ray<V: Vector>(origin: [f32; 3], direction: [f32; 3]) -> Ray<V> {
    Ray::new(vec(origin), vec(direction))
}

pub(crate) fn add3(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub(crate) fn sub3(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `Some((axis, sign))` when `n` is exactly `±1` on one axis and 0 on the others.
pub(crate) fn unit_axis<V: Vector>(n: V) -> Option<(usize, f32)> {
    let nonzero: Vec<usize> = (0..V::DIM).filter(|&i| n.axis(i) != 0.0).collect();
    match nonzero[..] {
        [i] if n.axis(i).abs() == 1.0 => Some((i, n.axis(i))),
        _ => None,
    }
}

pub(crate) fn max_abs_diff<V: Vector>(a: V, b: V) -> f32 {
    (a - b).abs().max_element()
}

// ---------------------------------------------------------------------------------------
// The oracle: f64 geometry from the definitions
// ---------------------------------------------------------------------------------------

/// A point or displacement in `f64` (components past `DIM` are 0).
pub(crate) type F = [f64; 3];

pub(crate) fn f64s<V: Vector>(x: V) -> F {
    let mut r = [0.0; 3];
    for (i, c) in r.iter_mut().enumerate().take(V::DIM) {
        *c = f64::from(x.axis(i));
    }
    r
}

/// `p + t d`.
pub(crate) fn along(p: &F, d: &F, t: f64) -> F {
    [p[0] + d[0] * t, p[1] + d[1] * t, p[2] + d[2] * t]
}

pub(crate) fn minus(a: &F, b: &F) -> F {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub(crate) fn length(a: &F) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

/// A box as one interval per axis.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Iv {
    pub(crate) n: usize,
    pub(crate) lo: F,
    pub(crate) hi: F,
}

impl Iv {
    pub(crate) fn of<V: Vector>(b: &BoundingBox<V>) -> Self {
        Self {
            n: V::DIM,
            lo: f64s(b.min),
            hi: f64s(b.max),
        }
    }

    /// The box around a ball (center ± radius on every axis).
    pub(crate) fn around_ball(n: usize, c: &F, r: f64) -> Self {
        let mut b = Self { n, lo: *c, hi: *c };
        for i in 0..n {
            b.lo[i] -= r;
            b.hi[i] += r;
        }
        b
    }

    /// The box moved by `t d`.
    pub(crate) fn at(&self, d: &F, t: f64) -> Self {
        let mut b = *self;
        for ((lo, hi), di) in b.lo.iter_mut().zip(&mut b.hi).zip(d).take(self.n) {
            *lo += di * t;
            *hi += di * t;
        }
        b
    }

    /// The plain test: the intervals overlap on every axis (touching included).
    pub(crate) fn overlaps(&self, o: &Self) -> bool {
        (0..self.n).all(|i| self.lo[i] <= o.hi[i] && o.lo[i] <= self.hi[i])
    }

    /// The largest gap between the two boxes' intervals over the axes: positive when apart
    /// (by that much along some axis), 0 when touching, negative when overlapping.
    pub(crate) fn gap(&self, o: &Self) -> f64 {
        (0..self.n)
            .map(|i| (self.lo[i] - o.hi[i]).max(o.lo[i] - self.hi[i]))
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// The point test of seed 004: inside the interval on every axis (faces included).
    pub(crate) fn contains(&self, p: &F) -> bool {
        (0..self.n).all(|i| self.lo[i] <= p[i] && p[i] <= self.hi[i])
    }

    /// Signed: how far `p` is outside the box along the worst axis (negative inside).
    pub(crate) fn point_gap(&self, p: &F) -> f64 {
        (0..self.n)
            .map(|i| (self.lo[i] - p[i]).max(p[i] - self.hi[i]))
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// The point of the box closest to `p`, one axis at a time.
    pub(crate) fn closest(&self, p: &F) -> F {
        let mut q = *p;
        for i in 0..self.n {
            if p[i] < self.lo[i] {
                q[i] = self.lo[i];
            } else if p[i] > self.hi[i] {
                q[i] = self.hi[i];
            }
        }
        q
    }

    /// Euclidean distance from `p` to the box (0 inside).
    pub(crate) fn dist(&self, p: &F) -> f64 {
        length(&minus(&self.closest(p), p))
    }

    /// Its square, without the square root.
    pub(crate) fn dist2(&self, p: &F) -> f64 {
        let d = minus(&self.closest(p), p);
        d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
    }
}

/// Samples per motion (plus the extra times).
pub(crate) const STEPS: usize = 2000;

/// How precisely a check is judged.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tol {
    /// Exact arithmetic: no rejection, and times must match exactly (up to `time`).
    pub(crate) exact: bool,
    /// A case is clear when the deepest overlap is below `-clear` or the smallest gap
    /// above `clear`.
    pub(crate) clear: f64,
    /// Slack on times, on top of the sampling step (in exact mode, instead of it).
    pub(crate) time: f64,
    /// How far from touching a shape may be at a reported first or last contact.
    pub(crate) contact: f64,
}

impl Tol {
    /// The gaps that count as touching at a reported contact.
    pub(crate) fn touching(&self) -> (f64, f64) {
        (-self.contact, self.contact)
    }
}

pub(crate) const EXACT: Tol = Tol {
    exact: true,
    clear: 0.0,
    time: 1e-9,
    contact: 1e-9,
};

/// Floats, piecewise-linear gaps (boxes, rays against boxes).
pub(crate) const FLAT: Tol = Tol {
    exact: false,
    clear: 1e-3,
    time: 1e-5,
    contact: 1e-4,
};

/// Floats, round shapes (quadratics and conservative advancement are less precise near
/// grazing contact, hence the wider band of unclear cases).
pub(crate) const ROUND: Tol = Tol {
    exact: false,
    clear: 1e-2,
    time: 1e-4,
    contact: 1e-3,
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Verdict {
    Hit,
    Miss,
    Unclear,
}

/// The motion sampled over `[0, t_end]`: the first and last sampled times at which the
/// shapes overlap, and the smallest gap seen.
pub(crate) struct Samples {
    pub(crate) first: Option<f64>,
    pub(crate) last: Option<f64>,
    pub(crate) step: f64,
    pub(crate) min_gap: f64,
}

impl Samples {
    /// `probe(t)` gives the plain overlap test and the signed gap at `t`; the gap must be
    /// convex in `t` (true of every motion here), so ternary search finds its minimum.
    pub(crate) fn new(t_end: f64, extra: &[f64], probe: impl Fn(f64) -> (bool, f64)) -> Self {
        let (mut lo, mut hi) = (0.0, t_end);
        for _ in 0..100 {
            let (m1, m2) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
            if probe(m1).1 <= probe(m2).1 {
                hi = m2;
            } else {
                lo = m1;
            }
        }
        let grid = (0..STEPS).map(|k| t_end * k as f64 / STEPS as f64);
        let extra = extra.iter().copied().filter(|t| (0.0..=t_end).contains(t));
        let mut samples = Self {
            first: None,
            last: None,
            step: t_end / STEPS as f64,
            min_gap: f64::INFINITY,
        };
        for t in grid.chain([t_end, (lo + hi) / 2.0]).chain(extra) {
            let (overlapping, gap) = probe(t);
            assert_eq!(
                overlapping,
                gap <= 0.0,
                "oracle inconsistent at t = {t}: gap {gap}"
            );
            samples.min_gap = samples.min_gap.min(gap);
            if overlapping {
                samples.first = Some(samples.first.map_or(t, |f| f.min(t)));
                samples.last = Some(samples.last.map_or(t, |l| l.max(t)));
            }
        }
        samples
    }

    pub(crate) fn verdict(&self, tol: Tol) -> Verdict {
        if tol.exact {
            if self.min_gap <= 0.0 {
                Verdict::Hit
            } else {
                Verdict::Miss
            }
        } else if self.min_gap < -tol.clear {
            Verdict::Hit
        } else if self.min_gap > tol.clear {
            Verdict::Miss
        } else {
            Verdict::Unclear
        }
    }

    pub(crate) fn first(&self) -> f64 {
        self.first.expect("an overlapping sample")
    }

    pub(crate) fn last(&self) -> f64 {
        self.last.expect("an overlapping sample")
    }

    /// How far a time returned by the crate may be from the first/last overlapping sample.
    pub(crate) fn slack(&self, tol: Tol) -> f64 {
        if tol.exact {
            tol.time
        } else {
            self.step + tol.time
        }
    }
}

/// The times (any sign; the sampler keeps those in range) at which, on some axis, the
/// moving interval `[lo + w t, hi + w t]` has an end meeting the opposite end of the fixed
/// interval `[flo, fhi]`.
pub(crate) fn face_times(n: usize, lo: &F, hi: &F, w: &F, flo: &F, fhi: &F) -> Vec<f64> {
    let mut times = Vec::new();
    for i in 0..n {
        if w[i] != 0.0 {
            times.push((flo[i] - hi[i]) / w[i]);
            times.push((fhi[i] - lo[i]) / w[i]);
        }
    }
    times
}
