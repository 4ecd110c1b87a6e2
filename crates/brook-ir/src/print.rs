//! The text form of the IR, for `brcc --emit ir` and snapshot tests.
//!
//! Expressions print as trees inside the statement that evaluates them. Locals print as
//! `name$N` (N is the handle), so shadowed names and inlined temporaries stay distinct;
//! parameters print by name, their roles are in the signature.

use crate::arena::Handle;
use crate::expr::{Access, Expr, ExprKind, Literal, Place, PlaceRoot, UnaryOp};
use crate::module::{Kernel, KernelKind, Module, ParamRole, Type};
use crate::stmt::{Block, Stmt};
use crate::types::ScalarKind;
use std::fmt::Write;

/// The whole module as text.
pub fn print_module(module: &Module) -> String {
    let mut out = String::new();
    for decl in &module.structs {
        let _ = write!(out, "struct {} {{", decl.name);
        for field in &decl.fields {
            let _ = write!(out, " {}: {};", field.name, module.type_name(&field.ty));
        }
        out.push_str(" }\n");
    }
    for kernel in &module.kernels {
        if !out.is_empty() {
            out.push('\n');
        }
        Printer {
            module,
            kernel,
            out: &mut out,
        }
        .kernel();
    }
    out
}

/// A literal as Brook would write it (`1.5f`, `2.0`, `7u`, `(char)-3`).
pub fn literal_text(lit: Literal) -> String {
    match lit.kind {
        ScalarKind::Bool => (lit.bits != 0).to_string(),
        ScalarKind::F32 => format!("{:?}f", f32::from_bits(lit.bits as u32)),
        ScalarKind::F64 => format!("{:?}", f64::from_bits(lit.bits)),
        ScalarKind::I32 => (lit.bits as i64).to_string(),
        ScalarKind::U32 => format!("{}u", lit.bits),
        k if k.is_signed() => format!("({k}){}", lit.bits as i64),
        k => format!("({k}){}", lit.bits),
    }
}

struct Printer<'a> {
    module: &'a Module,
    kernel: &'a Kernel,
    out: &'a mut String,
}

