//! The character's motion (`move_character`) and the one-way rule, in 2D and 3D, over a
//! world of a few shapes, against hand-computed outcomes.
//!
//! The world and the walker are `walker`'s. The oracles are geometric facts of each
//! scene: the height of the step the character stands on, the floor it must not leave,
//! the top of the platform it must not pass from above. Penetration is measured
//! independently, from the boxes' and balls' definitions in `f64`.

use bevy_aabb_tree::geometry::{CharacterConfig, Shape, move_character};
use bevy_aabb_tree::{BoundingBox, Vector};
use glam::{Vec2, Vec3};

use super::oracle::{ball_shape as ball, box_shape as bbox, vec};
use super::walker::{DT, GRAVITY, Walker, World, penetration, up};

/// A character box of half extents 0.3 × 0.5 (× 0.3) standing a skin above `y`.
fn standing_box<V: Vector>(x: f32, y: f32) -> Shape<V> {
    let bottom = y + 0.01;
    bbox([x - 0.3, bottom, -0.3], [x + 0.3, bottom + 1.0, 0.3])
}

fn floor<V: Vector>() -> Shape<V> {
    bbox([-1000.0, -1.0, -50.0], [1000.0, 0.0, 50.0])
}

crate::kit::both_dims!(
    steps_up_to_the_maximum,
    no_step_into_a_ceiling,
    snaps_down_steps_within_reach,
    slopes_within_the_maximum,
    one_way_from_below_above_and_the_side,
    recovers_from_overlaps,
    never_stands_on_characters,
    grounded_only_within_two_skins,
    crushed_when_squeezed,
);

/// Stairs of 0.1 – 1.5 × the maximum step height: the step is taken exactly when it is
/// no higher than the maximum.
fn steps_up_to_the_maximum<V: Vector>() {
    let max = CharacterConfig::<V>::new(up()).max_step_height;
    for ratio in [
        0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0, 1.01, 1.02, 1.1, 1.25, 1.5,
    ] {
        let h = ratio * max;
        let mut world = World::new([floor(), bbox([1.0, -1.0, -50.0], [50.0, h, 50.0])]);
        let mut walker = Walker::new(standing_box::<V>(0.0, 0.0));
        for _ in 0..5 {
            walker.tick(&mut world, V::ZERO, None);
        }
        assert!(walker.grounded, "ratio {ratio}: not grounded on the floor");
        let mut stepped = 0.0_f32;
        for _ in 0..90 {
            let m = walker.tick(&mut world, vec([3.0, 0.0, 0.0]), None);
            stepped = stepped.max(m.step);
        }
        walker.assert_step_outcome(
            &format!("ratio {ratio}"),
            ratio <= 1.0,
            h,
            stepped,
            1e-4,
            0.71,
        );
        assert!(walker.grounded, "ratio {ratio}: not grounded at the end");
    }
}

/// A step low enough to climb, under a ceiling too low to rise beneath: no step, and
/// never into the ceiling.
fn no_step_into_a_ceiling<V: Vector>() {
    let h = 0.5 * CharacterConfig::<V>::new(up()).max_step_height;
    let top = 1.01 + 0.03;
    let mut world = World::new([
        floor(),
        bbox([1.0, -1.0, -50.0], [50.0, h, 50.0]),
        bbox([-50.0, top, -50.0], [50.0, top + 1.0, 50.0]),
    ]);
    let mut walker = Walker::new(standing_box::<V>(0.0, 0.0));
    for _ in 0..60 {
        walker.tick(&mut world, vec([3.0, 0.0, 0.0]), None);
    }
    assert!(
        walker.x() < 0.71,
        "passed under the ceiling: x {}",
        walker.x()
    );
    // A jump into the ceiling stops at it.
    let m = walker.tick(&mut world, V::ZERO, Some(10.0));
    assert!(walker.shape.bounding_box().max.axis(1) <= top + 1e-4);
    assert!(m.hits.iter().any(|h| h.id == 2), "the ceiling was not hit");
    assert!(
        walker.velocity.dot(up()) <= 0.0,
        "the rise went on after the ceiling"
    );
}

