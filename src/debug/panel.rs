//! The egui panel: switches, statistics, step-time plot, tree inspector.

use bevy::prelude::*;
use bevy_egui::{EguiContexts, egui};

use crate::Vector;
use crate::debug::draw::depth_color;
use crate::debug::{DebugOverlay, DebugState};
use crate::plugin::AabbTree;
use crate::tree::NodeId;

fn color32(color: Color) -> egui::Color32 {
    let c = color.to_srgba();
    egui::Color32::from_rgb(
        (c.red * 255.0) as u8,
        (c.green * 255.0) as u8,
        (c.blue * 255.0) as u8,
    )
}

pub(crate) fn panel<V: Vector>(
    mut contexts: EguiContexts,
    mut overlay: ResMut<DebugOverlay>,
    state: Res<AabbTree<V>>,
    mut debug: ResMut<DebugState<V>>,
) {
    // No camera yet (or none with egui): nothing to show.
    let Ok(ctx) = contexts.ctx_mut() else {
        return;
    };
    let title = if V::DIM == 2 {
        "bevy_aabb_tree · 2D"
    } else {
        "bevy_aabb_tree · 3D"
    };
    // 2D at the top left, 3D at the top right, so both fit when an app has both.
    let x = if V::DIM == 2 {
        8.0
    } else {
        ctx.content_rect().right() - 290.0
    };
    egui::Window::new(title)
        .default_pos(egui::pos2(x, 8.0))
        .default_width(270.0)
        .show(ctx, |ui| {
            ui.label(format!(
                "{:?} shows or hides the overlay",
                overlay.toggle_key
            ));
            egui::CollapsingHeader::new("Draw")
                .default_open(true)
                .show(ui, |ui| switches(ui, &mut overlay));
            egui::CollapsingHeader::new("Statistics")
                .default_open(true)
                .show(ui, |ui| statistics(ui, &state, &debug));
            egui::CollapsingHeader::new("Tree inspector")
                .default_open(false)
                .show(ui, |ui| inspector(ui, &state, &mut debug));
        });
}

fn switches(ui: &mut egui::Ui, o: &mut DebugOverlay) {
    ui.checkbox(&mut o.tight_boxes, "tight boxes");
    ui.checkbox(&mut o.fat_boxes, "fat boxes");
    ui.checkbox(&mut o.spheres, "spheres / circles");
    ui.checkbox(&mut o.tree_nodes, "moving tree nodes (by depth)");
    ui.checkbox(&mut o.static_tree_nodes, "static tree nodes (grey)");
    ui.horizontal(|ui| {
        ui.label("depths");
        ui.add(egui::DragValue::new(&mut o.depth_range.0).range(0..=64));
        ui.label("to");
        ui.add(egui::DragValue::new(&mut o.depth_range.1).range(0..=64));
    });
    if o.depth_range.0 > o.depth_range.1 {
        o.depth_range.1 = o.depth_range.0;
    }
    ui.checkbox(&mut o.touching, "touching pairs");
    ui.checkbox(&mut o.velocities, "velocities");
    ui.checkbox(&mut o.pass_throughs, "pass-throughs");
}

fn statistics<V: Vector>(ui: &mut egui::Ui, state: &AabbTree<V>, debug: &DebugState<V>) {
    let s = state.stats();
    let t = state.tree_stats();
    let st = state.static_tree_stats();
    egui::Grid::new("stats")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            let mut row = |k: &str, v: String| {
                ui.label(k);
                ui.label(v);
                ui.end_row();
            };
            // Each figure for the moving tree, then the static one.
            let both = |f: &dyn Fn(&crate::TreeStats) -> String| format!("{} | {}", f(&t), f(&st));
            row("tree", "moving | static".to_string());
            row("proxies", both(&|t| t.proxies.to_string()));
            row("nodes", both(&|t| t.nodes.to_string()));
            row("height", both(&|t| t.height.to_string()));
            row(
                "area ratio (SAH)",
                both(&|t| format!("{:.2}", t.area_ratio)),
            );
            row(
                "bytes / proxy",
                both(&|t| (t.bytes / t.proxies.max(1)).to_string()),
            );
            // With the plugin's bodies and pairs, over every collider.
            row(
                "bytes / collider, all",
                (state.bytes() / (t.proxies + st.proxies).max(1)).to_string(),
            );
            row("processed this tick", s.processed.to_string());
            row("moved this tick", s.moved.to_string());
            row("new candidate pairs", s.new_candidates.to_string());
            row("candidate pairs", s.candidates.to_string());
            row("touching pairs", s.touching.to_string());
            row(
                "events (start / end)",
                format!("{} / {}", s.started, s.ended),
            );
            row("pass-throughs", s.pass_throughs.to_string());
            row("prepare", format!("{:.3} ms", s.prepare_ms));
            row("broad phase", format!("{:.3} ms", s.broad_ms));
            row("narrow phase", format!("{:.3} ms", s.narrow_ms));
            row("events", format!("{:.3} ms", s.events_ms));
            row("step", format!("{:.3} ms", s.total_ms()));
            row("of which the tree", format!("{:.3} ms", s.tree_ms));
        });
    plot(ui, debug);
}

