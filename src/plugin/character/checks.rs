//! What can be wrong with a character's settings and shape, and the one warning about
//! each.

use bevy::prelude::*;

use crate::Vector;
use crate::geometry::{CharacterConfig, Shape};

use super::*;

/// What can be wrong with a character, one bit each in [`CharacterState::warned`]: each
/// is warned about once when it appears, and again only after it was right for a move.
pub(super) mod problem {
    pub(in crate::plugin::character) const CHILD: u16 = 1 << 0;
    pub(in crate::plugin::character) const VELOCITY: u16 = 1 << 1;
    pub(in crate::plugin::character) const UP: u16 = 1 << 2;
    pub(in crate::plugin::character) const SKIN: u16 = 1 << 3;
    pub(in crate::plugin::character) const MAX_SLOPE: u16 = 1 << 4;
    pub(in crate::plugin::character) const STEP: u16 = 1 << 5;
    pub(in crate::plugin::character) const SNAP: u16 = 1 << 6;
    pub(in crate::plugin::character) const ITERATIONS: u16 = 1 << 7;
    pub(in crate::plugin::character) const ZERO_SIZE: u16 = 1 << 8;
    pub(in crate::plugin::character) const ALL: [u16; 9] = [
        CHILD, VELOCITY, UP, SKIN, MAX_SLOPE, STEP, SNAP, ITERATIONS, ZERO_SIZE,
    ];
}

/// Whether `value` is a finite number of at least 0.
fn non_negative(value: f32) -> bool {
    value.is_finite() && value >= 0.0
}

/// `config` with each setting out of its range replaced by its fallback (documented on
/// [`CharacterController::config`]), and the [`problem`] bits of those replaced.
pub(super) fn checked<V: Vector>(config: &CharacterConfig<V>) -> (CharacterConfig<V>, u16) {
    let default = CharacterConfig::<V>::new(V::ZERO);
    let mut c = *config;
    let mut bad = 0;
    if !c.up.is_finite() {
        c.up = V::ZERO;
        bad |= problem::UP;
    }
    if !non_negative(c.skin) {
        c.skin = default.skin;
        bad |= problem::SKIN;
    }
    if !(0.0..=core::f32::consts::FRAC_PI_2).contains(&c.max_slope) {
        c.max_slope = default.max_slope;
        bad |= problem::MAX_SLOPE;
    }
    if !non_negative(c.max_step_height) {
        c.max_step_height = default.max_step_height;
        bad |= problem::STEP;
    }
    if !non_negative(c.snap_distance) {
        c.snap_distance = default.snap_distance;
        bad |= problem::SNAP;
    }
    if c.max_iterations == 0 {
        c.max_iterations = default.max_iterations;
        bad |= problem::ITERATIONS;
    }
    (c, bad)
}

/// Whether a shape has no extent along some axis (a point, a flat box, a ball of radius
/// 0).
pub(super) fn zero_size<V: Vector>(shape: &Shape<V>) -> bool {
    match shape {
        Shape::Box(b) => (0..V::DIM).any(|axis| b.max.axis(axis) <= b.min.axis(axis)),
        Shape::Ball(b) => b.radius <= 0.0,
        Shape::Rounded(r) => {
            r.radius <= 0.0 && (0..V::DIM).any(|axis| r.half_extents.axis(axis) <= 0.0)
        }
    }
}

/// The one warning about problem `bit` of character `entity`.
pub(super) fn warn_about<V: Vector>(
    entity: Entity,
    bit: u16,
    controller: &CharacterController<V>,
    shape: &Shape<V>,
) {
    let (c, d) = (&controller.config, CharacterConfig::<V>::new(V::ZERO));
    let prefix = format!("bevy_aabb_tree: character {entity} ");
    let number = "not a finite number of at least 0: using its default,";
    match bit {
        problem::CHILD => warn!(
            "{prefix}is a child: its moves are world displacements added to its local translation; keep characters at the root"
        ),
        problem::VELOCITY => warn!(
            "{prefix}has a non-finite velocity {:?}: it is set to zero",
            controller.velocity
        ),
        problem::UP => warn!(
            "{prefix}has CharacterConfig::up {:?}, not finite: it moves as a top-down character (no ground, steps or snapping)",
            c.up
        ),
        problem::SKIN => warn!(
            "{prefix}has CharacterConfig::skin {}, {number} {}",
            c.skin, d.skin
        ),
        problem::MAX_SLOPE => warn!(
            "{prefix}has CharacterConfig::max_slope {}, not an angle from 0 to π/2 radians: using its default, {} (45°)",
            c.max_slope, d.max_slope
        ),
        problem::STEP => warn!(
            "{prefix}has CharacterConfig::max_step_height {}, {number} {}",
            c.max_step_height, d.max_step_height
        ),
        problem::SNAP => warn!(
            "{prefix}has CharacterConfig::snap_distance {}, {number} {}",
            c.snap_distance, d.snap_distance
        ),
        problem::ITERATIONS => warn!(
            "{prefix}has CharacterConfig::max_iterations 0, not at least 1: using its default, {}",
            d.max_iterations
        ),
        _ => warn!(
            "{prefix}has a zero size ({shape:?}): it fits into the seams between colliders (a point walks along a floor's seam into a box); give its collider a size"
        ),
    }
}
