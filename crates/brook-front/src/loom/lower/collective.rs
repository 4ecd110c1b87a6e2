//! Block collectives (section 3.5.1): `f /. a` and the scans `f /: a`, `f :/ a` over the
//! current block's elements, through a shared scratch array with barriers.
//!
//! A reduce combines the canonical tree of `brook_ir::reduce_order` over the lanes (pairs,
//! then pairs of pairs; a partial tail joins at the end), so a block reduce gives the bits of
//! a Brook reduction of the same elements. For a power-of-two block each thread puts its
//! element at its lane's bit-reversed position: the tree's pairs are then `x[p]` and
//! `x[p + half]` for `p < half`, halving each step (contiguous threads and memory). Otherwise
//! each element sits at its lane and, at stride `s`, lane `l` with `l % 2s == 0` takes
//! `f(x[l], x[l + s])` when `l + s` is in the block. The scans combine at doubling
//! distances (Hillis and Steele): at distance `s`, lane `l` takes `f(x[l - s], x[l])` (from
//! the right: `f(x[l], x[l + s])`), operand order kept, in one buffer: everyone reads, a
//! barrier, everyone writes, a barrier (measured faster on an H100 than two buffers with one
//! barrier a step, whose extra shared array every block zeroes at its start). The order is fixed by the block's size
//! alone, so every device gives the same bits. For a 2-D array the collectives run along the
//! first index, for each value of the second.
//!
//! Every thread of the block must reach a collective (as with CUDA's `__syncthreads`).

use super::expr::ArrayValue;
use super::{fail, source_span, ArrayRef, Lowered, Lowerer};
use crate::loom::ast::{Expr, ParallelOp};
use crate::loom::check::{Spread, Ty};
use crate::loom::token::Axis;
use brook_ir::{BinaryOp, Handle, Place, ScalarKind};

type IrExpr = brook_ir::Expr;

/// The scratch array of one collective and the thread's position in it.
struct Scratch {
    array: ArrayRef,
    /// Lanes along the combining axis.
    lanes: u32,
    /// 2-D: the array is `[lanes, columns]`, indexed by (lane along X, lane along Y).
    two_d: bool,
}

