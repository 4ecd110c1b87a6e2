//! `streamScatterOp` and `streamGatherOp` (seed 000), as `SEMANTICS.md` defines them.
//!
//! `scatter_op(s, index, array, op)` does `array[index[i]] = op(s[i], array[index[i]])` for each
//! `i` in row-major order; `gather_op(t, index, array, op)` does `t[i] = array[index[i]]` and
//! then replaces `array[index[i]]` by `op` applied to it (fetch-and-op). A scalar index is a
//! linear offset into the array (C row-major); a vector index has one coordinate per axis, `x`
//! the fastest (`float2(column, row)`, as BrookGPU's gathers); a float rounds as
//! `(int)(x + 0.5)`; out-of-range indices are skipped. The operations run in order, one element at a time, on the host
//! (through the interpreter's [`crate::interp::combine`] and [`crate::interp::apply_map`] for
//! kernel operators), so duplicate indices give the same result on every device.

use crate::element::ElementType;
use crate::error::{BError, RuntimeError};
use crate::stream::RawStream;
use brook_ir::{Kernel, Module, ScalarKind};

/// The operator of `streamScatterOp`.
#[derive(Clone, Copy)]
pub enum ScatterOp<'a> {
    /// `STREAM_SCATTER_ASSIGN`: `array[index[i]] = s[i]`.
    Assign,
    /// `STREAM_SCATTER_ADD`: `array[index[i]] += s[i]`, component-wise.
    Add,
    /// `STREAM_SCATTER_MUL`: `array[index[i]] *= s[i]`, component-wise.
    Mul,
    /// A reduce function `r = r op a`, run with `r = array[index[i]]` and `a = s[i]`.
    Reduce {
        module: &'a Module,
        kernel: &'a Kernel,
    },
}

/// The operator of `streamGatherOp`.
#[derive(Clone, Copy)]
pub enum GatherOp<'a> {
    /// `STREAM_GATHER_FETCH`: the array is left as it is.
    Fetch,
    /// `STREAM_GATHER_INC`: each fetched array element is then incremented by one
    /// (component-wise).
    Inc,
    /// A kernel of one input and one output stream, applied to each gathered array element.
    Kernel {
        module: &'a Module,
        kernel: &'a Kernel,
    },
}

fn invalid(message: String) -> RuntimeError {
    RuntimeError::Stream {
        code: BError::InvalidParameter,
        message,
    }
}

/// The linear array offsets of an index stream (`None` where out of range). A scalar index is
/// a linear offset; a vector index gives one coordinate per axis of the array, `x` the
/// fastest axis (the column of a 2-D array), `y` the next, as kernel gathers read them; extra
/// components are ignored, and a coordinate out of its axis skips the element.
fn offsets(
    index: &RawStream,
    array_shape: &[usize],
    operation: &str,
) -> Result<Vec<Option<usize>>, RuntimeError> {
    let ElementType::Value(ty) = index.element() else {
        return Err(invalid(format!(
            "{operation}: the index stream must hold scalars or vectors, not {}",
            index.element()
        )));
    };
    let width = usize::from(ty.width);
    let rank = array_shape.len().max(1);
    if width > 1 && width < rank {
        return Err(invalid(format!(
            "{operation}: an index of {width} components addresses at most {width} axes, but the array has {rank} ({array_shape:?}); use a scalar (linear offset) or one component per axis"
        )));
    }
    let bytes = index.contents("streamScatterOp/streamGatherOp")?;
    let size = ty.kind.size() as usize;
    let len: usize = array_shape.iter().product();
    Ok(bytes
        .chunks(size * width)
        .map(|element| {
            let coordinate = |k: usize| coordinate(ty.kind, &element[k * size..(k + 1) * size]);
            if width == 1 {
                return usize::try_from(coordinate(0)).ok().filter(|&i| i < len);
            }
            // Component k addresses axis `rank - 1 - k` (x the fastest).
            let mut offset = 0usize;
            let mut stride = 1usize;
            for k in 0..rank {
                let axis_len = array_shape[rank - 1 - k];
                let c = usize::try_from(coordinate(k))
                    .ok()
                    .filter(|&c| c < axis_len)?;
                offset += c * stride;
                stride *= axis_len;
            }
            Some(offset)
        })
        .collect())
}

