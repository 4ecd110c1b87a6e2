//! Lowering of statements and local declarations.
//!
//! Loops become `loop` with a `break` on the negated condition: `while` tests at the top of the
//! body, `do`/`while` in the `continuing` block, `for` runs its step in `continuing`.
//! A declaration without an initialiser stores zero, so a local's value is defined on every
//! backend even when it is declared inside a loop.

use super::{fail, ir_type, Binding, KernelLowerer, Lowered};
use crate::brook::ast::{self, Init, StmtKind};
use crate::brook::check::{self, ConstSize};
use crate::source::Span;
use brook_ir::{
    Access, Block, ExprKind, Handle, Literal, Local, Place, ScalarKind, Stmt, Type, ValueType,
};
use std::collections::HashMap;

impl KernelLowerer<'_> {
    pub(super) fn block_items(&mut self, stmts: &[ast::Stmt]) -> Lowered<()> {
        for stmt in stmts {
            self.stmt(stmt)?;
        }
        Ok(())
    }

    fn scoped(&mut self, f: impl FnOnce(&mut Self) -> Lowered<()>) -> Lowered<()> {
        self.scopes.push(HashMap::new());
        let result = f(self);
        self.scopes.pop();
        result
    }

    fn stmt(&mut self, stmt: &ast::Stmt) -> Lowered<()> {
        let span = stmt.span;
        match &stmt.kind {
            StmtKind::Decl(decl) => self.decl(decl),
            StmtKind::Expr(e) => self.effect(e),
            StmtKind::Block(block) => self.scoped(|this| this.block_items(&block.stmts)),
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                let cond = self.condition(cond)?;
                let (accept, ()) = self.in_block(|this| this.stmt(then))?;
                let (reject, ()) = match otherwise {
                    Some(other) => self.in_block(|this| this.stmt(other))?,
                    None => (Block::new(), ()),
                };
                self.emit(
                    Stmt::If {
                        cond,
                        accept,
                        reject,
                    },
                    span,
                );
                Ok(())
            }
            StmtKind::While { cond, body } => self.lower_loop(span, Some(cond), None, body, false),
            StmtKind::DoWhile { body, cond } => self.lower_loop(span, Some(cond), None, body, true),
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => self.scoped(|this| {
                if let Some(init) = init {
                    this.stmt(init)?;
                }
                this.lower_loop(span, cond.as_ref(), step.as_ref(), body, false)
            }),
            StmtKind::Break => {
                self.emit(Stmt::Break, span);
                Ok(())
            }
            StmtKind::Continue => {
                self.emit(Stmt::Continue, span);
                Ok(())
            }
            StmtKind::Return(value) => self.return_stmt(value.as_ref(), span),
            StmtKind::Empty => Ok(()),
            StmtKind::Unsupported(_) => fail(span, "switch, goto and labels are not supported"),
        }
    }

    /// Emits `if (!cond) break;`.
    fn break_unless(&mut self, cond: &ast::Expr) -> Lowered<()> {
        let c = self.condition(cond)?;
        let mut leave = Block::new();
        leave.push(Stmt::Break, super::source_span(cond.span));
        self.emit(
            Stmt::If {
                cond: c,
                accept: Block::new(),
                reject: leave,
            },
            cond.span,
        );
        Ok(())
    }

    fn lower_loop(
        &mut self,
        span: Span,
        cond: Option<&ast::Expr>,
        step: Option<&ast::Expr>,
        body: &ast::Stmt,
        test_at_end: bool,
    ) -> Lowered<()> {
        let returns_before = self.frames.last().map_or(0, |f| f.returns_in_loops);
        if let Some(frame) = self.frames.last_mut() {
            frame.loop_depth += 1;
        }
        let (body_block, ()) = self.in_block(|this| {
            if let (Some(cond), false) = (cond, test_at_end) {
                this.break_unless(cond)?;
            }
            this.stmt(body)
        })?;
        let (continuing, ()) = self.in_block(|this| {
            if let Some(step) = step {
                this.effect(step)?;
            }
            if let (Some(cond), true) = (cond, test_at_end) {
                this.break_unless(cond)?;
            }
            Ok(())
        })?;
        if let Some(frame) = self.frames.last_mut() {
            frame.loop_depth -= 1;
        }
        self.emit(
            Stmt::Loop {
                body: body_block,
                continuing,
            },
            span,
        );
        let returned = self.frames.last().map_or(0, |f| f.returns_in_loops) > returns_before;
        if let (true, Some(done)) = (returned, self.frames.last().and_then(|f| f.done)) {
            // A `return` of an inlined subkernel inside this loop: leave the enclosing loop too.
            let flag = self.append(
                ExprKind::Load(Place::local(done)),
                Type::Value(ValueType::scalar(ScalarKind::Bool)),
                span,
            );
            let mut leave = Block::new();
            leave.push(Stmt::Break, super::source_span(span));
            self.emit(
                Stmt::If {
                    cond: flag,
                    accept: leave,
                    reject: Block::new(),
                },
                span,
            );
        }
        Ok(())
    }

    fn return_stmt(&mut self, value: Option<&ast::Expr>, span: Span) -> Lowered<()> {
        if self.frames.is_empty() {
            self.store_unorm_outputs(span);
            self.emit(Stmt::Return, span);
            return Ok(());
        }
        if let Some(value) = value {
            let v = self.expr(value)?;
            let result = self.frames.last().and_then(|f| f.result);
            if let Some(result) = result {
                let ty = self.b.locals[result].ty.clone();
                let v = self.convert(v, &ty, span)?;
                self.emit(
                    Stmt::Store {
                        place: Place::local(result),
                        value: v,
                    },
                    span,
                );
            }
        }
        let in_loop = self.frames.last().is_some_and(|f| f.loop_depth > 0);
        if in_loop {
            let done = match self.frames.last().and_then(|f| f.done) {
                Some(done) => done,
                None => {
                    let ty = Type::Value(ValueType::scalar(ScalarKind::Bool));
                    let done = self.new_local("returned", ty, span);
                    if let Some(frame) = self.frames.last_mut() {
                        frame.done = Some(done);
                    }
                    done
                }
            };
            let yes = self.literal(Literal::bool(true), span);
            self.emit(
                Stmt::Store {
                    place: Place::local(done),
                    value: yes,
                },
                span,
            );
            if let Some(frame) = self.frames.last_mut() {
                frame.returns_in_loops += 1;
            }
        }
        self.emit(Stmt::Break, span);
        Ok(())
    }

    fn decl(&mut self, decl: &ast::Decl) -> Lowered<()> {
        let base = self.resolve_type(&decl.ty)?;
        for d in &decl.declarators {
            let mut ty = base.clone();
            if let Some((dims, span)) = &d.array_dims {
                for dim in dims.iter().rev() {
                    let len = match dim.as_ref().map(|d| self.shared.info.constants.size_of(d)) {
                        Some(ConstSize::Value(n)) if n > 0 => n as u32,
                        _ => return fail(*span, "a local array needs a constant size"),
                    };
                    ty = Type::Array {
                        elem: Box::new(ty),
                        len,
                    };
                }
            }
            let shared = decl.qualifiers.shared.is_some();
            let local = self.b.locals.append(
                Local {
                    name: d.name.name.clone(),
                    ty: ty.clone(),
                    shared,
                },
                super::source_span(d.span),
            );
            match &d.init {
                Some(init) => self.init(Place::local(local), &ty, init)?,
                None if !shared => self.zero(local, &ty, d.span)?,
                None => {}
            }
            self.bind(
                &d.name.name,
                Binding::Local {
                    local,
                    origin: None,
                },
            );
        }
        Ok(())
    }

    /// Resolves a written type (built-in, struct or typedef name).
    pub(super) fn resolve_type(&self, spec: &ast::TypeSpec) -> Lowered<Type> {
        match &spec.kind {
            ast::TypeSpecKind::Value(v) => Ok(Type::Value(*v)),
            ast::TypeSpecKind::Named(name) => match self.shared.info.type_names.get(name) {
                Some(ty) => ir_type(ty, spec.span),
                None => fail(spec.span, format!("unknown type `{name}`")),
            },
            _ => fail(spec.span, "a local of no type"),
        }
    }

    fn zero(&mut self, local: Handle<Local>, ty: &Type, span: Span) -> Lowered<()> {
        let value = match ty {
            Type::Value(v) => self.value_const(*v, 0, span),
            Type::Struct(_) => self.zero_struct(ty, span)?,
            Type::Array { .. } => return Ok(()),
        };
        self.emit(
            Stmt::Store {
                place: Place::local(local),
                value,
            },
            span,
        );
        Ok(())
    }

    fn zero_struct(&mut self, ty: &Type, span: Span) -> Lowered<Handle<brook_ir::Expr>> {
        let Type::Struct(id) = ty else {
            return match ty {
                Type::Value(v) => Ok(self.value_const(*v, 0, span)),
                _ => fail(span, "arrays in structs are not supported"),
            };
        };
        let fields: Vec<check::Type> = self.shared.info.structs[id.0 as usize]
            .fields
            .iter()
            .map(|(_, t)| t.clone())
            .collect();
        let mut parts = Vec::new();
        for field in &fields {
            let field_ty = ir_type(field, span)?;
            parts.push(self.zero_struct(&field_ty, span)?);
        }
        Ok(self.append(ExprKind::Compose(parts), ty.clone(), span))
    }

    fn init(&mut self, place: Place, ty: &Type, init: &Init) -> Lowered<()> {
        match init {
            Init::Expr(e) => {
                let value = self.expr(e)?;
                let value = if ty.value().is_some() {
                    self.convert(value, ty, e.span)?
                } else {
                    value
                };
                self.emit(Stmt::Store { place, value }, e.span);
                Ok(())
            }
            Init::List(items, span) => {
                for (k, item) in items.iter().enumerate() {
                    let (access, elem) = match ty {
                        Type::Array { elem, .. } => {
                            let index =
                                self.literal(Literal::int(ScalarKind::I32, k as i64), *span);
                            (Access::Index(index), (**elem).clone())
                        }
                        Type::Struct(id) => {
                            let field = &self.shared.info.structs[id.0 as usize].fields;
                            let Some((_, field_ty)) = field.get(k) else {
                                return fail(item.span(), "too many initialisers");
                            };
                            (Access::Field(k as u32), ir_type(field_ty, *span)?)
                        }
                        Type::Value(v) if v.width > 1 => (
                            Access::Component(k as u8),
                            Type::Value(ValueType::scalar(v.kind)),
                        ),
                        Type::Value(_) => {
                            return self.init(place, ty, item);
                        }
                    };
                    self.init(place.clone().with(access), &elem, item)?;
                }
                Ok(())
            }
        }
    }
}
