//! Spatial queries in 3D: rays, overlap queries and a box cast over the collision tree.
//! Headless. Run: `cargo run --example spatial_queries`.

use bevy::prelude::*;
use bevy_aabb_tree::d3::*;

fn main() {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        bevy::transform::TransformPlugin,
        bevy::log::LogPlugin::default(),
    ))
    // Run the pipeline every frame so the queries see the scene on the first update.
    .add_plugins(AabbTreePlugin::new(Update))
    .add_systems(Startup, setup)
    .add_systems(Update, queries.after(CollisionSystems::Events));
    app.update();
}

#[derive(Component)]
struct Eye;

fn setup(mut commands: Commands) {
    // A row of crates along +x, and a ball above the third one.
    for i in 0..5 {
        commands.spawn((
            Name::new(format!("crate {i}")),
            Transform::from_xyz(3.0 + i as f32 * 2.0, 0.0, 0.0),
            Aabb::new(Vec3::splat(0.5)),
        ));
    }
    commands.spawn((
        Name::new("ball"),
        Transform::from_xyz(7.0, 2.0, 0.0),
        BoundingSphere::new(0.75),
    ));
    // The observer has a collider too; the queries exclude it.
    commands.spawn((
        Name::new("eye"),
        Eye,
        Transform::default(),
        BoundingSphere::new(0.25),
    ));
}

fn queries(query: SpatialQuery, eye: Single<Entity, With<Eye>>, names: Query<&Name>) {
    let name = |e: Entity| names.get(e).map(|n| n.to_string()).unwrap_or_default();
    let filter = QueryFilter::default().excluding([*eye]);

    // Closest hit along +x: the first crate, 2.5 units away (its face at x = 2.5).
    let ray = Ray::new(Vec3::ZERO, Vec3::X);
    if let Some(hit) = query.cast_ray(&ray, 100.0, &filter) {
        info!(
            "closest ray hit: {} at distance {} (normal {})",
            name(hit.entity),
            hit.t,
            hit.normal
        );
    }
    // Every hit along the same ray, nearest first.
    let all: Vec<_> = query
        .ray_hits(&ray, 100.0, &filter)
        .iter()
        .map(|h| format!("{} @ {}", name(h.entity), h.t))
        .collect();
    info!("all ray hits: {all:?}");
    // What is at a point, in a box, in a sphere.
    info!(
        "at (7, 2, 0): {:?}",
        query
            .point(Vec3::new(7.0, 2.0, 0.0), &filter)
            .iter()
            .map(|e| name(*e))
            .collect::<Vec<_>>()
    );
    let region = BoundingBox::from_min_max(Vec3::new(4.0, -1.0, -1.0), Vec3::new(8.0, 1.0, 1.0));
    info!(
        "in the box x 4..8: {:?}",
        query
            .aabb(&region, &filter)
            .iter()
            .map(|e| name(*e))
            .collect::<Vec<_>>()
    );
    info!(
        "within 3 of (7, 0, 0): {:?}",
        query
            .sphere(Vec3::new(7.0, 0.0, 0.0), 3.0, &filter)
            .iter()
            .map(|e| name(*e))
            .collect::<Vec<_>>()
    );
    // Sweep a box from above down onto the row: it lands on the ball first.
    let falling =
        BoundingBox::from_center_half_extents(Vec3::new(7.0, 10.0, 0.0), Vec3::splat(0.25));
    if let Some(hit) = query.cast_box(&falling, Vec3::NEG_Y, 20.0, &filter) {
        info!(
            "box cast down lands on {} after {} units, centre at {}",
            name(hit.entity),
            hit.t,
            hit.point
        );
    }
}
