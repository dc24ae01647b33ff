//! Reliability: shape switches, despawns inside observers, determinism, zero sizes, mass churn, diagnostics.

use super::*;

// ---------------------------------------------------------------------------------------
// Reliability: shape switches, despawns inside observers, determinism, mass churn

/// Switching a collider between `Aabb` and `BoundingSphere`: inserting the new shape
/// before removing the old keeps a contact that still touches (no events); a new shape
/// that no longer touches ends it as `Separated`; removing first ends it (`Removed`) and
/// it starts again; removing both shapes in one command ends it.
pub(crate) fn shape_switch<V: Dim>() {
    let mut s = touching_scene::<V>(Sched::Update);
    let (a, b) = (s.a, s.b);
    let world = s.app.world_mut();
    // Tick 1: a becomes a sphere (0.8 apart, radii 0.5: still touching).
    world
        .entity_mut(a)
        .insert(BoundingSphere::<V>::new(0.5))
        .remove::<Aabb<V>>();
    run_ticks(&mut s.app, 1);
    // Tick 2: b becomes a box.
    s.app
        .world_mut()
        .entity_mut(b)
        .insert(Aabb::new(V::splat(0.5)))
        .remove::<BoundingSphere<V>>();
    run_ticks(&mut s.app, 1);
    assert_eq!(pair_log(&events(&s.app), a, b), vec![(0, None)]);
    // Tick 3: a becomes a small box, 0.8 - 0.5 - 0.1 = 0.2 apart.
    s.app
        .world_mut()
        .entity_mut(a)
        .insert(Aabb::new(V::splat(0.1)))
        .remove::<BoundingSphere<V>>();
    run_ticks(&mut s.app, 1);
    // Tick 4: a becomes a large sphere again (touching), tick 5: removed before the new
    // shape is inserted.
    s.app
        .world_mut()
        .entity_mut(a)
        .insert(BoundingSphere::<V>::new(0.5))
        .remove::<Aabb<V>>();
    run_ticks(&mut s.app, 1);
    s.app
        .world_mut()
        .entity_mut(a)
        .remove::<BoundingSphere<V>>()
        .insert(Aabb::new(V::splat(0.5)));
    run_ticks(&mut s.app, 1);
    // Tick 6: b gets a second shape, then both go in one command.
    s.app
        .world_mut()
        .entity_mut(b)
        .insert(BoundingSphere::<V>::new(0.5));
    run_ticks(&mut s.app, 1);
    s.app
        .world_mut()
        .entity_mut(b)
        .remove::<(Aabb<V>, BoundingSphere<V>)>();
    run_ticks(&mut s.app, 1);
    let events = finish::<V>(&s.app);
    assert_eq!(
        pair_log(&events, a, b),
        vec![
            (0, None),
            (3, Some(EndReason::Separated)),
            (4, None),
            // Ended by the removal observer before tick 5 ran: recorded before it.
            (5, Some(EndReason::Removed)),
            (5, None),
            (7, Some(EndReason::Removed)),
        ],
        "{events:#?}"
    );
    let state = s.app.world().resource::<AabbTree<V>>();
    assert_eq!(state.tree().len(), 3, "b left the tree");
    assert_eq!(pair_events(&s, &events).len(), 6);
}

/// A collider whose two shapes go in one command keeps its proxy until the next tick;
/// despawned before that tick runs, its pair still ends (`Removed`) at once and it
/// leaves the tree. Removing `TrackedCollider` by hand ends its pairs the same way.
pub(crate) fn shapes_removed_then_despawned<V: Dim>() {
    let mut s = touching_scene::<V>(Sched::Update);
    let (a, b) = (s.a, s.b);
    let (c, d) = s.bystanders;
    s.app
        .world_mut()
        .entity_mut(a)
        .insert(BoundingSphere::<V>::new(0.5));
    run_ticks(&mut s.app, 1);
    // Between ticks: both shapes removed, then the entity despawned.
    let world = s.app.world_mut();
    world.entity_mut(a).remove::<(Aabb<V>, BoundingSphere<V>)>();
    world.entity_mut(a).despawn();
    assert_eq!(
        s.app.world().resource::<AabbTree<V>>().tree().len(),
        3,
        "the despawn took a out of the tree"
    );
    // A collider's tracking state removed by hand: out of the tree at once, its pair
    // ended; it keeps its shape, so the next tick gives it a new tracking state and takes
    // it back as a new collider, its contact started again.
    s.app
        .world_mut()
        .entity_mut(c)
        .remove::<TrackedCollider<V>>();
    assert_eq!(s.app.world().resource::<AabbTree<V>>().tree().len(), 2);
    run_ticks(&mut s.app, 2);
    assert!(s.app.world().entity(c).contains::<TrackedCollider<V>>());
    let events = finish::<V>(&s.app);
    // Both ends were written between ticks 1 and 2, and read with tick 2's messages.
    assert_eq!(
        pair_log(&events, a, b),
        vec![(0, None), (2, Some(EndReason::Removed))],
        "{events:#?}"
    );
    assert_eq!(
        pair_log(&events, c, d),
        vec![(0, None), (2, Some(EndReason::Removed)), (2, None)],
        "{events:#?}"
    );
    let state = s.app.world().resource::<AabbTree<V>>();
    assert!(state.colliding_with(b).next().is_none());
    assert_eq!(state.tree().len(), 3, "c back in the tree, a not");
}

