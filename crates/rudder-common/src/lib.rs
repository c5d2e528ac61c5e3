//! rudder-common (being built).