/// Walking down stairs: steps within the snap distance keep the character on the ground
/// at every tick; a deeper one lets it fall.
fn snaps_down_steps_within_reach<V: Vector>() {
    let snap = CharacterConfig::<V>::new(up()).snap_distance;
    for (depth, keeps) in [(0.8 * snap, true), (1.6 * snap, false)] {
        let mut world = World::new((0..6).map(|i| {
            let x = i as f32;
            let y = -(i as f32) * depth;
            bbox([x, y - 1.0, -50.0], [x + 1.0, y, 50.0])
        }));
        let mut walker = Walker::new(standing_box::<V>(0.4, 0.0));
        for _ in 0..5 {
            walker.tick(&mut world, V::ZERO, None);
        }
        let mut always = true;
        for _ in 0..60 {
            walker.tick(&mut world, vec([3.0, 0.0, 0.0]), None);
            always &= walker.grounded;
        }
        assert_eq!(always, keeps, "steps {depth} deep");
        assert!(walker.x() > 3.0);
    }
}

/// A ball character on a large ball (its slope changes by under a degree over the
/// heights reached): walks up a slope 2° under the maximum, holds on it; cannot walk up
/// one 2° over it, slides down it, and jumping into it from the floor gets it no higher
/// than the jump.
fn slopes_within_the_maximum<V: Vector>() {
    let max = 45.0_f32;
    let (radius, r) = (500.0_f32, 0.5_f32);
    for (angle, walkable) in [(max - 2.0, true), (max + 2.0, false)] {
        let a = angle.to_radians();
        // The terrain ball meets the floor (y = 0) where its slope is `angle`.
        let center_y = -radius * a.cos();
        let foot = radius * a.sin();
        let terrain = ball::<V>([0.0, center_y, 0.0], radius);
        let mut world = World::new([floor(), terrain]);
        let start = foot + r + 0.2;
        let mut walker = Walker::new(ball::<V>([start, r + 0.01, 0.0], r));
        let mut highest = 0.0_f32;
        let mut jumps = 0;
        for i in 0..600 {
            let jump = (!walkable && walker.grounded && i % 40 == 0).then_some(5.0);
            jumps += usize::from(jump.is_some());
            walker.tick(&mut world, vec([-3.0, 0.0, 0.0]), jump);
            highest = highest.max(walker.bottom());
        }
        if walkable {
            assert!(highest > 3.0, "{angle}°: did not climb (highest {highest})");
            // Standing still on the slope holds.
            let mut on_slope = Walker::new(ball::<V>([0.0, 0.0, 0.0], r));
            let n = vec::<V>([a.sin(), a.cos(), 0.0]);
            on_slope.shape = ball(
                (vec::<V>([0.0, center_y, 0.0]) + n * (radius + r + 0.005))
                    .extend_to_3d()
                    .to_array(),
                r,
            );
            on_slope.grounded = true;
            let before = on_slope.shape.center();
            let mut bare = World::new([terrain]);
            for _ in 0..120 {
                on_slope.tick(&mut bare, V::ZERO, None);
            }
            let drift = (on_slope.shape.center() - before)
                .dot(on_slope.shape.center() - before)
                .sqrt();
            assert!(drift < 0.02, "{angle}°: drifted {drift} standing still");
            assert!(
                on_slope.grounded,
                "{angle}°: not grounded on a walkable slope"
            );
        } else {
            assert!(jumps >= 5, "{angle}°: only {jumps} jumps");
            let apex = 5.0_f32 * 5.0 / (2.0 * GRAVITY);
            assert!(
                highest < apex + 0.1,
                "{angle}°: reached {highest}, a jump reaches {apex}"
            );
            // Left alone, it comes back down to the floor.
            for _ in 0..120 {
                walker.tick(&mut world, V::ZERO, None);
            }
            assert!(
                walker.bottom() < 0.05,
                "{angle}°: ends at {}",
                walker.bottom()
            );
            // Put on the slope, it slides down.
            let n = vec::<V>([a.sin(), a.cos(), 0.0]);
            let mut on_slope = Walker::new(ball::<V>(
                (vec::<V>([0.0, center_y, 0.0]) + n * (radius + r + 0.005))
                    .extend_to_3d()
                    .to_array(),
                r,
            ));
            on_slope.grounded = true;
            let before = on_slope.bottom();
            let mut bare = World::new([terrain]);
            for _ in 0..60 {
                on_slope.tick(&mut bare, V::ZERO, None);
                assert!(!on_slope.grounded, "{angle}°: grounded on the slope");
            }
            assert!(
                on_slope.bottom() < before - 0.2,
                "{angle}°: held on a steep slope"
            );
        }
    }
}

