#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod geometry;
pub mod tree;
mod vector;

pub use geometry::{Ball, BoundingBox, Ray, SweepHit};
pub use glam::{Vec2, Vec3};
pub use tree::{DynamicTree, NodeId, ProxyId, RayHit, TreeError, TreeStats};
pub use vector::Vector;
