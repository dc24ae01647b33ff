//! Diagnostic paths: `aabb_tree_2d/...` and `aabb_tree_3d/...`, one measurement per tick
//! each, registered with Bevy's diagnostics (read them from `Res<DiagnosticsStore>`, or log
//! them with `LogDiagnosticsPlugin`). The same figures are in [`AabbTree::stats`].

use bevy::diagnostic::{DiagnosticPath, Diagnostics};
use bevy::prelude::*;

use crate::Vector;
use crate::plugin::{AabbTree, StepStats};

macro_rules! paths {
    ($($name:ident = $path:literal, $doc:literal;)*) => {
        $(
            #[doc = $doc]
            pub const $name: DiagnosticPath = DiagnosticPath::const_new($path);
        )*
    };
}

paths! {
    TICK_MS_2D = "aabb_tree_2d/tick_ms", "Milliseconds of the whole tick, 2D.";
    PREPARE_MS_2D = "aabb_tree_2d/prepare_ms", "Milliseconds of the prepare stage, 2D.";
    BROAD_MS_2D = "aabb_tree_2d/broad_ms", "Milliseconds of the broad phase, 2D.";
    NARROW_MS_2D = "aabb_tree_2d/narrow_ms", "Milliseconds of the narrow phase, 2D.";
    EVENTS_MS_2D = "aabb_tree_2d/events_ms", "Milliseconds writing events, 2D.";
    TREE_MS_2D = "aabb_tree_2d/tree_ms", "Milliseconds of the moving tree's own work (moves, pair update), 2D.";
    MOVED_2D = "aabb_tree_2d/moved", "Proxies whose fat box changed, 2D.";
    CANDIDATES_2D = "aabb_tree_2d/candidates", "Candidate pairs tracked, 2D.";
    TOUCHING_2D = "aabb_tree_2d/touching", "Touching pairs, 2D.";
    EVENTS_2D = "aabb_tree_2d/events", "Collision events (starts and ends), 2D.";
    TICK_MS_3D = "aabb_tree_3d/tick_ms", "Milliseconds of the whole tick, 3D.";
    PREPARE_MS_3D = "aabb_tree_3d/prepare_ms", "Milliseconds of the prepare stage, 3D.";
    BROAD_MS_3D = "aabb_tree_3d/broad_ms", "Milliseconds of the broad phase, 3D.";
    NARROW_MS_3D = "aabb_tree_3d/narrow_ms", "Milliseconds of the narrow phase, 3D.";
    EVENTS_MS_3D = "aabb_tree_3d/events_ms", "Milliseconds writing events, 3D.";
    TREE_MS_3D = "aabb_tree_3d/tree_ms", "Milliseconds of the moving tree's own work (moves, pair update), 3D.";
    MOVED_3D = "aabb_tree_3d/moved", "Proxies whose fat box changed, 3D.";
    CANDIDATES_3D = "aabb_tree_3d/candidates", "Candidate pairs tracked, 3D.";
    TOUCHING_3D = "aabb_tree_3d/touching", "Touching pairs, 3D.";
    EVENTS_3D = "aabb_tree_3d/events", "Collision events (starts and ends), 3D.";
}

/// The dimension's diagnostics: path, whether it is in milliseconds, and its value.
pub(crate) fn measurements<V: Vector>(stats: &StepStats) -> [(DiagnosticPath, bool, f64); 10] {
    let paths = if V::DIM == 2 {
        [
            TICK_MS_2D,
            PREPARE_MS_2D,
            BROAD_MS_2D,
            NARROW_MS_2D,
            EVENTS_MS_2D,
            TREE_MS_2D,
            MOVED_2D,
            CANDIDATES_2D,
            TOUCHING_2D,
            EVENTS_2D,
        ]
    } else {
        [
            TICK_MS_3D,
            PREPARE_MS_3D,
            BROAD_MS_3D,
            NARROW_MS_3D,
            EVENTS_MS_3D,
            TREE_MS_3D,
            MOVED_3D,
            CANDIDATES_3D,
            TOUCHING_3D,
            EVENTS_3D,
        ]
    };
    let values = [
        (true, stats.total_ms()),
        (true, stats.prepare_ms),
        (true, stats.broad_ms),
        (true, stats.narrow_ms),
        (true, stats.events_ms),
        (true, stats.tree_ms),
        (false, stats.moved as f32),
        (false, stats.candidates as f32),
        (false, stats.touching as f32),
        (false, (stats.started + stats.ended) as f32),
    ];
    core::array::from_fn(|i| (paths[i].clone(), values[i].0, values[i].1 as f64))
}

pub(crate) fn record_diagnostics<V: Vector>(state: Res<AabbTree<V>>, mut diagnostics: Diagnostics) {
    for (path, _, value) in measurements::<V>(state.stats()) {
        diagnostics.add_measurement(&path, || value);
    }
}
