//! Static colliders, idle pairs and children of still parents, against a brute-force
//! oracle written here (its own overlap formulas) and hand-computed cases, 2D and 3D.

use std::collections::BTreeSet;
use std::time::Duration;

use bevy::ecs::entity_disabling::Disabled;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::prelude::*;

use crate::kit::rng;
use rng::Rng;

use crate::harness::SpawnInApp;
use crate::kit::dim::Dim;

pub(crate) type Pair = (Entity, Entity);

pub(crate) fn key(a: Entity, b: Entity) -> Pair {
    if a < b { (a, b) } else { (b, a) }
}

/// Every event of every tick: `(tick, pair, started)`.
#[derive(Resource, Default)]
pub(crate) struct Log {
    pub(crate) tick: u32,
    pub(crate) events: Vec<(u32, Pair, Option<EndReason>)>,
}

/// Reads the combined stream, in the order the contacts started and ended.
pub(crate) fn record<V: Dim>(
    mut log: ResMut<Log>,
    mut messages: MessageReader<CollisionMessage<V>>,
) {
    log.tick += 1;
    let tick = log.tick;
    for m in messages.read() {
        log.events.push(match m {
            CollisionMessage::Started(s) => (tick, key(s.entity, s.other), None),
            CollisionMessage::Ended(e) => (tick, key(e.entity, e.other), Some(e.reason)),
        });
    }
}

/// Both ways of finding changed static colliders.
pub(crate) const MODES: [StaticChangeDetection; 2] =
    [StaticChangeDetection::Scan, StaticChangeDetection::OnInsert];

/// A headless app with the plugin in `Update` (one tick a frame), static colliders found
/// by `mode`, and the event log.
pub(crate) fn app<V: Dim>(mode: StaticChangeDetection) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins(AabbTreePlugin::<V>::new(Update))
        .insert_resource(CollisionConfig {
            static_changes: mode,
            ..default()
        })
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .init_resource::<Log>()
        .add_systems(Update, record::<V>.after(CollisionSystems::Events));
    app
}

pub(crate) fn tree<V: Dim>(app: &App) -> &AabbTree<V> {
    app.world().resource::<AabbTree<V>>()
}

pub(crate) fn events_at(app: &App, tick: u32) -> Vec<(Pair, Option<EndReason>)> {
    let log = app.world().resource::<Log>();
    let mut out: Vec<_> = log
        .events
        .iter()
        .filter(|e| e.0 == tick)
        .map(|e| (e.1, e.2))
        .collect();
    out.sort_by_key(|e| (e.0, e.1.map(|r| format!("{r:?}"))));
    out
}

pub(crate) fn last_tick(app: &App) -> u32 {
    app.world().resource::<Log>().tick
}

/// The oracle's shapes: world boxes and balls, with their own overlap test (boundaries
/// touching count as overlapping).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Shape {
    Box(Vec3, Vec3),
    Ball(Vec3, f32),
}

pub(crate) fn overlap(a: Shape, b: Shape) -> bool {
    fn ball_box(c: Vec3, r: f32, min: Vec3, max: Vec3) -> bool {
        let d = c - c.clamp(min, max);
        d.x * d.x + d.y * d.y + d.z * d.z <= r * r
    }
    match (a, b) {
        (Shape::Box(a0, a1), Shape::Box(b0, b1)) => {
            a0.x <= b1.x
                && b0.x <= a1.x
                && a0.y <= b1.y
                && b0.y <= a1.y
                && a0.z <= b1.z
                && b0.z <= a1.z
        }
        (Shape::Ball(c1, r1), Shape::Ball(c2, r2)) => {
            let d = c1 - c2;
            d.x * d.x + d.y * d.y + d.z * d.z <= (r1 + r2) * (r1 + r2)
        }
        (Shape::Ball(c, r), Shape::Box(min, max)) | (Shape::Box(min, max), Shape::Ball(c, r)) => {
            ball_box(c, r, min, max)
        }
    }
}

/// One collider of the random scene, as the test drives it.
#[derive(Clone, Copy, Debug)]
struct Spec {
    entity: Entity,
    /// Under the map entity (a tile).
    child: bool,
    /// Local translation.
    at: Vec3,
    /// Half extents (a box) or radius in `x` (a ball).
    size: Vec3,
    ball: bool,
    is_static: bool,
    layers: CollisionLayers,
    disabled: bool,
}

/// The pairs the oracle says touch: enabled colliders whose shapes overlap and whose
/// layers match, never two static ones.
fn oracle<V: Dim>(specs: &[Spec], map_at: Vec3) -> BTreeSet<Pair> {
    let world: Vec<(Spec, Shape)> = specs
        .iter()
        .filter(|s| !s.disabled)
        .map(|s| {
            let c = V::truncate_from_3d(s.at + if s.child { map_at } else { Vec3::ZERO })
                .extend_to_3d();
            let shape = if s.ball {
                Shape::Ball(c, s.size.x)
            } else {
                let h = V::truncate_from_3d(s.size).extend_to_3d();
                Shape::Box(c - h, c + h)
            };
            (*s, shape)
        })
        .collect();
    let mut out = BTreeSet::new();
    for (i, (a, sa)) in world.iter().enumerate() {
        for (b, sb) in &world[i + 1..] {
            let layers = a.layers.memberships & b.layers.filters != 0
                && b.layers.memberships & a.layers.filters != 0;
            if !(a.is_static && b.is_static) && layers && overlap(*sa, *sb) {
                out.insert(key(a.entity, b.entity));
            }
        }
    }
    out
}

