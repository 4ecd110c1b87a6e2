//! Building a kernel: the expression and local arenas and the stack of blocks statements go
//! to, with the small helpers every frontend's lowering needs (literals, conversions, loads
//! and stores of locals, values captured in a local). A frontend keeps its own scopes and
//! bindings; this keeps the IR's invariants (children before parents, structured blocks).

use crate::arena::{Arena, Handle, SourceSpan};
use crate::expr::{BinaryOp, Expr, ExprKind, Literal, Place};
use crate::module::{Kernel, KernelKind, Local, Param, Type};
use crate::stmt::{Block, Stmt};
use crate::types::{ScalarKind, ValueType};

/// A kernel being built.
#[derive(Debug, Default)]
pub struct KernelBuilder {
    pub params: Vec<Param>,
    pub locals: Arena<Local>,
    pub exprs: Arena<Expr>,
    /// The blocks being built; statements go to the last one.
    blocks: Vec<Block>,
}

impl KernelBuilder {
    pub fn new() -> Self {
        KernelBuilder {
            blocks: vec![Block::new()],
            ..KernelBuilder::default()
        }
    }

    /// A builder that goes on with a kernel's parameters, locals and expressions (a pass that
    /// rewrites its body), with an empty body.
    pub fn resume(params: Vec<Param>, locals: Arena<Local>, exprs: Arena<Expr>) -> Self {
        KernelBuilder {
            params,
            locals,
            exprs,
            blocks: vec![Block::new()],
        }
    }

    /// The finished kernel, its body the outermost block.
    pub fn finish(
        mut self,
        name: String,
        kind: KernelKind,
        group_size: Option<[u32; 3]>,
        span: SourceSpan,
    ) -> Kernel {
        let body = self.blocks.drain(..).next().unwrap_or_default();
        Kernel {
            name,
            kind,
            params: self.params,
            group_size,
            vouts: Vec::new(),
            locals: self.locals,
            exprs: self.exprs,
            body,
            span,
        }
    }

    pub fn append(&mut self, kind: ExprKind, ty: Type, span: SourceSpan) -> Handle<Expr> {
        self.exprs.append(Expr { kind, ty }, span)
    }

    pub fn ty(&self, h: Handle<Expr>) -> &Type {
        &self.exprs[h].ty
    }

    /// The scalar kind of a scalar expression.
    pub fn scalar_kind(&self, h: Handle<Expr>) -> Option<ScalarKind> {
        self.ty(h).value().filter(|v| v.width == 1).map(|v| v.kind)
    }

    pub fn emit(&mut self, stmt: Stmt, span: SourceSpan) {
        if let Some(block) = self.blocks.last_mut() {
            block.push(stmt, span);
        }
    }

    /// Starts a nested block: statements go to it until [`KernelBuilder::close_block`].
    pub fn open_block(&mut self) {
        self.blocks.push(Block::new());
    }

    pub fn close_block(&mut self) -> Block {
        if self.blocks.len() > 1 {
            self.blocks.pop().unwrap_or_default()
        } else {
            Block::new()
        }
    }

    pub fn new_local(
        &mut self,
        name: &str,
        ty: Type,
        shared: bool,
        span: SourceSpan,
    ) -> Handle<Local> {
        self.locals.append(
            Local {
                name: name.to_string(),
                ty,
                shared,
            },
            span,
        )
    }

    pub fn load(&mut self, place: Place, span: SourceSpan) -> Handle<Expr> {
        let ty = self.place_type(&place);
        self.append(ExprKind::Load(place), ty, span)
    }

    /// The type of a local place's value (a local's type, through its array indices).
    /// Places rooted in parameters take the parameter's element type.
    pub fn place_type(&self, place: &Place) -> Type {
        let mut ty = match &place.root {
            crate::expr::PlaceRoot::Local(l) => self.locals[*l].ty.clone(),
            crate::expr::PlaceRoot::Output(p)
            | crate::expr::PlaceRoot::Scatter { param: p, .. } => {
                self.params[p.0 as usize].ty.clone()
            }
        };
        for access in &place.path {
            ty = match (ty, access) {
                (Type::Array { elem, .. }, crate::expr::Access::Index(_)) => *elem,
                (other, _) => other,
            };
        }
        ty
    }

    pub fn store(&mut self, place: Place, value: Handle<Expr>, span: SourceSpan) {
        self.emit(Stmt::Store { place, value }, span);
    }

    /// Stores `value` in a new local and returns that local: the value is fixed now, whatever
    /// later statements do.
    pub fn capture(&mut self, name: &str, value: Handle<Expr>, span: SourceSpan) -> Handle<Local> {
        let ty = self.ty(value).clone();
        let local = self.new_local(name, ty, false, span);
        self.store(Place::local(local), value, span);
        local
    }

    pub fn literal(&mut self, lit: Literal, span: SourceSpan) -> Handle<Expr> {
        let ty = Type::Value(ValueType::scalar(lit.kind));
        self.append(ExprKind::Literal(lit), ty, span)
    }

    /// An integer or float constant of `kind` (0 or 1 for bool).
    pub fn constant(&mut self, kind: ScalarKind, value: i64, span: SourceSpan) -> Handle<Expr> {
        let lit = match kind {
            ScalarKind::Bool => Literal::bool(value != 0),
            ScalarKind::F32 => Literal::f32(value as f32),
            ScalarKind::F64 => Literal::f64(value as f64),
            k => Literal::int(k, value),
        };
        self.literal(lit, span)
    }

    pub fn int(&mut self, value: i64, span: SourceSpan) -> Handle<Expr> {
        self.constant(ScalarKind::I32, value, span)
    }

    /// A scalar converted to `kind` (itself when it has that kind).
    pub fn convert(
        &mut self,
        value: Handle<Expr>,
        kind: ScalarKind,
        span: SourceSpan,
    ) -> Handle<Expr> {
        match self.scalar_kind(value) {
            Some(k) if k == kind => value,
            _ => self.append(
                ExprKind::Convert(value),
                Type::Value(ValueType::scalar(kind)),
                span,
            ),
        }
    }

    /// `left op right` on two scalars of one kind (comparisons and logic give bool).
    pub fn binary(
        &mut self,
        op: BinaryOp,
        left: Handle<Expr>,
        right: Handle<Expr>,
        span: SourceSpan,
    ) -> Handle<Expr> {
        let ty = if op.is_comparison() {
            Type::Value(ValueType::scalar(ScalarKind::Bool))
        } else {
            self.ty(left).clone()
        };
        self.append(ExprKind::Binary { op, left, right }, ty, span)
    }

    /// Appends the statements of a block to the current block.
    pub fn splice(&mut self, block: Block) {
        if let Some(current) = self.blocks.last_mut() {
            current.0.extend(block.0);
        }
    }

    /// Emits the body of an inlined function, whose `return`s are `break`s out of a wrapper
    /// loop: as statements without the loop where its `break`s can become branches
    /// ([`crate::early_exit::flatten`]: the common cases, one `return` at the end or early
    /// `return`s under `if`s), else inside the wrapper loop. Inlined code so stays linear in
    /// size and free of needless loops.
    pub fn emit_inlined(&mut self, body: Block, span: SourceSpan) {
        match crate::early_exit::flatten(body) {
            Ok(statements) => self.splice(Block(statements)),
            Err(body) => self.emit(
                Stmt::Loop {
                    body,
                    continuing: Block::new(),
                },
                span,
            ),
        }
    }
}
