//! The validator: what every backend may assume about a module.
//!
//! Checked in this order, so that each step may index freely with what the previous one proved:
//!
//! 1. Handles: every struct id, parameter id and local handle is in range; every expression
//!    refers only to expressions before it in the arena (so the arena is in evaluation order
//!    and has no cycles); structs contain only earlier structs (no recursive types).
//! 2. Types: every expression's recorded type follows from its operands (operands of a binary
//!    operator have one type, conversions are explicit, a gather has one index per axis...);
//!    every store writes a value of the place's type; every condition is a bool scalar.
//! 3. Roles: inputs are read only through `Input`, outputs only through `Output` places, gathers
//!    only through `Gather`, and so on.
//! 4. Control: `break`/`continue` only inside a loop (`continue` not in a `continuing` block),
//!    `barrier` only in kernels with a thread group.

use crate::arena::{Handle, SourceSpan};
use crate::expr::{Access, BinaryOp, Expr, ExprKind, MathFun, Place, PlaceRoot, UnaryOp};
use crate::intrinsic::Signature;
use crate::module::{Kernel, Module, ParamId, ParamRole, Type};
use crate::stmt::{Block, Stmt};
use crate::types::{ScalarKind, ValueType};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A handle or id out of range, or an expression referring to a later one.
    Handle(String),
    /// A type that does not follow the rules.
    Type(String),
    /// A parameter used in a way its role does not allow.
    Role(String),
    /// Misplaced control flow.
    Control(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationError {
    /// The kernel, or `None` for a problem in the struct declarations.
    pub kernel: Option<String>,
    pub span: SourceSpan,
    pub problem: Problem,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (class, text) = match &self.problem {
            Problem::Handle(t) => ("bad handle", t),
            Problem::Type(t) => ("type error", t),
            Problem::Role(t) => ("bad parameter use", t),
            Problem::Control(t) => ("bad control flow", t),
        };
        match &self.kernel {
            Some(k) => write!(f, "invalid IR in kernel `{k}`: {class}: {text}"),
            None => write!(f, "invalid IR: {class}: {text}"),
        }
    }
}

impl std::error::Error for ValidationError {}

/// A module the validator accepted: the form every backend compiles, so a backend may rely
/// on what this module's docs list. Only [`validate`] makes one; it derefs to the [`Module`].
#[derive(Clone, Debug)]
pub struct ValidModule(Module);

impl std::ops::Deref for ValidModule {
    type Target = Module;

    fn deref(&self) -> &Module {
        &self.0
    }
}

impl ValidModule {
    pub fn module(&self) -> &Module {
        &self.0
    }

    pub fn into_module(self) -> Module {
        self.0
    }
}

/// Validates a whole module.
pub fn validate(module: Module) -> Result<ValidModule, ValidationError> {
    check_module(&module)?;
    Ok(ValidModule(module))
}

fn check_module(module: &Module) -> Result<(), ValidationError> {
    validate_structs(module)?;
    for kernel in &module.kernels {
        KernelValidator { module, kernel }.run()?;
    }
    Ok(())
}

fn validate_structs(module: &Module) -> Result<(), ValidationError> {
    for (index, decl) in module.structs.iter().enumerate() {
        for field in &decl.fields {
            if !type_ids_below(&field.ty, index as u32) {
                return Err(ValidationError {
                    kernel: None,
                    span: SourceSpan::default(),
                    problem: Problem::Handle(format!(
                        "field `{}` of struct `{}` refers to a later or unknown struct",
                        field.name, decl.name
                    )),
                });
            }
        }
    }
    Ok(())
}

/// Whether every struct id in `ty` is below `limit`.
fn type_ids_below(ty: &Type, limit: u32) -> bool {
    match ty {
        Type::Value(_) => true,
        Type::Struct(id) => id.0 < limit,
        Type::Array { elem, .. } => type_ids_below(elem, limit),
    }
}

struct KernelValidator<'a> {
    module: &'a Module,
    kernel: &'a Kernel,
}

type Check = Result<(), ValidationError>;

