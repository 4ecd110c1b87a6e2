//! The program-wide rules: one namespace of functions and types collected before any body
//! is checked (so order does not matter), exactly one kernel, signatures, top-level
//! constants, and no recursion among device functions.

use super::ty::{Dim, Ty};
use super::{Checker, FuncContext, Info, Signature, VarKind};
use crate::diagnostic::{Code, Diagnostic};
use crate::loom::ast::{Func, FuncKind, Item, Program, Space, TypeExprKind};
use crate::source::Span;
use std::collections::HashMap;

impl<'p, 'd> Checker<'p, 'd> {
    pub(super) fn new(program: &'p Program, diagnostics: &'d mut crate::Diagnostics) -> Self {
        Checker {
            program,
            diagnostics,
            info: Info {
                types: vec![Ty::Error; program.expr_count as usize],
                ..Info::default()
            },
            funcs: HashMap::new(),
            type_items: HashMap::new(),
            named: HashMap::new(),
            signatures: HashMap::new(),
            scopes: vec![HashMap::new()],
            func: None,
            loops: 0,
            calls: Vec::new(),
            report_missing: true,
            written_roots: Vec::new(),
            array_calls: Vec::new(),
        }
    }

    pub(super) fn check_program(&mut self, end: Span) {
        self.collect_names();
        self.check_kernel_count(end);
        for (index, item) in self.program.items.iter().enumerate() {
            match item {
                Item::Type { name, .. } => {
                    self.named_type(&name.name, name.span);
                }
                Item::Const(decl) => self.declaration(decl, true),
                Item::Func(func) => {
                    let signature = self.signature(index, func);
                    self.signatures.insert(index, signature);
                }
            }
        }
        for (index, item) in self.program.items.iter().enumerate() {
            if let Item::Func(func) = item {
                self.function_body(index, func);
            }
        }
        self.check_recursion();
        self.check_computed_arguments();
    }

    /// Functions and types share one namespace; a second definition of a name is an error.
    fn collect_names(&mut self) {
        let mut seen: HashMap<String, Span> = HashMap::new();
        for (index, item) in self.program.items.iter().enumerate() {
            let name = match item {
                Item::Type { name, .. } => {
                    self.type_items.entry(name.name.clone()).or_insert(index);
                    name
                }
                Item::Func(func) => {
                    self.funcs.entry(func.name.name.clone()).or_insert(index);
                    &func.name
                }
                Item::Const(_) => continue,
            };
            if name.name == "Range" {
                self.diagnostics.error(
                    Code::LoomDuplicate,
                    name.span,
                    "`Range` is a predefined type ({start: Int32, end: Int32})",
                );
            } else if let Some(first) = seen.get(&name.name) {
                self.diagnostics.push(
                    Diagnostic::error(
                        Code::LoomDuplicate,
                        name.span,
                        format!("`{}` is defined twice", name.name),
                    )
                    .with_note(Some(*first), "first defined here"),
                );
            } else {
                seen.insert(name.name.clone(), name.span);
            }
        }
    }

