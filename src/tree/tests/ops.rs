//! Random sequences of the public single-proxy operations (creation with and without a
//! predicted displacement, moves, touches, removals), against a map of the fat boxes.

use std::collections::{BTreeMap, BTreeSet};

use glam::{Vec2, Vec3};

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::{DynamicTree, ProxyId, TreeError};
use proptest::prelude::*;

use super::brute_pairs;
use super::tree_scene::v;

/// One operation of the random sequences below.
#[derive(Clone, Debug)]
enum Op {
    Insert {
        center: [f32; 3],
        half: [f32; 3],
    },
    /// Remove the proxy at this position (modulo the count) in id order.
    Remove(usize),
    /// Move a proxy a small step with `move_proxy`.
    Move {
        which: usize,
        to: [f32; 3],
        predicted: [f32; 3],
    },
    /// Create a proxy with `create_proxy_with`: a finite displacement, or a NaN one
    /// (refused, kind 3).
    InsertWith {
        center: [f32; 3],
        half: [f32; 3],
        predicted: [f32; 3],
        kind: u8,
    },
    /// Mark a proxy moved with `touch_proxy`.
    Touch(usize),
    /// `touch_proxy` on an id destroyed before.
    TouchDead,
    Pairs,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let p = || prop::array::uniform3(-20.0f32..20.0);
    let h = || prop::array::uniform3(0.0f32..3.0);
    prop_oneof![
        4 => (p(), h()).prop_map(|(center, half)| Op::Insert { center, half }),
        1 => any::<usize>().prop_map(Op::Remove),
        3 => (any::<usize>(), prop::array::uniform3(-1.0f32..1.0), prop::array::uniform3(-2.0f32..2.0))
            .prop_map(|(which, to, predicted)| Op::Move { which, to, predicted }),
        3 => (p(), h(), prop::array::uniform3(-2.0f32..2.0), 0u8..4)
            .prop_map(|(center, half, predicted, kind)| Op::InsertWith { center, half, predicted, kind }),
        2 => any::<usize>().prop_map(Op::Touch),
        1 => Just(Op::TouchDead),
        2 => Just(Op::Pairs),
    ]
}

/// A tree driven by random operations, against a map of the fat boxes and the set of
/// proxies moved since the last update: every call's result, every fat box and the moved
/// count after each operation, and every update's pairs against a brute-force scan.
fn single_ops<V: Vector>(ops: &[Op]) {
    let mut tree = DynamicTree::<V, u32>::with_margin(0.1);
    let mut boxes: BTreeMap<ProxyId, BoundingBox<V>> = BTreeMap::new();
    let mut moved = BTreeSet::new();
    let mut dead = Vec::new();
    let nth = |boxes: &BTreeMap<ProxyId, BoundingBox<V>>, i: usize| {
        (!boxes.is_empty()).then(|| *boxes.keys().nth(i % boxes.len()).unwrap())
    };
    let check_pairs = |tree: &mut DynamicTree<V, u32>,
                       boxes: &BTreeMap<ProxyId, BoundingBox<V>>,
                       moved: &mut BTreeSet<ProxyId>| {
        let mut pairs = Vec::new();
        tree.update_pairs(&mut pairs);
        let got: BTreeSet<_> = pairs.iter().copied().collect();
        assert_eq!(got.len(), pairs.len(), "a pair was reported twice");
        assert_eq!(got, brute_pairs(boxes, moved));
        moved.clear();
    };
    for (k, op) in ops.iter().enumerate() {
        match *op {
            Op::Insert { center, half } => {
                let tight = BoundingBox::from_center_half_extents(v(center), v(half));
                let id = tree.create_proxy(tight, k as u32).unwrap();
                boxes.insert(id, tight.grown(0.1));
                moved.insert(id);
            }
            Op::Remove(i) => {
                let Some(id) = nth(&boxes, i) else { continue };
                tree.destroy_proxy(id).unwrap();
                boxes.remove(&id);
                moved.remove(&id);
                dead.push(id);
            }
            Op::Move {
                which,
                to,
                predicted,
            } => {
                let Some(id) = nth(&boxes, which) else {
                    continue;
                };
                let old = boxes[&id];
                let tight =
                    BoundingBox::from_center_half_extents(old.center() + v::<V>(to), V::ONE);
                let d: V = v(predicted);
                let changed = tree.move_proxy(id, tight, d).unwrap();
                let fat = tree.fat_box(id).unwrap();
                if changed {
                    assert_eq!(fat, tight.swept(d).grown(0.1));
                    boxes.insert(id, fat);
                    moved.insert(id);
                } else {
                    assert_eq!(fat, old, "an unchanged move keeps the fat box");
                    assert!(old.contains(&tight));
                }
            }
            Op::InsertWith {
                center,
                half,
                predicted,
                kind,
            } => {
                let tight = BoundingBox::from_center_half_extents(v(center), v(half));
                let d: V = if kind == 3 {
                    V::splat(f32::NAN)
                } else {
                    v(predicted)
                };
                let created = tree.create_proxy_with(tight, d, k as u32);
                if kind == 3 {
                    assert_eq!(created, Err(TreeError::InvalidValue));
                } else {
                    let id = created.unwrap();
                    // The fat box a move with this displacement would give.
                    boxes.insert(id, tight.swept(d).grown(0.1));
                    moved.insert(id);
                }
            }
            Op::Touch(which) => {
                let Some(id) = nth(&boxes, which) else {
                    continue;
                };
                assert_eq!(tree.touch_proxy(id), Ok(()));
                moved.insert(id);
            }
            Op::TouchDead => {
                if let Some(&id) = dead.last()
                    && !boxes.contains_key(&id)
                {
                    assert_eq!(tree.touch_proxy(id), Err(TreeError::UnknownProxy(id)));
                }
            }
            Op::Pairs => check_pairs(&mut tree, &boxes, &mut moved),
        }
        if let Err(e) = tree.validate() {
            panic!("invalid after {op:?}: {e}");
        }
        assert_eq!(tree.len(), boxes.len());
        assert_eq!(tree.moved_count(), moved.len(), "after {op:?}");
        for (&id, fat) in &boxes {
            assert_eq!(tree.fat_box(id), Some(*fat), "after {op:?}");
        }
    }
    check_pairs(&mut tree, &boxes, &mut moved);
    tree.validate().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn single_ops_2d(ops in prop::collection::vec(op_strategy(), 1..160)) {
        single_ops::<Vec2>(&ops);
    }

    #[test]
    fn single_ops_3d(ops in prop::collection::vec(op_strategy(), 1..160)) {
        single_ops::<Vec3>(&ops);
    }
}
