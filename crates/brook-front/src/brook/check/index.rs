//! Array indexing: gather and scatter arrays (vector or C-style indices, seed 003 section
//! 6.3.13), local arrays, and the owner-write rule for shared arrays (seed 001, section 1.17.6).

use super::{Checker, ParamRole, Type, VarKind};
use crate::brook::ast::{BinaryOp, Expr, ExprKind};
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;
use brook_ir::ScalarKind;

/// `instanceInGroup().x`
fn is_thread_id(e: &Expr) -> bool {
    let ExprKind::Member(base, field) = &e.kind else {
        return false;
    };
    let ExprKind::Call(callee, args) = &base.kind else {
        return false;
    };
    field.name == "x"
        && args.is_empty()
        && matches!(&callee.kind, ExprKind::Ident(n) if n == "instanceInGroup")
}

fn mentions_thread_id(e: &Expr) -> bool {
    if is_thread_id(e) {
        return true;
    }
    match &e.kind {
        ExprKind::Binary(_, a, b) => mentions_thread_id(a) || mentions_thread_id(b),
        ExprKind::Unary(_, a) | ExprKind::Cast(_, a) => mentions_thread_id(a),
        _ => false,
    }
}

fn int_literal(e: &Expr) -> Option<i64> {
    match e.kind {
        ExprKind::IntLit { value, .. } => Some(value as i64),
        _ => None,
    }
}

