//! [`CharacterController`]: what a game sets on a character.

use bevy::prelude::*;

use crate::Vector;
use crate::geometry::CharacterConfig;
use crate::plugin::CharacterState;

/// A character moved by [`CharacterPlugin`](crate::plugin::CharacterPlugin): its collider
/// (an [`Aabb`](crate::plugin::Aabb), a [`Capsule`](crate::plugin::Capsule), the usual
/// shape of a character, a [`RoundedAabb`](crate::plugin::RoundedAabb) or a
/// [`BoundingSphere`](crate::plugin::BoundingSphere)) is moved
/// by `velocity` at every tick, through the collision world.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::d2::*;
/// fn spawn_player(mut commands: Commands) {
///     commands.spawn((
///         Transform::from_xyz(0.0, 2.0, 0.0),
///         Aabb::new(Vec2::new(0.4, 0.9)),
///         CharacterController::new(Vec2::Y),
///     ));
/// }
///
/// /// What the game's input system wrote this frame.
/// #[derive(Component, Default)]
/// struct Intent {
///     run: f32,
///     jump: bool,
/// }
///
/// // Before the collision tick (in `FixedUpdate` with the default schedule).
/// fn walk(time: Res<Time>, mut players: Query<(&mut CharacterController, &CharacterState, &Intent)>) {
///     for (mut controller, state, intent) in &mut players {
///         controller.velocity.x = 6.0 * intent.run;
///         controller.velocity.y -= 30.0 * time.delta_secs();
///         if state.grounded && intent.jump {
///             controller.velocity.y = 12.0;
///         }
///     }
/// }
/// # bevy::ecs::system::assert_is_system(walk);
/// ```
#[derive(Component, Clone, Debug, PartialEq, Reflect)]
#[require(CharacterState<V>)]
#[reflect(Component, Debug)]
pub struct CharacterController<V: Vector> {
    /// The velocity to move by, in world units per second, gravity included. The
    /// controller removes what ran into surfaces at each move (see
    /// [`CharacterMove::clip_velocity`](crate::geometry::CharacterMove::clip_velocity)),
    /// and sets it to zero while the character is
    /// [crushed](CharacterState::crushed) and when it is not finite (with a warning).
    /// Default: zero.
    pub velocity: V,
    /// Steps, slopes, snapping and skin. Default: [`CharacterConfig::new`] with the up
    /// direction given.
    ///
    /// A setting out of its range is replaced for the move, with one warning naming the
    /// character, the setting and its value (again only after it was right for a move):
    /// an `up` that is not finite by zero (the character moves as a top-down one), a
    /// `skin`, `max_step_height` or `snap_distance` that is not a finite number of at
    /// least 0, a `max_slope` outside 0 to π/2 (NaN included) and a `max_iterations`
    /// of 0 by their defaults ([`CharacterConfig::new`]). A collider of zero size (a
    /// point, a flat box) is warned about too: it fits into the seams between
    /// colliders.
    pub config: CharacterConfig<V>,
    /// Set it (for one tick, or while a button is held) to drop through the
    /// [`OneWay`](crate::plugin::OneWay) platform the character stands on; it then passes through that platform
    /// until clear of it. Default: `false`.
    pub drop_through: bool,
}

impl<V: Vector> CharacterController<V> {
    /// A character with `up` as its up direction (`Vec2::Y`, `Vec3::Y`), at rest, with
    /// the default [`CharacterConfig`].
    pub fn new(up: V) -> Self {
        Self {
            velocity: V::ZERO,
            config: CharacterConfig::new(up),
            drop_through: false,
        }
    }

    /// A character of a top-down game: no up direction, so no ground, steps or snapping.
    pub fn top_down() -> Self {
        Self::new(V::ZERO)
    }

    /// The same controller with `config`.
    pub fn with_config(mut self, config: CharacterConfig<V>) -> Self {
        self.config = config;
        self
    }
}
