//! Rounded boxes (`RoundedAabb`): the rounded box queries against brute force, the
//! component's lifecycle with a contact open (insert, remove, replace, the order among
//! several shapes), `Static`, `Sensor`, layers and scale. The random scenes against the
//! `f64` oracle mix rounded boxes in with capsules (`capsules`).

use super::capsules::{Caster, shape_queries_match_brute_force};
use super::*;

/// `rounded_box`, `cast_rounded_box`, `cast_rounded_box_all`, `point` and `ray_hits`
/// against brute force over a scene of boxes, balls, capsules and rounded boxes.
fn rounded_queries_match_brute_force<V: Dim>() {
    shape_queries_match_brute_force::<V>(Caster::RoundedBox, 12);
}

/// A wall (a box of half size 1 at the origin) and a rounded box (inner half size 0.5,
/// radius 0.5) beside its corner at `(1.8, 1.8)`: its inner box's corner `(1.3, 1.3)` is
/// `0.3 √2 ≈ 0.42` from the wall's, less than the radius, so they touch; its inner box
/// alone would not, nor would a ball of the same radius at its center. A second rounded
/// box at `(-1.9, -1.9)`, `0.4 √2 ≈ 0.57` from the wall's other corner, does not touch
/// it although its bounding box overlaps the wall.
struct Corner {
    app: App,
    wall: Entity,
    near: Entity,
    far: Entity,
}

fn corner<V: Dim>() -> Corner {
    let mut app = update_app::<V>(Sched::Update);
    app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
    let wall = app.spawn_id((Transform::default(), Aabb::new(V::splat(1.0))));
    let near = app.spawn_id((
        Transform::from_xyz(1.8, 1.8, 0.0),
        RoundedAabb::new(V::splat(0.5), 0.5),
    ));
    let far = app.spawn_id((
        Transform::from_xyz(-1.9, -1.9, 0.0),
        RoundedAabb::new(V::splat(0.5), 0.5),
    ));
    run_ticks(&mut app, 1);
    Corner {
        app,
        wall,
        near,
        far,
    }
}

/// The touching pairs now.
fn touching_now(app: &App) -> Pairs {
    app.world()
        .resource::<Rec>()
        .touching
        .last()
        .cloned()
        .unwrap_or_default()
}

/// The kinds of the pair's events so far: `None` a start, else the end's reason.
fn kinds(app: &App, a: Entity, b: Entity) -> Vec<Option<EndReason>> {
    pair_log(&events(app), a, b)
        .into_iter()
        .map(|(_, reason)| reason)
        .collect()
}

/// The rounded corner decides: the near rounded box touches, the far one does not.
fn rounded_corner_is_exact<V: Dim>() {
    let mut c = corner::<V>();
    assert_eq!(touching_now(&c.app), Pairs::from([key(c.wall, c.near)]));
    // Nudged 0.1 nearer along the diagonal, the far one touches too: its inner corner is
    // then 0.3 √2 from the wall's.
    set_translation(&mut c.app, c.far, Vec3::new(-1.8, -1.8, 0.0));
    run_ticks(&mut c.app, 1);
    assert_eq!(
        touching_now(&c.app),
        Pairs::from([key(c.wall, c.near), key(c.wall, c.far)])
    );
    finish::<V>(&c.app);
}

