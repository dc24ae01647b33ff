//! Characters pressed together and squeezed, boxes and capsules alike: a crowd whose
//! members never overlap, and riders and characters squeezed between colliders, never
//! pushed through what squeezes them.

use super::capsules::{Rb, signed_gap};
use super::characters::{Figure, bottom, character_app, rb_of, spawn_figure, spawn_floor};
use super::*;

both_dims!(
    crowd_never_overlaps,
    crowd_of_capsules_never_overlaps,
    crushed_characters_are_not_pushed_through,
    crushed_capsules_are_not_pushed_through,
);

/// Forty characters (boxes and balls) in a walled yard walk towards goals that swing
/// through its middle, each in its own phase, and press into each other: after every
/// tick, no two of them overlap (measured from their transforms and shapes).
fn crowd_never_overlaps<V: Dim>() {
    crowd::<V>(Figure::Box);
}

/// [`crowd_never_overlaps`] with capsules (as tall as the boxes, as wide) for the boxes.
fn crowd_of_capsules_never_overlaps<V: Dim>() {
    crowd::<V>(Figure::Capsule);
}

fn crowd<V: Dim>(figure: Figure) {
    #[derive(Component)]
    struct Goal(Vec3, f32);
    fn steer<V: Dim>(
        time: Res<Time>,
        mut q: Query<(&mut CharacterController<V>, &Transform, &Goal)>,
    ) {
        let t = time.elapsed_secs();
        for (mut c, transform, goal) in &mut q {
            // Towards a goal that circles the middle; a 3D crowd also moves in z.
            let target = goal.0 * (0.7 * t + goal.1).cos();
            let to = flat::<V>(target - transform.translation).with_y(0.0);
            let run = to.normalize_or_zero() * 3.0;
            let mut vel = c.velocity.extend_to_3d();
            vel.x = run.x;
            vel.z = run.z;
            c.velocity = V::truncate_from_3d(vel);
        }
    }
    let mut app = character_app::<V>();
    app.add_systems(Update, steer::<V>.before(CollisionSystems::Prepare));
    spawn_floor::<V>(&mut app);
    // A yard 12 wide (30 in 2D, where the crowd starts in a row).
    let two_d = V::DIM == 2;
    let walls: &[(f32, f32, f32, f32)] = if two_d {
        &[(-15.0, 0.0, 0.2, 1.0), (15.0, 0.0, 0.2, 1.0)]
    } else {
        &[
            (-6.0, 0.0, 0.2, 6.0),
            (6.0, 0.0, 0.2, 6.0),
            (0.0, -6.0, 6.0, 0.2),
            (0.0, 6.0, 6.0, 0.2),
        ]
    };
    for &(x, z, hx, hz) in walls {
        app.world_mut().spawn((
            Transform::from_xyz(x, 1.0, z),
            Aabb::<V>::new(v(hx, 1.0, hz)),
            Static,
        ));
    }
    let mut rng = Rng::new(47);
    let mut crowd = Vec::new();
    for i in 0..40 {
        let (x, z) = if two_d {
            (-13.65 + i as f32 * 0.7, 0.0)
        } else {
            let angle = i as f32 / 40.0 * std::f32::consts::TAU;
            let radius = if i % 2 == 0 { 4.8 } else { 3.6 };
            (radius * angle.cos(), radius * angle.sin())
        };
        let at = flat::<V>(Vec3::new(x, 0.0, z));
        let goal = flat::<V>(Vec3::new(x, 0.0, z) * rng.range(0.2, 1.0));
        let phase = rng.range(0.0, std::f32::consts::TAU);
        let size = rng.range(0.15, 0.3);
        let mut e = app.world_mut().spawn((
            CharacterController::<V>::new(v(0.0, 1.0, 0.0)),
            Goal(goal, phase),
        ));
        if i % 3 == 0 {
            e.insert((
                Transform::from_xyz(at.x, size + 0.01, at.z),
                BoundingSphere::<V>::new(size),
            ));
        } else if figure == Figure::Capsule {
            e.insert((
                Transform::from_xyz(at.x, 0.5 + 0.01, at.z),
                Capsule::<V>::new(0.5 - size, size),
            ));
        } else {
            e.insert((
                Transform::from_xyz(at.x, 0.5 + 0.01, at.z),
                Aabb::<V>::new(v(size, 0.5, size)),
            ));
        }
        crowd.push(e.id());
    }
    let mut overlaps = Vec::new();
    let mut closest = f64::INFINITY;
    for tick in 0..300 {
        app.update();
        let shapes: Vec<Rb> = crowd.iter().map(|&e| rb_of::<V>(&app, e)).collect();
        for i in 0..shapes.len() {
            for j in i + 1..shapes.len() {
                let s = signed_gap(&shapes[i], &shapes[j]);
                closest = closest.min(s);
                if s < -1e-4 {
                    overlaps.push((tick, i, j, s));
                }
            }
        }
    }
    assert!(
        overlaps.is_empty(),
        "{figure:?}: {} pair-ticks overlapping, first {:?}",
        overlaps.len(),
        &overlaps[..overlaps.len().min(5)]
    );
    assert!(
        closest < 0.03,
        "{figure:?}: the crowd never met: closest {closest}"
    );
}

