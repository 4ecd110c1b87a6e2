//! Scans: `streamScan` and `streamScanExclusive` of `brook.hpp`.

use crate::program::BrkProgram;
use crate::stream::BrkStream;
use crate::{guard, names, text};
use brook_runtime::{BError, Constant, ScanRequest};
use std::ffi::{c_char, c_int};

/// A `brk_scan` flag: the scan is exclusive, starting from the value `init_type`/`init_data`.
pub const BRK_SCAN_EXCLUSIVE: u32 = 1;
/// A `brk_scan` flag: the scan runs over the whole stream in row-major order (else along the
/// last axis, each row on its own).
pub const BRK_SCAN_WHOLE_STREAM: u32 = 2;

/// Writes the prefixes of `input` under the operator of reduce kernel `kernel` of `program`
/// into `output` (of the input's shape), as `flags` say. Returns `BR_NO_ERROR` (0) or the
/// error's code; the error is also recorded on `output` (and printed).
///
/// # Safety
/// Stream pointers are null or live handles; `program` null or live; `kernel` and
/// `init_type` null or C strings; `init_data` null or pointing at a value of `init_type`.
#[no_mangle]
pub unsafe extern "C" fn brk_scan(
    input: *const BrkStream,
    output: *const BrkStream,
    program: *const BrkProgram,
    kernel: *const c_char,
    flags: u32,
    init_type: *const c_char,
    init_data: *const u8,
) -> c_int {
    guard(BError::InvalidParameter as c_int, || {
        // SAFETY: as documented.
        let result = unsafe { scan(input, output, program, kernel, flags, init_type, init_data) };
        match result {
            Ok(code) => code as c_int,
            // A failure before the launch: the output gets it (the stream keeps its first
            // error; every error is printed).
            Err((code, message)) => {
                // SAFETY: null or a live handle.
                match unsafe { output.as_ref() }.and_then(BrkStream::raw) {
                    Some(raw) => raw.record_error(code, &message),
                    None => brook_runtime::log::append(&format!("error: {code}: {message}")),
                }
                code as c_int
            }
        }
    })
}

type Failure = (BError, String);

/// The launch's code (a refused launch has recorded its error on the output), or a failure
/// found before it.
///
/// # Safety
/// As [`brk_scan`].
unsafe fn scan(
    input: *const BrkStream,
    output: *const BrkStream,
    program: *const BrkProgram,
    kernel: *const c_char,
    flags: u32,
    init_type: *const c_char,
    init_data: *const u8,
) -> Result<BError, Failure> {
    const OPERATION: &str = "streamScan";
    let invalid = |m: String| (BError::InvalidParameter, format!("{OPERATION}: {m}"));
    let stream = |handle: *const BrkStream, what: &str| {
        // SAFETY: null or live, as documented.
        unsafe { handle.as_ref() }
            .and_then(BrkStream::raw)
            .ok_or_else(|| invalid(format!("the {what} stream was not created")))
    };
    let (input, output) = (stream(input, "input")?, stream(output, "output")?);
    // SAFETY: null or live, as documented.
    let program = unsafe { program.as_ref() }
        .ok_or_else(|| invalid("the kernel's program did not compile".into()))?;
    // SAFETY: as documented.
    let name = unsafe { text(kernel) }.ok_or_else(|| invalid("no kernel name".into()))?;
    let kernel = program
        .program
        .kernel(name)
        .map_err(|e| invalid(e.to_string()))?;
    let mut request = if flags & BRK_SCAN_EXCLUSIVE != 0 {
        // SAFETY: as documented.
        let type_name = unsafe { text(init_type) }.unwrap_or("");
        let element = names::element_type(type_name).ok_or_else(|| {
            invalid(format!(
                "an exclusive scan's initial value has an unknown type `{type_name}`"
            ))
        })?;
        if init_data.is_null() {
            return Err(invalid("an exclusive scan's initial value is null".into()));
        }
        // SAFETY: `init_data` points at a value of the named type.
        let bytes = unsafe { std::slice::from_raw_parts(init_data, element.size()) }.to_vec();
        ScanRequest::exclusive(Constant { element, bytes })
    } else {
        ScanRequest::inclusive()
    };
    if flags & BRK_SCAN_WHOLE_STREAM != 0 {
        request = request.whole_stream();
    }
    let args = [brook::Arg::Stream(&input), brook::Arg::Stream(&output)];
    match kernel.with_scan(request).launch(&args) {
        Ok(_) => Ok(BError::NoError),
        Err(brook::Error::Launch(e)) => Ok(e.code()),
        Err(e) => Err((BError::InvalidParameter, e.to_string())),
    }
}
