//! A character's motion: move-and-slide with the rules a walking character needs (steps,
//! snapping to the ground, slope limits, recovery from overlaps), and the one-way rule.
//!
//! [`move_character`] sees the world through a [`CharacterWorld`]: a blocking cast, the
//! way out of overlaps, and whether a collider can be stood on. The plugin's
//! `CharacterPlugin` implements it over the collision trees; a test or a tool can
//! implement it over a list of shapes.

use smallvec::SmallVec;

use crate::Vector;
use crate::geometry::slide::{clip, clip_to_planes, length, step_to_hit};
use crate::geometry::{CastHit, Shape};

mod one_way;
mod step;

pub use one_way::{one_way_blocks, one_way_push};
use step::step_up;

/// Settings of [`move_character`]. Lengths are in world units: scale them by the game's
/// length unit (a game in pixels multiplies each by its pixels per unit). The plugin's
/// controller replaces a setting out of its range by its default, with a warning
/// (`CharacterController::config`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "plugin", derive(bevy::reflect::Reflect))]
pub struct CharacterConfig<V: Vector> {
    /// The up direction (need not be unit length, must be finite). Zero for a top-down
    /// game: no ground, no steps, no snapping, every hit is a wall. No default: given to
    /// [`Self::new`].
    pub up: V,
    /// The gap kept between the character and what it touches, along the hit's normal:
    /// a finite number of at least 0. Default: `0.01`.
    pub skin: f32,
    /// The most casts per slide (each hit costs one), at least 1. Default: 4.
    pub max_iterations: usize,
    /// The steepest slope, in radians from `up` (0 to π/2), the character walks on.
    /// Steeper surfaces are walls it slides down and cannot climb. Default: 45°.
    pub max_slope: f32,
    /// The highest step climbed while walking on ground (finite, at least 0); 0 turns
    /// steps off. Default: `0.25`.
    pub max_step_height: f32,
    /// How far down a character that was on ground follows the ground (off a step, down a
    /// slope) rather than leaving it (finite, at least 0); 0 turns snapping off.
    /// Default: `0.25`.
    pub snap_distance: f32,
}

impl<V: Vector> CharacterConfig<V> {
    /// The settings with `up`: skin `0.01`, 4 casts per slide, slopes up to 45°, steps
    /// up to `0.25`, snapping `0.25` down.
    pub fn new(up: V) -> Self {
        Self {
            up,
            skin: 0.01,
            max_iterations: 4,
            max_slope: core::f32::consts::FRAC_PI_4,
            max_step_height: 0.25,
            snap_distance: 0.25,
        }
    }

    /// The settings of a top-down game: no up direction, so no ground, steps or
    /// snapping; the character slides along everything.
    pub fn top_down() -> Self {
        Self::new(V::ZERO)
    }
}

/// The world as [`move_character`] sees it.
pub trait CharacterWorld<V: Vector> {
    /// What identifies a collider (an `Entity` in the plugin).
    type Id: Copy;

    /// The first collider that blocks `shape` moved by `motion`, with the fraction of the
    /// motion done at the hit (the rules of
    /// [`cast_shape`](crate::geometry::cast_shape): only what the motion drives deeper
    /// blocks). It leaves out what must not block the character: sensors, one-way
    /// colliders passed from their open side ([`one_way_blocks`]), vetoed pairs.
    fn cast(&mut self, shape: &Shape<V>, motion: V) -> Option<CastHit<V, Self::Id>>;

    /// The displacement out of everything `shape` overlaps that blocks it (one-way
    /// colliders push only as [`one_way_push`] says); zero when none.
    fn push_out(&mut self, shape: &Shape<V>) -> V;

    /// Whether `shape` overlaps something that blocks it (what [`Self::push_out`] pushes
    /// out of) deeper than `tolerance`: after its pushes, the character is then squeezed
    /// ([`CharacterMove::crushed`]). The default asks [`Self::push_out`], which misses a
    /// shape pushed equally both ways along an axis; the plugin's world measures each
    /// collider.
    fn overlaps(&mut self, shape: &Shape<V>, tolerance: f32) -> bool {
        length(self.push_out(shape)) > tolerance
    }

    /// Whether the character may stand on, and step onto, `id`. The plugin says no for
    /// other characters, so that characters do not climb on top of each other.
    fn can_stand_on(&mut self, id: Self::Id) -> bool {
        let _ = id;
        true
    }
}

