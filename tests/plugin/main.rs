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
//! Where things are: the kit (`tests/kit`: the dimensions, random numbers, the `f64`
//! query oracle `exact`), `harness` (the test app and its recorder, random scenes,
//! helpers several modules share) and `oracle` (world shapes,
//! brute-force pairs, the swept first contact and its normals) are shared; each other
//! module holds the tests of one concern: `scenes`, `tunnelling`, `lifecycle`, `churn`,
//! `schedules` (and hierarchy), `observers`, `queries`, `bad_input`, `reliability`, `idle`,
//! `capsules`, `rounded_boxes` and `shape_lifecycle` (the newer shapes crossed with
//! every contact state and lifecycle change).
//! Modules with apps and oracles of their own: `gameplay`, `static_levels` (with `static_cases`), `soak` (its
//! long runs are `#[ignore]`d: `scripts/soak.sh`), `plugin_smoke`, and `plugin_parallel` and `warnings`, which set
//! up process-wide state and so run each test in a process of its own (`kit::process`).
#![cfg(feature = "plugin")]

use std::collections::{BTreeMap, BTreeSet};
use std::marker::PhantomData;
use std::time::Duration;

use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::message::MessageCursor;
use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy::ecs::system::SystemState;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::prelude::*;

#[path = "../kit/mod.rs"]
mod kit;
use kit::dim::*;
use kit::oracle as exact;
use kit::rng::Rng;

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
mod character_squeeze;
mod characters;
mod churn;
mod first_tick;
mod gameplay;
mod harness;
mod idle;
mod lifecycle;
mod model;
mod observers;
mod oracle;
mod pausing;
mod plugin_parallel;
mod plugin_smoke;
mod queries;
mod reliability;
mod rounded_boxes;
mod scenes;
mod schedules;
mod shape_lifecycle;
mod soak;
mod static_cases;
mod static_levels;
mod tunnelling;
mod warnings;

use harness::*;
use oracle::*;
