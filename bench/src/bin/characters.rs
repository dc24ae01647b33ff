//! The character controller's cost per tick: 1,000 characters walking over a level of
//! 100,000 `Static` tiles, this crate's `CharacterPlugin` against avian 0.7's
//! `MoveAndSlide::move_and_slide` on kinematic bodies, in one process, on the same level,
//! in 2D (avian2d) or 3D (avian3d).
//!
//! `cargo run --release -p bevy_aabb_tree_bench --features ecs --bin characters -- [2d|3d]
//! [box|capsule]` (default 2d, box).
//!
//! The level (unit tiles, half extents 0.5, exactly 100,000 of them, spawned before the
//! first tick):
//! - 2D: a platformer ground about 21,000 columns long, each column a stack of 3 – 6
//!   tiles whose height changes by one tile (a step up or down, too high to walk up: the
//!   controller's `max_step_height` is 0.25) every 6 – 14 columns, with a floating
//!   platform (3 – 6 tiles, two tiles above the ground, so a jump meets its underside)
//!   over half of those segments, and a wall at each end.
//! - 3D: a 300 × 300 floor, 3 × 3 blocks raised one tile (steps) spread over it at random,
//!   and a rim four tiles high around it.
//!
//! The characters: boxes (half extents 0.3 × 0.45 (× 0.3)), or with `capsule` capsules
//! standing along y with the same bounding box (radius 0.3, a segment of half length 0.15:
//! our `Capsule`, avian's `Collider::capsule(0.3, 0.3)`), spawned a little above the
//! ground, spread evenly over the level (2D: along it; 3D: a 32 × 32 grid). A game system
//! in `FixedUpdate` (the same logic on both sides, `steer`) sets each character's
//! velocity: 4 units/s along its heading (x in 2D, a direction in the xz plane per
//! character in 3D), the direction reversed every 3 s (phases staggered per character),
//! gravity 30 units/s² added at each tick, and a jump (10 units/s up) every 97 ticks
//! (staggered) when the character is grounded. Both sides keep the velocity the move
//! leaves (landing ends a fall, a ceiling a rise).
//!
//! - Ours: `AabbTreePlugin` and `CharacterPlugin` with their defaults (in
//!   `FixedPostUpdate`); tiles are `Aabb` + `Static`, a character is `Transform`, `Aabb`
//!   (or `Capsule`) and `CharacterController::new(Y)` (skin 0.01, 45° slopes, steps up to 0.25, snapping
//!   0.25); the game sets `CharacterController::velocity` and reads
//!   `CharacterState::grounded`. Timed: from a system ordered after
//!   `CollisionSystems::Events` and before `CharacterSystems::Move` to one after
//!   `CharacterSystems::Move`, i.e. the controller's system alone.
//! - avian: `PhysicsPlugins::default()` (what avian's `kinematic_character_2d`/`3d`
//!   examples add); tiles are `RigidBody::Static` with a box `Collider` (as the examples'
//!   level; `MoveAndSlide` only sees colliders that belong to a body), a character is
//!   `RigidBody::Kinematic`, `CustomPositionIntegration`, `SpeculativeMargin(0.0)` (what
//!   the examples' `CharacterController` requires), a box (or capsule) `Collider` and its
//!   `LinearVelocity`. A system in `FixedUpdate`, after the game's, calls
//!   `MoveAndSlide::move_and_slide` for each character with `MoveAndSlideConfig::default()`
//!   (skin 0.01, 4 iterations) and `SpatialQueryFilter::from_excluded_entities([entity])`,
//!   writes the position to `Transform`, and, as the examples do, keeps the projected
//!   velocity's part along up when a hit was ground or ceiling. Grounded: a hit of the move
//!   whose normal is within 45° of up or, when the move's hits found no ground and the
//!   character does not move up, the examples' ground check (their `update_grounded`): a
//!   `SpatialQuery::cast_shape` of the collider down, here twice the skin (0.02) long, as
//!   our controller's own probe. Without that cast a character resting on the ground is
//!   grounded only every other tick (its fall of a tick is shorter than the skin) and jumps
//!   less often than ours. Timed: an `Instant` around that loop; the time of the ground
//!   casts alone is also taken, and the table shows the loop less those casts
//!   (`move_and_slide` and the bookkeeping around it) too.
//!
//! Both apps: `MinimalPlugins` + `TransformPlugin`, fixed 60 Hz, one fixed tick per
//! `app.update()`. Ticks interleave and the order alternates (ours first on even ticks,
//! avian first on odd ones): 60 warm-up ticks, then 600 measured. Printed per side: the
//! median µs of the controller per tick and per character (and avian's without its ground
//! casts), the median µs of the whole `app.update()`, the ratio ours/avian of each, and what the characters did: grounded
//! characters per tick (mean, and at the last tick), the mean horizontal speed they
//! reached (4 would be unobstructed) and the characters below the level's bottom (fallen
//! through). The process exits with status 1 when a character of either side fell
//! through the level.

