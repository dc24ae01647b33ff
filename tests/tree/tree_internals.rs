//! The tree's machinery against brute force and hand-computed sizes, in 2D and 3D: the
//! parallel pair update against the serial one, the arena's layout after builds and
//! rebuilds, refits after batches, the memory `reserve` and the move cache take, and the
//! change marks across their wrap. The random operations against a list of proxies are in
//! `tree`.

use std::collections::BTreeSet;

use bevy_aabb_tree::{BoundingBox, DynamicTree, ProxyId, Vector};

use super::tree::same_pairs;
use crate::kit::tree_scene::{lcg, side_by_side, uniform_tree, v};
/// Every node of a tree with its links and box, depth first.
fn shape<V: Vector>(tree: &DynamicTree<V, u32>) -> Vec<String> {
    let mut out = Vec::new();
    tree.visit_nodes(|id, node, depth| {
        out.push(format!("{id:?} {depth} {node:?}"));
        true
    });
    out
}

/// The parallel pair update against the serial one, on two copies of a tree moved the
/// same way: the same pair set every step (each pair once), also equal to a brute-force
/// scan, with 1 to 8 threads, with the tasks of `parallel_pairs` run in reverse order,
/// and `validate` passing after every update. The parallel update refits before it walks
/// rather than on the way, in the same order (or, after a batch that refit the whole
/// tree, notes the same candidates for the optimizer), so the two trees stay identical
/// node for node.
///
/// The buffered task API gives the pairs in the order of running every task in turn,
/// whatever order the tasks ran in, and a job dropped without collecting its lists
/// leaves nothing behind for the next one.
fn parallel_pairs<V: Vector>() {
    let mut r = lcg(777);
    let n = 2000;
    let side = 2.5 * (n as f32).sqrt();
    let mut centers: Vec<V> = (0..n)
        .map(|_| v::<V>([r() * side, r() * side, r() * side]))
        .collect();
    let half = V::splat(0.5);
    let boxes = |centers: &[V]| -> Vec<BoundingBox<V>> {
        centers
            .iter()
            .map(|&c| BoundingBox::from_center_half_extents(c, half))
            .collect()
    };
    let mut serial = DynamicTree::<V, u32>::with_margin(0.05);
    let ids = serial
        .build(boxes(&centers).into_iter().zip(0u32..))
        .unwrap();
    let mut parallel = serial.clone();
    let brute = |tree: &DynamicTree<V, u32>, moved: &BTreeSet<ProxyId>| {
        let fat: Vec<_> = ids.iter().map(|&id| tree.fat_box(id).unwrap()).collect();
        let is_moved: Vec<bool> = ids.iter().map(|id| moved.contains(id)).collect();
        let mut want = BTreeSet::new();
        for a in 0..n {
            for b in a + 1..n {
                if (is_moved[a] || is_moved[b]) && fat[a].overlaps(&fat[b]) {
                    let (ia, ib) = (ids[a], ids[b]);
                    want.insert((ia.min(ib), ia.max(ib)));
                }
            }
        }
        want
    };
    let all: BTreeSet<ProxyId> = ids.iter().copied().collect();
    for step in 0..24 {
        let (mut moved_s, mut moved_p) = (BTreeSet::new(), BTreeSet::new());
        if step > 0 {
            // Most boxes move on even steps, a few on odd ones. Every fourth step moves
            // them in one batch, large enough to refit the whole tree (every box exact:
            // the parallel update then only notes the optimizer's candidates).
            let count = if step % 2 == 0 { n } else { 40 };
            let mut moves = Vec::new();
            for k in 0..count {
                let i = (k * 131 + step * 17) % n;
                centers[i] += v::<V>([r() - 0.5, r() - 0.5, r() - 0.5]) * 0.3;
                let tight = BoundingBox::from_center_half_extents(centers[i], half);
                moves.push((ids[i], tight, V::ZERO));
            }
            if step % 4 == 0 {
                serial.move_proxies(moves.iter().copied(), |id, res| {
                    if res.unwrap() {
                        moved_s.insert(id);
                    }
                });
                parallel.move_proxies(moves.iter().copied(), |id, res| {
                    if res.unwrap() {
                        moved_p.insert(id);
                    }
                });
            } else {
                for &(id, tight, d) in &moves {
                    if serial.move_proxy(id, tight, d).unwrap() {
                        moved_s.insert(id);
                    }
                    if parallel.move_proxy(id, tight, d).unwrap() {
                        moved_p.insert(id);
                    }
                }
            }
        } else {
            moved_s = all.clone();
            moved_p = all.clone();
        }
        assert_eq!(moved_s, moved_p);
        let want_s = brute(&serial, &moved_s);
        let want_p = brute(&parallel, &moved_p);
        let mut got_s = Vec::new();
        serial.update_pairs(&mut got_s);
        let mut got_p = Vec::new();
        if step % 3 == 2 {
            // The task API, tasks run last to first.
            let job = parallel.parallel_pairs(1 + step % 7);
            for task in (0..job.task_count()).rev() {
                job.run(task, |a, b| got_p.push((a, b)));
            }
            // Indices past the last task do nothing.
            job.run(job.task_count(), |a, b| got_p.push((a, b)));
            job.run(usize::MAX, |a, b| got_p.push((a, b)));
        } else if step % 3 == 1 {
            // The buffered task API, tasks run last to first, against every task run in
            // turn with `run` on a copy of the tree.
            let min_tasks = 1 + (step % 5) * 8;
            let mut twin = parallel.clone();
            let mut job = parallel.parallel_pairs(min_tasks);
            for task in (0..job.task_count()).rev() {
                job.run_buffered(task);
            }
            job.run_buffered(job.task_count());
            job.run_buffered(usize::MAX);
            job.append_buffered(&mut got_p);
            drop(job);
            let twin_job = twin.parallel_pairs(min_tasks);
            let mut in_turn = Vec::new();
            for task in 0..twin_job.task_count() {
                twin_job.run(task, |a, b| in_turn.push((a, b)));
            }
            drop(twin_job);
            assert_eq!(got_p, in_turn, "step {step}: buffered order");
        } else {
            parallel.update_pairs_parallel(&mut got_p, 1 + step % 8);
        }
        serial.validate().unwrap();
        parallel.validate().unwrap();
        let set_s: BTreeSet<_> = got_s.iter().copied().collect();
        let set_p: BTreeSet<_> = got_p.iter().copied().collect();
        assert_eq!(set_s.len(), got_s.len(), "step {step}: serial pair twice");
        assert_eq!(set_p.len(), got_p.len(), "step {step}: parallel pair twice");
        assert!(got_p.iter().all(|(a, b)| a < b));
        assert_eq!(set_s, want_s, "step {step}: serial");
        assert_eq!(set_p, want_p, "step {step}: parallel");
        assert_eq!(parallel.stats().moved, 0);
        assert_eq!(
            shape(&serial),
            shape(&parallel),
            "step {step}: the trees differ"
        );
    }
    // The same tree and thread count give the same order.
    let mut a = parallel.clone();
    let mut b = parallel.clone();
    for (k, &id) in ids.iter().enumerate().take(500) {
        let tight = BoundingBox::from_center_half_extents(centers[k] + V::splat(0.7), half);
        a.move_proxy(id, tight, V::ZERO).unwrap();
        b.move_proxy(id, tight, V::ZERO).unwrap();
    }
    let (mut pa, mut pb) = (Vec::new(), Vec::new());
    let mut c = a.clone();
    a.update_pairs_parallel(&mut pa, 3);
    b.update_pairs_parallel(&mut pb, 3);
    assert!(!pa.is_empty());
    assert_eq!(pa, pb);
    // Any thread count is taken (capped), the same pairs found.
    let mut pc = Vec::new();
    c.update_pairs_parallel(&mut pc, usize::MAX);
    c.validate().unwrap();
    assert_eq!(
        pc.iter().copied().collect::<BTreeSet<_>>(),
        pa.iter().copied().collect::<BTreeSet<_>>()
    );
    // Moves the first 300 boxes by `by` on every axis.
    let shift = |tree: &mut DynamicTree<V, u32>, by: f32| {
        for (k, &id) in ids.iter().enumerate().take(300) {
            let tight = BoundingBox::from_center_half_extents(centers[k] + V::splat(by), half);
            tree.move_proxy(id, tight, V::ZERO).unwrap();
        }
    };
    // Any number of tasks may be asked for: the split stops where the tree does.
    let mut e = c.clone();
    let mut serial_e = c.clone();
    shift(&mut e, 0.3);
    shift(&mut serial_e, 0.3);
    let (mut got, mut want) = (Vec::new(), Vec::new());
    let mut job = e.parallel_pairs(usize::MAX);
    assert!(job.task_count() > 1);
    for task in 0..job.task_count() {
        job.run_buffered(task);
    }
    job.append_buffered(&mut got);
    drop(job);
    serial_e.update_pairs(&mut want);
    e.validate().unwrap();
    assert!(!want.is_empty());
    assert_eq!(
        got.iter().copied().collect::<BTreeSet<_>>(),
        want.iter().copied().collect::<BTreeSet<_>>()
    );
    assert_eq!(got.len(), want.len());
    // A job whose buffered tasks ran but whose lists were never collected: the next
    // buffered update reports its own pairs only, those of a serial update.
    let mut d = parallel.clone();
    shift(&mut d, 0.4);
    let job = d.parallel_pairs(16);
    for task in 0..job.task_count() {
        job.run_buffered(task);
    }
    drop(job);
    let mut serial_d = d.clone();
    shift(&mut d, -0.4);
    shift(&mut serial_d, -0.4);
    let (mut got, mut want) = (Vec::new(), Vec::new());
    let mut job = d.parallel_pairs(16);
    // Before any task ran, the lists hold nothing (not the dropped job's pairs).
    job.append_buffered(&mut got);
    assert!(got.is_empty(), "pairs left from the dropped job");
    for task in 0..job.task_count() {
        job.run_buffered(task);
    }
    job.append_buffered(&mut got);
    drop(job);
    serial_d.update_pairs(&mut want);
    d.validate().unwrap();
    assert!(!want.is_empty());
    assert_eq!(got.len(), want.len(), "pairs left from the dropped job");
    assert_eq!(
        got.into_iter().collect::<BTreeSet<_>>(),
        want.into_iter().collect::<BTreeSet<_>>()
    );
}

