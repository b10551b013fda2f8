//! Unit tests of the simulator.
