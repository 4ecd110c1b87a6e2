//! Running the pieces of a group's launch: every piece's inputs are brought up to date on its
//! member first, then every piece is launched, then what they wrote is recorded.

use super::access::{accesses, Access};
use super::buffer::group_buffer;
use super::coherence::{fetch, fetch_on};
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
            let device = members[*member].as_ref();
            let ordered = match access {
                Access::Read => group.before_read(*member, range, device),
                Access::Write { .. } => group.before_write(*member, range, device),
            };
            ordered.map_err(|e| failed(members, *member, e))?;
            if access != (Access::Write { exact: true }) {
                fetch(members, group, *member, range).map_err(|e| failed(members, *member, e))?;
            }
            if matches!(access, Access::Write { .. }) {
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

/// Runs `plan` (a split reduction's combine) on `beside`, a second queue of the first member,
/// with the first member's copies: after the work queued on the first member so far (its own
/// piece), and beside the work queued on it later (its next piece need not wait for the
/// combine). What the combine reads and writes is recorded as touched elsewhere, so the first
/// member's own queue waits for it before it touches those bytes again.
pub(super) fn run_beside(
    members: &[Arc<dyn Device>],
    beside: &Arc<dyn Device>,
    plan: &LaunchPlan,
) -> Result<(), LaunchProblem> {
    let first = &members[0];
    let fail = |e| failed(members, 0, e);
    if let Some(mark) = first.mark().map_err(fail)? {
        beside.wait_for_mark(&mark).map_err(fail)?;
    }
    let mut touched = Vec::new();
    for (index, range, access) in accesses(plan) {
        let Bound::Stream { buffer, .. } = &plan.args[index] else {
            continue;
        };
        let group = group_buffer(buffer.as_ref()).map_err(fail)?;
        let writes = matches!(access, Access::Write { .. });
        let ordered = if writes {
            group.before_write(0, range, beside.as_ref())
        } else {
            group.before_read(0, range, beside.as_ref())
        };
        ordered.map_err(fail)?;
        if access != (Access::Write { exact: true }) {
            fetch_on(members, beside, group, 0, range).map_err(fail)?;
        }
        touched.push((buffer.clone(), range, writes));
    }
    let local = on_member(plan, 0).map_err(fail)?;
    crate::launch::profiled::launch(beside.as_ref(), &local).map_err(|problem| match problem {
        LaunchProblem::Execution(e) => {
            LaunchProblem::Execution(format!("on {}: {e}", first.info()))
        }
        other => other,
    })?;
    let done = beside.mark().map_err(fail)?;
    for (buffer, (start, end), writes) in touched {
        let group = group_buffer(buffer.as_ref()).map_err(fail)?;
        if writes {
            group.written(0, start, end);
        }
        if let Some(done) = &done {
            group.touched_elsewhere(0, first, (start, end), done.clone(), writes);
        }
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
