//! The map driver, written once for every GPU dialect: a grid-stride loop over the execution
//! region, one instance per invocation and step.
//!
//! A small loop-free kernel runs [`UNROLL`] instances per step while they are all inside the
//! region (one basic block: the loads of all of them are in flight together, which a single
//! instance per invocation does not give the memory system enough of), then single steps. On
//! a one-dimensional domain with unit-stride streams the step's instances are consecutive
//! ([`Stepping::Quads`]): each 4-byte input is read for all four with one 16-byte load where
//! the element is 16-byte aligned.
//!
//! The parameter block, the region and the bindings are read once per invocation, before the
//! loop; each instance moves the position ([`MapGpu::set_position`]), which moves the element
//! addresses of the streams read and written at it.

use super::Gpu;
use crate::abi::{InputMode, Variant};
use crate::leaves::leaves;
use crate::lower::Binding;
use brook_ir::{BinaryOp, Block, Kernel, Module, ParamRole, ScalarKind, Stmt};

/// Instances per step of the unrolled loop.
pub const UNROLL: u64 = 4;
/// Kernels of a greater weight ([`brook_ir::weight`]) run one instance per step.
const SMALL: usize = 256;

/// How a map kernel's instances are spread over a step of the grid-stride loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stepping {
    /// One instance per step.
    Single,
    /// [`UNROLL`] instances a grid stride apart per step while they all fit, then single steps.
    Unrolled,
    /// [`UNROLL`] consecutive instances per step, inputs read four at a time, then single steps.
    Quads,
}

impl Stepping {
    /// How `kernel` runs for `variant`.
    pub fn of(module: &Module, kernel: &Kernel, variant: &Variant) -> Stepping {
        if !worth_unrolling(kernel) {
            Stepping::Single
        } else if vectorizable(module, kernel, variant) {
            Stepping::Quads
        } else {
            Stepping::Unrolled
        }
    }

    /// Instances an invocation runs per step: the launch needs `total / this` invocations.
    pub fn instances_per_step(self) -> u64 {
        match self {
            Stepping::Single => 1,
            Stepping::Unrolled | Stepping::Quads => UNROLL,
        }
    }
}

/// Small ([`brook_ir::weight`], which counts unrolled loops' copies where the arena shares
/// their expressions) and loop-free: several instances in one basic block pay off.
pub fn worth_unrolling(kernel: &Kernel) -> bool {
    fn loop_free(block: &Block) -> bool {
        block.iter().all(|s| match &s.stmt {
            Stmt::Loop { .. } => false,
            Stmt::If { accept, reject, .. } => loop_free(accept) && loop_free(reject),
            _ => true,
        })
    }
    loop_free(&kernel.body)
        && brook_ir::weight::Weigher::new(&kernel.exprs).statements(&kernel.body.0) <= SMALL
}

/// One-dimensional, unit pitch, every stream input read directly (no resize), and every
/// input and output element at most 4 bytes (wider elements already load 16 bytes per
/// instance; four consecutive ones per invocation would leave the accesses strided).
pub fn vectorizable(module: &Module, kernel: &Kernel, variant: &Variant) -> bool {
    let narrow = kernel
        .params
        .iter()
        .filter(|p| matches!(p.role, ParamRole::Input | ParamRole::Output))
        .all(|p| module.layout(&p.ty).size <= 4);
    narrow
        && variant.rank == 1
        && variant.unit_stride
        && variant
            .inputs
            .iter()
            .flatten()
            .all(|m| matches!(m, InputMode::Direct | InputMode::Iterator))
}

/// Whether a kernel `return` sits inside one of the kernel's loops (a dialect whose
/// instances end by leaving a construct, as SPIR-V's, cannot leave two at once).
pub fn returns_in_loops(kernel: &Kernel) -> bool {
    fn walk(block: &Block, in_loop: bool) -> bool {
        block.iter().any(|s| match &s.stmt {
            Stmt::Return => in_loop,
            Stmt::Loop { body, continuing } => walk(body, true) || walk(continuing, true),
            Stmt::If { accept, reject, .. } => walk(accept, in_loop) || walk(reject, in_loop),
            _ => false,
        })
    }
    walk(&kernel.body, false)
}

