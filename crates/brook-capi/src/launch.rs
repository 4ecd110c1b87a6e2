//! Kernel launches.

use crate::iter::BrkIter;
use crate::program::BrkProgram;
use crate::stream::BrkStream;
use crate::{guard, names, text};
use brook_ir::SourceParam;
use brook_runtime::{BError, Constant, LaunchError, LaunchProblem, RawStream};
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
/// streams (and printed), and its text is `brk_program_message`.
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
    // SAFETY: as documented; no call site.
    unsafe { brk_launch_at(program, kernel, args, count, offset, size, std::ptr::null()) }
}

/// [`brk_launch`] with the place the program called the kernel (`"sum.br:33"`, or null), which
/// its error messages name.
///
/// # Safety
/// As [`brk_launch`]; `call_site` is null or a C string.
#[no_mangle]
pub unsafe extern "C" fn brk_launch_at(
    program: *const BrkProgram,
    kernel: *const c_char,
    args: *const BrkArg,
    count: usize,
    offset: *const u32,
    size: *const u32,
    call_site: *const c_char,
) -> c_int {
    guard(BError::Kernel as c_int, || {
        // SAFETY: null or a live handle.
        let Some(program) = (unsafe { program.as_ref() }) else {
            return BError::InvalidParameter as c_int;
        };
        // SAFETY: as documented.
        let site = unsafe { text(call_site) };
        // SAFETY: as documented.
        let result = unsafe { launch(program, kernel, args, count, offset, size, site) };
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
    call_site: Option<&str>,
) -> Result<(), (BError, String)> {
    let invalid = |m: String| (BError::InvalidParameter, m);
    // Refused before the kernel (and so its outputs) is known: printed, as nothing else
    // records it (the C++ API then marks the outputs it knows).
    let unknown = |m: String| {
        brook_runtime::log::append(&format!("error: {}: {m}", BError::InvalidParameter));
        invalid(m)
    };
    // SAFETY: as documented.
    let name = unsafe { text(kernel) }.ok_or_else(|| unknown("no kernel name".into()))?;
    let mut kernel = program
        .program
        .kernel(name)
        .map_err(|e| unknown(e.to_string()))?;
    if let Some(site) = call_site {
        kernel = kernel.with_call_site(site);
    }
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
    // Each stream is taken out of its handle first: a vout's handle gets a new stream.
    let mut streams: Vec<Option<RawStream>> = Vec::with_capacity(given.len());
    for (i, arg) in given.iter().enumerate() {
        // SAFETY: as documented.
        match unsafe { stream_of(arg) } {
            Ok(stream) => streams.push(stream),
            Err(problem) => return Err(refuse(&kernel, given, i, problem)),
        }
    }
    let sources = brook_ir::source_params(kernel.ir());
    let is_vout = |i: usize| matches!(sources.get(i), Some(SourceParam::Vout(_)));
    let launched = {
        let mut converted = Vec::with_capacity(given.len());
        for (i, (arg, stream)) in given.iter().zip(streams.iter_mut()).enumerate() {
            converted.push(match stream.as_mut() {
                Some(stream) if is_vout(i) => brook::Arg::Vout(RefCell::new(stream)),
                Some(stream) => brook::Arg::Stream(&*stream),
                // SAFETY: as documented.
                None => match unsafe { convert(arg) } {
                    Ok(a) => a,
                    Err(problem) => return Err(refuse(&kernel, given, i, problem)),
                },
            });
        }
        kernel.launch(&converted)
    };
    launched.map_err(|e| (error_code(&e), e.to_string()))?;
    for (i, (arg, stream)) in given.iter().zip(streams).enumerate() {
        // SAFETY: null or a live handle, as documented.
        if let (true, Some(handle), Some(stream)) =
            (is_vout(i), unsafe { arg.stream.as_ref() }, stream)
        {
            handle.replace(stream);
        }
    }
    Ok(())
}

/// Why one C argument cannot be passed.
enum ArgProblem {
    /// A stream handle whose declaration failed.
    NotCreated(String),
    Invalid(String),
}

/// Refuses a launch whose argument `index` cannot be passed: the error goes on every output
/// stream of the launch (so nothing reads stale results silently) and is printed once.
fn refuse(
    kernel: &brook::Kernel,
    given: &[BrkArg],
    index: usize,
    problem: ArgProblem,
) -> (BError, String) {
    let params = brook_ir::source_params(kernel.ir());
    let arg = brook_runtime::ArgRef {
        position: index + 1,
        name: params
            .get(index)
            .map_or_else(String::new, |p| p.name().to_string()),
    };
    let problem = match problem {
        ArgProblem::NotCreated(reason) => LaunchProblem::NotCreated { arg, reason },
        ArgProblem::Invalid(why) => LaunchProblem::ArgumentKind {
            arg,
            expected: "a valid argument".into(),
            found: why,
        },
    };
    let error = LaunchError {
        kernel: kernel.name().to_string(),
        call_site: kernel.call_site().map(str::to_string),
        problem,
    };
    let (code, message) = (error.code(), error.to_string());
    let mut recorded = false;
    for (param, arg) in params.iter().zip(given) {
        let written = match param {
            SourceParam::Param(_, p) => p.role.is_written(),
            SourceParam::Vout(_) => true,
        };
        if !written || arg.kind != BRK_ARG_STREAM {
            continue;
        }
        // SAFETY: null or a live handle, as `brk_launch` documents.
        if let Some(stream) = unsafe { arg.stream.as_ref() } {
            stream.fail(code, &message);
            recorded = true;
        }
    }
    if !recorded {
        brook_runtime::log::append(&format!("error: {code}: {message}"));
    }
    (code, message)
}

/// The stream a C stream argument's handle holds now (`None` for other kinds).
///
/// # Safety
/// As [`brk_launch`].
unsafe fn stream_of(arg: &BrkArg) -> Result<Option<RawStream>, ArgProblem> {
    if arg.kind != BRK_ARG_STREAM {
        return Ok(None);
    }
    // SAFETY: null or a live handle.
    let Some(stream) = (unsafe { arg.stream.as_ref() }) else {
        return Err(ArgProblem::Invalid("a null stream".into()));
    };
    match stream.raw() {
        Some(raw) => Ok(Some(raw)),
        None => Err(ArgProblem::NotCreated(stream.failure_reason())),
    }
}

/// One C argument other than a stream as a Rust API argument.
///
/// # Safety
/// As [`brk_launch`].
unsafe fn convert(arg: &BrkArg) -> Result<brook::Arg<'_>, ArgProblem> {
    let invalid = |m: String| ArgProblem::Invalid(m);
    if arg.kind == BRK_ARG_ITERATOR {
        // SAFETY: null or a live handle.
        return match unsafe { arg.iter.as_ref() }.map(|i| &i.iter) {
            Some(Ok(iter)) => Ok(brook::Arg::Iterator(iter)),
            Some(Err(why)) => Err(ArgProblem::NotCreated(why.clone())),
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