impl KernelValidator<'_> {
    fn run(&self) -> Check {
        let structs = self.module.structs.len() as u32;
        for param in &self.kernel.params {
            if !type_ids_below(&param.ty, structs) {
                return self.fail(
                    param.span,
                    Problem::Handle(format!(
                        "parameter `{}` has an unknown struct type",
                        param.name
                    )),
                );
            }
        }
        for (_, local) in self.kernel.locals.iter() {
            if !type_ids_below(&local.ty, structs) {
                return self.fail(
                    self.kernel.span,
                    Problem::Handle(format!("local `{}` has an unknown struct type", local.name)),
                );
            }
        }
        self.vouts()?;
        for (handle, expr) in self.kernel.exprs.iter() {
            self.expr_handles(handle, expr)?;
        }
        for (handle, expr) in self.kernel.exprs.iter() {
            self.expr_type(handle, expr)?;
        }
        self.block(&self.kernel.body, false, false)
    }

    /// Each vout has `limit` slots that are outputs of its element type and an `int` output
    /// count, none shared with another vout ([`crate::vout`]).
    fn vouts(&self) -> Check {
        let mut seen = Vec::new();
        for vout in &self.kernel.vouts {
            let output_of = |id: ParamId, ty: &Type| {
                self.kernel
                    .param(id)
                    .is_some_and(|p| p.role == ParamRole::Output && p.ty == *ty)
            };
            let int = Type::Value(ValueType::scalar(ScalarKind::I32));
            let shape_ok = vout.slots.len() == vout.limit as usize
                && vout.slots.iter().all(|&id| output_of(id, &vout.ty))
                && output_of(vout.count, &int);
            let ids = vout.slots.iter().chain([&vout.count]);
            if !shape_ok || ids.clone().any(|id| seen.contains(id)) {
                return self.fail(
                    self.kernel.span,
                    Problem::Role(format!(
                        "vout `{}` needs {} output slots of its type and an int output count, its own",
                        vout.name, vout.limit
                    )),
                );
            }
            seen.extend(ids.copied());
        }
        Ok(())
    }

    fn fail(&self, span: SourceSpan, problem: Problem) -> Check {
        Err(ValidationError {
            kernel: Some(self.kernel.name.clone()),
            span,
            problem,
        })
    }

    fn span(&self, h: Handle<Expr>) -> SourceSpan {
        self.kernel.exprs.span(h)
    }

    fn expr_handles(&self, handle: Handle<Expr>, expr: &Expr) -> Check {
        let span = self.span(handle);
        if !type_ids_below(&expr.ty, self.module.structs.len() as u32) {
            return self.fail(
                span,
                Problem::Handle(format!(
                    "expression {} has an unknown struct type",
                    handle.index()
                )),
            );
        }
        let mut children = Vec::new();
        let mut params = Vec::new();
        collect_refs(&expr.kind, &mut children, &mut params);
        if let Some(bad) = children.iter().find(|c| c.index() >= handle.index()) {
            return self.fail(
                span,
                Problem::Handle(format!(
                    "expression {} refers to expression {}, which is not before it",
                    handle.index(),
                    bad.index()
                )),
            );
        }
        if let Some(bad) = params.iter().find(|p| self.kernel.param(**p).is_none()) {
            return self.fail(
                span,
                Problem::Handle(format!(
                    "expression {} refers to {bad}, which does not exist",
                    handle.index()
                )),
            );
        }
        if let ExprKind::Load(place) = &expr.kind {
            self.place_handles(place, span, Some(handle))?;
        }
        Ok(())
    }

    fn place_handles(&self, place: &Place, span: SourceSpan, limit: Option<Handle<Expr>>) -> Check {
        let in_range = |h: &Handle<Expr>| match limit {
            Some(limit) => h.index() < limit.index(),
            None => self.kernel.exprs.contains(*h),
        };
        let ok = match &place.root {
            PlaceRoot::Local(l) => self.kernel.locals.contains(*l),
            PlaceRoot::Output(p) => self.kernel.param(*p).is_some(),
            PlaceRoot::Scatter { param, indices } => {
                self.kernel.param(*param).is_some() && indices.iter().all(in_range)
            }
        } && place.path.iter().all(|a| match a {
            Access::Index(h) => in_range(h),
            _ => true,
        });
        if ok {
            Ok(())
        } else {
            self.fail(
                span,
                Problem::Handle(
                    "a place refers to an unknown local, parameter or expression".into(),
                ),
            )
        }
    }

    fn ty(&self, h: Handle<Expr>) -> &Type {
        &self.kernel.exprs[h].ty
    }

    fn value(&self, h: Handle<Expr>) -> Option<ValueType> {
        self.ty(h).value()
    }

    fn role(&self, p: ParamId) -> &ParamRole {
        &self.kernel.params[p.0 as usize].role
    }

    fn expr_type(&self, handle: Handle<Expr>, expr: &Expr) -> Check {
        match self.expected_type(&expr.kind, &expr.ty) {
            Ok(expected) if expected == expr.ty => Ok(()),
            Ok(expected) => self.fail(
                self.span(handle),
                Problem::Type(format!(
                    "expression {} is recorded as {} but computes {}",
                    handle.index(),
                    self.module.type_name(&expr.ty),
                    self.module.type_name(&expected)
                )),
            ),
            Err(problem) => self.fail(self.span(handle), problem),
        }
    }

    /// The type an expression computes, given its operands. `recorded` is used only where the
    /// kind names its result type (`Compose`, `Splat`, `Convert`).
    fn expected_type(&self, kind: &ExprKind, recorded: &Type) -> Result<Type, Problem> {
        let ty_err = |s: String| Err(Problem::Type(s));
        match kind {
            ExprKind::Literal(lit) => Ok(Type::Value(ValueType::scalar(lit.kind))),
            ExprKind::Compose(args) => self.compose_type(args, recorded),
            ExprKind::Splat(arg) => match (recorded.value(), self.value(*arg)) {
                (Some(v), Some(a)) if v.width > 1 && a == ValueType::scalar(v.kind) => {
                    Ok(recorded.clone())
                }
                _ => ty_err("splat needs a scalar of the vector's kind".into()),
            },
            ExprKind::Load(place) => self.place_type(place),
            ExprKind::Input(p) => match self.role(*p) {
                ParamRole::Input | ParamRole::Iterator => {
                    Ok(self.kernel.params[p.0 as usize].ty.clone())
                }
                role => Err(Problem::Role(format!(
                    "{p} is a {} parameter, not an input",
                    role.name()
                ))),
            },
            ExprKind::Constant(p) => match self.role(*p) {
                ParamRole::Constant => Ok(self.kernel.params[p.0 as usize].ty.clone()),
                role => Err(Problem::Role(format!(
                    "{p} is a {} parameter, not a constant",
                    role.name()
                ))),
            },
            ExprKind::Gather { param, indices } => {
                let ParamRole::Gather { dims } = self.role(*param) else {
                    return Err(Problem::Role(format!("{param} is not a gather array")));
                };
                if dims.len() != indices.len() {
                    return ty_err(format!(
                        "{param} has {} axes but {} indices are given",
                        dims.len(),
                        indices.len()
                    ));
                }
                self.indices_are_scalars(indices, true)?;
                Ok(self.kernel.params[param.0 as usize].ty.clone())
            }
            ExprKind::Field { base, index } => match self.ty(*base) {
                Type::Struct(id) => self.module.structs[id.0 as usize]
                    .fields
                    .get(*index as usize)
                    .map(|f| f.ty.clone())
                    .ok_or_else(|| Problem::Type(format!("struct has no field {index}"))),
                _ => ty_err("field of a non-struct".into()),
            },
            ExprKind::Component { base, index } => match self.value(*base) {
                Some(v) if *index < v.width => Ok(Type::Value(ValueType::scalar(v.kind))),
                _ => ty_err(format!(
                    "component {index} of a value that does not have it"
                )),
            },
            ExprKind::Swizzle { base, pattern } => match self.value(*base) {
                Some(v)
                    if (2..=4).contains(&pattern.len()) && pattern.iter().all(|&c| c < v.width) =>
                {
                    Ok(Type::Value(ValueType::vector(v.kind, pattern.len() as u8)))
                }
                _ => ty_err("bad swizzle".into()),
            },
            ExprKind::Unary { op, arg } => self.unary_type(*op, *arg),
            ExprKind::Binary { op, left, right } => self.binary_type(*op, *left, *right),
            ExprKind::Select {
                cond,
                accept,
                reject,
            } => {
                if self.ty(*accept) != self.ty(*reject) {
                    return ty_err("select arms have different types".into());
                }
                let per_component = match (self.value(*cond), self.value(*accept)) {
                    (Some(c), Some(a)) => {
                        c.kind == ScalarKind::Bool && c.width > 1 && c.width == a.width
                    }
                    _ => false,
                };
                if !self.ty(*cond).is_bool_scalar() && !per_component {
                    return ty_err(
                        "select condition must be a bool scalar or a bool vector of the arms' width"
                            .into(),
                    );
                }
                Ok(self.ty(*accept).clone())
            }
            ExprKind::Convert(arg) => match (self.value(*arg), recorded.value()) {
                (Some(a), Some(t)) if a.width == t.width => Ok(recorded.clone()),
                _ => ty_err("conversion between values of different widths".into()),
            },
            ExprKind::Math { fun, args } => self.math_type(*fun, args),
            ExprKind::IndexOf(p) => match self.role(*p) {
                ParamRole::Input
                | ParamRole::Iterator
                | ParamRole::Output
                | ParamRole::Scatter { .. } => {
                    Ok(Type::Value(ValueType::vector(ScalarKind::F32, 4)))
                }
                role => Err(Problem::Role(format!(
                    "indexof of a {} parameter",
                    role.name()
                ))),
            },
            ExprKind::Instance | ExprKind::InstanceInGroup => {
                Ok(Type::Value(ValueType::vector(ScalarKind::I32, 4)))
            }
        }
    }

    fn compose_type(&self, args: &[Handle<Expr>], recorded: &Type) -> Result<Type, Problem> {
        let expected: Vec<Type> = match recorded {
            Type::Value(v) if v.width > 1 => {
                vec![Type::Value(ValueType::scalar(v.kind)); v.width as usize]
            }
            Type::Struct(id) => self.module.structs[id.0 as usize]
                .fields
                .iter()
                .map(|f| f.ty.clone())
                .collect(),
            _ => return Err(Problem::Type("compose of a scalar or array".into())),
        };
        let found: Vec<Type> = args.iter().map(|a| self.ty(*a).clone()).collect();
        if found == expected {
            Ok(recorded.clone())
        } else {
            Err(Problem::Type(format!(
                "compose of {} has the wrong operands",
                self.module.type_name(recorded)
            )))
        }
    }

    fn indices_are_scalars(
        &self,
        indices: &[Handle<Expr>],
        floats_allowed: bool,
    ) -> Result<(), Problem> {
        for &i in indices {
            match self.value(i) {
                Some(v)
                    if v.width == 1
                        && (v.kind.is_integer() || (floats_allowed && v.kind.is_float())) => {}
                _ => return Err(Problem::Type("an index must be a numeric scalar".into())),
            }
        }
        Ok(())
    }

    fn unary_type(&self, op: UnaryOp, arg: Handle<Expr>) -> Result<Type, Problem> {
        let Some(v) = self.value(arg) else {
            return Err(Problem::Type("unary operator on a non-value".into()));
        };
        let ok = match op {
            UnaryOp::Neg => v.kind != ScalarKind::Bool,
            UnaryOp::Not => v.kind == ScalarKind::Bool,
            UnaryOp::BitNot => v.kind.is_integer(),
        };
        if ok {
            Ok(Type::Value(v))
        } else {
            Err(Problem::Type(format!("{op:?} of a {v}")))
        }
    }

    fn binary_type(
        &self,
        op: BinaryOp,
        left: Handle<Expr>,
        right: Handle<Expr>,
    ) -> Result<Type, Problem> {
        let (Some(l), Some(r)) = (self.value(left), self.value(right)) else {
            return Err(Problem::Type(format!("`{}` on a non-value", op.symbol())));
        };
        if l != r {
            return Err(Problem::Type(format!("`{}` on {l} and {r}", op.symbol())));
        }
        let ok = if op.is_logic() {
            l.kind == ScalarKind::Bool
        } else if op.is_integer_only() {
            l.kind.is_integer()
        } else {
            op == BinaryOp::Eq || op == BinaryOp::Ne || l.kind != ScalarKind::Bool
        };
        if !ok {
            return Err(Problem::Type(format!("`{}` on {l}", op.symbol())));
        }
        if op.is_comparison() {
            Ok(Type::Value(l.with_kind(ScalarKind::Bool)))
        } else {
            Ok(Type::Value(l))
        }
    }

    fn math_type(&self, fun: MathFun, args: &[Handle<Expr>]) -> Result<Type, Problem> {
        let values: Option<Vec<ValueType>> = args.iter().map(|a| self.value(*a)).collect();
        let bad = || Problem::Type(format!("`{}` with the wrong operands", fun.name()));
        let values = values.ok_or_else(bad)?;
        let first = *values.first().ok_or_else(bad)?;
        if values.len() != fun.arity() || values.iter().any(|v| *v != first) {
            return Err(bad());
        }
        let kind_ok = if fun.is_numeric() {
            first.kind != ScalarKind::Bool
        } else {
            first.kind.is_float()
        };
        if !kind_ok {
            return Err(bad());
        }
        Ok(Type::Value(match fun.intrinsic().signature {
            Signature::Dot | Signature::Length | Signature::Distance => {
                ValueType::scalar(first.kind)
            }
            Signature::Cross if first.width != 3 => return Err(bad()),
            Signature::Classify => first.with_kind(ScalarKind::Bool),
            Signature::Cross | Signature::FloatMap(_) | Signature::NumericMap(_) => first,
        }))
    }

    fn place_type(&self, place: &Place) -> Result<Type, Problem> {
        let mut ty = match &place.root {
            PlaceRoot::Local(l) => self.kernel.locals[*l].ty.clone(),
            PlaceRoot::Output(p) => match self.role(*p) {
                ParamRole::Output | ParamRole::Reduce => {
                    self.kernel.params[p.0 as usize].ty.clone()
                }
                role => {
                    return Err(Problem::Role(format!(
                        "{p} is a {} parameter, not an output",
                        role.name()
                    )))
                }
            },
            PlaceRoot::Scatter { param, indices } => {
                let ParamRole::Scatter { rank } = self.role(*param) else {
                    return Err(Problem::Role(format!("{param} is not a scatter array")));
                };
                if usize::from(*rank) != indices.len() {
                    return Err(Problem::Type(format!(
                        "{param} has {rank} axes but {} indices are given",
                        indices.len()
                    )));
                }
                self.indices_are_scalars(indices, true)?;
                self.kernel.params[param.0 as usize].ty.clone()
            }
        };
        for access in &place.path {
            ty = self.access_type(&ty, access)?;
        }
        Ok(ty)
    }

    fn access_type(&self, ty: &Type, access: &Access) -> Result<Type, Problem> {
        match (ty, access) {
            (Type::Struct(id), Access::Field(f)) => self.module.structs[id.0 as usize]
                .fields
                .get(*f as usize)
                .map(|f| f.ty.clone())
                .ok_or_else(|| Problem::Type(format!("no field {f}"))),
            (Type::Value(v), Access::Component(c)) if *c < v.width => {
                Ok(Type::Value(ValueType::scalar(v.kind)))
            }
            (Type::Array { elem, .. }, Access::Index(i)) => {
                self.indices_are_scalars(&[*i], false)?;
                Ok((**elem).clone())
            }
            _ => Err(Problem::Type(format!(
                "access {access:?} on {}",
                self.module.type_name(ty)
            ))),
        }
    }

    fn block(&self, block: &Block, in_loop: bool, in_continuing: bool) -> Check {
        for statement in block.iter() {
            let span = statement.span;
            match &statement.stmt {
                Stmt::Store { place, value } => {
                    self.place_handles(place, span, None)?;
                    if !self.kernel.exprs.contains(*value) {
                        return self.fail(
                            span,
                            Problem::Handle("store of an unknown expression".into()),
                        );
                    }
                    let place_ty = match self.place_type(place) {
                        Ok(ty) => ty,
                        Err(problem) => return self.fail(span, problem),
                    };
                    if place_ty != *self.ty(*value) {
                        return self.fail(
                            span,
                            Problem::Type(format!(
                                "store of a {} into a place of type {}",
                                self.module.type_name(self.ty(*value)),
                                self.module.type_name(&place_ty)
                            )),
                        );
                    }
                }
                Stmt::If {
                    cond,
                    accept,
                    reject,
                } => {
                    if !self.kernel.exprs.contains(*cond) || !self.ty(*cond).is_bool_scalar() {
                        return self.fail(
                            span,
                            Problem::Type("an `if` condition must be a bool scalar".into()),
                        );
                    }
                    self.block(accept, in_loop, in_continuing)?;
                    self.block(reject, in_loop, in_continuing)?;
                }
                Stmt::Loop { body, continuing } => {
                    self.block(body, true, false)?;
                    self.block(continuing, true, true)?;
                }
                Stmt::Break if !in_loop => {
                    return self.fail(span, Problem::Control("`break` outside a loop".into()))
                }
                Stmt::Continue if !in_loop || in_continuing => {
                    return self.fail(
                        span,
                        Problem::Control("`continue` outside a loop body".into()),
                    )
                }
                Stmt::Barrier if self.kernel.group_size.is_none() => {
                    return self.fail(
                        span,
                        Problem::Control("barrier in a kernel without a thread group".into()),
                    )
                }
                Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier => {}
                Stmt::Collective(c) => self.collective(c, span)?,
            }
        }
        Ok(())
    }
}

