//! Save, restore and replay, without a rollback library: the tests do what one does.
//! They save the collision state (`AabbTree`, cloned) and every collider's components at
//! a tick, play on, write the world back to the saved tick (with `RestoringWorld` set,
//! an entity despawned since spawned again under a new id and the state's references
//! mapped), and play the same ticks again. Every tick's messages and touching pairs,
//! and every collider's world shape, are hashed with the entities named by a tag of
//! their own (an id a restore cannot change): the replay must give the same hashes, bit
//! for bit, and the restore itself no message. A restore that leaves out the collision
//! state must not (the test can fail). Determinism beyond rollback: the same hashes on
//! 1, 2 and 4 threads of the compute task pool (each in a process of its own, the pool
//! being process-wide), on Bevy's single- and multi-threaded executors, and (each
//! tick's messages taken as a set) whatever the order in which the colliders were
//! spawned. `determinism` has scenes of its own spawned in several orders.
#![cfg(feature = "plugin")]

use crate::kit::rng;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use bevy::ecs::entity::{EntityHashMap, MapEntities};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::prelude::*;
use rng::Rng;

use crate::kit::dim::Dim;

/// The name a test gives a collider, which no restore changes.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Tag(u32);

/// The ticks played so far (the game's own state, saved and restored with the rest).
#[derive(Resource, Clone, Copy, Default)]
struct Ticks(u32);

/// Each tick's hash of messages and state, in order; its messages as text; whether the
/// hash takes a tick's messages as a set (sorted); each tick's times of impact of starts,
/// as bits, in the order read.
#[derive(Resource, Default)]
struct Hashes(Vec<u64>, Vec<Vec<String>>, bool, Vec<Vec<u32>>);

/// Messages read so far (the restore must write none).
#[derive(Resource, Default)]
struct Read(usize);

/// Size of the arena.
const SIDE: f32 = 20.0;
/// Moving colliders.
const MOVERS: u32 = 60;
/// The tag of the collider the game despawns at tick [`DESPAWN_AT`].
const DOOMED: u32 = 3;
const DESPAWN_AT: u32 = 26;
/// The tick at which the game spawns a new collider.
const SPAWN_AT: u32 = 31;

/// The tag of an entity, or `u32::MAX` for one without.
fn tag_of(world_tags: &Query<&Tag>, e: Entity) -> u32 {
    world_tags.get(e).map_or(u32::MAX, |t| t.0)
}

/// Moves the movers, bounces them off the arena's sides, teleports every seventh one
/// now and then, despawns one and spawns one at fixed ticks: the game, the same every
/// time it plays a tick.
fn play<V: Dim>(
    mut commands: Commands,
    mut ticks: ResMut<Ticks>,
    mut movers: Query<(Entity, &Tag, &mut Transform, &mut Velocity<V>)>,
) {
    ticks.0 += 1;
    let dt = 1.0 / 60.0;
    for (entity, tag, mut transform, mut velocity) in &mut movers {
        let mut c = transform.translation;
        let mut v = velocity.0.extend_to_3d();
        for k in 0..V::DIM {
            c[k] += v[k] * dt;
            if c[k] < 1.0 || c[k] > SIDE - 1.0 {
                c[k] = c[k].clamp(1.0, SIDE - 1.0);
                v[k] = -v[k];
            }
        }
        if tag.0.is_multiple_of(7) && (ticks.0 + tag.0).is_multiple_of(23) {
            c = Vec3::new(SIDE - c.y, c.x, c.z);
            commands.entity(entity).insert(Teleported);
        }
        transform.translation = c;
        velocity.0 = V::truncate_from_3d(v);
        if tag.0 == DOOMED && ticks.0 == DESPAWN_AT {
            commands.entity(entity).despawn();
        }
    }
    if ticks.0 == SPAWN_AT {
        commands.spawn((
            Tag(1000),
            Transform::from_xyz(SIDE / 2.0, SIDE / 2.0, SIDE / 2.0),
            BoundingSphere::<V>::new(0.7),
            Velocity(V::truncate_from_3d(Vec3::new(9.0, -5.0, 3.0))),
            CollidingEntities::default(),
        ));
    }
}

