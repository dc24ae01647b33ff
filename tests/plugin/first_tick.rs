//! No tunnelling from the first tick: a collider's first motion is swept from where it was
//! spawned, the motion after a `Teleported` jump from the jump's destination, in the
//! default `FixedPostUpdate` (several fixed steps in a frame, none in some frames) and in
//! `Update`, moved by `VelocityPlugin` or by a system of the game's. Each tick is checked
//! against the swept oracle on the positions the bullet actually took.

use super::*;

/// A velocity a game system applies itself (no `Velocity`: the plugin does not know the
/// motion in advance), in `FixedUpdate` or, for the `Update` schedule, in `Update`
/// before the pipeline.
#[derive(Component, Clone, Copy)]
pub(crate) struct Push(pub(crate) Vec3);

fn push(time: Res<Time>, mut q: Query<(&mut Transform, &Push)>) {
    let dt = time.delta_secs();
    for (mut transform, push) in &mut q {
        transform.translation += push.0 * dt;
    }
}

/// The bullet's shape at the end of each tick, recorded inside the schedule (a frame may
/// run several fixed steps, or none).
#[derive(Resource)]
struct Trail<V: Dim> {
    bullet: Entity,
    shapes: Vec<(u32, OShape)>,
    _dim: PhantomData<V>,
}

/// What the trail reads of the bullet.
type ShapeData<V> = (
    &'static Transform,
    Option<&'static Aabb<V>>,
    Option<&'static BoundingSphere<V>>,
);

fn record_trail<V: Dim>(rec: Res<Rec>, trail: Option<ResMut<Trail<V>>>, q: Query<ShapeData<V>>) {
    let Some(mut trail) = trail else { return };
    if let Ok((t, a, s)) = q.get(trail.bullet) {
        let shape = oracle_shape::<V>(t, a, s, None).expect("valid");
        // `collect_post` has counted the tick already.
        trail.shapes.push((rec.tick - 1, shape));
    }
}

/// What moves the bullet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Mover {
    /// `Velocity` integrated by `VelocityPlugin` in `FixedUpdate`.
    VelocityPlugin,
    /// A game system in `FixedUpdate` (or `Update` for [`Sched::Update`]).
    System,
}

/// An app with the plugin in `sched` at `hz` fixed steps a second and the bullet's mover.
fn app_with<V: Dim>(sched: Sched, hz: f64, mover: Mover) -> App {
    let mut app = build_app::<V>(sched, hz, CollisionConfig::default());
    app.add_systems(sched.label(), record_trail::<V>.after(collect_post::<V>));
    match (mover, sched) {
        (Mover::VelocityPlugin, _) => {
            app.add_plugins(VelocityPlugin::<V>::default());
        }
        (Mover::System, Sched::Fixed) => {
            app.add_systems(FixedUpdate, push);
        }
        (Mover::System, Sched::Update) => {
            app.add_systems(Update, push.before(CollisionSystems::Prepare));
        }
    }
    app
}

/// Gives `e` its motion: a `Velocity` for `VelocityPlugin`, a [`Push`] otherwise.
fn set_motion<V: Dim>(app: &mut App, e: Entity, mover: Mover, velocity: Vec3) {
    let mut entity = app.world_mut().entity_mut(e);
    match mover {
        Mover::VelocityPlugin => entity.insert(Velocity(V::truncate_from_3d(velocity))),
        Mover::System => entity.insert(Push(velocity)),
    };
}

/// The oracle shape of a root collider now.
fn shape_of<V: Dim>(app: &App, e: Entity) -> OShape {
    let world = app.world();
    oracle_shape::<V>(
        world.get::<Transform>(e).expect("a transform"),
        world.get::<Aabb<V>>(e),
        world.get::<BoundingSphere<V>>(e),
        None,
    )
    .expect("valid")
}

