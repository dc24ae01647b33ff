//! A character whose shape is a capsule (`Shape::Rounded`), in 2D and 3D, moved by
//! `move_character` over worlds of boxes: seams between floor tiles, ledges lower than
//! its radius, steps, one-way platforms and ceilings. The oracles are the scenes'
//! geometric facts (how far it must get, the height it must stand at) and its
//! penetration of each box, measured in `f64` from the shapes' definitions (by
//! `walker`'s walker, after every move).

use bevy_aabb_tree::Vector;
use bevy_aabb_tree::geometry::{CharacterConfig, RoundedBox, Shape, one_way_blocks, one_way_push};
use glam::{Vec2, Vec3};

use super::oracle::{box_shape as bbox, vec};
use super::walker::{DT, Walker, World, up};

/// A capsule standing along y, radius 0.3, segment half length 0.4 (1.4 tall), its
/// bottom `gap` above `y`.
fn capsule<V: Vector>(x: f32, y: f32, gap: f32) -> Shape<V> {
    Shape::Rounded(RoundedBox::capsule(
        vec([x, y + gap + 0.7, 0.0]),
        1,
        0.4,
        0.3,
    ))
}

crate::kit::both_dims!(
    walks_over_tile_seams,
    slides_over_low_ledges_without_a_step,
    no_step_above_the_maximum,
    one_way_platform_and_ceiling,
    one_way_rule_counts_the_radius,
);

/// A rounded character: a capsule (radius 0.35, 0.9 tall) or a ball (radius 0.35).
#[derive(Clone, Copy, Debug)]
enum Body {
    Capsule,
    Ball,
}

const R: f32 = 0.35;

impl Body {
    /// The body standing a skin above `y`, its center at `x`.
    fn at<V: Vector>(self, x: f32, y: f32) -> Shape<V> {
        match self {
            Body::Capsule => Shape::Rounded(RoundedBox::capsule(
                vec([x, y + 0.01 + 0.45, 0.0]),
                1,
                0.1,
                R,
            )),
            Body::Ball => Shape::Ball(bevy_aabb_tree::Ball::new(vec([x, y + 0.01 + R, 0.0]), R)),
        }
    }
}

macro_rules! rounded_bodies {
    ($($name:ident),* $(,)?) => {
        mod d2 { $( mod $name {
            #[test] fn capsule() { super::super::$name::<glam::Vec2>(super::super::Body::Capsule); }
            #[test] fn ball() { super::super::$name::<glam::Vec2>(super::super::Body::Ball); }
        } )* }
        mod d3 { $( mod $name {
            #[test] fn capsule() { super::super::$name::<glam::Vec3>(super::super::Body::Capsule); }
            #[test] fn ball() { super::super::$name::<glam::Vec3>(super::super::Body::Ball); }
        } )* }
    };
}

mod rounded {
    use super::*;
    rounded_bodies!(
        climbs_steps_up_to_the_maximum,
        climbs_stairs,
        refuses_a_slope_past_the_limit,
        stands_on_an_edge_only_within_the_step_height,
    );
}

/// Steps from 0.5 to 1.5 × the maximum step height (all higher than a rounded bottom
/// slides over, `R (1 - cos 45°)`): climbed, to stand on top, exactly when no higher
/// than the maximum; the step taken is the step's height. A higher one stops the body on
/// the floor, grounded.
fn climbs_steps_up_to_the_maximum<V: Vector>(body: Body) {
    let max = CharacterConfig::<V>::new(up()).max_step_height;
    for ratio in [0.5f32, 0.8, 0.9, 1.0, 1.05, 1.2, 1.5] {
        let h = ratio * max;
        let mut world = World::with_one_way(vec![
            (bbox([-20.0, -1.0, -3.0], [20.0, 0.0, 3.0]), None),
            (bbox([1.0, -1.0, -3.0], [20.0, h, 3.0]), None),
        ]);
        let mut walker = Walker::new(body.at::<V>(0.0, 0.0));
        for _ in 0..10 {
            walker.tick(&mut world, V::ZERO, None);
        }
        assert!(
            walker.grounded,
            "{body:?} {ratio}: not grounded on the floor"
        );
        let mut stepped = 0.0f32;
        for tick in 0..90 {
            stepped = stepped.max(walker.tick(&mut world, vec([3.0, 0.0, 0.0]), None).step);
            assert!(
                walker.grounded,
                "{body:?} {ratio} tick {tick}: airborne at x {}",
                walker.x()
            );
        }
        walker.assert_step_outcome(
            &format!("{body:?} {ratio}"),
            ratio <= 1.0,
            h,
            stepped,
            1e-3,
            1.0,
        );
    }
}