/// The bits of a vector's coordinates.
fn bits<V: Dim>(v: V) -> Vec<u32> {
    (0..V::DIM).map(|k| v.axis(k).to_bits()).collect()
}

/// Hashes the tick: its messages (each entity by its tag), and after it the touching
/// pairs, every collider's world shape and contact set, sorted by tag. Keeps the
/// messages as text (floats as bits), and the times of impact of the starts in the
/// order read.
fn record<V: Dim>(
    mut messages: MessageReader<CollisionMessage<V>>,
    tree: Res<AabbTree<V>>,
    tags: Query<&Tag>,
    shapes: Query<(&Tag, &TrackedCollider<V>, Option<&CollidingEntities>)>,
    mut hashes: ResMut<Hashes>,
    mut read: ResMut<Read>,
) {
    let mut h = DefaultHasher::new();
    let mut texts = Vec::new();
    let mut times = Vec::new();
    for message in messages.read() {
        read.0 += 1;
        let text = match message {
            // Each pair by its tags, smaller first (the normal from that one, turned as
            // the entity events turn it: zero coordinates stay +0): a collider spawned
            // again under a new id, or spawned in another order, may have swapped sides.
            CollisionMessage::Started(s) => {
                assert!(
                    bits(s.normal).iter().all(|&b| b != (-0.0f32).to_bits()),
                    "a normal with -0: {:?}",
                    s.normal
                );
                times.push(s.time_of_impact.to_bits());
                let (a, b) = (tag_of(&tags, s.entity), tag_of(&tags, s.other));
                let normal = if a <= b { s.normal } else { V::ZERO - s.normal };
                format!(
                    "start {} {} {:08x} {:08x?}",
                    a.min(b),
                    a.max(b),
                    s.time_of_impact.to_bits(),
                    bits(normal)
                )
            }
            CollisionMessage::Ended(e) => {
                let (a, b) = (tag_of(&tags, e.entity), tag_of(&tags, e.other));
                format!("end {} {} {:?}", a.min(b), a.max(b), e.reason)
            }
        };
        texts.push(text);
    }
    if hashes.2 {
        texts.sort();
    }
    texts.hash(&mut h);
    let mut pairs: Vec<_> = tree
        .touching_pairs()
        .map(|(a, b)| {
            let (a, b) = (tag_of(&tags, a), tag_of(&tags, b));
            (a.min(b), a.max(b))
        })
        .collect();
    pairs.sort_unstable();
    pairs.hash(&mut h);
    let mut all: Vec<_> = shapes
        .iter()
        .map(|(tag, t, contacts)| {
            let aabb = t.world_aabb();
            let mut contacts: Option<Vec<u32>> =
                contacts.map(|c| c.iter().map(|e| tag_of(&tags, e)).collect());
            if let Some(c) = &mut contacts {
                c.sort_unstable();
            }
            (tag.0, bits(aabb.min), bits(aabb.max), contacts)
        })
        .collect();
    all.sort_unstable();
    all.hash(&mut h);
    hashes.0.push(h.finish());
    hashes.1.push(texts);
    hashes.3.push(times);
}

/// The tags of the static pillars: `PILLARS` from [`FIRST_PILLAR`] on.
const FIRST_PILLAR: u32 = 500;
const PILLARS: u32 = 5;

