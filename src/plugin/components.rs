//! The components users put on entities, and the one the plugin maintains.

use bevy::ecs::entity::EntityHashSet;
use bevy::prelude::*;

use crate::Vector;
use crate::geometry::{BoundingBox, Shape};
use crate::tree::ProxyId;

use super::state::AabbTree;
use crate::plugin::key::Key;

mod rounded;

pub use rounded::RoundedAabb;

/// A box collider in the entity's local space: `half_extents` on each axis around
/// `offset`.
///
/// Its world box follows the entity's transform (translation, scale, rotation: a rotated
/// box's world box is the axis-aligned box enclosing it). Not to be confused with
/// `bevy::camera::primitives::Aabb`, Bevy's culling box: import this one by path
/// (`bevy_aabb_tree::Aabb`) or through this crate's prelude, never both by glob.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::prelude::*;
/// let wall = Aabb::new(Vec2::new(0.05, 3.0));
/// let sensor = Aabb::new(Vec3::splat(0.5)).with_offset(Vec3::Y);
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component, Debug, PartialEq)]
#[require(Transform, TrackedCollider<V>)]
pub struct Aabb<V: Vector> {
    /// Half the size on each axis, `>= 0` (a zero extent is a flat box).
    pub half_extents: V,
    /// The box's center in the entity's local space. Default zero.
    pub offset: V,
}

impl<V: Vector> Aabb<V> {
    /// A box with these half extents, centered on the entity.
    pub fn new(half_extents: V) -> Self {
        Self {
            half_extents,
            offset: V::ZERO,
        }
    }

    /// The same box centered at `offset` in local space.
    pub fn with_offset(mut self, offset: V) -> Self {
        self.offset = offset;
        self
    }
}

/// A sphere collider (a circle in 2D): `radius` around `offset` in local space.
///
/// Rotation does not change it; a non-uniform scale scales the radius by the largest
/// scale factor.
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component, Debug, PartialEq)]
#[require(Transform, TrackedCollider<V>)]
pub struct BoundingSphere<V: Vector> {
    /// The radius, `>= 0`.
    pub radius: f32,
    /// The center in the entity's local space. Default zero.
    pub offset: V,
}

impl<V: Vector> BoundingSphere<V> {
    /// A sphere of this radius centered on the entity.
    pub fn new(radius: f32) -> Self {
        Self {
            radius,
            offset: V::ZERO,
        }
    }

    /// The same sphere centered at `offset` in local space.
    pub fn with_offset(mut self, offset: V) -> Self {
        self.offset = offset;
        self
    }
}

/// A capsule collider: a segment of length `2 * half_length` along a principal axis
/// (y unless told otherwise), grown by `radius`, around `offset` in local space. In 2D a
/// stadium (a rectangle with half-circle ends).
///
/// The shape of a character: its rounded bottom slides over seams between tiles and
/// over ledges lower than its radius, and a tall capsule still fits through a door a
/// ball of the same height would not. Everything that takes an [`Aabb`] or a
/// [`BoundingSphere`] takes it: events and [`CollidingEntities`], swept first contacts,
/// fattening by [`Velocity`], [`CollisionLayers`], [`Sensor`], [`OneWay`](crate::plugin::OneWay),
/// [`Static`], pair filters, [`SpatialQuery`](crate::plugin::SpatialQuery) (ray, point,
/// overlap and cast queries hit it as a capsule, and
/// [`cast_capsule`](crate::plugin::SpatialQuery::cast_capsule) casts one), picking,
/// saved scenes and the debug overlay.
///
/// Exactly, not as its bounding box: two capsules touch when their segments are at most
/// the sum of their radii apart. Its world shape is a
/// [`RoundedBox`](crate::geometry::RoundedBox) ([`WorldShape::Rounded`]):
/// - translation moves it and scale scales it: the segment by the scale along its axis,
///   the radius by the largest scale factor (as a [`BoundingSphere`]'s);
/// - rotation is not rotation of the capsule: the world shape is the rounded box whose
///   inner box encloses the rotated segment, rounded by the radius. A quarter turn gives
///   the capsule along the other axis exactly; other angles a rounded box around it
///   (larger, as a rotated [`Aabb`]'s world box is). Lay a capsule along another axis
///   with [`Self::along`], not with a rotation.
///
/// Values: `half_length >= 0` and `radius >= 0`, finite (zero half length is a ball, zero
/// radius a segment); [`CapsuleAxis::Z`] only in 3D. Others leave the entity out of
/// collision detection with one warning naming it, until they are valid again. An
/// entity with several shapes uses one, in this order: [`Aabb`], [`RoundedAabb`],
/// `Capsule`, [`BoundingSphere`] (insert the new shape before removing the old one to
/// change shapes without ending contacts).
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::prelude::*;
/// // A person 1.8 tall and 0.6 wide, standing on the entity's origin.
/// let body = Capsule::<Vec3>::new(0.6, 0.3).with_offset(Vec3::Y * 0.9);
/// assert_eq!(body.half_length, 0.6);
/// // A log lying along x in a 2D level.
/// let log = Capsule::<Vec2>::new(2.0, 0.25).along(CapsuleAxis::X);
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component, Debug, PartialEq)]
#[require(Transform, TrackedCollider<V>)]
pub struct Capsule<V: Vector> {
    /// Half the length of the segment, `>= 0`: the capsule's total length along its axis
    /// is `2 * (half_length + radius)`.
    pub half_length: f32,
    /// The radius, `>= 0`.
    pub radius: f32,
    /// The principal axis the segment runs along. Default [`CapsuleAxis::Y`].
    pub axis: CapsuleAxis,
    /// The center of the segment in the entity's local space. Default zero.
    pub offset: V,
}

