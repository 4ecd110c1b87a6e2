//! Lowering of a checked Brook program to the kernel IR.
//!
//! The input has passed the checker without errors, so lowering trusts its types: every
//! expression's type is in [`ProgramInfo::expr_types`] and every implicit conversion that `-a`
//! allowed is in [`ProgramInfo::conversions`]. Lowering makes all of it explicit:
//!
//! - C expressions with side effects (`i++`, `a = b`, `&&` with effects on the right, calls of
//!   subkernels) become statements emitted before the pure IR expression that uses their value;
//! - every conversion and scalar-to-vector broadcast is an IR node;
//! - subkernels are inlined: value parameters become locals, `out` parameters alias the caller's
//!   place, gather parameters alias the caller's array, and `return` leaves a wrapper loop;
//! - `while`, `do`/`while` and `for` become `loop` with `break` on the negated condition.
//!
//! Every kernel with a body and a `void` result is lowered (subkernels too: they may be launched).

mod call;
mod expr;
mod place;
mod stmt;
mod unorm;
mod vout;

use crate::brook::ast::{self, ExprId, Item, Program};
use crate::brook::check::{self, KernelKind, ParamRole, ProgramInfo};
use crate::source::Span;
use brook_ir::builder::KernelBuilder;
use brook_ir::{
    Block, Expr, ExprKind, FieldDecl, Handle, Kernel, Literal, Local, Module, Param, ParamId,
    Place, ScalarKind, Stmt, StructDecl, StructId, Type, ValueType,
};
use std::collections::HashMap;

pub use crate::lowering::LowerError;
use crate::lowering::{fail, source_span, Lowered};

/// Lowers every launchable kernel of a checked program.
pub fn lower(program: &Program, info: &ProgramInfo) -> Lowered<Module> {
    let structs = info
        .structs
        .iter()
        .map(|s| {
            let fields = s
                .fields
                .iter()
                .map(|(name, ty)| {
                    Ok(FieldDecl {
                        name: name.clone(),
                        ty: ir_type(ty, Span::default())?,
                    })
                })
                .collect::<Lowered<Vec<_>>>()?;
            Ok(StructDecl {
                name: s.name.clone(),
                fields,
            })
        })
        .collect::<Lowered<Vec<_>>>()?;
    let bodies: HashMap<&str, &ast::Kernel> = program
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Kernel(k) if k.body.is_some() => Some((k.name.name.as_str(), k)),
            _ => None,
        })
        .collect();
    let conversions: HashMap<ExprId, &check::Type> =
        info.conversions.iter().map(|(id, ty)| (*id, ty)).collect();
    let shared = Shared {
        info,
        bodies,
        conversions,
    };
    let mut kernels = Vec::new();
    for kernel in &info.kernels {
        let Some(ast) = shared.bodies.get(kernel.name.as_str()) else {
            continue;
        };
        if kernel.return_type != check::Type::Void {
            continue;
        }
        kernels.push(KernelLowerer::new(&shared).kernel(kernel, ast)?);
    }
    Ok(Module {
        structs,
        kernels,
        source: None,
    })
}

/// The kernels this program declares (a prototype) but does not define: their signatures as
/// IR kernels with empty bodies, for host code that launches a kernel defined in another file.
pub fn declared_only(program: &Program, info: &ProgramInfo) -> Lowered<Vec<Kernel>> {
    let defined: std::collections::HashSet<&str> = program
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Kernel(k) if k.body.is_some() => Some(k.name.name.as_str()),
            _ => None,
        })
        .collect();
    let shared = Shared {
        info,
        bodies: HashMap::new(),
        conversions: HashMap::new(),
    };
    let mut infos: HashMap<&str, &check::KernelInfo> = HashMap::new();
    for kernel in &info.kernels {
        infos.entry(kernel.name.as_str()).or_insert(kernel);
    }
    let mut lowered = std::collections::HashSet::new();
    let mut kernels = Vec::new();
    for item in &program.items {
        let Item::Kernel(ast) = item else { continue };
        let name = ast.name.name.as_str();
        if defined.contains(name) || lowered.contains(name) {
            continue;
        }
        let Some(kernel) = infos.get(name) else {
            continue;
        };
        if kernel.return_type != check::Type::Void {
            continue;
        }
        kernels.push(KernelLowerer::new(&shared).kernel(kernel, ast)?);
        lowered.insert(name);
    }
    Ok(kernels)
}

