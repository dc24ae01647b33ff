//! The character controller: [`CharacterPlugin`], [`CharacterController`] and
//! [`CharacterState`] (the guide is on [`CharacterPlugin`]).

use core::marker::PhantomData;

use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy::ecs::system::{StaticSystemParam, SystemParamItem};
use bevy::prelude::*;
use smallvec::SmallVec;

use crate::Vector;
use crate::geometry::{CastHit, CharacterConfig, CharacterWorld, Shape, move_character};
use crate::plugin::gameplay::PushOut;
use crate::plugin::{
    AabbTree, CollisionConfig, CollisionLayers, CollisionSystems, FilterPairs, PairFilter,
    QueryFilter, TrackedCollider,
};
use crate::tree::LayerTest;

/// A character moved by [`CharacterPlugin`]: its collider (an [`Aabb`](crate::plugin::Aabb)
/// or a [`BoundingSphere`](crate::plugin::BoundingSphere)) is moved by `velocity` at every
/// tick, through the collision world.
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
    /// [`CharacterMove::clip_velocity`](crate::geometry::CharacterMove::clip_velocity)).
    /// Default: zero.
    pub velocity: V,
    /// Steps, slopes, snapping and skin. Default: [`CharacterConfig::new`] with the up
    /// direction given.
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

/// What a character's last move met, written by [`CharacterPlugin`] (added with
/// [`CharacterController`]).
#[derive(Component, Clone, Debug, PartialEq, Reflect)]
#[reflect(Component, Debug)]
pub struct CharacterState<V: Vector> {
    /// It stands on ground: a surface within the maximum slope, below it within twice
    /// the skin.
    pub grounded: bool,
    /// The collider it stands on.
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
    /// Every surface the last move met.
    #[reflect(ignore)]
    pub hits: SmallVec<[CastHit<V, Entity>; 4]>,
    /// One-way platforms it is dropping through, until clear of each.
    #[reflect(ignore)]
    passing: SmallVec<[Entity; 2]>,
    /// The ground's center when the last move ended: its motion since is the ride.
    #[reflect(ignore)]
    ground_at: V,
    /// A warning about this character was given (a parent, a non-finite velocity).
    #[reflect(ignore)]
    warned: bool,
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
            hits: SmallVec::new(),
            passing: SmallVec::new(),
            ground_at: V::ZERO,
            warned: false,
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
    add: fn(&mut App, InternedScheduleLabel),
    _marker: PhantomData<fn() -> V>,
}

impl<V: Vector> CharacterPlugin<V> {
    /// The controller running in `schedule`, the collision pipeline's.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
            add: add_controller::<V, ()>,
            _marker: PhantomData,
        }
    }

    /// The controller honouring the game's [`PairFilter`] `F` (the one given to
    /// [`AabbTreePlugin::with_pair_filter`](crate::plugin::AabbTreePlugin::with_pair_filter)):
    /// a character passes through what the rule vetoes.
    pub fn with_pair_filter<F: PairFilter + 'static>(mut self) -> Self
    where
        for<'w, 's> SystemParamItem<'w, 's, F>: PairFilter,
    {
        self.add = add_controller::<V, F>;
        self
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
            );
        (self.add)(app, self.schedule);
    }
}

fn add_controller<V: Vector, F: PairFilter + 'static>(
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