/// `TrackedCollider` overwritten (inserted again over the plugin's): the old proxy leaves
/// the tree at once and its pair ends (`Removed`); the collider is back at the next tick,
/// with one proxy, and touches again. A written value's proxy id that is not the entity's
/// is never used.
pub(crate) fn tracked_collider_overwritten<V: Dim>() {
    let mut s = touching_scene::<V>(Sched::Update);
    let (a, b) = (s.a, s.b);
    s.app
        .world_mut()
        .entity_mut(a)
        .insert(TrackedCollider::<V>::default());
    assert_eq!(s.app.world().resource::<AabbTree<V>>().tree().len(), 3);
    run_ticks(&mut s.app, 2);
    let events = finish::<V>(&s.app);
    assert_eq!(
        pair_log(&events, a, b),
        vec![(0, None), (1, Some(EndReason::Removed)), (1, None)],
        "{events:#?}"
    );
    let state = s.app.world().resource::<AabbTree<V>>();
    assert_eq!(state.tree().len(), 4, "one proxy per collider");
    assert!(state.is_touching(a, b));

    // Its own value put back (carrying the proxy id the `Discard` observer frees): the
    // same, and the freed id is neither updated nor kept.
    let own = *s.app.world().get::<TrackedCollider<V>>(a).unwrap();
    assert!(own.proxy().is_some());
    s.app.world_mut().entity_mut(a).insert(own);
    run_ticks(&mut s.app, 1);
    let events = finish::<V>(&s.app);
    assert_eq!(
        pair_log(&events, a, b),
        vec![
            (0, None),
            (1, Some(EndReason::Removed)),
            (1, None),
            (3, Some(EndReason::Removed)),
            (3, None)
        ],
        "{events:#?}"
    );
    assert_eq!(s.app.world().resource::<AabbTree<V>>().tree().len(), 4);

    // Another collider's value copied onto `a`, then `a` despawned before the next tick:
    // `c`'s proxy stays, and so does its contact with `d`.
    let (c, d) = s.bystanders;
    let copied = *s.app.world().get::<TrackedCollider<V>>(c).unwrap();
    s.app.world_mut().entity_mut(a).insert(copied);
    s.app.world_mut().despawn(a);
    run_ticks(&mut s.app, 1);
    let events = finish::<V>(&s.app);
    assert_eq!(pair_log(&events, c, d), vec![(0, None)], "{events:#?}");
    let state = s.app.world().resource::<AabbTree<V>>();
    assert_eq!(state.tree().len(), 3);
    assert!(state.is_touching(c, d));
}

