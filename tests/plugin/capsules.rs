//! Capsules and rounded boxes mixed with boxes and balls: random scenes against an `f64`
//! oracle of rounded boxes (touching pairs, first times of contact, normals,
//! pass-throughs), the capsule queries against brute force, and a capsule's bad values.
//!
//! The oracle is written for these tests alone: every shape is a rounded box (a box of
//! radius 0, a ball of half extents 0, a capsule of half extents 0 on all axes but one, a
//! `RoundedAabb` as it is),
//! and the signed distance of two is the distance between their inner boxes less the
//! radii (the deepest per-axis separation when the inner boxes overlap). Along a straight
//! motion it is convex in time: a ternary search finds its minimum, a bisection the first
//! contact.

use bevy::math::DVec3;

use super::*;

/// Within this much of touching (in world units), either answer is right: the plugin's
/// `f32` world shapes differ from the oracle's by rounding.
const AMBIGUOUS: f64 = 1e-4;

/// How near touching (in world units) the rounded sweeps find a first contact: `1e-5`
/// of the shapes' size, sizes up to about 10 here.
const SWEEP_SLACK: f64 = 1e-4;

/// A rounded box in `f64`: inner box `c ± h`, grown by `r`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rb {
    pub(crate) c: DVec3,
    pub(crate) h: DVec3,
    pub(crate) r: f64,
}

impl Rb {
    fn moved(self, d: DVec3) -> Self {
        Self {
            c: self.c + d,
            ..self
        }
    }
}

/// The signed distance between two rounded boxes: negative when they overlap.
pub(crate) fn signed_gap(a: &Rb, b: &Rb) -> f64 {
    let s = (a.c - b.c).abs() - a.h - b.h;
    let inner = if s.max_element() <= 0.0 {
        s.max_element()
    } else {
        s.max(DVec3::ZERO).length()
    };
    inner - a.r - b.r
}

/// The unit normal from `a` towards `b` where they touch: from the closest point of
/// `a`'s inner box to `b`'s (zero when the inner boxes overlap). The kit's
/// [`crate::exact::contact_normals`] of a ball with anything, for rounded boxes (which the
/// kit's `Solid` does not hold): one normal, not a set.
fn contact_normal(a: &Rb, b: &Rb) -> DVec3 {
    crate::exact::box_gap(a.c - a.h, a.c + a.h, b.c - b.h, b.c + b.h).normalize_or_zero()
}

/// The smallest signed gap of `g` over `[0, 1]` and where it is.
fn gap_minimum(g: impl Fn(f64) -> f64) -> (f64, f64) {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..200 {
        let (m1, m2) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
        if g(m1) <= g(m2) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    let u = 0.5 * (lo + hi);
    let (at_u, at_0, at_1) = (g(u), g(0.0), g(1.0));
    if at_0 <= at_u && at_0 <= at_1 {
        (0.0, at_0)
    } else if at_1 < at_u {
        (1.0, at_1)
    } else {
        (u, at_u)
    }
}

/// What the oracle says of a motion over `[0, 1]`: the first time of contact, none, or
/// that it comes too close to call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Swept {
    Hit(f64),
    Miss,
    Ambiguous,
}

/// The first `u` in `[0, 1]` at which `g` (convex) is at most zero.
pub(crate) fn first_contact(g: impl Fn(f64) -> f64) -> Swept {
    let start = g(0.0);
    if start.abs() < AMBIGUOUS {
        return Swept::Ambiguous;
    }
    if start < 0.0 {
        return Swept::Hit(0.0);
    }
    let (at, min) = gap_minimum(&g);
    if min.abs() < AMBIGUOUS {
        return Swept::Ambiguous;
    }
    if min > 0.0 {
        return Swept::Miss;
    }
    let (mut apart, mut touching) = (0.0f64, at);
    for _ in 0..100 {
        let mid = 0.5 * (apart + touching);
        if g(mid) > 0.0 {
            apart = mid;
        } else {
            touching = mid;
        }
    }
    Swept::Hit(touching)
}

/// A collider of these scenes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Body<V: Dim> {
    Box(Aabb<V>),
    Ball(BoundingSphere<V>),
    Capsule(Capsule<V>),
    Rounded(RoundedAabb<V>),
}

