//! The oracles, written independently of the plugin: world shapes, overlaps and pairs by brute force, the swept first contact and its normals, rays.

use super::*;

// ---------------------------------------------------------------------------------------
// The oracle: world shapes and tests written independently of the plugin

/// A collider in world space, in 3D coordinates (z = 0 in 2D).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum OShape {
    Box {
        min: Vec3,
        max: Vec3,
    },
    Ball {
        center: Vec3,
        radius: f32,
    },
    /// A capsule or a rounded box: the inner box from `min` to `max` (flat on all axes but
    /// one for a capsule), grown by `radius`.
    Rounded {
        min: Vec3,
        max: Vec3,
        radius: f32,
    },
}

impl OShape {
    /// The shape in `f64`, as the kit's oracle takes it.
    pub(crate) fn solid(self) -> crate::exact::Solid {
        match self {
            OShape::Box { min, max } => crate::exact::Solid::Box {
                min: min.as_dvec3(),
                max: max.as_dvec3(),
            },
            OShape::Ball { center, radius } => crate::exact::Solid::Ball {
                center: center.as_dvec3(),
                radius: f64::from(radius),
            },
            OShape::Rounded { .. } => panic!(
                "the kit's exact solids are boxes and balls: normals and queries of capsules \
                 and rounded boxes are checked in capsules.rs"
            ),
        }
    }

    /// Any shape as an inner box grown by a radius (a box: radius 0; a ball: a box of no
    /// size).
    pub(crate) fn rounded(self) -> (Vec3, Vec3, f32) {
        match self {
            OShape::Box { min, max } => (min, max, 0.0),
            OShape::Ball { center, radius } => (center, center, radius),
            OShape::Rounded { min, max, radius } => (min, max, radius),
        }
    }
}

/// The world shape of a root entity's `Capsule` or `RoundedAabb`, or `None` when the plugin
/// must leave it out (non-finite or negative values). Only translated: the tests that use
/// these shapes neither rotate nor scale them.
pub(crate) fn oracle_rounded_shape<V: Dim>(
    transform: &Transform,
    capsule: Option<&Capsule<V>>,
    rounded: Option<&RoundedAabb<V>>,
    velocity: Option<&Velocity<V>>,
) -> Option<OShape> {
    let (half, radius, offset) = if let Some(c) = capsule {
        let mut half = Vec3::ZERO;
        half[c.axis.index()] = c.half_length;
        (half, c.radius, c.offset.extend_to_3d())
    } else if let Some(r) = rounded {
        (
            r.half_extents.extend_to_3d(),
            r.radius,
            r.offset.extend_to_3d(),
        )
    } else {
        return None;
    };
    assert!(
        transform.rotation == Quat::IDENTITY && transform.scale == Vec3::ONE,
        "the harness's oracle takes capsules and rounded boxes translated only"
    );
    let center = flat::<V>(transform.translation + offset);
    let valid = center.is_finite()
        && half.is_finite()
        && half.min_element() >= 0.0
        && radius.is_finite()
        && radius >= 0.0
        && velocity.is_none_or(|v| v.0.extend_to_3d().is_finite());
    valid.then_some(OShape::Rounded {
        min: center - half,
        max: center + half,
        radius,
    })
}

/// The world shape of a root entity's collider, or `None` when the plugin must leave it
/// out (non-finite or negative values). Boxes: the eight (four) corners of the local box
/// mapped by `Transform::transform_point`, enclosed; balls: the center mapped, the radius
/// times the largest scale factor of the dimension's axes.
pub(crate) fn oracle_shape<V: Dim>(
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
    let (min, max, radius) = shape.rounded();
    (min.is_finite() && max.is_finite() && radius.is_finite()).then_some(shape)
}

/// The point of a box closest to `p`.
pub(crate) fn clamp_to_box(p: Vec3, min: Vec3, max: Vec3) -> Vec3 {
    p.max(min).min(max)
}

/// The distance between two boxes (zero when they overlap).
fn box_distance((a0, a1): (Vec3, Vec3), (b0, b1): (Vec3, Vec3)) -> f32 {
    (a0 - b1).max(b0 - a1).max(Vec3::ZERO).length()
}

