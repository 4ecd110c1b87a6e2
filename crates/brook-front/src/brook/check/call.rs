//! Calls inside kernels: the intrinsic library, `indexof`/`instance`/`instanceInGroup`/
//! `syncGroup`, and subkernels (seed 003, sections 4.3 and 6.3.9).

use super::ops::ConvContext;
use super::{Checker, ConversionReporting, KernelKind, ParamInfo, ParamRole, Type, VarKind};
use crate::brook::ast::{Expr, ExprKind};
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;
use brook_ir::intrinsic::{self, Signature};
use brook_ir::{ScalarKind, ValueType};

impl Checker<'_> {
    pub fn call(&mut self, callee: &Expr, args: &[Expr], span: Span) -> Type {
        let ExprKind::Ident(name) = &callee.kind else {
            self.expr(callee);
            self.check_args(args);
            self.diags.error(
                Code::IndirectCall,
                callee.span,
                "indirect call not supported",
            );
            return Type::Error;
        };
        match name.as_str() {
            "indexof" => return self.indexof(args, span),
            "instance" => return self.thread_position("instance", args, span, false),
            "instanceInGroup" => return self.thread_position("instanceInGroup", args, span, true),
            "syncGroup" => {
                self.thread_position("syncGroup", args, span, true);
                return Type::Void;
            }
            _ => {}
        }
        if let Some(signature) = intrinsic::lookup(name).map(|i| i.signature) {
            return self.intrinsic(name, signature, args, span);
        }
        if let Some(&index) = self.kernel_index.get(name) {
            return self.subkernel_call(index, callee, args, span);
        }
        if name == "push" {
            return self.push(args, span);
        }
        self.check_args(args);
        self.unknown_callee(name, callee.span);
        Type::Error
    }

    /// `push(v)` (the vout `v`'s current value), `push(v, value)`, or `push(value)` into the
    /// kernel's only vout (BrookGPU variable outputs).
    fn push(&mut self, args: &[Expr], span: Span) -> Type {
        let Some(current) = self.current.as_ref() else {
            return Type::Error;
        };
        let (kernel, in_loop) = (current.index, current.loop_depth > 0);
        let vouts: Vec<(usize, ParamInfo)> = self.info.kernels[kernel]
            .params
            .iter()
            .cloned()
            .enumerate()
            .filter(|(_, p)| matches!(p.role, ParamRole::Vout { .. }))
            .collect();
        let named = |arg: &Expr| match &arg.kind {
            ExprKind::Ident(name) => vouts.iter().find(|(_, p)| p.name == *name).cloned(),
            _ => None,
        };
        let (target, value) = match args {
            [arg] if named(arg).is_some() => (named(arg), Some(arg)),
            [value] if vouts.len() == 1 => (vouts.first().cloned(), Some(value)),
            [stream, value] if named(stream).is_some() => (named(stream), Some(value)),
            _ => (None, None),
        };
        let (Some((index, param)), Some(value)) = (target, value) else {
            self.check_args(args);
            let message = if vouts.is_empty() {
                "push needs a vout output: this kernel has none".to_string()
            } else {
                "push(value) needs the vout to push into: write `push(v, value)` or assign `v` and `push(v)`".to_string()
            };
            self.diags.push(
                Diagnostic::error(Code::Vout, span, message)
                    .with_help("declare `vout [N] T v<>` and call `push(v)`, `push(v, value)` or, with one vout, `push(value)`"),
            );
            return Type::Void;
        };
        if args.len() == 2 {
            self.expr(&args[0]);
        }
        let ty = self.expr(value);
        self.coerce(
            value,
            &ty,
            &param.ty,
            ConvContext::Argument(args.len(), "push"),
        );
        if let Some(current) = self.current.as_mut() {
            current.pushes.push((index, in_loop));
        }
        Type::Void
    }

    fn check_args(&mut self, args: &[Expr]) -> Vec<Type> {
        args.iter().map(|a| self.expr(a)).collect()
    }

    fn unknown_callee(&mut self, name: &str, span: Span) {
        let diagnostic = if self.lookup(name).is_some() {
            Diagnostic::error(
                Code::NotAFunction,
                span,
                format!("callee is not a function: `{name}` is a variable"),
            )
        } else if let Some(defined) = self.host_functions.get(name) {
            Diagnostic::error(
                Code::KernelCallsHost,
                span,
                format!("kernel can't call a non-kernel: `{name}` is a host function"),
            )
            .with_note(Some(*defined), "defined here, outside any kernel")
            .with_help("mark it `kernel` to make it a subkernel")
        } else {
            Diagnostic::error(
                Code::UnknownFunction,
                span,
                format!("callee unknown: `{name}`"),
            )
            .with_label("no kernel or intrinsic has this name")
        };
        self.diags.push(diagnostic);
    }

    fn no_match(&mut self, name: &str, signature: Option<Signature>, types: &[Type], span: Span) {
        let found: Vec<String> = types.iter().map(|t| self.type_name(t)).collect();
        let mut d = Diagnostic::error(
            Code::NoMatchingIntrinsic,
            span,
            format!(
                "No matched built-in function found: `{name}({})`",
                found.join(", ")
            ),
        );
        if let Some(signature) = signature {
            d = d.with_help(format!(
                "`{name}` takes {} argument(s): {}",
                signature.arity(),
                signature.describe()
            ));
        }
        self.diags.push(d);
    }

    fn intrinsic(&mut self, name: &str, signature: Signature, args: &[Expr], span: Span) -> Type {
        let types = self.check_args(args);
        if types.iter().any(Type::is_error) {
            return Type::Error;
        }
        let values: Option<Vec<ValueType>> = types.iter().map(Type::as_value).collect();
        let Some(values) = values.filter(|v| v.len() == signature.arity()) else {
            self.no_match(name, Some(signature), &types, span);
            return Type::Error;
        };
        let Some(common) = self.unify_args(name, signature, args, &types, &values, span) else {
            return Type::Error;
        };
        match signature {
            Signature::FloatMap(_) | Signature::NumericMap(_) => Type::Value(common),
            Signature::Dot | Signature::Length | Signature::Distance => Type::scalar(common.kind),
            Signature::Cross if common == ValueType::vector(ScalarKind::F32, 3) => {
                Type::Value(common)
            }
            Signature::Cross => {
                self.no_match(name, Some(signature), &types, span);
                Type::Error
            }
            Signature::Classify => Type::value(ScalarKind::Bool, common.width),
        }
    }

    /// The one argument type an intrinsic works on, converting under `-a`.
    fn unify_args(
        &mut self,
        name: &str,
        signature: Signature,
        args: &[Expr],
        types: &[Type],
        values: &[ValueType],
        span: Span,
    ) -> Option<ValueType> {
        let first = values[0];
        let same = values.iter().all(|v| *v == first);
        let mut common = first;
        if !same {
            for v in values {
                if v.kind.promotion_rank() > common.kind.promotion_rank() {
                    common.kind = v.kind;
                }
                common.width = common.width.max(v.width);
            }
        }
        let float_only = !matches!(signature, Signature::NumericMap(_));
        if common.kind == ScalarKind::Bool || (float_only && !common.kind.is_float()) {
            if common.kind == ScalarKind::Bool {
                self.no_match(name, Some(signature), types, span);
                return None;
            }
            common.kind = ScalarKind::F32;
            let warning = Diagnostic::warning(
                Code::ArgumentsConvertedToFloat,
                1,
                span,
                format!("all Parameters of \"{name}\" are converted to float"),
            );
            match self.conversion_reporting() {
                ConversionReporting::Silent => {}
                ConversionReporting::StrongTyping => {
                    self.diags.push(warning.into_strong_typing_warning());
                }
                ConversionReporting::Rules => self.diags.push(warning),
            }
        }
        let target = Type::Value(common);
        for (n, (arg, ty)) in args.iter().zip(types).enumerate() {
            if *ty == target {
                continue;
            }
            if same {
                // Only the int -> float conversion, already warned about as a whole.
                self.info.conversions.push((arg.id, target.clone()));
            } else {
                self.coerce(arg, ty, &target, ConvContext::Argument(n + 1, name));
            }
        }
        Some(common)
    }

    fn reduction_context_error(&mut self, name: &str, span: Span) -> bool {
        let in_reduction = self
            .current_kernel()
            .is_some_and(|k| k.kind == KernelKind::Reduce);
        if in_reduction {
            self.diags.error(
                Code::IntrinsicContext,
                span,
                format!("Illegal to use {name}() function in reduction kernel"),
            );
        }
        in_reduction
    }

    /// `indexof(s)`: the position of the current element of stream `s`, as a float4.
    fn indexof(&mut self, args: &[Expr], span: Span) -> Type {
        let types = self.check_args(args);
        self.reduction_context_error("indexof", span);
        let [arg] = args else {
            self.no_match("indexof", None, &types, span);
            return Type::value(ScalarKind::F32, 4);
        };
        let kind = match &arg.kind {
            ExprKind::Ident(name) => self.lookup(name).map(|v| v.kind.clone()),
            _ => None,
        };
        if let (ExprKind::Ident(name), Some(VarKind::Param(_))) = (&arg.kind, &kind) {
            self.mark_indexed(name);
        }
        let problem = match kind {
            Some(VarKind::Param(
                ParamRole::Input
                | ParamRole::Output
                | ParamRole::Iterator
                | ParamRole::Scatter { .. },
            )) => None,
            Some(
                VarKind::Param(ParamRole::Gather { .. }) | VarKind::LocalArray | VarKind::Shared,
            ) => Some("indexof() operator is not allowed on gather array/local array"),
            _ => Some("indexof() operator allowed only on stream/scatter"),
        };
        if let Some(problem) = problem {
            if !types[0].is_error() {
                self.diags.push(
                    Diagnostic::error(Code::IndexofTarget, arg.span, problem)
                        .with_help("pass an input, output or iterator stream parameter; `instance()` gives the position in the domain"),
                );
            }
        }
        Type::value(ScalarKind::F32, 4)
    }

    /// `instance()`, `instanceInGroup()` and `syncGroup()`.
    fn thread_position(
        &mut self,
        name: &str,
        args: &[Expr],
        span: Span,
        needs_group: bool,
    ) -> Type {
        let types = self.check_args(args);
        if !args.is_empty() {
            self.no_match(name, None, &types, span);
        }
        let in_reduction = self.reduction_context_error(name, span);
        let has_group = self
            .current_kernel()
            .is_some_and(|k| k.group_size.is_some());
        if needs_group && !has_group && !in_reduction {
            self.diags.push(
                Diagnostic::error(
                    Code::IntrinsicContext,
                    span,
                    format!("Illegal to use {name}() for pixel shader kernel"),
                )
                .with_help("give the kernel a thread group: `Attribute[GroupSize(64, 1, 1)]`"),
            );
        }
        Type::value(ScalarKind::I32, 4)
    }

    fn subkernel_call(&mut self, index: usize, callee: &Expr, args: &[Expr], span: Span) -> Type {
        let target = self.info.kernels[index].clone();
        let caller = self.current.as_ref().map(|c| c.index);
        if !target.defined {
            self.diags.push(
                Diagnostic::error(
                    Code::UnknownFunction,
                    callee.span,
                    format!("A function definition must exist for any function: `{}` is declared but not defined in this file", target.name),
                )
                .with_note(Some(target.name_span), "declared here")
                .with_help("subkernels are expanded inline: define it in this file or in a .brh header it includes"),
            );
        }
        if caller == Some(index) {
            self.diags.push(
                Diagnostic::error(
                    Code::Recursion,
                    callee.span,
                    format!("Recursion is not allowed: `{}` calls itself", target.name),
                )
                .with_help("subkernels are expanded inline"),
            );
            self.check_args(args);
            return target.return_type.clone();
        }
        if target.span.start > span.start {
            self.diags.push(
                Diagnostic::error(
                    Code::CallBeforeDefinition,
                    callee.span,
                    format!(
                        "definition must be available before invoking `{}`",
                        target.name
                    ),
                )
                .with_note(Some(target.name_span), "defined here, after the call")
                .with_help("move the subkernel above the kernel that calls it"),
            );
        }
        if target
            .params
            .iter()
            .any(|p| matches!(p.role, ParamRole::Vout { .. }))
        {
            self.diags.error(
                Code::Vout,
                callee.span,
                format!(
                    "a kernel with a vout output cannot be called from a kernel: `{}` pushes values",
                    target.name
                ),
            );
            self.check_args(args);
            return target.return_type.clone();
        }
        if target.has_scatter() {
            self.diags.error(
                Code::CallsScatterKernel,
                callee.span,
                format!(
                    "Illegal to call scatter kernel from any kernel: `{}` has a scatter output",
                    target.name
                ),
            );
            self.check_args(args);
            return target.return_type.clone();
        }
        if args.len() != target.params.len() {
            self.check_args(args);
            self.diags.push(
                Diagnostic::error(
                    Code::ArgumentCount,
                    span,
                    format!(
                        "incorrect number of parameters expect {} actual {}",
                        target.params.len(),
                        args.len()
                    ),
                )
                .with_note(
                    Some(target.name_span),
                    format!("`{}` is defined here", target.name),
                ),
            );
            return target.return_type.clone();
        }
        for (n, (arg, param)) in args.iter().zip(&target.params).enumerate() {
            self.subkernel_argument(n + 1, &target.name, arg, param);
            if self.indexed_params.contains(&(index, n)) {
                self.indexed_argument(n + 1, &target.name, arg, param);
            }
        }
        if let Some(caller) = caller.filter(|_| target.span.start < span.start) {
            self.subkernel_calls.push((caller, index, span));
        }
        target.return_type.clone()
    }

    /// Records that the current kernel's parameter `name` needs its stream position.
    fn mark_indexed(&mut self, name: &str) {
        let Some(kernel) = self.current.as_ref().map(|c| c.index) else {
            return;
        };
        if let Some(n) = self.info.kernels[kernel]
            .params
            .iter()
            .position(|p| p.name == name)
        {
            self.indexed_params.insert((kernel, n));
        }
    }

    /// An argument for a parameter the callee applies `indexof` to: it must be a stream.
    fn indexed_argument(&mut self, n: usize, callee: &str, arg: &Expr, param: &ParamInfo) {
        let stream = match &arg.kind {
            ExprKind::Ident(name) => match self.lookup(name).map(|v| v.kind.clone()) {
                Some(VarKind::Param(
                    ParamRole::Input
                    | ParamRole::Output
                    | ParamRole::Iterator
                    | ParamRole::Scatter { .. },
                )) => Some(name.clone()),
                _ => None,
            },
            _ => None,
        };
        match stream {
            Some(name) => self.mark_indexed(&name),
            None => self.diags.push(
                Diagnostic::error(
                    Code::IndexofTarget,
                    arg.span,
                    format!(
                        "argument {n} must be a stream: `{callee}` needs the stream position \
                         (indexof) of its parameter `{}`",
                        param.name
                    ),
                )
                .with_note(Some(param.span), "the parameter")
                .with_help("pass a stream parameter of the calling kernel"),
            ),
        }
    }

    fn subkernel_argument(&mut self, n: usize, callee: &str, arg: &Expr, param: &ParamInfo) {
        let ty = self.expr(arg);
        if let ParamRole::Gather { dims } = &param.role {
            self.gather_argument(n, arg, &ty, dims, &param.ty);
            return;
        }
        if let Type::Array { .. } = ty {
            let expected = if param.role == ParamRole::Constant {
                "Expected value"
            } else {
                "Expected stream type/variable"
            };
            self.diags.error(
                Code::ArgumentKind,
                arg.span,
                format!("Illegal to use array type at argument {n}: {expected}"),
            );
            return;
        }
        if matches!(
            param.role,
            ParamRole::Output | ParamRole::Reduce | ParamRole::Scatter { .. }
        ) {
            if !matches!(
                arg.kind,
                ExprKind::Ident(_) | ExprKind::Member(..) | ExprKind::Index(..)
            ) {
                self.diags.push(
                    Diagnostic::error(
                        Code::ArgumentKind,
                        arg.span,
                        format!("Argument {n} must be lvalue type"),
                    )
                    .with_label(format!("`{callee}` writes to this argument")),
                );
                return;
            }
            self.check_lvalue(arg);
        }
        self.coerce(arg, &ty, &param.ty, ConvContext::Argument(n, callee));
    }

    fn gather_argument(
        &mut self,
        n: usize,
        arg: &Expr,
        ty: &Type,
        dims: &[Option<u32>],
        param_ty: &Type,
    ) {
        let kind = match &arg.kind {
            ExprKind::Ident(name) => self.lookup(name).map(|v| v.kind.clone()),
            _ => None,
        };
        let problem = match (&kind, ty) {
            (_, Type::Error) => None,
            (Some(VarKind::LocalArray | VarKind::Shared), _) => Some(format!(
                "Local array not allowed to pass as kernel parameter for argument {n}"
            )),
            (
                Some(VarKind::Param(ParamRole::Gather { .. })),
                Type::Array { elem, dims: actual },
            ) => {
                let Type::Array {
                    elem: expected_elem,
                    ..
                } = param_ty
                else {
                    return;
                };
                if actual.len() != dims.len() {
                    Some(format!(
                        "Mismatched dimensions of formal and actual arguments for argument {n}"
                    ))
                } else if elem != expected_elem {
                    Some(format!(
                        "Mismatched resource type of gather array for argument {n}"
                    ))
                } else if actual
                    .iter()
                    .zip(dims)
                    .any(|(a, d)| a.is_some() && d.is_some() && a != d)
                {
                    Some(format!(
                        "Mismatched element count of gather array for argument {n}"
                    ))
                } else {
                    None
                }
            }
            _ => Some(format!("Must be gather array type for argument {n}")),
        };
        if let Some(problem) = problem {
            self.diags.error(Code::ArgumentKind, arg.span, problem);
        }
    }
}
