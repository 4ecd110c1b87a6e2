//! Statements: declarations, assignments (whole arrays in [`super::array`]), `if`, loops
//! (`while` and `for` as IR loops; a `for` range's end is evaluated once), `break`,
//! `continue` and `return` (in an inlined function: store the value and leave its wrapper
//! loop).

use super::expr::{ArrayValue, Val};
use super::{fail, kind_for, source_span, ArrayRef, Binding, Lowered, Lowerer};
use crate::loom::ast::{AssignOp, Block, Decl, Expr, ExprKind, Space, Stmt, StmtKind};
use crate::loom::check::{Ty, VarId, VarKind};
use crate::source::Span;
use brook_ir::{Access, BinaryOp, Handle, Literal, Place, ScalarKind, Type, UnaryOp, ValueType};

type IrExpr = brook_ir::Expr;

/// Where an assignment stores.
enum Target {
    /// A scalar or record place; `guard` is the `[[ ]]` range test.
    Place {
        place: Place,
        guard: Option<Handle<IrExpr>>,
        ty: Ty,
    },
    Array(ArrayValue),
}

impl Lowerer<'_> {
    pub(super) fn block(&mut self, block: &Block) -> Lowered<()> {
        for stmt in &block.stmts {
            self.statement(stmt)?;
        }
        Ok(())
    }

    fn nested(&mut self, block: &Block) -> Lowered<brook_ir::Block> {
        self.b.open_block();
        let result = self.block(block);
        let body = self.b.close_block();
        result.map(|()| body)
    }

    pub(super) fn statement(&mut self, stmt: &Stmt) -> Lowered<()> {
        let s = source_span(stmt.span);
        match &stmt.kind {
            StmtKind::Decl(decl) => self.declaration(decl),
            StmtKind::Assign { target, op, value } => {
                self.assignment(target, *op, value, stmt.span)
            }
            StmtKind::Expr(e) => self.value(e, None).map(|_| ()),
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                let cond = self.scalar_as(cond, ScalarKind::Bool)?;
                let accept = self.nested(then)?;
                let reject = match otherwise {
                    Some(b) => self.nested(b)?,
                    None => brook_ir::Block::new(),
                };
                self.b.emit(
                    brook_ir::Stmt::If {
                        cond,
                        accept,
                        reject,
                    },
                    s,
                );
                Ok(())
            }
            StmtKind::While { cond, body } => {
                self.b.open_block();
                let c = self.scalar_as(cond, ScalarKind::Bool);
                let c = match c {
                    Ok(c) => c,
                    Err(e) => {
                        self.b.close_block();
                        return Err(e);
                    }
                };
                self.break_unless(c, s);
                let inner = self.in_loop(body);
                let body = self.b.close_block();
                inner?;
                self.b.emit(
                    brook_ir::Stmt::Loop {
                        body,
                        continuing: brook_ir::Block::new(),
                    },
                    s,
                );
                self.after_loop(s);
                Ok(())
            }
            StmtKind::For {
                var,
                ty,
                from,
                to,
                inclusive,
                body,
            } => self.for_loop(stmt.span, var, ty.is_some(), from, to, *inclusive, body),
            StmtKind::Break => {
                self.b.emit(brook_ir::Stmt::Break, s);
                Ok(())
            }
            StmtKind::Continue => {
                self.b.emit(brook_ir::Stmt::Continue, s);
                Ok(())
            }
            StmtKind::Return(value) => self.return_statement(value.as_ref(), stmt.span),
        }
    }

    /// The body of a loop (a function's `return` inside it must leave it too).
    fn in_loop(&mut self, body: &Block) -> Lowered<()> {
        if let Some(frame) = self.frames.last_mut() {
            frame.loops += 1;
        }
        let result = self.block(body);
        if let Some(frame) = self.frames.last_mut() {
            frame.loops -= 1;
        }
        result
    }

    /// In an inlined function, a `return` inside the loop just left leaves the next loop out.
    fn after_loop(&mut self, s: brook_ir::SourceSpan) {
        let Some((_, done)) = self.frames.last().and_then(|f| f.ret) else {
            return;
        };
        let flag = self.b.load(Place::local(done), s);
        self.b.open_block();
        self.b.emit(brook_ir::Stmt::Break, s);
        let accept = self.b.close_block();
        self.b.emit(
            brook_ir::Stmt::If {
                cond: flag,
                accept,
                reject: brook_ir::Block::new(),
            },
            s,
        );
    }

    pub(super) fn break_unless(&mut self, cond: Handle<IrExpr>, s: brook_ir::SourceSpan) {
        let bool_ty = Type::Value(ValueType::scalar(ScalarKind::Bool));
        let not = self.b.append(
            brook_ir::ExprKind::Unary {
                op: UnaryOp::Not,
                arg: cond,
            },
            bool_ty,
            s,
        );
        self.b.open_block();
        self.b.emit(brook_ir::Stmt::Break, s);
        let accept = self.b.close_block();
        self.b.emit(
            brook_ir::Stmt::If {
                cond: not,
                accept,
                reject: brook_ir::Block::new(),
            },
            s,
        );
    }

    /// `for i <- a .. b` (or `a ... b`): `i <- a; end <- b; loop { if !(i < end) break; body;
    /// continuing: i <- i + 1 }`; an inclusive range breaks after the body at `i = end`
    /// instead, so `end` may be the type's largest value. The loop counts in the variable's
    /// own place: a local, or a `global` value shared by the grid.
    #[allow(clippy::too_many_arguments)]
    fn for_loop(
        &mut self,
        span: Span,
        var: &crate::loom::ast::Ident,
        declares: bool,
        from: &Expr,
        to: &Expr,
        inclusive: bool,
        body: &Block,
    ) -> Lowered<()> {
        let s = source_span(span);
        let id = self.declared(var)?;
        let ty = self.checked.info.vars[id.0 as usize].ty.clone();
        let kind = kind_for(&ty, None);
        let counter = match (
            declares,
            self.frames.last().and_then(|f| f.bindings.get(&id)),
        ) {
            (false, Some(Binding::Value(place))) => place.clone(),
            _ => {
                let ir = self.ir_type(&ty, span)?;
                let local = self.b.new_local(&var.name, ir, false, s);
                self.bind(id, Binding::Value(Place::local(local)));
                Place::local(local)
            }
        };
        let start = self.scalar_as(from, kind)?;
        self.b.store(counter.clone(), start, s);
        let end = self.scalar_as(to, kind)?;
        let end = self.b.capture("for.end", end, s);
        self.b.open_block();
        let i = self.b.load(counter.clone(), s);
        let last = self.b.load(Place::local(end), s);
        let test = if inclusive {
            BinaryOp::Le
        } else {
            BinaryOp::Lt
        };
        let inside = self.b.binary(test, i, last, s);
        self.break_unless(inside, s);
        let inner = self.in_loop(body);
        let loop_body = self.b.close_block();
        inner?;
        self.b.open_block();
        let i = self.b.load(counter.clone(), s);
        if inclusive {
            let last = self.b.load(Place::local(end), s);
            let at_end = self.b.binary(BinaryOp::Ne, i, last, s);
            self.break_unless(at_end, s);
        }
        let i = self.b.load(counter.clone(), s);
        let one = self.b.constant(kind, 1, s);
        let next = self.b.binary(BinaryOp::Add, i, one, s);
        self.b.store(counter.clone(), next, s);
        let continuing = self.b.close_block();
        self.b.emit(
            brook_ir::Stmt::Loop {
                body: loop_body,
                continuing,
            },
            s,
        );
        self.after_loop(s);
        Ok(())
    }

    fn return_statement(&mut self, value: Option<&Expr>, span: Span) -> Lowered<()> {
        let s = source_span(span);
        let Some(frame) = self.frames.last() else {
            return fail(span, "`return` outside a function");
        };
        let Some((result, done)) = frame.ret else {
            self.b.emit(brook_ir::Stmt::Return, s);
            return Ok(());
        };
        let loops = frame.loops;
        if let Some(value) = value {
            let ty = self.b.locals[result].ty.clone();
            let v = match ty.value() {
                Some(v) => self.scalar_as(value, v.kind)?,
                None => self.scalar(value, None)?,
            };
            self.b.store(Place::local(result), v, s);
        }
        if loops > 0 {
            let t = self.b.literal(Literal::bool(true), s);
            self.b.store(Place::local(done), t, s);
        }
        self.b.emit(brook_ir::Stmt::Break, s);
        Ok(())
    }

    fn declaration(&mut self, decl: &Decl) -> Lowered<()> {
        if decl.space == Space::Const {
            return Ok(());
        }
        let id = self.declared(&decl.name)?;
        let var = &self.checked.info.vars[id.0 as usize];
        if matches!(var.kind, VarKind::Const(_)) {
            return Ok(());
        }
        let ty = var.ty.clone();
        let s = source_span(decl.name.span);
        let binding = if decl.space == Space::Global {
            self.global(decl, &ty)?
        } else {
            let shared = decl.space == Space::Shared;
            let ir = self.ir_type(&ty, decl.ty.span)?;
            let local = self.b.new_local(&decl.name.name, ir, shared, s);
            match &ty {
                Ty::Array { dims, .. } => Binding::Array(ArrayRef::Local {
                    local,
                    dims: fixed(self.extents_of(dims, decl.ty.span, "an array")?),
                    shared,
                }),
                _ => Binding::Value(Place::local(local)),
            }
        };
        self.bind(id, binding.clone());
        if let Some(init) = &decl.init {
            if let Binding::Array(array) = binding {
                let target = ArrayValue::Ref {
                    array,
                    start: None,
                    len: None,
                    safe: false,
                    spreads: super::expr::spreads_of(&ty),
                };
                let value = self.value(init, None)?;
                self.assign_array(&target, value, AssignOp::Set, init.span)?;
            } else if let Binding::Value(place) = binding {
                let v = self.converted(init, &ty)?;
                self.b.store(place, v, s);
            }
        }
        Ok(())
    }

    /// A `global` array or value: a parameter after the kernel's own, whose zeroed buffer
    /// every launch allocates (so the whole grid shares it for one launch); a value is the
    /// one element of such an array.
    fn global(&mut self, decl: &Decl, ty: &Ty) -> Lowered<Binding> {
        let (elem, dims) = match ty {
            Ty::Array { elem, dims } => (
                elem.as_ref(),
                self.extents_of(dims, decl.ty.span, "a global array")?,
            ),
            value => (value, vec![1]),
        };
        let elem = self.ir_type(elem, decl.ty.span)?;
        let param = brook_ir::ParamId(self.b.params.len() as u32);
        self.b.params.push(brook_ir::Param {
            name: decl.name.name.clone(),
            ty: elem,
            role: brook_ir::ParamRole::Scatter {
                rank: dims.len() as u8,
            },
            span: source_span(decl.name.span),
        });
        self.extents
            .push(Some(dims.iter().map(|&d| Some(d as usize)).collect()));
        self.hidden.push(super::Hidden::Global);
        let array = ArrayRef::Global {
            param,
            dims: fixed(dims),
        };
        if matches!(ty, Ty::Array { .. }) {
            return Ok(Binding::Array(array));
        }
        let zero = self.b.int(0, source_span(decl.name.span));
        Ok(Binding::Value(self.element_place(&array, &[zero])))
    }

    /// A value for a place of checked type `ty` (numbers converted).
    pub(super) fn converted(&mut self, e: &Expr, ty: &Ty) -> Lowered<Handle<IrExpr>> {
        match ty {
            Ty::Basic(b) => self.scalar_as(e, super::scalar_kind(*b)),
            _ => self.scalar(e, None),
        }
    }

    fn assignment(&mut self, target: &Expr, op: AssignOp, value: &Expr, span: Span) -> Lowered<()> {
        let s = source_span(span);
        match self.target(target)? {
            Target::Array(array) => {
                let v = self.value(value, None)?;
                self.assign_array(&array, v, op, span)
            }
            Target::Place { place, guard, ty } => {
                let new = match op {
                    AssignOp::Set => self.converted(value, &ty)?,
                    _ => {
                        let kind = kind_for(&ty, None);
                        let current = self.b.load(place.clone(), s);
                        let operand = self.scalar_as(value, kind)?;
                        self.b.binary(compound(op), current, operand, s)
                    }
                };
                let array = self.stored_array(target);
                let guard = self.first_thread_stores(array, &place, new, guard, span);
                self.store_if(guard, place, new, span);
                Ok(())
            }
        }
    }

    /// The array variable `target` stores to by index (`a[i]`, `a[i].f`), if it is one.
    fn stored_array(&self, target: &Expr) -> Option<VarId> {
        match &target.kind {
            ExprKind::Index { base, .. } if matches!(base.kind, ExprKind::Name(_)) => {
                self.checked.info.names.get(&base.id).copied()
            }
            ExprKind::Field { base, .. } => self.stored_array(base),
            _ => None,
        }
    }

    /// The place an assignment writes.
    fn target(&mut self, target: &Expr) -> Lowered<Target> {
        let ty = self.ty_of(target).clone();
        match &target.kind {
            ExprKind::Name(_) => match self.value(target, None)? {
                Val::Array(array) => Ok(Target::Array(array)),
                Val::Scalar(_) => {
                    let Some(&var) = self.checked.info.names.get(&target.id) else {
                        return fail(target.span, "a name the checker did not resolve");
                    };
                    match self.binding(var, target.span)? {
                        Binding::Value(place) => Ok(Target::Place {
                            place,
                            guard: None,
                            ty,
                        }),
                        Binding::Array(_) | Binding::View(_) => {
                            fail(target.span, "an array bound as a value")
                        }
                    }
                }
            },
            ExprKind::Index {
                base,
                indices,
                safe,
            } => {
                if indices.len() == 1 && self.ty_of(&indices[0]).is_range() {
                    return match self.value(target, None)? {
                        Val::Array(array) => Ok(Target::Array(array)),
                        Val::Scalar(_) => fail(target.span, "a slice that is a value"),
                    };
                }
                let Val::Array(ArrayValue::Ref {
                    array,
                    start,
                    safe: base_safe,
                    ..
                }) = self.value(base, None)?
                else {
                    return fail(base.span, "only arrays are assigned by index");
                };
                let mut idx = Vec::new();
                for i in indices {
                    let h = self.scalar(i, Some(ScalarKind::I32))?;
                    idx.push(self.index_value(h, i.span));
                }
                let idx = self.offset(&idx, start.as_deref(), target.span);
                let guard = if *safe || base_safe {
                    Some(self.in_range(&idx, array.dims(), target.span))
                } else {
                    None
                };
                Ok(Target::Place {
                    place: self.element_place(&array, &idx),
                    guard,
                    ty,
                })
            }
            ExprKind::Field { base, field } => {
                let Target::Place {
                    place,
                    guard,
                    ty: base_ty,
                } = self.target(base)?
                else {
                    return fail(base.span, "a field of an array");
                };
                let Ty::Record(record) = &base_ty else {
                    return fail(base.span, "a field of what is not a record");
                };
                let Some(index) = record.fields.iter().position(|(n, _)| *n == field.name) else {
                    return fail(field.span, "no such field");
                };
                Ok(Target::Place {
                    place: place.with(Access::Field(index as u32)),
                    guard,
                    ty,
                })
            }
            _ => fail(target.span, "this cannot be assigned"),
        }
    }
}

/// Extents known when compiling.
fn fixed(dims: Vec<u32>) -> Vec<super::Extent> {
    dims.into_iter().map(super::Extent::Fixed).collect()
}

fn compound(op: AssignOp) -> BinaryOp {
    match op {
        AssignOp::Add => BinaryOp::Add,
        AssignOp::Sub => BinaryOp::Sub,
        _ => BinaryOp::Mul,
    }
}
