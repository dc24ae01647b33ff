//! Headless tests of the whole collision pipeline, in 2D and 3D, each against an
//! independent oracle: random scenes against brute force over many ticks, tunnelling,
//! the lifecycle of colliders (despawn, removal, `Disabled`, layers), schedules, observers,
//! determinism, spatial queries and bad input.
//!
//! Every app records the message stream with two collectors sharing one cursor: one just
//! before the pipeline (ends caused by despawns and removals since the last tick) and one
//! just after it (this tick's starts, then ends), so the recorded order is the order in
//! which the messages were written. After every tick the collector also checks the tree
//! (`validate`) and, where the scene allows it, compares the touching pairs with brute
//! force over the world. [`finish`] then checks that every `CollisionStarted` has exactly
//! one `CollisionEnded` and that the open pairs after each tick are the touching ones, and
//! the same of the entity events that global observers saw (per entity, each partner's
//! starts and ends alternate).
//!
//! Messages of the two types carry no common order, so within one collector run the
//! recorder lists the starts before the ends; the entity events are checked in the order
//! they were triggered.
//!
//! Where things are: `harness` (the dimensions, random numbers, the test app and its
//! recorder, random scenes, helpers several modules share) and `oracle` (world shapes,
//! brute-force pairs, the swept first contact and its normals) are shared; each other
//! module holds the tests of one concern: `scenes`, `tunnelling`, `lifecycle`, `churn`,
//! `schedules` (and hierarchy), `observers`, `queries`, `bad_input`, `reliability`, `idle`.
//! The spatial queries' `f64` oracle is `tests/common/oracle.rs` (`exact`).
#![cfg(feature = "plugin")]

use std::collections::{BTreeMap, BTreeSet};
use std::marker::PhantomData;
use std::time::Duration;

use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::message::MessageCursor;
use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy::ecs::system::SystemState;
use bevy::prelude::*;
use bevy::reflect::{FromReflect, GetTypeRegistration, TypePath, Typed};
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::Vector;
use bevy_aabb_tree::prelude::*;

#[path = "../common/rng.rs"]
mod rng;
use rng::Rng;

#[path = "../common/oracle.rs"]
mod exact;

/// Every test runs in both dimensions: `both_dims!(name, ..)` in a module turns the
/// generic `name::<V>()` into the tests `name::d2` and `name::d3`.
macro_rules! both_dims {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[test]
                fn d2() {
                    super::$name::<bevy::math::Vec2>();
                }
                #[test]
                fn d3() {
                    super::$name::<bevy::math::Vec3>();
                }
            }
        )*
    };
}

mod bad_input;
mod capsules;
mod characters;
mod churn;
mod first_tick;
mod harness;
mod idle;
mod lifecycle;
mod model;
mod observers;
mod oracle;
mod pausing;
mod queries;
mod reliability;
mod scenes;
mod schedules;
mod tunnelling;

use harness::*;
use oracle::*;
