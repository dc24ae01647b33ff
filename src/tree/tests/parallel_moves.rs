//! `move_proxies_parallel` against `move_proxies`: the same outcomes and the same tree,
//! also for a proxy given twice and after a panic in the caller's closures.

use std::collections::{BTreeMap, BTreeSet};

use glam::Vec2;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::{BatchThresholds, DynamicTree, ProxyId};

use super::tree_scene::{lcg, uniform_tree, unknown_id, v};
use super::{
    LATTICE_SIDE, SMALL_BATCHES, assert_same_tree, brute_pairs, lattice_box, lattice_tree,
};

/// Batches of distinct moves for [`parallel_moves()`]: the share `share` of the proxies,
/// in id order, in reverse, in id order but for a few put at the end, or strided; each box jumps by up to `jump` (most leave their
/// fat box), with an invalid box and an unknown id among them.
pub(super) fn distinct_moves<V: Vector>(
    r: &mut impl FnMut() -> f32,
    step: usize,
    share: f32,
    centers: &mut [V],
    ids: &[ProxyId],
    unknown: ProxyId,
) -> Vec<(ProxyId, BoundingBox<V>, V)> {
    let n = centers.len();
    let count = ((n as f32 * share) as usize).max(1);
    let mut chosen: Vec<usize> = match step / 4 % 4 {
        0 => (0..count).map(|k| k * n / count).collect(),
        1 => (0..count).rev().map(|k| k * n / count).collect(),
        2 => {
            // In id order but for a few moves taken out and put at the end.
            let (late, mut set): (Vec<_>, Vec<_>) = (0..count)
                .map(|k| k * n / count)
                .partition(|&i| i % 41 == 20);
            set.extend(late);
            set
        }
        _ => {
            let mut set: Vec<_> = (0..count).map(|k| (k * 389 + step) % n).collect();
            set.dedup();
            let mut seen = BTreeSet::new();
            set.retain(|&i| seen.insert(i));
            set
        }
    };
    chosen.dedup();
    let mut moves = Vec::new();
    for (k, &i) in chosen.iter().enumerate() {
        let jump = v::<V>([r() - 0.5, r() - 0.5, r() - 0.5]) * (2.0 * r());
        centers[i] += jump;
        let mut tight = BoundingBox::from_center_half_extents(centers[i], V::splat(0.5));
        let mut id = ids[i];
        match k % 211 {
            7 => tight = BoundingBox::from_min_max(V::splat(f32::NAN), V::ONE),
            8 if k < 300 => id = unknown,
            _ => {}
        }
        moves.push((id, tight, jump * (r() * 2.0)));
    }
    moves
}

/// `move_proxies_parallel` on 1 to 4 threads against `move_proxies` on copies of a tree,
/// batch after batch: the same outcomes (the unknown id and invalid boxes refused), the
/// same count of changes, and the same tree bit for bit (nodes, marks, leaves, move
/// cache); then the same pairs in the same order. The batches change all, a third, a
/// tenth and a fiftieth of the proxies (the whole-tree refit, the refit of the recent
/// subtrees, the ancestors grown in memory order, one by one), in id order (each task
/// owns a run of the move cache), in id order with a few out of place (the calling
/// thread decides those last), reversed and strided (the calling thread stores).
fn parallel_moves<V: Vector + Sync>(move_cache: bool, thresholds: BatchThresholds) {
    let steps: Vec<(usize, f32)> = (0..24)
        .map(|step| (step, [1.0, 0.3, 0.1, 0.02][step % 4]))
        .collect();
    parallel_moves_on::<V>(3000, move_cache, thresholds, &steps);
}