/// Squeezes: a rider on a platform that rises until the space under a ceiling is a
/// third of the rider's height (slowly, or in one jump, moved or teleported), and a
/// character on the floor under a thin slab that falls onto it
/// (0.75 a tick, past the character's middle in one tick). The character is never
/// pushed through the collider that squeezes it: the rider never moves down while the
/// platform rises or holds (once settled on it), never ends wholly under it and never enters the ceiling; the
/// other never moves up and never ends wholly above the slab. It is crushed exactly while
/// the space left is too small for it.
fn crushed_characters_are_not_pushed_through<V: Dim>() {
    crushed::<V>(Figure::Box);
}

/// [`crushed_characters_are_not_pushed_through`] with a capsule as tall and as wide.
fn crushed_capsules_are_not_pushed_through<V: Dim>() {
    crushed::<V>(Figure::Capsule);
}

fn crushed<V: Dim>(figure: Figure) {
    #[derive(Component)]
    struct Path(fn(u32) -> f32);
    #[derive(Resource, Default)]
    struct Tick(u32);
    /// Its jumps are teleports.
    #[derive(Component)]
    struct Teleports;
    fn follow(
        mut commands: Commands,
        mut tick: ResMut<Tick>,
        mut q: Query<(Entity, &mut Transform, &Path, Has<Teleports>)>,
    ) {
        tick.0 += 1;
        for (e, mut t, path, teleports) in &mut q {
            let y = (path.0)(tick.0);
            if teleports && (y - t.translation.y).abs() > 0.5 {
                commands.entity(e).insert(Teleported);
            }
            t.translation.y = y;
        }
    }
    // The rider: the platform (0.2 thick) rises 0.02 a tick from y = 0.1 to 2.1, holds,
    // and goes back down; the ceiling's underside is at 2.5.
    fn rise(tick: u32) -> f32 {
        let up = (tick as f32 * 0.02).min(2.0);
        let down = (tick.saturating_sub(200) as f32 * 0.02).min(2.0);
        0.1 + up - down
    }
    // A platform 1.0 over the floor that jumps up by 0.75 at tick 10 and holds.
    fn jump(tick: u32) -> f32 {
        if tick < 10 { 1.1 } else { 1.85 }
    }
    // The slab (0.2 thick) comes down from 1.2 (its underside 0.1 over the character's
    // head) at 0.75 a tick and rests on the floor.
    fn fall(tick: u32) -> f32 {
        (1.2 - tick.saturating_sub(10) as f32 * 0.75).max(0.1)
    }
    let y_of = |app: &App, e: Entity| app.world().get::<Transform>(e).unwrap().translation.y;
    // The riders: slowly, and in one jump of 0.75 that takes the platform past the
    // rider's middle (the ceiling's underside 0.09 over the rider's head), moved or
    // teleported (the tick then sees no motion of the platform).
    let cases = [
        (rise as fn(u32) -> f32, 2.5, 400, false),
        (jump, 2.3, 60, false),
        (jump, 2.3, 60, true),
    ];
    for (path, ceiling, ticks, teleports) in cases {
        let mut app = character_app::<V>();
        app.init_resource::<Tick>()
            .add_systems(Update, follow.before(CollisionSystems::Prepare));
        spawn_floor::<V>(&mut app);
        app.world_mut().spawn((
            Transform::from_xyz(0.0, ceiling + 0.5, 0.0),
            Aabb::<V>::new(v(5.0, 0.5, 5.0)),
            Static,
        ));
        let platform = app
            .world_mut()
            .spawn((
                Transform::from_xyz(0.0, path(0), 0.0),
                Aabb::<V>::new(v(2.0, 0.1, 2.0)),
                Path(path),
            ))
            .id();
        if teleports {
            app.world_mut().entity_mut(platform).insert(Teleports);
        }
        let rider = spawn_figure::<V>(&mut app, figure, 0.0, path(0) + 0.61, ());
        let mut crushed_ticks = 0;
        let mut last = y_of(&app, rider);
        for tick in 1..=ticks {
            app.update();
            let (p, r) = (y_of(&app, platform), y_of(&app, rider));
            assert!(
                !(10..=200).contains(&tick) || r >= last - 1e-4,
                "{figure:?} tick {tick}: the rider moved down from {last} to {r}"
            );
            last = r;
            assert!(
                r + 0.5 >= p - 0.1,
                "{figure:?} tick {tick}: the rider ({r}) is under the platform ({p})"
            );
            assert!(
                r + 0.5 <= ceiling + 1e-4,
                "{figure:?} tick {tick}: the rider ({r}) is in the ceiling"
            );
            let space = ceiling - (p + 0.1);
            let state = app.world().get::<CharacterState<V>>(rider).unwrap();
            if space < 1.0 - 0.03 {
                assert!(
                    state.crushed,
                    "{figure:?} tick {tick}: not crushed in a space of {space}"
                );
                assert!(
                    state.touches(platform),
                    "{figure:?} tick {tick}: {:?}",
                    state.touching()
                );
                crushed_ticks += 1;
            } else if space > 1.0 + 0.05 {
                assert!(
                    !state.crushed,
                    "{figure:?} tick {tick}: crushed in a space of {space}"
                );
            }
        }
        assert!(crushed_ticks > 40, "crushed at {crushed_ticks} ticks");
        if ticks > 200 {
            // Freed: back on the platform, which is back on the floor.
            let state = app.world().get::<CharacterState<V>>(rider).unwrap();
            assert!(state.grounded && state.ground == Some(platform));
            assert!((bottom::<V>(&app, rider) - 0.2).abs() < 0.021);
        }
    }

    // The slab.
    let mut app = character_app::<V>();
    app.init_resource::<Tick>()
        .add_systems(Update, follow.before(CollisionSystems::Prepare));
    spawn_floor::<V>(&mut app);
    let slab = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.0, 1.2, 0.0),
            Aabb::<V>::new(v(2.0, 0.1, 2.0)),
            Path(fall),
        ))
        .id();
    let character = spawn_figure::<V>(&mut app, figure, 0.0, 0.51, ());
    let mut crushed_ticks = 0;
    let mut last = y_of(&app, character);
    for tick in 1..=60 {
        app.update();
        let (s, c) = (y_of(&app, slab), y_of(&app, character));
        assert!(
            c <= last + 1e-4,
            "{figure:?} tick {tick}: the character moved up from {last} to {c}"
        );
        last = c;
        assert!(
            c - 0.5 <= s + 0.1,
            "{figure:?} tick {tick}: the character ({c}) is above the slab ({s})"
        );
        let state = app.world().get::<CharacterState<V>>(character).unwrap();
        if s - 0.1 < 1.0 {
            assert!(
                state.crushed,
                "{figure:?} tick {tick}: not crushed under the slab at {s}"
            );
            crushed_ticks += 1;
        }
    }
    assert!(crushed_ticks > 40);
}
