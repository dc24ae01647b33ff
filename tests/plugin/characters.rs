//! The character controller in the app (moving ground, one-way drop-through, characters
//! meeting) and the pair filter (events against brute force with the rule applied).

use bevy::ecs::system::SystemParam;

use super::*;

/// An app with the pipeline and the controller in `Update` at 60 frames a second. The pair
/// filter is given once, to the collision plugin, which is added after the controller's:
/// the controller honours it whatever the order.
fn character_app<V: Dim>() -> App {
    character_app_in_order::<V>(true)
}

/// [`character_app`] with the character plugin added before the collision plugin, or
/// after it.
fn character_app_in_order<V: Dim>(character_first: bool) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin));
    if character_first {
        app.add_plugins(CharacterPlugin::<V>::new(Update))
            .add_plugins(AabbTreePlugin::<V>::new(Update).with_pair_filter::<EvenRule>());
    } else {
        app.add_plugins(AabbTreePlugin::<V>::new(Update).with_pair_filter::<EvenRule>())
            .add_plugins(CharacterPlugin::<V>::new(Update));
    }
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 60.0,
    )))
    .init_resource::<RulePhase>()
    .add_systems(Update, gravity::<V>.before(CollisionSystems::Prepare));
    app
}

const GRAVITY: f32 = 20.0;

/// The game's gravity and walking, before the collision tick.
#[derive(Component, Clone, Copy)]
struct Walk(f32);

fn gravity<V: Dim>(time: Res<Time>, mut q: Query<(&mut CharacterController<V>, Option<&Walk>)>) {
    let dt = time.delta_secs();
    for (mut c, walk) in &mut q {
        let mut v = c.velocity.extend_to_3d();
        v.y -= GRAVITY * dt;
        if let Some(walk) = walk {
            v.x = walk.0;
        }
        c.velocity = V::truncate_from_3d(v);
    }
}

fn bottom<V: Dim>(app: &App, e: Entity) -> f32 {
    let t = app.world().get::<Transform>(e).unwrap().translation;
    let half = app
        .world()
        .get::<Aabb<V>>(e)
        .unwrap()
        .half_extents
        .extend_to_3d();
    t.y - half.y
}

/// A static floor whose top is at y = 0.
fn spawn_floor<V: Dim>(app: &mut App) {
    app.world_mut().spawn((
        Transform::from_xyz(0.0, -0.5, 0.0),
        Aabb::<V>::new(v(20.0, 0.5, 20.0)),
        Static,
    ));
}

/// A character box of half extents 0.3 × 0.5 (× 0.3) centered at (x, y), with `extra`.
fn spawn_character<V: Dim>(app: &mut App, x: f32, y: f32, extra: impl Bundle) -> Entity {
    app.world_mut()
        .spawn((
            Transform::from_xyz(x, y, 0.0),
            Aabb::<V>::new(v(0.3, 0.5, 0.3)),
            CharacterController::<V>::new(v(0.0, 1.0, 0.0)),
            extra,
        ))
        .id()
}

fn translation(app: &App, e: Entity) -> Vec3 {
    app.world().get::<Transform>(e).unwrap().translation
}

both_dims!(
    climbs_stairs_without_false_contacts,
    carried_by_moving_ground,
    drops_through_one_way_platforms,
    characters_do_not_climb_each_other,
    filter_vetoes_exactly_its_pairs,
    controller_honours_the_filter,
    grounded_at_a_box_edge,
    crowd_never_overlaps,
    crushed_characters_are_not_pushed_through,
    touching_while_standing,
);

