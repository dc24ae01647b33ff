//! An opt-in helper that moves entities by their velocity.

use core::marker::PhantomData;

use bevy::prelude::*;

use crate::Vector;
use crate::plugin::Velocity;

/// Moves every entity with a [`Velocity`] (and without [`NotIntegrated`]) by
/// `velocity × step` in `FixedUpdate`, in the set [`VelocitySystems::Integrate`]. Opt-in,
/// for examples and simple games: [`AabbTreePlugin`](crate::plugin::AabbTreePlugin)
/// itself never writes `Transform`.
///
/// The collision tick that follows (in `FixedPostUpdate` by default) sweeps each move,
/// including the first one of an entity spawned since the last tick (from where it was
/// spawned) and the one right after a [`Teleported`](crate::plugin::Teleported) jump (from
/// the jump's destination).
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::d2::*;
/// # let mut app = App::new();
/// app.add_plugins(VelocityPlugin::default())
///     // A system that steers before the move.
///     .add_systems(FixedUpdate, steer.before(VelocitySystems::Integrate));
/// # fn steer() {}
/// ```
pub struct VelocityPlugin<V: Vector>(PhantomData<fn() -> V>);

impl<V: Vector> Default for VelocityPlugin<V> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

/// The system set of [`VelocityPlugin`], in `FixedUpdate`.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VelocitySystems {
    /// `Transform` moved by `Velocity × step`.
    Integrate,
}

/// Keeps [`VelocityPlugin`] from moving this entity: its [`Velocity`] still fattens its
/// box, and the game moves it itself (a character moved by
/// [`AabbTree::move_and_slide`](crate::plugin::AabbTree::move_and_slide), say).
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Debug, Default)]
pub struct NotIntegrated;

impl<V: Vector> Plugin for VelocityPlugin<V> {
    fn build(&self, app: &mut App) {
        app.register_type::<NotIntegrated>().add_systems(
            FixedUpdate,
            integrate::<V>.in_set(VelocitySystems::Integrate),
        );
    }
}

fn integrate<V: Vector>(
    time: Res<Time>,
    mut q: Query<(&mut Transform, &Velocity<V>), Without<NotIntegrated>>,
) {
    let dt = time.delta_secs();
    for (mut transform, velocity) in &mut q {
        if velocity.0 != V::ZERO {
            transform.translation += velocity.0.extend_to_3d() * dt;
        }
    }
}
