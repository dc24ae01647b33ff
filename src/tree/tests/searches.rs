//! The two searches of a pair update, the walk and leaf by leaf, serial and parallel, on
//! lattices of touching boxes.

use std::collections::BTreeSet;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::{DynamicTree, ProxyId};

use super::tree_scene::{lcg, v};
use super::{brute_pairs, fat_boxes};

/// A square (cubic) lattice of unit boxes packed edge to edge, `per_row` a side, box `k`
/// in the cell given by `k`'s digits in base `per_row`, first axis first.
struct Lattice<V> {
    per_row: usize,
    n: usize,
    dim: core::marker::PhantomData<V>,
}

impl<V: Vector> Lattice<V> {
    /// `per_row_2d` boxes a side in 2D, `per_row_3d` in 3D.
    fn new(per_row_2d: usize, per_row_3d: usize) -> Self {
        let per_row = if V::DIM == 2 { per_row_2d } else { per_row_3d };
        Self {
            per_row,
            n: per_row.pow(V::DIM as u32),
            dim: core::marker::PhantomData,
        }
    }

    /// The center of box `k`'s cell.
    fn cell(&self, k: usize) -> V {
        let p = self.per_row;
        v::<V>([k % p, (k / p) % p, k / (p * p)].map(|a| a as f32 + 0.5))
    }

    /// The unit box around `center`.
    fn unit(center: V) -> BoundingBox<V> {
        BoundingBox::from_center_half_extents(center, V::splat(0.5))
    }

    /// Box `k` moved by up to a quarter on each axis from its cell's center.
    fn jiggled(&self, k: usize, r: &mut impl FnMut() -> f32) -> BoundingBox<V> {
        Self::unit(self.cell(k) + v::<V>([r() - 0.5, r() - 0.5, r() - 0.5]) * 0.5)
    }

    /// Every box built into a tree with margin 0.05 (proxy `k`'s payload is `k`), with
    /// the first update run: the tree and the ids.
    fn tree(&self) -> (DynamicTree<V, u32>, Vec<ProxyId>) {
        let mut tree = DynamicTree::<V, u32>::with_margin(0.05);
        let boxes = (0..self.n).map(|k| (Self::unit(self.cell(k)), k as u32));
        let ids = tree.build(boxes).unwrap();
        tree.update_pairs(&mut Vec::new());
        (tree, ids)
    }
}

/// Both searches of a pair update, serial and parallel, against brute force on a lattice
/// of touching unit boxes (every box touches its neighbours, the case the leaf-by-leaf
/// search is for): at each of 150 updates a few proxies (about one in 16, so that both
/// searches may run) jiggle in their cell, and every 10th update two are destroyed and
/// two created (new proxies count as moved). A copy of the tree takes the same operations
/// and updates on 3 threads. Every update's pairs, on both, equal a brute-force scan,
/// none is reported twice (a pair of two moved leaves is found from both), both trees
/// validate, and both ran both searches.
fn lattice_searches<V: Vector + Sync>() {
    let mut r = lcg(17);
    let lattice = Lattice::<V>::new(40, 12);
    let (n, cell, unit) = (lattice.n, |k| lattice.cell(k), Lattice::<V>::unit);
    let (mut tree, mut ids) = lattice.tree();
    let mut par = tree.clone();
    let mut created = BTreeSet::new();
    for step in 0..150 {
        let before = fat_boxes(&tree, &ids);
        if step % 10 == 9 {
            for _ in 0..2 {
                let k = (r() * n as f32) as usize % n;
                for t in [&mut tree, &mut par] {
                    t.destroy_proxy(ids[k]).unwrap();
                }
                let id = tree.create_proxy(unit(cell(k)), k as u32).unwrap();
                assert_eq!(par.create_proxy(unit(cell(k)), k as u32), Ok(id));
                ids[k] = id;
                created.insert(id);
            }
        }
        for (k, &id) in ids.iter().enumerate() {
            if r() < 1.0 / 16.0 {
                let moved = lattice.jiggled(k, &mut r);
                for t in [&mut tree, &mut par] {
                    t.move_proxy(id, moved, V::ZERO).unwrap();
                }
            }
        }
        let boxes = fat_boxes(&tree, &ids);
        let mut moved: BTreeSet<ProxyId> = boxes
            .iter()
            .filter(|&(id, fat)| before.get(id) != Some(fat))
            .map(|(&id, _)| id)
            .collect();
        moved.append(&mut created);
        let want = brute_pairs::<V>(&boxes, &moved);
        let (mut serial, mut parallel) = (Vec::new(), Vec::new());
        tree.update_pairs(&mut serial);
        par.update_pairs_parallel(&mut parallel, 3);
        for (label, got) in [("serial", serial), ("parallel", parallel)] {
            let reported = got.len();
            let got: BTreeSet<_> = got.into_iter().map(|(a, b)| (a.min(b), a.max(b))).collect();
            assert_eq!(
                got.len(),
                reported,
                "step {step}, {label}: a pair reported twice"
            );
            assert_eq!(got, want, "step {step}, {label}");
        }
        tree.validate().unwrap();
        par.validate().unwrap();
    }
    assert!(tree.search.ran_both(), "{:?}", tree.search);
    assert!(par.search.ran_both(), "{:?}", par.search);
    assert!(tree.stats().leaf_searches > 0 && par.stats().leaf_searches > 0);
}

