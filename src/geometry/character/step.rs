//! Steps (step 3 of [`move_character`](super::move_character)) and the footing a rounded
//! character finds on an edge.
//!
//! A box meets a step's top face flat. A rounded bottom (a capsule's or a ball's) meets
//! the step's edge instead, with a normal slanted by how far the edge is off its lowest
//! point: too steep to stand on for any step higher than the rounding slides over, so
//! without more a rounded character could neither land on the step nor rest on its edge
//! while it walks on. The edge footing rule makes such an edge ground when it is low
//! enough (no more than `max_step_height` above the character's foot) and walkable
//! ground lies on top of it, just past it, as two short probes down confirm.

use smallvec::SmallVec;

use crate::Vector;
use crate::geometry::slide::length;
use crate::geometry::{BoundingBox, CastHit, Shape};

use super::{CharacterWorld, Part, Plane, Rules, reach, slide, unit};

/// What a step did.
pub(super) struct Step<V: Vector, Id> {
    pub(super) displacement: V,
    pub(super) height: f32,
    pub(super) hits: SmallVec<[CastHit<V, Id>; 4]>,
    pub(super) planes: SmallVec<[Plane<V>; 8]>,
}

impl<V: Vector> Rules<V> {
    /// The ground `hit` gives the character, met by `shape` (placed where it meets it):
    /// the hit itself when it is ground ([`Self::is_ground`]), the edge footing when the
    /// rule applies (the hit, with the normal of the ground on top of the edge), `None`
    /// otherwise.
    pub(super) fn footing<W: CharacterWorld<V>>(
        &self,
        world: &mut W,
        shape: &Shape<V>,
        hit: &CastHit<V, W::Id>,
    ) -> Option<CastHit<V, W::Id>> {
        if self.is_ground(world, hit) {
            return Some(*hit);
        }
        self.edge_footing(world, shape, hit)
    }

    /// The edge footing rule: a rounded `shape` (not a box: a box meets edges with its
    /// flat faces) touching, with a normal that faces up but is too steep to stand on, an
    /// edge no more than `max_step_height` above its lowest point, stands on it when
    /// walkable ground it may stand on lies on top of the edge. Two probes confirm it: a
    /// point a little past the edge and one three times as far, each cast down from a
    /// little above the edge, must land on such ground (not start inside anything, which
    /// rules out a wall or a steep slope rising there). Returns the hit with the normal of
    /// that ground.
    fn edge_footing<W: CharacterWorld<V>>(
        &self,
        world: &mut W,
        shape: &Shape<V>,
        hit: &CastHit<V, W::Id>,
    ) -> Option<CastHit<V, W::Id>> {
        let (up, max) = (self.up, self.config.max_step_height);
        let rise = hit.normal.dot(up);
        if matches!(shape, Shape::Box(_))
            || up == V::ZERO
            || max <= 0.0
            || !max.is_finite()
            || rise <= 0.0
        {
            return None;
        }
        let foot = shape.center().dot(up) - reach(shape, up);
        if hit.point.dot(up) - foot > max || !world.can_stand_on(hit.id) {
            return None;
        }
        // Across the ground, into what was hit.
        let inward = unit(up * rise - hit.normal);
        if inward == V::ZERO {
            return None;
        }
        // A small length in the world's scale: the skin, or a hundredth of the step.
        let near = if self.config.skin > 0.0 {
            self.config.skin
        } else {
            0.01 * max
        };
        let mut top = None;
        for k in [1.0f32, 3.0] {
            let from = hit.point + inward * (k * near) + up * (2.0 * k * near);
            let point = Shape::Box(BoundingBox::from_min_max(from, from));
            let probe = world.cast(&point, -up * (4.0 * k * near))?;
            if probe.t <= 0.0 || !self.is_ground(world, &probe) {
                return None;
            }
            top.get_or_insert(probe.normal);
        }
        Some(CastHit {
            normal: top?,
            ..*hit
        })
    }
}

/// Step 3 of [`move_character`](super::move_character): the slide across retried from
/// higher up, landed on ground (or, for a rounded character, on the footing of the
/// step's edge). `None` when the step is not taken.
pub(super) fn step_up<V: Vector, W: CharacterWorld<V>>(
    world: &mut W,
    rules: &Rules<V>,
    shape: &Shape<V>,
    start: V,
    across: V,
    plain_progress: f32,
) -> Option<Step<V, W::Id>> {
    let (up, skin, max) = (rules.up, rules.config.skin, rules.config.max_step_height);
    if up == V::ZERO || max <= 0.0 || !max.is_finite() {
        return None;
    }
    // The ground it stands on: the step's height is measured from it. A character
    // resting a skin from an edge is up to `skin / cos` above it.
    let below = 2.0 * skin / rules.ground_cos.clamp(0.1, 1.0);
    let under = world.cast(&shape.translated(start), -up * below)?;
    let reach = max + skin;
    let rise = match world.cast(&shape.translated(start), up * reach) {
        Some(hit) => (hit.t * reach - skin).max(0.0),
        None => reach,
    };
    if rise <= skin {
        return None;
    }
    let raised = start + up * rise;
    let mut hits = SmallVec::new();
    let mut planes = SmallVec::new();
    let forward = slide(
        world,
        rules,
        shape,
        raised,
        across,
        Part::Across,
        &mut hits,
        &mut planes,
    );
    let forward_across = forward - up * forward.dot(up);
    if length(forward_across) <= plain_progress + 1e-3 * skin {
        return None;
    }
    let at = raised + forward;
    let drop = rise + skin;
    let landing = world.cast(&shape.translated(at), -up * drop)?;
    let ground = rules.footing(
        world,
        &shape.translated(at - up * (landing.t * drop)),
        &landing,
    )?;
    // Down to a skin from what it lands on, along the normal of the contact.
    let cos = landing.normal.dot(up).max(1e-3);
    let down = (landing.t * drop - skin / cos).max(0.0);
    let displacement = at - up * down - start;
    // Ground to ground, from the points of contact: the gap under the character (up
    // to a skin) does not count.
    let height = (ground.point - under.point).dot(up);
    if height > max * (1.0 + 1e-5) {
        return None;
    }
    hits.push(ground);
    planes.push(Plane {
        normal: ground.normal,
        ground: true,
    });
    Some(Step {
        displacement,
        height: height.max(0.0),
        hits,
        planes,
    })
}
