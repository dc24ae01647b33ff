//! The systems and observers of one tick.

use bevy::ecs::entity_disabling::Disabled;
use bevy::math::Affine3A;
use bevy::platform::time::Instant;
use bevy::prelude::*;

use crate::Vector;
use crate::geometry::{Ball, BoundingBox, sweep_ball_box, sweep_balls, sweep_boxes};
use crate::plugin::state::{Body, Pair, SweptHit};
use crate::plugin::{
    Aabb, AabbTree, BoundingSphere, CollisionConfig, CollisionEnded, CollisionLayers,
    CollisionStarted, EndReason, Teleported, TrackedCollider, Velocity, WorldShape,
};
use crate::tree::parallel::TASKS_PER_THREAD;
use crate::tree::{DynamicTree, ProxyId};

/// The entity's world transform, computed from `Transform` up the `ChildOf` chain so that
/// moves made earlier in the same frame (in `FixedUpdate`) count, even though
/// `GlobalTransform` is only propagated in `PostUpdate`.
fn world_affine(
    transform: &Transform,
    parent: Option<&ChildOf>,
    hierarchy: &Hierarchy,
) -> Affine3A {
    let mut affine = transform.compute_affine();
    let mut next = parent.map(ChildOf::parent);
    // A cycle cannot happen in Bevy's hierarchy; the bound only guards against a broken one.
    let mut depth = 0;
    while let Some(p) = next {
        let Ok((t, up, _)) = hierarchy.get(p) else {
            break;
        };
        affine = t.compute_affine() * affine;
        next = up.map(ChildOf::parent);
        depth += 1;
        if depth > 1024 {
            break;
        }
    }
    affine
}

/// Whether an ancestor of a collider with this `parent` has [`Teleported`]: a jump of a
/// parent carries its child colliders. Each such ancestor's marker is removed once this
/// tick has used it (every child collider of a teleported ancestor is processed in the
/// same tick: children are processed every tick).
fn ancestor_teleported(
    parent: Option<&ChildOf>,
    hierarchy: &Hierarchy,
    commands: &mut Commands,
) -> bool {
    let mut found = false;
    let mut next = parent.map(ChildOf::parent);
    // The same guard as `world_affine`'s.
    let mut depth = 0;
    while let Some(p) = next {
        let Ok((_, up, teleported)) = hierarchy.get(p) else {
            break;
        };
        if teleported {
            commands.entity(p).remove::<Teleported>();
            found = true;
        }
        next = up.map(ChildOf::parent);
        depth += 1;
        if depth > 1024 {
            break;
        }
    }
    found
}

/// The world box enclosing a local box under an affine map: the center is mapped, and
/// each world half extent is the sum of the local half extents weighted by the absolute
/// values of the matrix row (which encloses a rotated box).
fn world_box<V: Vector>(affine: &Affine3A, half: V, offset: V) -> BoundingBox<V> {
    let center = affine.transform_point3(offset.extend_to_3d());
    let h = half.extend_to_3d();
    let m = affine.matrix3;
    let world_half = m.x_axis.abs() * h.x + m.y_axis.abs() * h.y + m.z_axis.abs() * h.z;
    let world_half = Vec3::from(world_half);
    BoundingBox::from_center_half_extents(
        V::truncate_from_3d(center),
        V::truncate_from_3d(world_half),
    )
}

fn world_ball<V: Vector>(affine: &Affine3A, radius: f32, offset: V) -> Ball<V> {
    let center = affine.transform_point3(offset.extend_to_3d());
    let m = affine.matrix3;
    let scale = if V::DIM == 2 {
        m.x_axis.length().max(m.y_axis.length())
    } else {
        m.x_axis
            .length()
            .max(m.y_axis.length())
            .max(m.z_axis.length())
    };
    Ball::new(V::truncate_from_3d(center), radius * scale)
}

/// The collider's world shape (its `Aabb` if it has one, else its `BoundingSphere`), or
/// `None` when it has neither.
///
/// Inlined into `prepare`'s loop: called out of line, with the shape returned through
/// memory, `prepare` was 15% slower (10k colliders, `examples/stress.rs`).
#[inline(always)]
fn world_shape<V: Vector>(
    transform: &Transform,
    parent: Option<&ChildOf>,
    hierarchy: &Hierarchy,
    aabb: Option<&Aabb<V>>,
    sphere: Option<&BoundingSphere<V>>,
) -> Option<WorldShape<V>> {
    if parent.is_none() && transform.rotation == Quat::IDENTITY {
        return unrotated_shape(transform, aabb, sphere);
    }
    if let Some(a) = aabb {
        let affine = world_affine(transform, parent, hierarchy);
        Some(WorldShape::Box(world_box(
            &affine,
            a.half_extents,
            a.offset,
        )))
    } else if let Some(s) = sphere {
        let affine = world_affine(transform, parent, hierarchy);
        Some(WorldShape::Ball(world_ball(&affine, s.radius, s.offset)))
    } else {
        None
    }
}

