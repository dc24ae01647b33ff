//! Headless tests of the whole collision pipeline, in 2D and 3D, each against an
//! independent oracle: random scenes against brute force over many ticks, tunnelling,
//! the lifecycle of colliders (despawn, removal, `Disabled`, layers), schedules, observers,
//! determinism, spatial queries and bad input.
//!
//! Every app records the message stream with two collectors sharing one cursor: one just
//! before the pipeline (ends caused by despawns and removals since the last tick) and one
//! just after it (this tick's starts, then ends), so the recorded order is the order in
//! which the messages were written. After every tick the collector also checks the tree
//! (`validate`) and, where the scene allows it, compares the touching pairs with brute
//! force over the world. [`finish`] then checks that every `CollisionStarted` has exactly
//! one `CollisionEnded` and that the open pairs after each tick are the touching ones, and
//! the same of the entity events that global observers saw (per entity, each partner's
//! starts and ends alternate).
//!
//! Messages of the two types carry no common order, so within one collector run the
//! recorder lists the starts before the ends; the entity events are checked in the order
//! they were triggered.
#![cfg(feature = "plugin")]

use std::collections::{BTreeMap, BTreeSet};
use std::marker::PhantomData;
use std::time::Duration;

use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::message::MessageCursor;
use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy::ecs::system::SystemState;
use bevy::prelude::*;
use bevy::reflect::{FromReflect, GetTypeRegistration, TypePath, Typed};
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::Vector;
use bevy_aabb_tree::prelude::*;

// ---------------------------------------------------------------------------------------
// Dimensions and randomness

/// The two dimensions the plugin supports, with what the tests need to generate scenes.
trait Dim: Vector + FromReflect + TypePath + GetTypeRegistration + Typed {
    /// The axis rotated colliders turn about: z in 2D, any axis in 3D.
    fn rotation_axis(rng: &mut Rng) -> Vec3;
}

impl Dim for Vec2 {
    fn rotation_axis(_: &mut Rng) -> Vec3 {
        Vec3::Z
    }
}

impl Dim for Vec3 {
    fn rotation_axis(rng: &mut Rng) -> Vec3 {
        loop {
            let v = rng.vec3(-1.0, 1.0);
            if v.length() > 0.2 {
                return v.normalize();
            }
        }
    }
}

/// A vector of the dimension from three coordinates (z dropped in 2D).
fn v<V: Dim>(x: f32, y: f32, z: f32) -> V {
    V::truncate_from_3d(Vec3::new(x, y, z))
}

/// The point as the dimension sees it, in 3D (z = 0 in 2D): every oracle below works in
/// 3D on flattened points, which is exact for 2D since all z are then equal.
fn flat<V: Dim>(p: Vec3) -> Vec3 {
    V::truncate_from_3d(p).extend_to_3d()
}

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

/// What these tests draw beyond the shared generator.
impl Rng {
    fn vec3(&mut self, lo: f32, hi: f32) -> Vec3 {
        Vec3::new(self.range(lo, hi), self.range(lo, hi), self.range(lo, hi))
    }

    fn vector<V: Dim>(&mut self, lo: f32, hi: f32) -> V {
        V::truncate_from_3d(self.vec3(lo, hi))
    }

    fn layers(&mut self) -> Option<CollisionLayers> {
        if self.chance(0.3) {
            return None;
        }
        if self.chance(0.05) {
            return Some(CollisionLayers::NONE);
        }
        let memberships = (1 << self.below(3))
            | if self.chance(0.3) {
                1 << self.below(3)
            } else {
                0
            };
        let filters = self.below(8) as u32;
        Some(CollisionLayers::new(memberships, filters))
    }
}

// ---------------------------------------------------------------------------------------
// The oracle: world shapes and tests written independently of the plugin

/// A collider in world space, in 3D coordinates (z = 0 in 2D).
#[derive(Clone, Copy, Debug, PartialEq)]
enum OShape {
    Box { min: Vec3, max: Vec3 },
    Ball { center: Vec3, radius: f32 },
}

/// The world shape of a root entity's collider, or `None` when the plugin must leave it
/// out (non-finite or negative values). Boxes: the eight (four) corners of the local box
/// mapped by `Transform::transform_point`, enclosed; balls: the center mapped, the radius
/// times the largest scale factor of the dimension's axes.
fn oracle_shape<V: Dim>(
    transform: &Transform,
    aabb: Option<&Aabb<V>>,
    sphere: Option<&BoundingSphere<V>>,
    velocity: Option<&Velocity<V>>,
) -> Option<OShape> {
    let finite = transform.translation.is_finite()
        && transform.scale.is_finite()
        && transform.rotation.is_finite()
        && velocity.is_none_or(|v| v.0.extend_to_3d().is_finite());
    if !finite {
        return None;
    }
    let shape = if let Some(a) = aabb {
        let half = a.half_extents.extend_to_3d();
        let offset = a.offset.extend_to_3d();
        if !(half.is_finite() && offset.is_finite() && half.min_element() >= 0.0) {
            return None;
        }
        let mut min = Vec3::INFINITY;
        let mut max = Vec3::NEG_INFINITY;
        for corner in 0..(1 << V::DIM) {
            let sign = Vec3::new(
                if corner & 1 == 0 { -1.0 } else { 1.0 },
                if corner & 2 == 0 { -1.0 } else { 1.0 },
                if corner & 4 == 0 { -1.0 } else { 1.0 },
            );
            let p = flat::<V>(transform.transform_point(offset + half * sign));
            min = min.min(p);
            max = max.max(p);
        }
        OShape::Box { min, max }
    } else if let Some(s) = sphere {
        let offset = s.offset.extend_to_3d();
        if !(s.radius.is_finite() && s.radius >= 0.0 && offset.is_finite()) {
            return None;
        }
        let scale = flat::<V>(transform.scale).abs().max_element();
        OShape::Ball {
            center: flat::<V>(transform.transform_point(offset)),
            radius: s.radius * scale,
        }
    } else {
        return None;
    };
    let finite = match shape {
        OShape::Box { min, max } => min.is_finite() && max.is_finite(),
        OShape::Ball { center, radius } => center.is_finite() && radius.is_finite(),
    };
    finite.then_some(shape)
}

/// The point of a box closest to `p`.
fn clamp_to_box(p: Vec3, min: Vec3, max: Vec3) -> Vec3 {
    p.max(min).min(max)
}

/// Inclusive overlap of two world shapes.
fn oracle_overlap(a: &OShape, b: &OShape) -> bool {
    match (*a, *b) {
        (OShape::Box { min: a0, max: a1 }, OShape::Box { min: b0, max: b1 }) => {
            a0.cmple(b1).all() && b0.cmple(a1).all()
        }
        (
            OShape::Ball {
                center: c0,
                radius: r0,
            },
            OShape::Ball {
                center: c1,
                radius: r1,
            },
        ) => c0.distance_squared(c1) <= (r0 + r1) * (r0 + r1),
        (OShape::Ball { center, radius }, OShape::Box { min, max })
        | (OShape::Box { min, max }, OShape::Ball { center, radius }) => {
            clamp_to_box(center, min, max).distance_squared(center) <= radius * radius
        }
    }
}

fn oracle_layers(a: Option<CollisionLayers>, b: Option<CollisionLayers>) -> bool {
    let a = a.unwrap_or(CollisionLayers::new(u32::MAX, u32::MAX));
    let b = b.unwrap_or(CollisionLayers::new(u32::MAX, u32::MAX));
    a.memberships & b.filters != 0 && b.memberships & a.filters != 0
}

/// An unordered pair as a key.
fn key(a: Entity, b: Entity) -> (Entity, Entity) {
    if a <= b { (a, b) } else { (b, a) }
}

type Pairs = BTreeSet<(Entity, Entity)>;

/// Every pair of shapes that overlap with layers matching, by brute force.
fn brute_force_pairs(shapes: &[(Entity, OShape, Option<CollisionLayers>)]) -> Pairs {
    let mut out = Pairs::new();
    for (i, (ea, sa, la)) in shapes.iter().enumerate() {
        for (eb, sb, lb) in &shapes[i + 1..] {
            if oracle_layers(*la, *lb) && oracle_overlap(sa, sb) {
                out.insert(key(*ea, *eb));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// The test app and its recorder

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Started { toi: f32, normal: Vec3 },
    Ended(EndReason),
}

/// One message as recorded: the tick (pipeline run) it was read in, and its content.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Ev {
    tick: u32,
    kind: Kind,
    entity: Entity,
    other: Entity,
}

impl Ev {
    fn pair(&self) -> (Entity, Entity) {
        key(self.entity, self.other)
    }

    fn reason(&self) -> Option<EndReason> {
        match self.kind {
            Kind::Ended(r) => Some(r),
            Kind::Started { .. } => None,
        }
    }

    fn toi(&self) -> Option<f32> {
        match self.kind {
            Kind::Started { toi, .. } => Some(toi),
            Kind::Ended(_) => None,
        }
    }
}

#[derive(Resource, Default)]
struct Rec {
    /// Pipeline runs completed.
    tick: u32,
    events: Vec<Ev>,
    started: MessageCursor<CollisionStarted>,
    ended: MessageCursor<CollisionEnded>,
    /// The touching pairs after each tick, from `AabbTree::touching_pairs`.
    touching: Vec<Pairs>,
    /// Scenes with children or overflowing values cannot use the root-only oracle.
    skip_brute_force: bool,
    errors: Vec<String>,
    /// `StepStats::processed` after each tick: how many colliders the prepare stage did
    /// not skip.
    processed: Vec<usize>,
}

fn record(rec: &mut Rec, started: &Messages<CollisionStarted>, ended: &Messages<CollisionEnded>) {
    let tick = rec.tick;
    let Rec {
        started: sc,
        ended: ec,
        events,
        errors,
        ..
    } = rec;
    let missed = sc.missed_messages(started) + ec.missed_messages(ended);
    if missed > 0 {
        errors.push(format!("tick {tick}: {missed} messages missed"));
    }
    for m in sc.read(started) {
        events.push(Ev {
            tick,
            kind: Kind::Started {
                toi: m.time_of_impact,
                normal: m.normal,
            },
            entity: m.entity,
            other: m.other,
        });
    }
    for m in ec.read(ended) {
        events.push(Ev {
            tick,
            kind: Kind::Ended(m.reason),
            entity: m.entity,
            other: m.other,
        });
    }
}

fn collect_pre(
    mut rec: ResMut<Rec>,
    started: Res<Messages<CollisionStarted>>,
    ended: Res<Messages<CollisionEnded>>,
) {
    record(&mut rec, &started, &ended);
}

type OracleItem<'a, V> = (
    Entity,
    &'a Transform,
    Option<&'a Aabb<V>>,
    Option<&'a BoundingSphere<V>>,
    Option<&'a Velocity<V>>,
    Option<&'a CollisionLayers>,
);

/// The valid colliders of the world with their oracle shapes (root entities only).
fn oracle_world<'a, V: Dim>(
    items: impl Iterator<Item = OracleItem<'a, V>>,
) -> Vec<(Entity, OShape, Option<CollisionLayers>)> {
    items
        .filter_map(|(e, t, a, s, vel, l)| Some((e, oracle_shape(t, a, s, vel)?, l.copied())))
        .collect()
}

fn collect_post<V: Dim>(
    mut rec: ResMut<Rec>,
    started: Res<Messages<CollisionStarted>>,
    ended: Res<Messages<CollisionEnded>>,
    state: Res<AabbTree<V>>,
    colliders: Query<OracleItem<V>>,
) {
    record(&mut rec, &started, &ended);
    let tick = rec.tick;
    if let Err(e) = state.tree().validate() {
        rec.errors.push(format!("tick {tick}: invalid tree: {e}"));
    }
    let list: Vec<_> = state.touching_pairs().map(|(a, b)| key(a, b)).collect();
    let touching: Pairs = list.iter().copied().collect();
    if touching.len() != list.len() {
        rec.errors
            .push(format!("tick {tick}: a pair listed twice: {list:?}"));
    }
    if !rec.skip_brute_force {
        let expected = brute_force_pairs(&oracle_world(colliders.iter()));
        if expected != touching {
            rec.errors.push(format!(
                "tick {tick}: touching pairs differ from brute force: missing {:?}, extra {:?}",
                expected.difference(&touching).collect::<Vec<_>>(),
                touching.difference(&expected).collect::<Vec<_>>()
            ));
        }
    }
    rec.touching.push(touching);
    rec.processed.push(state.stats().processed);
    rec.tick += 1;
}

/// Precomputed transforms: `frames[tick][i]` for `entities[i]`, applied by [`drive`]
/// before the pipeline's tick `tick`.
#[derive(Resource)]
struct Script {
    entities: Vec<Entity>,
    frames: Vec<Vec<Transform>>,
}

/// Sparse writes: `writes[tick]` are the transforms [`drive`] writes before the pipeline's
/// tick `tick`, and only those: every other entity is left untouched (idle).
#[derive(Resource)]
struct SparseScript {
    writes: Vec<Vec<(Entity, Transform)>>,
}

fn drive(
    script: Option<Res<Script>>,
    sparse: Option<Res<SparseScript>>,
    rec: Res<Rec>,
    mut q: Query<&mut Transform>,
) {
    if let Some(frame) = script
        .as_ref()
        .and_then(|s| s.frames.get(rec.tick as usize))
    {
        for (&e, t) in script.iter().flat_map(|s| &s.entities).zip(frame) {
            if let Ok(mut transform) = q.get_mut(e) {
                *transform = *t;
            }
        }
    }
    if let Some(writes) = sparse
        .as_ref()
        .and_then(|s| s.writes.get(rec.tick as usize))
    {
        for (e, t) in writes {
            if let Ok(mut transform) = q.get_mut(*e) {
                *transform = *t;
            }
        }
    }
}

/// Configuration changes: `(tick, config)` applied before the pipeline's tick `tick`.
#[derive(Resource, Default)]
struct ConfigChanges(Vec<(u32, CollisionConfig)>);

fn reconfigure(
    changes: Option<Res<ConfigChanges>>,
    rec: Res<Rec>,
    mut config: ResMut<CollisionConfig>,
) {
    let Some(changes) = changes else { return };
    for (tick, new) in &changes.0 {
        if *tick == rec.tick {
            *config = new.clone();
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Sched {
    /// `AabbTreePlugin::new(Update)`; [`drive`] runs in `Update` before the pipeline.
    Update,
    /// The default `FixedPostUpdate`; [`drive`] runs in `FixedUpdate`.
    Fixed,
}

impl Sched {
    fn label(self) -> InternedScheduleLabel {
        match self {
            Sched::Update => Update.intern(),
            Sched::Fixed => FixedPostUpdate.intern(),
        }
    }
}

/// A headless app at 60 frames per second with the plugin in `sched`, the fixed schedule
/// at `fixed_hz`, and the recorder.
fn build_app<V: Dim>(sched: Sched, fixed_hz: f64, config: CollisionConfig) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin));
    match sched {
        Sched::Update => app.add_plugins(AabbTreePlugin::<V>::new(Update)),
        Sched::Fixed => app.add_plugins(AabbTreePlugin::<V>::default()),
    };
    app.insert_resource(config)
        .insert_resource(Time::<Fixed>::from_hz(fixed_hz))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .init_resource::<Rec>();
    watch_entity_events(&mut app);
    let label = sched.label();
    app.add_systems(
        label,
        (
            collect_pre.before(CollisionSystems::Prepare),
            collect_post::<V>.after(CollisionSystems::Events),
        ),
    );
    match sched {
        Sched::Update => app.add_systems(
            Update,
            (drive, reconfigure)
                .after(collect_pre)
                .before(CollisionSystems::Prepare),
        ),
        Sched::Fixed => app.add_systems(FixedUpdate, (drive, reconfigure)),
    };
    app
}

fn update_app<V: Dim>(sched: Sched) -> App {
    build_app::<V>(sched, 60.0, CollisionConfig::default())
}

fn ticks(app: &App) -> u32 {
    app.world().resource::<Rec>().tick
}

/// Updates until the pipeline has run `n` more times.
fn run_ticks(app: &mut App, n: u32) {
    let target = ticks(app) + n;
    let mut frames = 0;
    while ticks(app) < target {
        app.update();
        frames += 1;
        assert!(frames <= 10 * n + 10, "the pipeline does not run");
    }
}

fn set_translation(app: &mut App, e: Entity, t: Vec3) {
    app.world_mut().get_mut::<Transform>(e).unwrap().translation = t;
}

fn events(app: &App) -> Vec<Ev> {
    app.world().resource::<Rec>().events.clone()
}

/// Checks the invariant of the event stream: a pair starts only when not open, ends only
/// when open (so every `CollisionStarted` has exactly one `CollisionEnded`), a
/// pass-through ends in the tick it started, and after each tick the open pairs are the
/// touching pairs. Returns the pairs still open.
fn check_events(events: &[Ev], touching: &[Pairs]) -> Result<Pairs, String> {
    fn apply(open: &mut BTreeMap<(Entity, Entity), u32>, ev: &Ev) -> Result<(), String> {
        if ev.entity == ev.other {
            return Err(format!("{ev:?}: an entity paired with itself"));
        }
        match ev.kind {
            Kind::Started { toi, .. } => {
                if !(0.0..=1.0).contains(&toi) {
                    return Err(format!("{ev:?}: time of impact out of [0, 1]"));
                }
                if open.insert(ev.pair(), ev.tick).is_some() {
                    return Err(format!("{ev:?}: started while already started"));
                }
            }
            Kind::Ended(reason) => match open.remove(&ev.pair()) {
                None => return Err(format!("{ev:?}: ended without a start")),
                Some(t) if reason == EndReason::PassedThrough && t != ev.tick => {
                    return Err(format!("{ev:?}: passed through, but started at tick {t}"));
                }
                Some(_) => {}
            },
        }
        Ok(())
    }
    let mut open = BTreeMap::new();
    let mut rest = events.iter().peekable();
    for (tick, snapshot) in touching.iter().enumerate() {
        while let Some(ev) = rest.next_if(|ev| ev.tick as usize <= tick) {
            apply(&mut open, ev)?;
        }
        let now: Pairs = open.keys().copied().collect();
        if &now != snapshot {
            return Err(format!(
                "after tick {tick}: open pairs {now:?} are not the touching pairs {snapshot:?}"
            ));
        }
    }
    for ev in rest {
        apply(&mut open, ev)?;
    }
    Ok(open.keys().copied().collect())
}