crate::kit::tests_2d_3d!(parallel_pairs: parallel_pairs_2d, parallel_pairs_3d);

/// The layout a build leaves: the root in slot 0, every node's two internal children side
/// by side, the first child's side of the tree before the second's, and no free slot (the
/// arena holds exactly the internal nodes; leaves are named by their proxies). After many
/// moves and updates (incremental rebuilds re-lay out the subtrees they rebuild, pairs
/// side by side even over scattered slots) at least 95% of the nodes still have their
/// internal children side by side: only the top rebuild, which keeps subtrees whole where
/// they are, leaves some apart.
fn build_layout<V: Vector>() {
    let mut r = lcg(5);
    let n = 3000;
    let (mut centers, mut tree, ids) = uniform_tree::<V>(&mut r, n);
    assert_eq!(tree.root().map(|r| r.index()), Some(0));
    let stats = tree.stats();
    assert_eq!(stats.nodes, 2 * n - 1);
    let mut slots = BTreeSet::new();
    let mut leaves = BTreeSet::new();
    let mut siblings = (0, 0);
    tree.visit_nodes(|id, node, _| {
        if id.is_leaf() {
            assert_eq!(node.proxy, Some(id.proxy()));
            // A leaf's id looks its node up like any other.
            assert_eq!(
                tree.node(id).map(|n| (n.proxy, n.aabb)),
                Some((node.proxy, node.aabb))
            );
            assert_eq!(tree.fat_box(id.proxy()), Some(node.aabb));
            leaves.insert(id.proxy());
            return true;
        }
        slots.insert(id.index());
        if let Some((c1, c2)) = node.children {
            for c in [c1, c2] {
                assert!(
                    c.is_leaf() || c.index() > id.index(),
                    "a child before its parent"
                );
            }
            if !c1.is_leaf() && !c2.is_leaf() {
                siblings.0 += 1;
                siblings.1 += (c2.index() == c1.index() + 1) as usize;
            }
        }
        true
    });
    assert!(
        siblings.0 > n / 10,
        "{} nodes with two internal children",
        siblings.0
    );
    assert_eq!(
        siblings.0, siblings.1,
        "children not side by side after a build"
    );
    assert_eq!(
        slots,
        (0..n - 1).collect::<BTreeSet<_>>(),
        "free slots after a build"
    );
    assert_eq!(leaves, ids.iter().copied().collect::<BTreeSet<_>>());
    let mut pairs = Vec::new();
    for _ in 0..60 {
        for (k, &id) in ids.iter().enumerate() {
            centers[k] += v::<V>([r() - 0.5, r() - 0.5, r() - 0.5]) * 0.3;
            let tight = BoundingBox::from_center_half_extents(centers[k], V::splat(0.5));
            tree.move_proxy(id, tight, V::ZERO).unwrap();
        }
        pairs.clear();
        tree.update_pairs(&mut pairs);
    }
    tree.validate().unwrap();
    let siblings = side_by_side(&tree);
    assert!(
        siblings.1 * 20 >= siblings.0 * 19,
        "{} of {} internal nodes have their internal children side by side",
        siblings.1,
        siblings.0
    );
}