/// A character walks up five steps of 0.8 × the maximum step height: it climbs all of
/// them, and since it never overlaps a step (it stays a skin above each), no contact
/// with a step is ever reported, although the straight line from where it was to where
/// it is cuts each step's corner. A sensor gate across the stairs, which it walks
/// through, reports its contact: events are reported on this walk.
fn climbs_stairs_without_false_contacts<V: Dim>() {
    let mut app = character_app::<V>();
    let h = 0.8 * CharacterConfig::<V>::new(v(0.0, 1.0, 0.0)).max_step_height;
    spawn_floor::<V>(&mut app);
    let steps: Vec<Entity> = (1..=5)
        .map(|i| {
            let top = i as f32 * h;
            app.world_mut()
                .spawn((
                    Transform::from_xyz(1.0 + i as f32 * 0.5 + 5.0, top / 2.0, 0.0),
                    Aabb::<V>::new(v(5.0, top / 2.0, 2.0)),
                    Static,
                ))
                .id()
        })
        .collect();
    // Over the middle of the stairs, from the floor up: static, so it pairs with no step.
    let gate = app
        .world_mut()
        .spawn((
            Transform::from_xyz(2.5, 1.5, 0.0),
            Aabb::<V>::new(v(0.1, 1.5, 2.0)),
            Static,
            Sensor,
        ))
        .id();
    let character = spawn_character::<V>(&mut app, 0.0, 0.51, (Walk(1.9),));
    let mut cursor = MessageCursor::<CollisionStarted<V>>::default();
    let mut ends = MessageCursor::<CollisionEnded>::default();
    let is_gate = |a: Entity, b: Entity| (a, b) == (character, gate) || (a, b) == (gate, character);
    let (mut starts, mut gate_starts, mut gate_ends) = (0, 0, 0);
    for _ in 0..150 {
        app.update();
        for s in cursor.read(app.world().resource::<Messages<CollisionStarted<V>>>()) {
            starts += usize::from(steps.contains(&s.entity) || steps.contains(&s.other));
            gate_starts += usize::from(is_gate(s.entity, s.other));
        }
        for e in ends.read(app.world().resource::<Messages<CollisionEnded>>()) {
            gate_ends += usize::from(is_gate(e.entity, e.other));
        }
    }
    let top = bottom::<V>(&app, character);
    assert!(
        (top - 5.0 * h).abs() < 0.021,
        "did not climb the stairs: bottom {top}"
    );
    assert_eq!(starts, 0, "contacts with the steps reported");
    assert_eq!(
        (gate_starts, gate_ends),
        (1, 1),
        "the walk through the gate: (starts, ends)"
    );
}

/// A platform moving across and up and down for 600 ticks, directly or as the child of a
/// moving parent: the character standing on it keeps its place on it within the skin.
fn carried_by_moving_ground<V: Dim>() {
    #[derive(Component)]
    struct Mover(Vec3);
    fn swing(time: Res<Time>, mut q: Query<(&mut Transform, &Mover)>) {
        let t = time.elapsed_secs();
        for (mut transform, mover) in &mut q {
            transform.translation =
                mover.0 + Vec3::new(3.0 * (0.9 * t).sin(), 1.5 * (0.7 * t).sin(), 0.0);
        }
    }
    for as_child in [false, true] {
        let mut app = character_app::<V>();
        app.add_systems(Update, swing.before(CollisionSystems::Prepare));
        let platform = if as_child {
            let parent = app
                .world_mut()
                .spawn((Transform::default(), Mover(Vec3::ZERO)))
                .id();
            app.world_mut()
                .spawn((
                    Transform::from_xyz(0.0, -0.1, 0.0),
                    Aabb::<V>::new(v(2.0, 0.1, 2.0)),
                    ChildOf(parent),
                ))
                .id()
        } else {
            app.world_mut()
                .spawn((
                    Transform::from_xyz(0.0, -0.1, 0.0),
                    Aabb::<V>::new(v(2.0, 0.1, 2.0)),
                    Mover(Vec3::new(0.0, -0.1, 0.0)),
                ))
                .id()
        };
        let character = spawn_character::<V>(&mut app, 0.5, 0.51, ());
        // The platform where this tick put it (its tracked shape), the character where the
        // controller then moved it (its transform: its tracked shape follows next tick).
        let offset = |app: &App| {
            let p = app
                .world()
                .get::<TrackedCollider<V>>(platform)
                .unwrap()
                .world_aabb();
            let c = translation(app, character);
            (
                c.x - p.min.axis(0),
                bottom::<V>(app, character) - p.max.axis(1),
            )
        };
        for _ in 0..20 {
            app.update();
        }
        let (x0, gap0) = offset(&app);
        assert!(
            (0.0..0.021).contains(&gap0),
            "child {as_child}: gap {gap0} at rest"
        );
        for i in 0..600 {
            app.update();
            let (x, gap) = offset(&app);
            assert!(
                (x - x0).abs() <= 0.01,
                "child {as_child}, tick {i}: drifted {}",
                x - x0
            );
            assert!(
                (0.0..0.021).contains(&gap),
                "child {as_child}, tick {i}: gap {gap}"
            );
            let state = app.world().get::<CharacterState<V>>(character).unwrap();
            assert!(state.grounded, "child {as_child}, tick {i}: not grounded");
            assert_eq!(state.ground, Some(platform));
        }
    }
}

