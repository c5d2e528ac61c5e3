//! Support code for rudder's runnable examples; each example's logic lives here so a test can run it.

pub mod capacity_weights;
pub mod e2e;
pub mod grpc_greeter;
pub mod tower_layers;