/// What [`move_character`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct CharacterMove<V: Vector, Id> {
    /// The displacement done, recovery, step and snap included (add it to the position).
    pub displacement: V,
    /// The part of `displacement` that moved the character out of overlaps it started in.
    pub recovered: V,
    /// Whether it ends standing on ground: a surface within `max_slope` of `up` that it
    /// may stand on, under it and at most twice the skin from it where the move ends.
    /// A rounded character (capsule, ball) also stands on an edge no more than
    /// `max_step_height` above its lowest point with such ground on top of it (the edge
    /// footing of a step it climbs). Never while moving up.
    pub grounded: bool,
    /// The ground it stands on (the hit that found it), when grounded. On an edge, the
    /// hit's normal is that of the ground on top of the edge.
    pub ground: Option<CastHit<V, Id>>,
    /// Every hit that shaped the motion, in order (walls, ceilings, ground, the step's
    /// landing).
    pub hits: SmallVec<[CastHit<V, Id>; 4]>,
    /// The height of the step it climbed, ground to ground (0 when it took none).
    pub step: f32,
    /// How far it moved down to keep to the ground (0 when it did not snap).
    pub snap: f32,
    /// It started inside colliders and its pushes out did not get it out of all of them:
    /// it is squeezed between colliders that push it opposite ways (a rider between a
    /// rising platform and a ceiling). It is then not moved at all (`displacement` is
    /// zero, no hit, not grounded), so that no push takes it into or through a collider.
    pub crushed: bool,
    /// The planes the motion was clipped against, and whether each is ground: walls
    /// count as vertical, so that a velocity clipped by them gains no upward part on a
    /// steep slope.
    planes: SmallVec<[Plane<V>; 8]>,
    /// Unit up (zero for a top-down game).
    up: V,
}

/// A plane a move was clipped against.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Plane<V: Vector> {
    normal: V,
    /// Ground: it ends a fall, and leaves the velocity across it alone.
    ground: bool,
}

impl<V: Vector, Id> CharacterMove<V, Id> {
    fn new() -> Self {
        Self {
            displacement: V::ZERO,
            recovered: V::ZERO,
            grounded: false,
            ground: None,
            hits: SmallVec::new(),
            step: 0.0,
            snap: 0.0,
            crushed: false,
            planes: SmallVec::new(),
            up: V::ZERO,
        }
    }

    /// `velocity` less its parts into what the character hit: landing on ground ends
    /// the fall (and nothing else: walking up a slope keeps the velocity across it, so a
    /// climbing character is not sent up), a ceiling ends the rise, a wall the run into
    /// it. A steep slope acts as a wall here too, so the clipped velocity does not climb
    /// it.
    pub fn clip_velocity(&self, mut velocity: V) -> V {
        for plane in &self.planes {
            if plane.ground {
                let along = velocity.dot(self.up);
                if along < 0.0 {
                    velocity -= self.up * along;
                }
            } else {
                velocity = clip(velocity, plane.normal);
            }
        }
        velocity
    }
}

/// A unit vector along `v`, or zero when `v` is zero or not finite.
fn unit<V: Vector>(v: V) -> V {
    let len = length(v);
    if len > 0.0 && len.is_finite() {
        v / len
    } else {
        V::ZERO
    }
}

/// The rules of one call, resolved once.
struct Rules<V: Vector> {
    config: CharacterConfig<V>,
    /// Unit up, or zero for a top-down game.
    up: V,
    /// `cos(max_slope)`: a normal at least this far along `up` is ground.
    ground_cos: f32,
}

impl<V: Vector> Rules<V> {
    /// Whether `hit` is ground the character may stand on.
    fn is_ground<W: CharacterWorld<V>>(&self, world: &mut W, hit: &CastHit<V, W::Id>) -> bool {
        self.up != V::ZERO
            && hit.normal.dot(self.up) >= self.ground_cos
            && world.can_stand_on(hit.id)
    }

    /// The plane a hit clips the motion against: its surface, except that a surface that
    /// faces up but is not ground is a vertical wall for a motion across the ground, so
    /// that the character cannot walk or jump up it.
    fn plane(&self, normal: V, ground: bool, across: bool) -> V {
        if across && !ground && self.up != V::ZERO && normal.dot(self.up) > 0.0 {
            let wall = unit(normal - self.up * normal.dot(self.up));
            if wall != V::ZERO {
                return wall;
            }
        }
        normal
    }
}

/// Which part of the motion a slide does.
#[derive(Clone, Copy, PartialEq)]
enum Part {
    /// Across the ground (the motion less its component along `up`).
    Across,
    /// Along `up` (a fall or a jump).
    Along,
}

