//! Soak test of the plugin: a long random life of a bounded population of colliders, in
//! 2D and 3D, with the event stream and the tree checked after every tick, and the contacts
//! checked against a brute-force oracle every few ticks.
//!
//! `soak_2d_short` and `soak_3d_short` run a few hundred ticks with every `cargo test
//! --features plugin` (seconds in a debug build). The long runs are ignored; run them with
//! `scripts/soak.sh`, or
//! `SOAK_TICKS=100000 cargo test --release --all-features --test plugin -- --ignored --nocapture soak::`
//! (`SOAK_CHECK_EVERY=N` sets how often the brute-force check runs, default every 10 ticks).
//!
//! Each `app.update()` is one tick (`AabbTreePlugin::new(Update)`). Between ticks the test
//! spawns colliders (boxes, spheres, capsules along each axis, some with an offset, and
//! rounded boxes; some with `Velocity`, some with `CollisionLayers`),
//! despawns them, moves them (small steps, large jumps, `Teleported` jumps), gives them a
//! NaN translation and repairs it later, removes and re-inserts their shape, swaps shapes,
//! changes layers and toggles `Disabled`; now and then it turns the tree's move cache off
//! or on (`CollisionConfig::move_cache`). After each tick it checks:
//! - every `CollisionStarted` names a pair that is not open and every `CollisionEnded` one
//!   that is (so each start gets exactly one end), never an entity paired with itself;
//! - no event names an entity that never had a collider;
//! - the tree passes `validate()`, and the touching pairs (`AabbTree::touching_pairs`) are
//!   exactly the open pairs, each listed once, between live, enabled, valid colliders;
//! - no message was missed.
//!
//! Every N ticks the open pairs are also compared with a brute-force oracle that shares no
//! code with the plugin: it reads each collider's `Transform`, shape and layers from the
//! world, and tests every pair of colliders with its own overlap formulas, in `f64`.
//!
//! At the end it despawns everything and checks that every open pair got its end, and that
//! the run saw at least a floor of events and contacts: a narrow phase that never reports
//! a contact fails here even if its stream is consistent.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::message::MessageCursor;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::prelude::*;

use crate::kit::dim::Dim;

use crate::kit::rng;
use rng::Rng;

/// What these tests draw beyond the kit's generator.
trait SoakDraws {
    fn soak_layers(&mut self) -> CollisionLayers;
}

impl SoakDraws for Rng {
    fn soak_layers(&mut self) -> CollisionLayers {
        if self.chance(0.05) {
            return CollisionLayers::NONE;
        }
        let memberships = (1 << self.below(3)) | (self.below(8) as u32 & 1);
        CollisionLayers::new(memberships, 1 + self.below(7) as u32)
    }
}

/// Half the side of the square (2D) or cube (3D) the population lives in: about as dense
/// in both dimensions.
fn world_size<V: Dim>() -> f32 {
    if V::DIM == 2 { 25.0 } else { 9.0 }
}
/// Population the spawns and despawns hover around.
const POPULATION: usize = 250;

/// The four shape components a soak collider has one of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Kind {
    #[default]
    Box,
    Ball,
    Capsule,
    Rounded,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Box, Kind::Ball, Kind::Capsule, Kind::Rounded];

    /// A random kind: boxes most often, rounded boxes least.
    fn draw(rng: &mut Rng) -> Kind {
        let x = rng.unit();
        if x < 0.4 {
            Kind::Box
        } else if x < 0.65 {
            Kind::Ball
        } else if x < 0.85 {
            Kind::Capsule
        } else {
            Kind::Rounded
        }
    }
}

/// Every shape component, for removing whichever one a collider has.
type AnyShape<V> = (Aabb<V>, BoundingSphere<V>, Capsule<V>, RoundedAabb<V>);

/// What the test knows about one live entity.
#[derive(Clone, Copy, Debug, Default)]
struct Info {
    /// Has one of the [`Kind`]s of shape now.
    has_shape: bool,
    /// The kind of shape it had last (for re-insertion).
    kind: Kind,
    disabled: bool,
    /// Its translation is NaN.
    invalid: bool,
    velocity: bool,
}