/// A character on a one-way platform stays on it until it asks to drop, then falls
/// through it to the floor in one press.
fn drops_through_one_way_platforms<V: Dim>() {
    let mut app = character_app::<V>();
    spawn_floor::<V>(&mut app);
    let platform = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.0, 1.9, 0.0),
            Aabb::<V>::new(v(2.0, 0.1, 2.0)),
            Static,
            OneWay::<V>::new(v(0.0, 1.0, 0.0)),
        ))
        .id();
    let character = spawn_character::<V>(&mut app, 0.0, 3.0, ());
    for _ in 0..90 {
        app.update();
    }
    assert!(
        (bottom::<V>(&app, character) - 2.0).abs() < 0.021,
        "not on the platform"
    );
    let state = app.world().get::<CharacterState<V>>(character).unwrap();
    assert_eq!(state.ground, Some(platform));
    // One press.
    app.world_mut()
        .get_mut::<CharacterController<V>>(character)
        .unwrap()
        .drop_through = true;
    app.update();
    app.world_mut()
        .get_mut::<CharacterController<V>>(character)
        .unwrap()
        .drop_through = false;
    for _ in 0..90 {
        app.update();
    }
    assert!(
        bottom::<V>(&app, character) < 0.021,
        "did not drop to the floor"
    );
    // And it lands on the platform again from above after a jump.
    app.world_mut()
        .get_mut::<CharacterController<V>>(character)
        .unwrap()
        .velocity = v(0.0, 12.0, 0.0);
    for _ in 0..120 {
        app.update();
    }
    assert!(
        (bottom::<V>(&app, character) - 2.0).abs() < 0.021,
        "jumped through and fell back"
    );
}

/// Two characters walking into each other on a floor: neither climbs the other.
fn characters_do_not_climb_each_other<V: Dim>() {
    let mut app = character_app::<V>();
    spawn_floor::<V>(&mut app);
    // Short characters: their height is under the step height.
    let mut spawn = |x: f32, walk: f32| {
        app.world_mut()
            .spawn((
                Transform::from_xyz(x, 0.12, 0.0),
                Aabb::<V>::new(v(0.3, 0.1, 0.3)),
                CharacterController::<V>::new(v(0.0, 1.0, 0.0)),
                Walk(walk),
            ))
            .id()
    };
    let (a, b) = (spawn(-2.0, 2.0), spawn(2.0, -2.0));
    for _ in 0..150 {
        app.update();
        for e in [a, b] {
            let y = bottom::<V>(&app, e);
            assert!(y < 0.021, "a character climbed to {y}");
        }
    }
    let gap = translation(&app, b).x - translation(&app, a).x;
    assert!(
        (0.6 - 1e-3..0.7).contains(&gap),
        "the characters are {gap} apart"
    );
}

/// Which rule the filter applies (changed during the run).
#[derive(Resource, Default)]
struct RulePhase(u64);

/// Never vetoed (a floor under a test of the rule).
#[derive(Component)]
struct Immune;