/// The checks every test ends with: no recorder errors (tree valid and, where used,
/// touching pairs equal brute force at every tick), the event invariant, the tree valid
/// now, and the open pairs equal to the touching pairs. Returns the events.
fn finish<V: Dim>(app: &App) -> Vec<Ev> {
    let rec = app.world().resource::<Rec>();
    assert!(rec.errors.is_empty(), "{:#?}", rec.errors);
    let open = check_events(&rec.events, &rec.touching)
        .unwrap_or_else(|e| panic!("{e}\nevents: {:#?}", rec.events));
    let state = app.world().resource::<AabbTree<V>>();
    state.tree().validate().unwrap();
    let touching: Pairs = state.touching_pairs().map(|(a, b)| key(a, b)).collect();
    assert_eq!(open, touching, "open pairs are not the touching pairs");
    check_entity_events::<V>(app);
    rec.events.clone()
}

// ---------------------------------------------------------------------------------------
// Random scenes

#[derive(Clone, Copy, Debug)]
enum ColliderSpec<V: Dim> {
    Box(Aabb<V>),
    Ball(BoundingSphere<V>),
}

impl<V: Dim> ColliderSpec<V> {
    fn random(rng: &mut Rng) -> Self {
        let offset = if rng.chance(0.3) {
            rng.vector(-0.5, 0.5)
        } else {
            V::ZERO
        };
        if rng.chance(0.5) {
            ColliderSpec::Box(Aabb::new(rng.vector(0.3, 1.5)).with_offset(offset))
        } else {
            ColliderSpec::Ball(BoundingSphere::new(rng.range(0.3, 1.5)).with_offset(offset))
        }
    }

    fn insert(self, e: &mut EntityWorldMut) {
        match self {
            ColliderSpec::Box(a) => e.insert(a),
            ColliderSpec::Ball(s) => e.insert(s),
        };
    }
}

/// One body of a random scene: its collider and a smooth trajectory (each coordinate a
/// sine around `base`, a rotation turning at `spin` radians per tick, a fixed scale).
#[derive(Clone, Debug)]
struct BodySpec<V: Dim> {
    collider: ColliderSpec<V>,
    layers: Option<CollisionLayers>,
    velocity: Option<V>,
    base: Vec3,
    amplitude: Vec3,
    frequency: Vec3,
    phase: Vec3,
    axis: Vec3,
    angle: f32,
    spin: f32,
    scale: Vec3,
}

impl<V: Dim> BodySpec<V> {
    fn transform(&self, tick: usize) -> Transform {
        let k = tick as f32;
        let wave = Vec3::new(
            (self.frequency.x * k + self.phase.x).sin(),
            (self.frequency.y * k + self.phase.y).sin(),
            (self.frequency.z * k + self.phase.z).sin(),
        );
        Transform {
            translation: self.base + self.amplitude * wave,
            rotation: Quat::from_axis_angle(self.axis, self.angle + self.spin * k),
            scale: self.scale,
        }
    }
}

struct Scene<V: Dim> {
    bodies: Vec<BodySpec<V>>,
    frames: Vec<Vec<Transform>>,
}

fn random_scene<V: Dim>(seed: u64, n: usize, ticks: usize) -> Scene<V> {
    let mut rng = Rng::new(seed);
    let extent = if V::DIM == 2 { 9.0 } else { 5.0 };
    let bodies: Vec<BodySpec<V>> = (0..n)
        .map(|_| {
            let rotated = rng.chance(0.4);
            let mut scale = if rng.chance(0.3) {
                rng.vec3(0.5, 1.8)
            } else {
                Vec3::ONE
            };
            if rng.chance(0.1) {
                // A mirrored axis: the world box must not care.
                scale.x = -scale.x;
            }
            BodySpec {
                collider: ColliderSpec::random(&mut rng),
                layers: rng.layers(),
                // Only the tree's update rate depends on it, never the events.
                velocity: rng.chance(0.5).then(|| rng.vector(-20.0, 20.0)),
                base: rng.vec3(-extent, extent),
                amplitude: rng.vec3(0.0, 3.0),
                frequency: rng.vec3(0.01, 0.08),
                phase: rng.vec3(0.0, 6.3),
                axis: V::rotation_axis(&mut rng),
                angle: if rotated { rng.range(0.0, 6.3) } else { 0.0 },
                spin: if rotated { rng.range(-0.05, 0.05) } else { 0.0 },
                scale,
            }
        })
        .collect();
    let frames = (0..ticks)
        .map(|k| bodies.iter().map(|b| b.transform(k)).collect())
        .collect();
    Scene { bodies, frames }
}

/// Spawns the bodies at the transforms of one frame.
fn spawn_bodies<V: Dim>(
    world: &mut World,
    bodies: &[BodySpec<V>],
    frame: &[Transform],
) -> Vec<Entity> {
    bodies
        .iter()
        .zip(frame)
        .map(|(b, t)| {
            let mut e = world.spawn(*t);
            b.collider.insert(&mut e);
            if let Some(l) = b.layers {
                e.insert(l);
            }
            if let Some(vel) = b.velocity {
                e.insert(Velocity(vel));
            }
            e.id()
        })
        .collect()
}

/// Spawns the scene at its first frame and installs its script.
fn spawn_scene<V: Dim>(app: &mut App, scene: &Scene<V>) -> Vec<Entity> {
    let world = app.world_mut();
    let entities = spawn_bodies(world, &scene.bodies, &scene.frames[0]);
    world.insert_resource(Script {
        entities: entities.clone(),
        frames: scene.frames.clone(),
    });
    entities
}

/// The oracle's shape of every body, at each frame.
fn frame_shapes<V: Dim>(bodies: &[BodySpec<V>], frames: &[Vec<Transform>]) -> Vec<Vec<OShape>> {
    frames
        .iter()
        .map(|frame| {
            bodies
                .iter()
                .zip(frame)
                .map(|(b, t)| {
                    match &b.collider {
                        ColliderSpec::Box(a) => oracle_shape::<V>(t, Some(a), None, None),
                        ColliderSpec::Ball(s) => oracle_shape::<V>(t, None, Some(s), None),
                    }
                    .expect("scene values are valid")
                })
                .collect()
        })
        .collect()
}

/// The oracle's touching pairs at each tick of the scene.
fn scene_oracle<V: Dim>(scene: &Scene<V>, entities: &[Entity]) -> Vec<Pairs> {
    frame_shapes(&scene.bodies, &scene.frames)
        .into_iter()
        .map(|shapes| {
            let shapes: Vec<_> = shapes
                .into_iter()
                .zip(&scene.bodies)
                .zip(entities)
                .map(|((shape, b), &e)| (e, shape, b.layers))
                .collect();
            brute_force_pairs(&shapes)
        })
        .collect()
}

/// Runs a random scene with `swept: false` and compares the events with the oracle: per
/// tick, Started for the pairs touching now and not at the last tick, Ended for the
/// reverse. Returns the events (for determinism checks).
fn run_scene_against_oracle<V: Dim>(
    seed: u64,
    sched: Sched,
    fixed_hz: f64,
    n: usize,
    ticks: usize,
    changes: &[(u32, CollisionConfig)],
) -> Vec<Ev> {
    let scene = random_scene::<V>(seed, n, ticks);
    let config = CollisionConfig {
        swept: false,
        ..default()
    };
    let mut app = build_app::<V>(sched, fixed_hz, config);
    app.insert_resource(ConfigChanges(changes.to_vec()));
    let entities = spawn_scene(&mut app, &scene);
    run_ticks(&mut app, ticks as u32);
    let events = finish::<V>(&app);

    let oracle = scene_oracle(&scene, &entities);
    let transitions = assert_overlap_oracle(&format!("seed {seed}"), &oracle, &events);
    assert!(
        transitions >= 40,
        "seed {seed}: the scene is too quiet to test anything ({transitions} transitions)"
    );
    assert!(events.iter().all(|e| (e.tick as usize) < ticks));
    events
}

/// Compares the events of a run with sweeps off with the overlap oracle: per tick,
/// Started (at time 0) for the pairs touching now and not at the last tick, Ended
/// (`Separated`) for the reverse. Returns the number of transitions.
fn assert_overlap_oracle(what: &str, oracle: &[Pairs], events: &[Ev]) -> usize {
    let mut previous = Pairs::new();
    let mut transitions = 0;
    for (tick, now) in oracle.iter().enumerate() {
        let expected_started: Pairs = now.difference(&previous).copied().collect();
        let expected_ended: Pairs = previous.difference(now).copied().collect();
        transitions += expected_started.len() + expected_ended.len();
        let of_tick: Vec<&Ev> = events.iter().filter(|e| e.tick as usize == tick).collect();
        let started: Vec<_> = of_tick
            .iter()
            .filter(|e| e.toi().is_some())
            .map(|e| e.pair())
            .collect();
        let ended: Vec<_> = of_tick
            .iter()
            .filter(|e| e.reason().is_some())
            .map(|e| e.pair())
            .collect();
        let started_set: Pairs = started.iter().copied().collect();
        let ended_set: Pairs = ended.iter().copied().collect();
        assert_eq!(
            started.len(),
            started_set.len(),
            "{what}, tick {tick}: duplicate start"
        );
        assert_eq!(
            ended.len(),
            ended_set.len(),
            "{what}, tick {tick}: duplicate end"
        );
        assert_eq!(
            started_set, expected_started,
            "{what}, tick {tick}: started pairs"
        );
        assert_eq!(
            ended_set, expected_ended,
            "{what}, tick {tick}: ended pairs"
        );
        for e in of_tick {
            match e.kind {
                Kind::Started { toi, .. } => {
                    assert_eq!(
                        toi, 0.0,
                        "no sweeps: every start is at the start of the tick"
                    )
                }
                Kind::Ended(r) => assert_eq!(r, EndReason::Separated, "{e:?}"),
            }
        }
        previous = now.clone();
    }
    assert!(
        events.iter().all(|e| (e.tick as usize) < oracle.len()),
        "{what}: events after the last tick"
    );
    transitions
}

const SEEDS: [u64; 3] = [1, 42, 0xDEAD_BEEF];

/// Item 1: random scenes, `Update` schedule, several seeds; determinism of the order.
fn random_scenes_match_oracle<V: Dim>() {
    let mut first = None;
    for seed in SEEDS {
        let events = run_scene_against_oracle::<V>(seed, Sched::Update, 60.0, 40, 200, &[]);
        first.get_or_insert(events);
    }
    let again = run_scene_against_oracle::<V>(SEEDS[0], Sched::Update, 60.0, 40, 200, &[]);
    assert_eq!(
        Some(again),
        first,
        "the same scene gave different event sequences"
    );
}

/// Item 1 in the default `FixedPostUpdate` (positions set in `FixedUpdate`).
fn random_scene_fixed_post_update<V: Dim>() {
    run_scene_against_oracle::<V>(7, Sched::Fixed, 60.0, 40, 200, &[]);
}

/// Item 4: fixed 20 Hz, frames at 60 Hz, positions set in `FixedUpdate`: each tick tests
/// the positions set in that very tick.
fn random_scene_slow_fixed_rate<V: Dim>() {
    run_scene_against_oracle::<V>(11, Sched::Fixed, 20.0, 40, 100, &[]);
}

/// The other way round: fixed 150 Hz, frames at 60 Hz, two or three ticks in a frame.
fn random_scene_fast_fixed_rate<V: Dim>() {
    run_scene_against_oracle::<V>(12, Sched::Fixed, 150.0, 40, 150, &[]);
}

/// Item 6: the same scene with sweeps on, twice: the same events in the same order.
fn determinism_with_sweeps<V: Dim>() {
    let run = || {
        let scene = random_scene::<V>(99, 40, 150);
        let mut app = update_app::<V>(Sched::Update);
        spawn_scene(&mut app, &scene);
        run_ticks(&mut app, 150);
        finish::<V>(&app)
    };
    let a = run();
    let b = run();
    assert!(a.len() > 20, "too few events: {}", a.len());
    assert_eq!(a, b);
}

/// The knobs that only change how often the tree is touched or what it keeps (margin,
/// velocity multiplier, move cache) changed during a run: the events stay those of the
/// oracle.
fn config_changes_mid_run<V: Dim>() {
    let config = |margin: f32, velocity_multiplier: f32, move_cache: bool| CollisionConfig {
        margin,
        velocity_multiplier,
        swept: false,
        enabled: true,
        move_cache,
        ..default()
    };
    run_scene_against_oracle::<V>(
        3,
        Sched::Update,
        60.0,
        40,
        200,
        &[
            (0, config(0.0, 0.0, true)),
            (40, config(1.0, 0.0, false)),
            (80, config(0.0, 10.0, false)),
            (120, config(0.3, 2.0, true)),
            (160, config(0.0, 0.5, false)),
        ],
    );
}

/// The first time in `[0, 1]` at which two shapes moving by `da` and `db` (translation
/// only) touch. In `a`'s frame `b` moves by `v = db - da`. Two boxes: the offset between
/// their centers is a point moving against the sum of their half extents. Two balls: the
/// same against the sum of the radii. A ball and a box: the gap between them is convex in
/// time: ternary search for its minimum, then bisection for the first touch.
fn oracle_sweep(a: &OShape, da: Vec3, b: &OShape, db: Vec3) -> Option<f32> {
    let v = db - da;
    match (*a, *b) {
        (OShape::Box { min: a0, max: a1 }, OShape::Box { min: b0, max: b1 }) => {
            let half = (a1 - a0) * 0.5 + (b1 - b0) * 0.5;
            let offset = (b0 + b1) * 0.5 - (a0 + a1) * 0.5;
            ray_box(offset, v, -half, half, 1.0)
        }
        (
            OShape::Ball {
                center: ca,
                radius: ra,
            },
            OShape::Ball {
                center: cb,
                radius: rb,
            },
        ) => ray_ball(cb - ca, v, Vec3::ZERO, ra + rb, 1.0),
        (OShape::Ball { center, radius }, OShape::Box { min, max })
        | (OShape::Box { min, max }, OShape::Ball { center, radius }) => {
            // The ball's motion relative to the box.
            let rel = if matches!(a, OShape::Ball { .. }) {
                -v
            } else {
                v
            };
            let gap = |u: f32| {
                let c = center + rel * u;
                clamp_to_box(c, min, max).distance(c) - radius
            };
            if gap(0.0) <= 0.0 {
                return Some(0.0);
            }
            let (mut lo, mut hi) = (0.0f32, 1.0f32);
            for _ in 0..100 {
                let (m1, m2) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
                if gap(m1) <= gap(m2) {
                    hi = m2;
                } else {
                    lo = m1;
                }
            }
            let closest = 0.5 * (lo + hi);
            if gap(closest) > 0.0 {
                return None;
            }
            let (mut apart, mut touching) = (0.0f32, closest);
            for _ in 0..60 {
                let mid = 0.5 * (apart + touching);
                if gap(mid) > 0.0 {
                    apart = mid;
                } else {
                    touching = mid;
                }
            }
            Some(touching)
        }
    }
}

fn shape_center(s: &OShape) -> Vec3 {
    match *s {
        OShape::Box { min, max } => (min + max) * 0.5,
        OShape::Ball { center, .. } => center,
    }
}

fn translated(s: &OShape, d: Vec3) -> OShape {
    match *s {
        OShape::Box { min, max } => OShape::Box {
            min: min + d,
            max: max + d,
        },
        OShape::Ball { center, radius } => OShape::Ball {
            center: center + d,
            radius,
        },
    }
}

/// The contact normals from `a` towards `b` for shapes that touch (within `tolerance`):
/// for two boxes, the faces in contact; otherwise the direction from a ball's center to
/// the closest point of the other shape.
fn oracle_contact_normals(a: &OShape, b: &OShape, tolerance: f32) -> Vec<Vec3> {
    match (*a, *b) {
        (OShape::Box { min: a0, max: a1 }, OShape::Box { min: b0, max: b1 }) => {
            let mut out = Vec::new();
            for i in 0..3 {
                if a0[i] == a1[i] && b0[i] == b1[i] {
                    // A flat axis (2D): no faces there.
                    continue;
                }
                let mut n = Vec3::ZERO;
                if (b0[i] - a1[i]).abs() <= tolerance {
                    n[i] = 1.0;
                    out.push(n);
                }
                if (a0[i] - b1[i]).abs() <= tolerance {
                    n[i] = -1.0;
                    out.push(n);
                }
            }
            out
        }
        (OShape::Ball { center: ca, .. }, OShape::Ball { center: cb, .. }) => {
            vec![(cb - ca).normalize_or_zero()]
        }
        (OShape::Ball { center, .. }, OShape::Box { min, max }) => {
            vec![(clamp_to_box(center, min, max) - center).normalize_or_zero()]
        }
        (OShape::Box { min, max }, OShape::Ball { center, .. }) => {
            vec![(center - clamp_to_box(center, min, max)).normalize_or_zero()]
        }
    }
}

/// Checks a `CollisionStarted` normal recorded from `from`'s side against the oracle's
/// normals from `a` (entity `ea`) towards `b`.
fn assert_normal(what: &str, normal: Vec3, from: Entity, ea: Entity, want: &[Vec3]) {
    let n = if from == ea { normal } else { -normal };
    assert!(
        want.iter().any(|w| w.distance(n) <= 2e-2),
        "{what}: normal {n} (from the first of the pair), the oracle's {want:?}"
    );
}

