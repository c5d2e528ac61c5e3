//! Weights from a monitoring system instead of the registry: `cargo run -p rudder-examples --example custom_weight`.

use rudder_examples::capacity_weights;

fn main() {
    let (before, after) = capacity_weights::run();
    println!("equal registry weights:");
    for (address, calls) in before {
        println!("  {address} {calls}");
    }
    println!("weights from cores and free memory (4 cores / 16 cores / 16 cores but 1 GiB free):");
    for (address, calls) in after {
        println!("  {address} {calls}");
    }
}