impl<V: Dim> Body<V> {
    /// Whether the oracle's shape is rounded beyond a ball: a capsule or a rounded box.
    pub(crate) fn is_rounded(&self) -> bool {
        matches!(self, Body::Capsule(_) | Body::Rounded(_))
    }

    /// A box, a ball, a capsule along a random axis of the dimension (three times in ten)
    /// or a rounded box (three times in ten, its radius often as large as its extents).
    pub(crate) fn random(rng: &mut Rng) -> Self {
        let offset = if rng.chance(0.3) {
            rng.vector(-0.5, 0.5)
        } else {
            V::ZERO
        };
        let roll = rng.unit();
        if roll < 0.2 {
            Body::Box(Aabb::new(rng.vector(0.3, 1.5)).with_offset(offset))
        } else if roll < 0.4 {
            Body::Ball(BoundingSphere::new(rng.range(0.3, 1.2)).with_offset(offset))
        } else if roll < 0.7 {
            Body::Rounded(
                RoundedAabb::new(rng.vector(0.0, 1.2), rng.range(0.2, 0.9)).with_offset(offset),
            )
        } else {
            let axis = [CapsuleAxis::X, CapsuleAxis::Y, CapsuleAxis::Z][rng.below(V::DIM)];
            Body::Capsule(
                Capsule::new(rng.range(0.0, 1.5), rng.range(0.2, 1.0))
                    .along(axis)
                    .with_offset(offset),
            )
        }
    }

    pub(crate) fn insert(self, e: &mut EntityWorldMut) {
        match self {
            Body::Box(a) => e.insert(a),
            Body::Ball(s) => e.insert(s),
            Body::Capsule(c) => e.insert(c),
            Body::Rounded(r) => e.insert(r),
        };
    }

    /// The oracle's world shape at `translation` (no rotation, unit scale).
    pub(crate) fn at(&self, translation: Vec3) -> Rb {
        let t = flat::<V>(translation).as_dvec3();
        match self {
            Body::Box(a) => Rb {
                c: t + a.offset.extend_to_3d().as_dvec3(),
                h: a.half_extents.extend_to_3d().as_dvec3(),
                r: 0.0,
            },
            Body::Ball(s) => Rb {
                c: t + s.offset.extend_to_3d().as_dvec3(),
                h: DVec3::ZERO,
                r: f64::from(s.radius),
            },
            Body::Rounded(r) => Rb {
                c: t + r.offset.extend_to_3d().as_dvec3(),
                h: r.half_extents.extend_to_3d().as_dvec3(),
                r: f64::from(r.radius),
            },
            Body::Capsule(c) => {
                let mut h = DVec3::ZERO;
                h[c.axis.index()] = f64::from(c.half_length);
                Rb {
                    c: t + c.offset.extend_to_3d().as_dvec3(),
                    h,
                    r: f64::from(c.radius),
                }
            }
        }
    }
}

/// A scene of boxes, balls, capsules and rounded boxes that translate along sines (a quarter of them
/// fast, several units a tick), some `Static` and still, with random layers.
pub(crate) struct CapsuleScene<V: Dim> {
    pub(crate) bodies: Vec<(Body<V>, Option<CollisionLayers>, bool)>,
    /// `frames[tick][i]`: the translation of body `i` at `tick`.
    pub(crate) frames: Vec<Vec<Vec3>>,
}

pub(crate) fn capsule_scene<V: Dim>(
    seed: u64,
    n: usize,
    ticks: usize,
    fast: bool,
) -> CapsuleScene<V> {
    let mut rng = Rng::new(seed);
    let extent = if V::DIM == 2 { 8.0 } else { 4.5 };
    let mut bodies = Vec::new();
    let mut paths = Vec::new();
    for _ in 0..n {
        let is_static = rng.chance(0.2);
        bodies.push((Body::<V>::random(&mut rng), rng.layers(), is_static));
        let base = rng.vec3(-extent, extent);
        let (amplitude, frequency) = if is_static {
            (Vec3::ZERO, Vec3::ZERO)
        } else if fast && rng.chance(0.25) {
            (rng.vec3(3.0, 9.0), rng.vec3(0.2, 0.6))
        } else {
            (rng.vec3(0.0, 3.0), rng.vec3(0.01, 0.08))
        };
        paths.push((base, amplitude, frequency, rng.vec3(0.0, 6.3)));
    }
    let frames = (0..ticks)
        .map(|k| {
            let k = k as f32;
            paths
                .iter()
                .map(|(base, amplitude, frequency, phase)| {
                    let wave = Vec3::new(
                        (frequency.x * k + phase.x).sin(),
                        (frequency.y * k + phase.y).sin(),
                        (frequency.z * k + phase.z).sin(),
                    );
                    *base + *amplitude * wave
                })
                .collect()
        })
        .collect();
    CapsuleScene { bodies, frames }
}

