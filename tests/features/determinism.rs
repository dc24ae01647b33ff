//! Determinism whatever the order of spawns, in scenes of their own (the arena of
//! `rollback` is tested in four spawn orders there): the normal of two boxes
//! that overlap from the start, and characters that never meet. Each collider is named
//! by a tag of its own, since its entity id changes with the order.
use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::prelude::*;

use crate::kit::dim::Dim;

/// The name a test gives a collider, which the order of spawns does not change.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
struct Tag(u32);

/// The ticks played so far.
#[derive(Resource, Clone, Copy, Default)]
struct Ticks(u32);

/// The tag of an entity, or `u32::MAX` for one without.
fn tag_of(tags: &Query<&Tag>, e: Entity) -> u32 {
    tags.get(e).map_or(u32::MAX, |t| t.0)
}

/// The bits of a vector's coordinates.
fn bits<V: Dim>(v: V) -> Vec<u32> {
    (0..V::DIM).map(|k| v.axis(k).to_bits()).collect()
}

/// Two overlapping boxes, spawned in either order (so either is the pair's first side):
/// the normal of their start, from the box tagged 0 towards the other, in each order.
/// `b_at` places the second box; the first is 2 × 2 at the origin.
fn start_normal<V: Dim>(b_at: Vec3, b_half: Vec3) -> [Vec<u32>; 2] {
    [false, true].map(|reversed| {
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
            .add_plugins(AabbTreePlugin::<V>::new(Update));
        let boxes = [(0, Vec3::ZERO, Vec3::ONE), (1, b_at, b_half)];
        let mut ids = [Entity::PLACEHOLDER; 2];
        for k in if reversed { [1, 0] } else { [0, 1] } {
            let (tag, at, half) = boxes[k];
            ids[k] = app
                .world_mut()
                .spawn((
                    Tag(tag),
                    Transform::from_translation(at),
                    Aabb::new(V::truncate_from_3d(half)),
                ))
                .id();
        }
        app.update();
        let messages = app.world().resource::<Messages<CollisionStarted<V>>>();
        let started: Vec<_> = messages.iter_current_update_messages().collect();
        assert_eq!(started.len(), 1, "reversed {reversed}");
        let s = started[0];
        bits(if s.entity == ids[0] {
            s.normal
        } else {
            V::ZERO - s.normal
        })
    })
}

/// The normal of two boxes that overlap from the start, hand-computed, the same bits
/// in either spawn order: along the axis of least overlap (x here: 0.4 against 0.5 in
/// y) from the first box towards the second, and zero when their centers line up along
/// it (neither way is out; the test from either side used to say "+x").
fn overlap_normal_whatever_the_order<V: Dim>() {
    let half = Vec3::new(0.2, 1.0, 1.0);
    let [a, b] = start_normal::<V>(Vec3::new(0.1, 1.5, 0.0), half);
    assert_eq!(a, b, "the normal depends on the spawn order");
    assert_eq!(a, bits(V::truncate_from_3d(Vec3::X)));
    let [a, b] = start_normal::<V>(Vec3::new(0.0, 1.5, 0.0), half);
    assert_eq!(a, b, "the normal depends on the spawn order");
    assert_eq!(a, bits(V::ZERO));
}

/// The normals of the entity events seen, by the observed entity.
#[derive(Resource, Default)]
struct Observed(Vec<(Entity, Vec<u32>)>);

/// Two points (balls of radius 0) at x = -1 (tag 0) and x = 1 (tag 1) that swap places
/// in one tick, spawned in either order: the normal of their start from tag 0 towards
/// tag 1, in each order. The entity events give each point the normal from it.
fn points_meeting<V: Dim>() -> [Vec<u32>; 2] {
    [false, true].map(|reversed| {
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
            .add_plugins(AabbTreePlugin::<V>::new(Update))
            .init_resource::<Observed>()
            .add_observer(|s: On<CollisionStarted<V>>, mut seen: ResMut<Observed>| {
                seen.0.push((s.entity, bits(s.normal)));
            });
        let mut ids = [Entity::PLACEHOLDER; 2];
        for k in if reversed { [1, 0] } else { [0, 1] } {
            let x = if k == 0 { -1.0 } else { 1.0 };
            ids[k] = app
                .world_mut()
                .spawn((
                    Tag(k as u32),
                    Transform::from_xyz(x, 0.0, 0.0),
                    BoundingSphere::<V>::new(0.0),
                ))
                .id();
        }
        app.update();
        for (k, x) in [(0, 1.0), (1, -1.0)] {
            app.world_mut()
                .get_mut::<Transform>(ids[k])
                .unwrap()
                .translation
                .x = x;
        }
        app.update();
        let messages = app.world().resource::<Messages<CollisionStarted<V>>>();
        let started: Vec<_> = messages.iter_current_update_messages().collect();
        assert_eq!(started.len(), 1, "reversed {reversed}");
        let s = started[0];
        assert_eq!(s.time_of_impact, 0.5);
        let mut seen = app.world().resource::<Observed>().0.clone();
        seen.sort();
        let mut want = vec![
            (ids[0], bits(V::truncate_from_3d(Vec3::X))),
            (ids[1], bits(V::truncate_from_3d(-Vec3::X) + V::ZERO)),
        ];
        want.sort();
        assert_eq!(seen, want, "the entity events, reversed {reversed}");
        bits(if s.entity == ids[0] {
            s.normal
        } else {
            V::ZERO - s.normal
        })
    })
}

