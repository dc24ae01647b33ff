//! One-way colliders: platforms landed on from above and passed from below.

use bevy::ecs::entity_disabling::Disabled;
use bevy::prelude::*;

use crate::Vector;
use crate::plugin::AabbTree;

/// Makes a collider block only from one side: a platform a character lands on from above
/// and jumps through from below.
///
/// `normal` is the side that blocks (`up` for a platform stood on). The blocking casts
/// ([`AabbTree::cast_blocking`], [`AabbTree::move_and_slide`], the character
/// controller) are stopped by it only when they move against `normal` from on top of it:
/// wholly on the `normal` side, or sunk into it by at most a twentieth of the moving
/// shape's reach along `normal` ([`one_way_blocks`](crate::geometry::one_way_blocks)). A
/// shape jumping up through it, walking into its side, or partly inside it passes, and
/// [`Contacts::push_out`](crate::plugin::Contacts::push_out) pushes only a shape on top
/// of it, and only along `normal`. A fast faller is stopped however far it moves in a
/// tick: the cast is continuous. Events are not one-way: a shape passing through raises
/// [`CollisionStarted`](crate::plugin::CollisionStarted) like any other.
///
/// The component is immutable: change it by inserting a new one.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::d2::*;
/// fn spawn_platform(mut commands: Commands) {
///     commands.spawn((
///         Transform::from_xyz(0.0, 3.0, 0.0),
///         Aabb::new(Vec2::new(2.0, 0.1)),
///         Static,
///         OneWay::new(Vec2::Y),
///     ));
/// }
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[component(immutable)]
#[reflect(Component, Debug, PartialEq)]
pub struct OneWay<V: Vector> {
    normal: V,
}

impl<V: Vector> OneWay<V> {
    /// A collider blocking from the side `normal` points to (`Vec2::Y`: landed on from
    /// above). `normal` need not be unit length; a zero or non-finite one blocks from no
    /// side (a warning names the entity when it is inserted).
    pub fn new(normal: V) -> Self {
        let len = normal.dot(normal).sqrt();
        Self {
            normal: if len > 0.0 && len.is_finite() {
                normal / len
            } else {
                V::ZERO
            },
        }
    }

    /// The blocking side's unit normal (zero when it blocks from no side).
    pub fn normal(&self) -> V {
        self.normal
    }
}

/// Observer: a [`OneWay`] inserted; the casts read its normal from the resource.
pub(crate) fn on_one_way_inserted<V: Vector>(
    event: On<Insert, OneWay<V>>,
    one_ways: Query<&OneWay<V>, Allow<Disabled>>,
    mut state: ResMut<AabbTree<V>>,
) {
    let entity = event.event_target();
    if let Ok(one_way) = one_ways.get(entity) {
        // Normalised again: a value loaded by reflection did not go through `new`.
        let normal = OneWay::new(one_way.normal).normal;
        if normal == V::ZERO {
            warn!(
                "bevy_aabb_tree: entity {entity} has a OneWay with a zero or non-finite normal: it blocks from no side"
            );
        }
        state.one_ways.insert(entity, normal);
    }
}

/// Observer: a [`OneWay`] removed (or its entity despawned).
pub(crate) fn on_one_way_removed<V: Vector>(
    event: On<Remove, OneWay<V>>,
    mut state: ResMut<AabbTree<V>>,
) {
    state.one_ways.remove(&event.event_target());
}