/// Spawns the scene at its first frame (with a `Velocity` on half the moving bodies, for
/// the fattening) and installs its script.
pub(crate) fn spawn_capsule_scene<V: Dim>(app: &mut App, scene: &CapsuleScene<V>) -> Vec<Entity> {
    let world = app.world_mut();
    // The harness's brute force knows boxes and balls only: this oracle replaces it.
    world.resource_mut::<Rec>().skip_brute_force = true;
    let mut rng = Rng::new(scene.frames.len() as u64);
    let entities: Vec<Entity> = scene
        .bodies
        .iter()
        .zip(&scene.frames[0])
        .map(|((body, layers, is_static), t)| {
            let mut e = world.spawn(Transform::from_translation(*t));
            body.insert(&mut e);
            if let Some(l) = layers {
                e.insert(*l);
            }
            if *is_static {
                e.insert(Static);
            } else if rng.chance(0.5) {
                e.insert(Velocity(rng.vector::<V>(-20.0, 20.0)));
            }
            e.id()
        })
        .collect();
    world.insert_resource(Script {
        entities: entities.clone(),
        frames: scene
            .frames
            .iter()
            .map(|f| f.iter().map(|t| Transform::from_translation(*t)).collect())
            .collect(),
    });
    entities
}

/// Whether the pair may interact at all: layers match, and not both `Static`.
fn may_pair<V: Dim>(scene: &CapsuleScene<V>, i: usize, j: usize) -> bool {
    let (a, b) = (&scene.bodies[i], &scene.bodies[j]);
    oracle_layers(a.1, b.1) && !(a.2 && b.2)
}

/// The touching pairs after each tick against the oracle, pairs within [`AMBIGUOUS`] of
/// touching excepted. Returns how many pairs with a capsule, and with a rounded box,
/// touched over all ticks.
fn assert_touching<V: Dim>(
    what: &str,
    scene: &CapsuleScene<V>,
    entities: &[Entity],
    touching: &[Pairs],
) -> (usize, usize) {
    let (mut capsule_contacts, mut rounded_contacts) = (0, 0);
    for (tick, frame) in scene.frames.iter().enumerate() {
        let shapes: Vec<Rb> = scene
            .bodies
            .iter()
            .zip(frame)
            .map(|(b, t)| b.0.at(*t))
            .collect();
        for i in 0..shapes.len() {
            for j in i + 1..shapes.len() {
                let gap = signed_gap(&shapes[i], &shapes[j]);
                let actual = touching[tick].contains(&key(entities[i], entities[j]));
                if gap.abs() < AMBIGUOUS {
                    continue;
                }
                let expected = gap < 0.0 && may_pair(scene, i, j);
                assert_eq!(
                    actual, expected,
                    "{what} tick {tick}: {:?} and {:?}, gap {gap}",
                    scene.bodies[i].0, scene.bodies[j].0
                );
                let capsule = |k: usize| matches!(scene.bodies[k].0, Body::Capsule(_));
                let rounded = |k: usize| matches!(scene.bodies[k].0, Body::Rounded(_));
                if expected && (capsule(i) || capsule(j)) {
                    capsule_contacts += 1;
                }
                if expected && (rounded(i) || rounded(j)) {
                    rounded_contacts += 1;
                }
            }
        }
    }
    (capsule_contacts, rounded_contacts)
}