/// Two points that meet center on center: the normal is the direction they came from,
/// `+x` from the one on the left, hand-computed, with `+0` coordinates in either spawn
/// order (worked out as `-v / |v|`, it has a `-0` when tested from the left one).
fn points_meeting_whatever_the_order<V: Dim>() {
    let [a, b] = points_meeting::<V>();
    assert_eq!(a, b, "the normal depends on the spawn order");
    assert_eq!(a, bits(V::truncate_from_3d(Vec3::X)));
}

/// Characters, each in a lane of its own between two walls, walking to and fro over
/// steps and jumping now and then.
const CHARACTERS: u32 = 8;
/// The width of a lane.
const LANE: f32 = 8.0;

/// Sets each character's velocity: a run that turns back every 50 ticks, gravity, and
/// a jump every 90 ticks when on the ground.
fn walk<V: Dim>(
    ticks: Res<Ticks>,
    mut characters: Query<(&Tag, &mut CharacterController<V>, &CharacterState<V>)>,
) {
    for (tag, mut controller, state) in &mut characters {
        let mut v = controller.velocity.extend_to_3d();
        let speed = 2.0 + tag.0 as f32 * 0.7;
        v.x = if (ticks.0 / 50 + tag.0).is_multiple_of(2) {
            speed
        } else {
            -speed
        };
        v.y -= 30.0 / 60.0;
        if state.grounded && (ticks.0 + tag.0 * 5).is_multiple_of(90) {
            v.y = 6.0;
        }
        controller.velocity = V::truncate_from_3d(v);
    }
}

/// Each tick: every character's place and state by tag, floats as bits (their ground
/// and hits named by tag).
#[derive(Resource, Default)]
struct CharacterLog(Vec<Vec<String>>);

fn log_characters<V: Dim>(
    mut ticks: ResMut<Ticks>,
    tags: Query<&Tag>,
    characters: Query<(&Tag, &Transform, &CharacterState<V>)>,
    mut log: ResMut<CharacterLog>,
) {
    ticks.0 += 1;
    let mut lines: Vec<String> = characters
        .iter()
        .map(|(tag, t, s)| {
            let hits: Vec<_> = s
                .hits
                .iter()
                .map(|h| {
                    format!(
                        "{}:{:08x}:{:08x?}",
                        tag_of(&tags, h.id),
                        h.t.to_bits(),
                        bits(h.normal)
                    )
                })
                .collect();
            format!(
                "{} at {:08x?} grounded {} on {:?} {:08x?} moved {:08x?} step {:08x} \
                 crushed {} hits {}",
                tag.0,
                bits(V::truncate_from_3d(t.translation)),
                s.grounded,
                s.ground.map(|g| tag_of(&tags, g)),
                bits(s.ground_normal),
                bits(s.displacement),
                s.step.to_bits(),
                s.crushed,
                hits.join(" ")
            )
        })
        .collect();
    lines.sort();
    log.0.push(lines);
}

/// A collider's spawn, to run in the order a test chooses.
type Spawn = Box<dyn FnOnce(&mut World)>;

