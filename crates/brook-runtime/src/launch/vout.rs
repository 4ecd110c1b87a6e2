//! Launching a kernel with variable outputs (BrookGPU `vout`, see [`brook_ir::vout`]).
//!
//! The caller passes arguments in source order, a stream at each vout's position. This
//! allocates each vout's slots and counts in the shape of the domain, launches the lowered
//! kernel like any other, waits for it, and gathers every instance's pushed values in domain
//! order (row-major, instance by instance, in push order) into a new one-dimensional stream on
//! the vout stream's device. The caller puts that stream in place of its own
//! ([`super::LaunchReport::vouts`]). An instance that pushed more than its bound is an error
//! on the new stream, which keeps the first values of each instance.

use super::args::{Arg, LaunchOptions, LaunchReport, VoutResult};
use super::plain::launch_ir;
use crate::element::ElementType;
use crate::error::{ArgRef, LaunchError, LaunchProblem};
use crate::stream::RawStream;
use brook_ir::launch::normalized_shape;
use brook_ir::{
    source_params, Kernel, Module, ParamId, ParamRole, ScalarKind, SourceParam, ValidModule, Vout,
};
use std::collections::HashMap;
use std::sync::Arc;

/// The vout argument the program passed, and where its slots and count are.
struct Target<'a> {
    vout: &'a Vout,
    position: usize,
    stream: &'a RawStream,
}

/// [`super::launch`] for a kernel with vouts; `args` in source order.
pub(super) fn launch(
    module: &Arc<ValidModule>,
    kernel: usize,
    args: &[Arg<'_>],
    options: &LaunchOptions,
) -> Result<LaunchReport, Box<LaunchError>> {
    let ir = &module.kernels[kernel];
    let sources = source_params(ir);
    let error = |problem: LaunchProblem| {
        Box::new(LaunchError {
            kernel: ir.name.clone(),
            call_site: options.call_site.clone(),
            problem,
        })
    };
    // A refused launch marks (and prints on) every stream passed for a vout.
    let refuse_args = |e: Box<LaunchError>| {
        for (source, arg) in sources.iter().zip(args) {
            if let (SourceParam::Vout(_), Arg::Stream(s)) = (source, arg) {
                s.record_error(e.code(), &e.to_string());
            }
        }
        e
    };
    if args.len() != sources.len() {
        return Err(refuse_args(error(LaunchProblem::ArgumentCount {
            expected: sources.len(),
            found: args.len(),
        })));
    }
    let targets = targets(module, &sources, args).map_err(|p| refuse_args(error(p)))?;
    let refuse = |e: Box<LaunchError>| {
        for target in &targets {
            target.stream.record_error(e.code(), &e.to_string());
        }
        e
    };
    let domain = domain(&sources, args).ok_or_else(|| refuse(error(LaunchProblem::NoDomain)))?;
    let device = targets[0].stream.device().clone();
    let mut hidden: HashMap<ParamId, RawStream> = HashMap::new();
    for target in &targets {
        let ids = target.vout.slots.iter().chain([&target.vout.count]);
        for &id in ids {
            let element = ElementType::from_ir(module, &ir.params[id.0 as usize].ty);
            let stream = element
                .ok_or_else(|| format!("vout `{}` has no stream element type", target.vout.name))
                .and_then(|e| RawStream::new(&device, e, &domain).map_err(|e| e.to_string()))
                .map_err(|m| refuse(error(LaunchProblem::Execution(m))))?;
            hidden.insert(id, stream);
        }
    }
    let mut lowered: Vec<Arg<'_>> = sources
        .iter()
        .zip(args)
        .filter(|(s, _)| matches!(s, SourceParam::Param(..)))
        .map(|(_, a)| a.clone())
        .collect();
    for index in lowered.len()..ir.params.len() {
        match hidden.get(&ParamId(index as u32)) {
            Some(stream) => lowered.push(Arg::Stream(stream)),
            None => {
                return Err(refuse(error(LaunchProblem::Execution(format!(
                    "parameter {index} of the lowered kernel is not a vout slot"
                )))))
            }
        }
    }
    let mut report = launch_ir(module, kernel, &lowered, options).inspect_err(|e| {
        for target in &targets {
            target.stream.keep_error(e.code(), &e.to_string());
        }
    })?;
    for target in &targets {
        if let Some(stream) = gather(ir, target, &hidden, &domain, options) {
            report.vouts.push(VoutResult {
                position: target.position,
                stream,
            });
        }
    }
    Ok(report)
}

/// The stream passed at each vout's position, of the vout's element type.
fn targets<'a>(
    module: &Module,
    sources: &[SourceParam<'a>],
    args: &'a [Arg<'_>],
) -> Result<Vec<Target<'a>>, LaunchProblem> {
    let mut targets = Vec::new();
    for (position, (source, arg)) in sources.iter().zip(args).enumerate() {
        let SourceParam::Vout(vout) = source else {
            continue;
        };
        let arg_ref = ArgRef {
            position: position + 1,
            name: vout.name.clone(),
        };
        let expected = ElementType::from_ir(module, &vout.ty);
        match (arg, expected) {
            (Arg::Stream(stream), Some(t)) if stream.element().same_layout(&t) => {
                targets.push(Target {
                    vout,
                    position,
                    stream,
                })
            }
            _ => {
                return Err(LaunchProblem::ArgumentKind {
                    arg: arg_ref,
                    expected: format!(
                        "a {} stream (the values pushed replace its contents)",
                        module.type_name(&vout.ty)
                    ),
                    found: arg.describe(),
                })
            }
        }
    }
    Ok(targets)
}

