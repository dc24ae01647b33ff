//! The character controller: [`CharacterPlugin`], [`CharacterController`] and
//! [`CharacterState`] (the guide is on [`CharacterPlugin`]).

use core::marker::PhantomData;

use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy::ecs::system::{StaticSystemParam, SystemParamItem};
use bevy::prelude::*;
use smallvec::SmallVec;

use bevy::ecs::entity::EntityHashMap;

use crate::Vector;
use crate::geometry::{CastHit, CharacterWorld, move_character};
use crate::plugin::{
    AabbTree, AskPairFilter, CollisionConfig, CollisionLayers, CollisionSystems, PairFilter,
    TrackedCollider,
};

mod checks;
mod controller;
mod world;

pub use controller::CharacterController;

use checks::{checked, problem, warn_about, zero_size};
use world::TreeWorld;

/// What a character's last move met, written by [`CharacterPlugin`] (added with
/// [`CharacterController`]).
///
/// The controller keeps a gap of a skin between a character and what it stands on or
/// walks against, so the character's collider does not touch them and
/// [`CollidingEntities`](crate::plugin::CollidingEntities) does not list them: ask
/// [`Self::grounded`], [`Self::ground`] or [`Self::touches`] instead.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::d2::*;
/// #[derive(Component)]
/// struct Player;
///
/// /// The player stands on a static collider.
/// fn on_static_ground(player: Single<&CharacterState, With<Player>>, floors: Query<(), With<Static>>) -> bool {
///     player.ground.is_some_and(|ground| floors.contains(ground))
/// }
/// # bevy::ecs::system::assert_is_system(on_static_ground);
/// ```
#[derive(Component, Clone, Debug, PartialEq, Reflect)]
#[reflect(Component, Debug)]
pub struct CharacterState<V: Vector> {
    /// It stands on ground: a surface within the maximum slope, under it and at most
    /// twice the skin from it where the move ended. Never while moving up, nor while
    /// crushed.
    pub grounded: bool,
    /// The collider it stands on (when grounded).
    pub ground: Option<Entity>,
    /// The ground's normal (zero when not grounded).
    pub ground_normal: V,
    /// The ground's velocity over the last tick (its displacement over the tick's
    /// duration): a moving platform's. Zero when not grounded.
    pub ground_velocity: V,
    /// The displacement of the last move: the ride on the ground, recovery, step and
    /// snap included.
    pub displacement: V,
    /// How high a step lifted it at the last move (0 when none).
    pub step: f32,
    /// It is squeezed between colliders that push it opposite ways, past what a push
    /// can resolve: a rider between a rising platform and a ceiling, a character under a
    /// falling block on the floor. The controller then leaves it where it is (it is
    /// never pushed into or through a collider), sets its velocity to zero, and moves it
    /// again once nothing overlaps it; the game decides the rest (a hit, a respawn).
    /// [`Self::touching`] names what squeezes it.
    pub crushed: bool,
    /// Every surface the last move met.
    #[reflect(ignore)]
    pub hits: SmallVec<[CastHit<V, Entity>; 4]>,
    /// What it touches where the last move ended.
    #[reflect(ignore)]
    touching: SmallVec<[Entity; 4]>,
    /// One-way platforms it is dropping through, until clear of each.
    #[reflect(ignore)]
    passing: SmallVec<[Entity; 2]>,
    /// The ground's center when the last move ended: its motion since is the ride.
    #[reflect(ignore)]
    ground_at: V,
    /// What was wrong with it at the last move and was warned about (a parent, a
    /// non-finite velocity, bad settings, a zero size), one bit each.
    #[reflect(ignore)]
    warned: u16,
}

impl<V: Vector> Default for CharacterState<V> {
    fn default() -> Self {
        Self {
            grounded: false,
            ground: None,
            ground_normal: V::ZERO,
            ground_velocity: V::ZERO,
            displacement: V::ZERO,
            step: 0.0,
            crushed: false,
            hits: SmallVec::new(),
            touching: SmallVec::new(),
            passing: SmallVec::new(),
            ground_at: V::ZERO,
            warned: 0,
        }
    }
}

