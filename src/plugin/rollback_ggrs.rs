//! Rollback netcode with `bevy_ggrs` (feature `ggrs`): [`AabbTreeRollbackPlugin`].

use core::hash::{Hash, Hasher};
use core::marker::PhantomData;

use bevy::ecs::component::{Immutable, Mutable};
use bevy::ecs::entity::MapEntities;
use bevy::ecs::entity_disabling::Disabled;
use bevy::prelude::*;
use bevy_ggrs::{
    ChecksumFlag, ChecksumPart, CloneStrategy, ComponentMapEntitiesPlugin, ComponentSnapshotPlugin,
    CopyStrategy, ImmutableComponentSnapshotPlugin, LoadWorld, LoadWorldSystems,
    ResourceMapEntitiesPlugin, ResourceSnapshotPlugin, RollbackDespawned, RollbackId,
    RollbackOrdered, SaveWorld, SaveWorldSystems, checksum_hasher,
};

use crate::Vector;
use crate::plugin::events::CollisionWriters;
use crate::plugin::lifecycle::drop_proxy;
use crate::plugin::rollback::not_restoring;
use crate::plugin::{
    Aabb, AabbTree, AskPairFilter, BoundingSphere, Capsule, CharacterController, CharacterState,
    CollidingEntities, CollisionConfig, CollisionLayers, NotIntegrated, OneWay, RestoringWorld,
    RoundedAabb, Sensor, Static, Teleported, TrackedCollider, Velocity, WorldShape,
};

/// Rollback with `bevy_ggrs` for one dimension, in one call: registers for rollback
/// everything the crate owns, adds the checksums of what the collision state decides,
/// keeps the plugin's observers quiet while `bevy_ggrs` restores the world, and turns on
/// [`CollisionConfig::replayable`].
///
/// ```no_run
/// use bevy::prelude::*;
/// use bevy_aabb_tree::d2::*;
/// use bevy_ggrs::prelude::*;
///
/// type Config = GgrsConfig<u8>;
///
/// let mut app = App::new();
/// app.add_plugins(GgrsPlugin::<Config>::default())
///     // The pipeline and the characters run in the rollback schedule.
///     .add_plugins(AabbTreePlugin::new(GgrsSchedule))
///     .add_plugins(CharacterPlugin::new(GgrsSchedule))
///     .add_plugins(AabbTreeRollbackPlugin::default())
///     // The game's own components, `Transform` among them.
///     .rollback_component_with_copy::<Transform>();
/// ```
///
/// What it registers (each once, whichever dimensions an app adds):
///
/// - saved and restored: the collision state [`AabbTree`] (cloned: both trees, the
///   pairs, their vetoes, the neighbourhood lists, the records of first-tick starts and
///   teleports), and the components [`TrackedCollider`], [`Aabb`], [`RoundedAabb`],
///   [`Capsule`], [`BoundingSphere`], [`Velocity`], [`CollisionLayers`], [`Static`], [`Sensor`], [`Teleported`],
///   [`AskPairFilter`], [`OneWay`], [`NotIntegrated`], [`CollidingEntities`],
///   [`CharacterController`] and [`CharacterState`];
/// - the entities named by [`AabbTree`], [`CollidingEntities`] and [`CharacterState`],
///   mapped when `bevy_ggrs` spawns a restored entity again under a new id;
/// - one checksum of the touching pairs, every collider's world shape and every
///   character's state and position, each entity named by its place in
///   `RollbackOrdered` (entities without `Rollback` by their id), so that two peers,
///   or a `SyncTestSession` and its replay, compare what decides the game.
///
/// The game registers its own components (`Transform` first), and every collider of a
/// rollback game has `Rollback` (or never moves). Despawn colliders with
/// `despawn_rollback` (`bevy_ggrs`'s command), or keep them in a pool: their ids then
/// stay the same across rollbacks. A collider that `despawn_rollback` disables leaves
/// the trees, its contacts ending with
/// [`EndReason::Removed`](crate::plugin::EndReason::Removed), as a despawned one does.
///
/// Cost: saving a frame clones [`AabbTree`], a few copies of flat arrays (see
/// BENCHMARKS.md for the figure at 10,000 colliders); every collider is processed at
/// every tick ([`CollisionConfig::replayable`]).
pub struct AabbTreeRollbackPlugin<V: Vector> {
    _marker: PhantomData<fn() -> V>,
}

