//! Typing of kernel expressions: names, literals, operators, casts, constructors, swizzles,
//! member access and array indexing. Calls are in [`super::call`].

use super::ops::ConvContext;
use super::{Checker, ParamRole, Type, VarKind};
use crate::brook::ast::{BinaryOp, Expr, ExprKind, Ident, TypeSpec, UnaryOp};
use crate::brook::Dialect;
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;
use brook_ir::{ScalarKind, ValueType};

/// Component indices of a swizzle such as `xyzw`, `wzyx` or `rgba`.
pub fn swizzle_indices(text: &str) -> Option<Vec<u8>> {
    let sets = ["xyzw", "rgba"];
    let set = sets
        .iter()
        .find(|set| text.chars().all(|c| set.contains(c)))?;
    if text.is_empty() || text.len() > 4 {
        return None;
    }
    Some(
        text.chars()
            .map(|c| set.find(c).unwrap_or(0) as u8)
            .collect(),
    )
}

impl Checker<'_> {
    /// Checks an expression and records its type.
    pub fn expr(&mut self, e: &Expr) -> Type {
        let ty = self.expr_inner(e);
        self.record_type(e.id, &ty);
        ty
    }

    fn expr_inner(&mut self, e: &Expr) -> Type {
        match &e.kind {
            ExprKind::Ident(name) => self.name(name, e),
            ExprKind::IntLit {
                value,
                unsigned,
                long,
            } => self.int_literal(*value, *unsigned, *long, e.span),
            ExprKind::FloatLit { single, .. } => Type::scalar(if *single {
                ScalarKind::F32
            } else {
                ScalarKind::F64
            }),
            ExprKind::BoolLit(_) => Type::scalar(ScalarKind::Bool),
            ExprKind::CharLit(_) => Type::scalar(ScalarKind::I8),
            ExprKind::StrLit => {
                self.diags.error(
                    Code::StringInKernel,
                    e.span,
                    "String constant in kernel not allowed",
                );
                Type::Error
            }
            ExprKind::Error => Type::Error,
            ExprKind::Sizeof => {
                self.diags
                    .error(Code::SizeofInKernel, e.span, "Sizeof not allowed in kernel");
                Type::Error
            }
            ExprKind::Unary(op, operand) => {
                let ty = self.expr(operand);
                if matches!(
                    op,
                    UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec
                ) {
                    self.check_lvalue(operand);
                }
                self.unary_type(*op, operand, &ty, e.span)
            }
            ExprKind::Binary(op, left, right) => {
                let lt = self.expr(left);
                let rt = self.expr(right);
                self.binary_type(*op, left, &lt, right, &rt)
            }
            ExprKind::Assign(op, target, value) => self.assignment(*op, target, value, e),
            ExprKind::Ternary(cond, then, otherwise) => self.ternary(cond, then, otherwise, e),
            ExprKind::Comma(first, second) => {
                self.expr(first);
                self.expr(second)
            }
            ExprKind::Cast(spec, operand) => self.cast(spec, operand, e.span),
            ExprKind::Construct(spec, args) => self.construct(spec, args, e.span),
            ExprKind::Call(callee, args) => self.call(callee, args, e.span),
            ExprKind::Index(..) => self.index(e),
            ExprKind::Member(base, field) => self.member(base, field),
            ExprKind::Arrow(base, _) => {
                self.expr(base);
                self.diags.error(
                    Code::PointerInKernel,
                    e.span,
                    "pointers not allowed inside kernel: pointer dereference(->)",
                );
                Type::Error
            }
        }
    }

    fn name(&mut self, name: &str, ident: &Expr) -> Type {
        let span = ident.span;
        if let Some(var) = self.lookup(name) {
            return var.ty.clone();
        }
        // An object-like `#define` (left in the text without -pp) whose body is an expression:
        // the body, as the C++ compiler would read the name.
        if let Some(expansion) = self.info.constants.expansion(ident.id).cloned() {
            return self.expr(&expansion);
        }
        if name == "discard" {
            self.diags.push(
                Diagnostic::error(
                    Code::GraphicsOnly,
                    span,
                    "`discard` is not supported: BrookGPU's OpenGL and DirectX backends dropped an output element this way (a fragment kill); Brook's devices write every output element",
                )
                .with_help("write the kept elements with a `vout` stream (`push`), or write the old value (an input of the previous values) where the element is to be kept"),
            );
            return Type::Error;
        }
        let help = if self.kernel_index.contains_key(name) {
            format!("`{name}` is a kernel: call it as `{name}(...)`")
        } else if self.info.constants.macro_is_ambiguous(name) {
            format!("`{name}` is a macro with more than one `#define` (in `#if` branches, or around an `#undef`): brcc cannot tell which one the C++ compiler sees; define it once, or compile with -pp to have brcc decide the `#if`s")
        } else if let Some(body) = self.info.constants.macro_body(name) {
            format!("`{name}` is a macro (`#define {name} {body}`) that brcc does not read as an expression here (its body is not one, expands back to itself or grows too large); compile with -pp to have brcc expand macros as text in kernel code")
        } else {
            "declare it before use, or pass it to the kernel as a parameter".to_string()
        };
        self.diags.push(
            Diagnostic::error(
                Code::UndefinedName,
                span,
                format!("variable not defined: `{name}`"),
            )
            .with_label("not found in this kernel")
            .with_help(help),
        );
        Type::Error
    }

    fn int_literal(&mut self, value: u64, unsigned: bool, long: bool, span: Span) -> Type {
        if long {
            self.diags.error(
                Code::UnsupportedType,
                span,
                "Unsupported variable type: long literals are reserved",
            );
            return Type::Error;
        }
        let limit = if unsigned {
            u64::from(u32::MAX)
        } else {
            i32::MAX as u64
        };
        if value > limit {
            self.diags.push(
                Diagnostic::error(
                    Code::MalformedNumber,
                    span,
                    format!(
                        "integer literal {value} is out of range for {}",
                        if unsigned { "uint" } else { "int" }
                    ),
                )
                .with_help("int literals go up to 2147483647; add `u` for uint, up to 4294967295"),
            );
            return Type::Error;
        }
        Type::scalar(if unsigned {
            ScalarKind::U32
        } else {
            ScalarKind::I32
        })
    }

    /// Checks that a condition is a scalar (seed 003, section 6.3.8).
    pub fn condition(&mut self, cond: &Expr) {
        let ty = self.expr(cond);
        self.condition_type(cond, &ty, false);
    }

    /// Reports a condition of type `ty` that is not a scalar; `brookgpu_accepts`: the BrookGPU
    /// dialect would take it (the condition of `?:`).
    fn condition_type(&mut self, cond: &Expr, ty: &Type, brookgpu_accepts: bool) {
        match ty.clone() {
            Type::Error => {}
            Type::Value(v) if v.width == 1 => {}
            Type::Value(v) if self.strong() => {
                let mut error = Diagnostic::error(
                    Code::Condition,
                    cond.span,
                    "conditional expression must be a scalar data type",
                )
                .with_label(format!("this condition is a {v}"))
                .with_help("test one component (`c.x`), or pass -a to let the x component decide");
                if brookgpu_accepts {
                    error = error.with_brookgpu_help();
                }
                self.diags.push(error);
            }
            Type::Value(v) => {
                self.diags.push(Diagnostic::warning(
                    Code::Condition,
                    1,
                    cond.span,
                    format!("conditional expression of type {v}: only the x component decides"),
                ));
            }
            other => {
                let name = self.type_name(&other);
                self.diags.push(
                    Diagnostic::error(
                        Code::ConditionType,
                        cond.span,
                        "conditional resultant type is not a Arithmetic type",
                    )
                    .with_label(format!("this is a {name}")),
                );
            }
        }
    }

    fn assignment(
        &mut self,
        op: Option<BinaryOp>,
        target: &Expr,
        value: &Expr,
        whole: &Expr,
    ) -> Type {
        let target_type = self.expr(target);
        self.check_lvalue(target);
        let update = match (op, &value.kind) {
            (Some(op), _) => Some((op, target.span)),
            (None, ExprKind::Binary(op, ..)) => Some((*op, value.span)),
            _ => None,
        };
        if let Some((op, at)) = update {
            self.check_reduction_update(op, target, at);
        }
        let value_type = self.expr(value);
        match op {
            None => self.coerce(value, &value_type, &target_type, ConvContext::Assignment),
            Some(op) => {
                let result = self.binary_type(op, target, &target_type, value, &value_type);
                if !result.is_error() && result != target_type {
                    self.coerce(whole, &result, &target_type, ConvContext::Assignment);
                }
            }
        }
        target_type
    }

    fn ternary(&mut self, cond: &Expr, then: &Expr, otherwise: &Expr, whole: &Expr) -> Type {
        let cond_type = self.expr(cond);
        let a = self.expr(then);
        let b = self.expr(otherwise);
        let brookgpu = self.options.dialect == Dialect::BrookGpu;
        match cond_type.as_value() {
            Some(c) if c.width > 1 && brookgpu => {
                return self.component_select(c.width, (then, &a), (otherwise, &b), whole);
            }
            _ => self.condition_type(cond, &cond_type, true),
        }
        if a == b || a.is_error() || b.is_error() {
            return if a.is_error() { b } else { a };
        }
        match (a.as_value(), b.as_value()) {
            (Some(x), Some(y)) => {
                let kind = if x.kind.promotion_rank() >= y.kind.promotion_rank() {
                    x.kind
                } else {
                    y.kind
                };
                let common = Type::Value(ValueType::vector(kind, x.width.max(y.width)));
                let warning = Diagnostic::error(
                    Code::TernaryMismatch,
                    then.span.to(otherwise.span),
                    "Mismatched types: True expression type and false expression type must have same types and same number of components",
                )
                .with_label(format!("{x} and {y}"));
                self.convert_operands([(then, &a), (otherwise, &b)], &common, warning);
                common
            }
            _ => {
                let (an, bn) = (self.type_name(&a), self.type_name(&b));
                self.diags.push(
                    Diagnostic::error(
                        Code::TernaryMismatch,
                        then.span.to(otherwise.span),
                        "Mismatched types: True expression type and false expression type must have same types and same number of components",
                    )
                    .with_label(format!("{an} and {bn}")),
                );
                Type::Error
            }
        }
    }

    /// BrookGPU's Cg form of `c ? a : b` with a vector condition of `width` components: each
    /// component from the arm its condition component picks; an arm is a vector of that width
    /// or a scalar (broadcast). The result is a vector of the arms' common kind.
    fn component_select(
        &mut self,
        width: u8,
        (then, a): (&Expr, &Type),
        (otherwise, b): (&Expr, &Type),
        whole: &Expr,
    ) -> Type {
        if a.is_error() || b.is_error() {
            return Type::Error;
        }
        let fits = |t: &Type| t.as_value().filter(|v| v.width == 1 || v.width == width);
        let (Some(x), Some(y)) = (fits(a), fits(b)) else {
            let (an, bn) = (self.type_name(a), self.type_name(b));
            self.diags.push(
                Diagnostic::error(
                    Code::TernaryMismatch,
                    then.span.to(otherwise.span),
                    format!("a condition of {width} components selects per component: each arm must be a scalar or have {width} components"),
                )
                .with_label(format!("{an} and {bn}")),
            );
            return Type::Error;
        };
        let kind = if x.kind.promotion_rank() >= y.kind.promotion_rank() {
            x.kind
        } else {
            y.kind
        };
        let common = Type::Value(ValueType::vector(kind, width));
        for (arm, ty) in [(then, a), (otherwise, b)] {
            if *ty != common {
                self.convert_quietly(arm, &common);
            }
        }
        self.info.component_selects.insert(whole.id);
        common
    }

    fn cast(&mut self, spec: &TypeSpec, operand: &Expr, span: Span) -> Type {
        let target = self.resolve_type(spec);
        let from = self.expr(operand);
        match (&from, &target) {
            (Type::Error, _) | (_, Type::Error) => {}
            (Type::Array { .. }, _) => {
                self.diags.error(
                    Code::OperandType,
                    operand.span,
                    "Illegal to use array type as casting expression",
                );
                return Type::Error;
            }
            // Cg's casts, in the BrookGPU dialect: the leading components, or a scalar repeated.
            (Type::Value(f), Type::Value(t))
                if f.width != t.width
                    && (f.width == 1 || t.width < f.width)
                    && self.options.dialect == Dialect::BrookGpu => {}
            (Type::Value(f), Type::Value(t)) if f.width != t.width => {
                let message = "explicit casting required to have same no of components";
                let cg_cast = f.width == 1 || t.width < f.width;
                if self.strong() {
                    let mut error = Diagnostic::error(Code::CastComponents, span, message)
                        .with_label(format!("casting {f} to {t}"))
                        .with_help("use a swizzle or a constructor to change the number of components, or pass -a");
                    if cg_cast {
                        error = error.with_brookgpu_help();
                    }
                    self.diags.push(error);
                } else {
                    self.diags
                        .push(Diagnostic::warning(Code::CastComponents, 1, span, message));
                }
            }
            (Type::Value(_), Type::Value(_)) => {}
            _ if from == target => {}
            _ => {
                let (f, t) = (self.type_name(&from), self.type_name(&target));
                self.diags.error(
                    Code::MismatchedType,
                    span,
                    format!("Mismatched type: cannot cast {f} to {t}"),
                );
                return Type::Error;
            }
        }
        target
    }

    /// `float4(a, b, c, d)`: one scalar per component (seed 003, section 6.3.5).
    fn construct(&mut self, spec: &TypeSpec, args: &[Expr], span: Span) -> Type {
        let target = self.resolve_type(spec);
        let Type::Value(vector) = target else {
            for arg in args {
                self.expr(arg);
            }
            if !target.is_error() {
                let name = self.type_name(&target);
                self.diags.error(
                    Code::Constructor,
                    span,
                    format!("`{name}` has no constructor"),
                );
            }
            return Type::Error;
        };
        if vector.width == 1 && args.len() == 1 {
            return self.cast(spec, &args[0], span);
        }
        let types: Vec<Type> = args.iter().map(|a| self.expr(a)).collect();
        let vector_arg = types
            .iter()
            .position(|t| t.as_value().is_some_and(|v| v.width > 1));
        if let Some(n) = vector_arg {
            let found = self.type_name(&types[n]);
            self.diags.push(
                Diagnostic::error(Code::Constructor, args[n].span, format!("element {} of a vector constructor must be a scalar: found {found}", n + 1))
                    .with_help("each component can be a scalar constant or scalar variable; use swizzles such as `v.x`"),
            );
            return Type::Value(vector);
        }
        if args.len() != usize::from(vector.width) {
            self.diags.push(
                Diagnostic::error(
                    Code::Constructor,
                    span,
                    format!("a {}-component vector must have {} components specified in the constructor: found {}", vector.width, vector.width, args.len()),
                )
                .with_label(format!("constructing {vector}")),
            );
            return Type::Value(vector);
        }
        let element = Type::scalar(vector.kind);
        for (n, (arg, ty)) in args.iter().zip(&types).enumerate() {
            self.constructor_element(n + 1, arg, ty, &element);
        }
        Type::Value(vector)
    }

    fn constructor_element(&mut self, n: usize, arg: &Expr, ty: &Type, element: &Type) {
        match ty {
            Type::Error => {}
            Type::Value(v) if v.width != 1 => {
                self.diags.push(
                    Diagnostic::error(Code::Constructor, arg.span, format!("element {n} of a vector constructor must be a scalar: found {v}"))
                        .with_help("each component can be a scalar constant or scalar variable; use swizzles such as `v.x`"),
                );
            }
            Type::Value(_) if ty != element && self.strong() => {
                let (found, expected) = (self.type_name(ty), self.type_name(element));
                let mut d = Diagnostic::error(
                    Code::ConstructorElementType,
                    arg.span,
                    format!("Mismatched type for element {n}: actual type is {found} but expected type is {expected}"),
                );
                if let Some(help) = super::ops::literal_help_for(arg, element) {
                    d = d.with_help(help);
                }
                if self.conversion_reporting() == super::ConversionReporting::StrongTyping {
                    self.diags.push(d.into_strong_typing_warning());
                }
                self.convert_quietly(arg, element);
            }
            Type::Value(_) => self.coerce(arg, ty, element, ConvContext::Initialization),
            _ => {
                self.diags.error(
                    Code::Constructor,
                    arg.span,
                    format!("element {n} of a vector constructor must be a scalar"),
                );
            }
        }
    }

    fn member(&mut self, base: &Expr, field: &Ident) -> Type {
        let base_type = self.expr(base);
        match &base_type {
            Type::Error => Type::Error,
            // A scalar has the swizzles of its one component (`f.x`, `f.xxxx`), as Cg allows:
            // BrookGPU code uses them.
            Type::Value(v) => match swizzle_indices(&field.name) {
                Some(indices) if indices.iter().all(|&i| i < v.width) => {
                    Type::value(v.kind, indices.len() as u8)
                }
                _ if v.width == 1 => {
                    self.diags.push(
                        Diagnostic::error(
                            Code::Swizzle,
                            field.span,
                            "Illegal to use swizzle on scalar types",
                        )
                        .with_label(format!("`.{}` on a {v}: a scalar has only `x`", field.name)),
                    );
                    Type::Error
                }
                _ => {
                    self.diags.push(
                        Diagnostic::error(
                            Code::Swizzle,
                            field.span,
                            format!("unrecognized field/swizzle `.{}`", field.name),
                        )
                        .with_label(format!(
                            "a {v} has components {}",
                            &"xyzw"[..usize::from(v.width)]
                        )),
                    );
                    Type::Error
                }
            },
            Type::Struct(id) => {
                let found = self.info.structs[id.0 as usize]
                    .fields
                    .iter()
                    .find(|(name, _)| *name == field.name)
                    .map(|(_, ty)| ty.clone());
                found.unwrap_or_else(|| {
                    let name = self.info.structs[id.0 as usize].name.clone();
                    self.diags.error(
                        Code::Swizzle,
                        field.span,
                        format!(
                            "unrecognized field/swizzle: struct {name} has no field `{}`",
                            field.name
                        ),
                    );
                    Type::Error
                })
            }
            _ => {
                let name = self.type_name(&base_type);
                self.diags.error(
                    Code::Swizzle,
                    field.span,
                    format!("unrecognized field/swizzle: {name} has no fields"),
                );
                Type::Error
            }
        }
    }

    /// A reduction combines partial results by the canonical tree (`SEMANTICS.md`), which is the
    /// sequential result only for an associative operator. Real brcc compiled `r -= a`,
    /// `r /= a` and `r = a - r` without a word; here they compile with a warning (level 0, always shown) that
    /// the result assumes associativity (`+ * | ^ &`, `min`/`max` and conditionals need none).
    fn check_reduction_update(&mut self, op: BinaryOp, target: &Expr, at: Span) {
        let ExprKind::Ident(name) = &target.kind else {
            return;
        };
        let is_target = self
            .lookup(name)
            .is_some_and(|v| v.kind == VarKind::Param(ParamRole::Reduce));
        let non_associative = matches!(
            op,
            BinaryOp::Sub | BinaryOp::Div | BinaryOp::Rem | BinaryOp::Shl | BinaryOp::Shr
        );
        if is_target && non_associative {
            self.diags.push(
                Diagnostic::warning(
                    Code::NonAssociativeReduction,
                    0,
                    at,
                    format!(
                        "reduction variable `{name}` is combined with `{}`, which is not associative: the result is the canonical combine order's, not a sequential fold's",
                        op.symbol()
                    ),
                )
                .with_help("combine with +, *, |, ^, &, min or max for a result independent of the order"),
            );
        }
    }

    /// Checks that `target` may be assigned.
    pub fn check_lvalue(&mut self, target: &Expr) {
        match &target.kind {
            ExprKind::Ident(name) => self.check_assignable_name(name, target.span),
            ExprKind::Member(base, field) => {
                if let Some(indices) = swizzle_indices(&field.name) {
                    let mut seen = [false; 4];
                    if indices
                        .iter()
                        .any(|&i| std::mem::replace(&mut seen[usize::from(i)], true))
                    {
                        self.diags.push(
                            Diagnostic::error(
                                Code::SwizzleRepetition,
                                field.span,
                                "illegal to use components repetition in lvalue expression",
                            )
                            .with_label("a component appears twice"),
                        );
                    }
                }
                self.check_lvalue(base);
            }
            ExprKind::Index(..) => self.check_indexed_lvalue(target),
            _ => {
                self.diags.push(
                    Diagnostic::error(
                        Code::NotLvalue,
                        target.span,
                        "lvalue required: this expression cannot be assigned",
                    )
                    .with_label("not a variable, output, element or component"),
                );
            }
        }
    }

    fn check_assignable_name(&mut self, name: &str, span: Span) {
        let Some(var) = self.lookup(name).cloned() else {
            return;
        };
        let message = match &var.kind {
            VarKind::Param(ParamRole::Input | ParamRole::Iterator) => {
                "Input streams are read only streams"
            }
            VarKind::Param(ParamRole::Constant) => {
                "Non-stream/Non Array inputs are not allowed to modify inside kernel"
            }
            VarKind::Param(ParamRole::Gather { .. }) => "Gather arrays are read only arrays",
            VarKind::Param(ParamRole::Scatter { .. }) | VarKind::LocalArray | VarKind::Shared => {
                self.diags.push(Diagnostic::error(
                    Code::NotLvalue,
                    span,
                    format!("`{name}` is an array: assign one element, as in `{name}[i] = value`"),
                ));
                return;
            }
            VarKind::Local if var.is_const => "lvalue is a constant type",
            _ => return,
        };
        self.diags.push(
            Diagnostic::error(Code::ReadOnly, span, message)
                .with_note(Some(var.span), format!("`{name}` is declared here")),
        );
    }
}