/// The arena: static walls and pillars, and movers (boxes and balls, some with
/// `CollidingEntities`), spawned in the order of their tags in `order` (tags not in it
/// after, movers first).
fn app<V: Dim>(seed: u64, order: &[u32], config: CollisionConfig) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .add_plugins(AabbTreePlugin::<V>::new(Update))
        .insert_resource(config)
        .init_resource::<Ticks>()
        .init_resource::<Hashes>()
        .init_resource::<Read>()
        .add_systems(
            Update,
            (
                play::<V>.before(CollisionSystems::Prepare),
                record::<V>.after(CollisionSystems::Events),
            ),
        );
    let mut rng = Rng::new(seed);
    let mut movers: Vec<_> = (0..MOVERS)
        .map(|i| {
            let at = Vec3::new(
                rng.range(2.0, SIDE - 2.0),
                rng.range(2.0, SIDE - 2.0),
                rng.range(2.0, SIDE - 2.0),
            );
            let v = Vec3::new(
                rng.range(-20.0, 20.0),
                rng.range(-20.0, 20.0),
                rng.range(-20.0, 20.0),
            );
            (i, at, v, rng.range(0.2, 0.8))
        })
        .collect();
    let pillars = [
        (5.0, 5.0),
        (15.0, 5.0),
        (10.0, 10.0),
        (5.0, 15.0),
        (15.0, 15.0),
    ];
    movers.extend(
        pillars
            .into_iter()
            .zip(FIRST_PILLAR..)
            .map(|((x, y), i)| (i, Vec3::new(x, y, SIDE / 2.0), Vec3::ZERO, 0.0)),
    );
    movers.sort_by_key(|m| order.iter().position(|&o| o == m.0).unwrap_or(usize::MAX));
    let world = app.world_mut();
    for (i, at, v, size) in movers {
        if i >= FIRST_PILLAR {
            world.spawn((
                Tag(i),
                Transform::from_translation(at),
                Aabb::new(V::truncate_from_3d(Vec3::new(0.3, 2.0, SIDE))),
                Static,
            ));
            continue;
        }
        let mut e = world.spawn((
            Tag(i),
            Transform::from_translation(at),
            Velocity(V::truncate_from_3d(v)),
        ));
        if i % 2 == 0 {
            e.insert(Aabb::new(V::splat(size)));
        } else {
            e.insert(BoundingSphere::<V>::new(size));
        }
        if i % 3 == 0 {
            e.insert(CollidingEntities::default());
        }
    }
    app
}

/// One collider's saved components.
#[derive(Clone)]
struct SavedCollider<V: Dim> {
    entity: Entity,
    tag: Tag,
    transform: Transform,
    velocity: Option<Velocity<V>>,
    aabb: Option<Aabb<V>>,
    ball: Option<BoundingSphere<V>>,
    is_static: bool,
    tracked: TrackedCollider<V>,
    contacts: Option<CollidingEntities>,
}

/// A saved tick: the collision state, the colliders, the game's tick count.
struct Saved<V: Dim> {
    state: AabbTree<V>,
    colliders: Vec<SavedCollider<V>>,
    ticks: Ticks,
}

fn save<V: Dim>(world: &mut World) -> Saved<V> {
    let mut q = world.query::<(
        Entity,
        &Tag,
        &Transform,
        Option<&Velocity<V>>,
        Option<&Aabb<V>>,
        Option<&BoundingSphere<V>>,
        Has<Static>,
        &TrackedCollider<V>,
        Option<&CollidingEntities>,
    )>();
    let colliders = q
        .iter(world)
        .map(|(entity, tag, t, v, a, b, s, tracked, c)| SavedCollider {
            entity,
            tag: *tag,
            transform: *t,
            velocity: v.copied(),
            aabb: a.copied(),
            ball: b.copied(),
            is_static: s,
            tracked: *tracked,
            contacts: c.cloned(),
        })
        .collect();
    Saved {
        state: world.resource::<AabbTree<V>>().clone(),
        colliders,
        ticks: *world.resource::<Ticks>(),
    }
}

/// A mapper over an `EntityHashMap`, as a rollback library's.
struct Mapper<'a>(&'a EntityHashMap<Entity>);

impl bevy::ecs::entity::EntityMapper for Mapper<'_> {
    fn get_mapped(&mut self, source: Entity) -> Entity {
        self.0.get(&source).copied().unwrap_or(source)
    }

    fn set_mapped(&mut self, _: Entity, _: Entity) {}
}

