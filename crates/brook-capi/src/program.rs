//! Brook programs (a `.br` file's kernels) behind an opaque handle.

use crate::{guard, text};
use std::ffi::{c_char, c_int, CString};
use std::sync::Mutex;

/// A compiled program, and the message of its last failed launch.
pub struct BrkProgram {
    pub(crate) program: brook::Program,
    pub(crate) message: Mutex<CString>,
}

impl BrkProgram {
    /// Keeps `message` for [`brk_program_message`].
    pub(crate) fn set_message(&self, message: &str) {
        let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
        *self.message.lock().unwrap_or_else(|p| p.into_inner()) = text;
    }
}

/// Compiles the Brook source `source` (named `file` in messages); `relaxed` is `brcc -a`.
/// On failure returns null and, when `error` is not null, stores the diagnostics there (free
/// them with [`brk_string_free`]).
///
/// # Safety
/// `file` and `source` are null or C strings; `error` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn brk_program_new(
    file: *const c_char,
    source: *const c_char,
    relaxed: c_int,
    error: *mut *mut c_char,
) -> *mut BrkProgram {
    let flags = if relaxed == 0 { c"" } else { c"-a" };
    // SAFETY: as documented; `flags` is a C string.
    unsafe { brk_program_new_flags(file, source, flags.as_ptr(), error) }
}

/// Compiles the Brook source `source` (named `file` in messages) with the brcc flags that
/// change its meaning (`flags`: `-a -c -pp -g -D NAME[=value]`, space separated; null is
/// none), so a program built by brcc runs the kernels brcc checked. On failure returns null
/// and, when `error` is not null, stores the message there (free it with [`brk_string_free`]).
///
/// # Safety
/// `file`, `source` and `flags` are null or C strings; `error` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn brk_program_new_flags(
    file: *const c_char,
    source: *const c_char,
    flags: *const c_char,
    error: *mut *mut c_char,
) -> *mut BrkProgram {
    // SAFETY: `error` is null or writable, as documented.
    let fail = |message: String| unsafe { failed(error, &message) };
    guard(std::ptr::null_mut(), || {
        // SAFETY: as documented.
        let (file, source, flags) = unsafe {
            (
                text(file).unwrap_or("program.br"),
                text(source),
                text(flags).unwrap_or(""),
            )
        };
        let Some(source) = source else {
            return fail("brk_program_new: no source text (null or not UTF-8)".into());
        };
        let compiled = brook::CompileOptions::from_flags(flags)
            .and_then(|options| brook::Program::compile(file, source, &options));
        match compiled {
            Ok(program) => Box::into_raw(Box::new(BrkProgram {
                program,
                message: Mutex::new(CString::default()),
            })),
            Err(e) => fail(e.to_string()),
        }
    })
}

/// Stores `message` in `*error` (when `error` is not null) for the caller to free with
/// [`brk_string_free`], and returns the null program a failed compilation gives.
///
/// # Safety
/// `error` is null or writable.
pub(crate) unsafe fn failed(error: *mut *mut c_char, message: &str) -> *mut BrkProgram {
    if !error.is_null() {
        let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
        // SAFETY: the caller passes a writable pointer.
        unsafe { *error = text.into_raw() };
    }
    std::ptr::null_mut()
}

/// Releases a program.
///
/// # Safety
/// `program` is null or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn brk_program_free(program: *mut BrkProgram) {
    if !program.is_null() {
        // SAFETY: a live handle given up by the caller.
        guard((), || drop(unsafe { Box::from_raw(program) }));
    }
}

/// The message of the program's last failed launch ("" if none), valid until the next launch.
///
/// # Safety
/// `program` is a live handle.
#[no_mangle]
pub unsafe extern "C" fn brk_program_message(program: *const BrkProgram) -> *const c_char {
    guard(c"".as_ptr(), || {
        // SAFETY: null or a live handle.
        let Some(p) = (unsafe { program.as_ref() }) else {
            return c"no program (it did not compile)".as_ptr();
        };
        p.message.lock().unwrap_or_else(|e| e.into_inner()).as_ptr()
    })
}

/// 1 when the program defines a kernel named `kernel` (generated code uses it to find the
/// program of a kernel declared in one `.br` file and defined in another), else 0.
///
/// # Safety
/// `program` is null or a live handle; `kernel` is null or a C string.
#[no_mangle]
pub unsafe extern "C" fn brk_program_has_kernel(
    program: *const BrkProgram,
    kernel: *const c_char,
) -> c_int {
    guard(0, || {
        // SAFETY: null or a live handle; null or a C string.
        let (program, kernel) = unsafe { (program.as_ref(), text(kernel)) };
        match (program, kernel) {
            (Some(p), Some(name)) => c_int::from(p.program.kernel(name).is_ok()),
            _ => 0,
        }
    })
}

/// Frees a string this library returned for the caller to own.
///
/// # Safety
/// `text` is null or came from this library, and is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn brk_string_free(text: *mut c_char) {
    if !text.is_null() {
        // SAFETY: made by `CString::into_raw` here.
        drop(unsafe { CString::from_raw(text) });
    }
}
