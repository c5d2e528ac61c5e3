//! rudder-registry (being built).