/// A flight of eight steps, each 0.2 high and 0.5 deep (below the maximum, above what a
/// rounded bottom slides over), walked up at two speeds: the body reaches the landing
/// at the top, standing on it, grounded at every tick, never higher than the step it is
/// over allows.
fn climbs_stairs<V: Vector>(body: Body) {
    let (rise, run, count) = (0.2f32, 0.5f32, 8);
    let landing = rise * count as f32;
    for speed in [2.0f32, 5.0] {
        let mut targets = vec![(bbox([-20.0, -1.0, -3.0], [40.0, 0.0, 3.0]), None)];
        for i in 0..count {
            let x = 1.0 + run * i as f32;
            targets.push((
                bbox([x, -1.0, -3.0], [40.0, rise * (i + 1) as f32, 3.0]),
                None,
            ));
        }
        let mut world = World::with_one_way(targets);
        let mut walker = Walker::new(body.at::<V>(0.0, 0.0));
        for _ in 0..10 {
            walker.tick(&mut world, V::ZERO, None);
        }
        for tick in 0..(12.0 / speed / DT) as usize {
            walker.tick(&mut world, vec([speed, 0.0, 0.0]), None);
            assert!(
                walker.grounded,
                "{body:?} speed {speed} tick {tick}: airborne at x {} bottom {}",
                walker.x(),
                walker.bottom()
            );
        }
        assert!(
            walker.x() > 1.0 + run * count as f32,
            "{body:?} speed {speed}: stopped at x {}",
            walker.x()
        );
        let above = walker.bottom() - landing;
        assert!(
            (0.0..0.02).contains(&above),
            "{body:?} speed {speed}: {above} above the landing"
        );
    }
}

/// A slope 5° steeper than the limit (the side of a large ball, as in the box tests):
/// walked into for three seconds, the body never gets more than a skin or two above the
/// floor, and ends on the floor, grounded.
fn refuses_a_slope_past_the_limit<V: Vector>(body: Body) {
    let a = 50.0f32.to_radians();
    let radius = 500.0f32;
    let terrain: Shape<V> = Shape::Ball(bevy_aabb_tree::Ball::new(
        vec([0.0, -radius * a.cos(), 0.0]),
        radius,
    ));
    let foot = radius * a.sin();
    let mut world = World::with_one_way(vec![
        (bbox([-1000.0, -1.0, -3.0], [1000.0, 0.0, 3.0]), None),
        (terrain, None),
    ]);
    let mut walker = Walker::new(body.at::<V>(foot + 1.0, 0.0));
    for _ in 0..10 {
        walker.tick(&mut world, V::ZERO, None);
    }
    let mut highest = 0.0f32;
    for _ in 0..180 {
        walker.tick(&mut world, vec([-3.0, 0.0, 0.0]), None);
        highest = highest.max(walker.bottom());
    }
    assert!(highest < 0.03, "{body:?}: climbed to {highest}");
    assert!(
        walker.x() > foot,
        "{body:?}: passed the slope's foot to x {}",
        walker.x()
    );
    assert!(
        walker.grounded,
        "{body:?}: not grounded at the slope's foot"
    );
}

/// A floor of touching unit tiles: walking at 6 units/s for 3 s, the capsule covers the
/// whole distance (never held at a seam), stays grounded and on the floor, and never
/// steps (there is nothing to step onto).
fn walks_over_tile_seams<V: Vector>() {
    for speed in [2.0f32, 6.0, 11.0] {
        let tiles = (-2..40).map(|i| {
            let x = i as f32;
            bbox([x, -1.0, -3.0], [x + 1.0, 0.0, 3.0])
        });
        let mut world = World::<V>::new(tiles);
        let mut walker = Walker::new(capsule::<V>(0.5, 0.0, 0.01));
        for _ in 0..10 {
            walker.tick(&mut world, V::ZERO, None);
        }
        assert!(walker.grounded, "speed {speed}: not grounded");
        let start = walker.x();
        for tick in 0..180 {
            let before = walker.x();
            let step = walker.tick(&mut world, vec([speed, 0.0, 0.0]), None).step;
            let moved = walker.x() - before;
            assert!(
                (moved - speed * DT).abs() < 1e-3,
                "speed {speed} tick {tick}: moved {moved} at x {before}"
            );
            assert_eq!(
                step, 0.0,
                "speed {speed} tick {tick}: stepped at x {before}"
            );
            assert!(
                walker.grounded,
                "speed {speed} tick {tick}: airborne at x {before}"
            );
            assert!(
                (0.0..0.02).contains(&walker.bottom()),
                "speed {speed} tick {tick}: bottom {}",
                walker.bottom()
            );
        }
        assert!((walker.x() - start - 3.0 * speed).abs() < 0.05);
    }
}

