//! Geometry written for the tests alone, in `f64` and 3D (2D shapes have z = 0, which
//! leaves every distance exact): the oracles of the ray, cast and overlap queries.
//! Nothing here calls the crate: rays use their own slab test and quadratic, casts a
//! first-contact search on the distance between the moving box or ball and the target,
//! overlaps closest-point distances. Part of the tests' kit.
#![allow(dead_code)]

use glam::DVec3;

/// A target shape: a box or a ball.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Solid {
    Box { min: DVec3, max: DVec3 },
    Ball { center: DVec3, radius: f64 },
}

impl Solid {
    /// The shape with every surface moved out by `eps` (a box's corners stay square: a
    /// superset of the rounded box, which is what "possibly touched" needs).
    pub fn grown(self, eps: f64) -> Self {
        match self {
            Solid::Box { min, max } => Solid::Box {
                min: min - eps,
                max: max + eps,
            },
            Solid::Ball { center, radius } => Solid::Ball {
                center,
                radius: radius + eps,
            },
        }
    }

    /// The shape with every surface moved in by `eps` (down to a point or a flat box):
    /// what a query must certainly reach.
    pub fn shrunk(self, eps: f64) -> Self {
        match self {
            Solid::Box { min, max } => {
                let center = (min + max) * 0.5;
                let half = ((max - min) * 0.5 - DVec3::splat(eps)).max(DVec3::ZERO);
                Solid::Box {
                    min: center - half,
                    max: center + half,
                }
            }
            Solid::Ball { center, radius } => Solid::Ball {
                center,
                radius: (radius - eps).max(0.0),
            },
        }
    }

    /// The point of the shape closest to `p`.
    pub fn closest_point(self, p: DVec3) -> DVec3 {
        match self {
            Solid::Box { min, max } => p.clamp(min, max),
            Solid::Ball { center, radius } => {
                let d = p - center;
                let len = d.length();
                if len <= radius {
                    p
                } else {
                    center + d * (radius / len)
                }
            }
        }
    }

    /// The box the shape is grown from: a box itself, a ball's center.
    pub fn inner_box(self) -> (DVec3, DVec3) {
        match self {
            Solid::Box { min, max } => (min, max),
            Solid::Ball { center, .. } => (center, center),
        }
    }

    /// Distance from `p` to the shape (0 inside).
    pub fn distance_to_point(self, p: DVec3) -> f64 {
        self.closest_point(p).distance(p)
    }

    /// Distance from the ball of `radius` around `center` to the shape (0 when they
    /// overlap): the center's distance less the radius.
    pub fn distance_to_ball(self, center: DVec3, radius: f64) -> f64 {
        (self.distance_to_point(center) - radius).max(0.0)
    }

    /// Distance from the box `center ± half` to the shape (0 when they overlap).
    pub fn distance_to_box(self, center: DVec3, half: DVec3) -> f64 {
        match self {
            Solid::Box { min, max } => {
                // Per axis the gap between the two intervals; the boxes' distance is the
                // length of the gap vector.
                let gap = (min - (center + half))
                    .max((center - half) - max)
                    .max(DVec3::ZERO);
                gap.length()
            }
            Solid::Ball { center: c, radius } => {
                let q = c.clamp(center - half, center + half);
                (q.distance(c) - radius).max(0.0)
            }
        }
    }
}

