//! The picking backend, headless: rays put in Bevy's `RayMap` by hand, the `PointerHits`
//! the backend writes compared with hits computed by hand, in 3D (ray casts) and 2D
//! (point queries in the plane z = 0, depth from the entity's z); then with Bevy's own
//! picking plugins, the hover map and the `Pointer<Over>` event they derive from them.
#![cfg(feature = "picking")]

use bevy::camera::{Camera, NormalizedRenderTarget};
use bevy::picking::backend::PointerHits;
use bevy::picking::backend::ray::{RayId, RayMap};
use bevy::picking::hover::HoverMap;
use bevy::picking::pointer::{Location, PointerId, PointerLocation};
use bevy::picking::{InteractionPlugin, Pickable, PickingPlugin, PickingSystems};
use bevy::prelude::*;
use bevy::transform::TransformPlugin;
use bevy_aabb_tree::Vector;
use bevy_aabb_tree::plugin::{
    AabbTreePickable, AabbTreePickingFilter, AabbTreePickingPlugin, AabbTreePickingSettings,
};
use bevy_aabb_tree::prelude::*;

/// An app with the collision plugin of `V` (in `Update`), its picking backend and a
/// camera; no ray yet.
fn app<V: Vector>() -> (App, Entity)
where
    AabbTreePlugin<V>: Plugin,
{
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, TransformPlugin))
        .add_plugins((
            AabbTreePlugin::<V>::new(Update),
            AabbTreePickingPlugin::<V>::default(),
        ));
    let camera = app.world_mut().spawn(Camera::default()).id();
    (app, camera)
}

/// Runs a few frames so that the colliders are in the tree and the transforms propagated.
fn settle(app: &mut App) {
    for _ in 0..3 {
        app.update();
    }
    app.world_mut()
        .resource_mut::<Messages<PointerHits>>()
        .clear();
}

/// Casts `ray` from `camera` for the mouse pointer: one frame, the messages written.
fn pick(app: &mut App, camera: Entity, origin: Vec3, direction: Vec3) -> Vec<PointerHits> {
    let ray = Ray3d::new(origin, Dir3::new(direction).unwrap());
    {
        let mut map = app.world_mut().resource_mut::<RayMap>();
        map.map.clear();
        map.map.insert(RayId::new(camera, PointerId::Mouse), ray);
    }
    app.update();
    app.world_mut()
        .resource_mut::<Messages<PointerHits>>()
        .drain()
        .collect()
}

/// The one message's picks: entity, depth, position, normal.
fn picks(messages: &[PointerHits]) -> Vec<(Entity, f32, Option<Vec3>, Option<Vec3>)> {
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0].pointer, PointerId::Mouse);
    messages[0]
        .picks
        .iter()
        .map(|(e, hit)| (*e, hit.depth, hit.position, hit.normal))
        .collect()
}

fn assert_picks(
    got: &[(Entity, f32, Option<Vec3>, Option<Vec3>)],
    want: &[(Entity, f32, Option<Vec3>, Option<Vec3>)],
) {
    assert_eq!(
        got.iter().map(|p| p.0).collect::<Vec<_>>(),
        want.iter().map(|p| p.0).collect::<Vec<_>>(),
        "entities: got {got:?}, want {want:?}"
    );
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g.1 - w.1).abs() < 1e-3,
            "depth of {}: {} vs {}",
            g.0,
            g.1,
            w.1
        );
        let close = |a: Option<Vec3>, b: Option<Vec3>| match (a, b) {
            (Some(a), Some(b)) => a.abs_diff_eq(b, 1e-3),
            (None, None) => true,
            _ => false,
        };
        assert!(
            close(g.2, w.2),
            "position of {}: {:?} vs {:?}",
            g.0,
            g.2,
            w.2
        );
        assert!(close(g.3, w.3), "normal of {}: {:?} vs {:?}", g.0, g.3, w.3);
    }
}

/// The 3D scene: along the ray from (-10, 0, 0) towards +X, a box around the origin of
/// the ray (t = 0, no normal), a box at x = 0 (enters at x = -1: t = 9), a ball at x = 5
/// (enters at x = 4.5: t = 14.5); off the ray, behind it, and one ignored.
struct Scene3d {
    inside: Entity,
    cube: Entity,
    ball: Entity,
}