/// With steps turned off, a ledge lower than the radius but for the slope limit
/// (height up to `r (1 - cos 45°)`) is climbed by the rounded bottom sliding over its
/// edge; a higher one stops it. A box would stop at both.
fn slides_over_low_ledges_without_a_step<V: Vector>() {
    let r = 0.3f32;
    let limit = r * (1.0 - core::f32::consts::FRAC_1_SQRT_2);
    for (h, climbs) in [(0.3 * limit, true), (0.8 * limit, true), (0.5 * r, false)] {
        let mut world = World::with_one_way(vec![
            (bbox([-20.0, -1.0, -3.0], [20.0, 0.0, 3.0]), None),
            (bbox([1.0, -1.0, -3.0], [20.0, h, 3.0]), None),
        ]);
        let mut walker = Walker::new(capsule::<V>(0.0, 0.0, 0.01));
        walker.config.max_step_height = 0.0;
        for _ in 0..10 {
            walker.tick(&mut world, V::ZERO, None);
        }
        for _ in 0..120 {
            walker.tick(&mut world, vec([3.0, 0.0, 0.0]), None);
        }
        if climbs {
            assert!(walker.x() > 4.0, "ledge {h}: stopped at x {}", walker.x());
            let above = walker.bottom() - h;
            assert!((0.0..0.02).contains(&above), "ledge {h}: {above} above it");
            assert!(walker.grounded, "ledge {h}: not grounded on it");
        } else {
            assert!(walker.x() < 1.0, "ledge {h}: climbed to x {}", walker.x());
        }
    }
}

/// Stairs above the maximum step height (but below the capsule's radius-and-a-half):
/// never climbed, and the capsule stays on the floor, grounded.
fn no_step_above_the_maximum<V: Vector>() {
    let max = CharacterConfig::<V>::new(up()).max_step_height;
    for ratio in [1.1f32, 1.5] {
        let h = ratio * max;
        let mut world = World::with_one_way(vec![
            (bbox([-20.0, -1.0, -3.0], [20.0, 0.0, 3.0]), None),
            (bbox([1.0, -1.0, -3.0], [20.0, h, 3.0]), None),
        ]);
        let mut walker = Walker::new(capsule::<V>(0.0, 0.0, 0.01));
        for _ in 0..10 {
            walker.tick(&mut world, V::ZERO, None);
        }
        for _ in 0..90 {
            walker.tick(&mut world, vec([3.0, 0.0, 0.0]), None);
        }
        assert!(
            walker.x() < 1.0,
            "ratio {ratio}: climbed to x {}",
            walker.x()
        );
        assert!(
            walker.bottom() < 0.02,
            "ratio {ratio}: bottom {}",
            walker.bottom()
        );
        assert!(walker.grounded, "ratio {ratio}: not grounded");
    }
}

/// A one-way platform above: the capsule jumps up through it and lands on it; a solid
/// ceiling above that stops the next jump, its top never passing the ceiling.
fn one_way_platform_and_ceiling<V: Vector>() {
    let mut world = World::with_one_way(vec![
        (bbox([-20.0, -1.0, -3.0], [20.0, 0.0, 3.0]), None),
        (bbox([-2.0, 2.0, -3.0], [2.0, 2.2, 3.0]), Some(up::<V>())),
        (bbox([-20.0, 4.0, -3.0], [20.0, 5.0, 3.0]), None),
    ]);
    let mut walker = Walker::new(capsule::<V>(0.0, 0.0, 0.01));
    for _ in 0..10 {
        walker.tick(&mut world, V::ZERO, None);
    }
    walker.tick(&mut world, V::ZERO, Some(11.0));
    let mut highest = 0.0f32;
    for _ in 0..120 {
        walker.tick(&mut world, V::ZERO, None);
        highest = highest.max(walker.top());
    }
    assert!(walker.grounded, "not grounded after the jump");
    let above = walker.bottom() - 2.2;
    assert!(
        (0.0..0.02).contains(&above),
        "on the platform: {above} above it"
    );
    assert!(
        highest <= 4.0 + 1e-4,
        "top reached {highest}, the ceiling is at 4"
    );
    // Jump again: the ceiling at 4 stops it (1.4 tall from 2.2 leaves 0.4 to rise).
    walker.tick(&mut world, V::ZERO, Some(11.0));
    for _ in 0..120 {
        walker.tick(&mut world, V::ZERO, None);
        assert!(
            walker.top() <= 4.0 + 1e-4,
            "top {} in the ceiling",
            walker.top()
        );
    }
    assert!(walker.grounded && (walker.bottom() - 2.2).abs() < 0.02);
    let _ = (Vec2::ZERO, Vec3::ZERO);
}