/// Writes the world back to `saved`, as a rollback library does: colliders spawned
/// since despawned, those despawned since spawned again (new ids, mapped), every
/// component written back, the collision state restored, with [`RestoringWorld`] set
/// throughout. With `with_state` false the collision state is left as it is (the
/// defect the tests must catch).
fn restore<V: Dim>(world: &mut World, saved: &Saved<V>, with_state: bool) {
    world.resource_mut::<RestoringWorld>().0 = true;
    let mut tags = world.query::<(Entity, &Tag)>();
    let live: Vec<(Entity, Tag)> = tags.iter(world).map(|(e, t)| (e, *t)).collect();
    for (entity, tag) in &live {
        if !saved.colliders.iter().any(|c| c.tag == *tag) {
            world.despawn(*entity);
        }
    }
    let mut map = EntityHashMap::default();
    for c in &saved.colliders {
        let entity = if world.get_entity(c.entity).is_ok() {
            c.entity
        } else {
            let new = world.spawn(c.tag).id();
            map.insert(c.entity, new);
            new
        };
        let mut e = world.entity_mut(entity);
        e.insert((c.transform, c.tracked));
        match c.velocity {
            Some(v) => e.insert(v),
            None => e.remove::<Velocity<V>>(),
        };
        match c.aabb {
            Some(a) => e.insert(a),
            None => e.remove::<Aabb<V>>(),
        };
        match c.ball {
            Some(b) => e.insert(b),
            None => e.remove::<BoundingSphere<V>>(),
        };
        if c.is_static {
            e.insert(Static);
        } else {
            e.remove::<Static>();
        }
        e.remove::<Teleported>();
        match &c.contacts {
            Some(contacts) => e.insert(contacts.clone()),
            None => e.remove::<CollidingEntities>(),
        };
    }
    // References to colliders spawned again: the components' and the state's.
    let mut contacts = world.query::<&mut CollidingEntities>();
    for mut c in contacts.iter_mut(world) {
        c.map_entities(&mut Mapper(&map));
    }
    if with_state {
        let mut state = saved.state.clone();
        state.map_entities(&mut Mapper(&map));
        world.insert_resource(state);
    }
    *world.resource_mut::<Ticks>() = saved.ticks;
    world.resource_mut::<RestoringWorld>().0 = false;
}

/// Plays `ticks` ticks; returns their hashes.
fn play_ticks(app: &mut App, ticks: usize) -> Vec<u64> {
    let first = app.world().resource::<Hashes>().0.len();
    for _ in 0..ticks {
        app.update();
    }
    app.world().resource::<Hashes>().0[first..].to_vec()
}

/// The messages of the last `ticks` ticks, as text.
fn texts(app: &App, ticks: usize) -> Vec<Vec<String>> {
    let all = &app.world().resource::<Hashes>().1;
    all[all.len() - ticks..].to_vec()
}

/// Every collider's tag, movers and pillars, shuffled by `seed`.
fn order(seed: u64) -> Vec<u32> {
    let mut order: Vec<u32> = (0..MOVERS)
        .chain(FIRST_PILLAR..FIRST_PILLAR + PILLARS)
        .collect();
    let mut rng = Rng::new(seed);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
}

