//! Splits a step of the "uniform boxes" scenario into its parts (moves, pair update) and
//! prints the medians: `cargo run --release -p bevy_aabb_tree_bench --bin
//! profile_step -- [2d|3d] [N] [fast|slow] [THREADS]` (threads of the pair update, 1 by default).

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

fn run<V: FromArray<D>, const D: usize>(mut scene: Scene<D>, label: &str, threads: usize) {
    let mut ours = OursBroadPhase::<V, D>::new(&scene);
    ours.set_threads(threads);
    let (mut moves, mut updates) = (Vec::new(), Vec::new());
    ours.tree().reset_counters();
    for _ in 0..300 {
        scene.step();
        let (_, m, u) = ours.step_timed(&scene);
        moves.push(m.as_secs_f64() * 1e3);
        updates.push(u.as_secs_f64() * 1e3);
    }
    let stats = ours.tree().stats();
    println!(
        "{label}: moves {:.3} ms, update_pairs {:.3} ms, height {}, area ratio {:.1}, \
         per step: nodes visited {:.0}, pairs found {:.0}",
        median(moves),
        median(updates),
        stats.height,
        stats.area_ratio,
        stats.nodes_visited as f64 / 300.0,
        stats.leaves_visited as f64 / 300.0,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dim = args.first().map_or("2d", String::as_str);
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let slow = args.get(2).is_some_and(|s| s == "slow");
    let threads: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let label = format!(
        "{dim} n={n} {} threads={threads}",
        if slow { "slow" } else { "fast" }
    );
    if dim == "3d" {
        let vs = if slow {
            Scene::<3>::SLOW
        } else {
            Scene::<3>::FAST
        };
        run::<Vec3, 3>(Scene::<3>::uniform(n, vs), &label, threads);
    } else {
        let vs = if slow {
            Scene::<2>::SLOW
        } else {
            Scene::<2>::FAST
        };
        run::<Vec2, 2>(Scene::<2>::uniform(n, vs), &label, threads);
    }
}
