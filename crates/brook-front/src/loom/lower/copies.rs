//! Several blocks per thread group: a large grid's kernel runs `copies` consecutive LOOM
//! blocks in each IR thread group, one after the other, each thread being the same lane of
//! every one of them; the thread's own elements of the arrays the kernel reads first are
//! loaded for all of them at the start.
//!
//! Why: a LOOM thread that reads one element and then reduces or scans it with its block
//! keeps one load in flight, and a GPU's threads together then cannot cover the memory's
//! latency (`bench/explore/block_collectives.cu`: a block reduce of 2^26 floats in CUDA C
//! reaches about half of copy bandwidth with one element per thread, all of it with four).
//! Reading the elements of four blocks up front keeps four loads in flight.
//!
//! What stays the same: each LOOM block still runs all its statements in order with its own
//! locals and shared arrays, its threads synchronised by its barriers. What moves:
//! - the blocks' top-level statements run in turns (the first of every block, then the
//!   second, ...: [`interleave`]), so a block's collective shares its barrier with the
//!   other blocks';
//! - a read of a thread's own element (`a` at `T`, as a parallel operator's or a
//!   whole-array statement's operand) in the kernel's leading declarations and first
//!   assignment, before anything the block writes, happens before the group's blocks run.
//!
//! Only another block could have written such an element in between, and blocks are not
//! ordered (they run in parallel on a GPU), so no program can tell. Every device runs the
//! same IR, so every device gives the same bits.
//!
//! A kernel runs one block per group when a `return` stands anywhere but at its end, when
//! it declares a `global` array (one per launch), or when the grid has fewer than
//! [`MIN_GROUPS`] groups' worth of blocks (a small grid needs every group it has).

use super::expr::ArrayValue;
use super::{thread_coordinates, ArrayRef, Frame, Lowered, Lowerer};
use crate::loom::ast::{Block, Expr, ExprKind, Func, Space, Stmt, StmtKind};
use crate::loom::check::{Spread, Ty};
use crate::source::Span;
use brook_ir::{Handle, Local, ParamId, Place};

/// The fewest thread groups a grid keeps when its blocks are grouped (enough to fill a large
/// GPU several times over).
pub const MIN_GROUPS: u64 = 1024;

/// How many blocks each thread group runs, the largest of 4, 2 and 1 that divides the
/// blocks and keeps at least [`MIN_GROUPS`] groups, for a kernel that allows it.
pub(super) fn copies_for(func: &Func, grid: super::Grid) -> u32 {
    let [bx, by] = grid.blocks();
    let blocks = u64::from(bx) * u64::from(by);
    if !groupable(&func.body, true) {
        return 1;
    }
    [4u32, 2]
        .into_iter()
        .find(|&k| blocks % u64::from(k) == 0 && blocks / u64::from(k) >= MIN_GROUPS)
        .unwrap_or(1)
}

/// `copies` asked for: 1, 2, 4 or 8, dividing the blocks, for a kernel that allows it.
pub(super) fn checked_copies(func: &Func, grid: super::Grid, copies: u32) -> Lowered<u32> {
    let [bx, by] = grid.blocks();
    let blocks = u64::from(bx) * u64::from(by);
    if ![1, 2, 4, 8].contains(&copies) || blocks % u64::from(copies) != 0 {
        return super::fail(
            func.name.span,
            format!("{copies} blocks per group: the number is 1, 2, 4 or 8 and divides the grid's {blocks} blocks"),
        );
    }
    if copies > 1 && !groupable(&func.body, true) {
        return super::fail(
            func.name.span,
            "this kernel runs one block per group: it returns before its end or declares a `global` array",
        );
    }
    Ok(copies)
}

/// No `global` declaration, and a `return` only as the last statement of the kernel.
fn groupable(block: &Block, top: bool) -> bool {
    every_statement(block, top, &|stmt, last| match &stmt.kind {
        StmtKind::Return(_) => last,
        StmtKind::Decl(decl) => decl.space != Space::Global,
        _ => true,
    })
}

