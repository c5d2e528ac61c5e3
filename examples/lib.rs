//! Support code shared by the examples and their tests.