impl Checker<'_> {
    /// The element type of `a[i]...`, checking the indices against the array's kind.
    pub fn index(&mut self, e: &Expr) -> Type {
        let (root, indices) = Expr::index_chain(e);
        let index_types: Vec<Type> = indices.iter().map(|i| self.expr(i)).collect();
        let ExprKind::Ident(name) = &root.kind else {
            self.expr(root);
            self.diags.error(
                Code::Subscript,
                root.span,
                "Array expression of index expression must be variable type",
            );
            return Type::Error;
        };
        let root_type = self.expr(root);
        let Some(var) = self.lookup(name).cloned() else {
            return Type::Error;
        };
        let Type::Array { elem, dims } = root_type else {
            if !root_type.is_error() {
                let found = self.type_name(&root_type);
                self.diags.push(
                    Diagnostic::error(
                        Code::Subscript,
                        root.span,
                        format!("Variable must be array type: `{name}` is a {found}"),
                    )
                    .with_help("use a swizzle such as `.x` to select a vector component"),
                );
            }
            return Type::Error;
        };
        let span = e.span;
        match var.kind {
            VarKind::Param(ParamRole::Gather { .. } | ParamRole::Scatter { .. }) => {
                self.gather_index(dims.len(), &indices, &index_types, span);
            }
            _ => self.local_index(dims.len(), &indices, &index_types, span),
        }
        *elem
    }

    fn gather_index(&mut self, rank: usize, indices: &[&Expr], types: &[Type], span: Span) {
        for (index, ty) in indices.iter().zip(types) {
            if let Type::Value(v) = ty {
                if v.kind == ScalarKind::Bool {
                    self.diags.error(
                        Code::Subscript,
                        index.span,
                        "subscript expression must be an integer or floating-point value",
                    );
                }
            }
        }
        if indices.len() == 1 {
            let Type::Value(v) = &types[0] else { return };
            let width = usize::from(v.width);
            // More components than dimensions: the leading ones are used, as BrookGPU did
            // (`a[indexof(s)]` on a 2-D array).
            if width < rank {
                self.diags.push(
                    Diagnostic::error(Code::Subscript, indices[0].span, "Gather/scatter array dimensions and subscript vector components must match")
                        .with_label(format!("the array has {rank} dimension(s), the index has {width} component(s)")),
                );
            } else if width > 1 {
                self.diags.push(
                    Diagnostic::warning(
                        Code::NonCStyleIndex,
                        1,
                        span,
                        "Strongly recommended to use c-style indexing for gather/scatter arrays",
                    )
                    .with_help("write `a[row][column]`; a vector index `a[v]` means `a[v.y][v.x]`"),
                );
            }
            return;
        }
        let message = "Index expression size either 1 or equal to array dimensions";
        if self.index_count_matches(rank, indices.len(), span, message) {
            self.scalar_indices(indices, types);
        }
    }

    /// Reports `message` unless there is one index per dimension.
    fn index_count_matches(
        &mut self,
        rank: usize,
        count: usize,
        span: Span,
        message: &str,
    ) -> bool {
        if count == rank {
            return true;
        }
        self.diags.push(
            Diagnostic::error(Code::Subscript, span, message).with_label(format!(
                "{count} indices for an array of {rank} dimension(s)"
            )),
        );
        false
    }

    fn scalar_indices(&mut self, indices: &[&Expr], types: &[Type]) {
        for (index, ty) in indices.iter().zip(types) {
            if let Type::Value(v) = ty {
                if v.width != 1 {
                    self.diags.push(
                        Diagnostic::error(
                            Code::Subscript,
                            index.span,
                            "subscript expression must be scalar type",
                        )
                        .with_label(format!("this index is a {v}")),
                    );
                }
            }
        }
    }

    fn local_index(&mut self, rank: usize, indices: &[&Expr], types: &[Type], span: Span) {
        let message =
            "Local array variable dimensions and index expression dimensions must be same";
        if !self.index_count_matches(rank, indices.len(), span, message) {
            return;
        }
        self.scalar_indices(indices, types);
        for (index, ty) in indices.iter().zip(types) {
            if let Type::Value(v) = ty {
                if v.width == 1 && !v.kind.is_integer() {
                    self.diags.error(
                        Code::Subscript,
                        index.span,
                        format!("a local array index must be an integer: found {v}"),
                    );
                }
            }
        }
    }

    /// `a[i] = v` where `a` is an array: scatter outputs, local arrays and shared arrays (with
    /// the owner-write rule) may be written; gather arrays may not.
    pub fn check_indexed_lvalue(&mut self, target: &Expr) {
        let (root, indices) = Expr::index_chain(target);
        let ExprKind::Ident(name) = &root.kind else {
            return;
        };
        let Some(var) = self.lookup(name).cloned() else {
            return;
        };
        match var.kind {
            VarKind::Param(ParamRole::Gather { .. }) => {
                self.diags.push(
                    Diagnostic::error(
                        Code::ReadOnly,
                        target.span,
                        "Gather arrays are read only arrays",
                    )
                    .with_note(
                        Some(var.span),
                        format!("`{name}` is declared here as a gather array"),
                    ),
                );
            }
            VarKind::Shared => {
                if let (Type::Array { dims, .. }, [index]) = (&var.ty, indices.as_slice()) {
                    let size = dims.first().copied().flatten().unwrap_or(0);
                    self.shared_write(index, size);
                }
            }
            VarKind::Param(ParamRole::Scatter { .. }) | VarKind::LocalArray => {}
            _ => self.check_lvalue(root),
        }
    }

    /// `lds[Stride * instanceInGroup().x + offset] = data;`
    fn shared_write(&mut self, index: &Expr, size: u32) {
        let group = self
            .current_kernel()
            .and_then(|k| k.group_size)
            .map_or(1, |g| g[0])
            .max(1);
        let stride_expected = i64::from(size / group);
        let (product, offset) = match &index.kind {
            ExprKind::Binary(BinaryOp::Add, a, b) if is_product(a) => {
                (a.as_ref(), Some(b.as_ref()))
            }
            ExprKind::Binary(BinaryOp::Add, a, b) if is_product(b) => {
                (b.as_ref(), Some(a.as_ref()))
            }
            _ => (index, None),
        };
        if !mentions_thread_id(index) {
            self.shared_error(
                index.span,
                "Shared array index expression must contain instanceInGroup().x".into(),
            );
            return;
        }
        let ExprKind::Binary(BinaryOp::Mul, a, b) = &product.kind else {
            self.shared_error(
                index.span,
                "the index must have the form `stride * instanceInGroup().x + offset`".into(),
            );
            return;
        };
        let stride = if is_thread_id(a) {
            b.as_ref()
        } else if is_thread_id(b) {
            a.as_ref()
        } else {
            self.shared_error(
                product.span,
                "one of the multiplication operand must be instanceInGroup().x".into(),
            );
            return;
        };
        match int_literal(stride) {
            None => self.shared_error(stride.span, "stride must be a integer constant".into()),
            Some(s) if s != stride_expected => self.shared_error(
                stride.span,
                format!("stride value must be equal to (SharedArraySize / groupSize) = {stride_expected}"),
            ),
            Some(_) => {}
        }
        let Some(offset) = offset else {
            self.shared_error(index.span, "offset of Shared array index expression must be a constant integer: add `+ offset`".into());
            return;
        };
        match int_literal(offset) {
            None => self.shared_error(offset.span, "offset must be a integer constant".into()),
            Some(o) if o >= stride_expected => self.shared_error(
                offset.span,
                format!("offset value(\"{o}\") must be in the range of 0 <= offset < (SharedArraySize / groupSize) = {stride_expected}"),
            ),
            Some(_) => {}
        }
    }

    fn shared_error(&mut self, span: Span, message: String) {
        self.diags.push(
            Diagnostic::error(Code::SharedArrayWrite, span, message)
                .with_help("a thread writes only its own share: `lds[stride * instanceInGroup().x + offset] = value;`"),
        );
    }
}

fn is_product(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Binary(BinaryOp::Mul, ..))
}