/// Vetoes a pair when the sum of its entities' bits and the phase is divisible by 3,
/// unless one side is `Immune`.
#[derive(SystemParam)]
struct EvenRule<'w, 's> {
    phase: Res<'w, RulePhase>,
    immune: Query<'w, 's, (), With<Immune>>,
}

impl PairFilter for EvenRule<'_, '_> {
    fn allows(&self, a: Entity, b: Entity) -> bool {
        self.immune.contains(a) || self.immune.contains(b) || !vetoed_by(self.phase.0, a, b)
    }
}

fn vetoed_by(phase: u64, a: Entity, b: Entity) -> bool {
    (a.to_bits() + b.to_bits() + phase).is_multiple_of(3)
}

/// Random boxes moving slowly, a third of them with `AskPairFilter`, the rule changing every
/// 40 ticks: after every tick the open pairs (from the events) are the overlapping pairs
/// less those the rule vetoes where a side asks it.
fn filter_vetoes_exactly_its_pairs<V: Dim>() {
    let mut app = character_app::<V>();
    let mut rng = Rng::new(7);
    let mut bodies = Vec::new();
    for i in 0..60 {
        let p = Vec3::new(
            rng.range(-6.0, 6.0),
            rng.range(-6.0, 6.0),
            rng.range(-6.0, 6.0),
        );
        // Half of them idle: pairs of idle colliders whose veto changes are tested only
        // because the filter marks them.
        let vel = if i % 2 == 0 {
            Vec3::ZERO
        } else {
            Vec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            )
        };
        let half = rng.range(0.3, 1.0);
        let mut e = app.world_mut().spawn((
            Transform::from_translation(flat::<V>(p)),
            Aabb::<V>::new(V::splat(half)),
            Velocity(V::truncate_from_3d(vel)),
        ));
        if i % 3 == 0 {
            e.insert(AskPairFilter);
        }
        bodies.push((e.id(), flat::<V>(vel), half, i % 3 == 0));
    }
    let mut open: BTreeSet<(Entity, Entity)> = BTreeSet::new();
    let mut cursor = (
        MessageCursor::<CollisionStarted<V>>::default(),
        MessageCursor::<CollisionEnded>::default(),
    );
    let mut vetoed_seen = 0;
    for tick in 0..240u64 {
        app.world_mut().resource_mut::<RulePhase>().0 = tick / 40;
        // At tick 120 the opt-in moves: half the colliders with `AskPairFilter` lose it,
        // some without it get it.
        if tick == 120 {
            for (i, body) in bodies.iter_mut().enumerate() {
                if body.3 && i % 2 == 0 {
                    app.world_mut().entity_mut(body.0).remove::<AskPairFilter>();
                    body.3 = false;
                } else if i % 3 == 1 && i % 4 == 1 {
                    app.world_mut().entity_mut(body.0).insert(AskPairFilter);
                    body.3 = true;
                }
            }
        }
        // Move by hand (no velocity plugin here), then run the tick.
        for &(e, vel, ..) in &bodies {
            if vel == Vec3::ZERO {
                continue;
            }
            let mut t = app.world_mut().get_mut::<Transform>(e).unwrap();
            t.translation += vel / 60.0;
            let p = t.translation;
            // Bounce inside the box of the scene.
            if p.abs().max_element() > 7.0 {
                t.translation = p.clamp(Vec3::splat(-7.0), Vec3::splat(7.0));
            }
        }
        app.update();
        let started: Vec<CollisionStarted<V>> = cursor
            .0
            .read(app.world().resource::<Messages<CollisionStarted<V>>>())
            .copied()
            .collect();
        let ended: Vec<CollisionEnded> = cursor
            .1
            .read(app.world().resource::<Messages<CollisionEnded>>())
            .copied()
            .collect();
        let key = |a: Entity, b: Entity| if a < b { (a, b) } else { (b, a) };
        for s in started {
            assert!(
                open.insert(key(s.entity, s.other)),
                "tick {tick}: started twice"
            );
        }
        for e in ended {
            assert!(
                open.remove(&key(e.entity, e.other)),
                "tick {tick}: ended unopened"
            );
        }
        // Brute force.
        let phase = tick / 40;
        let mut expected = BTreeSet::new();
        for (i, &(a, _, ha, fa)) in bodies.iter().enumerate() {
            for &(b, _, hb, fb) in &bodies[i + 1..] {
                let (pa, pb) = (translation(&app, a), translation(&app, b));
                let d = flat::<V>(pa - pb).abs();
                let overlap = d.x <= ha + hb && d.y <= ha + hb && d.z <= ha + hb;
                let pair = if a < b { (a, b) } else { (b, a) };
                let veto = (fa || fb) && vetoed_by(phase, pair.0, pair.1);
                if overlap && veto {
                    vetoed_seen += 1;
                }
                if overlap && !veto {
                    expected.insert(pair);
                }
            }
        }
        assert_eq!(open, expected, "tick {tick}");
    }
    assert!(
        vetoed_seen > 20,
        "the rule vetoed only {vetoed_seen} overlapping pairs"
    );
}