/// Restores tick 20 after playing to tick 45 (past the despawn, the spawn and
/// teleports), plays the 25 ticks again: the same hashes, and no message from the
/// restore. The restore is done twice, the second time from the replayed world.
fn replay_after_restore<V: Dim>(replayable: bool) {
    let config = CollisionConfig {
        replayable,
        ..default()
    };
    let mut app = app::<V>(7, &(0..MOVERS).collect::<Vec<_>>(), config);
    play_ticks(&mut app, 20);
    let saved = save::<V>(app.world_mut());
    // The collider spawned again by the restore has a new id, which may sort it
    // elsewhere among a tick's messages: each tick's messages compare as a set.
    app.world_mut().resource_mut::<Hashes>().2 = true;
    let first = play_ticks(&mut app, 25);
    let first_texts = texts(&app, 25);
    for round in 0..2 {
        let read = app.world().resource::<Read>().0;
        restore(app.world_mut(), &saved, true);
        let again = play_ticks(&mut app, 25);
        if let Some(tick) = (0..25).find(|&i| first[i] != again[i]) {
            panic!(
                "round {round}: replayed tick {} differs from the first play: {:?} against {:?}",
                tick + 21,
                first_texts[tick],
                texts(&app, 25)[tick]
            );
        }
        // Messages read in the replay: those of its 25 ticks, as many as the first time.
        let replayed = app.world().resource::<Read>().0 - read;
        assert!(replayed > 0, "round {round}: no message in the replay");
    }
    // The scene has contacts to replay: starts and ends in the ticks after the save.
    assert!(
        app.world().resource::<Read>().0 > 40,
        "too few messages to compare: {}",
        app.world().resource::<Read>().0
    );
}

/// A restore writes no message and triggers no entity event, though it despawns the
/// collider spawned since the save, spawns the despawned one again and writes every
/// collider's components.
fn restore_is_silent<V: Dim>() {
    let mut app = app::<V>(
        7,
        &(0..MOVERS).collect::<Vec<_>>(),
        CollisionConfig::default(),
    );
    play_ticks(&mut app, 20);
    let saved = save::<V>(app.world_mut());
    play_ticks(&mut app, 25);
    app.world_mut().init_resource::<Triggered>();
    app.world_mut()
        .add_observer(|_: On<CollisionStarted<V>>, mut t: ResMut<Triggered>| t.0 += 1);
    app.world_mut()
        .add_observer(|_: On<CollisionEnded>, mut t: ResMut<Triggered>| t.0 += 1);
    let before = app
        .world()
        .resource::<Messages<CollisionMessage<V>>>()
        .len();
    restore(app.world_mut(), &saved, true);
    app.world_mut().flush();
    assert_eq!(
        app.world()
            .resource::<Messages<CollisionMessage<V>>>()
            .len(),
        before,
        "the restore wrote messages"
    );
    assert_eq!(
        app.world().resource::<Triggered>().0,
        0,
        "the restore triggered entity events"
    );
    // The tree holds the restored colliders: the despawned one is back, the new one gone.
    let tree = app.world().resource::<AabbTree<V>>();
    let in_tree = tree.tree().len() + tree.static_tree().len();
    assert_eq!(in_tree, saved.colliders.len());
}

#[derive(Resource, Default)]
struct Triggered(usize);

/// The defect the replay test must catch: the components written back but the collision
/// state left at the latest tick.
fn restore_without_state_differs<V: Dim>() {
    let mut app = app::<V>(
        7,
        &(0..MOVERS).collect::<Vec<_>>(),
        CollisionConfig::default(),
    );
    play_ticks(&mut app, 20);
    let saved = save::<V>(app.world_mut());
    let first = play_ticks(&mut app, 25);
    restore(app.world_mut(), &saved, false);
    let again = play_ticks(&mut app, 25);
    assert_ne!(
        first, again,
        "a restore without the collision state replayed the same"
    );
}

/// Plays the scene spawned in the order `order` for `ticks` ticks with each tick's
/// messages taken as a set: each tick's hash, messages (text), and times of impact of
/// the starts in the order read.
fn play_in_order<V: Dim>(
    order: &[u32],
    config: &CollisionConfig,
    ticks: usize,
) -> (Vec<u64>, Vec<Vec<String>>, Vec<Vec<u32>>) {
    let mut app = app::<V>(7, order, config.clone());
    app.world_mut().resource_mut::<Hashes>().2 = true;
    let hashes = play_ticks(&mut app, ticks);
    let texts = texts(&app, ticks);
    let times = app.world().resource::<Hashes>().3.clone();
    (hashes, texts, times)
}

