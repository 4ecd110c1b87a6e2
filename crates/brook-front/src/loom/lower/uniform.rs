//! Stores that every thread of a block makes alike, made by one thread.
//!
//! `out[B] <- add /. a` has every thread of the block write the block's reduce (the same
//! bits in every thread) to the same element: the memory afterwards is the same when only
//! the block's first thread writes, and the GPU then makes one store instead of one per warp
//! to one address (measured on an H100: a block reduce of 2^26 floats took 0.121 ms with
//! every thread storing, 0.094 ms with one; `bench/explore/block_collectives.cu`).
//!
//! A thread that did not write the element could read it afterwards and see it before the
//! first thread's store lands, where it would have seen its own store: so this holds only for
//! arrays the kernel never reads, and in kernels whose threads all run to the end (the first
//! thread must not have returned) ([`Lowerer::written_only`]).

use super::Lowerer;
use crate::loom::ast::{Block, Expr, ExprKind, Func, StmtKind};
use crate::loom::check::VarId;
use brook_ir::{Expr as IrExpr, ExprKind as IrKind, Handle, Local, Place, PlaceRoot};

impl Lowerer<'_> {
    /// The kernel's array parameters that it only stores to by plain `<-` at an index (never
    /// reads, never passes to a function, never updates with `+=`); none where a thread may
    /// return before the end (the first thread could be gone when the others store).
    pub(super) fn written_only(&self, func: &Func) -> Vec<VarId> {
        if !super::copies::returns_only_at_end(&func.body) {
            return Vec::new();
        }
        let mut read = Vec::new();
        self.reads_in_block(&func.body, &mut read);
        func.params
            .iter()
            .filter_map(|p| self.declared(&p.name).ok())
            .filter(|v| !read.contains(v))
            .collect()
    }

    fn reads_in_block(&self, block: &Block, read: &mut Vec<VarId>) {
        for stmt in &block.stmts {
            match &stmt.kind {
                StmtKind::Decl(decl) => {
                    if let Some(init) = &decl.init {
                        self.reads_in(init, read);
                    }
                }
                StmtKind::Assign { target, op, value } => {
                    self.reads_in(value, read);
                    match &target.kind {
                        ExprKind::Index { base, indices, .. }
                            if *op == crate::loom::ast::AssignOp::Set
                                && matches!(base.kind, ExprKind::Name(_)) =>
                        {
                            indices.iter().for_each(|i| self.reads_in(i, read));
                        }
                        _ => self.reads_in(target, read),
                    }
                }
                StmtKind::Expr(e) | StmtKind::Return(Some(e)) => self.reads_in(e, read),
                StmtKind::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    self.reads_in(cond, read);
                    self.reads_in_block(then, read);
                    if let Some(b) = otherwise {
                        self.reads_in_block(b, read);
                    }
                }
                StmtKind::While { cond, body } => {
                    self.reads_in(cond, read);
                    self.reads_in_block(body, read);
                }
                StmtKind::For { from, to, body, .. } => {
                    self.reads_in(from, read);
                    self.reads_in(to, read);
                    self.reads_in_block(body, read);
                }
                StmtKind::Break | StmtKind::Continue | StmtKind::Return(None) => {}
            }
        }
    }

    /// Every name `e` mentions counts as read.
    fn reads_in(&self, e: &Expr, read: &mut Vec<VarId>) {
        match &e.kind {
            ExprKind::Name(_) => {
                if let Some(v) = self.checked.info.names.get(&e.id) {
                    read.push(*v);
                }
            }
            ExprKind::Unary { arg, .. } => self.reads_in(arg, read),
            ExprKind::Binary { left, right, .. } => {
                self.reads_in(left, read);
                self.reads_in(right, read);
            }
            ExprKind::Tagged { value, .. } => self.reads_in(value, read),
            ExprKind::Index { base, indices, .. } => {
                self.reads_in(base, read);
                indices.iter().for_each(|i| self.reads_in(i, read));
            }
            ExprKind::Field { base, .. } => self.reads_in(base, read),
            ExprKind::Call { args, .. } => args.iter().for_each(|a| self.reads_in(a, read)),
            ExprKind::Parallel { array, .. } => self.reads_in(array, read),
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Thread(_) => {}
        }
    }

    /// Whether IR expression `h` has one value in every thread of the block: literals, the
    /// block's coordinates, whole-block reduces' results, and operations on them.
    pub(super) fn block_uniform(&self, h: Handle<IrExpr>) -> bool {
        match &self.b.exprs[h].kind {
            IrKind::Literal(_) => true,
            IrKind::Load(Place {
                root: PlaceRoot::Local(l),
                path,
            }) => path.is_empty() && self.uniform_local(*l),
            IrKind::Unary { arg, .. } | IrKind::Convert(arg) => self.block_uniform(*arg),
            IrKind::Binary { left, right, .. } => {
                self.block_uniform(*left) && self.block_uniform(*right)
            }
            IrKind::Select {
                cond,
                accept,
                reject,
            } => {
                self.block_uniform(*cond)
                    && self.block_uniform(*accept)
                    && self.block_uniform(*reject)
            }
            _ => false,
        }
    }

    fn uniform_local(&self, l: Handle<Local>) -> bool {
        self.block_reduces.contains(&l)
            || self.coords().block.contains(&l)
            || self.copy_coords.iter().any(|c| c.block.contains(&l))
    }

    /// `lane == 0` for the block's first thread, and'ed with `guard`, where every thread
    /// would store `value` to `place` of `array` alike; else `guard`.
    pub(super) fn first_thread_stores(
        &mut self,
        array: Option<VarId>,
        place: &Place,
        value: Handle<IrExpr>,
        guard: Option<Handle<IrExpr>>,
        span: crate::source::Span,
    ) -> Option<Handle<IrExpr>> {
        let PlaceRoot::Scatter { indices, .. } = &place.root else {
            return guard;
        };
        let alike = array.is_some_and(|a| self.written_only.contains(&a))
            && place
                .path
                .iter()
                .all(|a| !matches!(a, brook_ir::Access::Index(_)))
            && indices.iter().all(|&i| self.block_uniform(i))
            && self.block_uniform(value);
        if !alike {
            return guard;
        }
        let s = super::source_span(span);
        // The first block's lane (every block's is the same): the guards of a group's blocks
        // then read one local, and [`merge_first_thread_guards`] can join them.
        let lane = self.copy_coords.first().unwrap_or(self.coords()).lane[0];
        let lane = self.b.load(Place::local(lane), s);
        let zero = self.b.int(0, s);
        let first = self.b.binary(brook_ir::BinaryOp::Eq, lane, zero, s);
        Some(match guard {
            Some(g) => self.b.binary(brook_ir::BinaryOp::LogicAnd, g, first, s),
            None => first,
        })
    }
}