/// A `TrackedCollider` written over in place (through `&mut`, which no observer sees)
/// with another collider's value: the other collider's proxy is never updated or removed,
/// and the written entity keeps its own, which its despawn removes.
pub(crate) fn tracked_collider_written_in_place<V: Dim>() {
    let mut s = touching_scene::<V>(Sched::Update);
    let (a, b) = (s.a, s.b);
    let (c, d) = s.bystanders;
    let copy_c_onto_a = |app: &mut App| {
        let value = *app.world().get::<TrackedCollider<V>>(c).unwrap();
        *app.world_mut().get_mut::<TrackedCollider<V>>(a).unwrap() = value;
    };
    // Written, then a tick: `a` finds its own proxy again, nothing ends or restarts.
    copy_c_onto_a(&mut s.app);
    run_ticks(&mut s.app, 1);
    let state = s.app.world().resource::<AabbTree<V>>();
    assert_eq!(state.tree().len(), 4, "one proxy per collider");
    state.tree().validate().unwrap();
    let (ta, tc) = (
        s.app.world().get::<TrackedCollider<V>>(a).unwrap(),
        s.app.world().get::<TrackedCollider<V>>(c).unwrap(),
    );
    assert_eq!(state.tree().data(ta.proxy().unwrap()), Some(&a));
    assert_eq!(state.tree().data(tc.proxy().unwrap()), Some(&c));
    assert!(state.is_touching(a, b) && state.is_touching(c, d));

    // Written, then despawned before the next tick: `a`'s own proxy goes, `c`'s stays.
    copy_c_onto_a(&mut s.app);
    s.app.world_mut().despawn(a);
    run_ticks(&mut s.app, 1);
    let events = finish::<V>(&s.app);
    assert_eq!(
        pair_log(&events, a, b),
        vec![(0, None), (2, Some(EndReason::Removed))],
        "{events:#?}"
    );
    assert_eq!(pair_log(&events, c, d), vec![(0, None)], "{events:#?}");
    let state = s.app.world().resource::<AabbTree<V>>();
    assert_eq!(state.tree().len(), 3);
    assert!(state.tree().proxies().all(|(_, &e, _)| e != a));
    assert!(state.is_touching(c, d));
}

/// A collider entity cloned: the clone gets a proxy of its own (it does not copy the
/// source's `TrackedCollider`) and its own contacts; the source's go on.
pub(crate) fn cloned_collider<V: Dim>() {
    let mut s = touching_scene::<V>(Sched::Update);
    let (c, d) = s.bystanders;
    let clone = s.app.world_mut().entity_mut(c).clone_and_spawn();
    let tracked = s.app.world().get::<TrackedCollider<V>>(clone).unwrap();
    assert_eq!(tracked.proxy(), None, "the clone copied the source's proxy");
    run_ticks(&mut s.app, 1);
    let state = s.app.world().resource::<AabbTree<V>>();
    assert_eq!(state.tree().len(), 5);
    state.tree().validate().unwrap();
    let own = s
        .app
        .world()
        .get::<TrackedCollider<V>>(clone)
        .unwrap()
        .proxy();
    assert_eq!(state.tree().data(own.unwrap()), Some(&clone));
    assert!(state.is_touching(clone, d) && state.is_touching(clone, c));
    assert!(state.is_touching(c, d));
    let events = finish::<V>(&s.app);
    assert_eq!(pair_log(&events, c, d), vec![(0, None)], "{events:#?}");
    assert_eq!(pair_log(&events, clone, d), vec![(1, None)], "{events:#?}");
}

