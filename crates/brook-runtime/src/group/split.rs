//! How a launch on a device group is divided among its members.
//!
//! A piece is the group's plan narrowed to what one member runs: a block of the region's rows
//! (maps), a block of target rows (reductions, row scans: the input's and target's streams are
//! narrowed, not the region, because devices reduce whole domains), or one aligned
//! power-of-two run of a single target's leaves whose value goes to a partial result. What a
//! piece reads and writes follows from its plan alone ([`super::access`]); [`super::run`]
//! runs the pieces.

use super::run::run;
use crate::error::LaunchProblem;
use crate::plan::{Bound, ExecRegion, LaunchPlan};
use brook_ir::ParamRole;

/// Runs `plan` on the group `members`.
pub(super) fn launch(group: &super::DeviceGroup, plan: &LaunchPlan) -> Result<(), LaunchProblem> {
    let members = group.members();
    let parts = members.len();
    if plan.reduction_tile.is_some() {
        if let Some(pieces) = target_rows(plan, parts) {
            return run(members, pieces);
        }
        if plan.scan.is_none() {
            if let Some((pieces, combine)) = super::whole::pieces(group, plan)? {
                run(members, pieces)?;
                return match group.combiner() {
                    Some(beside) => super::run::run_beside(members, beside, &combine),
                    None => run(members, vec![(0, combine)]),
                };
            }
        }
    } else if let Some(pieces) = region_rows(plan, parts) {
        return run(members, pieces);
    }
    run(members, vec![(0, plan.clone())])
}

/// Whether the kernel's result depends on which instances run together: it then runs whole
/// on one member.
pub(super) fn runs_whole(plan: &LaunchPlan) -> bool {
    let kernel = plan.kernel();
    kernel.group_size.is_some()
        || !kernel.vouts.is_empty()
        || kernel
            .params
            .iter()
            .any(|p| matches!(p.role, ParamRole::Scatter { .. }))
}

/// `count` contiguous blocks of `extent` rows, as `(first, end)`, none empty.
fn blocks(extent: usize, count: usize) -> Vec<(usize, usize)> {
    let count = count.min(extent);
    (0..count)
        .map(|k| (extent * k / count, extent * (k + 1) / count))
        .collect()
}

/// A map split into blocks of its region's slowest axis (not where an output's rank differs
/// from the region's: a block's writes would not be rows of it).
fn region_rows(plan: &LaunchPlan, parts: usize) -> Option<Vec<(usize, LaunchPlan)>> {
    let rows = *plan.region.size.first()?;
    if runs_whole(plan) || rows < 2 || parts < 2 {
        return None;
    }
    let rank = plan.region.size.len();
    let outputs_are_rows = plan.kernel().params.iter().zip(&plan.args).all(|(p, a)| {
        !matches!(p.role, ParamRole::Output)
            || matches!(a, Bound::Stream { shape, .. } if shape.len() == rank)
    });
    if !outputs_are_rows {
        return None;
    }
    let pieces = blocks(rows, parts)
        .into_iter()
        .enumerate()
        .map(|(member, (lo, hi))| {
            let mut piece = plan.clone();
            piece.region.origin[0] += lo;
            piece.region.size[0] = hi - lo;
            (member, piece)
        })
        .collect();
    Some(pieces)
}

/// A reduction (or a scan of rows) split into blocks of its targets' slowest axis.
fn target_rows(plan: &LaunchPlan, parts: usize) -> Option<Vec<(usize, LaunchPlan)>> {
    let rows = *plan.domain.first()?;
    let tile = plan.reduction_tile.as_ref()?;
    let (input, target) = crate::launch::input_and_target(plan.kernel())?;
    if runs_whole(plan) || rows < 2 || parts < 2 {
        return None;
    }
    if !matches!(plan.args[input], Bound::Stream { .. }) {
        return None;
    }
    // A scan's target has the input's shape; a reduction's the domain's.
    let target_rows_per_row = if plan.scan.is_some() { tile[0] } else { 1 };
    let pieces = blocks(rows, parts)
        .into_iter()
        .enumerate()
        .map(|(member, (lo, hi))| {
            let mut piece = plan.clone();
            piece.domain[0] = hi - lo;
            piece.region = ExecRegion {
                origin: smallvec::smallvec![0; piece.domain.len()],
                size: piece.domain.clone(),
            };
            narrow(&mut piece.args[input], lo * tile[0], (hi - lo) * tile[0]);
            narrow(
                &mut piece.args[target],
                lo * target_rows_per_row,
                (hi - lo) * target_rows_per_row,
            );
            (member, piece)
        })
        .collect();
    Some(pieces)
}

/// Keeps `len` rows of a bound stream's slowest axis from row `first`.
fn narrow(bound: &mut Bound, first: usize, len: usize) {
    if let Bound::Stream {
        shape, addressing, ..
    } = bound
    {
        addressing.offset += first * addressing.pitches[0];
        shape[0] = len;
    }
}