/// [`world_shape`] for a root entity that is not rotated (most colliders of a 2D game):
/// its transform only scales and translates, so the local box is scaled and moved without
/// building the affine map.
///
/// For finite values this is the shape [`world_box`] and [`world_ball`] give, to the bit
/// (up to the sign of a zero): the map's off-diagonal entries are zeros, which add
/// nothing, and a ball's radius is scaled by the largest `sqrt(s * s)` over the scale
/// factors `s`, the length of each matrix column computed the same way (so a scale whose
/// square overflows is refused on both paths).
#[inline(always)]
fn unrotated_shape<V: Vector>(
    transform: &Transform,
    aabb: Option<&Aabb<V>>,
    sphere: Option<&BoundingSphere<V>>,
) -> Option<WorldShape<V>> {
    let translation = V::truncate_from_3d(transform.translation);
    let scale = V::truncate_from_3d(transform.scale);
    if let Some(a) = aabb {
        Some(WorldShape::Box(BoundingBox::from_center_half_extents(
            translation + scale * a.offset,
            scale.abs() * a.half_extents,
        )))
    } else {
        let column_length = (0..V::DIM)
            .map(|axis| (scale.axis(axis) * scale.axis(axis)).sqrt())
            .fold(0.0, f32::max);
        sphere.map(|s| {
            WorldShape::Ball(Ball::new(
                translation + scale * s.offset,
                s.radius * column_length,
            ))
        })
    }
}

/// What is invalid about a collider, for the one warning. Formatted only when the
/// warning is written: an entity that stays invalid costs no allocation per tick.
#[derive(Clone, Copy, Debug)]
enum Problem<V: Vector> {
    Translation(Vec3),
    Scale(Vec3),
    Rotation(Quat),
    Aabb(V, V),
    Sphere(f32, V),
    Velocity(V),
    Shape(WorldShape<V>),
    Overflow(BoundingBox<V>, V),
}

impl<V: Vector> core::fmt::Display for Problem<V> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Problem::Translation(t) => write!(f, "translation {t:?}"),
            Problem::Scale(s) => write!(f, "scale {s:?}"),
            Problem::Rotation(r) => write!(f, "rotation {r:?}"),
            Problem::Aabb(half, offset) => {
                write!(f, "Aabb half extents {half:?} offset {offset:?}")
            }
            Problem::Sphere(radius, offset) => {
                write!(f, "BoundingSphere radius {radius} offset {offset:?}")
            }
            Problem::Velocity(v) => write!(f, "Velocity {v:?}"),
            Problem::Shape(shape) => write!(f, "world shape {shape:?} (parent transform?)"),
            Problem::Overflow(swept, predicted) => {
                write!(
                    f,
                    "sweep {swept:?}, prediction {predicted:?} or the fat box around them overflows"
                )
            }
        }
    }
}

/// What is invalid about a collider, if anything.
///
/// Inlined for the reason [`world_shape`] is.
#[inline(always)]
fn invalid_reason<V: Vector>(
    shape: &WorldShape<V>,
    aabb: Option<&Aabb<V>>,
    sphere: Option<&BoundingSphere<V>>,
    velocity: V,
    transform: &Transform,
) -> Option<Problem<V>> {
    if !transform.translation.is_finite() {
        return Some(Problem::Translation(transform.translation));
    }
    if !transform.scale.is_finite() {
        return Some(Problem::Scale(transform.scale));
    }
    if !transform.rotation.is_finite() {
        return Some(Problem::Rotation(transform.rotation));
    }
    if let Some(a) = aabb
        && !(a.half_extents.is_finite() && V::ZERO.all_le(a.half_extents) && a.offset.is_finite())
    {
        return Some(Problem::Aabb(a.half_extents, a.offset));
    }
    if let Some(s) = sphere
        && !(s.radius.is_finite() && s.radius >= 0.0 && s.offset.is_finite())
    {
        return Some(Problem::Sphere(s.radius, s.offset));
    }
    if !velocity.is_finite() {
        return Some(Problem::Velocity(velocity));
    }
    if !shape.is_valid() {
        return Some(Problem::Shape(*shape));
    }
    None
}

type ColliderData<'a, V> = (
    Entity,
    &'a mut TrackedCollider<V>,
    Ref<'a, Transform>,
    Option<&'a ChildOf>,
    Option<Ref<'a, Aabb<V>>>,
    Option<Ref<'a, BoundingSphere<V>>>,
    Option<Ref<'a, Velocity<V>>>,
    Option<Ref<'a, CollisionLayers>>,
    Has<Teleported>,
);

/// The inputs of one collider, as `prepare` reads them.
struct Inputs<'a, V: Vector> {
    entity: Entity,
    transform: &'a Transform,
    parent: Option<&'a ChildOf>,
    aabb: Option<&'a Aabb<V>>,
    sphere: Option<&'a BoundingSphere<V>>,
    velocity: V,
    layers: CollisionLayers,
    teleported: bool,
}

/// The transforms up the `ChildOf` chain, and which ancestors were teleported, disabled
/// parents included.
type Hierarchy<'w, 's> = Query<
    'w,
    's,
    (
        &'static Transform,
        Option<&'static ChildOf>,
        Has<Teleported>,
    ),
    Allow<Disabled>,
>;