/// The principal axis a [`Capsule`] runs along.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Debug, PartialEq, Default)]
pub enum CapsuleAxis {
    /// Along x.
    X,
    /// Along y (the default: a standing character).
    #[default]
    Y,
    /// Along z (3D only).
    Z,
}

impl CapsuleAxis {
    /// The axis' index: 0 for x, 1 for y, 2 for z.
    pub fn index(self) -> usize {
        match self {
            CapsuleAxis::X => 0,
            CapsuleAxis::Y => 1,
            CapsuleAxis::Z => 2,
        }
    }
}

impl<V: Vector> Capsule<V> {
    /// A capsule along y with this half length and radius, centered on the entity.
    pub fn new(half_length: f32, radius: f32) -> Self {
        Self {
            half_length,
            radius,
            axis: CapsuleAxis::Y,
            offset: V::ZERO,
        }
    }

    /// The same capsule along `axis`.
    pub fn along(mut self, axis: CapsuleAxis) -> Self {
        self.axis = axis;
        self
    }

    /// The same capsule centered at `offset` in local space.
    pub fn with_offset(mut self, offset: V) -> Self {
        self.offset = offset;
        self
    }

    /// The half extents of its segment in local space: `half_length` on its axis, zero
    /// on the others (zero on every axis for an axis the dimension lacks).
    pub fn segment_half_extents(&self) -> V {
        let mut half = V::ZERO;
        let axis = self.axis.index();
        if axis < V::DIM {
            half.set_axis(axis, self.half_length);
        }
        half
    }

    /// Whether its values are valid: finite, `>= 0`, and an axis the dimension has.
    pub fn is_valid(&self) -> bool {
        self.half_length.is_finite()
            && self.half_length >= 0.0
            && self.radius.is_finite()
            && self.radius >= 0.0
            && self.offset.is_finite()
            && self.axis.index() < V::DIM
    }
}

/// Linear velocity in world units per second.
///
/// The plugin reads it to fatten boxes (so fast entities do not touch the tree every
/// tick); it never writes it and never moves entities. Sweeps use the actual displacement
/// since the last tick, not this value. [`VelocityPlugin`](crate::plugin::VelocityPlugin)
/// is an opt-in helper that moves entities by it.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Reflect, Deref, DerefMut)]
#[reflect(Component, Debug, PartialEq, Default)]
pub struct Velocity<V: Vector>(pub V);

/// Which entities interact: two entities collide when each one's `memberships` share a
/// bit with the other's `filters`. An entity without this component is a member of
/// every layer and interacts with every layer ([`CollisionLayers::ALL`]).
///
/// ```
/// # use bevy_aabb_tree::prelude::*;
/// const PLAYER: u32 = 1 << 0;
/// const ENEMY: u32 = 1 << 1;
/// const BULLET: u32 = 1 << 2;
/// // Bullets hit enemies only; enemies are hit by bullets and the player.
/// let bullet = CollisionLayers::new(BULLET, ENEMY);
/// let enemy = CollisionLayers::new(ENEMY, BULLET | PLAYER);
/// assert!(bullet.interacts_with(&enemy));
/// assert!(!bullet.interacts_with(&CollisionLayers::new(PLAYER, ENEMY)));
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[reflect(Component, Debug, PartialEq, Default)]
pub struct CollisionLayers {
    /// The layers this entity is in.
    pub memberships: u32,
    /// The layers this entity interacts with.
    pub filters: u32,
}