#[path = "../dim.rs"]
mod dim;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::Vector;
use bevy_aabb_tree::prelude::{
    Aabb, AabbTreePlugin, Capsule, CharacterController, CharacterPlugin, CharacterState,
    CharacterSystems, CollisionSystems, Static,
};
use dim::Dim;

const WARMUP: usize = 60;
const TICKS: usize = 600;
const CHARACTERS: usize = 1000;
const TILES: usize = 100_000;
const DT: f32 = 1.0 / 60.0;

/// Walking speed, units/s.
const SPEED: f32 = 4.0;
/// Gravity, units/s².
const GRAVITY: f32 = 30.0;
/// Jump velocity, units/s (a rise of 1.67 units).
const JUMP: f32 = 10.0;
/// Ticks between reversals of the walking direction (3 s).
const TURN_TICKS: u64 = 180;
/// Ticks between jumps (when grounded).
const JUMP_EVERY: u64 = 97;
/// The steepest ground, as both sides count it.
const MAX_SLOPE: f32 = std::f32::consts::FRAC_PI_4;
/// The characters' half extents (`z` only in 3D).
const HALF: Vec3 = Vec3::new(0.3, 0.45, 0.3);
/// The capsule characters' radius: `HALF.x`.
const CAPSULE_RADIUS: f32 = 0.3;
/// The capsule characters' segment's half length: with the radius, `HALF.y`.
const CAPSULE_HALF_LENGTH: f32 = 0.15;

/// The characters' shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CharacterShape {
    Box,
    Capsule,
}

/// A character whose center is below this fell through the level (the tiles' bottom is
/// at -0.5).
const FALLEN_Y: f32 = -1.0;

/// A character: its index and heading (unit, in the xz plane; `x` in 2D).
#[derive(Component, Clone, Copy)]
struct Walker {
    index: u32,
    heading: Vec3,
}

/// The fixed ticks run so far (the game's clock).
#[derive(Resource, Default)]
struct Tick(u64);

/// avian's character's ground, as its move found it.
#[derive(Component, Default, Clone, Copy)]
struct AvianGrounded(bool);

/// Microseconds of the controller at the last tick.
#[derive(Resource, Default)]
struct Probe {
    begin: Option<Instant>,
    us: f64,
    /// avian only: the part of `us` spent in the ground check's casts.
    ground_cast_us: f64,
}

fn probe_begin(mut probe: ResMut<Probe>) {
    probe.begin = Some(Instant::now());
}

fn probe_end(mut probe: ResMut<Probe>) {
    if let Some(b) = probe.begin.take() {
        probe.us = b.elapsed().as_secs_f64() * 1e6;
    }
}

/// The game's logic for one character, the same on both sides: walk along the heading
/// (reversed every `TURN_TICKS`), fall, jump now and then from the ground.
fn steer(v: &mut Vec3, walker: &Walker, tick: u64, grounded: bool, dt: f32) {
    let i = u64::from(walker.index);
    let phase = (tick + i * 37) / TURN_TICKS;
    let sign = if phase.is_multiple_of(2) { 1.0 } else { -1.0 };
    let walk = walker.heading * (SPEED * sign);
    v.x = walk.x;
    v.z = walk.z;
    v.y -= GRAVITY * dt;
    if grounded && (tick + i * 13).is_multiple_of(JUMP_EVERY) {
        v.y = JUMP;
    }
}