/// [`parallel_moves`] on a tree of `n` proxies, with the batches `steps`: each a step
/// (which picks the order of the moves, see [`distinct_moves`]) and the share of the
/// proxies moved. A batch as large as the tree's `parallel_moves_from` given 2 threads or
/// more runs on the tree's pool of that many threads (the calling one alone without the
/// `parallel` feature), and with the feature a batch that refits the tree in one pass
/// refits it as tasks.
fn parallel_moves_on<V: Vector + Sync>(
    n: usize,
    move_cache: bool,
    thresholds: BatchThresholds,
    steps: &[(usize, f32)],
) {
    let mut r = lcg(4242);
    let (mut centers, mut serial, ids) = uniform_tree::<V>(&mut r, n);
    serial.set_move_cache(move_cache);
    serial.set_batch_thresholds(thresholds);
    let mut trees: Vec<_> = (1..=4).map(|_| serial.clone()).collect();
    let unknown = unknown_id::<V>(n, 5);
    let (mut want_pairs, mut got_pairs) = (Vec::new(), Vec::new());
    for &(step, share) in steps {
        let moves = distinct_moves(&mut r, step, share, &mut centers, &ids, unknown);
        let mut want = Vec::new();
        serial.move_proxies(moves.iter().copied(), |id, res| want.push((id, res)));
        serial.validate().unwrap();
        want.sort_by_key(|&(id, _)| id);
        let changes = want.iter().filter(|(_, res)| *res == Ok(true)).count();
        assert!(want.iter().any(|(_, res)| res.is_err()), "step {step}");
        want_pairs.clear();
        let mut stepped = serial.clone();
        stepped.update_pairs(&mut want_pairs);
        for (t, tree) in trees.iter_mut().enumerate() {
            let what = format!("step {step}, {} threads", t + 1);
            let got = std::sync::Mutex::new(Vec::new());
            let refits = tree.parallel_refits;
            let changed = tree.move_proxies_parallel(
                moves.len(),
                |i| moves[i],
                t + 1,
                |id, res| got.lock().unwrap().push((id, res)),
            );
            let mut got = got.into_inner().unwrap();
            got.sort_by_key(|&(id, _)| id);
            assert_eq!(got, want, "{what}");
            assert_eq!(changed, changes, "{what}");
            if t > 0 && moves.len() >= thresholds.parallel_moves_from {
                let pool = tree.scratch.workers.as_ref().map(|w| w.threads());
                let threads = if cfg!(feature = "parallel") { t + 1 } else { 1 };
                assert_eq!(pool, Some(threads), "{what}: the tree's pool");
                let as_tasks = cfg!(feature = "parallel") && move_cache && tree.exact;
                if as_tasks {
                    assert!(tree.parallel_refits > refits, "{what}: no refit as tasks");
                }
            }
            tree.validate().unwrap();
            assert_same_tree(tree, &serial, &what);
            got_pairs.clear();
            tree.update_pairs(&mut got_pairs);
            assert_eq!(got_pairs, want_pairs, "{what}");
            assert_same_tree(tree, &stepped, &what);
        }
        serial = stepped;
    }
}

both_dims!(parallel_moves(true, super::SMALL_BATCHES));

/// [`parallel_moves`] at the default thresholds, on a tree large enough for them: 20,000
/// proxies, each batch moving all of them or nine tenths (at least the 16,384 moves from
/// which a batch spreads over threads, 4 tasks of over 4,096), in each of the four
/// orders of [`distinct_moves`].
fn parallel_moves_at_defaults<V: Vector + Sync>() {
    let steps = [(0, 1.0), (4, 1.0), (5, 0.9), (8, 1.0), (12, 1.0)];
    parallel_moves_on::<V>(20_000, true, BatchThresholds::default(), &steps);
}

both_dims!(parallel_moves_at_defaults);

#[test]
fn parallel_moves_without_move_cache() {
    parallel_moves::<Vec2>(false, SMALL_BATCHES);
}

