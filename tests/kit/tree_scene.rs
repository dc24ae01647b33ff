//! Scenes of boxes for the tree's tests, shared by the integration tests (`tests/tree/`, through the kit)
//! and the unit tests inside the crate (`src/tree/tests/`). The including module brings
//! `BoundingBox`, `DynamicTree`, `ProxyId`, `Vector` and `Vec3` into scope, from whichever
//! path it sees them by.

use super::{BoundingBox, DynamicTree, ProxyId, Vec3, Vector};

/// A vector of `V`'s dimension from three coordinates (the third dropped in 2D).
pub fn v<V: Vector>(a: [f32; 3]) -> V {
    V::truncate_from_3d(Vec3::from_array(a))
}

/// The uniform random numbers of the scenario's LCG (in `[0, 1)`), from `seed`.
pub fn lcg(seed: u32) -> impl FnMut() -> f32 {
    let mut s = seed;
    move || {
        s = s.wrapping_mul(1664525).wrapping_add(1013904223);
        (s >> 8) as f32 / 16_777_216.0
    }
}

/// `n` boxes of half extent 0.5 at random centers in a square (cube) of side
/// `2.5 * sqrt(n)`, built into a tree with margin 0.05: the centers, the tree, the ids.
pub fn uniform_tree<V: Vector>(
    r: &mut impl FnMut() -> f32,
    n: usize,
) -> (Vec<V>, DynamicTree<V, u32>, Vec<ProxyId>) {
    let side = 2.5 * (n as f32).sqrt();
    let centers: Vec<V> = (0..n)
        .map(|_| v::<V>([r() * side, r() * side, r() * side]))
        .collect();
    let mut tree = DynamicTree::<V, u32>::with_margin(0.05);
    let ids = tree
        .build(
            centers
                .iter()
                .map(|&c| BoundingBox::from_center_half_extents(c, V::splat(0.5)))
                .zip(0u32..),
        )
        .unwrap();
    (centers, tree, ids)
}

/// An id that names no proxy of a tree of `n` proxies (ids are dense from 0): the id of
/// the `(n + extra)`th proxy of another tree.
pub fn unknown_id<V: Vector>(n: usize, extra: usize) -> ProxyId {
    let mut other = DynamicTree::<V, u32>::new();
    let mut last = other.create_proxy(BoundingBox::default(), 0).unwrap();
    while last.index() < n + extra {
        last = other.create_proxy(BoundingBox::default(), 0).unwrap();
    }
    last
}

/// The moves of step `step` of the batch-move scene over the boxes of half extent 0.5 at
/// `centers` (moved here): `count` boxes jump by up to 0.2 on each axis, with a predicted
/// displacement of 0, 1 or 2 jumps; every 97th move has an invalid box and the next one
/// the id `unknown`; every 50th box moves again a little further (the later box must
/// win).
pub fn jump_moves<V: Vector>(
    r: &mut impl FnMut() -> f32,
    step: usize,
    count: usize,
    centers: &mut [V],
    ids: &[ProxyId],
    unknown: ProxyId,
) -> Vec<(ProxyId, BoundingBox<V>, V)> {
    let n = centers.len();
    let half = V::splat(0.5);
    let mut moves = Vec::new();
    for k in 0..count {
        let i = (k * 7919 + step * 31) % n;
        let jump = v::<V>([r() - 0.5, r() - 0.5, r() - 0.5]) * 0.4;
        centers[i] += jump;
        let mut tight = BoundingBox::from_center_half_extents(centers[i], half);
        let mut id = ids[i];
        match k % 97 {
            5 => tight = BoundingBox::from_min_max(V::splat(f32::NAN), V::ONE),
            6 => id = unknown,
            _ => {}
        }
        moves.push((id, tight, jump * (k % 3) as f32));
        if k % 50 == 7 {
            centers[i] += jump;
            let tight = BoundingBox::from_center_half_extents(centers[i], half);
            moves.push((ids[i], tight, V::ZERO));
        }
    }
    moves
}

/// The internal nodes whose two children are internal, and how many of them have the two
/// side by side in the arena.
pub fn side_by_side<V: Vector>(tree: &DynamicTree<V, u32>) -> (usize, usize) {
    let mut count = (0, 0);
    tree.visit_nodes(|_, node, _| {
        if let Some((c1, c2)) = node.children
            && !c1.is_leaf()
            && !c2.is_leaf()
        {
            count.0 += 1;
            count.1 += (c2.index() == c1.index() + 1) as usize;
        }
        true
    });
    count
}
