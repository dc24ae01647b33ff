//! The shared scene of the "uniform boxes" benchmark: N boxes of half extent 0.5 moving in
//! straight lines in a region that holds them at a fixed density, bouncing off its walls,
//! drawn from a fixed-seed generator so that every run and every side sees the same scene.
//!
//! Independent of the crate's own types: positions are plain `[f32; D]` arrays so that the
//! same scene drives this crate's tree and the peers (parry's `Bvh`, ...) bit for bit.
//!
//! Included with `#[path = ...] mod scene;` by the benchmark package's binaries and benches
//! (`bench/`) and by `tests/steady_state.rs`.

#![allow(dead_code)]

/// The scenario's 32-bit linear congruential generator.
///
/// `s = s * 1664525 + 1013904223` (wrapping), then the value is `(s >> 8) / 2^24`, which lies
/// in `[0, 1)`. The state is advanced *before* each draw.
#[derive(Clone, Debug)]
pub struct Lcg(pub u32);

impl Lcg {
    /// The scenario's seed.
    pub const SEED: u32 = 12345;

    /// A generator seeded with [`Lcg::SEED`].
    pub fn new() -> Self {
        Self(Self::SEED)
    }

    /// The next value, uniform in `[0, 1)`.
    #[inline]
    pub fn next_f32(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (self.0 >> 8) as f32 / 16_777_216.0
    }

    /// The next value, uniform in `[lo, hi)`.
    #[inline]
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next_f32()
    }
}

impl Default for Lcg {
    fn default() -> Self {
        Self::new()
    }
}

/// `N` equal boxes moving in straight lines inside a square (2D) or cube (3D) region
/// `[0, side]^D`, bouncing off its walls.
#[derive(Clone, Debug)]
pub struct Scene<const D: usize> {
    /// Half extent of every box on every axis (0.5).
    pub half: f32,
    /// Side of the region `[0, side]^D` that holds the box centers.
    pub side: f32,
    /// Box centers.
    pub centers: Vec<[f32; D]>,
    /// Box velocities (units per second).
    pub velocities: Vec<[f32; D]>,
    /// Time step (1/60 s).
    pub dt: f32,
    /// Fat-box margin (0.05): a tree stores each box enlarged by this much on every side and
    /// only updates it once the tight box leaves the stored one.
    pub margin: f32,
}

/// The scenario's constants.
impl<const D: usize> Scene<D> {
    /// Half extent of every box.
    pub const HALF: f32 = 0.5;
    /// Time step.
    pub const DT: f32 = 1.0 / 60.0;
    /// Fat-box margin.
    pub const MARGIN: f32 = 0.05;
    /// Speed scale of the "fast" variant.
    pub const FAST: f32 = 1.0;
    /// Speed scale of the "slow" variant.
    pub const SLOW: f32 = 0.1;
    /// Largest half extent of the query boxes of [`Self::query_boxes`] (an area of interest
    /// a few boxes across).
    pub const QUERY_HALF: f32 = 5.0;

    fn with_boxes(side: f32, centers: Vec<[f32; D]>, velocities: Vec<[f32; D]>) -> Self {
        Self {
            half: Self::HALF,
            side,
            centers,
            velocities,
            dt: Self::DT,
            margin: Self::MARGIN,
        }
    }

    /// Number of boxes.
    pub fn len(&self) -> usize {
        self.centers.len()
    }

    /// Whether the scene has no box.
    pub fn is_empty(&self) -> bool {
        self.centers.is_empty()
    }

    /// Minimum corner of the tight box `i`.
    #[inline]
    pub fn min(&self, i: usize) -> [f32; D] {
        self.centers[i].map(|c| c - self.half)
    }

    /// Maximum corner of the tight box `i`.
    #[inline]
    pub fn max(&self, i: usize) -> [f32; D] {
        self.centers[i].map(|c| c + self.half)
    }

    /// Minimum corner of box `i` enlarged by the fat-box margin (the box a tree stores when
    /// it (re)inserts box `i` at its current position).
    #[inline]
    pub fn fat_min(&self, i: usize) -> [f32; D] {
        self.centers[i].map(|c| c - self.half - self.margin)
    }

    /// Maximum corner of box `i` enlarged by the fat-box margin.
    #[inline]
    pub fn fat_max(&self, i: usize) -> [f32; D] {
        self.centers[i].map(|c| c + self.half + self.margin)
    }

    /// Advances every box by `velocity * dt`. A center that leaves `[0, side]` on an axis is
    /// clamped back onto the wall and that velocity component flips sign (so that it points
    /// back inside).
    pub fn step(&mut self) {
        let (dt, side) = (self.dt, self.side);
        for (c, v) in self.centers.iter_mut().zip(&mut self.velocities) {
            for k in 0..D {
                c[k] += v[k] * dt;
                if c[k] < 0.0 {
                    c[k] = 0.0;
                    v[k] = v[k].abs();
                } else if c[k] > side {
                    c[k] = side;
                    v[k] = -v[k].abs();
                }
            }
        }
    }

