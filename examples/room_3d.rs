//! A 3D character in a room of boxes, moved by the character controller, without a
//! physics engine.
//!
//! - The room is `Static` boxes: a floor of tiles (their seams must not snag the
//!   character), four walls, crates, a pillar, and a dais with stairs up one side and a
//!   ramp down the other.
//! - The character is a capsule moved by [`CharacterController`] ([`CharacterPlugin`])
//!   with gravity: it slides along the crates it runs into instead of stopping dead,
//!   climbs the stairs' steps (each lower than the controller's `max_step_height`; its
//!   rounded bottom stands on their edges on the way), keeps to
//!   the ramp going down, and stands on ground (the state's `grounded`), which is when it
//!   may jump.
//! - At start an autopilot walks it round the pillar, up the stairs, over the dais, down
//!   the ramp and through the crates; the arrow keys (or WASD) take over, Space jumps. A
//!   yellow line traces where it went.
//! - The debug overlay is on: the colliders' boxes and capsules and the trees' top nodes
//!   (F1 hides it).
//!
//! Run: `cargo run --features examples --example room_3d`
//! Headless check: `... --example room_3d -- --screenshot shot.png --frames 150`

#[path = "support/demo.rs"]
#[allow(dead_code)] // This example uses the command line and the screenshot only.
mod demo;

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy::window::WindowResolution;
use bevy_aabb_tree::d3::*;
use demo::DemoArgs;

/// Collision layers: the room, and the character.
const ROOM: u32 = 1 << 0;
const CHARACTER: u32 = 1 << 1;

/// The character: a capsule standing along y, of this radius and half this height
/// overall (1.4 tall), in metres. The controller's default step (0.25) and snap (0.25)
/// are in metres too, which suits a character this size.
const RADIUS: f32 = 0.4;
const HALF_HEIGHT: f32 = 0.7;
/// Walking speed, metres per second.
const WALK_SPEED: f32 = 5.0;
const JUMP_SPEED: f32 = 6.0;
const GRAVITY: f32 = 20.0;
/// The radius of the autopilot's round, about the room's center.
const ROUND: f32 = 5.0;
/// The fixed tick: Bevy's default (64 Hz), which the plugin's step (`FixedPostUpdate`) follows.
const TICK: f64 = 1.0 / 64.0;
/// Points kept in the trail.
const TRAIL: usize = 400;

/// The room's half size on the floor (x, z) and its walls' height.
const ROOM_HALF: Vec2 = Vec2::new(8.0, 6.0);
const WALL_HEIGHT: f32 = 1.0;

/// The crates and the pillar: center and half extents.
const CRATES: [(Vec3, Vec3); 5] = [
    // On the autopilot's round, so that it runs into them and slides along.
    (Vec3::new(4.9, 0.6, -1.9), Vec3::new(0.8, 0.6, 0.8)),
    (Vec3::new(-4.6, 0.4, 0.8), Vec3::new(0.4, 0.4, 1.2)),
    (Vec3::new(2.5, 0.5, -4.2), Vec3::new(0.5, 0.5, 0.5)),
    (Vec3::new(-6.0, 0.75, -4.0), Vec3::new(1.0, 0.75, 1.0)),
    // The pillar in the middle.
    (Vec3::new(0.0, 1.5, 0.0), Vec3::new(0.75, 1.5, 0.75)),
];

/// The dais on the near side of the autopilot's round, against the near wall: its
/// top's height, and its extent along z (from the round's inside to the wall).
const DAIS_HEIGHT: f32 = 0.8;
const DAIS_Z: (f32, f32) = (2.9, 6.0);
/// The dais's top along x: the stairs climb to its +x edge (the autopilot walks towards
/// -x there), the ramp leaves its -x edge.
const DAIS_X: (f32, f32) = (-1.0, 2.0);
/// The stairs: `STAIR_STEPS` steps below the top, each `STAIR_RISE` high (below the
/// controller's `max_step_height`, 0.25) and `STAIR_TREAD` deep.
const STAIR_STEPS: usize = 3;
const STAIR_RISE: f32 = DAIS_HEIGHT / (STAIR_STEPS + 1) as f32;
const STAIR_TREAD: f32 = 0.45;
/// The ramp: the shapes are axis-aligned boxes, balls and capsules only, so a ramp is a
/// run of fine steps, `RAMP_STEPS` of them from the top down to the floor, each
/// `RAMP_RISE` high and `RAMP_TREAD` deep (a 22° slope). The capsule's rounded bottom
/// rests on their edges, so it goes over them as over a slope.
const RAMP_STEPS: usize = 20;
const RAMP_RISE: f32 = DAIS_HEIGHT / RAMP_STEPS as f32;
const RAMP_TREAD: f32 = 0.1;

