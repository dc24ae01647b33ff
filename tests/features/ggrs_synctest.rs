//! The rollback arena (`examples/rollback_arena.rs`) under `bevy_ggrs`'s own check of
//! determinism, `SyncTestSession`: every frame it rolls the world back `check_distance`
//! frames, replays them with the same inputs, and compares the checksums that
//! `AabbTreeRollbackPlugin` registers (touching pairs, world shapes, characters) with
//! those of the first run. 2,000 frames of random inputs at check distances 2 and 7:
//! no replay may differ, and the game must have played (bullets fired and stopped,
//! contacts started), so that a quiet arena cannot pass.
#![cfg(feature = "ggrs")]

#[path = "../../examples/support/arena.rs"]
mod arena;

use bevy::prelude::*;
use bevy_aabb_tree::d2::*;
use bevy_ggrs::RollbackFrameCount;
use bevy_ggrs::prelude::*;

/// The replays that differed.
#[derive(Resource, Default)]
struct Mismatches(Vec<(i32, Vec<i32>)>);

/// What a run of the arena gives: the frame it reached, its tally and the mismatches.
type Outcome = (i32, arena::Tally, Vec<(i32, Vec<i32>)>);

/// Runs the arena for `frames` frames.
fn run(check_distance: usize, seed: u64, frames: usize) -> Outcome {
    let mut app = arena::arena_app(check_distance, seed);
    app.init_resource::<Mismatches>().add_observer(
        |m: On<SyncTestMismatch>, mut all: ResMut<Mismatches>| {
            all.0.push((m.current_frame, m.mismatched_frames.clone()));
        },
    );
    for _ in 0..frames {
        app.update();
    }
    assert!(app.world().resource::<CollisionConfig>().replayable);
    let frame = app.world().resource::<RollbackFrameCount>().0;
    let tally = *app.world().resource::<arena::Tally>();
    let mismatches = std::mem::take(&mut app.world_mut().resource_mut::<Mismatches>().0);
    (frame, tally, mismatches)
}

fn check(check_distance: usize, seed: u64) {
    let frames = 2_000;
    let (frame, tally, mismatches) = run(check_distance, seed, frames);
    // A mismatch stops the session where it is: (frame, mismatched frames).
    assert!(
        mismatches.is_empty(),
        "check distance {check_distance}: {} replays differed, the first {:?}",
        mismatches.len(),
        mismatches.first()
    );
    assert!(
        frame >= frames as i32 - 2,
        "the session advanced to frame {frame} only"
    );
    assert!(
        tally.fired > 50 && tally.stopped > 50 && tally.started > 100,
        "the arena hardly played: {tally:?}"
    );
}

#[test]
fn synctest_check_distance_2() {
    check(2, 0x2);
}

#[test]
fn synctest_check_distance_7() {
    check(7, 0x7);
}