impl<V: Vector> CharacterState<V> {
    /// The colliders it touches where its last move ended, each once: the ground it
    /// stands on, and what the move met (walls, ceilings, other characters) within
    /// twice the skin of where it ended; when [crushed](Self::crushed), what it is
    /// squeezed by. The counterpart of
    /// [`CollidingEntities`](crate::plugin::CollidingEntities) for a character, which
    /// the skin keeps from touching anything. A character moved later in the same tick
    /// may have moved away since.
    pub fn touching(&self) -> &[Entity] {
        &self.touching
    }

    /// Whether it touches `entity` where its last move ended (see [`Self::touching`]):
    /// true for the ground it stands on.
    pub fn touches(&self, entity: Entity) -> bool {
        self.touching.contains(&entity)
    }

    /// Crushed: held where it is, touching what squeezes it.
    fn hold(&mut self, touching: SmallVec<[Entity; 4]>) {
        self.crushed = true;
        self.grounded = false;
        self.ground = None;
        self.ground_normal = V::ZERO;
        self.ground_velocity = V::ZERO;
        self.displacement = V::ZERO;
        self.step = 0.0;
        self.hits.clear();
        self.touching = touching;
    }
}

/// The ground, the hits, what it touches and the platforms it drops through, mapped.
impl<V: Vector> bevy::ecs::entity::MapEntities for CharacterState<V> {
    fn map_entities<E: bevy::ecs::entity::EntityMapper>(&mut self, mapper: &mut E) {
        self.ground = self.ground.map(|e| mapper.get_mapped(e));
        for hit in &mut self.hits {
            hit.id = mapper.get_mapped(hit.id);
        }
        for e in self.touching.iter_mut().chain(&mut self.passing) {
            *e = mapper.get_mapped(*e);
        }
    }
}

/// The system set of [`CharacterPlugin`].
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CharacterSystems {
    /// Every character moved, after the collision tick's events.
    Move,
}

/// Moves every entity with a [`CharacterController`] by its velocity through the
/// collision world, and writes what it met to its [`CharacterState`].
///
/// A character walks: it slides along walls, climbs steps up to
/// [`CharacterConfig::max_step_height`](crate::geometry::CharacterConfig::max_step_height),
/// keeps to the ground down steps and slopes within
/// [`CharacterConfig::snap_distance`](crate::geometry::CharacterConfig::snap_distance),
/// walks up slopes up to [`CharacterConfig::max_slope`](crate::geometry::CharacterConfig::max_slope)
/// and slides down steeper ones, stops under ceilings, is carried by the collider it
/// stands on when that moves, and is moved out of colliders it starts inside, the least
/// way out. It passes through [`Sensor`](crate::plugin::Sensor) colliders, lands on
/// [`OneWay`](crate::plugin::OneWay) platforms from
/// above, jumps through them from below, and drops through them on demand
/// ([`CharacterController::drop_through`]). It never stands on another character, so
/// characters that meet do not climb on top of each other.
///
/// Characters move one after another, in the order of their query, each against the
/// others where they are now (those moved before it in the tick where their moves left
/// them), so that no two end a tick inside each other.
///
/// A character squeezed between colliders that push it opposite ways, past what a push
/// can resolve (a rider between a rising platform and a ceiling), is
/// [crushed](CharacterState::crushed): it is left where it is, never pushed into or
/// through a collider, until nothing overlaps it any more. A collider pushes a
/// character out the least way, except that the ground it stood on pushes it only up
/// and a collider that moved into it this tick pushes it along that motion, so that a
/// platform or a block that comes deeper than the character's middle in one tick does
/// not push it through itself.
///
/// The game sets [`CharacterController::velocity`] (gravity included) before the
/// collision tick; the controller runs after it ([`CharacterSystems::Move`], after
/// [`CollisionSystems::Events`](crate::plugin::CollisionSystems::Events)), so it sees
/// every collider where this tick put it and the ground's motion over this tick. It
/// removes from the velocity what ran into surfaces (landing ends a fall), and the next
/// tick's collision pipeline sweeps the character's move like any other.
///
/// Shapes are boxes and balls, so slopes come from balls (a ball character on a box's
/// edge, any character on a large ball); the box faces of a level are floors, walls and
/// ceilings.
///
/// Add it beside [`AabbTreePlugin`](crate::plugin::AabbTreePlugin), in the same schedule
/// (`FixedPostUpdate` by default: `CharacterPlugin::<Vec2>::new(Update)` for a pipeline
/// in `Update`).
///
/// # Examples
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::d2::*;
/// # let mut app = App::new();
/// app.add_plugins((AabbTreePlugin::default(), CharacterPlugin::default()));
/// ```
pub struct CharacterPlugin<V: Vector> {
    schedule: InternedScheduleLabel,
    _marker: PhantomData<fn() -> V>,
}

