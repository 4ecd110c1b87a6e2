//! Reductions in the canonical order of `brook_ir::reduce_order`.
//!
//! `fn(block, target, lo, hi, out)` reduces leaves `lo..hi` (row-major within the tile of target
//! element `target`) as the canonical tree over exactly those leaves, and stores the result at
//! `out`. The runtime calls it with `lo..hi` an aligned power-of-two piece (or the ragged end
//! of one) and combines the pieces with the same tree, which gives the canonical result.
//!
//! Leaves are pushed onto the binary-counter stack of aligned subtrees that every backend shares
//! ([`crate::lower::counter`]), and the stack is folded at the end, which is how the canonical
//! tree treats a ragged end. Where the tile's rows allow it, leaves come in blocks of [`BLOCK`]
//! reduced as a tree in registers, and only the block's result is pushed (above the levels it
//! fills).
//!
//! `fn(block, left, right)` is one combine step on values in memory, for the runtime to
//! combine pieces.

use super::{carry, stack_locals, unravel, zero_locals, MemoryLocal};
use crate::abi::{header, BlockLayout, Variant};
use crate::cpu::layout::{clif_type, leaves};
use crate::cpu::lower::{bind_params, Binding, Flow, Lower, PTR};
use crate::lower::binding::StreamRef;
use crate::lower::counter::{self, Slots, LEVELS};
use crate::lower::Target;
use crate::CompileError;
use brook_ir::{ParamRole, ScalarKind, Type};
use cranelift_codegen::ir::{condcodes::IntCC, InstBuilder, StackSlotData, StackSlotKind, Value};
use cranelift_frontend::Variable;

/// Leaves reduced in registers at a time (a power of two).
pub const BLOCK: u64 = 16;

/// The reduction's parameters: its input and its target.
pub(super) struct Roles {
    pub input: usize,
    pub target: usize,
    pub ty: Type,
    /// Locals kept in memory, zeroed before each combine step.
    memory: Vec<MemoryLocal>,
}

pub(super) fn roles(lower: &mut Lower<'_, '_>) -> Result<Roles, CompileError> {
    let params = &lower.kernel.params;
    let find = |want: &dyn Fn(&ParamRole) -> bool| params.iter().position(|p| want(&p.role));
    let input = find(&|r| matches!(r, ParamRole::Input | ParamRole::Iterator));
    let target = find(&|r| *r == ParamRole::Reduce);
    match (input, target) {
        (Some(input), Some(target)) => {
            let ty = params[target].ty.clone();
            let memory = stack_locals(lower);
            Ok(Roles {
                input,
                target,
                ty,
                memory,
            })
        }
        _ => Err(CompileError::Unsupported {
            backend: crate::BackendKind::Cpu,
            kernel: lower.kernel.name.clone(),
            span: lower.kernel.span,
            construct: "a reduction without one input and one reduction parameter".into(),
        }),
    }
}

/// `combine(left, right)` inline: the body runs with the accumulator holding `left` and the
/// input `right`.
pub(super) fn combine(
    lower: &mut Lower<'_, '_>,
    roles: &Roles,
    acc: &[Variable],
    left: &[Value],
    right: Vec<Value>,
) -> Result<Vec<Value>, CompileError> {
    for (&var, &value) in acc.iter().zip(left) {
        lower.b.def_var(var, value);
    }
    lower.bindings[roles.input] = Binding::Values(right);
    zero_locals(lower, &roles.memory);
    let end = lower.b.create_block();
    lower.flow = Flow::Jump(end);
    lower.body()?;
    lower.b.ins().jump(end, &[]);
    lower.b.switch_to_block(end);
    Ok(acc.iter().map(|&v| lower.b.use_var(v)).collect())
}

pub(super) fn accumulator(lower: &mut Lower<'_, '_>, roles: &Roles) -> Vec<Variable> {
    let acc: Vec<Variable> = leaves(lower.module, &roles.ty)
        .iter()
        .map(|leaf| lower.b.declare_var(clif_type(leaf.kind)))
        .collect();
    lower.bindings[roles.target] = Binding::Vars(acc.clone());
    acc
}