/// Where the character has been, drawn as a line.
#[derive(Component, Default)]
struct Trail(Vec<Vec3>);

/// While present, the character walks round the pillar on its own; the first movement
/// key removes it.
#[derive(Resource, Default)]
struct Autopilot {
    /// How far (radians) the autopilot turns away from its round to get past what blocks
    /// it: a crate met face on stops the slide dead (nothing of the motion is along the
    /// face), so it turns a little more each tick it makes no headway, and back once free.
    detour: f32,
    /// The walking direction it chose at the last tick.
    last_walk: Vec3,
}

fn main() {
    let args = DemoArgs::parse();
    let mut app = App::new();
    app.add_plugins(DefaultPlugins.set(WindowPlugin {
        primary_window: Some(Window {
            title: "bevy_aabb_tree: room 3D".into(),
            resolution: WindowResolution::new(1280, 720),
            ..default()
        }),
        ..default()
    }))
    .add_plugins((
        AabbTreePlugin::default(),
        CharacterPlugin::default(),
        AabbTreeDebugPlugin::default(),
    ))
    // A small scene: the boxes and the trees' top levels are enough, and the statistics
    // panel would hide part of the room. Swept hits are off: the collision tick sweeps
    // each move of the character in a straight line, and a step up the stairs (up, then
    // across) cuts the step's corner, which would ring every step climbed.
    .insert_resource(DebugOverlay {
        panel: false,
        depth_range: (0, 1),
        pass_throughs: false,
        ..default()
    })
    .insert_resource(ClearColor(Color::srgb(0.07, 0.08, 0.1)))
    .insert_resource(Time::<Fixed>::from_seconds(TICK))
    .init_resource::<Autopilot>()
    .add_systems(Startup, setup)
    // The velocity is set before the collision tick (`FixedPostUpdate`); the character
    // controller moves the capsule after it.
    .add_systems(FixedUpdate, (control_character, record_trail))
    .add_systems(Update, (take_control, draw_trail));
    if args.screenshot.is_some() {
        // Each frame advances the clock by exactly one tick, so the picture is the same
        // however slowly a headless machine renders.
        app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            TICK,
        )));
    }
    demo::screenshot_plugin(&mut app, args);
    app.run();
}

