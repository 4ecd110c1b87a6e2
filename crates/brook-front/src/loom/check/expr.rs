//! Expressions: every one gets a type (kept in [`super::Info::types`]), names and calls are
//! resolved, and the operators' rules are checked: arithmetic on numbers of one type
//! (untagged constants adapt), bitwise operators on integers, `&&`/`||`/`!` on Bool, type
//! tags as conversions between numbers, indices by rank, fields by name, calls by arity and
//! argument type, and the parallel operators of section 3.5.1.

use super::builtins::Builtin;
use super::ty::{Spread, Ty};
use super::{Callee, Checker, VarKind};
use crate::diagnostic::{Code, Diagnostic};
use crate::loom::ast::{
    BinaryOp, Expr, ExprKind, FuncKind, Ident, Item, ParallelOp, TypeExpr, UnaryOp,
};
use crate::loom::token::{Axis, ThreadName, ThreadParam};

impl Checker<'_, '_> {
    /// The type of an expression, recorded for lowering.
    pub(super) fn expr(&mut self, expr: &Expr) -> Ty {
        let ty = self.expr_type(expr);
        if let Some(slot) = self.info.types.get_mut(expr.id.0 as usize) {
            *slot = ty.clone();
        }
        ty
    }

    fn expr_type(&mut self, expr: &Expr) -> Ty {
        match &expr.kind {
            ExprKind::Int(_) => Ty::UntypedInt,
            ExprKind::Float(_) => Ty::UntypedFloat,
            ExprKind::Bool(_) => Ty::BOOL,
            ExprKind::Thread(_) => Ty::INT32,
            ExprKind::Name(name) => self.name(expr, name),
            ExprKind::Unary { op, arg } => self.unary(*op, arg),
            ExprKind::Binary { op, left, right } => self.binary(expr, *op, left, right),
            ExprKind::Tagged { value, ty } => self.tagged(value, ty),
            ExprKind::Index { base, indices, .. } => self.index(base, indices),
            ExprKind::Field { base, field } => self.field(base, field),
            ExprKind::Call { func, args } => self.call(expr, func, args),
            ExprKind::Parallel { op, func, array } => self.parallel(expr, *op, func, array),
        }
    }

    fn name(&mut self, expr: &Expr, name: &str) -> Ty {
        if let Some(id) = self.lookup(name) {
            self.info.names.insert(expr.id, id);
            return self.var(id).ty.clone();
        }
        let mut d = Diagnostic::error(
            Code::LoomUndeclared,
            expr.span,
            format!("`{name}` is not declared"),
        );
        if self.funcs.contains_key(name) || Builtin::from_name(name).is_some() {
            d = d.with_help(format!("`{name}` is a function: call it, `{name}(...)`"));
        } else if let Some(similar) = self.similar_variable(name) {
            d = d.with_help(format!("did you mean `{similar}`?"));
        } else {
            d = d.with_help(format!("declare it first: `{name}: Int32 <- 0`"));
        }
        self.diagnostics.push(d);
        Ty::Error
    }

    fn unary(&mut self, op: UnaryOp, arg: &Expr) -> Ty {
        let t = self.expr(arg);
        let fits = match op {
            UnaryOp::Not => t == Ty::BOOL,
            UnaryOp::Neg => t.is_numeric(),
            UnaryOp::Complement => t.is_integer(),
        };
        if fits || t.is_error() {
            return t;
        }
        let (symbol, wants) = match op {
            UnaryOp::Not => ("!", "Bool"),
            UnaryOp::Neg => ("-", "a number"),
            UnaryOp::Complement => ("^", "an integer"),
        };
        self.diagnostics.error(
            Code::LoomType,
            arg.span,
            format!("`{symbol}` takes {wants}, not {t}"),
        );
        Ty::Error
    }

