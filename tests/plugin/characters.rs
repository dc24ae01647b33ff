//! The character controller in the app (moving ground, one-way drop-through, characters
//! meeting, standing at an edge), for boxes, balls and capsules, and the pair filter
//! (events against brute force with the rule applied). Crowds and squeezes:
//! `character_squeeze`.

use bevy::ecs::system::SystemParam;

use super::capsules::{Body, Rb, signed_gap};
use super::*;

/// An app with the pipeline and the controller in `Update` at 60 frames a second. The pair
/// filter is given once, to the collision plugin, which is added after the controller's:
/// the controller honours it whatever the order.
pub(super) fn character_app<V: Dim>() -> App {
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

pub(super) const GRAVITY: f32 = 20.0;

/// The game's gravity and walking, before the collision tick.
#[derive(Component, Clone, Copy)]
pub(super) struct Walk(pub(super) f32);

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

/// The lowest point of a character (a box, a ball or a capsule, unrotated, unscaled).
pub(super) fn bottom<V: Dim>(app: &App, e: Entity) -> f32 {
    let rb = rb_of::<V>(app, e);
    (rb.c.y - rb.h.y - rb.r) as f32
}

/// The oracle's world shape of a character (a box, a ball or a capsule, unrotated,
/// unscaled): a rounded box in `f64`.
pub(super) fn rb_of<V: Dim>(app: &App, e: Entity) -> Rb {
    let w = app.world();
    let body = if let Some(a) = w.get::<Aabb<V>>(e) {
        Body::Box(*a)
    } else if let Some(c) = w.get::<Capsule<V>>(e) {
        Body::Capsule(*c)
    } else {
        Body::Ball(*w.get::<BoundingSphere<V>>(e).unwrap())
    };
    body.at(translation(app, e))
}

/// A static floor whose top is at y = 0.
pub(super) fn spawn_floor<V: Dim>(app: &mut App) {
    app.world_mut().spawn((
        Transform::from_xyz(0.0, -0.5, 0.0),
        Aabb::<V>::new(v(20.0, 0.5, 20.0)),
        Static,
    ));
}

/// A character box of half extents 0.3 × 0.5 (× 0.3) centered at (x, y), with `extra`.
fn spawn_character<V: Dim>(app: &mut App, x: f32, y: f32, extra: impl Bundle) -> Entity {
    spawn_figure::<V>(app, Figure::Box, x, y, extra)
}

/// The shape of a test's character: a box or a capsule, 0.6 wide and 1 tall either way.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Figure {
    /// Half extents 0.3 × 0.5 (× 0.3).
    Box,
    /// Radius 0.3, segment half length 0.2, standing along y.
    Capsule,
}

impl Figure {
    fn body<V: Dim>(self) -> Body<V> {
        match self {
            Figure::Box => Body::Box(Aabb::new(v(0.3, 0.5, 0.3))),
            Figure::Capsule => Body::Capsule(Capsule::new(0.2, 0.3)),
        }
    }
}

/// A character of this `figure` centered at (x, y), with `extra`.
pub(super) fn spawn_figure<V: Dim>(
    app: &mut App,
    figure: Figure,
    x: f32,
    y: f32,
    extra: impl Bundle,
) -> Entity {
    let mut e = app.world_mut().spawn((
        Transform::from_xyz(x, y, 0.0),
        CharacterController::<V>::new(v(0.0, 1.0, 0.0)),
        extra,
    ));
    figure.body::<V>().insert(&mut e);
    e.id()
}

pub(super) fn translation(app: &App, e: Entity) -> Vec3 {
    app.world().get::<Transform>(e).unwrap().translation
}

both_dims!(
    climbs_stairs_without_false_contacts,
    capsule_climbs_stairs_without_false_contacts,
    carried_by_moving_ground,
    drops_through_one_way_platforms,
    capsule_drops_through_one_way_platforms,
    characters_do_not_climb_each_other,
    filter_vetoes_exactly_its_pairs,
    controller_honours_the_filter,
    grounded_at_a_box_edge,
    capsule_grounded_at_a_box_edge,
    touching_while_standing,
);