/// With a contact open: the value replaced, other shapes inserted beside it and removed,
/// the component removed and put back. Each step gives the events of the shape that
/// counts (`Aabb`, then `RoundedAabb`, then `Capsule`, then `BoundingSphere`): none while
/// the contact holds, `Separated` when the shape that counts no longer touches, `Removed`
/// when the last shape goes.
fn rounded_lifecycle<V: Dim>() {
    let Corner {
        mut app,
        wall,
        near,
        ..
    } = corner::<V>();
    let mut expected = vec![None];
    let mut step = |app: &mut App, what: &str, change: &dyn Fn(&mut EntityWorldMut), then| {
        change(&mut app.world_mut().entity_mut(near));
        run_ticks(app, 1);
        if let Some(kind) = then {
            expected.push(kind);
        }
        assert_eq!(kinds(app, wall, near), expected, "{what}");
    };
    let rounded = RoundedAabb::<V>::new(V::splat(0.5), 0.5);
    // A smaller radius: 0.42 apart, more than 0.3.
    step(
        &mut app,
        "radius 0.3",
        &|e| {
            e.insert(RoundedAabb::<V>::new(V::splat(0.5), 0.3));
        },
        Some(Some(EndReason::Separated)),
    );
    step(
        &mut app,
        "radius 0.5 again",
        &|e| {
            e.insert(rounded);
        },
        Some(None),
    );
    // A capsule of zero length (a ball of radius 0.5 at (1.8, 1.8), 0.8 √2 from the
    // wall's corner) beside it: the rounded box counts.
    let capsule = Capsule::<V>::new(0.0, 0.5);
    step(
        &mut app,
        "capsule inserted",
        &|e| {
            e.insert(capsule);
        },
        None,
    );
    step(
        &mut app,
        "rounded box removed, the capsule left",
        &|e| {
            e.remove::<RoundedAabb<V>>();
        },
        Some(Some(EndReason::Separated)),
    );
    step(
        &mut app,
        "rounded box back beside the capsule",
        &|e| {
            e.insert(rounded);
        },
        Some(None),
    );
    step(
        &mut app,
        "capsule removed",
        &|e| {
            e.remove::<Capsule<V>>();
        },
        None,
    );
    // A small ball beside it: the rounded box counts.
    step(
        &mut app,
        "ball inserted",
        &|e| {
            e.insert(BoundingSphere::<V>::new(0.1));
        },
        None,
    );
    step(
        &mut app,
        "rounded box removed, the ball left",
        &|e| {
            e.remove::<RoundedAabb<V>>();
        },
        Some(Some(EndReason::Separated)),
    );
    step(
        &mut app,
        "rounded box back, the ball removed in the same command",
        &|e| {
            e.insert(rounded).remove::<BoundingSphere<V>>();
        },
        Some(None),
    );
    // A small box beside it: the box counts.
    step(
        &mut app,
        "box inserted",
        &|e| {
            e.insert(Aabb::new(V::splat(0.1)));
        },
        Some(Some(EndReason::Separated)),
    );
    step(
        &mut app,
        "box removed",
        &|e| {
            e.remove::<Aabb<V>>();
        },
        Some(None),
    );
    step(
        &mut app,
        "rounded box removed, no shape left",
        &|e| {
            e.remove::<RoundedAabb<V>>();
        },
        Some(Some(EndReason::Removed)),
    );
    let tracked = app.world().get::<TrackedCollider<V>>(near).unwrap();
    assert!(tracked.proxy().is_none());
    step(
        &mut app,
        "rounded box put back",
        &|e| {
            e.insert(rounded);
        },
        Some(None),
    );
    assert_eq!(app.world().resource::<AabbTree<V>>().tree().len(), 3);
    finish::<V>(&app);
}

/// Scale scales the inner box per axis and the radius by the largest factor; a quarter
/// turn swaps the extents. The world shape says so, and so does the contact it makes.
fn rounded_scale_and_turn<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
    let mut half = V::splat(0.5);
    half.set_axis(0, 1.0);
    let rounded = RoundedAabb::new(half, 0.25).with_offset(V::splat(0.5));
    let scaled = app.spawn_id((
        Transform::from_xyz(10.0, 0.0, 0.0).with_scale(Vec3::new(2.0, 1.0, 1.0)),
        rounded,
    ));
    let turned = app.spawn_id((
        Transform::from_xyz(-10.0, 0.0, 0.0)
            .with_rotation(Quat::from_rotation_z(core::f32::consts::FRAC_PI_2)),
        rounded,
    ));
    run_ticks(&mut app, 1);
    let shape = |e: Entity| match app
        .world()
        .get::<TrackedCollider<V>>(e)
        .unwrap()
        .world_shape()
    {
        WorldShape::Rounded(r) => r,
        other => panic!("{other:?} is not a rounded box"),
    };
    let s = shape(scaled);
    let mut center = V::splat(0.5);
    center.set_axis(0, 11.0);
    let mut doubled = V::splat(0.5);
    doubled.set_axis(0, 2.0);
    assert_eq!(s, RoundedBox::new(center, doubled, 0.5));
    let t = shape(turned);
    let mut swapped = V::splat(0.5);
    swapped.set_axis(1, 1.0);
    let mut turned_center = V::splat(0.5);
    turned_center.set_axis(0, -10.5);
    assert!(
        (t.half_extents - swapped).abs().max_element() < 1e-6,
        "{t:?}"
    );
    assert!(
        (t.center - turned_center).abs().max_element() < 1e-6,
        "{t:?}"
    );
    assert!((t.radius - 0.25).abs() < 1e-6, "{t:?}");
    // A point just inside the scaled one's rounded end on x (inner box to x = 13, radius
    // 0.5) and one just outside it.
    let world = app.world_mut();
    let mut state: SystemState<SpatialQuery<V>> = SystemState::new(world);
    let query = state.get(world).unwrap();
    let mut inside = center;
    inside.set_axis(0, 13.49);
    let mut outside = center;
    outside.set_axis(0, 13.51);
    let filter = QueryFilter::default();
    assert_eq!(query.point(inside, &filter), vec![scaled]);
    assert!(query.point(outside, &filter).is_empty());
}

