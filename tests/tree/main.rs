//! The dynamic tree without the plugin (Bevy-free: these tests run without default
//! features too), each against an independent oracle: random operations through the
//! kit's model of the tree (`tree`, with `tests/kit/tree_model.rs`), the tree's machinery
//! (`tree_internals`: parallel pairs, layout, refit, memory, marks), the tree's casts
//! (`tree_casts`), layers (`tree_layers`), no allocation in the steady state
//! (`steady_state`) and no thread of the crate's own without the `parallel` feature
//! (`no_threads`). The generator, the scenes and the `f64` oracles are the kit's
//! (`tests/kit`).

#[path = "../kit/mod.rs"]
mod kit;

mod no_threads;
mod steady_state;
mod tree;
mod tree_casts;
mod tree_internals;
mod tree_layers;
