//! The game system that moves the benchmark scenes' boxes in an app, shared by the
//! binaries that run a scene through Bevy. Included with `#[path = "../mover.rs"] mod mover;`.

use bevy::prelude::*;
use bevy_aabb_tree::Vector;
use bevy_aabb_tree::prelude::Velocity;

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