/// Despawning from inside observers of the collision events, and from a system reading
/// the messages right after the pipeline: one end per start, entity events in order.
pub(crate) fn despawn_in_observers<V: Dim>() {
    #[derive(Clone, Copy, Debug)]
    enum Who {
        SelfOnStart,
        OtherOnStart,
        BothOnStart,
        BothOnEnd,
        SystemAfterEvents,
    }
    for who in [
        Who::SelfOnStart,
        Who::OtherOnStart,
        Who::BothOnStart,
        Who::BothOnEnd,
        Who::SystemAfterEvents,
    ] {
        eprintln!("case {who:?}");
        let mut app = update_app::<V>(Sched::Update);
        let mut spawn = |x: f32| {
            let mut e = app
                .world_mut()
                .spawn((Transform::from_xyz(x, 0.0, 0.0), Aabb::new(V::splat(0.5))));
            match who {
                Who::SelfOnStart | Who::BothOnStart => {
                    e.observe(|ev: On<CollisionStarted<V>>, mut commands: Commands| {
                        commands.entity(ev.entity).despawn();
                    });
                }
                Who::BothOnEnd => {
                    e.observe(|ev: On<CollisionEnded>, mut commands: Commands| {
                        commands.entity(ev.entity).despawn();
                    });
                }
                _ => {}
            }
            e.id()
        };
        let a = spawn(0.0);
        let b = spawn(0.8);
        let bystander = spawn(5.0);
        if let Who::OtherOnStart = who {
            app.world_mut().entity_mut(a).observe(
                |ev: On<CollisionStarted<V>>, mut commands: Commands| {
                    commands.entity(ev.other).despawn();
                },
            );
        }
        if let Who::SystemAfterEvents = who {
            app.add_systems(
                Update,
                (|mut started: MessageReader<CollisionStarted<V>>, mut commands: Commands| {
                    for hit in started.read() {
                        commands.entity(hit.other).despawn();
                    }
                })
                .after(CollisionSystems::Events),
            );
        }
        run_ticks(&mut app, 2);
        if let Who::BothOnEnd = who {
            // Nothing despawned yet: they touch. Move b away; both despawn on the end.
            assert!(app.world().get_entity(b).is_ok(), "{who:?}");
            set_translation(&mut app, b, Vec3::new(3.0, 0.0, 0.0));
            run_ticks(&mut app, 2);
        }
        let events = finish::<V>(&app);
        let log = pair_log(&events, a, b);
        assert_eq!(log.len(), 2, "{who:?}: {events:#?}");
        assert_eq!(log[0].1, None, "{who:?}");
        let expected_end = match who {
            Who::BothOnEnd => EndReason::Separated,
            _ => EndReason::Removed,
        };
        assert_eq!(log[1].1, Some(expected_end), "{who:?}");
        let alive = [a, b].map(|e| app.world().get_entity(e).is_ok());
        let expected_alive = match who {
            Who::SelfOnStart | Who::BothOnStart => [false, false],
            Who::OtherOnStart | Who::SystemAfterEvents => [true, false],
            Who::BothOnEnd => [false, false],
        };
        // `SelfOnStart` observes both: each despawns itself on its own start.
        assert_eq!(alive, expected_alive, "{who:?}");
        assert!(app.world().get_entity(bystander).is_ok());
        let state = app.world().resource::<AabbTree<V>>();
        let live = alive.iter().filter(|&&x| x).count() + 1;
        assert_eq!(state.tree().len(), live, "{who:?}");
    }
}

/// The same scene with unrelated colliders (far away, never touching anything) and
/// non-collider entities spawned after it in different orders gives byte-identical event
/// sequences, although the tree's shape and the proxies' ids differ.
pub(crate) fn spawn_order_determinism<V: Dim>() {
    let scene = random_scene::<V>(77, 40, 80);
    let mut runs: Vec<String> = Vec::new();
    for order_seed in [1u64, 2, 3] {
        let mut app = update_app::<V>(Sched::Update);
        app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
        let entities = spawn_scene(&mut app, &scene);
        let mut rng = Rng::new(order_seed);
        let mut unrelated: Vec<usize> = (0..60).collect();
        for i in (1..unrelated.len()).rev() {
            unrelated.swap(i, rng.below(i + 1));
        }
        for &k in &unrelated {
            let world = app.world_mut();
            let t = Transform::from_translation(flat::<V>(Vec3::new(
                1000.0 + 10.0 * k as f32,
                -500.0,
                300.0,
            )));
            match k % 3 {
                0 => world.spawn((t, Aabb::new(V::splat(0.5)))),
                1 => world.spawn((t, BoundingSphere::<V>::new(0.5), Velocity(V::ZERO))),
                _ => world.spawn(t),
            };
        }
        run_ticks(&mut app, scene.frames.len() as u32);
        let events = finish::<V>(&app);
        assert!(
            events
                .iter()
                .all(|e| entities.contains(&e.entity) && entities.contains(&e.other)),
            "an unrelated entity collided"
        );
        assert!(
            events.len() > 20,
            "too few events to test: {}",
            events.len()
        );
        runs.push(format!("{events:?}"));
    }
    assert_eq!(runs[0], runs[1]);
    assert_eq!(runs[0], runs[2]);
}

/// Zero-size colliders are valid: a point box or a zero-radius sphere touches what
/// contains it, boundary included; a zero scale makes a point of any collider.
pub(crate) fn zero_size_colliders<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let world = app.world_mut();
    let big = world
        .spawn((Transform::default(), Aabb::new(V::splat(0.5))))
        .id();
    let point_box = world
        .spawn((Transform::from_xyz(0.5, 0.0, 0.0), Aabb::new(V::ZERO)))
        .id();
    let point_ball = world
        .spawn((
            Transform::from_xyz(-0.25, 0.25, 0.0),
            BoundingSphere::<V>::new(0.0),
        ))
        .id();
    let squashed = world
        .spawn((
            Transform::from_xyz(0.0, -0.5, 0.0).with_scale(Vec3::ZERO),
            Aabb::new(V::splat(3.0)),
        ))
        .id();
    let outside = world
        .spawn((Transform::from_xyz(0.0, 0.51, 0.0), Aabb::new(V::ZERO)))
        .id();
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    let pairs: Pairs = events.iter().map(Ev::pair).collect();
    assert_eq!(
        pairs,
        Pairs::from([
            key(big, point_box),
            key(big, point_ball),
            key(big, squashed),
        ]),
        "{events:#?}"
    );
    assert!(
        app.world()
            .get::<TrackedCollider<V>>(outside)
            .unwrap()
            .proxy()
            .is_some()
    );
}