/// First `t` in `[0, max_t]` at which `o + t d` lies in the shape, by a slab test (boxes)
/// or the quadratic `|o + t d - c|^2 = r^2` (balls).
pub fn ray_entry(o: DVec3, d: DVec3, s: Solid, max_t: f64) -> Option<f64> {
    if max_t.is_nan() || max_t < 0.0 {
        return None;
    }
    match s {
        Solid::Box { min, max } => {
            let (mut lo, mut hi) = (0.0f64, max_t);
            for i in 0..3 {
                if d[i] == 0.0 {
                    if o[i] < min[i] || o[i] > max[i] {
                        return None;
                    }
                } else {
                    let a = (min[i] - o[i]) / d[i];
                    let b = (max[i] - o[i]) / d[i];
                    lo = lo.max(a.min(b));
                    hi = hi.min(a.max(b));
                }
            }
            (lo <= hi).then_some(lo)
        }
        Solid::Ball { center, radius } => {
            let m = o - center;
            let c = m.length_squared() - radius * radius;
            if c <= 0.0 {
                return Some(0.0);
            }
            let a = d.length_squared();
            if a == 0.0 {
                return None;
            }
            let b = m.dot(d);
            let disc = b * b - a * c;
            if disc < 0.0 || b >= 0.0 {
                return None;
            }
            // The smaller root, in the form that does not cancel.
            let t = c / (-b + disc.sqrt());
            (t <= max_t).then_some(t)
        }
    }
}

/// First `t` in `[0, max_t]` (`max_t` may be infinite) at which the box `c + t d ± h`
/// comes within `gap` of the shape, or `None`: [`first_contact_by`] on the box's distance.
pub fn first_contact(c: DVec3, h: DVec3, d: DVec3, s: Solid, max_t: f64, gap: f64) -> Option<f64> {
    first_contact_by(|t| s.distance_to_box(c + d * t, h), d.length(), max_t, gap)
}

/// First `t` in `[0, max_t]` (`max_t` may be infinite) at which the ball of radius `r`
/// around `c + t d` comes within `gap` of the shape, or `None`: [`first_contact_by`] on the
/// ball's distance.
pub fn first_contact_ball(
    c: DVec3,
    r: f64,
    d: DVec3,
    s: Solid,
    max_t: f64,
    gap: f64,
) -> Option<f64> {
    first_contact_by(|t| s.distance_to_ball(c + d * t, r), d.length(), max_t, gap)
}