impl<V: Vector> Default for AabbTreeRollbackPlugin<V> {
    fn default() -> Self {
        Self {
            _marker: PhantomData,
        }
    }
}

/// Adds `plugin` unless a plugin of its type is there (the 2D and 3D plugins share the
/// components without a dimension, and a game may have registered one already).
fn once<P: Plugin>(app: &mut App, plugin: P) {
    if !app.is_plugin_added::<P>() {
        app.add_plugins(plugin);
    }
}

fn copy_component<C: Component<Mutability = Mutable> + Copy>(app: &mut App) {
    once(app, ComponentSnapshotPlugin::<CopyStrategy<C>>::default());
}

fn copy_immutable<C: Component<Mutability = Immutable> + Copy>(app: &mut App) {
    once(
        app,
        ImmutableComponentSnapshotPlugin::<CopyStrategy<C>>::default(),
    );
}

fn clone_mapped<C: Component<Mutability = Mutable> + Clone + MapEntities>(app: &mut App) {
    once(app, ComponentSnapshotPlugin::<CloneStrategy<C>>::default());
    once(app, ComponentMapEntitiesPlugin::<C>::default());
}

impl<V: Vector> Plugin for AabbTreeRollbackPlugin<V>
where
    V: bevy::reflect::FromReflect
        + bevy::reflect::TypePath
        + bevy::reflect::GetTypeRegistration
        + bevy::reflect::Typed,
{
    fn build(&self, app: &mut App) {
        app.init_resource::<CollisionConfig>()
            .init_resource::<RestoringWorld>();
        once(
            app,
            ResourceSnapshotPlugin::<CloneStrategy<AabbTree<V>>>::default(),
        );
        once(app, ResourceMapEntitiesPlugin::<AabbTree<V>>::default());
        copy_component::<TrackedCollider<V>>(app);
        copy_component::<Aabb<V>>(app);
        copy_component::<BoundingSphere<V>>(app);
        copy_component::<Capsule<V>>(app);
        copy_component::<RoundedAabb<V>>(app);
        copy_component::<Velocity<V>>(app);
        copy_component::<CollisionLayers>(app);
        copy_component::<Static>(app);
        copy_component::<Sensor>(app);
        copy_component::<Teleported>(app);
        copy_component::<AskPairFilter>(app);
        copy_component::<NotIntegrated>(app);
        copy_immutable::<OneWay<V>>(app);
        clone_mapped::<CollidingEntities>(app);
        once(
            app,
            ComponentSnapshotPlugin::<CloneStrategy<CharacterController<V>>>::default(),
        );
        clone_mapped::<CharacterState<V>>(app);
        once(app, QuietRestore);
        app.add_systems(SaveWorld, checksum::<V>.in_set(SaveWorldSystems::Checksum))
            .add_observer(on_rollback_despawned::<V>.run_if(not_restoring));
        app.world_mut().resource_mut::<CollisionConfig>().replayable = true;
    }

    fn finish(&self, app: &mut App) {
        // A config inserted after this plugin was built keeps the setting too.
        app.world_mut().resource_mut::<CollisionConfig>().replayable = true;
    }
}

/// [`RestoringWorld`] set from before `bevy_ggrs` brings back despawned entities until
/// it has mapped the restored entities.
struct QuietRestore;

impl Plugin for QuietRestore {
    fn build(&self, app: &mut App) {
        app.add_systems(
            LoadWorld,
            (
                (|mut r: ResMut<RestoringWorld>| r.0 = true)
                    .before(LoadWorldSystems::EntityResurrect),
                (|mut r: ResMut<RestoringWorld>| r.0 = false).after(LoadWorldSystems::Mapping),
            ),
        );
    }
}