/// What processing one collider needs besides the collider itself.
struct Prepare<'a, 'cw, 'cs, 'hw, 'hs, V: Vector> {
    commands: &'a mut Commands<'cw, 'cs>,
    state: &'a mut AabbTree<V>,
    hierarchy: &'a Hierarchy<'hw, 'hs>,
    swept: bool,
    /// `dt × velocity_multiplier`: the prediction is `velocity × predict`.
    predict: f32,
    /// Colliders processed so far.
    processed: usize,
}

impl<V: Vector> Prepare<'_, '_, '_, '_, '_, V> {
    /// Stages 1–3 for one collider: its world shape, validity, its proxy in the tree and
    /// its body. Done again with unchanged inputs and a zero displacement, this changes
    /// nothing, which is what lets `prepare` skip idle colliders.
    fn process(&mut self, tracked: &mut TrackedCollider<V>, inputs: Inputs<'_, V>) {
        let Inputs {
            entity,
            transform,
            parent,
            aabb,
            sphere,
            velocity,
            layers,
            teleported,
        } = inputs;
        self.processed += 1;
        let state = &mut *self.state;
        forget_foreign_proxy(tracked, entity, state);
        if teleported {
            self.commands.entity(entity).remove::<Teleported>();
        }
        // Always walked, so that every ancestor's marker goes this tick even when the
        // collider has its own.
        let from_ancestor = ancestor_teleported(parent, self.hierarchy, self.commands);
        let teleported = teleported || from_ancestor;
        let Some(shape) = world_shape(transform, parent, self.hierarchy, aabb, sphere) else {
            // Both shapes removed by one command: each `Remove` observer saw the other
            // still there and kept the proxy.
            if let Some(id) = tracked.proxy.take() {
                state.remove_proxy(id, EndReason::Removed);
            }
            return;
        };
        let mut problem = invalid_reason(&shape, aabb, sphere, velocity, transform);

        let displacement = match tracked.proxy {
            Some(_) if !teleported && self.swept => shape.center() - tracked.shape.center(),
            _ => V::ZERO,
        };
        let swept = shape.aabb().swept(-displacement);
        let predicted = velocity * self.predict;
        let fat = state.tree.fatten(&swept, predicted);
        // The fat box too: finite values near the edge of `f32`'s range can overflow it.
        // Past this check, `swept` and `fat` are valid boxes.
        if problem.is_none() && !(swept.is_valid() && predicted.is_finite() && fat.is_valid()) {
            problem = Some(Problem::Overflow(swept, predicted));
        }

        if let Some(what) = problem {
            if !tracked.invalid {
                warn!(
                    "bevy_aabb_tree: entity {entity} left out of collision detection until its values are valid: {what}"
                );
                tracked.invalid = true;
            }
            if let Some(id) = tracked.proxy.take() {
                state.remove_proxy(id, EndReason::Invalid);
            }
            return;
        }
        if tracked.invalid {
            info!("bevy_aabb_tree: entity {entity} is valid again and back in collision detection");
            tracked.invalid = false;
        }

        let id = match tracked.proxy {
            Some(id) => {
                // The move is decided here, by the tree's rule against the fat box the
                // tree holds (its move cache by proxy id, read in about the order colliders
                // are iterated; the parent's slot when the cache is off), and the changed
                // boxes are handed over in one batch at the end of `prepare`
                // (`DynamicTree::set_fat_boxes`).
                let layers_changed = state.body(id).is_some_and(|b| b.layers != layers);
                match state.tree.fat_box(id) {
                    Some(old) if DynamicTree::<V, Entity>::keeps_fat_box(&old, &swept, &fat) => {
                        if layers_changed {
                            // Same box, but pairs must be looked for again.
                            state.pending_fat.push((id, old));
                        }
                    }
                    _ => state.pending_fat.push((id, fat)),
                }
                id
            }
            None => {
                let created = state.tree.create_proxy(swept, entity).and_then(|id| {
                    match state.tree.set_fat_box(id, fat) {
                        Ok(()) => Ok(id),
                        Err(e) => {
                            // Not left behind in the tree.
                            let _ = state.tree.destroy_proxy(id);
                            Err(e)
                        }
                    }
                });
                match created {
                    Ok(id) => {
                        tracked.proxy = Some(id);
                        id
                    }
                    Err(e) => {
                        warn!(
                            "bevy_aabb_tree: entity {entity} left out of collision detection: {e}"
                        );
                        tracked.invalid = true;
                        return;
                    }
                }
            }
        };
        tracked.previous = shape.center() - displacement;
        tracked.shape = shape;
        tracked.moved = displacement != V::ZERO;
        state.set_body(
            id,
            Body {
                entity,
                shape,
                displacement,
                layers,
            },
        );
    }
}

/// `value`, or `default` when it is not a finite number (NaN or infinite), with one
/// warning naming the [`CollisionConfig`] field when `warn` (the config changed).
fn finite_or_default(value: f32, default: f32, field: &str, warn: bool) -> f32 {
    if value.is_finite() {
        return value;
    }
    if warn {
        warn!(
            "bevy_aabb_tree: CollisionConfig::{field} is {value}, not a finite number: using its default, {default}"
        );
    }
    default
}

