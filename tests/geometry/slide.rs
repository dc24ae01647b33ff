//! Shape casts and move-and-slide, in 2D and 3D, against a brute-force oracle.
//!
//! The oracle never calls the crate: it tests overlap from the definitions in `f64` and
//! finds when a moving shape first overlaps a target by sampling the motion finely and
//! bisecting. A cast's time is checked between the oracle's times for the target grown
//! and shrunk by a small margin, which decides every case but exact grazing.
//!
//! Move-and-slide is checked for what a game needs: a box or ball sliding along a floor or
//! a wall made of unit tiles is never held back at the seams (its displacement along the
//! surface is the whole motion, every frame) and never enters a tile; pushed into a corner
//! it comes to rest and stays (no jitter); in random scenes it never ends overlapping a
//! shape it started outside of; ground is reported on floors and not on walls or steep
//! slopes. Random scenes also run on a cast of the tests' own (brute force, with the
//! normal from the contact at the hit), so that the slide is not judged only through the
//! crate's casts. The floor test includes a steep landing whose box face reaches a seam at
//! the very time it lands, the case where a cast may report the next tile's side face.

use crate::kit::rng;

use bevy_aabb_tree::geometry::{
    CastHit, Shape, SlideConfig, SlideOutcome, cast_shape, cast_shapes, move_and_slide,
};
use bevy_aabb_tree::{Ball, Vector};
use glam::{Vec2, Vec3};

use super::oracle::{ball_shape as ball, box_shape as bbox, vec};
use rng::Rng;

// ---------------------------------------------------------------------------------------
// The oracle
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum O {
    Box([f64; 3], [f64; 3]),
    Ball([f64; 3], f64),
}

fn f64v<V: Vector>(v: V) -> [f64; 3] {
    let v = v.extend_to_3d();
    [v.x as f64, v.y as f64, v.z as f64]
}

/// The shape in `f64`, grown by `margin` (shrunk if negative, never below a point).
fn to_o<V: Vector>(s: &Shape<V>, margin: f64) -> O {
    match s {
        Shape::Box(b) => {
            let (mut min, mut max) = (f64v(b.min), f64v(b.max));
            for i in 0..3 {
                let c = 0.5 * (min[i] + max[i]);
                min[i] = (min[i] - margin).min(c);
                max[i] = (max[i] + margin).max(c);
            }
            O::Box(min, max)
        }
        Shape::Ball(b) => O::Ball(f64v(b.center), (b.radius as f64 + margin).max(0.0)),
        Shape::Rounded(_) => unreachable!("boxes and balls only"),
    }
}

fn translate(o: O, t: [f64; 3]) -> O {
    let add = |p: [f64; 3]| [p[0] + t[0], p[1] + t[1], p[2] + t[2]];
    match o {
        O::Box(min, max) => O::Box(add(min), add(max)),
        O::Ball(c, r) => O::Ball(add(c), r),
    }
}

fn box_dist2(min: [f64; 3], max: [f64; 3], p: [f64; 3], dim: usize) -> f64 {
    (0..dim)
        .map(|i| {
            let out = (min[i] - p[i]).max(p[i] - max[i]).max(0.0);
            out * out
        })
        .sum()
}

fn o_overlaps(a: O, b: O, dim: usize) -> bool {
    match (a, b) {
        (O::Box(amin, amax), O::Box(bmin, bmax)) => {
            (0..dim).all(|i| amin[i] <= bmax[i] && bmin[i] <= amax[i])
        }
        (O::Ball(ca, ra), O::Ball(cb, rb)) => {
            let d2: f64 = (0..dim).map(|i| (cb[i] - ca[i]).powi(2)).sum();
            d2 <= (ra + rb) * (ra + rb)
        }
        (O::Box(min, max), O::Ball(c, r)) | (O::Ball(c, r), O::Box(min, max)) => {
            box_dist2(min, max, c, dim) <= r * r
        }
    }
}

/// The first fraction of `motion` at which `shape` overlaps `target`, by sampling and
/// bisection, or `None`.
fn oracle_first(shape: O, motion: [f64; 3], target: O, dim: usize) -> Option<f64> {
    oracle_first_in(shape, motion, target, dim, 4000)
}