impl Lowerer<'_> {
    pub(super) fn reduce(&mut self, e: &Expr, operand: &ArrayValue) -> Lowered<Handle<IrExpr>> {
        let s = source_span(e.span);
        let elem = self.ty_of(e).clone();
        let lanes = self.lanes(operand);
        let reversed = lanes.is_power_of_two();
        let scratch = self.fill_scratch(e, operand, &elem, reversed)?;
        let callee = self.callee_of(e)?;
        if reversed {
            let mut half = lanes / 2;
            while half > 0 {
                let lane = self.lane_along(&scratch, e);
                let bound = self.b.int(i64::from(half), s);
                let active = self.b.binary(BinaryOp::Lt, lane, bound, s);
                self.combine_at(&scratch, e, callee, active, i64::from(half))?;
                half /= 2;
            }
        } else {
            let mut stride = 1;
            while stride < lanes {
                let lane = self.lane_along(&scratch, e);
                let step = self.b.int(i64::from(2 * stride), s);
                let rem = self.b.binary(BinaryOp::Rem, lane, step, s);
                let zero = self.b.int(0, s);
                let leader = self.b.binary(BinaryOp::Eq, rem, zero, s);
                let lane = self.lane_along(&scratch, e);
                let partner = self.add_int(lane, stride, e);
                let bound = self.b.int(i64::from(lanes), s);
                let exists = self.b.binary(BinaryOp::Lt, partner, bound, s);
                let active = self.b.binary(BinaryOp::LogicAnd, leader, exists, s);
                self.combine_at(&scratch, e, callee, active, i64::from(stride))?;
                stride *= 2;
            }
        }
        // The result is at lane 0 along the combining axis.
        let idx = self.scratch_index(&scratch, Some(0), e);
        let value = self.load_element(&scratch.array, &idx, false, e.span)?;
        let result = self.b.capture("reduce", value, s);
        // Nobody reuses the scratch before everyone has read it.
        self.b.emit(brook_ir::Stmt::Barrier, s);
        Ok(self.b.load(Place::local(result), s))
    }

    /// `if active { x[l] <- f(x[l], x[l + distance]) }`, then a barrier.
    fn combine_at(
        &mut self,
        scratch: &Scratch,
        e: &Expr,
        callee: crate::loom::check::Callee,
        active: Handle<IrExpr>,
        distance: i64,
    ) -> Lowered<()> {
        self.guarded(Some(active), e.span, |this| {
            let mine = this.scratch_at(scratch, 0, e)?;
            let theirs = this.scratch_at(scratch, distance, e)?;
            let combined = this.apply(callee, vec![mine, theirs], e.span)?;
            this.scratch_store(scratch, combined, e);
            Ok(())
        })?;
        self.b.emit(brook_ir::Stmt::Barrier, source_span(e.span));
        Ok(())
    }

    /// How many lanes a collective over this array combines.
    fn lanes(&self, operand: &ArrayValue) -> u32 {
        if operand.spreads().len() == 2 {
            self.grid.block[0]
        } else {
            self.grid.block_threads()
        }
    }

    pub(super) fn scan(
        &mut self,
        e: &Expr,
        op: ParallelOp,
        operand: &ArrayValue,
    ) -> Lowered<ArrayValue> {
        let s = source_span(e.span);
        let Ty::Array { elem, .. } = self.ty_of(e).clone() else {
            return fail(e.span, "a scan whose result is not an array");
        };
        let scratch = self.fill_scratch(e, operand, &elem, false)?;
        let callee = self.callee_of(e)?;
        let mut distance = 1;
        while distance < scratch.lanes {
            let mine = self.scratch_at(&scratch, 0, e)?;
            let held = self.b.capture("scan", mine, s);
            let lane = self.lane_along(&scratch, e);
            let takes = match op {
                ParallelOp::ScanLeft => {
                    let d = self.b.int(i64::from(distance), s);
                    self.b.binary(BinaryOp::Ge, lane, d, s)
                }
                _ => {
                    let partner = self.add_int(lane, distance, e);
                    let lanes = self.b.int(i64::from(scratch.lanes), s);
                    self.b.binary(BinaryOp::Lt, partner, lanes, s)
                }
            };
            self.guarded(Some(takes), e.span, |this| {
                let own = this.b.load(Place::local(held), s);
                let args = match op {
                    ParallelOp::ScanLeft => {
                        vec![this.scratch_at(&scratch, -i64::from(distance), e)?, own]
                    }
                    _ => vec![own, this.scratch_at(&scratch, i64::from(distance), e)?],
                };
                let combined = this.apply(callee, args, e.span)?;
                this.b.store(Place::local(held), combined, s);
                Ok(())
            })?;
            // Everyone has read before anyone writes.
            self.b.emit(brook_ir::Stmt::Barrier, s);
            let value = self.b.load(Place::local(held), s);
            self.scratch_store(&scratch, value, e);
            self.b.emit(brook_ir::Stmt::Barrier, s);
            distance *= 2;
        }
        let spreads = if scratch.two_d {
            vec![Spread::Block(Some(Axis::X)), Spread::Block(Some(Axis::Y))]
        } else {
            vec![Spread::Block(None)]
        };
        Ok(ArrayValue::Ref {
            array: scratch.array,
            start: None,
            len: None,
            safe: false,
            spreads,
        })
    }

    fn callee_of(&self, e: &Expr) -> Lowered<crate::loom::check::Callee> {
        match self.checked.info.callees.get(&e.id) {
            Some(&c) => Ok(c),
            None => fail(
                e.span,
                "a parallel operator whose function the checker did not resolve",
            ),
        }
    }

    /// A shared array with this thread's element at its lane (at its bit-reversed position
    /// when `reversed`), followed by a barrier.
    fn fill_scratch(
        &mut self,
        e: &Expr,
        operand: &ArrayValue,
        elem: &Ty,
        reversed: bool,
    ) -> Lowered<Scratch> {
        let s = source_span(e.span);
        let two_d = operand.spreads().len() == 2;
        let [bx, by] = self.grid.block;
        let (dims, lanes) = if two_d {
            (vec![bx, by], bx)
        } else {
            let n = self.grid.block_threads();
            (vec![n], n)
        };
        let mut ty = self.ir_type(elem, e.span)?;
        for &len in dims.iter().rev() {
            ty = brook_ir::Type::Array {
                elem: Box::new(ty),
                len,
            };
        }
        let local = self.b.new_local("collective", ty, true, s);
        let scratch = Scratch {
            array: ArrayRef::Local {
                local,
                dims: dims.into_iter().map(super::Extent::Fixed).collect(),
                shared: true,
            },
            lanes,
            two_d,
        };
        let mut idx = Vec::new();
        for &spread in operand.spreads() {
            match self.coordinate(spread, e.span) {
                Some(c) => idx.push(c),
                None => {
                    return fail(
                        e.span,
                        "a parallel operator over an array not spread over the threads",
                    )
                }
            }
        }
        let mine = self.element(operand, &idx, false, e.span)?;
        let mine = match self.ir_type(elem, e.span)?.value() {
            Some(v) => self.b.convert(mine, v.kind, s),
            None => mine,
        };
        let mut at = self.scratch_index(&scratch, None, e);
        if reversed {
            at[0] = self.bit_reversed(at[0], scratch.lanes.trailing_zeros(), e);
        }
        self.store_element(&scratch.array, &at, mine, false, e.span);
        self.b.emit(brook_ir::Stmt::Barrier, s);
        Ok(scratch)
    }

    /// The low `bits` bits of `lane` in reverse order.
    fn bit_reversed(&mut self, lane: Handle<IrExpr>, bits: u32, e: &Expr) -> Handle<IrExpr> {
        let s = source_span(e.span);
        let mut result = self.b.int(0, s);
        for bit in 0..bits {
            let shift = self.b.int(i64::from(bit), s);
            let moved = self.b.binary(BinaryOp::Shr, lane, shift, s);
            let one = self.b.int(1, s);
            let digit = self.b.binary(BinaryOp::BitAnd, moved, one, s);
            let to = self.b.int(i64::from(bits - 1 - bit), s);
            let placed = self.b.binary(BinaryOp::Shl, digit, to, s);
            result = self.b.binary(BinaryOp::BitOr, result, placed, s);
        }
        result
    }

    /// The thread's lane along the combining axis.
    fn lane_along(&mut self, scratch: &Scratch, e: &Expr) -> Handle<IrExpr> {
        let axis = if scratch.two_d { Some(Axis::X) } else { None };
        self.coordinate(Spread::Block(axis), e.span)
            .unwrap_or_else(|| self.b.int(0, source_span(e.span)))
    }

    fn add_int(&mut self, value: Handle<IrExpr>, k: u32, e: &Expr) -> Handle<IrExpr> {
        let s = source_span(e.span);
        let k = self.b.int(i64::from(k), s);
        self.b.binary(BinaryOp::Add, value, k, s)
    }

    /// The scratch index `delta` lanes from this thread's along the combining axis (or at
    /// lane `at` when given).
    fn scratch_index(
        &mut self,
        scratch: &Scratch,
        at: Option<i64>,
        e: &Expr,
    ) -> Vec<Handle<IrExpr>> {
        let s = source_span(e.span);
        let lane = match at {
            Some(at) => self.b.int(at, s),
            None => self.lane_along(scratch, e),
        };
        if scratch.two_d {
            let column = self
                .coordinate(Spread::Block(Some(Axis::Y)), e.span)
                .unwrap_or_else(|| self.b.int(0, s));
            vec![lane, column]
        } else {
            vec![lane]
        }
    }

    fn scratch_at(&mut self, scratch: &Scratch, delta: i64, e: &Expr) -> Lowered<Handle<IrExpr>> {
        let s = source_span(e.span);
        let mut idx = self.scratch_index(scratch, None, e);
        if delta != 0 {
            let d = self.b.constant(ScalarKind::I32, delta, s);
            idx[0] = self.b.binary(BinaryOp::Add, idx[0], d, s);
        }
        self.load_element(&scratch.array, &idx, false, e.span)
    }

    fn scratch_store(&mut self, scratch: &Scratch, value: Handle<IrExpr>, e: &Expr) {
        let idx = self.scratch_index(scratch, None, e);
        self.store_element(&scratch.array, &idx, value, false, e.span);
    }
}