/// The scene spawned in four orders (movers and pillars by tag, reversed, shuffled
/// twice), so that the entities' ids, the trees' proxy ids and shapes, the orientation of
/// each pair in the pair table and the order in which the pairs are tested all differ:
/// every tick the same messages as a set (pairs by tag, kind, reason, time of impact
/// and normal bit for bit), the starts' times of impact in the same order, and after it
/// the same touching pairs, world shapes and contact sets by tag.
fn same_whatever_the_spawn_order<V: Dim>(replayable: bool) {
    let config = CollisionConfig {
        replayable,
        ..default()
    };
    let by_tag: Vec<u32> = (0..MOVERS)
        .chain(FIRST_PILLAR..FIRST_PILLAR + PILLARS)
        .collect();
    let reversed: Vec<u32> = by_tag.iter().rev().copied().collect();
    let ticks = 90;
    let (first, first_texts, first_times) = play_in_order::<V>(&by_tag, &config, ticks);
    for (name, order) in [
        ("reversed", reversed),
        ("shuffled", order(5)),
        ("shuffled again", order(9)),
    ] {
        let (hashes, texts, times) = play_in_order::<V>(&order, &config, ticks);
        if let Some(tick) = (0..ticks).find(|&i| first[i] != hashes[i]) {
            let only = |x: &[String], y: &[String]| -> Vec<String> {
                x.iter().filter(|t| !y.contains(t)).cloned().collect()
            };
            panic!(
                "{name}: tick {} differs; messages only in the order by tag: {:?}, only in \
                 this order: {:?}",
                tick + 1,
                only(&first_texts[tick], &texts[tick]),
                only(&texts[tick], &first_texts[tick])
            );
        }
        assert_eq!(first_times, times, "{name}: the starts' order by time");
    }
    // The scene has what to compare: swept starts (a time of impact above 0) and ends.
    let all: Vec<&String> = first_texts.iter().flatten().collect();
    let swept = all
        .iter()
        .filter(|t| t.starts_with("start") && !t.contains(" 00000000 "))
        .count();
    let ends = all.iter().filter(|t| t.starts_with("end")).count();
    assert!(
        swept > 10 && ends > 40,
        "too little to compare: {swept} swept starts, {ends} ends"
    );
}

fn same_whatever_the_spawn_order_replayable<V: Dim>() {
    same_whatever_the_spawn_order::<V>(true);
}

fn same_whatever_the_spawn_order_default<V: Dim>() {
    same_whatever_the_spawn_order::<V>(false);
}

/// How a run's schedules run their systems.
#[derive(Clone, Copy, Debug)]
enum Executor {
    /// Bevy's default: the multi-threaded executor with Bevy's `multi_threaded` feature
    /// (`--all-features` turns it on), else the single-threaded one.
    Default,
    /// One system after another, on the calling thread.
    SingleThreaded,
    /// The multi-threaded executor, whatever the features: systems run as tasks on the
    /// compute task pool (one thread, the calling one, without `multi_threaded`), in
    /// the order their tasks are spawned and finish rather than one fixed order.
    MultiThreaded,
}

/// The scene (shuffled spawn order, the parallel pair search from one moved collider)
/// for 60 ticks with every schedule run by `executor`: each tick's hash.
fn hashes_with<V: Dim>(executor: Executor, replayable: bool) -> Vec<u64> {
    use bevy::ecs::schedule::{MultiThreadedExecutor, SingleThreadedExecutor};
    let config = CollisionConfig {
        parallel_pairs_from: Some(1),
        replayable,
        ..default()
    };
    let mut app = app::<V>(11, &order(5), config);
    let mut schedules = app.world_mut().resource_mut::<Schedules>();
    for (_, schedule) in schedules.iter_mut() {
        match executor {
            Executor::Default => &mut *schedule,
            Executor::SingleThreaded => schedule.set_executor(SingleThreadedExecutor::new()),
            Executor::MultiThreaded => schedule.set_executor(MultiThreadedExecutor::new()),
        };
    }
    play_ticks(&mut app, 60)
}

