//! Kernel bodies: statements, local declarations (with initializers), shared arrays, returns.

use super::ops::ConvContext;
use super::{Checker, CurrentKernel, ParamRole, Type, Var, VarKind};
use crate::brook::ast::{
    Block, Decl, Declarator, Init, Item, Kernel, Program, Stmt, StmtKind, UnsupportedStmt,
};
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;

/// The largest shared array, in 32-bit words (seed 003: "Shared array size must be <= 4K").
const MAX_SHARED_WORDS: u32 = 4096;
/// The largest share of a shared array one thread may own, in bytes (seed 001, 1.17.3).
const MAX_SHARE_BYTES: u32 = 64;

/// True when every path through `stmts` ends in `return`.
fn always_returns(stmts: &[Stmt]) -> bool {
    stmts.last().is_some_and(|last| match &last.kind {
        StmtKind::Return(_) => true,
        StmtKind::Block(block) => always_returns(&block.stmts),
        StmtKind::If {
            then,
            otherwise: Some(otherwise),
            ..
        } => {
            always_returns(std::slice::from_ref(then))
                && always_returns(std::slice::from_ref(otherwise))
        }
        _ => false,
    })
}

/// The largest local array of a kernel instance, in bytes (CUDA's per-thread local memory).
pub const MAX_LOCAL_ARRAY_BYTES: u64 = 512 << 10;