/// Inclusive overlap of two world shapes.
pub(crate) fn oracle_overlap(a: &OShape, b: &OShape) -> bool {
    match (*a, *b) {
        (OShape::Rounded { .. }, _) | (_, OShape::Rounded { .. }) => {
            let ((a0, a1, ra), (b0, b1, rb)) = (a.rounded(), b.rounded());
            box_distance((a0, a1), (b0, b1)) <= ra + rb
        }
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

pub(crate) fn oracle_layers(a: Option<CollisionLayers>, b: Option<CollisionLayers>) -> bool {
    let a = a.unwrap_or(CollisionLayers::new(u32::MAX, u32::MAX));
    let b = b.unwrap_or(CollisionLayers::new(u32::MAX, u32::MAX));
    a.memberships & b.filters != 0 && b.memberships & a.filters != 0
}

/// An unordered pair as a key.
pub(crate) fn key(a: Entity, b: Entity) -> (Entity, Entity) {
    if a <= b { (a, b) } else { (b, a) }
}

pub(crate) type Pairs = BTreeSet<(Entity, Entity)>;

/// Every pair of shapes that overlap with layers matching, by brute force.
pub(crate) fn brute_force_pairs(shapes: &[(Entity, OShape, Option<CollisionLayers>)]) -> Pairs {
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

/// The first time in `[0, 1]` at which two shapes moving by `da` and `db` (translation
/// only) touch. In `a`'s frame `b` moves by `v = db - da`. Two boxes: the offset between
/// their centers is a point moving against the sum of their half extents. Two balls: the
/// same against the sum of the radii. A ball and a box, or any pair with a capsule or a
/// rounded box: the gap between them (the distance between their inner boxes less the
/// radii) is convex in time: ternary search for its minimum, then bisection for the first
/// touch.
pub(crate) fn oracle_sweep(a: &OShape, da: Vec3, b: &OShape, db: Vec3) -> Option<f32> {
    let v = db - da;
    match (*a, *b) {
        (OShape::Rounded { .. }, _) | (_, OShape::Rounded { .. }) => {
            let ((a0, a1, ra), (b0, b1, rb)) = (a.rounded(), b.rounded());
            first_touch_by_gap(|u: f32| {
                box_distance((a0, a1), (b0 + v * u, b1 + v * u)) - (ra + rb)
            })
        }
        (OShape::Box { min: a0, max: a1 }, OShape::Box { min: b0, max: b1 }) => {
            let half = (a1 - a0) * 0.5 + (b1 - b0) * 0.5;
            let offset = (b0 + b1) * 0.5 - (a0 + a1) * 0.5;
            let (min, max) = ((-half).as_dvec3(), half.as_dvec3());
            ray_at(offset, v, exact::Solid::Box { min, max }, 1.0)
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
        ) => {
            let ball = exact::Solid::Ball {
                center: bevy::math::DVec3::ZERO,
                radius: f64::from(ra + rb),
            };
            ray_at(cb - ca, v, ball, 1.0)
        }
        (OShape::Ball { center, radius }, OShape::Box { min, max })
        | (OShape::Box { min, max }, OShape::Ball { center, radius }) => {
            // The ball's motion relative to the box.
            let rel = if matches!(a, OShape::Ball { .. }) {
                -v
            } else {
                v
            };
            first_touch_by_gap(|u: f32| {
                let c = center + rel * u;
                clamp_to_box(c, min, max).distance(c) - radius
            })
        }
    }
}

/// The first time in `[0, 1]` at which `gap`, convex in time, is at most zero.
fn first_touch_by_gap(gap: impl Fn(f32) -> f32) -> Option<f32> {
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

pub(crate) fn shape_center(s: &OShape) -> Vec3 {
    let (min, max, _) = s.rounded();
    (min + max) * 0.5
}

pub(crate) fn translated(s: &OShape, d: Vec3) -> OShape {
    match *s {
        OShape::Box { min, max } => OShape::Box {
            min: min + d,
            max: max + d,
        },
        OShape::Ball { center, radius } => OShape::Ball {
            center: center + d,
            radius,
        },
        OShape::Rounded { min, max, radius } => OShape::Rounded {
            min: min + d,
            max: max + d,
            radius,
        },
    }
}

/// The contact normals from `a` towards `b` for shapes that touch (within `tolerance`):
/// the kit's [`crate::exact::contact_normals`], in `f64`.
pub(crate) fn oracle_contact_normals(a: &OShape, b: &OShape, tolerance: f32) -> Vec<Vec3> {
    crate::exact::contact_normals(a.solid(), b.solid(), f64::from(tolerance))
        .into_iter()
        .map(|n| n.as_vec3())
        .collect()
}

/// Checks a `CollisionStarted` normal recorded from `from`'s side against the oracle's
/// normals from `a` (entity `ea`) towards `b`.
pub(crate) fn assert_normal(what: &str, normal: Vec3, from: Entity, ea: Entity, want: &[Vec3]) {
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
pub(crate) fn assert_swept_oracle(
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

// ---------------------------------------------------------------------------------------
// Rays and filters of the oracles

/// The first `t` in `[0, max_t]` at which `o + t d` lies in `solid`: the kit's `f64` ray
/// oracle, on this oracle's `f32` shapes.
fn ray_at(o: Vec3, d: Vec3, solid: exact::Solid, max_t: f32) -> Option<f32> {
    exact::ray_entry(o.as_dvec3(), d.as_dvec3(), solid, f64::from(max_t)).map(|t| t as f32)
}
