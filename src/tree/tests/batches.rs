//! The public batches: `move_proxies_on` against one `move_proxy` per move, whatever runs
//! its refit; `create_proxies` against one `create_proxy` per box; bad input to
//! `create_proxy_with` and `touch_proxy`; and batches that panic halfway.

use std::collections::BTreeSet;

use glam::{Vec2, Vec3};

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::{CallingThread, DynamicTree, TaskRunner, TreeError};

use super::ScopedThreads;
use super::tree_scene::{jump_moves, lcg, uniform_tree, unknown_id, v};

/// `move_proxies_on` (on two threads, and on the calling one) against `move_proxy` called
/// once per move on copies of a tree: the same results (unknown ids and invalid boxes
/// refused), fat boxes, moved counts and pairs, with batches large enough to refit the
/// whole tree, middling and small, and with the move cache on and off.
fn batch_moves_match_single_moves<V: Vector>(move_cache: bool) {
    let mut r = lcg(99);
    let n = 3000;
    let (mut centers, mut single, ids) = uniform_tree::<V>(&mut r, n);
    single.set_move_cache(move_cache);
    let runners: [&dyn TaskRunner; 2] = [&ScopedThreads(2), &CallingThread];
    let mut batched: Vec<_> = runners.iter().map(|_| single.clone()).collect();
    let mut ps = Vec::new();
    single.update_pairs(&mut ps);
    for tree in &mut batched {
        tree.update_pairs(&mut Vec::new());
    }
    let unknown = unknown_id::<V>(n, 3);
    let mut changed = 0;
    for step in 0..16 {
        let count = [n, n / 4, 500, 40][step % 4];
        let moves = jump_moves(&mut r, step, count, &mut centers, &ids, unknown);
        let want: Vec<_> = moves
            .iter()
            .map(|&(id, tight, d)| (id, single.move_proxy(id, tight, d)))
            .collect();
        assert!(want.iter().any(|(_, r)| r.is_err()), "step {step}");
        changed += want.iter().filter(|(_, r)| *r == Ok(true)).count();
        let want_moved = single.moved_count();
        let want_boxes: Vec<_> = ids.iter().map(|&id| single.fat_box(id)).collect();
        ps.clear();
        single.update_pairs(&mut ps);
        let want_pairs: BTreeSet<_> = ps.iter().copied().collect();
        for (tree, runner) in batched.iter_mut().zip(runners) {
            let mut got = Vec::new();
            tree.move_proxies_on(moves.iter().copied(), runner, |id, res| got.push((id, res)));
            assert_eq!(got, want, "step {step}");
            tree.validate().unwrap();
            assert_eq!(tree.moved_count(), want_moved);
            let boxes: Vec<_> = ids.iter().map(|&id| tree.fat_box(id)).collect();
            assert_eq!(boxes, want_boxes, "step {step}");
            let mut pb = Vec::new();
            tree.update_pairs(&mut pb);
            tree.validate().unwrap();
            let got_pairs: BTreeSet<_> = pb.iter().copied().collect();
            assert_eq!(got_pairs.len(), pb.len());
            assert_eq!(got_pairs, want_pairs, "step {step}");
        }
    }
    assert!(changed > 5000, "{changed} moves changed a fat box");
}

/// `create_proxies` against `create_proxy` once per box: the same ids and fat boxes, a valid
/// tree and the same pairs, for a bulk insertion into an empty tree (one build), a few into
/// a large one (one insertion each) and many into a large one (a rebuild); nothing added
/// when one box is invalid.
fn bulk_insert_matches_single_inserts<V: Vector>() {
    let mut r = lcg(7);
    let side = 60.0;
    let mut boxes = |count: usize| -> Vec<(BoundingBox<V>, u32)> {
        (0..count)
            .map(|i| {
                let c = v::<V>([r() * side, r() * side, r() * side]);
                (
                    BoundingBox::from_center_half_extents(c, V::splat(0.3 + r())),
                    i as u32,
                )
            })
            .collect()
    };
    let mut bulk = DynamicTree::<V, u32>::new();
    let mut single = DynamicTree::<V, u32>::new();
    for count in [500, 10, 31, 300, 2000] {
        let items = boxes(count);
        let ids = bulk.create_proxies(items.iter().copied()).unwrap();
        let want: Vec<_> = items
            .iter()
            .map(|&(b, d)| single.create_proxy(b, d).unwrap())
            .collect();
        assert_eq!(ids, want);
        bulk.validate().unwrap();
        assert_eq!(bulk.moved_count(), single.moved_count());
        for (id, _, fat) in single.proxies() {
            assert_eq!(bulk.fat_box(id), Some(fat));
        }
        let (mut pb, mut ps) = (Vec::new(), Vec::new());
        bulk.update_pairs(&mut pb);
        single.update_pairs(&mut ps);
        assert_eq!(
            pb.iter().copied().collect::<BTreeSet<_>>(),
            ps.iter().copied().collect::<BTreeSet<_>>()
        );
    }
    let len = bulk.len();
    let mut items = boxes(40);
    items[17].0 = BoundingBox::from_min_max(V::ONE, V::ZERO);
    assert_eq!(bulk.create_proxies(items), Err(TreeError::InvalidBox));
    assert_eq!(bulk.len(), len);
    bulk.validate().unwrap();
}

