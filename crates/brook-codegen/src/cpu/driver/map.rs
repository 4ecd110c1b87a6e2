//! The per-element loop of a map kernel: `fn(block, start, end)` runs instances
//! `start..end` (row-major within the execution region) in order.
//!
//! The position is kept per axis and advanced with a carry; inputs of the domain's shape and
//! outputs are reached through cursors that advance by their fastest-axis pitch, so the common
//! case costs one add per stream per element.

use super::{carry, load_region, stack_locals, unravel, zero_locals, MemoryLocal};
use crate::abi::{BlockLayout, Variant};
use crate::cpu::lower::spmd::{Gang, Plan};
use crate::cpu::lower::{bind_params, Flow, Lower, PTR};
use crate::CompileError;
use brook_ir::{Kernel, Stmt};
use cranelift_codegen::ir::{condcodes::IntCC, InstBuilder, Value};

/// Lowers the loop, in `gang`s where given (the host's SIMD width, [`crate::cpu::lower::spmd`]) or one instance
/// at a time; the builder stands in the entry block, whose parameters are `(block, start,
/// end)`.
pub fn build(
    lower: &mut Lower<'_, '_>,
    params: &[Value],
    layout: &BlockLayout,
    variant: &Variant,
    gang: Option<Gang>,
) -> Result<(), CompileError> {
    let (start, end) = (params[1], params[2]);
    let rank = variant.rank;
    bind_params(lower, layout, variant);
    let region = load_region(lower, rank);
    let plan = gang.map(|g| Plan::new(lower, g, variant));
    let memory_locals = if plan.is_none() {
        stack_locals(lower)
    } else {
        Vec::new()
    };
    let first = unravel(lower, start, &region.size, Some(&region.origin));
    lower.pos = first.iter().map(|&p| lower.var_with(PTR, p)).collect();
    lower.set_cursors(&first);
    let index = lower.var_with(PTR, start);

    let last = rank - 1;
    let unroll = variant.unit_stride && worth_unrolling(lower.kernel);
    let track = needs_position(lower.kernel, variant);
    let (head, row, wrap, exit) = (
        lower.b.create_block(),
        lower.b.create_block(),
        lower.b.create_block(),
        lower.b.create_block(),
    );
    lower.b.ins().jump(head, &[]);

    lower.b.switch_to_block(head);
    let i = lower.b.use_var(index);
    let more = lower.b.ins().icmp(IntCC::UnsignedLessThan, i, end);
    lower.b.ins().brif(more, row, &[], exit, &[]);

    // The instances left in this row (of the region's fastest axis) and in the call.
    lower.b.switch_to_block(row);
    let left = lower.b.ins().isub(end, i);
    let p = lower.b.use_var(lower.pos[last]);
    let room = lower.b.ins().isub(region.end[last], p);
    let count = lower.b.ins().umin(left, room);
    let singles = if let Some(plan) = &plan {
        gangs(lower, plan, count, track, variant.unit_stride)?;
        None
    } else if unroll {
        let blocks = lower
            .b
            .ins()
            .ushr_imm_u(count, UNROLL.trailing_zeros() as i64);
        let rest = lower.b.ins().band_imm_u(count, UNROLL as i64 - 1);
        counted_loop(lower, blocks, |lower| {
            for _ in 0..UNROLL {
                instance(lower, &memory_locals, track, true)?;
            }
            Ok(())
        })?;
        Some(rest)
    } else {
        Some(count)
    };
    let unit = variant.unit_stride;
    if let Some(singles) = singles {
        counted_loop(lower, singles, |lower| {
            instance(lower, &memory_locals, track, unit)
        })?;
    }
    let i = lower.b.use_var(index);
    let i = lower.b.ins().iadd(i, count);
    lower.b.def_var(index, i);
    if !track {
        let p = lower.b.use_var(lower.pos[last]);
        let p = lower.b.ins().iadd(p, count);
        lower.b.def_var(lower.pos[last], p);
    }
    let p = lower.b.use_var(lower.pos[last]);
    let at_end = lower.b.ins().icmp(IntCC::Equal, p, region.end[last]);
    lower.b.ins().brif(at_end, wrap, &[], head, &[]);

    lower.b.switch_to_block(wrap);
    let pos = lower.pos.clone();
    carry(lower, &pos, &region.origin, &region.end);
    let now = lower.position();
    lower.set_cursors(&now);
    lower.b.ins().jump(head, &[]);

    lower.b.switch_to_block(exit);
    lower.b.ins().return_(&[]);
    Ok(())
}

/// Instances per iteration of the unrolled loop, one at a time (a power of two).
const UNROLL: u64 = 4;