impl KernelValidator<'_> {
    /// A collective: in a thread-group kernel, its lanes tiling the group, its value, operands,
    /// combined value and result of one type, and a combining body without barriers,
    /// collectives or `return`.
    fn collective(&self, c: &crate::collective::Collective, span: SourceSpan) -> Check {
        let control = |text: String| self.fail(span, Problem::Control(text));
        let Some(size) = self.kernel.group_size else {
            return control("collective in a kernel without a thread group".into());
        };
        let group: u32 = size.iter().product();
        let tile = u64::from(c.lanes) * u64::from(c.stride);
        if c.lanes == 0 || c.stride == 0 || u64::from(group) % tile != 0 {
            return control(format!(
                "collective over {} lanes {} apart in a group of {group}",
                c.lanes, c.stride
            ));
        }
        if !self.kernel.exprs.contains(c.value) {
            return self.fail(
                span,
                Problem::Handle("collective of an unknown expression".into()),
            );
        }
        let f = &c.combine;
        for l in [f.left, f.right, f.out, c.result] {
            let Some(local) = self.kernel.locals.try_get(l) else {
                return self.fail(
                    span,
                    Problem::Handle("collective of an unknown local".into()),
                );
            };
            if local.shared || local.ty != *self.ty(c.value) {
                return self.fail(
                    span,
                    Problem::Type(format!(
                        "collective of a {} through the {} local `{}`",
                        self.module.type_name(self.ty(c.value)),
                        if local.shared {
                            "shared"
                        } else {
                            "differently typed"
                        },
                        local.name
                    )),
                );
            }
        }
        if let Some(what) = forbidden_in_combiner(&f.body) {
            return control(format!("{what} in a collective's combining function"));
        }
        self.block(&f.body, false, false)
    }
}

