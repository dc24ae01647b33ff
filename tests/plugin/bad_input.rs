//! Bad input: NaN and overflowing values, invalid sizes, the move cache setting.

use super::*;

// ---------------------------------------------------------------------------------------
// Bad input

/// Item 8: a NaN translation for one tick ends the entity's pairs (`Invalid`), leaves it
/// out of the tree; repaired, it comes back; the other pairs never notice.
/// Finite values whose fat box overflows (a collider near the edge of `f32`'s range with
/// a velocity that carries its fat box past it): the collider is left out, no proxy is
/// left behind in the tree, tick after tick, and a bystander's contacts go on.
pub(crate) fn fat_box_overflow<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let world = app.world_mut();
    let a = world
        .spawn((Transform::default(), Aabb::new(V::splat(0.5))))
        .id();
    let b = world
        .spawn((Transform::from_xyz(0.8, 0.0, 0.0), Aabb::new(V::splat(0.5))))
        .id();
    // Spawned once the time step is known, so that its first fat box already overflows.
    run_ticks(&mut app, 1);
    let edge = app.spawn_id((
        Transform::from_xyz(3.39e38, 0.0, 0.0),
        Aabb::new(V::splat(1e36)),
        Velocity(V::truncate_from_3d(Vec3::X * 1e37)),
    ));
    for _ in 0..5 {
        run_ticks(&mut app, 1);
        let tree = app.world().resource::<AabbTree<V>>();
        assert_eq!(tree.tree().len(), 2, "a proxy was left behind");
        tree.tree().validate().unwrap();
    }
    let tracked = app.world().get::<TrackedCollider<V>>(edge).unwrap();
    assert!(tracked.proxy().is_none());
    let state = app.world().resource::<AabbTree<V>>();
    assert_eq!(tracked.fat_aabb(state), None);
    let held = app.world().get::<TrackedCollider<V>>(a).unwrap();
    let fat = held.fat_aabb(state).expect("a is in the tree");
    // Still, with no velocity: the tight box grown by the default margin.
    let expected = held.world_aabb().grown(CollisionConfig::default().margin);
    for (got, want) in [(fat.min, expected.min), (fat.max, expected.max)] {
        let error = (got - want).extend_to_3d().abs().max_element();
        assert!(error < 1e-6, "fat box {fat:?}, expected {expected:?}");
    }
    let events = finish::<V>(&app);
    assert!(events.iter().all(|e| e.entity != edge && e.other != edge));
    assert!(
        events.iter().any(|e| e.pair() == key(a, b)),
        "the bystanders' contact is missing: {events:?}"
    );
}

