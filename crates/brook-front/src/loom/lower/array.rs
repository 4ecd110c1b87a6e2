//! Whole-array statements (section 3.4: an assignment to an unindexed array is a loop over
//! its elements), distributed over the block's threads:
//!
//! - an array spread over the grid or the block (`[THREADS]`, `[BLOCKS]`, `[]` shared, a
//!   slice by `block(B)`, and their 2-D forms) is written one element per thread: the
//!   thread's own (`T`, `B` or its lane; along a `BLOCKS` axis only the block's first thread
//!   along that axis writes);
//! - a local array is a loop over all its elements in every thread;
//! - any other shared or global array is written by the block's first thread, in a loop.
//!
//! An array on the right is read at the same thread's coordinate for its own spread (so
//! `t <- in[block(B)]` copies a block's slice into a shared array), a value is written to
//! every element. Every statement that writes shared or global memory as a whole is followed
//! by a barrier (section 1.2.1).

use super::expr::{ArrayValue, Val};
use super::{fail, source_span, ArrayRef, Lowered, Lowerer};
use crate::loom::ast::AssignOp;
use crate::loom::check::Spread;
use crate::source::Span;
use brook_ir::{BinaryOp, Handle, Place, ScalarKind};

type IrExpr = brook_ir::Expr;

/// What [`Lowerer::for_each_index`] calls with each index.
type PerIndex<'f, 'a> = dyn FnMut(&mut Lowerer<'a>, &[Handle<IrExpr>]) -> Lowered<()> + 'f;

impl<'a> Lowerer<'a> {
    pub(super) fn assign_array(
        &mut self,
        lhs: &ArrayValue,
        rhs: Val,
        op: AssignOp,
        span: Span,
    ) -> Lowered<()> {
        let s = source_span(span);
        let ArrayValue::Ref {
            array,
            start,
            len,
            safe,
            spreads,
        } = lhs
        else {
            return fail(span, "a mapped array cannot be assigned");
        };
        // A value is evaluated once, before any element is written.
        let rhs = match rhs {
            Val::Scalar(h) => {
                let local = self.b.capture("fill", h, s);
                Val::Scalar(self.b.load(Place::local(local), s))
            }
            other => other,
        };
        let per_thread = matches!(array, ArrayRef::Local { shared: false, .. });
        let spread_out = !per_thread && spreads.iter().all(|sp| *sp != Spread::Other);
        if spread_out {
            let mut coords = Vec::new();
            let mut guards = Vec::new();
            for &spread in spreads {
                coords.push(
                    self.coordinate(spread, span)
                        .unwrap_or_else(|| self.b.int(0, s)),
                );
                if let Spread::Blocks(axis) = spread {
                    guards.push(self.first_lane(axis, span));
                }
            }
            if let Some(len) = len {
                let lane = self
                    .coordinate(Spread::Block(None), span)
                    .unwrap_or_else(|| self.b.int(0, s));
                let n = self.b.load(Place::local(*len), s);
                guards.push(self.b.binary(BinaryOp::Lt, lane, n, s));
            }
            let guard = guards
                .into_iter()
                .reduce(|a, b| self.b.binary(BinaryOp::LogicAnd, a, b, s));
            self.guarded(guard, span, |this| {
                this.write_element(
                    array,
                    start.as_deref(),
                    *safe,
                    spreads,
                    &coords,
                    &rhs,
                    op,
                    span,
                )
            })?;
        } else {
            let guard = if per_thread {
                None
            } else {
                Some(self.first_lane(None, span))
            };
            let dims = array.dims().to_vec();
            self.guarded(guard, span, |this| {
                this.for_each_index(&dims, &mut Vec::new(), span, &mut |this, idx| {
                    this.write_element(array, start.as_deref(), *safe, spreads, idx, &rhs, op, span)
                })
            })?;
        }
        if !per_thread {
            self.b.emit(brook_ir::Stmt::Barrier, s);
        }
        Ok(())
    }

    /// Writes element `coords` of the target from the right side.
    #[allow(clippy::too_many_arguments)]
    fn write_element(
        &mut self,
        array: &ArrayRef,
        start: Option<&[Handle<brook_ir::Local>]>,
        safe: bool,
        spreads: &[Spread],
        coords: &[Handle<IrExpr>],
        rhs: &Val,
        op: AssignOp,
        span: Span,
    ) -> Lowered<()> {
        let s = source_span(span);
        let value = match rhs {
            Val::Scalar(h) => *h,
            Val::Array(source) if source.held_by_lanes() => self.own_element(source, span)?,
            Val::Array(source) if self.reads_preloaded(source) => self.own_element(source, span)?,
            Val::Array(source) => {
                let mut idx = Vec::new();
                for (axis, &own) in source.spreads().iter().enumerate() {
                    let target_spread = spreads.get(axis).copied().unwrap_or(Spread::Other);
                    let c = if own == target_spread || own == Spread::Other {
                        coords.get(axis).copied()
                    } else {
                        self.coordinate(own, span)
                    };
                    idx.push(c.unwrap_or_else(|| self.b.int(0, s)));
                }
                self.element(source, &idx, false, span)?
            }
        };
        let idx = self.offset(coords, start, span);
        let place = self.element_place(array, &idx);
        let kind = self.b.place_type(&place).value().map(|v| v.kind);
        let value = match kind {
            Some(k) => self.b.convert(value, k, s),
            None => value,
        };
        let value = match (op, kind) {
            (AssignOp::Set, _) | (_, None) => value,
            (op, Some(_)) => {
                let current = self.load_element(array, &idx, safe, span)?;
                let ir = match op {
                    AssignOp::Add => BinaryOp::Add,
                    AssignOp::Sub => BinaryOp::Sub,
                    _ => BinaryOp::Mul,
                };
                self.b.binary(ir, current, value, s)
            }
        };
        self.store_element(array, &idx, value, safe, span);
        Ok(())
    }

    /// Whether this thread is its block's first along an axis (`None`: the first of all).
    fn first_lane(&mut self, axis: Option<crate::loom::token::Axis>, span: Span) -> Handle<IrExpr> {
        let s = source_span(span);
        let lane = self
            .coordinate(Spread::Block(axis), span)
            .unwrap_or_else(|| self.b.int(0, s));
        let zero = self.b.int(0, s);
        self.b.binary(BinaryOp::Eq, lane, zero, s)
    }

    /// Runs `f` under `if guard` (or directly without a guard).
    pub(super) fn guarded(
        &mut self,
        guard: Option<Handle<IrExpr>>,
        span: Span,
        f: impl FnOnce(&mut Self) -> Lowered<()>,
    ) -> Lowered<()> {
        let Some(cond) = guard else {
            return f(self);
        };
        self.b.open_block();
        let result = f(self);
        let accept = self.b.close_block();
        result?;
        self.b.emit(
            brook_ir::Stmt::If {
                cond,
                accept,
                reject: brook_ir::Block::new(),
            },
            source_span(span),
        );
        Ok(())
    }

    /// Calls `f` with every index of an array of `dims` (first index slowest), as IR loops.
    pub(super) fn for_each_index(
        &mut self,
        dims: &[super::Extent],
        prefix: &mut Vec<Handle<brook_ir::Local>>,
        span: Span,
        f: &mut PerIndex<'_, 'a>,
    ) -> Lowered<()> {
        let s = source_span(span);
        if prefix.len() == dims.len() {
            let idx: Vec<Handle<IrExpr>> = prefix
                .iter()
                .map(|&l| self.b.load(Place::local(l), s))
                .collect();
            return f(self, &idx);
        }
        let extent = dims[prefix.len()];
        let int = brook_ir::Type::Value(brook_ir::ValueType::scalar(ScalarKind::I32));
        let counter = self.b.new_local("i", int, false, s);
        let zero = self.b.int(0, s);
        self.b.store(Place::local(counter), zero, s);
        self.b.open_block();
        let i = self.b.load(Place::local(counter), s);
        let n = self.extent_value(extent, ScalarKind::I32, span);
        let inside = self.b.binary(BinaryOp::Lt, i, n, s);
        self.break_unless(inside, s);
        prefix.push(counter);
        let result = self.for_each_index(dims, prefix, span, f);
        prefix.pop();
        let body = self.b.close_block();
        result?;
        self.b.open_block();
        let i = self.b.load(Place::local(counter), s);
        let one = self.b.int(1, s);
        let next = self.b.binary(BinaryOp::Add, i, one, s);
        self.b.store(Place::local(counter), next, s);
        let continuing = self.b.close_block();
        self.b.emit(brook_ir::Stmt::Loop { body, continuing }, s);
        Ok(())
    }
}
