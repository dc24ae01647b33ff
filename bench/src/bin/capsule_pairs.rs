//! The narrow phase and the sweeps of capsule pairs against box pairs (and ball pairs), per
//! candidate pair, on one scene: tree and geometry only, no Bevy.
//!
//! `cargo run --release -p bevy_aabb_tree_bench --bin capsule_pairs -- [N] [2d|3d]
//! [--only box|ball|capsule] [--rounds R] [--reps P]` (defaults: 10000, both dimensions,
//! every kind, 21 rounds of 20 passes).
//!
//! The scene is the "uniform boxes" scene (`benches/support/scene.rs`, fast), as
//! `bench_compare` builds it. Its boxes go into a [`DynamicTree`] (built at once, margin
//! 0.05) and its first pair update gives the candidate pairs (fat boxes overlapping), once.
//! Each collider then becomes one shape of each kind, at the box's center, of matching
//! size:
//! - box: the scene's box (half extent 0.5), the [`BoundingBox`] functions
//!   ([`BoundingBox::overlaps`], [`contact_boxes`], [`sweep_boxes`]);
//! - ball: radius 0.5, the [`Ball`] functions ([`Ball::overlaps`], [`contact_balls`],
//!   [`sweep_balls`]);
//! - capsule: along y, radius 0.3 and half length 0.2 (as tall as the box, 0.6 wide), a
//!   [`RoundedBox`] ([`RoundedBox::overlaps`], [`contact_rounded`], [`sweep_rounded`]).
//!
//! Three passes over the same pairs, for each kind:
//! - overlap: whether the two shapes overlap (the narrow phase's test of every candidate);
//! - contact: the contact (normal, depth, point), `None` for pairs apart;
//! - sweep: the swept test of the step, from the shapes at the start of the step (centers
//!   less the displacement `velocity * dt`) moving by their displacements.
//!
//! Timing: each round runs every kind's three passes, the kinds in a rotating order (box,
//! ball, capsule; then ball, capsule, box; ...), each pass repeated `P` times; the table
//! gives the median ns per pair over the rounds and the ratios capsule/box and ball/box.
//! On 64-bit Linux a pass is timed by the thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`), which
//! stops while the thread waits for a core: on a machine shared with other work a pass
//! longer than the scheduler's time slice would otherwise count the other work's slices
//! too. Elsewhere it is wall time.
//!
//! Instruction counts: `--only KIND` runs one kind, so that callgrind counts its passes
//! alone; each pass is a function of its own (`pass_overlap`, `pass_contact`,
//! `pass_sweep`), which callgrind's `--toggle-collect` can isolate:
//!
//! ```text
//! valgrind --tool=callgrind --toggle-collect='*pass_*' \
//!   target/release/capsule_pairs 10000 2d --only capsule --rounds 1 --reps 1
//! callgrind_annotate --inclusive=yes callgrind.out.<pid>
//! ```
//!
//! The pair count printed divides the counts into instructions per pair.

#[path = "../../../benches/support/scene.rs"]
mod scene;

use std::hint::black_box;

use bevy_aabb_tree::geometry::{
    Contact, contact_balls, contact_boxes, contact_rounded, sweep_balls, sweep_boxes, sweep_rounded,
};
use bevy_aabb_tree::{
    Ball, BoundingBox, DynamicTree, ProxyId, RoundedBox, SweepInterval, Vec2, Vec3, Vector,
};
use scene::{Scene, Uniform};

/// The capsules' radius.
const CAPSULE_RADIUS: f32 = 0.3;
/// The capsules' half length (along y): radius plus half length is the box's half extent.
const CAPSULE_HALF_LENGTH: f32 = 0.2;

/// A vector type built from the scene's `[f32; D]` arrays.
trait FromArray<const D: usize>: Vector {
    fn from_array(a: [f32; D]) -> Self;
}

