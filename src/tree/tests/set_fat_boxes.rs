//! Fat boxes set by the caller (`set_fat_box`, `set_fat_boxes`), the keep rule
//! (`keeps_fat_box` with `fatten`), and batches that panic halfway.

use std::collections::BTreeSet;

use glam::{Vec2, Vec3};

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::{DynamicTree, TreeError};

use super::tree_scene::{jump_moves, lcg, uniform_tree, unknown_id, v};

/// `set_fat_boxes` against `set_fat_box` called once per box on two copies of a tree:
/// the same results (an unknown id and invalid boxes refused), fat boxes, moved counts
/// and pairs, with batches above and below the size from which the batch sorts.
fn batch_fat_boxes<V: Vector>() {
    let mut r = lcg(99);
    let n = 1500;
    let side = 2.5 * (n as f32).sqrt();
    let (_, mut batched, ids) = uniform_tree::<V>(&mut r, n);
    let mut single = batched.clone();
    let (mut pb, mut ps) = (Vec::new(), Vec::new());
    batched.update_pairs(&mut pb);
    single.update_pairs(&mut ps);
    let unknown = unknown_id::<V>(n, 3);
    for step in 0..12 {
        let count = if step % 3 == 2 { 50 } else { n };
        let boxes: Vec<_> = (0..count)
            .map(|k| {
                let i = (k * 389 + step) % n;
                let c = v::<V>([r() * side, r() * side, r() * side]);
                let fat = BoundingBox::from_center_half_extents(c, V::splat(0.5 + r()));
                match k % 101 {
                    3 => (unknown, fat),
                    4 => (ids[i], BoundingBox::from_min_max(V::ONE, V::ZERO)),
                    _ => (ids[i], fat),
                }
            })
            .collect();
        let mut got = Vec::new();
        batched.set_fat_boxes(boxes.iter().copied(), |id, res| got.push((id, res)));
        let want: Vec<_> = boxes
            .iter()
            .map(|&(id, fat)| (id, single.set_fat_box(id, fat)))
            .collect();
        assert_eq!(got, want, "step {step}");
        assert!(want.iter().any(|(_, r)| r.is_err()));
        batched.validate().unwrap();
        assert_eq!(batched.moved_count(), single.moved_count());
        for &id in &ids {
            assert_eq!(batched.fat_box(id), single.fat_box(id));
        }
        pb.clear();
        ps.clear();
        batched.update_pairs(&mut pb);
        single.update_pairs(&mut ps);
        batched.validate().unwrap();
        let set_b: BTreeSet<_> = pb.iter().copied().collect();
        assert_eq!(set_b.len(), pb.len());
        assert_eq!(
            set_b,
            ps.iter().copied().collect::<BTreeSet<_>>(),
            "step {step}"
        );
    }
}

/// `set_fat_box` refuses a box with a NaN or infinite corner or `min > max`, and leaves
/// the proxy's fat box and the tree as they were.
fn set_fat_box_bad_input<V: Vector>() {
    let mut tree = DynamicTree::<V, u32>::new();
    let good = BoundingBox::from_center_half_extents(V::ZERO, V::ONE);
    let id = tree.create_proxy(good, 1).unwrap();
    for bad in [
        BoundingBox::from_min_max(V::splat(f32::NAN), V::ONE),
        BoundingBox::from_min_max(V::ZERO, V::splat(f32::INFINITY)),
        BoundingBox::from_min_max(V::ONE, V::ZERO),
    ] {
        assert_eq!(tree.set_fat_box(id, bad), Err(TreeError::InvalidBox));
    }
    tree.validate().unwrap();
    assert_eq!(tree.fat_box(id), Some(good.grown(tree.margin())));
    tree.destroy_proxy(id).unwrap();
    assert_eq!(tree.set_fat_box(id, good), Err(TreeError::UnknownProxy(id)));
    tree.validate().unwrap();
}

/// The keep rule the plugin applies itself (`keeps_fat_box` with the fat box `fatten`
/// gives) says what `move_proxy` does, over the moves of the batch test in
/// `tests/tree.rs`: most boxes jumping a little every step, with and without a predicted
/// displacement, some twice in a step, some with invalid boxes or unknown ids.
fn keep_rule_is_the_move_rule<V: Vector>() {
    let mut r = lcg(4242);
    let n = 3000;
    let (mut centers, mut tree, ids) = uniform_tree::<V>(&mut r, n);
    tree.update_pairs(&mut Vec::new());
    let unknown = unknown_id::<V>(n, 5);
    let (mut kept, mut replaced) = (0, 0);
    for step in 0..40 {
        let count = [n, n, 500, 100][step % 4];
        let moves = jump_moves(&mut r, step, count, &mut centers, &ids, unknown);
        for (id, tight, d) in moves {
            let old = tree.fat_box(id);
            let result = tree.move_proxy(id, tight, d);
            if let (Some(old), Ok(changed)) = (old, result) {
                let fat = tree.fatten(&tight, d);
                assert_eq!(
                    changed,
                    !DynamicTree::<V, u32>::keeps_fat_box(&old, &tight, &fat),
                    "step {step}: {id:?}"
                );
                if changed {
                    replaced += 1;
                    assert_eq!(tree.fat_box(id), Some(fat));
                } else {
                    kept += 1;
                }
            }
        }
        tree.validate().unwrap();
        tree.update_pairs(&mut Vec::new());
    }
    assert!(
        kept > 1000 && replaced > 1000,
        "{kept} kept, {replaced} replaced"
    );
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
            )
        });
        tree.set_fat_boxes(boxes, |_, _| {});
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

both_dims!(
    batch_fat_boxes,
    set_fat_box_bad_input,
    keep_rule_is_the_move_rule,
    batch_panic_safety(true)
);

/// Without the move cache, where a move writes its parent's slot before the batch grows
/// the ancestors.
#[test]
fn batch_panic_safety_without_move_cache() {
    batch_panic_safety::<Vec2>(false);
    batch_panic_safety::<Vec3>(false);
}
