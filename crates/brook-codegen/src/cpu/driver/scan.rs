//! Scans in the canonical order of `brook_ir::scan_order`, compiled: `brook_ir`'s
//! `scan_serial` written out in Cranelift, with the reduce body inlined at every combine.
//!
//! `fn(block, target, lo, hi, before, exclusive)` scans leaves `lo..hi` of target `target`'s
//! tile (a row, or the whole stream), an aligned piece, from `before` (the exclusive prefix of
//! leaf `lo`; null: nothing comes before it), writing every leaf's prefix (exclusive when
//! `exclusive` is not 0) at the leaf's place in the output stream (the reduction target,
//! bound with the input's shape). An exclusive prefix that is nothing is not written.
//!
//! The state is `scan_serial`'s: per level `k` of a stack in memory, the waiting aligned block
//! of `2^k` leaves, `above[k]` (the fold of the prefix and every older waiting block) and
//! whether `above[k]` is anything; and `e`, the exclusive prefix of the next leaf. Where the
//! tile's rows allow it, [`BLOCK`] leaves at a time are scanned with their in-block levels in
//! registers: the combines inside an aligned block do not depend on where it lies, so they
//! are written out once, and only the block's total climbs the stack in memory.

use super::reduce::{accumulator, combine, roles, Roles, Walk, BLOCK};
use crate::abi::{BlockLayout, Variant};
use crate::cpu::layout::{clif_type, leaves};
use crate::cpu::lower::{bind_params, Lower, PTR};
use crate::leaves::Leaf;
use crate::lower::binding::stream_ref;
use crate::lower::counter::{slot_count, LEVELS};
use crate::CompileError;
use cranelift_codegen::ir::{
    condcodes::IntCC, types, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Value,
};
use cranelift_frontend::Variable;
use std::collections::HashMap;

/// The levels of a [`BLOCK`] of leaves, kept in registers.
const BLOCK_LEVELS: u32 = BLOCK.trailing_zeros();

/// One scan function being built: the operator, the walk, the stack and the prefix `e`.
struct Scan<'a> {
    roles: &'a Roles,
    acc: &'a [Variable],
    layout: Vec<Leaf>,
    walk: Walk,
    /// Whether prefixes are exclusive (a bool value of the entry block).
    exclusive: Value,
    /// The stack's cells: `[block][above][has above: u64]`, `cell` bytes a level.
    stack: Value,
    value_bytes: u32,
    cell: u32,
    /// The exclusive prefix of the next leaf, and whether it is anything (an `I8` 0 or 1).
    e: Vec<Variable>,
    has_e: Variable,
}

/// `fn(block, target, lo, hi, before, exclusive)`.
pub fn build_scan(
    lower: &mut Lower<'_, '_>,
    params: &[Value],
    layout: &BlockLayout,
    variant: &Variant,
) -> Result<(), CompileError> {
    let (target, lo, hi, before, exclusive) =
        (params[1], params[2], params[3], params[4], params[5]);
    bind_params(lower, layout, variant);
    let roles = roles(lower)?;
    let acc = accumulator(lower, &roles);
    let size = lower.module.layout(&roles.ty).size;
    let output = stream_ref(lower, layout.param_offset(roles.target), variant.rank, size);
    let walk = Walk::new(lower, &roles, layout, variant, (target, lo), Some(output));
    let exclusive = lower.b.ins().icmp_imm_s(IntCC::NotEqual, exclusive, 0);
    let value_bytes = size.next_multiple_of(8).max(8);
    let cell = 2 * value_bytes + 8;
    let slot = lower.b.create_sized_stack_slot(StackSlotData::new(
        StackSlotKind::ExplicitSlot,
        cell * slot_count(LEVELS) as u32,
        3,
    ));
    let stack = lower.b.ins().stack_addr(PTR, slot, 0);
    let layout = leaves(lower.module, &roles.ty);
    let e = layout
        .iter()
        .map(|leaf| {
            let zero = lower.zero(leaf.kind);
            lower.var_with(clif_type(leaf.kind), zero)
        })
        .collect();
    let no = lower.iconst(types::I8, 0);
    let has_e = lower.var_with(types::I8, no);
    let mut scan = Scan {
        roles: &roles,
        acc: &acc,
        layout,
        walk,
        exclusive,
        stack,
        value_bytes,
        cell,
        e,
        has_e,
    };
    scan.start_from(lower, before);
    scan.walk_leaves(lower, lo, hi)?;
    lower.b.ins().return_(&[]);
    Ok(())
}