/// Random scenes with sweeps off: the touching pairs after every tick are the oracle's
/// (the harness checks the messages, `CollidingEntities` and entity events against the
/// touching pairs).
pub(crate) fn capsule_scenes_match_oracle<V: Dim>() {
    for seed in [3, 4] {
        let ticks = 150;
        let scene = capsule_scene::<V>(seed, 40, ticks, false);
        let config = CollisionConfig {
            swept: false,
            ..default()
        };
        let mut app = build_app::<V>(Sched::Update, 60.0, config);
        let entities = spawn_capsule_scene(&mut app, &scene);
        run_ticks(&mut app, ticks as u32);
        finish::<V>(&app);
        let touching = app.world().resource::<Rec>().touching.clone();
        let (contacts, rounded) =
            assert_touching(&format!("seed {seed}"), &scene, &entities, &touching);
        assert!(
            contacts >= 200,
            "seed {seed}: only {contacts} capsule contacts"
        );
        assert!(
            rounded >= 200,
            "seed {seed}: only {rounded} rounded box contacts"
        );
    }
}

/// Random scenes with fast bodies and sweeps on: per tick and pair not touching at the
/// last tick, a start with the oracle's first time of contact (and its normal) when the
/// motion brings them together, a pass-through when they are apart again at the end;
/// nothing when it does not.
pub(crate) fn swept_capsule_scenes_match_oracle<V: Dim>() {
    for seed in [5, 6] {
        let ticks = 120;
        let scene = capsule_scene::<V>(seed, 36, ticks, true);
        let mut app = update_app::<V>(Sched::Update);
        let entities = spawn_capsule_scene(&mut app, &scene);
        run_ticks(&mut app, ticks as u32);
        let events = finish::<V>(&app);
        let touching = app.world().resource::<Rec>().touching.clone();
        let what = format!("seed {seed}");
        assert_touching(&what, &scene, &entities, &touching);
        let (starts, passes, normals) = assert_swept(&what, &scene, &entities, &touching, &events);
        assert!(
            starts >= 100,
            "{what}: only {starts} swept starts with a capsule or rounded box"
        );
        assert!(
            passes >= 5,
            "{what}: only {passes} pass-throughs with a capsule or rounded box"
        );
        assert!(
            normals >= 50,
            "{what}: only {normals} normals with a capsule or rounded box"
        );
    }
}