/// One index component as an integer: a float rounds as `(int)(x + 0.5)`.
fn coordinate(kind: ScalarKind, b: &[u8]) -> i64 {
    let mut raw = [0u8; 8];
    raw[..b.len()].copy_from_slice(b);
    let bits = u64::from_le_bytes(raw);
    match kind {
        ScalarKind::F32 => (f32::from_bits(bits as u32) + 0.5) as i64,
        ScalarKind::F64 => (f64::from_bits(bits) + 0.5) as i64,
        ScalarKind::I8 => bits as i8 as i64,
        ScalarKind::I16 => bits as i16 as i64,
        ScalarKind::I32 => bits as i32 as i64,
        _ => bits as i64,
    }
}

fn check_same(
    a: &RawStream,
    b: &RawStream,
    what: &str,
    operation: &str,
) -> Result<(), RuntimeError> {
    if !a.element().same_layout(b.element()) {
        return Err(invalid(format!(
            "{operation}: {what} hold {} and {} elements",
            a.element(),
            b.element()
        )));
    }
    Ok(())
}

fn check_count(data: &RawStream, index: &RawStream, operation: &str) -> Result<(), RuntimeError> {
    if data.len() != index.len() {
        return Err(invalid(format!(
            "{operation}: the data stream has {} elements and the index stream {}",
            data.len(),
            index.len()
        )));
    }
    Ok(())
}

/// `streamScatterOp(s, index, array, op)`. Errors are also recorded on `array`.
pub fn scatter_op(
    s: &RawStream,
    index: &RawStream,
    array: &RawStream,
    op: ScatterOp<'_>,
) -> Result<(), RuntimeError> {
    recorded_on(array, scatter(s, index, array, op))
}

/// `result`, with its error also recorded on `stream`.
fn recorded_on(stream: &RawStream, result: Result<(), RuntimeError>) -> Result<(), RuntimeError> {
    if let Err(e) = &result {
        stream.record_error(e.code(), &e.to_string());
    }
    result
}

fn scatter(
    s: &RawStream,
    index: &RawStream,
    array: &RawStream,
    op: ScatterOp<'_>,
) -> Result<(), RuntimeError> {
    const OPERATION: &str = "streamScatterOp";
    check_same(s, array, "the data stream and the array", OPERATION)?;
    check_count(s, index, OPERATION)?;
    let offsets = offsets(index, array.shape(), OPERATION)?;
    let data = s.contents(OPERATION)?;
    let mut target = array.contents(OPERATION)?;
    let size = array.element().size();
    for (i, offset) in offsets.iter().enumerate() {
        let Some(offset) = offset else { continue };
        let incoming = &data[i * size..(i + 1) * size];
        let slot = &mut target[offset * size..(offset + 1) * size];
        let new = match op {
            ScatterOp::Assign => incoming.to_vec(),
            ScatterOp::Add => arithmetic(array.element(), slot, incoming, Arithmetic::Add)
                .map_err(|e| invalid(format!("{OPERATION} with STREAM_SCATTER_ADD: {e}")))?,
            ScatterOp::Mul => arithmetic(array.element(), slot, incoming, Arithmetic::Mul)
                .map_err(|e| invalid(format!("{OPERATION} with STREAM_SCATTER_MUL: {e}")))?,
            ScatterOp::Reduce { module, kernel } => {
                crate::interp::combine(module, kernel, slot, incoming)
                    .map_err(|e| invalid(format!("{OPERATION}: {e}")))?
            }
        };
        slot.copy_from_slice(&new);
    }
    array.read_bytes(array.element(), &target)
}

/// `streamGatherOp(t, index, array, op)`. Errors are also recorded on `t`.
pub fn gather_op(
    t: &RawStream,
    index: &RawStream,
    array: &RawStream,
    op: GatherOp<'_>,
) -> Result<(), RuntimeError> {
    recorded_on(t, gather(t, index, array, op))
}

