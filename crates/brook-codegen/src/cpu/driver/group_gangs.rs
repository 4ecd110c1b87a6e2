//! A whole thread group in SIMD gangs: `fn(block, state, shared, first, count)` runs the
//! group's `count` threads, instances `first..first + count` of a one-dimensional region.
//!
//! The body's phases ([`brook_ir::lockstep::phases`]) run one after another; each runs for
//! every gang of the group (the last one ragged where `count` is not a whole number of
//! gangs) before the next starts, which is what a barrier asks. Between phases a gang's
//! locals wait in `state`, `spmd::group::save_size` bytes per gang; shared locals live in `shared`,
//! which the runtime zeroes before each group.

use super::group::group_layout;
use super::load_region;
use crate::abi::{BlockLayout, Variant};
use crate::cpu::lower::spmd::group::{save_size, Moved};
use crate::cpu::lower::spmd::{Gang, Plan};
use crate::cpu::lower::{bind_params, Lower, PTR};
use crate::CompileError;
use brook_ir::lockstep::Phase;
use brook_ir::Block;
use cranelift_codegen::ir::{condcodes::IntCC, InstBuilder, Value};

/// Lowers the group's run; entry parameters `(block, state, shared, first, count)`.
pub fn build(
    lower: &mut Lower<'_, '_>,
    params: &[Value],
    layout: &BlockLayout,
    variant: &Variant,
    gang: Gang,
    phases: &[Phase],
) -> Result<(), CompileError> {
    let (state, shared, first, count) = (params[1], params[2], params[3], params[4]);
    bind_params(lower, layout, variant);
    let region = load_region(lower, 1);
    let offsets = group_layout(lower.module, lower.kernel).offsets;
    let plan = Plan::for_group(lower, gang, variant, shared, &offsets);
    let start = lower.b.ins().iadd(region.origin[0], first);
    lower.pos = vec![lower.var_with(PTR, start)];
    let lanes = gang.lanes() as i64;
    let shift = lanes.trailing_zeros() as i64;
    let gangs = lower.b.ins().iadd_imm_s(count, lanes - 1);
    let gangs = lower.b.ins().ushr_imm_u(gangs, shift);
    let save_size = i64::from(save_size(lower.module, lower.kernel, gang));
    let kernel = lower.kernel;
    for (k, phase) in phases.iter().enumerate() {
        let stmts = Block(kernel.body.0[phase.stmts.clone()].to_vec());
        let restore = (k > 0).then_some(phase.live_in.as_slice());
        let save = phases.get(k + 1).map(|next| next.live_in.as_slice());
        each_gang(lower, gangs, |lower, g| {
            let in_group = lower.b.ins().ishl_imm_u(g, shift);
            let pos = lower.b.ins().iadd(start, in_group);
            lower.b.def_var(lower.pos[0], pos);
            lower.set_cursors(&[pos]);
            lower.in_group = Some(in_group);
            let offset = lower.b.ins().imul_imm_u(g, save_size);
            let area = lower.b.ins().iadd(state, offset);
            let restore = restore.map(|locals| Moved { area, locals });
            let save = save.map(|locals| Moved { area, locals });
            let left = lower.b.ins().isub(count, in_group);
            let (full, ragged, next) = (
                lower.b.create_block(),
                lower.b.create_block(),
                lower.b.create_block(),
            );
            let whole = lower
                .b
                .ins()
                .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, left, lanes);
            lower.b.ins().brif(whole, full, &[], ragged, &[]);
            lower.b.switch_to_block(full);
            plan.phase(lower, None, &stmts, restore, save)?;
            lower.b.ins().jump(next, &[]);
            lower.b.switch_to_block(ragged);
            plan.phase(lower, Some(left), &stmts, restore, save)?;
            lower.b.ins().jump(next, &[]);
            lower.b.switch_to_block(next);
            Ok(())
        })?;
    }
    lower.b.ins().return_(&[]);
    Ok(())
}

/// Runs `body` for gangs `0..gangs` (an `i64` count), the gang's number as its argument.
fn each_gang(
    lower: &mut Lower<'_, '_>,
    gangs: Value,
    body: impl FnOnce(&mut Lower<'_, '_>, Value) -> Result<(), CompileError>,
) -> Result<(), CompileError> {
    let zero = lower.iconst(PTR, 0);
    let g = lower.var_with(PTR, zero);
    let (test, run, done) = (
        lower.b.create_block(),
        lower.b.create_block(),
        lower.b.create_block(),
    );
    lower.b.ins().jump(test, &[]);
    lower.b.switch_to_block(test);
    let at = lower.b.use_var(g);
    let more = lower.b.ins().icmp(IntCC::UnsignedLessThan, at, gangs);
    lower.b.ins().brif(more, run, &[], done, &[]);
    lower.b.switch_to_block(run);
    body(lower, at)?;
    let at = lower.b.use_var(g);
    let at = lower.b.ins().iadd_imm_s(at, 1);
    lower.b.def_var(g, at);
    lower.b.ins().jump(test, &[]);
    lower.b.switch_to_block(done);
    Ok(())
}