/// `CollisionConfig::move_cache` reaches the tree: turned off, the tree frees the copy
/// and stays valid, a contact made while it is off starts and ends on time, and turned
/// back on, the fat boxes read through the cache are those of the tree.
pub(crate) fn move_cache_config<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let world = app.world_mut();
    let a = world
        .spawn((Transform::default(), Aabb::new(V::splat(0.5))))
        .id();
    let b = world
        .spawn((Transform::from_xyz(5.0, 0.0, 0.0), Aabb::new(V::splat(0.5))))
        .id();
    run_ticks(&mut app, 1);
    let tree = app.world().resource::<AabbTree<V>>().tree();
    assert!(tree.move_cache(), "on by default");
    let with_cache = tree.stats().bytes;

    app.world_mut().resource_mut::<CollisionConfig>().move_cache = false;
    run_ticks(&mut app, 1);
    let tree = app.world().resource::<AabbTree<V>>().tree();
    assert!(!tree.move_cache());
    assert!(tree.stats().bytes < with_cache, "the copy was not freed");
    tree.validate().unwrap();
    set_translation(&mut app, b, Vec3::new(0.8, 0.0, 0.0));
    run_ticks(&mut app, 1);
    set_translation(&mut app, b, Vec3::new(3.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    app.world()
        .resource::<AabbTree<V>>()
        .tree()
        .validate()
        .unwrap();

    app.world_mut().resource_mut::<CollisionConfig>().move_cache = true;
    set_translation(&mut app, b, Vec3::new(0.9, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let state = app.world().resource::<AabbTree<V>>();
    assert!(state.tree().move_cache());
    state.tree().validate().unwrap();
    for e in [a, b] {
        let tracked = app.world().get::<TrackedCollider<V>>(e).unwrap();
        let fat = tracked.fat_aabb(state).unwrap();
        // The proxy's leaf, found by walking the tree: its box is the one the tree holds.
        let proxy = tracked.proxy().unwrap();
        let mut leaf_box = None;
        state.tree().visit_nodes(|_, node, _| {
            if node.proxy == Some(proxy) {
                leaf_box = Some(node.aabb);
            }
            true
        });
        assert_eq!(Some(fat), leaf_box);
        assert!(fat.contains(&tracked.world_aabb()));
    }
    // Started at tick 2 (cache off), ended at tick 3, started again at tick 4 (back on).
    let log = pair_log(&finish::<V>(&app), a, b);
    assert_eq!(
        log,
        vec![(2, None), (3, Some(EndReason::Separated)), (4, None)]
    );
}

pub(crate) fn nan_translation<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let world = app.world_mut();
    let a = world
        .spawn((Transform::default(), Aabb::new(V::splat(0.5))))
        .id();
    let b = world
        .spawn((Transform::from_xyz(0.8, 0.0, 0.0), Aabb::new(V::splat(0.5))))
        .id();
    let c = world
        .spawn((
            Transform::from_xyz(-0.8, 0.0, 0.0),
            BoundingSphere::<V>::new(0.5),
        ))
        .id();
    let d = world
        .spawn((
            Transform::from_xyz(20.0, 0.0, 0.0),
            Aabb::new(V::splat(0.5)),
        ))
        .id();
    let e = world
        .spawn((
            Transform::from_xyz(20.5, 0.0, 0.0),
            Aabb::new(V::splat(0.5)),
        ))
        .id();
    run_ticks(&mut app, 1);
    set_translation(&mut app, a, Vec3::new(f32::NAN, 0.0, 0.0));
    run_ticks(&mut app, 1);
    assert_eq!(
        app.world().get::<TrackedCollider<V>>(a).unwrap().proxy(),
        None
    );
    assert_eq!(app.world().resource::<AabbTree<V>>().tree().len(), 4);
    set_translation(&mut app, a, Vec3::ZERO);
    run_ticks(&mut app, 2);
    let events = finish::<V>(&app);
    // `EndReason` is not `Ord`: compare by discriminant.
    let by_tick = |t: u32| -> BTreeSet<((Entity, Entity), Option<u8>)> {
        events
            .iter()
            .filter(|e| e.tick == t)
            .map(|e| (e.pair(), e.reason().map(|r| r as u8)))
            .collect()
    };
    let invalid = Some(EndReason::Invalid as u8);
    assert_eq!(
        by_tick(0),
        BTreeSet::from([(key(a, b), None), (key(a, c), None), (key(d, e), None)])
    );
    assert_eq!(
        by_tick(1),
        BTreeSet::from([(key(a, b), invalid), (key(a, c), invalid)])
    );
    assert_eq!(
        by_tick(2),
        BTreeSet::from([(key(a, b), None), (key(a, c), None)])
    );
    assert_eq!(events.len(), 7, "{events:#?}");
    assert!(
        app.world()
            .get::<TrackedCollider<V>>(a)
            .unwrap()
            .proxy()
            .is_some()
    );
}

pub(crate) type Mutation = Box<dyn Fn(&mut EntityWorldMut)>;

/// Other bad values, each for one tick then repaired: invalid ones end the pairs with
/// `Invalid` and come back; huge but finite values must not panic or corrupt the tree.
pub(crate) fn other_bad_input<V: Dim>() {
    let translation = |t: Vec3| -> Mutation {
        Box::new(move |e| e.get_mut::<Transform>().unwrap().translation = t)
    };
    // The new shape goes in before the box leaves, so the entity stays a collider.
    let bad_radius = |r: f32| -> Mutation {
        Box::new(move |e| {
            e.insert(BoundingSphere::<V>::new(r)).remove::<Aabb<V>>();
        })
    };
    let cases: Vec<(&str, Mutation, bool)> = vec![
        ("NaN y", translation(Vec3::new(0.0, f32::NAN, 0.0)), true),
        (
            "inf x",
            translation(Vec3::new(f32::INFINITY, 0.0, 0.0)),
            true,
        ),
        (
            "inf scale",
            Box::new(|e| e.get_mut::<Transform>().unwrap().scale = Vec3::splat(f32::INFINITY)),
            true,
        ),
        (
            "NaN rotation",
            Box::new(|e| {
                e.get_mut::<Transform>().unwrap().rotation =
                    Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0)
            }),
            true,
        ),
        (
            "negative half extents",
            Box::new(|e| {
                e.insert(Aabb::new(v::<V>(-0.5, 0.5, 0.5)));
            }),
            true,
        ),
        (
            "NaN offset",
            Box::new(|e| {
                e.insert(Aabb::new(V::splat(0.5)).with_offset(V::splat(f32::NAN)));
            }),
            true,
        ),
        (
            "NaN velocity",
            Box::new(|e| {
                e.insert(Velocity(V::splat(f32::NAN)));
            }),
            true,
        ),
        (
            "infinite velocity",
            Box::new(|e| {
                e.insert(Velocity(V::splat(f32::INFINITY)));
            }),
            true,
        ),
        (
            "NaN scale",
            Box::new(|e| e.get_mut::<Transform>().unwrap().scale = Vec3::new(1.0, f32::NAN, 1.0)),
            true,
        ),
        (
            "garbage transform",
            Box::new(|e| {
                *e.get_mut::<Transform>().unwrap() = Transform {
                    translation: Vec3::NAN,
                    rotation: Quat::from_xyzw(f32::NAN, f32::INFINITY, 0.0, -0.0),
                    scale: Vec3::NEG_INFINITY,
                }
            }),
            true,
        ),
        (
            "NaN half extents",
            Box::new(|e| {
                e.insert(Aabb::new(V::splat(f32::NAN)));
            }),
            true,
        ),
        (
            "infinite half extents",
            Box::new(|e| {
                e.insert(Aabb::new(V::splat(f32::INFINITY)));
            }),
            true,
        ),
        ("NaN radius", bad_radius(f32::NAN), true),
        ("negative radius", bad_radius(-1.0), true),
        ("infinite radius", bad_radius(f32::INFINITY), true),
        (
            "zero scale",
            Box::new(|e| e.get_mut::<Transform>().unwrap().scale = Vec3::ZERO),
            false,
        ),
        (
            "zero half extents",
            Box::new(|e| {
                e.insert(Aabb::new(V::ZERO));
            }),
            false,
        ),
        (
            "crosses the world in one tick",
            Box::new(|e| {
                e.insert(Velocity(V::splat(1e7)));
                e.get_mut::<Transform>().unwrap().translation = Vec3::splat(1e5);
            }),
            false,
        ),
        ("huge", translation(Vec3::splat(1e30)), false),
        ("huge negative", translation(Vec3::splat(-3e38)), false),
        (
            "huge velocity",
            Box::new(|e| {
                e.insert(Velocity(V::splat(3e38)));
            }),
            false,
        ),
    ];
    // The bystanders' events without any bad input, to compare each case with.
    let control = |events: &[Ev], a: Entity| -> Vec<String> {
        events
            .iter()
            .filter(|e| e.entity != a && e.other != a)
            .map(|e| format!("{e:?}"))
            .collect()
    };
    let mut expected_bystanders: Option<Vec<String>> = None;
    let noop: Mutation = Box::new(|_| {});
    for (name, mutate, invalid) in std::iter::once(("control", noop, false)).chain(cases) {
        let mut app = update_app::<V>(Sched::Update);
        app.world_mut().resource_mut::<Rec>().skip_brute_force = !invalid;
        let a = app.spawn_id((Transform::default(), Aabb::new(V::splat(0.5))));
        let b = app.spawn_id((Transform::from_xyz(0.8, 0.0, 0.0), Aabb::new(V::splat(0.5))));
        for i in 0..10 {
            app.world_mut().spawn((
                Transform::from_xyz(i as f32 * 3.0 - 10.0, 5.0, 0.0),
                BoundingSphere::<V>::new(2.0),
            ));
        }
        run_ticks(&mut app, 1);
        mutate(&mut app.world_mut().entity_mut(a));
        run_ticks(&mut app, 2);
        if invalid {
            assert_eq!(
                app.world().get::<TrackedCollider<V>>(a).unwrap().proxy(),
                None,
                "{name}"
            );
        }
        let mut entity = app.world_mut().entity_mut(a);
        entity.insert((
            Transform::default(),
            Aabb::new(V::splat(0.5)),
            Velocity(V::ZERO),
        ));
        entity.remove::<BoundingSphere<V>>();
        run_ticks(&mut app, 2);
        let events = finish::<V>(&app);
        let bystanders = control(&events, a);
        match &expected_bystanders {
            None => {
                assert!(bystanders.len() > 5, "the bystanders must touch");
                expected_bystanders = Some(bystanders);
            }
            Some(expected) => assert_eq!(&bystanders, expected, "{name}: bystanders disturbed"),
        }
        let mine: Vec<_> = events
            .iter()
            .filter(|e| e.pair() == key(a, b))
            .map(|e| (e.tick, e.reason()))
            .collect();
        if invalid {
            assert_eq!(
                mine,
                vec![(0, None), (1, Some(EndReason::Invalid)), (3, None)],
                "{name}: {events:#?}"
            );
        }
        assert!(
            app.world().resource::<AabbTree<V>>().is_touching(a, b),
            "{name}: back in"
        );
        assert!(
            app.world()
                .get::<TrackedCollider<V>>(a)
                .unwrap()
                .proxy()
                .is_some()
        );
    }
}

both_dims!(
    nan_translation,
    fat_box_overflow,
    move_cache_config,
    other_bad_input,
);
