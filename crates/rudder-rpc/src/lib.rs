//! rudder-rpc (being built).