/// What a dialect offers the map driver beside [`Gpu`].
pub trait MapGpu<'ir>: Gpu<'ir> {
    /// What an instance's body needs at its end (where its `return`s go).
    type Instance;
    /// The invocations of the launch: the grid-stride loop's step (an index leaf).
    fn invocations(&mut self) -> Self::Leaf;
    /// Moves to the instance at `pos` (slowest first): the element addresses follow.
    fn set_position(&mut self, pos: Vec<Self::Leaf>);
    /// Sets how parameter `param` is bound.
    fn set_binding(&mut self, param: usize, binding: Binding<Self::Leaf, Self::Var>);
    /// Opens an instance's body: a kernel `return` in it goes to its end.
    fn begin_instance(&mut self) -> Self::Instance;
    /// Closes an instance's body: code after it runs.
    fn end_instance(&mut self, instance: Self::Instance);
    /// Sets every local of the kernel to zero (each instance starts so).
    fn zero_locals(&mut self);
    /// Lowers the kernel body where the code stands.
    fn lower_body(&mut self) -> Result<(), Self::Error>;
}

/// The execution region: origin and size (slowest first) and the number of instances, index
/// leaves.
pub struct Region<L> {
    pub origin: Vec<L>,
    pub size: Vec<L>,
    pub total: L,
}

/// Writes the grid-stride loop over `region`, the bindings already set (their element
/// addresses moved by each [`MapGpu::set_position`]).
pub fn emit<'ir, T: MapGpu<'ir>>(
    t: &mut T,
    stepping: Stepping,
    region: &Region<T::Leaf>,
) -> Result<(), T::Error> {
    let kind = t.index_kind();
    let thread = t.global_thread();
    let thread = match kind {
        ScalarKind::U64 => thread,
        _ => t.convert(ScalarKind::U64, kind, thread),
    };
    let stride = t.invocations();
    let index = t.temporary(kind);
    t.write_var(index, thread);
    match stepping {
        Stepping::Quads => quads(t, index, (thread, stride), region)?,
        Stepping::Unrolled => unrolled(t, index, stride, region)?,
        Stepping::Single => {}
    }
    let step = t.begin_loop();
    let at = t.read_var(index);
    leave_unless_below(t, step, at, region.total);
    instance(t, at, region)?;
    let next = index_op(t, BinaryOp::Add, at, stride);
    t.write_var(index, next);
    t.begin_continuing(step);
    t.end_loop(step);
    Ok(())
}

/// Steps of [`UNROLL`] instances a stride apart while the last is inside the region.
fn unrolled<'ir, T: MapGpu<'ir>>(
    t: &mut T,
    index: T::Var,
    stride: T::Leaf,
    region: &Region<T::Leaf>,
) -> Result<(), T::Error> {
    let step = t.begin_loop();
    let first = t.read_var(index);
    let reach = constant(t, UNROLL - 1);
    let reach = index_op(t, BinaryOp::Mul, stride, reach);
    let last = index_op(t, BinaryOp::Add, first, reach);
    leave_unless_below(t, step, last, region.total);
    let mut at = first;
    for k in 0..UNROLL {
        if k > 0 {
            at = index_op(t, BinaryOp::Add, at, stride);
        }
        instance(t, at, region)?;
    }
    let next = index_op(t, BinaryOp::Add, at, stride);
    t.write_var(index, next);
    t.begin_continuing(step);
    t.end_loop(step);
    Ok(())
}

/// Steps of [`UNROLL`] consecutive instances (invocation `thread` takes quad `thread`, then
/// every `stride`-th), then sets `index` to the invocation's first instance after the last
/// whole quad, for the single steps.
fn quads<'ir, T: MapGpu<'ir>>(
    t: &mut T,
    index: T::Var,
    (thread, stride): (T::Leaf, T::Leaf),
    region: &Region<T::Leaf>,
) -> Result<(), T::Error> {
    let two = constant(t, 2);
    let whole = index_op(t, BinaryOp::Shr, region.total, two);
    let step = t.begin_loop();
    let quad = t.read_var(index);
    leave_unless_below(t, step, quad, whole);
    let first = index_op(t, BinaryOp::Shl, quad, two);
    set_position(t, first, region);
    let preloaded = preload(t);
    for k in 0..UNROLL {
        if k > 0 {
            let offset = constant(t, k);
            let at = index_op(t, BinaryOp::Add, first, offset);
            set_position(t, at, region);
        }
        for (param, _, values) in &preloaded {
            t.set_binding(*param, Binding::Values(vec![values[k as usize]]));
        }
        run_instance(t)?;
    }
    for (param, addr, _) in preloaded {
        t.set_binding(param, Binding::Element { addr });
    }
    let next = index_op(t, BinaryOp::Add, quad, stride);
    t.write_var(index, next);
    t.begin_continuing(step);
    t.end_loop(step);
    let first_single = index_op(t, BinaryOp::Shl, whole, two);
    let first_single = index_op(t, BinaryOp::Add, first_single, thread);
    t.write_var(index, first_single);
    Ok(())
}