/// The same hashes, tick by tick, with every schedule on the single-threaded executor,
/// on the multi-threaded one and on Bevy's default, replayable and not. With the
/// default features (Bevy without `multi_threaded`) the default is the single-threaded
/// executor, and the multi-threaded one runs the systems as tasks on a one-thread pool:
/// the run compares two executors' orders of the systems that no ordering constrains.
/// With `--all-features` (`multi_threaded` on) the default is the multi-threaded
/// executor and the pool has a thread per core: systems, and the plugin's parallel
/// stages, run on several threads at once.
fn same_on_either_executor<V: Dim>() {
    for replayable in [false, true] {
        let single = hashes_with::<V>(Executor::SingleThreaded, replayable);
        for executor in [Executor::MultiThreaded, Executor::Default] {
            assert_eq!(
                single,
                hashes_with::<V>(executor, replayable),
                "{executor:?} against the single-threaded executor, replayable {replayable}"
            );
        }
    }
}

macro_rules! both_dims {
    ($($name:ident $(($arg:expr))?),* $(,)?) => {
        $(
            mod $name {
                #[test]
                fn d2() {
                    super::$name::<bevy::math::Vec2>($($arg)?);
                }
                #[test]
                fn d3() {
                    super::$name::<bevy::math::Vec3>($($arg)?);
                }
            }
        )*
    };
}

fn replay_after_restore_replayable<V: Dim>() {
    replay_after_restore::<V>(true);
}

fn replay_after_restore_default<V: Dim>() {
    replay_after_restore::<V>(false);
}

both_dims!(
    replay_after_restore_replayable,
    replay_after_restore_default,
    restore_is_silent,
    restore_without_state_differs,
    same_whatever_the_spawn_order_replayable,
    same_whatever_the_spawn_order_default,
    same_on_either_executor,
);

/// The environment variable that makes [`hashes_on_threads`] a child run with that many
/// threads in its compute task pool.
const THREADS: &str = "BEVY_AABB_TREE_TEST_THREADS";

/// A child run: the scene on the thread count of [`THREADS`], with the parallel pair
/// search from one moved collider, replayable and not; prints each run's hash.
#[test]
fn hashes_on_threads() {
    let Some(threads) = std::env::var(THREADS)
        .ok()
        .and_then(|t| t.parse::<usize>().ok())
    else {
        return;
    };
    bevy::tasks::ComputeTaskPool::get_or_init(|| {
        bevy::tasks::TaskPoolBuilder::new()
            .num_threads(threads)
            .build()
    });
    for replayable in [false, true] {
        let config = CollisionConfig {
            parallel_pairs_from: Some(1),
            replayable,
            ..default()
        };
        let mut h = DefaultHasher::new();
        let mut flat = app::<Vec2>(11, &order(5), config.clone());
        play_ticks(&mut flat, 60).hash(&mut h);
        let mut deep = app::<Vec3>(11, &order(5), config);
        play_ticks(&mut deep, 60).hash(&mut h);
        println!("HASH {threads} {replayable} {:016x}", h.finish());
    }
}

/// The same hashes on 1, 2 and 4 threads of the compute task pool (with Bevy's
/// `multi_threaded` feature; without it the pool has one thread whatever it is asked).
#[test]
fn same_on_1_2_4_threads() {
    if std::env::var(THREADS).is_ok() {
        return;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let child = crate::kit::process::test_name(module_path!(), "hashes_on_threads");
    let mut lines = Vec::new();
    for threads in [1, 2, 4] {
        let out = std::process::Command::new(&exe)
            .args([&child, "--exact", "--nocapture", "--test-threads", "1"])
            .env(THREADS, threads.to_string())
            .output()
            .expect("the child run");
        assert!(
            out.status.success(),
            "the child run on {threads} threads failed"
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let hashes: Vec<String> = text
            .lines()
            .filter_map(|l| l.split_once("HASH ").map(|(_, rest)| rest))
            .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(hashes.len(), 2, "child output: {text}");
        lines.push(hashes);
    }
    assert_eq!(lines[0], lines[1], "1 thread against 2");
    assert_eq!(lines[0], lines[2], "1 thread against 4");
}