/// A one-way platform 0.2 thick: passed from below and from the side without being
/// held, landed on from above at up to three thicknesses a tick, and stood on.
fn one_way_from_below_above_and_the_side<V: Vector>() {
    let (bottom, top) = (1.8_f32, 2.0_f32);
    let thickness = top - bottom;
    let platform = bbox::<V>([-2.0, bottom, -2.0], [2.0, top, 2.0]);
    for per_tick in [0.5, 1.0, 3.0] {
        let speed = per_tick * thickness / DT;
        // From below: up through it (no gravity while rising), then lands on it.
        let mut world = World::new([floor()]);
        let id = world.push(platform, Some(up()), false);
        let mut walker = Walker::new(standing_box::<V>(0.0, 0.0));
        walker.config.snap_distance = 0.0;
        while walker.bottom() < top + 0.5 {
            let before = walker.bottom();
            walker.velocity = vec([0.0, speed, 0.0]);
            let m = walker.shove(&mut world, walker.velocity * DT);
            assert!(
                m.hits.iter().all(|h| h.id != id),
                "{per_tick}/tick: held from below"
            );
            assert!(
                walker.bottom() > before,
                "{per_tick}/tick: stopped rising at {before}"
            );
        }
        walker.velocity = V::ZERO;
        walker.grounded = false;
        for _ in 0..120 {
            walker.tick(&mut world, V::ZERO, None);
        }
        let gap = walker.bottom() - top;
        assert!(
            (0.0..0.021).contains(&gap),
            "{per_tick}/tick: {gap} above the top"
        );
        assert!(walker.grounded);

        // From above at a constant speed: stopped on top, never below it.
        let mut walker = Walker::new(standing_box::<V>(0.5, 6.0));
        for _ in 0..40 {
            walker.shove(&mut world, vec::<V>([0.0, -speed, 0.0]) * DT);
            assert!(
                walker.bottom() >= top - 1e-4,
                "{per_tick}/tick: fell through to {}",
                walker.bottom()
            );
        }
        assert!(walker.bottom() - top < 0.021);

        // From the side, the body across the platform's thickness, falling slowly: not
        // held by its side or its top.
        let mut walker = Walker::new(standing_box::<V>(-3.0, 1.5));
        let start = walker.x();
        for _ in 0..20 {
            let m = walker.shove(&mut world, vec::<V>([speed, -0.5, 0.0]) * DT);
            assert!(
                m.hits.iter().all(|h| h.id != id),
                "{per_tick}/tick: held from the side"
            );
        }
        assert!((walker.x() - (start + 20.0 * speed * DT)).abs() < 1e-3);
    }
    // Halfway through from below and falling back: passes down, never pushed up.
    let mut world = World::new([floor()]);
    world.push(platform, Some(up()), false);
    let mut walker = Walker::new(standing_box::<V>(0.0, 1.9 - 0.01));
    for _ in 0..120 {
        walker.tick(&mut world, V::ZERO, None);
    }
    assert!(
        walker.bottom() < 0.05,
        "held halfway: bottom {}",
        walker.bottom()
    );
}

