//! Smoke test and quick figures for the parry peer of the benchmarks
//! (`bench/src/parry_driver.rs`).
//!
//! Runs the "uniform boxes" scene (10k boxes by default, `parry_smoke N` for another count)
//! in 2D and 3D, fast and slow, through parry's `Bvh` driven like rapier's broad phase, and
//! prints the median time of a step (move every box + broad-phase step) and the pairs per
//! step. Before timing, it checks the driver against brute force:
//!
//! - the fat boxes parry stores equal the scenario's (tight box ± margin, rewritten only when
//!   the tight box leaves the stored one);
//! - after the build (step 0), by insertion as rapier does or by parry's binned builder,
//!   the traversal reports exactly the brute-force pairs of overlapping fat boxes;
//! - at step 10, the pairs it reports are exactly the brute-force pairs with at least one box
//!   whose fat box was rewritten this step (so a subset of all the pairs);
//! - with rapier's pair tracking, the persistent pair set equals all the brute-force pairs;
//! - closest-hit rays agree with a brute-force slab test.
//!
//! It also counts heap allocations during the timed steps (none expected in steady state).
//!
//! `cargo run --release -p bevy_aabb_tree_bench --bin parry_smoke`

#[path = "../alloc_count.rs"]
mod alloc_count;
#[path = "../parry_driver.rs"]
mod parry_driver;
#[path = "../../../benches/support/scene.rs"]
mod scene;

use std::collections::HashSet;
use std::hint::black_box;
use std::time::Instant;

use alloc_count::allocations;
use parry_driver::{ParryBroadPhase2d, ParryBroadPhase3d, StepStats};
use scene::{Lcg, Scene};

/// Steps after the build, as in the scenario.
const STEPS: usize = 300;
/// The step at which the incremental pairs are checked.
const CHECK_STEP: usize = 10;

/// The two drivers behind one interface, so that the checks are written once.
trait Peer<const D: usize>: Sized {
    fn build(scene: &Scene<D>, track_pairs: bool) -> Self;
    /// The tree built at once by parry's binned builder.
    fn binned(scene: &Scene<D>) -> Self;
    fn step(&mut self, scene: &Scene<D>) -> usize;
    fn pairs(&self) -> &[(u32, u32)];
    fn tracked_pairs(&self) -> Option<Vec<(u32, u32)>>;
    fn fat_box(&self, i: u32) -> Option<([f32; D], [f32; D])>;
    fn stats(&self) -> StepStats;
    fn closest_ray(
        &self,
        origin: [f32; D],
        dir: [f32; D],
        max_toi: f32,
        scene: &Scene<D>,
    ) -> Option<(u32, f32)>;
}

macro_rules! impl_peer {
    ($ty:ident, $dim:literal) => {
        impl Peer<$dim> for $ty {
            fn build(scene: &Scene<$dim>, track_pairs: bool) -> Self {
                if track_pairs {
                    $ty::with_pair_tracking(scene)
                } else {
                    $ty::new(scene)
                }
            }
            fn binned(scene: &Scene<$dim>) -> Self {
                $ty::binned(scene)
            }
            fn step(&mut self, scene: &Scene<$dim>) -> usize {
                $ty::step(self, scene)
            }
            fn pairs(&self) -> &[(u32, u32)] {
                $ty::pairs(self)
            }
            fn tracked_pairs(&self) -> Option<Vec<(u32, u32)>> {
                $ty::tracked_pairs(self).map(Iterator::collect)
            }
            fn fat_box(&self, i: u32) -> Option<([f32; $dim], [f32; $dim])> {
                $ty::fat_box(self, i)
            }
            fn stats(&self) -> StepStats {
                $ty::stats(self)
            }
            fn closest_ray(
                &self,
                origin: [f32; $dim],
                dir: [f32; $dim],
                max_toi: f32,
                scene: &Scene<$dim>,
            ) -> Option<(u32, f32)> {
                $ty::closest_ray(self, origin, dir, max_toi, scene)
            }
        }
    };
}

impl_peer!(ParryBroadPhase2d, 2);
impl_peer!(ParryBroadPhase3d, 3);

/// The scenario's fat boxes, maintained independently of parry.
struct FatBoxes<const D: usize> {
    boxes: Vec<([f32; D], [f32; D])>,
    /// Boxes whose fat box was rewritten by the last update.
    changed: Vec<bool>,
}

impl<const D: usize> FatBoxes<D> {
    fn new(scene: &Scene<D>) -> Self {
        Self {
            boxes: (0..scene.len())
                .map(|i| (scene.fat_min(i), scene.fat_max(i)))
                .collect(),
            changed: vec![true; scene.len()],
        }
    }