/// Moves every character (in the order of the query) and records what it met.
fn move_characters<V: Vector, F: PairFilter + 'static>(
    time: Res<Time>,
    tree: Res<AabbTree<V>>,
    filter: StaticSystemParam<F>,
    mut characters: Query<CharacterItem<V>>,
    // The grounds and one-way platforms (a character is never ground to another).
    colliders: Query<&TrackedCollider<V>, Without<CharacterController<V>>>,
    is_character: Query<(), With<CharacterController<V>>>,
    asks: Query<(), With<FilterPairs>>,
) where
    for<'w, 's> SystemParamItem<'w, 's, F>: PairFilter,
{
    let dt = time.delta_secs();
    let filter = &*filter;
    for (entity, mut controller, mut state, mut tracked, mut transform, layers, child) in
        &mut characters
    {
        // Not in the tree yet (spawned since the last tick): it moves from the next one.
        if tracked.proxy.is_none() {
            continue;
        }
        if (child || !controller.velocity.is_finite()) && !state.warned {
            warn!(
                "bevy_aabb_tree: character {entity} {}",
                if child {
                    "is a child: its moves are world displacements added to its local translation; keep characters at the root"
                } else {
                    "has a non-finite velocity: it is set to zero"
                }
            );
            state.warned = true;
        }
        if !controller.velocity.is_finite() {
            controller.velocity = V::ZERO;
        }
        let layers = layers.copied().unwrap_or_default();
        let shape = tracked.world_shape();
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
        };

        // Carried by the ground's motion over this tick, through everything but the
        // ground itself (which is already where it moved).
        let previous_ground = state.ground;
        let carry = state
            .ground
            .map_or(V::ZERO, |g| ground_motion(g, state.ground_at));
        let mut moved = V::ZERO;
        if carry != V::ZERO && carry.is_finite() {
            world.ignore = state.ground;
            let ride = move_character(&shape, carry, false, &controller.config, &mut world);
            moved = ride.displacement;
            world.ignore = None;
        }

        let motion = controller.velocity * dt;
        let step = move_character(
            &shape.translated(moved),
            motion,
            state.grounded,
            &controller.config,
            &mut world,
        );
        moved += step.displacement;
        if moved.is_finite() {
            transform.translation += moved.extend_to_3d();
            if step.step > 0.0 {
                // A step goes up, then across: the next tick's sweep, a straight line,
                // would cut the step's corner and report a contact that never was. It
                // starts instead above where the character was, at the height it
                // reached, and runs across the top of the step.
                let up = controller.config.up;
                let rise = up * (moved.dot(up) / up.dot(up));
                tracked.shape = shape.translated(rise);
                tracked.start_known = true;
            }
        }
        controller.velocity = step.clip_velocity(controller.velocity);

        let now = shape.translated(moved);
        let grown = now.bounding_box().grown(2.0 * controller.config.skin);
        state.passing.retain(|platform| {
            colliders
                .get(*platform)
                .is_ok_and(|t| t.proxy.is_some() && t.world_aabb().overlaps(&grown))
        });
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
    }
}

/// The collision world as one character sees it.
struct TreeWorld<'a, 'w, 's, V: Vector, A> {
    tree: &'a AabbTree<V>,
    me: Entity,
    layers: CollisionLayers,
    /// One-way platforms it drops through.
    passing: &'a [Entity],
    /// The ground, while the character rides its motion.
    ignore: Option<Entity>,
    /// The pair filter's answer for the character and another entity.
    allow: A,
    is_character: &'a Query<'w, 's, (), With<CharacterController<V>>>,
}

impl<V: Vector, A: FnMut(Entity) -> bool> TreeWorld<'_, '_, '_, V, A> {
    /// Whether the character meets `entity` at all (layers, itself, the platforms it
    /// drops through, the ground it rides, the pair filter).
    fn meets(&mut self, entity: Entity, layers: &CollisionLayers) -> bool {
        entity != self.me
            && self.layers.interacts_with(layers)
            && !self.passing.contains(&entity)
            && self.ignore != Some(entity)
            && (self.allow)(entity)
    }
}

impl<V: Vector, A: FnMut(Entity) -> bool> CharacterWorld<V> for TreeWorld<'_, '_, '_, V, A> {
    type Id = Entity;

    fn cast(&mut self, shape: &Shape<V>, motion: V) -> Option<CastHit<V, Entity>> {
        let filter = QueryFilter::default().with_mask(self.layers.filters);
        let tree = self.tree;
        tree.cast_blocking_by(shape, motion, &filter, |body| {
            self.meets(body.entity, &body.layers)
        })
    }

    fn push_out(&mut self, shape: &Shape<V>) -> V {
        let mut pushes = PushOut::default();
        let test = LayerTest::Memberships(self.layers.filters);
        let tree = self.tree;
        for (trees, key_of) in tree.trees() {
            trees.query_box_in(&shape.bounding_box(), test, |id, _| {
                let Some(body) = tree.body(key_of(id)) else {
                    return true;
                };
                if body.sensor || !self.meets(body.entity, &body.layers) {
                    return true;
                }
                pushes.add_from(shape, &body.shape, tree.one_ways.get(&body.entity).copied());
                true
            });
        }
        pushes.total()
    }

    fn can_stand_on(&mut self, id: Entity) -> bool {
        !self.is_character.contains(id)
    }
}
