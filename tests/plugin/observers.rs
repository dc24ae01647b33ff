//! Observers: entity events, what each entity hears, despawns between the narrow phase and the events.

use super::*;

// ---------------------------------------------------------------------------------------
// Observers

#[derive(Resource, Default)]
pub(crate) struct ObsLog(pub(crate) Vec<(&'static str, bool, Entity, Entity, Vec3)>);

/// The test app with [`ObsLog`] and the global observers that log every start and end
/// (as "global").
fn logged_app<V: Dim>() -> App {
    let mut app = update_app::<V>(Sched::Update);
    app.init_resource::<ObsLog>()
        .add_observer(|ev: On<CollisionStarted<V>>, mut log: ResMut<ObsLog>| {
            log.0.push((
                "global",
                true,
                ev.entity,
                ev.other,
                ev.normal.extend_to_3d(),
            ));
        })
        .add_observer(|ev: On<CollisionEnded>, mut log: ResMut<ObsLog>| {
            log.0
                .push(("global", false, ev.entity, ev.other, Vec3::ZERO));
        });
    app
}

pub(crate) fn observers<V: Dim>() {
    let mut app = logged_app::<V>();
    let mut spawn_observed = |name: &'static str, x: f32| {
        app.world_mut()
            .spawn((Transform::from_xyz(x, 0.0, 0.0), Aabb::new(V::splat(0.5))))
            .observe(
                move |ev: On<CollisionStarted<V>>, mut log: ResMut<ObsLog>| {
                    log.0
                        .push((name, true, ev.entity, ev.other, ev.normal.extend_to_3d()));
                },
            )
            .observe(move |ev: On<CollisionEnded>, mut log: ResMut<ObsLog>| {
                log.0.push((name, false, ev.entity, ev.other, Vec3::ZERO));
            })
            .id()
    };
    let a = spawn_observed("a", 0.0);
    let b = spawn_observed("b", 0.8);
    let take = |app: &mut App| {
        let mut log = std::mem::take(&mut app.world_mut().resource_mut::<ObsLog>().0);
        log.sort_by_key(|(name, started, e, o, _)| (*name, *started, *e, *o));
        log
    };

    run_ticks(&mut app, 1);
    let log = take(&mut app);
    let seen: Vec<_> = log.iter().map(|&(n, s, e, o, _)| (n, s, e, o)).collect();
    let mut expected = vec![
        ("a", true, a, b),
        ("b", true, b, a),
        ("global", true, a, b),
        ("global", true, b, a),
    ];
    expected.sort();
    assert_eq!(seen, expected);
    // The normal points from the observed entity towards the other: +x for a.
    assert!((log[0].4 - Vec3::X).length() < 1e-5, "{log:?}");
    assert!((log[1].4 + Vec3::X).length() < 1e-5, "{log:?}");

    set_translation(&mut app, b, Vec3::new(5.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let seen: Vec<_> = take(&mut app)
        .iter()
        .map(|&(n, s, e, o, _)| (n, s, e, o))
        .collect();
    let mut expected = vec![
        ("a", false, a, b),
        ("b", false, b, a),
        ("global", false, a, b),
        ("global", false, b, a),
    ];
    expected.sort();
    assert_eq!(seen, expected);

    // Touching again, then `a` is despawned: `b` hears of it, `a` no longer exists.
    set_translation(&mut app, b, Vec3::new(0.8, 0.0, 0.0));
    run_ticks(&mut app, 1);
    take(&mut app);
    app.world_mut().despawn(a);
    run_ticks(&mut app, 1);
    let seen: Vec<_> = take(&mut app)
        .iter()
        .map(|&(n, s, e, o, _)| (n, s, e, o))
        .collect();
    assert_eq!(seen, vec![("b", false, b, a), ("global", false, b, a)]);
    finish::<V>(&app);
}

/// A user system ordered between the narrow phase and the events despawns an entity whose
/// pair started this tick: the partner's observers see the start, then the end, never an
/// end before its start.
pub(crate) fn despawn_between_narrow_phase_and_events<V: Dim>() {
    #[derive(Resource)]
    struct Doomed(Entity, u32);
    fn despawn_doomed(doomed: Res<Doomed>, rec: Res<Rec>, mut commands: Commands) {
        if rec.tick == doomed.1 {
            commands.entity(doomed.0).despawn();
        }
    }
    for pass_through in [false, true] {
        let mut app = logged_app::<V>();
        let a = app.spawn_id((
            Transform::from_xyz(-5.0, 0.0, 0.0),
            Aabb::new(V::splat(0.5)),
        ));
        let b = app.spawn_id((Transform::from_xyz(0.0, 0.0, 0.0), Aabb::new(V::splat(0.5))));
        app.insert_resource(Doomed(a, 1)).add_systems(
            Update,
            despawn_doomed
                .after(CollisionSystems::NarrowPhase)
                .before(CollisionSystems::Events),
        );
        run_ticks(&mut app, 1);
        let to = if pass_through { 5.0 } else { -0.8 };
        set_translation(&mut app, a, Vec3::new(to, 0.0, 0.0));
        run_ticks(&mut app, 2);
        let events = finish::<V>(&app);
        assert_eq!(events.len(), 2, "{events:#?}");
        let log: Vec<_> = app
            .world()
            .resource::<ObsLog>()
            .0
            .iter()
            .map(|&(_, started, e, o, _)| (started, e, o))
            .collect();
        // `a` is gone by the time the events are triggered: only `b` hears.
        assert_eq!(
            log,
            vec![(true, b, a), (false, b, a)],
            "pass-through {pass_through}"
        );
    }
}

both_dims!(observers, despawn_between_narrow_phase_and_events,);
