//! `examples/stress.rs` built in this project, so that measuring it does not need a second
//! Bevy build: `cargo run --release --bin stress -- N [2d|3d] [fast|slow]`. Note that this
//! project enables Bevy's `multi_threaded` feature, which the root crate's example does not.

#[path = "../../../examples/stress.rs"]
mod stress;

fn main() {
    stress::main();
}
