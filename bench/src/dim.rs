//! The plugin's vector type of a dimension, as the binaries that run the plugin in an app
//! need it (also avian's `Vector`, the same glam types): a `Vector` Bevy can reflect. A
//! scene point goes in and out of it with `Vector::truncate_from_3d` and
//! `Vector::extend_to_3d`. Included with `#[path = "../dim.rs"] mod dim;` by the binaries
//! that ask for the `plugin` feature (or `ecs`, which holds it).

use bevy_aabb_tree::Vector;

/// A `Vector` Bevy can reflect: `Vec2` or `Vec3`.
pub trait Dim:
    Vector
    + bevy::reflect::FromReflect
    + bevy::reflect::TypePath
    + bevy::reflect::GetTypeRegistration
    + bevy::reflect::Typed
{
}

impl<V> Dim for V where
    V: Vector
        + bevy::reflect::FromReflect
        + bevy::reflect::TypePath
        + bevy::reflect::GetTypeRegistration
        + bevy::reflect::Typed
{
}