/// The open pairs and everything the stream checks need.
struct Stream<V: Dim> {
    started: MessageCursor<CollisionStarted<V>>,
    ended: MessageCursor<CollisionEnded>,
    all: MessageCursor<CollisionMessage<V>>,
    /// Open pairs (lower entity first) and the tick they started.
    open: BTreeMap<(Entity, Entity), u64>,
    /// Every entity that was ever given a collider.
    had_collider: BTreeSet<Entity>,
    starts: u64,
    ends: u64,
    ends_by_reason: BTreeMap<String, u64>,
    pass_through: u64,
}

fn key(a: Entity, b: Entity) -> (Entity, Entity) {
    if a <= b { (a, b) } else { (b, a) }
}

impl<V: Dim> Stream<V> {
    fn check_names(&self, tick: u64, what: &str, a: Entity, b: Entity) {
        assert_ne!(a, b, "tick {tick}: {what} pairs {a} with itself");
        for e in [a, b] {
            assert!(
                self.had_collider.contains(&e),
                "tick {tick}: {what} names {e}, which never had a collider"
            );
        }
    }

    /// Reads the combined stream (`CollisionMessage`) and applies it in the order read;
    /// the split streams must hold the same messages, each kind in the same order.
    fn read(&mut self, app: &App, tick: u64) {
        let world = app.world();
        let all = world.resource::<Messages<CollisionMessage<V>>>();
        let started = world.resource::<Messages<CollisionStarted<V>>>();
        let ended = world.resource::<Messages<CollisionEnded>>();
        let missed = self.all.missed_messages(all)
            + self.started.missed_messages(started)
            + self.ended.missed_messages(ended);
        assert_eq!(missed, 0, "tick {tick}: {missed} messages missed");
        let list: Vec<CollisionMessage<V>> = self.all.read(all).copied().collect();
        let split_starts: Vec<CollisionStarted<V>> = self.started.read(started).copied().collect();
        let split_ends: Vec<CollisionEnded> = self.ended.read(ended).copied().collect();
        let starts: Vec<CollisionStarted<V>> = list
            .iter()
            .filter_map(|m| match m {
                CollisionMessage::Started(s) => Some(*s),
                CollisionMessage::Ended(_) => None,
            })
            .collect();
        let ends: Vec<CollisionEnded> = list
            .iter()
            .filter_map(|m| match m {
                CollisionMessage::Ended(e) => Some(*e),
                CollisionMessage::Started(_) => None,
            })
            .collect();
        assert_eq!(starts, split_starts, "tick {tick}: the split starts differ");
        assert_eq!(ends, split_ends, "tick {tick}: the split ends differ");
        for m in list {
            match m {
                CollisionMessage::Started(m) => self.start(tick, m),
                CollisionMessage::Ended(m) => self.end(tick, m),
            }
        }
    }

    fn start(&mut self, tick: u64, m: CollisionStarted<V>) {
        self.check_names(tick, "CollisionStarted", m.entity, m.other);
        assert!(
            (0.0..=1.0).contains(&m.time_of_impact),
            "tick {tick}: {m:?}: time of impact out of [0, 1]"
        );
        let pair = key(m.entity, m.other);
        if let Some(since) = self.open.insert(pair, tick) {
            panic!("tick {tick}: {m:?}: the pair is already open (since tick {since})");
        }
        self.starts += 1;
    }

    fn end(&mut self, tick: u64, m: CollisionEnded) {
        self.check_names(tick, "CollisionEnded", m.entity, m.other);
        let pair = key(m.entity, m.other);
        match self.open.remove(&pair) {
            None => panic!("tick {tick}: {m:?}: the pair is not open"),
            Some(since) if m.reason == EndReason::PassedThrough && since != tick => {
                panic!("tick {tick}: {m:?}: passed through, but started at tick {since}")
            }
            Some(_) => {}
        }
        if m.reason == EndReason::PassedThrough {
            self.pass_through += 1;
        }
        self.ends += 1;
        *self
            .ends_by_reason
            .entry(format!("{:?}", m.reason))
            .or_default() += 1;
    }
}

/// A collider's world shape as the brute-force oracle sees it, in `f64`: the coordinates
/// past the dimension are zero (and ignored).
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// Center and half extents.
    Box([f64; 3], [f64; 3]),
    /// Center and radius.
    Ball([f64; 3], f64),
    /// A capsule or a rounded box: the center, the inner box's half extents (zero on all
    /// axes but one for a capsule) and the radius it is grown by.
    Rounded([f64; 3], [f64; 3], f64),
}