    fn update(&mut self, scene: &Scene<D>) {
        for (i, (fat, changed)) in self.boxes.iter_mut().zip(&mut self.changed).enumerate() {
            let (min, max) = (scene.min(i), scene.max(i));
            let contained = (0..D).all(|k| fat.0[k] <= min[k] && max[k] <= fat.1[k]);
            *changed = !contained;
            if !contained {
                *fat = (scene.fat_min(i), scene.fat_max(i));
            }
        }
    }

    /// Every pair of overlapping fat boxes (closed boxes, as parry tests them), as
    /// `(min, max)`, by sorting on the first axis and sweeping.
    fn brute_force_pairs(&self) -> HashSet<(u32, u32)> {
        let mut order: Vec<u32> = (0..self.boxes.len() as u32).collect();
        order.sort_by(|&a, &b| self.boxes[a as usize].0[0].total_cmp(&self.boxes[b as usize].0[0]));
        let mut pairs = HashSet::new();
        for (k, &a) in order.iter().enumerate() {
            let box_a = &self.boxes[a as usize];
            for &b in &order[k + 1..] {
                let box_b = &self.boxes[b as usize];
                if box_b.0[0] > box_a.1[0] {
                    break;
                }
                if (0..D).all(|d| box_a.0[d] <= box_b.1[d] && box_b.0[d] <= box_a.1[d]) {
                    pairs.insert((a.min(b), a.max(b)));
                }
            }
        }
        pairs
    }
}

/// The pairs as `(min, max)`, panicking on a pair reported twice.
fn pair_set(pairs: &[(u32, u32)]) -> HashSet<(u32, u32)> {
    let mut set = HashSet::with_capacity(pairs.len());
    for &(a, b) in pairs {
        assert_ne!(a, b, "self pair");
        assert!(
            set.insert((a.min(b), a.max(b))),
            "pair ({a}, {b}) reported twice"
        );
    }
    set
}

/// Brute-force closest hit of a ray against the tight boxes (slab test, solid boxes).
fn brute_force_ray<const D: usize>(
    scene: &Scene<D>,
    origin: [f32; D],
    dir: [f32; D],
    max_toi: f32,
) -> Option<(u32, f32)> {
    let mut best: Option<(u32, f32)> = None;
    for i in 0..scene.len() {
        let (min, max) = (scene.min(i), scene.max(i));
        let (mut t0, mut t1) = (0.0f32, max_toi);
        let mut hit = true;
        for k in 0..D {
            if dir[k] == 0.0 {
                if origin[k] < min[k] || origin[k] > max[k] {
                    hit = false;
                    break;
                }
            } else {
                let inv = 1.0 / dir[k];
                let (mut near, mut far) = ((min[k] - origin[k]) * inv, (max[k] - origin[k]) * inv);
                if near > far {
                    std::mem::swap(&mut near, &mut far);
                }
                t0 = t0.max(near);
                t1 = t1.min(far);
                if t0 > t1 {
                    hit = false;
                    break;
                }
            }
        }
        if hit && t0 < max_toi && best.is_none_or(|(_, t)| t0 < t) {
            best = Some((i as u32, t0));
        }
    }
    best
}