/// The four consecutive values of each 4-byte scalar input read at the element (at the
/// quad's first position): the parameter, its element address variable, the values.
type Preloaded<L, V> = Vec<(usize, V, [L; 4])>;

fn preload<'ir, T: MapGpu<'ir>>(t: &mut T) -> Preloaded<T::Leaf, T::Var> {
    let (module, kernel) = (t.module(), t.kernel());
    let mut out = Vec::new();
    for (i, param) in kernel.params.iter().enumerate() {
        if param.role != ParamRole::Input {
            continue;
        }
        let Binding::Element { addr } = t.binding(brook_ir::ParamId(i as u32)) else {
            continue;
        };
        let kind = match leaves(module, &param.ty).as_slice() {
            [leaf] if leaf.kind.size() == 4 => leaf.kind,
            _ => continue,
        };
        let at = t.read_var(addr);
        out.push((i, addr, t.load_quad(kind, at)));
    }
    out
}

/// Runs the body for the instance at `linear` in the region.
fn instance<'ir, T: MapGpu<'ir>>(
    t: &mut T,
    linear: T::Leaf,
    region: &Region<T::Leaf>,
) -> Result<(), T::Error> {
    set_position(t, linear, region);
    run_instance(t)
}

/// The body for the instance at the position set, its locals zeroed first.
fn run_instance<'ir, T: MapGpu<'ir>>(t: &mut T) -> Result<(), T::Error> {
    t.zero_locals();
    let body = t.begin_instance();
    t.lower_body()?;
    t.end_instance(body);
    Ok(())
}

/// Moves to `linear` unravelled row-major in the region's box, plus its origin.
fn set_position<'ir, T: MapGpu<'ir>>(t: &mut T, linear: T::Leaf, region: &Region<T::Leaf>) {
    let pos = unravel(t, linear, &region.size, &region.origin);
    t.set_position(pos);
}

/// `linear` unravelled row-major in a box of `size`, plus `origin` (slowest first).
pub fn unravel<'ir, T: Gpu<'ir>>(
    t: &mut T,
    linear: T::Leaf,
    size: &[T::Leaf],
    origin: &[T::Leaf],
) -> Vec<T::Leaf> {
    let mut pos = vec![linear; size.len()];
    let mut rest = linear;
    for k in (0..size.len()).rev() {
        let p = if k == 0 {
            rest
        } else {
            let quotient = t.div_index(rest, size[k]);
            let whole = t.mul_index(quotient, size[k]);
            let p = index_op(t, BinaryOp::Sub, rest, whole);
            rest = quotient;
            p
        };
        pos[k] = index_op(t, BinaryOp::Add, p, origin[k]);
    }
    pos
}

/// Leaves loop `step` unless `at < end`.
fn leave_unless_below<'ir, T: Gpu<'ir>>(t: &mut T, step: T::Loop, at: T::Leaf, end: T::Leaf) {
    let kind = t.index_kind();
    let finished = t.binary(BinaryOp::Ge, kind, at, end);
    let leave = t.begin_if(finished);
    t.jump_break(step);
    t.end_if(leave);
}

fn index_op<'ir, T: Gpu<'ir>>(t: &mut T, op: BinaryOp, a: T::Leaf, b: T::Leaf) -> T::Leaf {
    let kind = t.index_kind();
    t.binary(op, kind, a, b)
}

fn constant<'ir, T: Gpu<'ir>>(t: &mut T, value: u64) -> T::Leaf {
    t.index_constant(value)
}