/// Observer: `despawn_rollback` disabled a collider (`RollbackDespawned`). It leaves its
/// tree and its contacts end, as on a despawn; a rollback to before that brings back
/// the collision state with it.
fn on_rollback_despawned<V: Vector>(
    event: On<Add, RollbackDespawned>,
    mut colliders: Query<&mut TrackedCollider<V>, (Allow<Disabled>, Allow<RollbackDespawned>)>,
    mut state: ResMut<AabbTree<V>>,
    mut writers: CollisionWriters<V>,
    mut commands: Commands,
) {
    let entity = event.event_target();
    if let Ok(mut tracked) = colliders.get_mut(entity) {
        drop_proxy(
            entity,
            &mut tracked,
            &mut state,
            &mut writers,
            &mut commands,
        );
    }
}

/// How the checksum names an entity: its place in `RollbackOrdered`, the same on every
/// peer and after every rollback, or its id for an entity without `Rollback`.
fn stable_id(
    entity: Entity,
    ids: &Query<&RollbackId, Allow<Disabled>>,
    order: &RollbackOrdered,
) -> (u8, u64) {
    match ids.get(entity) {
        Ok(id) => (0, order.order(*id)),
        Err(_) => (1, entity.to_bits()),
    }
}

/// The bits of a vector, as three `f32`s (z = 0 in 2D).
fn bits<V: Vector>(v: V) -> [u32; 3] {
    v.extend_to_3d().to_array().map(f32::to_bits)
}

/// The bits of a world shape: its kind, its radius (a rounded box's or a capsule's: two
/// rounded boxes of one bounding box differ by it alone) and its box.
fn shape_bits<V: Vector>(shape: &WorldShape<V>) -> (u8, u32, [u32; 3], [u32; 3]) {
    let (kind, radius) = match shape {
        WorldShape::Box(_) => (0, 0.0),
        WorldShape::Ball(_) => (1, 0.0),
        WorldShape::Rounded(r) => (2, r.radius),
    };
    let b = shape.bounding_box();
    (kind, radius.to_bits(), bits(b.min), bits(b.max))
}

/// The checksum part of the collision state (one entity, not rolled back).
type OwnPart<V> = (Without<RollbackId>, With<ChecksumFlag<AabbTree<V>>>);

/// What the checksum reads of a character.
type CharacterRow<'a, V> = (Entity, &'a CharacterState<V>, &'a Transform);

/// The checksum of the collision state for `bevy_ggrs`'s comparison: the touching
/// pairs, every collider's world shape, and every character's state and position,
/// each entity by [`stable_id`], sorted, hashed with `bevy_ggrs`'s portable hasher.
fn checksum<V: Vector>(
    mut commands: Commands,
    state: Res<AabbTree<V>>,
    colliders: Query<(Entity, &TrackedCollider<V>)>,
    characters: Query<CharacterRow<V>>,
    ids: Query<&RollbackId, Allow<Disabled>>,
    order: Res<RollbackOrdered>,
    mut part: Query<&mut ChecksumPart, OwnPart<V>>,
) {
    let id = |e: Entity| stable_id(e, &ids, &order);
    let mut pairs: Vec<_> = state
        .touching_pairs()
        .map(|(a, b)| {
            let (a, b) = (id(a), id(b));
            if a <= b { (a, b) } else { (b, a) }
        })
        .collect();
    pairs.sort_unstable();
    let mut shapes: Vec<_> = colliders
        .iter()
        .filter(|(_, t)| t.proxy.is_some())
        .map(|(e, t)| (id(e), shape_bits(&t.world_shape())))
        .collect();
    shapes.sort_unstable();
    let mut people: Vec<_> = characters
        .iter()
        .map(|(e, s, transform)| {
            (
                id(e),
                s.grounded,
                s.crushed,
                s.ground.map(id),
                bits(s.displacement),
                transform.translation.to_array().map(f32::to_bits),
            )
        })
        .collect();
    people.sort_unstable();
    let mut hasher = checksum_hasher();
    pairs.hash(&mut hasher);
    shapes.hash(&mut hasher);
    people.hash(&mut hasher);
    let value = ChecksumPart(u128::from(hasher.finish()));
    if let Ok(mut part) = part.single_mut() {
        *part = value;
    } else {
        commands.spawn((value, ChecksumFlag::<AabbTree<V>>::default()));
    }
}
