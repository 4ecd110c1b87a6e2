//! A thread of a thread group as a resumable function:
//! `fn(block, state, shared, instance, in_group) -> u32`.
//!
//! Every local lives in memory: the thread's own in `state` (after the 8-byte resume point),
//! `shared` ones in the group's `shared` buffer. The function starts at the resume point saved
//! in `state` (0: the beginning), runs until the kernel ends (returns 0) or reaches a barrier
//! (saves the next resume point, returns 1). The runtime zeroes `state` before a thread's first
//! call and `shared` before each group, and interleaves a group's threads at barriers in the
//! interpreter's order.

use super::{load_region, unravel};
use crate::abi::{BlockLayout, Variant};
use crate::cpu::lower::{bind_params, Flow, LocalStore, Lower, PTR};
use crate::lower::count_barriers;
use crate::CompileError;
use brook_ir::{Kernel, Module};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::Switch;

/// Byte offsets of the locals in the thread state (or the shared buffer), and both sizes.
pub struct GroupLayout {
    pub offsets: Vec<u32>,
    pub state_size: usize,
    pub shared_size: usize,
}

pub fn group_layout(module: &Module, kernel: &Kernel) -> GroupLayout {
    let (mut state, mut shared) = (8u32, 0u32);
    let mut offsets = Vec::new();
    for (_, local) in kernel.locals.iter() {
        let l = module.layout(&local.ty);
        let end = if local.shared {
            &mut shared
        } else {
            &mut state
        };
        *end = end.next_multiple_of(l.align.max(1));
        offsets.push(*end);
        *end += l.size;
    }
    GroupLayout {
        offsets,
        state_size: state.next_multiple_of(8) as usize,
        shared_size: shared.next_multiple_of(8).max(8) as usize,
    }
}

/// Lowers one resumable thread; entry parameters `(block, state, shared, instance, in_group)`.
pub fn build(
    lower: &mut Lower<'_, '_>,
    params: &[Value],
    layout: &BlockLayout,
    variant: &Variant,
) -> Result<(), CompileError> {
    let (state, shared, instance, in_group) = (params[1], params[2], params[3], params[4]);
    bind_params(lower, layout, variant);
    let region = load_region(lower, variant.rank);
    let pos = unravel(lower, instance, &region.size, Some(&region.origin));
    lower.pos = pos.iter().map(|&p| lower.var_with(PTR, p)).collect();
    lower.set_cursors(&pos);
    lower.in_group = Some(in_group);
    let group = group_layout(lower.module, lower.kernel);
    lower.locals = lower
        .kernel
        .locals
        .iter()
        .zip(&group.offsets)
        .map(|((_, local), &offset)| {
            let base = if local.shared { shared } else { state };
            LocalStore::Memory(lower.b.ins().iadd_imm_s(base, i64::from(offset)))
        })
        .collect();

    let resumes: Vec<_> = (0..count_barriers(&lower.kernel.body))
        .map(|_| lower.b.create_block())
        .collect();
    let start = lower.b.create_block();
    let point = lower
        .b
        .ins()
        .load(types::I32, MemFlagsData::trusted(), state, 0);
    let mut switch = Switch::new();
    for (k, &resume) in resumes.iter().enumerate() {
        switch.set_entry(k as u128 + 1, resume);
    }
    switch.emit(&mut lower.b, point, start);

    lower.b.switch_to_block(start);
    lower.flow = Flow::Resumable {
        state,
        resumes,
        next: 0,
    };
    lower.body()?;
    let finished = lower.iconst(types::I32, 0);
    lower.b.ins().return_(&[finished]);
    Ok(())
}