impl CollisionLayers {
    /// Member of every layer, interacting with every layer (the default).
    pub const ALL: Self = Self {
        memberships: u32::MAX,
        filters: u32::MAX,
    };
    /// In no layer, interacting with nothing: collides with nobody.
    pub const NONE: Self = Self {
        memberships: 0,
        filters: 0,
    };

    /// Layers from two masks.
    pub const fn new(memberships: u32, filters: u32) -> Self {
        Self {
            memberships,
            filters,
        }
    }

    /// Layers by name, from a game's own [`CollisionLayer`] enum.
    ///
    /// ```
    /// # use bevy_aabb_tree::prelude::*;
    /// #[derive(Clone, Copy)]
    /// enum Layer {
    ///     Player,
    ///     Enemy,
    ///     Wall,
    /// }
    ///
    /// impl CollisionLayer for Layer {
    ///     fn index(self) -> u32 {
    ///         self as u32
    ///     }
    /// }
    ///
    /// let player = CollisionLayers::from_layers([Layer::Player], [Layer::Enemy, Layer::Wall]);
    /// let wall = CollisionLayers::from_layers([Layer::Wall], [Layer::Player]);
    /// assert!(player.interacts_with(&wall));
    /// assert_eq!(player, CollisionLayers::new(0b001, 0b110));
    /// ```
    pub fn from_layers<L: CollisionLayer>(
        memberships: impl IntoIterator<Item = L>,
        filters: impl IntoIterator<Item = L>,
    ) -> Self {
        Self::new(L::mask_of(memberships), L::mask_of(filters))
    }

    /// Whether the two interact: each one's memberships meet the other's filters.
    #[inline]
    pub const fn interacts_with(&self, other: &Self) -> bool {
        crate::tree::Layers::new(self.memberships, self.filters)
            .interacts_with(&crate::tree::Layers::new(other.memberships, other.filters))
    }
}

/// A game's own names for its layers, for [`CollisionLayers::from_layers`] and
/// [`QueryFilter::with_layers`](crate::plugin::QueryFilter::with_layers): implement it on
/// a fieldless enum of at most 32 variants (`fn index(self) -> u32 { self as u32 }`).
pub trait CollisionLayer: Copy {
    /// The layer's index, 0 to 31: its bit in the masks is `1 << index`. An index of 32
    /// or more names no layer (its mask is 0).
    fn index(self) -> u32;

    /// The layer's bit.
    fn mask(self) -> u32 {
        1u32.checked_shl(self.index()).unwrap_or(0)
    }

    /// The mask of several layers.
    fn mask_of(layers: impl IntoIterator<Item = Self>) -> u32 {
        layers
            .into_iter()
            .fold(0, |mask, layer| mask | layer.mask())
    }
}

impl Default for CollisionLayers {
    fn default() -> Self {
        Self::ALL
    }
}

impl From<CollisionLayers> for crate::tree::Layers {
    fn from(layers: CollisionLayers) -> Self {
        Self::new(layers.memberships, layers.filters)
    }
}

/// Marks a jump (a respawn, a portal, a pooled bullet reused): the next tick sweeps the
/// collider from where it is when the marker is inserted (the destination), not from
/// where it was at the last tick, so it does not hit whatever lay along the jump, while
/// any motion after the jump (a velocity integrated later in the same frame, say) is
/// swept as usual and never tunnels.
///
/// A jump ends every contact the collider had ([`EndReason::Teleported`], before the
/// tick's starts, see [`CollisionMessage`]): the contacts it has at the destination, and
/// those its motion after the jump meets, start again in that tick with their times of
/// impact. A pooled bullet reused while still inside the wall it hit therefore hits that
/// wall again when its new shot crosses it. A collider that is [`Disabled`] or left out
/// for invalid values when the marker goes in records nothing: it comes back unswept,
/// where it is then.
///
/// [`EndReason::Teleported`]: crate::plugin::EndReason::Teleported
/// [`CollisionMessage`]: crate::plugin::CollisionMessage
/// [`Disabled`]: bevy::ecs::entity_disabling::Disabled
///
/// Move the entity first, then insert the marker (or insert both in one bundle): the
/// pose is read when the marker goes in. On an ancestor of colliders (a player whose
/// colliders are its children), it marks the jump of every collider below it. The plugin
/// removes the marker once the tick has used it: on an ancestor, in the tick that
/// processes a collider below it (an ancestor with no enabled collider below keeps its
/// marker until it has one).
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::prelude::*;
/// fn respawn(mut commands: Commands, mut q: Query<(Entity, &mut Transform), With<Aabb<Vec2>>>) {
///     for (entity, mut transform) in &mut q {
///         transform.translation = Vec3::ZERO;
///         commands.entity(entity).insert(Teleported);
///     }
/// }
/// ```
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Debug, Default)]
pub struct Teleported;

