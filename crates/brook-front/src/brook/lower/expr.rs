//! Lowering of expressions: literals, names, operators, conversions, constructors, members and
//! indexing. Side effects become statements emitted before the value's pure expression.

use super::{fail, ir_type, Binding, KernelLowerer, Lowered};
use crate::brook::ast::{self, ExprKind as Ast, UnaryOp};
use crate::brook::check::swizzle_indices;
use crate::source::Span;
use brook_ir::{
    BinaryOp, Block, Expr, ExprKind, Handle, Literal, Place, PlaceRoot, ScalarKind, Stmt, Type,
    UnaryOp as IrUnary, ValueType,
};

impl KernelLowerer<'_> {
    /// Lowers an expression used as a value, with the conversion the checker recorded for it.
    pub(super) fn expr(&mut self, e: &ast::Expr) -> Lowered<Handle<Expr>> {
        let value = self.expr_raw(e)?;
        self.apply_conversion(e, value)
    }

    pub(super) fn apply_conversion(
        &mut self,
        e: &ast::Expr,
        value: Handle<Expr>,
    ) -> Lowered<Handle<Expr>> {
        match self.shared.conversions.get(&e.id) {
            Some(target) => {
                let target = ir_type(target, e.span)?;
                self.convert(value, &target, e.span)
            }
            None => Ok(value),
        }
    }

    /// The checker's type of an expression, as an IR type.
    pub(super) fn checked_type(&self, e: &ast::Expr) -> Lowered<Type> {
        match self.shared.info.expr_type(e.id) {
            Some(ty) => ir_type(ty, e.span),
            None => fail(e.span, "expression without a type"),
        }
    }

    /// Converts a value to another value type: kind by `Convert`; a scalar to a vector by
    /// splatting; a vector to a narrower one by dropping components, to a wider one by adding
    /// zeros (the `-a` rules).
    pub(super) fn convert(
        &mut self,
        value: Handle<Expr>,
        target: &Type,
        span: Span,
    ) -> Lowered<Handle<Expr>> {
        if self.ty(value) == target {
            return Ok(value);
        }
        let (Some(from), Some(to)) = (self.ty(value).value(), target.value()) else {
            return fail(span, "only scalar and vector values convert");
        };
        let mut h = value;
        if from.width > 1 && from.width != to.width {
            h = self.resize_vector(h, from, to.width, span);
        }
        if from.kind != to.kind {
            let width = self.value_type(h, span)?.width;
            let ty = Type::Value(ValueType::vector(to.kind, width));
            h = self.append(ExprKind::Convert(h), ty, span);
        }
        if from.width == 1 && to.width > 1 {
            h = self.splat(h, to.width, span);
        }
        Ok(h)
    }

    fn resize_vector(
        &mut self,
        h: Handle<Expr>,
        from: ValueType,
        width: u8,
        span: Span,
    ) -> Handle<Expr> {
        if width == 1 {
            let ty = Type::Value(ValueType::scalar(from.kind));
            return self.append(ExprKind::Component { base: h, index: 0 }, ty, span);
        }
        if width < from.width {
            let ty = Type::Value(ValueType::vector(from.kind, width));
            let pattern = (0..width).collect();
            return self.append(ExprKind::Swizzle { base: h, pattern }, ty, span);
        }
        let scalar = Type::Value(ValueType::scalar(from.kind));
        let mut parts: Vec<Handle<Expr>> = (0..from.width)
            .map(|index| self.append(ExprKind::Component { base: h, index }, scalar.clone(), span))
            .collect();
        for _ in from.width..width {
            parts.push(self.scalar_const(from.kind, 0, span));
        }
        let ty = Type::Value(ValueType::vector(from.kind, width));
        self.append(ExprKind::Compose(parts), ty, span)
    }

    /// A value as a bool of the given width: integers and floats compare unequal to zero.
    pub(super) fn truth_value(
        &mut self,
        h: Handle<Expr>,
        width: u8,
        span: Span,
    ) -> Lowered<Handle<Expr>> {
        let v = self.value_type(h, span)?;
        let mut b = h;
        if v.kind != ScalarKind::Bool {
            let zero = self.value_const(v, 0, span);
            let ty = Type::Value(v.with_kind(ScalarKind::Bool));
            b = self.append(
                ExprKind::Binary {
                    op: BinaryOp::Ne,
                    left: h,
                    right: zero,
                },
                ty,
                span,
            );
        }
        if v.width == 1 && width > 1 {
            b = self.splat(b, width, span);
        }
        Ok(b)
    }

    /// A condition of `if`, loops and `?:`: a bool scalar (`.x` decides for vectors under `-a`).
    pub(super) fn condition(&mut self, e: &ast::Expr) -> Lowered<Handle<Expr>> {
        let h = self.expr(e)?;
        let v = self.value_type(h, e.span)?;
        let scalar = if v.width > 1 {
            let ty = Type::Value(ValueType::scalar(v.kind));
            self.append(ExprKind::Component { base: h, index: 0 }, ty, e.span)
        } else {
            h
        };
        self.truth_value(scalar, 1, e.span)
    }

    fn expr_raw(&mut self, e: &ast::Expr) -> Lowered<Handle<Expr>> {
        let span = e.span;
        match &e.kind {
            Ast::Ident(name) => self.name_value(name, e),
            Ast::IntLit { value, .. } => {
                let kind = self
                    .checked_type(e)?
                    .value()
                    .map_or(ScalarKind::I32, |v| v.kind);
                Ok(self.literal(Literal::int(kind, *value as i64), span))
            }
            Ast::FloatLit { value, single } => Ok(self.literal(
                if *single {
                    Literal::f32(*value as f32)
                } else {
                    Literal::f64(*value)
                },
                span,
            )),
            Ast::BoolLit(b) => Ok(self.literal(Literal::bool(*b), span)),
            Ast::CharLit(c) => Ok(self.literal(Literal::int(ScalarKind::I8, *c), span)),
            Ast::Unary(op, operand) => self.unary(*op, operand, span),
            Ast::Binary(op, left, right) => self.binary(*op, left, right, e),
            Ast::Assign(op, target, value) => self.assign(*op, target, value, e),
            Ast::Ternary(cond, accept, reject) => self.ternary(cond, accept, reject, e),
            Ast::Comma(first, second) => {
                self.effect(first)?;
                self.expr(second)
            }
            Ast::Cast(_, operand) => {
                let value = self.expr(operand)?;
                let target = self.checked_type(e)?;
                self.convert(value, &target, span)
            }
            Ast::Construct(_, args) => self.construct(args, e),
            Ast::Call(callee, args) => match self.call(callee, args, e)? {
                Some(value) => Ok(value),
                None => fail(span, "a call of a void function has no value"),
            },
            Ast::Index(..) => self.index_value(e),
            Ast::Member(base, field) => {
                let base_value = self.expr(base)?;
                self.member_value(base_value, &field.name, span)
            }
            Ast::StrLit | Ast::Sizeof | Ast::Arrow(..) | Ast::Error => {
                fail(span, "this expression is not supported in kernels")
            }
        }
    }

    /// Evaluates an expression for its side effects only.
    pub(super) fn effect(&mut self, e: &ast::Expr) -> Lowered<()> {
        match &e.kind {
            Ast::Call(callee, args) => self.call(callee, args, e).map(drop),
            Ast::Comma(first, second) => {
                self.effect(first)?;
                self.effect(second)
            }
            _ => self.expr(e).map(drop),
        }
    }

    fn name_value(&mut self, name: &str, ident: &ast::Expr) -> Lowered<Handle<Expr>> {
        let span = ident.span;
        let bound = self.scopes.iter().rev().any(|s| s.contains_key(name));
        let info = self.shared.info;
        if let Some(expansion) = info.constants.expansion(ident.id).filter(|_| !bound) {
            return self.expr(expansion);
        }
        let (kind, ty) = match self.lookup(name, span)? {
            Binding::Local { local, .. } => {
                let ty = self.b.locals[local].ty.clone();
                (ExprKind::Load(Place::local(local)), ty)
            }
            Binding::Input(p) => (ExprKind::Input(p), self.b.params[p.0 as usize].ty.clone()),
            Binding::Constant(p) => (
                ExprKind::Constant(p),
                self.b.params[p.0 as usize].ty.clone(),
            ),
            Binding::Output(p) => {
                let place = Place {
                    root: PlaceRoot::Output(p),
                    path: Vec::new(),
                };
                (
                    ExprKind::Load(place),
                    self.b.params[p.0 as usize].ty.clone(),
                )
            }
            Binding::Alias(place) => {
                let ty = self.place_type(&place, span)?;
                (ExprKind::Load(place), ty)
            }
            Binding::Gather(_) | Binding::Scatter(_) => {
                return fail(span, format!("array `{name}` used as a value"))
            }
        };
        Ok(self.append(kind, ty, span))
    }

    fn unary(&mut self, op: UnaryOp, operand: &ast::Expr, span: Span) -> Lowered<Handle<Expr>> {
        match op {
            UnaryOp::Plus => self.expr(operand),
            UnaryOp::Neg | UnaryOp::BitNot => {
                let arg = self.expr(operand)?;
                let ty = self.ty(arg).clone();
                let op = if op == UnaryOp::Neg {
                    IrUnary::Neg
                } else {
                    IrUnary::BitNot
                };
                Ok(self.append(ExprKind::Unary { op, arg }, ty, span))
            }
            UnaryOp::Not => {
                let arg = self.expr(operand)?;
                let width = self.value_type(arg, span)?.width;
                let arg = self.truth_value(arg, width, span)?;
                let ty = self.ty(arg).clone();
                Ok(self.append(
                    ExprKind::Unary {
                        op: IrUnary::Not,
                        arg,
                    },
                    ty,
                    span,
                ))
            }
            UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec => {
                self.increment(op, operand, span)
            }
            UnaryOp::AddrOf | UnaryOp::Deref => fail(span, "pointers are not supported"),
        }
    }

    fn binary(
        &mut self,
        op: ast::BinaryOp,
        left: &ast::Expr,
        right: &ast::Expr,
        whole: &ast::Expr,
    ) -> Lowered<Handle<Expr>> {
        let ir_op = op;
        if ir_op.is_logic() {
            return self.logic(ir_op, left, right, whole);
        }
        let l = self.expr(left)?;
        let r = self.expr(right)?;
        self.binary_values(ir_op, l, r, whole.span)
    }

    /// `l op r` for two values of one type.
    pub(super) fn binary_values(
        &mut self,
        op: BinaryOp,
        left: Handle<Expr>,
        right: Handle<Expr>,
        span: Span,
    ) -> Lowered<Handle<Expr>> {
        let v = self.value_type(left, span)?;
        let ty = if op.is_comparison() {
            Type::Value(v.with_kind(ScalarKind::Bool))
        } else {
            Type::Value(v)
        };
        Ok(self.append(ExprKind::Binary { op, left, right }, ty, span))
    }

    /// `&&` and `||`: short-circuit when the right operand has side effects.
    fn logic(
        &mut self,
        op: BinaryOp,
        left: &ast::Expr,
        right: &ast::Expr,
        whole: &ast::Expr,
    ) -> Lowered<Handle<Expr>> {
        let width = self.checked_type(whole)?.value().map_or(1, |v| v.width);
        let l = self.expr(left)?;
        let l = self.truth_value(l, width, left.span)?;
        let (effects, r) = self.in_block(|this| {
            let r = this.expr(right)?;
            this.truth_value(r, width, right.span)
        })?;
        if effects.is_empty() || width > 1 {
            self.splice(effects);
            let ty = self.ty(l).clone();
            return Ok(self.append(
                ExprKind::Binary {
                    op,
                    left: l,
                    right: r,
                },
                ty,
                whole.span,
            ));
        }
        let result = self.capture("logic", l, whole.span);
        let Expr {
            kind: ExprKind::Load(place),
            ..
        } = self.b.exprs[result].clone()
        else {
            return fail(whole.span, "temporary is not a load");
        };
        let mut accept = effects;
        accept.push(
            Stmt::Store {
                place: place.clone(),
                value: r,
            },
            super::source_span(right.span),
        );
        let (accept, reject) = if op == BinaryOp::LogicAnd {
            (accept, Block::new())
        } else {
            (Block::new(), accept)
        };
        self.emit(
            Stmt::If {
                cond: result,
                accept,
                reject,
            },
            whole.span,
        );
        Ok(self.append(
            ExprKind::Load(place),
            Type::Value(ValueType::scalar(ScalarKind::Bool)),
            whole.span,
        ))
    }

    /// Appends the statements of a block to the current block.
    pub(super) fn splice(&mut self, block: Block) {
        self.b.splice(block);
    }

    fn ternary(
        &mut self,
        cond: &ast::Expr,
        accept: &ast::Expr,
        reject: &ast::Expr,
        whole: &ast::Expr,
    ) -> Lowered<Handle<Expr>> {
        if self.shared.info.component_selects.contains(&whole.id) {
            return self.component_select(cond, accept, reject, whole);
        }
        let c = self.condition(cond)?;
        let (a_block, a) = self.in_block(|this| this.expr(accept))?;
        let (r_block, r) = self.in_block(|this| this.expr(reject))?;
        if a_block.is_empty() && r_block.is_empty() {
            return Ok(self.select(c, a, r, whole.span));
        }
        let ty = self.ty(a).clone();
        let local = self.new_local("select", ty.clone(), whole.span);
        let store = |block: &mut Block, value, span| {
            block.push(
                Stmt::Store {
                    place: Place::local(local),
                    value,
                },
                super::source_span(span),
            )
        };
        let (mut a_block, mut r_block) = (a_block, r_block);
        store(&mut a_block, a, accept.span);
        store(&mut r_block, r, reject.span);
        self.emit(
            Stmt::If {
                cond: c,
                accept: a_block,
                reject: r_block,
            },
            whole.span,
        );
        Ok(self.append(ExprKind::Load(Place::local(local)), ty, whole.span))
    }

    /// `c ? a : b` with a vector condition, BrookGPU's Cg form: both arms are evaluated (in
    /// order, after the condition) and each component comes from the arm its condition
    /// component picks. The checker has converted the arms to the result's type.
    fn component_select(
        &mut self,
        cond: &ast::Expr,
        accept: &ast::Expr,
        reject: &ast::Expr,
        whole: &ast::Expr,
    ) -> Lowered<Handle<Expr>> {
        let c = self.expr(cond)?;
        let width = self.value_type(c, cond.span)?.width;
        let mut c = self.truth_value(c, width, cond.span)?;
        let (a_block, mut a) = self.in_block(|this| this.expr(accept))?;
        let (r_block, r) = self.in_block(|this| this.expr(reject))?;
        if !(a_block.is_empty() && r_block.is_empty()) {
            // The arms' statements (inlined calls) run after the condition is taken, and the
            // second arm's after the first arm's value.
            c = self.capture("select_condition", c, cond.span);
            self.splice(a_block);
            a = self.capture("select_accept", a, accept.span);
            self.splice(r_block);
        }
        Ok(self.select(c, a, r, whole.span))
    }

    /// `cond ? accept : reject` of the arms' type (a bool scalar or a bool vector condition).
    fn select(
        &mut self,
        cond: Handle<Expr>,
        accept: Handle<Expr>,
        reject: Handle<Expr>,
        span: Span,
    ) -> Handle<Expr> {
        let ty = self.ty(accept).clone();
        self.append(
            ExprKind::Select {
                cond,
                accept,
                reject,
            },
            ty,
            span,
        )
    }

    fn construct(&mut self, args: &[ast::Expr], e: &ast::Expr) -> Lowered<Handle<Expr>> {
        let ty = self.checked_type(e)?;
        if let [single] = args {
            let value = self.expr(single)?;
            return self.convert(value, &ty, e.span);
        }
        let Some(v) = ty.value() else {
            return fail(e.span, "only vectors have constructors");
        };
        let scalar = Type::Value(ValueType::scalar(v.kind));
        let mut parts = Vec::with_capacity(args.len());
        for arg in args {
            let value = self.expr(arg)?;
            parts.push(self.convert(value, &scalar, arg.span)?);
        }
        Ok(self.append(ExprKind::Compose(parts), ty, e.span))
    }

    /// `value.field` or a swizzle of a value.
    pub(super) fn member_value(
        &mut self,
        base: Handle<Expr>,
        field: &str,
        span: Span,
    ) -> Lowered<Handle<Expr>> {
        match self.ty(base).clone() {
            Type::Struct(id) => {
                let decl = &self.shared.info.structs[id.0 as usize];
                let Some(index) = decl.fields.iter().position(|(name, _)| name == field) else {
                    return fail(span, format!("no field `{field}`"));
                };
                let ty = ir_type(&decl.fields[index].1, span)?;
                Ok(self.append(
                    ExprKind::Field {
                        base,
                        index: index as u32,
                    },
                    ty,
                    span,
                ))
            }
            Type::Value(v) => {
                let Some(pattern) = swizzle_indices(field) else {
                    return fail(span, format!("bad swizzle `{field}`"));
                };
                if v.width == 1 {
                    // A scalar's swizzle (`f.x`, `f.xxx`, as Cg allows) repeats it.
                    return Ok(match pattern.len() {
                        1 => base,
                        n => self.splat(base, n as u8, span),
                    });
                }
                if let [index] = pattern[..] {
                    let ty = Type::Value(ValueType::scalar(v.kind));
                    return Ok(self.append(ExprKind::Component { base, index }, ty, span));
                }
                let ty = Type::Value(ValueType::vector(v.kind, pattern.len() as u8));
                Ok(self.append(ExprKind::Swizzle { base, pattern }, ty, span))
            }
            Type::Array { .. } => fail(span, "member of an array"),
        }
    }

    fn index_value(&mut self, e: &ast::Expr) -> Lowered<Handle<Expr>> {
        let (root, indices) = e.index_chain();
        let Ast::Ident(name) = &root.kind else {
            return fail(root.span, "only named arrays can be indexed");
        };
        match self.lookup(name, root.span)? {
            Binding::Gather(param) => {
                let rank = match &self.b.params[param.0 as usize].role {
                    brook_ir::ParamRole::Gather { dims } => dims.len(),
                    _ => 1,
                };
                let indices = self.array_indices(&indices, rank)?;
                let ty = self.b.params[param.0 as usize].ty.clone();
                let element = self.append(ExprKind::Gather { param, indices }, ty, e.span);
                match self.unorm_gathers.get(&param).copied() {
                    Some(unorm) => {
                        let computed = self.checked_type(e)?;
                        self.unorm_value(element, unorm, &computed, e.span)
                    }
                    None => Ok(element),
                }
            }
            _ => {
                let place = self.place(e)?;
                let ty = self.place_type(&place, e.span)?;
                Ok(self.append(ExprKind::Load(place), ty, e.span))
            }
        }
    }

    /// The indices of a gather or scatter, slowest axis first: C-style `a[i][j]` as written, a
    /// vector index `a[v]` as `v.y, v.x` (component 0 is the fastest axis).
    pub(super) fn array_indices(
        &mut self,
        indices: &[&ast::Expr],
        rank: usize,
    ) -> Lowered<Vec<Handle<Expr>>> {
        if let [single] = indices {
            let h = self.expr(single)?;
            let v = self.value_type(h, single.span)?;
            if v.width > 1 {
                let scalar = Type::Value(ValueType::scalar(v.kind));
                return Ok((0..rank.min(usize::from(v.width)))
                    .rev()
                    .map(|c| {
                        self.append(
                            ExprKind::Component {
                                base: h,
                                index: c as u8,
                            },
                            scalar.clone(),
                            single.span,
                        )
                    })
                    .collect());
            }
            return Ok(vec![h]);
        }
        indices.iter().map(|i| self.expr(i)).collect()
    }
}