/// Stage 1–3: world shapes from transforms, validity, insertion, fattening, tree update.
///
/// Only colliders whose inputs changed since the last run are processed; the others keep
/// their shape, proxy and body, which processing them again would leave as they are. A
/// collider is processed when:
/// - `Transform`, `Aabb`, `BoundingSphere`, `Velocity` or `CollisionLayers` changed (Bevy's
///   change ticks: inserted or written through `Mut` since the last run), or the plugin's
///   observers marked its `TrackedCollider` (one of those components, or `ChildOf`, was
///   removed);
/// - it has `Teleported`, or a `ChildOf` (a parent's move is not a change of the child's
///   own components, so children are always processed; a teleported ancestor counts as
///   the child's own `Teleported`);
/// - it has no proxy: new, enabled again, or left out for invalid values (re-checked
///   every tick until valid);
/// - [`CollisionConfig`] changed (everything is processed);
/// - it moved when it was last processed (`TrackedCollider::moved`): its displacement,
///   non-zero then, must become zero, its previous position its position, and its fat
///   box may shrink back. Processed once more with unchanged inputs, it is idle.
///
/// A change of the time step alone (a variable `dt` in `Update`) does not re-process idle
/// colliders: it only changes the fattening of their boxes, never the events.
pub(crate) fn prepare<V: Vector>(
    mut commands: Commands,
    time: Res<Time>,
    config: Res<CollisionConfig>,
    mut state: ResMut<AabbTree<V>>,
    mut colliders: Query<ColliderData<V>>,
    hierarchy: Hierarchy,
) {
    let start = Instant::now();
    let state = &mut *state;
    let everything = config.is_changed();
    let defaults = CollisionConfig::default();
    // Finite, and a negative margin counts as 0: `set_margin` always takes it.
    let margin = finite_or_default(config.margin, defaults.margin, "margin", everything).max(0.0);
    let multiplier = finite_or_default(
        config.velocity_multiplier,
        defaults.velocity_multiplier,
        "velocity_multiplier",
        everything,
    );
    if state.tree.margin() != margin {
        let _ = state.tree.set_margin(margin);
    }
    state.tree.set_move_cache(config.move_cache);
    // Colliders spawned in bulk (a level loading) get their proxies without the tree's
    // arrays growing a doubling at a time, which would leave up to half of them unused.
    let colliders_count = colliders.iter().len();
    state
        .tree
        .reserve(colliders_count.saturating_sub(state.tree.len()));
    // The tables by proxy id, to the same size: no slack from doubling either.
    state.reserve_proxy_tables();
    state.stats.started = 0;
    state.stats.ended = state.ended.len();
    state.swept_hits.clear();
    let mut ctx = Prepare {
        commands: &mut commands,
        state,
        hierarchy: &hierarchy,
        swept: config.swept,
        predict: time.delta_secs() * multiplier,
        processed: 0,
    };
    for (entity, mut tracked, transform, parent, aabb, sphere, velocity, layers, teleported) in
        &mut colliders
    {
        let changed = everything
            || transform.is_changed()
            || teleported
            || parent.is_some()
            || tracked.is_changed()
            || aabb.as_ref().is_some_and(DetectChanges::is_changed)
            || sphere.as_ref().is_some_and(DetectChanges::is_changed)
            || velocity.as_ref().is_some_and(DetectChanges::is_changed)
            || layers.as_ref().is_some_and(DetectChanges::is_changed)
            || tracked.moved
            || (tracked.proxy.is_none() && (aabb.is_some() || sphere.is_some()));
        if !changed {
            continue;
        }
        let inputs = Inputs {
            entity,
            transform: &transform,
            parent,
            aabb: aabb.as_deref(),
            sphere: sphere.as_deref(),
            velocity: velocity.map_or(V::ZERO, |v| v.0),
            layers: layers.map_or_else(CollisionLayers::default, |l| *l),
            teleported,
        };
        ctx.process(&mut tracked, inputs);
    }
    let processed = ctx.processed;
    let state = ctx.state;
    let mut pending = core::mem::take(&mut state.pending_fat);
    // Every id is a live proxy and every box valid (checked above), so the tree refuses
    // none; should it, the collider would keep a stale fat box, which is logged.
    state.tree.set_fat_boxes(pending.drain(..), |id, result| {
        if let Err(e) = result {
            error!("bevy_aabb_tree: proxy {id:?} kept its old fat box: {e}");
        }
    });
    state.pending_fat = pending;
    state.stats.processed = processed;
    state.stats.moved = state.tree.moved_count();
    state.stats.proxies = state.tree.len();
    state.stats.prepare_ms = start.elapsed().as_secs_f32() * 1000.0;
}

