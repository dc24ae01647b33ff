//! A 2D arena for rollback netcode (feature `ggrs`): two players (characters) and
//! bullets from a pool hitting walls and each other, run under `bevy_ggrs`'s
//! `SyncTestSession`, which rolls back and replays every frame and compares checksums
//! of the collision state. Headless:
//!
//! ```sh
//! cargo run --features ggrs --example rollback_arena -- 600 7   # frames, check distance
//! ```
//!
//! It prints what happened and whether any replay differed (it exits non-zero then).

#[path = "support/arena.rs"]
mod arena;

use bevy::prelude::*;
use bevy_ggrs::prelude::*;

/// The replays that differed, as `bevy_ggrs` reports them.
#[derive(Resource, Default)]
struct Mismatches(Vec<String>);

fn main() {
    let mut args = std::env::args().skip(1);
    let frames: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(600);
    let distance: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(7);
    let mut app = arena::arena_app(distance, 0x5eed);
    app.add_plugins(bevy::log::LogPlugin::default());
    app.init_resource::<Mismatches>().add_observer(
        |m: On<SyncTestMismatch>, mut all: ResMut<Mismatches>| {
            all.0.push(format!(
                "frame {}: frames {:?}",
                m.current_frame, m.mismatched_frames
            ));
        },
    );
    for _ in 0..frames {
        app.update();
    }
    let tally = *app.world().resource::<arena::Tally>();
    let mismatches = &app.world().resource::<Mismatches>().0;
    println!(
        "{frames} frames, check distance {distance}: {} contacts started (replays included), {} bullets fired, {} stopped; {} mismatches",
        tally.started,
        tally.fired,
        tally.stopped,
        mismatches.len()
    );
    for m in mismatches {
        println!("mismatch at {m}");
    }
    if !mismatches.is_empty() {
        std::process::exit(1);
    }
}
