//! The rebuilds that end a parallel update, planned on several threads, against the
//! serial ones.

use crate::Vector;
use crate::tree::DynamicTree;

use super::assert_same_tree;
use super::parallel_moves::distinct_moves;
use super::tree_scene::{lcg, uniform_tree, unknown_id};

/// The rebuilds that end a parallel update, planned on 2 to 4 threads
/// (`ParallelPairs::finish_on`), against the serial ones (the job dropped) on a copy of
/// the tree: the same tree bit for bit (and the same items per candidate, which sizes
/// the batches planned ahead) after every update, over batches that change all,
/// a third, a tenth and a fiftieth of the proxies (runs that plan many candidates, a few,
/// or none), in 2D and 3D.
fn planned_rebuilds<V: Vector + Sync>() {
    use super::ScopedThreads;
    let mut r = lcg(777);
    let n = 6000;
    let (mut centers, mut serial, ids) = uniform_tree::<V>(&mut r, n);
    let mut trees: Vec<_> = (2..=4).map(|_| serial.clone()).collect();
    let unknown = unknown_id::<V>(n, 5);
    for step in 0..40 {
        let share = [1.0, 0.3, 0.1, 0.02][step % 4];
        let moves = distinct_moves(&mut r, step, share, &mut centers, &ids, unknown);
        let run = |tree: &mut DynamicTree<V, u32>, threads: usize| {
            tree.move_proxies(moves.iter().copied(), |_, _| {});
            let mut pairs = Vec::new();
            let job = tree.parallel_pairs(8);
            for task in 0..job.task_count() {
                job.run(task, |a, b| pairs.push((a, b)));
            }
            if threads > 1 {
                job.finish_on(&ScopedThreads(threads));
            } else {
                drop(job);
            }
            tree.validate().unwrap();
            pairs
        };
        let want = run(&mut serial, 1);
        for (t, tree) in trees.iter_mut().enumerate() {
            let what = format!("step {step}, {} threads", t + 2);
            assert_eq!(run(tree, t + 2), want, "{what}");
            assert_same_tree(tree, &serial, &what);
            assert_eq!(tree.optimizer.changes, serial.optimizer.changes, "{what}");
            assert_eq!(
                tree.optimizer.items_per_candidate, serial.optimizer.items_per_candidate,
                "{what}"
            );
        }
    }
    assert!(
        serial.optimizer.runs > 10,
        "the optimizer ran {} times",
        serial.optimizer.runs
    );
    assert!(serial.optimizer.items_per_candidate > 0);
}

both_dims!(planned_rebuilds);
