//! Idle colliders: the prepare stage skips what did not change.

use super::*;

// ---------------------------------------------------------------------------------------
// Idle colliders: the prepare stage skips what did not change

/// A scene where most bodies never move and a few move in bursts, each mover on its own
/// clock that advances only in the ticks it moves (about 60% of them), so movers stop and
/// start again. Movers only translate (for the swept oracle); idle bodies keep their
/// random rotation and scale.
pub(crate) struct IdleScene<V: Dim> {
    pub(crate) bodies: Vec<BodySpec<V>>,
    pub(crate) movers: usize,
    /// Every body's transform at each tick.
    pub(crate) frames: Vec<Vec<Transform>>,
    /// The movers that move before each tick (index into `bodies`), with their transform.
    pub(crate) writes: Vec<Vec<(usize, Transform)>>,
}

pub(crate) fn idle_scene<V: Dim>(seed: u64, n: usize, movers: usize, ticks: usize) -> IdleScene<V> {
    let mut bodies = random_scene::<V>(seed, n, 1).bodies;
    let mut rng = Rng::new(seed ^ 0x1D1E);
    for (i, b) in bodies.iter_mut().enumerate() {
        if i < movers {
            b.spin = 0.0;
            // Two fast movers (up to several units a tick), the others slower.
            let fast = i < 2;
            b.amplitude = rng.vec3(2.0, if fast { 9.0 } else { 6.0 });
            b.frequency = rng.vec3(0.05, if fast { 0.6 } else { 0.3 });
        } else {
            b.amplitude = Vec3::ZERO;
            b.spin = 0.0;
        }
    }
    let mut clocks = vec![0; movers];
    let mut frames = Vec::with_capacity(ticks);
    let mut writes = Vec::with_capacity(ticks);
    for tick in 0..ticks {
        let mut w = Vec::new();
        if tick > 0 {
            for (m, clock) in clocks.iter_mut().enumerate() {
                if rng.chance(0.6) {
                    *clock += 1;
                    w.push((m, bodies[m].transform(*clock)));
                }
            }
        }
        frames.push(
            bodies
                .iter()
                .enumerate()
                .map(|(i, b)| b.transform(clocks.get(i).copied().unwrap_or(0)))
                .collect(),
        );
        writes.push(w);
    }
    IdleScene {
        bodies,
        movers,
        frames,
        writes,
    }
}

/// Item (a): most colliders idle (never written), a few moving in bursts. With sweeps off
/// the events are those of the overlap oracle; with sweeps on those of the swept oracle,
/// so a mover that stops is not swept again over its last move. Each tick processes
/// exactly the movers written before it, plus (sweeps on) those that moved at their last
/// processing and stand still now; every idle collider is skipped.
pub(crate) fn idle_scene_matches_oracle<V: Dim>() {
    for seed in [31, 32] {
        let ticks = 200;
        let scene = idle_scene::<V>(seed, 60, 6, ticks);
        let layers: Vec<_> = scene.bodies.iter().map(|b| b.layers).collect();
        let shapes = frame_shapes(&scene.bodies, &scene.frames);
        for swept in [false, true] {
            let what = format!("seed {seed}, swept {swept}");
            let config = CollisionConfig { swept, ..default() };
            let mut app = build_app::<V>(Sched::Update, 60.0, config);
            let world = app.world_mut();
            let entities = spawn_bodies(world, &scene.bodies, &scene.frames[0]);
            world.insert_resource(SparseScript {
                writes: scene
                    .writes
                    .iter()
                    .map(|w| w.iter().map(|&(i, t)| (entities[i], t)).collect())
                    .collect(),
            });
            run_ticks(&mut app, ticks as u32);
            let events = finish::<V>(&app);
            if swept {
                let (_, normals) = assert_swept_oracle(&what, &shapes, &layers, &entities, &events);
                assert!(normals >= 5, "{what}: too few contact normals");
                let inside = events.iter().filter(|e| e.toi().is_some_and(|t| t > 0.0));
                assert!(inside.count() >= 5, "{what}: too few swept starts");
            } else {
                let oracle: Vec<Pairs> = shapes
                    .iter()
                    .map(|frame| {
                        let world: Vec<_> = entities
                            .iter()
                            .zip(frame)
                            .zip(&layers)
                            .map(|((&e, &shape), &l)| (e, shape, l))
                            .collect();
                        brute_force_pairs(&world)
                    })
                    .collect();
                let transitions = assert_overlap_oracle(&what, &oracle, &events);
                assert!(transitions >= 40, "{what}: only {transitions} transitions");
            }
            let processed = &app.world().resource::<Rec>().processed;
            assert_eq!(processed[0], scene.bodies.len(), "{what}: tick 0");
            // Ticks 1..: the movers written now, and (sweeps on) those written at the
            // tick before, whose displacement becomes zero.
            for (tick, (writes, &count)) in scene.writes.iter().zip(processed).enumerate().skip(1) {
                let now: BTreeSet<usize> = writes.iter().map(|w| w.0).collect();
                let before: BTreeSet<usize> = scene.writes[tick - 1].iter().map(|w| w.0).collect();
                let expected = if swept {
                    now.union(&before).count()
                } else {
                    now.len()
                };
                assert!(expected <= scene.movers);
                assert_eq!(count, expected, "{what}: tick {tick}");
            }
            assert_eq!(processed.len(), ticks);
        }
    }
}