fn scene_3d(app: &mut App) -> Scene3d {
    let world = app.world_mut();
    let inside = world
        .spawn((
            Transform::from_xyz(-10.0, 0.0, 0.0),
            Aabb::new(Vec3::splat(0.5)),
        ))
        .id();
    let cube = world
        .spawn((
            Transform::from_xyz(0.0, 0.0, 0.0),
            Aabb::new(Vec3::splat(1.0)),
        ))
        .id();
    let ball = world
        .spawn((
            Transform::from_xyz(5.0, 0.0, 0.0),
            BoundingSphere::<Vec3>::new(0.5),
        ))
        .id();
    // Off the ray, behind its origin, and on it but ignored.
    world.spawn((
        Transform::from_xyz(-5.0, 3.0, 0.0),
        Aabb::new(Vec3::splat(1.0)),
    ));
    world.spawn((
        Transform::from_xyz(-20.0, 0.0, 0.0),
        Aabb::new(Vec3::splat(1.0)),
    ));
    world.spawn((
        Transform::from_xyz(10.0, 0.0, 0.0),
        Aabb::new(Vec3::splat(1.0)),
        Pickable::IGNORE,
    ));
    Scene3d { inside, cube, ball }
}

#[test]
fn ray_hits_in_3d_nearest_first() {
    let (mut app, camera) = app::<Vec3>();
    let s = scene_3d(&mut app);
    settle(&mut app);
    let origin = Vec3::new(-10.0, 0.0, 0.0);
    let messages = pick(&mut app, camera, origin, Vec3::X);
    assert_eq!(messages[0].order, 0.0);
    assert!(
        messages[0]
            .picks
            .iter()
            .all(|(_, hit)| hit.camera == camera)
    );
    assert_picks(
        &picks(&messages),
        &[
            (s.inside, 0.0, Some(origin), None),
            (
                s.cube,
                9.0,
                Some(Vec3::new(-1.0, 0.0, 0.0)),
                Some(Vec3::NEG_X),
            ),
            (
                s.ball,
                14.5,
                Some(Vec3::new(4.5, 0.0, 0.0)),
                Some(Vec3::NEG_X),
            ),
        ],
    );

    // A ray that misses everything writes nothing.
    assert!(pick(&mut app, camera, Vec3::new(0.0, 0.0, 10.0), Vec3::Z).is_empty());

    // The camera's filter leaves the cube out; its order is the messages' order.
    app.world_mut().entity_mut(camera).insert((
        AabbTreePickingFilter(QueryFilter::default().excluding([s.cube])),
        Camera {
            order: 2,
            ..default()
        },
    ));
    let messages = pick(&mut app, camera, origin, Vec3::X);
    assert_eq!(messages[0].order, 2.0);
    let got = picks(&messages);
    assert_eq!(
        got.iter().map(|p| p.0).collect::<Vec<_>>(),
        [s.inside, s.ball]
    );

    // Markers required: nothing until the camera has one, then only the marked ball.
    app.world_mut()
        .entity_mut(camera)
        .remove::<AabbTreePickingFilter>();
    app.insert_resource(AabbTreePickingSettings {
        require_markers: true,
    });
    app.world_mut().entity_mut(s.ball).insert(AabbTreePickable);
    assert!(pick(&mut app, camera, origin, Vec3::X).is_empty());
    app.world_mut().entity_mut(camera).insert(AabbTreePickable);
    let got = picks(&pick(&mut app, camera, origin, Vec3::X));
    assert_eq!(got.iter().map(|p| p.0).collect::<Vec<_>>(), [s.ball]);

    // An inactive camera picks nothing.
    app.world_mut().entity_mut(camera).insert(Camera {
        is_active: false,
        ..default()
    });
    assert!(pick(&mut app, camera, origin, Vec3::X).is_empty());
}

/// The 2D scene: at (3, 4), a box at z = 0 and a circle at z = 5 (on top); a box at
/// z = 2000, behind a 2D camera's ray origin (z = 1000); a box elsewhere.
struct Scene2d {
    low: Entity,
    high: Entity,
}

fn scene_2d(app: &mut App) -> Scene2d {
    let world = app.world_mut();
    let low = world
        .spawn((
            Transform::from_xyz(3.0, 4.0, 0.0),
            Aabb::new(Vec2::splat(2.0)),
        ))
        .id();
    let high = world
        .spawn((
            Transform::from_xyz(3.5, 4.0, 5.0),
            BoundingSphere::<Vec2>::new(1.0),
        ))
        .id();
    world.spawn((Transform::from_xyz(3.0, 4.0, 2000.0), Aabb::new(Vec2::ONE)));
    world.spawn((Transform::from_xyz(10.0, 10.0, 10.0), Aabb::new(Vec2::ONE)));
    Scene2d { low, high }
}