/// A character with `AskPairFilter` walks through a wall the rule vetoes, and is stopped by
/// one it allows (on a floor the rule never vetoes).
fn controller_honours_the_filter<V: Dim>() {
    for (want_veto, character_first) in [(true, true), (false, true), (true, false), (false, false)]
    {
        let mut app = character_app_in_order::<V>(character_first);
        app.world_mut().spawn((
            Transform::from_xyz(0.0, -0.5, 0.0),
            Aabb::<V>::new(v(20.0, 0.5, 20.0)),
            Static,
            Immune,
        ));
        let character = spawn_character::<V>(&mut app, 0.0, 0.51, (AskPairFilter, Walk(3.0)));
        let wall = app
            .world_mut()
            .spawn((
                Transform::from_xyz(2.0, 1.0, 0.0),
                Aabb::<V>::new(v(0.2, 1.0, 20.0)),
                Static,
            ))
            .id();
        let (a, b) = (character.min(wall), character.max(wall));
        let phase = (0..3).find(|&p| vetoed_by(p, a, b) == want_veto).unwrap();
        app.world_mut().resource_mut::<RulePhase>().0 = phase;
        for _ in 0..90 {
            app.update();
        }
        let x = translation(&app, character).x;
        if want_veto {
            assert!(x > 3.0, "stopped by a vetoed wall at {x}");
        } else {
            assert!(x < 1.51, "passed an allowed wall: {x}");
        }
    }
}

/// How far apart two world shapes are: the gap between them, or minus the depth of
/// their overlap (the shortest push that separates them), in `f64`.
fn separation(a: &OShape, b: &OShape) -> f64 {
    let d = |v: Vec3| [f64::from(v.x), f64::from(v.y), f64::from(v.z)];
    // A box's per-axis gaps (positive outside) to a point.
    let box_point = |min: Vec3, max: Vec3, p: Vec3| -> f64 {
        let (lo, hi, p) = (d(min), d(max), d(p));
        let outside: f64 = (0..3)
            .map(|i| (lo[i] - p[i]).max(p[i] - hi[i]).max(0.0).powi(2))
            .sum();
        if outside > 0.0 {
            outside.sqrt()
        } else {
            // Inside: minus the distance to the nearest face.
            -(0..3)
                .map(|i| (p[i] - lo[i]).min(hi[i] - p[i]))
                .fold(f64::INFINITY, f64::min)
        }
    };
    match (*a, *b) {
        (OShape::Box { min: a0, max: a1 }, OShape::Box { min: b0, max: b1 }) => {
            let (a0, a1, b0, b1) = (d(a0), d(a1), d(b0), d(b1));
            let gaps: Vec<f64> = (0..3).map(|i| (a0[i] - b1[i]).max(b0[i] - a1[i])).collect();
            if gaps.iter().any(|&g| g > 0.0) {
                gaps.iter().map(|g| g.max(0.0).powi(2)).sum::<f64>().sqrt()
            } else {
                gaps.into_iter().fold(f64::NEG_INFINITY, f64::max)
            }
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
        ) => {
            let (p, q) = (d(c0), d(c1));
            let dist = (0..3).map(|i| (p[i] - q[i]).powi(2)).sum::<f64>().sqrt();
            dist - f64::from(r0) - f64::from(r1)
        }
        (OShape::Ball { center, radius }, OShape::Box { min, max })
        | (OShape::Box { min, max }, OShape::Ball { center, radius }) => {
            box_point(min, max, center) - f64::from(radius)
        }
    }
}