/// A parallel update counts the same nodes visited however many tasks it is split into
/// (the searches are chosen from those counts, so the choice, and with it the tree, does
/// not depend on the pool): three copies of a lattice of touching boxes take the same
/// moves and update as jobs of 1, 7 and 64 tasks, at 120 updates with about one box in
/// 12 moving. Each update's count and pairs (as sets) are the same on the three.
fn parallel_visits_ignore_the_split<V: Vector + Sync>() {
    let mut r = lcg(29);
    let lattice = Lattice::<V>::new(30, 10);
    let (first, ids) = lattice.tree();
    let mut trees = [first.clone(), first.clone(), first];
    for step in 0..120 {
        for (k, &id) in ids.iter().enumerate() {
            if r() < 1.0 / 12.0 {
                let moved = lattice.jiggled(k, &mut r);
                for tree in &mut trees {
                    tree.move_proxy(id, moved, V::ZERO).unwrap();
                }
            }
        }
        let mut outcomes = Vec::new();
        for (tree, min_tasks) in trees.iter_mut().zip([1, 7, 64]) {
            let before = tree.stats().nodes_visited;
            let mut pairs = BTreeSet::new();
            let job = tree.parallel_pairs(min_tasks);
            for task in 0..job.task_count() {
                job.run(task, |a, b| {
                    pairs.insert((a, b));
                });
            }
            drop(job);
            outcomes.push((tree.stats().nodes_visited - before, pairs));
            tree.validate().unwrap();
        }
        assert_eq!(outcomes[0], outcomes[1], "step {step}: 1 and 7 tasks");
        assert_eq!(outcomes[0], outcomes[2], "step {step}: 1 and 64 tasks");
    }
    assert!(trees.iter().all(|tree| tree.search.ran_both()));
}

both_dims!(parallel_visits_ignore_the_split, lattice_searches);

/// The searches' stack of pending nodes gives its items back last in, first out, past
/// the end of its array and back (a tree deeper than the array spills).
#[test]
fn pending_spills_and_comes_back() {
    use crate::tree::query::{IN_PLACE, Pending};
    let mut stack = Pending::new(0usize);
    let mut model = vec![0usize];
    for round in 0..3 {
        for k in 1..=IN_PLACE * 2 + round {
            stack.push(k);
            model.push(k);
        }
        for _ in 0..IN_PLACE + round * 7 {
            assert_eq!(stack.pop(), model.pop());
        }
    }
    while let Some(item) = model.pop() {
        assert_eq!(stack.pop(), Some(item));
    }
    assert_eq!(stack.pop(), None);
}