/// Marks a collider that does not move: level geometry, walls, tiles.
///
/// Static colliders live in a tree of their own. They never pair with each other (no pair
/// record, no event, no work, however many touch), and the pair search walks each moved
/// collider against the static tree without ever walking the static tree against itself.
/// A level spawned in one frame goes into the static tree in bulk (one build rather than
/// an insertion each), and an idle static collider costs a few change-tick tests a tick.
///
/// They stay colliders in every other way: they collide with every collider without
/// `Static`, every spatial query sees them, and layers, `Disabled`, despawn and
/// hierarchies work as for any collider. Moving or resizing one, or adding or removing
/// the marker, is allowed and correct (its pairs with moving colliders follow), but costs
/// a re-insertion in its tree: for something that moves every tick, leave the marker off.
/// When the marker is added to a collider touching another static collider, that
/// contact ends ([`EndReason::BothStatic`](crate::plugin::EndReason::BothStatic)).
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::prelude::*;
/// fn spawn_floor(mut commands: Commands) {
///     let map = commands.spawn(Transform::default()).id();
///     for x in -50..50 {
///         commands.spawn((
///             Transform::from_xyz(x as f32, 0.0, 0.0),
///             Aabb::new(Vec2::splat(0.5)),
///             Static,
///             ChildOf(map),
///         ));
///     }
/// }
/// ```
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Debug, Default)]
pub struct Static;

/// Marks a collider that detects but never blocks: a trigger zone, water, spikes, a
/// pickup's reach.
///
/// A sensor raises [`CollisionStarted`](crate::plugin::CollisionStarted) and
/// [`CollisionEnded`](crate::plugin::CollisionEnded) like any collider and keeps its
/// [`CollidingEntities`], but the gameplay helpers that keep things apart pass through it:
/// [`AabbTree::cast_blocking`], [`AabbTree::move_and_slide`] and
/// [`Contacts::push_out`](crate::plugin::Contacts::push_out) never see it. Spatial queries
/// see sensors by default ([`QueryFilter::sensors`](crate::plugin::QueryFilter::sensors)
/// is `true`); [`QueryFilter::without_sensors`](crate::plugin::QueryFilter::without_sensors)
/// leaves them out.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::d2::*;
/// fn spawn_water(mut commands: Commands) {
///     commands
///         .spawn((Transform::from_xyz(0.0, -2.0, 0.0), Aabb::new(Vec2::new(5.0, 1.0)), Static, Sensor))
///         .observe(|hit: On<CollisionStarted>| info!("{} is in the water", hit.other));
/// }
/// ```
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Debug, Default)]
pub struct Sensor;