/// First `t` in `[0, max_t]` (`max_t` may be infinite) at which `dist(t)`, the distance
/// between a convex shape moving along a line at `speed` and a convex target, is within
/// `gap`, or `None`.
///
/// That distance is a convex function of `t` (the distance from a point moving along a
/// line to the two shapes' Minkowski difference). So: with an unbounded range, double the
/// end until the distance rises there (beyond, it only rises); find the minimum by
/// golden-section search; when that minimum is within `gap`, the first crossing lies
/// before it, where the distance only falls: bisection.
pub fn first_contact_by(
    dist: impl Fn(f64) -> f64,
    speed: f64,
    max_t: f64,
    gap: f64,
) -> Option<f64> {
    if max_t.is_nan() || max_t < 0.0 {
        return None;
    }
    if dist(0.0) <= gap {
        return Some(0.0);
    }
    if speed == 0.0 {
        return None;
    }
    // Start at the time it takes to move one unit.
    let mut end = (1.0 / speed).min(max_t);
    while end < max_t && dist(end) <= dist(end * 0.5) {
        end = (end * 2.0).min(max_t);
        assert!(end.is_finite(), "unbounded contact search");
    }
    let phi = (5f64.sqrt() - 1.0) * 0.5;
    let (mut lo, mut hi) = (0.0f64, end);
    for _ in 0..90 {
        let m1 = hi - (hi - lo) * phi;
        let m2 = lo + (hi - lo) * phi;
        if dist(m1) <= dist(m2) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    let t_min = [lo, hi, end]
        .into_iter()
        .min_by(|a, b| dist(*a).total_cmp(&dist(*b)))
        .unwrap();
    if dist(t_min) > gap {
        return None;
    }
    let (mut lo, mut hi) = (0.0f64, t_min);
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        if dist(mid) <= gap {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The outward unit normals a surface of `s` may have at `p` (a point on it, within
/// `eps`): a ball's radial direction; a box's faces that `p` lies on. The contact normals
/// of `s` with the point `p` (a box of size zero), less a zero one.
pub fn surface_normals(s: Solid, p: DVec3, eps: f64) -> Vec<DVec3> {
    let mut out = contact_normals(s, Solid::Box { min: p, max: p }, eps);
    out.retain(|n| *n != DVec3::ZERO);
    out
}

/// The contact normals from `a` towards `b`, two shapes that touch (within `eps`): a set,
/// any of which is right. Two boxes: the faces of `a` that `b` touches ([`touching_faces`],
/// several at an edge or a corner). A ball with anything: one normal, the direction from
/// `a`'s inner box to `b`'s ([`box_gap`], a ball's inner box being its center), zero
/// when they meet (coinciding centers, a center in the box).
pub fn contact_normals(a: Solid, b: Solid, eps: f64) -> Vec<DVec3> {
    match (a, b) {
        (Solid::Box { min, max }, Solid::Box { min: lo, max: hi }) => {
            touching_faces(min, max, lo, hi, eps)
        }
        _ => {
            let ((amin, amax), (bmin, bmax)) = (a.inner_box(), b.inner_box());
            vec![box_gap(amin, amax, bmin, bmax).normalize_or_zero()]
        }
    }
}

/// The faces of the box `amin..amax` (outward unit normals) that the box `bmin..bmax`
/// touches from outside, within `eps`: those where `b`'s opposite face is that near. An
/// axis on which both boxes are flat in the same plane (2D) has no face.
pub fn touching_faces(amin: DVec3, amax: DVec3, bmin: DVec3, bmax: DVec3, eps: f64) -> Vec<DVec3> {
    let mut out = Vec::new();
    for i in 0..3 {
        if amin[i] == amax[i] && bmin[i] == bmax[i] && bmin[i] == amin[i] {
            continue;
        }
        let mut n = DVec3::ZERO;
        if (bmin[i] - amax[i]).abs() <= eps {
            n[i] = 1.0;
            out.push(n);
        }
        if (amin[i] - bmax[i]).abs() <= eps {
            n[i] = -1.0;
            out.push(n);
        }
    }
    out
}

/// The shortest vector from the box `amin..amax` to the box `bmin..bmax`: per axis the
/// gap between the two intervals, signed towards `b` (zero where they overlap). The
/// contact normal of two rounded boxes (boxes grown by a radius: balls, capsules) is its
/// direction between their inner boxes.
pub fn box_gap(amin: DVec3, amax: DVec3, bmin: DVec3, bmax: DVec3) -> DVec3 {
    let mut d = DVec3::ZERO;
    for i in 0..3 {
        if bmin[i] > amax[i] {
            d[i] = bmin[i] - amax[i];
        } else if amin[i] > bmax[i] {
            d[i] = bmax[i] - amin[i];
        }
    }
    d
}

/// A direction of random length: about one in twenty zero, one in twenty along an axis,
/// the rest random with a length spread over `1e-3 .. 1e4` (tiny, about one, huge).
pub fn random_direction(unit: &mut impl FnMut() -> f64, dims: usize) -> DVec3 {
    let pick = unit();
    if pick < 0.05 {
        return DVec3::ZERO;
    }
    let len = 10f64.powf(-3.0 + 7.0 * unit());
    if pick < 0.1 {
        let mut d = DVec3::ZERO;
        let axis = ((unit() * dims as f64) as usize).min(dims - 1);
        d[axis] = if unit() < 0.5 { -len } else { len };
        return d;
    }
    loop {
        let mut d = DVec3::new(unit() * 2.0 - 1.0, unit() * 2.0 - 1.0, unit() * 2.0 - 1.0);
        if dims == 2 {
            d.z = 0.0;
        }
        if d.length() > 0.1 && d.length() <= 1.0 {
            return d.normalize() * len;
        }
    }
}

/// A cast range for a direction of length `speed`: about one in six infinite, one in
/// twenty zero, else one that covers a travel of up to `reach` units.
pub fn random_max_t(unit: &mut impl FnMut() -> f64, speed: f64, reach: f64) -> f64 {
    let pick = unit();
    if pick < 1.0 / 6.0 {
        f64::INFINITY
    } else if pick < 1.0 / 6.0 + 0.05 {
        0.0
    } else if speed == 0.0 {
        unit() * 10.0
    } else {
        unit() * reach / speed
    }
}