/// `fn(block, left, right)`: `*left = combine(*left, *right)`.
pub fn build_combine(
    lower: &mut Lower<'_, '_>,
    params: &[Value],
    layout: &BlockLayout,
    variant: &Variant,
) -> Result<(), CompileError> {
    let (left, right) = (params[1], params[2]);
    bind_params(lower, layout, variant);
    let roles = roles(lower)?;
    let acc = accumulator(lower, &roles);
    let a = lower.load_value(&roles.ty, left);
    let b = lower.load_value(&roles.ty, right);
    let result = combine(lower, &roles, &acc, &a, b)?;
    let layout = leaves(lower.module, &roles.ty);
    lower.store_leaves(&layout, &result, left);
    lower.b.ins().return_(&[]);
    Ok(())
}

/// How leaves are read: from a stream at an element index, or computed by an iterator.
type Source = crate::lower::binding::Source<Value>;

/// The state of the walk over a tile's leaves.
pub(super) struct Walk {
    source: Source,
    /// The first input position of the tile (target position times tile).
    base: Vec<Value>,
    tile: Vec<Value>,
    /// The position inside the tile.
    u: Vec<Variable>,
    /// The element index of the current leaf (streams).
    cursor: Variable,
    /// A scan's output stream (bound with the input's shape) and the element index of the
    /// current leaf's place in it.
    output: Option<(StreamRef<Value>, Variable)>,
}

impl Walk {
    /// The walk over target `target`'s tile from leaf `lo` (with a scan's output stream).
    pub(super) fn new(
        lower: &mut Lower<'_, '_>,
        roles: &Roles,
        layout: &BlockLayout,
        variant: &Variant,
        (target, lo): (Value, Value),
        output: Option<StreamRef<Value>>,
    ) -> Walk {
        let rank = variant.rank;
        let targets = lower.block_axes(header::DOMAIN, rank);
        let tile = lower.block_axes(header::TILE, rank);
        let t = unravel(lower, target, &targets, None);
        let base: Vec<Value> = t
            .iter()
            .zip(&tile)
            .map(|(&t, &n)| lower.b.ins().imul(t, n))
            .collect();
        let source = crate::lower::binding::reduction_source(lower, roles.input, layout, variant);
        let first = unravel(lower, lo, &tile, None);
        let u = first.iter().map(|&p| lower.var_with(PTR, p)).collect();
        let zero = lower.iconst(PTR, 0);
        let cursor = lower.var_with(PTR, zero);
        let output = output.map(|out| (out, lower.var_with(PTR, zero)));
        let walk = Walk {
            source,
            base,
            tile,
            u,
            cursor,
            output,
        };
        walk.set_cursor(lower);
        walk
    }

    fn set_cursor(&self, lower: &mut Lower<'_, '_>) {
        if let Source::Stream(stream) = &self.source {
            let at = self.position(lower);
            let index = lower.element_index(stream.offset, &at, &stream.pitch);
            lower.b.def_var(self.cursor, index);
        }
        if let Some((out, cursor)) = &self.output {
            let at = self.position(lower);
            let index = lower.element_index(out.offset, &at, &out.pitch);
            lower.b.def_var(*cursor, index);
        }
    }

