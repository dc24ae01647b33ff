//! The test harness: the two dimensions, random numbers, the test app and its message recorder, and random scenes.

use super::*;

// ---------------------------------------------------------------------------------------
// Dimensions and randomness

/// What the plugin's tests draw beyond the kit's generator.
impl Rng {
    pub(crate) fn layers(&mut self) -> Option<CollisionLayers> {
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
// The test app and its recorder

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Kind {
    Started { toi: f32, normal: Vec3 },
    Ended(EndReason),
}

/// One message as recorded: the tick (pipeline run) it was read in, and its content.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Ev {
    pub(crate) tick: u32,
    pub(crate) kind: Kind,
    pub(crate) entity: Entity,
    pub(crate) other: Entity,
}

impl Ev {
    pub(crate) fn pair(&self) -> (Entity, Entity) {
        key(self.entity, self.other)
    }

    pub(crate) fn reason(&self) -> Option<EndReason> {
        match self.kind {
            Kind::Ended(r) => Some(r),
            Kind::Started { .. } => None,
        }
    }

    pub(crate) fn toi(&self) -> Option<f32> {
        match self.kind {
            Kind::Started { toi, .. } => Some(toi),
            Kind::Ended(_) => None,
        }
    }
}

#[derive(Resource, Default)]
pub(crate) struct Rec {
    /// Pipeline runs completed.
    pub(crate) tick: u32,
    /// The combined stream (`CollisionMessage`), in the order read.
    pub(crate) events: Vec<Ev>,
    /// The touching pairs after each tick, from `AabbTree::touching_pairs`.
    pub(crate) touching: Vec<Pairs>,
    /// Scenes with children or overflowing values cannot use the root-only oracle.
    pub(crate) skip_brute_force: bool,
    pub(crate) errors: Vec<String>,
    /// `StepStats::processed` after each tick: how many colliders the prepare stage did
    /// not skip.
    pub(crate) processed: Vec<usize>,
    /// The pairs the combined stream read so far leaves open: each read is applied in
    /// the order read and compared with the truth after every tick.
    pub(crate) replayed: BTreeMap<(Entity, Entity), u32>,
}

/// The recorder's cursors over the three message streams of one dimension.
#[derive(Resource)]
pub(crate) struct Cursors<V: Dim> {
    pub(crate) started: MessageCursor<CollisionStarted<V>>,
    pub(crate) ended: MessageCursor<CollisionEnded>,
    pub(crate) all: MessageCursor<CollisionMessage<V>>,
}

impl<V: Dim> Default for Cursors<V> {
    fn default() -> Self {
        Self {
            started: MessageCursor::default(),
            ended: MessageCursor::default(),
            all: MessageCursor::default(),
        }
    }
}

fn ev_of<V: Dim>(tick: u32, m: &CollisionMessage<V>) -> Ev {
    match *m {
        CollisionMessage::Started(m) => Ev {
            tick,
            kind: Kind::Started {
                toi: m.time_of_impact,
                normal: m.normal.extend_to_3d(),
            },
            entity: m.entity,
            other: m.other,
        },
        CollisionMessage::Ended(m) => Ev {
            tick,
            kind: Kind::Ended(m.reason),
            entity: m.entity,
            other: m.other,
        },
    }
}

/// Reads the three message streams: the combined one is recorded, in the order read, and
/// the two split ones must hold the same messages, each kind in the same order.
pub(crate) fn record<V: Dim>(
    rec: &mut Rec,
    cursors: &mut Cursors<V>,
    started: &Messages<CollisionStarted<V>>,
    ended: &Messages<CollisionEnded>,
    all: &Messages<CollisionMessage<V>>,
) {
    let tick = rec.tick;
    let Cursors {
        started: sc,
        ended: ec,
        all: ac,
    } = cursors;
    let errors = &mut rec.errors;
    let missed = sc.missed_messages(started) + ec.missed_messages(ended) + ac.missed_messages(all);
    if missed > 0 {
        errors.push(format!("tick {tick}: {missed} messages missed"));
    }
    let read: Vec<CollisionMessage<V>> = ac.read(all).copied().collect();
    let split_starts: Vec<CollisionMessage<V>> = sc
        .read(started)
        .map(|m| CollisionMessage::Started(*m))
        .collect();
    let split_ends: Vec<CollisionMessage<V>> = ec
        .read(ended)
        .map(|m| CollisionMessage::Ended(*m))
        .collect();
    let starts: Vec<CollisionMessage<V>> = read
        .iter()
        .filter(|m| matches!(m, CollisionMessage::Started(_)))
        .copied()
        .collect();
    let ends: Vec<CollisionMessage<V>> = read
        .iter()
        .filter(|m| matches!(m, CollisionMessage::Ended(_)))
        .copied()
        .collect();
    if starts != split_starts || ends != split_ends {
        errors.push(format!(
            "tick {tick}: the split streams differ from the combined one: {read:?} against \
             {split_starts:?} and {split_ends:?}"
        ));
    }
    for ev in read.iter().map(|m| ev_of(tick, m)) {
        let ok = match ev.kind {
            Kind::Started { .. } => rec.replayed.insert(ev.pair(), ev.tick).is_none(),
            Kind::Ended(_) => rec.replayed.remove(&ev.pair()).is_some(),
        };
        if !ok {
            rec.errors
                .push(format!("tick {tick}: replaying {ev:?} out of order"));
        }
        rec.events.push(ev);
    }
}

pub(crate) fn collect_pre<V: Dim>(
    mut rec: ResMut<Rec>,
    mut cursors: ResMut<Cursors<V>>,
    started: Res<Messages<CollisionStarted<V>>>,
    ended: Res<Messages<CollisionEnded>>,
    all: Res<Messages<CollisionMessage<V>>>,
) {
    record(&mut rec, &mut cursors, &started, &ended, &all);
}

pub(crate) type OracleItem<'a, V> = (
    Entity,
    &'a Transform,
    Option<&'a Aabb<V>>,
    Option<&'a BoundingSphere<V>>,
    Option<&'a Velocity<V>>,
    Option<&'a CollisionLayers>,
    Has<Static>,
    Option<&'a Capsule<V>>,
    Option<&'a RoundedAabb<V>>,
);