    fn binary(&mut self, expr: &Expr, op: BinaryOp, left: &Expr, right: &Expr) -> Ty {
        let a = self.expr(left);
        let b = self.expr(right);
        if a.is_error() || b.is_error() {
            return if op.is_comparison() || op.is_logic() {
                Ty::BOOL
            } else {
                Ty::Error
            };
        }
        let symbol = op.symbol();
        if op.is_logic() {
            if a == Ty::BOOL && b == Ty::BOOL {
                return Ty::BOOL;
            }
            return self.operand_error(
                expr,
                format!("`{symbol}` takes Bool operands, not {a} and {b}"),
                &a,
                &b,
            );
        }
        if matches!(op, BinaryOp::Eq | BinaryOp::Ne) && a == Ty::BOOL && b == Ty::BOOL {
            return Ty::BOOL;
        }
        if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
            if a.is_integer() && b.is_integer() {
                return a;
            }
            return self.operand_error(
                expr,
                format!("`{symbol}` shifts integers, not {a} by {b}"),
                &a,
                &b,
            );
        }
        let wants_integer = op.is_bitwise();
        let fits = |t: &Ty| {
            if wants_integer {
                t.is_integer()
            } else {
                t.is_numeric()
            }
        };
        if !fits(&a) || !fits(&b) {
            let wants = if wants_integer { "integers" } else { "numbers" };
            return self.operand_error(
                expr,
                format!("`{symbol}` takes {wants}, not {a} and {b}"),
                &a,
                &b,
            );
        }
        match unify(&a, &b) {
            Some(_) if op.is_comparison() => Ty::BOOL,
            Some(t) => t,
            None => {
                self.diagnostics.push(
                    Diagnostic::error(
                        Code::LoomType,
                        expr.span,
                        format!("`{symbol}` has operands of two types, {a} and {b}"),
                    )
                    .with_help(format!(
                        "convert one with a type tag: `(...): {}`",
                        a.defaulted()
                    )),
                );
                Ty::Error
            }
        }
    }

    fn operand_error(&mut self, expr: &Expr, message: String, a: &Ty, b: &Ty) -> Ty {
        let mut d = Diagnostic::error(Code::LoomType, expr.span, message);
        if a.is_array() || b.is_array() {
            d = d.with_help("operators work on elements: map a function over an array (`f // a`) or loop over it");
        }
        self.diagnostics.push(d);
        Ty::Error
    }

    /// `e: T`: the constant or value as type `T` (numbers convert; Bool stays Bool).
    fn tagged(&mut self, value: &Expr, ty: &TypeExpr) -> Ty {
        let from = self.expr(value);
        let to = self.resolve_type(ty);
        let fits = from.is_error()
            || to.is_error()
            || from == to
            || (from.is_numeric() && matches!(&to, Ty::Basic(b) if b.is_numeric()));
        if !fits {
            self.diagnostics.error(
                Code::LoomType,
                value.span.to(ty.span),
                format!("{from} does not convert to {to} (type tags convert between numbers)"),
            );
            return Ty::Error;
        }
        if let (Ok(super::ConstValue::Int(v)), Ty::Basic(b)) = (self.const_value(value), &to) {
            if b.is_integer() && !super::constant::fits(v, *b) {
                self.diagnostics.error(
                    Code::LoomType,
                    value.span,
                    format!("the constant {v} does not fit {}", b.name()),
                );
            }
        }
        to
    }

    fn index(&mut self, base: &Expr, indices: &[Expr]) -> Ty {
        let base_ty = self.expr(base);
        let index_tys: Vec<Ty> = indices.iter().map(|i| self.expr(i)).collect();
        let Ty::Array { elem, dims } = base_ty else {
            if !base_ty.is_error() {
                self.diagnostics.error(
                    Code::LoomIndex,
                    base.span,
                    format!("only arrays are indexed, and this is {base_ty}"),
                );
            }
            return Ty::Error;
        };
        if index_tys.len() == 1 && index_tys[0].is_range() {
            let block_size = |axis| {
                super::Dim::Launch(super::Size::Grid(ThreadParam {
                    name: ThreadName::BlockSize,
                    axis: Some(axis),
                }))
            };
            // A 1-D array gives a slice; a 2-D one the tile of the block the range starts in.
            let dims = match dims.len() {
                1 => vec![super::Dim::Slice],
                _ => vec![block_size(Axis::X), block_size(Axis::Y)],
            };
            return Ty::Array { elem, dims };
        }
        if index_tys.len() != dims.len() {
            let span = indices[0].span.to(indices[indices.len() - 1].span);
            self.diagnostics.error(
                Code::LoomIndex,
                span,
                match dims.len() {
                    1 => format!(
                        "a 1-D array takes 1 index, and {} are given",
                        index_tys.len()
                    ),
                    n => format!(
                        "a {n}-D array takes {n} indices, and {} is given",
                        index_tys.len()
                    ),
                },
            );
            return Ty::Error;
        }
        for (index, t) in indices.iter().zip(&index_tys) {
            if !t.is_integer() && !t.is_error() {
                let help = if t.is_range() {
                    " (a Range selects a slice of a 1-D array only)"
                } else {
                    ""
                };
                self.diagnostics.error(
                    Code::LoomIndex,
                    index.span,
                    format!("an index is an integer, not {t}{help}"),
                );
            }
        }
        *elem
    }

    fn field(&mut self, base: &Expr, field: &Ident) -> Ty {
        let base_ty = self.expr(base);
        match &base_ty {
            Ty::Record(record) => {
                if let Some((_, t)) = record.fields.iter().find(|(n, _)| *n == field.name) {
                    return t.clone();
                }
                let names: Vec<&str> = record.fields.iter().map(|(n, _)| n.as_str()).collect();
                self.diagnostics.error(
                    Code::LoomIndex,
                    field.span,
                    format!(
                        "{base_ty} has no field `{}` (its fields: {})",
                        field.name,
                        names.join(", ")
                    ),
                );
            }
            Ty::Error => {}
            other => self.diagnostics.error(
                Code::LoomIndex,
                field.span,
                format!(
                    "`.{}` reads a record's field, and this is {other}",
                    field.name
                ),
            ),
        }
        Ty::Error
    }

    /// A device function, or a predefined one when no device function has the name.
    fn callee(&mut self, func: &Ident) -> Option<Callee> {
        if let Some(&item) = self.funcs.get(&func.name) {
            return Some(Callee::Func(item));
        }
        if let Some(b) = Builtin::from_name(&func.name) {
            return Some(Callee::Builtin(b));
        }
        let mut d = Diagnostic::error(
            Code::LoomUndeclared,
            func.span,
            format!("there is no function `{}`", func.name),
        );
        if self.lookup(&func.name).is_some() {
            d = d.with_help(format!("`{}` is a variable, not a function", func.name));
        } else if let Some(similar) = self.similar_function(&func.name) {
            d = d.with_help(format!("did you mean `{similar}`?"));
        }
        self.diagnostics.push(d);
        None
    }

    fn call(&mut self, expr: &Expr, func: &Ident, args: &[Expr]) -> Ty {
        let arg_tys: Vec<Ty> = args.iter().map(|a| self.expr(a)).collect();
        let Some(callee) = self.callee(func) else {
            return Ty::Error;
        };
        self.info.callees.insert(expr.id, callee);
        match callee {
            Callee::Builtin(b) => {
                if !self.check_arity(func, b.arity(), args.len(), None) {
                    return Ty::Error;
                }
                b.result(&arg_tys).unwrap_or_else(|why| {
                    self.diagnostics.error(Code::LoomType, expr.span, why);
                    Ty::Error
                })
            }
            Callee::Func(item) => self.call_device(expr, func, item, args, &arg_tys),
        }
    }

    fn call_device(
        &mut self,
        expr: &Expr,
        func: &Ident,
        item: usize,
        args: &[Expr],
        arg_tys: &[Ty],
    ) -> Ty {
        let Some(signature) = self.signatures.get(&item).cloned() else {
            return Ty::Error;
        };
        let defined = self.func_name_span(item);
        if signature.kind == FuncKind::Kernel {
            self.diagnostics.push(
                Diagnostic::error(
                    Code::LoomType,
                    func.span,
                    format!("`{}` is the kernel: only the host calls it", func.name),
                )
                .with_help("move the shared work into a `func`"),
            );
            return Ty::Error;
        }
        self.record_call(item, expr.span);
        if !self.check_arity(func, signature.params.len(), args.len(), defined) {
            return signature.ret.unwrap_or(Ty::Error);
        }
        let mut array_args = Vec::new();
        for (index, ((arg, t), param)) in
            args.iter().zip(arg_tys).zip(&signature.params).enumerate()
        {
            if let Ty::Array { elem, dims } = param {
                self.array_argument(arg, t, elem, dims.len());
                array_args.push((index, arg));
            } else {
                self.expect_assignable(t, param, arg, "the argument");
            }
        }
        self.note_array_call(item, &array_args);
        signature.ret.unwrap_or(Ty::Error)
    }

    /// Arrays are passed by reference: the argument is an array variable, a slice or a
    /// computed array (a map or scan, read-only: [`super::by_reference`]) with the
    /// parameter's element type and number of dimensions.
    fn array_argument(&mut self, arg: &Expr, t: &Ty, elem: &Ty, rank: usize) {
        match t {
            Ty::Error => {}
            Ty::Array {
                elem: arg_elem,
                dims,
            } if arg_elem.as_ref() == elem || arg_elem.is_error() || elem.is_error() => {
                if dims.len() != rank {
                    self.diagnostics.error(
                        Code::LoomType,
                        arg.span,
                        format!("the parameter is an array of {rank} dimension(s), and this argument has {}", dims.len()),
                    );
                } else if !is_place(arg) && !super::by_reference::is_computed_array(arg) {
                    self.diagnostics.error(
                        Code::LoomType,
                        arg.span,
                        "arrays are passed by reference: pass an array variable, a slice of one, or a map or scan (store this array in a variable first)",
                    );
                }
            }
            other => self.diagnostics.error(
                Code::LoomType,
                arg.span,
                format!("the parameter is an array of {elem}, and the argument is {other}"),
            ),
        }
    }

    fn check_arity(
        &mut self,
        func: &Ident,
        wanted: usize,
        given: usize,
        defined: Option<crate::source::Span>,
    ) -> bool {
        if wanted == given {
            return true;
        }
        let mut d = Diagnostic::error(
            Code::LoomArity,
            func.span,
            format!(
                "`{}` takes {wanted} argument{}, and {given} {} given",
                func.name,
                if wanted == 1 { "" } else { "s" },
                if given == 1 { "is" } else { "are" }
            ),
        );
        if let Some(span) = defined {
            d = d.with_note(Some(span), "defined here");
        }
        self.diagnostics.push(d);
        false
    }

    fn func_name_span(&self, item: usize) -> Option<crate::source::Span> {
        match self.program.items.get(item) {
            Some(Item::Func(f)) => Some(f.name.span),
            _ => None,
        }
    }

    fn record_call(&mut self, callee: usize, span: crate::source::Span) {
        if let Some(context) = &self.func {
            self.calls.push((context.item, callee, span));
        }
    }

    /// `f // a`, `f /. a`, `f /: a`, `f :/ a`.
    fn parallel(&mut self, expr: &Expr, op: ParallelOp, func: &Ident, array: &Expr) -> Ty {
        let array_ty = self.expr(array);
        let callee = self.callee(func);
        if let Some(callee) = callee {
            self.info.callees.insert(expr.id, callee);
        }
        let Ty::Array { elem, dims } = &array_ty else {
            if !array_ty.is_error() {
                self.diagnostics.error(
                    Code::LoomParallelArray,
                    array.span,
                    format!(
                        "`{}` applies a function over an array, and this is {array_ty}",
                        op.symbol()
                    ),
                );
            }
            return Ty::Error;
        };
        if !spans_threads(dims) {
            self.diagnostics.push(
                Diagnostic::error(
                    Code::LoomParallelArray,
                    array.span,
                    format!("`{}` works with one element per thread, and this array is {array_ty}", op.symbol()),
                )
                .with_help("use an array of THREADS (or X_THREADS, Y_THREADS) elements, or a block's: BLOCKSIZE, a shared `[]` array, a slice by `block(B)`"),
            );
        }
        let result = match callee {
            Some(Callee::Func(item)) => self.parallel_device(op, func, item, elem),
            Some(Callee::Builtin(b)) => self.parallel_builtin(op, func, b, elem),
            None => return Ty::Error,
        };
        match op {
            ParallelOp::Map => Ty::Array {
                elem: Box::new(result),
                dims: dims.clone(),
            },
            ParallelOp::Reduce => *elem.clone(),
            ParallelOp::ScanLeft | ParallelOp::ScanRight => array_ty.clone(),
        }
    }

    /// The element type a device function gives over an array of `elem`.
    fn parallel_device(&mut self, op: ParallelOp, func: &Ident, item: usize, elem: &Ty) -> Ty {
        let Some(signature) = self.signatures.get(&item).cloned() else {
            return Ty::Error;
        };
        let defined = self.func_name_span(item);
        if signature.kind == FuncKind::Kernel {
            self.diagnostics.error(
                Code::LoomParallelFunction,
                func.span,
                format!(
                    "`{}` is the kernel: a parallel operator applies a device function",
                    func.name
                ),
            );
            return Ty::Error;
        }
        self.record_call(item, func.span);
        let ret = signature.ret.clone().unwrap_or(Ty::Error);
        let arity = op.arity();
        let mut problem = None;
        if signature.params.len() != arity {
            problem = Some(format!(
                "`{}` needs a function of {arity} argument{}, and `{}` takes {}",
                op.symbol(),
                if arity == 1 { "" } else { "s" },
                func.name,
                signature.params.len()
            ));
        } else if let Some(p) = signature.params.iter().find(|p| !same(p, elem)) {
            problem = Some(format!(
                "`{}` takes {p}, and the array's elements are {elem}",
                func.name
            ));
        } else if op != ParallelOp::Map && !same(&ret, elem) {
            problem = Some(format!(
                "`{}` combines elements into one of their type: `{}` returns {ret}, and the elements are {elem}",
                op.symbol(),
                func.name
            ));
        }
        if let Some(message) = problem {
            let mut d = Diagnostic::error(Code::LoomParallelFunction, func.span, message);
            if let Some(span) = defined {
                d = d.with_note(Some(span), "defined here");
            }
            self.diagnostics.push(d);
            return Ty::Error;
        }
        ret
    }

    fn parallel_builtin(&mut self, op: ParallelOp, func: &Ident, b: Builtin, elem: &Ty) -> Ty {
        let arity = op.arity();
        let problem = if b.arity() != arity {
            Some(format!(
                "`{}` needs a function of {arity} argument{}, and `{}` takes {}",
                op.symbol(),
                if arity == 1 { "" } else { "s" },
                b.name(),
                b.arity()
            ))
        } else {
            match b.result(&vec![elem.clone(); arity]) {
                Err(why) => Some(why),
                Ok(t) if op != ParallelOp::Map && !same(&t, elem) => Some(format!(
                    "`{}` gives {t} for elements of {elem}, so it cannot combine them",
                    b.name()
                )),
                Ok(t) => return t,
            }
        };
        if let Some(message) = problem {
            self.diagnostics
                .error(Code::LoomParallelFunction, func.span, message);
        }
        Ty::Error
    }

    /// A value can be stored here: a variable that is not a constant, or an element, slice
    /// or field of one.
    pub(super) fn check_assignable_place(&mut self, target: &Expr) {
        let problem = match &target.kind {
            ExprKind::Name(_) => match self
                .info
                .names
                .get(&target.id)
                .map(|id| &self.var(*id).kind)
            {
                Some(VarKind::Const(_)) => Some("a `const` cannot be assigned"),
                _ => None,
            },
            ExprKind::Index { base, .. } | ExprKind::Field { base, .. } => {
                self.check_assignable_place(base);
                None
            }
            ExprKind::Thread(_) => Some("a thread parameter cannot be assigned"),
            _ => Some(
                "this cannot be assigned: the left of `<-` is a variable, an element or a field",
            ),
        };
        if let Some(message) = problem {
            self.diagnostics
                .error(Code::LoomNotAssignable, target.span, message);
        }
    }
}

