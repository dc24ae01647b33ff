//! World shapes from transforms, and what makes a collider's values invalid.

use bevy::ecs::entity_disabling::Disabled;
use bevy::math::Affine3A;
use bevy::prelude::*;

use crate::Vector;
use crate::geometry::{Ball, BoundingBox, RoundedBox};
use crate::plugin::{Aabb, BoundingSphere, Capsule, RoundedAabb, Teleported, WorldShape};

/// The shape components of one collider, as the pipeline reads them. With several
/// present, one counts, in this order: the `Aabb`, the `RoundedAabb`, the `Capsule`, the
/// `BoundingSphere`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ShapeComponents<'a, V: Vector> {
    pub(crate) aabb: Option<&'a Aabb<V>>,
    pub(crate) rounded: Option<&'a RoundedAabb<V>>,
    pub(crate) capsule: Option<&'a Capsule<V>>,
    pub(crate) sphere: Option<&'a BoundingSphere<V>>,
}

impl<'a, V: Vector> ShapeComponents<'a, V> {
    /// The shapes of a query's item, in the order of [`ShapeQuery`].
    #[inline(always)]
    pub(crate) fn of(
        (aabb, rounded, capsule, sphere): bevy::ecs::query::QueryItem<
            'a,
            'a,
            ShapeQuery<'static, V>,
        >,
    ) -> Self {
        Self {
            aabb,
            rounded,
            capsule,
            sphere,
        }
    }

    /// Whether it has no shape at all.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.aabb.is_none()
            && self.rounded.is_none()
            && self.capsule.is_none()
            && self.sphere.is_none()
    }
}

/// What a query reads of a collider's shapes (see [`ShapeComponents::of`]).
pub(crate) type ShapeQuery<'a, V> = (
    Option<&'a Aabb<V>>,
    Option<&'a RoundedAabb<V>>,
    Option<&'a Capsule<V>>,
    Option<&'a BoundingSphere<V>>,
);

/// Whether an entity has each shape, in the order of [`ShapeQuery`].
pub(crate) type HasShapes<V> = (
    Has<Aabb<V>>,
    Has<RoundedAabb<V>>,
    Has<Capsule<V>>,
    Has<BoundingSphere<V>>,
);

/// How many shapes an item of [`HasShapes`] says an entity has.
pub(crate) fn shape_count((a, r, c, s): (bool, bool, bool, bool)) -> u8 {
    u8::from(a) + u8::from(r) + u8::from(c) + u8::from(s)
}

/// The transforms up the `ChildOf` chain with their change ticks, and which ancestors
/// were teleported, disabled parents included.
pub(crate) type Hierarchy<'w, 's> = Query<
    'w,
    's,
    (
        Ref<'static, Transform>,
        Option<Ref<'static, ChildOf>>,
        Has<Teleported>,
    ),
    Allow<Disabled>,
>;

/// Calls `f` with each ancestor of a collider whose parent link is `parent`, nearest
/// first: its entity, transform, parent link and whether it has [`Teleported`].
fn for_each_ancestor(
    parent: Option<&ChildOf>,
    hierarchy: &Hierarchy,
    mut f: impl FnMut(Entity, &Ref<Transform>, Option<&Ref<ChildOf>>, bool),
) {
    let mut next = parent.map(ChildOf::parent);
    // A cycle cannot happen in Bevy's hierarchy; the bound only guards against a broken one.
    let mut depth = 0;
    while let Some(p) = next {
        let Ok((transform, up, teleported)) = hierarchy.get(p) else {
            break;
        };
        f(p, &transform, up.as_ref(), teleported);
        next = up.map(|c| c.parent());
        depth += 1;
        if depth > 1024 {
            break;
        }
    }
}