/// Within this distance of touching, a pair's outcome depends on `f32` rounding: the
/// oracle leaves it unchecked (and counts it).
const BOUNDARY: f64 = 1e-4;

fn to_f64(v: Vec3, dim: usize) -> [f64; 3] {
    let mut out = [0.0; 3];
    for (i, o) in out.iter_mut().enumerate().take(dim) {
        *o = f64::from(v[i]);
    }
    out
}

/// How far apart two shapes are: positive when they are apart, zero or negative when they
/// touch or overlap (touching counts as overlapping). Not a true distance for boxes (the
/// largest gap over the axes), but it has the right sign, and its size tells how near the
/// pair is to touching.
fn separation(a: &Shape, b: &Shape, dim: usize) -> f64 {
    fn length(v: [f64; 3]) -> f64 {
        (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
    }
    /// The distance from a point to a box (zero inside), axis by axis.
    fn point_to_box(p: [f64; 3], c: [f64; 3], h: [f64; 3]) -> f64 {
        length(std::array::from_fn(|i| {
            ((p[i] - c[i]).abs() - h[i]).max(0.0)
        }))
    }
    /// Two rounded boxes: apart by the distance between their inner boxes less the radii;
    /// when the inner boxes overlap on every axis, by the smallest overlap (negative) less
    /// the radii.
    fn rounded(ca: [f64; 3], ha: [f64; 3], ra: f64, cb: [f64; 3], hb: [f64; 3], rb: f64) -> f64 {
        let gaps: [f64; 3] = std::array::from_fn(|i| (ca[i] - cb[i]).abs() - (ha[i] + hb[i]));
        let apart = gaps.iter().any(|&g| g > 0.0);
        let inner = if apart {
            length(gaps.map(|g| g.max(0.0)))
        } else {
            gaps.into_iter().fold(f64::NEG_INFINITY, f64::max)
        };
        inner - (ra + rb)
    }
    /// Any shape as a rounded box.
    fn as_rounded(s: Shape) -> ([f64; 3], [f64; 3], f64) {
        match s {
            Shape::Box(c, h) => (c, h, 0.0),
            Shape::Ball(c, r) => (c, [0.0; 3], r),
            Shape::Rounded(c, h, r) => (c, h, r),
        }
    }
    match (*a, *b) {
        (Shape::Rounded(..), _) | (_, Shape::Rounded(..)) => {
            let ((ca, ha, ra), (cb, hb, rb)) = (as_rounded(*a), as_rounded(*b));
            rounded(ca, ha, ra, cb, hb, rb)
        }
        (Shape::Box(ca, ha), Shape::Box(cb, hb)) => (0..dim)
            .map(|i| (ca[i] - cb[i]).abs() - (ha[i] + hb[i]))
            .fold(f64::NEG_INFINITY, f64::max),
        (Shape::Ball(ca, ra), Shape::Ball(cb, rb)) => {
            length([ca[0] - cb[0], ca[1] - cb[1], ca[2] - cb[2]]) - (ra + rb)
        }
        (Shape::Ball(p, r), Shape::Box(c, h)) | (Shape::Box(c, h), Shape::Ball(p, r)) => {
            point_to_box(p, c, h) - r
        }
    }
}

/// Whether two colliders' layers let them interact: each one's memberships meet the
/// other's filters (no layers: every layer).
fn layers_meet(a: Option<CollisionLayers>, b: Option<CollisionLayers>) -> bool {
    let (am, af) = a.map_or((u32::MAX, u32::MAX), |l| (l.memberships, l.filters));
    let (bm, bf) = b.map_or((u32::MAX, u32::MAX), |l| (l.memberships, l.filters));
    am & bf != 0 && bm & af != 0
}

/// What the brute-force checks saw over a run.
#[derive(Default, Debug)]
struct OracleStats {
    /// Ticks checked.
    checks: u64,
    /// Overlapping pairs found (summed over the checked ticks).
    contacts: u64,
    /// Pairs within [`BOUNDARY`] of touching, left unchecked.
    near_boundary: u64,
}

/// A shape component of one [`Kind`], ready to insert.
enum ShapeComponent<V: Dim> {
    Box(Aabb<V>),
    Ball(BoundingSphere<V>),
    Capsule(Capsule<V>),
    Rounded(RoundedAabb<V>),
}

/// A shape of `kind` of random size: capsules along a random axis of the dimension, a
/// third of them off the entity's center.
fn random_shape<V: Dim>(rng: &mut Rng, kind: Kind) -> ShapeComponent<V> {
    let half = rng.vector::<V>(0.1, 1.5);
    let radius = rng.range(0.1, 1.5);
    match kind {
        Kind::Box => ShapeComponent::Box(Aabb::new(half)),
        Kind::Ball => ShapeComponent::Ball(BoundingSphere::new(radius)),
        Kind::Capsule => {
            let axis = [CapsuleAxis::X, CapsuleAxis::Y, CapsuleAxis::Z][rng.below(V::DIM)];
            let mut capsule = Capsule::new(rng.range(0.0, 1.5), radius * 0.6).along(axis);
            if rng.chance(0.3) {
                capsule = capsule.with_offset(rng.vector::<V>(-0.5, 0.5));
            }
            ShapeComponent::Capsule(capsule)
        }
        Kind::Rounded => ShapeComponent::Rounded(RoundedAabb::new(half * 0.7, radius * 0.4)),
    }
}

/// The shape a collider of `kind` gets back when its shape is inserted again.
fn default_shape<V: Dim>(kind: Kind) -> ShapeComponent<V> {
    match kind {
        Kind::Box => ShapeComponent::Box(Aabb::new(V::splat(0.5))),
        Kind::Ball => ShapeComponent::Ball(BoundingSphere::new(0.5)),
        Kind::Capsule => ShapeComponent::Capsule(Capsule::new(0.3, 0.3)),
        Kind::Rounded => ShapeComponent::Rounded(RoundedAabb::new(V::splat(0.3), 0.2)),
    }
}

fn insert_shape<V: Dim>(entity: &mut EntityWorldMut, shape: ShapeComponent<V>) {
    match shape {
        ShapeComponent::Box(s) => entity.insert(s),
        ShapeComponent::Ball(s) => entity.insert(s),
        ShapeComponent::Capsule(s) => entity.insert(s),
        ShapeComponent::Rounded(s) => entity.insert(s),
    };
}

fn build_app<V: Dim>() -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        bevy::transform::TransformPlugin,
        AabbTreePlugin::<V>::new(Update),
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 60.0,
    )));
    app
}

