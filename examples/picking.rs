//! Picking colliders with the mouse: `AabbTreePickingPlugin` answers `bevy_picking`'s
//! pointer rays with this crate's queries, so colliders get `Pointer<Over>`,
//! `Pointer<Out>` and `Pointer<Click>` without a sprite or mesh backend. Hovering a shape
//! tints it, clicking it toggles its highlight (gold). Where two shapes overlap, the one of
//! greater z is on top and takes the pointer; the grey wall has `Pickable::IGNORE` and
//! is never picked; the box at the bottom moves, and picking follows it.
//!
//! Run: `cargo run --features examples,picking --example picking`
//! Headless check: `... --example picking -- --screenshot shot.png --frames 150`: with no
//! mouse, an autopilot moves the pointer, clicks one shape and rests on another.

#[path = "support/demo.rs"]
#[allow(dead_code)] // The example uses the command line and the screenshot only.
mod demo;

use bevy::camera::RenderTarget;
use bevy::color::Luminance;
use bevy::diagnostic::FrameCount;
use bevy::picking::pointer::{Location, PointerAction, PointerButton, PointerId, PointerInput};
use bevy::prelude::*;
use bevy::window::{PrimaryWindow, WindowRef, WindowResolution};
use bevy_aabb_tree::d2::*;
use demo::DemoArgs;

/// A pickable shape's colour and state.
#[derive(Component)]
struct Shape {
    base: Color,
    hovered: bool,
    selected: bool,
}

impl Shape {
    fn new(base: Color) -> Self {
        Self {
            base,
            hovered: false,
            selected: false,
        }
    }

    fn color(&self) -> Color {
        let color = if self.selected {
            Color::srgb(1.0, 0.78, 0.15)
        } else {
            self.base
        };
        if self.hovered {
            color.lighter(0.2)
        } else {
            color
        }
    }
}

/// The box that moves back and forth.
#[derive(Component)]
struct Mover;

/// Where the headless autopilot moves the pointer and clicks.
#[derive(Resource)]
struct Autopilot;

fn main() {
    let args = DemoArgs::parse();
    let mut app = App::new();
    app.add_plugins(DefaultPlugins.set(WindowPlugin {
        primary_window: Some(Window {
            title: "bevy_aabb_tree: picking".into(),
            resolution: WindowResolution::new(1280, 720),
            ..default()
        }),
        ..default()
    }))
    .add_plugins((AabbTreePlugin::default(), AabbTreePickingPlugin::default()))
    .insert_resource(ClearColor(Color::srgb(0.07, 0.08, 0.1)))
    .add_systems(Startup, setup)
    .add_systems(Update, (move_box, paint));
    if args.screenshot.is_some() {
        app.insert_resource(Autopilot)
            .add_systems(Update, autopilot.run_if(resource_exists::<Autopilot>));
    }
    demo::screenshot_plugin(&mut app, args);
    app.run();
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    commands.spawn(Camera2d);
    commands.spawn((
        Text2d::new("hover a shape to tint it, click to toggle its highlight"),
        TextFont {
            font_size: FontSize::Px(24.0),
            ..default()
        },
        Transform::from_xyz(0.0, 320.0, 10.0),
    ));

    let mut spawn = |commands: &mut Commands, at: Vec3, mesh: Mesh, base: Color| {
        commands
            .spawn((
                Transform::from_translation(at),
                Mesh2d(meshes.add(mesh)),
                MeshMaterial2d(materials.add(ColorMaterial::from_color(base))),
                Shape::new(base),
            ))
            .observe(|over: On<Pointer<Over>>, mut shapes: Query<&mut Shape>| {
                if let Ok(mut shape) = shapes.get_mut(over.entity) {
                    shape.hovered = true;
                }
            })
            .observe(|out: On<Pointer<Out>>, mut shapes: Query<&mut Shape>| {
                if let Ok(mut shape) = shapes.get_mut(out.entity) {
                    shape.hovered = false;
                }
            })
            .observe(|click: On<Pointer<Click>>, mut shapes: Query<&mut Shape>| {
                if let Ok(mut shape) = shapes.get_mut(click.entity) {
                    shape.selected = !shape.selected;
                    info!("clicked {} (selected: {})", click.entity, shape.selected);
                }
            })
            .id()
    };

    // A row of boxes and circles.
    let blue = Color::srgb(0.25, 0.45, 0.8);
    let green = Color::srgb(0.3, 0.65, 0.4);
    for i in 0..5 {
        let x = -440.0 + 220.0 * i as f32;
        let half = Vec2::new(50.0 + 10.0 * i as f32, 60.0 - 5.0 * i as f32);
        let e = spawn(
            &mut commands,
            Vec3::new(x, 160.0, 0.0),
            Rectangle::from_size(half * 2.0).into(),
            blue,
        );
        commands.entity(e).insert(Aabb::new(half));
        let radius = 35.0 + 8.0 * i as f32;
        let e = spawn(
            &mut commands,
            Vec3::new(x, 0.0, 0.0),
            Circle::new(radius).into(),
            green,
        );
        commands.entity(e).insert(BoundingSphere::new(radius));
    }

    // Two overlapping shapes: the circle (z = 1) is drawn over the box (z = 0) and takes
    // the pointer where they overlap.
    let purple = Color::srgb(0.55, 0.35, 0.75);
    let e = spawn(
        &mut commands,
        Vec3::new(-380.0, -180.0, 0.0),
        Rectangle::new(200.0, 120.0).into(),
        purple,
    );
    commands.entity(e).insert(Aabb::new(Vec2::new(100.0, 60.0)));
    let e = spawn(
        &mut commands,
        Vec3::new(-290.0, -140.0, 1.0),
        Circle::new(60.0).into(),
        Color::srgb(0.8, 0.4, 0.5),
    );
    commands.entity(e).insert(BoundingSphere::new(60.0));

    // A box that moves: picking reads the colliders of the last collision tick.
    let e = spawn(
        &mut commands,
        Vec3::new(0.0, -280.0, 0.0),
        Rectangle::new(120.0, 50.0).into(),
        Color::srgb(0.75, 0.5, 0.25),
    );
    commands
        .entity(e)
        .insert((Aabb::new(Vec2::new(60.0, 25.0)), Mover));

    // A wall the pointer never picks.
    commands.spawn((
        Transform::from_xyz(380.0, -180.0, 0.0),
        Mesh2d(meshes.add(Rectangle::new(60.0, 160.0))),
        MeshMaterial2d(materials.add(ColorMaterial::from_color(Color::srgb(0.3, 0.3, 0.3)))),
        Aabb::new(Vec2::new(30.0, 80.0)),
        Pickable::IGNORE,
    ));
}

