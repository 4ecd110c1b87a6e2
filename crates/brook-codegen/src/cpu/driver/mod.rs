//! The functions compiled for a kernel: the outer loops around its body.
//!
//! - [`map`]: a map kernel without thread groups runs instances `start..end` of the execution
//!   region (row-major) in one call: `fn(block, start, end)`.
//! - [`group`]: a kernel with a thread group runs one thread until it finishes (0) or reaches
//!   a barrier (1): `fn(block, state, shared, instance, in_group) -> u32`; the runtime
//!   interleaves a group's threads at barriers, as the interpreter does.
//! - [`reduce`]: a reduction gets `fn(block, target, lo, hi, out)`, which reduces leaves
//!   `lo..hi` of one target element's tile in the canonical order, and
//!   `fn(block, left, right)`, one combine step in memory (`left = combine(left, right)`).

pub mod group;
pub mod map;
pub mod reduce;

use super::layout::{clif_type, has_array, leaves};
use super::lower::{LocalStore, Lower, PTR};
use crate::abi::header;
use cranelift_codegen::ir::{
    condcodes::IntCC, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Value,
};
use cranelift_frontend::Variable;

/// A local kept in memory that must be zeroed when an instance starts.
pub struct MemoryLocal {
    pub addr: Value,
    pub size: u32,
}

/// Places the locals of a map kernel: variables, or stack memory for those holding arrays.
pub fn stack_locals(lower: &mut Lower<'_, '_>) -> Vec<MemoryLocal> {
    let mut memory = Vec::new();
    let mut stores = Vec::new();
    for (_, local) in lower.kernel.locals.iter() {
        if local.shared || has_array(lower.module, &local.ty) {
            let size = lower
                .module
                .layout(&local.ty)
                .size
                .next_multiple_of(8)
                .max(8);
            let slot = lower.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                size,
                3,
            ));
            let addr = lower.b.ins().stack_addr(PTR, slot, 0);
            memory.push(MemoryLocal { addr, size });
            stores.push(LocalStore::Memory(addr));
        } else {
            let vars = leaves(lower.module, &local.ty)
                .iter()
                .map(|leaf| lower.b.declare_var(clif_type(leaf.kind)))
                .collect();
            stores.push(LocalStore::Vars(vars));
        }
    }
    lower.locals = stores;
    memory
}

/// Zeroes every local (at the start of each instance).
pub fn zero_locals(lower: &mut Lower<'_, '_>, memory: &[MemoryLocal]) {
    for (index, (_, local)) in lower.kernel.locals.iter().enumerate() {
        if let LocalStore::Vars(vars) = lower.locals[index].clone() {
            for (var, leaf) in vars.iter().zip(leaves(lower.module, &local.ty)) {
                let zero = lower.zero(leaf.kind);
                lower.b.def_var(*var, zero);
            }
        }
    }
    for m in memory {
        let zero = lower.iconst(PTR, 0);
        for at in (0..m.size).step_by(8) {
            lower
                .b
                .ins()
                .store(MemFlagsData::trusted(), zero, m.addr, at as i32);
        }
    }
}

/// The domain and the execution region's origin and end (origin + size), each `rank` axes.
pub struct Region {
    pub origin: Vec<Value>,
    pub size: Vec<Value>,
    pub end: Vec<Value>,
}

pub fn load_region(lower: &mut Lower<'_, '_>, block: Value, rank: usize) -> Region {
    lower.domain = lower.block_axes(block, header::DOMAIN, rank);
    let origin = lower.block_axes(block, header::REGION_ORIGIN, rank);
    let size = lower.block_axes(block, header::REGION_SIZE, rank);
    let end = origin
        .iter()
        .zip(&size)
        .map(|(&o, &s)| lower.b.ins().iadd(o, s))
        .collect();
    Region { origin, size, end }
}

/// `linear` (row-major in a box of `size`) as a position, slowest first, plus `origin`.
pub fn unravel(
    lower: &mut Lower<'_, '_>,
    linear: Value,
    size: &[Value],
    origin: Option<&[Value]>,
) -> Vec<Value> {
    let mut rest = linear;
    let mut pos = vec![rest; size.len()];
    for k in (0..size.len()).rev() {
        let p = if k == 0 {
            rest
        } else {
            let p = lower.b.ins().urem(rest, size[k]);
            rest = lower.b.ins().udiv(rest, size[k]);
            p
        };
        pos[k] = match origin {
            Some(origin) => lower.b.ins().iadd(p, origin[k]),
            None => p,
        };
    }
    pos
}

/// Carries a position whose fastest axis reached its end: that axis restarts at its origin and
/// the next slower axis advances, and so on (branch-free).
pub fn carry(lower: &mut Lower<'_, '_>, pos: &[Variable], origin: &[Value], end: &[Value]) {
    let last = pos.len() - 1;
    lower.b.def_var(pos[last], origin[last]);
    let mut carry = lower.iconst(PTR, 1);
    for k in (0..last).rev() {
        let p = lower.b.use_var(pos[k]);
        let p = lower.b.ins().iadd(p, carry);
        let wrapped = lower.b.ins().icmp(IntCC::Equal, p, end[k]);
        let p = lower.b.ins().select(wrapped, origin[k], p);
        lower.b.def_var(pos[k], p);
        carry = lower.b.ins().uextend(PTR, wrapped);
    }
}