/// The first barrier, collective or `return` in a combining body.
fn forbidden_in_combiner(block: &Block) -> Option<&'static str> {
    block.iter().find_map(|s| match &s.stmt {
        Stmt::Barrier => Some("barrier"),
        Stmt::Collective(_) => Some("collective"),
        Stmt::Return => Some("`return`"),
        Stmt::If { accept, reject, .. } => {
            forbidden_in_combiner(accept).or_else(|| forbidden_in_combiner(reject))
        }
        Stmt::Loop { body, continuing } => {
            forbidden_in_combiner(body).or_else(|| forbidden_in_combiner(continuing))
        }
        _ => None,
    })
}

/// The expressions and parameters an expression refers to directly.
fn collect_refs(kind: &ExprKind, exprs: &mut Vec<Handle<Expr>>, params: &mut Vec<ParamId>) {
    match kind {
        ExprKind::Literal(_) | ExprKind::Instance | ExprKind::InstanceInGroup => {}
        ExprKind::Compose(args) | ExprKind::Math { args, .. } => exprs.extend(args),
        ExprKind::Splat(a) | ExprKind::Convert(a) => exprs.push(*a),
        ExprKind::Load(place) => {
            if let PlaceRoot::Output(p) | PlaceRoot::Scatter { param: p, .. } = &place.root {
                params.push(*p);
            }
        }
        ExprKind::Input(p) | ExprKind::Constant(p) | ExprKind::IndexOf(p) => params.push(*p),
        ExprKind::Gather { param, indices } => {
            params.push(*param);
            exprs.extend(indices);
        }
        ExprKind::Field { base, .. }
        | ExprKind::Component { base, .. }
        | ExprKind::Swizzle { base, .. } => exprs.push(*base),
        ExprKind::Unary { arg, .. } => exprs.push(*arg),
        ExprKind::Binary { left, right, .. } => exprs.extend([*left, *right]),
        ExprKind::Select {
            cond,
            accept,
            reject,
        } => exprs.extend([*cond, *accept, *reject]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::Arena;
    use crate::expr::Literal;
    use crate::module::{KernelKind, Local, Param};
    use crate::stmt::Block;

    fn kernel(exprs: Arena<Expr>, body: Block) -> Module {
        let mut locals = Arena::new();
        locals.append(
            Local {
                name: "x".into(),
                ty: Type::Value(ValueType::scalar(ScalarKind::F32)),
                shared: false,
            },
            SourceSpan::default(),
        );
        Module {
            source: None,
            structs: Vec::new(),
            kernels: vec![Kernel {
                name: "k".into(),
                kind: KernelKind::Map,
                params: vec![Param {
                    name: "r".into(),
                    ty: Type::Value(ValueType::scalar(ScalarKind::F32)),
                    role: ParamRole::Output,
                    span: SourceSpan::default(),
                }],
                group_size: None,
                vouts: Vec::new(),
                locals,
                exprs,
                body,
                span: SourceSpan::default(),
            }],
        }
    }

    fn literal(exprs: &mut Arena<Expr>, lit: Literal) -> Handle<Expr> {
        exprs.append(
            Expr {
                kind: ExprKind::Literal(lit),
                ty: Type::Value(ValueType::scalar(lit.kind)),
            },
            SourceSpan::default(),
        )
    }

    fn store_output(value: Handle<Expr>) -> Block {
        let mut body = Block::new();
        body.push(
            Stmt::Store {
                place: Place {
                    root: PlaceRoot::Output(ParamId(0)),
                    path: Vec::new(),
                },
                value,
            },
            SourceSpan::default(),
        );
        body
    }

    #[test]
    fn a_well_typed_kernel_validates() {
        let mut exprs = Arena::new();
        let one = literal(&mut exprs, Literal::f32(1.0));
        assert_eq!(check_module(&kernel(exprs, store_output(one))), Ok(()));
    }

    /// `(cond ? (1, 2) : (3, 4)).x` with a condition of `width` bools.
    fn vector_select(width: usize) -> Module {
        let mut exprs = Arena::new();
        let compose = |exprs: &mut Arena<Expr>, parts: Vec<Handle<Expr>>, kind| {
            let ty = Type::Value(ValueType::vector(kind, parts.len() as u8));
            exprs.append(
                Expr {
                    kind: ExprKind::Compose(parts),
                    ty,
                },
                SourceSpan::default(),
            )
        };
        let bools = (0..width)
            .map(|i| literal(&mut exprs, Literal::bool(i % 2 == 0)))
            .collect();
        let cond = compose(&mut exprs, bools, ScalarKind::Bool);
        let pair = |exprs: &mut Arena<Expr>, a: f32, b: f32| {
            let parts = vec![
                literal(exprs, Literal::f32(a)),
                literal(exprs, Literal::f32(b)),
            ];
            compose(exprs, parts, ScalarKind::F32)
        };
        let accept = pair(&mut exprs, 1.0, 2.0);
        let reject = pair(&mut exprs, 3.0, 4.0);
        let select = exprs.append(
            Expr {
                kind: ExprKind::Select {
                    cond,
                    accept,
                    reject,
                },
                ty: Type::Value(ValueType::vector(ScalarKind::F32, 2)),
            },
            SourceSpan::default(),
        );
        let x = exprs.append(
            Expr {
                kind: ExprKind::Component {
                    base: select,
                    index: 0,
                },
                ty: Type::Value(ValueType::scalar(ScalarKind::F32)),
            },
            SourceSpan::default(),
        );
        kernel(exprs, store_output(x))
    }

    #[test]
    fn a_select_takes_a_bool_vector_of_its_arms_width_only() {
        assert_eq!(check_module(&vector_select(2)), Ok(()));
        let err = check_module(&vector_select(3)).expect_err("bool3 condition, float2 arms");
        assert!(matches!(err.problem, Problem::Type(_)), "{err}");
    }

    #[test]
    fn mixed_operand_types_are_rejected() {
        let mut exprs = Arena::new();
        let one = literal(&mut exprs, Literal::f32(1.0));
        let two = literal(&mut exprs, Literal::int(ScalarKind::I32, 2));
        let sum = exprs.append(
            Expr {
                kind: ExprKind::Binary {
                    op: BinaryOp::Add,
                    left: one,
                    right: two,
                },
                ty: Type::Value(ValueType::scalar(ScalarKind::F32)),
            },
            SourceSpan::default(),
        );
        let err = check_module(&kernel(exprs, store_output(sum))).expect_err("float + int");
        assert!(matches!(err.problem, Problem::Type(_)), "{err}");
    }

    #[test]
    fn forward_references_and_bad_roles_are_rejected() {
        let mut exprs = Arena::new();
        let forward = exprs.append(
            Expr {
                kind: ExprKind::Unary {
                    op: UnaryOp::Neg,
                    arg: Handle::from_index(5),
                },
                ty: Type::Value(ValueType::scalar(ScalarKind::F32)),
            },
            SourceSpan::default(),
        );
        let err = check_module(&kernel(exprs, store_output(forward))).expect_err("forward");
        assert!(matches!(err.problem, Problem::Handle(_)), "{err}");

        let mut exprs = Arena::new();
        let input = exprs.append(
            Expr {
                kind: ExprKind::Input(ParamId(0)),
                ty: Type::Value(ValueType::scalar(ScalarKind::F32)),
            },
            SourceSpan::default(),
        );
        let err =
            check_module(&kernel(exprs, store_output(input))).expect_err("output read as input");
        assert!(matches!(err.problem, Problem::Role(_)), "{err}");
    }

    #[test]
    fn misplaced_control_flow_is_rejected() {
        let mut body = Block::new();
        body.push(Stmt::Break, SourceSpan::default());
        let err = check_module(&kernel(Arena::new(), body)).expect_err("break outside a loop");
        assert!(matches!(err.problem, Problem::Control(_)), "{err}");
        let mut body = Block::new();
        body.push(Stmt::Barrier, SourceSpan::default());
        assert!(check_module(&kernel(Arena::new(), body)).is_err());
    }
}