/// The tree's pair update, its walk spread over the compute task pool when the config
/// asks for it, enough colliders moved and the pool has more than one thread. The pairs
/// are the same either way; the parallel ones are joined in task order. Returns the
/// number of tasks run on the pool (0: serial).
///
/// Each walk task writes into its own list, kept by the tree between ticks: a list grows
/// only when its task reports more pairs than it ever has (and the pool's spawning of a
/// task is the pool's).
fn update_pairs<V: Vector>(
    tree: &mut crate::DynamicTree<V, Entity>,
    config: &CollisionConfig,
    pairs: &mut Vec<(crate::ProxyId, crate::ProxyId)>,
) -> usize {
    use bevy::tasks::ComputeTaskPool;
    let pool = ComputeTaskPool::try_get().filter(|pool| pool.thread_num() > 1);
    let Some(pool) = pool.filter(|_| {
        config
            .parallel_pairs_from
            .is_some_and(|from| tree.moved_count() >= from)
    }) else {
        tree.update_pairs(pairs);
        return 0;
    };
    let threads = pool.thread_num();
    let mut job = tree.parallel_pairs(threads.saturating_mul(TASKS_PER_THREAD));
    let count = job.task_count();
    let job_ref = &job;
    // One pool task per walk task: the pool hands them to whichever thread is free, which
    // evens out tasks of very different sizes.
    pool.scope(|scope| {
        for task in 0..count {
            scope.spawn(async move { job_ref.run_buffered(task) });
        }
    });
    job.append_buffered(pairs);
    count
}

/// Stage 4: new candidate pairs from the tree, filtered by layers.
pub(crate) fn broad_phase<V: Vector>(config: Res<CollisionConfig>, mut state: ResMut<AabbTree<V>>) {
    let start = Instant::now();
    let state = &mut *state;
    let mut new_pairs = core::mem::take(&mut state.scratch_pairs);
    new_pairs.clear();
    state.stats.parallel_tasks = update_pairs(&mut state.tree, &config, &mut new_pairs);
    let first_added = state.pairs.len();
    for &(a, b) in &new_pairs {
        if state.has_pair(a, b) {
            continue;
        }
        let (Some(ba), Some(bb)) = (state.body(a), state.body(b)) else {
            continue;
        };
        if !ba.layers.interacts_with(&bb.layers) {
            continue;
        }
        // Linked below, once sorted (the walk reports each pair once).
        state.pairs.push(Pair::new(a, b));
    }
    // The walk's order depends on whether it ran in parallel, and on how many threads the
    // pool has. Sorted, the pairs added (fewer than the walk reports: most are candidates
    // already) come in the same order on every machine, and so do `touching_pairs`,
    // `colliding_with` and `swept_hits`.
    state.pairs[first_added..].sort_unstable_by_key(|p| (p.a, p.b));
    for i in first_added..state.pairs.len() {
        let p = state.pairs[i];
        debug_assert!(
            !state.has_pair(p.a, p.b),
            "a pair reported twice by one walk"
        );
        state.link_pair(i);
    }
    state.stats.new_candidates = state.pairs.len() - first_added;
    state.scratch_pairs = new_pairs;
    state.stats.broad_ms = start.elapsed().as_secs_f32() * 1000.0;
}

/// Whether two world shapes overlap now (inclusive).
fn shapes_overlap<V: Vector>(a: &WorldShape<V>, b: &WorldShape<V>) -> bool {
    match (a, b) {
        (WorldShape::Box(x), WorldShape::Box(y)) => x.overlaps(y),
        (WorldShape::Ball(x), WorldShape::Ball(y)) => x.overlaps(y),
        (WorldShape::Ball(x), WorldShape::Box(y)) | (WorldShape::Box(y), WorldShape::Ball(x)) => {
            x.overlaps_box(y)
        }
    }
}

/// A normal from `a` towards `b` for shapes that already overlap: the axis of least
/// penetration for two boxes, the line of centers otherwise (zero when centers coincide).
fn overlap_normal<V: Vector>(a: &WorldShape<V>, b: &WorldShape<V>) -> V {
    if let (WorldShape::Box(x), WorldShape::Box(y)) = (a, b) {
        let mut best = f32::INFINITY;
        let mut normal = V::ZERO;
        let d = y.center() - x.center();
        for axis in 0..V::DIM {
            let depth =
                x.max.axis(axis).min(y.max.axis(axis)) - x.min.axis(axis).max(y.min.axis(axis));
            if depth < best {
                best = depth;
                normal = V::ZERO;
                normal.set_axis(axis, if d.axis(axis) < 0.0 { -1.0 } else { 1.0 });
            }
        }
        return normal;
    }
    let d = b.center() - a.center();
    let len = d.dot(d).sqrt();
    if len > 0.0 { d / len } else { V::ZERO }
}

/// The swept test of a pair over the tick: first contact and normal, or `None`.
fn sweep<V: Vector>(a0: &WorldShape<V>, da: V, b0: &WorldShape<V>, db: V) -> Option<(f32, V)> {
    let hit = match (a0, b0) {
        (WorldShape::Box(x), WorldShape::Box(y)) => sweep_boxes(x, da, y, db),
        (WorldShape::Ball(x), WorldShape::Ball(y)) => sweep_balls(x, da, y, db),
        (WorldShape::Ball(x), WorldShape::Box(y)) => sweep_ball_box(x, da, y, db),
        (WorldShape::Box(x), WorldShape::Ball(y)) => sweep_ball_box(y, db, x, da).map(|mut h| {
            h.normal = -h.normal;
            h
        }),
    }?;
    Some((hit.u0, hit.normal))
}

