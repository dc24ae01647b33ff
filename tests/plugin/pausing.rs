//! Pausing the pipeline (`CollisionConfig::enabled = false`): contacts stay as last
//! reported, and resuming reports what changed meanwhile.

use super::*;

both_dims!(pause_and_resume);

fn colliding<V: Dim>(app: &App, e: Entity) -> Vec<Entity> {
    let mut v: Vec<Entity> = app
        .world()
        .get::<CollidingEntities>(e)
        .unwrap()
        .iter()
        .collect();
    v.sort();
    v
}

fn set_enabled(app: &mut App, enabled: bool) {
    app.world_mut().resource_mut::<CollisionConfig>().enabled = enabled;
}

/// Two touching boxes, paused: one moves away, a third is spawned on the other, and a
/// fourth touching pair is despawned. No event while paused (save the despawn's end,
/// which comes at once) and `CollidingEntities` unchanged; on resume, one end
/// (`Separated`) and one start, and the sets follow.
fn pause_and_resume<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let spawn = |app: &mut App, x: f32| {
        app.spawn_id((
            Transform::from_xyz(x, 0.0, 0.0),
            Aabb::<V>::new(V::splat(0.5)),
            CollidingEntities::default(),
        ))
    };
    let (a, b) = (spawn(&mut app, 0.0), spawn(&mut app, 0.8));
    let (c, d) = (spawn(&mut app, 10.0), spawn(&mut app, 10.8));
    run_ticks(&mut app, 2);
    assert_eq!(colliding::<V>(&app, a), vec![b]);
    let before = events(&app).len();

    set_enabled(&mut app, false);
    set_translation(&mut app, b, Vec3::new(5.0, 0.0, 0.0));
    let e = spawn(&mut app, -0.8);
    app.world_mut().despawn(d);
    for _ in 0..5 {
        app.update();
    }
    let paused: Vec<Ev> = events(&app)[before..].to_vec();
    // Only the despawn's end, at once.
    assert_eq!(paused.len(), 1, "{paused:?}");
    assert_eq!(paused[0].reason(), Some(EndReason::Removed));
    assert_eq!(
        colliding::<V>(&app, a),
        vec![b],
        "contacts changed while paused"
    );
    assert!(colliding::<V>(&app, c).is_empty());

    set_enabled(&mut app, true);
    let resumed_from = events(&app).len();
    run_ticks(&mut app, 1);
    let resumed: Vec<Ev> = events(&app)[resumed_from..].to_vec();
    let ended: Vec<_> = resumed
        .iter()
        .filter(|ev| ev.reason() == Some(EndReason::Separated))
        .map(Ev::pair)
        .collect();
    let started: Vec<_> = resumed
        .iter()
        .filter(|ev| ev.reason().is_none())
        .map(Ev::pair)
        .collect();
    assert_eq!(resumed.len(), 2, "{resumed:?}");
    assert_eq!(ended, vec![key(a, b)]);
    assert_eq!(started, vec![key(a, e)]);
    assert_eq!(colliding::<V>(&app, a), vec![e]);
    // (The harness's `finish` would compare every paused tick with brute force, which a
    // pause is meant to differ from.)
}