/// The world shape of a root collider, from its components.
fn shape_of<V: Dim>(app: &App, e: Entity) -> OShape {
    let w = app.world();
    oracle_shape::<V>(
        w.get::<Transform>(e).unwrap(),
        w.get::<Aabb<V>>(e),
        w.get::<BoundingSphere<V>>(e),
        None,
    )
    .unwrap()
}

/// The case of the report at 64 ticks a second: a ball character (radius 0.299) walks at
/// 10.435 units/s over a box 0.125 high on a floor. Whenever it reads as grounded, its
/// ground is at most twice the skin away (its gap, measured from the shapes).
fn grounded_at_a_box_edge<V: Dim>() {
    let mut app = character_app::<V>();
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 64.0,
    )));
    spawn_floor::<V>(&mut app);
    app.world_mut().spawn((
        Transform::from_xyz(1.0, 0.0625, 0.0),
        Aabb::<V>::new(v(0.6, 0.0625, 0.6)),
        Static,
    ));
    let character = app
        .world_mut()
        .spawn((
            Transform::from_xyz(-1.0, 0.309, 0.0),
            BoundingSphere::<V>::new(0.299),
            CharacterController::<V>::new(v(0.0, 1.0, 0.0)),
        ))
        .id();
    let skin = CharacterConfig::<V>::new(v(0.0, 1.0, 0.0)).skin;
    let mut grounded = 0;
    for tick in 0..90 {
        if tick == 30 {
            app.world_mut().entity_mut(character).insert(Walk(10.435));
        }
        app.update();
        let state = app.world().get::<CharacterState<V>>(character).unwrap();
        if !state.grounded {
            continue;
        }
        grounded += 1;
        let ground = state.ground.expect("grounded without a ground");
        let gap = separation(
            &shape_of::<V>(&app, character),
            &shape_of::<V>(&app, ground),
        );
        assert!(
            gap <= 2.0 * f64::from(skin) + 1e-5,
            "tick {tick}: grounded on {ground} with a gap of {gap}"
        );
    }
    assert!(grounded > 60, "grounded at only {grounded} ticks");
}