impl<V: Vector> CharacterPlugin<V> {
    /// The controller running in `schedule`, the collision pipeline's. It honours the
    /// [`PairFilter`] given to
    /// [`AabbTreePlugin::with_pair_filter`](crate::plugin::AabbTreePlugin::with_pair_filter)
    /// when the app has one: a character passes through what the rule vetoes.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
            _marker: PhantomData,
        }
    }
}

/// The character controller with the pair filter given to the collision plugin of the
/// same dimension. Whichever of the two plugins is built second adds it (see
/// [`add_controller_with_filter`]); until then, and without a filter, the controller
/// without one runs.
#[derive(Resource)]
pub(crate) struct ControllerWithFilter<V: Vector> {
    add: fn(&mut App, InternedScheduleLabel),
    _marker: PhantomData<fn() -> V>,
}

/// The schedule of the [`CharacterPlugin`] of a dimension, once it is built.
#[derive(Resource)]
struct CharacterSchedule<V: Vector> {
    schedule: InternedScheduleLabel,
    _marker: PhantomData<fn() -> V>,
}

/// Called by the collision plugin given a pair filter (`add` adds the controller with
/// it): the controller of an app whose [`CharacterPlugin`] is built already gets it now;
/// otherwise the character plugin finds it when it is built.
pub(crate) fn add_controller_with_filter<V: Vector>(
    app: &mut App,
    add: fn(&mut App, InternedScheduleLabel),
) {
    app.insert_resource(ControllerWithFilter::<V> {
        add,
        _marker: PhantomData,
    });
    if let Some(schedule) = app
        .world()
        .get_resource::<CharacterSchedule<V>>()
        .map(|s| s.schedule)
    {
        add(app, schedule);
    }
}

impl<V: Vector> Default for CharacterPlugin<V> {
    /// Runs in `FixedPostUpdate`.
    fn default() -> Self {
        Self::new(FixedPostUpdate)
    }
}

impl<V: Vector> Plugin for CharacterPlugin<V>
where
    V: bevy::reflect::FromReflect
        + bevy::reflect::TypePath
        + bevy::reflect::GetTypeRegistration
        + bevy::reflect::Typed,
{
    fn build(&self, app: &mut App) {
        app.register_type::<CharacterController<V>>()
            .register_type::<CharacterState<V>>()
            .configure_sets(
                self.schedule,
                CharacterSystems::Move.after(CollisionSystems::Events),
            )
            .insert_resource(CharacterSchedule::<V> {
                schedule: self.schedule,
                _marker: PhantomData,
            });
        // With the collision plugin's pair filter when it was built first with one; else
        // without, until (and unless) it comes with one (`add_controller_with_filter`).
        match app.world().get_resource::<ControllerWithFilter<V>>() {
            Some(with) => (with.add)(app, self.schedule),
            None => {
                app.add_systems(
                    self.schedule,
                    move_characters::<V, ()>
                        .in_set(CharacterSystems::Move)
                        .run_if(|config: Res<CollisionConfig>| config.enabled)
                        .run_if(not(resource_exists::<ControllerWithFilter<V>>)),
                );
            }
        }
    }
}