/// A `return` only as the last statement of the kernel: every thread runs the whole body.
pub(super) fn returns_only_at_end(body: &Block) -> bool {
    every_statement(body, true, &|stmt, last| {
        !matches!(stmt.kind, StmtKind::Return(_)) || last
    })
}

/// Whether `holds(stmt, last)` holds for every statement of `block` and of the blocks it
/// nests, `last` telling whether the statement ends the kernel's body (`top`: `block` is it).
fn every_statement(block: &Block, top: bool, holds: &dyn Fn(&Stmt, bool) -> bool) -> bool {
    let end = block.stmts.len().saturating_sub(1);
    block.stmts.iter().enumerate().all(|(i, stmt)| {
        holds(stmt, top && i == end)
            && match &stmt.kind {
                StmtKind::If {
                    then, otherwise, ..
                } => {
                    every_statement(then, false, holds)
                        && otherwise
                            .as_ref()
                            .is_none_or(|b| every_statement(b, false, holds))
                }
                StmtKind::While { body, .. } | StmtKind::For { body, .. } => {
                    every_statement(body, false, holds)
                }
                _ => true,
            }
    })
}

/// A thread's own element of a kernel array, loaded at the kernel's start for one block.
pub(super) struct Preload {
    copy: usize,
    param: ParamId,
    array: ArrayRef,
    local: Handle<Local>,
    span: Span,
}

impl Lowerer<'_> {
    /// The kernel's body once per block of the group, after the loads of the elements the
    /// blocks read first.
    pub(super) fn grouped_body(&mut self, func: &Func) -> Lowered<()> {
        let params = self
            .frames
            .last()
            .map(|f| f.bindings.clone())
            .unwrap_or_default();
        let stmts = match func.body.stmts.split_last() {
            Some((last, rest)) if matches!(last.kind, StmtKind::Return(_)) => rest,
            _ => &func.body.stmts[..],
        };
        let s = super::source_span(func.span);
        let mut bodies = Vec::new();
        for copy in 0..self.copies as usize {
            if copy > 0 {
                self.coords =
                    thread_coordinates(&mut self.b, self.grid, copy as u32, self.copies, s);
            }
            self.copy_coords.push(self.coords);
            self.frames.push(Frame {
                bindings: params.clone(),
                ret: None,
                loops: 0,
            });
            self.b.open_block();
            let result = self.copy_body(copy, stmts);
            bodies.push(self.b.close_block());
            self.frames.pop();
            result?;
        }
        self.preload_window = None;
        for p in std::mem::take(&mut self.preloads) {
            self.coords = self.copy_coords[p.copy];
            let value = self.own_element(
                &ArrayValue::Ref {
                    spreads: own_spreads(&p.array),
                    array: p.array,
                    start: None,
                    len: None,
                    safe: false,
                },
                p.span,
            )?;
            self.b
                .store(Place::local(p.local), value, super::source_span(p.span));
        }
        self.b.splice(interleave(bodies));
        Ok(())
    }

    /// One block's statements. Its reads are preloaded through its leading declarations and
    /// its first assignment, whose reads all come before its one store, as long as none of
    /// them passes an array to a device function (which may write it): nothing the block
    /// writes can be read early.
    fn copy_body(&mut self, copy: usize, stmts: &[Stmt]) -> Lowered<()> {
        self.preload_window = Some(copy);
        for stmt in stmts {
            let reads_first = match &stmt.kind {
                StmtKind::Decl(decl) => decl.init.as_ref().is_none_or(|e| !self.passes_array(e)),
                StmtKind::Assign { target, value, .. } => {
                    !self.passes_array(target) && !self.passes_array(value)
                }
                _ => false,
            };
            if !reads_first {
                self.preload_window = None;
            }
            self.statement(stmt)?;
            if !matches!(stmt.kind, StmtKind::Decl(_)) {
                self.preload_window = None;
            }
        }
        self.preload_window = None;
        Ok(())
    }

    /// Whether `e` calls a device function with an array argument.
    fn passes_array(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Call { args, .. } => args
                .iter()
                .any(|a| matches!(self.ty_of(a), Ty::Array { .. }) || self.passes_array(a)),
            ExprKind::Unary { arg, .. } => self.passes_array(arg),
            ExprKind::Binary { left, right, .. } => {
                self.passes_array(left) || self.passes_array(right)
            }
            ExprKind::Tagged { value, .. } => self.passes_array(value),
            ExprKind::Index { base, indices, .. } => {
                self.passes_array(base) || indices.iter().any(|i| self.passes_array(i))
            }
            ExprKind::Field { base, .. } => self.passes_array(base),
            ExprKind::Parallel { array, .. } => self.passes_array(array),
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Name(_)
            | ExprKind::Thread(_) => false,
        }
    }

    /// Whether reading `array` at the thread's own position would be preloaded now.
    pub(super) fn reads_preloaded(&self, array: &ArrayValue) -> bool {
        self.preload_window.is_some()
            && matches!(array, ArrayValue::Ref { array: a @ ArrayRef::Global { .. }, start: None, len: None, safe: false, spreads } if *spreads == own_spreads(a))
    }

    /// The local holding this thread's preloaded element of `array`, when the array is read
    /// at the thread's own position (`T`, or `X_T, Y_T`) while preloading is open.
    pub(super) fn preloaded(&mut self, array: &ArrayValue, span: Span) -> Option<Handle<Local>> {
        let copy = self.preload_window?;
        let ArrayValue::Ref {
            array: array @ ArrayRef::Global { param, .. },
            start: None,
            len: None,
            safe: false,
            spreads,
        } = array
        else {
            return None;
        };
        if *spreads != own_spreads(array) {
            return None;
        }
        if let Some(p) = self
            .preloads
            .iter()
            .find(|p| p.copy == copy && p.param == *param)
        {
            return Some(p.local);
        }
        let ty = self.b.params[param.0 as usize].ty.clone();
        let local = self
            .b
            .new_local("preload", ty, false, super::source_span(span));
        self.preloads.push(Preload {
            copy,
            param: *param,
            array: array.clone(),
            local,
            span,
        });
        Some(local)
    }
}

