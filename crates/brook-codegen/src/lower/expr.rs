//! The expression walk, written once over [`Target`]: each IR expression becomes the flat
//! list of its scalar leaves (Cranelift values for the CPU, PTX registers for the GPU),
//! computed once per statement.
//!
//! How an expression's leaves follow from its operands' leaves — composition, splats,
//! fields, components, swizzles, operators and selects applied leaf by leaf, conversions —
//! does not depend on the target, and is written here ([`ExprWalk::compute`]), as are the
//! math-function dispatch ([`ExprWalk::math`]) and the walks of a place's path
//! ([`ExprWalk::walk_memory`], [`ExprWalk::walk_leaves`]).

use super::{launch, place, Target};
use brook_ir::{Access, Expr, ExprKind, Handle, MathFun, ScalarKind, Type, ValueType};

/// The expression walk over any [`Target`] (every target has it; nothing overrides it).
pub trait ExprWalk<'ir>: Target<'ir> + Sized {
    /// Forgets memoised expression values (at each statement, and when control flow may have
    /// changed what a load reads).
    fn forget(&mut self) {
        self.memo().clear();
    }

    /// An index expression's value as a signed machine-word index ([`Target::to_index`]).
    fn index_value(&mut self, h: Handle<Expr>) -> Result<Self::Leaf, Self::Error> {
        let kind = self.expr_kind(h);
        let v = self.scalar(h)?;
        Ok(self.to_index(kind, v))
    }

    /// Walks a place's path through memory from `addr`: the address (with dynamic indices
    /// added) and a constant byte offset; `ty` becomes the type reached. Array indices are
    /// clamped to the array.
    fn walk_memory(
        &mut self,
        mut addr: Self::Leaf,
        ty: &mut Type,
        path: &[Access],
    ) -> Result<(Self::Leaf, u32), Self::Error> {
        let module = self.module();
        let mut offset = 0u32;
        for access in path {
            match *access {
                Access::Field(f) => {
                    offset += crate::leaves::field_offset(module, ty, f);
                    *ty = crate::leaves::field_leaf(module, ty, f).1;
                }
                Access::Component(c) => {
                    if let Type::Value(v) = ty {
                        offset += u32::from(c) * v.kind.size();
                        *ty = Type::Value(ValueType::scalar(v.kind));
                    }
                }
                Access::Index(h) => {
                    let Type::Array { elem, len } = ty.clone() else {
                        continue;
                    };
                    let kind = self.expr_kind(h);
                    let i = self.scalar(h)?;
                    let size = module.layout(&elem).size;
                    let in_range = self.index_within(h, len);
                    addr = self.array_element(addr, kind, i, (len, size), in_range);
                    *ty = *elem;
                }
            }
        }
        Ok((addr, offset))
    }

    /// Walks a place's path through leaves: the first leaf ([`crate::leaves::leaf_path`]).
    fn walk_leaves(&mut self, ty: &mut Type, path: &[Access]) -> Result<usize, Self::Error> {
        crate::leaves::leaf_path(self.kernel(), self.module(), ty, path).map_err(|h| {
            self.unsupported(
                h,
                "an array indexed by a computed value inside a reduction's value".into(),
            )
        })
    }

    /// The leaves of expression `h`, computed once per statement.
    fn expr(&mut self, h: Handle<Expr>) -> Result<Vec<Self::Leaf>, Self::Error> {
        if let Some(values) = self.memo().get(&h) {
            return Ok(values.clone());
        }
        let values = self.compute(h)?;
        self.memo().insert(h, values.clone());
        Ok(values)
    }

    /// The single leaf of a scalar expression.
    fn scalar(&mut self, h: Handle<Expr>) -> Result<Self::Leaf, Self::Error> {
        let values = self.expr(h)?;
        values
            .first()
            .copied()
            .ok_or_else(|| self.unsupported(h, "a scalar expression without a value".to_string()))
    }