/// Dropped onto the edge of a ledge (top at 2) with its center off the edge, so that its
/// rounded bottom meets the edge `c` above its lowest point (`c = R (1 - cos θ)`, θ the
/// normal's angle from up, steeper than the slope limit in every case): within the
/// maximum step height it stands on the edge, grounded and still; beyond it, it slides
/// off the edge down to the floor.
fn stands_on_an_edge_only_within_the_step_height<V: Vector>(body: Body) {
    let max = CharacterConfig::<V>::new(up()).max_step_height;
    for c in [0.15f32, 0.22, 0.28, 0.33] {
        let theta = (1.0 - c / R).acos();
        assert!(theta > 45f32.to_radians());
        let x = 1.0 - R * theta.sin();
        let mut world = World::with_one_way(vec![
            (bbox([-20.0, -1.0, -3.0], [20.0, 0.0, 3.0]), None),
            (bbox([1.0, -1.0, -3.0], [20.0, 2.0, 3.0]), None),
        ]);
        let mut walker = Walker::new(body.at::<V>(x, 2.0 - c + 0.3));
        for _ in 0..90 {
            walker.tick(&mut world, V::ZERO, None);
        }
        if c <= max {
            let above = walker.bottom() - (2.0 - c);
            assert!(
                (0.0..0.02).contains(&above),
                "{body:?} {c}: bottom {} ",
                walker.bottom()
            );
            assert!(
                (walker.x() - x).abs() < 1e-3,
                "{body:?} {c}: moved to x {}",
                walker.x()
            );
            assert!(walker.grounded, "{body:?} {c}: not grounded on the edge");
        } else {
            assert!(
                walker.bottom() < 0.02,
                "{body:?} {c}: held at {}",
                walker.bottom()
            );
            assert!(walker.grounded, "{body:?} {c}: not grounded on the floor");
        }
    }
}

/// The one-way rule measures a capsule from its lowest point, its radius below the end of
/// its segment: with [`capsule`]'s (segment half length 0.4, radius 0.3, so it reaches
/// 0.7 down from its center) it may sink `0.05 × 0.7 = 0.035` into a platform whose top is
/// at 2.2 and still stand on it. Sunk 0.03: a motion down is blocked and the push lifts it
/// by 0.03. Sunk 0.2 (its segment's end still 0.1 above the top): it is partly inside, so
/// it passes and is not pushed. A handful of heights between, each against the rule
/// computed by hand from the capsule's lowest point.
fn one_way_rule_counts_the_radius<V: Vector>() {
    let platform = bbox::<V>([-2.0, 2.0, -3.0], [2.0, 2.2, 3.0]);
    let down = vec::<V>([0.0, -0.1, 0.0]);
    let (top, reach) = (2.2f32, 0.7f32);
    let tolerance = 0.05 * reach;
    for sunk in [-0.01f32, 0.0, 0.01, 0.03, 0.04, 0.1, 0.2, 0.29, 0.35] {
        // `capsule(x, y, gap)` has its bottom `gap` above `y`.
        let shape = capsule::<V>(0.0, top, -sunk);
        let bottom = shape.center().dot(up()) - reach;
        assert!(
            (bottom - (top - sunk)).abs() < 1e-5,
            "{sunk}: bottom {bottom}"
        );
        // Away from the threshold by more than rounding.
        assert!((sunk - tolerance).abs() > 1e-3);
        let on_top = sunk <= tolerance;
        assert_eq!(
            one_way_blocks(&shape, down, &platform, up()),
            on_top,
            "sunk {sunk}: blocked"
        );
        // Moving up or across, it is never blocked.
        assert!(!one_way_blocks(&shape, -down, &platform, up()), "{sunk}");
        let push = one_way_push(&shape, &platform, up());
        let expected = if sunk > 0.0 && on_top { sunk } else { 0.0 };
        let off = push - up::<V>() * expected;
        assert!(
            off.dot(off) < 1e-8,
            "sunk {sunk}: pushed by {push:?}, expected {expected} up"
        );
    }
}
