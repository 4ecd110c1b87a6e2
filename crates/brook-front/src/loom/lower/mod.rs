//! Lowering of a checked LOOM program to the kernel IR, for one grid.
//!
//! A LOOM kernel is compiled for a [`Grid`] (threads and block size, 1-D or 2-D): the grid's
//! sizes (`THREADS`, `BLOCKS`, `BLOCKSIZE`, ...) become constants, so array extents and the
//! block collectives are fixed when compiling. The IR kernel runs over a 1-D domain of all the
//! grid's threads in thread groups of one block each; blocks are numbered with the `Y` axis
//! fastest, and threads in a block likewise, so neighbouring threads touch neighbouring
//! elements of a row-major `[X, Y]` array.
//!
//! - Kernel arrays are scatter parameters (read and written at computed positions), and so
//!   are `global` arrays, as parameters after the kernel's own; `[ ]`
//!   reads clamp and writes outside are dropped, `[[ ]]` reads outside give zero and writes
//!   outside are skipped (explicit tests in the IR).
//! - Device functions are inlined; a `return` leaves a wrapper loop.
//! - Whole-array statements and the parallel operators are block-wide (`array`,
//!   `collective`): each thread handles its element, and a barrier follows every statement
//!   that writes shared or global memory (section 1.2.1).
//!
//! The input has passed the checker without errors; a [`LowerError`] is a construct this
//! lowering does not handle yet (said with its place), or a compiler defect.

mod array;
mod call;
mod collective;
mod copies;
mod expr;
mod stmt;
mod uniform;

use super::ast::{Func, FuncKind, Item};
use super::check::{ConstValue, Ty, VarId};
use super::Checked;
use crate::source::Span;
use brook_ir::builder::KernelBuilder;
use brook_ir::{
    FieldDecl, Handle, KernelKind, Local, Module, ParamId, ScalarKind, SourceSpan, StructDecl,
    StructId, Type, ValueType,
};
use std::collections::HashMap;

/// The grid a kernel is compiled for. A 1-D grid has `threads[1] == block[1] == 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Grid {
    /// Threads along X (the first index) and Y.
    pub threads: [u32; 2],
    /// Threads per block along X and Y.
    pub block: [u32; 2],
}

impl Grid {
    pub fn one_d(threads: u32, block: u32) -> Grid {
        Grid {
            threads: [threads, 1],
            block: [block, 1],
        }
    }

    pub fn blocks(&self) -> [u32; 2] {
        [
            self.threads[0] / self.block[0].max(1),
            self.threads[1] / self.block[1].max(1),
        ]
    }

    pub fn total_threads(&self) -> u64 {
        u64::from(self.threads[0]) * u64::from(self.threads[1])
    }

    pub fn block_threads(&self) -> u32 {
        self.block[0] * self.block[1]
    }

    /// A grid as text: `1024/256` (threads / block, 1-D) or `64x32/8x4` (X by Y threads /
    /// X by Y block), checked with [`Grid::problem`].
    pub fn parse(text: &str) -> Result<Grid, String> {
        let wrong = || {
            format!("a grid is THREADS/BLOCK (1024/256) or TXxTY/BXxBY (64x32/8x4), not `{text}`")
        };
        let pair = |part: &str| -> Result<[u32; 2], String> {
            let mut numbers = part.split('x').map(|n| n.trim().parse::<u32>());
            match (numbers.next(), numbers.next(), numbers.next()) {
                (Some(Ok(x)), None, None) => Ok([x, 1]),
                (Some(Ok(x)), Some(Ok(y)), None) => Ok([x, y]),
                _ => Err(wrong()),
            }
        };
        let (threads, block) = text.split_once('/').ok_or_else(wrong)?;
        let grid = Grid {
            threads: pair(threads)?,
            block: pair(block)?,
        };
        match grid.problem() {
            Some(problem) => Err(format!("the grid {text}: {problem}")),
            None => Ok(grid),
        }
    }

