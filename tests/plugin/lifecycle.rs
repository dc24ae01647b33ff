//! The lifecycle of colliders: despawn, removal, `Disabled`, layers, and coming back.

use super::*;

// ---------------------------------------------------------------------------------------
// Lifecycle

/// Applies `action` to the touching pair, runs two ticks, and expects exactly one end
/// with `reason`.
pub(crate) fn lifecycle_case<V: Dim>(
    name: &str,
    action: impl FnOnce(&mut World, Entity, Entity),
    reason: EndReason,
) {
    let mut s = touching_scene::<V>(Sched::Update);
    action(s.app.world_mut(), s.a, s.b);
    run_ticks(&mut s.app, 2);
    let events = finish::<V>(&s.app);
    let mine = pair_events(&s, &events);
    assert_eq!(mine.len(), 2, "{name}: {mine:#?}");
    assert_eq!(mine[1].reason(), Some(reason), "{name}: {mine:#?}");
    assert_eq!(mine[1].tick, 1, "{name}");
}

pub(crate) fn lifecycle<V: Dim>() {
    lifecycle_case::<V>(
        "despawn a",
        |w, a, _| {
            w.despawn(a);
        },
        EndReason::Removed,
    );
    lifecycle_case::<V>(
        "despawn b",
        |w, _, b| {
            w.despawn(b);
        },
        EndReason::Removed,
    );
    lifecycle_case::<V>(
        "despawn both",
        |w, a, b| {
            w.despawn(a);
            w.despawn(b);
        },
        EndReason::Removed,
    );
    lifecycle_case::<V>(
        "remove Aabb",
        |w, a, _| {
            w.entity_mut(a).remove::<Aabb<V>>();
        },
        EndReason::Removed,
    );
    lifecycle_case::<V>(
        "remove BoundingSphere",
        |w, _, b| {
            w.entity_mut(b).remove::<BoundingSphere<V>>();
        },
        EndReason::Removed,
    );
    lifecycle_case::<V>(
        "disable",
        |w, a, _| {
            w.entity_mut(a).insert(Disabled);
        },
        EndReason::Removed,
    );
    lifecycle_case::<V>(
        "disable both",
        |w, a, b| {
            w.entity_mut(a).insert(Disabled);
            w.entity_mut(b).insert(Disabled);
        },
        EndReason::Removed,
    );
    lifecycle_case::<V>(
        "layers stop matching",
        |w, a, _| {
            w.entity_mut(a).insert(CollisionLayers::new(1, 0));
        },
        EndReason::LayersChanged,
    );
    lifecycle_case::<V>(
        "layers stop matching on both",
        |w, a, b| {
            w.entity_mut(a).insert(CollisionLayers::new(1, 1));
            w.entity_mut(b).insert(CollisionLayers::new(2, 2));
        },
        EndReason::LayersChanged,
    );
}

/// Disabled, then enabled again; layers off, then on again: the pair starts again, and
/// every start has its end.
pub(crate) fn lifecycle_comes_back<V: Dim>() {
    for (name, off, on) in [
        (
            "disabled",
            (|w: &mut World, a: Entity| {
                w.entity_mut(a).insert(Disabled);
            }) as fn(&mut World, Entity),
            (|w: &mut World, a: Entity| {
                w.entity_mut(a).remove::<Disabled>();
            }) as fn(&mut World, Entity),
        ),
        (
            "layers",
            |w: &mut World, a: Entity| {
                w.entity_mut(a).insert(CollisionLayers::NONE);
            },
            |w: &mut World, a: Entity| {
                w.entity_mut(a).insert(CollisionLayers::new(4, 4));
            },
        ),
        (
            "collider",
            |w: &mut World, a: Entity| {
                w.entity_mut(a).remove::<Aabb<V>>();
            },
            |w: &mut World, a: Entity| {
                w.entity_mut(a).insert(Aabb::new(V::splat(0.5)));
            },
        ),
    ] {
        let mut s = touching_scene::<V>(Sched::Update);
        off(s.app.world_mut(), s.a);
        run_ticks(&mut s.app, 2);
        on(s.app.world_mut(), s.a);
        run_ticks(&mut s.app, 2);
        let events = finish::<V>(&s.app);
        let mine = pair_events(&s, &events);
        let ticks: Vec<_> = mine.iter().map(|e| (e.tick, e.reason())).collect();
        let reason = if name == "layers" {
            EndReason::LayersChanged
        } else {
            EndReason::Removed
        };
        assert_eq!(
            ticks,
            vec![(0, None), (1, Some(reason)), (3, None)],
            "{name}: {mine:#?}"
        );
        assert!(
            s.app
                .world()
                .resource::<AabbTree<V>>()
                .is_touching(s.a, s.b)
        );
    }
}

/// Removing and re-inserting the collider in one frame, from outside the app and from a
/// system's commands: the pair may end and start again, but the invariant holds and the
/// tree stays valid.
pub(crate) fn remove_and_reinsert_same_frame<V: Dim>() {
    // From outside, between frames.
    let mut s = touching_scene::<V>(Sched::Update);
    let a = s.a;
    let mut entity = s.app.world_mut().entity_mut(a);
    entity.remove::<Aabb<V>>();
    entity.insert(Aabb::new(V::splat(0.5)));
    run_ticks(&mut s.app, 2);
    let events = finish::<V>(&s.app);
    let mine = pair_events(&s, &events);
    assert!(mine.len() == 1 || mine.len() == 3, "{mine:#?}");
    assert!(
        s.app
            .world()
            .resource::<AabbTree<V>>()
            .is_touching(s.a, s.b)
    );

    // From a system in the frame, before the pipeline; also swapping the shape kind.
    #[derive(Resource)]
    struct Target(Entity, Entity, u32);
    fn churn_once<V: Dim>(mut commands: Commands, mut target: ResMut<Target>, rec: Res<Rec>) {
        if rec.tick == target.2 {
            commands
                .entity(target.0)
                .remove::<Aabb<V>>()
                .insert(Aabb::new(V::splat(0.5)));
            commands
                .entity(target.1)
                .remove::<BoundingSphere<V>>()
                .insert(Aabb::new(V::splat(0.4)));
            target.2 += 2;
        }
    }
    let mut s = touching_scene::<V>(Sched::Update);
    s.app
        .insert_resource(Target(s.a, s.b, 1))
        .add_systems(Update, churn_once::<V>.before(collect_pre::<V>));
    run_ticks(&mut s.app, 6);
    let events = finish::<V>(&s.app);
    let mine = pair_events(&s, &events);
    assert!(mine.len() % 2 == 1, "{mine:#?}");
    assert!(
        s.app
            .world()
            .resource::<AabbTree<V>>()
            .is_touching(s.a, s.b)
    );
}

both_dims!(
    lifecycle,
    lifecycle_comes_back,
    remove_and_reinsert_same_frame,
);
