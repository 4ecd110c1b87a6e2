//! Block collectives (section 3.5.1): `f /. a` and the scans `f /: a`, `f :/ a` over the
//! current block's elements, as `brook_ir` collectives.
//!
//! Each thread contributes its own element; the function becomes the collective's combining
//! body (inlined once, on two locals). The IR fixes the order (`brook_ir::collective`: the
//! canonical tree for a reduce, so a block reduce gives the bits of a Brook reduction of the
//! same elements; Hillis–Steele in runs of 32 lanes for a scan), and every device gives the
//! same bits. For a 2-D array the collectives run along the first index, for each value of
//! the second: threads are numbered Y fastest, so the lanes are `block[0]` threads
//! `block[1]` apart.
//!
//! A reduce's value is the same in every thread. A scan's result is an array of the block
//! held one element per thread ([`ArrayValue::Lanes`]); reading another thread's element
//! publishes the elements through a shared array first ([`Lowerer::publish`]).
//!
//! Every thread of the block must reach a collective (as with CUDA's `__syncthreads`).

use super::expr::ArrayValue;
use super::{fail, source_span, ArrayRef, Lowered, Lowerer};
use crate::loom::ast::{Expr, ParallelOp};
use crate::loom::check::{Spread, Ty};
use crate::loom::token::Axis;
use crate::source::Span;
use brook_ir::{Collective, CollectiveOp, Combiner, Handle, Place};

type IrExpr = brook_ir::Expr;

