//! rudder-cluster (being built).
