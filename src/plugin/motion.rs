//! An opt-in helper that moves entities by their velocity.

use core::marker::PhantomData;

use bevy::prelude::*;

use crate::Vector;
use crate::plugin::Velocity;

/// Moves every entity with a [`Velocity`] by `velocity × step` in `FixedUpdate`. Opt-in,
/// for examples and simple games: [`AabbTreePlugin`](crate::plugin::AabbTreePlugin)
/// itself never writes `Transform`.
pub struct VelocityPlugin<V: Vector>(PhantomData<fn() -> V>);

impl<V: Vector> Default for VelocityPlugin<V> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<V: Vector> Plugin for VelocityPlugin<V> {
    fn build(&self, app: &mut App) {
        app.add_systems(FixedUpdate, integrate::<V>);
    }
}

fn integrate<V: Vector>(time: Res<Time>, mut q: Query<(&mut Transform, &Velocity<V>)>) {
    let dt = time.delta_secs();
    for (mut transform, velocity) in &mut q {
        if velocity.0 != V::ZERO {
            transform.translation += velocity.0.extend_to_3d() * dt;
        }
    }
}