/// The entities this one touches now: opt-in, add it to the colliders whose contacts you
/// want at hand (a player, a trigger zone).
///
/// The plugin keeps it in the events stage, from the events themselves: after a tick it
/// holds exactly the partners of the `CollisionStarted` events without a later
/// `CollisionEnded`. Added to an entity that already touches others, it starts with them.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::d2::*;
/// fn spawn(mut commands: Commands) {
///     commands.spawn((Transform::default(), Aabb::new(Vec2::splat(0.5)), CollidingEntities::default()));
/// }
///
/// fn on_ground(players: Query<&CollidingEntities>) {
///     for contacts in &players {
///         info!("touching {} entities", contacts.len());
///     }
/// }
/// ```
#[derive(Component, Clone, Debug, Default, PartialEq, Reflect)]
#[reflect(Component, Debug, Default)]
pub struct CollidingEntities(#[entities] pub(crate) EntityHashSet);

impl CollidingEntities {
    /// Whether it touches `entity`.
    pub fn contains(&self, entity: Entity) -> bool {
        self.0.contains(&entity)
    }

    /// The entities it touches, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = Entity> + '_ {
        self.0.iter().copied()
    }

    /// How many entities it touches.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it touches nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The world shape of a collider this tick: its box (rotated boxes enclosed), its ball, or
/// its rounded box or capsule as a rounded box.
pub type WorldShape<V> = Shape<V>;

/// What the plugin keeps for each collider, readable by users: the world shape, the
/// center at the previous tick (the start of the sweep), the tree proxy and, through the
/// tree resource, the fat box stored in the tree ([`Self::fat_aabb`]).
///
/// Added automatically with [`Aabb`], [`RoundedAabb`], [`Capsule`] or [`BoundingSphere`];
/// do not write it. A cloned entity does not copy it (the clone gets a proxy of its own
/// at the next tick).
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Reflect)]
#[component(clone_behavior = Ignore)]
#[reflect(Component, Debug, Default)]
pub struct TrackedCollider<V: Vector> {
    pub(crate) shape: WorldShape<V>,
    pub(crate) previous: V,
    #[reflect(ignore)]
    pub(crate) proxy: Option<Key>,
    /// The values were invalid at the last tick (warned once, left out of the tree).
    pub(crate) invalid: bool,
    /// `shape` is where the next sweep starts although the collider has no proxy yet or
    /// was teleported: its pose when its shape was inserted, or when it (or an ancestor)
    /// got [`Teleported`]. Set by the lifecycle observers, used and cleared by the next
    /// tick that processes the collider.
    pub(crate) start_known: bool,
    /// The displacement was non-zero when the collider was last processed: the next tick
    /// processes it even if its inputs did not change, so that it reads as still.
    pub(crate) moved: bool,
    /// The prepare stage's run that last processed it.
    #[reflect(ignore)]
    pub(crate) seen: u32,
    /// The prepare stage's run for which an observer listed it (a static collider under
    /// [`StaticChangeDetection::OnInsert`](crate::plugin::StaticChangeDetection::OnInsert)): listed once
    /// per run however many of its components are inserted.
    #[reflect(ignore)]
    pub(crate) queued: u32,
}

impl<V: Vector> TrackedCollider<V> {
    /// The world shape at the last tick; before the collider's first tick, its shape
    /// where it was spawned (or where its shape was inserted); after a [`Teleported`]
    /// jump and before the next tick, its shape at the destination.
    pub fn world_shape(&self) -> WorldShape<V> {
        self.shape
    }

    /// The tight world box of [`Self::world_shape`].
    pub fn world_aabb(&self) -> BoundingBox<V> {
        self.shape.bounding_box()
    }

    /// The shape's center at the tick before the last one: where the last sweep started.
    pub fn previous_position(&self) -> V {
        self.previous
    }

    /// The proxy in its tree, `None` while the entity is out of the trees (not yet
    /// processed, disabled, or left out for invalid values). A [`Static`] collider's
    /// proxy is in [`AabbTree::static_tree`], any other's in [`AabbTree::tree`].
    pub fn proxy(&self) -> Option<ProxyId> {
        self.proxy.map(Key::proxy)
    }

    /// Whether the collider is in the static tree (it has [`Static`] and is in a tree).
    pub fn is_in_static_tree(&self) -> bool {
        self.proxy.is_some_and(Key::is_static)
    }

    /// The fat box the tree stores for this collider (the tight box extended along the
    /// predicted displacement and grown by the margin), `None` while it is out of the tree.
    ///
    /// The tree keeps the only copy, so the resource is passed in:
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_aabb_tree::prelude::*;
    /// fn fat_boxes(colliders: Query<&TrackedCollider<Vec2>>, tree: Res<AabbTree<Vec2>>) {
    ///     for tracked in &colliders {
    ///         if let Some(fat) = tracked.fat_aabb(&tree) {
    ///             assert!(fat.contains(&tracked.world_aabb()));
    ///         }
    ///     }
    /// }
    /// # bevy::ecs::system::assert_is_system(fat_boxes);
    /// ```
    pub fn fat_aabb(&self, tree: &AabbTree<V>) -> Option<BoundingBox<V>> {
        tree.fat_box(self.proxy?)
    }
}