/// The type two operands share (untagged constants take the other's type).
fn unify(a: &Ty, b: &Ty) -> Option<Ty> {
    match (a, b) {
        (Ty::UntypedInt, Ty::UntypedInt) => Some(Ty::UntypedInt),
        (Ty::UntypedInt | Ty::UntypedFloat, Ty::UntypedInt | Ty::UntypedFloat) => {
            Some(Ty::UntypedFloat)
        }
        (Ty::UntypedInt, Ty::Basic(x)) | (Ty::Basic(x), Ty::UntypedInt) if x.is_numeric() => {
            Some(Ty::Basic(*x))
        }
        (Ty::UntypedFloat, Ty::Basic(x)) | (Ty::Basic(x), Ty::UntypedFloat) if x.is_float() => {
            Some(Ty::Basic(*x))
        }
        (Ty::Basic(x), Ty::Basic(y)) if x == y => Some(Ty::Basic(*x)),
        _ => None,
    }
}

/// Types equal, or one unknown.
fn same(a: &Ty, b: &Ty) -> bool {
    a == b || a.is_error() || b.is_error()
}

/// One element per thread of the grid (`[THREADS]`, `[X_THREADS, Y_THREADS]`) or of a block.
fn spans_threads(dims: &[super::Dim]) -> bool {
    let spreads: Vec<Spread> = dims.iter().map(super::Dim::spread).collect();
    matches!(
        spreads.as_slice(),
        [Spread::Threads(None)]
            | [
                Spread::Threads(Some(Axis::X)),
                Spread::Threads(Some(Axis::Y))
            ]
            | [Spread::Block(_)]
            | [Spread::Block(_), Spread::Block(_)]
    )
}

/// A variable, or an element, slice or field of one.
fn is_place(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Name(_) => true,
        ExprKind::Index { base, .. } | ExprKind::Field { base, .. } => is_place(base),
        _ => false,
    }
}
