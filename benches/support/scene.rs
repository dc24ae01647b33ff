//! The shared scene of the "uniform boxes" benchmark: N boxes of half extent 0.5 moving in
//! straight lines in a region that holds them at a fixed density, bouncing off its walls,
//! drawn from a fixed-seed generator so that every run and every side sees the same scene.
//!
//! Independent of the crate's own types: positions are plain `[f32; D]` arrays so that the
//! same scene drives this crate's tree and the peers (parry's `Bvh`, ...) bit for bit.
//!
//! Included with `#[path = ...] mod scene;` by the benchmark package's binaries and benches
//! (`bench/`) and by `tests/tree/steady_state.rs`.

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

    /// A standard normal draw (Box–Muller on two uniform draws).
    pub fn normal(&mut self) -> f32 {
        let u1 = 1.0 - self.next_f32();
        let u2 = self.next_f32();
        (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
    }

    /// A draw log-uniform in `[lo, hi]` (one uniform draw).
    pub fn log_uniform(&mut self, lo: f32, hi: f32) -> f32 {
        lo * (hi / lo).powf(self.next_f32())
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

/// `N` boxes moving in straight lines inside a square (2D) or cube (3D) region
/// `[0, side]^D`, bouncing off its walls: equal boxes ([`Scene::uniform`]), or boxes of
/// mixed sizes in clusters or streams, some still ([`Scene::clustered`],
/// [`Scene::streams`]).
#[derive(Clone, Debug)]
pub struct Scene<const D: usize> {
    /// Half extent on every axis of every box without its own in `halves` (0.5).
    pub half: f32,
    /// Half extent of each box on every axis, when the boxes' sizes differ; empty when every
    /// box has `half`.
    pub halves: Vec<f32>,
    /// Side of the region `[0, side]^D` that holds the box centers.
    pub side: f32,
    /// Box centers.
    pub centers: Vec<[f32; D]>,
    /// Box velocities (units per second).
    pub velocities: Vec<[f32; D]>,
    /// The walls of each box, `(min, max)` of the region its center stays in, when boxes
    /// have their own; empty when every box bounces off the region's walls `[0, side]^D`.
    pub walls: Vec<([f32; D], [f32; D])>,
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
            halves: Vec::new(),
            side,
            centers,
            velocities,
            walls: Vec::new(),
            dt: Self::DT,
            margin: Self::MARGIN,
        }
    }

    /// How much wider, on each axis, the region of [`Self::sparse`] is than the uniform
    /// scene's.
    pub const SPARSE_SPREAD: f32 = 2.0;

    /// "Sparse crowd": a uniform scene (every box moving, as a crowd, a flock or an RTS's
    /// units) spread over a region [`Self::SPARSE_SPREAD`] times as wide on each axis, so
    /// that few boxes touch: the step is the moves, the refits and the walk, not the pairs.
    pub fn sparse(uniform: Self) -> Self {
        let k = Self::SPARSE_SPREAD;
        Self {
            side: uniform.side * k,
            centers: uniform.centers.iter().map(|c| c.map(|x| x * k)).collect(),
            ..uniform
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

    /// Half extent of box `i` on every axis.
    #[inline]
    pub fn half_of(&self, i: usize) -> f32 {
        self.halves.get(i).copied().unwrap_or(self.half)
    }

    /// Boxes with a non-zero velocity.
    pub fn moving_count(&self) -> usize {
        self.velocities
            .iter()
            .filter(|v| v.iter().any(|&c| c != 0.0))
            .count()
    }

    /// Minimum corner of the tight box `i`.
    #[inline]
    pub fn min(&self, i: usize) -> [f32; D] {
        let half = self.half_of(i);
        self.centers[i].map(|c| c - half)
    }

    /// Maximum corner of the tight box `i`.
    #[inline]
    pub fn max(&self, i: usize) -> [f32; D] {
        let half = self.half_of(i);
        self.centers[i].map(|c| c + half)
    }

    /// Minimum corner of box `i` enlarged by the fat-box margin (the box a tree stores when
    /// it (re)inserts box `i` at its current position).
    #[inline]
    pub fn fat_min(&self, i: usize) -> [f32; D] {
        let half = self.half_of(i);
        self.centers[i].map(|c| c - half - self.margin)
    }

    /// Maximum corner of box `i` enlarged by the fat-box margin.
    #[inline]
    pub fn fat_max(&self, i: usize) -> [f32; D] {
        let half = self.half_of(i);
        self.centers[i].map(|c| c + half + self.margin)
    }

    /// Advances every box by `velocity * dt`. A center that leaves its walls (`[0, side]`
    /// on every axis, or the box's own in `walls`) on an axis is clamped back onto the wall
    /// and that velocity component flips sign (so that it points back inside).
    pub fn step(&mut self) {
        let (dt, side) = (self.dt, self.side);
        let region = ([0.0; D], [side; D]);
        for (i, (c, v)) in self
            .centers
            .iter_mut()
            .zip(&mut self.velocities)
            .enumerate()
        {
            let (lo, hi) = self.walls.get(i).copied().unwrap_or(region);
            for k in 0..D {
                bounce_axis(&mut c[k], &mut v[k], dt, lo[k], hi[k]);
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
    /// Seed of the clustered scenes' generator (distinct from the uniform scenes').
    pub const CLUSTERED_SEED: u32 = 20_211;
    /// Boxes per cluster, on average, in [`Self::clustered`].
    pub const CLUSTER_SIZE: usize = 250;
    /// Share of the clustered scenes' boxes that move.
    pub const MOVING_SHARE: f32 = 0.3;
    /// Share of the clustered scenes' boxes that are large (sides 10 to 40).
    pub const LARGE_SHARE: f32 = 0.002;

    /// The side of the square (cube) region of the output-bound scenes: that of the
    /// uniform scene of `n` boxes.
    fn region_side(n: usize) -> f32 {
        if D == 2 {
            2.5 * (n as f32).sqrt()
        } else {
            2.32 * (n as f32).cbrt()
        }
    }

    /// The motion draw of the clustered and grid scenes: with probability `share` a
    /// velocity (a direction from one normal draw per axis, then a speed uniform in
    /// `speeds`), else zero (no further draw).
    fn maybe_moving(lcg: &mut Lcg, share: f32, (lo, hi): (f32, f32)) -> [f32; D] {
        if lcg.next_f32() >= share {
            return [0.0; D];
        }
        let dir = [(); D].map(|_| lcg.normal());
        let len = dir.iter().map(|d| d * d).sum::<f32>().sqrt().max(1e-6);
        let speed = lcg.range(lo, hi);
        dir.map(|d| d / len * speed)
    }

    /// One side of the output-bound scenes' size mix: with a draw `u <`
    /// [`Self::LARGE_SHARE`] a large box, side uniform in 10 – 40 (a second draw);
    /// otherwise a side log-uniform in 0.1 – 3.
    fn mixed_size(lcg: &mut Lcg) -> f32 {
        if lcg.next_f32() < Self::LARGE_SHARE {
            lcg.range(10.0, 40.0)
        } else {
            lcg.log_uniform(0.1, 3.0)
        }
    }

    /// The "clustered, mixed sizes" scene: `n` boxes in `n / 250` clusters (at least one)
    /// inside the region of [`Scene::uniform`] (same side for the same `n`, so the same
    /// mean density, but packed into clusters).
    ///
    /// Random numbers come from `Lcg(CLUSTERED_SEED)`. First, per cluster: the center's
    /// coordinates (uniform in the region), then its spread `σ`, log-uniform in `[2, 12]`.
    /// Then per box: the cluster (uniform), the offset from its center (one normal draw
    /// per axis, Box–Muller on two draws each, times `σ`; the center is then clamped to the
    /// box's walls: its cluster's center `± 2σ`, within the region), the size draw `u`: with `u <` [`Self::LARGE_SHARE`] a large box, side
    /// uniform in `[10, 40]` (one more draw), else a side log-uniform in `[0.1, 3]` (one more
    /// draw); then the motion draw: with probability [`Self::MOVING_SHARE`] the box moves
    /// (a direction from one normal draw per axis, then a speed uniform in `[1, 5]`), else it
    /// stays still (zero velocity, no further draw). Moving boxes bounce off their walls, so
    /// the clusters keep their shape over the steps (a swarm around its point of interest).
    pub fn clustered(n: usize) -> Self {
        let side = Self::region_side(n);
        let mut lcg = Lcg(Self::CLUSTERED_SEED);
        let clusters: Vec<([f32; D], f32)> = (0..(n / Self::CLUSTER_SIZE).max(1))
            .map(|_| {
                let center = [(); D].map(|_| lcg.next_f32() * side);
                (center, lcg.log_uniform(2.0, 12.0))
            })
            .collect();
        let mut centers = Vec::with_capacity(n);
        let mut velocities = Vec::with_capacity(n);
        let mut halves = Vec::with_capacity(n);
        let mut walls = Vec::with_capacity(n);
        for _ in 0..n {
            let k = ((lcg.next_f32() * clusters.len() as f32) as usize).min(clusters.len() - 1);
            let (center, sigma) = clusters[k];
            let lo = center.map(|c| (c - 2.0 * sigma).max(0.0));
            let hi = center.map(|c| (c + 2.0 * sigma).min(side));
            let mut at = center;
            for (a, (l, h)) in at.iter_mut().zip(lo.iter().zip(&hi)) {
                *a = (*a + sigma * lcg.normal()).clamp(*l, *h);
            }
            centers.push(at);
            walls.push((lo, hi));
            halves.push(0.5 * Self::mixed_size(&mut lcg));
            velocities.push(Self::maybe_moving(&mut lcg, Self::MOVING_SHARE, (1.0, 5.0)));
        }
        let mut scene = Self::with_boxes(side, centers, velocities);
        scene.halves = halves;
        scene.walls = walls;
        scene
    }

    /// Seed of the streams scenes' generator (distinct from the other scenes').
    pub const STREAMS_SEED: u32 = 40_423;
    /// Boxes per stream, on average, in [`Self::streams`].
    pub const STREAM_SIZE: usize = 400;
    /// Share of the streams scenes' boxes that move.
    pub const STREAM_MOVING_SHARE: f32 = 1.0 / 3.0;

    /// The "streams, mixed sizes" scene: `n` boxes in `n / 400` streams (at least one):
    /// narrow bands along one axis each, like traffic in corridors or a pattern of
    /// bullets, crossing one another; inside the region of [`Scene::uniform`] (same side for
    /// the same `n`). Unlike [`Self::clustered`]'s round clusters, each stream is long and
    /// thin, so a subtree's box holds much empty space around a band, and the boxes moving
    /// along a stream meet new neighbours ahead of them at every step.
    ///
    /// Random numbers come from `Lcg(STREAMS_SEED)`. First, per stream: its axis (uniform
    /// among the `D`), the center's coordinates (uniform in the region), its length (uniform
    /// in `[0.2, 0.6]` times the side), its width `σ` (log-uniform in `[0.3, 3]`). Then per
    /// box: the stream (uniform), the position (uniform along the stream's length, one
    /// normal draw times `σ` on each other axis, Box–Muller on two draws; clamped to the
    /// box's walls: the stream's extent along its axis, its center `± 2σ` across, within the
    /// region), the size draw `u`: with `u <` [`Self::LARGE_SHARE`] a large box, side
    /// uniform in `[10, 40]` (one more draw), else a side log-uniform in `[0.1, 3]` (one
    /// more draw); then the motion draw: with probability [`Self::STREAM_MOVING_SHARE`] the
    /// box moves along the stream's axis, either way, at a speed uniform in `[1, 5]` (one
    /// draw, signed by the next), drifting across at a tenth of that (one normal draw per
    /// other axis), else it stays still. Moving boxes bounce off their walls, so they run
    /// up and down their stream.
    pub fn streams(n: usize) -> Self {
        let side = Self::region_side(n);
        let mut lcg = Lcg(Self::STREAMS_SEED);
        // (axis, center, half length, width)
        let streams: Vec<(usize, [f32; D], f32, f32)> = (0..(n / Self::STREAM_SIZE).max(1))
            .map(|_| {
                let axis = ((lcg.next_f32() * D as f32) as usize).min(D - 1);
                let center = [(); D].map(|_| lcg.next_f32() * side);
                let half_length = 0.5 * lcg.range(0.2, 0.6) * side;
                (axis, center, half_length, lcg.log_uniform(0.3, 3.0))
            })
            .collect();
        let mut centers = Vec::with_capacity(n);
        let mut velocities = Vec::with_capacity(n);
        let mut halves = Vec::with_capacity(n);
        let mut walls = Vec::with_capacity(n);
        for _ in 0..n {
            let k = ((lcg.next_f32() * streams.len() as f32) as usize).min(streams.len() - 1);
            let (axis, center, half_length, sigma) = streams[k];
            let reach = |a: usize| if a == axis { half_length } else { 2.0 * sigma };
            let lo: [f32; D] = std::array::from_fn(|a| (center[a] - reach(a)).max(0.0));
            let hi: [f32; D] = std::array::from_fn(|a| (center[a] + reach(a)).min(side));
            let mut at = center;
            for a in 0..D {
                let offset = if a == axis {
                    lcg.range(-half_length, half_length)
                } else {
                    sigma * lcg.normal()
                };
                at[a] = (at[a] + offset).clamp(lo[a], hi[a]);
            }
            centers.push(at);
            walls.push((lo, hi));
            halves.push(0.5 * Self::mixed_size(&mut lcg));
            if lcg.next_f32() < Self::STREAM_MOVING_SHARE {
                let speed = lcg.range(1.0, 5.0);
                let speed = if lcg.next_f32() < 0.5 { -speed } else { speed };
                let v: [f32; D] = std::array::from_fn(|a| {
                    if a == axis {
                        speed
                    } else {
                        0.1 * speed.abs() * lcg.normal()
                    }
                });
                velocities.push(v);
            } else {
                velocities.push([0.0; D]);
            }
        }
        let mut scene = Self::with_boxes(side, centers, velocities);
        scene.halves = halves;
        scene.walls = walls;
        scene
    }

    /// Seed of the grid scenes' generator (distinct from the other scenes').
    pub const GRID_SEED: u32 = 60_607;
    /// Share of the grid scenes' boxes that move.
    pub const GRID_MOVING_SHARE: f32 = 0.25;

    /// The "touching grid" scene: `n` equal boxes of side 1 filling a square (cube) lattice
    /// of pitch 1 row by row, so that every box touches its neighbours (a packed crowd, a
    /// wall of crates, a tile layer of units): each fat box overlaps those of its 8 (2D) or
    /// 26 (3D) neighbours. A quarter of them jiggle inside their cell, a quarter of a side
    /// either way, so they push into their neighbours and their fat boxes change every few
    /// steps.
    ///
    /// Random numbers come from `Lcg(GRID_SEED)`, per box: the motion draw: with
    /// probability [`Self::GRID_MOVING_SHARE`] the box moves (a direction from one normal
    /// draw per axis, then a speed uniform in `[0.5, 2]`), else it stays still. The region's
    /// side is `ceil(n^(1/D))`; box `i`'s cell is `i`'s digits in that base, first axis
    /// first.
    pub fn grid(n: usize) -> Self {
        let per_row = ((n as f64).powf(1.0 / D as f64).ceil() as usize).max(1);
        let mut lcg = Lcg(Self::GRID_SEED);
        let mut centers = Vec::with_capacity(n);
        let mut velocities = Vec::with_capacity(n);
        let mut walls = Vec::with_capacity(n);
        for i in 0..n {
            let mut rest = i;
            let cell: [f32; D] = std::array::from_fn(|_| {
                let c = (rest % per_row) as f32 + 0.5;
                rest /= per_row;
                c
            });
            centers.push(cell);
            walls.push((cell.map(|c| c - 0.25), cell.map(|c| c + 0.25)));
            velocities.push(Self::maybe_moving(
                &mut lcg,
                Self::GRID_MOVING_SHARE,
                (0.5, 2.0),
            ));
        }
        let mut scene = Self::with_boxes(per_row as f32, centers, velocities);
        scene.walls = walls;
        scene
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

/// The uniform scene in either dimension, for code generic over `D`.
pub trait Uniform {
    /// [`Scene::<2>::uniform`] or [`Scene::<3>::uniform`].
    fn uniform_in(n: usize, vs: f32) -> Self;
}

impl Uniform for Scene<2> {
    fn uniform_in(n: usize, vs: f32) -> Self {
        Scene::<2>::uniform(n, vs)
    }
}

impl Uniform for Scene<3> {
    fn uniform_in(n: usize, vs: f32) -> Self {
        Scene::<3>::uniform(n, vs)
    }
}

/// The arguments `[N] [2d|3d]` of a binary that runs one scene size in one dimension:
/// `(N, whether 3D)`, with `default_n` and 2D when not given. Exits with `usage` on
/// anything else.
pub fn size_and_dimension(default_n: usize, usage: &str) -> (usize, bool) {
    let mut n = default_n;
    let mut three_d = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "2d" => three_d = false,
            "3d" => three_d = true,
            other => match other.replace('_', "").parse() {
                Ok(x) => n = x,
                Err(_) => {
                    eprintln!("usage: {usage}");
                    std::process::exit(2);
                }
            },
        }
    }
    (n, three_d)
}

/// One axis of a box's move over a step: the center `c` moves by `v dt`; past a wall of
/// `lo..hi` it stops on the wall, its velocity turned back inwards. Whether it bounced.
#[inline]
pub fn bounce_axis(c: &mut f32, v: &mut f32, dt: f32, lo: f32, hi: f32) -> bool {
    *c += *v * dt;
    if *c < lo {
        *c = lo;
        *v = v.abs();
        true
    } else if *c > hi {
        *c = hi;
        *v = -v.abs();
        true
    } else {
        false
    }
}