/// Runs ticks until `bullet` is past `x_end`, and checks its pair with `target` against
/// the swept oracle on the shapes it took at the end of each tick: the first tick whose
/// motion (from `start`, then from each tick's end) reaches the target starts the pair at
/// the oracle's time of impact.
fn follow<V: Dim>(
    app: &mut App,
    bullet: Entity,
    start: OShape,
    target: Entity,
    x_end: f32,
    what: &str,
) {
    let wall = shape_of::<V>(app, target);
    app.insert_resource(Trail::<V> {
        bullet,
        shapes: Vec::new(),
        _dim: PhantomData,
    });
    for _ in 0..400 {
        run_ticks(app, 1);
        if shape_of::<V>(app, bullet).min_x() > x_end {
            break;
        }
    }
    let trail = app.world_mut().remove_resource::<Trail<V>>().unwrap();
    let mut from = start;
    let mut expected = None;
    let mut was_touching = oracle_overlap(&from, &wall);
    for (tick, to) in trail.shapes {
        let d = shape_center(&to) - shape_center(&from);
        if expected.is_none()
            && !was_touching
            && let Some(t) = oracle_sweep(&from, d, &wall, Vec3::ZERO)
        {
            expected = Some((tick, t));
        }
        was_touching = oracle_overlap(&to, &wall);
        from = to;
    }
    let (tick, toi) = expected.unwrap_or_else(|| panic!("{what}: the oracle sees no hit"));
    let events = finish::<V>(app);
    let starts: Vec<&Ev> = events
        .iter()
        .filter(|e| e.pair() == key(bullet, target) && e.toi().is_some())
        .collect();
    assert_eq!(starts.len(), 1, "{what}: one start, {events:#?}");
    assert_eq!(starts[0].tick, tick, "{what}: the tick of the hit");
    assert_close(starts[0].toi().unwrap(), toi, 2e-3, what);
}

/// The lowest x of a shape.
trait MinX {
    fn min_x(&self) -> f32;
}

impl MinX for OShape {
    fn min_x(&self) -> f32 {
        match *self {
            OShape::Box { min, .. } => min.x,
            OShape::Ball { center, radius } => center.x - radius,
            OShape::Rounded { min, radius, .. } => min.x - radius,
        }
    }
}

/// One case of the bullet tests: where the pipeline runs, how fast the fixed schedule
/// ticks, what moves the bullet, how fast, and whether it is a ball.
#[derive(Clone, Copy, Debug)]
struct Case {
    sched: Sched,
    hz: f64,
    mover: Mover,
    speed: f32,
    ball: bool,
}

/// Every case: the default `FixedPostUpdate` at 30 Hz (no fixed step in some frames),
/// 60 Hz and 144 Hz (several in one frame), and `Update`; both movers (only the game's
/// system in `Update`); speeds of 0.4 to 30 units a tick; boxes and balls.
fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (sched, hz) in [
        (Sched::Fixed, 30.0),
        (Sched::Fixed, 60.0),
        (Sched::Fixed, 144.0),
        (Sched::Update, 60.0),
    ] {
        for mover in [Mover::VelocityPlugin, Mover::System] {
            if sched == Sched::Update && mover == Mover::VelocityPlugin {
                continue;
            }
            for (i, speed) in [60.0f32, 200.0, 900.0].into_iter().enumerate() {
                let ball = i % 2 == 1;
                cases.push(Case {
                    sched,
                    hz,
                    mover,
                    speed,
                    ball,
                });
            }
        }
    }
    cases
}

/// The app of a case with a static wall 1 unit thick at the origin.
fn bullet_app<V: Dim>(case: Case) -> (App, Entity) {
    let mut app = app_with::<V>(case.sched, case.hz, case.mover);
    let wall = spawn_wall::<V>(&mut app, 0.0);
    (app, wall)
}

/// A static wall 1 unit thick and 6 high (and deep) at `x`.
fn spawn_wall<V: Dim>(app: &mut App, x: f32) -> Entity {
    app.spawn_id((
        Transform::from_xyz(x, 0.0, 0.0),
        Aabb::new(v::<V>(0.5, 3.0, 3.0)),
        Static,
    ))
}

/// A bullet of half size 0.25 at `(x, 0.3)`: a box or a ball.
fn spawn_bullet<V: Dim>(app: &mut App, x: f32, ball: bool) -> Entity {
    let mut bullet = app.world_mut().spawn(Transform::from_xyz(x, 0.3, 0.0));
    if ball {
        bullet.insert(BoundingSphere::<V>::new(0.25));
    } else {
        bullet.insert(Aabb::new(V::splat(0.25)));
    }
    bullet.id()
}