/// The entity's world transform, computed from `Transform` up the `ChildOf` chain so that
/// moves made earlier in the same frame (in `FixedUpdate`) count, even though
/// `GlobalTransform` is only propagated in `PostUpdate`.
pub(crate) fn world_affine(
    transform: &Transform,
    parent: Option<&ChildOf>,
    hierarchy: &Hierarchy,
) -> Affine3A {
    let mut affine = transform.compute_affine();
    for_each_ancestor(parent, hierarchy, |_, t, _, _| {
        affine = t.compute_affine() * affine;
    });
    affine
}

/// Whether an ancestor of a collider with this `parent` has [`Teleported`]: a jump of a
/// parent carries its child colliders. Each such ancestor's marker is removed once this
/// tick has used it (every child collider of a teleported ancestor is processed in the
/// same tick: the prepare stage walks down from a teleported parent).
pub(crate) fn ancestor_teleported(
    parent: Option<&ChildOf>,
    hierarchy: &Hierarchy,
    commands: &mut Commands,
) -> bool {
    let mut found = false;
    for_each_ancestor(parent, hierarchy, |entity, _, _, teleported| {
        if teleported {
            commands.entity(entity).remove::<Teleported>();
            found = true;
        }
    });
    found
}

/// The world box enclosing a local box under an affine map: the center is mapped, and
/// each world half extent is the sum of the local half extents weighted by the absolute
/// values of the matrix row (which encloses a rotated box).
pub(crate) fn world_box<V: Vector>(affine: &Affine3A, half: V, offset: V) -> BoundingBox<V> {
    let center = affine.transform_point3(offset.extend_to_3d());
    BoundingBox::from_center_half_extents(V::truncate_from_3d(center), world_half(affine, half))
}

/// The half extents of the world box enclosing a local box of half extents `half`.
fn world_half<V: Vector>(affine: &Affine3A, half: V) -> V {
    let h = half.extend_to_3d();
    let m = affine.matrix3;
    let world_half = m.x_axis.abs() * h.x + m.y_axis.abs() * h.y + m.z_axis.abs() * h.z;
    V::truncate_from_3d(Vec3::from(world_half))
}