crate::kit::tests_2d_3d!(build_layout: build_layout_2d, build_layout_3d);

/// Checks every internal node below the root: its box encloses its children's, and equals
/// their union when `exact`. Returns how many internal nodes there are.
fn check_internal_boxes<V: Vector>(tree: &DynamicTree<V, u32>, exact: bool) -> usize {
    let mut internal = 0;
    let mut stack: Vec<_> = tree.root().into_iter().collect();
    while let Some(id) = stack.pop() {
        let node = tree.node(id).unwrap();
        if let Some(proxy) = node.proxy {
            assert_eq!(tree.fat_box(proxy), Some(node.aabb));
            continue;
        }
        let (c1, c2) = node.children.unwrap();
        let union = tree
            .node(c1)
            .unwrap()
            .aabb
            .merged(&tree.node(c2).unwrap().aabb);
        assert!(
            node.aabb.contains(&union),
            "node {id:?} does not enclose its children"
        );
        if exact {
            assert_eq!(node.aabb, union, "node {id:?} is not exact");
        }
        internal += 1;
        stack.extend([c1, c2]);
    }
    internal
}

/// A batch that changes a large share of the leaves refits the whole tree: every internal
/// box is then exactly its children's union at once, where smaller batches and single
/// moves only grow ancestors (exact again after the update). Pairs and fat boxes agree
/// with single moves on a copy, and `validate` passes after every call.
fn batch_refit<V: Vector>() {
    let mut r = lcg(777);
    let n = 2000;
    let half = V::splat(0.5);
    let (mut centers, mut batched, ids) = uniform_tree::<V>(&mut r, n);
    let mut single = batched.clone();
    batched.update_pairs(&mut Vec::new());
    single.update_pairs(&mut Vec::new());
    for step in 0..12 {
        // Every box (a whole-tree refit), 300 of 2000 (sorted, ancestors grown), or 20.
        let count = [n, 300, 20][step % 3];
        let mut moves = Vec::new();
        for k in 0..count {
            let i = (k * 7 + step * 131) % n;
            let jump = v::<V>([r() - 0.5, r() - 0.5, r() - 0.5]) * 0.6;
            centers[i] += jump;
            let tight = BoundingBox::from_center_half_extents(centers[i], half);
            moves.push((ids[i], tight, jump));
        }
        let mut changed = 0;
        batched.move_proxies(moves.iter().copied(), |_, res| {
            changed += usize::from(res.unwrap());
        });
        for &(id, tight, d) in &moves {
            single.move_proxy(id, tight, d).unwrap();
        }
        batched.validate().unwrap();
        let internal = check_internal_boxes(&batched, count == n);
        assert_eq!(internal, n - 1);
        if count == n {
            // Enough boxes left their fat box for the whole-tree refit to run.
            assert!(changed * 4 >= n, "step {step}: {changed} changed");
        }
        same_pairs(&mut batched, &mut single, step);
        check_internal_boxes(&batched, true);
        check_internal_boxes(&single, true);
        for &id in &ids {
            assert_eq!(batched.fat_box(id), single.fat_box(id));
        }
    }
}

