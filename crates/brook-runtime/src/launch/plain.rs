//! A launch of a kernel without vouts: check, plan, queue.

use super::args::{Arg, LaunchOptions, LaunchReport};
use super::checker::Checker;
use crate::error::{LaunchError, LaunchProblem};
use crate::plan::LaunchPlan;
use crate::stream::RawStream;
use brook_ir::ValidModule;
use std::sync::Arc;

/// A launch's streams of one kind, inline for up to six: a launch allocates nothing for them
/// (what its queued job holds is freed on the device's thread).
type Streams = smallvec::SmallVec<[RawStream; 6]>;

/// [`super::launch`] of a kernel without vouts, arguments in IR parameter order.
pub(super) fn launch_ir(
    module: &Arc<ValidModule>,
    kernel: usize,
    args: &[Arg<'_>],
    options: &LaunchOptions,
) -> Result<LaunchReport, Box<LaunchError>> {
    let ir = &module.kernels[kernel];
    let outputs: Streams = ir
        .params
        .iter()
        .zip(args)
        .filter(|(p, _)| p.role.is_written())
        .filter_map(|(_, a)| match a {
            Arg::Stream(s) => Some((*s).clone()),
            _ => None,
        })
        .collect();
    let fail = |problem: LaunchProblem| {
        let error = LaunchError {
            kernel: ir.name.clone(),
            call_site: options.call_site.clone(),
            problem,
        };
        for output in &outputs {
            output.record_error(error.code(), &error.to_string());
        }
        Box::new(error)
    };
    let checked = Checker {
        module,
        kernel: ir,
        args,
        options,
    }
    .run()
    .map_err(fail)?;
    if checked.region.size.iter().product::<usize>() == 0 {
        // A launch over an empty domain: nothing to run, nothing to record.
        return Ok(LaunchReport {
            warnings: checked.warnings,
            vouts: Vec::new(),
            over_nothing: true,
        });
    }
    for output in &outputs {
        output.mark_initialized();
        for warning in &checked.warnings {
            output.record_warning(warning);
        }
    }
    let plan = LaunchPlan {
        module: module.clone(),
        kernel,
        domain: checked.domain,
        region: checked.region,
        reduction_tile: checked.reduction_tile,
        scan: checked.scan,
        args: checked.bound,
    };
    submit(
        checked.device,
        plan,
        args,
        outputs,
        options.call_site.clone(),
    );
    Ok(LaunchReport {
        warnings: checked.warnings,
        vouts: Vec::new(),
        over_nothing: false,
    })
}

/// Queues a checked launch; errors found when it runs are recorded on its outputs. An input
/// that holds an error by then (an earlier queued job failed) skips the launch.
fn submit(
    device: Arc<dyn crate::Device>,
    plan: LaunchPlan,
    args: &[Arg<'_>],
    outputs: Streams,
    call_site: Option<String>,
) {
    let streams: Streams = args
        .iter()
        .filter_map(|a| match a {
            Arg::Stream(s) => Some((*s).clone()),
            _ => None,
        })
        .collect();
    let inputs: smallvec::SmallVec<[(usize, RawStream); 6]> = plan
        .kernel()
        .params
        .iter()
        .zip(args)
        .enumerate()
        .filter(|(_, (p, _))| !p.role.is_written())
        .filter_map(|(i, (_, a))| match a {
            Arg::Stream(s) => Some((i, (*s).clone())),
            _ => None,
        })
        .collect();
    // Readied here, on the caller's thread, while the device's worker starts earlier
    // launches; a cross-checked or profiled launch goes the long way.
    let ready = (!super::crosscheck::crosscheck_enabled() && !crate::profile::profiling())
        .then(|| device.prepare(&plan))
        .flatten();
    let runner = device.clone();
    let ticket = device.queue().submit(move || {
        let problem = match inputs.iter().find(|(_, s)| s.error().is_some()) {
            Some((index, stream)) => Some(LaunchProblem::InputInError {
                arg: crate::ArgRef {
                    position: index + 1,
                    name: plan.kernel().params[*index].name.clone(),
                },
                code: stream.error().unwrap_or(crate::BError::Kernel),
            }),
            None => match ready {
                Some(ready) => runner.launch_ready(&plan, ready).err(),
                None => super::crosscheck::launch(runner.as_ref(), &plan).err(),
            },
        };
        if let Some(problem) = problem {
            let error = LaunchError {
                kernel: plan.kernel().name.clone(),
                call_site,
                problem,
            };
            for output in &outputs {
                output.record_error(error.code(), &error.to_string());
            }
        }
    });
    for stream in &streams {
        stream.note_job(ticket);
    }
}