impl FromArray<2> for Vec2 {
    fn from_array(a: [f32; 2]) -> Self {
        Vec2::from_array(a)
    }
}

impl FromArray<3> for Vec3 {
    fn from_array(a: [f32; 3]) -> Self {
        Vec3::from_array(a)
    }
}

/// Seconds of CPU time this thread has run (64-bit Linux), else of wall time since the first call.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn clock() -> f64 {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    unsafe extern "C" {
        fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid `struct timespec` (two 64-bit fields on 64-bit Linux) that
    // the call fills.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Seconds of CPU time this thread has run (64-bit Linux), else of wall time since the first call.
#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn clock() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}

/// One kind of collider shape and its tests.
trait Kind<V: Vector> {
    const NAME: &'static str;
    type Shape: Copy;
    /// The shape of this kind at `center`.
    fn make(center: V) -> Self::Shape;
    fn overlaps(a: &Self::Shape, b: &Self::Shape) -> bool;
    fn contact(a: &Self::Shape, b: &Self::Shape) -> Option<Contact<V>>;
    fn sweep(a: &Self::Shape, da: V, b: &Self::Shape, db: V) -> Option<SweepInterval<V>>;
}

/// A kind: its marker type, name, shape, the shape at a center, and its contact and
/// swept tests (the overlap test is the shape's `overlaps`).
macro_rules! kind {
    ($kind:ident, $name:literal, $shape:ty, |$center:ident| $make:expr, $contact:ident, $sweep:ident) => {
        struct $kind;

        impl<V: Vector> Kind<V> for $kind {
            const NAME: &'static str = $name;
            type Shape = $shape;
            fn make($center: V) -> Self::Shape {
                $make
            }
            #[inline]
            fn overlaps(a: &Self::Shape, b: &Self::Shape) -> bool {
                a.overlaps(b)
            }
            #[inline]
            fn contact(a: &Self::Shape, b: &Self::Shape) -> Option<Contact<V>> {
                $contact(a, b)
            }
            #[inline]
            fn sweep(a: &Self::Shape, da: V, b: &Self::Shape, db: V) -> Option<SweepInterval<V>> {
                $sweep(a, da, b, db)
            }
        }
    };
}

kind!(
    Boxes,
    "box",
    BoundingBox<V>,
    |center| BoundingBox::from_center_half_extents(center, V::splat(0.5)),
    contact_boxes,
    sweep_boxes
);
kind!(
    Balls,
    "ball",
    Ball<V>,
    |center| Ball::new(center, 0.5),
    contact_balls,
    sweep_balls
);
kind!(
    Capsules,
    "capsule",
    RoundedBox<V>,
    |center| RoundedBox::capsule(center, 1, CAPSULE_HALF_LENGTH, CAPSULE_RADIUS),
    contact_rounded,
    sweep_rounded
);

/// The overlap test of every pair: how many overlap.
#[inline(never)]
fn pass_overlap<V: Vector, K: Kind<V>>(shapes: &[K::Shape], pairs: &[(u32, u32)]) -> usize {
    pairs
        .iter()
        .filter(|&&(i, j)| K::overlaps(&shapes[i as usize], &shapes[j as usize]))
        .count()
}

/// The contact of every pair: how many touch, and the sum of the depths.
#[inline(never)]
fn pass_contact<V: Vector, K: Kind<V>>(shapes: &[K::Shape], pairs: &[(u32, u32)]) -> (usize, f32) {
    let mut touching = 0;
    let mut depth = 0.0;
    for &(i, j) in pairs {
        if let Some(c) = K::contact(&shapes[i as usize], &shapes[j as usize]) {
            touching += 1;
            depth += c.depth + c.normal.axis(0) + c.point.axis(0);
        }
    }
    (touching, depth)
}

