//! Kernel launches.

use crate::iter::BrkIter;
use crate::program::BrkProgram;
use crate::stream::BrkStream;
use crate::{guard, names, text};
use brook_runtime::{BError, Constant};
use std::cell::RefCell;
use std::ffi::{c_char, c_int};

/// An argument is a stream.
pub const BRK_ARG_STREAM: u32 = 0;
/// An argument is a value (`float`, `int4`, ...): `type_name` and `data`.
pub const BRK_ARG_VALUE: u32 = 1;
/// A reduction into a host variable: `type_name` and `data` (written when the launch returns).
pub const BRK_ARG_HOST_TARGET: u32 = 2;

/// An argument is an iterator stream: `iter`.
pub const BRK_ARG_ITERATOR: u32 = 3;

/// One launch argument.
#[repr(C)]
pub struct BrkArg {
    pub kind: u32,
    pub stream: *const BrkStream,
    pub type_name: *const c_char,
    pub data: *mut u8,
    pub iter: *const BrkIter,
}

/// Launches kernel `kernel` of `program` with `count` arguments in parameter order; `offset`
/// and `size` (four values each, x-first, or null) are Brook+ `domainOffset`/`domainSize`.
/// Returns `BR_NO_ERROR` (0), or the error's code: the error is also recorded on the output
/// streams, and its text is `brk_program_message`.
///
/// # Safety
/// `program` is a live handle, `kernel` a C string, `args` points at `count` arguments whose
/// streams are live handles and whose data points at a value of the named type; `offset` and
/// `size` are null or point at four values.
#[no_mangle]
pub unsafe extern "C" fn brk_launch(
    program: *const BrkProgram,
    kernel: *const c_char,
    args: *const BrkArg,
    count: usize,
    offset: *const u32,
    size: *const u32,
) -> c_int {
    guard(BError::Kernel as c_int, || {
        // SAFETY: null or a live handle.
        let Some(program) = (unsafe { program.as_ref() }) else {
            return BError::InvalidParameter as c_int;
        };
        // SAFETY: as documented.
        let result = unsafe { launch(program, kernel, args, count, offset, size) };
        match result {
            Ok(()) => {
                program.set_message("");
                BError::NoError as c_int
            }
            Err((code, message)) => {
                program.set_message(&message);
                code as c_int
            }
        }
    })
}

/// # Safety
/// As [`brk_launch`].
unsafe fn launch(
    program: &BrkProgram,
    kernel: *const c_char,
    args: *const BrkArg,
    count: usize,
    offset: *const u32,
    size: *const u32,
) -> Result<(), (BError, String)> {
    let invalid = |m: String| (BError::InvalidParameter, m);
    // SAFETY: as documented.
    let name = unsafe { text(kernel) }.ok_or_else(|| invalid("no kernel name".into()))?;
    let mut kernel = program
        .program
        .kernel(name)
        .map_err(|e| invalid(e.to_string()))?;
    if !offset.is_null() || !size.is_null() {
        let four = |p: *const u32| {
            let mut out = [0usize; 4];
            if !p.is_null() {
                // SAFETY: four values, as documented.
                let v = unsafe { std::slice::from_raw_parts(p, 4) };
                for (o, &x) in out.iter_mut().zip(v) {
                    *o = x as usize;
                }
            }
            out
        };
        kernel = kernel.with_domain_x_first(four(offset), four(size));
    }
    let given: &[BrkArg] = if count == 0 {
        &[]
    } else if args.is_null() {
        let message = format!(
            "kernel `{name}`: {count} argument(s) announced but the argument array is null"
        );
        brook_runtime::log::append(&format!("error: {}: {message}", BError::InvalidParameter));
        return Err(invalid(message));
    } else {
        // SAFETY: `count` arguments, as documented.
        unsafe { std::slice::from_raw_parts(args, count) }
    };
    let mut converted = Vec::with_capacity(given.len());
    for (i, arg) in given.iter().enumerate() {
        // SAFETY: as documented.
        converted.push(unsafe { convert(i, arg) }?);
    }
    kernel
        .launch(&converted)
        .map(|_| ())
        .map_err(|e| (error_code(&e), e.to_string()))
}

/// One C argument as a Rust API argument.
///
/// # Safety
/// As [`brk_launch`].
unsafe fn convert(index: usize, arg: &BrkArg) -> Result<brook::Arg<'_>, (BError, String)> {
    let invalid = |m: String| (BError::InvalidParameter, format!("argument {index}: {m}"));
    if arg.kind == BRK_ARG_STREAM {
        if arg.stream.is_null() {
            return Err(invalid("a null stream".into()));
        }
        // SAFETY: a live handle (not null: checked above).
        let stream = unsafe { &*arg.stream };
        return stream
            .raw()
            .map(brook::Arg::Stream)
            .ok_or_else(|| invalid("the stream was not created".into()));
    }
    if arg.kind == BRK_ARG_ITERATOR {
        // SAFETY: null or a live handle.
        return match unsafe { arg.iter.as_ref() }.map(|i| &i.iter) {
            Some(Ok(iter)) => Ok(brook::Arg::Iterator(iter)),
            Some(Err(why)) => Err(invalid(why.clone())),
            None => Err(invalid("a null iterator".into())),
        };
    }
    // SAFETY: as documented.
    let type_name = unsafe { text(arg.type_name) }.unwrap_or("");
    let element = names::element_type(type_name)
        .ok_or_else(|| invalid(format!("unknown type `{type_name}`")))?;
    if arg.data.is_null() {
        return Err(invalid("a null value pointer".into()));
    }
    // SAFETY: `data` points at a value of the named type.
    let bytes = unsafe { std::slice::from_raw_parts_mut(arg.data, element.size()) };
    match arg.kind {
        BRK_ARG_VALUE => Ok(brook::Arg::Constant(Constant {
            element,
            bytes: bytes.to_vec(),
        })),
        BRK_ARG_HOST_TARGET => Ok(brook::Arg::HostValue {
            bytes: RefCell::new(bytes),
            element,
        }),
        other => Err(invalid(format!("unknown argument kind {other}"))),
    }
}

/// The Brook+ code of a launch error.
fn error_code(error: &brook::Error) -> BError {
    match error {
        brook::Error::Launch(e) => e.code(),
        brook::Error::Stream { code, .. } => *code,
        brook::Error::Runtime(e) => e.code(),
        _ => BError::InvalidParameter,
    }
}
