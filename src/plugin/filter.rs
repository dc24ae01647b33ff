//! Pair filtering: the game's own rule vetoing pairs of colliders.
//!
//! Layers say which groups meet; a [`PairFilter`] says, pair by pair, what layers cannot:
//! a bullet ignores the one who fired it, a team's members pass through each other, a
//! door lets through whoever holds its key. The rule is a read-only system parameter (it
//! may query components and read resources) registered with
//! [`AabbTreePlugin::with_pair_filter`](crate::plugin::AabbTreePlugin::with_pair_filter);
//! only pairs where at least one collider has [`AskPairFilter`] ask it, so a rule costs
//! nothing for the rest of the world.
//!
//! A vetoed pair is not touching: it raises no [`CollisionStarted`](crate::plugin::CollisionStarted),
//! a touching pair that becomes vetoed ends with [`EndReason::Filtered`](crate::plugin::EndReason::Filtered),
//! and when the veto lifts while the two still overlap, the pair starts at that tick.
//! The rule is asked at every tick for every candidate pair of the colliders with
//! [`AskPairFilter`] (fat boxes overlapping, layers matching), after the broad phase
//! ([`CollisionSystems::Filter`](crate::plugin::CollisionSystems::Filter)).
//! The [`CharacterPlugin`](crate::plugin::CharacterPlugin) of the same app honours the same
//! rule; in a game's own casts, pass it to
//! [`AabbTree::cast_blocking_where`](crate::plugin::AabbTree::cast_blocking_where) or
//! [`AabbTree::move_and_slide_where`](crate::plugin::AabbTree::move_and_slide_where).

use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::system::{ReadOnlySystemParam, StaticSystemParam, SystemParamItem};
use bevy::prelude::*;

use crate::Vector;
use crate::plugin::{AabbTree, CollisionConfig, Static, TrackedCollider};

/// Opts a collider's pairs into the game's [`PairFilter`]: only pairs where one side has
/// it are asked.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_aabb_tree::d2::*;
/// fn spawn_bullet(mut commands: Commands) {
///     commands.spawn((Transform::default(), Aabb::new(Vec2::splat(0.1)), AskPairFilter));
/// }
/// ```
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Debug, Default)]
pub struct AskPairFilter;

/// A game's rule for which pairs of colliders may interact, asked for the pairs where
/// one side has [`AskPairFilter`].
///
/// Implement it on a read-only [`SystemParam`](bevy::ecs::system::SystemParam) and
/// register it with
/// [`AabbTreePlugin::with_pair_filter`](crate::plugin::AabbTreePlugin::with_pair_filter).
/// The rule must be symmetric and must not depend on the order it is asked in (it is
/// asked with the smaller `Entity` first, by `Entity`'s `Ord`): the same world then
/// gives the same events.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy::ecs::system::SystemParam;
/// # use bevy_aabb_tree::d2::*;
/// #[derive(Component)]
/// struct FiredBy(Entity);
///
/// /// Bullets pass through whoever fired them.
/// #[derive(SystemParam)]
/// struct NoSelfHits<'w, 's> {
///     bullets: Query<'w, 's, &'static FiredBy>,
/// }
///
/// impl PairFilter for NoSelfHits<'_, '_> {
///     fn allows(&self, a: Entity, b: Entity) -> bool {
///         let fired_by = |bullet, other| self.bullets.get(bullet).is_ok_and(|f| f.0 == other);
///         !fired_by(a, b) && !fired_by(b, a)
///     }
/// }
///
/// # let mut app = App::new();
/// app.add_plugins(AabbTreePlugin::default().with_pair_filter::<NoSelfHits>());
/// ```
pub trait PairFilter: ReadOnlySystemParam + Send + Sync {
    /// Whether `a` and `b` may touch (`a < b`).
    fn allows(&self, a: Entity, b: Entity) -> bool;
}

/// No rule: every pair is allowed.
impl PairFilter for () {
    fn allows(&self, _: Entity, _: Entity) -> bool {
        true
    }
}

/// Asks `F` about every candidate pair of the colliders with [`AskPairFilter`] and records
/// the vetoes; a pair whose veto changed is tested by this tick's narrow phase even when
/// neither collider moved.
pub(crate) fn apply_pair_filter<V: Vector, F: PairFilter + 'static>(
    filter: StaticSystemParam<F>,
    mut state: ResMut<AabbTree<V>>,
    filtered: Query<&TrackedCollider<V>, With<AskPairFilter>>,
) where
    for<'w, 's> SystemParamItem<'w, 's, F>: PairFilter,
{
    let state = &mut *state;
    for tracked in &filtered {
        let Some(key) = tracked.proxy else {
            continue;
        };
        let mut next = state.pairs.first_of(key);
        while let Some(i) = next {
            next = state.pairs.next_of(i, key);
            let pair = state.pairs.get(i);
            let (Some(a), Some(b)) = (state.entity_of(pair.a), state.entity_of(pair.b)) else {
                continue;
            };
            let (a, b) = if a < b { (a, b) } else { (b, a) };
            if state.pairs.set_vetoed(i, !filter.allows(a, b)) {
                // At most one side is static; the other one's pairs are walked.
                let moving = if pair.a.is_static() { pair.b } else { pair.a };
                state.mark_for_narrow_phase(moving);
            }
        }
    }
}

/// Adds the filter stage for `F` to `schedule` (see
/// [`AabbTreePlugin::with_pair_filter`](crate::plugin::AabbTreePlugin::with_pair_filter)).
pub(crate) fn add_pair_filter<V: Vector, F: PairFilter + 'static>(
    app: &mut App,
    schedule: bevy::ecs::schedule::InternedScheduleLabel,
) where
    for<'w, 's> SystemParamItem<'w, 's, F>: PairFilter,
{
    app.add_systems(
        schedule,
        apply_pair_filter::<V, F>
            .in_set(crate::plugin::CollisionSystems::Filter)
            .run_if(|config: Res<CollisionConfig>| config.enabled),
    );
}

/// Observer: [`AskPairFilter`] removed. The collider's pairs lose their vetoes, save those
/// whose other side still asks the rule (asked again at the next tick), and the next
/// tick tests its pairs.
pub(crate) fn on_filter_removed<V: Vector>(
    event: On<Remove, AskPairFilter>,
    mut colliders: Query<(&mut TrackedCollider<V>, Has<Static>), Allow<Disabled>>,
    asks: Query<(), (With<AskPairFilter>, Allow<Disabled>)>,
    config: Res<CollisionConfig>,
    mut state: ResMut<AabbTree<V>>,
) {
    let entity = event.event_target();
    let Ok((mut tracked, is_static)) = colliders.get_mut(entity) else {
        return;
    };
    let Some(key) = tracked.proxy else {
        return;
    };
    let state = &mut *state;
    let mut next = state.pairs.first_of(key);
    while let Some(i) = next {
        next = state.pairs.next_of(i, key);
        let other = state.pairs.get(i).other(key);
        if state.entity_of(other).is_none_or(|e| !asks.contains(e)) {
            state.pairs.set_vetoed(i, false);
        }
    }
    crate::plugin::lifecycle::mark(entity, &mut tracked, is_static, &config, state);
}