/// Batches of middling size (a sixteenth to an eighth of the proxies) on 2 and 3 threads
/// against the same batches on one: where the moved leaves keep to a band across the
/// lattice (the batches refit the recent subtrees, as tasks, the band reaching into
/// several) and where they are scattered (after the first few, they grow ancestors), the
/// same tree bit for bit, batch after batch, and the same pairs in the same order.
#[test]
fn parallel_middling_batches() {
    for region in [true, false] {
        let (mut serial, ids) = lattice_tree(8);
        serial.set_batch_thresholds(SMALL_BATCHES);
        let mut trees: Vec<_> = [2, 3].map(|threads| (threads, serial.clone())).into();
        let (mut refitted, mut grown, mut found) = (0, 0, 0);
        for update in 1..=12usize {
            let moves: Vec<_> = (0..ids.len())
                .filter(|&i| {
                    if region {
                        i / LATTICE_SIDE < 6
                    } else {
                        (i + update) % 11 == 0
                    }
                })
                .map(|i| (ids[i], lattice_box(i, update), Vec2::ZERO))
                .collect();
            serial.move_proxies(moves.iter().copied(), |_, result| {
                assert_eq!(result, Ok(true));
            });
            let refit = serial.exact;
            refitted += usize::from(refit);
            grown += usize::from(!refit);
            let mut want = Vec::new();
            serial.update_pairs(&mut want);
            found += want.len();
            for (threads, tree) in &mut trees {
                let what = format!("update {update}, {threads} threads, region {region}");
                let refits = tree.parallel_refits;
                let changed =
                    tree.move_proxies_parallel(moves.len(), |i| moves[i], *threads, |_, _| {});
                assert_eq!(changed, moves.len(), "{what}");
                // The same way as on one thread; a refit ran as tasks (on threads of
                // the tree's own, which only the `parallel` feature starts).
                assert_eq!(tree.exact, refit, "{what}");
                let as_tasks = refit && cfg!(feature = "parallel");
                assert_eq!(tree.parallel_refits > refits, as_tasks, "{what}");
                let mut got = Vec::new();
                tree.update_pairs(&mut got);
                tree.validate().unwrap();
                assert_eq!(got, want, "{what}");
                assert_same_tree(tree, &serial, &what);
            }
        }
        // Pairs were found, and both ways were taken: the band's batches all refit, the
        // scattered ones grow once the recent part covers most of the tree.
        assert!(found > 0, "region {region}");
        if region {
            assert_eq!((refitted, grown), (12, 0));
        } else {
            assert!(
                refitted >= 1 && grown >= 8,
                "{refitted} refitted, {grown} grown"
            );
        }
    }
}

/// A proxy given twice in one parallel batch (the one case where it differs from
/// `move_proxies`) keeps the box of one of its moves, and the tree stays valid: the next
/// update reports exactly the brute-force pairs of the moved proxies. A panic in the
/// caller's `moves` or `result` on a task's thread leaves a valid tree with its move
/// cache and the changes decided until then, whose pairs the next update reports.
fn parallel_moves_repeats_and_panics<V: Vector + Sync>() {
    let mut r = lcg(515);
    let n = 2000;
    let (mut centers, mut tree, ids) = uniform_tree::<V>(&mut r, n);
    tree.set_batch_thresholds(SMALL_BATCHES);
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    let unknown = unknown_id::<V>(n, 1);
    for step in 0..6 {
        let once = distinct_moves(&mut r, step, 0.6, &mut centers, &ids, unknown);
        // Each move twice, next to itself; then, on odd steps, again at the end of the
        // batch, further (the tasks' first ids no longer increase: the calling thread
        // stores every change); on even steps, the first move again in the middle of the
        // batch, inside a task whose run of the move cache does not hold it (that task
        // leaves it to the calling thread, the first task notes it by its bit). Steps 0
        // to 3 give the moves in id order, so that on even ones each task stores its
        // changes and notes them by their bits, a proxy moved twice counted twice.
        let mut moves = Vec::new();
        for &(id, tight, d) in &once {
            moves.push((id, tight, d));
            moves.push((id, tight, d * 2.0));
        }
        if step % 2 == 1 {
            for &(id, tight, d) in once.iter().step_by(3) {
                moves.push((id, tight.translated(d), d));
            }
        } else {
            use crate::tree::constants::MOVE_TASKS_PER_THREAD;
            let count = moves.len() + 1;
            let tasks = (3 * MOVE_TASKS_PER_THREAD).min(count / SMALL_BATCHES.min_moves_per_task);
            let at = |t: usize| t * count / tasks;
            // One past the start of the middle task.
            let middle = at(tasks / 2) + 1;
            assert!(tasks > 2 && middle < at(tasks / 2 + 1), "step {step}");
            let (id, tight, d) = moves[0];
            moves.insert(middle, (id, tight.translated(d * 0.5), d));
        }
        let given: BTreeMap<ProxyId, Vec<BoundingBox<V>>> =
            moves.iter().fold(BTreeMap::new(), |mut m, &(id, t, d)| {
                m.entry(id).or_default().push(tree.fatten(&t, d));
                m
            });
        let old: BTreeMap<_, _> = ids
            .iter()
            .map(|&id| (id, tree.fat_box(id).unwrap()))
            .collect();
        tree.move_proxies_parallel(moves.len(), |i| moves[i], 3, |_, _| {});
        tree.validate().unwrap();
        let mut moved = BTreeSet::new();
        let mut boxes = BTreeMap::new();
        for &id in &ids {
            let fat = tree.fat_box(id).unwrap();
            if fat != old[&id] {
                assert!(
                    given[&id].contains(&fat),
                    "step {step}: {id:?} got a box it was not given"
                );
                moved.insert(id);
            }
            boxes.insert(id, fat);
        }
        pairs.clear();
        tree.update_pairs(&mut pairs);
        tree.validate().unwrap();
        let got: BTreeSet<_> = pairs.iter().copied().collect();
        assert_eq!(got.len(), pairs.len(), "step {step}: a pair reported twice");
        assert_eq!(got, brute_pairs(&boxes, &moved), "step {step}");
    }
    // A panic in the caller's `moves`, then in its `result`, on a thread of a task
    // (not at the first move of a run, which the calling thread also reads).
    for panic_in_result in [false, true] {
        let moves = distinct_moves(&mut r, 0, 1.0, &mut centers, &ids, unknown);
        let old: BTreeMap<_, _> = ids
            .iter()
            .map(|&id| (id, tree.fat_box(id).unwrap()))
            .collect();
        let last = moves.len() * 3 / 4 + 1;
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            tree.move_proxies_parallel(
                moves.len(),
                |i| {
                    assert!(panic_in_result || i != last, "the caller's moves panic");
                    moves[i]
                },
                4,
                |id, _| {
                    assert!(
                        !panic_in_result || id != moves[last].0,
                        "the caller's result panics"
                    )
                },
            );
        }));
        assert!(caught.is_err());
        assert!(tree.move_cache());
        // The changes decided before the panic are in the tree.
        let kept = assert_pairs_of_changes(&mut tree, &old);
        assert!(kept > 100, "{kept} moves were kept");
    }
}