fn move_box(time: Res<Time>, mut movers: Query<&mut Transform, With<Mover>>) {
    for mut transform in &mut movers {
        transform.translation.x = 250.0 * (time.elapsed_secs() * 0.8).sin();
    }
}

/// Each shape's colour from its state.
fn paint(
    shapes: Query<(&Shape, &MeshMaterial2d<ColorMaterial>), Changed<Shape>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    for (shape, material) in &shapes {
        if let Some(mut material) = materials.get_mut(&material.0) {
            material.color = shape.color();
        }
    }
}

/// Headless: moves the mouse pointer onto the first box and clicks it, then onto the
/// circle over the purple box, where it stays (the screenshot shows one shape highlighted
/// and one hovered).
fn autopilot(
    frame: Res<FrameCount>,
    window: Single<Entity, With<PrimaryWindow>>,
    camera: Single<(&Camera, &GlobalTransform)>,
    mut input: MessageWriter<PointerInput>,
    mut last: Local<Vec2>,
) {
    let (camera, camera_transform) = *camera;
    let Some(target) = RenderTarget::Window(WindowRef::Entity(*window)).normalize(None) else {
        return;
    };
    let mut at = |world: Vec2, action: Option<PointerAction>| {
        let Ok(position) = camera.world_to_viewport(camera_transform, world.extend(0.0)) else {
            return;
        };
        let location = Location {
            target: target.clone(),
            position,
        };
        let action = action.unwrap_or(PointerAction::Move {
            delta: position - *last,
        });
        *last = position;
        input.write(PointerInput::new(PointerId::Mouse, location, action));
    };
    let first_box = Vec2::new(-440.0, 160.0);
    let overlap = Vec2::new(-300.0, -150.0);
    match frame.0 {
        30 => at(first_box, None),
        40 => at(
            first_box,
            Some(PointerAction::Press(PointerButton::Primary)),
        ),
        45 => at(
            first_box,
            Some(PointerAction::Release(PointerButton::Primary)),
        ),
        60 => at(overlap, None),
        _ => {}
    }
}