impl Checker<'_> {
    pub(super) fn bodies(&mut self, program: &Program) {
        for item in &program.items {
            let Item::Kernel(kernel) = item else { continue };
            let Some(body) = &kernel.body else { continue };
            let Some(&index) = self.kernel_index.get(&kernel.name.name) else {
                continue;
            };
            if self.info.kernels[index].span != kernel.span {
                continue; // A second definition, already reported.
            }
            self.kernel_body(kernel, body, index);
        }
    }

    fn kernel_body(&mut self, kernel: &Kernel, body: &Block, index: usize) {
        self.current = Some(CurrentKernel {
            index,
            loop_depth: 0,
            shared_arrays: 0,
            pushes: Vec::new(),
        });
        self.push_scope();
        let params = self.info.kernels[index].params.clone();
        for (param, written) in params.iter().zip(&kernel.params) {
            let var = Var {
                ty: param.ty.clone(),
                kind: VarKind::Param(param.role.clone()),
                is_const: false,
                span: param.span,
            };
            self.declare(&written.name, var);
        }
        for stmt in &body.stmts {
            self.stmt(stmt);
        }
        self.vout_limits(kernel, index);
        let return_type = self.info.kernels[index].return_type.clone();
        if !matches!(return_type, Type::Void | Type::Error) && !always_returns(&body.stmts) {
            let end = Span {
                start: body.span.end.saturating_sub(1),
                end: body.span.end,
            };
            self.diags.push(
                Diagnostic::error(
                    Code::MissingReturn,
                    end,
                    format!(
                        "Must return a value: `{}` returns {} but can reach its end",
                        kernel.name.name,
                        self.type_name(&return_type)
                    ),
                )
                .with_label("control reaches here without a return"),
            );
        }
        self.pop_scope();
        self.current = None;
    }

    /// A `vout` without `[N]` keeps as many values as its body has `push` sites, which must
    /// then be outside loops.
    fn vout_limits(&mut self, kernel: &Kernel, index: usize) {
        let pushes = self
            .current
            .as_ref()
            .map(|c| c.pushes.clone())
            .unwrap_or_default();
        for (n, written) in kernel.params.iter().enumerate() {
            let role = &self.info.kernels[index]
                .params
                .get(n)
                .map(|p| p.role.clone());
            let Some(ParamRole::Vout { limit: None }) = role else {
                continue;
            };
            let sites: Vec<bool> = pushes
                .iter()
                .filter(|(p, _)| *p == n)
                .map(|(_, in_loop)| *in_loop)
                .collect();
            if sites.iter().any(|&in_loop| in_loop) {
                self.diags.push(
                    Diagnostic::error(
                        Code::Vout,
                        written.name.span,
                        format!(
                            "vout `{}` is pushed inside a loop: give the most values one instance pushes",
                            written.name.name
                        ),
                    )
                    .with_help(format!("declare it as `vout [N] ... {}<>`", written.name.name)),
                );
            }
            self.info.kernels[index].params[n].role = ParamRole::Vout {
                limit: Some(sites.len() as u32),
            };
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Decl(decl) => self.local_decl(decl),
            StmtKind::Expr(expr) => {
                self.expr(expr);
            }
            StmtKind::Block(block) => {
                self.push_scope();
                for s in &block.stmts {
                    self.stmt(s);
                }
                self.pop_scope();
            }
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                self.condition(cond);
                self.scoped_stmt(then);
                if let Some(otherwise) = otherwise {
                    self.scoped_stmt(otherwise);
                }
            }
            StmtKind::While { cond, body } => {
                self.condition(cond);
                self.loop_body(body);
            }
            StmtKind::DoWhile { body, cond } => {
                self.loop_body(body);
                self.condition(cond);
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                self.push_scope();
                if let Some(init) = init {
                    self.stmt(init);
                }
                if let Some(cond) = cond {
                    self.condition(cond);
                }
                if let Some(step) = step {
                    self.expr(step);
                }
                self.loop_body(body);
                self.pop_scope();
            }
            StmtKind::Break | StmtKind::Continue => self.loop_jump(stmt),
            StmtKind::Return(value) => self.return_stmt(value.as_ref(), stmt.span),
            StmtKind::Empty => {}
            StmtKind::Unsupported(what) => self.unsupported_stmt(*what, stmt.span),
        }
    }

    fn scoped_stmt(&mut self, stmt: &Stmt) {
        self.push_scope();
        self.stmt(stmt);
        self.pop_scope();
    }

    fn loop_body(&mut self, body: &Stmt) {
        if let Some(current) = &mut self.current {
            current.loop_depth += 1;
        }
        self.scoped_stmt(body);
        if let Some(current) = &mut self.current {
            current.loop_depth -= 1;
        }
    }

    fn loop_jump(&mut self, stmt: &Stmt) {
        if self.current.as_ref().is_some_and(|c| c.loop_depth == 0) {
            let word = if matches!(stmt.kind, StmtKind::Break) {
                "break"
            } else {
                "continue"
            };
            self.diags.error(
                Code::Syntax,
                stmt.span,
                format!("`{word}` outside of a loop"),
            );
        }
    }

    fn return_stmt(&mut self, value: Option<&crate::brook::ast::Expr>, span: Span) {
        let expected = self
            .current_kernel()
            .map_or(Type::Error, |k| k.return_type.clone());
        match (value, &expected) {
            (Some(value), Type::Void) => {
                self.expr(value);
                self.diags.push(
                    Diagnostic::error(
                        Code::MismatchedType,
                        value.span,
                        "Mismatched type: a void kernel cannot return a value",
                    )
                    .with_help("kernels write their results to `out` parameters"),
                );
            }
            (Some(value), _) => {
                let ty = self.expr(value);
                self.coerce(value, &ty, &expected, ConvContext::Return);
            }
            (None, Type::Void | Type::Error) => {}
            (None, _) => {
                let name = self.type_name(&expected);
                self.diags.error(
                    Code::MissingReturn,
                    span,
                    format!("Must return a value of type {name}"),
                );
            }
        }
    }

    fn unsupported_stmt(&mut self, what: UnsupportedStmt, span: Span) {
        let (message, help) = match what {
            UnsupportedStmt::Switch => (
                "Switch not supported inside kernel yet",
                "use if / else if chains",
            ),
            UnsupportedStmt::Goto => (
                "control flow statement not supported: goto",
                "use loops with break and continue",
            ),
            UnsupportedStmt::Label => (
                "control flow statement not supported: labels",
                "use loops with break and continue",
            ),
        };
        self.diags
            .push(Diagnostic::error(Code::UnsupportedStatement, span, message).with_help(help));
    }

    fn local_qualifiers(&mut self, decl: &Decl) {
        let q = &decl.qualifiers;
        let misplaced = [
            (
                q.out,
                Code::QualifierPlacement,
                "out qualifier allowed only for kernel parameters",
            ),
            (
                q.reduce,
                Code::QualifierPlacement,
                "reduce qualifier allowed only for kernel parameters",
            ),
            (
                q.iter,
                Code::StreamDeclaration,
                "Iterator not supported inside kernel: iterator streams are declared in host code",
            ),
            (
                q.vout,
                Code::Vout,
                "vout qualifier allowed only for kernel parameters",
            ),
            (
                q.static_,
                Code::StorageClass,
                "static or extern not allowed inside kernel",
            ),
            (
                q.extern_,
                Code::StorageClass,
                "static or extern not allowed inside kernel",
            ),
            (
                q.volatile,
                Code::QualifierPlacement,
                "volatile or Restrict qualifiers not allowed inside kernel",
            ),
            (
                q.restrict,
                Code::QualifierPlacement,
                "volatile or Restrict qualifiers not allowed inside kernel",
            ),
        ];
        for (span, code, message) in misplaced {
            if let Some(span) = span {
                self.diags.error(code, span, message);
            }
        }
    }

    fn local_decl(&mut self, decl: &Decl) {
        self.local_qualifiers(decl);
        let ty = self.resolve_type(&decl.ty);
        if ty == Type::Void {
            self.diags.error(
                Code::UnsupportedType,
                decl.ty.span,
                "Unsupported variable type: a variable cannot be void",
            );
        }
        for declarator in &decl.declarators {
            self.declarator(decl, declarator, &ty);
        }
    }

    fn declarator(&mut self, decl: &Decl, d: &Declarator, ty: &Type) {
        if let Some(span) = d.pointer {
            self.diags.error(
                Code::PointerInKernel,
                span,
                "pointers not allowed inside kernel",
            );
        }
        if let Some((_, span)) = &d.stream_dims {
            self.diags.push(
                Diagnostic::error(
                    Code::StreamDeclaration,
                    *span,
                    "Problem with stream declaration: streams cannot be declared inside kernels",
                )
                .with_help("declare streams in host code and pass them to the kernel"),
            );
        }
        let is_const = decl.qualifiers.const_.is_some();
        if let Some(name) = self.host_only_struct(ty) {
            self.diags.push(
                Diagnostic::error(
                    Code::StreamElementType,
                    d.name.span,
                    format!(
                        "struct `{name}` has an array member: it can be used in host code only"
                    ),
                )
                .with_help("kernel values are scalars, vectors and structs of them"),
            );
        }
        let var = if decl.qualifiers.shared.is_some() {
            self.shared_decl(d, ty)
        } else if let Some((dims, _)) = &d.array_dims {
            let sizes: Vec<Option<u32>> = dims
                .iter()
                .map(|dim| match dim {
                    Some(e) => self.array_size(e, "Local"),
                    None => {
                        self.diags.error(Code::ArraySize, d.name.span, "Local Array size must be non-zero positive int value: give every dimension a size");
                        None
                    }
                })
                .collect();
            let array = Type::Array {
                elem: Box::new(ty.clone()),
                dims: sizes,
            };
            self.local_array_size(d, &array);
            if let Some(init) = &d.init {
                self.init(init, &array);
            }
            Var {
                ty: array,
                kind: VarKind::LocalArray,
                is_const,
                span: d.span,
            }
        } else {
            if let Some(init) = &d.init {
                self.init(init, ty);
            }
            Var {
                ty: ty.clone(),
                kind: VarKind::Local,
                is_const,
                span: d.span,
            }
        };
        if is_const && d.init.is_none() {
            self.diags.error(
                Code::UninitializedConst,
                d.name.span,
                format!("uninitialized const `{}`", d.name.name),
            );
        }
        self.declare(&d.name, var);
    }

    /// A local array lives in each instance's private memory: at most [`MAX_LOCAL_ARRAY_BYTES`].
    fn local_array_size(&mut self, d: &Declarator, array: &Type) {
        let bytes = self.storage_bytes(array);
        if bytes > MAX_LOCAL_ARRAY_BYTES {
            self.diags.push(
                Diagnostic::error(
                    Code::ArraySize,
                    d.name.span,
                    format!(
                        "Local array `{}` takes {bytes} bytes in every instance: at most \
                         {MAX_LOCAL_ARRAY_BYTES} (512 KiB) are allowed",
                        d.name.name
                    ),
                )
                .with_note(
                    None,
                    "512 KiB is the private memory of a GPU thread; every device has the same limit",
                )
                .with_help("keep large tables in a gather stream"),
            );
        }
    }

    /// `shared float4 lds[256];` (seed 001, section 1.17.2).
    fn shared_decl(&mut self, d: &Declarator, ty: &Type) -> Var {
        let group = self.current_kernel().and_then(|k| k.group_size);
        let count = self.current.as_mut().map_or(0, |c| {
            c.shared_arrays += 1;
            c.shared_arrays
        });
        let mut problems: Vec<String> = Vec::new();
        if group.is_none() {
            problems.push(
                "Shared array allowed only for computer shaders: specify GroupSize Attribute"
                    .into(),
            );
        }
        if count > 1 {
            problems.push("Only One Shared local array allowed".into());
        }
        if d.init.is_some() {
            problems.push("Shared Local Array should not be initialized".into());
        }
        let size = match &d.array_dims {
            None => {
                problems.push(
                    "Shared qualifier valid only for Local Array declared inside kernel".into(),
                );
                None
            }
            Some((dims, _)) if dims.len() != 1 => {
                problems.push("Shared Local Array must be 1D".into());
                None
            }
            Some((dims, _)) => dims[0].as_ref().and_then(|e| self.array_size(e, "Shared")),
        };
        let element_bytes = ty.as_value().map_or(0, |v| v.size());
        if element_bytes != 16 && !ty.is_error() {
            problems.push(format!(
                "Shared array type must be 128 bit type: {} is {} bits",
                self.type_name(ty),
                element_bytes * 8
            ));
        }
        if let (Some(size), Some(group)) = (size, group) {
            problems.extend(shared_size_problems(size, group[0], element_bytes));
        }
        for problem in problems {
            self.diags.error(Code::SharedArray, d.span, problem);
        }
        Var {
            ty: Type::Array {
                elem: Box::new(ty.clone()),
                dims: vec![size],
            },
            kind: VarKind::Shared,
            is_const: false,
            span: d.span,
        }
    }

    /// Checks an initializer against the declared type.
    fn init(&mut self, init: &Init, ty: &Type) {
        match (init, ty) {
            (_, Type::Error) => {}
            (Init::Expr(e), _) => {
                let found = self.expr(e);
                self.coerce(e, &found, ty, ConvContext::Initialization);
            }
            (Init::List(items, span), Type::Value(v)) if v.width > 1 => {
                self.list_length(items.len(), usize::from(v.width), *span);
                let element = Type::scalar(v.kind);
                for item in items {
                    self.init(item, &element);
                }
            }
            (Init::List(items, span), Type::Struct(id)) => {
                let fields: Vec<Type> = self.info.structs[id.0 as usize]
                    .fields
                    .iter()
                    .map(|f| f.1.clone())
                    .collect();
                self.list_length(items.len(), fields.len(), *span);
                for (item, field) in items.iter().zip(&fields) {
                    self.init(item, field);
                }
            }
            (Init::List(items, span), Type::Array { elem, dims }) => {
                if items.is_empty() {
                    self.diags.push(Diagnostic::warning(
                        Code::Initializer,
                        2,
                        *span,
                        "Empty array initializer",
                    ));
                }
                let inner = if dims.len() > 1 {
                    Type::Array {
                        elem: elem.clone(),
                        dims: dims[1..].to_vec(),
                    }
                } else {
                    (**elem).clone()
                };
                if let Some(Some(n)) = dims.first() {
                    if items.len() > *n as usize {
                        self.diags.push(Diagnostic::warning(
                            Code::Initializer,
                            2,
                            *span,
                            "Too many initializers",
                        ));
                    }
                }
                for item in items {
                    self.init(item, &inner);
                }
            }
            (Init::List(_, span), Type::Value(_)) => {
                self.diags.error(
                    Code::Initializer,
                    *span,
                    "Initializer is not vector type: a scalar takes a single value",
                );
            }
            (Init::List(_, span), _) => {
                self.diags.error(
                    Code::Initializer,
                    *span,
                    "Mismatched array dimensions and initializer dimensions",
                );
            }
        }
    }

    fn list_length(&mut self, found: usize, expected: usize, span: Span) {
        if found < expected {
            self.diags.push(
                Diagnostic::warning(Code::Initializer, 2, span, "Uninitialized components")
                    .with_label(format!("{found} of {expected} components given")),
            );
        } else if found > expected {
            self.diags.push(
                Diagnostic::warning(Code::Initializer, 2, span, "Too many initializers")
                    .with_label(format!("{found} given, {expected} expected")),
            );
        }
    }
}

/// The size rules linking a shared array to its thread group.
fn shared_size_problems(size: u32, group: u32, element_bytes: u32) -> Vec<String> {
    let mut problems = Vec::new();
    if u64::from(size) * u64::from(element_bytes) / 4 > u64::from(MAX_SHARED_WORDS) {
        problems.push(format!(
            "Shared array size must be <= 4K 32-bit type: {size} elements of {element_bytes} bytes"
        ));
    }
    if !size.is_multiple_of(group) {
        problems.push(format!(
            "SharedArraySize%GroupSize must be zero: {size} % {group} = {}",
            size % group
        ));
    } else if (size / group) * element_bytes > MAX_SHARE_BYTES {
        problems.push(format!(
            "SharedArraySize/GroupSize must be <= {MAX_SHARE_BYTES} bytes per thread: each thread owns {} bytes",
            (size / group) * element_bytes
        ));
    }
    problems
}