    /// Why the grid cannot run, if it cannot: sizes of zero, or threads that are not whole
    /// blocks.
    pub fn problem(&self) -> Option<String> {
        if self.threads.contains(&0) || self.block.contains(&0) {
            return Some(format!(
                "a grid of {:?} threads in blocks of {:?} has no threads",
                self.threads, self.block
            ));
        }
        if !self.threads[0].is_multiple_of(self.block[0])
            || !self.threads[1].is_multiple_of(self.block[1])
        {
            return Some(format!(
                "{:?} threads are not whole blocks of {:?} (THREADS is BLOCKS * BLOCKSIZE on each axis)",
                self.threads, self.block
            ));
        }
        if self.total_threads() > i32::MAX as u64 {
            return Some(format!(
                "{} threads are more than 2^31 - 1",
                self.total_threads()
            ));
        }
        None
    }
}

pub use crate::lowering::LowerError;
use crate::lowering::{fail, source_span, Lowered};

/// The lowered kernel with what its launch needs.
#[derive(Clone, Debug)]
pub struct LoweredKernel {
    /// One kernel, for the grid.
    pub module: Module,
    /// Per IR parameter: the array's extents (first index first; `None` for a `T[]` axis,
    /// which takes the host array's length), or `None` for a value.
    pub extents: Vec<Option<Vec<Option<usize>>>>,
    /// The kernel's own parameters are the first `arguments` IR parameters; each launch
    /// provides the rest, in this order.
    pub arguments: usize,
    pub hidden: Vec<Hidden>,
    pub grid: Grid,
    /// Blocks each IR thread group runs (`copies`): the IR domain is the grid's threads
    /// divided by this.
    pub copies: u32,
}

/// An IR parameter a launch provides, not the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hidden {
    /// A `global` array: a zeroed buffer of these extents.
    Global,
    /// The extent along `axis` of the array given as kernel parameter `param` (`T[]`).
    Extent { param: usize, axis: usize },
}

/// Lowers the kernel of a checked program (which must have no errors) for `grid`.
pub fn lower(checked: &Checked, grid: Grid) -> Lowered<LoweredKernel> {
    lower_grouped(checked, grid, None)
}

/// [`lower`] with each thread group running `copies` blocks (chosen for the grid when
/// `None`; `copies`).
pub fn lower_grouped(checked: &Checked, grid: Grid, copies: Option<u32>) -> Lowered<LoweredKernel> {
    if let Some(problem) = grid.problem() {
        return fail(Span::default(), problem);
    }
    let Some(index) = checked.info.kernel else {
        return fail(Span::default(), "the program has no kernel");
    };
    let Item::Func(func) = &checked.program.items[index] else {
        return fail(Span::default(), "the kernel is not a function");
    };
    let copies = match copies {
        Some(k) => copies::checked_copies(func, grid, k)?,
        None => copies::copies_for(func, grid),
    };
    let mut lowerer = Lowerer::new(checked, grid, copies, func.span);
    lowerer.kernel(func)?;
    let extents = lowerer.extents.clone();
    let hidden = std::mem::take(&mut lowerer.hidden);
    let structs = lowerer
        .structs
        .iter()
        .map(|(_, decl)| decl.clone())
        .collect();
    let mut kernel = lowerer.b.finish(
        func.name.name.clone(),
        KernelKind::Map,
        Some([grid.block_threads(), 1, 1]),
        source_span(func.name.span),
    );
    // The synchronisation rule's barriers after the last statement order nothing.
    while matches!(kernel.body.0.last(), Some(s) if s.stmt == brook_ir::Stmt::Barrier) {
        kernel.body.0.pop();
    }
    uniform::merge_first_thread_guards(&mut kernel);
    Ok(LoweredKernel {
        module: Module {
            structs,
            kernels: vec![kernel],
            source: Some(std::sync::Arc::new(checked.file.clone())),
        },
        extents,
        arguments: func.params.len(),
        hidden,
        grid,
        copies,
    })
}

/// One extent of an array as the kernel knows it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Extent {
    /// Known when compiling (the grid's sizes included).
    Fixed(u32),
    /// A kernel parameter's `[]`: the host array's length, in this local.
    Host(Handle<Local>),
}

/// Where an array lives.
#[derive(Clone, Debug)]
enum ArrayRef {
    /// A kernel parameter in global memory.
    Global { param: ParamId, dims: Vec<Extent> },
    /// A local (per thread) or shared (per block) array.
    Local {
        local: Handle<Local>,
        dims: Vec<Extent>,
        shared: bool,
    },
}