/// `create_proxy_with` refuses a non-finite displacement and an invalid box, and
/// `touch_proxy` an unknown id, leaving the tree as it was; a created proxy's fat box is
/// what `fatten` gives.
fn single_bad_input<V: Vector>() {
    let mut tree = DynamicTree::<V, u32>::new();
    let good = BoundingBox::from_center_half_extents(V::ZERO, V::ONE);
    let d = v::<V>([3.0, -1.0, 0.5]);
    let id = tree.create_proxy_with(good, d, 1).unwrap();
    assert_eq!(tree.fat_box(id), Some(tree.fatten(&good, d)));
    assert_eq!(tree.fat_box(id), Some(good.swept(d).grown(tree.margin())));
    for bad in [V::splat(f32::NAN), V::splat(f32::INFINITY)] {
        assert_eq!(
            tree.create_proxy_with(good, bad, 2),
            Err(TreeError::InvalidValue)
        );
    }
    for bad in [
        BoundingBox::from_min_max(V::splat(f32::NAN), V::ONE),
        BoundingBox::from_min_max(V::ONE, V::ZERO),
    ] {
        assert_eq!(
            tree.create_proxy_with(bad, V::ZERO, 3),
            Err(TreeError::InvalidBox)
        );
    }
    assert_eq!(tree.len(), 1);
    tree.validate().unwrap();
    tree.destroy_proxy(id).unwrap();
    assert_eq!(tree.touch_proxy(id), Err(TreeError::UnknownProxy(id)));
    tree.validate().unwrap();
}

/// A panic in the caller's callback (or iterator) halfway through a batch leaves a valid
/// tree: every change decided so far is applied, the tree agrees with its own fat boxes,
/// and the next update reports exactly the brute-force pairs.
fn batch_panic_safety<V: Vector>(move_cache: bool) {
    let n = 600;
    let side = 2.5 * (n as f32).sqrt();
    let mut r = lcg(31);
    let mut tree = DynamicTree::<V, u32>::new();
    tree.set_move_cache(move_cache);
    let ids = tree
        .build((0..n as u32).map(|i| {
            let c = v::<V>([r() * side, r() * side, r() * side]);
            (BoundingBox::from_center_half_extents(c, V::splat(0.5)), i)
        }))
        .unwrap();
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    let moves: Vec<_> = ids
        .iter()
        .map(|&id| {
            let c = v::<V>([r() * side, r() * side, r() * side]);
            (
                id,
                BoundingBox::from_center_half_extents(c, V::splat(0.5)),
                V::ZERO,
            )
        })
        .collect();
    let mut seen = 0;
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tree.move_proxies(moves.iter().copied(), |_, _| {
            seen += 1;
            assert!(seen < 400, "the caller's callback panics");
        });
    }));
    assert!(caught.is_err());
    tree.validate().unwrap();
    let mut caught_boxes = 0;
    let caught_fat = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let boxes = ids.iter().map(|&id| {
            caught_boxes += 1;
            assert!(caught_boxes < 300, "the caller's iterator panics");
            (
                id,
                BoundingBox::from_center_half_extents(V::ZERO, V::splat(0.5)),
                V::ZERO,
            )
        });
        tree.move_proxies_on(boxes, &ScopedThreads(2), |_, _| {});
    }));
    assert!(caught_fat.is_err());
    tree.validate().unwrap();
    pairs.clear();
    tree.update_pairs(&mut pairs);
    tree.validate().unwrap();
    let got: BTreeSet<_> = pairs.iter().copied().collect();
    assert_eq!(got.len(), pairs.len());
    let fat: Vec<_> = ids.iter().map(|&id| tree.fat_box(id).unwrap()).collect();
    // Every reported pair overlaps, and the 299 boxes set before the iterator panicked
    // (all at the origin, so all overlapping) are reported with one another.
    for &(a, b) in &pairs {
        assert!(tree.fat_box(a).unwrap().overlaps(&tree.fat_box(b).unwrap()));
    }
    for i in 0..299 {
        for j in i + 1..299 {
            assert!(fat[i].overlaps(&fat[j]));
            assert!(got.contains(&(ids[i].min(ids[j]), ids[i].max(ids[j]))));
        }
    }
}

/// Without the move cache, where a move writes its parent's slot.
fn batch_moves_without_move_cache<V: Vector>() {
    batch_moves_match_single_moves::<V>(false);
}

both_dims!(
    batch_moves_match_single_moves(true),
    batch_moves_without_move_cache,
    bulk_insert_matches_single_inserts,
    single_bad_input,
    batch_panic_safety(true)
);

/// Without the move cache, where a move writes its parent's slot before the batch grows
/// the ancestors.
#[test]
fn batch_panic_safety_without_move_cache() {
    batch_panic_safety::<Vec2>(false);
    batch_panic_safety::<Vec3>(false);
}
