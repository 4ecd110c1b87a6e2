//! Lowering of places and of the expressions that write them: assignments (plain, compound and
//! to swizzles) and increments.

use super::{fail, ir_type, Binding, KernelLowerer, Lowered};
use crate::brook::ast::{self, ExprKind as Ast, UnaryOp};
use crate::brook::check::swizzle_indices;
use crate::source::Span;
use brook_ir::{Access, BinaryOp, Expr, ExprKind, Handle, Place, PlaceRoot, Stmt, Type, ValueType};

impl KernelLowerer<'_> {
    /// The place an lvalue expression denotes. Index expressions are lowered now; their side
    /// effects are emitted now.
    pub(super) fn place(&mut self, e: &ast::Expr) -> Lowered<Place> {
        match &e.kind {
            Ast::Ident(name) => match self.lookup(name, e.span)? {
                Binding::Local { local, .. } => Ok(Place::local(local)),
                Binding::Output(p) => Ok(Place {
                    root: PlaceRoot::Output(p),
                    path: Vec::new(),
                }),
                Binding::Alias(place) => Ok(place),
                _ => fail(e.span, format!("`{name}` cannot be written")),
            },
            Ast::Index(..) => self.indexed_place(e),
            Ast::Member(base, field) => {
                let mut place = self.place(base)?;
                let access = match self.place_type(&place, base.span)? {
                    Type::Struct(id) => {
                        let decl = &self.shared.info.structs[id.0 as usize];
                        match decl.fields.iter().position(|(n, _)| *n == field.name) {
                            Some(index) => Access::Field(index as u32),
                            None => return fail(field.span, "no such field"),
                        }
                    }
                    Type::Value(v) => match swizzle_indices(&field.name).as_deref() {
                        // `f.x` of a scalar is the scalar itself.
                        Some([0]) if v.width == 1 => return Ok(place),
                        Some([c]) => Access::Component(*c),
                        _ => return fail(field.span, "a multi-component swizzle is not a place"),
                    },
                    Type::Array { .. } => return fail(field.span, "member of an array"),
                };
                place.path.push(access);
                Ok(place)
            }
            _ => fail(e.span, "not an lvalue"),
        }
    }

    fn indexed_place(&mut self, e: &ast::Expr) -> Lowered<Place> {
        let (root, indices) = e.index_chain();
        let Ast::Ident(name) = &root.kind else {
            return fail(root.span, "only named arrays can be indexed");
        };
        match self.lookup(name, root.span)? {
            Binding::Scatter(param) => {
                let rank = match &self.b.params[param.0 as usize].role {
                    brook_ir::ParamRole::Scatter { rank } => usize::from(*rank),
                    _ => 1,
                };
                let indices = self.array_indices(&indices, rank)?;
                Ok(Place {
                    root: PlaceRoot::Scatter { param, indices },
                    path: Vec::new(),
                })
            }
            Binding::Local { local, .. } => {
                let mut place = Place::local(local);
                for index in indices {
                    let h = self.expr(index)?;
                    place.path.push(Access::Index(h));
                }
                Ok(place)
            }
            _ => fail(root.span, format!("`{name}` cannot be indexed here")),
        }
    }

    /// The type of the value at a place.
    pub(super) fn place_type(&self, place: &Place, span: Span) -> Lowered<Type> {
        let mut ty = match &place.root {
            PlaceRoot::Local(l) => self.b.locals[*l].ty.clone(),
            PlaceRoot::Output(p) | PlaceRoot::Scatter { param: p, .. } => {
                self.b.params[p.0 as usize].ty.clone()
            }
        };
        for access in &place.path {
            ty = match (ty, access) {
                (Type::Struct(id), Access::Field(f)) => {
                    let decl = &self.shared.info.structs[id.0 as usize];
                    match decl.fields.get(*f as usize) {
                        Some((_, field)) => ir_type(field, span)?,
                        None => return fail(span, "no such field"),
                    }
                }
                (Type::Value(v), Access::Component(_)) => Type::Value(ValueType::scalar(v.kind)),
                (Type::Array { elem, .. }, Access::Index(_)) => *elem,
                _ => return fail(span, "bad access path"),
            };
        }
        Ok(ty)
    }

    fn load(&mut self, place: &Place, span: Span) -> Lowered<Handle<Expr>> {
        let ty = self.place_type(place, span)?;
        Ok(self.append(ExprKind::Load(place.clone()), ty, span))
    }

    /// `target = value` or `target op= value`; the value of the expression is the new value.
    pub(super) fn assign(
        &mut self,
        op: Option<ast::BinaryOp>,
        target: &ast::Expr,
        value: &ast::Expr,
        whole: &ast::Expr,
    ) -> Lowered<Handle<Expr>> {
        if let Some((base, pattern)) = self.swizzle_target(target)? {
            return self.assign_swizzle(op, target, value, whole, base, pattern);
        }
        let place = self.place(target)?;
        let new_value = match op {
            None => self.expr(value)?,
            Some(op) => {
                let current = self.load(&place, target.span)?;
                self.compound(op, current, target, value, whole)?
            }
        };
        self.emit(
            Stmt::Store {
                place: place.clone(),
                value: new_value,
            },
            whole.span,
        );
        self.load(&place, whole.span)
    }

    /// The value `current op value` of a compound assignment, converted to the target's type.
    fn compound(
        &mut self,
        op: ast::BinaryOp,
        current: Handle<Expr>,
        target: &ast::Expr,
        value: &ast::Expr,
        whole: &ast::Expr,
    ) -> Lowered<Handle<Expr>> {
        let left = self.apply_conversion(target, current)?;
        let right = self.expr(value)?;
        let result = self.binary_values(op, left, right, whole.span)?;
        let target_type = self.checked_type(target)?;
        self.convert(result, &target_type, whole.span)
    }

    /// `v.xy` as an assignment target: the vector's place and the components.
    fn swizzle_target(&mut self, target: &ast::Expr) -> Lowered<Option<(Place, Vec<u8>)>> {
        let Ast::Member(base, field) = &target.kind else {
            return Ok(None);
        };
        let Some(pattern) = swizzle_indices(&field.name).filter(|p| p.len() > 1) else {
            return Ok(None);
        };
        let is_vector = matches!(self.checked_type(base)?, Type::Value(v) if v.width > 1);
        if !is_vector {
            return Ok(None);
        }
        Ok(Some((self.place(base)?, pattern)))
    }

    fn assign_swizzle(
        &mut self,
        op: Option<ast::BinaryOp>,
        target: &ast::Expr,
        value: &ast::Expr,
        whole: &ast::Expr,
        base: Place,
        pattern: Vec<u8>,
    ) -> Lowered<Handle<Expr>> {
        let span = whole.span;
        let new_value = match op {
            None => self.expr(value)?,
            Some(op) => {
                let vector = self.load(&base, span)?;
                let current = self.swizzle(vector, &pattern, span)?;
                self.compound(op, current, target, value, whole)?
            }
        };
        // Every component is stored from one captured value: `v.xy = v.yx` swaps.
        let new_value = self.capture("swizzle", new_value, span);
        let kind = self.value_type(new_value, span)?.kind;
        for (k, &component) in pattern.iter().enumerate() {
            let part = self.append(
                ExprKind::Component {
                    base: new_value,
                    index: k as u8,
                },
                Type::Value(ValueType::scalar(kind)),
                span,
            );
            let place = base.clone().with(Access::Component(component));
            self.emit(Stmt::Store { place, value: part }, span);
        }
        let vector = self.load(&base, span)?;
        self.swizzle(vector, &pattern, span)
    }

    fn swizzle(
        &mut self,
        vector: Handle<Expr>,
        pattern: &[u8],
        span: Span,
    ) -> Lowered<Handle<Expr>> {
        let kind = self.value_type(vector, span)?.kind;
        let ty = Type::Value(ValueType::vector(kind, pattern.len() as u8));
        Ok(self.append(
            ExprKind::Swizzle {
                base: vector,
                pattern: pattern.to_vec(),
            },
            ty,
            span,
        ))
    }

    /// `++x`, `x++`, `--x`, `x--`.
    pub(super) fn increment(
        &mut self,
        op: UnaryOp,
        operand: &ast::Expr,
        span: Span,
    ) -> Lowered<Handle<Expr>> {
        let place = self.place(operand)?;
        let current = self.load(&place, span)?;
        let v = self.value_type(current, span)?;
        let before = if matches!(op, UnaryOp::PostInc | UnaryOp::PostDec) {
            Some(self.capture("old", current, span))
        } else {
            None
        };
        let base = before.unwrap_or(current);
        let one = self.value_const(v, 1, span);
        let step = if matches!(op, UnaryOp::PreInc | UnaryOp::PostInc) {
            BinaryOp::Add
        } else {
            BinaryOp::Sub
        };
        let new_value = self.binary_values(step, base, one, span)?;
        self.emit(
            Stmt::Store {
                place: place.clone(),
                value: new_value,
            },
            span,
        );
        match before {
            Some(old) => Ok(old),
            None => self.load(&place, span),
        }
    }
}
