//! Without the `parallel` feature the crate starts no thread of its own: the tree's
//! parallel calls run on the calling thread (what a web build needs). With the feature,
//! the same calls start the tree's workers, which shows that this test sees threads.
//!
//! The test runs in a process of its own (`kit::process::alone`), so that no other test
//! starts threads meanwhile. The threads are counted from `/proc/self/task` (Linux).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bevy_aabb_tree::{BoundingBox, DynamicTree};
use glam::Vec2;

use crate::kit::process::{alone, test_name};

/// Threads of this process.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task lists the threads")
        .count()
}

#[test]
fn parallel_calls_start_threads_only_with_the_feature() {
    let name = test_name(
        module_path!(),
        "parallel_calls_start_threads_only_with_the_feature",
    );
    alone(&name, &[], count_threads);
}

fn count_threads() {
    let before = threads();
    let mut tree = DynamicTree::<Vec2, u32>::new();
    let side = 200;
    let at =
        |i: usize, shift: f32| Vec2::new((i % side) as f32 * 1.5 + shift, (i / side) as f32 * 1.5);
    let ids: Vec<_> = (0..side * side)
        .map(|i| {
            let tight = BoundingBox::from_center_half_extents(at(i, 0.0), Vec2::splat(1.0));
            tree.create_proxy(tight, i as u32).unwrap()
        })
        .collect();
    let mut pairs = Vec::new();
    tree.update_pairs_parallel(&mut pairs, 4);
    assert!(!pairs.is_empty());
    // A batch large enough to be spread over threads, moving every box far.
    let moves: Vec<_> = ids
        .iter()
        .enumerate()
        .map(|(i, &id)| {
            let tight = BoundingBox::from_center_half_extents(at(i, 7.3), Vec2::splat(1.0));
            (id, tight, Vec2::ZERO)
        })
        .collect();
    let changed = tree.move_proxies_parallel(
        moves.len(),
        |i| moves[i],
        4,
        |_, r| {
            assert_eq!(r, Ok(true));
        },
    );
    assert_eq!(changed, moves.len());
    pairs.clear();
    tree.update_pairs_parallel(&mut pairs, 4);
    tree.validate().unwrap();
    let after = threads();
    if cfg!(feature = "parallel") {
        assert_eq!(after, before + 3, "the tree's three workers");
    } else {
        assert_eq!(after, before, "no thread started");
    }
}