/// Item (b): idle children of a moving parent (a collider itself), two levels deep, get
/// their collisions where the parent takes them; detached (`ChildOf` removed), the child
/// is a root at its local transform from the next tick on, and is skipped after that.
pub(crate) fn idle_children_of_moving_parent<V: Dim>() {
    let config = CollisionConfig {
        swept: false,
        ..default()
    };
    let mut app = build_app::<V>(Sched::Update, 60.0, config);
    app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
    let world = app.world_mut();
    let wall = world
        .spawn((Transform::default(), Aabb::new(V::splat(0.5))))
        .id();
    let low_wall = world
        .spawn((
            Transform::from_xyz(0.0, -3.0, 0.0),
            Aabb::new(V::splat(0.5)),
        ))
        .id();
    let parent_at = |x: f32| Transform::from_xyz(x, 3.0, 0.0);
    let parent = world
        .spawn((parent_at(-6.0), BoundingSphere::<V>::new(0.25)))
        .id();
    // World (x, 0): touches the wall while |x| <= 1.
    let child = world
        .spawn((
            Transform::from_xyz(0.0, -3.0, 0.0),
            Aabb::new(V::splat(0.5)),
            ChildOf(parent),
        ))
        .id();
    // World (x + 2, 0): touches the wall while |x + 2| <= 0.75.
    let grandchild = world
        .spawn((
            Transform::from_xyz(2.0, 0.0, 0.0),
            Aabb::new(V::splat(0.25)),
            ChildOf(child),
        ))
        .id();
    let xs = [-6.0, -4.0, -2.5, -1.5, 0.0, 1.5, 3.0, 6.0, 0.0, 0.0];
    app.insert_resource(SparseScript {
        writes: xs.iter().map(|&x| vec![(parent, parent_at(x))]).collect(),
    });
    run_ticks(&mut app, 8);
    // Detached with the parent at x = 6: a root at (0, -3), on the low wall; the parent
    // comes back to x = 0, where the child would touch the wall if it followed.
    app.world_mut().entity_mut(child).remove::<ChildOf>();
    run_ticks(&mut app, 2);
    let events = finish::<V>(&app);
    let mut log: Vec<_> = events
        .iter()
        .map(|e| (e.tick, e.pair(), e.reason()))
        .collect();
    log.sort_by_key(|&(tick, pair, reason)| (tick, pair, reason.is_some()));
    let mut expected = vec![
        (2, key(wall, grandchild), None),
        (4, key(wall, child), None),
        (4, key(wall, grandchild), Some(EndReason::Separated)),
        (5, key(wall, child), Some(EndReason::Separated)),
        (8, key(low_wall, child), None),
    ];
    expected.sort_by_key(|&(tick, pair, reason)| (tick, pair, reason.is_some()));
    assert_eq!(log, expected);
    let processed = &app.world().resource::<Rec>().processed;
    // The parent (written) and its two descendants each tick; the child once more when
    // detached (and the grandchild below it), then only the parent: the grandchild's
    // ancestors no longer change.
    assert_eq!(processed[1..], [3, 3, 3, 3, 3, 3, 3, 3, 1]);
}

