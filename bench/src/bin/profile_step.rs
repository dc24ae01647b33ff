//! Splits a step of the "uniform boxes" scenario, or of "clustered, mixed sizes", into its
//! parts (moves, pair update) and prints the medians (and the mean of the whole step): `cargo run --release -p
//! bevy_aabb_tree_bench --bin profile_step -- [2d|3d] [N] [fast|slow|clustered|streams|sparse|grid] [THREADS]
//! [STEPS]` (threads of the pair update, 1 by default; 300 steps by default).
//!
//! Also prints the tree's work counters per step and per reported pair: nodes the pair
//! walk visits (every node popped, internal or leaf), and the time per pair and per moving
//! box. A small `STEPS` suits instruction-level profilers (callgrind).

#[path = "../../../benches/support/ours_driver.rs"]
mod ours_driver;
#[path = "../../../benches/support/scene.rs"]
mod scene;

use glam::{Vec2, Vec3};
use ours_driver::{FromArray, OursBroadPhase};
use scene::Scene;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn run<V: FromArray<D>, const D: usize>(
    mut scene: Scene<D>,
    label: &str,
    threads: usize,
    steps: usize,
) {
    let mut ours = OursBroadPhase::<V, D>::new(&scene);
    ours.set_threads(threads);
    let (mut moves, mut updates) = (Vec::new(), Vec::new());
    let mut updated = 0usize;
    // The work counters count from the tree's making: the steps' work is the difference.
    let start = ours.tree().stats();
    for _ in 0..steps {
        scene.step();
        let (_, m, u) = ours.step_timed(&scene);
        updated += ours.updated_leaves();
        moves.push(m.as_secs_f64() * 1e3);
        updates.push(u.as_secs_f64() * 1e3);
    }
    let stats = ours.tree().stats();
    let nodes_visited = (stats.nodes_visited - start.nodes_visited) as f64;
    let steps_f = steps as f64;
    let pairs = (stats.leaves_visited - start.leaves_visited) as f64 / steps_f;
    let moving = scene.moving_count().max(1) as f64;
    // The mean shows what the median hides: the occasional step that does more (the
    // optimizer's rebuilds do not run every step).
    let mean_step = moves.iter().zip(&updates).map(|(m, u)| m + u).sum::<f64>() / steps as f64;
    let (moves, updates) = (median(moves), median(updates));
    println!(
        "{label}: moves {moves:.3} ms, update_pairs {updates:.3} ms, mean step {mean_step:.3} ms, \
         height {}, area ratio {:.1}, \
         per step: nodes visited {:.0}, pairs found {pairs:.0}, leaves changed {:.0} of {} moving",
        stats.height,
        stats.area_ratio,
        nodes_visited / steps_f,
        updated as f64 / steps_f,
        scene.moving_count(),
    );
    println!(
        "    per pair: nodes visited {:.2}, update_pairs {:.1} ns, step {:.1} ns; \
         per moving box: moves {:.1} ns, step {:.1} ns",
        nodes_visited / steps_f / pairs.max(1.0),
        updates * 1e6 / pairs.max(1.0),
        (moves + updates) * 1e6 / pairs.max(1.0),
        moves * 1e6 / moving,
        (moves + updates) * 1e6 / moving,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dim = args.first().map_or("2d", String::as_str);
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let kind = args.get(2).map_or("fast", String::as_str);
    let slow = kind == "slow";
    let threads: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let steps: usize = args
        .get(4)
        .and_then(|s| s.parse().ok())
        .unwrap_or(300)
        .max(1);
    let label = format!("{dim} n={n} {kind} threads={threads} steps={steps}");
    if kind == "clustered" {
        if dim == "3d" {
            run::<Vec3, 3>(Scene::<3>::clustered(n), &label, threads, steps);
        } else {
            run::<Vec2, 2>(Scene::<2>::clustered(n), &label, threads, steps);
        }
    } else if kind == "streams" {
        if dim == "3d" {
            run::<Vec3, 3>(Scene::<3>::streams(n), &label, threads, steps);
        } else {
            run::<Vec2, 2>(Scene::<2>::streams(n), &label, threads, steps);
        }
    } else if kind == "sparse" {
        if dim == "3d" {
            run::<Vec3, 3>(
                Scene::sparse(Scene::<3>::uniform(n, Scene::<3>::FAST)),
                &label,
                threads,
                steps,
            );
        } else {
            run::<Vec2, 2>(
                Scene::sparse(Scene::<2>::uniform(n, Scene::<2>::FAST)),
                &label,
                threads,
                steps,
            );
        }
    } else if kind == "grid" {
        if dim == "3d" {
            run::<Vec3, 3>(Scene::<3>::grid(n), &label, threads, steps);
        } else {
            run::<Vec2, 2>(Scene::<2>::grid(n), &label, threads, steps);
        }
    } else if dim == "3d" {
        let vs = if slow {
            Scene::<3>::SLOW
        } else {
            Scene::<3>::FAST
        };
        run::<Vec3, 3>(Scene::<3>::uniform(n, vs), &label, threads, steps);
    } else {
        let vs = if slow {
            Scene::<2>::SLOW
        } else {
            Scene::<2>::FAST
        };
        run::<Vec2, 2>(Scene::<2>::uniform(n, vs), &label, threads, steps);
    }
}