    fn check_kernel_count(&mut self, end: Span) {
        let kernels: Vec<(usize, &Func)> = self
            .program
            .items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| match item {
                Item::Func(f) if f.kind == FuncKind::Kernel => Some((i, f)),
                _ => None,
            })
            .collect();
        match kernels.as_slice() {
            [] if !self.report_missing => {}
            [] => self.diagnostics.push(
                Diagnostic::error(
                    Code::LoomKernelCount,
                    end,
                    "a LOOM program needs exactly one `kernel`, and this one has none",
                )
                .with_help("the kernel is what the host calls: `kernel name(a: Float32[THREADS])`"),
            ),
            [(index, _)] => self.info.kernel = Some(*index),
            [(_, first), rest @ ..] => {
                for (_, extra) in rest {
                    self.diagnostics.push(
                        Diagnostic::error(
                            Code::LoomKernelCount,
                            extra.name.span,
                            format!(
                                "a second kernel `{}`: a LOOM program has exactly one kernel",
                                extra.name.name
                            ),
                        )
                        .with_note(Some(first.name.span), "the first kernel")
                        .with_help(
                            "make the others device functions (`func`) or separate programs",
                        ),
                    );
                }
            }
        }
    }

    fn signature(&mut self, index: usize, func: &Func) -> Signature {
        let params = func
            .params
            .iter()
            .map(|p| {
                let ty = self.resolve_type(&p.ty);
                self.check_param_type(func.kind, &ty, &p.ty);
                match (func.kind, ty) {
                    // A kernel's `T[]` is as long as the array the host passes.
                    (FuncKind::Kernel, Ty::Array { elem, dims }) => Ty::Array {
                        elem,
                        dims: dims
                            .into_iter()
                            .map(|d| if d == Dim::Unsized { Dim::Host } else { d })
                            .collect(),
                    },
                    (_, ty) => ty,
                }
            })
            .collect();
        let ret = func.ret.as_ref().map(|t| {
            let ty = self.resolve_type(t);
            if !ty.is_scalar() && !matches!(ty, Ty::Record(_) | Ty::Error) {
                self.diagnostics.error(
                    Code::LoomType,
                    t.span,
                    format!(
                        "a device function returns a value (a basic type or a record), not {ty}"
                    ),
                );
            }
            ty
        });
        if let Some(ret) = &ret {
            self.info.returns.insert(index, ret.clone());
        }
        Signature {
            kind: func.kind,
            params,
            ret,
        }
    }

    /// Kernel parameters are arrays (global memory) or values; `func` parameters are values
    /// or arrays (by reference).
    fn check_param_type(&mut self, kind: FuncKind, ty: &Ty, written: &crate::loom::ast::TypeExpr) {
        if let (FuncKind::Device, Ty::Array { dims, .. }) = (kind, ty) {
            if dims.iter().any(|d| matches!(d, super::Dim::Slice)) {
                self.diagnostics.error(
                    Code::LoomArraySize,
                    written.span,
                    "a parameter cannot be a slice",
                );
            }
        }
        if let TypeExprKind::Array { .. } = written.kind {
            self.check_dims_known_at_launch(ty, written.span);
        }
    }

    fn function_body(&mut self, index: usize, func: &Func) {
        let Some(signature) = self.signatures.get(&index).cloned() else {
            return;
        };
        self.func = Some(FuncContext {
            item: index,
            kind: func.kind,
            ret: signature.ret.clone(),
            saw_return: false,
        });
        self.push_scope();
        for (i, (param, ty)) in func.params.iter().zip(&signature.params).enumerate() {
            let kind = VarKind::Param {
                func: index,
                index: i,
            };
            self.declare(&param.name, ty.clone(), Space::Local, kind);
        }
        self.block_in_scope(&func.body);
        self.pop_scope();
        let context = self.func.take();
        if !self.report_missing {
            return;
        }
        match func.kind {
            FuncKind::Kernel if !context.is_some_and(|c| c.saw_return) => {
                self.diagnostics.push(
                    Diagnostic::error(
                        Code::LoomKernelReturn,
                        func.name.span,
                        format!("kernel `{}` has no `return` statement", func.name.name),
                    )
                    .with_help("seed 004 (3.6.1): a kernel's body contains at least one `return`"),
                );
            }
            FuncKind::Device if !super::stmt::always_returns(&func.body) => {
                self.diagnostics.push(
                    Diagnostic::error(
                        Code::LoomMissingReturn,
                        func.name.span,
                        format!(
                            "device function `{}` may end without returning a value",
                            func.name.name
                        ),
                    )
                    .with_help("end every path through the function with `return value`"),
                );
            }
            _ => {}
        }
    }

    /// Recursion, direct or through other functions, is an error at a call that closes a
    /// cycle (CUDA devices of the draft's time had no call stack).
    fn check_recursion(&mut self) {
        let mut edges: HashMap<usize, Vec<(usize, Span)>> = HashMap::new();
        for &(from, to, span) in &self.calls {
            edges.entry(from).or_default().push((to, span));
        }
        let mut state: HashMap<usize, u8> = HashMap::new();
        let mut roots: Vec<usize> = edges.keys().copied().collect();
        roots.sort_unstable();
        let mut found: Vec<(Span, Vec<usize>)> = Vec::new();
        for root in roots {
            let mut path = Vec::new();
            self.visit(root, &edges, &mut state, &mut path, &mut found);
        }
        for (span, cycle) in found {
            let names: Vec<String> = cycle
                .iter()
                .map(|&i| match &self.program.items[i] {
                    Item::Func(f) => format!("`{}`", f.name.name),
                    _ => String::new(),
                })
                .collect();
            let message = if names.len() == 2 {
                format!(
                    "{} calls itself: LOOM functions cannot be recursive",
                    names[0]
                )
            } else {
                format!(
                    "recursion: {}; LOOM functions cannot be recursive",
                    names.join(" calls ")
                )
            };
            self.diagnostics.push(
                Diagnostic::error(Code::LoomRecursion, span, message)
                    .with_help("rewrite it with a loop"),
            );
        }
    }

    /// Depth-first search; a call to a function on the current path closes a cycle.
    fn visit(
        &self,
        node: usize,
        edges: &HashMap<usize, Vec<(usize, Span)>>,
        state: &mut HashMap<usize, u8>,
        path: &mut Vec<usize>,
        found: &mut Vec<(Span, Vec<usize>)>,
    ) {
        if state.get(&node).copied().unwrap_or(0) != 0 {
            return;
        }
        state.insert(node, 1);
        path.push(node);
        for &(next, span) in edges.get(&node).map(Vec::as_slice).unwrap_or(&[]) {
            match state.get(&next).copied().unwrap_or(0) {
                1 => {
                    let at = path.iter().position(|&n| n == next).unwrap_or(0);
                    let mut cycle = path[at..].to_vec();
                    cycle.push(next);
                    found.push((span, cycle));
                }
                0 => self.visit(next, edges, state, path, found),
                _ => {}
            }
        }
        path.pop();
        state.insert(node, 2);
    }
}