fn gather(
    t: &RawStream,
    index: &RawStream,
    array: &RawStream,
    op: GatherOp<'_>,
) -> Result<(), RuntimeError> {
    const OPERATION: &str = "streamGatherOp";
    check_same(t, array, "the result stream and the array", OPERATION)?;
    check_count(t, index, OPERATION)?;
    let offsets = offsets(index, array.shape(), OPERATION)?;
    let mut source = array.contents(OPERATION)?;
    let mut fetched = t.contents(OPERATION)?;
    let size = array.element().size();
    for (i, offset) in offsets.iter().enumerate() {
        let Some(offset) = offset else { continue };
        let slot = &mut source[offset * size..(offset + 1) * size];
        fetched[i * size..(i + 1) * size].copy_from_slice(slot);
        let new = match op {
            GatherOp::Fetch => continue,
            GatherOp::Inc => {
                let one = one_of(array.element())
                    .map_err(|e| invalid(format!("{OPERATION} with STREAM_GATHER_INC: {e}")))?;
                arithmetic(array.element(), slot, &one, Arithmetic::Add)
                    .map_err(|e| invalid(format!("{OPERATION} with STREAM_GATHER_INC: {e}")))?
            }
            GatherOp::Kernel { module, kernel } => {
                crate::interp::apply_map(module, kernel, slot)
                    .map_err(|e| invalid(format!("{OPERATION}: {e}")))?
            }
        };
        slot.copy_from_slice(&new);
    }
    t.read_bytes(t.element(), &fetched)?;
    if !matches!(op, GatherOp::Fetch) {
        array.read_bytes(array.element(), &source)?;
    }
    Ok(())
}

/// The built-in operators' arithmetic.
#[derive(Clone, Copy)]
enum Arithmetic {
    Add,
    Mul,
}

/// `a op b` component-wise on two elements of `element` (a scalar or vector type), as a kernel
/// computes it: integers wrap, floats are IEEE.
fn arithmetic(
    element: &ElementType,
    a: &[u8],
    b: &[u8],
    op: Arithmetic,
) -> Result<Vec<u8>, String> {
    let ElementType::Value(ty) = element else {
        return Err(format!(
            "the elements are {element}: only scalars and vectors add and multiply"
        ));
    };
    let size = ty.kind.size() as usize;
    let mut out = Vec::with_capacity(a.len());
    for (x, y) in a.chunks(size).zip(b.chunks(size)) {
        let (x, y) = (component(x), component(y));
        let bits = match ty.kind {
            ScalarKind::F32 => {
                let (x, y) = (f32::from_bits(x as u32), f32::from_bits(y as u32));
                u64::from(
                    match op {
                        Arithmetic::Add => x + y,
                        Arithmetic::Mul => x * y,
                    }
                    .to_bits(),
                )
            }
            ScalarKind::F64 => {
                let (x, y) = (f64::from_bits(x), f64::from_bits(y));
                match op {
                    Arithmetic::Add => x + y,
                    Arithmetic::Mul => x * y,
                }
                .to_bits()
            }
            // Two's complement: the low bits of the wrapped result are the same for signed and
            // unsigned integers of every width.
            _ => match op {
                Arithmetic::Add => x.wrapping_add(y),
                Arithmetic::Mul => x.wrapping_mul(y),
            },
        };
        out.extend_from_slice(&bits.to_le_bytes()[..size]);
    }
    Ok(out)
}

/// One component's bits (little-endian, zero-extended).
fn component(bytes: &[u8]) -> u64 {
    let mut raw = [0u8; 8];
    raw[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(raw)
}

/// The element with every component 1.
fn one_of(element: &ElementType) -> Result<Vec<u8>, String> {
    let ElementType::Value(ty) = element else {
        return Err(format!(
            "the elements are {element}: only scalars and vectors increment"
        ));
    };
    let one: Vec<u8> = match ty.kind {
        ScalarKind::F32 => 1.0f32.to_le_bytes().to_vec(),
        ScalarKind::F64 => 1.0f64.to_le_bytes().to_vec(),
        kind => 1u64.to_le_bytes()[..kind.size() as usize].to_vec(),
    };
    Ok(one.repeat(usize::from(ty.width)))
}