impl ArrayRef {
    fn dims(&self) -> &[Extent] {
        match self {
            ArrayRef::Global { dims, .. } | ArrayRef::Local { dims, .. } => dims,
        }
    }
}

/// What a variable stands for.
#[derive(Clone, Debug)]
enum Binding {
    /// A scalar or record: a local, or a `global` value's one element.
    Value(brook_ir::Place),
    Array(ArrayRef),
    /// A slice or a computed array passed to a device function: its elements are the
    /// argument's, read (and, for a slice, written) where the function uses them.
    View(expr::ArrayValue),
}

/// One function being lowered: the kernel, or an inlined device function.
struct Frame {
    bindings: HashMap<VarId, Binding>,
    /// For an inlined function: where `return value` stores, and the flag a `return` inside
    /// a loop sets so that every enclosing loop of the function breaks too.
    ret: Option<(Handle<Local>, Handle<Local>)>,
    /// How many of this function's loops enclose the statement being lowered.
    loops: u32,
}

/// The thread's coordinates, computed once at the kernel's start.
#[derive(Clone, Copy)]
struct Coords {
    /// `T`, `X_T`, `Y_T`.
    thread: [Handle<Local>; 3],
    /// `B`, `X_B`, `Y_B`.
    block: [Handle<Local>; 3],
    /// The thread's index in its block: linear, along X, along Y.
    lane: [Handle<Local>; 3],
}

struct Lowerer<'a> {
    checked: &'a Checked,
    grid: Grid,
    b: KernelBuilder,
    /// Record types (by their fields) and their IR declarations.
    structs: Vec<(Ty, StructDecl)>,
    frames: Vec<Frame>,
    coords: Coords,
    extents: Vec<Option<Vec<Option<usize>>>>,
    /// The parameters each launch provides, after the kernel's own.
    hidden: Vec<Hidden>,
    /// Host extents met in the kernel's parameters: (parameter, axis, local, span).
    host_extents: Vec<(usize, usize, Handle<Local>, SourceSpan)>,
    /// Blocks per thread group (`copies`), the coordinates of each, the elements loaded
    /// up front, and the block whose first reads are being preloaded.
    copies: u32,
    copy_coords: Vec<Coords>,
    preloads: Vec<copies::Preload>,
    preload_window: Option<usize>,
    /// Array parameters the kernel only stores to, and the results of whole-block reduces
    /// ([`uniform`]).
    written_only: Vec<VarId>,
    block_reduces: Vec<Handle<Local>>,
}

impl<'a> Lowerer<'a> {
    /// A lowerer whose kernel starts by computing the thread's coordinates.
    fn new(checked: &'a Checked, grid: Grid, copies: u32, span: Span) -> Self {
        let mut b = KernelBuilder::new();
        // The first block of the group (the only one unless `copies > 1`).
        let coords = thread_coordinates(&mut b, grid, 0, copies, source_span(span));
        Lowerer {
            checked,
            grid,
            b,
            structs: Vec::new(),
            frames: Vec::new(),
            coords,
            extents: Vec::new(),
            hidden: Vec::new(),
            host_extents: Vec::new(),
            copies,
            copy_coords: Vec::new(),
            preloads: Vec::new(),
            preload_window: None,
            written_only: Vec::new(),
            block_reduces: Vec::new(),
        }
    }

    fn kernel(&mut self, func: &Func) -> Lowered<()> {
        debug_assert_eq!(func.kind, FuncKind::Kernel);
        self.frames.push(Frame {
            bindings: HashMap::new(),
            ret: None,
            loops: 0,
        });
        for param in &func.params {
            self.kernel_param(param)?;
        }
        self.written_only = self.written_only(func);
        self.host_extent_params();
        if self.copies > 1 {
            return self.grouped_body(func);
        }
        self.block(&func.body)?;
        Ok(())
    }