    /// The loop over leaves `lo..hi` of the tile: a [`BLOCK`] at a time (`block(done)`, `done`
    /// the leaves before it) where the rows and `lo` allow it, the leaves left are enough and
    /// `also(done)` (a bool value, or `None` for always) holds, else one (`single(done)`); the
    /// walk advances past them.
    pub(super) fn over_leaves<'c>(
        &self,
        lower: &mut Lower<'_, '_>,
        (lo, hi): (Value, Value),
        mut also: impl FnMut(&mut Lower<'_, '_>, Value) -> Option<Value>,
        block: &'c mut dyn FnMut(&mut Lower<'_, '_>, Value) -> Result<(), CompileError>,
        single: &'c mut dyn FnMut(&mut Lower<'_, '_>, Value) -> Result<(), CompileError>,
    ) -> Result<(), CompileError> {
        let index = lower.var_with(PTR, lo);
        let row = *self.tile.last().expect("a tile has an axis");
        let row_rem = lower.b.ins().urem_imm_u(row, BLOCK as i64);
        let lo_rem = lower.b.ins().urem_imm_u(lo, BLOCK as i64);
        let misaligned = lower.b.ins().bor(row_rem, lo_rem);
        let blocks_fit = lower.b.ins().icmp_imm_s(IntCC::Equal, misaligned, 0);
        let (head, choose, blocks, one, finish) = (
            lower.b.create_block(),
            lower.b.create_block(),
            lower.b.create_block(),
            lower.b.create_block(),
            lower.b.create_block(),
        );
        lower.b.ins().jump(head, &[]);

        lower.b.switch_to_block(head);
        let j = lower.b.use_var(index);
        let more = lower.b.ins().icmp(IntCC::UnsignedLessThan, j, hi);
        lower.b.ins().brif(more, choose, &[], finish, &[]);

        lower.b.switch_to_block(choose);
        let left = lower.b.ins().isub(hi, j);
        let enough =
            lower
                .b
                .ins()
                .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, left, BLOCK as i64);
        let mut use_block = lower.b.ins().band(enough, blocks_fit);
        let done = lower.b.ins().isub(j, lo);
        if let Some(extra) = also(lower, done) {
            use_block = lower.b.ins().band(use_block, extra);
        }
        lower.b.ins().brif(use_block, blocks, &[], one, &[]);

        for (at, step, run) in [(blocks, BLOCK, block), (one, 1, single)] {
            lower.b.switch_to_block(at);
            let j = lower.b.use_var(index);
            let done = lower.b.ins().isub(j, lo);
            run(lower, done)?;
            let j = lower.b.use_var(index);
            let j = lower.b.ins().iadd_imm_s(j, step as i64);
            lower.b.def_var(index, j);
            self.advance(lower, step);
            lower.b.ins().jump(head, &[]);
        }

        lower.b.switch_to_block(finish);
        Ok(())
    }

    /// The address of the output element `step` elements along the fastest axis from the
    /// current leaf's (a scan's walk).
    pub(super) fn output_address(&self, lower: &mut Lower<'_, '_>, step: u64) -> Value {
        let (out, cursor) = self.output.as_ref().expect("a scan's walk has an output");
        let last = *out.pitch.last().expect("a scan's output has an axis");
        let cursor = lower.b.use_var(*cursor);
        let delta = lower.b.ins().imul_imm_s(last, step as i64);
        let index = lower.b.ins().iadd(cursor, delta);
        lower.element_address(out.base, index, out.size)
    }

    /// The input position of the current leaf.
    fn position(&self, lower: &mut Lower<'_, '_>) -> Vec<Value> {
        (0..self.u.len())
            .map(|k| {
                let u = lower.b.use_var(self.u[k]);
                lower.b.ins().iadd(self.base[k], u)
            })
            .collect()
    }

    /// The leaf `step` elements along the fastest axis from the current one.
    pub(super) fn leaf(&self, lower: &mut Lower<'_, '_>, ty: &Type, step: u64) -> Vec<Value> {
        match &self.source {
            Source::Stream(stream) => {
                let Some(&last) = stream.pitch.last() else {
                    return lower.zeros(ty); // rank 0 never reaches a backend
                };
                let cursor = lower.b.use_var(self.cursor);
                let delta = lower.b.ins().imul_imm_s(last, step as i64);
                let index = lower.b.ins().iadd(cursor, delta);
                let addr = lower.element_address(stream.base, index, stream.size);
                lower.load_value(ty, addr)
            }
            Source::Iterator { start, end, shape } => {
                let mut at = self.position(lower);
                let last = at.len() - 1;
                at[last] = lower.b.ins().iadd_imm_s(at[last], step as i64);
                crate::lower::launch::iterator_value(lower, start, end, shape, &at)
            }
        }
    }

    /// Moves `by` leaves along the fastest axis, carrying into slower axes at a row's end.
    pub(super) fn advance(&self, lower: &mut Lower<'_, '_>, by: u64) {
        let last = self.u.len() - 1;
        let u = lower.b.use_var(self.u[last]);
        let u = lower.b.ins().iadd_imm_s(u, by as i64);
        lower.b.def_var(self.u[last], u);
        let (wrap, same_row, done) = (
            lower.b.create_block(),
            lower.b.create_block(),
            lower.b.create_block(),
        );
        let at_end = lower.b.ins().icmp(IntCC::Equal, u, self.tile[last]);
        lower.b.ins().brif(at_end, wrap, &[], same_row, &[]);

        lower.b.switch_to_block(same_row);
        if let Source::Stream(stream) = &self.source {
            let cursor = lower.b.use_var(self.cursor);
            let delta = lower.b.ins().imul_imm_s(stream.pitch[last], by as i64);
            let cursor = lower.b.ins().iadd(cursor, delta);
            lower.b.def_var(self.cursor, cursor);
        }
        if let Some((out, cursor)) = &self.output {
            let index = lower.b.use_var(*cursor);
            let delta = lower.b.ins().imul_imm_s(out.pitch[last], by as i64);
            let index = lower.b.ins().iadd(index, delta);
            lower.b.def_var(*cursor, index);
        }
        lower.b.ins().jump(done, &[]);

        lower.b.switch_to_block(wrap);
        let zero = lower.iconst(PTR, 0);
        carry(lower, &self.u, &vec![zero; self.u.len()], &self.tile);
        self.set_cursor(lower);
        lower.b.ins().jump(done, &[]);
        lower.b.switch_to_block(done);
    }
}