/// A character walks up five steps of 0.8 × the maximum step height: it climbs all of
/// them, and since it never overlaps a step (it stays a skin above each), no contact
/// with a step is ever reported, although the straight line from where it was to where
/// it is cuts each step's corner. A sensor gate across the stairs, which it walks
/// through, reports its contact: events are reported on this walk.
fn climbs_stairs_without_false_contacts<V: Dim>() {
    climbs_stairs::<V>(Figure::Box);
}

/// [`climbs_stairs_without_false_contacts`] with a capsule (its rounded bottom stands on
/// each step's edge on the way up).
fn capsule_climbs_stairs_without_false_contacts<V: Dim>() {
    climbs_stairs::<V>(Figure::Capsule);
}

fn climbs_stairs<V: Dim>(figure: Figure) {
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
    let character = spawn_figure::<V>(&mut app, figure, 0.0, 0.51, (Walk(1.9),));
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
        "{figure:?}: did not climb the stairs: bottom {top}"
    );
    assert_eq!(starts, 0, "{figure:?}: contacts with the steps reported");
    assert_eq!(
        (gate_starts, gate_ends),
        (1, 1),
        "{figure:?}: the walk through the gate: (starts, ends)"
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
    drops_through::<V>(Figure::Box);
}

/// [`drops_through_one_way_platforms`] with a capsule.
fn capsule_drops_through_one_way_platforms<V: Dim>() {
    drops_through::<V>(Figure::Capsule);
}

fn drops_through<V: Dim>(figure: Figure) {
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
    let character = spawn_figure::<V>(&mut app, figure, 0.0, 3.0, ());
    for _ in 0..90 {
        app.update();
    }
    assert!(
        (bottom::<V>(&app, character) - 2.0).abs() < 0.021,
        "{figure:?}: not on the platform"
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
        "{figure:?}: did not drop to the floor"
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
        "{figure:?}: jumped through and fell back"
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

/// The case of the report at 64 ticks a second: a ball character (radius 0.299) walks at
/// 10.435 units/s over a box 0.125 high on a floor. Whenever it reads as grounded, its
/// ground is at most twice the skin away (its gap, measured from the shapes).
fn grounded_at_a_box_edge<V: Dim>() {
    grounded_at_the_edge::<V>(Body::Ball(BoundingSphere::new(0.299)));
}

/// [`grounded_at_a_box_edge`] with a capsule of the ball's radius, 0.4 taller.
fn capsule_grounded_at_a_box_edge<V: Dim>() {
    grounded_at_the_edge::<V>(Body::Capsule(Capsule::new(0.2, 0.299)));
}

fn grounded_at_the_edge<V: Dim>(body: Body<V>) {
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
    let half_height = match body {
        Body::Capsule(c) => c.half_length + c.radius,
        _ => 0.299,
    };
    let mut e = app.world_mut().spawn((
        Transform::from_xyz(-1.0, half_height + 0.01, 0.0),
        CharacterController::<V>::new(v(0.0, 1.0, 0.0)),
    ));
    body.insert(&mut e);
    let character = e.id();
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
        let gap = signed_gap(&rb_of::<V>(&app, character), &rb_of::<V>(&app, ground));
        assert!(
            gap <= 2.0 * f64::from(skin) + 1e-5,
            "{body:?} tick {tick}: grounded on {ground} with a gap of {gap}"
        );
    }
    assert!(grounded > 60, "{body:?}: grounded at only {grounded} ticks");
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
        let me = rb_of::<V>(&app, character);
        for &e in state.touching() {
            let gap = signed_gap(&me, &rb_of::<V>(&app, e));
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
        if signed_gap(&me, &rb_of::<V>(&app, wall)) <= skin + 1e-5 {
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
