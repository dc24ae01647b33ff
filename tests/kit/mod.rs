//! The tests' kit, one module that every test binary includes with
//! `#[path = "../kit/mod.rs"] mod kit;`: the random generator (`rng`), the `f64` oracles
//! of the ray, cast and overlap queries (`oracle`), the tree scenes (`tree_scene`, also
//! included by the crate's own unit tests), the tree's queries against a scan
//! (`tree_queries`) and the model of the tree's operations (`tree_model`), both also
//! included by the fuzz target, running a test in a process of its own
//! (`process`) and, with the plugin, the two dimensions (`dim`) and the warnings
//! recorder (`warnings`). Each binary uses its own subset.
#![allow(dead_code)]

use bevy_aabb_tree::{BoundingBox, DynamicTree, ProxyId, Vector};
use glam::Vec3;

#[cfg(feature = "plugin")]
pub mod dim;
pub mod oracle;
pub mod process;
pub mod rng;
pub mod tree_model;
pub mod tree_queries;
pub mod tree_scene;
#[cfg(feature = "plugin")]
pub mod warnings;

/// Two tests of one check generic over [`Vector`]: `$name_2d` runs `$check::<Vec2>` and
/// `$name_3d` runs `$check::<Vec3>`, each with the arguments written after its name (none
/// where the names stand alone).
#[allow(unused_macros)]
macro_rules! tests_2d_3d {
    ($check:ident: $name_2d:ident, $name_3d:ident) => {
        $crate::kit::tests_2d_3d!($check: $name_2d(), $name_3d());
    };
    ($check:ident: $name_2d:ident($($arg_2d:expr),*), $name_3d:ident($($arg_3d:expr),*)) => {
        #[test]
        fn $name_2d() {
            $check::<glam::Vec2>($($arg_2d),*);
        }

        #[test]
        fn $name_3d() {
            $check::<glam::Vec3>($($arg_3d),*);
        }
    };
}
#[allow(unused_imports)]
pub(crate) use tests_2d_3d;

/// Tests of checks generic over [`Vector`], one pair a name: `d2::$name` runs
/// `$name::<Vec2>()` and `d3::$name` runs `$name::<Vec3>()`.
#[allow(unused_macros)]
macro_rules! both_dims {
    ($($name:ident),* $(,)?) => {
        mod d2 { $( #[test] fn $name() { super::$name::<glam::Vec2>(); } )* }
        mod d3 { $( #[test] fn $name() { super::$name::<glam::Vec3>(); } )* }
    };
}
#[allow(unused_imports)]
pub(crate) use both_dims;