crate::kit::tests_2d_3d!(batch_refit: batch_refit_2d, batch_refit_3d);

/// `reserve` makes room for exactly what the proxies then created take: the tree's bytes
/// (counted by capacity) do not change while they are created, freed ids and nodes
/// included, and the tree stays valid.
fn reserve<V: Vector>() {
    let mut r = lcg(4242);
    let mut tree = DynamicTree::<V, u32>::with_margin(0.05);
    let mut make = |tree: &mut DynamicTree<V, u32>, count: u32| -> Vec<ProxyId> {
        (0..count)
            .map(|k| {
                let c = v::<V>([r() * 100.0, r() * 100.0, r() * 100.0]);
                let b = BoundingBox::from_center_half_extents(c, V::splat(0.5));
                tree.create_proxy(b, k).unwrap()
            })
            .collect()
    };
    tree.reserve(1000);
    let reserved = tree.stats().bytes;
    let ids = make(&mut tree, 1000);
    tree.validate().unwrap();
    assert_eq!(
        tree.stats().bytes,
        reserved,
        "created 1000 after reserving 1000"
    );
    // Without the reservation, the same proxies leave arrays up to twice too large.
    let mut grown = DynamicTree::<V, u32>::with_margin(0.05);
    make(&mut grown, 1000);
    assert!(grown.stats().bytes > reserved);
    // One internal node per proxy, no more.
    assert_eq!(tree.stats().capacity, 1000);
    // Freed ids and nodes count: with 300 destroyed, reserving 300 needs nothing more.
    for &id in &ids[..300] {
        tree.destroy_proxy(id).unwrap();
    }
    let before = tree.stats().bytes;
    tree.reserve(300);
    assert_eq!(
        tree.stats().bytes,
        before,
        "300 freed proxies make room for 300"
    );
    make(&mut tree, 300);
    tree.validate().unwrap();
    assert_eq!(tree.stats().bytes, before, "created 300 into freed slots");
    tree.reserve(500);
    let reserved = tree.stats().bytes;
    make(&mut tree, 500);
    tree.validate().unwrap();
    assert_eq!(tree.len(), 1500);
    assert_eq!(
        tree.stats().bytes,
        reserved,
        "created 500 after reserving 500"
    );
}

