//! `streamScatterOp` and `streamGatherOp` (seed 000) for C++: BrookGPU's built-in operators
//! (`STREAM_SCATTER_ASSIGN`, `_ADD`, `_MUL`, `STREAM_GATHER_FETCH`, `_INC`) or a kernel of the
//! program as the operator. Errors are recorded on the array's (scatter) or the result's
//! (gather) stream and returned as a `BError` code.

use crate::program::BrkProgram;
use crate::stream::BrkStream;
use crate::{guard, text};
use brook_runtime::{ops, BError, RawStream};
use std::ffi::{c_char, c_int};

/// The operator codes of `brk_scatter_op`: assign, add, multiply, a reduce kernel.
pub const BRK_SCATTER_ASSIGN: u32 = 0;
pub const BRK_SCATTER_ADD: u32 = 1;
pub const BRK_SCATTER_MUL: u32 = 2;
/// The operator codes of `brk_gather_op`: fetch, fetch and increment, a map kernel.
pub const BRK_GATHER_FETCH: u32 = 0;
pub const BRK_GATHER_INC: u32 = 1;
/// Either: the kernel `kernel` of `program` is the operator.
pub const BRK_OP_KERNEL: u32 = 3;

type Failure = (BError, String);

/// The runtime streams behind three handles.
///
/// # Safety
/// Each pointer is null or a live handle.
unsafe fn streams(
    handles: [*const BrkStream; 3],
    operation: &str,
) -> Result<[RawStream; 3], Failure> {
    let mut raws = Vec::with_capacity(3);
    for (handle, what) in handles.into_iter().zip(["data", "index", "array"]) {
        // SAFETY: null or live, as documented.
        let raw = unsafe { handle.as_ref() }.and_then(BrkStream::raw);
        raws.push(raw.ok_or_else(|| {
            (
                BError::InvalidParameter,
                format!("{operation}: the {what} stream was not created"),
            )
        })?);
    }
    let [data, index, array]: [RawStream; 3] = raws.try_into().map_err(|_| {
        (
            BError::InvalidParameter,
            format!("{operation}: three streams"),
        )
    })?;
    Ok([data, index, array])
}

/// The kernel operator `kernel` of `program`.
///
/// # Safety
/// `program` is null or a live handle; `kernel` null or a C string.
unsafe fn kernel_op(
    program: *const BrkProgram,
    kernel: *const c_char,
    operation: &str,
) -> Result<brook::Kernel, Failure> {
    let invalid = |m: String| (BError::InvalidParameter, m);
    // SAFETY: as documented.
    let program = unsafe { program.as_ref() }
        .ok_or_else(|| invalid(format!("{operation}: the kernel's program did not compile")))?;
    // SAFETY: as documented.
    let name =
        unsafe { text(kernel) }.ok_or_else(|| invalid(format!("{operation}: no kernel name")))?;
    program
        .program
        .kernel(name)
        .map_err(|e| invalid(format!("{operation}: {e}")))
}

/// Records a failure found before the operation ran on `stream` (printed on stderr, as every
/// runtime error is; when the stream itself is missing, printed only) and returns its code.
///
/// # Safety
/// `stream` is null or a live handle.
unsafe fn fail(stream: *const BrkStream, (code, message): Failure) -> c_int {
    // SAFETY: as documented.
    match unsafe { stream.as_ref() }.and_then(BrkStream::raw) {
        Some(raw) => raw.record_error(code, &message),
        None => brook_runtime::log::append(&message),
    }
    code as c_int
}