/// Our game system: sets each controller's velocity.
fn drive_ours<V: Dim>(
    mut tick: ResMut<Tick>,
    time: Res<Time>,
    mut q: Query<(&Walker, &mut CharacterController<V>, &CharacterState<V>)>,
) {
    tick.0 += 1;
    let dt = time.delta_secs();
    for (walker, mut controller, state) in &mut q {
        let mut v = controller.velocity.extend_to_3d();
        steer(&mut v, walker, tick.0, state.grounded, dt);
        controller.velocity = V::truncate_from_3d(v);
    }
}

/// The level: tile centers and the characters' spawns (center, heading).
struct Level {
    tiles: Vec<Vec3>,
    spawns: Vec<(Vec3, Vec3)>,
    summary: String,
}

/// A deterministic generator of numbers in [0, 1).
fn lcg(mut seed: u32) -> impl FnMut() -> f32 {
    move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / 16_777_216.0
    }
}

/// Where a character stands on a column of `height` tiles: a little above its top.
fn spawn_y(height: usize) -> f32 {
    height as f32 - 0.5 + HALF.y + 0.3
}

/// The 2D level (see the module docs): `tiles` tiles in all.
fn level_2d(tiles: usize, characters: usize) -> Level {
    const WALL: usize = 12;
    let mut r = lcg(0x2D2D_5EED);
    let mut out = Vec::with_capacity(tiles);
    let mut heights = Vec::new();
    let column = |out: &mut Vec<Vec3>, heights: &mut Vec<usize>, h: usize| {
        let x = heights.len() as f32;
        out.extend((0..h).map(|y| Vec3::new(x, y as f32, 0.0)));
        heights.push(h);
    };
    column(&mut out, &mut heights, WALL);
    let mut h = 4usize;
    let mut platforms = 0;
    // A column takes at most 7 tiles (6 and a platform tile); the last wall takes the rest.
    'level: loop {
        let len = 6 + (r() * 9.0) as usize;
        h = (h as i32 + (r() * 3.0) as i32 - 1).clamp(3, 6) as usize;
        let platform = r() < 0.5;
        let plen = 3 + (r() * 4.0) as usize;
        if platform {
            platforms += 1;
        }
        for k in 0..len {
            if out.len() + 7 + WALL > tiles {
                break 'level;
            }
            let x = heights.len() as f32;
            column(&mut out, &mut heights, h);
            if platform && (1..1 + plen).contains(&k) {
                out.push(Vec3::new(x, (h + 2) as f32, 0.0));
            }
        }
    }
    let last = tiles - out.len();
    column(&mut out, &mut heights, last);
    let width = heights.len();
    let spawns = (0..characters)
        .map(|i| {
            let x = 2 + i * (width - 4) / characters;
            (Vec3::new(x as f32, spawn_y(heights[x]), 0.0), Vec3::X)
        })
        .collect();
    Level {
        summary: format!(
            "{} tiles: {width} columns of 3 - 6 tiles, {platforms} platforms, walls of \
             {WALL} and {last} tiles at the ends",
            out.len()
        ),
        tiles: out,
        spawns,
    }
}