    fn expr_type(&self, h: Handle<Expr>) -> &'ir Type {
        &self.kernel().exprs[h].ty
    }

    /// The scalar kind of a value-typed expression.
    fn expr_kind(&self, h: Handle<Expr>) -> ScalarKind {
        match self.expr_type(h) {
            Type::Value(v) => v.kind,
            _ => ScalarKind::I32,
        }
    }

    /// A math function of the intrinsic library: a helper call per lane for the
    /// transcendental ones (floats only), else inline.
    fn math(
        &mut self,
        h: Handle<Expr>,
        fun: MathFun,
        args: &[Handle<Expr>],
    ) -> Result<Vec<Self::Leaf>, Self::Error> {
        let kind = self.expr_kind(args[0]);
        let mut values = Vec::with_capacity(args.len());
        for &a in args {
            values.push(self.expr(a)?);
        }
        let Some(helper) = self.math_helper(fun, kind == ScalarKind::F64) else {
            return Ok(self.exact_math(fun, kind, &values));
        };
        if !kind.is_float() {
            return Err(self.unsupported(h, format!("`{}` of integers", fun.name())));
        }
        let width = values[0].len();
        Ok((0..width)
            .map(|i| {
                let lane: Vec<Self::Leaf> = values.iter().map(|v| v[i]).collect();
                self.call_math_helper(helper, kind, &lane)
            })
            .collect())
    }

    /// The leaves of expression `h` from its operands' leaves.
    fn compute(&mut self, h: Handle<Expr>) -> Result<Vec<Self::Leaf>, Self::Error> {
        let expr = &self.kernel().exprs[h];
        let ty = &expr.ty;
        Ok(match &expr.kind {
            ExprKind::Literal(lit) => vec![self.literal(*lit)],
            ExprKind::Compose(parts) => {
                let mut out = Vec::new();
                for &p in parts {
                    out.extend(self.expr(p)?);
                }
                out
            }
            ExprKind::Splat(a) => {
                let a = self.scalar(*a)?;
                let width = ty.value().map_or(1, |v| usize::from(v.width));
                vec![a; width]
            }
            ExprKind::Load(place) => place::load_place(self, place)?,
            ExprKind::Input(p) => launch::input(self, *p),
            ExprKind::Constant(p) => match launch::constant(self, *p) {
                Some(values) => values,
                None => self.zeros(ty),
            },
            ExprKind::Gather { param, indices } => match self.induction().gather(h) {
                Some(element) => {
                    let element = self.read_var(element);
                    launch::gather_at(self, *param, element)
                }
                None => launch::gather(self, *param, indices)?,
            },
            ExprKind::Field { base, index } => {
                let base_ty = self.expr_type(*base);
                let values = self.expr(*base)?;
                let (first, field_ty) = crate::leaves::field_leaf(self.module(), base_ty, *index);
                let count = crate::leaves::leaf_count(self.module(), &field_ty);
                values[first..first + count].to_vec()
            }
            ExprKind::Component { base, index } => {
                vec![self.expr(*base)?[usize::from(*index)]]
            }
            ExprKind::Swizzle { base, pattern } => {
                let values = self.expr(*base)?;
                pattern.iter().map(|&c| values[usize::from(c)]).collect()
            }
            ExprKind::Unary { op, arg } => {
                let kind = self.expr_kind(*arg);
                let values = self.expr(*arg)?;
                values
                    .into_iter()
                    .map(|v| self.unary(*op, kind, v))
                    .collect()
            }
            ExprKind::Binary { op, left, right } => {
                let kind = self.expr_kind(*left);
                let a = self.expr(*left)?;
                let b = self.expr(*right)?;
                a.into_iter()
                    .zip(b)
                    .map(|(x, y)| self.binary(*op, kind, x, y))
                    .collect()
            }
            ExprKind::Select {
                cond,
                accept,
                reject,
            } => {
                // One condition for every leaf, or (BrookGPU's vector form) one a component.
                let c = self.expr(*cond)?;
                if c.is_empty() {
                    return Err(self.unsupported(*cond, "a condition without a value".into()));
                }
                let a = self.expr(*accept)?;
                let r = self.expr(*reject)?;
                let kinds = crate::leaves::leaves(self.module(), ty);
                let conds = (0..a.len()).map(|i| c[if c.len() == 1 { 0 } else { i }]);
                a.into_iter()
                    .zip(r)
                    .zip(kinds)
                    .zip(conds)
                    .map(|(((x, y), leaf), c)| self.select(leaf.kind, c, x, y))
                    .collect()
            }
            ExprKind::Convert(a) => {
                let from = self.expr_kind(*a);
                let to = ty.value().map_or(ScalarKind::I32, |v| v.kind);
                let values = self.expr(*a)?;
                values
                    .into_iter()
                    .map(|v| self.convert(from, to, v))
                    .collect()
            }
            ExprKind::Math { fun, args } => self.math(h, *fun, args)?,
            ExprKind::IndexOf(p) => launch::index_of(self, *p),
            ExprKind::Instance => launch::instance(self),
            ExprKind::InstanceInGroup => self.instance_in_group(),
        })
    }
}

impl<'ir, T: Target<'ir>> ExprWalk<'ir> for T {}