/// The swept test of every pair from the start of the step: how many meet during it, and
/// the sum of the first times.
#[inline(never)]
fn pass_sweep<V: Vector, K: Kind<V>>(
    starts: &[(K::Shape, V)],
    pairs: &[(u32, u32)],
) -> (usize, f32) {
    let mut hits = 0;
    let mut first = 0.0;
    for &(i, j) in pairs {
        let (a, da) = &starts[i as usize];
        let (b, db) = &starts[j as usize];
        if let Some(hit) = K::sweep(a, *da, b, *db) {
            hits += 1;
            first += hit.u0 + hit.normal.axis(0);
        }
    }
    (hits, first)
}

/// One kind's shapes on the scene, and what its passes found.
struct Set<V: Vector, K: Kind<V>> {
    shapes: Vec<K::Shape>,
    starts: Vec<(K::Shape, V)>,
    /// ns per pair of the overlap, contact and sweep passes, one per round (filled by
    /// `measure`).
    ns: [Vec<f64>; 3],
    overlapping: usize,
    touching: usize,
    swept_hits: usize,
}

impl<V: Vector, K: Kind<V>> Set<V, K> {
    fn new<const D: usize>(scene: &Scene<D>) -> Self
    where
        V: FromArray<D>,
    {
        let shapes = scene
            .centers
            .iter()
            .map(|&c| K::make(V::from_array(c)))
            .collect();
        let starts = scene
            .centers
            .iter()
            .zip(&scene.velocities)
            .map(|(&c, &v)| {
                let d = V::from_array(v) * scene.dt;
                (K::make(V::from_array(c) - d), d)
            })
            .collect();
        Self {
            shapes,
            starts,
            ns: Default::default(),
            overlapping: 0,
            touching: 0,
            swept_hits: 0,
        }
    }

    /// Runs the three passes `reps` times each, recording ns per pair.
    fn measure(&mut self, pairs: &[(u32, u32)], reps: usize) {
        let (shapes, starts) = (&self.shapes, &self.starts);
        let (ns, overlap) = timed(pairs, reps, || {
            pass_overlap::<V, K>(black_box(shapes), black_box(pairs))
        });
        self.ns[0].push(ns);
        self.overlapping = overlap;
        let (ns, contact) = timed(pairs, reps, || {
            pass_contact::<V, K>(black_box(shapes), black_box(pairs))
        });
        self.ns[1].push(ns);
        self.touching = contact.0;
        let (ns, sweep) = timed(pairs, reps, || {
            pass_sweep::<V, K>(black_box(starts), black_box(pairs))
        });
        self.ns[2].push(ns);
        self.swept_hits = sweep.0;
    }

    /// The kind's row of the table: its name, the medians and what its passes found;
    /// `None` for a kind not measured (`--only`).
    fn row(&mut self) -> Option<(&'static str, [f64; 3], [usize; 3])> {
        if self.ns[0].is_empty() {
            return None;
        }
        let counts = [self.overlapping, self.touching, self.swept_hits];
        Some((K::NAME, self.ns.each_mut().map(|v| median(v)), counts))
    }
}

/// Runs `pass` `reps` times: ns per pair, and what its last run returned.
fn timed<T>(pairs: &[(u32, u32)], reps: usize, mut pass: impl FnMut() -> T) -> (f64, T) {
    let t = clock();
    let mut out = black_box(pass());
    for _ in 1..reps {
        out = black_box(pass());
    }
    let ns = (clock() - t) * 1e9 / (reps * pairs.len()) as f64;
    (ns, out)
}
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The candidate pairs of the scene: the tree's first pair update after building it.
fn candidate_pairs<V: FromArray<D>, const D: usize>(scene: &Scene<D>) -> Vec<(u32, u32)> {
    let mut tree = DynamicTree::<V, u32>::with_margin(scene.margin);
    tree.build((0..scene.len()).map(|i| {
        let tight =
            BoundingBox::from_min_max(V::from_array(scene.min(i)), V::from_array(scene.max(i)));
        (tight, i as u32)
    }))
    .expect("the scene's boxes are valid");
    let mut pairs: Vec<(ProxyId, ProxyId)> = Vec::new();
    tree.update_pairs(&mut pairs);
    pairs
        .iter()
        .map(|&(a, b)| (*tree.data(a).unwrap(), *tree.data(b).unwrap()))
        .collect()
}