/// One item of [`OracleItem`] (`Has<Static>` gives a `bool`).
pub(crate) type OracleRow<'a, V> = (
    Entity,
    &'a Transform,
    Option<&'a Aabb<V>>,
    Option<&'a BoundingSphere<V>>,
    Option<&'a Velocity<V>>,
    Option<&'a CollisionLayers>,
    bool,
    Option<&'a Capsule<V>>,
    Option<&'a RoundedAabb<V>>,
);

/// The valid colliders of the world with their oracle shapes (root entities only).
pub(crate) fn oracle_world<'a, V: Dim>(
    items: impl Iterator<Item = OracleRow<'a, V>>,
) -> Vec<(Entity, OShape, Option<CollisionLayers>)> {
    items
        .filter_map(|(e, t, a, s, vel, l, _, c, r)| {
            let shape = match (a, s) {
                (None, None) => oracle_rounded_shape(t, c, r, vel),
                _ => oracle_shape(t, a, s, vel),
            };
            Some((e, shape?, l.copied()))
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn collect_post<V: Dim>(
    mut rec: ResMut<Rec>,
    mut cursors: ResMut<Cursors<V>>,
    started: Res<Messages<CollisionStarted<V>>>,
    ended: Res<Messages<CollisionEnded>>,
    all: Res<Messages<CollisionMessage<V>>>,
    state: Res<AabbTree<V>>,
    colliders: Query<OracleItem<V>>,
    contacts: Query<(Entity, &CollidingEntities)>,
    log: Res<EntityEventLog>,
) {
    record(&mut rec, &mut cursors, &started, &ended, &all);
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
    // The combined stream, applied in the order read, gives the touching pairs.
    let mut replay_errors = Vec::new();
    let now: Pairs = rec.replayed.keys().copied().collect();
    if now != touching {
        replay_errors.push(format!(
            "tick {tick}: the messages replayed leave {now:?} open, the tree touches {touching:?}"
        ));
    }
    // Every `CollidingEntities`, and the pairs the entity events leave open, too.
    let partners = |e: Entity| -> BTreeSet<Entity> {
        touching
            .iter()
            .filter_map(|&(a, b)| {
                if a == e {
                    Some(b)
                } else if b == e {
                    Some(a)
                } else {
                    None
                }
            })
            .collect()
    };
    for (e, set) in &contacts {
        let have: BTreeSet<Entity> = set.iter().collect();
        if have != partners(e) {
            replay_errors.push(format!(
                "tick {tick}: CollidingEntities of {e} is {have:?}, the tree says {:?}",
                partners(e)
            ));
        }
    }
    let both: Pairs = touching
        .iter()
        .flat_map(|&(a, b)| [(a, b), (b, a)])
        .collect();
    let open: Pairs = log
        .open
        .iter()
        .filter(|(e, _)| colliders.contains(*e) || contacts.contains(*e))
        .copied()
        .collect();
    let alive_touching: Pairs = both
        .iter()
        .filter(|(e, _)| colliders.contains(*e) || contacts.contains(*e))
        .copied()
        .collect();
    if open != alive_touching {
        replay_errors.push(format!(
            "tick {tick}: entity events leave {open:?} open, the tree touches {alive_touching:?}"
        ));
    }
    rec.errors.extend(replay_errors);
    if !rec.skip_brute_force {
        // Two `Static` colliders never pair.
        let statics: Pairs = colliders
            .iter()
            .filter(|item| item.6)
            .map(|item| (item.0, item.0))
            .collect();
        let is_static = |e: Entity| statics.contains(&(e, e));
        let expected: Pairs = brute_force_pairs(&oracle_world(colliders.iter()))
            .into_iter()
            .filter(|&(a, b)| !(is_static(a) && is_static(b)))
            .collect();
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
pub(crate) struct Script {
    pub(crate) entities: Vec<Entity>,
    pub(crate) frames: Vec<Vec<Transform>>,
}

/// Sparse writes: `writes[tick]` are the transforms [`drive`] writes before the pipeline's
/// tick `tick`, and only those: every other entity is left untouched (idle).
#[derive(Resource)]
pub(crate) struct SparseScript {
    pub(crate) writes: Vec<Vec<(Entity, Transform)>>,
}

pub(crate) fn drive(
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
pub(crate) struct ConfigChanges(pub(crate) Vec<(u32, CollisionConfig)>);

pub(crate) fn reconfigure(
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
pub(crate) enum Sched {
    /// `AabbTreePlugin::new(Update)`; [`drive`] runs in `Update` before the pipeline.
    Update,
    /// The default `FixedPostUpdate`; [`drive`] runs in `FixedUpdate`.
    Fixed,
}

impl Sched {
    pub(crate) fn label(self) -> InternedScheduleLabel {
        match self {
            Sched::Update => Update.intern(),
            Sched::Fixed => FixedPostUpdate.intern(),
        }
    }
}

/// A headless app at 60 frames per second with the plugin in `sched`, the fixed schedule
/// at `fixed_hz`, and the recorder.
pub(crate) fn build_app<V: Dim>(sched: Sched, fixed_hz: f64, config: CollisionConfig) -> App {
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
        .init_resource::<Rec>()
        .init_resource::<Cursors<V>>();
    watch_entity_events::<V>(&mut app);
    keep_contacts::<V>(&mut app);
    let label = sched.label();
    app.add_systems(
        label,
        (
            collect_pre::<V>.before(CollisionSystems::Prepare),
            collect_post::<V>.after(CollisionSystems::Events),
        ),
    );
    match sched {
        Sched::Update => app.add_systems(
            Update,
            (drive, reconfigure)
                .after(collect_pre::<V>)
                .before(CollisionSystems::Prepare),
        ),
        Sched::Fixed => app.add_systems(FixedUpdate, (drive, reconfigure)),
    };
    app
}

pub(crate) fn update_app<V: Dim>(sched: Sched) -> App {
    build_app::<V>(sched, 60.0, CollisionConfig::default())
}

pub(crate) fn ticks(app: &App) -> u32 {
    app.world().resource::<Rec>().tick
}

/// Updates until the pipeline has run `n` more times.
pub(crate) fn run_ticks(app: &mut App, n: u32) {
    let target = ticks(app) + n;
    let mut frames = 0;
    while ticks(app) < target {
        app.update();
        frames += 1;
        assert!(frames <= 10 * n + 10, "the pipeline does not run");
    }
}

/// `app.spawn_id(bundle)`: spawns in the app's world and gives the entity.
pub(crate) trait SpawnInApp {
    fn spawn_id(&mut self, bundle: impl Bundle) -> Entity;
}

impl SpawnInApp for App {
    fn spawn_id(&mut self, bundle: impl Bundle) -> Entity {
        self.world_mut().spawn(bundle).id()
    }
}

pub(crate) fn set_translation(app: &mut App, e: Entity, t: Vec3) {
    app.world_mut().get_mut::<Transform>(e).unwrap().translation = t;
}

pub(crate) fn events(app: &App) -> Vec<Ev> {
    app.world().resource::<Rec>().events.clone()
}

/// Checks the invariant of the event stream: a pair starts only when not open, ends only
/// when open (so every `CollisionStarted` has exactly one `CollisionEnded`), a
/// pass-through ends in the tick it started, and after each tick the open pairs are the
/// touching pairs. Returns the pairs still open.
pub(crate) fn check_events(events: &[Ev], touching: &[Pairs]) -> Result<Pairs, String> {
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
    // A tick's starts come earliest first (they are all written by one run of the
    // events stage, so consecutive starts of one tick are in the messages' order).
    for w in events.windows(2) {
        if let (Some(a), Some(b)) = (w[0].toi(), w[1].toi())
            && w[0].tick == w[1].tick
            && a > b
        {
            return Err(format!(
                "starts out of time order: {:?} before {:?}",
                w[0], w[1]
            ));
        }
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
pub(crate) fn finish<V: Dim>(app: &App) -> Vec<Ev> {
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
pub(crate) enum ColliderSpec<V: Dim> {
    Box(Aabb<V>),
    Ball(BoundingSphere<V>),
}

impl<V: Dim> ColliderSpec<V> {
    pub(crate) fn random(rng: &mut Rng) -> Self {
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

    pub(crate) fn insert(self, e: &mut EntityWorldMut) {
        match self {
            ColliderSpec::Box(a) => e.insert(a),
            ColliderSpec::Ball(s) => e.insert(s),
        };
    }
}

/// One body of a random scene: its collider and a smooth trajectory (each coordinate a
/// sine around `base`, a rotation turning at `spin` radians per tick, a fixed scale).
#[derive(Clone, Debug)]
pub(crate) struct BodySpec<V: Dim> {
    pub(crate) collider: ColliderSpec<V>,
    pub(crate) layers: Option<CollisionLayers>,
    pub(crate) velocity: Option<V>,
    pub(crate) base: Vec3,
    pub(crate) amplitude: Vec3,
    pub(crate) frequency: Vec3,
    pub(crate) phase: Vec3,
    pub(crate) axis: Vec3,
    pub(crate) angle: f32,
    pub(crate) spin: f32,
    pub(crate) scale: Vec3,
}

impl<V: Dim> BodySpec<V> {
    pub(crate) fn transform(&self, tick: usize) -> Transform {
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

pub(crate) struct Scene<V: Dim> {
    pub(crate) bodies: Vec<BodySpec<V>>,
    pub(crate) frames: Vec<Vec<Transform>>,
}

pub(crate) fn random_scene<V: Dim>(seed: u64, n: usize, ticks: usize) -> Scene<V> {
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
pub(crate) fn spawn_bodies<V: Dim>(
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
pub(crate) fn spawn_scene<V: Dim>(app: &mut App, scene: &Scene<V>) -> Vec<Entity> {
    let world = app.world_mut();
    let entities = spawn_bodies(world, &scene.bodies, &scene.frames[0]);
    world.insert_resource(Script {
        entities: entities.clone(),
        frames: scene.frames.clone(),
    });
    entities
}

/// The oracle's shape of every body, at each frame.
pub(crate) fn frame_shapes<V: Dim>(
    bodies: &[BodySpec<V>],
    frames: &[Vec<Transform>],
) -> Vec<Vec<OShape>> {
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
pub(crate) fn scene_oracle<V: Dim>(scene: &Scene<V>, entities: &[Entity]) -> Vec<Pairs> {
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
pub(crate) fn run_scene_against_oracle<V: Dim>(
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
pub(crate) fn assert_overlap_oracle(what: &str, oracle: &[Pairs], events: &[Ev]) -> usize {
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

// ---------------------------------------------------------------------------------------
// Helpers shared by several test modules

/// Two touching colliders `a` (box) and `b` (sphere), and a touching pair far away that
/// nothing should disturb. Runs one tick: both pairs start.
pub(crate) struct Touching {
    pub(crate) app: App,
    pub(crate) a: Entity,
    pub(crate) b: Entity,
    pub(crate) bystanders: (Entity, Entity),
}

pub(crate) fn touching_scene<V: Dim>(sched: Sched) -> Touching {
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
pub(crate) fn pair_events(s: &Touching, events: &[Ev]) -> Vec<Ev> {
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

pub(crate) fn assert_close(actual: f32, expected: f32, tolerance: f32, what: &str) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: {actual} is not {expected} (± {tolerance})"
    );
}

/// Asserts that the events are exactly a start at `toi` and a pass-through end in one
/// tick, for the pair (a, b), with the normal along x pointing from `entity` to `other`
/// (`a` moves towards +x relative to `b`).
pub(crate) fn assert_pass_through(events: &[Ev], a: Entity, b: Entity, toi: f32) {
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

/// What global observers saw of the entity events: the open (entity, other) pairs, in the
/// entity's own orientation, and anything out of order.
#[derive(Resource, Default)]
pub(crate) struct EntityEventLog {
    pub(crate) open: Pairs,
    pub(crate) count: usize,
    pub(crate) errors: Vec<String>,
}

/// Gives every collider a `CollidingEntities`, which the recorder compares with the
/// touching pairs after every tick.
pub(crate) fn keep_contacts<V: Dim>(app: &mut App) {
    app.add_observer(|ev: On<Add, TrackedCollider<V>>, mut commands: Commands| {
        commands
            .entity(ev.event_target())
            .try_insert_if_new(CollidingEntities::default());
    });
}

/// Global observers checking, per entity, that its starts and ends with each partner
/// alternate, starting with a start.
pub(crate) fn watch_entity_events<V: Dim>(app: &mut App) {
    app.init_resource::<EntityEventLog>()
        .add_observer(
            |ev: On<CollisionStarted<V>>, mut log: ResMut<EntityEventLog>| {
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
pub(crate) fn check_entity_events<V: Dim>(app: &App) {
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

/// The pair's events as `(tick, reason)`, `None` for a start.
pub(crate) fn pair_log(events: &[Ev], a: Entity, b: Entity) -> Vec<(u32, Option<EndReason>)> {
    events
        .iter()
        .filter(|e| e.pair() == key(a, b))
        .map(|e| (e.tick, e.reason()))
        .collect()
}