#[test]
fn point_hits_in_2d_by_depth() {
    let (mut app, camera) = app::<Vec2>();
    let s = scene_2d(&mut app);
    settle(&mut app);

    // An orthographic 2D camera's ray: from its near plane (z = 1000) straight down -Z.
    let origin = Vec3::new(3.0, 4.0, 1000.0);
    let messages = pick(&mut app, camera, origin, Vec3::NEG_Z);
    assert_picks(
        &picks(&messages),
        &[
            (s.high, 995.0, Some(Vec3::new(3.0, 4.0, 5.0)), Some(Vec3::Z)),
            (s.low, 1000.0, Some(Vec3::new(3.0, 4.0, 0.0)), Some(Vec3::Z)),
        ],
    );

    // A slanted ray (a perspective camera at (0, 0, 10)) meets z = 0 at (3, 4): the
    // depths are the distances along it to z = 5 and z = 0.
    let direction = Vec3::new(3.0, 4.0, -10.0);
    let length = direction.length();
    let messages = pick(&mut app, camera, Vec3::new(0.0, 0.0, 10.0), direction);
    assert_picks(
        &picks(&messages),
        &[
            (
                s.high,
                length / 2.0,
                Some(Vec3::new(3.0, 4.0, 5.0)),
                Some(Vec3::Z),
            ),
            (s.low, length, Some(Vec3::new(3.0, 4.0, 0.0)), Some(Vec3::Z)),
        ],
    );

    // Elsewhere, nothing; a ray parallel to the plane or away from it, nothing.
    assert!(pick(&mut app, camera, Vec3::new(-30.0, 0.0, 1000.0), Vec3::NEG_Z).is_empty());
    assert!(pick(&mut app, camera, origin, Vec3::X).is_empty());
    assert!(pick(&mut app, camera, origin, Vec3::Z).is_empty());

    // `Pickable::IGNORE` leaves the circle out.
    app.world_mut().entity_mut(s.high).insert(Pickable::IGNORE);
    let got = picks(&pick(&mut app, camera, origin, Vec3::NEG_Z));
    assert_eq!(got.iter().map(|p| p.0).collect::<Vec<_>>(), [s.low]);
}

/// The ray to cast this frame, put in the `RayMap` after Bevy's picking rebuilt it.
#[derive(Resource)]
struct NextRay(RayId, Ray3d);

#[derive(Resource, Default)]
struct Overs(Vec<Entity>);

#[test]
fn bevy_picking_hovers_the_top_collider() {
    let (mut app, camera) = app::<Vec2>();
    app.add_plugins((PickingPlugin, InteractionPlugin))
        .init_resource::<Overs>()
        .add_systems(
            PreUpdate,
            (|next: Option<Res<NextRay>>, mut map: ResMut<RayMap>| {
                if let Some(next) = next {
                    map.map.insert(next.0, next.1);
                }
            })
            .after(PickingSystems::ProcessInput)
            .before(PickingSystems::Backend),
        )
        .add_observer(|over: On<Pointer<Over>>, mut overs: ResMut<Overs>| {
            overs.0.push(over.entity);
        });
    // The mouse pointer, somewhere (Bevy sends pointer events only for a located pointer).
    app.world_mut().spawn((
        PointerId::Mouse,
        PointerLocation::new(Location {
            target: NormalizedRenderTarget::None {
                width: 100,
                height: 100,
            },
            position: Vec2::ZERO,
        }),
    ));
    let s = scene_2d(&mut app);
    settle(&mut app);
    app.insert_resource(NextRay(
        RayId::new(camera, PointerId::Mouse),
        Ray3d::new(Vec3::new(3.0, 4.0, 1000.0), Dir3::NEG_Z),
    ));
    app.update();
    let hovered: Vec<Entity> = app.world().resource::<HoverMap>()[&PointerId::Mouse]
        .keys()
        .copied()
        .collect();
    assert_eq!(hovered, [s.high], "the circle on top blocks the box below");
    assert_eq!(app.world().resource::<Overs>().0, [s.high]);

    // The circle lets what is below it be hovered too.
    app.world_mut().entity_mut(s.high).insert(Pickable {
        should_block_lower: false,
        is_hoverable: true,
    });
    app.update();
    let mut hovered: Vec<Entity> = app.world().resource::<HoverMap>()[&PointerId::Mouse]
        .keys()
        .copied()
        .collect();
    hovered.sort();
    let mut both = vec![s.low, s.high];
    both.sort();
    assert_eq!(hovered, both);
    assert_eq!(app.world().resource::<Overs>().0, [s.high, s.low]);
}