/// Forty characters (boxes and balls) in a walled yard walk towards goals that swing
/// through its middle, each in its own phase, and press into each other: after every
/// tick, no two of them overlap (measured from their transforms and shapes).
fn crowd_never_overlaps<V: Dim>() {
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
        let shapes: Vec<OShape> = crowd.iter().map(|&e| shape_of::<V>(&app, e)).collect();
        for i in 0..shapes.len() {
            for j in i + 1..shapes.len() {
                let s = separation(&shapes[i], &shapes[j]);
                closest = closest.min(s);
                if s < -1e-4 {
                    overlaps.push((tick, i, j, s));
                }
            }
        }
    }
    assert!(
        overlaps.is_empty(),
        "{} pair-ticks overlapping, first {:?}",
        overlaps.len(),
        &overlaps[..overlaps.len().min(5)]
    );
    assert!(closest < 0.03, "the crowd never met: closest {closest}");
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
        let rider = spawn_character::<V>(&mut app, 0.0, path(0) + 0.61, ());
        let mut crushed_ticks = 0;
        let mut last = y_of(&app, rider);
        for tick in 1..=ticks {
            app.update();
            let (p, r) = (y_of(&app, platform), y_of(&app, rider));
            assert!(
                !(10..=200).contains(&tick) || r >= last - 1e-4,
                "tick {tick}: the rider moved down from {last} to {r}"
            );
            last = r;
            assert!(
                r + 0.5 >= p - 0.1,
                "tick {tick}: the rider ({r}) is under the platform ({p})"
            );
            assert!(
                r + 0.5 <= ceiling + 1e-4,
                "tick {tick}: the rider ({r}) is in the ceiling"
            );
            let space = ceiling - (p + 0.1);
            let state = app.world().get::<CharacterState<V>>(rider).unwrap();
            if space < 1.0 - 0.03 {
                assert!(
                    state.crushed,
                    "tick {tick}: not crushed in a space of {space}"
                );
                assert!(
                    state.touches(platform),
                    "tick {tick}: {:?}",
                    state.touching()
                );
                crushed_ticks += 1;
            } else if space > 1.0 + 0.05 {
                assert!(!state.crushed, "tick {tick}: crushed in a space of {space}");
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
    let character = spawn_character::<V>(&mut app, 0.0, 0.51, ());
    let mut crushed_ticks = 0;
    let mut last = y_of(&app, character);
    for tick in 1..=60 {
        app.update();
        let (s, c) = (y_of(&app, slab), y_of(&app, character));
        assert!(
            c <= last + 1e-4,
            "tick {tick}: the character moved up from {last} to {c}"
        );
        last = c;
        assert!(
            c - 0.5 <= s + 0.1,
            "tick {tick}: the character ({c}) is above the slab ({s})"
        );
        let state = app.world().get::<CharacterState<V>>(character).unwrap();
        if s - 0.1 < 1.0 {
            assert!(
                state.crushed,
                "tick {tick}: not crushed under the slab at {s}"
            );
            crushed_ticks += 1;
        }
    }
    assert!(crushed_ticks > 40);
}

/// A character walks over a floor of tiles into a wall and stays pressed against it.
/// `CharacterState::touching` lists exactly the colliders within twice the skin of it
/// that the move met: its ground at every grounded tick, the wall once it is against
/// it, and nothing farther than twice the skin (measured from the shapes). Its
/// `CollidingEntities` (the skin keeps it from touching anything) holds no tile.
fn touching_while_standing<V: Dim>() {
    let mut app = character_app::<V>();
    let tiles: Vec<Entity> = (0..8)
        .map(|i| {
            app.world_mut()
                .spawn((
                    Transform::from_xyz(i as f32 - 2.5, -0.5, 0.0),
                    Aabb::<V>::new(v(0.5, 0.5, 2.0)),
                    Static,
                ))
                .id()
        })
        .collect();
    let wall = app
        .world_mut()
        .spawn((
            Transform::from_xyz(4.0, 1.0, 0.0),
            Aabb::<V>::new(v(0.2, 1.0, 2.0)),
            Static,
        ))
        .id();
    let character = spawn_character::<V>(
        &mut app,
        -2.0,
        0.51,
        (Walk(3.0), CollidingEntities::default()),
    );
    let skin = f64::from(CharacterConfig::<V>::new(v(0.0, 1.0, 0.0)).skin);
    let (mut grounded, mut against_wall) = (0, 0);
    for tick in 0..150 {
        app.update();
        let state = app.world().get::<CharacterState<V>>(character).unwrap();
        let me = shape_of::<V>(&app, character);
        for &e in state.touching() {
            let gap = separation(&me, &shape_of::<V>(&app, e));
            assert!(
                gap <= 2.0 * skin + 1e-5,
                "tick {tick}: touches {e} at {gap}"
            );
        }
        if state.grounded {
            grounded += 1;
            let ground = state.ground.unwrap();
            assert!(
                tiles.contains(&ground) && state.touches(ground),
                "tick {tick}"
            );
        }
        if separation(&me, &shape_of::<V>(&app, wall)) <= skin + 1e-5 {
            against_wall += 1;
            assert!(state.touches(wall), "tick {tick}: {:?}", state.touching());
        }
        let colliding = app.world().get::<CollidingEntities>(character).unwrap();
        assert!(colliding.iter().all(|e| !tiles.contains(&e)), "tick {tick}");
    }
    assert!(
        grounded > 140 && against_wall > 30,
        "{grounded} {against_wall}"
    );
}