/// Item (c): a component of an idle collider changes alone (size, radius, layers,
/// velocity, shape removed): that collider, and only it, is processed again.
pub(crate) fn idle_component_changes<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let spawn_box = |app: &mut App, x: f32, half: f32| {
        app.spawn_id((Transform::from_xyz(x, 0.0, 0.0), Aabb::new(V::splat(half))))
    };
    // 0.5 apart.
    let (a, b) = (spawn_box(&mut app, 0.0, 0.5), spawn_box(&mut app, 1.5, 0.5));
    // 0.5 from the sphere below.
    let t = spawn_box(&mut app, 11.5, 0.5);
    // Touching.
    let (l1, l2) = (
        spawn_box(&mut app, 20.0, 0.5),
        spawn_box(&mut app, 20.8, 0.5),
    );
    let r = spawn_box(&mut app, 30.8, 0.5);
    // 0.75 from the box of `h` below: outside its box, inside its sphere.
    let i = spawn_box(&mut app, 41.0, 0.25);
    let world = app.world_mut();
    let s = world
        .spawn((
            Transform::from_xyz(10.0, 0.0, 0.0),
            BoundingSphere::<V>::new(0.5),
        ))
        .id();
    world.entity_mut(l1).insert(CollisionLayers::new(1, 1));
    let h = world
        .spawn((
            Transform::from_xyz(40.0, 0.0, 0.0),
            Aabb::new(V::splat(0.25)),
            BoundingSphere::<V>::new(1.0),
        ))
        .id();
    run_ticks(&mut app, 1);
    // Tick 1 (the first with a time step): `q`, touching `r`, comes in with a velocity
    // of 10 units a tick along y: its fat box is stretched 20 units (two ticks ahead).
    let q = app.spawn_id((
        Transform::from_xyz(30.0, 0.0, 0.0),
        Aabb::new(V::splat(0.5)),
        Velocity(v::<V>(0.0, 600.0, 0.0)),
    ));
    run_ticks(&mut app, 1);
    let stretch = |app: &App| {
        let tracked = app.world().get::<TrackedCollider<V>>(q).unwrap();
        let state = app.world().resource::<AabbTree<V>>();
        let fat = state.tree().fat_box(tracked.proxy().unwrap()).unwrap();
        (fat.max - tracked.world_aabb().max).extend_to_3d().y
    };
    assert!(
        stretch(&app) > 19.0,
        "fat box not stretched: {}",
        stretch(&app)
    );

    let step = |app: &mut App, change: &dyn Fn(&mut World)| {
        change(app.world_mut());
        run_ticks(app, 1);
    };
    // Tick 2: the box grows into its neighbour; tick 3: back.
    step(&mut app, &|w| {
        w.get_mut::<Aabb<V>>(a).unwrap().half_extents = V::splat(1.1);
    });
    step(&mut app, &|w| {
        w.get_mut::<Aabb<V>>(a).unwrap().half_extents = V::splat(0.5);
    });
    // Tick 4: the sphere grows into the box.
    step(&mut app, &|w| {
        w.get_mut::<BoundingSphere<V>>(s).unwrap().radius = 1.2;
    });
    // Tick 5: layers stop matching; tick 6: layers removed (every layer): they match.
    step(&mut app, &|w| {
        *w.get_mut::<CollisionLayers>(l1).unwrap() = CollisionLayers::NONE;
    });
    step(&mut app, &|w| {
        w.entity_mut(l1).remove::<CollisionLayers>();
    });
    // Tick 7: the velocity removed, the far too large fat box shrinks back.
    step(&mut app, &|w| {
        w.entity_mut(q).remove::<Velocity<V>>();
    });
    assert!(stretch(&app) < 1.0, "fat box not shrunk: {}", stretch(&app));
    // Tick 8: a NaN velocity: left out; tick 9: a valid one: back.
    step(&mut app, &|w| {
        w.entity_mut(q).insert(Velocity(V::splat(f32::NAN)));
    });
    step(&mut app, &|w| {
        w.entity_mut(q).insert(Velocity(V::ZERO));
    });
    // Tick 10: the box removed, the sphere counts.
    step(&mut app, &|w| {
        w.entity_mut(h).remove::<Aabb<V>>();
    });
    // Tick 11: nothing.
    run_ticks(&mut app, 1);

    let events = finish::<V>(&app);
    let mut log: Vec<_> = events
        .iter()
        .map(|e| (e.tick, e.pair(), e.reason()))
        .collect();
    log.sort_by_key(|&(tick, pair, reason)| (tick, pair, reason.is_some()));
    let mut expected = vec![
        (0, key(l1, l2), None),
        (1, key(q, r), None),
        (2, key(a, b), None),
        (3, key(a, b), Some(EndReason::Separated)),
        (4, key(s, t), None),
        (5, key(l1, l2), Some(EndReason::LayersChanged)),
        (6, key(l1, l2), None),
        (8, key(q, r), Some(EndReason::Invalid)),
        (9, key(q, r), None),
        (10, key(h, i), None),
    ];
    expected.sort_by_key(|&(tick, pair, reason)| (tick, pair, reason.is_some()));
    assert_eq!(log, expected);
    let processed = &app.world().resource::<Rec>().processed;
    assert_eq!(processed[..], [9, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0]);
}