impl Lowerer<'_> {
    pub(super) fn reduce(&mut self, e: &Expr, operand: &ArrayValue) -> Lowered<Handle<IrExpr>> {
        let elem = self.ty_of(e).clone();
        let result = self.collective(e, operand, &elem, CollectiveOp::Reduce)?;
        if operand.spreads().len() == 1 {
            // Over the whole block: every thread gets the same value.
            self.block_reduces.push(result);
        }
        Ok(self.b.load(Place::local(result), source_span(e.span)))
    }

    pub(super) fn scan(
        &mut self,
        e: &Expr,
        op: ParallelOp,
        operand: &ArrayValue,
    ) -> Lowered<ArrayValue> {
        let Ty::Array { elem, .. } = self.ty_of(e).clone() else {
            return fail(e.span, "a scan whose result is not an array");
        };
        let op = match op {
            ParallelOp::ScanLeft => CollectiveOp::ScanLeft,
            _ => CollectiveOp::ScanRight,
        };
        let value = self.collective(e, operand, &elem, op)?;
        let spreads = if operand.spreads().len() == 2 {
            vec![Spread::Block(Some(Axis::X)), Spread::Block(Some(Axis::Y))]
        } else {
            vec![Spread::Block(None)]
        };
        Ok(ArrayValue::Lanes { value, spreads })
    }

    /// Emits the collective of this thread's element of `operand`; returns the local that
    /// receives its result.
    fn collective(
        &mut self,
        e: &Expr,
        operand: &ArrayValue,
        elem: &Ty,
        op: CollectiveOp,
    ) -> Lowered<Handle<brook_ir::Local>> {
        let s = source_span(e.span);
        let ty = self.ir_type(elem, e.span)?;
        let kind = ty.value().map(|v| v.kind);
        let mine = self.own_element(operand, e.span)?;
        let mine = match kind {
            Some(k) => self.b.convert(mine, k, s),
            None => mine,
        };
        let callee = self.callee_of(e)?;
        let left = self.b.new_local("left", ty.clone(), false, s);
        let right = self.b.new_local("right", ty.clone(), false, s);
        let out = self.b.new_local("combined", ty.clone(), false, s);
        self.b.open_block();
        let applied = (|| {
            let l = self.b.load(Place::local(left), s);
            let r = self.b.load(Place::local(right), s);
            let combined = self.apply(callee, vec![l, r], e.span)?;
            let combined = match kind {
                Some(k) => self.b.convert(combined, k, s),
                None => combined,
            };
            self.b.store(Place::local(out), combined, s);
            Ok(())
        })();
        let body = self.b.close_block();
        applied?;
        let [bx, by] = self.grid.block;
        let (lanes, stride) = if operand.spreads().len() == 2 {
            (bx, by)
        } else {
            (bx * by, 1)
        };
        let result = self.b.new_local(op.name(), ty, false, s);
        let collective = Collective {
            op,
            lanes,
            stride,
            value: mine,
            combine: Combiner {
                left,
                right,
                body,
                out,
            },
            result,
        };
        self.b
            .emit(brook_ir::Stmt::Collective(Box::new(collective)), s);
        Ok(result)
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

    /// This thread's element of an array spread over the threads: at its own coordinates.
    pub(super) fn own_element(
        &mut self,
        array: &ArrayValue,
        span: Span,
    ) -> Lowered<Handle<IrExpr>> {
        match array {
            ArrayValue::Lanes { value, .. } => {
                Ok(self.b.load(Place::local(*value), source_span(span)))
            }
            ArrayValue::Map { call, inner, span } => {
                let value = self.own_element(inner, *span)?;
                let Some(&callee) = self.checked.info.callees.get(call) else {
                    return fail(*span, "a map whose function the checker did not resolve");
                };
                self.apply(callee, vec![value], *span)
            }
            ArrayValue::Ref { spreads, .. } => {
                if let Some(local) = self.preloaded(array, span) {
                    return Ok(self.b.load(Place::local(local), source_span(span)));
                }
                let mut idx = Vec::new();
                for &spread in spreads {
                    match self.coordinate(spread, span) {
                        Some(c) => idx.push(c),
                        None => {
                            return fail(
                                span,
                                "a parallel operator over an array not spread over the threads",
                            )
                        }
                    }
                }
                self.element(array, &idx, false, span)
            }
        }
    }

    /// An array value whose every element any thread may read: scans' results in it, also
    /// under maps, published ([`Self::publish`]). Maps stay maps: their elements are
    /// computed where they are read.
    pub(super) fn publish_within(&mut self, array: ArrayValue, span: Span) -> Lowered<ArrayValue> {
        match array {
            ArrayValue::Map { call, inner, span } => Ok(ArrayValue::Map {
                call,
                inner: Box::new(self.publish_within(*inner, span)?),
                span,
            }),
            other => self.publish(other, span),
        }
    }

    /// A per-thread array as a shared array of the block: every thread stores its element
    /// at its coordinates, then a barrier. Other arrays are returned as they are.
    pub(super) fn publish(&mut self, array: ArrayValue, span: Span) -> Lowered<ArrayValue> {
        let ArrayValue::Lanes { value, spreads } = array else {
            return Ok(array);
        };
        let s = source_span(span);
        let [bx, by] = self.grid.block;
        let dims = if spreads.len() == 2 {
            vec![bx, by]
        } else {
            vec![bx * by]
        };
        let mut ty = self.b.locals[value].ty.clone();
        for &len in dims.iter().rev() {
            ty = brook_ir::Type::Array {
                elem: Box::new(ty),
                len,
            };
        }
        let local = self.b.new_local("published", ty, true, s);
        let array = ArrayRef::Local {
            local,
            dims: dims.into_iter().map(super::Extent::Fixed).collect(),
            shared: true,
        };
        let mut idx = Vec::new();
        for &spread in &spreads {
            idx.push(
                self.coordinate(spread, span)
                    .unwrap_or_else(|| self.b.int(0, s)),
            );
        }
        let mine = self.b.load(Place::local(value), s);
        self.store_element(&array, &idx, mine, false, span);
        self.b.emit(brook_ir::Stmt::Barrier, s);
        Ok(ArrayValue::Ref {
            array,
            start: None,
            len: None,
            safe: false,
            spreads,
        })
    }
}
