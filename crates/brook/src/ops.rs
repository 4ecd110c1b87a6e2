//! `streamScatterOp` and `streamGatherOp` (seed 000) on typed streams.

use crate::error::Error;
use crate::kernel::Kernel;
use crate::stream::Stream;
use brook_runtime::ops;
use brook_runtime::Element;

/// How `scatter_op` combines an incoming element with the array's.
#[derive(Clone, Copy)]
pub enum ScatterOp<'a> {
    /// `STREAM_SCATTER_ASSIGN`: the incoming element replaces the array's.
    Assign,
    /// `STREAM_SCATTER_ADD`: the incoming element is added (component-wise; integers wrap).
    Add,
    /// `STREAM_SCATTER_MUL`: the array's element is multiplied by the incoming one.
    Mul,
    /// A reduce function (`reduce void f(T a<>, reduce T r<>)`), run with `r` the array's
    /// element and `a` the incoming one.
    Reduce(&'a Kernel),
}

/// What `gather_op` does to each array element it fetches.
#[derive(Clone, Copy)]
pub enum GatherOp<'a> {
    /// `STREAM_GATHER_FETCH`: nothing.
    Fetch,
    /// `STREAM_GATHER_INC`: the fetched array element is incremented by one.
    Inc,
    /// A kernel of one input and one output stream: the array element is replaced by the
    /// kernel's result for it (fetch-and-op).
    Kernel(&'a Kernel),
}

/// `streamScatterOp(s, index, array, op)`: for each element `i` of `s`, in row-major order,
/// `array[index[i]] = op(s[i], array[index[i]])`. Indices are linear offsets into the array
/// (a float index rounds as `(int)(x + 0.5)`); out-of-range indices are skipped.
pub fn scatter_op<T: Element, I: Element>(
    s: &Stream<T>,
    index: &Stream<I>,
    array: &Stream<T>,
    op: ScatterOp<'_>,
) -> Result<(), Error> {
    let op = match op {
        ScatterOp::Assign => ops::ScatterOp::Assign,
        ScatterOp::Add => ops::ScatterOp::Add,
        ScatterOp::Mul => ops::ScatterOp::Mul,
        ScatterOp::Reduce(kernel) => ops::ScatterOp::Reduce {
            module: kernel.module(),
            kernel: kernel.ir(),
        },
    };
    Ok(ops::scatter_op(s.raw(), index.raw(), array.raw(), op)?)
}

/// `streamGatherOp(t, index, array, op)`: for each element `i` of `t`, in row-major order,
/// `t[i] = array[index[i]]`, then `op` updates that array element.
pub fn gather_op<T: Element, I: Element>(
    t: &Stream<T>,
    index: &Stream<I>,
    array: &Stream<T>,
    op: GatherOp<'_>,
) -> Result<(), Error> {
    let op = match op {
        GatherOp::Fetch => ops::GatherOp::Fetch,
        GatherOp::Inc => ops::GatherOp::Inc,
        GatherOp::Kernel(kernel) => ops::GatherOp::Kernel {
            module: kernel.module(),
            kernel: kernel.ir(),
        },
    };
    Ok(ops::gather_op(t.raw(), index.raw(), array.raw(), op)?)
}