fn spawn_spec<V: Dim>(world: &mut World, spec: &mut Spec, map: Entity) {
    let mut e = world.spawn((Transform::from_translation(spec.at), spec.layers));
    if spec.ball {
        e.insert(BoundingSphere::<V>::new(spec.size.x));
    } else {
        e.insert(Aabb::<V>::new(V::truncate_from_3d(spec.size)));
    }
    if spec.is_static {
        e.insert(Static);
    }
    if spec.child {
        e.insert(ChildOf(map));
    }
    spec.entity = e.id();
}

/// Adds `Static` to the collider of `spec` or removes it.
fn toggle_static(world: &mut World, spec: &mut Spec) {
    spec.is_static = !spec.is_static;
    let mut e = world.entity_mut(spec.entity);
    if spec.is_static {
        e.insert(Static);
    } else {
        e.remove::<Static>();
    }
}

/// A random scene of static tiles (some under a map entity), static boxes and moving
/// boxes and balls. Each tick moves the movers, and now and then moves the map, moves or
/// resizes a static collider, toggles `Static`, changes layers, disables or despawns and
/// respawns a collider, puts one under the map or takes it out, or moves one through
/// `&mut Transform` (not a static one under `OnInsert`, which does not see such writes).
/// After every tick the touching pairs equal the oracle's, and the events replayed give
/// the same set.
fn random_static_scene<V: Dim>(seed: u64, mode: StaticChangeDetection) {
    let mut rng = Rng::new(seed);
    let mut app = app::<V>(mode);
    let map = app.spawn_id(Transform::default());
    let mut map_at = Vec3::ZERO;
    let mut specs = Vec::new();
    let all = CollisionLayers::ALL;
    // A floor of touching unit tiles under the map, and a free-standing wall.
    for x in -15..15 {
        specs.push(Spec {
            entity: Entity::PLACEHOLDER,
            child: true,
            at: Vec3::new(x as f32, -3.0, 0.0),
            size: Vec3::splat(0.5),
            ball: false,
            is_static: true,
            layers: all,
            disabled: false,
        });
    }
    for y in -2..4 {
        specs.push(Spec {
            entity: Entity::PLACEHOLDER,
            child: false,
            at: Vec3::new(6.0, y as f32, 0.0),
            size: Vec3::splat(0.5),
            ball: false,
            is_static: true,
            layers: all,
            disabled: false,
        });
    }
    for _ in 0..24 {
        specs.push(Spec {
            entity: Entity::PLACEHOLDER,
            child: false,
            at: rng.vec3(-7.0, 7.0),
            size: Vec3::new(
                rng.range(0.2, 0.8),
                rng.range(0.2, 0.8),
                rng.range(0.2, 0.8),
            ),
            ball: rng.chance(0.4),
            is_static: rng.chance(0.2),
            layers: if rng.chance(0.8) {
                all
            } else {
                CollisionLayers::new(1 << rng.below(2), 1 + rng.below(3) as u32)
            },
            disabled: false,
        });
    }
    for spec in &mut specs {
        spawn_spec::<V>(app.world_mut(), spec, map);
    }
    let mut touching = BTreeSet::new();
    let mut static_events = 0;
    let mut checked_events = 0;
    let mut swaps = 0;
    for tick in 0..300 {
        // Movers walk; the rest changes now and then.
        for spec in specs.iter_mut().filter(|s| !s.is_static && !s.disabled) {
            spec.at = (spec.at + rng.vec3(-0.3, 0.3)).clamp(Vec3::splat(-8.0), Vec3::splat(8.0));
            app.world_mut()
                .entity_mut(spec.entity)
                .insert(Transform::from_translation(spec.at));
        }
        if rng.chance(0.05) {
            map_at = Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), 0.0);
            app.world_mut()
                .entity_mut(map)
                .insert(Transform::from_translation(map_at));
        }
        let i = rng.below(specs.len());
        let spec = &mut specs[i];
        match rng.below(12) {
            0 if spec.is_static && !spec.disabled => {
                spec.at += rng.vec3(-0.7, 0.7);
                app.world_mut()
                    .entity_mut(spec.entity)
                    .insert(Transform::from_translation(spec.at));
            }
            1 if !spec.ball && !spec.disabled => {
                spec.size = Vec3::new(
                    rng.range(0.1, 0.9),
                    rng.range(0.1, 0.9),
                    rng.range(0.1, 0.9),
                );
                app.world_mut()
                    .entity_mut(spec.entity)
                    .insert(Aabb::<V>::new(V::truncate_from_3d(spec.size)));
            }
            2 => toggle_static(app.world_mut(), spec),
            3 => {
                spec.layers = if rng.chance(0.5) {
                    all
                } else {
                    CollisionLayers::new(1 << rng.below(2), 1 + rng.below(3) as u32)
                };
                app.world_mut().entity_mut(spec.entity).insert(spec.layers);
            }
            4 => {
                spec.disabled = !spec.disabled;
                let mut e = app.world_mut().entity_mut(spec.entity);
                if spec.disabled {
                    e.insert(Disabled);
                } else {
                    e.remove::<Disabled>();
                }
            }
            5 => {
                app.world_mut().entity_mut(spec.entity).despawn();
                spec.disabled = false;
                spawn_spec::<V>(app.world_mut(), spec, map);
            }
            6 => {
                // Put under the map or taken out from under it: the world position
                // changes by the map's offset, the local one stays.
                spec.child = !spec.child;
                let mut e = app.world_mut().entity_mut(spec.entity);
                if spec.child {
                    e.insert(ChildOf(map));
                } else {
                    e.remove::<ChildOf>();
                }
            }
            7 if !spec.disabled && (!spec.is_static || mode == StaticChangeDetection::Scan) => {
                // A write in place, which `OnInsert` does not see on static colliders.
                spec.at += rng.vec3(-0.7, 0.7);
                app.world_mut()
                    .get_mut::<Transform>(spec.entity)
                    .expect("a collider")
                    .translation = spec.at;
            }
            _ => {}
        }
        // Now and then a tick that processes every collider (a `CollisionConfig` change),
        // on which a touching pair of a static and a moving collider swaps its `Static`
        // side: the contact goes on, without events.
        if rng.chance(0.08) {
            let margin = if rng.chance(0.5) { 0.08 } else { 0.05 };
            app.world_mut().resource_mut::<CollisionConfig>().margin = margin;
            let index = |e: Entity| specs.iter().position(|s| s.entity == e);
            let swappable: Vec<(usize, usize)> = touching
                .iter()
                .filter_map(|&(a, b)| {
                    let (ia, ib) = (index(a)?, index(b)?);
                    let (sa, sb) = (&specs[ia], &specs[ib]);
                    (sa.is_static != sb.is_static && !sa.disabled && !sb.disabled)
                        .then_some((ia, ib))
                })
                .collect();
            if !swappable.is_empty() {
                let (ia, ib) = swappable[rng.below(swappable.len())];
                let order = if rng.chance(0.5) { [ia, ib] } else { [ib, ia] };
                for i in order {
                    toggle_static(app.world_mut(), &mut specs[i]);
                }
                swaps += 1;
            }
        }
        app.update();
        let expected = oracle::<V>(&specs, map_at);
        let state = tree::<V>(&app);
        let actual: BTreeSet<Pair> = state.touching_pairs().map(|(a, b)| key(a, b)).collect();
        assert_eq!(actual, expected, "seed {seed}, tick {tick}: touching pairs");
        // The events of the tick, replayed on the last set, give the new set.
        let mut events = events_at(&app, last_tick(&app));
        // Starts before ends: a pass-through gives both.
        events.sort_by_key(|e| e.1.is_some());
        for (pair, end) in events {
            checked_events += 1;
            let statics = specs
                .iter()
                .filter(|s| (s.entity == pair.0 || s.entity == pair.1) && s.is_static)
                .count();
            if end.is_none() && statics == 2 {
                static_events += 1;
            }
            match end {
                None => assert!(
                    touching.insert(pair),
                    "seed {seed}, tick {tick}: a second start"
                ),
                Some(_) => {
                    // Despawned entities are gone from `specs`: their pairs end too.
                    assert!(
                        touching.remove(&pair),
                        "seed {seed}, tick {tick}: an end without start"
                    )
                }
            }
        }
        assert_eq!(
            touching, expected,
            "seed {seed}, tick {tick}: events replayed"
        );
        state.tree().validate().expect("moving tree");
        state.static_tree().validate().expect("static tree");
    }
    assert_eq!(
        static_events, 0,
        "a contact started between two static colliders"
    );
    assert!(
        checked_events > 100,
        "too little activity: {checked_events} events"
    );
    assert!(swaps > 0, "seed {seed}: no pair swapped its static side");
}

#[test]
fn random_static_scene_2d() {
    for mode in MODES {
        for seed in 0..4 {
            random_static_scene::<Vec2>(seed, mode);
        }
    }
}

#[test]
fn random_static_scene_3d() {
    for mode in MODES {
        for seed in 10..14 {
            random_static_scene::<Vec3>(seed, mode);
        }
    }
}

/// The random scene over many more seeds, both dimensions and modes (a few minutes in a
/// debug build), run by `scripts/soak.sh`; on its own, `cargo test --test plugin
/// -- --ignored static_levels::`.
#[test]
#[ignore = "long: many seeds"]
fn random_static_scene_many_seeds() {
    for seed in 100..260 {
        for mode in MODES {
            random_static_scene::<Vec2>(seed, mode);
            random_static_scene::<Vec3>(seed, mode);
        }
    }
}