/// The counter stack's slots: a cell per level in a stack slot (the shared stack walks cells
/// in memory with one loop over the levels).
fn stack_slots(lower: &mut Lower<'_, '_>, ty: &Type) -> Slots<Value, Variable> {
    let size = lower.module.layout(ty).size.next_multiple_of(8).max(8);
    let levels = counter::slot_count(LEVELS);
    let slot = lower.b.create_sized_stack_slot(StackSlotData::new(
        StackSlotKind::ExplicitSlot,
        size * levels as u32,
        3,
    ));
    let base = lower.b.ins().stack_addr(PTR, slot, 0);
    Slots::Memory {
        base,
        size,
        levels,
        ty: ty.clone(),
        layout: leaves(lower.module, ty),
    }
}

/// Reduces `BLOCK` values as the aligned tree, in registers.
fn block_tree(
    lower: &mut Lower<'_, '_>,
    roles: &Roles,
    acc: &[Variable],
    mut nodes: Vec<Vec<Value>>,
) -> Result<Vec<Value>, CompileError> {
    while nodes.len() > 1 {
        let mut next = Vec::with_capacity(nodes.len() / 2);
        let mut pairs = nodes.into_iter();
        while let (Some(left), Some(right)) = (pairs.next(), pairs.next()) {
            next.push(combine(lower, roles, acc, &left, right)?);
        }
        nodes = next;
    }
    Ok(nodes.pop().unwrap_or_default())
}