/// Asserts that the bullet's tracked shape is centered at `(x, 0.3)`.
fn assert_tracked_at<V: Dim>(app: &App, bullet: Entity, x: f32, what: &str) {
    let tracked = app.world().get::<TrackedCollider<V>>(bullet).unwrap();
    assert_eq!(
        tracked.world_shape().center().extend_to_3d(),
        flat::<V>(Vec3::new(x, 0.3, 0.0)),
        "{what}: the tracked shape"
    );
}

/// A bullet spawned (from outside the pipeline, as an `Update` system's commands would)
/// two units before a static wall, in every [`Case`]: its first tick sweeps from the
/// spawn point, so the wall is hit, at the oracle's time.
pub(crate) fn spawned_bullets_are_swept<V: Dim>() {
    for case in cases() {
        let what = format!("{case:?}");
        let (mut app, wall) = bullet_app::<V>(case);
        run_ticks(&mut app, 2);
        let bullet = spawn_bullet::<V>(&mut app, -2.0, case.ball);
        // Before its first tick, the tracked shape is where it was spawned.
        assert_tracked_at::<V>(&app, bullet, -2.0, &what);
        set_motion::<V>(
            &mut app,
            bullet,
            case.mover,
            Vec3::new(case.speed, 0.0, 0.0),
        );
        let start = shape_of::<V>(&app, bullet);
        follow::<V>(&mut app, bullet, start, wall, 3.0, &what);
    }
}

/// A pooled bullet parked far away is reused, in every [`Case`]: its transform is set at
/// the gun, with `Teleported`, and it is moved on in the same frame. The jump crosses a
/// wall (no event with it), the motion after the jump crosses another (hit at the
/// oracle's time).
pub(crate) fn teleported_bullets_are_swept<V: Dim>() {
    for case in cases() {
        let what = format!("{case:?}");
        let (mut app, wall) = bullet_app::<V>(case);
        let jumped = spawn_wall::<V>(&mut app, -20.0);
        let bullet = spawn_bullet::<V>(&mut app, -40.0, case.ball);
        run_ticks(&mut app, 3);
        // The gun fires: the bullet at the muzzle, then moving.
        set_translation(&mut app, bullet, Vec3::new(-2.0, 0.3, 0.0));
        app.world_mut().entity_mut(bullet).insert(Teleported);
        assert_tracked_at::<V>(&app, bullet, -2.0, &what);
        set_motion::<V>(
            &mut app,
            bullet,
            case.mover,
            Vec3::new(case.speed, 0.0, 0.0),
        );
        let start = shape_of::<V>(&app, bullet);
        follow::<V>(&mut app, bullet, start, wall, 3.0, &what);
        let events = finish::<V>(&app);
        assert!(
            events.iter().all(|e| e.pair() != key(bullet, jumped)),
            "{what}: the jump hit the wall it crossed: {events:#?}"
        );
    }
}

/// Children: a collider spawned under a parent that moves in the same frame starts its
/// first sweep at its place under the parent; a parent teleported and moved on in the
/// same frame sweeps its child from the jump's destination.
pub(crate) fn children_are_swept_from_their_start<V: Dim>() {
    for hz in [30.0, 60.0] {
        // A child spawned under a parent that starts moving fast in the same frame.
        let mut app = app_with::<V>(Sched::Fixed, hz, Mover::System);
        // The brute-force check of the recorder handles roots only.
        app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
        let wall = spawn_wall::<V>(&mut app, 0.0);
        let parent = app.spawn_id(Transform::from_xyz(-2.5, 0.0, 0.0));
        run_ticks(&mut app, 1);
        let child = app.spawn_id((
            Transform::from_xyz(0.5, 0.3, 0.0),
            Aabb::new(V::splat(0.25)),
            ChildOf(parent),
        ));
        assert_tracked_at::<V>(&app, child, -2.0, "the child's start counts its parent");
        app.world_mut()
            .entity_mut(parent)
            .insert(Push(Vec3::new(900.0, 0.0, 0.0)));
        run_ticks(&mut app, 1);
        let events = finish::<V>(&app);
        let dx = 900.0 / hz as f32;
        // The child's front face at -1.75 meets the wall's at -0.5.
        let hit: Vec<&Ev> = events
            .iter()
            .filter(|e| e.pair() == key(child, wall))
            .collect();
        assert_eq!(hit.len(), 2, "{hz} Hz: start and pass-through, {events:#?}");
        assert_close(hit[0].toi().unwrap(), 1.25 / dx, 2e-3, "the child's hit");
        assert_eq!(hit[1].reason(), Some(EndReason::PassedThrough));

        // A parent teleported to -2.5 (its child at -2) and pushed on in the same frame.
        let mut app = app_with::<V>(Sched::Fixed, hz, Mover::System);
        // The brute-force check of the recorder handles roots only.
        app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
        let wall = spawn_wall::<V>(&mut app, 0.0);
        let parent = app.spawn_id(Transform::from_xyz(-30.0, 0.0, 0.0));
        let child = app.spawn_id((
            Transform::from_xyz(0.5, 0.3, 0.0),
            Aabb::new(V::splat(0.25)),
            ChildOf(parent),
        ));
        run_ticks(&mut app, 2);
        set_translation(&mut app, parent, Vec3::new(-2.5, 0.0, 0.0));
        app.world_mut()
            .entity_mut(parent)
            .insert((Teleported, Push(Vec3::new(900.0, 0.0, 0.0))));
        run_ticks(&mut app, 1);
        let events = finish::<V>(&app);
        let hit: Vec<&Ev> = events
            .iter()
            .filter(|e| e.pair() == key(child, wall))
            .collect();
        assert_eq!(hit.len(), 2, "{hz} Hz: start and pass-through, {events:#?}");
        assert_close(hit[0].toi().unwrap(), 1.25 / dx, 2e-3, "the child's hit");
    }
}