struct Soak<V: Dim> {
    app: App,
    rng: Rng,
    stream: Stream<V>,
    live: Vec<Entity>,
    info: BTreeMap<Entity, Info>,
    tick: u64,
    counts: BTreeMap<&'static str, u64>,
    oracle: OracleStats,
    _dim: std::marker::PhantomData<V>,
}

impl<V: Dim> Soak<V> {
    fn count(&mut self, what: &'static str) {
        *self.counts.entry(what).or_default() += 1;
    }

    fn random_live(&mut self) -> Option<Entity> {
        (!self.live.is_empty()).then(|| self.live[self.rng.below(self.live.len())])
    }

    fn spawn(&mut self) {
        let rng = &mut self.rng;
        let translation = rng.point::<V>(-world_size::<V>(), world_size::<V>());
        let kind = Kind::draw(rng);
        let velocity = rng.chance(0.3);
        let layers = rng.chance(0.3).then(|| rng.soak_layers());
        let vel = rng.vector::<V>(-30.0, 30.0);
        let mut e = self
            .app
            .world_mut()
            .spawn(Transform::from_translation(translation));
        insert_shape(&mut e, random_shape::<V>(rng, kind));
        if velocity {
            e.insert(Velocity(vel));
        }
        if let Some(layers) = layers {
            e.insert(layers);
        }
        let id = e.id();
        self.stream.had_collider.insert(id);
        self.live.push(id);
        self.info.insert(
            id,
            Info {
                has_shape: true,
                kind,
                velocity,
                ..Info::default()
            },
        );
        self.count("spawn");
    }

    fn despawn(&mut self, e: Entity) {
        self.app.world_mut().despawn(e);
        self.live.retain(|&x| x != e);
        self.info.remove(&e);
        self.count("despawn");
    }