/// The swept half of [`swept_capsule_scenes_match_oracle`]. Returns the starts, the
/// pass-throughs and the normals checked, of pairs with a capsule or a rounded box.
fn assert_swept<V: Dim>(
    what: &str,
    scene: &CapsuleScene<V>,
    entities: &[Entity],
    touching: &[Pairs],
    events: &[Ev],
) -> (usize, usize, usize) {
    let (mut starts, mut passes, mut normals) = (0, 0, 0);
    for tick in 1..scene.frames.len() {
        let at = |k: usize, i: usize| scene.bodies[i].0.at(scene.frames[k][i]);
        for i in 0..entities.len() {
            for j in i + 1..entities.len() {
                let pair = key(entities[i], entities[j]);
                if !may_pair(scene, i, j) || touching[tick - 1].contains(&pair) {
                    continue;
                }
                let (a0, b0) = (at(tick - 1, i), at(tick - 1, j));
                let (da, db) = (at(tick, i).c - a0.c, at(tick, j).c - b0.c);
                let g = |u: f64| signed_gap(&a0.moved(da * u), &b0.moved(db * u));
                let mine: Vec<&Ev> = events
                    .iter()
                    .filter(|e| e.tick as usize == tick && e.pair() == pair)
                    .collect();
                let capsule = [i, j].iter().any(|&k| scene.bodies[k].0.is_rounded());
                let end = g(1.0);
                match first_contact(g) {
                    Swept::Ambiguous => {}
                    Swept::Miss => assert!(
                        mine.is_empty(),
                        "{what} tick {tick} {pair:?}: the oracle sees no contact, events {mine:?}"
                    ),
                    Swept::Hit(u) => {
                        let start = mine.iter().find_map(|e| match e.kind {
                            Kind::Started { toi, normal } => Some((e.entity, toi, normal)),
                            Kind::Ended(_) => None,
                        });
                        let Some((from, toi, normal)) = start else {
                            panic!("{what} tick {tick} {pair:?}: no start, the oracle's at {u}");
                        };
                        // Within a thousandth of a unit of motion of the oracle's; or,
                        // for a motion that grazes the surface (which the rounded sweep
                        // finds within `1e-5` of the shapes' size of touching), earlier
                        // but that close to touching.
                        let speed = (db - da).length();
                        let toi64 = f64::from(toi);
                        let grazing = toi64 <= u && g(toi64) <= SWEEP_SLACK;
                        assert!(
                            (toi64 - u).abs() * speed <= 1e-3 || grazing,
                            "{what} tick {tick} {pair:?}: toi {toi}, the oracle's {u} ({:?}, {:?})",
                            scene.bodies[i].0,
                            scene.bodies[j].0
                        );
                        let passed = mine
                            .iter()
                            .any(|e| e.reason() == Some(EndReason::PassedThrough));
                        if end.abs() >= AMBIGUOUS {
                            assert_eq!(
                                passed,
                                end > 0.0,
                                "{what} tick {tick} {pair:?}: pass-through"
                            );
                        }
                        if capsule {
                            starts += 1;
                            passes += usize::from(passed);
                        }
                        // The normal at a first contact inside the tick.
                        if u > 1e-3 {
                            let (a, b) = (a0.moved(da * u), b0.moved(db * u));
                            let want = contact_normal(&a, &b);
                            let n = if from == entities[i] { normal } else { -normal };
                            if want != DVec3::ZERO && capsule {
                                assert!(
                                    want.distance(n.as_dvec3()) <= 2e-2,
                                    "{what} tick {tick} {pair:?}: normal {n}, the oracle's {want}"
                                );
                                normals += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    (starts, passes, normals)
}

/// The shapes the query tests cast: capsules through the capsule queries, or boxes with
/// rounded edges through the rounded box queries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Caster {
    Capsule,
    RoundedBox,
}

/// The capsule queries against brute force: [`shape_queries_match_brute_force`] with
/// capsules.
pub(crate) fn capsule_queries_match_brute_force<V: Dim>() {
    shape_queries_match_brute_force::<V>(Caster::Capsule, 8);
}

/// The queries of a cast shape against brute force over every collider of a capsule
/// scene (boxes, balls, capsules, rounded boxes): the first hit (its `t`), every hit
/// (each `t`) and every entity overlapping, with random capsules along every axis or
/// random rounded boxes; and `ray_hits` (what picking casts) and `point` against every
/// kind of collider.
pub(crate) fn shape_queries_match_brute_force<V: Dim>(kind: Caster, seed: u64) {
    let scene = capsule_scene::<V>(seed, 50, 1, false);
    let mut app = update_app::<V>(Sched::Update);
    let entities = spawn_capsule_scene(&mut app, &scene);
    run_ticks(&mut app, 1);
    let shapes: Vec<Rb> = scene
        .bodies
        .iter()
        .zip(&scene.frames[0])
        .map(|(b, t)| b.0.at(*t))
        .collect();
    let world = app.world_mut();
    let mut state: SystemState<SpatialQuery<V>> = SystemState::new(world);
    let query = state.get(world).unwrap();
    let mut rng = Rng::new(99);
    let extent = if V::DIM == 2 { 9.0 } else { 5.5 };
    let (mut hits, mut overlaps, mut rays, mut points) = (0, 0, 0, 0);
    // Hits and overlaps of `RoundedAabb` colliders.
    let mut on_rounded = 0;
    let rounded_target = |k: usize| matches!(scene.bodies[k].0, Body::Rounded(_));
    // A collider in no layer is never a query's candidate (the default filter's mask
    // meets no membership of it).
    let queryable = |k: usize| scene.bodies[k].1.is_none_or(|l| l.memberships != 0);
    let filter = QueryFilter::default();
    for i in 0..300 {
        let (caster, h) = match kind {
            Caster::Capsule => {
                let axis = rng.below(V::DIM);
                let center: V = rng.vector(-extent, extent);
                let (half, radius) = (rng.range(0.0, 1.5), rng.range(0.05, 0.8));
                let mut h = DVec3::ZERO;
                h[axis] = f64::from(half);
                (RoundedBox::capsule(center, axis, half, radius), h)
            }
            Caster::RoundedBox => {
                let center: V = rng.vector(-extent, extent);
                let (half, radius): (V, f32) = (rng.vector(0.0, 1.2), rng.range(0.05, 0.8));
                let h = half.extend_to_3d().as_dvec3();
                (RoundedBox::new(center, half, radius), h)
            }
        };
        let center = caster.center;
        let rb = Rb {
            c: center.extend_to_3d().as_dvec3(),
            h,
            r: f64::from(caster.radius),
        };
        let direction: V = rng.vector(-1.0, 1.0);
        let max_t = rng.range(0.0, 12.0);
        let d = direction.extend_to_3d().as_dvec3() * f64::from(max_t);
        let what = format!("query {i}: {caster:?} along {direction:?} up to {max_t}");

        // Overlap: exactly the shapes within reach.
        let found: BTreeSet<Entity> = match kind {
            Caster::Capsule => query.capsule(&caster, &filter),
            Caster::RoundedBox => query.rounded_box(&caster, &filter),
        }
        .into_iter()
        .collect();
        // Point: the colliders holding the caster's center.
        let point = Rb {
            h: DVec3::ZERO,
            r: 0.0,
            ..rb
        };
        let holding: BTreeSet<Entity> = query.point(center, &filter).into_iter().collect();
        for (k, s) in shapes.iter().enumerate() {
            if !queryable(k) {
                assert!(!found.contains(&entities[k]) && !holding.contains(&entities[k]));
                continue;
            }
            let gap = signed_gap(&rb, s);
            if gap.abs() >= AMBIGUOUS {
                assert_eq!(
                    found.contains(&entities[k]),
                    gap < 0.0,
                    "{what}: overlap of {k}"
                );
                overlaps += usize::from(gap < 0.0);
                on_rounded += usize::from(gap < 0.0 && rounded_target(k));
            }
            let gap = signed_gap(&point, s);
            if gap.abs() >= AMBIGUOUS {
                let inside = gap < 0.0;
                assert_eq!(
                    holding.contains(&entities[k]),
                    inside,
                    "{what}: point in {k}"
                );
                points += usize::from(inside);
            }
        }

        // Casts: each target's first contact over the normalized motion.
        let oracle: Vec<(usize, Swept)> = shapes
            .iter()
            .enumerate()
            .filter(|(k, _)| queryable(*k))
            .map(|(k, s)| (k, first_contact(|u| signed_gap(&rb.moved(d * u), s))))
            .collect();
        let all = match kind {
            Caster::Capsule => query.cast_capsule_all(&caster, direction, max_t, &filter),
            Caster::RoundedBox => query.cast_rounded_box_all(&caster, direction, max_t, &filter),
        };
        let tolerance = 1e-3 / d.length().max(1e-3);
        assert!(
            all.iter().all(|h| entities
                .iter()
                .position(|e| *e == h.entity)
                .is_some_and(queryable)),
            "{what}: a hit on a collider in no layer"
        );
        for (k, swept) in &oracle {
            let hit = all.iter().find(|h| h.entity == entities[*k]);
            match (swept, hit) {
                (Swept::Ambiguous, _) | (Swept::Miss, None) => {}
                (Swept::Hit(u), Some(h)) => {
                    let t = f64::from(h.t) / f64::from(max_t).max(f64::MIN_POSITIVE);
                    let grazing =
                        t <= *u && signed_gap(&rb.moved(d * t), &shapes[*k]) <= SWEEP_SLACK;
                    assert!(
                        max_t == 0.0 || (t - u).abs() <= tolerance || grazing,
                        "{what}: target {k} at t {}, the oracle's {}",
                        h.t,
                        u * f64::from(max_t)
                    );
                    hits += 1;
                    on_rounded += usize::from(rounded_target(*k));
                }
                other => panic!(
                    "{what}: target {k} ({:?}): oracle and query differ: {other:?}",
                    scene.bodies[*k].0
                ),
            }
        }
        // Rays (what picking casts): a point cast from the caster's center.
        let ray_hits = query.ray_hits(&Ray::new(center, direction), max_t, &filter);
        for (k, s) in shapes.iter().enumerate().filter(|(k, _)| queryable(*k)) {
            let swept = first_contact(|u| signed_gap(&point.moved(d * u), s));
            let hit = ray_hits.iter().find(|h| h.entity == entities[k]);
            match (swept, hit) {
                (Swept::Ambiguous, _) | (Swept::Miss, None) => {}
                (Swept::Hit(u), Some(h)) => {
                    let t = f64::from(h.t) / f64::from(max_t).max(f64::MIN_POSITIVE);
                    let grazing = t <= u && signed_gap(&point.moved(d * t), s) <= SWEEP_SLACK;
                    assert!(
                        max_t == 0.0 || (t - u).abs() <= tolerance || grazing,
                        "{what}: ray hits {k} at {}, the oracle's {}",
                        h.t,
                        u * f64::from(max_t)
                    );
                    rays += 1;
                }
                other => panic!("{what}: ray against target {k}: {other:?}"),
            }
        }
        // The first hit is the nearest one of every hit, unless two are too close to call.
        let first = match kind {
            Caster::Capsule => query.cast_capsule(&caster, direction, max_t, &filter),
            Caster::RoundedBox => query.cast_rounded_box(&caster, direction, max_t, &filter),
        };
        let nearest = oracle
            .iter()
            .filter_map(|(k, s)| match s {
                Swept::Hit(u) => Some((*u, *k)),
                _ => None,
            })
            .min_by(|a, b| a.0.total_cmp(&b.0));
        let ambiguous = oracle.iter().any(|(_, s)| *s == Swept::Ambiguous);
        match (first, nearest) {
            (None, None) => {}
            (Some(h), Some((u, _))) => {
                let t = f64::from(h.t) / f64::from(max_t).max(f64::MIN_POSITIVE);
                let k = entities.iter().position(|e| *e == h.entity).unwrap();
                let grazing = t <= u && signed_gap(&rb.moved(d * t), &shapes[k]) <= SWEEP_SLACK;
                assert!(
                    max_t == 0.0 || (t - u).abs() <= tolerance || grazing,
                    "{what}: first hit at {}, the oracle's {}",
                    h.t,
                    u * f64::from(max_t)
                );
            }
            other => assert!(ambiguous, "{what}: first hit {other:?}"),
        }
    }
    assert!(hits >= 300, "{kind:?}: only {hits} cast hits");
    assert!(overlaps >= 100, "{kind:?}: only {overlaps} overlaps");
    assert!(rays >= 50, "{kind:?}: only {rays} ray hits");
    assert!(points >= 20, "{kind:?}: only {points} points inside");
    assert!(
        on_rounded >= 50,
        "{kind:?}: only {on_rounded} hits and overlaps of rounded boxes"
    );
}

/// A capsule's bad values leave it out until they are valid again, with no event lost or
/// repeated; with an `Aabb` too, the `Aabb` counts.
pub(crate) fn capsule_bad_values<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
    let wall = app
        .world_mut()
        .spawn((Transform::default(), Aabb::new(V::splat(1.0))))
        .id();
    let body = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.0, 2.5, 0.0),
            Capsule::<V>::new(1.0, 0.6),
        ))
        .id();
    run_ticks(&mut app, 1);
    // The capsule's lower end reaches y = 2.5 - 1.6 = 0.9 < 1: touching.
    let touching = |app: &App| {
        app.world()
            .resource::<Rec>()
            .touching
            .last()
            .unwrap()
            .clone()
    };
    assert!(touching(&app).contains(&key(wall, body)));
    let bad: [Capsule<V>; 4] = [
        Capsule::new(1.0, -0.5),
        Capsule::new(f32::NAN, 0.5),
        Capsule::new(1.0, f32::INFINITY),
        Capsule::new(1.0, 0.6).with_offset(V::splat(f32::NAN)),
    ];
    for c in bad {
        app.world_mut().entity_mut(body).insert(c);
        run_ticks(&mut app, 1);
        assert!(touching(&app).is_empty(), "{c:?}");
        let tracked = app.world().get::<TrackedCollider<V>>(body).unwrap();
        assert!(tracked.proxy().is_none(), "{c:?}");
        app.world_mut()
            .entity_mut(body)
            .insert(Capsule::<V>::new(1.0, 0.6));
        run_ticks(&mut app, 1);
        assert!(touching(&app).contains(&key(wall, body)), "{c:?}");
    }
    if V::DIM == 2 {
        // No z axis in 2D.
        let c = Capsule::<V>::new(1.0, 0.6).along(CapsuleAxis::Z);
        app.world_mut().entity_mut(body).insert(c);
        run_ticks(&mut app, 1);
        assert!(touching(&app).is_empty());
        app.world_mut()
            .entity_mut(body)
            .insert(Capsule::<V>::new(1.0, 0.6));
        run_ticks(&mut app, 1);
    }
    // A thin box too: the box counts, the capsule's reach does not.
    app.world_mut()
        .entity_mut(body)
        .insert(Aabb::new(V::splat(0.1)));
    run_ticks(&mut app, 1);
    assert!(touching(&app).is_empty());
    app.world_mut().entity_mut(body).remove::<Aabb<V>>();
    run_ticks(&mut app, 1);
    assert!(touching(&app).contains(&key(wall, body)));
    finish::<V>(&app);
}

/// The game's gravity and walk at 6 units/s, before the collision tick.
fn walk_right<V: Dim>(time: Res<Time>, mut q: Query<&mut CharacterController<V>>) {
    for mut c in &mut q {
        let mut v = c.velocity.extend_to_3d();
        v.y -= 20.0 * time.delta_secs();
        v.x = 6.0;
        c.velocity = V::truncate_from_3d(v);
    }
}

/// A capsule character of `CharacterPlugin` walks over a floor of touching `Static` unit
/// tiles for 3 s: every tick it covers its whole walk (never held at a seam), stays
/// grounded with its bottom within two skins of the floor, takes no step, and passes
/// through a `Sensor` on the way (starting a contact with it).
pub(crate) fn capsule_character_over_tiles<V: Dim>() {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins(AabbTreePlugin::<V>::new(Update))
        .add_plugins(CharacterPlugin::<V>::new(Update))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .add_systems(Update, walk_right::<V>.before(CollisionSystems::Prepare));
    for i in -2..30 {
        app.world_mut().spawn((
            Transform::from_xyz(i as f32 + 0.5, -0.5, 0.0),
            Aabb::<V>::new(V::splat(0.5)),
            Static,
        ));
    }
    let sensor = app
        .world_mut()
        .spawn((
            Transform::from_xyz(9.0, 1.0, 0.0),
            Aabb::<V>::new(V::splat(0.5)),
            Sensor,
        ))
        .id();
    // Radius 0.3, 1.4 tall, its bottom a skin above the floor.
    let body = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.5, 0.71, 0.0),
            Capsule::<V>::new(0.4, 0.3),
            CharacterController::<V>::new(v(0.0, 1.0, 0.0)),
            CollidingEntities::default(),
        ))
        .id();
    for _ in 0..10 {
        app.update();
    }
    let x = |app: &App| app.world().get::<Transform>(body).unwrap().translation.x;
    let start = x(&app);
    let mut met_sensor = false;
    for frame in 0..180 {
        let before = x(&app);
        app.update();
        let moved = x(&app) - before;
        let state = app.world().get::<CharacterState<V>>(body).unwrap();
        let bottom = app.world().get::<Transform>(body).unwrap().translation.y - 0.7;
        assert!(
            (moved - 0.1).abs() < 1e-3,
            "frame {frame}: moved {moved} at x {before}"
        );
        assert!(state.grounded, "frame {frame}: airborne at x {before}");
        assert_eq!(state.step, 0.0, "frame {frame}: stepped at x {before}");
        assert!(
            (0.0..0.02).contains(&bottom),
            "frame {frame}: bottom {bottom}"
        );
        let contacts = app.world().get::<CollidingEntities>(body).unwrap();
        met_sensor |= contacts.contains(sensor);
    }
    assert!((x(&app) - start - 18.0).abs() < 0.05);
    assert!(met_sensor, "never touched the sensor it walked through");
}

both_dims!(
    capsule_character_over_tiles,
    capsule_scenes_match_oracle,
    swept_capsule_scenes_match_oracle,
    capsule_queries_match_brute_force,
    capsule_bad_values,
);