/// Joins neighbouring `if`s of the kernel's top level that test the same condition on locals
/// their bodies do not write (the first-thread stores of a group's blocks, side by side after
/// [`super::copies`] interleaves them): one test and one branch instead of one per block.
pub(super) fn merge_first_thread_guards(kernel: &mut brook_ir::Kernel) {
    let body = std::mem::take(&mut kernel.body.0);
    let mut out: Vec<brook_ir::Statement> = Vec::with_capacity(body.len());
    for statement in body {
        if let Some(last) = out.last_mut() {
            if joinable(kernel, &last.stmt, &statement.stmt) {
                if let (
                    brook_ir::Stmt::If { accept, .. },
                    brook_ir::Stmt::If { accept: more, .. },
                ) = (&mut last.stmt, statement.stmt)
                {
                    accept.0.extend(more.0);
                }
                continue;
            }
        }
        out.push(statement);
    }
    kernel.body.0 = out;
}

/// Two `if`s without `else` whose conditions compute the same from locals only, none of
/// which the first `if`'s body writes.
fn joinable(kernel: &brook_ir::Kernel, a: &brook_ir::Stmt, b: &brook_ir::Stmt) -> bool {
    use brook_ir::Stmt;
    let (
        Stmt::If {
            cond: ca,
            accept,
            reject: ra,
        },
        Stmt::If {
            cond: cb,
            reject: rb,
            ..
        },
    ) = (a, b)
    else {
        return false;
    };
    let mut read = Vec::new();
    let mut written = Vec::new();
    brook_ir::collective::block_writes(accept, &mut written);
    ra.is_empty()
        && rb.is_empty()
        && reads_locals_only(kernel, *ca, &mut read)
        && read.iter().all(|l| !written.contains(l))
        && brook_ir::same::Renaming::new(kernel, Vec::new()).expr(*ca, *cb)
}

/// Whether expression `h` is computed from literals and locals only (adding the locals to
/// `read`).
fn reads_locals_only(
    kernel: &brook_ir::Kernel,
    h: Handle<IrExpr>,
    read: &mut Vec<Handle<Local>>,
) -> bool {
    match &kernel.exprs[h].kind {
        IrKind::Literal(_) => true,
        IrKind::Load(Place {
            root: PlaceRoot::Local(l),
            path,
        }) if path.is_empty() => {
            read.push(*l);
            true
        }
        IrKind::Unary { .. } | IrKind::Binary { .. } | IrKind::Convert(_) => kernel.exprs[h]
            .kind
            .operands()
            .into_iter()
            .all(|o| reads_locals_only(kernel, o, read)),
        _ => false,
    }
}