/// Compares the events of a run with sweeps on with the swept oracle, for colliders that
/// only translate (`shapes[tick][i]` is `entities[i]`'s world shape at `tick`): per tick
/// and pair, Started with the first time of contact over the tick's motion for pairs not
/// touching at the last tick, Ended(PassedThrough) with it when they no longer touch at
/// the end, Ended(Separated) for pairs that stop touching. Every Started's normal is
/// checked: at the first contact of a sweep, against the oracle's contact normal of the
/// shapes moved to that time; for shapes that already overlap, a unit vector (or zero for
/// coinciding centers) that does not point from the second center back towards the
/// first. Returns the number of pass-throughs and of normals checked at a first contact.
fn assert_swept_oracle(
    what: &str,
    shapes: &[Vec<OShape>],
    layers: &[Option<CollisionLayers>],
    entities: &[Entity],
    events: &[Ev],
) -> (usize, usize) {
    let mut passes = 0;
    let mut normals = 0;
    for tick in 0..shapes.len() {
        // pair -> the oracle's normals from the pair's first entity (in `key` order).
        let mut contact: BTreeMap<(Entity, Entity), (Entity, Vec<Vec3>)> = BTreeMap::new();
        // pair -> (time of impact, end reason)
        let mut expected: BTreeMap<(Entity, Entity), (Option<f32>, Option<EndReason>)> =
            BTreeMap::new();
        // Relative displacement length per pair, to compare times as distances.
        let mut speed: BTreeMap<(Entity, Entity), f32> = BTreeMap::new();
        for i in 0..entities.len() {
            for j in i + 1..entities.len() {
                if !oracle_layers(layers[i], layers[j]) {
                    continue;
                }
                let pair = key(entities[i], entities[j]);
                let now = oracle_overlap(&shapes[tick][i], &shapes[tick][j]);
                if tick == 0 {
                    if now {
                        expected.insert(pair, (Some(0.0), None));
                        let (a, b) = (&shapes[0][i], &shapes[0][j]);
                        let d = shape_center(b) - shape_center(a);
                        let n = if d == Vec3::ZERO {
                            vec![Vec3::ZERO]
                        } else {
                            vec![]
                        };
                        contact.insert(pair, (entities[i], n));
                    }
                    continue;
                }
                let (pa, pb) = (&shapes[tick - 1][i], &shapes[tick - 1][j]);
                let da = shape_center(&shapes[tick][i]) - shape_center(pa);
                let db = shape_center(&shapes[tick][j]) - shape_center(pb);
                speed.insert(pair, (db - da).length());
                let before = oracle_overlap(pa, pb);
                if before && !now {
                    expected.insert(pair, (None, Some(EndReason::Separated)));
                } else if !before {
                    let swept = oracle_sweep(pa, da, pb, db);
                    if let Some(u) = swept.filter(|&u| u > 0.0) {
                        let (a, b) = (translated(pa, da * u), translated(pb, db * u));
                        let n = oracle_contact_normals(&a, &b, 3e-3);
                        contact.insert(pair, (entities[i], n));
                    }
                    let toi = swept.or(now.then_some(1.0));
                    if let Some(toi) = toi {
                        let end = (!now).then_some(EndReason::PassedThrough);
                        passes += usize::from(!now);
                        expected.insert(pair, (Some(toi), end));
                    }
                }
            }
        }
        let mut actual: BTreeMap<(Entity, Entity), (Option<f32>, Option<EndReason>)> =
            BTreeMap::new();
        for e in events.iter().filter(|e| e.tick as usize == tick) {
            let entry = actual.entry(e.pair()).or_default();
            match e.kind {
                Kind::Started { toi, .. } => entry.0 = Some(toi),
                Kind::Ended(r) => entry.1 = Some(r),
            }
        }
        let expected_pairs: Pairs = expected.keys().copied().collect();
        let actual_pairs: Pairs = actual.keys().copied().collect();
        assert_eq!(
            actual_pairs, expected_pairs,
            "{what} tick {tick}: pairs with events\nactual {actual:?}\nexpected {expected:?}"
        );
        for (pair, (toi, end)) in &expected {
            let (actual_toi, actual_end) = actual[pair];
            assert_eq!(actual_end, *end, "{what} tick {tick} {pair:?}");
            match (actual_toi, toi) {
                (Some(x), Some(y)) => {
                    let distance = (x - y).abs() * speed.get(pair).copied().unwrap_or(0.0);
                    assert!(
                        distance <= 1e-3 && (*y == 0.0) == (x == 0.0),
                        "{what} tick {tick} {pair:?}: toi {x}, oracle {y}"
                    );
                }
                (None, None) => {}
                other => panic!("{what} tick {tick} {pair:?}: {other:?}"),
            }
        }
        for e in events.iter().filter(|e| e.tick as usize == tick) {
            let Kind::Started { normal, .. } = e.kind else {
                continue;
            };
            let what = format!("{what} tick {tick} {:?}", e.pair());
            match contact.get(&e.pair()) {
                Some((first, want)) if !want.is_empty() && want[0] != Vec3::ZERO => {
                    assert_normal(&what, normal, e.entity, *first, want);
                    normals += 1;
                }
                Some((_, want)) if want == &[Vec3::ZERO] => {
                    assert!(
                        normal == Vec3::ZERO || (normal.length() - 1.0).abs() < 1e-4,
                        "{what}: normal {normal} for coinciding centers"
                    );
                }
                _ => {
                    // Overlapping already (or the oracle's grazing contact): a unit normal
                    // from the entity's side of the pair towards the other's.
                    let i = entities.iter().position(|x| *x == e.entity).unwrap();
                    let j = entities.iter().position(|x| *x == e.other).unwrap();
                    let d = shape_center(&shapes[tick][j]) - shape_center(&shapes[tick][i]);
                    let prev = if tick > 0 { tick - 1 } else { tick };
                    let d0 = shape_center(&shapes[prev][j]) - shape_center(&shapes[prev][i]);
                    assert!(
                        (normal.length() - 1.0).abs() < 1e-4
                            || (normal == Vec3::ZERO && d0 == Vec3::ZERO),
                        "{what}: normal {normal} not a unit vector"
                    );
                    assert!(
                        normal.dot(d) >= -1e-3 || normal.dot(d0) >= -1e-3,
                        "{what}: normal {normal} points back from the other towards the entity"
                    );
                }
            }
        }
    }
    (passes, normals)
}

/// Sweeps on, a scene where colliders only translate (rotations and scales fixed) and a
/// quarter of them are fast (up to several units a tick, more than their size): per tick
/// and pair, the oracle expects Started with the first time of contact over the tick's
/// motion for pairs not touching at the last tick, Ended(PassedThrough) with it when they
/// no longer touch at the end, Ended(Separated) for pairs that stop touching.
fn swept_scene_matches_oracle<V: Dim>() {
    for seed in [21, 22] {
        let ticks = 150;
        let mut scene = random_scene::<V>(seed, 40, ticks);
        let mut rng = Rng::new(seed + 1000);
        for b in &mut scene.bodies {
            b.spin = 0.0;
            if rng.chance(0.25) {
                b.amplitude = rng.vec3(3.0, 9.0);
                b.frequency = rng.vec3(0.2, 0.6);
            }
        }
        scene.frames = (0..ticks)
            .map(|k| scene.bodies.iter().map(|b| b.transform(k)).collect())
            .collect();
        let mut app = update_app::<V>(Sched::Update);
        let entities = spawn_scene(&mut app, &scene);
        run_ticks(&mut app, ticks as u32);
        let events = finish::<V>(&app);

        let shapes = frame_shapes(&scene.bodies, &scene.frames);
        let layers: Vec<_> = scene.bodies.iter().map(|b| b.layers).collect();
        let (passes, normals) = assert_swept_oracle(
            &format!("seed {seed}"),
            &shapes,
            &layers,
            &entities,
            &events,
        );
        assert!(passes >= 10, "seed {seed}: only {passes} pass-throughs");
        assert!(normals >= 50, "seed {seed}: only {normals} contact normals");
        eprintln!("seed {seed}: {passes} pass-throughs, {normals} contact normals");
    }
}

// ---------------------------------------------------------------------------------------
// Tunnelling (sweeps on, the default)

fn assert_close(actual: f32, expected: f32, tolerance: f32, what: &str) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: {actual} is not {expected} (± {tolerance})"
    );
}

/// Asserts that the events are exactly a start at `toi` and a pass-through end in one
/// tick, for the pair (a, b), with the normal along x pointing from `entity` to `other`
/// (`a` moves towards +x relative to `b`).
fn assert_pass_through(events: &[Ev], a: Entity, b: Entity, toi: f32) {
    assert_eq!(events.len(), 2, "{events:#?}");
    let (s, e) = (events[0], events[1]);
    assert_eq!(s.pair(), key(a, b));
    assert_eq!(e.pair(), key(a, b));
    assert_eq!(s.tick, e.tick, "start and end in the same tick");
    let t = s.toi().expect("a start first");
    assert!(t > 0.0 && t < 1.0, "toi {t}");
    assert_close(t, toi, 1e-3, "time of impact");
    assert_eq!(e.reason(), Some(EndReason::PassedThrough));
    let Kind::Started { normal, .. } = s.kind else {
        unreachable!()
    };
    let sign = if s.entity == a { 1.0 } else { -1.0 };
    assert!(
        (normal - Vec3::X * sign).length() < 1e-3,
        "normal {normal} from {} to {}",
        s.entity,
        s.other
    );
}