/// `streamScatterOp(s, index, array, op)`: `array[index[i]] = op(s[i], array[index[i]])` in
/// order. `op` is a `BRK_SCATTER_*` code, or `BRK_OP_KERNEL` with a reduce kernel of `program`.
///
/// # Safety
/// Stream pointers are null or live handles; `program` null or live; `kernel` null or a C
/// string.
#[no_mangle]
pub unsafe extern "C" fn brk_scatter_op(
    s: *const BrkStream,
    index: *const BrkStream,
    array: *const BrkStream,
    op: u32,
    program: *const BrkProgram,
    kernel: *const c_char,
) -> c_int {
    const OPERATION: &str = "streamScatterOp";
    guard(BError::InvalidParameter as c_int, || {
        const BUILT_IN: [u32; 3] = [BRK_SCATTER_ASSIGN, BRK_SCATTER_ADD, BRK_SCATTER_MUL];
        // SAFETY: as documented.
        let prepared =
            unsafe { prepare([s, index, array], op, &BUILT_IN, program, kernel, OPERATION) };
        let ([s, index, target], kernel) = match prepared {
            Ok(prepared) => prepared,
            // SAFETY: as documented.
            Err(failure) => return unsafe { fail(array, failure) },
        };
        let op = match (op, &kernel) {
            (_, Some(k)) => ops::ScatterOp::Reduce {
                module: k.module(),
                kernel: k.ir(),
            },
            (BRK_SCATTER_ADD, None) => ops::ScatterOp::Add,
            (BRK_SCATTER_MUL, None) => ops::ScatterOp::Mul,
            _ => ops::ScatterOp::Assign,
        };
        // The runtime records its errors on the array itself.
        code_of(ops::scatter_op(&s, &index, &target, op))
    })
}

/// `streamGatherOp(t, index, array, op)`: `t[i] = array[index[i]]`, then `op` updates that
/// array element. `op` is a `BRK_GATHER_*` code, or `BRK_OP_KERNEL` with a kernel of one input
/// and one output of `program`.
///
/// # Safety
/// As [`brk_scatter_op`].
#[no_mangle]
pub unsafe extern "C" fn brk_gather_op(
    t: *const BrkStream,
    index: *const BrkStream,
    array: *const BrkStream,
    op: u32,
    program: *const BrkProgram,
    kernel: *const c_char,
) -> c_int {
    const OPERATION: &str = "streamGatherOp";
    guard(BError::InvalidParameter as c_int, || {
        const BUILT_IN: [u32; 2] = [BRK_GATHER_FETCH, BRK_GATHER_INC];
        // SAFETY: as documented.
        let prepared =
            unsafe { prepare([t, index, array], op, &BUILT_IN, program, kernel, OPERATION) };
        let ([t_raw, index, source], kernel) = match prepared {
            Ok(prepared) => prepared,
            // SAFETY: as documented.
            Err(failure) => return unsafe { fail(t, failure) },
        };
        let op = match (op, &kernel) {
            (_, Some(k)) => ops::GatherOp::Kernel {
                module: k.module(),
                kernel: k.ir(),
            },
            (BRK_GATHER_INC, None) => ops::GatherOp::Inc,
            _ => ops::GatherOp::Fetch,
        };
        // The runtime records its errors on the result stream itself.
        code_of(ops::gather_op(&t_raw, &index, &source, op))
    })
}

/// The three streams of an operation and, for `BRK_OP_KERNEL`, its kernel; any other code
/// must be one of `built_in`.
///
/// # Safety
/// As [`brk_scatter_op`].
unsafe fn prepare(
    handles: [*const BrkStream; 3],
    op: u32,
    built_in: &[u32],
    program: *const BrkProgram,
    kernel: *const c_char,
    operation: &str,
) -> Result<([RawStream; 3], Option<brook::Kernel>), Failure> {
    // SAFETY: as documented.
    let raws = unsafe { streams(handles, operation) }?;
    let kernel = match op {
        // SAFETY: as documented.
        BRK_OP_KERNEL => Some(unsafe { kernel_op(program, kernel, operation) }?),
        _ if built_in.contains(&op) => None,
        _ => {
            return Err((
                BError::InvalidParameter,
                format!("{operation}: unknown operator code {op}"),
            ))
        }
    };
    Ok((raws, kernel))
}

/// The C ABI's code for a finished operation.
fn code_of(result: Result<(), brook_runtime::RuntimeError>) -> c_int {
    match result {
        Ok(()) => BError::NoError as c_int,
        Err(e) => e.code() as c_int,
    }
}