crate::kit::tests_2d_3d!(reserve: reserve_2d, reserve_3d);

/// The move cache's bytes, against the sizes computed by hand: per proxy an internal node
/// (48 bytes in 2D, 64 in 3D), a leaf link (4), the payload slot (`Option<u32>`, 8) and,
/// with the cache, a copy of the fat box (16 / 24). Turning it off and on again keeps
/// every fat box, and proxies created or moved while it is off are seen by the cache
/// filled when it comes back.
fn move_cache_bytes<V: Vector>(node: usize, fat_box: usize) {
    let mut r = lcg(77);
    let mut tree = DynamicTree::<V, u32>::with_margin(0.05);
    let mut boxes = |count: u32| -> Vec<(BoundingBox<V>, u32)> {
        (0..count)
            .map(|k| {
                let c = v::<V>([r() * 100.0, r() * 100.0, r() * 100.0]);
                (BoundingBox::from_center_half_extents(c, V::splat(0.5)), k)
            })
            .collect()
    };
    tree.reserve(1000);
    let ids = tree.build(boxes(1000)).unwrap();
    tree.validate().unwrap();
    assert!(tree.move_cache(), "on by default");
    assert_eq!(tree.stats().bytes, 1000 * (node + 4 + fat_box + 8));
    let fat: Vec<_> = ids.iter().map(|&id| tree.fat_box(id).unwrap()).collect();

    tree.set_move_cache(false);
    tree.validate().unwrap();
    assert!(!tree.move_cache());
    assert_eq!(tree.stats().bytes, 1000 * (node + 4 + 8));
    for (&id, fat) in ids.iter().zip(&fat) {
        assert_eq!(tree.fat_box(id), Some(*fat));
    }
    // Changes while it is off: a move out of its fat box, a destroyed proxy and a new one.
    let far = BoundingBox::from_center_half_extents(V::splat(500.0), V::splat(0.5));
    assert!(tree.move_proxy(ids[0], far, V::ZERO).unwrap());
    tree.destroy_proxy(ids[1]).unwrap();
    let new = tree.create_proxy(far, 1000).unwrap();
    tree.validate().unwrap();

    // (The destroy gave the list of free ids some room: compare with the bytes before.)
    let before = tree.stats().bytes;
    tree.set_move_cache(true);
    tree.validate().unwrap();
    assert_eq!(tree.stats().bytes, before + 1000 * fat_box);
    let grown = far.grown(0.05);
    assert_eq!(tree.fat_box(ids[0]), Some(grown));
    assert_eq!(tree.fat_box(new), Some(grown));
    // The cache decides the next move: inside the fat box, nothing changes.
    let inside = BoundingBox::from_center_half_extents(V::splat(500.01), V::splat(0.5));
    assert!(!tree.move_proxy(new, inside, V::ZERO).unwrap());
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    assert!(pairs.contains(&(ids[0].min(new), ids[0].max(new))));
    tree.validate().unwrap();
}