/// Moves `shape` by `motion` through `world` as a walking character: sliding along what
/// it hits, climbing steps, keeping to the ground, holding on slopes it can walk and
/// sliding down those it cannot. `grounded` says whether it stood on ground at its last
/// move (steps and snapping apply only then). Returns the displacement done and what was
/// met; [`CharacterMove::clip_velocity`] gives the velocity to keep.
///
/// A game applies gravity in `motion` (and zeroes it through `clip_velocity` on
/// landing), as it would for [`move_and_slide`](crate::geometry::move_and_slide).
/// Invalid input (an invalid shape, a non-finite motion, a negative or non-finite skin)
/// does not move the character, nor does being squeezed between colliders
/// ([`CharacterMove::crushed`]).
//
// The steps, in order:
// 1. Recovery: up to four pushes out of what the shape overlaps (a spawn inside a wall,
//    a platform that rose into the feet); each push is the least that separates, so the
//    character is moved out, not launched. When the pushes leave it inside something
//    (more than half a skin deep), it is crushed: the call ends there, without moving it.
// 2. Across: the motion less its component along `up` slides first. Ground slopes clip
//    it into a climb; a surface that is not ground clips as a vertical wall.
// 3. Step: when that slide met a wall that is not ground and lost motion, and the
//    character stood on ground, it is retried from `max_step_height` (plus the skin)
//    higher (less under a ceiling), then cast down to the ground. Taken only if it lands
//    on ground it may stand on, no more than `max_step_height` above the ground it stood
//    on (measured between the two contact points, so the gap under the character does
//    not count), and got further across than the plain slide. A rounded character
//    (capsule, ball) meets the step's edge rather than its top, with a slanted normal
//    too steep to stand on: the edge footing rule (`step.rs`) makes that edge ground
//    when it is at most `max_step_height` above the character's foot and two short
//    probes down just past it find walkable ground, so that the step lands on the edge
//    and the next moves step on over it.
// 4. Along: the component along `up` slides. Moving down onto ground (or edge footing)
//    stops there (no slide down a walkable slope); onto a steep slope it slides down
//    along it.
// 5. Snap: a character that stood on ground and does not move up is cast
//    `snap_distance` down from where the slides left it and moved onto ground (or edge
//    footing) found there, to a skin above it.
// 6. Probe: not moving up and not on ground before, a cast down says whether ground is
//    under it within twice the skin (without moving), so a character resting a skin
//    above a floor reads as grounded at every call. Whether a move ends grounded is
//    decided here, from where it ends, not from what the slides met on the way (a ball
//    that climbs a box's edge meets ground and then leaves it); a fall stopped by
//    ground (step 4) ends on it, with no cast.
pub fn move_character<V: Vector, W: CharacterWorld<V>>(
    shape: &Shape<V>,
    motion: V,
    grounded: bool,
    config: &CharacterConfig<V>,
    world: &mut W,
) -> CharacterMove<V, W::Id> {
    let mut out = CharacterMove::new();
    let skin = config.skin;
    if !shape.is_valid() || !motion.is_finite() || !skin.is_finite() || skin < 0.0 {
        return out;
    }
    let rules = Rules {
        config: *config,
        up: unit(config.up),
        ground_cos: crate::geometry::cos(config.max_slope),
    };
    let up = rules.up;
    out.up = up;

    // 1. Recovery.
    let mut pos = V::ZERO;
    let mut pushed = false;
    for _ in 0..4 {
        let push = world.push_out(&shape.translated(pos));
        if push == V::ZERO || !push.is_finite() {
            break;
        }
        pos += push;
        pushed = true;
    }
    // Still inside after the pushes: squeezed. Left where it is, not pushed into
    // whatever pushes back. Rounding leaves far less than half a skin.
    if pushed && world.overlaps(&shape.translated(pos), (0.5 * skin).max(1e-4)) {
        out.crushed = true;
        return out;
    }
    out.recovered = pos;

    // 2. Across.
    let along = up * motion.dot(up);
    let across = motion - along;
    let start = pos;
    let mut hits = SmallVec::new();
    let mut planes = SmallVec::new();
    let done = slide(
        world,
        &rules,
        shape,
        start,
        across,
        Part::Across,
        &mut hits,
        &mut planes,
    );
    let blocked_by_wall = hits.iter().any(|h| !rules.is_ground(world, h));
    let progress = length(done);
    let wanted = length(across);

    // 3. Step.
    let step = (grounded && blocked_by_wall && progress < wanted * (1.0 - 1e-4))
        .then(|| step_up(world, &rules, shape, start, across, progress))
        .flatten();
    if let Some(step) = step {
        pos = start + step.displacement;
        out.step = step.height;
        out.hits.extend(step.hits);
        out.planes.extend(step.planes);
    } else {
        pos = start + done;
        out.hits.extend(hits);
        out.planes.extend(planes);
    }

    // 4. Along.
    let mut hits = SmallVec::new();
    let mut planes = SmallVec::new();
    pos += slide(
        world,
        &rules,
        shape,
        pos,
        along,
        Part::Along,
        &mut hits,
        &mut planes,
    );
    // Moving up leaves the ground, whatever the walk across met.
    let rising = up != V::ZERO && motion.dot(up) > 0.0;
    // A fall that ended on ground: the slide stopped it where it ends, a skin above.
    let landed = hits
        .last()
        .copied()
        .filter(|hit| along.dot(up) < 0.0 && rules.is_ground(world, hit));
    out.hits.extend(hits);
    out.planes.extend(planes);

    // 5. Snap, 6. probe: whatever the slides met on the way, the ground is what lies
    // under the place where the move ends.
    if let Some(hit) = landed {
        out.grounded = true;
        out.ground = Some(hit);
    } else if up != V::ZERO && !rising {
        let near = 2.0 * skin;
        // A character resting a skin from a walkable slope is `skin / cos` above it:
        // the probe reaches that far on the steepest walkable slope.
        let probe = near / rules.ground_cos.clamp(0.1, 1.0);
        let reach = if grounded {
            config.snap_distance.max(probe)
        } else {
            probe
        };
        if let Some(contact) = world.cast(&shape.translated(pos), -up * reach)
            && let Some(hit) = rules.footing(
                world,
                &shape.translated(pos - up * (contact.t * reach)),
                &contact,
            )
        {
            // The gap is measured along the contact's normal (an edge's slants).
            let cos = contact.normal.dot(up).max(1e-3);
            let drop = contact.t * reach;
            let on_ground = if grounded {
                // Down to a skin above the ground along its normal.
                let down = (drop - skin / cos).max(0.0);
                pos -= up * down;
                out.snap = down;
                true
            } else {
                // Within twice the skin: straight down, or along the normal of a slope.
                drop <= near
                    || world
                        .cast(&shape.translated(pos), -contact.normal * near)
                        .is_some_and(|h| {
                            let at = pos - contact.normal * (h.t * near);
                            rules.footing(world, &shape.translated(at), &h).is_some()
                        })
            };
            if on_ground {
                out.grounded = true;
                out.ground = Some(hit);
                out.planes.push(Plane {
                    normal: hit.normal,
                    ground: true,
                });
            }
        }
    }
    out.displacement = pos;
    out
}