/// The 3D level (see the module docs): `tiles` tiles in all.
fn level_3d(tiles: usize, characters: usize) -> Level {
    const SIDE: usize = 300;
    const RIM: usize = 4;
    let mut r = lcg(0x3D3D_5EED);
    let mut heights = vec![1usize; SIDE * SIDE];
    let at = |x: usize, z: usize| x * SIDE + z;
    for x in 0..SIDE {
        for z in 0..SIDE {
            if x == 0 || z == 0 || x == SIDE - 1 || z == SIDE - 1 {
                heights[at(x, z)] = RIM;
            }
        }
    }
    let mut count: usize = heights.iter().sum();
    // Steps: 3 × 3 blocks of the interior in a random order, raised until the count is met.
    let mut blocks: Vec<(usize, usize)> = (0..(SIDE - 2) / 3)
        .flat_map(|bx| (0..(SIDE - 2) / 3).map(move |bz| (1 + 3 * bx, 1 + 3 * bz)))
        .collect();
    for i in (1..blocks.len()).rev() {
        let j = ((r() * (i + 1) as f32) as usize).min(i);
        blocks.swap(i, j);
    }
    let mut raised = 0;
    'steps: for &(bx, bz) in &blocks {
        for x in bx..bx + 3 {
            for z in bz..bz + 3 {
                if count >= tiles {
                    break 'steps;
                }
                heights[at(x, z)] += 1;
                count += 1;
            }
        }
        raised += 1;
    }
    let mut out = Vec::with_capacity(count);
    for x in 0..SIDE {
        for z in 0..SIDE {
            out.extend((0..heights[at(x, z)]).map(|y| Vec3::new(x as f32, y as f32, z as f32)));
        }
    }
    let per_side = (characters as f32).sqrt().ceil() as usize;
    let spawns = (0..characters)
        .map(|i| {
            let (gx, gz) = (i % per_side, i / per_side);
            let x = 5 + gx * (SIDE - 11) / (per_side - 1);
            let z = 5 + gz * (SIDE - 11) / (per_side - 1);
            let angle = i as f32 * 2.399_963;
            (
                Vec3::new(x as f32, spawn_y(heights[at(x, z)]), z as f32),
                Vec3::new(angle.cos(), 0.0, angle.sin()),
            )
        })
        .collect();
    Level {
        summary: format!(
            "{} tiles: a {SIDE} x {SIDE} floor, {raised} 3 x 3 steps one tile high, a rim \
             {RIM} tiles high",
            out.len()
        ),
        tiles: out,
        spawns,
    }
}

/// The avian app of a dimension: avian2d or avian3d.
trait Peer {
    /// The peer's name in the printed table.
    const NAME: &'static str;
    /// Adds avian, the game's system and the timed move-and-slide system.
    fn add_physics(app: &mut App);
    /// Spawns the level's tiles and the characters, of `shape`.
    fn spawn(world: &mut World, level: &Level, shape: CharacterShape);
}