/// A box at 600 units/s (10 units a tick at 60 Hz) through a wall 0.1 thick.
fn box_through_thin_wall<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let wall = app
        .world_mut()
        .spawn((Transform::default(), Aabb::new(v::<V>(0.05, 2.0, 2.0))))
        .id();
    let bullet = app
        .world_mut()
        .spawn((
            Transform::from_xyz(-5.0, 0.0, 0.0),
            Aabb::new(V::splat(0.25)),
            Velocity(v::<V>(600.0, 0.0, 0.0)),
        ))
        .id();
    run_ticks(&mut app, 1);
    set_translation(&mut app, bullet, Vec3::new(5.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    set_translation(&mut app, bullet, Vec3::new(15.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    // The front face goes from -4.75 to 5.25 and meets the wall's face at -0.05:
    // (-0.05 - -4.75) / 10 = 0.47.
    assert_pass_through(&events, bullet, wall, 0.47);
    assert_eq!(events[0].tick, 1);
    assert_eq!(app.world().resource::<AabbTree<V>>().swept_hits().len(), 0);
}

/// The same in the default `FixedPostUpdate`, moved by `VelocityPlugin` from x = -25:
/// the tick from -5 to 5 meets the wall at 0.47.
fn box_through_thin_wall_fixed<V: Dim>() {
    let mut app = update_app::<V>(Sched::Fixed);
    app.add_plugins(VelocityPlugin::<V>::default());
    let wall = app
        .world_mut()
        .spawn((Transform::default(), Aabb::new(v::<V>(0.05, 2.0, 2.0))))
        .id();
    let bullet = app
        .world_mut()
        .spawn((
            Transform::from_xyz(-25.0, 0.0, 0.0),
            Aabb::new(V::splat(0.25)),
            Velocity(v::<V>(600.0, 0.0, 0.0)),
        ))
        .id();
    run_ticks(&mut app, 6);
    let events = finish::<V>(&app);
    assert_pass_through(&events, bullet, wall, 0.47);
}

/// Two fast boxes head-on: each moves 10 units a tick, the faces 9.5 apart close at 20
/// units a tick: 0.475.
fn head_on_boxes<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let a = app
        .world_mut()
        .spawn((
            Transform::from_xyz(-5.0, 0.0, 0.0),
            Aabb::new(V::splat(0.25)),
        ))
        .id();
    let b = app
        .world_mut()
        .spawn((
            Transform::from_xyz(5.0, 0.1, 0.0),
            Aabb::new(V::splat(0.25)),
        ))
        .id();
    run_ticks(&mut app, 1);
    set_translation(&mut app, a, Vec3::new(5.0, 0.0, 0.0));
    set_translation(&mut app, b, Vec3::new(-5.0, 0.1, 0.0));
    run_ticks(&mut app, 2);
    let events = finish::<V>(&app);
    assert_pass_through(&events, a, b, 0.475);
}

/// A sphere bullet (radius 0.25, 0.3 off the wall's center line) through the wall: its
/// center reaches x = -0.3 at (5 - 0.3) / 10 = 0.47.
fn sphere_bullet<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let wall = app
        .world_mut()
        .spawn((Transform::default(), Aabb::new(v::<V>(0.05, 2.0, 2.0))))
        .id();
    let bullet = app
        .world_mut()
        .spawn((
            Transform::from_xyz(-5.0, 0.3, 0.0),
            BoundingSphere::<V>::new(0.25),
        ))
        .id();
    run_ticks(&mut app, 1);
    set_translation(&mut app, bullet, Vec3::new(5.0, 0.3, 0.0));
    run_ticks(&mut app, 2);
    let events = finish::<V>(&app);
    assert_pass_through(&events, bullet, wall, 0.47);

    // And a sphere against a sphere, head-on: centers 10 apart, radii 0.5 + 0.5, closing
    // at 20 a tick: (10 - 1) / 20 = 0.45.
    let mut app = update_app::<V>(Sched::Update);
    let a = app
        .world_mut()
        .spawn((
            Transform::from_xyz(-5.0, 0.0, 0.0),
            BoundingSphere::<V>::new(0.5),
        ))
        .id();
    let b = app
        .world_mut()
        .spawn((
            Transform::from_xyz(5.0, 0.0, 0.0),
            BoundingSphere::<V>::new(0.5),
        ))
        .id();
    run_ticks(&mut app, 1);
    set_translation(&mut app, a, Vec3::new(5.0, 0.0, 0.0));
    set_translation(&mut app, b, Vec3::new(-5.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    assert_pass_through(&events, a, b, 0.45);
}

/// A `Teleported` jump across the wall gives no event; the marker is removed.
fn teleport_across_wall<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    app.world_mut()
        .spawn((Transform::default(), Aabb::new(v::<V>(0.05, 2.0, 2.0))));
    let jumper = app
        .world_mut()
        .spawn((
            Transform::from_xyz(-5.0, 0.0, 0.0),
            Aabb::new(V::splat(0.25)),
        ))
        .id();
    run_ticks(&mut app, 1);
    set_translation(&mut app, jumper, Vec3::new(5.0, 0.0, 0.0));
    app.world_mut().entity_mut(jumper).insert(Teleported);
    run_ticks(&mut app, 1);
    set_translation(&mut app, jumper, Vec3::new(6.0, 0.0, 0.0));
    run_ticks(&mut app, 2);
    assert!(!app.world().entity(jumper).contains::<Teleported>());
    let events = finish::<V>(&app);
    assert!(events.is_empty(), "{events:#?}");
    // Without the marker the same jump back is a pass-through.
    set_translation(&mut app, jumper, Vec3::new(-5.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[1].reason(), Some(EndReason::PassedThrough));
}

/// `Teleported` on a parent covers its child collider: the parent's jump across a wall is
/// not swept, the marker is gone after the tick, and the same jump back without it is a
/// pass-through.
fn teleport_parent_across_wall<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    // The brute-force check reads each collider's own `Transform`, not its parent's.
    app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
    app.world_mut()
        .spawn((Transform::default(), Aabb::new(v::<V>(0.05, 2.0, 2.0))));
    let player = app
        .world_mut()
        .spawn(Transform::from_xyz(-5.0, 0.0, 0.0))
        .id();
    let child = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.0, 0.5, 0.0),
            Aabb::new(V::splat(0.25)),
            ChildOf(player),
        ))
        .id();
    run_ticks(&mut app, 1);
    set_translation(&mut app, player, Vec3::new(5.0, 0.0, 0.0));
    app.world_mut().entity_mut(player).insert(Teleported);
    run_ticks(&mut app, 1);
    assert!(!app.world().entity(player).contains::<Teleported>());
    set_translation(&mut app, player, Vec3::new(6.0, 0.0, 0.0));
    run_ticks(&mut app, 2);
    let events = finish::<V>(&app);
    assert!(events.is_empty(), "{events:#?}");
    // Without the marker the same jump back is a pass-through.
    set_translation(&mut app, player, Vec3::new(-5.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[1].reason(), Some(EndReason::PassedThrough));
    // The parent and the child both marked: both markers go with the jump, so the next
    // move (back across the wall, unmarked) is swept again.
    set_translation(&mut app, player, Vec3::new(5.0, 0.0, 0.0));
    app.world_mut().entity_mut(player).insert(Teleported);
    app.world_mut().entity_mut(child).insert(Teleported);
    run_ticks(&mut app, 1);
    assert!(!app.world().entity(player).contains::<Teleported>());
    assert!(!app.world().entity(child).contains::<Teleported>());
    assert_eq!(finish::<V>(&app).len(), 2);
    set_translation(&mut app, player, Vec3::new(-5.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    assert_eq!(events.len(), 4, "{events:#?}");
    assert_eq!(events[3].reason(), Some(EndReason::PassedThrough));
}

// ---------------------------------------------------------------------------------------
// Lifecycle

/// Two touching colliders `a` (box) and `b` (sphere), and a touching pair far away that
/// nothing should disturb. Runs one tick: both pairs start.
struct Touching {
    app: App,
    a: Entity,
    b: Entity,
    bystanders: (Entity, Entity),
}

fn touching_scene<V: Dim>(sched: Sched) -> Touching {
    let mut app = update_app::<V>(sched);
    let world = app.world_mut();
    let a = world
        .spawn((Transform::default(), Aabb::new(V::splat(0.5))))
        .id();
    let b = world
        .spawn((
            Transform::from_xyz(0.8, 0.0, 0.0),
            BoundingSphere::<V>::new(0.5),
        ))
        .id();
    let c = world
        .spawn((
            Transform::from_xyz(20.0, 0.0, 0.0),
            Aabb::new(V::splat(0.5)),
        ))
        .id();
    let d = world
        .spawn((
            Transform::from_xyz(20.5, 0.5, 0.0),
            Aabb::new(V::splat(0.5)),
        ))
        .id();
    run_ticks(&mut app, 1);
    let events = events(&app);
    assert_eq!(events.len(), 2, "{events:#?}");
    let pairs: Pairs = events.iter().map(Ev::pair).collect();
    assert_eq!(pairs, Pairs::from([key(a, b), key(c, d)]));
    Touching {
        app,
        a,
        b,
        bystanders: (c, d),
    }
}

/// The events about the pair (a, b), and none about the bystanders after their start.
fn pair_events(s: &Touching, events: &[Ev]) -> Vec<Ev> {
    let bystanders = key(s.bystanders.0, s.bystanders.1);
    assert_eq!(
        events.iter().filter(|e| e.pair() == bystanders).count(),
        1,
        "bystanders disturbed: {events:#?}"
    );
    events
        .iter()
        .filter(|e| e.pair() == key(s.a, s.b))
        .copied()
        .collect()
}

/// Applies `action` to the touching pair, runs two ticks, and expects exactly one end
/// with `reason`.
fn lifecycle_case<V: Dim>(
    name: &str,
    action: impl FnOnce(&mut World, Entity, Entity),
    reason: EndReason,
) {
    let mut s = touching_scene::<V>(Sched::Update);
    action(s.app.world_mut(), s.a, s.b);
    run_ticks(&mut s.app, 2);
    let events = finish::<V>(&s.app);
    let mine = pair_events(&s, &events);
    assert_eq!(mine.len(), 2, "{name}: {mine:#?}");
    assert_eq!(mine[1].reason(), Some(reason), "{name}: {mine:#?}");
    assert_eq!(mine[1].tick, 1, "{name}");
}

fn lifecycle<V: Dim>() {
    lifecycle_case::<V>(
        "despawn a",
        |w, a, _| {
            w.despawn(a);
        },
        EndReason::Removed,
    );
    lifecycle_case::<V>(
        "despawn b",
        |w, _, b| {
            w.despawn(b);
        },
        EndReason::Removed,
    );
    lifecycle_case::<V>(
        "despawn both",
        |w, a, b| {
            w.despawn(a);
            w.despawn(b);
        },
        EndReason::Removed,
    );
    lifecycle_case::<V>(
        "remove Aabb",
        |w, a, _| {
            w.entity_mut(a).remove::<Aabb<V>>();
        },
        EndReason::Removed,
    );
    lifecycle_case::<V>(
        "remove BoundingSphere",
        |w, _, b| {
            w.entity_mut(b).remove::<BoundingSphere<V>>();
        },
        EndReason::Removed,
    );
    lifecycle_case::<V>(
        "disable",
        |w, a, _| {
            w.entity_mut(a).insert(Disabled);
        },
        EndReason::Removed,
    );
    lifecycle_case::<V>(
        "disable both",
        |w, a, b| {
            w.entity_mut(a).insert(Disabled);
            w.entity_mut(b).insert(Disabled);
        },
        EndReason::Removed,
    );
    lifecycle_case::<V>(
        "layers stop matching",
        |w, a, _| {
            w.entity_mut(a).insert(CollisionLayers::new(1, 0));
        },
        EndReason::LayersChanged,
    );
    lifecycle_case::<V>(
        "layers stop matching on both",
        |w, a, b| {
            w.entity_mut(a).insert(CollisionLayers::new(1, 1));
            w.entity_mut(b).insert(CollisionLayers::new(2, 2));
        },
        EndReason::LayersChanged,
    );
}

/// Disabled, then enabled again; layers off, then on again: the pair starts again, and
/// every start has its end.
fn lifecycle_comes_back<V: Dim>() {
    for (name, off, on) in [
        (
            "disabled",
            (|w: &mut World, a: Entity| {
                w.entity_mut(a).insert(Disabled);
            }) as fn(&mut World, Entity),
            (|w: &mut World, a: Entity| {
                w.entity_mut(a).remove::<Disabled>();
            }) as fn(&mut World, Entity),
        ),
        (
            "layers",
            |w: &mut World, a: Entity| {
                w.entity_mut(a).insert(CollisionLayers::NONE);
            },
            |w: &mut World, a: Entity| {
                w.entity_mut(a).insert(CollisionLayers::new(4, 4));
            },
        ),
        (
            "collider",
            |w: &mut World, a: Entity| {
                w.entity_mut(a).remove::<Aabb<V>>();
            },
            |w: &mut World, a: Entity| {
                w.entity_mut(a).insert(Aabb::new(V::splat(0.5)));
            },
        ),
    ] {
        let mut s = touching_scene::<V>(Sched::Update);
        off(s.app.world_mut(), s.a);
        run_ticks(&mut s.app, 2);
        on(s.app.world_mut(), s.a);
        run_ticks(&mut s.app, 2);
        let events = finish::<V>(&s.app);
        let mine = pair_events(&s, &events);
        let ticks: Vec<_> = mine.iter().map(|e| (e.tick, e.reason())).collect();
        let reason = if name == "layers" {
            EndReason::LayersChanged
        } else {
            EndReason::Removed
        };
        assert_eq!(
            ticks,
            vec![(0, None), (1, Some(reason)), (3, None)],
            "{name}: {mine:#?}"
        );
        assert!(
            s.app
                .world()
                .resource::<AabbTree<V>>()
                .is_touching(s.a, s.b)
        );
    }
}

/// Removing and re-inserting the collider in one frame, from outside the app and from a
/// system's commands: the pair may end and start again, but the invariant holds and the
/// tree stays valid.
fn remove_and_reinsert_same_frame<V: Dim>() {
    // From outside, between frames.
    let mut s = touching_scene::<V>(Sched::Update);
    let a = s.a;
    let mut entity = s.app.world_mut().entity_mut(a);
    entity.remove::<Aabb<V>>();
    entity.insert(Aabb::new(V::splat(0.5)));
    run_ticks(&mut s.app, 2);
    let events = finish::<V>(&s.app);
    let mine = pair_events(&s, &events);
    assert!(mine.len() == 1 || mine.len() == 3, "{mine:#?}");
    assert!(
        s.app
            .world()
            .resource::<AabbTree<V>>()
            .is_touching(s.a, s.b)
    );

    // From a system in the frame, before the pipeline; also swapping the shape kind.
    #[derive(Resource)]
    struct Target(Entity, Entity, u32);
    fn churn_once<V: Dim>(mut commands: Commands, mut target: ResMut<Target>, rec: Res<Rec>) {
        if rec.tick == target.2 {
            commands
                .entity(target.0)
                .remove::<Aabb<V>>()
                .insert(Aabb::new(V::splat(0.5)));
            commands
                .entity(target.1)
                .remove::<BoundingSphere<V>>()
                .insert(Aabb::new(V::splat(0.4)));
            target.2 += 2;
        }
    }
    let mut s = touching_scene::<V>(Sched::Update);
    s.app
        .insert_resource(Target(s.a, s.b, 1))
        .add_systems(Update, churn_once::<V>.before(collect_pre));
    run_ticks(&mut s.app, 6);
    let events = finish::<V>(&s.app);
    let mine = pair_events(&s, &events);
    assert!(mine.len() % 2 == 1, "{mine:#?}");
    assert!(
        s.app
            .world()
            .resource::<AabbTree<V>>()
            .is_touching(s.a, s.b)
    );
}

// ---------------------------------------------------------------------------------------
// Random churn: moves, jumps, despawns, removals, Disabled, layers, NaN, spawns

#[derive(Resource)]
struct Churn<V: Dim> {
    rng: Rng,
    entities: Vec<Entity>,
    broken: Vec<(Entity, Vec3)>,
    extent: f32,
    paused: bool,
    _marker: PhantomData<V>,
}

fn spawn_random<V: Dim>(world: &mut World, rng: &mut Rng, extent: f32) -> Entity {
    let t = Transform::from_translation(flat::<V>(rng.vec3(-extent, extent)));
    let mut e = world.spawn(t);
    ColliderSpec::<V>::random(rng).insert(&mut e);
    if let Some(l) = rng.layers() {
        e.insert(l);
    }
    e.id()
}

/// One frame of random changes, straight on the world (observers fire at once).
fn churn<V: Dim>(world: &mut World) {
    world.resource_scope(|world, mut st: Mut<Churn<V>>| {
        let st = &mut *st;
        if st.paused {
            return;
        }
        let extent = st.extent;
        for (e, t) in st.broken.drain(..) {
            if let Some(mut tr) = world.get_mut::<Transform>(e) {
                tr.translation = t;
            }
        }
        for &e in &st.entities {
            let step = flat::<V>(st.rng.vec3(-0.3, 0.3));
            if let Some(mut tr) = world.get_mut::<Transform>(e) {
                tr.translation =
                    (tr.translation + step).clamp(Vec3::splat(-extent), Vec3::splat(extent));
            }
        }
        for _ in 0..st.rng.below(4) {
            let op = st.rng.below(13);
            if op == 6 {
                let e = spawn_random::<V>(world, &mut st.rng, extent);
                st.entities.push(e);
                continue;
            }
            let e = st.entities[st.rng.below(st.entities.len())];
            let Ok(mut em) = world.get_entity_mut(e) else {
                continue;
            };
            let has_box = em.contains::<Aabb<V>>();
            let has_ball = em.contains::<BoundingSphere<V>>();
            match op {
                0 => em.despawn(),
                1 => {
                    em.remove::<Aabb<V>>();
                    em.remove::<BoundingSphere<V>>();
                }
                2 => {
                    if let Some(a) = em.get::<Aabb<V>>().copied() {
                        em.remove::<Aabb<V>>();
                        em.insert(a);
                    }
                    if let Some(s) = em.get::<BoundingSphere<V>>().copied() {
                        em.remove::<BoundingSphere<V>>();
                        em.insert(s);
                    }
                }
                3 => {
                    if em.contains::<Disabled>() {
                        em.remove::<Disabled>();
                    } else {
                        em.insert(Disabled);
                    }
                }
                4 => {
                    if let Some(l) = st.rng.layers() {
                        em.insert(l);
                    } else {
                        em.remove::<CollisionLayers>();
                    }
                }
                5 => {
                    let mut tr = em.get_mut::<Transform>().unwrap();
                    if tr.translation.is_finite() {
                        st.broken.push((e, tr.translation));
                        tr.translation.x = f32::NAN;
                    }
                }
                7 if !has_box && !has_ball => {
                    ColliderSpec::<V>::random(&mut st.rng).insert(&mut em);
                }
                8 if has_box => {
                    em.remove::<Aabb<V>>();
                    em.insert(BoundingSphere::<V>::new(st.rng.range(0.3, 1.5)));
                }
                8 if has_ball => {
                    em.remove::<BoundingSphere<V>>();
                    em.insert(Aabb::new(st.rng.vector::<V>(0.3, 1.5)));
                }
                9 => {
                    let to = flat::<V>(st.rng.vec3(-extent, extent));
                    em.get_mut::<Transform>().unwrap().translation = to;
                    if st.rng.chance(0.5) {
                        em.insert(Teleported);
                    }
                }
                10 if has_box => {
                    em.insert(Aabb::new(st.rng.vector::<V>(0.2, 1.5)));
                }
                10 if has_ball => {
                    em.insert(BoundingSphere::<V>::new(st.rng.range(0.2, 1.5)));
                }
                11 if has_box => {
                    // Invalid until op 10 resizes it.
                    em.insert(Aabb::new(v::<V>(-1.0, 0.5, 0.5)));
                }
                12 => {
                    em.insert(Velocity(st.rng.vector::<V>(-30.0, 30.0)));
                }
                _ => {}
            }
        }
    });
}

/// What global observers saw of the entity events: the open (entity, other) pairs, in the
/// entity's own orientation, and anything out of order.
#[derive(Resource, Default)]
struct EntityEventLog {
    open: Pairs,
    count: usize,
    errors: Vec<String>,
}

/// Global observers checking, per entity, that its starts and ends with each partner
/// alternate, starting with a start.
fn watch_entity_events(app: &mut App) {
    app.init_resource::<EntityEventLog>()
        .add_observer(
            |ev: On<CollisionStarted>, mut log: ResMut<EntityEventLog>| {
                log.count += 1;
                if ev.entity == ev.other || !log.open.insert((ev.entity, ev.other)) {
                    let e = format!("entity event out of order: {:?}", *ev);
                    log.errors.push(e);
                }
            },
        )
        .add_observer(|ev: On<CollisionEnded>, mut log: ResMut<EntityEventLog>| {
            log.count += 1;
            if !log.open.remove(&(ev.entity, ev.other)) {
                let e = format!("entity event out of order: {:?}", *ev);
                log.errors.push(e);
            }
        });
}

/// After [`watch_entity_events`]: no errors, and the pairs open for entities that still
/// exist are the touching pairs, in both orientations.
fn check_entity_events<V: Dim>(app: &App) {
    let log = app.world().resource::<EntityEventLog>();
    assert!(log.errors.is_empty(), "{:#?}", log.errors);
    let open: Pairs = log
        .open
        .iter()
        .filter(|(e, _)| app.world().get_entity(*e).is_ok())
        .copied()
        .collect();
    let touching: Pairs = app
        .world()
        .resource::<AabbTree<V>>()
        .touching_pairs()
        .flat_map(|(a, b)| [(a, b), (b, a)])
        .collect();
    assert_eq!(
        open, touching,
        "entity events: open pairs are not the touching pairs"
    );
}

fn churn_run<V: Dim>(sched: Sched, fixed_hz: f64, seed: u64, frames: u32) -> Vec<Ev> {
    let mut app = build_app::<V>(sched, fixed_hz, CollisionConfig::default());
    let mut rng = Rng::new(seed);
    let extent = if V::DIM == 2 { 6.0 } else { 3.5 };
    let entities = (0..30)
        .map(|_| spawn_random::<V>(app.world_mut(), &mut rng, extent))
        .collect();
    app.insert_resource(Churn::<V> {
        rng,
        entities,
        broken: Vec::new(),
        extent,
        paused: false,
        _marker: PhantomData,
    });
    match sched {
        Sched::Update => app.add_systems(Update, churn::<V>.before(collect_pre)),
        Sched::Fixed => app.add_systems(Update, churn::<V>),
    };
    for _ in 0..frames {
        app.update();
    }
    // Changes since the last tick are read at the next one.
    app.world_mut().resource_mut::<Churn<V>>().paused = true;
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    assert!(app.world().resource::<EntityEventLog>().count > events.len());
    let count = |r: EndReason| events.iter().filter(|e| e.reason() == Some(r)).count();
    for r in [
        EndReason::Separated,
        EndReason::Removed,
        EndReason::LayersChanged,
        EndReason::Invalid,
    ] {
        assert!(count(r) > 0, "no {r:?} in {} events", events.len());
    }
    events
}

/// Random lifecycle churn with sweeps on: touching pairs equal brute force after every
/// tick, every start has one end, the tree stays valid; and it is deterministic.
fn churn_update<V: Dim>() {
    let a = churn_run::<V>(Sched::Update, 60.0, 5, 300);
    let b = churn_run::<V>(Sched::Update, 60.0, 5, 300);
    assert_eq!(a, b);
}

/// The same with the default schedule at 20 Hz, the churn in `Update` at 60 Hz: most
/// changes land on frames without a fixed tick.
fn churn_slow_fixed<V: Dim>() {
    churn_run::<V>(Sched::Fixed, 20.0, 6, 450);
}

// ---------------------------------------------------------------------------------------
// Schedules

/// Item 4: with a fixed tick every third frame, an entity despawned in `Update` on a frame
/// without a fixed tick still ends its pair exactly once (read at the next fixed tick).
fn despawn_on_frame_without_fixed_tick<V: Dim>() {
    #[derive(Resource)]
    struct Quiet {
        target: Entity,
        last_tick: Option<u32>,
        done_at: Option<u32>,
    }
    fn despawn_when_quiet(mut q: ResMut<Quiet>, rec: Res<Rec>, mut commands: Commands) {
        if q.done_at.is_none() && rec.tick >= 2 && q.last_tick == Some(rec.tick) {
            commands.entity(q.target).despawn();
            q.done_at = Some(rec.tick);
        }
        q.last_tick = Some(rec.tick);
    }
    for despawn_a in [true, false] {
        let mut app = build_app::<V>(Sched::Fixed, 20.0, CollisionConfig::default());
        let a = app
            .world_mut()
            .spawn((Transform::default(), Aabb::new(V::splat(0.5))))
            .id();
        let b = app
            .world_mut()
            .spawn((
                Transform::from_xyz(0.5, 0.5, 0.0),
                BoundingSphere::<V>::new(0.5),
            ))
            .id();
        let target = if despawn_a { a } else { b };
        app.insert_resource(Quiet {
            target,
            last_tick: None,
            done_at: None,
        })
        .add_systems(Update, despawn_when_quiet);
        run_ticks(&mut app, 5);
        let done_at = app.world().resource::<Quiet>().done_at.expect("despawned");
        let events = finish::<V>(&app);
        assert_eq!(events.len(), 2, "{events:#?}");
        assert_eq!(events[0].tick, 0);
        assert_eq!(events[1].pair(), key(a, b));
        assert_eq!(events[1].reason(), Some(EndReason::Removed));
        // Despawned after tick `done_at - 1`, read before tick `done_at`.
        assert_eq!(events[1].tick, done_at);
        assert_eq!(app.world().resource::<AabbTree<V>>().tree().len(), 1);
    }
}

/// Item 4: an entity moved in `FixedUpdate` is tested where it is now, not where
/// `GlobalTransform` (propagated in `PostUpdate`) last put it.
fn moved_in_fixed_update_same_tick<V: Dim>() {
    let mut app = build_app::<V>(Sched::Fixed, 20.0, CollisionConfig::default());
    app.world_mut()
        .spawn((Transform::default(), Aabb::new(V::splat(0.5))));
    let mover = app
        .world_mut()
        .spawn((Transform::from_xyz(5.0, 0.0, 0.0), Aabb::new(V::splat(0.5))))
        .id();
    let xs = [5.0, 5.0, 5.0, 0.8, 0.8, 0.8, 5.0, 5.0, 5.0];
    app.insert_resource(Script {
        entities: vec![mover],
        frames: xs
            .iter()
            .map(|&x| vec![Transform::from_xyz(x, 0.0, 0.0)])
            .collect(),
    });
    run_ticks(&mut app, xs.len() as u32);
    let events = finish::<V>(&app);
    let ticks: Vec<_> = events.iter().map(|e| (e.tick, e.reason())).collect();
    assert_eq!(ticks, vec![(3, None), (6, Some(EndReason::Separated))]);
    // Swept from 5 to 0.8 within tick 3: the faces at 4.5 and 0.5 meet at 4 / 4.2.
    assert_close(events[0].toi().unwrap(), 4.0 / 4.2, 1e-4, "time of impact");
}

/// Item 4: a child (rotated 90° and scaled 2 by its parent) whose parent moves in
/// `FixedUpdate` is tested at its new world place in the same tick.
fn child_follows_parent<V: Dim>() {
    let mut app = build_app::<V>(Sched::Fixed, 20.0, CollisionConfig::default());
    app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
    let wall = app
        .world_mut()
        .spawn((Transform::default(), Aabb::new(V::splat(0.5))))
        .id();
    let parent_transform = |x: f32| {
        Transform::from_xyz(x, -2.0, 0.0)
            .with_rotation(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2))
            .with_scale(Vec3::splat(2.0))
    };
    let parent = app.world_mut().spawn(parent_transform(-5.0)).id();
    // Local center (1, 0, 0) -> world (x, 0, 0); local half (0.5, 0.25, 0.5) scaled by 2
    // and turned 90° about z -> world half (0.5, 1, 1).
    let child = app
        .world_mut()
        .spawn((
            Transform::from_xyz(1.0, 0.0, 0.0),
            Aabb::new(v::<V>(0.5, 0.25, 0.5)),
            ChildOf(parent),
        ))
        .id();
    // Touching while |x| <= 0.5 + 0.5.
    let xs = [-5.0, -3.0, -1.5, -0.9, 0.0, 0.9, 1.5, 3.0];
    app.insert_resource(Script {
        entities: vec![parent],
        frames: xs.iter().map(|&x| vec![parent_transform(x)]).collect(),
    });
    run_ticks(&mut app, xs.len() as u32);
    let events = finish::<V>(&app);
    let ticks: Vec<_> = events
        .iter()
        .map(|e| (e.tick, e.pair(), e.reason()))
        .collect();
    assert_eq!(
        ticks,
        vec![
            (3, key(wall, child), None),
            (6, key(wall, child), Some(EndReason::Separated))
        ]
    );
    let world_box = app
        .world()
        .get::<TrackedCollider<V>>(child)
        .unwrap()
        .world_aabb();
    let expected =
        BoundingBox::from_center_half_extents(v::<V>(3.0, 0.0, 0.0), v::<V>(0.5, 1.0, 1.0));
    let error = (world_box.min - expected.min)
        .abs()
        .max((world_box.max - expected.max).abs());
    assert!(error.max_element() < 1e-5, "{world_box:?} vs {expected:?}");
}

// ---------------------------------------------------------------------------------------
// Observers

#[derive(Resource, Default)]
struct ObsLog(Vec<(&'static str, bool, Entity, Entity, Vec3)>);

fn observers<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    app.init_resource::<ObsLog>()
        .add_observer(|ev: On<CollisionStarted>, mut log: ResMut<ObsLog>| {
            log.0.push(("global", true, ev.entity, ev.other, ev.normal));
        })
        .add_observer(|ev: On<CollisionEnded>, mut log: ResMut<ObsLog>| {
            log.0
                .push(("global", false, ev.entity, ev.other, Vec3::ZERO));
        });
    let mut spawn_observed = |name: &'static str, x: f32| {
        app.world_mut()
            .spawn((Transform::from_xyz(x, 0.0, 0.0), Aabb::new(V::splat(0.5))))
            .observe(move |ev: On<CollisionStarted>, mut log: ResMut<ObsLog>| {
                log.0.push((name, true, ev.entity, ev.other, ev.normal));
            })
            .observe(move |ev: On<CollisionEnded>, mut log: ResMut<ObsLog>| {
                log.0.push((name, false, ev.entity, ev.other, Vec3::ZERO));
            })
            .id()
    };
    let a = spawn_observed("a", 0.0);
    let b = spawn_observed("b", 0.8);
    let take = |app: &mut App| {
        let mut log = std::mem::take(&mut app.world_mut().resource_mut::<ObsLog>().0);
        log.sort_by_key(|(name, started, e, o, _)| (*name, *started, *e, *o));
        log
    };

    run_ticks(&mut app, 1);
    let log = take(&mut app);
    let seen: Vec<_> = log.iter().map(|&(n, s, e, o, _)| (n, s, e, o)).collect();
    let mut expected = vec![
        ("a", true, a, b),
        ("b", true, b, a),
        ("global", true, a, b),
        ("global", true, b, a),
    ];
    expected.sort();
    assert_eq!(seen, expected);
    // The normal points from the observed entity towards the other: +x for a.
    assert!((log[0].4 - Vec3::X).length() < 1e-5, "{log:?}");
    assert!((log[1].4 + Vec3::X).length() < 1e-5, "{log:?}");

    set_translation(&mut app, b, Vec3::new(5.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let seen: Vec<_> = take(&mut app)
        .iter()
        .map(|&(n, s, e, o, _)| (n, s, e, o))
        .collect();
    let mut expected = vec![
        ("a", false, a, b),
        ("b", false, b, a),
        ("global", false, a, b),
        ("global", false, b, a),
    ];
    expected.sort();
    assert_eq!(seen, expected);

    // Touching again, then `a` is despawned: `b` hears of it, `a` no longer exists.
    set_translation(&mut app, b, Vec3::new(0.8, 0.0, 0.0));
    run_ticks(&mut app, 1);
    take(&mut app);
    app.world_mut().despawn(a);
    run_ticks(&mut app, 1);
    let seen: Vec<_> = take(&mut app)
        .iter()
        .map(|&(n, s, e, o, _)| (n, s, e, o))
        .collect();
    assert_eq!(seen, vec![("b", false, b, a), ("global", false, b, a)]);
    finish::<V>(&app);
}

/// A user system ordered between the narrow phase and the events despawns an entity whose
/// pair started this tick: the partner's observers see the start, then the end, never an
/// end before its start.
fn despawn_between_narrow_phase_and_events<V: Dim>() {
    #[derive(Resource)]
    struct Doomed(Entity, u32);
    fn despawn_doomed(doomed: Res<Doomed>, rec: Res<Rec>, mut commands: Commands) {
        if rec.tick == doomed.1 {
            commands.entity(doomed.0).despawn();
        }
    }
    for pass_through in [false, true] {
        let mut app = update_app::<V>(Sched::Update);
        app.init_resource::<ObsLog>()
            .add_observer(|ev: On<CollisionStarted>, mut log: ResMut<ObsLog>| {
                log.0.push(("global", true, ev.entity, ev.other, ev.normal));
            })
            .add_observer(|ev: On<CollisionEnded>, mut log: ResMut<ObsLog>| {
                log.0
                    .push(("global", false, ev.entity, ev.other, Vec3::ZERO));
            });
        let a = app
            .world_mut()
            .spawn((
                Transform::from_xyz(-5.0, 0.0, 0.0),
                Aabb::new(V::splat(0.5)),
            ))
            .id();
        let b = app
            .world_mut()
            .spawn((Transform::from_xyz(0.0, 0.0, 0.0), Aabb::new(V::splat(0.5))))
            .id();
        app.insert_resource(Doomed(a, 1)).add_systems(
            Update,
            despawn_doomed
                .after(CollisionSystems::NarrowPhase)
                .before(CollisionSystems::Events),
        );
        run_ticks(&mut app, 1);
        let to = if pass_through { 5.0 } else { -0.8 };
        set_translation(&mut app, a, Vec3::new(to, 0.0, 0.0));
        run_ticks(&mut app, 2);
        let events = finish::<V>(&app);
        assert_eq!(events.len(), 2, "{events:#?}");
        let log: Vec<_> = app
            .world()
            .resource::<ObsLog>()
            .0
            .iter()
            .map(|&(_, started, e, o, _)| (started, e, o))
            .collect();
        // `a` is gone by the time the events are triggered: only `b` hears.
        assert_eq!(
            log,
            vec![(true, b, a), (false, b, a)],
            "pass-through {pass_through}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Rays and filters of the oracles

fn ray_box(o: Vec3, d: Vec3, min: Vec3, max: Vec3, max_t: f32) -> Option<f32> {
    let (mut lo, mut hi) = (0.0f32, max_t);
    for i in 0..3 {
        if d[i] == 0.0 {
            if o[i] < min[i] || o[i] > max[i] {
                return None;
            }
        } else {
            let t0 = (min[i] - o[i]) / d[i];
            let t1 = (max[i] - o[i]) / d[i];
            lo = lo.max(t0.min(t1));
            hi = hi.min(t0.max(t1));
        }
    }
    (lo <= hi).then_some(lo)
}

fn ray_ball(o: Vec3, d: Vec3, center: Vec3, radius: f32, max_t: f32) -> Option<f32> {
    let m = o - center;
    let c = m.length_squared() - radius * radius;
    if c <= 0.0 {
        return Some(0.0);
    }
    let a = d.length_squared();
    if a == 0.0 {
        return None;
    }
    let b = 2.0 * m.dot(d);
    let disc = b * b - 4.0 * a * c;
    if disc < 0.0 {
        return None;
    }
    let t = (-b - disc.sqrt()) / (2.0 * a);
    (t >= 0.0 && t <= max_t).then_some(t)
}

fn accepts(layers: Option<CollisionLayers>, e: Entity, filter: &QueryFilter) -> bool {
    layers.map_or(u32::MAX, |l| l.memberships) & filter.mask != 0 && !filter.excluded.contains(&e)
}

fn random_filter(rng: &mut Rng, entities: &[Entity]) -> QueryFilter {
    let mut filter = QueryFilter::default();
    if rng.chance(0.5) {
        filter = filter.with_mask(rng.below(8) as u32);
    }
    let excluded: Vec<Entity> = (0..rng.below(4))
        .map(|_| entities[rng.below(entities.len())])
        .collect();
    filter.excluding(excluded)
}

// ---------------------------------------------------------------------------------------
// Spatial queries against the f64 oracle
//
// Every query of `SpatialQuery` on random scenes (rotated, scaled, offset colliders with
// layers), with random filters, directions of random length (zero, tiny, about one, huge)
// and random ranges (zero, finite, infinite). The oracle (`common/oracle.rs`) computes in
// `f64` with its own formulas and brackets each answer with a tolerance `QUERY_EPS`: what a
// query must return is what it reaches with every target shrunk by the tolerance; what it
// returns must be within the tolerance of touching. Each result's `t`, `point` and
// `normal` are checked, and the cases the bracket leaves open are counted and bounded.

#[path = "common/oracle.rs"]
mod oracle;
use bevy::math::DVec3;
use oracle::{Solid, first_contact, random_direction, random_max_t, ray_entry, surface_normals};

/// The oracle's distance tolerance (world units; the scenes span tens of units).
const QUERY_EPS: f64 = 1e-3;

fn solid(s: &OShape) -> Solid {
    match *s {
        OShape::Box { min, max } => Solid::Box {
            min: min.as_dvec3(),
            max: max.as_dvec3(),
        },
        OShape::Ball { center, radius } => Solid::Ball {
            center: center.as_dvec3(),
            radius: f64::from(radius),
        },
    }
}

fn dvec<V: Dim>(p: V) -> DVec3 {
    p.extend_to_3d().as_dvec3()
}

/// How many results each kind of query was checked on, and the open cases.
#[derive(Debug, Default)]
struct QueryChecks {
    hits: BTreeMap<&'static str, usize>,
    normals: usize,
    open: usize,
    decided: usize,
}

/// A moving box (`half` zero for a ray) and what it is checked against.
struct Sweep<'a> {
    what: &'a str,
    kind: &'static str,
    origin: DVec3,
    half: DVec3,
    direction: DVec3,
    max_t: f64,
    candidates: &'a [(Entity, Solid)],
}

impl Sweep<'_> {
    /// First contact with `s` within the range: the ray's own slab test or quadratic, the
    /// box's first-contact search.
    fn first(&self, s: Solid) -> Option<f64> {
        if self.half == DVec3::ZERO {
            ray_entry(self.origin, self.direction, s, self.max_t)
        } else {
            first_contact(self.origin, self.half, self.direction, s, self.max_t, 0.0)
        }
    }

    /// The candidates a query must reach, with the parameter at which it certainly does.
    fn certain(&self) -> Vec<(Entity, f64)> {
        self.candidates
            .iter()
            .filter_map(|(e, s)| Some((*e, self.first(s.shrunk(QUERY_EPS))?)))
            .collect()
    }

    /// One returned hit: a candidate, in range, touching its target at `t` (within the
    /// tolerance), not later than where the target's shrunk shape is reached; `point` the
    /// moving center at `t`; `normal` zero when the sweep starts inside, else the outward
    /// normal of the surface touched.
    fn check_hit<V: Dim>(&self, hit: &ShapeHit<V>, checks: &mut QueryChecks) {
        let what = format!("{} {}: {hit:?}", self.kind, self.what);
        let Some((_, s)) = self.candidates.iter().find(|(e, _)| *e == hit.entity) else {
            panic!("{what}: not a candidate (filtered out or no valid shape)");
        };
        let s = *s;
        let t = f64::from(hit.t);
        assert!(t >= 0.0 && t <= self.max_t, "{what}: t out of range");
        let center = self.origin + self.direction * t;
        let gap = s.distance_to_box(center, self.half);
        assert!(gap <= QUERY_EPS, "{what}: {gap} away from its target at t");
        if let Some(sure) = self.first(s.shrunk(QUERY_EPS)) {
            assert!(t <= sure * (1.0 + 1e-6), "{what}: later than {sure}");
        }
        let scale = 1.0 + self.origin.length() + (self.direction * t).length();
        assert!(
            dvec(hit.point).distance(center) <= 1e-5 * scale,
            "{what}: point, the oracle's {center}"
        );
        let normal = dvec(hit.normal);
        if s.shrunk(QUERY_EPS).distance_to_box(self.origin, self.half) == 0.0 {
            assert_eq!(t, 0.0, "{what}: starts inside");
            assert_eq!(normal, DVec3::ZERO, "{what}: starts inside, zero normal");
        } else if s.distance_to_box(self.origin, self.half) > QUERY_EPS {
            // Box targets: the moving center lies on a face of the target grown by the
            // moving box (their Minkowski sum). Balls: the radial direction at the point of
            // the moving box closest to the center.
            let want = match s {
                Solid::Box { min, max } => surface_normals(
                    Solid::Box {
                        min: min - self.half,
                        max: max + self.half,
                    },
                    center,
                    2.0 * QUERY_EPS,
                ),
                Solid::Ball { center: c, .. } => {
                    surface_normals(s, c.clamp(center - self.half, center + self.half), 0.0)
                }
            };
            assert!(
                want.iter().any(|n| n.distance(normal) <= 1e-2
                    && n.dot(self.direction) <= 1e-6 * self.direction.length()),
                "{what}: normal, the oracle's {want:?} (target {s:?})"
            );
            checks.normals += 1;
        } else {
            checks.open += 1;
        }
        *checks.hits.entry(self.kind).or_default() += 1;
    }

    /// The closest hit: none only when no candidate is certainly reached; else a valid
    /// hit no later than any candidate's certain contact.
    fn check_closest<V: Dim>(&self, got: Option<ShapeHit<V>>, checks: &mut QueryChecks) {
        let certain = self.certain();
        match got {
            None => assert!(
                certain.is_empty(),
                "{} {}: missed {certain:?}",
                self.kind,
                self.what
            ),
            Some(hit) => {
                self.check_hit(&hit, checks);
                let t = f64::from(hit.t);
                for (e, sure) in &certain {
                    assert!(
                        t <= sure * (1.0 + 1e-6),
                        "{} {}: {hit:?}, but {e} is reached at {sure}",
                        self.kind,
                        self.what
                    );
                }
            }
        }
    }

    /// Every hit: each a valid hit, once, nearest first, and every candidate certainly
    /// reached among them.
    fn check_all<V: Dim>(&self, hits: &[ShapeHit<V>], checks: &mut QueryChecks) {
        for hit in hits {
            self.check_hit(hit, checks);
        }
        let got: BTreeSet<Entity> = hits.iter().map(|h| h.entity).collect();
        assert_eq!(
            got.len(),
            hits.len(),
            "{} {}: duplicates",
            self.kind,
            self.what
        );
        assert!(
            hits.windows(2).all(|w| w[0].t <= w[1].t),
            "{} {}: nearest first",
            self.kind,
            self.what
        );
        for (e, sure) in self.certain() {
            assert!(
                got.contains(&e),
                "{} {}: {e} reached at {sure} is missing from {hits:?}",
                self.kind,
                self.what
            );
        }
    }
}

/// An overlap query's answer: every candidate certainly overlapped (`distance` to its
/// shrunk shape within `reach - QUERY_EPS`, or zero), none further than `reach +
/// QUERY_EPS`; the rest are open and counted.
fn check_overlaps(
    what: &str,
    got: &[Entity],
    candidates: &[(Entity, Solid)],
    distance: impl Fn(Solid) -> f64,
    reach: f64,
    checks: &mut QueryChecks,
    kind: &'static str,
) {
    let set: BTreeSet<Entity> = got.iter().copied().collect();
    assert_eq!(set.len(), got.len(), "{kind} {what}: duplicates");
    for e in &set {
        assert!(
            candidates.iter().any(|(c, _)| c == e),
            "{kind} {what}: {e} is not a candidate"
        );
    }
    for (e, s) in candidates {
        let certain = distance(s.shrunk(QUERY_EPS)) <= (reach - QUERY_EPS).max(0.0);
        let outside = distance(*s) > reach + QUERY_EPS;
        if certain {
            assert!(set.contains(e), "{kind} {what}: {e} ({s:?}) missing");
            checks.decided += 1;
        } else if outside {
            assert!(!set.contains(e), "{kind} {what}: {e} ({s:?}) is too far");
            checks.decided += 1;
        } else {
            checks.open += 1;
        }
    }
    *checks.hits.entry(kind).or_default() += set.len();
}

fn spatial_query_oracle<V: Dim>() {
    let mut checks = QueryChecks::default();
    for seed in [1234, 99] {
        spatial_query_oracle_scene::<V>(seed, &mut checks);
    }
    // The open cases (within the tolerance of touching, where either answer is right)
    // stay rare: at most one per hundred results.
    let open_limit = checks.hits.values().sum::<usize>() / 100;
    assert!(
        checks.hits.len() == 6
            && checks.hits.values().all(|&c| c > 250)
            && checks.normals > 1000
            && checks.open <= open_limit,
        "too few checks, or too many cases left open: {checks:?}"
    );
    eprintln!("{checks:?}");
}

fn spatial_query_oracle_scene<V: Dim>(seed: u64, checks: &mut QueryChecks) {
    let scene = random_scene::<V>(seed, 40, 80);
    let mut app = update_app::<V>(Sched::Update);
    let entities = spawn_scene(&mut app, &scene);
    let mut rng = Rng::new(seed ^ 0x5EED);
    let extent = if V::DIM == 2 { 12.0 } else { 8.0 };
    for round in 0..4 {
        run_ticks(&mut app, if round == 0 { 1 } else { 20 });
        let world = app.world_mut();
        let mut q = world.query::<OracleItem<V>>();
        let shapes = oracle_world(q.iter(world));
        assert_eq!(shapes.len(), entities.len());
        let mut state: SystemState<SpatialQuery<V>> = SystemState::new(world);
        let query = state.get(world).unwrap();
        for i in 0..400 {
            let filter = random_filter(&mut rng, &entities);
            let candidates: Vec<(Entity, Solid)> = shapes
                .iter()
                .filter(|(e, _, l)| accepts(*l, *e, &filter))
                .map(|(e, s, _)| (*e, solid(s)))
                .collect();
            let origin: V = rng.vector(-extent, extent);
            let mut unit = || f64::from(rng.unit());
            let d = random_direction(&mut unit, V::DIM);
            let max_t = random_max_t(&mut unit, d.length(), 30.0);
            let direction: V = V::truncate_from_3d(d.as_vec3());
            let max_t32 = max_t as f32;
            let what = format!(
                "seed {seed} round {round} query {i}: origin {origin:?} direction {direction:?} max_t {max_t32} {filter:?}"
            );
            let mut sweep = Sweep {
                what: &what,
                kind: "cast_ray",
                origin: dvec(origin),
                half: DVec3::ZERO,
                direction: dvec(direction),
                max_t: f64::from(max_t32),
                candidates: &candidates,
            };

            // Rays.
            let ray = Ray::new(origin, direction);
            sweep.check_closest(query.cast_ray(&ray, max_t32, &filter), checks);
            sweep.kind = "ray_hits";
            sweep.check_all(&query.ray_hits(&ray, max_t32, &filter), checks);

            // Box cast: the box from its corners, which the oracle reads exactly.
            let half: V = if rng.chance(0.05) {
                V::ZERO
            } else {
                rng.vector(0.05, 1.0)
            };
            let cast = BoundingBox::from_min_max(origin - half, origin + half);
            sweep.kind = "cast_box";
            sweep.origin = (dvec(cast.min) + dvec(cast.max)) * 0.5;
            sweep.half = (dvec(cast.max) - dvec(cast.min)) * 0.5;
            if sweep.half == DVec3::ZERO {
                // The ray oracle is the right one for a point, but test the search too.
                sweep.half = DVec3::splat(1e-300);
            }
            sweep.check_closest(query.cast_box(&cast, direction, max_t32, &filter), checks);

            // Point.
            let p = dvec(origin);
            let got = query.point(origin, &filter);
            check_overlaps(
                &what,
                &got,
                &candidates,
                |s| s.distance_to_point(p),
                0.0,
                checks,
                "point",
            );

            // Box.
            let half: V = rng.vector(0.0, 3.0);
            let area = BoundingBox::from_min_max(origin - half, origin + half);
            let (c, h) = (
                (dvec(area.min) + dvec(area.max)) * 0.5,
                (dvec(area.max) - dvec(area.min)) * 0.5,
            );
            let got = query.aabb(&area, &filter);
            check_overlaps(
                &what,
                &got,
                &candidates,
                |s| s.distance_to_box(c, h),
                0.0,
                checks,
                "aabb",
            );

            // Sphere.
            let radius = rng.range(0.0, 3.0);
            let got = query.sphere(origin, radius, &filter);
            check_overlaps(
                &what,
                &got,
                &candidates,
                |s| s.distance_to_point(p),
                f64::from(radius),
                checks,
                "sphere",
            );
        }
    }
    finish::<V>(&app);
}

// ---------------------------------------------------------------------------------------
// Bad input

/// Item 8: a NaN translation for one tick ends the entity's pairs (`Invalid`), leaves it
/// out of the tree; repaired, it comes back; the other pairs never notice.
/// Finite values whose fat box overflows (a collider near the edge of `f32`'s range with
/// a velocity that carries its fat box past it): the collider is left out, no proxy is
/// left behind in the tree, tick after tick, and a bystander's contacts go on.
fn fat_box_overflow<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let world = app.world_mut();
    let a = world
        .spawn((Transform::default(), Aabb::new(V::splat(0.5))))
        .id();
    let b = world
        .spawn((Transform::from_xyz(0.8, 0.0, 0.0), Aabb::new(V::splat(0.5))))
        .id();
    // Spawned once the time step is known, so that its first fat box already overflows.
    run_ticks(&mut app, 1);
    let edge = app
        .world_mut()
        .spawn((
            Transform::from_xyz(3.39e38, 0.0, 0.0),
            Aabb::new(V::splat(1e36)),
            Velocity(V::truncate_from_3d(Vec3::X * 1e37)),
        ))
        .id();
    for _ in 0..5 {
        run_ticks(&mut app, 1);
        let tree = app.world().resource::<AabbTree<V>>();
        assert_eq!(tree.tree().len(), 2, "a proxy was left behind");
        tree.tree().validate().unwrap();
    }
    let tracked = app.world().get::<TrackedCollider<V>>(edge).unwrap();
    assert!(tracked.proxy().is_none());
    let state = app.world().resource::<AabbTree<V>>();
    assert_eq!(tracked.fat_aabb(state), None);
    let held = app.world().get::<TrackedCollider<V>>(a).unwrap();
    let fat = held.fat_aabb(state).expect("a is in the tree");
    // Still, with no velocity: the tight box grown by the default margin.
    let expected = held.world_aabb().grown(CollisionConfig::default().margin);
    for (got, want) in [(fat.min, expected.min), (fat.max, expected.max)] {
        let error = (got - want).extend_to_3d().abs().max_element();
        assert!(error < 1e-6, "fat box {fat:?}, expected {expected:?}");
    }
    let events = finish::<V>(&app);
    assert!(events.iter().all(|e| e.entity != edge && e.other != edge));
    assert!(
        events.iter().any(|e| e.pair() == key(a, b)),
        "the bystanders' contact is missing: {events:?}"
    );
}

/// `CollisionConfig::move_cache` reaches the tree: turned off, the tree frees the copy
/// and stays valid, a contact made while it is off starts and ends on time, and turned
/// back on, the fat boxes read through the cache are those of the tree.
fn move_cache_config<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let world = app.world_mut();
    let a = world
        .spawn((Transform::default(), Aabb::new(V::splat(0.5))))
        .id();
    let b = world
        .spawn((Transform::from_xyz(5.0, 0.0, 0.0), Aabb::new(V::splat(0.5))))
        .id();
    run_ticks(&mut app, 1);
    let tree = app.world().resource::<AabbTree<V>>().tree();
    assert!(tree.move_cache(), "on by default");
    let with_cache = tree.stats().bytes;

    app.world_mut().resource_mut::<CollisionConfig>().move_cache = false;
    run_ticks(&mut app, 1);
    let tree = app.world().resource::<AabbTree<V>>().tree();
    assert!(!tree.move_cache());
    assert!(tree.stats().bytes < with_cache, "the copy was not freed");
    tree.validate().unwrap();
    set_translation(&mut app, b, Vec3::new(0.8, 0.0, 0.0));
    run_ticks(&mut app, 1);
    set_translation(&mut app, b, Vec3::new(3.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    app.world()
        .resource::<AabbTree<V>>()
        .tree()
        .validate()
        .unwrap();

    app.world_mut().resource_mut::<CollisionConfig>().move_cache = true;
    set_translation(&mut app, b, Vec3::new(0.9, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let state = app.world().resource::<AabbTree<V>>();
    assert!(state.tree().move_cache());
    state.tree().validate().unwrap();
    for e in [a, b] {
        let tracked = app.world().get::<TrackedCollider<V>>(e).unwrap();
        let fat = tracked.fat_aabb(state).unwrap();
        let node = state
            .tree()
            .node(state.tree().leaf(tracked.proxy().unwrap()).unwrap());
        assert_eq!(Some(fat), node.map(|n| n.aabb));
        assert!(fat.contains(&tracked.world_aabb()));
    }
    // Started at tick 2 (cache off), ended at tick 3, started again at tick 4 (back on).
    let log = pair_log(&finish::<V>(&app), a, b);
    assert_eq!(
        log,
        vec![(2, None), (3, Some(EndReason::Separated)), (4, None)]
    );
}

fn nan_translation<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let world = app.world_mut();
    let a = world
        .spawn((Transform::default(), Aabb::new(V::splat(0.5))))
        .id();
    let b = world
        .spawn((Transform::from_xyz(0.8, 0.0, 0.0), Aabb::new(V::splat(0.5))))
        .id();
    let c = world
        .spawn((
            Transform::from_xyz(-0.8, 0.0, 0.0),
            BoundingSphere::<V>::new(0.5),
        ))
        .id();
    let d = world
        .spawn((
            Transform::from_xyz(20.0, 0.0, 0.0),
            Aabb::new(V::splat(0.5)),
        ))
        .id();
    let e = world
        .spawn((
            Transform::from_xyz(20.5, 0.0, 0.0),
            Aabb::new(V::splat(0.5)),
        ))
        .id();
    run_ticks(&mut app, 1);
    set_translation(&mut app, a, Vec3::new(f32::NAN, 0.0, 0.0));
    run_ticks(&mut app, 1);
    assert_eq!(
        app.world().get::<TrackedCollider<V>>(a).unwrap().proxy(),
        None
    );
    assert_eq!(app.world().resource::<AabbTree<V>>().tree().len(), 4);
    set_translation(&mut app, a, Vec3::ZERO);
    run_ticks(&mut app, 2);
    let events = finish::<V>(&app);
    // `EndReason` is not `Ord`: compare by discriminant.
    let by_tick = |t: u32| -> BTreeSet<((Entity, Entity), Option<u8>)> {
        events
            .iter()
            .filter(|e| e.tick == t)
            .map(|e| (e.pair(), e.reason().map(|r| r as u8)))
            .collect()
    };
    let invalid = Some(EndReason::Invalid as u8);
    assert_eq!(
        by_tick(0),
        BTreeSet::from([(key(a, b), None), (key(a, c), None), (key(d, e), None)])
    );
    assert_eq!(
        by_tick(1),
        BTreeSet::from([(key(a, b), invalid), (key(a, c), invalid)])
    );
    assert_eq!(
        by_tick(2),
        BTreeSet::from([(key(a, b), None), (key(a, c), None)])
    );
    assert_eq!(events.len(), 7, "{events:#?}");
    assert!(
        app.world()
            .get::<TrackedCollider<V>>(a)
            .unwrap()
            .proxy()
            .is_some()
    );
}

type Mutation = Box<dyn Fn(&mut EntityWorldMut)>;

/// Other bad values, each for one tick then repaired: invalid ones end the pairs with
/// `Invalid` and come back; huge but finite values must not panic or corrupt the tree.
fn other_bad_input<V: Dim>() {
    let translation = |t: Vec3| -> Mutation {
        Box::new(move |e| e.get_mut::<Transform>().unwrap().translation = t)
    };
    // The new shape goes in before the box leaves, so the entity stays a collider.
    let bad_radius = |r: f32| -> Mutation {
        Box::new(move |e| {
            e.insert(BoundingSphere::<V>::new(r)).remove::<Aabb<V>>();
        })
    };
    let cases: Vec<(&str, Mutation, bool)> = vec![
        ("NaN y", translation(Vec3::new(0.0, f32::NAN, 0.0)), true),
        (
            "inf x",
            translation(Vec3::new(f32::INFINITY, 0.0, 0.0)),
            true,
        ),
        (
            "inf scale",
            Box::new(|e| e.get_mut::<Transform>().unwrap().scale = Vec3::splat(f32::INFINITY)),
            true,
        ),
        (
            "NaN rotation",
            Box::new(|e| {
                e.get_mut::<Transform>().unwrap().rotation =
                    Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0)
            }),
            true,
        ),
        (
            "negative half extents",
            Box::new(|e| {
                e.insert(Aabb::new(v::<V>(-0.5, 0.5, 0.5)));
            }),
            true,
        ),
        (
            "NaN offset",
            Box::new(|e| {
                e.insert(Aabb::new(V::splat(0.5)).with_offset(V::splat(f32::NAN)));
            }),
            true,
        ),
        (
            "NaN velocity",
            Box::new(|e| {
                e.insert(Velocity(V::splat(f32::NAN)));
            }),
            true,
        ),
        (
            "infinite velocity",
            Box::new(|e| {
                e.insert(Velocity(V::splat(f32::INFINITY)));
            }),
            true,
        ),
        (
            "NaN scale",
            Box::new(|e| e.get_mut::<Transform>().unwrap().scale = Vec3::new(1.0, f32::NAN, 1.0)),
            true,
        ),
        (
            "garbage transform",
            Box::new(|e| {
                *e.get_mut::<Transform>().unwrap() = Transform {
                    translation: Vec3::NAN,
                    rotation: Quat::from_xyzw(f32::NAN, f32::INFINITY, 0.0, -0.0),
                    scale: Vec3::NEG_INFINITY,
                }
            }),
            true,
        ),
        (
            "NaN half extents",
            Box::new(|e| {
                e.insert(Aabb::new(V::splat(f32::NAN)));
            }),
            true,
        ),
        (
            "infinite half extents",
            Box::new(|e| {
                e.insert(Aabb::new(V::splat(f32::INFINITY)));
            }),
            true,
        ),
        ("NaN radius", bad_radius(f32::NAN), true),
        ("negative radius", bad_radius(-1.0), true),
        ("infinite radius", bad_radius(f32::INFINITY), true),
        (
            "zero scale",
            Box::new(|e| e.get_mut::<Transform>().unwrap().scale = Vec3::ZERO),
            false,
        ),
        (
            "zero half extents",
            Box::new(|e| {
                e.insert(Aabb::new(V::ZERO));
            }),
            false,
        ),
        (
            "crosses the world in one tick",
            Box::new(|e| {
                e.insert(Velocity(V::splat(1e7)));
                e.get_mut::<Transform>().unwrap().translation = Vec3::splat(1e5);
            }),
            false,
        ),
        ("huge", translation(Vec3::splat(1e30)), false),
        ("huge negative", translation(Vec3::splat(-3e38)), false),
        (
            "huge velocity",
            Box::new(|e| {
                e.insert(Velocity(V::splat(3e38)));
            }),
            false,
        ),
    ];
    // The bystanders' events without any bad input, to compare each case with.
    let control = |events: &[Ev], a: Entity| -> Vec<String> {
        events
            .iter()
            .filter(|e| e.entity != a && e.other != a)
            .map(|e| format!("{e:?}"))
            .collect()
    };
    let mut expected_bystanders: Option<Vec<String>> = None;
    let noop: Mutation = Box::new(|_| {});
    for (name, mutate, invalid) in std::iter::once(("control", noop, false)).chain(cases) {
        let mut app = update_app::<V>(Sched::Update);
        app.world_mut().resource_mut::<Rec>().skip_brute_force = !invalid;
        let a = app
            .world_mut()
            .spawn((Transform::default(), Aabb::new(V::splat(0.5))))
            .id();
        let b = app
            .world_mut()
            .spawn((Transform::from_xyz(0.8, 0.0, 0.0), Aabb::new(V::splat(0.5))))
            .id();
        for i in 0..10 {
            app.world_mut().spawn((
                Transform::from_xyz(i as f32 * 3.0 - 10.0, 5.0, 0.0),
                BoundingSphere::<V>::new(2.0),
            ));
        }
        run_ticks(&mut app, 1);
        mutate(&mut app.world_mut().entity_mut(a));
        run_ticks(&mut app, 2);
        if invalid {
            assert_eq!(
                app.world().get::<TrackedCollider<V>>(a).unwrap().proxy(),
                None,
                "{name}"
            );
        }
        let mut entity = app.world_mut().entity_mut(a);
        entity.insert((
            Transform::default(),
            Aabb::new(V::splat(0.5)),
            Velocity(V::ZERO),
        ));
        entity.remove::<BoundingSphere<V>>();
        run_ticks(&mut app, 2);
        let events = finish::<V>(&app);
        let bystanders = control(&events, a);
        match &expected_bystanders {
            None => {
                assert!(bystanders.len() > 5, "the bystanders must touch");
                expected_bystanders = Some(bystanders);
            }
            Some(expected) => assert_eq!(&bystanders, expected, "{name}: bystanders disturbed"),
        }
        let mine: Vec<_> = events
            .iter()
            .filter(|e| e.pair() == key(a, b))
            .map(|e| (e.tick, e.reason()))
            .collect();
        if invalid {
            assert_eq!(
                mine,
                vec![(0, None), (1, Some(EndReason::Invalid)), (3, None)],
                "{name}: {events:#?}"
            );
        }
        assert!(
            app.world().resource::<AabbTree<V>>().is_touching(a, b),
            "{name}: back in"
        );
        assert!(
            app.world()
                .get::<TrackedCollider<V>>(a)
                .unwrap()
                .proxy()
                .is_some()
        );
    }
}

// ---------------------------------------------------------------------------------------
// Reliability: shape switches, despawns inside observers, determinism, mass churn

/// The pair's events as `(tick, reason)`, `None` for a start.
fn pair_log(events: &[Ev], a: Entity, b: Entity) -> Vec<(u32, Option<EndReason>)> {
    events
        .iter()
        .filter(|e| e.pair() == key(a, b))
        .map(|e| (e.tick, e.reason()))
        .collect()
}

/// Switching a collider between `Aabb` and `BoundingSphere`: inserting the new shape
/// before removing the old keeps a contact that still touches (no events); a new shape
/// that no longer touches ends it as `Separated`; removing first ends it (`Removed`) and
/// it starts again; removing both shapes in one command ends it.
fn shape_switch<V: Dim>() {
    let mut s = touching_scene::<V>(Sched::Update);
    let (a, b) = (s.a, s.b);
    let world = s.app.world_mut();
    // Tick 1: a becomes a sphere (0.8 apart, radii 0.5: still touching).
    world
        .entity_mut(a)
        .insert(BoundingSphere::<V>::new(0.5))
        .remove::<Aabb<V>>();
    run_ticks(&mut s.app, 1);
    // Tick 2: b becomes a box.
    s.app
        .world_mut()
        .entity_mut(b)
        .insert(Aabb::new(V::splat(0.5)))
        .remove::<BoundingSphere<V>>();
    run_ticks(&mut s.app, 1);
    assert_eq!(pair_log(&events(&s.app), a, b), vec![(0, None)]);
    // Tick 3: a becomes a small box, 0.8 - 0.5 - 0.1 = 0.2 apart.
    s.app
        .world_mut()
        .entity_mut(a)
        .insert(Aabb::new(V::splat(0.1)))
        .remove::<BoundingSphere<V>>();
    run_ticks(&mut s.app, 1);
    // Tick 4: a becomes a large sphere again (touching), tick 5: removed before the new
    // shape is inserted.
    s.app
        .world_mut()
        .entity_mut(a)
        .insert(BoundingSphere::<V>::new(0.5))
        .remove::<Aabb<V>>();
    run_ticks(&mut s.app, 1);
    s.app
        .world_mut()
        .entity_mut(a)
        .remove::<BoundingSphere<V>>()
        .insert(Aabb::new(V::splat(0.5)));
    run_ticks(&mut s.app, 1);
    // Tick 6: b gets a second shape, then both go in one command.
    s.app
        .world_mut()
        .entity_mut(b)
        .insert(BoundingSphere::<V>::new(0.5));
    run_ticks(&mut s.app, 1);
    s.app
        .world_mut()
        .entity_mut(b)
        .remove::<(Aabb<V>, BoundingSphere<V>)>();
    run_ticks(&mut s.app, 1);
    let events = finish::<V>(&s.app);
    assert_eq!(
        pair_log(&events, a, b),
        vec![
            (0, None),
            (3, Some(EndReason::Separated)),
            (4, None),
            // Ended by the removal observer before tick 5 ran: recorded before it.
            (5, Some(EndReason::Removed)),
            (5, None),
            (7, Some(EndReason::Removed)),
        ],
        "{events:#?}"
    );
    let state = s.app.world().resource::<AabbTree<V>>();
    assert_eq!(state.tree().len(), 3, "b left the tree");
    assert_eq!(pair_events(&s, &events).len(), 6);
}

/// A collider whose two shapes go in one command keeps its proxy until the next tick;
/// despawned before that tick runs, its pair still ends (`Removed`) at once and it
/// leaves the tree. Removing `TrackedCollider` by hand ends its pairs the same way.
fn shapes_removed_then_despawned<V: Dim>() {
    let mut s = touching_scene::<V>(Sched::Update);
    let (a, b) = (s.a, s.b);
    let (c, d) = s.bystanders;
    s.app
        .world_mut()
        .entity_mut(a)
        .insert(BoundingSphere::<V>::new(0.5));
    run_ticks(&mut s.app, 1);
    // Between ticks: both shapes removed, then the entity despawned.
    let world = s.app.world_mut();
    world.entity_mut(a).remove::<(Aabb<V>, BoundingSphere<V>)>();
    world.entity_mut(a).despawn();
    assert_eq!(
        s.app.world().resource::<AabbTree<V>>().tree().len(),
        3,
        "the despawn took a out of the tree"
    );
    // A collider's tracking state removed by hand: out of the tree, its pair ended. (The
    // brute-force check would still count c, which keeps its shape: it is off from here.)
    s.app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
    s.app
        .world_mut()
        .entity_mut(c)
        .remove::<TrackedCollider<V>>();
    assert_eq!(s.app.world().resource::<AabbTree<V>>().tree().len(), 2);
    run_ticks(&mut s.app, 2);
    let events = finish::<V>(&s.app);
    // Both ends were written between ticks 1 and 2, and read with tick 2's messages.
    assert_eq!(
        pair_log(&events, a, b),
        vec![(0, None), (2, Some(EndReason::Removed))],
        "{events:#?}"
    );
    assert_eq!(
        pair_log(&events, c, d),
        vec![(0, None), (2, Some(EndReason::Removed))],
        "{events:#?}"
    );
    let state = s.app.world().resource::<AabbTree<V>>();
    assert!(state.colliding_with(b).next().is_none());
    assert_eq!(state.tree().len(), 2, "a or c back in the tree");
}

/// `TrackedCollider` overwritten (inserted again over the plugin's): the old proxy leaves
/// the tree at once and its pair ends (`Removed`); the collider is back at the next tick,
/// with one proxy, and touches again. A written value's proxy id that is not the entity's
/// is never used.
fn tracked_collider_overwritten<V: Dim>() {
    let mut s = touching_scene::<V>(Sched::Update);
    let (a, b) = (s.a, s.b);
    s.app
        .world_mut()
        .entity_mut(a)
        .insert(TrackedCollider::<V>::default());
    assert_eq!(s.app.world().resource::<AabbTree<V>>().tree().len(), 3);
    run_ticks(&mut s.app, 2);
    let events = finish::<V>(&s.app);
    assert_eq!(
        pair_log(&events, a, b),
        vec![(0, None), (1, Some(EndReason::Removed)), (1, None)],
        "{events:#?}"
    );
    let state = s.app.world().resource::<AabbTree<V>>();
    assert_eq!(state.tree().len(), 4, "one proxy per collider");
    assert!(state.is_touching(a, b));

    // Its own value put back (carrying the proxy id the `Discard` observer frees): the
    // same, and the freed id is neither updated nor kept.
    let own = *s.app.world().get::<TrackedCollider<V>>(a).unwrap();
    assert!(own.proxy().is_some());
    s.app.world_mut().entity_mut(a).insert(own);
    run_ticks(&mut s.app, 1);
    let events = finish::<V>(&s.app);
    assert_eq!(
        pair_log(&events, a, b),
        vec![
            (0, None),
            (1, Some(EndReason::Removed)),
            (1, None),
            (3, Some(EndReason::Removed)),
            (3, None)
        ],
        "{events:#?}"
    );
    assert_eq!(s.app.world().resource::<AabbTree<V>>().tree().len(), 4);

    // Another collider's value copied onto `a`, then `a` despawned before the next tick:
    // `c`'s proxy stays, and so does its contact with `d`.
    let (c, d) = s.bystanders;
    let copied = *s.app.world().get::<TrackedCollider<V>>(c).unwrap();
    s.app.world_mut().entity_mut(a).insert(copied);
    s.app.world_mut().despawn(a);
    run_ticks(&mut s.app, 1);
    let events = finish::<V>(&s.app);
    assert_eq!(pair_log(&events, c, d), vec![(0, None)], "{events:#?}");
    let state = s.app.world().resource::<AabbTree<V>>();
    assert_eq!(state.tree().len(), 3);
    assert!(state.is_touching(c, d));
}

/// A `TrackedCollider` written over in place (through `&mut`, which no observer sees)
/// with another collider's value: the other collider's proxy is never updated or removed,
/// and the written entity keeps its own, which its despawn removes.
fn tracked_collider_written_in_place<V: Dim>() {
    let mut s = touching_scene::<V>(Sched::Update);
    let (a, b) = (s.a, s.b);
    let (c, d) = s.bystanders;
    let copy_c_onto_a = |app: &mut App| {
        let value = *app.world().get::<TrackedCollider<V>>(c).unwrap();
        *app.world_mut().get_mut::<TrackedCollider<V>>(a).unwrap() = value;
    };
    // Written, then a tick: `a` finds its own proxy again, nothing ends or restarts.
    copy_c_onto_a(&mut s.app);
    run_ticks(&mut s.app, 1);
    let state = s.app.world().resource::<AabbTree<V>>();
    assert_eq!(state.tree().len(), 4, "one proxy per collider");
    state.tree().validate().unwrap();
    let (ta, tc) = (
        s.app.world().get::<TrackedCollider<V>>(a).unwrap(),
        s.app.world().get::<TrackedCollider<V>>(c).unwrap(),
    );
    assert_eq!(state.tree().data(ta.proxy().unwrap()), Some(&a));
    assert_eq!(state.tree().data(tc.proxy().unwrap()), Some(&c));
    assert!(state.is_touching(a, b) && state.is_touching(c, d));

    // Written, then despawned before the next tick: `a`'s own proxy goes, `c`'s stays.
    copy_c_onto_a(&mut s.app);
    s.app.world_mut().despawn(a);
    run_ticks(&mut s.app, 1);
    let events = finish::<V>(&s.app);
    assert_eq!(
        pair_log(&events, a, b),
        vec![(0, None), (2, Some(EndReason::Removed))],
        "{events:#?}"
    );
    assert_eq!(pair_log(&events, c, d), vec![(0, None)], "{events:#?}");
    let state = s.app.world().resource::<AabbTree<V>>();
    assert_eq!(state.tree().len(), 3);
    assert!(state.tree().proxies().all(|(_, &e, _)| e != a));
    assert!(state.is_touching(c, d));
}

/// A collider entity cloned: the clone gets a proxy of its own (it does not copy the
/// source's `TrackedCollider`) and its own contacts; the source's go on.
fn cloned_collider<V: Dim>() {
    let mut s = touching_scene::<V>(Sched::Update);
    let (c, d) = s.bystanders;
    let clone = s.app.world_mut().entity_mut(c).clone_and_spawn();
    let tracked = s.app.world().get::<TrackedCollider<V>>(clone).unwrap();
    assert_eq!(tracked.proxy(), None, "the clone copied the source's proxy");
    run_ticks(&mut s.app, 1);
    let state = s.app.world().resource::<AabbTree<V>>();
    assert_eq!(state.tree().len(), 5);
    state.tree().validate().unwrap();
    let own = s
        .app
        .world()
        .get::<TrackedCollider<V>>(clone)
        .unwrap()
        .proxy();
    assert_eq!(state.tree().data(own.unwrap()), Some(&clone));
    assert!(state.is_touching(clone, d) && state.is_touching(clone, c));
    assert!(state.is_touching(c, d));
    let events = finish::<V>(&s.app);
    assert_eq!(pair_log(&events, c, d), vec![(0, None)], "{events:#?}");
    assert_eq!(pair_log(&events, clone, d), vec![(1, None)], "{events:#?}");
}

/// Despawning from inside observers of the collision events, and from a system reading
/// the messages right after the pipeline: one end per start, entity events in order.
fn despawn_in_observers<V: Dim>() {
    #[derive(Clone, Copy, Debug)]
    enum Who {
        SelfOnStart,
        OtherOnStart,
        BothOnStart,
        BothOnEnd,
        SystemAfterEvents,
    }
    for who in [
        Who::SelfOnStart,
        Who::OtherOnStart,
        Who::BothOnStart,
        Who::BothOnEnd,
        Who::SystemAfterEvents,
    ] {
        eprintln!("case {who:?}");
        let mut app = update_app::<V>(Sched::Update);
        let mut spawn = |x: f32| {
            let mut e = app
                .world_mut()
                .spawn((Transform::from_xyz(x, 0.0, 0.0), Aabb::new(V::splat(0.5))));
            match who {
                Who::SelfOnStart | Who::BothOnStart => {
                    e.observe(|ev: On<CollisionStarted>, mut commands: Commands| {
                        commands.entity(ev.entity).despawn();
                    });
                }
                Who::BothOnEnd => {
                    e.observe(|ev: On<CollisionEnded>, mut commands: Commands| {
                        commands.entity(ev.entity).despawn();
                    });
                }
                _ => {}
            }
            e.id()
        };
        let a = spawn(0.0);
        let b = spawn(0.8);
        let bystander = spawn(5.0);
        if let Who::OtherOnStart = who {
            app.world_mut().entity_mut(a).observe(
                |ev: On<CollisionStarted>, mut commands: Commands| {
                    commands.entity(ev.other).despawn();
                },
            );
        }
        if let Who::SystemAfterEvents = who {
            app.add_systems(
                Update,
                (|mut started: MessageReader<CollisionStarted>, mut commands: Commands| {
                    for hit in started.read() {
                        commands.entity(hit.other).despawn();
                    }
                })
                .after(CollisionSystems::Events),
            );
        }
        run_ticks(&mut app, 2);
        if let Who::BothOnEnd = who {
            // Nothing despawned yet: they touch. Move b away; both despawn on the end.
            assert!(app.world().get_entity(b).is_ok(), "{who:?}");
            set_translation(&mut app, b, Vec3::new(3.0, 0.0, 0.0));
            run_ticks(&mut app, 2);
        }
        let events = finish::<V>(&app);
        let log = pair_log(&events, a, b);
        assert_eq!(log.len(), 2, "{who:?}: {events:#?}");
        assert_eq!(log[0].1, None, "{who:?}");
        let expected_end = match who {
            Who::BothOnEnd => EndReason::Separated,
            _ => EndReason::Removed,
        };
        assert_eq!(log[1].1, Some(expected_end), "{who:?}");
        let alive = [a, b].map(|e| app.world().get_entity(e).is_ok());
        let expected_alive = match who {
            Who::SelfOnStart | Who::BothOnStart => [false, false],
            Who::OtherOnStart | Who::SystemAfterEvents => [true, false],
            Who::BothOnEnd => [false, false],
        };
        // `SelfOnStart` observes both: each despawns itself on its own start.
        assert_eq!(alive, expected_alive, "{who:?}");
        assert!(app.world().get_entity(bystander).is_ok());
        let state = app.world().resource::<AabbTree<V>>();
        let live = alive.iter().filter(|&&x| x).count() + 1;
        assert_eq!(state.tree().len(), live, "{who:?}");
    }
}

/// The same scene with unrelated colliders (far away, never touching anything) and
/// non-collider entities spawned after it in different orders gives byte-identical event
/// sequences, although the tree's shape and the proxies' ids differ.
fn spawn_order_determinism<V: Dim>() {
    let scene = random_scene::<V>(77, 40, 80);
    let mut runs: Vec<String> = Vec::new();
    for order_seed in [1u64, 2, 3] {
        let mut app = update_app::<V>(Sched::Update);
        app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
        let entities = spawn_scene(&mut app, &scene);
        let mut rng = Rng::new(order_seed);
        let mut unrelated: Vec<usize> = (0..60).collect();
        for i in (1..unrelated.len()).rev() {
            unrelated.swap(i, rng.below(i + 1));
        }
        for &k in &unrelated {
            let world = app.world_mut();
            let t = Transform::from_translation(flat::<V>(Vec3::new(
                1000.0 + 10.0 * k as f32,
                -500.0,
                300.0,
            )));
            match k % 3 {
                0 => world.spawn((t, Aabb::new(V::splat(0.5)))),
                1 => world.spawn((t, BoundingSphere::<V>::new(0.5), Velocity(V::ZERO))),
                _ => world.spawn(t),
            };
        }
        run_ticks(&mut app, scene.frames.len() as u32);
        let events = finish::<V>(&app);
        assert!(
            events
                .iter()
                .all(|e| entities.contains(&e.entity) && entities.contains(&e.other)),
            "an unrelated entity collided"
        );
        assert!(
            events.len() > 20,
            "too few events to test: {}",
            events.len()
        );
        runs.push(format!("{events:?}"));
    }
    assert_eq!(runs[0], runs[1]);
    assert_eq!(runs[0], runs[2]);
}

/// Zero-size colliders are valid: a point box or a zero-radius sphere touches what
/// contains it, boundary included; a zero scale makes a point of any collider.
fn zero_size_colliders<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let world = app.world_mut();
    let big = world
        .spawn((Transform::default(), Aabb::new(V::splat(0.5))))
        .id();
    let point_box = world
        .spawn((Transform::from_xyz(0.5, 0.0, 0.0), Aabb::new(V::ZERO)))
        .id();
    let point_ball = world
        .spawn((
            Transform::from_xyz(-0.25, 0.25, 0.0),
            BoundingSphere::<V>::new(0.0),
        ))
        .id();
    let squashed = world
        .spawn((
            Transform::from_xyz(0.0, -0.5, 0.0).with_scale(Vec3::ZERO),
            Aabb::new(V::splat(3.0)),
        ))
        .id();
    let outside = world
        .spawn((Transform::from_xyz(0.0, 0.51, 0.0), Aabb::new(V::ZERO)))
        .id();
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    let pairs: Pairs = events.iter().map(Ev::pair).collect();
    assert_eq!(
        pairs,
        Pairs::from([
            key(big, point_box),
            key(big, point_ball),
            key(big, squashed),
        ]),
        "{events:#?}"
    );
    assert!(
        app.world()
            .get::<TrackedCollider<V>>(outside)
            .unwrap()
            .proxy()
            .is_some()
    );
}

/// Thousands of spawns in one frame, then thousands of despawns in one frame while
/// touching: the starts equal brute force (the recorder checks every tick), every start
/// gets its end, and the tree ends empty and valid.
fn mass_spawn_despawn<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let side = 45; // 2025 colliders on a grid, neighbours 0.9 apart: touching.
    let mut entities = Vec::new();
    for i in 0..side {
        for j in 0..side {
            let t = Transform::from_xyz(i as f32 * 0.9, j as f32 * 0.9, 0.0);
            let e = if (i + j) % 2 == 0 {
                app.world_mut().spawn((t, Aabb::new(V::splat(0.5)))).id()
            } else {
                app.world_mut()
                    .spawn((t, BoundingSphere::<V>::new(0.5)))
                    .id()
            };
            entities.push(e);
        }
    }
    run_ticks(&mut app, 1);
    let started = events(&app).len();
    assert!(started > 3000, "{started} starts");
    // The bulk spawn made room once: one internal node per collider, no slack from
    // doubling.
    let tree_stats = app.world().resource::<AabbTree<V>>().tree_stats();
    assert_eq!(tree_stats.proxies, 2025);
    assert_eq!(tree_stats.capacity, 2025);
    for e in entities.iter().step_by(2) {
        app.world_mut().despawn(*e);
    }
    run_ticks(&mut app, 1);
    for e in entities.iter().skip(1).step_by(2) {
        app.world_mut().despawn(*e);
    }
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    assert_eq!(events.len(), 2 * started);
    let state = app.world().resource::<AabbTree<V>>();
    assert_eq!(state.tree().len(), 0);
    assert_eq!(state.touching_pairs().count(), 0);
}

/// The pipeline's figures reach Bevy's diagnostics, equal to `AabbTree::stats`.
fn diagnostics<V: Dim>() {
    use bevy::diagnostic::{DiagnosticPath, DiagnosticsStore};
    use bevy_aabb_tree::plugin::diagnostics as paths;
    let s = touching_scene::<V>(Sched::Update);
    let (touching, events, candidates, tick) = if V::DIM == 2 {
        (
            paths::TOUCHING_2D,
            paths::EVENTS_2D,
            paths::CANDIDATES_2D,
            paths::TICK_MS_2D,
        )
    } else {
        (
            paths::TOUCHING_3D,
            paths::EVENTS_3D,
            paths::CANDIDATES_3D,
            paths::TICK_MS_3D,
        )
    };
    let store = s.app.world().resource::<DiagnosticsStore>();
    let value = |path: &DiagnosticPath| {
        store
            .get(path)
            .and_then(|d| d.value())
            .unwrap_or_else(|| panic!("{path} has no measurement"))
    };
    let stats = *s.app.world().resource::<AabbTree<V>>().stats();
    assert_eq!(value(&touching), 2.0);
    assert_eq!(value(&events), 2.0, "two starts");
    assert_eq!(value(&candidates), stats.candidates as f64);
    assert_eq!(value(&tick), stats.total_ms() as f64);
    assert!(value(&tick) >= 0.0);
}

// ---------------------------------------------------------------------------------------
// Idle colliders: the prepare stage skips what did not change

/// A scene where most bodies never move and a few move in bursts, each mover on its own
/// clock that advances only in the ticks it moves (about 60% of them), so movers stop and
/// start again. Movers only translate (for the swept oracle); idle bodies keep their
/// random rotation and scale.
struct IdleScene<V: Dim> {
    bodies: Vec<BodySpec<V>>,
    movers: usize,
    /// Every body's transform at each tick.
    frames: Vec<Vec<Transform>>,
    /// The movers that move before each tick (index into `bodies`), with their transform.
    writes: Vec<Vec<(usize, Transform)>>,
}

fn idle_scene<V: Dim>(seed: u64, n: usize, movers: usize, ticks: usize) -> IdleScene<V> {
    let mut bodies = random_scene::<V>(seed, n, 1).bodies;
    let mut rng = Rng::new(seed ^ 0x1D1E);
    for (i, b) in bodies.iter_mut().enumerate() {
        if i < movers {
            b.spin = 0.0;
            // Two fast movers (up to several units a tick), the others slower.
            let fast = i < 2;
            b.amplitude = rng.vec3(2.0, if fast { 9.0 } else { 6.0 });
            b.frequency = rng.vec3(0.05, if fast { 0.6 } else { 0.3 });
        } else {
            b.amplitude = Vec3::ZERO;
            b.spin = 0.0;
        }
    }
    let mut clocks = vec![0; movers];
    let mut frames = Vec::with_capacity(ticks);
    let mut writes = Vec::with_capacity(ticks);
    for tick in 0..ticks {
        let mut w = Vec::new();
        if tick > 0 {
            for (m, clock) in clocks.iter_mut().enumerate() {
                if rng.chance(0.6) {
                    *clock += 1;
                    w.push((m, bodies[m].transform(*clock)));
                }
            }
        }
        frames.push(
            bodies
                .iter()
                .enumerate()
                .map(|(i, b)| b.transform(clocks.get(i).copied().unwrap_or(0)))
                .collect(),
        );
        writes.push(w);
    }
    IdleScene {
        bodies,
        movers,
        frames,
        writes,
    }
}

/// Item (a): most colliders idle (never written), a few moving in bursts. With sweeps off
/// the events are those of the overlap oracle; with sweeps on those of the swept oracle,
/// so a mover that stops is not swept again over its last move. Each tick processes
/// exactly the movers written before it, plus (sweeps on) those that moved at their last
/// processing and stand still now; every idle collider is skipped.
fn idle_scene_matches_oracle<V: Dim>() {
    for seed in [31, 32] {
        let ticks = 200;
        let scene = idle_scene::<V>(seed, 60, 6, ticks);
        let layers: Vec<_> = scene.bodies.iter().map(|b| b.layers).collect();
        let shapes = frame_shapes(&scene.bodies, &scene.frames);
        for swept in [false, true] {
            let what = format!("seed {seed}, swept {swept}");
            let config = CollisionConfig { swept, ..default() };
            let mut app = build_app::<V>(Sched::Update, 60.0, config);
            let world = app.world_mut();
            let entities = spawn_bodies(world, &scene.bodies, &scene.frames[0]);
            world.insert_resource(SparseScript {
                writes: scene
                    .writes
                    .iter()
                    .map(|w| w.iter().map(|&(i, t)| (entities[i], t)).collect())
                    .collect(),
            });
            run_ticks(&mut app, ticks as u32);
            let events = finish::<V>(&app);
            if swept {
                let (_, normals) = assert_swept_oracle(&what, &shapes, &layers, &entities, &events);
                assert!(normals >= 5, "{what}: too few contact normals");
                let inside = events.iter().filter(|e| e.toi().is_some_and(|t| t > 0.0));
                assert!(inside.count() >= 5, "{what}: too few swept starts");
            } else {
                let oracle: Vec<Pairs> = shapes
                    .iter()
                    .map(|frame| {
                        let world: Vec<_> = entities
                            .iter()
                            .zip(frame)
                            .zip(&layers)
                            .map(|((&e, &shape), &l)| (e, shape, l))
                            .collect();
                        brute_force_pairs(&world)
                    })
                    .collect();
                let transitions = assert_overlap_oracle(&what, &oracle, &events);
                assert!(transitions >= 40, "{what}: only {transitions} transitions");
            }
            let processed = &app.world().resource::<Rec>().processed;
            assert_eq!(processed[0], scene.bodies.len(), "{what}: tick 0");
            // Ticks 1..: the movers written now, and (sweeps on) those written at the
            // tick before, whose displacement becomes zero.
            for (tick, (writes, &count)) in scene.writes.iter().zip(processed).enumerate().skip(1) {
                let now: BTreeSet<usize> = writes.iter().map(|w| w.0).collect();
                let before: BTreeSet<usize> = scene.writes[tick - 1].iter().map(|w| w.0).collect();
                let expected = if swept {
                    now.union(&before).count()
                } else {
                    now.len()
                };
                assert!(expected <= scene.movers);
                assert_eq!(count, expected, "{what}: tick {tick}");
            }
            assert_eq!(processed.len(), ticks);
        }
    }
}

/// Item (b): idle children of a moving parent (a collider itself), two levels deep, get
/// their collisions where the parent takes them; detached (`ChildOf` removed), the child
/// is a root at its local transform from the next tick on, and is skipped after that.
fn idle_children_of_moving_parent<V: Dim>() {
    let config = CollisionConfig {
        swept: false,
        ..default()
    };
    let mut app = build_app::<V>(Sched::Update, 60.0, config);
    app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
    let world = app.world_mut();
    let wall = world
        .spawn((Transform::default(), Aabb::new(V::splat(0.5))))
        .id();
    let low_wall = world
        .spawn((
            Transform::from_xyz(0.0, -3.0, 0.0),
            Aabb::new(V::splat(0.5)),
        ))
        .id();
    let parent_at = |x: f32| Transform::from_xyz(x, 3.0, 0.0);
    let parent = world
        .spawn((parent_at(-6.0), BoundingSphere::<V>::new(0.25)))
        .id();
    // World (x, 0): touches the wall while |x| <= 1.
    let child = world
        .spawn((
            Transform::from_xyz(0.0, -3.0, 0.0),
            Aabb::new(V::splat(0.5)),
            ChildOf(parent),
        ))
        .id();
    // World (x + 2, 0): touches the wall while |x + 2| <= 0.75.
    let grandchild = world
        .spawn((
            Transform::from_xyz(2.0, 0.0, 0.0),
            Aabb::new(V::splat(0.25)),
            ChildOf(child),
        ))
        .id();
    let xs = [-6.0, -4.0, -2.5, -1.5, 0.0, 1.5, 3.0, 6.0, 0.0, 0.0];
    app.insert_resource(SparseScript {
        writes: xs.iter().map(|&x| vec![(parent, parent_at(x))]).collect(),
    });
    run_ticks(&mut app, 8);
    // Detached with the parent at x = 6: a root at (0, -3), on the low wall; the parent
    // comes back to x = 0, where the child would touch the wall if it followed.
    app.world_mut().entity_mut(child).remove::<ChildOf>();
    run_ticks(&mut app, 2);
    let events = finish::<V>(&app);
    let mut log: Vec<_> = events
        .iter()
        .map(|e| (e.tick, e.pair(), e.reason()))
        .collect();
    log.sort_by_key(|&(tick, pair, reason)| (tick, pair, reason.is_some()));
    let mut expected = vec![
        (2, key(wall, grandchild), None),
        (4, key(wall, child), None),
        (4, key(wall, grandchild), Some(EndReason::Separated)),
        (5, key(wall, child), Some(EndReason::Separated)),
        (8, key(low_wall, child), None),
    ];
    expected.sort_by_key(|&(tick, pair, reason)| (tick, pair, reason.is_some()));
    assert_eq!(log, expected);
    let processed = &app.world().resource::<Rec>().processed;
    // The parent (written) and its two descendants each tick; the child once more when
    // detached, then only the parent and the grandchild.
    assert_eq!(processed[1..], [3, 3, 3, 3, 3, 3, 3, 3, 2]);
}

/// Item (c): a component of an idle collider changes alone (size, radius, layers,
/// velocity, shape removed): that collider, and only it, is processed again.
fn idle_component_changes<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let spawn_box = |app: &mut App, x: f32, half: f32| {
        app.world_mut()
            .spawn((Transform::from_xyz(x, 0.0, 0.0), Aabb::new(V::splat(half))))
            .id()
    };
    // 0.5 apart.
    let (a, b) = (spawn_box(&mut app, 0.0, 0.5), spawn_box(&mut app, 1.5, 0.5));
    // 0.5 from the sphere below.
    let t = spawn_box(&mut app, 11.5, 0.5);
    // Touching.
    let (l1, l2) = (
        spawn_box(&mut app, 20.0, 0.5),
        spawn_box(&mut app, 20.8, 0.5),
    );
    let r = spawn_box(&mut app, 30.8, 0.5);
    // 0.75 from the box of `h` below: outside its box, inside its sphere.
    let i = spawn_box(&mut app, 41.0, 0.25);
    let world = app.world_mut();
    let s = world
        .spawn((
            Transform::from_xyz(10.0, 0.0, 0.0),
            BoundingSphere::<V>::new(0.5),
        ))
        .id();
    world.entity_mut(l1).insert(CollisionLayers::new(1, 1));
    let h = world
        .spawn((
            Transform::from_xyz(40.0, 0.0, 0.0),
            Aabb::new(V::splat(0.25)),
            BoundingSphere::<V>::new(1.0),
        ))
        .id();
    run_ticks(&mut app, 1);
    // Tick 1 (the first with a time step): `q`, touching `r`, comes in with a velocity
    // of 10 units a tick along y: its fat box is stretched 20 units (two ticks ahead).
    let q = app
        .world_mut()
        .spawn((
            Transform::from_xyz(30.0, 0.0, 0.0),
            Aabb::new(V::splat(0.5)),
            Velocity(v::<V>(0.0, 600.0, 0.0)),
        ))
        .id();
    run_ticks(&mut app, 1);
    let stretch = |app: &App| {
        let tracked = app.world().get::<TrackedCollider<V>>(q).unwrap();
        let state = app.world().resource::<AabbTree<V>>();
        let fat = state.tree().fat_box(tracked.proxy().unwrap()).unwrap();
        (fat.max - tracked.world_aabb().max).extend_to_3d().y
    };
    assert!(
        stretch(&app) > 19.0,
        "fat box not stretched: {}",
        stretch(&app)
    );

    let step = |app: &mut App, change: &dyn Fn(&mut World)| {
        change(app.world_mut());
        run_ticks(app, 1);
    };
    // Tick 2: the box grows into its neighbour; tick 3: back.
    step(&mut app, &|w| {
        w.get_mut::<Aabb<V>>(a).unwrap().half_extents = V::splat(1.1);
    });
    step(&mut app, &|w| {
        w.get_mut::<Aabb<V>>(a).unwrap().half_extents = V::splat(0.5);
    });
    // Tick 4: the sphere grows into the box.
    step(&mut app, &|w| {
        w.get_mut::<BoundingSphere<V>>(s).unwrap().radius = 1.2;
    });
    // Tick 5: layers stop matching; tick 6: layers removed (every layer): they match.
    step(&mut app, &|w| {
        *w.get_mut::<CollisionLayers>(l1).unwrap() = CollisionLayers::NONE;
    });
    step(&mut app, &|w| {
        w.entity_mut(l1).remove::<CollisionLayers>();
    });
    // Tick 7: the velocity removed, the far too large fat box shrinks back.
    step(&mut app, &|w| {
        w.entity_mut(q).remove::<Velocity<V>>();
    });
    assert!(stretch(&app) < 1.0, "fat box not shrunk: {}", stretch(&app));
    // Tick 8: a NaN velocity: left out; tick 9: a valid one: back.
    step(&mut app, &|w| {
        w.entity_mut(q).insert(Velocity(V::splat(f32::NAN)));
    });
    step(&mut app, &|w| {
        w.entity_mut(q).insert(Velocity(V::ZERO));
    });
    // Tick 10: the box removed, the sphere counts.
    step(&mut app, &|w| {
        w.entity_mut(h).remove::<Aabb<V>>();
    });
    // Tick 11: nothing.
    run_ticks(&mut app, 1);

    let events = finish::<V>(&app);
    let mut log: Vec<_> = events
        .iter()
        .map(|e| (e.tick, e.pair(), e.reason()))
        .collect();
    log.sort_by_key(|&(tick, pair, reason)| (tick, pair, reason.is_some()));
    let mut expected = vec![
        (0, key(l1, l2), None),
        (1, key(q, r), None),
        (2, key(a, b), None),
        (3, key(a, b), Some(EndReason::Separated)),
        (4, key(s, t), None),
        (5, key(l1, l2), Some(EndReason::LayersChanged)),
        (6, key(l1, l2), None),
        (8, key(q, r), Some(EndReason::Invalid)),
        (9, key(q, r), None),
        (10, key(h, i), None),
    ];
    expected.sort_by_key(|&(tick, pair, reason)| (tick, pair, reason.is_some()));
    assert_eq!(log, expected);
    let processed = &app.world().resource::<Rec>().processed;
    assert_eq!(processed[..], [9, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0]);
}

/// Item (d): a change of `CollisionConfig` processes every collider once, idle or not:
/// here the velocity multiplier dropped to zero shrinks the fat boxes that the idle
/// colliders' velocities had stretched when they were inserted.
fn config_change_reprocesses<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    // The first update has no time step (no prediction): spawn after it.
    run_ticks(&mut app, 1);
    let n = 12;
    let entities: Vec<Entity> = (0..n)
        .map(|k| {
            let mut e = app.world_mut().spawn((
                Transform::from_xyz(3.0 * k as f32, 0.0, 0.0),
                Aabb::new(V::splat(0.5)),
            ));
            if k % 2 == 0 {
                e.insert(Velocity(v::<V>(0.0, 300.0, 0.0)));
            }
            e.id()
        })
        .collect();
    let stretch = |app: &App, e: Entity| {
        let tracked = app.world().get::<TrackedCollider<V>>(e).unwrap();
        let state = app.world().resource::<AabbTree<V>>();
        let fat = tracked.fat_aabb(state).unwrap();
        (fat.max - tracked.world_aabb().max).extend_to_3d().y
    };
    run_ticks(&mut app, 2);
    for (k, &e) in entities.iter().enumerate() {
        let expected = if k % 2 == 0 { 10.0 } else { 0.0 };
        assert_close(stretch(&app, e), expected + 0.05, 1e-3, "fat box");
    }
    app.world_mut()
        .resource_mut::<CollisionConfig>()
        .velocity_multiplier = 0.0;
    run_ticks(&mut app, 2);
    for &e in &entities {
        assert_close(stretch(&app, e), 0.05, 1e-3, "fat box after the change");
    }
    // Sweeps switched off and on again: nothing moves, nothing happens, but every
    // collider is processed at each change.
    app.world_mut().resource_mut::<CollisionConfig>().swept = false;
    run_ticks(&mut app, 2);
    app.world_mut().resource_mut::<CollisionConfig>().swept = true;
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    assert!(events.is_empty(), "{events:#?}");
    let processed = &app.world().resource::<Rec>().processed;
    assert_eq!(processed[..], [0, n, 0, n, 0, n, 0, n]);
}