/// The domain: the shape of the kernel's ordinary outputs, or else of its first input.
fn domain(sources: &[SourceParam<'_>], args: &[Arg<'_>]) -> Option<Vec<usize>> {
    let shape_of = |wanted: &dyn Fn(&ParamRole) -> bool| {
        sources.iter().zip(args).find_map(|(s, a)| match (s, a) {
            (SourceParam::Param(_, p), Arg::Stream(s)) if wanted(&p.role) => {
                Some(s.shape().to_vec())
            }
            (SourceParam::Param(_, p), Arg::Iterator(i)) if wanted(&p.role) => {
                Some(i.shape().to_vec())
            }
            _ => None,
        })
    };
    shape_of(&|r| *r == ParamRole::Output)
        .or_else(|| shape_of(&|r| matches!(r, ParamRole::Input | ParamRole::Iterator)))
        .map(|shape| normalized_shape(&shape).to_vec())
}

/// The values `target`'s instances pushed, in domain order, as a new stream (`None` when the
/// launch failed: its error is then on the program's stream).
fn gather(
    kernel: &Kernel,
    target: &Target<'_>,
    hidden: &HashMap<ParamId, RawStream>,
    domain: &[usize],
    options: &LaunchOptions,
) -> Option<RawStream> {
    let count = &hidden[&target.vout.count];
    count.finish();
    if let Some(code) = count.error() {
        target.stream.keep_error(code, count.error_log().trim_end());
        return None;
    }
    let element = target.stream.element().clone();
    let counts = read(count, &ElementType::scalar(ScalarKind::I32))?;
    let slots: Vec<Vec<u8>> = target
        .vout
        .slots
        .iter()
        .map(|id| read(&hidden[id], &element))
        .collect::<Option<_>>()?;
    let limit = target.vout.limit as usize;
    let size = element.size();
    let mut values = Vec::new();
    let mut overflow = None;
    for (instance, pushed) in counts.chunks_exact(4).enumerate() {
        let pushed =
            i32::from_ne_bytes([pushed[0], pushed[1], pushed[2], pushed[3]]).max(0) as usize;
        if pushed > limit && overflow.is_none() {
            overflow = Some((instance, pushed));
        }
        for slot in slots.iter().take(pushed.min(limit)) {
            values.extend_from_slice(&slot[instance * size..(instance + 1) * size]);
        }
    }
    let device = target.stream.device();
    let made = match values.len() / size {
        0 => RawStream::empty(device, element.clone()),
        n => RawStream::new(device, element.clone(), &[n])
            .and_then(|s| s.read_bytes(&element, &values).map(|()| s)),
    };
    let stream = match made {
        Ok(stream) => stream,
        Err(e) => {
            target.stream.record_error(e.code(), &e.to_string());
            return None;
        }
    };
    if let Some((instance, pushed)) = overflow {
        let error = LaunchError {
            kernel: kernel.name.clone(),
            call_site: options.call_site.clone(),
            problem: LaunchProblem::VoutOverflow {
                name: target.vout.name.clone(),
                position: x_first_position(instance, domain),
                pushed: pushed as u32,
                limit: limit as u32,
            },
        };
        stream.record_error(error.code(), &error.to_string());
    }
    Some(stream)
}

/// The bytes of `stream`, after its queued work.
fn read(stream: &RawStream, element: &ElementType) -> Option<Vec<u8>> {
    stream.write_async(element).ok()?.wait().ok()
}

/// The position of instance `index` (row-major) of `domain`, fastest axis first.
fn x_first_position(mut index: usize, domain: &[usize]) -> Vec<usize> {
    let mut position = Vec::with_capacity(domain.len());
    for &extent in domain.iter().rev() {
        position.push(index % extent.max(1));
        index /= extent.max(1);
    }
    position
}