/// A small line plot of the step time over recent frames.
fn plot<V: Vector>(ui: &mut egui::Ui, debug: &DebugState<V>) {
    let max = debug.history.iter().copied().fold(0.1f32, f32::max);
    ui.label(format!(
        "step time, last {} frames (max {max:.2} ms)",
        debug.history.len()
    ));
    let (rect, _) =
        ui.allocate_exact_size(egui::vec2(ui.available_width(), 60.0), egui::Sense::hover());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 2.0, egui::Color32::from_gray(25));
    let n = debug.history.len().max(2) as f32 - 1.0;
    let points: Vec<egui::Pos2> = debug
        .history
        .iter()
        .enumerate()
        .map(|(i, ms)| {
            egui::pos2(
                rect.left() + rect.width() * i as f32 / n,
                rect.bottom() - rect.height() * (ms / max).clamp(0.0, 1.0),
            )
        })
        .collect();
    painter.add(egui::Shape::line(
        points,
        egui::Stroke::new(1.5, egui::Color32::LIGHT_GREEN),
    ));
}

fn inspector<V: Vector>(ui: &mut egui::Ui, state: &AabbTree<V>, debug: &mut DebugState<V>) {
    let tree = state.tree();
    let Some(root) = tree.root() else {
        ui.label("empty tree");
        return;
    };
    let selected = debug.selected.unwrap_or(root);
    let Some(node) = tree.node(selected) else {
        debug.selected = None;
        return;
    };
    ui.horizontal(|ui| {
        if ui.button("root").clicked() {
            debug.selected = Some(root);
        }
        if let Some(p) = node.parent
            && ui.button("parent").clicked()
        {
            debug.selected = Some(p);
        }
        if let Some((c1, c2)) = node.children {
            if ui.button("child 1").clicked() {
                debug.selected = Some(c1);
            }
            if ui.button("child 2").clicked() {
                debug.selected = Some(c2);
            }
        }
        if ui.button("clear").clicked() {
            debug.selected = None;
        }
    });
    egui::Grid::new("node").num_columns(2).show(ui, |ui| {
        ui.label("node");
        ui.label(if selected.is_leaf() {
            format!("leaf of proxy #{}", selected.proxy().index())
        } else {
            format!("#{}", selected.index())
        });
        ui.end_row();
        ui.label("height");
        ui.label(node.height.to_string());
        ui.end_row();
        ui.label("min");
        ui.label(format!("{:.2?}", node.aabb.min));
        ui.end_row();
        ui.label("max");
        ui.label(format!("{:.2?}", node.aabb.max));
        ui.end_row();
        ui.label("area");
        ui.label(format!("{:.2}", node.aabb.area()));
        ui.end_row();
        if let Some(proxy) = node.proxy {
            ui.label("entity");
            ui.label(tree.data(proxy).map(|e| e.to_string()).unwrap_or_default());
            ui.end_row();
        }
    });
    ui.separator();
    egui::ScrollArea::vertical()
        .max_height(220.0)
        .show(ui, |ui| {
            browse(ui, state, root, 0, debug);
        });
}

/// A collapsible view of the tree, 8 levels deep at most; click a node to select it.
fn browse<V: Vector>(
    ui: &mut egui::Ui,
    state: &AabbTree<V>,
    id: NodeId,
    depth: u32,
    debug: &mut DebugState<V>,
) {
    let tree = state.tree();
    let Some(node) = tree.node(id) else { return };
    let label = match node.proxy {
        Some(p) => format!(
            "leaf of proxy #{} ({})",
            p.index(),
            tree.data(p).map(|e| e.to_string()).unwrap_or_default()
        ),
        None => format!("node #{} h={}", id.index(), node.height),
    };
    let text = egui::RichText::new(label).color(color32(depth_color(depth)));
    match node.children {
        Some((c1, c2)) if depth < 8 => {
            let header = egui::CollapsingHeader::new(text)
                .id_salt(id.index())
                .default_open(depth < 1)
                .show(ui, |ui| {
                    browse(ui, state, c1, depth + 1, debug);
                    browse(ui, state, c2, depth + 1, debug);
                });
            if header.header_response.secondary_clicked() || header.header_response.double_clicked()
            {
                debug.selected = Some(id);
            }
            if header.header_response.hovered() {
                header
                    .header_response
                    .on_hover_text("double-click to select");
            }
        }
        _ => {
            if ui
                .selectable_label(debug.selected == Some(id), text)
                .clicked()
            {
                debug.selected = Some(id);
            }
        }
    }
}