/// Stage 5: exact and swept tests of every candidate pair; records the transitions.
pub(crate) fn narrow_phase<V: Vector>(
    config: Res<CollisionConfig>,
    mut state: ResMut<AabbTree<V>>,
) {
    let start = Instant::now();
    let state = &mut *state;
    let mut i = 0;
    let mut swept_hits = 0;
    while i < state.pairs.len() {
        let pair = state.pairs[i];
        let (Some(a), Some(b)) = (state.body(pair.a).copied(), state.body(pair.b).copied()) else {
            state.remove_pair_at(i);
            continue;
        };
        let layers_ok = a.layers.interacts_with(&b.layers);
        let touching = layers_ok && shapes_overlap(&a.shape, &b.shape);
        let moving = a.displacement != V::ZERO || b.displacement != V::ZERO;
        if pair.touching && !touching {
            let reason = if layers_ok {
                EndReason::Separated
            } else {
                EndReason::LayersChanged
            };
            state.ended.push((a.entity, b.entity, reason));
        } else if !pair.touching && layers_ok {
            let a0 = a.shape.translated(-a.displacement);
            let b0 = b.shape.translated(-b.displacement);
            let hit = if !moving || !config.swept {
                touching.then(|| (0.0, overlap_normal(&a.shape, &b.shape)))
            } else if shapes_overlap(&a0, &b0) {
                Some((0.0, overlap_normal(&a0, &b0)))
            } else {
                sweep(&a0, a.displacement, &b0, b.displacement)
                    .or_else(|| touching.then(|| (1.0, overlap_normal(&a.shape, &b.shape))))
            };
            if let Some((toi, normal)) = hit {
                state.started.push((a.entity, b.entity, toi, normal));
                if !touching {
                    state.swept_hits.push(SweptHit {
                        entity: a.entity,
                        other: b.entity,
                        position: a0.center() + a.displacement * toi,
                        time_of_impact: toi,
                    });
                    swept_hits += 1;
                    state
                        .ended
                        .push((a.entity, b.entity, EndReason::PassedThrough));
                }
            }
        }
        state.pairs[i].touching = touching;
        let fat_overlap = match (state.tree.fat_box(pair.a), state.tree.fat_box(pair.b)) {
            (Some(x), Some(y)) => x.overlaps(&y),
            _ => false,
        };
        if !layers_ok || (!fat_overlap && !touching) {
            state.remove_pair_at(i);
        } else {
            i += 1;
        }
    }
    state.stats.swept_hits = swept_hits;
    state.stats.candidates = state.pairs.len();
    state.stats.touching = state.pairs.iter().filter(|p| p.touching).count();
    state.stats.narrow_ms = start.elapsed().as_secs_f32() * 1000.0;
}

/// Triggers the batch of entity events in `state.start_events` and `state.end_events` in
/// one command: every start, then every end, each to its target only if it still exists
/// when the command runs. One command, because Bevy applies what observers queue (a
/// despawn, say) between commands: with a command per event, an observer despawning its
/// entity on a start would send its partner the end before the partner's own start.
///
/// The command takes the two buffers and gives them back to the resource once it has
/// triggered them, so that a steady stream of events allocates nothing.
fn trigger_batch<V: Vector>(commands: &mut Commands, state: &mut AabbTree<V>) {
    if state.start_events.is_empty() && state.end_events.is_empty() {
        return;
    }
    let mut started = core::mem::take(&mut state.start_events);
    let mut ended = core::mem::take(&mut state.end_events);
    commands.queue(move |world: &mut World| {
        for event in started.drain(..) {
            if world.get_entity(event.entity).is_ok() {
                world.trigger(event);
            }
        }
        for event in ended.drain(..) {
            if world.get_entity(event.entity).is_ok() {
                world.trigger(event);
            }
        }
        // Observers may have queued batches of their own meanwhile: keep the larger
        // buffers.
        if let Some(mut state) = world.get_resource_mut::<AabbTree<V>>() {
            let state = state.bypass_change_detection();
            if state.start_events.is_empty() && state.start_events.capacity() < started.capacity() {
                state.start_events = started;
            }
            if state.end_events.is_empty() && state.end_events.capacity() < ended.capacity() {
                state.end_events = ended;
            }
        }
    });
}

/// The order events name entities in: by index, then generation.
#[inline]
fn entity_order(e: Entity) -> (u32, u32) {
    (e.index_u32(), e.generation().to_bits())
}

/// The pair with the entity of smaller index first, and whether it was swapped. Messages
/// name pairs this way so that their content and order follow the entities, not the
/// tree's shape (which depends on insertion order).
#[inline]
fn canonical(a: Entity, b: Entity) -> (Entity, Entity, bool) {
    if entity_order(b) < entity_order(a) {
        (b, a, true)
    } else {
        (a, b, false)
    }
}