/// The checker's type as an IR type.
fn ir_type(ty: &check::Type, span: Span) -> Lowered<Type> {
    match ty {
        check::Type::Value(v) => Ok(Type::Value(*v)),
        check::Type::Struct(id) => Ok(Type::Struct(StructId(id.0))),
        check::Type::Array { elem, dims } => {
            let mut ty = ir_type(elem, span)?;
            for dim in dims.iter().rev() {
                let Some(len) = dim else {
                    return fail(span, "an array of unspecified size cannot be a local");
                };
                ty = Type::Array {
                    elem: Box::new(ty),
                    len: *len,
                };
            }
            Ok(ty)
        }
        check::Type::Void | check::Type::Error => fail(span, "a value of no type"),
    }
}

/// What the lowering of all kernels shares.
struct Shared<'a> {
    info: &'a ProgramInfo,
    bodies: HashMap<&'a str, &'a ast::Kernel>,
    conversions: HashMap<ExprId, &'a check::Type>,
}

/// What a name in a kernel body stands for.
#[derive(Clone, Debug)]
enum Binding {
    /// A local variable or array, or a value parameter of an inlined subkernel. `origin` is the
    /// stream parameter the value came from, for `indexof`.
    Local {
        local: Handle<Local>,
        origin: Option<ParamId>,
    },
    /// An input or iterator stream parameter.
    Input(ParamId),
    Constant(ParamId),
    /// An output stream or reduction accumulator parameter.
    Output(ParamId),
    Gather(ParamId),
    Scatter(ParamId),
    /// An `out` parameter of an inlined subkernel: the caller's place.
    Alias(Place),
}

/// The state of an inlined subkernel call.
struct InlineFrame {
    /// Where `return value;` stores the value.
    result: Option<Handle<Local>>,
    /// Set by a `return` inside one of the callee's loops, so each enclosing loop breaks too.
    done: Option<Handle<Local>>,
    /// How many of the callee's own loops enclose the current statement.
    loop_depth: u32,
    /// How many `return`s inside loops were lowered so far.
    returns_in_loops: u32,
}

struct KernelLowerer<'a> {
    shared: &'a Shared<'a>,
    /// The kernel being built: parameters, locals, expressions and the blocks statements go to.
    b: KernelBuilder,
    scopes: Vec<HashMap<String, Binding>>,
    frames: Vec<InlineFrame>,
    group_size: Option<[u32; 3]>,
    vouts: Vec<vout::VoutState>,
    /// `fixed`/`shortfixed` outputs, stored back where the kernel ends or returns.
    unorm_outputs: Vec<unorm::UnormOutput>,
    /// `fixed`/`shortfixed` gather arrays: their elements are converted where read.
    unorm_gathers: HashMap<ParamId, ast::Unorm>,
}

impl<'a> KernelLowerer<'a> {
    fn new(shared: &'a Shared<'a>) -> Self {
        KernelLowerer {
            shared,
            b: KernelBuilder::new(),
            scopes: vec![HashMap::new()],
            frames: Vec::new(),
            group_size: None,
            vouts: Vec::new(),
            unorm_outputs: Vec::new(),
            unorm_gathers: HashMap::new(),
        }
    }

    fn kernel(mut self, info: &check::KernelInfo, ast: &ast::Kernel) -> Lowered<Kernel> {
        self.group_size = info.group_size;
        for (position, param) in info.params.iter().enumerate() {
            if let ParamRole::Vout { limit } = param.role {
                self.declare_vout(param, position, limit.unwrap_or(0))?;
                continue;
            }
            let id = ParamId(self.b.params.len() as u32);
            let (role, binding) = match &param.role {
                ParamRole::Input => (brook_ir::ParamRole::Input, Binding::Input(id)),
                ParamRole::Iterator => (brook_ir::ParamRole::Iterator, Binding::Input(id)),
                ParamRole::Output => (brook_ir::ParamRole::Output, Binding::Output(id)),
                ParamRole::Reduce => (brook_ir::ParamRole::Reduce, Binding::Output(id)),
                ParamRole::Constant => (brook_ir::ParamRole::Constant, Binding::Constant(id)),
                ParamRole::Gather { dims } => (
                    brook_ir::ParamRole::Gather { dims: dims.clone() },
                    Binding::Gather(id),
                ),
                ParamRole::Scatter { rank } => (
                    brook_ir::ParamRole::Scatter { rank: *rank as u8 },
                    Binding::Scatter(id),
                ),
                ParamRole::Vout { .. } => unreachable!("declared above"),
            };
            let elem = match &param.ty {
                check::Type::Array { elem, .. } => elem.as_ref(),
                ty => ty,
            };
            let computed = ir_type(elem, param.span)?;
            let ty = match param.unorm {
                Some(unorm) => Self::unorm_storage(unorm, &computed),
                None => computed.clone(),
            };
            self.b.params.push(Param {
                name: param.name.clone(),
                ty,
                role,
                span: source_span(param.span),
            });
            match (param.unorm, binding) {
                (Some(unorm), Binding::Input(id)) => {
                    self.bind_unorm_input(&param.name, id, unorm, &computed, param.span)?
                }
                (Some(unorm), Binding::Output(id)) => {
                    self.bind_unorm_output(&param.name, id, unorm, &computed, param.span)?
                }
                (Some(unorm), binding @ Binding::Gather(id)) => {
                    self.unorm_gathers.insert(id, unorm);
                    self.bind(&param.name, binding);
                }
                (_, binding) => self.bind(&param.name, binding),
            }
        }
        self.vout_params();
        if let Some(body) = &ast.body {
            self.block_items(&body.stmts)?;
        }
        self.store_unorm_outputs(info.span);
        let kind = match info.kind {
            KernelKind::Map => brook_ir::KernelKind::Map,
            KernelKind::Reduce => brook_ir::KernelKind::Reduce,
        };
        let mut kernel = self.b.finish(
            info.name.clone(),
            kind,
            info.group_size,
            source_span(info.span),
        );
        kernel.vouts = self.vouts.into_iter().map(|v| v.ir).collect();
        Ok(kernel)
    }

