//! Support code for rudder's runnable examples; each example's logic lives here so a test can run it.

pub mod capacity_weights;
pub mod cpu_clock;
pub mod e2e;
pub mod e2e_handshake;
pub mod grpc_greeter;
pub mod tower_layers;