/// The blocks' statements in turns: the first statement of every block, then the second of
/// every block, and so on, where the bodies have the same statements (they always have:
/// one source lowered once per block); else one body after another. Independent
/// collectives then stand side by side, and a backend can share their barriers
/// ([`brook_ir::collective::independent_run`]).
fn interleave(bodies: Vec<brook_ir::Block>) -> brook_ir::Block {
    let shape = |b: &brook_ir::Block| -> Vec<std::mem::Discriminant<brook_ir::Stmt>> {
        b.iter().map(|s| std::mem::discriminant(&s.stmt)).collect()
    };
    let alike = bodies.windows(2).all(|w| shape(&w[0]) == shape(&w[1]));
    let mut out = brook_ir::Block::new();
    if !alike {
        out.0 = bodies.into_iter().flat_map(|b| b.0).collect();
        return out;
    }
    let mut iters: Vec<_> = bodies.into_iter().map(|b| b.0.into_iter()).collect();
    while let Some(first) = iters.first_mut().and_then(Iterator::next) {
        out.0.push(first);
        out.0
            .extend(iters[1..].iter_mut().filter_map(Iterator::next));
    }
    out
}

/// The spreads of an array indexed by the thread's own position (`THREADS`, or `X_THREADS,
/// Y_THREADS`).
fn own_spreads(array: &ArrayRef) -> Vec<Spread> {
    use crate::loom::token::Axis;
    match array.dims().len() {
        2 => vec![
            Spread::Threads(Some(Axis::X)),
            Spread::Threads(Some(Axis::Y)),
        ],
        _ => vec![Spread::Threads(None)],
    }
}