/// Implements [`Peer`] for one avian crate: `$collider` makes a box of half extents `$h`
/// (a `Vec3`), `$rot` the rotation `move_and_slide` takes from the transform `$t`.
macro_rules! avian_peer {
    ($peer:ident, $avian:ident, $name:literal, |$h:ident| $collider:expr, |$t:ident| $rot:expr) => {
        /// avian, set up as its kinematic character examples are.
        struct $peer;

        impl Peer for $peer {
            const NAME: &'static str = $name;

            fn add_physics(app: &mut App) {
                use $avian::math::{Dir as AvianDir, Vector as AvianVector};
                use $avian::prelude::{
                    Collider, LinearVelocity, MoveAndSlide, MoveAndSlideConfig,
                    MoveAndSlideHitResponse, MoveAndSlideOutput, PhysicsPlugins, ShapeCastConfig,
                    SpatialQueryFilter,
                };

                /// The game's system: sets each character's `LinearVelocity`.
                fn drive(
                    mut tick: ResMut<Tick>,
                    time: Res<Time>,
                    mut q: Query<(&Walker, &mut LinearVelocity, &AvianGrounded)>,
                ) {
                    tick.0 += 1;
                    let dt = time.delta_secs();
                    for (walker, mut velocity, grounded) in &mut q {
                        let mut v = velocity.0.extend_to_3d();
                        steer(&mut v, walker, tick.0, grounded.0, dt);
                        velocity.0 = AvianVector::truncate_from_3d(v);
                    }
                }

                /// Moves each character with `move_and_slide` (timed).
                fn move_characters(
                    mut probe: ResMut<Probe>,
                    time: Res<Time>,
                    move_and_slide: MoveAndSlide,
                    mut q: Query<(
                        Entity,
                        &mut Transform,
                        &mut LinearVelocity,
                        &mut AvianGrounded,
                        &Collider,
                    )>,
                ) {
                    let begin = Instant::now();
                    let mut ground_cast = Duration::ZERO;
                    let config = MoveAndSlideConfig::default();
                    let up = AvianVector::Y;
                    let ground_cos = MAX_SLOPE.cos();
                    let probe_config = ShapeCastConfig::from_max_distance(2.0 * config.skin_width);
                    for (entity, mut transform, mut velocity, mut grounded, collider) in &mut q {
                        let mut ground = false;
                        let mut ground_or_ceiling = false;
                        let rotation = {
                            let $t = &*transform;
                            $rot
                        };
                        let filter = SpatialQueryFilter::from_excluded_entities([entity]);
                        let MoveAndSlideOutput {
                            position,
                            projected_velocity,
                        } = move_and_slide.move_and_slide(
                            collider,
                            AvianVector::truncate_from_3d(transform.translation),
                            rotation,
                            velocity.0,
                            time.delta(),
                            &config,
                            &filter,
                            |hit| {
                                let n = hit.normal.dot(up);
                                if n >= ground_cos {
                                    ground = true;
                                    ground_or_ceiling = true;
                                } else if n <= -ground_cos {
                                    ground_or_ceiling = true;
                                }
                                MoveAndSlideHitResponse::Accept
                            },
                        );
                        transform.translation = position.extend_to_3d();
                        if ground_or_ceiling {
                            let along = velocity.0.dot(up);
                            velocity.0 += (projected_velocity.dot(up) - along) * up;
                        }
                        // The ground check of avian's examples (`update_grounded`), here
                        // only when the move's hits found no ground: a short cast down.
                        if !ground && velocity.0.dot(up) <= 0.0 {
                            let cast = Instant::now();
                            ground = move_and_slide
                                .spatial_query
                                .cast_shape(
                                    collider,
                                    position,
                                    rotation,
                                    AvianDir::NEG_Y,
                                    &probe_config,
                                    &filter,
                                )
                                .is_some_and(|hit| hit.normal1.dot(up) >= ground_cos);
                            ground_cast += cast.elapsed();
                        }
                        grounded.0 = ground;
                    }
                    probe.us = begin.elapsed().as_secs_f64() * 1e6;
                    probe.ground_cast_us = ground_cast.as_secs_f64() * 1e6;
                }

                app.add_plugins(PhysicsPlugins::default())
                    .add_systems(FixedUpdate, (drive, move_characters).chain());
            }

            fn spawn(world: &mut World, level: &Level, shape: CharacterShape) {
                use $avian::prelude::{
                    Collider, CustomPositionIntegration, LinearVelocity, RigidBody,
                    SpeculativeMargin,
                };
                world.spawn_batch(level.tiles.iter().map(|&c| {
                    let $h = Vec3::splat(0.5);
                    (Transform::from_translation(c), RigidBody::Static, $collider)
                }));
                let character = match shape {
                    CharacterShape::Box => {
                        let $h = HALF;
                        $collider
                    }
                    CharacterShape::Capsule => {
                        Collider::capsule(CAPSULE_RADIUS, 2.0 * CAPSULE_HALF_LENGTH)
                    }
                };
                world.spawn_batch(level.spawns.iter().enumerate().map(|(i, &(c, heading))| {
                    (
                        Transform::from_translation(c),
                        RigidBody::Kinematic,
                        CustomPositionIntegration,
                        SpeculativeMargin(0.0),
                        character.clone(),
                        LinearVelocity::default(),
                        AvianGrounded(false),
                        Walker {
                            index: i as u32,
                            heading,
                        },
                    )
                }));
            }
        }
    };
}

avian_peer!(
    Avian2d,
    avian2d,
    "avian2d 0.7",
    |h| Collider::rectangle(2.0 * h.x, 2.0 * h.y),
    |t| avian2d::prelude::Rotation::from(t.rotation).as_radians()
);
avian_peer!(
    Avian3d,
    avian3d,
    "avian3d 0.7",
    |h| Collider::cuboid(2.0 * h.x, 2.0 * h.y, 2.0 * h.z),
    |t| t.rotation
);

/// A headless app ticking the fixed schedule once per update at 60 Hz.
fn base_app() -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(DT)))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
        .init_resource::<Tick>()
        .init_resource::<Probe>();
    app
}

/// Runs the plugins' `finish` and `cleanup` (which `App::run` does and a bare `update` loop
/// does not; avian registers resources in `finish`).
fn ready(mut app: App) -> App {
    app.finish();
    app.cleanup();
    app
}

