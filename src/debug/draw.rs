//! Gizmo drawing.

use bevy::prelude::*;

use crate::Vector;
use crate::debug::{CollisionGizmos, DebugOverlay, DebugState};
use crate::geometry::{Ball, BoundingBox, RoundedBox};
use crate::plugin::{AabbTree, TrackedCollider, Velocity, WorldShape};

/// Drawing a box, a ball, a line and an arrow with gizmos in 2D or 3D.
pub trait DrawVector: Vector {
    /// Draws the outline of a box.
    fn draw_box(gizmos: &mut Gizmos<CollisionGizmos>, aabb: &BoundingBox<Self>, color: Color);
    /// Draws a circle (2D) or sphere (3D).
    fn draw_ball(gizmos: &mut Gizmos<CollisionGizmos>, ball: &Ball<Self>, color: Color);
    /// Draws a rounded box: a capsule as a capsule, a box with rounded edges as one.
    fn draw_rounded(gizmos: &mut Gizmos<CollisionGizmos>, rounded: &RoundedBox<Self>, color: Color);
    /// Draws a line segment.
    fn draw_line(gizmos: &mut Gizmos<CollisionGizmos>, a: Self, b: Self, color: Color);
    /// Draws an arrow.
    fn draw_arrow(gizmos: &mut Gizmos<CollisionGizmos>, a: Self, b: Self, color: Color);
}

impl DrawVector for Vec2 {
    fn draw_box(gizmos: &mut Gizmos<CollisionGizmos>, aabb: &BoundingBox<Self>, color: Color) {
        gizmos.rect_2d(aabb.center(), aabb.size(), color);
    }
    fn draw_ball(gizmos: &mut Gizmos<CollisionGizmos>, ball: &Ball<Self>, color: Color) {
        gizmos
            .circle_2d(ball.center, ball.radius, color)
            .resolution(24);
    }
    fn draw_rounded(
        gizmos: &mut Gizmos<CollisionGizmos>,
        rounded: &RoundedBox<Self>,
        color: Color,
    ) {
        // A rectangle whose corners are quarter circles of the radius: a capsule when
        // the radius is half its width.
        let size = (rounded.half_extents + Vec2::splat(rounded.radius)) * 2.0;
        gizmos
            .rounded_rect_2d(Isometry2d::from_translation(rounded.center), size, color)
            .corner_radius(rounded.radius);
    }
    fn draw_line(gizmos: &mut Gizmos<CollisionGizmos>, a: Self, b: Self, color: Color) {
        gizmos.line_2d(a, b, color);
    }
    fn draw_arrow(gizmos: &mut Gizmos<CollisionGizmos>, a: Self, b: Self, color: Color) {
        gizmos.arrow_2d(a, b, color);
    }
}

impl DrawVector for Vec3 {
    fn draw_box(gizmos: &mut Gizmos<CollisionGizmos>, aabb: &BoundingBox<Self>, color: Color) {
        gizmos.cube(
            Transform::from_translation(aabb.center())
                .with_scale(aabb.size().max(Vec3::splat(1e-4))),
            color,
        );
    }
    fn draw_ball(gizmos: &mut Gizmos<CollisionGizmos>, ball: &Ball<Self>, color: Color) {
        gizmos
            .sphere(ball.center, ball.radius, color)
            .resolution(16);
    }
    fn draw_rounded(
        gizmos: &mut Gizmos<CollisionGizmos>,
        rounded: &RoundedBox<Self>,
        color: Color,
    ) {
        let h = rounded.half_extents;
        let long = [h.x, h.y, h.z].iter().filter(|&&e| e > 0.0).count();
        if long == 1 && rounded.radius > 0.0 {
            // A capsule: Bevy's capsule runs along y, turned onto the segment's axis.
            let length = 2.0 * h.max_element();
            let rotation = if h.x > 0.0 {
                Quat::from_rotation_z(core::f32::consts::FRAC_PI_2)
            } else if h.z > 0.0 {
                Quat::from_rotation_x(core::f32::consts::FRAC_PI_2)
            } else {
                Quat::IDENTITY
            };
            gizmos.primitive_3d(
                &Capsule3d::new(rounded.radius, length),
                Isometry3d::new(rounded.center, rotation),
                color,
            );
        } else {
            let size = (h + Vec3::splat(rounded.radius)) * 2.0;
            gizmos
                .rounded_cuboid(Isometry3d::from_translation(rounded.center), size, color)
                .edge_radius(rounded.radius);
        }
    }
    fn draw_line(gizmos: &mut Gizmos<CollisionGizmos>, a: Self, b: Self, color: Color) {
        gizmos.line(a, b, color);
    }
    fn draw_arrow(gizmos: &mut Gizmos<CollisionGizmos>, a: Self, b: Self, color: Color) {
        gizmos.arrow(a, b, color);
    }
}