/// The kinds to run (`--only`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Only {
    All,
    Box,
    Ball,
    Capsule,
}

fn report<V: FromArray<D>, const D: usize>(n: usize, only: Only, rounds: usize, reps: usize)
where
    Scene<D>: Uniform,
{
    let scene = Scene::<D>::uniform_in(n, Scene::<D>::FAST);
    let pairs = candidate_pairs::<V, D>(&scene);
    println!(
        "capsule_pairs: {n} colliders, {D}D, uniform fast scene, {} candidate pairs, {rounds} \
         rounds of {reps} passes (capsule: radius {CAPSULE_RADIUS}, half length \
         {CAPSULE_HALF_LENGTH}, along y)",
        pairs.len()
    );
    let mut boxes = Set::<V, Boxes>::new(&scene);
    let mut balls = Set::<V, Balls>::new(&scene);
    let mut capsules = Set::<V, Capsules>::new(&scene);
    for round in 0..rounds {
        for k in 0..3 {
            match ((round + k) % 3, only) {
                (0, Only::All | Only::Box) => boxes.measure(&pairs, reps),
                (1, Only::All | Only::Ball) => balls.measure(&pairs, reps),
                (2, Only::All | Only::Capsule) => capsules.measure(&pairs, reps),
                _ => {}
            }
        }
    }
    println!();
    println!(
        "| kind ({D}D, median ns/pair) | overlap | contact | sweep | overlapping | touching | swept hits |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut rows: Vec<(&str, [f64; 3])> = Vec::new();
    for (name, m, counts) in [boxes.row(), balls.row(), capsules.row()]
        .into_iter()
        .flatten()
    {
        println!(
            "| {name} | {:.2} | {:.2} | {:.2} | {} | {} | {} |",
            m[0], m[1], m[2], counts[0], counts[1], counts[2]
        );
        rows.push((name, m));
    }
    if only == Only::All {
        let base = rows[0].1;
        println!();
        for (name, m) in &rows[1..] {
            println!(
                "ratio {name}/box ({D}D): overlap {:.2}, contact {:.2}, sweep {:.2}",
                m[0] / base[0],
                m[1] / base[1],
                m[2] / base[2]
            );
        }
    }
    println!();
}

const USAGE: &str =
    "usage: capsule_pairs [N] [2d|3d] [--only box|ball|capsule] [--rounds R] [--reps P]";

fn usage() -> ! {
    eprintln!("{USAGE}");
    std::process::exit(2);
}

fn main() {
    let mut n = 10_000;
    let mut dims = (true, true);
    let mut only = Only::All;
    let mut rounds = 21;
    let mut reps = 20;
    let mut args = std::env::args().skip(1);
    let count = |arg: Option<String>| match arg.map(|a| a.parse::<usize>()) {
        Some(Ok(x)) if x >= 1 => x,
        _ => usage(),
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "2d" => dims = (true, false),
            "3d" => dims = (false, true),
            "--only" => {
                only = match args.next().as_deref() {
                    Some("box") => Only::Box,
                    Some("ball") => Only::Ball,
                    Some("capsule") => Only::Capsule,
                    _ => usage(),
                }
            }
            "--rounds" => rounds = count(args.next()),
            "--reps" => reps = count(args.next()),
            other => match other.replace('_', "").parse() {
                Ok(x) if x >= 2 => n = x,
                _ => usage(),
            },
        }
    }
    if dims.0 {
        report::<Vec2, 2>(n, only, rounds, reps);
    }
    if dims.1 {
        report::<Vec3, 3>(n, only, rounds, reps);
    }
}