/// Runs the `count` instances left in a row in gangs: full gangs, then one ragged gang for
/// the rest (if any).
fn gangs(
    lower: &mut Lower<'_, '_>,
    plan: &Plan,
    count: Value,
    track: bool,
    unit_stride: bool,
) -> Result<(), CompileError> {
    let lanes = plan.lanes() as u64;
    let full = lower
        .b
        .ins()
        .ushr_imm_u(count, lanes.trailing_zeros() as i64);
    let rest = lower.b.ins().band_imm_u(count, lanes as i64 - 1);
    counted_loop(lower, full, |lower| {
        plan.body(lower, None)?;
        let step = lower.iconst(PTR, lanes as i64);
        step_gang(lower, step, track, unit_stride);
        Ok(())
    })?;
    let (ragged, done) = (lower.b.create_block(), lower.b.create_block());
    lower.b.ins().brif(rest, ragged, &[], done, &[]);
    lower.b.seal_block(ragged);
    lower.b.switch_to_block(ragged);
    plan.body(lower, Some(rest))?;
    step_gang(lower, rest, track, unit_stride);
    lower.b.ins().jump(done, &[]);
    lower.b.switch_to_block(done);
    lower.b.seal_block(done);
    Ok(())
}

/// Moves the cursors (and, where tracked, the position) `count` instances on.
fn step_gang(lower: &mut Lower<'_, '_>, count: Value, track: bool, unit_stride: bool) {
    if track {
        let last = lower.pos.len() - 1;
        let p = lower.b.use_var(lower.pos[last]);
        let p = lower.b.ins().iadd(p, count);
        lower.b.def_var(lower.pos[last], p);
    }
    lower.advance_cursors_by(count, unit_stride);
}

/// Small bodies without loops are unrolled: the loop's own work then weighs less, and the
/// cursor steps fold into address offsets. Larger bodies would only cost compile time.
fn worth_unrolling(kernel: &Kernel) -> bool {
    fn has_loop(block: &brook_ir::Block) -> bool {
        block.iter().any(|s| match &s.stmt {
            Stmt::Loop { .. } => true,
            Stmt::If { accept, reject, .. } => has_loop(accept) || has_loop(reject),
            _ => false,
        })
    }
    kernel.exprs.len() <= 64 && !has_loop(&kernel.body)
}

/// Whether the body reads the position (`instance()`, `indexof`, resized inputs, iterators);
/// otherwise it is only advanced once per row.
fn needs_position(kernel: &Kernel, variant: &Variant) -> bool {
    let reads = kernel.exprs.iter().any(|(_, e)| {
        matches!(
            e.kind,
            brook_ir::ExprKind::Instance | brook_ir::ExprKind::IndexOf(_)
        )
    });
    reads
        || variant
            .inputs
            .iter()
            .flatten()
            .any(|m| *m != crate::abi::InputMode::Direct)
}

/// Runs `body` `count` times (a loop counting down).
fn counted_loop(
    lower: &mut Lower<'_, '_>,
    count: Value,
    body: impl FnOnce(&mut Lower<'_, '_>) -> Result<(), CompileError>,
) -> Result<(), CompileError> {
    let left = lower.var_with(PTR, count);
    let (test, run, done) = (
        lower.b.create_block(),
        lower.b.create_block(),
        lower.b.create_block(),
    );
    lower.b.ins().jump(test, &[]);
    lower.b.switch_to_block(test);
    let n = lower.b.use_var(left);
    lower.b.ins().brif(n, run, &[], done, &[]);
    lower.b.switch_to_block(run);
    body(lower)?;
    let n = lower.b.use_var(left);
    let n = lower.b.ins().iadd_imm_s(n, -1);
    lower.b.def_var(left, n);
    lower.b.ins().jump(test, &[]);
    lower.b.switch_to_block(done);
    Ok(())
}

/// One instance: the body, then a step along the fastest axis.
fn instance(
    lower: &mut Lower<'_, '_>,
    memory_locals: &[MemoryLocal],
    track: bool,
    unit_stride: bool,
) -> Result<(), CompileError> {
    let after = lower.b.create_block();
    zero_locals(lower, memory_locals);
    lower.flow = Flow::Jump(after);
    lower.body()?;
    lower.b.ins().jump(after, &[]);
    lower.b.switch_to_block(after);
    if track {
        let last = lower.pos.len() - 1;
        let p = lower.b.use_var(lower.pos[last]);
        let p = lower.b.ins().iadd_imm_s(p, 1);
        lower.b.def_var(lower.pos[last], p);
    }
    lower.advance_cursors(unit_stride);
    Ok(())
}