    fn bind(&mut self, name: &str, binding: Binding) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), binding);
        }
    }

    fn lookup(&self, name: &str, span: Span) -> Lowered<Binding> {
        match self.scopes.iter().rev().find_map(|s| s.get(name)) {
            Some(b) => Ok(b.clone()),
            None => fail(span, format!("`{name}` is not defined")),
        }
    }

    fn emit(&mut self, stmt: Stmt, span: Span) {
        self.b.emit(stmt, source_span(span));
    }

    /// Runs `f` with statements going to a new block, and returns that block.
    fn in_block<T>(&mut self, f: impl FnOnce(&mut Self) -> Lowered<T>) -> Lowered<(Block, T)> {
        self.b.open_block();
        self.scopes.push(HashMap::new());
        let result = f(self);
        self.scopes.pop();
        let block = self.b.close_block();
        result.map(|value| (block, value))
    }

    fn append(&mut self, kind: ExprKind, ty: Type, span: Span) -> Handle<Expr> {
        self.b.append(kind, ty, source_span(span))
    }

    fn ty(&self, h: Handle<Expr>) -> &Type {
        self.b.ty(h)
    }

    fn value_type(&self, h: Handle<Expr>, span: Span) -> Lowered<ValueType> {
        match self.ty(h).value() {
            Some(v) => Ok(v),
            None => fail(span, "expected a scalar or vector value"),
        }
    }

    fn new_local(&mut self, name: &str, ty: Type, span: Span) -> Handle<Local> {
        self.b.new_local(name, ty, false, source_span(span))
    }

    /// Stores `value` in a new local and returns a load of it: the value is fixed now, whatever
    /// later statements do.
    fn capture(&mut self, name: &str, value: Handle<Expr>, span: Span) -> Handle<Expr> {
        let ty = self.ty(value).clone();
        let local = self.new_local(name, ty.clone(), span);
        self.emit(
            Stmt::Store {
                place: Place::local(local),
                value,
            },
            span,
        );
        self.append(ExprKind::Load(Place::local(local)), ty, span)
    }

    fn literal(&mut self, lit: Literal, span: Span) -> Handle<Expr> {
        let ty = Type::Value(ValueType::scalar(lit.kind));
        self.append(ExprKind::Literal(lit), ty, span)
    }

    /// The value 0 (or 1) of a kind.
    fn scalar_const(&mut self, kind: ScalarKind, value: i64, span: Span) -> Handle<Expr> {
        self.b.constant(kind, value, source_span(span))
    }

    /// A constant of a value type: the scalar, splatted for vectors.
    fn value_const(&mut self, ty: ValueType, value: i64, span: Span) -> Handle<Expr> {
        let scalar = self.scalar_const(ty.kind, value, span);
        self.splat(scalar, ty.width, span)
    }

    fn splat(&mut self, scalar: Handle<Expr>, width: u8, span: Span) -> Handle<Expr> {
        if width == 1 {
            return scalar;
        }
        let kind = match self.ty(scalar).value() {
            Some(v) => v.kind,
            None => return scalar,
        };
        let ty = Type::Value(ValueType::vector(kind, width));
        self.append(ExprKind::Splat(scalar), ty, span)
    }
}
