//! Tunnelling: fast colliders against thin walls, bullets and teleports (sweeps on, the default).

use super::*;

// ---------------------------------------------------------------------------------------
// Tunnelling (sweeps on, the default)

/// A box at 600 units/s (10 units a tick at 60 Hz) through a wall 0.1 thick.
pub(crate) fn box_through_thin_wall<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let wall = app.spawn_id((Transform::default(), Aabb::new(v::<V>(0.05, 2.0, 2.0))));
    let bullet = app.spawn_id((
        Transform::from_xyz(-5.0, 0.0, 0.0),
        Aabb::new(V::splat(0.25)),
        Velocity(v::<V>(600.0, 0.0, 0.0)),
    ));
    run_ticks(&mut app, 1);
    set_translation(&mut app, bullet, Vec3::new(5.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    set_translation(&mut app, bullet, Vec3::new(15.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    // The front face goes from -4.75 to 5.25 and meets the wall's face at -0.05:
    // (-0.05 - -4.75) / 10 = 0.47.
    assert_pass_through(&events, bullet, wall, 0.47);
    assert_eq!(events[0].tick, 1);
    assert_eq!(
        app.world().resource::<AabbTree<V>>().pass_throughs().len(),
        0
    );
}

/// The same in the default `FixedPostUpdate`, moved by `VelocityPlugin` from x = -25:
/// the tick from -5 to 5 meets the wall at 0.47.
pub(crate) fn box_through_thin_wall_fixed<V: Dim>() {
    let mut app = update_app::<V>(Sched::Fixed);
    app.add_plugins(VelocityPlugin::<V>::default());
    let wall = app.spawn_id((Transform::default(), Aabb::new(v::<V>(0.05, 2.0, 2.0))));
    let bullet = app.spawn_id((
        Transform::from_xyz(-25.0, 0.0, 0.0),
        Aabb::new(V::splat(0.25)),
        Velocity(v::<V>(600.0, 0.0, 0.0)),
    ));
    run_ticks(&mut app, 6);
    let events = finish::<V>(&app);
    assert_pass_through(&events, bullet, wall, 0.47);
}

/// Two fast boxes head-on: each moves 10 units a tick, the faces 9.5 apart close at 20
/// units a tick: 0.475.
pub(crate) fn head_on_boxes<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let a = app.spawn_id((
        Transform::from_xyz(-5.0, 0.0, 0.0),
        Aabb::new(V::splat(0.25)),
    ));
    let b = app.spawn_id((
        Transform::from_xyz(5.0, 0.1, 0.0),
        Aabb::new(V::splat(0.25)),
    ));
    run_ticks(&mut app, 1);
    set_translation(&mut app, a, Vec3::new(5.0, 0.0, 0.0));
    set_translation(&mut app, b, Vec3::new(-5.0, 0.1, 0.0));
    run_ticks(&mut app, 2);
    let events = finish::<V>(&app);
    assert_pass_through(&events, a, b, 0.475);
}

/// A sphere bullet (radius 0.25, 0.3 off the wall's center line) through the wall: its
/// center reaches x = -0.3 at (5 - 0.3) / 10 = 0.47.
pub(crate) fn sphere_bullet<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let wall = app.spawn_id((Transform::default(), Aabb::new(v::<V>(0.05, 2.0, 2.0))));
    let bullet = app.spawn_id((
        Transform::from_xyz(-5.0, 0.3, 0.0),
        BoundingSphere::<V>::new(0.25),
    ));
    run_ticks(&mut app, 1);
    set_translation(&mut app, bullet, Vec3::new(5.0, 0.3, 0.0));
    run_ticks(&mut app, 2);
    let events = finish::<V>(&app);
    assert_pass_through(&events, bullet, wall, 0.47);

    // And a sphere against a sphere, head-on: centers 10 apart, radii 0.5 + 0.5, closing
    // at 20 a tick: (10 - 1) / 20 = 0.45.
    let mut app = update_app::<V>(Sched::Update);
    let a = app.spawn_id((
        Transform::from_xyz(-5.0, 0.0, 0.0),
        BoundingSphere::<V>::new(0.5),
    ));
    let b = app.spawn_id((
        Transform::from_xyz(5.0, 0.0, 0.0),
        BoundingSphere::<V>::new(0.5),
    ));
    run_ticks(&mut app, 1);
    set_translation(&mut app, a, Vec3::new(5.0, 0.0, 0.0));
    set_translation(&mut app, b, Vec3::new(-5.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    assert_pass_through(&events, a, b, 0.45);
}

/// A `Teleported` jump across the wall gives no event; the marker is removed.
pub(crate) fn teleport_across_wall<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    app.world_mut()
        .spawn((Transform::default(), Aabb::new(v::<V>(0.05, 2.0, 2.0))));
    let jumper = app.spawn_id((
        Transform::from_xyz(-5.0, 0.0, 0.0),
        Aabb::new(V::splat(0.25)),
    ));
    run_ticks(&mut app, 1);
    set_translation(&mut app, jumper, Vec3::new(5.0, 0.0, 0.0));
    app.world_mut().entity_mut(jumper).insert(Teleported);
    run_ticks(&mut app, 1);
    set_translation(&mut app, jumper, Vec3::new(6.0, 0.0, 0.0));
    run_ticks(&mut app, 2);
    assert!(!app.world().entity(jumper).contains::<Teleported>());
    let events = finish::<V>(&app);
    assert!(events.is_empty(), "{events:#?}");
    // Without the marker the same jump back is a pass-through.
    set_translation(&mut app, jumper, Vec3::new(-5.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[1].reason(), Some(EndReason::PassedThrough));
}

/// `Teleported` on a parent covers its child collider: the parent's jump across a wall is
/// not swept, the marker is gone after the tick, and the same jump back without it is a
/// pass-through.
pub(crate) fn teleport_parent_across_wall<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    // The brute-force check reads each collider's own `Transform`, not its parent's.
    app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
    app.world_mut()
        .spawn((Transform::default(), Aabb::new(v::<V>(0.05, 2.0, 2.0))));
    let player = app.spawn_id(Transform::from_xyz(-5.0, 0.0, 0.0));
    let child = app.spawn_id((
        Transform::from_xyz(0.0, 0.5, 0.0),
        Aabb::new(V::splat(0.25)),
        ChildOf(player),
    ));
    run_ticks(&mut app, 1);
    set_translation(&mut app, player, Vec3::new(5.0, 0.0, 0.0));
    app.world_mut().entity_mut(player).insert(Teleported);
    run_ticks(&mut app, 1);
    assert!(!app.world().entity(player).contains::<Teleported>());
    set_translation(&mut app, player, Vec3::new(6.0, 0.0, 0.0));
    run_ticks(&mut app, 2);
    let events = finish::<V>(&app);
    assert!(events.is_empty(), "{events:#?}");
    // Without the marker the same jump back is a pass-through.
    set_translation(&mut app, player, Vec3::new(-5.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[1].reason(), Some(EndReason::PassedThrough));
    // The parent and the child both marked: both markers go with the jump, so the next
    // move (back across the wall, unmarked) is swept again.
    set_translation(&mut app, player, Vec3::new(5.0, 0.0, 0.0));
    app.world_mut().entity_mut(player).insert(Teleported);
    app.world_mut().entity_mut(child).insert(Teleported);
    run_ticks(&mut app, 1);
    assert!(!app.world().entity(player).contains::<Teleported>());
    assert!(!app.world().entity(child).contains::<Teleported>());
    assert_eq!(finish::<V>(&app).len(), 2);
    set_translation(&mut app, player, Vec3::new(-5.0, 0.0, 0.0));
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    assert_eq!(events.len(), 4, "{events:#?}");
    assert_eq!(events[3].reason(), Some(EndReason::PassedThrough));
}

both_dims!(
    box_through_thin_wall,
    box_through_thin_wall_fixed,
    head_on_boxes,
    sphere_bullet,
    teleport_across_wall,
    teleport_parent_across_wall,
);
