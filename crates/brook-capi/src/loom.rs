//! LOOM kernels (seed 004) for C and C++: a LOOM program compiled for a grid is a program
//! handle whose one kernel launches over the grid ([`brk_loom_launch`], or [`crate::launch`]
//! by its name).

use crate::launch::{brk_launch_at, BrkArg};
use crate::program::BrkProgram;
use crate::{guard, text};
use std::ffi::{c_char, c_int, CString};
use std::sync::Mutex;

/// Compiles the LOOM program `source` (named `file` in messages; imports are read beside it;
/// a null `source` reads the file `file`) for a grid of `threads` threads in blocks of
/// `block` (two values each, X then Y; 1 for Y in a 1-D grid). On failure returns null and,
/// when `error` is not null, stores every diagnostic there (free it with
/// `brk_string_free`).
///
/// # Safety
/// `file` and `source` are null or C strings; `threads` and `block` point at two values;
/// `error` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn brk_loom_program_new(
    file: *const c_char,
    source: *const c_char,
    threads: *const u32,
    block: *const u32,
    error: *mut *mut c_char,
) -> *mut BrkProgram {
    // SAFETY: `error` is null or writable, as documented.
    let fail = |message: String| unsafe { crate::program::failed(error, &message) };
    guard(std::ptr::null_mut(), || {
        if threads.is_null() || block.is_null() {
            return fail(
                "brk_loom_program_new: no grid (threads and block are two values each)".into(),
            );
        }
        // SAFETY: as documented.
        let (file, source, threads, block) = unsafe {
            (
                text(file).unwrap_or("program.loom"),
                text(source),
                std::slice::from_raw_parts(threads, 2),
                std::slice::from_raw_parts(block, 2),
            )
        };
        let grid = brook::Grid {
            threads: [threads[0], threads[1]],
            block: [block[0], block[1]],
        };
        let program = match source {
            Some(source) => brook::LoomProgram::from_source(file, source),
            None => brook::LoomProgram::from_file(file),
        };
        match program.and_then(|p| p.kernel(grid)) {
            Ok(kernel) => Box::into_raw(Box::new(BrkProgram {
                program: kernel.program().clone(),
                message: Mutex::new(CString::default()),
            })),
            Err(e) => fail(e.to_string()),
        }
    })
}

/// Launches the one kernel of a LOOM program handle with `count` arguments in parameter
/// order (streams of the declared extents for arrays, values for the rest). Returns
/// `BR_NO_ERROR` (0) or the error's code, as `brk_launch`.
///
/// # Safety
/// As `brk_launch`, without a kernel name or domain.
#[no_mangle]
pub unsafe extern "C" fn brk_loom_launch(
    program: *const BrkProgram,
    args: *const BrkArg,
    count: usize,
) -> c_int {
    guard(brook::BError::Kernel as c_int, || {
        // SAFETY: null or a live handle.
        let Some(handle) = (unsafe { program.as_ref() }) else {
            return brook::BError::InvalidParameter as c_int;
        };
        let names = handle.program.kernel_names();
        let Some(name) = names.first().and_then(|n| CString::new(n.as_str()).ok()) else {
            return brook::BError::InvalidParameter as c_int;
        };
        // SAFETY: as documented; `name` is a C string for the call.
        unsafe {
            brk_launch_at(
                program,
                name.as_ptr(),
                args,
                count,
                std::ptr::null(),
                std::ptr::null(),
                std::ptr::null(),
            )
        }
    })
}

/// Makes `text` the contents of the LOOM file `path` for this process: later
/// `brk_loom_program_new` calls (and the imports they read) find it before the disk, by
/// `path` or by its file name alone. `brcc build` embeds the `.loom` files it is given this
/// way. Returns `BR_NO_ERROR` (0), or `BR_ERROR_INVALID_PARAMETER` for a null argument.
///
/// # Safety
/// `path` and `text` are null or C strings.
#[no_mangle]
pub unsafe extern "C" fn brk_loom_embed(path: *const c_char, text: *const c_char) -> c_int {
    guard(brook::BError::InvalidParameter as c_int, || {
        // SAFETY: as documented.
        match unsafe { (crate::text(path), crate::text(text)) } {
            (Some(path), Some(text)) => {
                brook::embed_loom_file(path, text);
                brook::BError::NoError as c_int
            }
            _ => brook::BError::InvalidParameter as c_int,
        }
    })
}