/// Checks `tree` after a batch that may have panicked: valid, and its next update reports
/// exactly the brute-force pairs of the proxies whose fat box differs from `old` (every
/// live proxy's box before the batch). Returns how many differ.
fn assert_pairs_of_changes<V: Vector>(
    tree: &mut DynamicTree<V, u32>,
    old: &BTreeMap<ProxyId, BoundingBox<V>>,
) -> usize {
    tree.validate().unwrap();
    let mut moved = BTreeSet::new();
    let mut boxes = BTreeMap::new();
    for (&id, &before) in old {
        let fat = tree.fat_box(id).unwrap();
        if fat != before {
            moved.insert(id);
        }
        boxes.insert(id, fat);
    }
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    tree.validate().unwrap();
    let got: BTreeSet<_> = pairs.iter().copied().collect();
    assert_eq!(got, brute_pairs(&boxes, &moved));
    moved.len()
}

/// A parallel batch whose `result` panics at every move, so that each thread stops at
/// its first task and the other tasks never start, after a batch that moved every proxy:
/// the tasks that did not start add nothing (none of the earlier batch's changes is
/// taken again), and the next update reports exactly the brute-force pairs of the
/// proxies whose fat box changed.
#[test]
fn parallel_moves_panic_in_every_task() {
    let mut r = lcg(99);
    let n = 2000;
    let (mut centers, mut tree, ids) = uniform_tree::<Vec2>(&mut r, n);
    tree.set_batch_thresholds(SMALL_BATCHES);
    let unknown = unknown_id::<Vec2>(n, 1);
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    let moves = distinct_moves(&mut r, 0, 1.0, &mut centers, &ids, unknown);
    tree.move_proxies_parallel(moves.len(), |i| moves[i], 2, |_, _| {});
    tree.update_pairs(&mut pairs);
    let old: BTreeMap<_, _> = ids
        .iter()
        .map(|&id| (id, tree.fat_box(id).unwrap()))
        .collect();
    let moves = distinct_moves(&mut r, 0, 1.0, &mut centers, &ids, unknown);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tree.move_proxies_parallel(
            moves.len(),
            |i| moves[i],
            2,
            |_, _| panic!("the caller's result panics"),
        );
    }));
    assert!(caught.is_err());
    let kept = assert_pairs_of_changes(&mut tree, &old);
    assert!(kept <= 2, "{kept} moves kept");
}

both_dims!(parallel_moves_repeats_and_panics);