/// The canonical tree's node over the `BLOCK` leaves from the walk's current one: in SIMD
/// lanes where the value is one packable scalar or four and the leaves lie in a row of unit pitch
/// ([`crate::cpu::lower::spmd::combine`]), else one combine at a time in registers.
fn block_node(
    lower: &mut Lower<'_, '_>,
    variant: &Variant,
    roles: &Roles,
    acc: &[Variable],
    walk: &Walk,
    in_lanes: bool,
) -> Result<Vec<Value>, CompileError> {
    use crate::cpu::lower::spmd::combine;
    let lanes = combine::lane_kind(lower.module, lower.kernel, &lower.tuning).filter(|_| in_lanes);
    let (Some(value), Source::Stream(stream)) = (lanes, &walk.source) else {
        let values: Vec<Vec<Value>> = (0..BLOCK).map(|i| walk.leaf(lower, &roles.ty, i)).collect();
        return block_tree(lower, roles, acc, values);
    };
    let pitch = *stream
        .pitch
        .last()
        .expect("a reduction's input has an axis");
    let (in_lanes, one_by_one, join) = (
        lower.b.create_block(),
        lower.b.create_block(),
        lower.b.create_block(),
    );
    for _ in 0..value.width {
        lower.b.append_block_param(join, clif_type(value.kind));
    }
    let unit = lower.b.ins().icmp_imm_s(IntCC::Equal, pitch, 1);
    lower.b.ins().brif(unit, in_lanes, &[], one_by_one, &[]);

    lower.b.switch_to_block(in_lanes);
    let cursor = lower.b.use_var(walk.cursor);
    let addr = lower.element_address(stream.base, cursor, stream.size);
    let root = combine::block_in_lanes(lower, variant, (roles.input, roles.target), value, addr)?;
    let args: Vec<_> = root.iter().map(|&v| v.into()).collect();
    lower.b.ins().jump(join, &args);

    lower.b.switch_to_block(one_by_one);
    let values: Vec<Vec<Value>> = (0..BLOCK).map(|i| walk.leaf(lower, &roles.ty, i)).collect();
    let node = block_tree(lower, roles, acc, values)?;
    let args: Vec<_> = node.iter().map(|&v| v.into()).collect();
    lower.b.ins().jump(join, &args);

    lower.b.switch_to_block(join);
    Ok(lower.b.block_params(join).to_vec())
}

/// `fn(block, target, lo, hi, out)`.
/// With `in_lanes`, blocks of leaves are reduced in SIMD lanes where
/// [`crate::cpu::lower::spmd::combine::lane_kind`] allows.
pub fn build_range(
    lower: &mut Lower<'_, '_>,
    params: &[Value],
    layout: &BlockLayout,
    variant: &Variant,
    in_lanes: bool,
) -> Result<(), CompileError> {
    let (target, lo, hi, out) = (params[1], params[2], params[3], params[4]);
    bind_params(lower, layout, variant);
    let roles = roles(lower)?;
    let acc = accumulator(lower, &roles);
    let walk = Walk::new(lower, &roles, layout, variant, (target, lo), None);
    let slots = stack_slots(lower, &roles.ty);
    let mut combine_step = |lower: &mut Lower<'_, '_>, left: &[Value], right: &[Value]| {
        combine(lower, &roles, &acc, left, right.to_vec())
    };
    let block_level = BLOCK.trailing_zeros() as usize;
    walk.over_leaves(
        lower,
        (lo, hi),
        |_, _| None,
        &mut |lower, done| {
            let node = block_node(lower, variant, &roles, &acc, &walk, in_lanes)?;
            let blocks_done = lower.b.ins().ushr_imm_u(done, block_level as i64);
            counter::insert(
                lower,
                &slots,
                block_level,
                blocks_done,
                node,
                &mut |l, a, b| combine(l, &roles, &acc, a, b.to_vec()),
            )
        },
        &mut |lower, done| {
            let leaf = walk.leaf(lower, &roles.ty, 0);
            counter::insert(lower, &slots, 0, done, leaf, &mut |l, a, b| {
                combine(l, &roles, &acc, a, b.to_vec())
            })
        },
    )?;
    let layout = leaves(lower.module, &roles.ty);
    let result_vars: Vec<Variable> = layout
        .iter()
        .map(|leaf| lower.temporary(leaf.kind))
        .collect();
    let has = lower.temporary(ScalarKind::Bool);
    let count = lower.b.ins().isub(hi, lo);
    counter::finish_onto(lower, &slots, count, &result_vars, has, &mut combine_step)?;
    let result: Vec<Value> = result_vars.iter().map(|&v| lower.b.use_var(v)).collect();
    lower.store_leaves(&layout, &result, out);
    lower.b.ins().return_(&[]);
    Ok(())
}