/// Item (e): a collider that passed through a wall and stops there is not swept over its
/// last move again: the pass-through is reported once, in its tick, and the next tick
/// reads it as still (previous position = position, no swept hit). Coming back slowly to
/// touch and staying gives one start.
fn stopped_mover_no_stale_sweep<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let wall = app
        .world_mut()
        .spawn((Transform::default(), Aabb::new(v::<V>(0.05, 2.0, 2.0))))
        .id();
    let mover = app
        .world_mut()
        .spawn((
            Transform::from_xyz(-5.0, 0.0, 0.0),
            Aabb::new(V::splat(0.25)),
        ))
        .id();
    run_ticks(&mut app, 1);
    // Tick 1: through the wall.
    set_translation(&mut app, mover, Vec3::new(5.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let previous = |app: &App| {
        let tracked = app.world().get::<TrackedCollider<V>>(mover).unwrap();
        tracked.previous_position().extend_to_3d().x
    };
    assert_eq!(previous(&app), -5.0);
    assert_eq!(app.world().resource::<AabbTree<V>>().swept_hits().len(), 1);
    // Ticks 2 and 3: it stands still.
    run_ticks(&mut app, 1);
    assert_eq!(previous(&app), 5.0);
    assert!(
        app.world()
            .resource::<AabbTree<V>>()
            .swept_hits()
            .is_empty()
    );
    run_ticks(&mut app, 1);
    // Tick 4: back into the wall (its left face from 4.75 to -0.05 meets the wall's
    // right face at 0.05: time 4.7 / 4.8); ticks 5 and 6: it stays there.
    set_translation(&mut app, mover, Vec3::new(0.2, 0.0, 0.0));
    run_ticks(&mut app, 3);
    let events = finish::<V>(&app);
    assert_eq!(events.len(), 3, "{events:#?}");
    assert_pass_through(&events[..2], mover, wall, 0.47);
    assert_eq!(events[0].tick, 1);
    assert_eq!((events[2].tick, events[2].pair()), (4, key(mover, wall)));
    assert_close(events[2].toi().unwrap(), 4.7 / 4.8, 1e-4, "time of impact");
    let processed = &app.world().resource::<Rec>().processed;
    assert_eq!(processed[..], [2, 1, 1, 0, 1, 1, 0]);
}

// ---------------------------------------------------------------------------------------
// The tests, in 2D and 3D

macro_rules! both_dims {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[test]
                fn d2() {
                    super::$name::<bevy::math::Vec2>();
                }
                #[test]
                fn d3() {
                    super::$name::<bevy::math::Vec3>();
                }
            }
        )*
    };
}

