//! The per-element loop of a map kernel: `fn(block, start, end)` runs instances
//! `start..end` (row-major within the execution region) in order.
//!
//! The position is kept per axis and advanced with a carry; inputs of the domain's shape and
//! outputs are reached through cursors that advance by their fastest-axis pitch, so the common
//! case costs one add per stream per element.

use super::{carry, load_region, stack_locals, unravel, zero_locals};
use crate::abi::{BlockLayout, Variant};
use crate::cpu::lower::{bind_params, Flow, Lower, PTR};
use crate::cpu::CompileError;
use cranelift_codegen::ir::{condcodes::IntCC, InstBuilder, Value};

/// Lowers the loop; the builder stands in the entry block, whose parameters are
/// `(block, start, end)`.
pub fn build(
    lower: &mut Lower<'_, '_>,
    params: &[Value],
    layout: &BlockLayout,
    variant: &Variant,
) -> Result<(), CompileError> {
    let (block, start, end) = (params[0], params[1], params[2]);
    let rank = variant.rank;
    bind_params(lower, block, layout, variant);
    let region = load_region(lower, block, rank);
    let memory_locals = stack_locals(lower);
    let first = unravel(lower, start, &region.size, Some(&region.origin));
    lower.pos = first.iter().map(|&p| lower.var_with(PTR, p)).collect();
    lower.set_cursors(&first);
    let index = lower.var_with(PTR, start);

    let (head, body, next, wrap, exit) = (
        lower.b.create_block(),
        lower.b.create_block(),
        lower.b.create_block(),
        lower.b.create_block(),
        lower.b.create_block(),
    );
    lower.b.ins().jump(head, &[]);

    lower.b.switch_to_block(head);
    let i = lower.b.use_var(index);
    let more = lower.b.ins().icmp(IntCC::UnsignedLessThan, i, end);
    lower.b.ins().brif(more, body, &[], exit, &[]);

    lower.b.switch_to_block(body);
    zero_locals(lower, &memory_locals);
    lower.flow = Flow::Jump(next);
    lower.body()?;
    lower.b.ins().jump(next, &[]);

    lower.b.switch_to_block(next);
    let i = lower.b.use_var(index);
    let i = lower.b.ins().iadd_imm_s(i, 1);
    lower.b.def_var(index, i);
    let last = rank - 1;
    let p = lower.b.use_var(lower.pos[last]);
    let p = lower.b.ins().iadd_imm_s(p, 1);
    lower.b.def_var(lower.pos[last], p);
    lower.advance_cursors();
    let inside = lower
        .b
        .ins()
        .icmp(IntCC::UnsignedLessThan, p, region.end[last]);
    lower.b.ins().brif(inside, head, &[], wrap, &[]);

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