/// The lanes spawned with their colliders in the order `order` (of tags: characters
/// from 0, floors and walls from 100, steps from 200): each tick's log, 240 ticks.
fn characters_in_order<V: Dim>(order: &[u32]) -> Vec<Vec<String>> {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .add_plugins((
            AabbTreePlugin::<V>::new(Update),
            CharacterPlugin::<V>::new(Update),
        ))
        .init_resource::<Ticks>()
        .init_resource::<CharacterLog>()
        .add_systems(
            Update,
            (
                walk::<V>.before(CollisionSystems::Prepare),
                log_characters::<V>.after(CharacterSystems::Move),
            ),
        );
    let size = |x: f32, y: f32| V::truncate_from_3d(Vec3::new(x, y, 4.0));
    let mut spawns: Vec<(u32, Spawn)> = Vec::new();
    for k in 0..CHARACTERS {
        let x = k as f32 * LANE;
        spawns.push((
            k,
            Box::new(move |w: &mut World| {
                let mut e = w.spawn((
                    Tag(k),
                    Transform::from_xyz(x, 1.0 + k as f32 * 0.1, 0.0),
                    CharacterController::<V>::new(V::truncate_from_3d(Vec3::Y)),
                ));
                if k % 2 == 0 {
                    e.insert(Aabb::new(size(0.4, 0.9)));
                } else {
                    e.insert(BoundingSphere::<V>::new(0.5));
                }
            }),
        ));
        // The lane's floor and its wall on the right, and a step in it.
        for (tag, at, half) in [
            (100 + 2 * k, Vec3::new(x, -0.5, 0.0), size(LANE / 2.0, 0.5)),
            (
                101 + 2 * k,
                Vec3::new(x + LANE / 2.0, 3.0, 0.0),
                size(0.25, 3.0),
            ),
            (
                200 + k,
                Vec3::new(x + 1.5 + k as f32 * 0.2, 0.1, 0.0),
                size(0.5, 0.1),
            ),
        ] {
            spawns.push((
                tag,
                Box::new(move |w: &mut World| {
                    w.spawn((
                        Tag(tag),
                        Transform::from_translation(at),
                        Aabb::new(half),
                        Static,
                    ));
                }),
            ));
        }
    }
    // The wall on the left of the first lane.
    spawns.push((
        199,
        Box::new(move |w: &mut World| {
            w.spawn((
                Tag(199),
                Transform::from_xyz(-LANE / 2.0, 3.0, 0.0),
                Aabb::new(size(0.25, 3.0)),
                Static,
            ));
        }),
    ));
    spawns.sort_by_key(|(tag, _)| order.iter().position(|o| o == tag).unwrap_or(usize::MAX));
    for (_, spawn) in spawns {
        spawn(app.world_mut());
    }
    for _ in 0..240 {
        app.update();
    }
    core::mem::take(&mut app.world_mut().resource_mut::<CharacterLog>().0)
}

/// Characters that never meet move the same whatever the order of spawns: each tick,
/// every character's place and state (ground, normal, displacement, step, hits) bit for
/// bit, with its colliders and the level's spawned in reverse, or interleaved. (Two
/// characters that meet are another matter: they move one after another, in the order
/// of their query.)
fn characters_apart_whatever_the_order<V: Dim>() {
    let forward: Vec<u32> = (0..CHARACTERS)
        .chain(100..100 + 2 * CHARACTERS)
        .chain(199..200 + CHARACTERS)
        .collect();
    let reversed: Vec<u32> = forward.iter().rev().copied().collect();
    let mut interleaved = forward.clone();
    interleaved.sort_by_key(|t| (t % 7, *t));
    let first = characters_in_order::<V>(&forward);
    for (name, order) in [("reversed", reversed), ("interleaved", interleaved)] {
        let other = characters_in_order::<V>(&order);
        if let Some(tick) = (0..first.len()).find(|&i| first[i] != other[i]) {
            panic!(
                "{name}: tick {} differs: {:#?} against {:#?}",
                tick + 1,
                first[tick],
                other[tick]
            );
        }
    }
    // The characters walked, stepped, jumped and hit the walls.
    let all: Vec<&String> = first.iter().flatten().collect();
    let stepped = all.iter().filter(|l| !l.contains("step 00000000")).count();
    let airborne = all.iter().filter(|l| l.contains("grounded false")).count();
    let walls = all
        .iter()
        .filter(|l| {
            let hits = l.split("hits ").nth(1).unwrap_or("");
            hits.split(' ').any(|h| {
                let tag = h.split(':').next().and_then(|t| t.parse::<u32>().ok());
                tag.is_some_and(|t| t == 199 || (100..200).contains(&t) && t % 2 == 1)
            })
        })
        .count();
    assert!(
        stepped > 0 && airborne > 100 && walls > 10,
        "too little to compare: {stepped} steps, {airborne} airborne, {walls} wall hits"
    );
}

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
    overlap_normal_whatever_the_order,
    points_meeting_whatever_the_order,
    characters_apart_whatever_the_order,
);
