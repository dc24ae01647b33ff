//! An opt-in helper that moves entities by their velocity.

use core::marker::PhantomData;

use bevy::ecs::entity::EntityHashSet;
use bevy::prelude::*;

use crate::Vector;
use crate::plugin::{AabbTree, TrackedCollider, Velocity};

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
/// A velocity that is not finite (NaN or infinite), or a move that would overflow the
/// translation, leaves the entity where it is: it never gets a non-finite `Transform`.
/// One warning names the entity and the velocity, once until the velocity is valid
/// again; for a collider it is the collision pipeline's own warning about the
/// [`Velocity`] (the collider is left out of collision detection until then).
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

/// What [`VelocityPlugin`] reads and writes of an entity: whether it is a collider
/// decides who warns about a bad velocity.
type Integrated<V> = (
    Entity,
    &'static mut Transform,
    &'static Velocity<V>,
    Has<TrackedCollider<V>>,
);

fn integrate<V: Vector>(
    time: Res<Time>,
    mut q: Query<Integrated<V>, Without<NotIntegrated>>,
    pipeline: Option<Res<AabbTree<V>>>,
    // The entities whose velocity was warned about, until it is valid again.
    mut warned: Local<EntityHashSet>,
    mut removed: RemovedComponents<Velocity<V>>,
) {
    // Despawned, or no velocity any more: forgotten.
    for entity in removed.read() {
        warned.remove(&entity);
    }
    let dt = time.delta_secs();
    for (entity, mut transform, velocity, collider) in &mut q {
        let moved = transform.translation + velocity.0.extend_to_3d() * dt;
        if moved.is_finite() || !transform.translation.is_finite() {
            // A translation that is already not finite is the pipeline's to report.
            if velocity.0 != V::ZERO && moved.is_finite() {
                transform.translation = moved;
            }
            if !warned.is_empty() {
                warned.remove(&entity);
            }
            continue;
        }
        // Left where it is. A collider's velocity is the pipeline's to report (it leaves
        // the collider out until the velocity is valid), so it is named once.
        if warned.insert(entity) && !(collider && pipeline.is_some()) {
            warn!(
                "bevy_aabb_tree: entity {entity} has Velocity {:?}, which moves it to a non-finite translation: VelocityPlugin leaves it where it is until the velocity is valid",
                velocity.0
            );
        }
    }
}
