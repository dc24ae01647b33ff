//! The checksum `AabbTreeRollbackPlugin` adds for `bevy_ggrs` (feature `ggrs`) tells
//! world shapes apart that differ only by their rounding: two rounded boxes with the same
//! bounding box and different radii give different checksums, as do a box and a rounded
//! box of the same bounding box; the same scene gives the same checksum.
#![cfg(feature = "ggrs")]

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::d2::*;
use bevy_ggrs::{ChecksumFlag, ChecksumPart, SaveWorld, SnapshotPlugin};

/// The shape of the collider the scenes differ by.
#[derive(Clone, Copy, Debug)]
enum Probe {
    Box,
    Rounded(f32),
}

/// The collision checksum after one tick of a scene with a wall and a probe touching it,
/// both of outer half size 0.5 (the probe a box or a rounded box of that outer size).
fn checksum(probe: Probe) -> u128 {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins(SnapshotPlugin)
        .add_plugins(AabbTreePlugin::new(Update))
        .add_plugins(AabbTreeRollbackPlugin::default())
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )));
    app.world_mut()
        .spawn((Transform::default(), Aabb::new(Vec2::splat(0.5))));
    let mut probe_entity = app.world_mut().spawn(Transform::from_xyz(0.9, 0.0, 0.0));
    match probe {
        Probe::Box => probe_entity.insert(Aabb::new(Vec2::splat(0.5))),
        Probe::Rounded(radius) => {
            probe_entity.insert(RoundedAabb::from_outer(Vec2::splat(0.5), radius))
        }
    };
    app.update();
    assert_eq!(
        app.world().resource::<AabbTree>().touching_pairs().count(),
        1,
        "{probe:?}: the probe touches the wall"
    );
    app.world_mut().run_schedule(SaveWorld);
    let world = app.world_mut();
    let mut parts = world.query_filtered::<&ChecksumPart, With<ChecksumFlag<AabbTree>>>();
    parts.single(world).expect("one collision checksum").0
}

#[test]
fn checksum_includes_the_radius() {
    // Radii whose differences from 0.5 are exact: the bounding boxes are equal to the bit.
    let (a, b) = (
        checksum(Probe::Rounded(0.125)),
        checksum(Probe::Rounded(0.25)),
    );
    assert_eq!(a, checksum(Probe::Rounded(0.125)), "the same scene");
    assert_ne!(a, b, "radii 0.125 and 0.25, one bounding box");
    // A rounded box of radius 0 is a box: the same world box, a different kind of shape.
    assert_ne!(checksum(Probe::Box), checksum(Probe::Rounded(0.0)));
}