fn ours_app<V: Dim>(level: &Level, shape: CharacterShape) -> App {
    let mut app = base_app();
    app.add_plugins((
        AabbTreePlugin::<V>::default(),
        CharacterPlugin::<V>::default(),
    ))
    .add_systems(FixedUpdate, drive_ours::<V>)
    .add_systems(
        FixedPostUpdate,
        (
            probe_begin
                .after(CollisionSystems::Events)
                .before(CharacterSystems::Move),
            probe_end.after(CharacterSystems::Move),
        ),
    );
    let world = app.world_mut();
    world.spawn_batch(level.tiles.iter().map(|&c| {
        (
            Transform::from_translation(c),
            Aabb::new(V::truncate_from_3d(Vec3::splat(0.5))),
            Static,
        )
    }));
    let character = |(i, &(c, heading)): (usize, &(Vec3, Vec3))| {
        (
            Transform::from_translation(c),
            CharacterController::new(V::truncate_from_3d(Vec3::Y)),
            Walker {
                index: i as u32,
                heading,
            },
        )
    };
    let spawns = level.spawns.iter().enumerate();
    match shape {
        CharacterShape::Box => {
            let half = V::truncate_from_3d(HALF);
            world.spawn_batch(spawns.map(|s| (character(s), Aabb::new(half))));
        }
        CharacterShape::Capsule => {
            let capsule = Capsule::<V>::new(CAPSULE_HALF_LENGTH, CAPSULE_RADIUS);
            world.spawn_batch(spawns.map(|s| (character(s), capsule)));
        }
    }
    ready(app)
}