/// A `Static` rounded box is in the static tree and pairs with moving colliders but not
/// with another static one; a `Sensor` rounded box raises events and the queries leave it
/// out on request; layers that do not match keep a rounded box from pairing.
fn rounded_static_sensor_layers<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
    let floor = RoundedAabb::<V>::new(V::splat(1.0), 0.25);
    let ground = app.spawn_id((Transform::default(), floor, Static));
    let ground_too = app.spawn_id((Transform::from_xyz(2.0, 0.0, 0.0), floor, Static));
    let mover = app.spawn_id((Transform::from_xyz(0.0, 2.0, 0.0), Aabb::new(V::splat(0.5))));
    let sensor = app.spawn_id((
        Transform::from_xyz(-20.0, 0.0, 0.0),
        RoundedAabb::<V>::new(V::splat(0.5), 0.5),
        Sensor,
    ));
    let visitor = app.spawn_id((
        Transform::from_xyz(-21.2, 0.0, 0.0),
        BoundingSphere::<V>::new(0.5),
    ));
    let other_layer = app.spawn_id((
        Transform::from_xyz(20.0, 0.0, 0.0),
        RoundedAabb::<V>::new(V::splat(0.5), 0.5),
        CollisionLayers::new(1, 1),
    ));
    let stranger = app.spawn_id((
        Transform::from_xyz(21.0, 0.0, 0.0),
        Aabb::new(V::splat(0.5)),
        CollisionLayers::new(2, 2),
    ));
    run_ticks(&mut app, 1);
    // The mover's bottom at 1.5 is above the floor's top at 1.25; the sensor's inner box
    // reaches x = -20.5, the visitor's ball -20.7: 0.2 apart, less than the radius.
    assert_eq!(touching_now(&app), Pairs::from([key(sensor, visitor)]));
    set_translation(&mut app, mover, Vec3::new(0.0, 1.7, 0.0));
    run_ticks(&mut app, 1);
    assert_eq!(
        touching_now(&app),
        Pairs::from([key(sensor, visitor), key(ground, mover)])
    );
    let tracked = app.world().get::<TrackedCollider<V>>(ground).unwrap();
    assert!(tracked.is_in_static_tree());
    let state = app.world().resource::<AabbTree<V>>();
    assert!(!state.is_touching(ground, ground_too));
    assert!(!state.is_touching(other_layer, stranger));
    let world = app.world_mut();
    let mut query_state: SystemState<SpatialQuery<V>> = SystemState::new(world);
    let query = query_state.get(world).unwrap();
    let probe = RoundedBox::new(
        V::truncate_from_3d(Vec3::new(-20.0, 0.0, 0.0)),
        V::ZERO,
        0.1,
    );
    assert_eq!(
        query.rounded_box(&probe, &QueryFilter::default()),
        vec![sensor]
    );
    assert!(
        query
            .rounded_box(&probe, &QueryFilter::default().without_sensors())
            .is_empty()
    );
    let layer_probe = RoundedBox::new(V::truncate_from_3d(Vec3::new(20.5, 0.0, 0.0)), V::ZERO, 0.1);
    let mut in_layer_1 = query.rounded_box(&layer_probe, &QueryFilter::default().with_mask(1));
    in_layer_1.sort();
    assert_eq!(in_layer_1, vec![other_layer]);
    finish::<V>(&app);
}

both_dims!(
    rounded_queries_match_brute_force,
    rounded_corner_is_exact,
    rounded_lifecycle,
    rounded_scale_and_turn,
    rounded_static_sensor_layers,
);
