//! rudder (being built).