/// Item (d): a change of `CollisionConfig` processes every collider once, idle or not:
/// here the velocity multiplier dropped to zero shrinks the fat boxes that the idle
/// colliders' velocities had stretched when they were inserted.
pub(crate) fn config_change_reprocesses<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    // The first update has no time step (no prediction): spawn after it.
    run_ticks(&mut app, 1);
    let n = 12;
    let entities: Vec<Entity> = (0..n)
        .map(|k| {
            let mut e = app.world_mut().spawn((
                Transform::from_xyz(3.0 * k as f32, 0.0, 0.0),
                Aabb::new(V::splat(0.5)),
            ));
            if k % 2 == 0 {
                e.insert(Velocity(v::<V>(0.0, 300.0, 0.0)));
            }
            e.id()
        })
        .collect();
    let stretch = |app: &App, e: Entity| {
        let tracked = app.world().get::<TrackedCollider<V>>(e).unwrap();
        let state = app.world().resource::<AabbTree<V>>();
        let fat = tracked.fat_aabb(state).unwrap();
        (fat.max - tracked.world_aabb().max).extend_to_3d().y
    };
    run_ticks(&mut app, 2);
    for (k, &e) in entities.iter().enumerate() {
        let expected = if k % 2 == 0 { 10.0 } else { 0.0 };
        assert_close(stretch(&app, e), expected + 0.05, 1e-3, "fat box");
    }
    app.world_mut()
        .resource_mut::<CollisionConfig>()
        .velocity_multiplier = 0.0;
    run_ticks(&mut app, 2);
    for &e in &entities {
        assert_close(stretch(&app, e), 0.05, 1e-3, "fat box after the change");
    }
    // Sweeps switched off and on again: nothing moves, nothing happens, but every
    // collider is processed at each change.
    app.world_mut().resource_mut::<CollisionConfig>().swept = false;
    run_ticks(&mut app, 2);
    app.world_mut().resource_mut::<CollisionConfig>().swept = true;
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    assert!(events.is_empty(), "{events:#?}");
    let processed = &app.world().resource::<Rec>().processed;
    assert_eq!(processed[..], [0, n, 0, n, 0, n, 0, n]);
}

/// Item (e): a collider that passed through a wall and stops there is not swept over its
/// last move again: the pass-through is reported once, in its tick, and the next tick
/// reads it as still (previous position = position, no swept hit). Coming back slowly to
/// touch and staying gives one start.
pub(crate) fn stopped_mover_no_stale_sweep<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let wall = app.spawn_id((Transform::default(), Aabb::new(v::<V>(0.05, 2.0, 2.0))));
    let mover = app.spawn_id((
        Transform::from_xyz(-5.0, 0.0, 0.0),
        Aabb::new(V::splat(0.25)),
    ));
    run_ticks(&mut app, 1);
    // Tick 1: through the wall.
    set_translation(&mut app, mover, Vec3::new(5.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let previous = |app: &App| {
        let tracked = app.world().get::<TrackedCollider<V>>(mover).unwrap();
        tracked.previous_position().extend_to_3d().x
    };
    assert_eq!(previous(&app), -5.0);
    assert_eq!(
        app.world().resource::<AabbTree<V>>().pass_throughs().len(),
        1
    );
    // Ticks 2 and 3: it stands still.
    run_ticks(&mut app, 1);
    assert_eq!(previous(&app), 5.0);
    assert!(
        app.world()
            .resource::<AabbTree<V>>()
            .pass_throughs()
            .is_empty()
    );
    run_ticks(&mut app, 1);
    // Tick 4: back into the wall (its left face from 4.75 to -0.05 meets the wall's
    // right face at 0.05: time 4.7 / 4.8); ticks 5 and 6: it stays there.
    set_translation(&mut app, mover, Vec3::new(0.2, 0.0, 0.0));
    run_ticks(&mut app, 3);
    let events = finish::<V>(&app);
    assert_eq!(events.len(), 3, "{events:#?}");
    assert_pass_through(&events[..2], mover, wall, 0.47);
    assert_eq!(events[0].tick, 1);
    assert_eq!((events[2].tick, events[2].pair()), (4, key(mover, wall)));
    assert_close(events[2].toi().unwrap(), 4.7 / 4.8, 1e-4, "time of impact");
    let processed = &app.world().resource::<Rec>().processed;
    assert_eq!(processed[..], [2, 1, 1, 0, 1, 1, 0]);
}

both_dims!(
    idle_scene_matches_oracle,
    idle_children_of_moving_parent,
    idle_component_changes,
    config_change_reprocesses,
    stopped_mover_no_stale_sweep,
);
