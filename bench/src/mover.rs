//! The game system that moves the benchmark scenes' boxes in an app, and the app of a
//! scene, shared by the binaries that run a scene through Bevy. Included with
//! `#[path = "../mover.rs"] mod mover;` by binaries that also include `dim.rs` as `dim`
//! and `benches/support/scene.rs` as `scene`.

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::Vector;
use bevy_aabb_tree::prelude::{Aabb, Velocity};

/// The scene's region and step, for the mover.
#[derive(Resource, Clone, Copy)]
pub struct Region {
    /// The side of the square (cube) the boxes stay in, from the origin.
    pub side: f32,
    /// The time step of one tick.
    pub dt: f32,
}

/// Moves every box by its velocity and bounces it off the region's walls.
pub fn move_boxes<V: Vector>(
    region: Res<Region>,
    mut q: Query<(&mut Transform, &mut Velocity<V>)>,
) {
    let Region { side, dt } = *region;
    for (mut transform, mut velocity) in &mut q {
        let mut c = transform.translation;
        let mut v = velocity.0.extend_to_3d();
        for k in 0..V::DIM {
            c[k] += v[k] * dt;
            if c[k] < 0.0 || c[k] > side {
                c[k] = c[k].clamp(0.0, side);
                v[k] = -v[k];
            }
        }
        transform.translation = c;
        velocity.0 = V::truncate_from_3d(v);
    }
}

/// `app` (Bevy's plugins, the collision plugin and its resources already added) set up to
/// run `scene`: one fixed step of the scene's `dt` a frame, the boxes spawned (`each` may
/// add to box `i`'s entity) and moved by [`move_boxes`], then finished and ticked
/// `warmup` times (the first tick inserts every collider).
pub fn scene_app<V: crate::dim::Dim, const D: usize>(
    mut app: App,
    scene: &crate::scene::Scene<D>,
    warmup: usize,
    mut each: impl FnMut(usize, &mut EntityWorldMut),
) -> App {
    app.insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(
        scene.dt,
    )))
    .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
    .insert_resource(Region {
        side: scene.side,
        dt: scene.dt,
    })
    .add_systems(FixedUpdate, move_boxes::<V>);
    for i in 0..scene.len() {
        let mut t = Vec3::ZERO;
        let mut vel = Vec3::ZERO;
        for k in 0..D {
            t[k] = scene.centers[i][k];
            vel[k] = scene.velocities[i][k];
        }
        let mut e = app.world_mut().spawn((
            Transform::from_translation(t),
            Aabb::new(V::splat(scene.half)),
            Velocity(V::truncate_from_3d(vel)),
        ));
        each(i, &mut e);
    }
    app.finish();
    app.cleanup();
    for _ in 0..warmup {
        app.update();
    }
    app
}