/// The bullet's motions as recorded by an observer on it.
#[derive(Resource, Default)]
struct BulletLog(Vec<(Entity, f32)>);

/// A bullet through two walls and an enemy behind them in one tick, spawned so that the
/// pairs' order puts the enemy first: the messages come earliest first, and the bullet's
/// own observer sees its first wall first. Its observer despawns it on that first hit (with
/// `try_despawn`): it still sees the tick's later hits, in time order, and the bullet is
/// gone after the tick.
pub(crate) fn hits_in_time_order<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    app.init_resource::<BulletLog>();
    // Spawned in an order that puts the enemy first in the pairs' order.
    let enemy = app.spawn_id((Transform::from_xyz(4.0, 0.0, 0.0), Aabb::new(V::splat(0.5))));
    let thin_wall = |app: &mut App, x: f32| {
        app.spawn_id((
            Transform::from_xyz(x, 0.0, 0.0),
            Aabb::new(v::<V>(0.1, 3.0, 3.0)),
            Static,
        ))
    };
    let far_wall = thin_wall(&mut app, 2.0);
    let near_wall = thin_wall(&mut app, 0.0);
    let bullet = app
        .world_mut()
        .spawn((
            Transform::from_xyz(-3.0, 0.0, 0.0),
            BoundingSphere::<V>::new(0.2),
        ))
        .observe(
            |hit: On<CollisionStarted<V>>, mut log: ResMut<BulletLog>, mut commands: Commands| {
                if log.0.is_empty() {
                    commands.entity(hit.entity).try_despawn();
                }
                log.0.push((hit.other, hit.time_of_impact));
            },
        )
        .id();
    run_ticks(&mut app, 1);
    set_translation(&mut app, bullet, Vec3::new(7.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let log = &app.world().resource::<BulletLog>().0;
    let order: Vec<Entity> = log.iter().map(|h| h.0).collect();
    assert_eq!(order, vec![near_wall, far_wall, enemy], "{log:?}");
    // Front at -2.8 over 10 units: the near wall's face at -0.1 at 0.27, the far wall's at
    // 0.47, the enemy's at 0.63.
    for ((_, toi), want) in log.iter().zip([0.27, 0.47, 0.63]) {
        assert_close(*toi, want, 1e-3, "time of impact");
    }
    assert!(app.world().get_entity(bullet).is_err(), "despawned");
    let events = finish::<V>(&app);
    let starts: Vec<f32> = events.iter().filter_map(Ev::toi).collect();
    assert_eq!(starts.len(), 3);
    assert!(
        starts.is_sorted_by(|a, b| a <= b),
        "messages earliest first: {events:#?}"
    );
}

/// The case: a pair that swaps its `Static` side on a tick that also changes
/// `CollisionConfig` (which processes every collider) keeps its contact without events,
/// in both `StaticChangeDetection` modes, whatever the spawn order; when the newly moving side
/// also moves away, the pair ends once (`Separated`).
pub(crate) fn static_swap_on_config_change<V: Dim>() {
    for mode in [StaticChangeDetection::Scan, StaticChangeDetection::OnInsert] {
        for moves_away in [false, true] {
            for spacer_first in [false, true] {
                let what = format!("{mode:?}, moves away {moves_away}, spacer {spacer_first}");
                let config = CollisionConfig {
                    static_changes: mode,
                    ..default()
                };
                let mut app = build_app::<V>(Sched::Update, 60.0, config);
                if spacer_first {
                    app.world_mut().spawn(Transform::default());
                }
                let s = app.spawn_id((Transform::default(), Aabb::new(V::splat(0.5)), Static));
                let m = app.spawn_id((
                    Transform::from_xyz(0.6, 0.0, 0.0),
                    BoundingSphere::<V>::new(0.5),
                    CollidingEntities::default(),
                ));
                run_ticks(&mut app, 1);
                app.world_mut().entity_mut(m).insert(Static);
                app.world_mut().entity_mut(s).remove::<Static>();
                if moves_away {
                    app.world_mut()
                        .entity_mut(s)
                        .insert(Transform::from_xyz(-5.0, 0.0, 0.0));
                }
                app.world_mut().resource_mut::<CollisionConfig>().margin = 0.08;
                run_ticks(&mut app, 1);
                let state = app.world().resource::<AabbTree<V>>();
                assert_eq!(state.is_touching(s, m), !moves_away, "{what}");
                let contacts = app.world().get::<CollidingEntities>(m).unwrap();
                assert_eq!(contacts.contains(s), !moves_away, "{what}");
                app.world_mut().entity_mut(s).despawn();
                run_ticks(&mut app, 1);
                let events = finish::<V>(&app);
                let log = pair_log(&events, s, m);
                let end = if moves_away {
                    (1, Some(EndReason::Separated))
                } else {
                    (2, Some(EndReason::Removed))
                };
                assert_eq!(log, vec![(0, None), end], "{what}: {events:#?}");
            }
        }
    }
}

/// A disabled parent that moves carries its enabled child colliders: their tracked
/// shapes follow its transform and their contacts start.
pub(crate) fn disabled_parent_moves_its_children<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
    let wall = app.spawn_id((
        Transform::from_xyz(5.0, 0.0, 0.0),
        Aabb::new(V::splat(0.5)),
        Static,
    ));
    let parent = app.spawn_id((Transform::default(), Disabled));
    let child = app.spawn_id((
        Transform::from_xyz(0.0, 1.0, 0.0),
        Aabb::new(V::splat(0.25)),
        ChildOf(parent),
    ));
    run_ticks(&mut app, 1);
    app.world_mut()
        .entity_mut(parent)
        .insert(Transform::from_xyz(5.0, -1.0, 0.0));
    run_ticks(&mut app, 1);
    let tracked = app.world().get::<TrackedCollider<V>>(child).unwrap();
    assert_eq!(
        tracked.world_shape().center().extend_to_3d(),
        flat::<V>(Vec3::new(5.0, 0.0, 0.0))
    );
    let events = finish::<V>(&app);
    assert_eq!(
        pair_log(&events, child, wall),
        vec![(1, None)],
        "{events:#?}"
    );
}

/// `NotIntegrated` keeps `VelocityPlugin` off an entity; others still move.
pub(crate) fn not_integrated_stays<V: Dim>() {
    let mut app = app_with::<V>(Sched::Fixed, 60.0, Mover::VelocityPlugin);
    let moved = app.spawn_id((
        Transform::default(),
        Aabb::new(V::splat(0.5)),
        Velocity(v::<V>(6.0, 0.0, 0.0)),
    ));
    let kept = app.spawn_id((
        Transform::default(),
        Aabb::new(V::splat(0.5)),
        Velocity(v::<V>(6.0, 0.0, 0.0)),
        NotIntegrated,
    ));
    run_ticks(&mut app, 6);
    let x = |e| app.world().get::<Transform>(e).unwrap().translation.x;
    assert_close(x(moved), 0.6, 1e-4, "integrated");
    assert_eq!(x(kept), 0.0);
}

both_dims!(
    spawned_bullets_are_swept,
    teleported_bullets_are_swept,
    children_are_swept_from_their_start,
    hits_in_time_order,
    static_swap_on_config_change,
    disabled_parent_moves_its_children,
    not_integrated_stays,
);
