//! Scenes of boxes for the tree's tests, shared by the integration tests (`tests/tree.rs`)
//! and the unit tests inside the crate (`src/tree/tests.rs`). The including module brings
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