crate::kit::tests_2d_3d!(
    move_cache_bytes:
    move_cache_bytes_2d(48, 16),
    move_cache_bytes_3d(64, 24)
);

/// Many more updates than the change marks have values (they wrap, and every mark is then
/// cleared): each update's pairs equal a brute-force oracle (every pair of overlapping fat
/// boxes with a proxy moved since the last update), with the tree valid after each. Some
/// proxies move once and then sit still, so marks from a whole cycle back meet the wrap.
fn marks_across_epoch_wrap<V: Vector>() {
    let mut r = lcg(77);
    let n = 60;
    let (mut centers, mut tree, ids) = uniform_tree::<V>(&mut r, n);
    let mut pairs = Vec::new();
    tree.update_pairs(&mut pairs);
    for step in 0..700 {
        let mut moved = vec![false; n];
        for (k, &id) in ids.iter().enumerate() {
            // A third of the proxies move on a step; the last ten once only, at step 5,
            // so that their marks are older than a whole cycle of epochs.
            let moves = if k >= n - 10 { step == 5 } else { r() < 0.33 };
            if !moves {
                continue;
            }
            centers[k] += v::<V>([r() - 0.5, r() - 0.5, r() - 0.5]) * 0.8;
            let tight = BoundingBox::from_center_half_extents(centers[k], V::splat(0.5));
            moved[k] |= tree.move_proxy(id, tight, V::ZERO).unwrap();
        }
        tree.validate().unwrap();
        let mut expected = BTreeSet::new();
        for i in 0..n {
            for j in i + 1..n {
                let (a, b) = (tree.fat_box(ids[i]).unwrap(), tree.fat_box(ids[j]).unwrap());
                if (moved[i] || moved[j]) && a.overlaps(&b) {
                    expected.insert((ids[i].min(ids[j]), ids[i].max(ids[j])));
                }
            }
        }
        pairs.clear();
        tree.update_pairs(&mut pairs);
        tree.validate().unwrap();
        let got: BTreeSet<_> = pairs.iter().copied().collect();
        assert_eq!(got.len(), pairs.len(), "step {step}: a pair twice");
        assert_eq!(got, expected, "step {step}");
    }
}

crate::kit::tests_2d_3d!(
    marks_across_epoch_wrap:
    marks_across_epoch_wrap_2d,
    marks_across_epoch_wrap_3d
);
