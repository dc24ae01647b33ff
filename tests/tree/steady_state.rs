//! No allocation in the steady state: once a tree has run a while on a scene, further steps
//! (moves, pair updates, the incremental rebuilds) reuse the buffers they have and allocate
//! nothing.
//!
//! Allocations are counted per thread by a counting global allocator, so that tests running
//! beside these ones on other threads do not disturb the count. Every scene is driven the
//! way the benchmarks drive the tree (`benches/support/ours_driver.rs`): warmed up, then a
//! second run of steps is counted.

#[path = "../../benches/support/ours_driver.rs"]
mod ours_driver;
#[path = "../../benches/support/scene.rs"]
mod scene;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use glam::{Vec2, Vec3};
use ours_driver::{FromArray, OursBroadPhase};
use scene::Scene;

/// The system allocator, counting this thread's allocations and reallocations.
struct CountingAlloc;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: a thread being torn down has no counter left, and is not counted.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Steps run before counting, and steps counted.
const WARM_UP: usize = 120;
const COUNTED: usize = 120;

/// How each step's pairs are found.
#[derive(Clone, Copy, Debug)]
enum Update {
    /// `update_pairs`.
    Serial,
    /// The parallel update ([`DynamicTree::parallel_pairs`]) split into at least this many
    /// tasks, run on this thread one after the other, as a pool would run them.
    Tasks(usize),
    /// `update_pairs_parallel` with one thread (its tasks run in place).
    OneThread,
}

/// Runs `scene` warmed up, then counts the allocations of the next steps; also checks that
/// the steps did report pairs (the scene is not trivially idle).
fn steady_allocations<V: FromArray<D>, const D: usize>(
    mut scene: Scene<D>,
    update: Update,
) -> usize {
    let mut ours = OursBroadPhase::<V, D>::new(&scene);
    let step = |ours: &mut OursBroadPhase<V, D>, scene: &Scene<D>| match update {
        Update::Serial => ours.step(scene),
        Update::Tasks(tasks) => ours.step_with_tasks(scene, tasks),
        Update::OneThread => ours.step_parallel(scene, 1),
    };
    for _ in 0..WARM_UP {
        scene.step();
        step(&mut ours, &scene);
    }
    let before = allocations();
    let mut pairs = 0;
    let mut updated = 0;
    for _ in 0..COUNTED {
        scene.step();
        pairs += step(&mut ours, &scene);
        updated += ours.updated_leaves();
    }
    let counted = allocations() - before;
    assert!(pairs > 0, "the scene reported no pair");
    assert!(updated > 0, "no fat box changed");
    counted
}

/// Keeps every `keep`-th box moving and stops the others: a mostly static scene, whose
/// small batches of moves take the tree's other paths (leaf by leaf, rotations).
fn mostly_static<const D: usize>(mut scene: Scene<D>, keep: usize) -> Scene<D> {
    for (i, v) in scene.velocities.iter_mut().enumerate() {
        if i % keep != 0 {
            *v = [0.0; D];
        }
    }
    scene
}

/// Asserts that no scene of the steady-state tests allocates under `update`: boxes made by
/// `uniform`, all fast, all slow, and mostly static. `dim` names the dimension in the
/// failures.
fn assert_no_steady_allocation<V: FromArray<D>, const D: usize>(
    uniform: fn(usize, f32) -> Scene<D>,
    update: Update,
    dim: &str,
) {
    let n = 4000;
    for (label, scene) in [
        ("fast", uniform(n, Scene::<D>::FAST)),
        ("slow", uniform(n, Scene::<D>::SLOW)),
        (
            "one in 50 moving",
            mostly_static(uniform(n, Scene::<D>::FAST), 50),
        ),
    ] {
        let allocations = steady_allocations::<V, D>(scene, update);
        assert_eq!(allocations, 0, "{dim} {label}, {update:?}");
    }
}

#[test]
fn no_allocation_in_the_steady_state_2d() {
    assert_no_steady_allocation::<Vec2, 2>(Scene::<2>::uniform, Update::Serial, "2D");
}

#[test]
fn no_allocation_in_the_steady_state_3d() {
    assert_no_steady_allocation::<Vec3, 3>(Scene::<3>::uniform, Update::Serial, "3D");
}

/// The parallel pair update, its tasks run as a pool would run them (here on one thread, so
/// that the counting sees them): splitting the walk and running its tasks reuse their
/// buffers too (a pool's own cost of spawning a task is the pool's); and
/// `update_pairs_parallel` with one thread. Every scene of the serial tests.
#[test]
fn no_allocation_in_the_steady_state_parallel() {
    for update in [Update::Tasks(1), Update::Tasks(32), Update::OneThread] {
        assert_no_steady_allocation::<Vec2, 2>(Scene::<2>::uniform, update, "2D");
        assert_no_steady_allocation::<Vec3, 3>(Scene::<3>::uniform, update, "3D");
    }
}
