//! The functions compiled for a kernel: the outer loops around its body.
//!
//! - [`map`]: a map kernel without thread groups runs instances `start..end` of the execution
//!   region (row-major) in one call: `fn(block, start, end)`.
//! - [`group`]: a kernel with a thread group runs one thread until it finishes (0) or reaches
//!   a barrier (1): `fn(block, state, shared, instance, in_group) -> u32`; the runtime
//!   interleaves a group's threads at barriers, as the interpreter does.
//! - [`group_gangs`]: where its threads may run in lockstep, a whole group in SIMD gangs:
//!   `fn(block, state, shared, first, count)`.
//! - [`reduce`]: a reduction gets `fn(block, target, lo, hi, out)`, which reduces leaves
//!   `lo..hi` of one target element's tile in the canonical order, and
//!   `fn(block, left, right)`, one combine step in memory (`left = combine(left, right)`).
//! - [`scan`]: a reduction launched as a scan also gets
//!   `fn(block, target, lo, hi, before, exclusive)`, which scans an aligned piece of one
//!   row's leaves from its prefix into the output stream.

pub mod group;
pub mod group_gangs;
pub mod map;
pub mod reduce;
pub mod scan;

use super::layout::{clif_type, has_array, leaves};
use super::lower::{LocalStore, Lower, PTR};
use crate::abi::header;
use cranelift_codegen::ir::{
    condcodes::IntCC, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Value,
};
use cranelift_frontend::Variable;

/// Locals kept in memory, zeroed when an instance starts: `size` bytes at `addr`.
pub struct MemoryLocal {
    pub addr: Value,
    pub size: u32,
}

/// Past this many (variable, block) pairs, SSA construction would be too big: Cranelift's
/// builder keeps a table per variable indexed by block, so memory and time grow with
/// variables × blocks (a kernel of thousands of inlined subkernels with early returns reached
/// gigabytes). Such kernels keep their scalar and vector locals in one stack frame instead,
/// addressed from one base value: linear in size.
const MAX_SSA_TABLE: usize = 1 << 24;

/// Places the locals of a map kernel: variables, or stack memory for those holding arrays (and
/// for every local of a kernel too big for SSA construction, see [`MAX_SSA_TABLE`]).
pub fn stack_locals(lower: &mut Lower<'_, '_>) -> Vec<MemoryLocal> {
    let mut memory = Vec::new();
    let variables: usize = lower
        .kernel
        .locals
        .iter()
        .map(|(_, local)| leaves(lower.module, &local.ty).len())
        .sum();
    let in_frame = variables.saturating_mul(block_estimate(&lower.kernel.body)) > MAX_SSA_TABLE;
    let mut frame = in_frame.then(|| (frame_of_locals(lower, &mut memory), 0u32));
    let mut stores = Vec::new();
    for (_, local) in lower.kernel.locals.iter() {
        let size = memory_size(lower.module, &local.ty);
        if local.shared || has_array(lower.module, &local.ty) {
            let slot = lower.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                size,
                3,
            ));
            let addr = lower.b.ins().stack_addr(PTR, slot, 0);
            memory.push(MemoryLocal { addr, size });
            stores.push(LocalStore::Memory(addr));
        } else if let Some((base, next)) = &mut frame {
            stores.push(LocalStore::Frame {
                base: *base,
                offset: *next,
            });
            *next += size;
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

/// The bytes a local takes in stack memory (a multiple of 8, for zeroing by 8-byte stores).
fn memory_size(module: &brook_ir::Module, ty: &brook_ir::Type) -> u32 {
    module.layout(ty).size.next_multiple_of(8).max(8)
}

/// One stack slot for every local that is not an array or shared: returns its address.
fn frame_of_locals(lower: &mut Lower<'_, '_>, memory: &mut Vec<MemoryLocal>) -> Value {
    let size: u32 = lower
        .kernel
        .locals
        .iter()
        .filter(|(_, local)| !local.shared && !has_array(lower.module, &local.ty))
        .map(|(_, local)| memory_size(lower.module, &local.ty))
        .sum();
    let slot = lower.b.create_sized_stack_slot(StackSlotData::new(
        StackSlotKind::ExplicitSlot,
        size.max(8),
        3,
    ));
    let addr = lower.b.ins().stack_addr(PTR, slot, 0);
    memory.push(MemoryLocal { addr, size });
    addr
}

/// About how many Cranelift blocks lowering `block` creates (three per `if` or loop, one after
/// each jump).
pub fn block_estimate(block: &brook_ir::Block) -> usize {
    use brook_ir::Stmt;
    block
        .iter()
        .map(|s| match &s.stmt {
            Stmt::If { accept, reject, .. } => 3 + block_estimate(accept) + block_estimate(reject),
            Stmt::Loop { body, continuing } => {
                3 + block_estimate(body) + block_estimate(continuing)
            }
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier => 1,
            Stmt::Store { .. } | Stmt::Collective(_) => 0,
        })
        .sum::<usize>()
        + 1
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

pub fn load_region(lower: &mut Lower<'_, '_>, rank: usize) -> Region {
    lower.domain = lower.block_axes(header::DOMAIN, rank);
    let origin = lower.block_axes(header::REGION_ORIGIN, rank);
    let size = lower.block_axes(header::REGION_SIZE, rank);
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
