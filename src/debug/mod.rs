//! The debug overlay: gizmos for boxes, spheres, the trees' nodes, touching pairs,
//! velocities and pass-throughs caught by the swept test (feature `gizmos`), and with feature `debug` also an egui
//! panel with switches, live statistics, a step-time plot and a tree inspector.
//!
//! Add [`AabbTreeDebugPlugin`] beside [`AabbTreePlugin`](crate::plugin::AabbTreePlugin)
//! for each dimension. It needs rendering; keep it out of headless apps. A game that
//! does not use egui takes feature `gizmos` alone: the same drawing, no panel, and no
//! bevy_egui in its build.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_aabb_tree::prelude::*;
//! use bevy_aabb_tree::debug::AabbTreeDebugPlugin;
//!
//! App::new()
//!     .add_plugins(DefaultPlugins)
//!     .add_plugins((AabbTreePlugin::<Vec2>::default(), AabbTreeDebugPlugin::<Vec2>::default()))
//!     .run();
//! ```
//!
//! **F1** shows or hides the whole overlay ([`DebugOverlay::toggle_key`]). Every drawing
//! category has its own switch in [`DebugOverlay`] and in the panel; a category that is
//! off costs nothing. The panel never takes input away from the game: Bevy systems see
//! every key and click (use `bevy_egui::input::egui_wants_any_pointer_input` as a run
//! condition where clicks on the panel should not reach the game).

mod draw;
#[cfg(feature = "debug")]
mod panel;

use core::marker::PhantomData;
use std::collections::VecDeque;

use bevy::prelude::*;
#[cfg(feature = "debug")]
use bevy_egui::{EguiPlugin, EguiPrimaryContextPass};

use crate::Vector;
use crate::plugin::AabbTree;
use crate::tree::NodeId;

pub use draw::DrawVector;

/// The gizmo config group of the overlay (line width, depth bias, render layers).
#[derive(Default, Reflect, GizmoConfigGroup)]
pub struct CollisionGizmos;

/// What the overlay shows. Defaults in parentheses.
#[derive(Resource, Clone, Debug, PartialEq, Reflect)]
#[reflect(Resource, Debug)]
pub struct DebugOverlay {
    /// Everything at all (default on). Toggled by `toggle_key`.
    pub visible: bool,
    /// The key that shows or hides the whole overlay (default `F1`).
    pub toggle_key: KeyCode,
    /// The egui panel (default on).
    pub panel: bool,
    /// Tight world boxes of box colliders (default on): green, light grey for `Static` ones.
    pub tight_boxes: bool,
    /// Fat boxes stored in the tree (default off).
    pub fat_boxes: bool,
    /// Spheres / circles, and capsules and rounded boxes drawn as what they are (default
    /// on).
    pub spheres: bool,
    /// The moving tree's internal nodes, coloured by depth (default on).
    pub tree_nodes: bool,
    /// The static tree's internal nodes, in shades of grey by depth (default on): the
    /// moving tree's colours are saturated, so the two read apart.
    pub static_tree_nodes: bool,
    /// The range of depths of internal nodes drawn, root = 0 (default 0..=5).
    pub depth_range: (u32, u32),
    /// Touching pairs highlighted, with a line between their centers (default on).
    pub touching: bool,
    /// Velocity arrows (one tick ahead, ×10) (default on).
    pub velocities: bool,
    /// Where swept tests caught fast objects, kept on screen for a while (default on).
    pub pass_throughs: bool,
}

impl Default for DebugOverlay {
    fn default() -> Self {
        Self {
            visible: true,
            toggle_key: KeyCode::F1,
            panel: true,
            tight_boxes: true,
            fat_boxes: false,
            spheres: true,
            tree_nodes: true,
            static_tree_nodes: true,
            depth_range: (0, 5),
            touching: true,
            velocities: true,
            pass_throughs: true,
        }
    }
}

/// Per-dimension overlay state: the node picked in the inspector, recent step times and
/// recent pass-throughs.
#[derive(Resource)]
pub struct DebugState<V: Vector> {
    /// The node selected in the tree inspector, highlighted in the world. An internal
    /// node's id names an arena slot: after the tree's next rebuild of that region it may
    /// name another node (a leaf's id is its proxy's, for the proxy's life).
    pub selected: Option<NodeId>,
    /// Step times (ms) of recent frames, oldest first.
    pub history: VecDeque<f32>,
    /// Recent pass-throughs: where, and how many frames ago.
    pub recent_hits: VecDeque<(V, u32)>,
}

impl<V: Vector> Default for DebugState<V> {
    fn default() -> Self {
        Self {
            selected: None,
            history: VecDeque::with_capacity(HISTORY),
            recent_hits: VecDeque::new(),
        }
    }
}

const HISTORY: usize = 240;
const HIT_FRAMES: u32 = 90;

/// The debug overlay for one dimension: `AabbTreeDebugPlugin::<Vec2>` or `::<Vec3>`.
/// With feature `debug`, it also shows the egui panel and adds `EguiPlugin` if the app
/// has none.
pub struct AabbTreeDebugPlugin<V: Vector>(PhantomData<fn() -> V>);

impl<V: Vector> Default for AabbTreeDebugPlugin<V> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<V: Vector + DrawVector> Plugin for AabbTreeDebugPlugin<V> {
    fn build(&self, app: &mut App) {
        #[cfg(feature = "debug")]
        {
            if !app.is_plugin_added::<EguiPlugin>() {
                app.add_plugins(EguiPlugin::default());
            }
            app.add_systems(
                EguiPrimaryContextPass,
                panel::panel::<V>.run_if(|o: Res<DebugOverlay>| o.visible && o.panel),
            );
        }
        // Idempotent: the 2D and 3D overlays share the group.
        app.init_gizmo_group::<CollisionGizmos>()
            .init_resource::<DebugOverlay>()
            .register_type::<DebugOverlay>()
            .init_resource::<DebugState<V>>()
            .add_systems(Update, (toggle_overlay, record::<V>))
            .add_systems(
                PostUpdate,
                draw::draw::<V>.run_if(|o: Res<DebugOverlay>| o.visible),
            );
    }
}

fn toggle_overlay(keys: Option<Res<ButtonInput<KeyCode>>>, mut overlay: ResMut<DebugOverlay>) {
    if let Some(keys) = keys
        && keys.just_pressed(overlay.toggle_key)
    {
        overlay.visible = !overlay.visible;
    }
}

/// Keeps the step-time history and the recent pass-throughs.
fn record<V: Vector>(state: Res<AabbTree<V>>, mut debug: ResMut<DebugState<V>>) {
    let debug = &mut *debug;
    if debug.history.len() == HISTORY {
        debug.history.pop_front();
    }
    debug.history.push_back(state.stats().total_ms());
    for hit in &mut debug.recent_hits {
        hit.1 += 1;
    }
    debug.recent_hits.retain(|h| h.1 < HIT_FRAMES);
    if state.is_changed() {
        for hit in state.pass_throughs() {
            debug.recent_hits.push_back((hit.position, 0));
        }
    }
    if let Some(node) = debug.selected
        && state.tree().node(node).is_none()
    {
        debug.selected = None;
    }
}