/// Spawns the room (floor tiles, walls, crates, the dais with its stairs and ramp, all
/// `Static`), the character, a light and a camera looking down into the room.
fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    commands.spawn((
        Camera3d::default(),
        Transform::from_xyz(0.0, 17.0, 11.5).looking_at(Vec3::new(0.0, 0.0, 0.9), Vec3::Y),
    ));
    commands.spawn((
        DirectionalLight {
            illuminance: 6000.0,
            shadow_maps_enabled: true,
            ..default()
        },
        Transform::from_xyz(6.0, 12.0, 8.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.insert_resource(GlobalAmbientLight {
        brightness: 300.0,
        ..default()
    });

    let unit_cube = meshes.add(Cuboid::new(1.0, 1.0, 1.0));
    let floor_mat = materials.add(Color::srgb(0.3, 0.33, 0.4));
    let wall_mat = materials.add(Color::srgb(0.45, 0.5, 0.6));
    let crate_mat = materials.add(StandardMaterial {
        base_color_texture: Some(assets.load("crate.png")),
        ..default()
    });

    // A box of the room: `Static` (kept in the static tree, never paired with the other
    // static boxes), drawn as a unit cube scaled to its size. The collider is in world
    // units here, not scaled by the transform.
    let mut spawn_box = |center: Vec3, half: Vec3, material: &Handle<StandardMaterial>| {
        commands.spawn((
            Transform::from_translation(center),
            Aabb::new(half),
            CollisionLayers::new(ROOM, CHARACTER),
            Static,
            Visibility::default(),
            children![(
                Transform::from_scale(2.0 * half),
                Mesh3d(unit_cube.clone()),
                MeshMaterial3d(material.clone()),
            )],
        ));
    };

    // The floor: 2 m tiles, slightly inset on screen so the seams show; the colliders
    // meet edge to edge, top at y = 0.
    for ix in 0..(ROOM_HALF.x as i32) {
        for iz in 0..(ROOM_HALF.y as i32) {
            let center = Vec3::new(
                -ROOM_HALF.x + 1.0 + 2.0 * ix as f32,
                -0.25,
                -ROOM_HALF.y + 1.0 + 2.0 * iz as f32,
            );
            spawn_box(center, Vec3::new(1.0, 0.25, 1.0), &floor_mat);
        }
    }
    // The four walls, 0.5 m thick, around the floor.
    let t = 0.25;
    let h = WALL_HEIGHT / 2.0;
    for sign in [-1.0, 1.0] {
        spawn_box(
            Vec3::new(sign * (ROOM_HALF.x + t), h, 0.0),
            Vec3::new(t, h, ROOM_HALF.y + 2.0 * t),
            &wall_mat,
        );
        spawn_box(
            Vec3::new(0.0, h, sign * (ROOM_HALF.y + t)),
            Vec3::new(ROOM_HALF.x, h, t),
            &wall_mat,
        );
    }
    for (center, half) in CRATES {
        spawn_box(center, half, &crate_mat);
    }

    // The dais: its top, the stairs up to its +x edge and the ramp down from its -x
    // edge, each step a box standing on the floor.
    let stone_mat = materials.add(Color::srgb(0.62, 0.55, 0.45));
    let (z0, z1) = DAIS_Z;
    let mut block = |x0: f32, x1: f32, height: f32| {
        spawn_box(
            Vec3::new((x0 + x1) / 2.0, height / 2.0, (z0 + z1) / 2.0),
            Vec3::new((x1 - x0) / 2.0, height / 2.0, (z1 - z0) / 2.0),
            &stone_mat,
        );
    };
    block(DAIS_X.0, DAIS_X.1, DAIS_HEIGHT);
    for i in 0..STAIR_STEPS {
        // Step 0 is the one next to the top, the highest.
        let x0 = DAIS_X.1 + i as f32 * STAIR_TREAD;
        block(
            x0,
            x0 + STAIR_TREAD,
            DAIS_HEIGHT - (i + 1) as f32 * STAIR_RISE,
        );
    }
    for i in 0..RAMP_STEPS - 1 {
        let x1 = DAIS_X.0 - i as f32 * RAMP_TREAD;
        block(
            x1 - RAMP_TREAD,
            x1,
            DAIS_HEIGHT - (i + 1) as f32 * RAMP_RISE,
        );
    }

    // The character: a capsule moved by the character controller, which blocks it on the
    // room's layer.
    let segment = HALF_HEIGHT - RADIUS;
    commands.spawn((
        CharacterController::new(Vec3::Y),
        Trail::default(),
        Transform::from_xyz(ROUND, HALF_HEIGHT + 0.01, 0.0),
        Capsule::new(segment, RADIUS),
        CollisionLayers::new(CHARACTER, ROOM),
        Mesh3d(meshes.add(Capsule3d::new(RADIUS, 2.0 * segment).mesh())),
        MeshMaterial3d(materials.add(Color::srgb(0.95, 0.45, 0.3))),
    ));
}

/// The walking direction on the floor (unit or zero) and whether to jump, this tick.
///
/// The autopilot walks clockwise (seen from above) round the room's center, steering
/// back towards its round when a crate has pushed it off, and turning aside by its
/// detour. Keys are read with `pressed`: a fixed tick can run zero or several times per
/// frame, and would miss or repeat a one-frame press.
fn read_input(
    keys: &ButtonInput<KeyCode>,
    autopilot: Option<&Autopilot>,
    position: Vec3,
) -> (Vec3, bool) {
    if let Some(autopilot) = autopilot {
        let radial = Vec3::new(position.x, 0.0, position.z);
        let distance = radial.length();
        let out = radial.normalize_or(Vec3::X);
        // Clockwise seen from above (+y): from +x towards +z, towards the camera.
        let tangent = Vec3::new(-out.z, 0.0, out.x);
        let steer = out * (ROUND - distance).clamp(-1.0, 1.0);
        let dir = Quat::from_rotation_y(autopilot.detour) * (tangent + steer);
        return (dir.normalize_or_zero(), false);
    }
    let mut dir = Vec3::ZERO;
    if keys.any_pressed([KeyCode::ArrowLeft, KeyCode::KeyA]) {
        dir.x -= 1.0;
    }
    if keys.any_pressed([KeyCode::ArrowRight, KeyCode::KeyD]) {
        dir.x += 1.0;
    }
    if keys.any_pressed([KeyCode::ArrowUp, KeyCode::KeyW]) {
        dir.z -= 1.0;
    }
    if keys.any_pressed([KeyCode::ArrowDown, KeyCode::KeyS]) {
        dir.z += 1.0;
    }
    (dir.normalize_or_zero(), keys.pressed(KeyCode::Space))
}

/// Sets the character's velocity for this tick: the walk from the input, gravity and
/// jumps. The character controller moves the capsule after the collision tick and removes
/// what ran into surfaces (landing ends a fall, a crate the walk into it).
fn control_character(
    time: Res<Time>,
    keys: Res<ButtonInput<KeyCode>>,
    mut autopilot: Option<ResMut<Autopilot>>,
    character: Single<(&Transform, &mut CharacterController, &CharacterState)>,
) {
    let (transform, mut controller, state) = character.into_inner();
    let dt = time.delta_secs();

    // The autopilot's headway at the last move: the part of the walk it wanted that the
    // capsule did, from 0 (blocked) to 1.
    if let Some(autopilot) = autopilot.as_deref_mut() {
        let wanted = autopilot.last_walk * WALK_SPEED * dt;
        let headway = state.displacement.dot(wanted) / wanted.length_squared().max(1e-9);
        autopilot.detour = if headway < 0.5 {
            (autopilot.detour + 0.1).min(1.5)
        } else {
            autopilot.detour * 0.9
        };
    }

    let (walk, jump) = read_input(&keys, autopilot.as_deref(), transform.translation);
    if let Some(autopilot) = autopilot.as_deref_mut() {
        autopilot.last_walk = walk;
    }
    let vertical = controller.velocity.y;
    let mut velocity = walk * WALK_SPEED + Vec3::Y * vertical;
    if jump && state.grounded {
        velocity.y = JUMP_SPEED;
    }
    // Gravity applies even on the ground: the controller stops it on the floor and
    // removes it from the velocity.
    velocity.y -= GRAVITY * dt;
    controller.velocity = velocity;
}

/// Adds the character's position to its trail, once per tick.
fn record_trail(character: Single<(&Transform, &mut Trail)>) {
    let (transform, mut trail) = character.into_inner();
    trail.0.push(transform.translation);
    if trail.0.len() > TRAIL {
        trail.0.remove(0);
    }
}

/// The first movement key hands the character to the keyboard.
fn take_control(
    mut commands: Commands,
    keys: Res<ButtonInput<KeyCode>>,
    autopilot: Option<Res<Autopilot>>,
) {
    let movement = [
        KeyCode::ArrowLeft,
        KeyCode::ArrowRight,
        KeyCode::ArrowUp,
        KeyCode::ArrowDown,
        KeyCode::KeyW,
        KeyCode::KeyA,
        KeyCode::KeyS,
        KeyCode::KeyD,
        KeyCode::Space,
    ];
    if autopilot.is_some() && keys.any_just_pressed(movement) {
        info!("keyboard control");
        commands.remove_resource::<Autopilot>();
    }
}

/// Draws the trail just above the floor.
fn draw_trail(mut gizmos: Gizmos, trail: Single<&Trail>) {
    let lift = Vec3::new(0.0, 0.02 - HALF_HEIGHT, 0.0);
    gizmos.linestrip(
        trail.0.iter().map(|p| *p + lift),
        Color::srgb(1.0, 0.85, 0.2),
    );
}
