//! The guide: how to build a game's collisions with this crate, one page per subject.
//!
//! The pages hold no code of their own; their examples are compiled and run as doc tests.
//! Each is shown in 2D; 3D is the same with [`d3`](crate::d3) and `Vec3`.
//!
#![cfg_attr(
    feature = "plugin",
    doc = "- [`quick_tour`]: what the plugin gives (events, static levels, sensors, characters,
  layers, queries, configuration), the `d2` / `d3` names, units, and the examples."
)]
#![cfg_attr(
    feature = "plugin",
    doc = "- [`events`]: what happens when… (despawns, teleports, invalid values, fast objects,
  static colliders, the order of a tick's events), case by case."
)]
#![cfg_attr(
    feature = "plugin",
    doc = "- [`static_levels`]: level geometry with [`Static`](crate::Static), and very large levels."
)]
#![cfg_attr(
    feature = "plugin",
    doc = "- [`queries`]: who touches whom, push-out, shape casts, move-and-slide, sensors,
  one-way platforms, the nearest point, and queries that do not allocate."
)]
#![cfg_attr(
    feature = "plugin",
    doc = "- [`characters`]: the character controller."
)]
#![cfg_attr(
    feature = "plugin",
    doc = "- [`filters_and_layers`]: pair filters with the game's own rules, and layers by name."
)]
#![cfg_attr(
    feature = "plugin",
    doc = "- [`scenes_and_rendering`]: pausing, saved scenes, smooth rendering between ticks."
)]
#![cfg_attr(
    feature = "picking",
    doc = "- [`picking`]: pointer events on colliders (feature `picking`)."
)]
#![cfg_attr(
    feature = "tilemap",
    doc = "- [`tilemaps`]: colliders for `bevy_ecs_tilemap` layers (feature `tilemap`)."
)]
#![cfg_attr(
    feature = "plugin",
    doc = "- [`rollback`]: multiplayer with rollback netcode, and what is deterministic."
)]
#![cfg_attr(
    feature = "gizmos",
    doc = "- [`debug_overlay`]: the gizmos and the statistics panel (features `gizmos`, `debug`)."
)]
#![cfg_attr(feature = "plugin", doc = "- [`limits`]: limits and pitfalls.")]
//! - [`tree_without_bevy`]: the geometry and the dynamic tree on their own.

#[cfg(feature = "plugin")]
#[doc = include_str!("quick_tour.md")]
pub mod quick_tour {}

#[cfg(feature = "plugin")]
#[doc = include_str!("events.md")]
pub mod events {}

#[cfg(feature = "plugin")]
#[doc = include_str!("static_levels.md")]
pub mod static_levels {}

#[cfg(feature = "plugin")]
#[doc = include_str!("queries.md")]
pub mod queries {}

#[cfg(feature = "plugin")]
#[doc = include_str!("characters.md")]
pub mod characters {}

#[cfg(feature = "plugin")]
#[doc = include_str!("filters_and_layers.md")]
pub mod filters_and_layers {}

#[cfg(feature = "plugin")]
#[doc = include_str!("scenes_and_rendering.md")]
pub mod scenes_and_rendering {}

#[cfg(feature = "picking")]
#[doc = include_str!("picking.md")]
pub mod picking {}

#[cfg(feature = "tilemap")]
#[doc = include_str!("tilemaps.md")]
pub mod tilemaps {}

#[cfg(feature = "plugin")]
#[doc = include_str!("rollback.md")]
pub mod rollback {}

#[cfg(feature = "gizmos")]
#[doc = include_str!("debug_overlay.md")]
pub mod debug_overlay {}

#[cfg(feature = "plugin")]
#[doc = include_str!("limits.md")]
pub mod limits {}

#[doc = include_str!("tree_without_bevy.md")]
pub mod tree_without_bevy {}