fn avian_app<P: Peer>(level: &Level, shape: CharacterShape) -> App {
    let mut app = base_app();
    P::add_physics(&mut app);
    P::spawn(app.world_mut(), level, shape);
    ready(app)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// What one side's characters did over the measured ticks.
#[derive(Default)]
struct Record {
    /// µs of `app.update()`, one per tick.
    update: Vec<f64>,
    /// µs of the controller, one per tick.
    controller: Vec<f64>,
    /// µs of the controller less the ground check's casts (avian), one per tick.
    moves: Vec<f64>,
    /// Grounded characters, one per tick.
    grounded: Vec<usize>,
    /// Horizontal distance walked, all characters, all measured ticks.
    walked: f64,
    /// The characters' positions at the last tick, by index.
    last: Vec<Vec3>,
}

impl Record {
    /// One measured tick of `app`; `grounded` reads a character's ground.
    fn tick<G: Component>(&mut self, app: &mut App, grounded: fn(&G) -> bool) {
        let t = Instant::now();
        app.update();
        self.update.push(t.elapsed().as_secs_f64() * 1e6);
        let probe = app.world().resource::<Probe>();
        self.controller.push(probe.us);
        self.moves.push(probe.us - probe.ground_cast_us);
        self.observe(app.world_mut(), grounded);
    }

    /// Counts grounded characters and the distance walked since the last observation.
    fn observe<G: Component>(&mut self, world: &mut World, grounded: fn(&G) -> bool) {
        let mut q = world.query::<(&Walker, &Transform, &G)>();
        if self.last.is_empty() {
            self.last = vec![Vec3::NAN; CHARACTERS];
        }
        let mut count = 0;
        for (walker, transform, g) in q.iter(world) {
            let p = transform.translation;
            let prev = &mut self.last[walker.index as usize];
            if prev.is_finite() {
                self.walked += f64::from(Vec2::new(p.x - prev.x, p.z - prev.z).length());
            }
            *prev = p;
            count += usize::from(grounded(g));
        }
        self.grounded.push(count);
    }

    /// Characters below the level's bottom.
    fn fallen(&self) -> usize {
        self.last.iter().filter(|p| p.y < FALLEN_Y).count()
    }
}

/// Builds both apps on `level`, ticks them in turn (the order alternating), prints the
/// table; returns whether every character of both sides stayed on the level.
fn run<V: Dim, P: Peer>(level: &Level, shape: CharacterShape) -> bool {
    let t = Instant::now();
    let mut ours = ours_app::<V>(level, shape);
    let mut avian = avian_app::<P>(level, shape);
    let ours_grounded: fn(&CharacterState<V>) -> bool = |s| s.grounded;
    let avian_grounded: fn(&AvianGrounded) -> bool = |g| g.0;
    let (mut o, mut a) = (Record::default(), Record::default());
    for _ in 0..WARMUP {
        ours.update();
        avian.update();
    }
    println!("built and warmed up in {:.1} s", t.elapsed().as_secs_f64());
    o.observe(ours.world_mut(), ours_grounded);
    a.observe(avian.world_mut(), avian_grounded);
    o.grounded.clear();
    a.grounded.clear();
    for t in 0..TICKS {
        if t % 2 == 0 {
            o.tick(&mut ours, ours_grounded);
            a.tick(&mut avian, avian_grounded);
        } else {
            a.tick(&mut avian, avian_grounded);
            o.tick(&mut ours, ours_grounded);
        }
    }

    let n = CHARACTERS as f64;
    let (o_ctrl, a_ctrl) = (median(&mut o.controller), median(&mut a.controller));
    let (o_upd, a_upd) = (median(&mut o.update), median(&mut a.update));
    let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len() as f64;
    let speed = |r: &Record| r.walked / n / (TICKS as f64 * f64::from(DT));
    let (o_fallen, a_fallen) = (o.fallen(), a.fallen());

    println!();
    println!(
        "| median of {TICKS} ticks | ours | {} | ours/avian |",
        P::NAME
    );
    println!("|---|---|---|---|");
    println!(
        "| controller µs/tick | {o_ctrl:.1} | {a_ctrl:.1} | {:.3} |",
        o_ctrl / a_ctrl
    );
    println!(
        "| controller µs/character | {:.3} | {:.3} | |",
        o_ctrl / n,
        a_ctrl / n
    );
    let a_moves = median(&mut a.moves);
    println!(
        "| avian: of which `move_and_slide` (less the ground casts) µs/tick | | {a_moves:.1} | \
         {:.3} |",
        o_ctrl / a_moves
    );
    println!(
        "| app.update() µs (whole tick) | {o_upd:.1} | {a_upd:.1} | {:.3} |",
        o_upd / a_upd
    );
    println!(
        "| grounded characters (mean per tick) | {:.1} | {:.1} | |",
        mean(&o.grounded),
        mean(&a.grounded)
    );
    println!(
        "| grounded characters (last tick) | {} | {} | |",
        o.grounded.last().copied().unwrap_or(0),
        a.grounded.last().copied().unwrap_or(0)
    );
    println!(
        "| horizontal speed (mean, units/s; {SPEED} unobstructed) | {:.2} | {:.2} | |",
        speed(&o),
        speed(&a)
    );
    println!("| fell through the level | {o_fallen} | {a_fallen} | |");
    println!();
    println!("ratio_controller={:.3}", o_ctrl / a_ctrl);
    println!(
        "ratio_controller_vs_move_and_slide_alone={:.3}",
        o_ctrl / a_moves
    );
    println!("ratio_update={:.3}", o_upd / a_upd);
    o_fallen == 0 && a_fallen == 0
}

const USAGE: &str = "usage: characters [2d|3d] [box|capsule]";

fn main() -> ExitCode {
    let mut three_d = false;
    let mut shape = CharacterShape::Box;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "2d" => three_d = false,
            "3d" => three_d = true,
            "box" => shape = CharacterShape::Box,
            "capsule" => shape = CharacterShape::Capsule,
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let level = if three_d {
        level_3d(TILES, CHARACTERS)
    } else {
        level_2d(TILES, CHARACTERS)
    };
    println!(
        "characters: {CHARACTERS} {} walking over {}, {}, {WARMUP} warm-up ticks, {TICKS} \
         measured, {} threads",
        match shape {
            CharacterShape::Box => "boxes",
            CharacterShape::Capsule => "capsules",
        },
        level.summary,
        if three_d { "3D" } else { "2D" },
        std::thread::available_parallelism().map_or(1, |p| p.get()),
    );
    let ok = if three_d {
        run::<Vec3, Avian3d>(&level, shape)
    } else {
        run::<Vec2, Avian2d>(&level, shape)
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: characters fell through the level");
        ExitCode::FAILURE
    }
}