pub(crate) fn add_controller<V: Vector, F: PairFilter + 'static>(
    app: &mut App,
    schedule: InternedScheduleLabel,
) where
    for<'w, 's> SystemParamItem<'w, 's, F>: PairFilter,
{
    app.add_systems(
        schedule,
        move_characters::<V, F>
            .in_set(CharacterSystems::Move)
            .run_if(|config: Res<CollisionConfig>| config.enabled),
    );
}

/// What the controller reads and writes of a character.
type CharacterItem<V> = (
    Entity,
    &'static mut CharacterController<V>,
    &'static mut CharacterState<V>,
    &'static mut TrackedCollider<V>,
    &'static mut Transform,
    Option<&'static CollisionLayers>,
    Has<ChildOf>,
);

/// Moves every character (in the order of the query, or of the entities when
/// [`CollisionConfig::replayable`]) and records what it met. Each move sees the
/// characters moved before it where their moves left them.
#[allow(clippy::too_many_arguments)]
fn move_characters<V: Vector, F: PairFilter + 'static>(
    time: Res<Time>,
    collision: Res<CollisionConfig>,
    tree: Res<AabbTree<V>>,
    filter: StaticSystemParam<F>,
    mut characters: Query<CharacterItem<V>>,
    // The grounds and one-way platforms (a character is never ground to another).
    colliders: Query<&TrackedCollider<V>, Without<CharacterController<V>>>,
    is_character: Query<(), With<CharacterController<V>>>,
    asks: Query<(), With<AskPairFilter>>,
    // The displacement of each character moved so far this tick.
    mut moved_so_far: Local<EntityHashMap<V>>,
) where
    for<'w, 's> SystemParamItem<'w, 's, F>: PairFilter,
{
    let dt = time.delta_secs();
    let filter = &*filter;
    moved_so_far.clear();
    // The largest coordinate of those displacements: a character moved this tick is that
    // much farther from its place in the trees at most.
    let mut reach = 0.0_f32;
    let mut order: Vec<Entity> = characters.iter().map(|item| item.0).collect();
    if collision.replayable {
        order.sort_unstable_by_key(|e| (e.index_u32(), e.generation().to_bits()));
    }
    for entity in order {
        let Ok((entity, mut controller, mut state, mut tracked, mut transform, layers, child)) =
            characters.get_mut(entity)
        else {
            continue;
        };
        // Not in the tree yet (spawned since the last tick): it moves from the next one.
        if tracked.proxy.is_none() {
            continue;
        }
        let shape = tracked.world_shape();
        let (config, mut problems) = checked(&controller.config);
        if child {
            problems |= problem::CHILD;
        }
        if !controller.velocity.is_finite() {
            problems |= problem::VELOCITY;
        }
        if zero_size(&shape) {
            problems |= problem::ZERO_SIZE;
        }
        let new = problems & !state.warned;
        if new != 0 {
            for bit in problem::ALL.into_iter().filter(|bit| new & bit != 0) {
                warn_about(entity, bit, &controller, &shape);
            }
        }
        state.warned = problems;
        if !controller.velocity.is_finite() {
            controller.velocity = V::ZERO;
        }
        let layers = layers.copied().unwrap_or_default();
        let state = &mut *state;
        let me_asks = asks.contains(entity);
        let allow = |other: Entity| {
            !(me_asks || asks.contains(other)) || {
                let (a, b) = if entity < other {
                    (entity, other)
                } else {
                    (other, entity)
                };
                filter.allows(a, b)
            }
        };
        // Where a collider is now (its shape at this tick).
        let center_of = |e: Entity| {
            colliders
                .get(e)
                .ok()
                .filter(|t| t.proxy.is_some())
                .map(|t| t.world_shape().center())
        };
        // The ground's motion since the last move: from the center recorded then, so
        // that it does not depend on the sweep (`CollisionConfig::swept`) nor on how
        // many ticks passed (a pause).
        let ground_motion = |ground: Entity, at: V| center_of(ground).map_or(V::ZERO, |c| c - at);

        // One-way platforms dropped through stay passable until the character is clear.
        if controller.drop_through
            && let Some(ground) = state.ground
            && tree.one_ways.contains_key(&ground)
            && !state.passing.contains(&ground)
        {
            state.passing.push(ground);
        }
        let mut world = TreeWorld {
            tree: &tree,
            me: entity,
            layers,
            passing: &state.passing,
            ignore: None,
            allow,
            is_character: &is_character,
            moved: &moved_so_far,
            reach,
            ground: state.ground,
            up: config.up,
        };
        let tolerance = (0.5 * config.skin).max(1e-4);

        // Crushed at the last move and still inside what squeezed it: held where it is,
        // so that nothing pushes it through a collider, until it is free.
        if state.crushed && world.overlaps(&shape, tolerance) {
            let touching = world.near(&shape, 2.0 * config.skin);
            controller.velocity = V::ZERO;
            state.hold(touching);
            continue;
        }

        // Carried by the ground's motion over this tick, through everything but the
        // ground itself (which is already where it moved).
        let previous_ground = state.ground;
        let carry = state
            .ground
            .map_or(V::ZERO, |g| ground_motion(g, state.ground_at));
        let mut moved = V::ZERO;
        if carry != V::ZERO && carry.is_finite() {
            world.ignore = state.ground;
            let ride = move_character(&shape, carry, false, &config, &mut world);
            world.ignore = None;
            if ride.crushed {
                let touching = world.near(&shape, 2.0 * config.skin);
                controller.velocity = V::ZERO;
                state.hold(touching);
                continue;
            }
            moved = ride.displacement;
        }

        let motion = controller.velocity * dt;
        let step = move_character(
            &shape.translated(moved),
            motion,
            state.grounded,
            &config,
            &mut world,
        );
        moved += step.displacement;
        if !moved.is_finite() {
            moved = V::ZERO;
        }
        let now = shape.translated(moved);
        // What it touches where the move ended.
        let mut touching = world.near(&now, 2.0 * config.skin);
        if moved != V::ZERO {
            transform.translation += moved.extend_to_3d();
            moved_so_far.insert(entity, moved);
            reach = reach.max(moved.abs().max_element());
            if step.step > 0.0 {
                // A step goes up, then across: the next tick's sweep, a straight line,
                // would cut the step's corner and report a contact that never was. It
                // starts instead above where the character was, at the height it
                // reached, and runs across the top of the step.
                let up = config.up;
                let rise = up * (moved.dot(up) / up.dot(up));
                tracked.shape = shape.translated(rise);
                tracked.start_known = true;
            }
        }

        let grown = now.bounding_box().grown(2.0 * config.skin);
        state.passing.retain(|platform| {
            colliders
                .get(*platform)
                .is_ok_and(|t| t.proxy.is_some() && t.world_aabb().overlaps(&grown))
        });
        if step.crushed {
            // Held where the ride left it.
            controller.velocity = V::ZERO;
            state.hold(touching);
            state.displacement = moved;
            continue;
        }
        controller.velocity = step.clip_velocity(controller.velocity);
        state.crushed = false;
        state.grounded = step.grounded;
        state.ground = step.ground.map(|g| g.id);
        state.ground_normal = step.ground.map_or(V::ZERO, |g| g.normal);
        state.ground_velocity = match state.ground {
            Some(ground) if dt > 0.0 && Some(ground) == previous_ground => carry / dt,
            _ => V::ZERO,
        };
        if let Some(center) = state.ground.and_then(center_of) {
            state.ground_at = center;
        }
        state.displacement = moved;
        state.step = step.step;
        state.hits = step.hits;
        if let Some(ground) = state.ground
            && !touching.contains(&ground)
        {
            touching.push(ground);
        }
        state.touching = touching;
    }
}
