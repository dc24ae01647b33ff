//! Schedules: the pipeline in `Update` and `FixedUpdate`, moves in the same tick, children following their parents.

use super::*;

// ---------------------------------------------------------------------------------------
// Schedules

/// Item 4: with a fixed tick every third frame, an entity despawned in `Update` on a frame
/// without a fixed tick still ends its pair exactly once (read at the next fixed tick).
pub(crate) fn despawn_on_frame_without_fixed_tick<V: Dim>() {
    #[derive(Resource)]
    struct Quiet {
        target: Entity,
        last_tick: Option<u32>,
        done_at: Option<u32>,
    }
    fn despawn_when_quiet(mut q: ResMut<Quiet>, rec: Res<Rec>, mut commands: Commands) {
        if q.done_at.is_none() && rec.tick >= 2 && q.last_tick == Some(rec.tick) {
            commands.entity(q.target).despawn();
            q.done_at = Some(rec.tick);
        }
        q.last_tick = Some(rec.tick);
    }
    for despawn_a in [true, false] {
        let mut app = build_app::<V>(Sched::Fixed, 20.0, CollisionConfig::default());
        let a = app.spawn_id((Transform::default(), Aabb::new(V::splat(0.5))));
        let b = app.spawn_id((
            Transform::from_xyz(0.5, 0.5, 0.0),
            BoundingSphere::<V>::new(0.5),
        ));
        let target = if despawn_a { a } else { b };
        app.insert_resource(Quiet {
            target,
            last_tick: None,
            done_at: None,
        })
        .add_systems(Update, despawn_when_quiet);
        run_ticks(&mut app, 5);
        let done_at = app.world().resource::<Quiet>().done_at.expect("despawned");
        let events = finish::<V>(&app);
        assert_eq!(events.len(), 2, "{events:#?}");
        assert_eq!(events[0].tick, 0);
        assert_eq!(events[1].pair(), key(a, b));
        assert_eq!(events[1].reason(), Some(EndReason::Removed));
        // Despawned after tick `done_at - 1`, read before tick `done_at`.
        assert_eq!(events[1].tick, done_at);
        assert_eq!(app.world().resource::<AabbTree<V>>().tree().len(), 1);
    }
}

/// Item 4: an entity moved in `FixedUpdate` is tested where it is now, not where
/// `GlobalTransform` (propagated in `PostUpdate`) last put it.
pub(crate) fn moved_in_fixed_update_same_tick<V: Dim>() {
    let mut app = build_app::<V>(Sched::Fixed, 20.0, CollisionConfig::default());
    app.world_mut()
        .spawn((Transform::default(), Aabb::new(V::splat(0.5))));
    let mover = app.spawn_id((Transform::from_xyz(5.0, 0.0, 0.0), Aabb::new(V::splat(0.5))));
    let xs = [5.0, 5.0, 5.0, 0.8, 0.8, 0.8, 5.0, 5.0, 5.0];
    app.insert_resource(Script {
        entities: vec![mover],
        frames: xs
            .iter()
            .map(|&x| vec![Transform::from_xyz(x, 0.0, 0.0)])
            .collect(),
    });
    run_ticks(&mut app, xs.len() as u32);
    let events = finish::<V>(&app);
    let ticks: Vec<_> = events.iter().map(|e| (e.tick, e.reason())).collect();
    assert_eq!(ticks, vec![(3, None), (6, Some(EndReason::Separated))]);
    // Swept from 5 to 0.8 within tick 3: the faces at 4.5 and 0.5 meet at 4 / 4.2.
    assert_close(events[0].toi().unwrap(), 4.0 / 4.2, 1e-4, "time of impact");
}

/// Item 4: a child (rotated 90° and scaled 2 by its parent) whose parent moves in
/// `FixedUpdate` is tested at its new world place in the same tick.
pub(crate) fn child_follows_parent<V: Dim>() {
    let mut app = build_app::<V>(Sched::Fixed, 20.0, CollisionConfig::default());
    app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
    let wall = app.spawn_id((Transform::default(), Aabb::new(V::splat(0.5))));
    let parent_transform = |x: f32| {
        Transform::from_xyz(x, -2.0, 0.0)
            .with_rotation(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2))
            .with_scale(Vec3::splat(2.0))
    };
    let parent = app.spawn_id(parent_transform(-5.0));
    // Local center (1, 0, 0) -> world (x, 0, 0); local half (0.5, 0.25, 0.5) scaled by 2
    // and turned 90° about z -> world half (0.5, 1, 1).
    let child = app.spawn_id((
        Transform::from_xyz(1.0, 0.0, 0.0),
        Aabb::new(v::<V>(0.5, 0.25, 0.5)),
        ChildOf(parent),
    ));
    // Touching while |x| <= 0.5 + 0.5.
    let xs = [-5.0, -3.0, -1.5, -0.9, 0.0, 0.9, 1.5, 3.0];
    app.insert_resource(Script {
        entities: vec![parent],
        frames: xs.iter().map(|&x| vec![parent_transform(x)]).collect(),
    });
    run_ticks(&mut app, xs.len() as u32);
    let events = finish::<V>(&app);
    let ticks: Vec<_> = events
        .iter()
        .map(|e| (e.tick, e.pair(), e.reason()))
        .collect();
    assert_eq!(
        ticks,
        vec![
            (3, key(wall, child), None),
            (6, key(wall, child), Some(EndReason::Separated))
        ]
    );
    let world_box = app
        .world()
        .get::<TrackedCollider<V>>(child)
        .unwrap()
        .world_aabb();
    let expected =
        BoundingBox::from_center_half_extents(v::<V>(3.0, 0.0, 0.0), v::<V>(0.5, 1.0, 1.0));
    let error = (world_box.min - expected.min)
        .abs()
        .max((world_box.max - expected.max).abs());
    assert!(error.max_element() < 1e-5, "{world_box:?} vs {expected:?}");
}

both_dims!(
    despawn_on_frame_without_fixed_tick,
    moved_in_fixed_update_same_tick,
    child_follows_parent,
);
