//! Statements: declarations by memory space, assignments (whole arrays included),
//! conditions, loops, `break`/`continue` inside loops and `return` by function kind.

use super::ty::{Dim, Ty};
use super::{Checker, VarKind};
use crate::diagnostic::{Code, Diagnostic};
use crate::loom::ast::{AssignOp, Block, Decl, Expr, FuncKind, Space, Stmt, StmtKind};

impl Checker<'_, '_> {
    /// A block with its own scope.
    pub(super) fn block_in_scope(&mut self, block: &Block) {
        self.push_scope();
        for stmt in &block.stmts {
            self.statement(stmt);
        }
        self.pop_scope();
    }

    fn statement(&mut self, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Decl(decl) => self.declaration(decl, false),
            StmtKind::Assign { target, op, value } => self.assignment(target, *op, value),
            StmtKind::Expr(expr) => {
                self.expr(expr);
                if !matches!(expr.kind, crate::loom::ast::ExprKind::Call { .. }) {
                    self.diagnostics.error(
                        Code::LoomType,
                        expr.span,
                        "this expression is computed and thrown away: a statement is a declaration, an assignment (`x <- e`) or a call",
                    );
                }
            }
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                self.condition(cond, "`if`");
                self.block_in_scope(then);
                if let Some(otherwise) = otherwise {
                    self.block_in_scope(otherwise);
                }
            }
            StmtKind::While { cond, body } => {
                self.condition(cond, "`while`");
                self.loop_body(body);
            }
            StmtKind::For {
                var,
                ty,
                from,
                to,
                body,
                ..
            } => {
                let var_ty = match ty {
                    Some(written) => {
                        let t = self.resolve_type(written);
                        if !t.is_integer() && !t.is_error() {
                            self.diagnostics.error(
                                Code::LoomType,
                                written.span,
                                format!(
                                    "a `for` variable counts: it needs an integer type, not {t}"
                                ),
                            );
                        }
                        // Its scope is the enclosing block (section 3.5.4).
                        self.declare(var, t.clone(), Space::Local, VarKind::Loop);
                        t
                    }
                    None => self.existing_loop_var(var),
                };
                for bound in [from, to] {
                    let t = self.expr(bound);
                    self.expect_assignable(&t, &var_ty, bound, "a bound of the `for` range");
                }
                self.loop_body(body);
            }
            StmtKind::Break | StmtKind::Continue if self.loops == 0 => {
                let word = if stmt.kind == StmtKind::Break {
                    "break"
                } else {
                    "continue"
                };
                self.diagnostics.error(
                    Code::LoomLoopControl,
                    stmt.span,
                    format!("`{word}` outside a loop"),
                );
            }
            StmtKind::Break | StmtKind::Continue => {}
            StmtKind::Return(value) => self.return_statement(stmt, value.as_ref()),
        }
    }

    fn loop_body(&mut self, body: &Block) {
        self.loops += 1;
        self.block_in_scope(body);
        self.loops -= 1;
    }

    /// `for i <- ...` without a type: `i` is an integer variable declared before.
    fn existing_loop_var(&mut self, var: &crate::loom::ast::Ident) -> Ty {
        let Some(id) = self.lookup(&var.name) else {
            self.diagnostics.push(
                Diagnostic::error(
                    Code::LoomUndeclared,
                    var.span,
                    format!("the loop variable `{}` is not declared", var.name),
                )
                .with_help(format!(
                    "declare it in the loop: `for {}: Int32 <- ...`",
                    var.name
                )),
            );
            return Ty::Error;
        };
        self.info
            .declared
            .insert((var.span.start, var.span.end), id);
        let v = self.var(id).clone();
        if matches!(v.kind, VarKind::Const(_)) {
            self.diagnostics.error(
                Code::LoomNotAssignable,
                var.span,
                format!("`{}` is a constant and cannot count a loop", var.name),
            );
        } else if !v.ty.is_integer() && !v.ty.is_error() {
            self.diagnostics.error(
                Code::LoomType,
                var.span,
                format!(
                    "a `for` variable counts: `{}` is {}, not an integer",
                    var.name, v.ty
                ),
            );
        }
        v.ty
    }

    fn condition(&mut self, cond: &Expr, what: &str) {
        let t = self.expr(cond);
        if t != Ty::BOOL && !t.is_error() {
            self.diagnostics.error(
                Code::LoomType,
                cond.span,
                format!("the condition of {what} must be Bool, not {t} (compare it: `x != 0`)"),
            );
        }
    }

    fn return_statement(&mut self, stmt: &Stmt, value: Option<&Expr>) {
        let Some(context) = self.func.as_mut() else {
            return;
        };
        context.saw_return = true;
        let kind = context.kind;
        let ret = context.ret.clone();
        match (kind, value, ret) {
            (FuncKind::Kernel, Some(value), _) => {
                self.expr(value);
                self.diagnostics.error(
                    Code::LoomKernelReturn,
                    value.span,
                    "a kernel returns no value: it acts through the arrays it is given",
                );
            }
            (FuncKind::Device, None, Some(ret)) => {
                self.diagnostics.error(
                    Code::LoomType,
                    stmt.span,
                    format!("this function returns {ret}: `return` needs a value"),
                );
            }
            (FuncKind::Device, Some(value), Some(ret)) => {
                let t = self.expr(value);
                self.expect_assignable(&t, &ret, value, "the returned value");
            }
            _ => {}
        }
    }

    /// `space name: T <- init`; `top` for a top-level `const`.
    pub(super) fn declaration(&mut self, decl: &Decl, top: bool) {
        let ty = self.resolve_type(&decl.ty);
        self.check_space(decl, &ty, top);
        let init_ty = decl.init.as_ref().map(|init| (init, self.expr(init)));
        if let Some((init, t)) = &init_ty {
            self.expect_assignable(t, &ty, init, "the initial value");
        }
        let kind = match (decl.space, &decl.init) {
            (Space::Const, Some(init)) => match self.const_value(init) {
                Ok(value) => VarKind::Const(value),
                Err(why) => {
                    self.diagnostics.error(
                        Code::LoomMemorySpace,
                        init.span,
                        format!("a `const` needs a value known when compiling: {why}"),
                    );
                    VarKind::Local
                }
            },
            _ => VarKind::Local,
        };
        let kind = match (kind, &ty) {
            (VarKind::Const(value), Ty::Basic(b)) => {
                VarKind::Const(super::constant::convert_const(value, *b))
            }
            (kind, _) => kind,
        };
        self.declare(&decl.name, ty, decl.space, kind);
    }

    /// What each memory space allows.
    fn check_space(&mut self, decl: &Decl, ty: &Ty, top: bool) {
        let span = decl.ty.span;
        let in_kernel = self
            .func
            .as_ref()
            .is_some_and(|f| f.kind == FuncKind::Kernel);
        match decl.space {
            Space::Const => {
                if !ty.is_scalar() && !ty.is_error() {
                    self.space_error(span, format!("a `const` is a number or Bool, not {ty}"));
                }
                if decl.init.is_none() {
                    self.space_error(
                        decl.name.span,
                        "a `const` needs its value: `const n: Int32 <- 4`",
                    );
                }
            }
            _ if top => {}
            Space::Local => {
                if ty.is_array() {
                    self.check_constant_dims(ty, span, "a local array");
                }
            }
            Space::Shared | Space::Global if !in_kernel => {
                self.space_error(
                    decl.name.span,
                    format!(
                        "`{}` memory is declared in the kernel (a device function uses what the kernel passes it)",
                        decl.space.name()
                    ),
                );
            }
            Space::Shared => {
                if let Ty::Array { dims, .. } = ty {
                    if dims.iter().any(|d| matches!(d, Dim::Slice)) {
                        self.space_error(span, "a shared array's extent cannot be a slice");
                    }
                }
            }
            Space::Global => {
                if let Ty::Array { dims, .. } = ty {
                    if dims.iter().any(|d| matches!(d, Dim::Unsized | Dim::Slice)) {
                        self.space_error(
                            span,
                            "a global array needs its extents (constants or THREADS, BLOCKS, BLOCKSIZE)",
                        );
                    }
                }
            }
        }
    }

    fn space_error(&mut self, span: crate::source::Span, message: impl Into<String>) {
        self.diagnostics.error(Code::LoomMemorySpace, span, message);
    }

    /// `target <- value` (and `+=`, `-=`, `*=`): a whole array takes an array of its shape
    /// or one value for every element.
    fn assignment(&mut self, target: &Expr, op: AssignOp, value: &Expr) {
        let target_ty = self.expr(target);
        self.check_assignable_place(target);
        self.note_write(target);
        let value_ty = self.expr(value);
        if op != AssignOp::Set {
            let scalar = match &target_ty {
                Ty::Array { elem, .. } => elem.as_ref(),
                t => t,
            };
            if !scalar.is_numeric() && !scalar.is_error() {
                self.diagnostics.error(
                    Code::LoomType,
                    target.span,
                    format!("`+=`, `-=` and `*=` work on numbers, not {target_ty}"),
                );
                return;
            }
        }
        self.expect_assignable(&value_ty, &target_ty, value, "the assigned value");
    }

    /// Reports a value that cannot be stored where `target` is expected. An array accepts
    /// one value for all its elements.
    pub(super) fn expect_assignable(&mut self, value: &Ty, target: &Ty, at: &Expr, what: &str) {
        if value.assignable_to(target) {
            self.check_constant_fits(value, target, at);
            return;
        }
        if let Ty::Array { elem, .. } = target {
            if value.assignable_to(elem) {
                return;
            }
        }
        let mut d = Diagnostic::error(
            Code::LoomType,
            at.span,
            format!("{what} is {value}, which does not fit {target}"),
        );
        if let (Ty::Array { dims: a, .. }, Ty::Array { dims: b, .. }) = (value, target) {
            if a.len() != b.len() {
                d = d.with_help("the arrays have different numbers of dimensions");
            } else {
                d = d.with_help("the arrays' elements or extents differ");
            }
        } else if *target == Ty::BOOL || *value == Ty::BOOL {
            d = d.with_help("Bool and numbers do not convert: compare (`x != 0`) or choose (`if`)");
        } else if matches!(value, Ty::UntypedFloat) {
            d = d.with_help("a floating-point constant does not become an integer: write it without a fraction or convert with `: Int32`");
        }
        self.diagnostics.push(d);
    }
}

impl Checker<'_, '_> {
    /// An untagged integer constant stored into an integer type must fit it.
    fn check_constant_fits(&mut self, value: &Ty, target: &Ty, at: &Expr) {
        let (Ty::UntypedInt, Ty::Basic(b)) = (value, target) else {
            return;
        };
        if let Ok(super::ConstValue::Int(v)) = self.const_value(at) {
            if b.is_integer() && !super::constant::fits(v, *b) {
                self.diagnostics.error(
                    Code::LoomType,
                    at.span,
                    format!("the constant {v} does not fit {}", b.name()),
                );
            }
        }
    }
}

/// Whether the end of a block cannot be reached (every path returns).
pub(super) fn always_returns(block: &Block) -> bool {
    block.stmts.iter().any(|s| match &s.kind {
        StmtKind::Return(_) => true,
        StmtKind::If {
            then,
            otherwise: Some(otherwise),
            ..
        } => always_returns(then) && always_returns(otherwise),
        _ => false,
    })
}