    fn translation(&mut self, e: Entity) -> Vec3 {
        self.app.world().get::<Transform>(e).unwrap().translation
    }

    fn set_translation(&mut self, e: Entity, t: Vec3) {
        self.app
            .world_mut()
            .get_mut::<Transform>(e)
            .unwrap()
            .translation = t;
    }

    /// One random change to the world.
    fn act(&mut self) {
        let n = self.live.len();
        if n < POPULATION / 2 || (n < 2 * POPULATION && self.rng.chance(0.1)) {
            self.spawn();
            return;
        }
        let Some(e) = self.random_live() else { return };
        let info = self.info[&e];
        // Entities out of the tree (disabled, invalid, without a shape) come back more
        // often than they leave, so most of the population stays live.
        let x = match (info.disabled, info.invalid, info.has_shape) {
            (true, _, _) if self.rng.chance(0.3) => 0.75,
            (_, true, _) if self.rng.chance(0.3) => 0.60,
            (_, _, false) if self.rng.chance(0.3) => 0.65,
            _ => self.rng.unit(),
        };
        if x < 0.08 {
            self.despawn(e);
        } else if x < 0.50 {
            // Small step (mostly), sometimes a large jump (a sweep across the world).
            if info.invalid {
                return;
            }
            let t = self.translation(e);
            let step = if self.rng.chance(0.9) {
                self.rng.point::<V>(-0.5, 0.5)
            } else {
                self.rng.point::<V>(-15.0, 15.0)
            };
            let w = world_size::<V>();
            let to = (t + step).clamp(Vec3::splat(-w), Vec3::splat(w));
            self.set_translation(e, to);
            self.count("move");
        } else if x < 0.58 {
            if info.invalid {
                return;
            }
            let to = self.rng.point::<V>(-world_size::<V>(), world_size::<V>());
            self.set_translation(e, to);
            self.app.world_mut().entity_mut(e).insert(Teleported);
            self.count("teleport");
        } else if x < 0.63 {
            // Invalid, repaired later.
            if info.invalid {
                let to = self.rng.point::<V>(-world_size::<V>(), world_size::<V>());
                self.set_translation(e, to);
                self.count("repair");
            } else {
                self.set_translation(e, Vec3::NAN);
                self.count("nan");
            }
            self.info.get_mut(&e).unwrap().invalid ^= true;
        } else if x < 0.70 {
            // Remove the shape, or insert it again.
            let mut entity = self.app.world_mut().entity_mut(e);
            if info.has_shape {
                entity.remove::<AnyShape<V>>();
                self.count("remove shape");
            } else {
                insert_shape(&mut entity, default_shape::<V>(info.kind));
                self.count("reinsert shape");
            }
            self.info.get_mut(&e).unwrap().has_shape ^= true;
        } else if x < 0.74 {
            // Swap the shape without ending contacts: insert the new one, remove the old.
            if !info.has_shape {
                return;
            }
            let others: Vec<Kind> = Kind::ALL.into_iter().filter(|&k| k != info.kind).collect();
            let kind = others[self.rng.below(others.len())];
            let shape = random_shape::<V>(&mut self.rng, kind);
            let mut entity = self.app.world_mut().entity_mut(e);
            insert_shape(&mut entity, shape);
            match info.kind {
                Kind::Box => entity.remove::<Aabb<V>>(),
                Kind::Ball => entity.remove::<BoundingSphere<V>>(),
                Kind::Capsule => entity.remove::<Capsule<V>>(),
                Kind::Rounded => entity.remove::<RoundedAabb<V>>(),
            };
            self.info.get_mut(&e).unwrap().kind = kind;
            self.count("swap shape");
        } else if x < 0.80 {
            let mut entity = self.app.world_mut().entity_mut(e);
            if info.disabled {
                entity.remove::<Disabled>();
                self.count("enable");
            } else {
                entity.insert(Disabled);
                self.count("disable");
            }
            self.info.get_mut(&e).unwrap().disabled ^= true;
        } else if x < 0.86 {
            let layers = self.rng.soak_layers();
            let mut entity = self.app.world_mut().entity_mut(e);
            if entity.contains::<CollisionLayers>() && self.rng.chance(0.3) {
                entity.remove::<CollisionLayers>();
            } else {
                entity.insert(layers);
            }
            self.count("layers");
        } else if x < 0.92 {
            let vel = self.rng.vector::<V>(-30.0, 30.0);
            let mut entity = self.app.world_mut().entity_mut(e);
            if info.velocity {
                entity.remove::<Velocity<V>>();
            } else {
                entity.insert(Velocity(vel));
            }
            self.info.get_mut(&e).unwrap().velocity ^= true;
            self.count("velocity");
        } else {
            // A resize.
            let half = self.rng.vector::<V>(0.05, 2.0);
            let r = self.rng.range(0.05, 2.0);
            let length = self.rng.range(0.0, 2.0);
            let mut entity = self.app.world_mut().entity_mut(e);
            if let Some(mut a) = entity.get_mut::<Aabb<V>>() {
                a.half_extents = half;
            } else if let Some(mut s) = entity.get_mut::<BoundingSphere<V>>() {
                s.radius = r;
            } else if let Some(mut c) = entity.get_mut::<Capsule<V>>() {
                c.half_length = length;
                c.radius = r;
            } else if let Some(mut b) = entity.get_mut::<RoundedAabb<V>>() {
                b.half_extents = half;
                b.radius = r * 0.5;
            }
            self.count("resize");
        }
    }