/// Writes the recorded ends as messages (one batch), sorted by pair, and appends their
/// entity events (one per entity) to `state.end_events`.
fn write_ended<V: Vector>(state: &mut AabbTree<V>, writer: &mut MessageWriter<CollisionEnded>) {
    for end in &mut state.ended {
        let (a, b, _) = canonical(end.0, end.1);
        (end.0, end.1) = (a, b);
    }
    state
        .ended
        .sort_by_key(|&(a, b, _)| (entity_order(a), entity_order(b)));
    let AabbTree {
        ended, end_events, ..
    } = state;
    let first = end_events.len();
    for (a, b, reason) in ended.drain(..) {
        end_events.push(CollisionEnded {
            entity: a,
            other: b,
            reason,
        });
        end_events.push(CollisionEnded {
            entity: b,
            other: a,
            reason,
        });
    }
    // The messages are the events with the smaller index first: every other one.
    writer.write_batch(end_events[first..].iter().step_by(2).copied());
}

/// Stage 6: writes this tick's messages and triggers the entity events: starts before
/// ends (a pass-through gives both, in that order), each kind sorted by pair with the
/// entity of smaller index first, so the same scene gives the same sequence whatever the
/// tree's shape.
pub(crate) fn emit_events<V: Vector>(
    mut commands: Commands,
    mut state: ResMut<AabbTree<V>>,
    mut started: MessageWriter<CollisionStarted>,
    mut ended: MessageWriter<CollisionEnded>,
) {
    let start = Instant::now();
    let state = &mut *state;
    state.stats.started = state.started.len();
    state.stats.ended += state.ended.len();
    for s in &mut state.started {
        let (a, b, swapped) = canonical(s.0, s.1);
        let normal = if swapped { -s.3 } else { s.3 };
        *s = (a, b, s.2, normal);
    }
    state
        .started
        .sort_unstable_by_key(|&(a, b, _, _)| (entity_order(a), entity_order(b)));
    let AabbTree {
        started: recorded,
        start_events,
        ..
    } = state;
    let first = start_events.len();
    for (a, b, toi, normal) in recorded.drain(..) {
        let n = normal.extend_to_3d();
        start_events.push(CollisionStarted {
            entity: a,
            other: b,
            time_of_impact: toi,
            normal: n,
        });
        start_events.push(CollisionStarted {
            entity: b,
            other: a,
            time_of_impact: toi,
            normal: -n,
        });
    }
    started.write_batch(start_events[first..].iter().step_by(2).copied());
    write_ended(state, &mut ended);
    trigger_batch(&mut commands, state);
    state.stats.events_ms = start.elapsed().as_secs_f32() * 1000.0;
}

/// Observer: the entity is despawned or disabled. The proxy leaves the tree at once and
/// its touching pairs end (`EndReason::Removed`).
pub(crate) fn on_collider_gone<V: Vector, E: EntityEvent, C: Component>(
    event: On<E, C>,
    mut colliders: Query<&mut TrackedCollider<V>, Allow<Disabled>>,
    mut state: ResMut<AabbTree<V>>,
    mut ended: MessageWriter<CollisionEnded>,
    mut commands: Commands,
) {
    let entity = event.event_target();
    if let Ok(mut tracked) = colliders.get_mut(entity) {
        drop_proxy(entity, &mut tracked, &mut state, &mut ended, &mut commands);
    }
}

/// A collider's tracking state and which shapes it has.
type ShapesItem<'a, V> = (
    &'a mut TrackedCollider<V>,
    Has<Aabb<V>>,
    Has<BoundingSphere<V>>,
);

/// Observer: a shape component (`Aabb` or `BoundingSphere`) is being removed. When the
/// entity keeps the other shape, it stays in the tree and the next tick tests the new
/// shape (contacts that still touch go on without events); otherwise it is gone as in
/// [`on_collider_gone`]. On despawn, `Despawn` observers have already dropped the proxy.
pub(crate) fn on_shape_removed<V: Vector, C: Component>(
    event: On<Remove, C>,
    mut colliders: Query<ShapesItem<V>, Allow<Disabled>>,
    mut state: ResMut<AabbTree<V>>,
    mut ended: MessageWriter<CollisionEnded>,
    mut commands: Commands,
) {
    let Ok((mut tracked, has_box, has_ball)) = colliders.get_mut(event.event_target()) else {
        return;
    };
    // `Remove` observers run while the component is still there: both shapes present
    // means one remains. The next tick processes the collider again (a removal is no
    // change Bevy's change ticks show): it tests the remaining shape.
    if has_box && has_ball {
        tracked.set_changed();
        return;
    }
    drop_proxy(
        event.event_target(),
        &mut tracked,
        &mut state,
        &mut ended,
        &mut commands,
    );
}

/// Observer: an input of the collider other than its shape (`Velocity`,
/// `CollisionLayers`, `ChildOf`) is being removed. A removal is no change that Bevy's
/// change ticks show, so this marks the collider's [`TrackedCollider`] changed: the next
/// tick processes it again (default velocity and layers, or a root's transform).
pub(crate) fn on_input_removed<V: Vector, C: Component>(
    event: On<Remove, C>,
    mut colliders: Query<&mut TrackedCollider<V>, Allow<Disabled>>,
) {
    if let Ok(mut tracked) = colliders.get_mut(event.event_target()) {
        tracked.set_changed();
    }
}