/// A character that starts inside colliders is moved out the least way, within the move.
fn recovers_from_overlaps<V: Vector>() {
    let config = CharacterConfig::<V>::new(up());
    let cases: [(Shape<V>, [f32; 3]); 3] = [
        // Sunk 0.3 into the floor: up by 0.3.
        (bbox([-0.3, -0.3, -0.3], [0.3, 0.7, 0.3]), [0.0, 0.3, 0.0]),
        // 0.2 into a wall on its right: left by 0.2.
        (
            bbox([1.0 - 0.4, 1.0, -0.3], [1.2, 2.0, 0.3]),
            [-0.0, 0.0, 0.0],
        ),
        // A ball sunk 0.25 into the floor: up by 0.25.
        (ball([3.0, 0.25, 0.0], 0.5), [0.0, 0.25, 0.0]),
    ];
    let wall = bbox::<V>([1.0, 0.0, -50.0], [2.0, 5.0, 50.0]);
    for (i, (shape, expected)) in cases.into_iter().enumerate() {
        let mut world = World::new([floor(), wall]);
        let m = move_character(&shape, V::ZERO, false, &config, &mut world);
        assert!(!m.crushed, "case {i}");
        let expected: V = if i == 1 {
            vec([-0.2, 0.0, 0.0])
        } else {
            vec(expected)
        };
        let err = m.displacement - expected;
        assert!(
            err.dot(err).sqrt() < 1e-4,
            "case {i}: moved {:?}, expected {:?}",
            m.displacement,
            expected
        );
        let moved = shape.translated(m.displacement);
        for t in &world.targets {
            assert!(
                penetration(&moved, &t.shape) < 1e-4,
                "case {i}: still inside"
            );
        }
    }
}

/// A block low enough to step onto is climbed, unless it is a character.
fn never_stands_on_characters<V: Vector>() {
    let h = 0.8 * CharacterConfig::<V>::new(up()).max_step_height;
    for character in [false, true] {
        let mut world = World::new([floor()]);
        world.push(bbox([1.0, 0.0, -0.5], [2.0, h, 0.5]), None, character);
        let mut walker = Walker::new(standing_box::<V>(0.0, 0.0));
        for _ in 0..5 {
            walker.tick(&mut world, V::ZERO, None);
        }
        let mut highest = 0.0_f32;
        for _ in 0..30 {
            walker.tick(&mut world, vec([3.0, 0.0, 0.0]), None);
            highest = highest.max(walker.bottom());
        }
        if character {
            assert!(highest < 0.02, "climbed onto a character: bottom {highest}");
            assert!(walker.x() < 0.71);
        } else {
            assert!(highest > h, "did not step onto the block");
        }
    }
}

#[test]
fn invalid_input_does_not_move() {
    let mut world = World::<Vec2>::new([floor()]);
    let config = CharacterConfig::new(Vec2::Y);
    let shape = standing_box::<Vec2>(0.0, 0.0);
    for motion in [Vec2::new(f32::NAN, 0.0), Vec2::new(0.0, f32::INFINITY)] {
        let m = move_character(&shape, motion, true, &config, &mut world);
        assert_eq!(m.displacement, Vec2::ZERO);
    }
    let bad = Shape::Box(BoundingBox::from_min_max(Vec2::ONE, Vec2::ZERO));
    assert_eq!(
        move_character(&bad, Vec2::X, true, &config, &mut world).displacement,
        Vec2::ZERO
    );
    let _ = Vec3::ZERO;
}

