//! The cost of a pair filter: the `stress` scene (N uniform moving boxes, `fast`) ticked
//! by two apps in one process, one with a `PairFilter` and `AskPairFilter` on a tenth of
//! the colliders, one without either; ticks interleave and the order alternates.
//!
//! `cargo run --release -p bevy_aabb_tree_bench --features plugin --bin filter -- [N]
//! [2d|3d]` (defaults: 10000 2d).
//!
//! The rule reads a component of both entities (a team), as a game's would: colliders
//! of one team do not touch. A tenth of the colliders have `AskPairFilter` and a team of
//! three. Prints the median of `app.update()` for each app and their ratio, and the
//! touching pairs of each at the end (fewer with the filter: its vetoes).

#[path = "../dim.rs"]
mod dim;
#[path = "../mover.rs"]
mod mover;
#[path = "../../../benches/support/scene.rs"]
mod scene;

use std::time::Instant;

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_aabb_tree::prelude::*;
use dim::Dim;
use mover::scene_app;
use scene::{Scene, Uniform, size_and_dimension};

/// Ticks run before measuring (the first one inserts every collider).
const WARMUP: usize = 30;
/// Ticks measured, per app.
const TICKS: usize = 300;

/// A collider's team: the rule vetoes pairs of one team.
#[derive(Component, Clone, Copy, PartialEq, Eq)]
struct Team(u8);

/// Colliders of one team do not touch.
#[derive(SystemParam)]
struct NoTeamHits<'w, 's> {
    teams: Query<'w, 's, &'static Team>,
}

impl PairFilter for NoTeamHits<'_, '_> {
    fn allows(&self, a: Entity, b: Entity) -> bool {
        match (self.teams.get(a), self.teams.get(b)) {
            (Ok(x), Ok(y)) => x != y,
            _ => true,
        }
    }
}

fn app<V: Dim, const D: usize>(scene: &Scene<D>, filtered: bool) -> App {
    let mut app = App::new();
    let plugin = AabbTreePlugin::<V>::default();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins(if filtered {
            plugin.with_pair_filter::<NoTeamHits>()
        } else {
            plugin
        });
    scene_app::<V, D>(app, scene, WARMUP, |i, e| {
        if filtered && i % 10 == 0 {
            e.insert((AskPairFilter, Team((i / 10 % 3) as u8)));
        }
    })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn run<V, const D: usize>(n: usize)
where
    V: Dim,
    Scene<D>: Uniform,
{
    let scene = Scene::<D>::uniform_in(n, Scene::<2>::FAST);
    let mut apps = [app::<V, D>(&scene, false), app::<V, D>(&scene, true)];
    let mut times: [Vec<f64>; 2] = Default::default();
    for tick in 0..TICKS {
        let order = if tick % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let t = Instant::now();
            apps[i].update();
            times[i].push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let touching = |app: &App| {
        app.world()
            .resource::<AabbTree<V>>()
            .touching_pairs()
            .count()
    };
    let [plain, filtered] = &mut times;
    let (plain, filtered) = (median(plain), median(filtered));
    println!("{D}D, {n} boxes (fast), a tenth with AskPairFilter, {TICKS} ticks each, alternated");
    println!("| app | tick (ms, median) | touching pairs at the end |");
    println!("|---|---|---|");
    println!("| no filter | {plain:.3} | {} |", touching(&apps[0]));
    println!(
        "| filter on a tenth | {filtered:.3} | {} |",
        touching(&apps[1])
    );
    println!("ratio filter / no filter: {:.3}", filtered / plain);
}

fn main() {
    let (n, three_d) = size_and_dimension(10_000, "filter [N] [2d|3d]");
    if three_d {
        run::<Vec3, 3>(n);
    } else {
        run::<Vec2, 2>(n);
    }
}