    /// Query boxes for the `queries` scenario (not one of the scenario document's): `max(N /
    /// 10, 1000)` cubes (squares in 2D), drawn from `lcg` in this order per box: the center's
    /// coordinates (uniform in the region), then the half extent (uniform in `[0.5,`
    /// [`Self::QUERY_HALF`]`)`). Given as `(min, max)`.
    pub fn query_boxes(&self, lcg: &mut Lcg) -> Vec<([f32; D], [f32; D])> {
        let count = (self.len() / 10).max(1000);
        (0..count)
            .map(|_| {
                let center = [(); D].map(|_| lcg.next_f32() * self.side);
                let half = lcg.range(0.5, Self::QUERY_HALF);
                (center.map(|c| c - half), center.map(|c| c + half))
            })
            .collect()
    }

    /// The scenario's rays: `max(N / 10, 1000)` rays, drawn from `lcg` in this order per ray:
    /// the origin's coordinates (uniform in the region), then the direction's components
    /// (uniform in `[-10, 10]`). Directions are not normalized: a hit at parameter `t` lies at
    /// `origin + t * dir`.
    pub fn rays(&self, lcg: &mut Lcg) -> Vec<([f32; D], [f32; D])> {
        let count = (self.len() / 10).max(1000);
        (0..count)
            .map(|_| {
                let origin = [(); D].map(|_| lcg.next_f32() * self.side);
                let dir = [(); D].map(|_| lcg.range(-10.0, 10.0));
                (origin, dir)
            })
            .collect()
    }
}

impl Scene<2> {
    /// The "uniform boxes" scene in 2D: `n` boxes with centers uniform in a square of side
    /// `2.5 * sqrt(n)`, each with a uniform random direction and a speed uniform in
    /// `[1, 5] * vs`. Random numbers come from [`Lcg::new`], drawn per box in the order
    /// x, y, direction angle (`u * 2π`), speed.
    pub fn uniform(n: usize, vs: f32) -> Self {
        Self::uniform_with_lcg(n, vs, &mut Lcg::new())
    }

    /// [`Self::uniform`] drawing from `lcg`, which is left after the last box's draws (the
    /// rays of [`Scene::rays`] continue the same stream).
    pub fn uniform_with_lcg(n: usize, vs: f32, lcg: &mut Lcg) -> Self {
        let side = 2.5 * (n as f32).sqrt();
        let mut centers = Vec::with_capacity(n);
        let mut velocities = Vec::with_capacity(n);
        for _ in 0..n {
            let x = lcg.next_f32() * side;
            let y = lcg.next_f32() * side;
            let angle = lcg.next_f32() * std::f32::consts::TAU;
            let speed = lcg.range(1.0, 5.0) * vs;
            centers.push([x, y]);
            velocities.push([angle.cos() * speed, angle.sin() * speed]);
        }
        Self::with_boxes(side, centers, velocities)
    }
}

impl Scene<3> {
    /// The "uniform boxes" scene in 3D: `n` boxes with centers uniform in a cube of side
    /// `2.32 * cbrt(n)`, each with a uniform random direction and a speed uniform in
    /// `[1, 5] * vs`. Random numbers come from [`Lcg::new`], drawn per box in the order
    /// x, y, z, azimuth, polar, speed.
    ///
    /// The direction is uniform on the unit sphere: azimuth `φ = u1 * 2π`, and the polar
    /// draw gives the direction's z component directly, `z = 2 * u2 - 1` (Archimedes'
    /// hat-box theorem), so the direction is `(r cos φ, r sin φ, z)` with `r = sqrt(1 - z²)`.
    pub fn uniform(n: usize, vs: f32) -> Self {
        Self::uniform_with_lcg(n, vs, &mut Lcg::new())
    }

    /// [`Self::uniform`] drawing from `lcg`, which is left after the last box's draws (the
    /// rays of [`Scene::rays`] continue the same stream).
    pub fn uniform_with_lcg(n: usize, vs: f32, lcg: &mut Lcg) -> Self {
        let side = 2.32 * (n as f32).cbrt();
        let mut centers = Vec::with_capacity(n);
        let mut velocities = Vec::with_capacity(n);
        for _ in 0..n {
            let x = lcg.next_f32() * side;
            let y = lcg.next_f32() * side;
            let z = lcg.next_f32() * side;
            let azimuth = lcg.next_f32() * std::f32::consts::TAU;
            let dz = 2.0 * lcg.next_f32() - 1.0;
            let speed = lcg.range(1.0, 5.0) * vs;
            let r = (1.0 - dz * dz).max(0.0).sqrt();
            centers.push([x, y, z]);
            velocities.push([
                azimuth.cos() * r * speed,
                azimuth.sin() * r * speed,
                dz * speed,
            ]);
        }
        Self::with_boxes(side, centers, velocities)
    }
}