/// Slides `shape`, placed at `from`, by `motion` (one part of the character's motion):
/// the loop of [`move_and_slide`](crate::geometry::move_and_slide) with the character's
/// planes ([`Rules::plane`]) and, for a motion down, a stop on ground. Returns the
/// displacement done; pushes the hits and the planes clipped against.
#[allow(clippy::too_many_arguments)]
fn slide<V: Vector, W: CharacterWorld<V>>(
    world: &mut W,
    rules: &Rules<V>,
    shape: &Shape<V>,
    from: V,
    motion: V,
    part: Part,
    hits: &mut SmallVec<[CastHit<V, W::Id>; 4]>,
    planes: &mut SmallVec<[Plane<V>; 8]>,
) -> V {
    let skin = rules.config.skin;
    let up = rules.up;
    let min_len = length(motion) * 1e-6;
    let mut done = V::ZERO;
    let mut remaining = motion;
    // This slide's planes, for the creases between them.
    let mut normals: SmallVec<[V; 4]> = SmallVec::new();
    for _ in 0..rules.config.max_iterations {
        let len = length(remaining);
        if len <= min_len || len == 0.0 || !len.is_finite() {
            break;
        }
        let Some(hit) = world.cast(&shape.translated(from + done), remaining) else {
            done += remaining;
            break;
        };
        let dir = remaining / len;
        let step = step_to_hit(hit.t, hit.normal, dir, len, skin);
        done += dir * step;
        let rest = dir * (len - step);
        // A fall lands on footing too: a rounded character on a step's edge.
        let footing = (part == Part::Along && rest.dot(up) < 0.0)
            .then(|| rules.footing(world, &shape.translated(from + done), &hit))
            .flatten();
        let (hit, ground) = match footing {
            Some(footing) => (footing, true),
            None => (hit, rules.is_ground(world, &hit)),
        };
        let plane = rules.plane(hit.normal, ground, part == Part::Across);
        remaining = if footing.is_some() {
            // Landed: no slide down ground.
            V::ZERO
        } else {
            clip_to_planes(rest, plane, &normals)
        };
        normals.push(plane);
        planes.push(Plane {
            normal: plane,
            ground,
        });
        hits.push(hit);
    }
    done
}

/// How far `shape` reaches from its center along the unit vector `n`.
fn reach<V: Vector>(shape: &Shape<V>, n: V) -> f32 {
    match shape {
        Shape::Box(b) => ((b.max - b.min) * 0.5).dot(n.abs()),
        Shape::Ball(b) => b.radius,
        Shape::Rounded(r) => r.half_extents.dot(n.abs()) + r.radius,
    }
}