/// The colour of an internal node at `depth`: hues around the wheel.
pub(crate) fn depth_color(depth: u32) -> Color {
    Color::hsl((depth as f32 * 47.0) % 360.0, 0.85, 0.6)
}

/// The colour of a static tree's internal node at `depth`: shades of grey, lighter deeper
/// down, so that it reads apart from the moving tree's saturated hues at any depth.
pub(crate) fn static_depth_color(depth: u32) -> Color {
    Color::hsl(0.0, 0.0, 0.4 + 0.07 * (depth % 6) as f32)
}

const TIGHT: Color = Color::srgb(0.2, 0.9, 0.3);
const TIGHT_STATIC: Color = Color::srgb(0.8, 0.8, 0.8);
const FAT: Color = Color::srgba(0.6, 0.6, 0.6, 0.6);
const TOUCHING: Color = Color::srgb(1.0, 0.2, 0.2);
const VELOCITY: Color = Color::srgb(0.3, 0.7, 1.0);
const SWEPT: Color = Color::srgb(1.0, 0.85, 0.1);
const SELECTED: Color = Color::WHITE;

pub(crate) fn draw<V: Vector + DrawVector>(
    mut gizmos: Gizmos<CollisionGizmos>,
    overlay: Res<DebugOverlay>,
    state: Res<AabbTree<V>>,
    debug: Res<DebugState<V>>,
    colliders: Query<(&TrackedCollider<V>, Option<&Velocity<V>>)>,
) {
    let o = &*overlay;
    if o.tight_boxes || o.spheres || o.fat_boxes || o.velocities {
        for (tracked, velocity) in &colliders {
            if tracked.proxy().is_none() {
                continue;
            }
            let tight = if tracked.is_in_static_tree() {
                TIGHT_STATIC
            } else {
                TIGHT
            };
            match tracked.world_shape() {
                WorldShape::Box(b) if o.tight_boxes => V::draw_box(&mut gizmos, &b, tight),
                WorldShape::Ball(b) if o.spheres => V::draw_ball(&mut gizmos, &b, tight),
                WorldShape::Rounded(r) if o.spheres => V::draw_rounded(&mut gizmos, &r, tight),
                _ => {}
            }
            if o.fat_boxes
                && let Some(fat) = tracked.fat_aabb(&state)
            {
                V::draw_box(&mut gizmos, &fat, FAT);
            }
            if o.velocities
                && let Some(v) = velocity
                && v.0 != V::ZERO
            {
                let c = tracked.world_shape().center();
                V::draw_arrow(&mut gizmos, c, c + v.0 * (10.0 / 60.0), VELOCITY);
            }
        }
    }
    let (lo, hi) = o.depth_range;
    let static_nodes = (state.static_tree(), o.static_tree_nodes);
    let moving_nodes = (state.tree(), o.tree_nodes);
    let colors: [fn(u32) -> Color; 2] = [static_depth_color, depth_color];
    for ((tree, shown), color) in [static_nodes, moving_nodes].into_iter().zip(colors) {
        if shown {
            tree.visit_nodes(|_, node, depth| {
                if node.children.is_some() && depth >= lo && depth <= hi {
                    V::draw_box(&mut gizmos, &node.aabb, color(depth));
                }
                depth < hi
            });
        }
    }
    if o.touching {
        for (a, b) in state.touching_pairs() {
            let (Ok((ta, _)), Ok((tb, _))) = (colliders.get(a), colliders.get(b)) else {
                continue;
            };
            for t in [ta, tb] {
                match t.world_shape() {
                    WorldShape::Box(x) => V::draw_box(&mut gizmos, &x, TOUCHING),
                    WorldShape::Ball(x) => V::draw_ball(&mut gizmos, &x, TOUCHING),
                    WorldShape::Rounded(x) => V::draw_rounded(&mut gizmos, &x, TOUCHING),
                }
            }
            V::draw_line(
                &mut gizmos,
                ta.world_shape().center(),
                tb.world_shape().center(),
                TOUCHING,
            );
        }
    }
    if o.pass_throughs {
        for &(p, age) in &debug.recent_hits {
            // A ring that widens and fades as the hit gets older.
            let fade = 1.0 - age as f32 / super::HIT_FRAMES as f32;
            let r = 0.4 + (1.0 - fade) * 1.2;
            V::draw_ball(&mut gizmos, &Ball::new(p, r), SWEPT.with_alpha(fade));
        }
    }
    if let Some(node) = debug.selected.and_then(|n| state.tree().node(n)) {
        V::draw_box(&mut gizmos, &node.aabb, SELECTED);
        V::draw_box(&mut gizmos, &node.aabb.grown(0.05), SELECTED);
    }
}
