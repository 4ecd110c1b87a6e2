//! Running the pieces of a group's launch: every piece's inputs are brought up to date on its
//! member first, then every piece is launched, then what they wrote is recorded.

use super::access::{accesses, Access};
use super::buffer::group_buffer;
use super::coherence::fetch;
use crate::device::Device;
use crate::error::{LaunchProblem, RuntimeError};
use crate::plan::{Bound, LaunchPlan};
use std::sync::Arc;

/// Runs each piece on its member. Every piece's inputs are fetched before any piece is
/// launched: a fetch is ordered after the work queued on the member it copies from, which must
/// not include this launch's pieces (the members would then run one after another).
pub(super) fn run(
    members: &[Arc<dyn Device>],
    pieces: Vec<(usize, LaunchPlan)>,
) -> Result<(), LaunchProblem> {
    let mut written = Vec::new();
    for (member, plan) in &pieces {
        for (index, range, access) in accesses(plan) {
            let Bound::Stream { buffer, .. } = &plan.args[index] else {
                continue;
            };
            let group = group_buffer(buffer.as_ref()).map_err(|e| failed(members, *member, e))?;
            if access != (Access::Write { exact: true }) {
                fetch(members, group, *member, range).map_err(|e| failed(members, *member, e))?;
            }
            if matches!(access, Access::Write { .. }) {
                group
                    .before_write(*member, range)
                    .map_err(|e| failed(members, *member, e))?;
                written.push((buffer.clone(), *member, range));
            }
        }
    }
    for (member, plan) in &pieces {
        let local = on_member(plan, *member).map_err(|e| failed(members, *member, e))?;
        crate::launch::profiled::launch(members[*member].as_ref(), &local).map_err(|problem| {
            match problem {
                LaunchProblem::Execution(e) => {
                    LaunchProblem::Execution(format!("on {}: {e}", members[*member].info()))
                }
                other => other,
            }
        })?;
    }
    for (buffer, member, (start, end)) in written {
        group_buffer(buffer.as_ref())
            .map_err(|e| failed(members, member, e))?
            .written(member, start, end);
    }
    Ok(())
}

/// A transfer's failure on member `member`, as a launch problem naming it.
fn failed(members: &[Arc<dyn Device>], member: usize, e: RuntimeError) -> LaunchProblem {
    LaunchProblem::Execution(format!("on {}: {e}", members[member].info()))
}

/// The plan with member `member`'s copies of its buffers.
fn on_member(plan: &LaunchPlan, member: usize) -> Result<LaunchPlan, RuntimeError> {
    let mut local = plan.clone();
    for bound in local.args.iter_mut() {
        if let Bound::Stream { buffer, .. } = bound {
            *buffer = group_buffer(buffer.as_ref())?.copies[member].clone();
        }
    }
    Ok(local)
}