/// Checks the driver against brute force over the first `CHECK_STEP` steps.
fn check<const D: usize, P: Peer<D>>(label: &str, scene: Scene<D>) {
    for (track_pairs, binned) in [(false, false), (true, false), (false, true)] {
        let mut scene = scene.clone();
        let mut peer = if binned {
            P::binned(&scene)
        } else {
            P::build(&scene, track_pairs)
        };
        let label = if binned {
            format!("{label}, binned build")
        } else {
            label.to_string()
        };
        let mut fat = FatBoxes::new(&scene);
        for step in 0..=CHECK_STEP {
            if step > 0 {
                scene.step();
                peer.step(&scene);
                fat.update(&scene);
            }
            for (i, expected) in fat.boxes.iter().enumerate() {
                assert_eq!(
                    peer.fat_box(i as u32).as_ref(),
                    Some(expected),
                    "fat box {i}"
                );
            }
            if step != 0 && step != CHECK_STEP {
                continue;
            }
            let all = fat.brute_force_pairs();
            let reported = pair_set(peer.pairs());
            assert!(
                reported.is_subset(&all),
                "{label}: a reported pair does not overlap"
            );
            let expected: HashSet<_> = all
                .iter()
                .copied()
                .filter(|&(a, b)| fat.changed[a as usize] || fat.changed[b as usize])
                .collect();
            assert_eq!(
                reported, expected,
                "{label} step {step}: changed-pair mismatch"
            );
            if step == 0 {
                assert_eq!(reported, all, "{label}: build traversal != brute force");
            }
            if let Some(tracked) = peer.tracked_pairs() {
                assert_eq!(
                    pair_set(&tracked),
                    all,
                    "{label} step {step}: tracked pairs"
                );
            }
            if !track_pairs {
                println!(
                    "{label}: step {step:>2} ok: {} reported = brute force over {} changed \
                     boxes, of {} overlapping pairs",
                    reported.len(),
                    fat.changed.iter().filter(|&&c| c).count(),
                    all.len(),
                );
            }
        }
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Times `STEPS` steps (move every box + broad-phase step) after the build.
fn time_steps<const D: usize, P: Peer<D>>(
    label: &str,
    mut scene: Scene<D>,
    track_pairs: bool,
) -> (P, Scene<D>) {
    let mut peer = P::build(&scene, track_pairs);
    let mut times = Vec::with_capacity(STEPS);
    let mut pairs = 0usize;
    let (mut updated, mut full_refits, mut optimizations) = (0usize, 0usize, 0usize);
    let mut late_allocations = 0;
    for step in 0..STEPS {
        let before = allocations();
        let start = Instant::now();
        scene.step();
        pairs += black_box(peer.step(&scene));
        times.push(start.elapsed().as_secs_f64() * 1e3);
        if step >= STEPS / 2 {
            late_allocations += allocations() - before;
        }
        let stats = peer.stats();
        updated += stats.updated_leaves;
        full_refits += stats.full_refit as usize;
        optimizations += (stats.ran_deferred_optimize || stats.ran_inline_optimize) as usize;
    }
    let steps = STEPS as f64;
    println!(
        "{label:<26} {:>7.3} ms/step (median), {:>7.1} reported pairs/step",
        median(times),
        pairs as f64 / steps,
    );
    println!(
        "{:<26} {:>7.1} updated leaves/step, {full_refits} full refits, {optimizations} \
         optimizations, {late_allocations} allocations in the last {} steps",
        "",
        updated as f64 / steps,
        STEPS - STEPS / 2,
    );
    (peer, scene)
}

/// Times the scenario's rays on the scene as it is, and checks them against brute force.
fn time_rays<const D: usize, P: Peer<D>>(
    label: &str,
    peer: &P,
    scene: &Scene<D>,
    rays: &[([f32; D], [f32; D])],
) {
    let max_toi = f32::MAX;
    let mut hits = 0;
    for &(origin, dir) in rays {
        let got = peer.closest_ray(origin, dir, max_toi, scene);
        let expected = brute_force_ray(scene, origin, dir, max_toi);
        match (got, expected) {
            (None, None) => {}
            (Some((i, t)), Some((j, u))) => {
                assert!(
                    (t - u).abs() <= 1e-4 * u.max(1.0),
                    "{label}: ray t {t} vs {u}"
                );
                assert!(i == j || t == u, "{label}: ray hit {i} vs {j}");
                hits += 1;
            }
            _ => panic!("{label}: ray {got:?} vs brute force {expected:?}"),
        }
    }
    let rounds: Vec<f64> = (0..21)
        .map(|_| {
            let start = Instant::now();
            for &(origin, dir) in rays {
                black_box(peer.closest_ray(black_box(origin), dir, max_toi, scene));
            }
            start.elapsed().as_secs_f64() * 1e6 / rays.len() as f64
        })
        .collect();
    println!(
        "{label:<26} {:>7.3} µs/ray (median of 21 rounds of {} rays, {hits} hits, checked)",
        median(rounds),
        rays.len(),
    );
}

fn run<const D: usize, P: Peer<D>>(
    dim: &str,
    n: usize,
    uniform: fn(usize, f32, &mut Lcg) -> Scene<D>,
) {
    let mut lcg = Lcg::new();
    let fast = uniform(n, Scene::<D>::FAST, &mut lcg);
    let rays = fast.rays(&mut lcg);
    let slow = uniform(n, Scene::<D>::SLOW, &mut Lcg::new());

    check::<D, P>(&format!("{dim} fast"), fast.clone());
    check::<D, P>(&format!("{dim} slow"), slow.clone());

    let build = P::build(&fast, false);
    time_rays(&format!("{dim} rays, after build"), &build, &fast, &rays);
    let binned = P::binned(&fast);
    time_rays(&format!("{dim} rays, binned build"), &binned, &fast, &rays);
    for (speed, scene) in [("fast", &fast), ("slow", &slow)] {
        let (peer, moved) = time_steps::<D, P>(&format!("{dim} {speed}"), scene.clone(), false);
        if speed == "fast" {
            time_rays(
                &format!("{dim} rays, after {STEPS} steps"),
                &peer,
                &moved,
                &rays,
            );
        }
        time_steps::<D, P>(
            &format!("{dim} {speed} + pair tracking"),
            scene.clone(),
            true,
        );
    }
}

fn main() {
    let n = std::env::args()
        .nth(1)
        .map(|arg| arg.parse().expect("usage: parry_smoke [box count]"))
        .unwrap_or(10_000);
    println!("uniform boxes, n = {n}, {STEPS} steps, parry 0.31 Bvh driven like rapier");
    run::<2, ParryBroadPhase2d>("2D", n, Scene::<2>::uniform_with_lcg);
    run::<3, ParryBroadPhase3d>("3D", n, Scene::<3>::uniform_with_lcg);
}