    fn kernel_param(&mut self, param: &super::ast::Param) -> Lowered<()> {
        let var = self.declared(&param.name)?;
        let ty = self.checked.info.vars[var.0 as usize].ty.clone();
        let span = source_span(param.name.span);
        let id = ParamId(self.b.params.len() as u32);
        match &ty {
            Ty::Array { elem, dims } => {
                let elem = self.ir_type(elem, param.ty.span)?;
                self.b.params.push(brook_ir::Param {
                    name: param.name.name.clone(),
                    ty: elem,
                    role: brook_ir::ParamRole::Scatter {
                        rank: dims.len() as u8,
                    },
                    span,
                });
                // The host's extents (`T[]`) come from the launch: a hidden value each.
                let mut extents = Vec::new();
                let mut known = Vec::new();
                for (axis, dim) in dims.iter().enumerate() {
                    if *dim == super::check::Dim::Host {
                        extents.push(self.host_extent(param, id.0 as usize, axis));
                        known.push(None);
                    } else {
                        let n = self.extents_of(
                            std::slice::from_ref(dim),
                            param.ty.span,
                            "a kernel parameter",
                        )?[0];
                        extents.push(Extent::Fixed(n));
                        known.push(Some(n as usize));
                    }
                }
                self.extents.push(Some(known));
                self.bind(
                    var,
                    Binding::Array(ArrayRef::Global {
                        param: id,
                        dims: extents,
                    }),
                );
            }
            _ => {
                let ir = self.ir_type(&ty, param.ty.span)?;
                self.b.params.push(brook_ir::Param {
                    name: param.name.name.clone(),
                    ty: ir.clone(),
                    role: brook_ir::ParamRole::Constant,
                    span,
                });
                self.extents.push(None);
                // A value parameter is the kernel's own copy: it may be assigned.
                let value = self.b.append(brook_ir::ExprKind::Constant(id), ir, span);
                let local = self.b.capture(&param.name.name, value, span);
                self.bind(var, Binding::Value(brook_ir::Place::local(local)));
            }
        }
        Ok(())
    }

    /// The host's extent along `axis` of kernel array parameter `param` (`T[]`): a local
    /// that a value parameter the launch provides fills ([`Lowerer::host_extent_params`]).
    fn host_extent(&mut self, array: &super::ast::Param, param: usize, axis: usize) -> Extent {
        let s = source_span(array.name.span);
        let int = Type::Value(ValueType::scalar(ScalarKind::I32));
        let name = format!("{}.extent{axis}", array.name.name);
        let local = self.b.new_local(&name, int, false, s);
        self.host_extents.push((param, axis, local, s));
        Extent::Host(local)
    }

    /// After the kernel's own parameters: a value parameter for each host extent, copied into
    /// its local.
    fn host_extent_params(&mut self) {
        let int = Type::Value(ValueType::scalar(ScalarKind::I32));
        for (param, axis, local, s) in std::mem::take(&mut self.host_extents) {
            let id = ParamId(self.b.params.len() as u32);
            let name = self.b.locals[local].name.clone();
            self.b.params.push(brook_ir::Param {
                name,
                ty: int.clone(),
                role: brook_ir::ParamRole::Constant,
                span: s,
            });
            self.extents.push(None);
            self.hidden.push(Hidden::Extent { param, axis });
            let value = self
                .b
                .append(brook_ir::ExprKind::Constant(id), int.clone(), s);
            self.b.store(brook_ir::Place::local(local), value, s);
        }
    }

    fn coords(&self) -> &Coords {
        &self.coords
    }

    fn bind(&mut self, var: VarId, binding: Binding) {
        if let Some(frame) = self.frames.last_mut() {
            frame.bindings.insert(var, binding);
        }
    }

    fn binding(&self, var: VarId, span: Span) -> Lowered<Binding> {
        match self.frames.last().and_then(|f| f.bindings.get(&var)) {
            Some(b) => Ok(b.clone()),
            None => fail(span, "a variable with no storage (a compiler defect)"),
        }
    }

    /// The variable a declaration's name declares.
    fn declared(&self, name: &super::ast::Ident) -> Lowered<VarId> {
        match self
            .checked
            .info
            .declared
            .get(&(name.span.start, name.span.end))
        {
            Some(&id) => Ok(id),
            None => fail(
                name.span,
                format!("`{}` was not declared by the checker", name.name),
            ),
        }
    }