pub(crate) fn world_ball<V: Vector>(affine: &Affine3A, radius: f32, offset: V) -> Ball<V> {
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

/// The world rounded box of a local one (inner box of `half` around `offset`, grown by
/// `radius`): the rounded box whose inner box encloses the mapped inner box
/// ([`world_box`]) and whose radius is scaled as a ball's ([`world_ball`]).
fn world_rounded_box<V: Vector>(
    affine: &Affine3A,
    half: V,
    radius: f32,
    offset: V,
) -> RoundedBox<V> {
    let ball = world_ball(affine, radius, offset);
    RoundedBox::new(ball.center, world_half(affine, half), ball.radius)
}

/// The world capsule of a local one: the rounded box around its mapped segment.
pub(crate) fn world_capsule<V: Vector>(affine: &Affine3A, capsule: &Capsule<V>) -> RoundedBox<V> {
    world_rounded_box(
        affine,
        capsule.segment_half_extents(),
        capsule.radius,
        capsule.offset,
    )
}

/// The world shape of a [`RoundedAabb`]: the rounded box around its mapped inner box.
pub(crate) fn world_rounded<V: Vector>(
    affine: &Affine3A,
    rounded: &RoundedAabb<V>,
) -> RoundedBox<V> {
    world_rounded_box(affine, rounded.half_extents, rounded.radius, rounded.offset)
}

/// The collider's world shape (of the first of its shapes in the order of
/// [`ShapeComponents`]), or `None` when it has none.
///
/// Inlined into `prepare`'s loop: out of line, the shape comes back through memory, which
/// costs the loop more than the call saves.
#[inline(always)]
pub(crate) fn world_shape<V: Vector>(
    transform: &Transform,
    parent: Option<&ChildOf>,
    hierarchy: &Hierarchy,
    shapes: ShapeComponents<'_, V>,
) -> Option<WorldShape<V>> {
    if parent.is_none() && transform.rotation == Quat::IDENTITY {
        return unrotated_shape(transform, shapes);
    }
    let ShapeComponents {
        aabb,
        rounded,
        capsule,
        sphere,
    } = shapes;
    if let Some(a) = aabb {
        let affine = world_affine(transform, parent, hierarchy);
        Some(WorldShape::Box(world_box(
            &affine,
            a.half_extents,
            a.offset,
        )))
    } else if let Some(r) = rounded {
        let affine = world_affine(transform, parent, hierarchy);
        Some(WorldShape::Rounded(world_rounded(&affine, r)))
    } else if let Some(c) = capsule {
        let affine = world_affine(transform, parent, hierarchy);
        Some(WorldShape::Rounded(world_capsule(&affine, c)))
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
pub(crate) fn unrotated_shape<V: Vector>(
    transform: &Transform,
    shapes: ShapeComponents<'_, V>,
) -> Option<WorldShape<V>> {
    let ShapeComponents {
        aabb,
        rounded,
        capsule,
        sphere,
    } = shapes;
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
        if let Some(r) = rounded {
            return Some(WorldShape::Rounded(RoundedBox::new(
                translation + scale * r.offset,
                scale.abs() * r.half_extents,
                r.radius * column_length,
            )));
        }
        if let Some(c) = capsule {
            return Some(WorldShape::Rounded(RoundedBox::new(
                translation + scale * c.offset,
                scale.abs() * c.segment_half_extents(),
                c.radius * column_length,
            )));
        }
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
pub(crate) enum Problem<V: Vector> {
    Translation(Vec3),
    Scale(Vec3),
    Rotation(Quat),
    Aabb(V, V),
    Sphere(f32, V),
    Capsule(Capsule<V>),
    Rounded(RoundedAabb<V>),
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
            Problem::Capsule(c) => write!(
                f,
                "Capsule half length {} radius {} axis {:?} offset {:?}",
                c.half_length, c.radius, c.axis, c.offset
            ),
            Problem::Rounded(r) => write!(
                f,
                "RoundedAabb half extents {:?} radius {} offset {:?}",
                r.half_extents, r.radius, r.offset
            ),
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
pub(crate) fn invalid_reason<V: Vector>(
    shape: &WorldShape<V>,
    shapes: ShapeComponents<'_, V>,
    velocity: V,
    transform: &Transform,
) -> Option<Problem<V>> {
    // The transform and the velocity tested finite at once (`x * 0.0` is zero for a
    // finite `x` and NaN otherwise), and one by one, to name the problem, only when
    // they are not.
    let t = transform;
    let zeros = (t.translation * 0.0 + t.scale * 0.0).element_sum()
        + (Vec4::from(t.rotation) * 0.0).element_sum()
        + (velocity * 0.0).dot(V::ONE);
    let finite = zeros == 0.0;
    if !finite {
        if !t.translation.is_finite() {
            return Some(Problem::Translation(t.translation));
        }
        if !t.scale.is_finite() {
            return Some(Problem::Scale(t.scale));
        }
        if !t.rotation.is_finite() {
            return Some(Problem::Rotation(t.rotation));
        }
    }
    let ShapeComponents {
        aabb,
        rounded,
        capsule,
        sphere,
    } = shapes;
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
    if let Some(r) = rounded
        && !r.is_valid()
    {
        return Some(Problem::Rounded(*r));
    }
    if let Some(c) = capsule
        && !c.is_valid()
    {
        return Some(Problem::Capsule(*c));
    }
    if !finite && !velocity.is_finite() {
        return Some(Problem::Velocity(velocity));
    }
    if !shape.is_valid() {
        return Some(Problem::Shape(*shape));
    }
    None
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::CapsuleAxis;
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

    /// The shapes of a collider with these components.
    fn shapes<'a, V: Vector>(
        aabb: Option<&'a Aabb<V>>,
        rounded: Option<&'a RoundedAabb<V>>,
        capsule: Option<&'a Capsule<V>>,
        sphere: Option<&'a BoundingSphere<V>>,
    ) -> ShapeComponents<'a, V> {
        ShapeComponents {
            aabb,
            rounded,
            capsule,
            sphere,
        }
    }

    /// Translations, scales with mirrored and zero axes, offsets: the short path gives
    /// exactly the general path's box, rounded boxes and ball.
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
                unrotated_shape(&transform, shapes(Some(&aabb), None, None, None)),
                Some(expected),
                "{transform:?} {aabb:?}"
            );
            let radius = rng.range(0.0, 50.0);
            let axis = [CapsuleAxis::X, CapsuleAxis::Y, CapsuleAxis::Z][i % V::DIM];
            let capsule = Capsule::<V>::new(rng.range(0.0, 20.0), radius)
                .along(axis)
                .with_offset(offset);
            assert_eq!(
                unrotated_shape(&transform, shapes(None, None, Some(&capsule), None)),
                Some(WorldShape::Rounded(world_capsule(&affine, &capsule))),
                "{transform:?} {capsule:?}"
            );
            let rounded = RoundedAabb::new(half, radius).with_offset(offset);
            assert_eq!(
                unrotated_shape(&transform, shapes(None, Some(&rounded), None, None)),
                Some(WorldShape::Rounded(world_rounded(&affine, &rounded))),
                "{transform:?} {rounded:?}"
            );
            let sphere = BoundingSphere::<V> { radius, offset };
            assert_eq!(
                unrotated_shape(&transform, shapes(None, None, None, Some(&sphere))),
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
                unrotated_shape(&transform, shapes(None, None, None, Some(&sphere))),
                Some(WorldShape::Ball(world_ball(&affine, 1.5, V::ZERO))),
                "scale {s}"
            );
        }
        let transform = Transform::from_xyz(1.0, 2.0, 3.0);
        assert_eq!(
            unrotated_shape::<V>(&transform, shapes(None, None, None, None)),
            None
        );
    }

    /// A quarter turn lays a capsule along the other axis, exactly as `along` does.
    #[test]
    fn quarter_turn_capsule() {
        let capsule = Capsule::<Vec3>::new(1.5, 0.5).with_offset(Vec3::Y);
        let turned = Transform::from_xyz(2.0, 0.0, 0.0)
            .with_rotation(Quat::from_rotation_z(core::f32::consts::FRAC_PI_2));
        let shape = world_capsule(&turned.compute_affine(), &capsule);
        let expected = RoundedBox::new(Vec3::new(1.0, 0.0, 0.0), Vec3::new(1.5, 0.0, 0.0), 0.5);
        assert!((shape.center - expected.center).abs().max_element() < 1e-6);
        assert!(
            (shape.half_extents - expected.half_extents)
                .abs()
                .max_element()
                < 1e-6
        );
        assert!((shape.radius - 0.5).abs() < 1e-6);
    }

    /// A quarter turn swaps a rounded box's extents and keeps its radius; a scale scales
    /// the inner box per axis and the radius by the largest factor.
    #[test]
    fn turned_and_scaled_rounded_box() {
        let rounded = RoundedAabb::<Vec3>::new(Vec3::new(2.0, 0.5, 1.0), 0.25);
        let turned = Transform::from_xyz(1.0, 0.0, 0.0)
            .with_rotation(Quat::from_rotation_z(core::f32::consts::FRAC_PI_2));
        let shape = world_rounded(&turned.compute_affine(), &rounded);
        assert!((shape.center - Vec3::X).abs().max_element() < 1e-6);
        let swapped = Vec3::new(0.5, 2.0, 1.0);
        assert!((shape.half_extents - swapped).abs().max_element() < 1e-6);
        assert!((shape.radius - 0.25).abs() < 1e-6);
        let scaled = Transform::from_scale(Vec3::new(2.0, -3.0, 1.0));
        let shape = world_rounded(&scaled.compute_affine(), &rounded);
        assert_eq!(shape.half_extents, Vec3::new(4.0, 1.5, 1.0));
        assert_eq!(shape.radius, 0.75);
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
