//! Expressions: scalars and records become IR expressions; arrays (variables, slices, maps)
//! become [`ArrayValue`]s read one element at a time.

use super::{fail, kind_for, source_span, ArrayRef, Binding, Lowered, Lowerer};
use crate::loom::ast::{BinaryOp, Expr, ExprKind, ParallelOp, UnaryOp};
use crate::loom::check::{Spread, Ty, VarKind};
use crate::loom::token::{Axis, ThreadName};
use crate::source::Span;
use brook_ir::{Access, Handle, Literal, Place, PlaceRoot, ScalarKind, Type, ValueType};

type IrExpr = brook_ir::Expr;

/// A lowered value.
#[derive(Clone, Debug)]
pub(super) enum Val {
    /// A scalar or a record.
    Scalar(Handle<IrExpr>),
    Array(ArrayValue),
}

/// An array-valued expression, read element by element.
#[derive(Clone, Debug)]
pub(super) enum ArrayValue {
    /// An array, or a part of it: a slice of a 1-D one (`start` and `len` set) or a
    /// block's tile of a 2-D one (`start` set, one offset per dimension).
    Ref {
        array: ArrayRef,
        start: Option<Vec<Handle<brook_ir::Local>>>,
        len: Option<Handle<brook_ir::Local>>,
        safe: bool,
        spreads: Vec<Spread>,
    },
    /// A block array held one element per thread (a scan's result): `value` is this
    /// thread's element.
    Lanes {
        value: Handle<brook_ir::Local>,
        spreads: Vec<Spread>,
    },
    /// `f // a`: the function (the parallel expression's callee) over each element.
    Map {
        call: crate::loom::ast::ExprId,
        inner: Box<ArrayValue>,
        span: Span,
    },
}

impl ArrayValue {
    pub(super) fn spreads(&self) -> &[Spread] {
        match self {
            ArrayValue::Ref { spreads, .. } | ArrayValue::Lanes { spreads, .. } => spreads,
            ArrayValue::Map { inner, .. } => inner.spreads(),
        }
    }

    /// Whether the elements are held one per thread (a scan's result, or a map over one).
    pub(super) fn held_by_lanes(&self) -> bool {
        match self {
            ArrayValue::Lanes { .. } => true,
            ArrayValue::Map { inner, .. } => inner.held_by_lanes(),
            ArrayValue::Ref { .. } => false,
        }
    }
}