both_dims!(
    random_scenes_match_oracle,
    random_scene_fixed_post_update,
    random_scene_slow_fixed_rate,
    random_scene_fast_fixed_rate,
    determinism_with_sweeps,
    config_changes_mid_run,
    swept_scene_matches_oracle,
    box_through_thin_wall,
    box_through_thin_wall_fixed,
    head_on_boxes,
    sphere_bullet,
    teleport_across_wall,
    teleport_parent_across_wall,
    lifecycle,
    lifecycle_comes_back,
    remove_and_reinsert_same_frame,
    churn_update,
    churn_slow_fixed,
    despawn_on_frame_without_fixed_tick,
    moved_in_fixed_update_same_tick,
    child_follows_parent,
    observers,
    despawn_between_narrow_phase_and_events,
    spatial_query_oracle,
    nan_translation,
    fat_box_overflow,
    move_cache_config,
    other_bad_input,
    shape_switch,
    shapes_removed_then_despawned,
    tracked_collider_overwritten,
    tracked_collider_written_in_place,
    cloned_collider,
    despawn_in_observers,
    spawn_order_determinism,
    zero_size_colliders,
    mass_spawn_despawn,
    diagnostics,
    idle_scene_matches_oracle,
    idle_children_of_moving_parent,
    idle_component_changes,
    config_change_reprocesses,
    stopped_mover_no_stale_sweep,
);
