//! `cargo run -p rudder-examples --example tower_layers`: see `tower_layers.rs`.

use std::time::Duration;

#[tokio::main]
async fn main() {
    let outcome = rudder_examples::tower_layers::run(20, Duration::from_millis(20)).await;
    println!("{outcome:?}");
}
