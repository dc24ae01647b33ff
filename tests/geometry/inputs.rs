//! Random inputs: exact (dyadic grid, powers of two) and float cases.

use super::*;

// ---------------------------------------------------------------------------------------
// Random inputs
// ---------------------------------------------------------------------------------------

/// Multiples of 1/2 in `[-lim/2, lim/2]`.
pub(crate) fn grid(lim: i32) -> impl Strategy<Value = f32> {
    (-lim..=lim).prop_map(|k| k as f32 / 2.0)
}

pub(crate) fn grid3(lim: i32) -> impl Strategy<Value = [f32; 3]> {
    prop::array::uniform3(grid(lim))
}

/// Sizes on the grid, zero on an axis one time in four.
pub(crate) fn grid_size3() -> impl Strategy<Value = [f32; 3]> {
    prop::array::uniform3(prop_oneof![
        1 => Just(0.0f32),
        3 => (1i32..=8).prop_map(|k| k as f32 / 2.0),
    ])
}

/// A box on the grid as `(min, max)`.
pub(crate) fn grid_box() -> impl Strategy<Value = ([f32; 3], [f32; 3])> {
    (grid3(12), grid_size3()).prop_map(|(min, size)| (min, add3(min, size)))
}

pub(crate) fn grid_radius() -> impl Strategy<Value = f32> {
    prop_oneof![1 => Just(0.0f32), 4 => (1i32..=8).prop_map(|k| k as f32 / 2.0)]
}

/// 0 or `±2^e` for `e` in `-2..=4`: dividing by it is exact.
pub(crate) fn pow2_or_zero() -> impl Strategy<Value = f32> {
    prop_oneof![
        1 => Just(0.0f32),
        3 => (-2i32..=4, any::<bool>()).prop_map(|(e, neg)| if neg { -(2f32.powi(e)) } else { 2f32.powi(e) }),
    ]
}

pub(crate) fn grid_max_t() -> impl Strategy<Value = f32> {
    (0i32..=16).prop_map(|k| k as f32 / 2.0)
}

pub(crate) fn float_box() -> impl Strategy<Value = ([f32; 3], [f32; 3])> {
    (
        prop::array::uniform3(-6.0f32..6.0),
        prop::array::uniform3(prop_oneof![1 => Just(0.0f32), 4 => 0.0f32..3.0]),
    )
        .prop_map(|(c, h)| (sub3(c, h), add3(c, h)))
}

/// A displacement: zero one time in five, else zero on an axis one time in four.
pub(crate) fn float_disp() -> impl Strategy<Value = [f32; 3]> {
    prop_oneof![
        1 => Just([0.0f32; 3]),
        4 => prop::array::uniform3(prop_oneof![1 => Just(0.0f32), 3 => -12.0f32..12.0]),
    ]
}

pub(crate) fn float_radius() -> impl Strategy<Value = f32> {
    prop_oneof![1 => Just(0.0f32), 5 => 0.0f32..3.0]
}

pub(crate) fn float_max_t() -> impl Strategy<Value = f32> {
    prop_oneof![1 => Just(0.0f32), 6 => 0.0f32..4.0]
}

/// 512 cases per property, or `PROPTEST_CASES` (for longer runs).
pub(crate) fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(512);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}
