//! One instance of a kernel over one-element streams.
//!
//! A reduction's combine step is its kernel body run once with the reduction variable holding
//! the left partial result and the input the right one; `streamScatterOp` and
//! `streamGatherOp` apply a kernel to single elements the same way. Every device can use
//! [`combine`] and [`apply_map`] to give exactly the interpreter's results for these
//! element-at-a-time operations.

use super::eval::{Context, InputData, Memory, OutputData, StreamData};
use super::exec;
use super::value::Layouts;
use crate::plan::ExecRegion;
use crate::stream::addressing::Addressing;
use brook_ir::{Kernel, KernelKind, Module, ParamRole};

/// An argument of a single instance: an input element, a written element (its bytes hold the
/// initial contents and receive the result), a constant, or a whole gather array (a reduction's
/// lookup table, read as in the launch it belongs to).
pub enum SingleArg<'a> {
    Input(Vec<u8>),
    Output(Vec<u8>),
    Constant(Vec<u8>),
    Array(InputData<'a>),
}

/// Runs `kernel` once, at position 0 of a one-element domain.
pub fn run_single(
    module: &Module,
    kernel: &Kernel,
    layouts: &Layouts,
    args: &mut [SingleArg<'_>],
) -> Result<(), String> {
    let expanded = brook_ir::collective::expand(kernel, |_| false);
    let kernel = expanded.as_ref().unwrap_or(kernel);
    if args.len() != kernel.params.len() {
        return Err(format!(
            "kernel `{}` takes {} arguments, not {}",
            kernel.name,
            kernel.params.len(),
            args.len()
        ));
    }
    let one = vec![1];
    let addressing = Addressing::row_major(&one);
    let (mut inputs, mut outputs, mut constants) = (Vec::new(), Vec::new(), Vec::new());
    let mut buffers: Vec<&mut [u8]> = Vec::new();
    for (param, arg) in kernel.params.iter().zip(args.iter_mut()) {
        let element_size = layouts.size(module, &param.ty);
        let (mut input, mut output, mut constant) = (None, None, None);
        let bytes_len = match arg {
            SingleArg::Input(b) | SingleArg::Output(b) | SingleArg::Constant(b) => b.len(),
            SingleArg::Array(_) => element_size,
        };
        if bytes_len != element_size {
            return Err(format!(
                "`{}` of kernel `{}` is {element_size} bytes, not {bytes_len}",
                param.name, kernel.name
            ));
        }
        match arg {
            SingleArg::Input(bytes) => {
                input = Some(InputData::Stream(StreamData {
                    bytes: bytes.as_slice(),
                    shape: one.clone(),
                    element_size,
                    addressing: addressing.clone(),
                }));
            }
            SingleArg::Output(bytes) => {
                output = Some(OutputData {
                    buffer: buffers.len(),
                    shape: one.clone(),
                    element_size,
                    addressing: addressing.clone(),
                });
                buffers.push(bytes.as_mut_slice());
            }
            SingleArg::Constant(bytes) => {
                constant = Some(layouts.decode(module, &param.ty, bytes));
            }
            SingleArg::Array(data) => input = Some(data.clone()),
        }
        inputs.push(input);
        outputs.push(output);
        constants.push(constant);
    }
    let ctx = Context {
        module,
        kernel,
        layouts: layouts.clone(),
        domain: one.clone(),
        region: ExecRegion {
            origin: smallvec::smallvec![0],
            size: one.as_slice().into(),
        },
        inputs,
        constants,
    };
    exec::run(&ctx, &mut Memory { buffers, outputs });
    Ok(())
}

/// The reduce function `kernel` (one input, one reduction variable, nothing else) applied to
/// `left` (the reduction variable) and `right` (the input): the new value of the variable.
pub fn combine(
    module: &Module,
    kernel: &Kernel,
    left: &[u8],
    right: &[u8],
) -> Result<Vec<u8>, String> {
    let shape = kernel.params.iter().map(|p| &p.role).collect::<Vec<_>>();
    if !has_roles(kernel, KernelKind::Reduce, ParamRole::Reduce) {
        return Err(format!(
            "`{}` is not a reduce function of one input and one reduction variable",
            kernel.name
        ));
    }
    let mut args: Vec<SingleArg> = shape
        .iter()
        .map(|role| match role {
            ParamRole::Reduce => SingleArg::Output(left.to_vec()),
            _ => SingleArg::Input(right.to_vec()),
        })
        .collect();
    run_single(module, kernel, &Layouts::new(module), &mut args)?;
    Ok(written(args))
}

/// The map kernel `kernel` (one input stream, one output stream, nothing else) applied to one
/// element: the output element it computes (zero where it writes nothing).
pub fn apply_map(module: &Module, kernel: &Kernel, input: &[u8]) -> Result<Vec<u8>, String> {
    if !has_roles(kernel, KernelKind::Map, ParamRole::Output) {
        return Err(format!(
            "`{}` is not a kernel of one input stream and one output stream",
            kernel.name
        ));
    }
    let layouts = Layouts::new(module);
    let mut args: Vec<SingleArg> = kernel
        .params
        .iter()
        .map(|p| match p.role {
            ParamRole::Output => SingleArg::Output(vec![0; layouts.size(module, &p.ty)]),
            _ => SingleArg::Input(input.to_vec()),
        })
        .collect();
    run_single(module, kernel, &layouts, &mut args)?;
    Ok(written(args))
}

/// Whether `kernel` is of `kind` with exactly one input and one `written` parameter.
fn has_roles(kernel: &Kernel, kind: KernelKind, written: ParamRole) -> bool {
    let roles: Vec<&ParamRole> = kernel.params.iter().map(|p| &p.role).collect();
    kernel.kind == kind
        && roles.len() == 2
        && roles.contains(&&ParamRole::Input)
        && roles.contains(&&written)
}

fn written(args: Vec<SingleArg>) -> Vec<u8> {
    args.into_iter()
        .find_map(|a| match a {
            SingleArg::Output(bytes) => Some(bytes),
            _ => None,
        })
        .unwrap_or_default()
}