/// Thousands of spawns in one frame, then thousands of despawns in one frame while
/// touching: the starts equal brute force (the recorder checks every tick), every start
/// gets its end, and the tree ends empty and valid.
pub(crate) fn mass_spawn_despawn<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let side = 45; // 2025 colliders on a grid, neighbours 0.9 apart: touching.
    let mut entities = Vec::new();
    for i in 0..side {
        for j in 0..side {
            let t = Transform::from_xyz(i as f32 * 0.9, j as f32 * 0.9, 0.0);
            let e = if (i + j) % 2 == 0 {
                app.spawn_id((t, Aabb::new(V::splat(0.5))))
            } else {
                app.spawn_id((t, BoundingSphere::<V>::new(0.5)))
            };
            entities.push(e);
        }
    }
    run_ticks(&mut app, 1);
    let started = events(&app).len();
    assert!(started > 3000, "{started} starts");
    // The bulk spawn made room once: one internal node per collider, no slack from
    // doubling.
    let tree_stats = app.world().resource::<AabbTree<V>>().tree_stats();
    assert_eq!(tree_stats.proxies, 2025);
    assert_eq!(tree_stats.capacity, 2025);
    for e in entities.iter().step_by(2) {
        app.world_mut().despawn(*e);
    }
    run_ticks(&mut app, 1);
    for e in entities.iter().skip(1).step_by(2) {
        app.world_mut().despawn(*e);
    }
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    assert_eq!(events.len(), 2 * started);
    let state = app.world().resource::<AabbTree<V>>();
    assert_eq!(state.tree().len(), 0);
    assert_eq!(state.touching_pairs().count(), 0);
}

/// The pipeline's figures reach Bevy's diagnostics, equal to `AabbTree::stats`; the tree's
/// own work is a part of the prepare and broad stages.
pub(crate) fn diagnostics<V: Dim>() {
    use bevy::diagnostic::{DiagnosticPath, DiagnosticsStore};
    use bevy_aabb_tree::plugin::diagnostics as paths;
    let s = touching_scene::<V>(Sched::Update);
    let (touching, events, candidates, tick, tree) = if V::DIM == 2 {
        (
            paths::TOUCHING_2D,
            paths::EVENTS_2D,
            paths::CANDIDATES_2D,
            paths::TICK_MS_2D,
            paths::TREE_MS_2D,
        )
    } else {
        (
            paths::TOUCHING_3D,
            paths::EVENTS_3D,
            paths::CANDIDATES_3D,
            paths::TICK_MS_3D,
            paths::TREE_MS_3D,
        )
    };
    let store = s.app.world().resource::<DiagnosticsStore>();
    let value = |path: &DiagnosticPath| {
        store
            .get(path)
            .and_then(|d| d.value())
            .unwrap_or_else(|| panic!("{path} has no measurement"))
    };
    let stats = *s.app.world().resource::<AabbTree<V>>().stats();
    assert_eq!(value(&touching), 2.0);
    assert_eq!(value(&events), 2.0, "two starts");
    assert_eq!(value(&candidates), stats.candidates as f64);
    assert_eq!(value(&tick), stats.total_ms() as f64);
    assert!(value(&tick) >= 0.0);
    // The tree's own work is timed inside the prepare and broad stages.
    assert_eq!(value(&tree), stats.tree_ms as f64);
    assert!(stats.tree_ms >= 0.0 && stats.tree_ms <= stats.prepare_ms + stats.broad_ms);
}

both_dims!(
    shape_switch,
    shapes_removed_then_despawned,
    tracked_collider_overwritten,
    tracked_collider_written_in_place,
    cloned_collider,
    despawn_in_observers,
    spawn_order_determinism,
    zero_size_colliders,
    mass_spawn_despawn,
    diagnostics,
);