    /// Moves every entity with a velocity by one tick of it (as `VelocityPlugin` would),
    /// bouncing at the world's edge.
    fn integrate(&mut self) {
        let w = world_size::<V>();
        let world = self.app.world_mut();
        let mut q = world.query_filtered::<(&mut Transform, &mut Velocity<V>), Allow<Disabled>>();
        for (mut t, mut v) in q.iter_mut(world) {
            if !t.translation.is_finite() {
                continue;
            }
            let vel = v.0.extend_to_3d();
            let mut p = t.translation + vel / 60.0;
            let mut new = vel;
            for axis in 0..3 {
                if p[axis].abs() > w {
                    p[axis] = p[axis].clamp(-w, w);
                    new[axis] = -new[axis];
                }
            }
            t.translation = p;
            if new != vel {
                v.0 = V::truncate_from_3d(new);
            }
        }
    }

    /// The checks after a tick: tree valid, touching pairs = open pairs, each between live,
    /// enabled, valid colliders.
    fn check_tick(&mut self) {
        let tick = self.tick;
        let state = self.app.world().resource::<AabbTree<V>>();
        if let Err(e) = state.tree().validate() {
            panic!("tick {tick}: invalid tree: {e}");
        }
        let list: Vec<_> = state.touching_pairs().map(|(a, b)| key(a, b)).collect();
        let touching: BTreeSet<_> = list.iter().copied().collect();
        assert_eq!(
            touching.len(),
            list.len(),
            "tick {tick}: a pair listed twice"
        );
        let open: BTreeSet<_> = self.stream.open.keys().copied().collect();
        if touching != open {
            panic!(
                "tick {tick}: open pairs are not the touching pairs: open only {:?}, touching only {:?}",
                open.difference(&touching).collect::<Vec<_>>(),
                touching.difference(&open).collect::<Vec<_>>()
            );
        }
        for (a, b) in &touching {
            for e in [a, b] {
                let info = self.info.get(e).copied();
                assert!(
                    info.is_some_and(|i| i.has_shape && !i.disabled && !i.invalid),
                    "tick {tick}: {e} touches ({a}, {b}) but is {info:?}"
                );
            }
        }
        let proxies = state.tree().len();
        let expected = self
            .info
            .values()
            .filter(|i| i.has_shape && !i.disabled && !i.invalid)
            .count();
        assert_eq!(proxies, expected, "tick {tick}: proxies in the tree");
    }