impl Lowerer<'_> {
    pub(super) fn ty_of(&self, e: &Expr) -> &Ty {
        &self.checked.info.types[e.id.0 as usize]
    }

    /// A scalar or record value.
    pub(super) fn scalar(&mut self, e: &Expr, want: Option<ScalarKind>) -> Lowered<Handle<IrExpr>> {
        match self.value(e, want)? {
            Val::Scalar(h) => Ok(h),
            Val::Array(_) => fail(e.span, "an array where a value is needed"),
        }
    }

    /// A scalar converted to `kind`.
    pub(super) fn scalar_as(&mut self, e: &Expr, kind: ScalarKind) -> Lowered<Handle<IrExpr>> {
        let h = self.scalar(e, Some(kind))?;
        Ok(self.b.convert(h, kind, source_span(e.span)))
    }

    pub(super) fn value(&mut self, e: &Expr, want: Option<ScalarKind>) -> Lowered<Val> {
        let s = source_span(e.span);
        let ty = self.ty_of(e).clone();
        let scalar = |h| Ok(Val::Scalar(h));
        match &e.kind {
            ExprKind::Int(v) => {
                let kind = kind_for(&ty, want);
                let lit = match kind {
                    ScalarKind::F32 => Literal::f32(*v as f32),
                    ScalarKind::F64 => Literal::f64(*v as f64),
                    k => Literal::int(k, *v as i64),
                };
                scalar(self.b.literal(lit, s))
            }
            ExprKind::Float(v) => {
                let lit = match kind_for(&ty, want) {
                    ScalarKind::F32 => Literal::f32(*v as f32),
                    _ => Literal::f64(*v),
                };
                scalar(self.b.literal(lit, s))
            }
            ExprKind::Bool(b) => scalar(self.b.literal(Literal::bool(*b), s)),
            ExprKind::Name(_) => self.name(e, want),
            ExprKind::Thread(param) => {
                let coords = self.coords();
                let axis = axis_index(param.axis);
                let local = match param.name {
                    ThreadName::Thread => Some(coords.thread[axis]),
                    ThreadName::Block => Some(coords.block[axis]),
                    _ => None,
                };
                match local {
                    Some(l) => scalar(self.b.load(Place::local(l), s)),
                    None => {
                        let n = self.grid_value(*param);
                        scalar(self.b.int(i64::from(n), s))
                    }
                }
            }
            ExprKind::Unary { op, arg } => {
                let (ir, kind) = match op {
                    UnaryOp::Not => (brook_ir::UnaryOp::Not, ScalarKind::Bool),
                    UnaryOp::Neg => (brook_ir::UnaryOp::Neg, kind_for(&ty, want)),
                    UnaryOp::Complement => (brook_ir::UnaryOp::BitNot, kind_for(&ty, want)),
                };
                let arg = self.scalar_as(arg, kind)?;
                let ty = self.b.ty(arg).clone();
                scalar(
                    self.b
                        .append(brook_ir::ExprKind::Unary { op: ir, arg }, ty, s),
                )
            }
            ExprKind::Binary { op, left, right } => {
                self.binary(e, *op, left, right, want).map(Val::Scalar)
            }
            ExprKind::Tagged { value, .. } => match &ty {
                Ty::Basic(_) => {
                    let kind = kind_for(&ty, None);
                    scalar(self.scalar_as(value, kind)?)
                }
                _ => self.value(value, want),
            },
            ExprKind::Index {
                base,
                indices,
                safe,
            } => self.index(e, base, indices, *safe),
            ExprKind::Field { base, field } => {
                let base_ty = self.ty_of(base).clone();
                let Ty::Record(record) = &base_ty else {
                    return fail(e.span, "a field of what is not a record");
                };
                let Some(index) = record.fields.iter().position(|(n, _)| *n == field.name) else {
                    return fail(field.span, "no such field");
                };
                let base = self.scalar(base, None)?;
                let field_ty = self.ir_type(&record.fields[index].1, e.span)?;
                scalar(self.b.append(
                    brook_ir::ExprKind::Field {
                        base,
                        index: index as u32,
                    },
                    field_ty,
                    s,
                ))
            }
            ExprKind::Call { func, args } => self.call(e, func, args).map(Val::Scalar),
            ExprKind::Parallel { op, array, .. } => {
                let Val::Array(inner) = self.value(array, None)? else {
                    return fail(array.span, "a parallel operator over a value");
                };
                match op {
                    ParallelOp::Map => Ok(Val::Array(ArrayValue::Map {
                        call: e.id,
                        inner: Box::new(inner),
                        span: e.span,
                    })),
                    ParallelOp::Reduce => self.reduce(e, &inner).map(Val::Scalar),
                    ParallelOp::ScanLeft | ParallelOp::ScanRight => {
                        self.scan(e, *op, &inner).map(Val::Array)
                    }
                }
            }
        }
    }

    fn name(&mut self, e: &Expr, want: Option<ScalarKind>) -> Lowered<Val> {
        let Some(&var) = self.checked.info.names.get(&e.id) else {
            return fail(e.span, "a name the checker did not resolve");
        };
        let info = &self.checked.info.vars[var.0 as usize];
        if let VarKind::Const(value) = info.kind {
            let kind = kind_for(&info.ty, want);
            return Ok(Val::Scalar(self.const_literal(value, kind, e.span)));
        }
        let spreads = spreads_of(&info.ty);
        match self.binding(var, e.span)? {
            Binding::Value(place) => Ok(Val::Scalar(self.b.load(place, source_span(e.span)))),
            Binding::Array(array) => Ok(Val::Array(ArrayValue::Ref {
                array,
                start: None,
                len: None,
                safe: false,
                spreads,
            })),
            Binding::View(view) => Ok(Val::Array(view)),
        }
    }

    fn binary(
        &mut self,
        e: &Expr,
        op: BinaryOp,
        left: &Expr,
        right: &Expr,
        want: Option<ScalarKind>,
    ) -> Lowered<Handle<IrExpr>> {
        let s = source_span(e.span);
        let ir = ir_binary(op);
        if op.is_logic() {
            let l = self.scalar_as(left, ScalarKind::Bool)?;
            let r = self.scalar_as(right, ScalarKind::Bool)?;
            return Ok(self.b.binary(ir, l, r, s));
        }
        // Comparisons compute in their operands' shared kind; the others (shifts too: the
        // count is converted) in the result's.
        let kind = if op.is_comparison() {
            operand_kind(self.ty_of(left), self.ty_of(right))
        } else if *self.ty_of(e) == Ty::UntypedInt {
            // Integer constants combine as integers (`7 / 2` is 3, also where a float is
            // wanted); the use converts the result.
            match want {
                Some(k) if k.is_integer() => k,
                _ => ScalarKind::I64,
            }
        } else {
            kind_for(self.ty_of(e), want)
        };
        let l = self.scalar_as(left, kind)?;
        let r = self.scalar_as(right, kind)?;
        Ok(self.b.binary(ir, l, r, s))
    }

    fn index(&mut self, e: &Expr, base: &Expr, indices: &[Expr], safe: bool) -> Lowered<Val> {
        let Val::Array(array) = self.value(base, None)? else {
            return fail(base.span, "indexing a value");
        };
        if indices.len() == 1 && self.ty_of(&indices[0]).is_range() {
            return self.slice(e, array, &indices[0], safe).map(Val::Array);
        }
        let mut idx = Vec::new();
        for i in indices {
            let h = self.scalar(i, Some(ScalarKind::I32))?;
            idx.push(self.index_value(h, i.span));
        }
        self.element(&array, &idx, safe, e.span).map(Val::Scalar)
    }

    /// `a[r]` with `r` a Range: the elements from `r.start`, `r.end - r.start` of them. A
    /// slice of a slice starts from the outer slice's start; a slice of a map is the map of
    /// the slice.
    fn slice(
        &mut self,
        e: &Expr,
        array: ArrayValue,
        range: &Expr,
        safe: bool,
    ) -> Lowered<ArrayValue> {
        let s = source_span(e.span);
        let r = self.scalar(range, None)?;
        let range = self.b.capture("slice.range", r, s);
        let array = self.publish_within(array, e.span)?;
        self.slice_of(array, range, safe, e.span)
    }

    fn slice_of(
        &mut self,
        array: ArrayValue,
        range: Handle<brook_ir::Local>,
        safe: bool,
        span: Span,
    ) -> Lowered<ArrayValue> {
        let s = source_span(span);
        let (array, outer, outer_safe) = match array {
            ArrayValue::Ref {
                array, start, safe, ..
            } => (array, start, safe),
            ArrayValue::Map { call, inner, span } => {
                let inner = self.slice_of(*inner, range, safe, span)?;
                return Ok(ArrayValue::Map {
                    call,
                    inner: Box::new(inner),
                    span,
                });
            }
            ArrayValue::Lanes { .. } => return fail(span, "a slice of an unpublished scan"),
        };
        let r = self.b.load(Place::local(range), s);
        let int = Type::Value(ValueType::scalar(ScalarKind::I32));
        let first = self.b.append(
            brook_ir::ExprKind::Field { base: r, index: 0 },
            int.clone(),
            s,
        );
        let (starts, len, spreads) = if array.dims().len() == 2 {
            let starts = self.tile_start(first, span);
            let spreads = vec![Spread::Block(Some(Axis::X)), Spread::Block(Some(Axis::Y))];
            (starts, None, spreads)
        } else {
            let end = self
                .b
                .append(brook_ir::ExprKind::Field { base: r, index: 1 }, int, s);
            let len = self.b.binary(brook_ir::BinaryOp::Sub, end, first, s);
            let len = self.b.capture("slice.len", len, s);
            (vec![first], Some(len), vec![Spread::Block(None)])
        };
        let mut start = Vec::new();
        for (k, from) in starts.into_iter().enumerate() {
            let from = match outer.as_ref().and_then(|o| o.get(k)) {
                Some(&outer) => {
                    let before = self.b.load(Place::local(outer), s);
                    self.b.binary(brook_ir::BinaryOp::Add, from, before, s)
                }
                None => from,
            };
            start.push(self.b.capture("slice.start", from, s));
        }
        Ok(ArrayValue::Ref {
            array,
            start: Some(start),
            len,
            safe: safe || outer_safe,
            spreads,
        })
    }

    /// The first element of the tile of a 2-D array that a `Range` of threads selects: the
    /// block holding thread `first` (`block(b)` starts at block `b`'s first thread), at its
    /// coordinates times the block's extents. Blocks outside the grid (`block(B - 1)` in block
    /// 0) continue the numbering, so their tiles lie outside the array.
    fn tile_start(&mut self, first: Handle<IrExpr>, span: Span) -> Vec<Handle<IrExpr>> {
        let s = source_span(span);
        let [bx, by] = self.grid.block;
        let blocks_y = self.grid.threads[1] / by.max(1);
        let block = self.floor_div(first, bx * by, span);
        let block = self.b.capture("tile.block", block, s);
        let block = self.b.load(Place::local(block), s);
        let block_x = self.floor_div(block, blocks_y, span);
        let block_x = self.b.capture("tile.block_x", block_x, s);
        let block_x = self.b.load(Place::local(block_x), s);
        let per_row = self.b.int(i64::from(blocks_y), s);
        let rows = self.b.binary(brook_ir::BinaryOp::Mul, block_x, per_row, s);
        let block_y = self.b.binary(brook_ir::BinaryOp::Sub, block, rows, s);
        let mut starts = Vec::new();
        for (at, size) in [(block_x, bx), (block_y, by)] {
            let size = self.b.int(i64::from(size), s);
            starts.push(self.b.binary(brook_ir::BinaryOp::Mul, at, size, s));
        }
        starts
    }

    /// `floor(a / d)` of an `Int32` for a positive constant `d`.
    fn floor_div(&mut self, a: Handle<IrExpr>, d: u32, span: Span) -> Handle<IrExpr> {
        use brook_ir::BinaryOp::{Div, Lt, Mul, Sub};
        let s = source_span(span);
        let int = Type::Value(ValueType::scalar(ScalarKind::I32));
        let a = self.b.convert(a, ScalarKind::I32, s);
        let a = self.b.capture("floor_div.a", a, s);
        let a = self.b.load(Place::local(a), s);
        let d = self.b.int(i64::from(d.max(1)), s);
        let q = self.b.binary(Div, a, d, s);
        let back = self.b.binary(Mul, q, d, s);
        let r = self.b.binary(Sub, a, back, s);
        let zero = self.b.int(0, s);
        let negative = self.b.binary(Lt, r, zero, s);
        let one = self.b.int(1, s);
        let down = self.b.binary(Sub, q, one, s);
        self.b.append(
            brook_ir::ExprKind::Select {
                cond: negative,
                accept: down,
                reject: q,
            },
            int,
            s,
        )
    }

    /// An index as the kind range tests use: 64-bit kinds as `I64`, others as `I32`.
    pub(super) fn index_value(&mut self, h: Handle<IrExpr>, span: Span) -> Handle<IrExpr> {
        let kind = match self.b.scalar_kind(h) {
            Some(ScalarKind::I64 | ScalarKind::U64) => ScalarKind::I64,
            _ => ScalarKind::I32,
        };
        self.b.convert(h, kind, source_span(span))
    }

    /// Element `idx` of an array value.
    pub(super) fn element(
        &mut self,
        array: &ArrayValue,
        idx: &[Handle<IrExpr>],
        safe_access: bool,
        span: Span,
    ) -> Lowered<Handle<IrExpr>> {
        match array {
            ArrayValue::Lanes { .. } => {
                let published = self.publish(array.clone(), span)?;
                self.element(&published, idx, safe_access, span)
            }
            ArrayValue::Ref {
                array, start, safe, ..
            } => {
                let idx = self.offset(idx, start.as_deref(), span);
                self.load_element(array, &idx, *safe || safe_access, span)
            }
            ArrayValue::Map { call, inner, span } => {
                let value = self.element(inner, idx, safe_access, *span)?;
                let Some(&callee) = self.checked.info.callees.get(call) else {
                    return fail(*span, "a map whose function the checker did not resolve");
                };
                self.apply(callee, vec![value], *span)
            }
        }
    }

    /// Indices shifted by a slice's or a tile's start.
    pub(super) fn offset(
        &mut self,
        idx: &[Handle<IrExpr>],
        start: Option<&[Handle<brook_ir::Local>]>,
        span: Span,
    ) -> Vec<Handle<IrExpr>> {
        let s = source_span(span);
        let mut idx = idx.to_vec();
        for (i, &from) in idx.iter_mut().zip(start.unwrap_or(&[])) {
            let from = self.b.load(Place::local(from), s);
            let kind = self.b.scalar_kind(*i).unwrap_or(ScalarKind::I32);
            let from = self.b.convert(from, kind, s);
            *i = self.b.binary(brook_ir::BinaryOp::Add, *i, from, s);
        }
        idx
    }

    /// The place of an element.
    pub(super) fn element_place(&self, array: &ArrayRef, idx: &[Handle<IrExpr>]) -> Place {
        match array {
            ArrayRef::Global { param, .. } => Place {
                root: PlaceRoot::Scatter {
                    param: *param,
                    indices: idx.to_vec(),
                },
                path: Vec::new(),
            },
            ArrayRef::Local { local, .. } => {
                let mut place = Place::local(*local);
                for &i in idx {
                    place = place.with(Access::Index(i));
                }
                place
            }
        }
    }

    /// Whether every index is inside its extent.
    pub(super) fn in_range(
        &mut self,
        idx: &[Handle<IrExpr>],
        dims: &[super::Extent],
        span: Span,
    ) -> Handle<IrExpr> {
        let s = source_span(span);
        let mut all: Option<Handle<IrExpr>> = None;
        for (&i, &d) in idx.iter().zip(dims) {
            let kind = self.b.scalar_kind(i).unwrap_or(ScalarKind::I32);
            let zero = self.b.constant(kind, 0, s);
            let extent = self.extent_value(d, kind, span);
            let low = self.b.binary(brook_ir::BinaryOp::Ge, i, zero, s);
            let high = self.b.binary(brook_ir::BinaryOp::Lt, i, extent, s);
            let both = self.b.binary(brook_ir::BinaryOp::LogicAnd, low, high, s);
            all = Some(match all {
                Some(a) => self.b.binary(brook_ir::BinaryOp::LogicAnd, a, both, s),
                None => both,
            });
        }
        all.unwrap_or_else(|| self.b.literal(Literal::bool(true), s))
    }

    /// An extent as a value of `kind`.
    pub(super) fn extent_value(
        &mut self,
        extent: super::Extent,
        kind: ScalarKind,
        span: Span,
    ) -> Handle<IrExpr> {
        let s = source_span(span);
        match extent {
            super::Extent::Fixed(n) => self.b.constant(kind, i64::from(n), s),
            super::Extent::Host(local) => {
                let n = self.b.load(Place::local(local), s);
                self.b.convert(n, kind, s)
            }
        }
    }

    /// Reads an element: `[ ]` clamps (a defined value for what the draft leaves undefined),
    /// `[[ ]]` gives zero outside.
    pub(super) fn load_element(
        &mut self,
        array: &ArrayRef,
        idx: &[Handle<IrExpr>],
        safe: bool,
        span: Span,
    ) -> Lowered<Handle<IrExpr>> {
        let s = source_span(span);
        let place = self.element_place(array, idx);
        let ty = self.b.place_type(&place);
        let value = self
            .b
            .append(brook_ir::ExprKind::Load(place), ty.clone(), s);
        if !safe {
            return Ok(value);
        }
        let inside = self.in_range(idx, array.dims(), span);
        if ty.value().is_some() {
            let zero = match ty.value() {
                Some(v) => self.b.constant(v.kind, 0, s),
                None => value,
            };
            return Ok(self.b.append(
                brook_ir::ExprKind::Select {
                    cond: inside,
                    accept: value,
                    reject: zero,
                },
                ty,
                s,
            ));
        }
        // A record: zero from a local never written (locals start at zero).
        let zero = self.b.new_local("zero", ty.clone(), false, s);
        let held = self.b.new_local("element", ty, false, s);
        self.b.open_block();
        self.b.store(Place::local(held), value, s);
        let accept = self.b.close_block();
        self.b.open_block();
        let z = self.b.load(Place::local(zero), s);
        self.b.store(Place::local(held), z, s);
        let reject = self.b.close_block();
        self.b.emit(
            brook_ir::Stmt::If {
                cond: inside,
                accept,
                reject,
            },
            s,
        );
        Ok(self.b.load(Place::local(held), s))
    }

    /// Writes an element: `[ ]` writes outside are dropped (scatter) or clamped (local
    /// arrays), `[[ ]]` writes outside are skipped.
    pub(super) fn store_element(
        &mut self,
        array: &ArrayRef,
        idx: &[Handle<IrExpr>],
        value: Handle<IrExpr>,
        safe: bool,
        span: Span,
    ) {
        let s = source_span(span);
        let place = self.element_place(array, idx);
        if !safe {
            self.b.store(place, value, s);
            return;
        }
        let inside = self.in_range(idx, array.dims(), span);
        self.store_if(Some(inside), place, value, span);
    }

    /// `if cond { place <- value }` (the store alone without a condition).
    pub(super) fn store_if(
        &mut self,
        cond: Option<Handle<IrExpr>>,
        place: Place,
        value: Handle<IrExpr>,
        span: Span,
    ) {
        let stored = self.guarded(cond, span, |this| {
            this.b.store(place, value, source_span(span));
            Ok(())
        });
        debug_assert!(stored.is_ok(), "a store cannot fail");
    }

    /// This thread's coordinate along an axis of the given spread.
    pub(super) fn coordinate(&mut self, spread: Spread, span: Span) -> Option<Handle<IrExpr>> {
        let coords = self.coords();
        let local = match spread {
            Spread::Threads(axis) => coords.thread[axis_index(axis)],
            Spread::Blocks(axis) => coords.block[axis_index(axis)],
            Spread::Block(axis) => coords.lane[axis_index(axis)],
            Spread::Other => return None,
        };
        Some(self.b.load(Place::local(local), source_span(span)))
    }
}

