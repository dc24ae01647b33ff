//! The plugin with the optional integrations and the determinism they rely on, each
//! module behind its feature: picking (`picking`), tile maps (`tilemap`), saved scenes
//! (`serialize`), smooth rendering (`interpolation`), `bevy_ggrs`'s synchronous check and
//! the collision checksum (`ggrs`), and save, restore and replay without a rollback
//! library (`rollback`, the plugin alone). The generator, the dimensions and the warnings recorder are the kit's
//! (`tests/kit`).

#[path = "../kit/mod.rs"]
mod kit;

mod determinism;
#[cfg(feature = "ggrs")]
mod ggrs_checksum;
#[cfg(feature = "ggrs")]
mod ggrs_synctest;
#[cfg(feature = "interpolation")]
mod interpolation;
#[cfg(feature = "picking")]
mod picking;
mod rollback;
#[cfg(feature = "serialize")]
mod saved_scenes;
#[cfg(feature = "tilemap")]
mod tilemap;