    /// The brute-force check: every pair of colliders in the world (a shape, a finite
    /// translation, not `Disabled`) is tested with the oracle's own formulas; the pairs that
    /// overlap and whose layers meet must be exactly the open pairs (pairs within
    /// [`BOUNDARY`] of touching are left out on both sides).
    fn check_brute_force(&mut self) {
        let tick = self.tick;
        let dim = V::DIM;
        let world = self.app.world_mut();
        let mut q = world.query::<(
            Entity,
            &Transform,
            Option<&Aabb<V>>,
            Option<&BoundingSphere<V>>,
            Option<&Capsule<V>>,
            Option<&RoundedAabb<V>>,
            Option<&CollisionLayers>,
        )>();
        let mut colliders = Vec::new();
        for (e, t, aabb, sphere, capsule, rounded, layers) in q.iter(world) {
            let p = t.translation;
            if !p.is_finite() {
                continue;
            }
            // Only translations: the soak never rotates or scales.
            assert_eq!(t.rotation, Quat::IDENTITY);
            assert_eq!(t.scale, Vec3::ONE);
            let shape = if let Some(a) = aabb {
                Shape::Box(
                    to_f64(p + a.offset.extend_to_3d(), dim),
                    to_f64(a.half_extents.extend_to_3d(), dim),
                )
            } else if let Some(s) = sphere {
                Shape::Ball(
                    to_f64(p + s.offset.extend_to_3d(), dim),
                    f64::from(s.radius),
                )
            } else if let Some(c) = capsule {
                let mut h = [0.0; 3];
                h[c.axis.index()] = f64::from(c.half_length);
                Shape::Rounded(
                    to_f64(p + c.offset.extend_to_3d(), dim),
                    h,
                    f64::from(c.radius),
                )
            } else if let Some(b) = rounded {
                Shape::Rounded(
                    to_f64(p + b.offset.extend_to_3d(), dim),
                    to_f64(b.half_extents.extend_to_3d(), dim),
                    f64::from(b.radius),
                )
            } else {
                continue;
            };
            colliders.push((e, shape, layers.copied()));
        }
        let mut overlapping = BTreeSet::new();
        let mut near = BTreeSet::new();
        for (i, (a, sa, la)) in colliders.iter().enumerate() {
            for (b, sb, lb) in &colliders[i + 1..] {
                if !layers_meet(*la, *lb) {
                    continue;
                }
                let s = separation(sa, sb, dim);
                if s.abs() <= BOUNDARY {
                    near.insert(key(*a, *b));
                } else if s < 0.0 {
                    overlapping.insert(key(*a, *b));
                }
            }
        }
        let open: BTreeSet<_> = self
            .stream
            .open
            .keys()
            .filter(|p| !near.contains(p))
            .copied()
            .collect();
        if open != overlapping {
            let shape_of = |e: &Entity| colliders.iter().find(|c| c.0 == *e).map(|c| c.1);
            let describe = |pairs: Vec<&(Entity, Entity)>| {
                pairs
                    .into_iter()
                    .take(5)
                    .map(|(a, b)| format!("({a} {:?}, {b} {:?})", shape_of(a), shape_of(b)))
                    .collect::<Vec<_>>()
            };
            panic!(
                "tick {tick}: open pairs are not the overlapping pairs of the brute-force \
                 oracle: open only {:?}; overlapping only {:?}",
                describe(open.difference(&overlapping).collect()),
                describe(overlapping.difference(&open).collect()),
            );
        }
        self.oracle.checks += 1;
        self.oracle.contacts += overlapping.len() as u64;
        self.oracle.near_boundary += near.len() as u64;
    }

    fn step(&mut self, check_every: u64) {
        let actions = 1 + self.rng.below(6);
        for _ in 0..actions {
            self.act();
        }
        if self.rng.chance(0.002) {
            // The tree's move cache off or on (the events must not change).
            let mut config = self.app.world_mut().resource_mut::<CollisionConfig>();
            config.move_cache = !config.move_cache;
            self.count("move cache toggled");
        }
        self.integrate();
        // Ends caused by the changes above (despawns, removals, `Disabled`) are written at
        // once; read them before the tick's own messages.
        self.stream.read(&self.app, self.tick);
        self.app.update();
        self.stream.read(&self.app, self.tick);
        self.check_tick();
        if self.tick.is_multiple_of(check_every) {
            self.check_brute_force();
        }
        self.tick += 1;
    }

    fn finish(&mut self) {
        for e in self.live.clone() {
            self.despawn(e);
        }
        self.stream.read(&self.app, self.tick);
        assert!(
            self.stream.open.is_empty(),
            "after despawning everything, pairs without an end: {:?}",
            self.stream.open
        );
        self.app.update();
        self.stream.read(&self.app, self.tick);
        self.check_tick();
        assert!(self.app.world().resource::<AabbTree<V>>().tree().is_empty());
        assert_eq!(self.stream.starts, self.stream.ends);
    }
}

