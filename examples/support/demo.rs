//! Shared by the demos: command-line options, a small random generator, bouncing inside
//! an arena, and the `--screenshot` capture.

use std::path::PathBuf;

use bevy::diagnostic::FrameCount;
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};

/// `--screenshot PATH [--frames N]`: render N frames (default 150), save the window to
/// PATH and exit.
#[derive(Resource, Clone, Debug, Default)]
pub struct DemoArgs {
    pub screenshot: Option<PathBuf>,
    pub frames: u32,
}

impl DemoArgs {
    pub fn parse() -> Self {
        let mut args = DemoArgs {
            screenshot: None,
            frames: 150,
        };
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            match a.as_str() {
                "--screenshot" => args.screenshot = it.next().map(PathBuf::from),
                "--frames" => {
                    args.frames = it
                        .next()
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(args.frames)
                }
                other => eprintln!("ignoring unknown argument {other}"),
            }
        }
        args
    }
}

/// A 32-bit LCG: the same scene every run.
pub struct Lcg(pub u32);

impl Lcg {
    pub fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(1664525).wrapping_add(1013904223);
        (self.0 >> 8) as f32 / 16_777_216.0
    }

    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next()
    }
}

/// Entities that bounce off the arena's edges.
#[derive(Component)]
pub struct Bouncy;

/// The arena: half size on each axis.
#[derive(Resource)]
pub struct Arena(pub Vec3);

/// Flips the velocity component of a body that left the arena on that axis.
pub fn bounce<V: bevy_aabb_tree::Vector>(
    arena: Res<Arena>,
    mut q: Query<(&Transform, &mut bevy_aabb_tree::Velocity<V>), With<Bouncy>>,
) {
    for (t, mut v) in &mut q {
        let p = t.translation;
        let mut v3 = v.0.extend_to_3d();
        for axis in 0..V::DIM {
            if (p[axis] > arena.0[axis] && v3[axis] > 0.0)
                || (p[axis] < -arena.0[axis] && v3[axis] < 0.0)
            {
                v3[axis] = -v3[axis];
            }
        }
        v.0 = V::truncate_from_3d(v3);
    }
}

/// Adds the screenshot-and-exit behaviour when `--screenshot` was given.
pub fn screenshot_plugin(app: &mut App, args: DemoArgs) {
    if args.screenshot.is_some() {
        app.insert_resource(args).add_systems(Last, take_screenshot);
    }
}

fn take_screenshot(
    mut commands: Commands,
    frame: Res<FrameCount>,
    args: Res<DemoArgs>,
    mut exit: MessageWriter<AppExit>,
) {
    let Some(path) = args.screenshot.clone() else {
        return;
    };
    if frame.0 == args.frames {
        info!("capturing frame {} to {}", frame.0, path.display());
        commands.spawn(Screenshot::primary_window()).observe(
            move |captured: On<ScreenshotCaptured>, mut exit: MessageWriter<AppExit>| {
                let saved = captured
                    .image
                    .clone()
                    .try_into_dynamic()
                    .map_err(|e| e.to_string())
                    .and_then(|img| img.to_rgb8().save(&path).map_err(|e| e.to_string()));
                match saved {
                    Ok(()) => {
                        info!("saved {}", path.display());
                        exit.write(AppExit::Success);
                    }
                    Err(e) => {
                        error!("could not save {}: {e}", path.display());
                        exit.write(AppExit::error());
                    }
                }
            },
        );
    } else if frame.0 > args.frames + 600 {
        error!("no screenshot after {} frames", frame.0);
        exit.write(AppExit::error());
    }
}