impl Scan<'_> {
    /// `e = *before` where `before` is not null.
    fn start_from(&mut self, lower: &mut Lower<'_, '_>, before: Value) {
        let (load, go) = (lower.b.create_block(), lower.b.create_block());
        lower.b.ins().brif(before, load, &[], go, &[]);
        lower.b.switch_to_block(load);
        let value = lower.load_value(&self.roles.ty, before);
        self.set_e(lower, &value);
        lower.b.ins().jump(go, &[]);
        lower.b.switch_to_block(go);
    }

    fn set_e(&self, lower: &mut Lower<'_, '_>, value: &[Value]) {
        for (&var, &v) in self.e.iter().zip(value) {
            lower.b.def_var(var, v);
        }
        let yes = lower.iconst(types::I8, 1);
        lower.b.def_var(self.has_e, yes);
    }

    fn combine(
        &self,
        lower: &mut Lower<'_, '_>,
        left: &[Value],
        right: &[Value],
    ) -> Result<Vec<Value>, CompileError> {
        combine(lower, self.roles, self.acc, left, right.to_vec())
    }

    /// `combine(left, right)` where `has_left` holds, else `right`.
    fn fold(
        &self,
        lower: &mut Lower<'_, '_>,
        has_left: Value,
        left: &[Value],
        right: &[Value],
    ) -> Result<Vec<Value>, CompileError> {
        let (with, without, join) = (
            lower.b.create_block(),
            lower.b.create_block(),
            lower.b.create_block(),
        );
        for leaf in &self.layout {
            lower.b.append_block_param(join, clif_type(leaf.kind));
        }
        lower.b.ins().brif(has_left, with, &[], without, &[]);
        lower.b.switch_to_block(with);
        let merged = self.combine(lower, left, right)?;
        let args: Vec<_> = merged.iter().map(|&v| v.into()).collect();
        lower.b.ins().jump(join, &args);
        lower.b.switch_to_block(without);
        let args: Vec<_> = right.iter().map(|&v| v.into()).collect();
        lower.b.ins().jump(join, &args);
        lower.b.switch_to_block(join);
        Ok(lower.b.block_params(join).to_vec())
    }

    /// Stores the prefix of the leaf `step` places past the walk's: `exclusive` if the scan
    /// is exclusive, else `inclusive`.
    fn store_prefix(
        &self,
        lower: &mut Lower<'_, '_>,
        step: u64,
        exclusive: &[Value],
        inclusive: &[Value],
    ) {
        let chosen: Vec<Value> = exclusive
            .iter()
            .zip(inclusive)
            .map(|(&e, &i)| lower.b.ins().select(self.exclusive, e, i))
            .collect();
        let addr = self.walk.output_address(lower, step);
        lower.store_leaves(&self.layout, &chosen, addr);
    }

    /// The address of level `level`'s cell (an index value).
    fn cell_at(&self, lower: &mut Lower<'_, '_>, level: Value) -> Value {
        let offset = lower.b.ins().imul_imm_s(level, i64::from(self.cell));
        lower.b.ins().iadd(self.stack, offset)
    }

    /// Pushes `carry`, the aligned block number `units` of `2^first` leaves, onto the stack
    /// in memory (its levels below `first` are empty), with `over` the fold of everything
    /// before it (`has_over`: whether that is anything); then `e` is the prefix after it.
    fn push(
        &self,
        lower: &mut Lower<'_, '_>,
        (first, units): (u32, Value),
        carry: &[Value],
        (over, has_over): (&[Value], Value),
    ) -> Result<(), CompileError> {
        let vars = |lower: &mut Lower<'_, '_>, values: &[Value]| -> Vec<Variable> {
            values
                .iter()
                .zip(&self.layout)
                .map(|(&v, leaf)| lower.var_with(clif_type(leaf.kind), v))
                .collect()
        };
        let read = |lower: &mut Lower<'_, '_>, vars: &[Variable]| -> Vec<Value> {
            vars.iter().map(|&v| lower.b.use_var(v)).collect()
        };
        let carry_vars = vars(lower, carry);
        let over_vars = vars(lower, over);
        let has_over = lower.var_with(types::I8, has_over);
        let start = lower.iconst(PTR, i64::from(first));
        let level = lower.var_with(PTR, start);
        let (head, climb, land) = (
            lower.b.create_block(),
            lower.b.create_block(),
            lower.b.create_block(),
        );
        lower.b.ins().jump(head, &[]);

        lower.b.switch_to_block(head);
        let at = lower.b.use_var(level);
        let shift = lower.b.ins().iadd_imm_s(at, -i64::from(first));
        let bits = lower.b.ins().ushr(units, shift);
        let bit = lower.b.ins().band_imm_u(bits, 1);
        lower.b.ins().brif(bit, climb, &[], land, &[]);

        lower.b.switch_to_block(climb);
        let cell = self.cell_at(lower, at);
        let older = lower.load_value(&self.roles.ty, cell);
        let newer = read(lower, &carry_vars);
        let merged = self.combine(lower, &older, &newer)?;
        for (&var, &v) in carry_vars.iter().zip(&merged) {
            lower.b.def_var(var, v);
        }
        let above = lower.b.ins().iadd_imm_s(cell, i64::from(self.value_bytes));
        let above = lower.load_value(&self.roles.ty, above);
        for (&var, &v) in over_vars.iter().zip(&above) {
            lower.b.def_var(var, v);
        }
        let flag = lower.b.ins().load(
            types::I8,
            MemFlagsData::trusted(),
            cell,
            (2 * self.value_bytes) as i32,
        );
        lower.b.def_var(has_over, flag);
        let at = lower.b.use_var(level);
        let up = lower.b.ins().iadd_imm_s(at, 1);
        lower.b.def_var(level, up);
        lower.b.ins().jump(head, &[]);

        lower.b.switch_to_block(land);
        let at = lower.b.use_var(level);
        let cell = self.cell_at(lower, at);
        let carry = read(lower, &carry_vars);
        let over = read(lower, &over_vars);
        let has = lower.b.use_var(has_over);
        lower.store_leaves(&self.layout, &carry, cell);
        let above = lower.b.ins().iadd_imm_s(cell, i64::from(self.value_bytes));
        lower.store_leaves(&self.layout, &over, above);
        lower.b.ins().store(
            MemFlagsData::trusted(),
            has,
            cell,
            (2 * self.value_bytes) as i32,
        );
        let next = self.fold(lower, has, &over, &carry)?;
        self.set_e(lower, &next);
        Ok(())
    }

    /// The loop over leaves `lo..hi`: a [`BLOCK`] at a time where the rows allow it and `e`
    /// is something (after the piece's first leaf at the latest), else one at a time.
    fn walk_leaves(
        &self,
        lower: &mut Lower<'_, '_>,
        lo: Value,
        hi: Value,
    ) -> Result<(), CompileError> {
        self.walk.over_leaves(
            lower,
            (lo, hi),
            |lower, done| {
                let in_block = lower.b.ins().band_imm_u(done, BLOCK as i64 - 1);
                let at_block = lower.b.ins().icmp_imm_s(IntCC::Equal, in_block, 0);
                let has_e = lower.b.use_var(self.has_e);
                let has_e = lower.b.ins().icmp_imm_s(IntCC::NotEqual, has_e, 0);
                Some(lower.b.ins().band(at_block, has_e))
            },
            &mut |lower, done| self.block(lower, done),
            &mut |lower, done| self.single(lower, done),
        )
    }

    /// Leaf number `n` of the piece, alone: its prefix is written (an exclusive one only
    /// where it is something), then it is pushed from level 0.
    fn single(&self, lower: &mut Lower<'_, '_>, n: Value) -> Result<(), CompileError> {
        let x = self.walk.leaf(lower, &self.roles.ty, 0);
        let e: Vec<Value> = self.e.iter().map(|&v| lower.b.use_var(v)).collect();
        let has = lower.b.use_var(self.has_e);
        let inclusive = self.fold(lower, has, &e, &x)?;
        let (write, skip) = (lower.b.create_block(), lower.b.create_block());
        let inclusive_scan = lower.b.ins().bxor_imm_u(self.exclusive, 1);
        let something = lower.b.ins().bor(has, inclusive_scan);
        lower.b.ins().brif(something, write, &[], skip, &[]);
        lower.b.switch_to_block(write);
        self.store_prefix(lower, 0, &e, &inclusive);
        lower.b.ins().jump(skip, &[]);
        lower.b.switch_to_block(skip);
        self.push(lower, (0, n), &x, (&e, has))
    }

    /// An aligned block of [`BLOCK`] leaves from leaf number `n` of the piece, with `e`
    /// something: `scan_serial` over the block's levels is followed at compile time (each
    /// combine written once, [`Unrolled`]), and the block's total is pushed from level
    /// [`BLOCK_LEVELS`] with `e` as the fold before it.
    fn block(&self, lower: &mut Lower<'_, '_>, n: Value) -> Result<(), CompileError> {
        let e0: Vec<Value> = self.e.iter().map(|&v| lower.b.use_var(v)).collect();
        let xs: Vec<Vec<Value>> = (0..BLOCK)
            .map(|i| self.walk.leaf(lower, &self.roles.ty, i))
            .collect();
        let mut unrolled = Unrolled::default();
        let e0 = unrolled.value(e0);
        let xs: Vec<usize> = xs.into_iter().map(|x| unrolled.value(x)).collect();
        let mut e = e0;
        let mut slots: Vec<Option<(usize, usize)>> = vec![None; BLOCK_LEVELS as usize];
        for (j, &x) in xs.iter().enumerate() {
            let inclusive = unrolled.combine(lower, self, e, x)?;
            let (exclusive, inclusive) = (unrolled.get(e), unrolled.get(inclusive));
            self.store_prefix(lower, j as u64, &exclusive, &inclusive);
            let (mut carry, mut over) = (x, e);
            let mut level = 0;
            while j >> level & 1 == 1 && level < BLOCK_LEVELS as usize {
                let (older, above) = slots[level].take().expect("a set bit's block waits");
                carry = unrolled.combine(lower, self, older, carry)?;
                over = above;
                level += 1;
            }
            if level == BLOCK_LEVELS as usize {
                let units = lower.b.ins().ushr_imm_u(n, i64::from(BLOCK_LEVELS));
                let yes = lower.iconst(types::I8, 1);
                let (carry, over) = (unrolled.get(carry), unrolled.get(over));
                return self.push(lower, (BLOCK_LEVELS, units), &carry, (&over, yes));
            }
            e = unrolled.combine(lower, self, over, carry)?;
            slots[level] = Some((carry, over));
        }
        unreachable!("the block's last leaf carries through every in-block level")
    }
}

/// The values of an unrolled block, each combine of two of them made once.
#[derive(Default)]
struct Unrolled {
    values: Vec<Vec<Value>>,
    combined: HashMap<(usize, usize), usize>,
}

impl Unrolled {
    fn value(&mut self, leaves: Vec<Value>) -> usize {
        self.values.push(leaves);
        self.values.len() - 1
    }

    fn get(&self, id: usize) -> Vec<Value> {
        self.values[id].clone()
    }

    fn combine(
        &mut self,
        lower: &mut Lower<'_, '_>,
        scan: &Scan<'_>,
        left: usize,
        right: usize,
    ) -> Result<usize, CompileError> {
        if let Some(&id) = self.combined.get(&(left, right)) {
            return Ok(id);
        }
        let merged = scan.combine(lower, &self.values[left], &self.values[right])?;
        let id = self.value(merged);
        self.combined.insert((left, right), id);
        Ok(id)
    }
}