/// The least a run must see, per tick: collision starts, and overlapping pairs found by
/// the brute-force checks (per checked tick). Both runs see several times more (the
/// output prints the rates); a narrow phase that never reports a contact sees none.
const MIN_STARTS_PER_TICK: f64 = 0.5;
const MIN_CONTACTS_PER_CHECK: f64 = 5.0;

/// Runs `ticks` ticks, with the brute-force check every `check_every` ticks, and checks
/// the floors on what it saw.
fn soak<V: Dim>(seed: u64, ticks: u64, check_every: u64) {
    let mut soak = Soak::<V> {
        app: build_app::<V>(),
        rng: Rng::new(seed),
        stream: Stream {
            started: MessageCursor::default(),
            ended: MessageCursor::default(),
            all: MessageCursor::default(),
            open: BTreeMap::new(),
            had_collider: BTreeSet::new(),
            starts: 0,
            ends: 0,
            ends_by_reason: BTreeMap::new(),
            pass_through: 0,
        },
        live: Vec::new(),
        info: BTreeMap::new(),
        tick: 0,
        counts: BTreeMap::new(),
        oracle: OracleStats::default(),
        _dim: std::marker::PhantomData,
    };
    let start = Instant::now();
    let mut max_open = 0;
    let mut max_live = 0;
    for _ in 0..ticks {
        soak.step(check_every.max(1));
        max_open = max_open.max(soak.stream.open.len());
        max_live = max_live.max(soak.live.len());
    }
    soak.finish();
    let elapsed = start.elapsed();
    let s = &soak.stream;
    let o = &soak.oracle;
    println!(
        "soak {}D seed {seed}: {ticks} ticks in {:.1} s ({:.0} µs/tick); {} events checked \
         ({} starts, {:.2} per tick; {} ends: {:?}; {} passed through); at most {max_live} \
         entities, {max_open} open pairs; {} entities ever had a collider; brute-force \
         checks: {} ticks, {} overlapping pairs ({:.1} per check), {} pairs near touching \
         left out; actions {:?}",
        V::DIM,
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e6 / ticks.max(1) as f64,
        s.starts + s.ends,
        s.starts,
        s.starts as f64 / ticks.max(1) as f64,
        s.ends,
        s.ends_by_reason,
        s.pass_through,
        s.had_collider.len(),
        o.checks,
        o.contacts,
        o.contacts as f64 / o.checks.max(1) as f64,
        o.near_boundary,
        soak.counts,
    );
    assert!(
        s.starts as f64 >= MIN_STARTS_PER_TICK * ticks as f64,
        "{} collision starts in {ticks} ticks: fewer than {MIN_STARTS_PER_TICK} per tick",
        s.starts
    );
    assert!(
        o.checks > 0 && o.contacts as f64 >= MIN_CONTACTS_PER_CHECK * o.checks as f64,
        "{} overlapping pairs in {} brute-force checks: fewer than {MIN_CONTACTS_PER_CHECK} \
         per check",
        o.contacts,
        o.checks
    );
}

/// A number from the environment (`_` separators allowed), or `default`.
fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// Ticks of the short runs, with the brute-force check after every tick.
const SHORT_TICKS: u64 = 500;

#[test]
fn soak_2d_short() {
    soak::<Vec2>(0x050A_42D5, SHORT_TICKS, 1);
}

#[test]
fn soak_3d_short() {
    soak::<Vec3>(0x050A_43D5, SHORT_TICKS, 1);
}

#[test]
#[ignore = "long: run with scripts/soak.sh"]
fn soak_2d() {
    soak::<Vec2>(
        0x0050_A42D,
        env_or("SOAK_TICKS", 100_000),
        env_or("SOAK_CHECK_EVERY", 10),
    );
}

#[test]
#[ignore = "long: run with scripts/soak.sh"]
fn soak_3d() {
    soak::<Vec3>(
        0x0050_A43D,
        env_or("SOAK_TICKS", 100_000),
        env_or("SOAK_CHECK_EVERY", 10),
    );
}
