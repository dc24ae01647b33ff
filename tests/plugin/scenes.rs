//! Random scenes against the overlap and swept oracles, over many ticks, on every schedule and rate.

use super::*;

pub(crate) const SEEDS: [u64; 3] = [1, 42, 0xDEAD_BEEF];

/// Item 1: random scenes, `Update` schedule, several seeds; determinism of the order.
pub(crate) fn random_scenes_match_oracle<V: Dim>() {
    let mut first = None;
    for seed in SEEDS {
        let events = run_scene_against_oracle::<V>(seed, Sched::Update, 60.0, 40, 200, &[]);
        first.get_or_insert(events);
    }
    let again = run_scene_against_oracle::<V>(SEEDS[0], Sched::Update, 60.0, 40, 200, &[]);
    assert_eq!(
        Some(again),
        first,
        "the same scene gave different event sequences"
    );
}

/// Item 1 in the default `FixedPostUpdate` (positions set in `FixedUpdate`).
pub(crate) fn random_scene_fixed_post_update<V: Dim>() {
    run_scene_against_oracle::<V>(7, Sched::Fixed, 60.0, 40, 200, &[]);
}

/// Item 4: fixed 20 Hz, frames at 60 Hz, positions set in `FixedUpdate`: each tick tests
/// the positions set in that very tick.
pub(crate) fn random_scene_slow_fixed_rate<V: Dim>() {
    run_scene_against_oracle::<V>(11, Sched::Fixed, 20.0, 40, 100, &[]);
}

/// The other way round: fixed 150 Hz, frames at 60 Hz, two or three ticks in a frame.
pub(crate) fn random_scene_fast_fixed_rate<V: Dim>() {
    run_scene_against_oracle::<V>(12, Sched::Fixed, 150.0, 40, 150, &[]);
}

/// Item 6: the same scene with sweeps on, twice: the same events in the same order.
pub(crate) fn determinism_with_sweeps<V: Dim>() {
    let run = || {
        let scene = random_scene::<V>(99, 40, 150);
        let mut app = update_app::<V>(Sched::Update);
        spawn_scene(&mut app, &scene);
        run_ticks(&mut app, 150);
        finish::<V>(&app)
    };
    let a = run();
    let b = run();
    assert!(a.len() > 20, "too few events: {}", a.len());
    assert_eq!(a, b);
}

/// The knobs that only change how often the tree is touched or what it keeps (margin,
/// velocity multiplier, move cache) changed during a run: the events stay those of the
/// oracle.
pub(crate) fn config_changes_mid_run<V: Dim>() {
    let config = |margin: f32, velocity_multiplier: f32, move_cache: bool| CollisionConfig {
        margin,
        velocity_multiplier,
        swept: false,
        enabled: true,
        move_cache,
        ..default()
    };
    run_scene_against_oracle::<V>(
        3,
        Sched::Update,
        60.0,
        40,
        200,
        &[
            (0, config(0.0, 0.0, true)),
            (40, config(1.0, 0.0, false)),
            (80, config(0.0, 10.0, false)),
            (120, config(0.3, 2.0, true)),
            (160, config(0.0, 0.5, false)),
        ],
    );
}

/// Sweeps on, a scene where colliders only translate (rotations and scales fixed) and a
/// quarter of them are fast (up to several units a tick, more than their size): per tick
/// and pair, the oracle expects Started with the first time of contact over the tick's
/// motion for pairs not touching at the last tick, Ended(PassedThrough) with it when they
/// no longer touch at the end, Ended(Separated) for pairs that stop touching.
pub(crate) fn swept_scene_matches_oracle<V: Dim>() {
    for seed in [21, 22] {
        let ticks = 150;
        let mut scene = random_scene::<V>(seed, 40, ticks);
        let mut rng = Rng::new(seed + 1000);
        for b in &mut scene.bodies {
            b.spin = 0.0;
            if rng.chance(0.25) {
                b.amplitude = rng.vec3(3.0, 9.0);
                b.frequency = rng.vec3(0.2, 0.6);
            }
        }
        scene.frames = (0..ticks)
            .map(|k| scene.bodies.iter().map(|b| b.transform(k)).collect())
            .collect();
        let mut app = update_app::<V>(Sched::Update);
        let entities = spawn_scene(&mut app, &scene);
        run_ticks(&mut app, ticks as u32);
        let events = finish::<V>(&app);

        let shapes = frame_shapes(&scene.bodies, &scene.frames);
        let layers: Vec<_> = scene.bodies.iter().map(|b| b.layers).collect();
        let (passes, normals) = assert_swept_oracle(
            &format!("seed {seed}"),
            &shapes,
            &layers,
            &entities,
            &events,
        );
        assert!(passes >= 10, "seed {seed}: only {passes} pass-throughs");
        assert!(normals >= 50, "seed {seed}: only {normals} contact normals");
        eprintln!("seed {seed}: {passes} pass-throughs, {normals} contact normals");
    }
}

both_dims!(
    random_scenes_match_oracle,
    random_scene_fixed_post_update,
    random_scene_slow_fixed_rate,
    random_scene_fast_fixed_rate,
    determinism_with_sweeps,
    config_changes_mid_run,
    swept_scene_matches_oracle,
);
