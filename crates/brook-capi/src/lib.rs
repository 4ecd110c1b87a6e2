//! The C ABI of the Brook runtime: what `include/brook/brook.hpp` (the Brook+ C++ API) and the
//! C++ that `brcc` generates call. Built as a static library (`libbrook_capi.a`).
//!
//! Handles are opaque pointers owned by the caller: a program (`brk_program_*`), a stream
//! (`brk_stream_*`). Every function is total: bad input (a null pointer, an unknown type name,
//! wrong sizes) becomes a Brook+ error state (`BError` code and error log) on the stream
//! concerned, or an error code and message, never a crash; a panic inside is caught at the
//! boundary and reported the same way.
//!
//! - [`names`]: element types from their Brook names (`float4`, `uchar2`).
//! - [`program`]: compiling Brook source, messages.
//! - [`stream`]: streams (Brook+ `Stream<T>`): declare, read, write, `assign`, `domain`,
//!   `isSync`, `finish`, `error`, `errorLog`.
//! - [`device`]: devices and the calling thread's choice of them.
//! - [`iter`]: iterator streams.
//! - [`launch`]: kernel launches with stream, iterator, value and host-variable arguments.
//! - [`ops`]: `streamScatterOp` and `streamGatherOp` with built-in or kernel operators.
//! - [`mpi`]: programs over MPI ranks (the `mpi` feature): rank 0 runs `main`, the others
//!   serve their devices.

pub mod device;
pub mod iter;
pub mod launch;
pub mod loom;
pub mod mpi;
pub mod names;
pub mod ops;
pub mod program;
pub mod scan;
pub mod stream;

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body`, turning a panic into `fallback` (nothing unwinds into C).
pub(crate) fn guard<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// A C string argument as UTF-8, if it is not null.
///
/// # Safety
/// `text` must be null or point at a NUL-terminated string.
pub(crate) unsafe fn text<'a>(text: *const std::ffi::c_char) -> Option<&'a str> {
    if text.is_null() {
        return None;
    }
    // SAFETY: the caller guarantees a NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(text) }.to_str().ok()
}