impl Printer<'_> {
    fn kernel(&mut self) {
        let k = self.kernel;
        let kind = match k.kind {
            KernelKind::Map => "kernel",
            KernelKind::Reduce => "reduce kernel",
        };
        let params: Vec<String> = k
            .params
            .iter()
            .map(|p| {
                let role = match &p.role {
                    ParamRole::Gather { dims } => format!("gather{}", dims_text(dims)),
                    ParamRole::Scatter { rank } => {
                        format!("scatter{}", "[]".repeat(*rank as usize))
                    }
                    role => role.name().to_string(),
                };
                format!("{role} {}: {}", p.name, self.module.type_name(&p.ty))
            })
            .collect();
        let _ = write!(self.out, "{kind} {}({})", k.name, params.join(", "));
        if let Some([x, y, z]) = k.group_size {
            let _ = write!(self.out, " group({x}, {y}, {z})");
        }
        for v in &k.vouts {
            let slots: Vec<String> = v.slots.iter().map(|s| s.0.to_string()).collect();
            let _ = write!(
                self.out,
                " vout {}[{}] at {}: slots ({}), count {}",
                v.name,
                v.limit,
                v.position,
                slots.join(", "),
                v.count.0
            );
        }
        self.out.push_str(" {\n");
        for (handle, local) in k.locals.iter() {
            let shared = if local.shared { "shared " } else { "" };
            let _ = writeln!(
                self.out,
                "    {shared}local {}${}: {}",
                local.name,
                handle.index(),
                self.module.type_name(&local.ty)
            );
        }
        self.block(&k.body, 1);
        self.out.push_str("}\n");
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("    ");
        }
    }

    fn block(&mut self, block: &Block, depth: usize) {
        for statement in block.iter() {
            self.indent(depth);
            match &statement.stmt {
                Stmt::Store { place, value } => {
                    let line = format!("{} = {}", self.place(place), self.expr(*value));
                    self.out.push_str(&line);
                    self.out.push('\n');
                }
                Stmt::If {
                    cond,
                    accept,
                    reject,
                } => {
                    let line = format!("if {} {{\n", self.expr(*cond));
                    self.out.push_str(&line);
                    self.block(accept, depth + 1);
                    if !reject.is_empty() {
                        self.indent(depth);
                        self.out.push_str("} else {\n");
                        self.block(reject, depth + 1);
                    }
                    self.indent(depth);
                    self.out.push_str("}\n");
                }
                Stmt::Loop { body, continuing } => {
                    self.out.push_str("loop {\n");
                    self.block(body, depth + 1);
                    if !continuing.is_empty() {
                        self.indent(depth);
                        self.out.push_str("} continuing {\n");
                        self.block(continuing, depth + 1);
                    }
                    self.indent(depth);
                    self.out.push_str("}\n");
                }
                Stmt::Break => self.out.push_str("break\n"),
                Stmt::Continue => self.out.push_str("continue\n"),
                Stmt::Return => self.out.push_str("return\n"),
                Stmt::Barrier => self.out.push_str("barrier\n"),
                Stmt::Collective(c) => self.collective(c, depth),
            }
        }
    }

    /// `r = reduce[lanes, stride](value) with (left, right) { body } -> out`.
    fn collective(&mut self, c: &crate::collective::Collective, depth: usize) {
        let local = |l| self.place(&crate::expr::Place::local(l));
        let (result, left, right, out) = (
            local(c.result),
            local(c.combine.left),
            local(c.combine.right),
            local(c.combine.out),
        );
        let line = format!(
            "{result} = {}[{}, {}]({}) with ({left}, {right}) {{\n",
            c.op.name(),
            c.lanes,
            c.stride,
            self.expr(c.value)
        );
        self.out.push_str(&line);
        self.block(&c.combine.body, depth + 1);
        self.indent(depth);
        self.out.push_str(&format!("}} -> {out}\n"));
    }

    fn param_name(&self, p: crate::module::ParamId) -> String {
        match self.kernel.param(p) {
            Some(param) => param.name.clone(),
            None => format!("{p}"),
        }
    }

    fn local_name(&self, l: Handle<crate::module::Local>) -> String {
        match self.kernel.locals.try_get(l) {
            Some(local) => format!("{}${}", local.name, l.index()),
            None => format!("${}", l.index()),
        }
    }

    fn place(&self, place: &Place) -> String {
        let (mut text, mut ty) = match &place.root {
            PlaceRoot::Local(l) => (
                self.local_name(*l),
                self.kernel.locals.try_get(*l).map(|l| l.ty.clone()),
            ),
            PlaceRoot::Output(p) => (self.param_name(*p), self.param_type(*p)),
            PlaceRoot::Scatter { param, indices } => {
                let mut t = self.param_name(*param);
                for i in indices {
                    let _ = write!(t, "[{}]", self.expr(*i));
                }
                (t, self.param_type(*param))
            }
        };
        for access in &place.path {
            match access {
                Access::Field(f) => {
                    let name = self.field_name(ty.as_ref(), *f);
                    ty = self.field_type(ty.as_ref(), *f);
                    let _ = write!(text, ".{name}");
                }
                Access::Component(c) => {
                    let _ = write!(text, ".{}", component_name(*c));
                    ty = None;
                }
                Access::Index(i) => {
                    let _ = write!(text, "[{}]", self.expr(*i));
                    ty = match ty {
                        Some(Type::Array { elem, .. }) => Some(*elem),
                        _ => None,
                    };
                }
            }
        }
        text
    }

    fn param_type(&self, p: crate::module::ParamId) -> Option<Type> {
        self.kernel.param(p).map(|p| p.ty.clone())
    }

    fn field_name(&self, ty: Option<&Type>, index: u32) -> String {
        match ty {
            Some(Type::Struct(id)) => self
                .module
                .struct_decl(*id)
                .and_then(|d| d.fields.get(index as usize))
                .map_or(format!("{index}"), |f| f.name.clone()),
            _ => format!("{index}"),
        }
    }

    fn field_type(&self, ty: Option<&Type>, index: u32) -> Option<Type> {
        match ty {
            Some(Type::Struct(id)) => self
                .module
                .struct_decl(*id)
                .and_then(|d| d.fields.get(index as usize))
                .map(|f| f.ty.clone()),
            _ => None,
        }
    }

    fn expr(&self, h: Handle<Expr>) -> String {
        let Some(expr) = self.kernel.exprs.try_get(h) else {
            return format!("<bad expr {}>", h.index());
        };
        let list = |args: &[Handle<Expr>]| {
            args.iter()
                .map(|a| self.expr(*a))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match &expr.kind {
            ExprKind::Literal(lit) => literal_text(*lit),
            ExprKind::Compose(args) => {
                format!("{}({})", self.module.type_name(&expr.ty), list(args))
            }
            ExprKind::Splat(a) => format!("{}({})", self.module.type_name(&expr.ty), self.expr(*a)),
            ExprKind::Load(place) => self.place(place),
            ExprKind::Input(p) | ExprKind::Constant(p) => self.param_name(*p),
            ExprKind::Gather { param, indices } => {
                let mut t = self.param_name(*param);
                for i in indices {
                    let _ = write!(t, "[{}]", self.expr(*i));
                }
                t
            }
            ExprKind::Field { base, index } => {
                let base_ty = self.kernel.exprs.try_get(*base).map(|e| &e.ty);
                format!("{}.{}", self.expr(*base), self.field_name(base_ty, *index))
            }
            ExprKind::Component { base, index } => {
                format!("{}.{}", self.expr(*base), component_name(*index))
            }
            ExprKind::Swizzle { base, pattern } => {
                let names: String = pattern.iter().map(|c| component_name(*c)).collect();
                format!("{}.{names}", self.expr(*base))
            }
            ExprKind::Unary { op, arg } => {
                let symbol = match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Not => "!",
                    UnaryOp::BitNot => "~",
                };
                format!("{symbol}{}", self.expr(*arg))
            }
            ExprKind::Binary { op, left, right } => {
                format!(
                    "({} {} {})",
                    self.expr(*left),
                    op.symbol(),
                    self.expr(*right)
                )
            }
            ExprKind::Select {
                cond,
                accept,
                reject,
            } => format!(
                "({} ? {} : {})",
                self.expr(*cond),
                self.expr(*accept),
                self.expr(*reject)
            ),
            ExprKind::Convert(a) => {
                format!(
                    "convert<{}>({})",
                    self.module.type_name(&expr.ty),
                    self.expr(*a)
                )
            }
            ExprKind::Math { fun, args } => format!("{}({})", fun.name(), list(args)),
            ExprKind::IndexOf(p) => format!("indexof({})", self.param_name(*p)),
            ExprKind::Instance => "instance()".into(),
            ExprKind::InstanceInGroup => "instanceInGroup()".into(),
        }
    }
}

fn component_name(c: u8) -> char {
    ['x', 'y', 'z', 'w'].get(c as usize).copied().unwrap_or('?')
}

fn dims_text(dims: &[Option<u32>]) -> String {
    dims.iter()
        .map(|d| d.map_or("[]".to_string(), |n| format!("[{n}]")))
        .collect()
}