pub(super) fn axis_index(axis: Option<Axis>) -> usize {
    match axis {
        None => 0,
        Some(Axis::X) => 1,
        Some(Axis::Y) => 2,
    }
}

/// The spreads of an array type's extents.
pub(super) fn spreads_of(ty: &Ty) -> Vec<Spread> {
    match ty {
        Ty::Array { dims, .. } => dims.iter().map(crate::loom::check::Dim::spread).collect(),
        _ => Vec::new(),
    }
}

/// The kind two compared operands share.
fn operand_kind(a: &Ty, b: &Ty) -> ScalarKind {
    match (a, b) {
        (Ty::Basic(x), _) | (_, Ty::Basic(x)) => super::scalar_kind(*x),
        (Ty::UntypedFloat, _) | (_, Ty::UntypedFloat) => ScalarKind::F64,
        _ => ScalarKind::I64,
    }
}

fn ir_binary(op: BinaryOp) -> brook_ir::BinaryOp {
    use brook_ir::BinaryOp as Ir;
    match op {
        BinaryOp::Mul => Ir::Mul,
        BinaryOp::Div => Ir::Div,
        BinaryOp::Rem => Ir::Rem,
        BinaryOp::Shl => Ir::Shl,
        BinaryOp::Shr => Ir::Shr,
        BinaryOp::BitAnd => Ir::BitAnd,
        BinaryOp::Add => Ir::Add,
        BinaryOp::Sub => Ir::Sub,
        BinaryOp::BitOr => Ir::BitOr,
        BinaryOp::BitXor => Ir::BitXor,
        BinaryOp::Eq => Ir::Eq,
        BinaryOp::Ne => Ir::Ne,
        BinaryOp::Lt => Ir::Lt,
        BinaryOp::Le => Ir::Le,
        BinaryOp::Gt => Ir::Gt,
        BinaryOp::Ge => Ir::Ge,
        BinaryOp::And => Ir::LogicAnd,
        BinaryOp::Or => Ir::LogicOr,
    }
}
