//! Checking that Brook gives the same answer everywhere.
//!
//! - [`case`]: the conformance case format (a program, runs with their arguments, expected
//!   values), read and written.
//! - [`exec`]: a case run on every device and judged: against its expected values, and off the
//!   interpreter against the interpreter's bytes.
//! - [`fuzz`]: the differential fuzzer: random well-typed kernels with their inputs, deterministic
//!   from a seed, judged like conformance cases; a failing kernel is minimised and written as a
//!   conformance case. The `brook-fuzz` binary drives it.

pub mod case;
pub mod exec;
pub mod fuzz;