/// [`oracle_first`] with `steps` samples.
fn oracle_first_in(shape: O, motion: [f64; 3], target: O, dim: usize, steps: usize) -> Option<f64> {
    let at = |u: f64| translate(shape, [motion[0] * u, motion[1] * u, motion[2] * u]);
    if o_overlaps(at(0.0), target, dim) {
        return Some(0.0);
    }
    for k in 1..=steps {
        let u = k as f64 / steps as f64;
        if o_overlaps(at(u), target, dim) {
            let (mut lo, mut hi) = ((k - 1) as f64 / steps as f64, u);
            for _ in 0..50 {
                let mid = 0.5 * (lo + hi);
                if o_overlaps(at(mid), target, dim) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            return Some(hi);
        }
    }
    None
}

/// Whether `shape` overlaps `target` by more than `margin` (the target shrunk by it).
fn penetrates<V: Vector>(shape: &Shape<V>, target: &Shape<V>, margin: f64) -> bool {
    o_overlaps(to_o(shape, 0.0), to_o(target, -margin), V::DIM)
}

// ---------------------------------------------------------------------------------------
// Casts against the oracle
// ---------------------------------------------------------------------------------------

fn random_shape<V: Vector>(rng: &mut Rng, spread: f32) -> Shape<V> {
    let c = [
        rng.range(-spread, spread),
        rng.range(-spread, spread),
        rng.range(-spread, spread),
    ];
    if rng.chance(0.5) {
        let h = [
            rng.range(0.05, 1.0),
            rng.range(0.05, 1.0),
            rng.range(0.05, 1.0),
        ];
        bbox(
            [c[0] - h[0], c[1] - h[1], c[2] - h[2]],
            [c[0] + h[0], c[1] + h[1], c[2] + h[2]],
        )
    } else {
        ball(c, rng.range(0.05, 1.0))
    }
}

fn random_motion<V: Vector>(rng: &mut Rng, len: f32) -> V {
    vec([
        rng.range(-len, len),
        rng.range(-len, len),
        rng.range(-len, len),
    ])
}

/// `cast_shapes` lies between the oracle's first times for the targets grown and shrunk
/// by a margin; its normal is unit and opposes the motion.
fn casts_match_the_oracle<V: Vector>(seed: u64) {
    let mut rng = Rng::new(seed);
    let margin = 1e-3;
    let mut hits = 0;
    for _ in 0..300 {
        let shape = random_shape::<V>(&mut rng, 0.5);
        let targets: Vec<(Shape<V>, usize)> = (0..8)
            .map(|i| (random_shape::<V>(&mut rng, 3.0), i))
            .filter(|(t, _)| !o_overlaps(to_o(&shape, 0.0), to_o(t, margin), V::DIM))
            .collect();
        let motion = random_motion::<V>(&mut rng, 6.0);
        let m = f64v(motion);
        let first = |grow: f64| {
            targets
                .iter()
                .filter_map(|(t, _)| oracle_first(to_o(&shape, 0.0), m, to_o(t, grow), V::DIM))
                .fold(f64::INFINITY, f64::min)
        };
        let (early, late) = (first(margin), first(-margin));
        let hit = cast_shapes(&shape, motion, targets.iter().copied());
        let t = hit.map_or(f64::INFINITY, |h| h.t as f64);
        assert!(
            early <= t + 1e-6 && t <= late + 1e-6,
            "cast time {t} outside oracle [{early}, {late}] for {shape:?} {motion:?} {targets:?}"
        );
        if let Some(h) = hit {
            hits += 1;
            let n = h.normal;
            assert!((n.dot(n).sqrt() - 1.0).abs() < 1e-5, "{h:?}");
            assert!(n.dot(motion) < 0.0, "{h:?} does not oppose {motion:?}");
            // Stopped just short of the hit, the shape overlaps nothing.
            let back = (h.t - 1e-3).max(0.0);
            let before = shape.translated(motion * back);
            for (t, _) in &targets {
                assert!(!penetrates(&before, t, 1e-5), "{before:?} in {t:?}");
            }
        }
    }
    assert!(hits > 50, "too few hits to judge: {hits}");
}

crate::kit::tests_2d_3d!(
    casts_match_the_oracle:
    casts_match_the_oracle_2d(11),
    casts_match_the_oracle_3d(12)
);

fn cast_rules<V: Vector>() {
    let x = vec::<V>([1.0, 0.0, 0.0]);
    let y = vec::<V>([0.0, 1.0, 0.0]);
    let unit = bbox::<V>([0.0, -1.0, 0.0], [1.0, 0.0, 1.0]);
    // A box resting exactly on a tile slides along it, and away from it, freely...
    let resting = bbox::<V>([0.2, 0.0, 0.2], [0.8, 0.5, 0.8]);
    assert_eq!(cast_shape(&resting, x, &unit), None);
    assert_eq!(cast_shape(&resting, y, &unit), None);
    // ...but is blocked at once going down, by the top face.
    let hit = cast_shape(&resting, -y + x, &unit).unwrap();
    assert_eq!((hit.t, hit.normal), (0.0, y));
    // Touching the next tile's corner only (the seam) does not block a slide over it.
    let at_seam = bbox::<V>([-0.5, 0.0, 0.2], [0.0, 0.5, 0.8]);
    assert_eq!(cast_shape(&at_seam, x, &unit), None);
    // Landing exactly on a corner, steeply: the top face, the face driven into most.
    let above = bbox::<V>([-1.25, 0.5, 0.2], [-0.25, 1.5, 0.8]);
    let hit = cast_shape(&above, vec([0.25, -0.5, 0.0]), &unit).unwrap();
    assert_eq!((hit.t, hit.normal), (1.0, y));
    // The same, shallow: the side face.
    let beside = bbox::<V>([-1.5, 0.25, 0.2], [-0.5, 1.25, 0.8]);
    let hit = cast_shape(&beside, vec([1.0, -0.5, 0.0]), &unit).unwrap();
    assert_eq!((hit.t, hit.normal), (0.5, -x));
    // A ball grazing a box's top face never goes deeper: no hit.
    let grazing = ball::<V>([-2.0, 1.0, 0.5], 1.0);
    assert_eq!(cast_shape(&grazing, x * 4.0, &unit), None);
    // Of two simultaneous hits, the one opposing the motion least.
    let a = CastHit {
        t: 0.5,
        normal: y,
        point: V::ZERO,
        id: 1,
    };
    let b = CastHit {
        t: 0.5,
        normal: -x,
        point: V::ZERO,
        id: 2,
    };
    let motion = vec::<V>([1.0, -0.5, 0.0]);
    assert!(a.precedes(&b, motion) && !b.precedes(&a, motion));
    // Invalid input: no hit, no panic.
    assert_eq!(cast_shape(&resting, vec([f32::NAN; 3]), &unit), None);
    assert_eq!(cast_shape(&ball([0.0; 3], -1.0), x, &unit), None);
}

#[test]
fn cast_rules_2d_3d() {
    cast_rules::<Vec2>();
    cast_rules::<Vec3>();
}

// ---------------------------------------------------------------------------------------
// Move-and-slide
// ---------------------------------------------------------------------------------------

type World<V> = Vec<(Shape<V>, usize)>;

fn slide<V: Vector>(
    shape: &Shape<V>,
    motion: V,
    config: &SlideConfig<V>,
    world: &World<V>,
) -> SlideOutcome<V, usize> {
    move_and_slide(shape, motion, config, |s, m| {
        cast_shapes(s, m, world.iter().copied())
    })
}

/// Unit tiles under `y = 0`: 100 in a row in 2D, 10 by 10 in 3D.
fn floor<V: Vector>() -> World<V> {
    let mut tiles = Vec::new();
    if V::DIM == 2 {
        for i in 0..100 {
            let x = i as f32;
            tiles.push(bbox([x, -1.0, 0.0], [x + 1.0, 0.0, 0.0]));
        }
    } else {
        for i in 0..10 {
            for k in 0..10 {
                let (x, z) = (i as f32, k as f32);
                tiles.push(bbox([x, -1.0, z], [x + 1.0, 0.0, z + 1.0]));
            }
        }
    }
    tiles.into_iter().enumerate().map(|(i, t)| (t, i)).collect()
}

fn assert_outside_all<V: Vector>(shape: &Shape<V>, world: &World<V>, what: &str) {
    for (t, id) in world {
        assert!(
            !penetrates(shape, t, 1e-5),
            "{what}: {shape:?} entered tile {id} {t:?}"
        );
    }
}

/// A box or ball slides along a tiled floor under gravity: every frame it moves by the
/// whole horizontal motion, never enters a tile, and is on ground once landed.
fn floor_slide<V: Vector>() {
    let world = floor::<V>();
    let config = SlideConfig::new(vec::<V>([0.0, 1.0, 0.0]));
    let skin = config.skin;
    // Exactly tile-sized boxes and dyadic speeds make the corner of the next tile come
    // at the very time of landing.
    // The steep falling box, at speed 0.125, lands at the end of its second frame with
    // its right face on the seam at x = 2: steeply, so the corner of the next tile must
    // not report its side face.
    let starts: [(Shape<V>, &str); 5] = [
        (bbox([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]), "tile-sized box"),
        (bbox([0.1, skin, 0.1], [0.9, 0.8 + skin, 0.9]), "box"),
        (bbox([0.0, 0.5, 0.0], [1.0, 1.5, 1.0]), "falling box"),
        (
            bbox([0.75, 0.5, 0.0], [1.75, 1.5, 1.0]),
            "steep falling box",
        ),
        (ball([0.5, 0.5 + 0.5 * skin, 0.5], 0.5), "ball"),
    ];
    let speeds = [0.05f32, 0.125, 0.25, 0.5, 1.0, 3.0];
    let heights = [0.0f32, 0.5 * skin, skin, 0.25, 1.0];
    let dirs: &[[f32; 3]] = if V::DIM == 2 {
        &[[1.0, 0.0, 0.0]]
    } else {
        &[[1.0, 0.0, 0.0], [0.6, 0.0, 0.8]]
    };
    let gravity = 0.25;
    for (start, what) in starts {
        for (speed, height, &dir) in speeds.iter().flat_map(|&s| {
            heights
                .iter()
                .flat_map(move |&h| dirs.iter().map(move |d| (s, h, d)))
        }) {
            {
                let lift = vec::<V>([0.0, height, 0.0]);
                let mut shape = start.translated(lift);
                let dir = vec::<V>(dir);
                let reach = if V::DIM == 2 { 90.0 } else { 8.0 };
                let mut landed = false;
                let mut frames = 0;
                while (shape.bounding_box().center() - start.bounding_box().center()).dot(dir)
                    < reach - speed
                {
                    let motion = dir * speed - vec::<V>([0.0, gravity, 0.0]);
                    let out = slide(&shape, motion, &config, &world);
                    let along = out.displacement.dot(dir);
                    // A ball landing within rounding of a seam may meet the corner
                    // of the tile beside first, whose normal is tilted by the ball's
                    // offset from the seam: a nudge of that order either way.
                    let tolerance = if matches!(start, Shape::Ball(_)) {
                        1e-2
                    } else {
                        1e-4
                    };
                    assert!(
                        (along - speed).abs() <= tolerance * speed,
                        "{what} at speed {speed} height {height}: moved {along} along the \
                         floor at frame {frames} from {shape:?}: {out:?}"
                    );
                    shape = shape.translated(out.displacement);
                    assert_outside_all(&shape, &world, what);
                    let bottom = shape.bounding_box().min.axis(1);
                    // Once on the ground, it stays there: gravity probes it every frame.
                    if out.on_ground {
                        landed = true;
                    }
                    if landed {
                        assert!(
                            out.on_ground,
                            "{what} at speed {speed} height {height} not on ground at frame \
                             {frames}: {shape:?} {out:?}"
                        );
                        assert!(bottom <= skin + 1e-4, "{what} left the floor: {bottom}");
                    }
                    frames += 1;
                }
                let drop = start.translated(lift).bounding_box().min.axis(1);
                assert!(
                    landed || drop > gravity * frames as f32,
                    "{what} at speed {speed} height {height} never landed"
                );
            }
        }
    }
}

crate::kit::tests_2d_3d!(
    floor_slide:
    floor_of_tiles_does_not_snag_2d,
    floor_of_tiles_does_not_snag_3d
);

/// A box pushed against a wall of unit tiles (at `x >= 10`) while moving up and down it
/// moves by the whole motion along the wall, and never enters it.
fn wall_slide<V: Vector>() {
    let mut world = World::<V>::new();
    for j in -100..100 {
        let y = j as f32;
        if V::DIM == 2 {
            world.push((bbox([10.0, y, 0.0], [11.0, y + 1.0, 0.0]), world.len()));
        } else {
            for k in -2..3 {
                let z = k as f32;
                world.push((bbox([10.0, y, z], [11.0, y + 1.0, z + 1.0]), world.len()));
            }
        }
    }
    let config = SlideConfig::new(vec::<V>([0.0, 1.0, 0.0]));
    for speed in [0.1f32, 0.25, 1.0, 2.5] {
        for up in [1.0f32, -1.0] {
            let mut shape = bbox::<V>([8.0, 0.0, 0.0], [9.0, 1.0, 1.0]);
            for frame in 0..30 {
                let motion = vec::<V>([0.5, up * speed, 0.0]);
                let out = slide(&shape, motion, &config, &world);
                shape = shape.translated(out.displacement);
                assert_outside_all(&shape, &world, "wall slider");
                assert!(
                    (out.displacement.axis(1) - up * speed).abs() <= 1e-4 * speed,
                    "held back at frame {frame}: {out:?}"
                );
                assert!(!out.on_ground, "a wall is not ground");
            }
            let right = shape.bounding_box().max.axis(0);
            assert!(right < 10.0 && right > 10.0 - 2.0 * config.skin, "{right}");
        }
    }
}

crate::kit::tests_2d_3d!(
    wall_slide:
    wall_of_tiles_does_not_snag_2d,
    wall_of_tiles_does_not_snag_3d
);

/// Pushed into the corner of a tiled floor and a tiled wall (and a second wall in 3D),
/// a box comes to rest within two skins of each and stays there, call after call.
fn corner<V: Vector>() {
    let mut world = floor::<V>();
    for j in 0..5 {
        let y = j as f32;
        for k in 0..10 {
            let z = k as f32;
            world.push((bbox([5.0, y, z], [6.0, y + 1.0, z + 1.0]), world.len()));
            if V::DIM == 3 {
                world.push((bbox([z, y, 5.0], [z + 1.0, y + 1.0, 6.0]), world.len()));
            }
        }
    }
    let config = SlideConfig::new(vec::<V>([0.0, 1.0, 0.0]));
    let skin = config.skin;
    for motion in [[0.3f32, -0.3, 0.3], [0.05, -0.2, 0.1], [1.0, -0.01, 0.5]] {
        let motion = vec::<V>(motion);
        let mut shape = bbox::<V>([3.0, 0.5, 3.0], [4.0, 1.5, 4.0]);
        let mut rest: Option<V> = None;
        for call in 0..100 {
            let out = slide(&shape, motion, &config, &world);
            shape = shape.translated(out.displacement);
            assert_outside_all(&shape, &world, "corner");
            if call >= 70 {
                let c = shape.bounding_box().min;
                match rest {
                    None => rest = Some(c),
                    Some(r) => assert!(
                        (c - r).abs().max_element() <= 1e-5,
                        "jitter at call {call}: {c:?} vs {r:?}"
                    ),
                }
            }
        }
        let b = shape.bounding_box();
        assert!(b.min.axis(1) <= 2.0 * skin, "{b:?}");
        assert!(b.max.axis(0) >= 5.0 - 2.0 * skin, "{b:?}");
        if V::DIM == 3 {
            assert!(b.max.axis(2) >= 5.0 - 2.0 * skin, "{b:?}");
        }
    }
}

crate::kit::tests_2d_3d!(
    corner:
    corner_converges_without_jitter_2d,
    corner_converges_without_jitter_3d
);

/// A random scene of the move-and-slide tests: a world of random shapes spread over
/// `spread`, and a random shape to move in it, or `None` where that shape starts within
/// `margin` of the world's shapes.
fn random_start<V: Vector>(
    rng: &mut Rng,
    spread: f32,
    margin: f64,
) -> Option<(World<V>, Shape<V>)> {
    let world: World<V> = (0..12)
        .map(|i| (random_shape::<V>(rng, spread), i))
        .collect();
    let shape = random_shape::<V>(rng, spread);
    let clear = !world
        .iter()
        .any(|(t, _)| o_overlaps(to_o(&shape, 0.0), to_o(t, margin), V::DIM));
    clear.then_some((world, shape))
}

/// In random scenes of boxes and balls, a shape that starts outside every one never ends
/// a call overlapping one, and never moves farther than asked.
fn random_scenes<V: Vector>(seed: u64) {
    let mut rng = Rng::new(seed);
    let mut blocked = 0;
    for _ in 0..150 {
        let Some((world, mut shape)) = random_start::<V>(&mut rng, 4.0, 1e-4) else {
            continue;
        };
        let mut config = SlideConfig::new(vec::<V>([0.0, 1.0, 0.0]));
        config.skin = rng.range(0.001, 0.05);
        config.max_iterations = 1 + rng.below(6);
        for _ in 0..10 {
            let motion = random_motion::<V>(&mut rng, 3.0);
            let out = slide(&shape, motion, &config, &world);
            let len = motion.dot(motion).sqrt();
            assert!(out.displacement.dot(out.displacement).sqrt() <= len * (1.0 + 1e-5));
            if !out.hits.is_empty() {
                blocked += 1;
            }
            shape = shape.translated(out.displacement);
            assert_outside_all(&shape, &world, "random scene");
        }
    }
    assert!(blocked > 100, "too few blocked moves to judge: {blocked}");
}

/// A cast by brute force, for [`move_and_slide`] to run on: the first time of overlap by
/// sampling and bisection in `f64`, taken a hair early; the normal from the contact there.
fn brute_force_cast<V: Vector>(
    world: &World<V>,
    shape: &Shape<V>,
    motion: V,
) -> Option<CastHit<V, usize>> {
    let mut best: Option<(f64, usize)> = None;
    for (target, id) in world {
        let t = oracle_first_in(
            to_o(shape, 0.0),
            f64v(motion),
            to_o(target, 0.0),
            V::DIM,
            1000,
        );
        if let Some(t) = t
            && best.is_none_or(|(b, _)| t < b)
        {
            best = Some((t, *id));
        }
    }
    let (t, id) = best?;
    let time = ((t - 1e-7).max(0.0)) as f32;
    let target = world[id].0;
    let at = shape.translated(motion * time);
    // Just short of touching there is no contact yet: take it a hair later.
    let contact = at.contact(&target).or_else(|| {
        shape
            .translated(motion * (t + 1e-6) as f32)
            .contact(&target)
    })?;
    Some(CastHit {
        t: time,
        normal: -contact.normal,
        point: contact.point,
        id,
    })
}

/// The same property as [`random_scenes`] with the brute-force cast: the slide does not
/// rely on the crate's casts to stay outside.
fn random_scenes_brute_force<V: Vector>(seed: u64) {
    let mut rng = Rng::new(seed);
    let mut blocked = 0;
    for _ in 0..60 {
        let Some((world, mut shape)) = random_start::<V>(&mut rng, 3.0, 1e-3) else {
            continue;
        };
        let config = SlideConfig::new(vec::<V>([0.0, 1.0, 0.0]));
        for _ in 0..5 {
            let motion = random_motion::<V>(&mut rng, 3.0);
            let out = move_and_slide(&shape, motion, &config, |s, m| {
                brute_force_cast(&world, s, m)
            });
            if !out.hits.is_empty() {
                blocked += 1;
            }
            shape = shape.translated(out.displacement);
            assert_outside_all(&shape, &world, "random scene, brute-force cast");
        }
    }
    assert!(blocked > 20, "too few blocked moves to judge: {blocked}");
}

crate::kit::tests_2d_3d!(
    random_scenes_brute_force:
    random_scenes_with_a_brute_force_cast_2d(31),
    random_scenes_with_a_brute_force_cast_3d(32)
);

crate::kit::tests_2d_3d!(
    random_scenes:
    random_scenes_never_end_inside_2d(21),
    random_scenes_never_end_inside_3d(22)
);

/// Ground: a floor is, a wall is not, a ball resting on a big ball is ground where the
/// slope there is within `max_slope`; in the air nothing is.
fn ground<V: Vector>() {
    let config = SlideConfig::new(vec::<V>([0.0, 1.0, 0.0]));
    let world = floor::<V>();
    let down = vec::<V>([0.0, -0.1, 0.0]);
    let standing = bbox::<V>([2.0, 0.005, 2.0], [3.0, 1.005, 3.0]);
    assert!(slide(&standing, down, &config, &world).on_ground);
    let flying = standing.translated(vec([0.0, 3.0, 0.0]));
    let out = slide(&flying, down, &config, &world);
    assert!(!out.on_ground && out.hits.is_empty());
    assert_eq!(out.displacement, down);
    // Walking into a wall, no gravity: not ground.
    let wall: World<V> = vec![(bbox([5.0, 0.0, 0.0], [6.0, 5.0, 5.0]), 0)];
    let beside = bbox::<V>([3.0, 1.0, 1.0], [4.99, 2.0, 2.0]);
    let out = slide(&beside, vec([0.5, 0.0, 0.0]), &config, &wall);
    assert!(!out.on_ground && out.hits.len() == 1);
    // A ball on a big ball, at an angle from its top.
    let hill: World<V> = vec![(ball([0.0; 3], 5.0), 0)];
    for (deg, is_ground) in [(0.0f32, true), (20.0, true), (40.0, true), (55.0, false)] {
        let a = deg.to_radians();
        let at = vec::<V>([a.sin(), a.cos(), 0.0]) * 6.02;
        let small = Shape::Ball(Ball::new(at, 1.0));
        let out = slide(&small, down, &config, &hill);
        assert_eq!(out.on_ground, is_ground, "at {deg} degrees: {out:?}");
    }
    // Bad input: no move, no panic.
    let out = slide(&standing, vec([f32::NAN; 3]), &config, &world);
    assert_eq!(out.displacement, V::ZERO);
}

#[test]
fn ground_detection_2d_3d() {
    ground::<Vec2>();
    ground::<Vec3>();
}

/// Motions far beyond the range where a squared length overflows `f32` (about 1.8e19):
/// in free space the whole motion is done; towards a wall 10 units away the shape stops
/// a skin short of it, whatever the motion's length.
fn huge_motions<V: Vector>() {
    let shape = bbox::<V>([-0.5, -0.5, -0.5], [0.5, 0.5, 0.5]);
    let config = SlideConfig::new(vec::<V>([0.0, 1.0, 0.0]));
    let nothing: World<V> = Vec::new();
    let wall: World<V> = vec![(bbox::<V>([10.5, -5.0, -5.0], [11.5, 5.0, 5.0]), 0)];
    for len in [1e3f32, 1e19, 1e25, 1e30, 1e37] {
        let motion = vec::<V>([len, 0.0, 0.0]);
        let out = slide(&shape, motion, &config, &nothing);
        assert_eq!(out.displacement, motion, "free motion of {len}");
        let out = slide(&shape, motion, &config, &wall);
        let x = out.displacement.axis(0);
        assert!(
            (x - (10.0 - config.skin)).abs() <= 1e-3,
            "motion of {len} against the wall stopped at {x}"
        );
        assert_eq!(out.hits.len(), 1, "one hit for a motion of {len}");
    }
}

crate::kit::tests_2d_3d!(huge_motions: huge_motions_2d, huge_motions_3d);
