//! Iterator streams (`iter float2 s<4, 4> = iter(float2(0, 0), float2(4, 10));`): computed
//! from positions, never stored. A bad declaration gives a handle whose launches fail with
//! `BR_ERROR_INVALID_PARAMATER` and the reason.

use crate::{guard, names, text};
use brook_ir::ScalarKind;
use brook_runtime::element::ElementType;
use brook_runtime::IterStream;
use std::ffi::c_char;

/// An iterator stream handle.
pub struct BrkIter {
    pub(crate) iter: Result<IterStream, String>,
}

/// Declares an iterator of the float type `type_name` (`"float2"`) with `rank` dimensions
/// `dims` (x-first), from `start` to `end` (one float per component each). Never null.
///
/// # Safety
/// `type_name` is null or a C string; `dims` points at `rank` values; `start` and `end` point
/// at the type's number of floats.
#[no_mangle]
pub unsafe extern "C" fn brk_iter_new(
    type_name: *const c_char,
    rank: u32,
    dims: *const u32,
    start: *const f32,
    end: *const f32,
) -> *mut BrkIter {
    guard(std::ptr::null_mut(), || {
        // SAFETY: as documented.
        let iter = unsafe { make(type_name, rank, dims, start, end) };
        Box::into_raw(Box::new(BrkIter { iter }))
    })
}

/// # Safety
/// As [`brk_iter_new`].
unsafe fn make(
    type_name: *const c_char,
    rank: u32,
    dims: *const u32,
    start: *const f32,
    end: *const f32,
) -> Result<IterStream, String> {
    // SAFETY: as documented.
    let name = unsafe { text(type_name) }.unwrap_or("");
    let width = match names::element_type(name) {
        Some(ElementType::Value(v)) if v.kind == ScalarKind::F32 => usize::from(v.width),
        _ => {
            return Err(format!(
                "Iterator Stream: `{name}` is not float, float2, float3 or float4"
            ))
        }
    };
    if dims.is_null() || start.is_null() || end.is_null() || !(1..=4).contains(&rank) {
        return Err(format!(
            "Iterator Stream: 1 to 4 dimensions and a start and an end are needed (rank {rank})"
        ));
    }
    // SAFETY: `rank` dimensions and `width` floats each, as documented.
    let (dims, start, end) = unsafe {
        (
            std::slice::from_raw_parts(dims, rank as usize),
            std::slice::from_raw_parts(start, width),
            std::slice::from_raw_parts(end, width),
        )
    };
    let slowest_first: Vec<usize> = dims.iter().rev().map(|&d| d as usize).collect();
    IterStream::new(&slowest_first, start, end).map_err(|e| e.to_string())
}

/// Another handle to the same iterator.
///
/// # Safety
/// `iter` is null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn brk_iter_share(iter: *const BrkIter) -> *mut BrkIter {
    guard(std::ptr::null_mut(), || {
        // SAFETY: null or a live handle.
        let copy = match unsafe { iter.as_ref() } {
            Some(i) => i.iter.clone(),
            None => Err("Iterator Stream: no iterator".into()),
        };
        Box::into_raw(Box::new(BrkIter { iter: copy }))
    })
}

/// Releases an iterator handle.
///
/// # Safety
/// `iter` is null or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn brk_iter_free(iter: *mut BrkIter) {
    if !iter.is_null() {
        // SAFETY: a live handle given up by the caller.
        guard((), || drop(unsafe { Box::from_raw(iter) }));
    }
}