/// Mends a proxy id that does not hold this entity. A `TrackedCollider` written over by
/// hand (its docs say not to) may carry an id that the `Discard` observer has already
/// freed, or another collider's: such an id is neither updated nor removed. An insert
/// freed the entity's own proxy already (`Discard`), so it gets a new one at its next
/// processing; a write in place (through `&mut`, which no observer sees) left it in the
/// tree, so it is found again and kept.
#[inline]
fn forget_foreign_proxy<V: Vector>(
    tracked: &mut TrackedCollider<V>,
    entity: Entity,
    state: &AabbTree<V>,
) {
    if let Some(id) = tracked.proxy
        && state.tree.data(id) != Some(&entity)
    {
        tracked.proxy = own_proxy(entity, state);
    }
}

/// The proxy holding `entity`, by a scan of the tree's proxies: only for the rare case of
/// a `TrackedCollider` written over by hand.
#[cold]
fn own_proxy<V: Vector>(entity: Entity, state: &AabbTree<V>) -> Option<ProxyId> {
    warn!(
        "bevy_aabb_tree: the TrackedCollider of {entity} holds a proxy that is not its \
         own (written over by hand: the plugin maintains it); its own proxy is looked up"
    );
    // The payloads alone: `proxies()` would also look up every fat box.
    let index = state
        .tree
        .data
        .iter()
        .position(|owner| *owner == Some(entity))?;
    Some(ProxyId(index as u32))
}

/// Takes the collider's proxy out of the tree and ends its touching pairs.
fn drop_proxy<V: Vector>(
    entity: Entity,
    tracked: &mut TrackedCollider<V>,
    state: &mut AabbTree<V>,
    ended: &mut MessageWriter<CollisionEnded>,
    commands: &mut Commands,
) {
    forget_foreign_proxy(tracked, entity, state);
    if let Some(id) = tracked.proxy.take() {
        state.remove_proxy(id, EndReason::Removed);
        // Starts still pending means a user system between the narrow phase and the
        // events removed it: `emit_events` comes next in this tick and writes the starts
        // before the ends. Flushing here would send an end before its start.
        if state.started.is_empty() {
            write_ended(state, ended);
            trigger_batch(commands, state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::math::Vec2;

    /// A small deterministic generator (xorshift), values in `[lo, hi)`.
    struct Rng(u64);

    impl Rng {
        fn range(&mut self, lo: f32, hi: f32) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            lo + (hi - lo) * ((self.0 >> 40) as f32 / (1u64 << 24) as f32)
        }

        fn vec3(&mut self, lo: f32, hi: f32) -> Vec3 {
            Vec3::new(self.range(lo, hi), self.range(lo, hi), self.range(lo, hi))
        }
    }

    /// Translations, scales with mirrored and zero axes, offsets: the short path gives
    /// exactly the general path's box and ball.
    fn short_path_matches_affine<V: Vector>(seed: u64) {
        let mut rng = Rng(seed);
        for i in 0..2000 {
            let mut scale = rng.vec3(-3.0, 3.0);
            if i % 7 == 0 {
                scale.y = 0.0;
            }
            let transform = Transform {
                translation: rng.vec3(-1e4, 1e4),
                rotation: Quat::IDENTITY,
                scale,
            };
            let affine = transform.compute_affine();
            let half = V::truncate_from_3d(rng.vec3(0.0, 50.0));
            let offset = V::truncate_from_3d(rng.vec3(-20.0, 20.0));
            let aabb = Aabb::<V> {
                half_extents: half,
                offset,
            };
            let expected = WorldShape::Box(world_box(&affine, half, offset));
            assert_eq!(
                unrotated_shape(&transform, Some(&aabb), None),
                Some(expected),
                "{transform:?} {aabb:?}"
            );
            let radius = rng.range(0.0, 50.0);
            let sphere = BoundingSphere::<V> { radius, offset };
            assert_eq!(
                unrotated_shape(&transform, None, Some(&sphere)),
                Some(WorldShape::Ball(world_ball(&affine, radius, offset))),
                "{transform:?} {sphere:?}"
            );
        }
        // Scales whose square over- or underflows: the same radius (infinite, refused
        // later; or zero) on both paths.
        for s in [3e19f32, -2e19, 1e-25, 0.0] {
            let transform = Transform::from_scale(Vec3::splat(s));
            let sphere = BoundingSphere::<V> {
                radius: 1.5,
                offset: V::ZERO,
            };
            let affine = transform.compute_affine();
            assert_eq!(
                unrotated_shape(&transform, None, Some(&sphere)),
                Some(WorldShape::Ball(world_ball(&affine, 1.5, V::ZERO))),
                "scale {s}"
            );
        }
        let transform = Transform::from_xyz(1.0, 2.0, 3.0);
        assert_eq!(unrotated_shape::<V>(&transform, None, None), None);
    }

    #[test]
    fn unrotated_shape_2d() {
        short_path_matches_affine::<Vec2>(0x9e37_79b9_7f4a_7c15);
    }

    #[test]
    fn unrotated_shape_3d() {
        short_path_matches_affine::<Vec3>(0xd1b5_4a32_d192_ed03);
    }
}