    /// The value of a grid size.
    fn grid_value(&self, param: super::token::ThreadParam) -> u32 {
        use super::token::{Axis, ThreadName};
        let [tx, ty] = self.grid.threads;
        let [bx, by] = self.grid.block;
        let [gx, gy] = self.grid.blocks();
        match (param.name, param.axis) {
            (ThreadName::Threads, None) => tx * ty,
            (ThreadName::Threads, Some(Axis::X)) => tx,
            (ThreadName::Threads, Some(Axis::Y)) => ty,
            (ThreadName::Blocks, None) => gx * gy,
            (ThreadName::Blocks, Some(Axis::X)) => gx,
            (ThreadName::Blocks, Some(Axis::Y)) => gy,
            (ThreadName::BlockSize, None) => bx * by,
            (ThreadName::BlockSize, Some(Axis::X)) => bx,
            (ThreadName::BlockSize, Some(Axis::Y)) => by,
            _ => 0,
        }
    }

    /// Array extents for this grid.
    fn extents_of(&self, dims: &[super::check::Dim], span: Span, what: &str) -> Lowered<Vec<u32>> {
        use super::check::{Dim, Size};
        fn eval(l: &Lowerer<'_>, size: &Size) -> Option<i64> {
            Some(match size {
                Size::Literal(n) => i64::try_from(*n).ok()?,
                Size::Grid(p) => i64::from(l.grid_value(*p)),
                Size::Binary(op, a, b) => {
                    let (a, b) = (eval(l, a)?, eval(l, b)?);
                    match op {
                        super::check::ty::SizeOp::Add => a.checked_add(b)?,
                        super::check::ty::SizeOp::Sub => a.checked_sub(b)?,
                        super::check::ty::SizeOp::Mul => a.checked_mul(b)?,
                        super::check::ty::SizeOp::Div => a.checked_div(b)?,
                    }
                }
            })
        }
        dims.iter()
            .map(|d| {
                let n = match d {
                    Dim::Const(n) => i64::try_from(*n).ok(),
                    Dim::Launch(size) => eval(self, size),
                    Dim::Unsized => Some(i64::from(self.grid.block_threads())),
                    Dim::Slice | Dim::Host => None,
                };
                match n {
                    Some(n) if n > 0 && n <= i64::from(i32::MAX) => Ok(n as u32),
                    Some(n) => fail(span, format!("{what} has the extent {n} on this grid")),
                    None => fail(
                        span,
                        format!("{what} has an extent that is not known on this grid"),
                    ),
                }
            })
            .collect()
    }

    /// The IR type of a checked type (records become structs, arrays nested IR arrays).
    fn ir_type(&mut self, ty: &Ty, span: Span) -> Lowered<Type> {
        Ok(match ty {
            Ty::Basic(b) => Type::Value(ValueType::scalar(scalar_kind(*b))),
            Ty::UntypedInt => Type::Value(ValueType::scalar(ScalarKind::I64)),
            Ty::UntypedFloat => Type::Value(ValueType::scalar(ScalarKind::F64)),
            Ty::Record(record) => {
                if let Some(i) = self.structs.iter().position(|(t, _)| t == ty) {
                    return Ok(Type::Struct(StructId(i as u32)));
                }
                let mut fields = Vec::new();
                for (name, field) in &record.fields {
                    fields.push(FieldDecl {
                        name: name.clone(),
                        ty: self.ir_type(field, span)?,
                    });
                }
                let name = record
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("record{}", self.structs.len()));
                self.structs.push((ty.clone(), StructDecl { name, fields }));
                Type::Struct(StructId(self.structs.len() as u32 - 1))
            }
            Ty::Array { elem, dims } => {
                let dims = self.extents_of(dims, span, "an array")?;
                let mut ir = self.ir_type(elem, span)?;
                for &len in dims.iter().rev() {
                    ir = Type::Array {
                        elem: Box::new(ir),
                        len,
                    };
                }
                ir
            }
            Ty::Error => return fail(span, "a value of no type (a compiler defect)"),
        })
    }

    /// A literal for a `const` value as `kind`.
    fn const_literal(
        &mut self,
        value: ConstValue,
        kind: ScalarKind,
        span: Span,
    ) -> Handle<brook_ir::Expr> {
        let s = source_span(span);
        let lit = match (value, kind) {
            (ConstValue::Bool(b), _) => brook_ir::Literal::bool(b),
            (ConstValue::Int(i), ScalarKind::F32) => brook_ir::Literal::f32(i as f32),
            (ConstValue::Int(i), ScalarKind::F64) => brook_ir::Literal::f64(i as f64),
            (ConstValue::Int(i), k) => brook_ir::Literal::int(k, i),
            (ConstValue::Float(f), ScalarKind::F32) => brook_ir::Literal::f32(f as f32),
            (ConstValue::Float(f), ScalarKind::F64) => brook_ir::Literal::f64(f),
            (ConstValue::Float(f), k) => brook_ir::Literal::int(k, f as i64),
        };
        self.b.literal(lit, s)
    }
}

