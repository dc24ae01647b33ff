//! The two dimensions the plugin supports, with what the tests need to generate scenes.

use bevy::math::{Vec2, Vec3};
use bevy::reflect::{FromReflect, GetTypeRegistration, TypePath, Typed};
use bevy_aabb_tree::Vector;

use super::rng::Rng;

/// A dimension the plugin runs in.
pub trait Dim: Vector + FromReflect + TypePath + GetTypeRegistration + Typed {
    /// The axis rotated colliders turn about: z in 2D, any axis in 3D.
    fn rotation_axis(rng: &mut Rng) -> Vec3;
}

impl Dim for Vec2 {
    fn rotation_axis(_: &mut Rng) -> Vec3 {
        Vec3::Z
    }
}

impl Dim for Vec3 {
    fn rotation_axis(rng: &mut Rng) -> Vec3 {
        loop {
            let v = rng.vec3(-1.0, 1.0);
            if v.length() > 0.2 {
                return v.normalize();
            }
        }
    }
}

/// A vector of the dimension from three coordinates (z dropped in 2D).
pub fn v<V: Dim>(x: f32, y: f32, z: f32) -> V {
    V::truncate_from_3d(Vec3::new(x, y, z))
}

/// The point as the dimension sees it, in 3D (z = 0 in 2D): every oracle works in
/// 3D on flattened points, which is exact for 2D since all z are then equal.
pub fn flat<V: Dim>(p: Vec3) -> Vec3 {
    V::truncate_from_3d(p).extend_to_3d()
}

/// What the plugin's tests draw beyond the plain generator.
impl Rng {
    /// A point in `[lo, hi)` on each axis.
    pub fn vec3(&mut self, lo: f32, hi: f32) -> Vec3 {
        Vec3::new(self.range(lo, hi), self.range(lo, hi), self.range(lo, hi))
    }

    /// A vector of the dimension in `[lo, hi)` on each axis.
    pub fn vector<V: Dim>(&mut self, lo: f32, hi: f32) -> V {
        V::truncate_from_3d(self.vec3(lo, hi))
    }

    /// A point in `[lo, hi)` on each axis, flattened to the dimension (z = 0 in 2D, so 2D
    /// entities stay in one plane).
    pub fn point<V: Dim>(&mut self, lo: f32, hi: f32) -> Vec3 {
        flat::<V>(self.vec3(lo, hi))
    }
}
