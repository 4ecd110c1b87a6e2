//! Arrays passed by reference (section 3.6.2): which parameters a device function writes,
//! and the rule for computed arrays.
//!
//! An argument for an array parameter is an array variable, a slice of one (`in[current]`,
//! both written through), or a computed array: a parallel map or scan (`sqr // t`). A
//! computed array is read-only in the function: the function (or a function it passes the
//! parameter to) must not write that parameter, nor another parameter whose argument is an
//! array the computed one is made from (the map's elements are computed when read, so such a
//! write would change them during the call).

use super::{Checker, VarId, VarKind};
use crate::diagnostic::{Code, Diagnostic};
use crate::loom::ast::{Expr, ExprKind, Item};
use crate::source::Span;
use std::collections::HashSet;

/// One call's array arguments, by parameter index.
#[derive(Clone, Debug)]
pub(super) struct ArrayCall {
    callee: usize,
    args: Vec<(usize, ArrayArg)>,
}

/// What an array argument is.
#[derive(Clone, Debug)]
enum ArrayArg {
    /// An array variable or a slice of it (`root` is the variable).
    Place(VarId),
    /// A map or scan, made from the arrays `reads`.
    Computed { span: Span, reads: Vec<VarId> },
}

/// Whether `arg` is a computed array: a parallel operator that gives an array.
pub(super) fn is_computed_array(arg: &Expr) -> bool {
    matches!(arg.kind, ExprKind::Parallel { .. })
}

/// The variable a place expression (`a`, `a[i]`, `a[i].f`) starts from.
fn root_name(expr: &Expr) -> Option<&Expr> {
    match &expr.kind {
        ExprKind::Name(_) => Some(expr),
        ExprKind::Index { base, .. } | ExprKind::Field { base, .. } => root_name(base),
        _ => None,
    }
}

impl Checker<'_, '_> {
    /// The variable a place expression starts from, once its names are resolved.
    fn root_var(&self, expr: &Expr) -> Option<VarId> {
        root_name(expr).and_then(|name| self.info.names.get(&name.id).copied())
    }

    /// Notes the variable an assignment writes (its root), for [`Self::check_computed_arguments`].
    pub(super) fn note_write(&mut self, target: &Expr) {
        if let Some(var) = self.root_var(target) {
            self.written_roots.push(var);
        }
    }

    /// Notes a call's array arguments: `args` pairs each parameter index with its argument.
    pub(super) fn note_array_call(&mut self, callee: usize, args: &[(usize, &Expr)]) {
        let args: Vec<(usize, ArrayArg)> = args
            .iter()
            .filter_map(|&(index, arg)| {
                let kind = if is_computed_array(arg) {
                    ArrayArg::Computed {
                        span: arg.span,
                        reads: self.arrays_read(arg),
                    }
                } else {
                    ArrayArg::Place(self.root_var(arg)?)
                };
                Some((index, kind))
            })
            .collect();
        if !args.is_empty() {
            self.array_calls.push(ArrayCall { callee, args });
        }
    }

    /// The array variables a computed array is made from.
    fn arrays_read(&self, arg: &Expr) -> Vec<VarId> {
        match &arg.kind {
            ExprKind::Parallel { array, .. } => self.arrays_read(array),
            _ => self.root_var(arg).into_iter().collect(),
        }
    }

    /// The parameter (function item, index) a variable is, if it is one.
    fn param_of(&self, var: VarId) -> Option<(usize, usize)> {
        match self.info.vars.get(var.0 as usize)?.kind {
            VarKind::Param { func, index } => Some((func, index)),
            _ => None,
        }
    }

    /// Every (function, parameter index) whose array the function writes, itself or through
    /// the functions it passes it to.
    fn written_params(&self) -> HashSet<(usize, usize)> {
        let mut written: HashSet<(usize, usize)> = self
            .written_roots
            .iter()
            .filter_map(|&v| self.param_of(v))
            .collect();
        loop {
            let mut grew = false;
            for call in &self.array_calls {
                for (index, arg) in &call.args {
                    if let ArrayArg::Place(var) = arg {
                        if written.contains(&(call.callee, *index)) {
                            if let Some(param) = self.param_of(*var) {
                                grew |= written.insert(param);
                            }
                        }
                    }
                }
            }
            if !grew {
                return written;
            }
        }
    }

    /// A computed array passed to a function that writes it, or writes an array it is made
    /// from, is an error at the argument.
    pub(super) fn check_computed_arguments(&mut self) {
        let written = self.written_params();
        let mut problems = Vec::new();
        for call in &self.array_calls {
            for (index, arg) in &call.args {
                let ArrayArg::Computed { span, reads } = arg else {
                    continue;
                };
                if written.contains(&(call.callee, *index)) {
                    problems.push((*span, call.callee, *index, None));
                    continue;
                }
                let alias = call.args.iter().find(|(other, other_arg)| {
                    matches!(other_arg, ArrayArg::Place(v) if reads.contains(v))
                        && written.contains(&(call.callee, *other))
                });
                if let Some((other, ArrayArg::Place(var))) = alias {
                    problems.push((*span, call.callee, *other, Some(*var)));
                }
            }
        }
        for (span, callee, index, alias) in problems {
            self.report_computed_argument(span, callee, index, alias);
        }
    }

    fn report_computed_argument(
        &mut self,
        span: Span,
        callee: usize,
        index: usize,
        alias: Option<VarId>,
    ) {
        let Some(Item::Func(func)) = self.program.items.get(callee) else {
            return;
        };
        let Some(param) = func.params.get(index) else {
            return;
        };
        let (message, at) = match alias {
            None => (
                format!(
                    "`{}` writes its parameter `{}`, and this argument is a computed array, which is only read",
                    func.name.name, param.name.name
                ),
                param.name.span,
            ),
            Some(var) => (
                format!(
                    "`{}` writes its parameter `{}`, here `{}`, and this computed array is made from `{}`: its elements would change during the call",
                    func.name.name,
                    param.name.name,
                    self.info.vars[var.0 as usize].name,
                    self.info.vars[var.0 as usize].name
                ),
                param.name.span,
            ),
        };
        self.diagnostics.push(
            Diagnostic::error(Code::LoomType, span, message)
                .with_note(Some(at), "the parameter written")
                .with_help("store the computed array in an array variable and pass that"),
        );
    }
}