/// Computes `T`, `B` and the lanes (and their `X_`/`Y_` forms) into locals, for block `copy`
/// of the `copies` each thread group runs.
fn thread_coordinates(
    b: &mut KernelBuilder,
    grid: Grid,
    copy: u32,
    copies: u32,
    s: SourceSpan,
) -> Coords {
    let [bx, by] = grid.block;
    let [_, blocks_y] = grid.blocks();
    let int4 = Type::Value(ValueType::vector(ScalarKind::I32, 4));
    let int = Type::Value(ValueType::scalar(ScalarKind::I32));
    let instance = b.append(brook_ir::ExprKind::Instance, int4.clone(), s);
    let linear = b.append(
        brook_ir::ExprKind::Component {
            base: instance,
            index: 0,
        },
        int.clone(),
        s,
    );
    let in_group = b.append(brook_ir::ExprKind::InstanceInGroup, int4, s);
    let lane = b.append(
        brook_ir::ExprKind::Component {
            base: in_group,
            index: 0,
        },
        int,
        s,
    );
    use brook_ir::BinaryOp::{Add, Div, Mul, Rem};
    let mut by_const = |op, value, k: u32| {
        let c = b.int(i64::from(k), s);
        b.binary(op, value, c, s)
    };
    let group = by_const(Div, linear, bx * by);
    let (block, linear) = if copies > 1 {
        let first = by_const(Mul, group, copies);
        let block = by_const(Add, first, copy);
        let start = by_const(Mul, block, bx * by);
        (block, b.binary(Add, start, lane, s))
    } else {
        (group, linear)
    };
    let mut by_const = |op, value, k: u32| {
        let c = b.int(i64::from(k), s);
        b.binary(op, value, c, s)
    };
    let lane_x = by_const(Div, lane, by);
    let lane_y = by_const(Rem, lane, by);
    let block_x = by_const(Div, block, blocks_y);
    let block_y = by_const(Rem, block, blocks_y);
    let scaled_x = by_const(Mul, block_x, bx);
    let scaled_y = by_const(Mul, block_y, by);
    let thread_x = b.binary(Add, scaled_x, lane_x, s);
    let thread_y = b.binary(Add, scaled_y, lane_y, s);
    let mut keep = |name: &str, value| b.capture(name, value, s);
    Coords {
        thread: [
            keep("T", linear),
            keep("X_T", thread_x),
            keep("Y_T", thread_y),
        ],
        block: [keep("B", block), keep("X_B", block_x), keep("Y_B", block_y)],
        lane: [
            keep("lane", lane),
            keep("lane_x", lane_x),
            keep("lane_y", lane_y),
        ],
    }
}

/// The IR kind of a basic type.
fn scalar_kind(b: super::ast::BasicType) -> ScalarKind {
    use super::ast::BasicType;
    match b {
        BasicType::Bool => ScalarKind::Bool,
        BasicType::Byte => ScalarKind::U8,
        BasicType::Int32 => ScalarKind::I32,
        BasicType::Int64 => ScalarKind::I64,
        BasicType::UInt32 => ScalarKind::U32,
        BasicType::UInt64 => ScalarKind::U64,
        BasicType::Float32 => ScalarKind::F32,
        BasicType::Float64 => ScalarKind::F64,
    }
}

/// The kind a value of checked type `ty` takes where `want` is wanted: untagged constants
/// take `want` when it suits them.
fn kind_for(ty: &Ty, want: Option<ScalarKind>) -> ScalarKind {
    match ty {
        Ty::Basic(b) => scalar_kind(*b),
        Ty::UntypedInt => match want {
            Some(k) if k != ScalarKind::Bool => k,
            _ => ScalarKind::I64,
        },
        Ty::UntypedFloat => match want {
            Some(k) if k.is_float() => k,
            _ => ScalarKind::F64,
        },
        _ => want.unwrap_or(ScalarKind::I32),
    }
}