/// The gap between two shapes, from their definitions in `f64` (0 when they touch or
/// overlap).
fn gap<V: Vector>(a: &Shape<V>, b: &Shape<V>) -> f64 {
    let coords = |v: V| (0..V::DIM).map(move |i| f64::from(v.axis(i)));
    // The distance from a point to a box, per axis the part outside it.
    let to_box = |p: Vec<f64>, x: &BoundingBox<V>| -> f64 {
        coords(x.min)
            .zip(coords(x.max))
            .zip(p)
            .map(|((lo, hi), q)| (q - q.clamp(lo, hi)).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    match (a, b) {
        (Shape::Box(x), Shape::Box(y)) => coords(x.min)
            .zip(coords(x.max))
            .zip(coords(y.min).zip(coords(y.max)))
            .map(|((a0, a1), (b0, b1))| (a0.max(b0) - a1.min(b1)).max(0.0).powi(2))
            .sum::<f64>()
            .sqrt(),
        (Shape::Ball(s), Shape::Box(x)) | (Shape::Box(x), Shape::Ball(s)) => {
            (to_box(coords(s.center).collect(), x) - f64::from(s.radius)).max(0.0)
        }
        (Shape::Ball(s), Shape::Ball(t)) => {
            let d2: f64 = coords(s.center)
                .zip(coords(t.center))
                .map(|(p, q)| (p - q).powi(2))
                .sum();
            (d2.sqrt() - f64::from(s.radius + t.radius)).max(0.0)
        }
        _ => unreachable!("boxes and balls only"),
    }
}

/// Balls and boxes of several sizes walk over a low box on a floor at several speeds
/// (64 ticks a second): whenever a move says grounded, its ground is a walkable surface
/// no farther than twice the skin from the character, as `CharacterMove::grounded`
/// documents.
fn grounded_only_within_two_skins<V: Vector>() {
    let dt = 1.0 / 64.0;
    let config = CharacterConfig::<V>::new(up());
    let limit = 2.0 * f64::from(config.skin) + 1e-5;
    let low_box = bbox::<V>([0.4, 0.0, -0.6], [1.6, 0.125, 0.6]);
    let mut grounded_ticks = 0;
    for speed in [3.0_f32, 6.0, 10.435, 14.0] {
        for size in [0.2_f32, 0.299, 0.35, 0.5] {
            for is_ball in [true, false] {
                let mut world = World::new([floor(), low_box]);
                let mut shape = if is_ball {
                    ball::<V>([-1.0, size + 0.01, 0.0], size)
                } else {
                    bbox::<V>(
                        [-1.0 - size, 0.01, -size],
                        [-1.0 + size, 0.01 + 2.0 * size, size],
                    )
                };
                let (mut velocity, mut grounded) = (V::ZERO, false);
                for tick in 0..120 {
                    let u = up::<V>();
                    let across = if tick >= 30 { speed } else { 0.0 };
                    velocity = vec::<V>([across, 0.0, 0.0]) + u * (velocity.dot(u) - GRAVITY * dt);
                    let m = move_character(&shape, velocity * dt, grounded, &config, &mut world);
                    shape = shape.translated(m.displacement);
                    velocity = m.clip_velocity(velocity);
                    grounded = m.grounded;
                    if !m.grounded {
                        continue;
                    }
                    grounded_ticks += 1;
                    let ground = m.ground.expect("grounded without a ground");
                    let g = gap(&shape, &world.targets[ground.id].shape);
                    assert!(
                        g <= limit,
                        "speed {speed}, size {size}, ball {is_ball}, tick {tick}: grounded on {} with a gap of {g}",
                        ground.id
                    );
                    assert!(ground.normal.dot(u) >= config.max_slope.cos() - 1e-6);
                }
            }
        }
    }
    assert!(
        grounded_ticks > 1000,
        "only {grounded_ticks} grounded ticks"
    );
}

/// A character box 1 high between a floor and a ceiling 0.8 apart, across both: no push
/// gets it out of both, so it is crushed and not moved, whatever its motion. With the
/// ceiling 1.2 up, the same overlap of the floor is resolved (up by the overlap).
fn crushed_when_squeezed<V: Vector>() {
    let config = CharacterConfig::<V>::new(up());
    let character = bbox::<V>([-0.3, -0.1, -0.3], [0.3, 0.9, 0.3]);
    for (ceiling, crushed) in [(0.7_f32, true), (1.2, false)] {
        let mut world = World::new([
            floor(),
            bbox([-5.0, ceiling, -5.0], [5.0, ceiling + 1.0, 5.0]),
        ]);
        for motion in [V::ZERO, vec([2.0, 0.0, 0.0]), vec([0.0, -0.1, 0.0])] {
            let m = move_character(&character, motion, true, &config, &mut world);
            assert_eq!(m.crushed, crushed, "ceiling {ceiling}, motion {motion:?}");
            if crushed {
                assert_eq!(m.displacement, V::ZERO);
                assert!(!m.grounded && m.hits.is_empty());
            } else {
                assert!(
                    (m.recovered.dot(up()) - 0.1).abs() < 1e-5,
                    "{:?}",
                    m.recovered
                );
                let moved = character.translated(m.displacement);
                for t in &world.targets {
                    assert!(penetration(&moved, &t.shape) < 1e-4);
                }
            }
        }
    }
}
