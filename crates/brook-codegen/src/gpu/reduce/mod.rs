//! Reductions and scans in passes, written once over [`Gpu`].
//!
//! A pass reduces each target's leaves in aligned power-of-two pieces and writes each piece's
//! value to a dense scratch array (`[target][piece]`) or, when a target has one piece, the
//! target element; the next pass reduces the scratch array's pieces the same way. Because
//! every piece is an aligned power-of-two subtree, combining pieces canonically gives the
//! canonical result. The runtime plans the passes (`brook_runtime::reduce_plan`) from the
//! entries a module declares ([`crate::abi::ReduceEntry`]).
//!
//! - [`serial`]: a thread per piece, any layout (every GPU reduction module has it);
//! - [`columns`]: a thread per four neighbouring targets whose leaves lie side by side (one
//!   4-byte scalar);
//! - [`warp`]: a subgroup per piece of consecutive leaves, for any subgroup size (stream
//!   inputs, on devices that shuffle values between a subgroup's lanes);
//! - [`scan`]: a thread per piece of a row, scanning from the piece's exclusive prefix (the
//!   pieces' prefixes come from reduction passes over the same pieces);
//! - [`scan_warp`]: the same with a subgroup per piece of consecutive leaves;
//! - [`lookback`]: one pass for a scan of consecutive leaves, subgroups taking tiles by
//!   ticket, their prefixes from the nodes earlier tiles publish.
//!
//! This module holds what they share: the reduction's parameters, a pass's parameters, a
//! worker's share, positions, loads and stores of values, and where a piece's value goes.

pub mod columns;
pub mod lookback;
pub mod scan;
pub mod scan_warp;
pub mod serial;
pub mod warp;

use super::{Gpu, PassParam};
use crate::abi::{header, BlockLayout};
use crate::leaves::leaves;
use crate::lower::binding::Source;
use crate::lower::{Memory, Space, StreamRef};
use brook_ir::{BinaryOp, ScalarKind, Type};

/// The reduction's input and target parameters and its value.
#[derive(Clone, Debug)]
pub struct Reduction {
    pub input: usize,
    pub target: usize,
    pub ty: Type,
    pub value_size: u32,
    /// The combine step is long: a dialect keeps the serial stack in memory and writes the
    /// step out a few times, not once per level of unrolled stacks and trees.
    pub heavy: bool,
}

impl Reduction {
    /// The reduction of `kernel` (its one input or iterator and its one target), not heavy;
    /// `backend`'s error when it has not exactly those.
    pub fn of(
        module: &brook_ir::Module,
        kernel: &brook_ir::Kernel,
        backend: crate::BackendKind,
    ) -> Result<Reduction, crate::CompileError> {
        use brook_ir::ParamRole;
        let find =
            |want: &dyn Fn(&ParamRole) -> bool| kernel.params.iter().position(|p| want(&p.role));
        let input = find(&|role| matches!(role, ParamRole::Input | ParamRole::Iterator));
        let target = find(&|role| *role == ParamRole::Reduce);
        let (Some(input), Some(target)) = (input, target) else {
            return Err(crate::CompileError::Unsupported {
                backend,
                kernel: kernel.name.clone(),
                span: kernel.span,
                construct: "a reduction without one input and one reduction target".into(),
            });
        };
        let ty = kernel.params[target].ty.clone();
        Ok(Reduction {
            input,
            target,
            value_size: module.layout(&ty).size,
            ty,
            heavy: false,
        })
    }
}

/// Leaves a serial thread loads together (a power of two).
pub const BATCH: u64 = 8;

/// A pass's parameters, loaded.
pub struct Pass<L> {
    pub src: L,
    pub dst: L,
    pub leaves_per_target: L,
    pub piece: L,
    pub pieces: L,
    pub mode: L,
    /// Targets in the launch (the domain's elements).
    pub targets: L,
    pub domain: Vec<L>,
    /// Leaves of the input per target, per axis.
    pub tile: Vec<L>,
}

impl<L: Copy> Pass<L> {
    /// Loads a pass's parameters and the launch's domain and tile (rank `rank`).
    pub fn load<'ir, G: Gpu<'ir, Leaf = L>>(g: &mut G, rank: usize) -> Pass<L> {
        let domain = crate::lower::binding::axes(g, header::DOMAIN, rank);
        let tile = crate::lower::binding::axes(g, header::TILE, rank);
        let mut targets = g.index_constant(1);
        for &d in &domain {
            targets = u64_op(g, BinaryOp::Mul, targets, d);
        }
        Pass {
            src: g.pass_param(PassParam::Src),
            dst: g.pass_param(PassParam::Dst),
            leaves_per_target: g.pass_param(PassParam::Leaves),
            piece: g.pass_param(PassParam::Piece),
            pieces: g.pass_param(PassParam::Pieces),
            mode: g.pass_param(PassParam::Mode),
            targets,
            domain,
            tile,
        }
    }

    /// [`share`] of this pass for worker `worker` (one per target and piece).
    pub fn share<'ir, G: Gpu<'ir, Leaf = L>>(&self, g: &mut G, worker: L) -> Share<L> {
        share(
            g,
            worker,
            self.targets,
            (self.pieces, self.piece),
            self.leaves_per_target,
        )
    }
}

/// A worker's share of a pass.
pub struct Share<L> {
    /// The target (or group of targets) it reduces.
    pub unit: L,
    /// Which piece of the unit's leaves, and where that piece starts and how long it is.
    pub piece_index: L,
    pub lo: L,
    pub count: L,
}

/// `a op b` on `u64`s.
pub fn u64_op<'ir, G: Gpu<'ir>>(g: &mut G, op: BinaryOp, a: G::Leaf, b: G::Leaf) -> G::Leaf {
    g.binary(op, ScalarKind::U64, a, b)
}

/// `a * b + c` on `u64`s.
pub fn mul_add<'ir, G: Gpu<'ir>>(g: &mut G, a: G::Leaf, b: G::Leaf, c: G::Leaf) -> G::Leaf {
    let ab = u64_op(g, BinaryOp::Mul, a, b);
    u64_op(g, BinaryOp::Add, ab, c)
}

/// Worker `worker` of `units * pieces` takes unit `worker % units`, piece `worker / units`;
/// workers past the end leave.
pub fn share<'ir, G: Gpu<'ir>>(
    g: &mut G,
    worker: G::Leaf,
    units: G::Leaf,
    pieces: (G::Leaf, G::Leaf),
    leaves_per_target: G::Leaf,
) -> Share<G::Leaf> {
    let workers = u64_op(g, BinaryOp::Mul, units, pieces.0);
    let outside = u64_op(g, BinaryOp::Ge, worker, workers);
    let leave = g.begin_if(outside);
    g.jump_return();
    g.end_if(leave);
    share_of(g, worker, units, pieces.1, leaves_per_target)
}

/// The share of worker `worker` (below `units * pieces`): unit `worker % units`, piece
/// `worker / units` of `piece` leaves.
pub fn share_of<'ir, G: Gpu<'ir>>(
    g: &mut G,
    worker: G::Leaf,
    units: G::Leaf,
    piece: G::Leaf,
    leaves_per_target: G::Leaf,
) -> Share<G::Leaf> {
    let piece_index = g.div_index(worker, units);
    let whole = u64_op(g, BinaryOp::Mul, piece_index, units);
    let unit = u64_op(g, BinaryOp::Sub, worker, whole);
    let lo = u64_op(g, BinaryOp::Mul, piece_index, piece);
    let end = u64_op(g, BinaryOp::Add, lo, piece);
    let short = u64_op(g, BinaryOp::Lt, leaves_per_target, end);
    let hi = g.select(ScalarKind::U64, short, leaves_per_target, end);
    let count = u64_op(g, BinaryOp::Sub, hi, lo);
    Share {
        unit,
        piece_index,
        lo,
        count,
    }
}

/// Whether `bit` of the `mode` parameter is set (a bool leaf). On `u64`s, whose constants
/// every dialect writes as immediates (PTX loads other integer literals from `.const`
/// memory, which cost the one-pass scan's tiles 10% on an H200).
pub fn mode_bit<'ir, G: Gpu<'ir>>(g: &mut G, mode: G::Leaf, bit: u32) -> G::Leaf {
    let wide = g.convert(ScalarKind::U32, ScalarKind::U64, mode);
    let mask = g.index_constant(u64::from(bit));
    let set = u64_op(g, BinaryOp::BitAnd, wide, mask);
    let zero = g.index_constant(0);
    u64_op(g, BinaryOp::Ne, set, zero)
}

/// `linear` unravelled row-major in a box of `size` (slowest first).
pub fn unravel<'ir, G: Gpu<'ir>>(g: &mut G, linear: G::Leaf, size: &[G::Leaf]) -> Vec<G::Leaf> {
    let mut pos = vec![linear; size.len()];
    let mut rest = linear;
    for k in (1..size.len()).rev() {
        let next = g.div_index(rest, size[k]);
        let whole = u64_op(g, BinaryOp::Mul, next, size[k]);
        pos[k] = u64_op(g, BinaryOp::Sub, rest, whole);
        rest = next;
    }
    if !size.is_empty() {
        pos[0] = rest;
    }
    pos
}

/// Variables holding `values` (`u64`s).
pub fn index_vars<'ir, G: Gpu<'ir>>(g: &mut G, values: &[G::Leaf]) -> Vec<G::Var> {
    values
        .iter()
        .map(|&v| {
            let var = g.temporary(ScalarKind::U64);
            g.write_var(var, v);
            var
        })
        .collect()
}

/// Moves a position (variables) one step in row-major order inside a box of `size`.
pub fn advance<'ir, G: Gpu<'ir>>(g: &mut G, pos: &[G::Var], size: &[G::Leaf]) {
    let Some(last) = pos.len().checked_sub(1) else {
        return;
    };
    let (one, zero) = (g.index_constant(1), g.index_constant(0));
    let mut carry: Option<G::Leaf> = None;
    for k in (0..=last).rev() {
        let step = match carry {
            None => one,
            Some(c) => g.select(ScalarKind::U64, c, one, zero),
        };
        let at = g.read_var(pos[k]);
        let moved = u64_op(g, BinaryOp::Add, at, step);
        let wrapped = u64_op(g, BinaryOp::Eq, moved, size[k]);
        let moved = if k > 0 {
            g.select(ScalarKind::U64, wrapped, zero, moved)
        } else {
            moved
        };
        g.write_var(pos[k], moved);
        carry = Some(wrapped);
    }
}

/// The positions in the tile of the next `count` input leaves, `pos` moved past them.
pub fn next_positions<'ir, G: Gpu<'ir>>(
    g: &mut G,
    pos: &[G::Var],
    tile: &[G::Leaf],
    count: u64,
) -> Vec<Vec<G::Leaf>> {
    (0..count)
        .map(|_| {
            // Copies: `advance` overwrites the variables (registers, on PTX).
            let here: Vec<G::Leaf> = pos.iter().map(|&v| g.snapshot_var(v)).collect();
            advance(g, pos, tile);
            here
        })
        .collect()
}

/// Where runs of consecutive leaves of one target come from: the scratch array's slots (mode
/// bit 0, `from_scratch`), or the input at the position `lpos` of the target's tile (moved
/// past each run).
pub struct Run<'a, L, V> {
    pub from_scratch: L,
    pub src: L,
    pub source: &'a Source<L>,
    pub tpos: &'a [L],
    pub tile: &'a [L],
    pub lpos: &'a [V],
    /// Every run of the input lies in one row of the tile, its leaves side by side in
    /// memory ([`Run::contiguous`]).
    pub contiguous: L,
}

impl<L: Copy, V: Copy> Run<'_, L, V> {
    /// Whether runs of `length` leaves that start at a multiple of `length` from `first`
    /// (an offset in the tile) lie in one row of the input, side by side: the input is a
    /// stream of unit pitch along its last axis, the tile's rows a multiple of `length` long,
    /// `first` a multiple of `length`.
    pub fn contiguous<'ir, G: Gpu<'ir, Leaf = L, Var = V>>(
        g: &mut G,
        source: &Source<L>,
        tile: &[L],
        first: L,
        length: u64,
    ) -> L {
        let (Source::Stream(stream), Some(&row)) = (source, tile.last()) else {
            return g.literal(brook_ir::Literal::bool(false));
        };
        let Some(&pitch) = stream.pitch.last() else {
            return g.literal(brook_ir::Literal::bool(false));
        };
        let (zero, one) = (g.index_constant(0), g.index_constant(1));
        let mask = g.index_constant(length - 1);
        let unit = u64_op(g, BinaryOp::Eq, pitch, one);
        let either = u64_op(g, BinaryOp::BitOr, row, first);
        let low = u64_op(g, BinaryOp::BitAnd, either, mask);
        let aligned = u64_op(g, BinaryOp::Eq, low, zero);
        g.binary(BinaryOp::LogicAnd, ScalarKind::Bool, unit, aligned)
    }
}

/// The `length` leaves of the run at slot `first_slot` of the scratch array, or at the input
/// position `lpos` (moved past them; left where it is for the scratch array), read in one
/// straight run of loads from one address where they lie side by side: one branch for the
/// run, no index arithmetic per leaf.
pub fn load_run<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    run: &Run<'_, G::Leaf, G::Var>,
    (first_slot, length): (G::Leaf, u64),
) -> Vec<Vec<G::Leaf>> {
    let into: Vec<Vec<G::Var>> = (0..length).map(|_| value_vars(g, r)).collect();
    let from = g.begin_if(run.from_scratch);
    let base = g.element_address(run.src, first_slot, r.value_size);
    let ty = r.ty.clone();
    load_side_by_side(g, (base, r.value_size), &into, |g, addr| {
        let at = value_at(g.module(), &ty, addr);
        g.load_memory(&at)
    });
    g.begin_else(&from);
    let side_by_side = match run.source {
        Source::Stream(stream) => {
            let arms = g.begin_if(run.contiguous);
            let here = read_all(g, run.lpos);
            let base = input_address(g, stream, run.tpos, run.tile, &here);
            let ty = g.kernel().params[r.input].ty.clone();
            load_side_by_side(g, (base, stream.size), &into, |g, addr| {
                g.load_element(&ty, addr)
            });
            advance_by(g, run.lpos, run.tile, length);
            g.begin_else(&arms);
            Some(arms)
        }
        Source::Iterator { .. } => None,
    };
    for (vars, here) in into
        .iter()
        .zip(next_positions(g, run.lpos, run.tile, length))
    {
        let v = serial::input_leaf(g, r, run.source, run.tpos, run.tile, &here);
        write_all(g, vars, &v);
    }
    if let Some(arms) = side_by_side {
        g.end_if(arms);
    }
    g.end_if(from);
    into.iter().map(|vars| read_all(g, vars)).collect()
}

/// Values `size` bytes apart from `base` on, each read by `load`, into each of `into`.
fn load_side_by_side<'ir, G: Gpu<'ir>>(
    g: &mut G,
    (base, size): (G::Leaf, u32),
    into: &[Vec<G::Var>],
    mut load: impl FnMut(&mut G, G::Leaf) -> Vec<G::Leaf>,
) {
    for (k, vars) in into.iter().enumerate() {
        let offset = g.index_constant(k as u64 * u64::from(size));
        let addr = u64_op(g, BinaryOp::Add, base, offset);
        let v = load(g, addr);
        write_all(g, vars, &v);
    }
}

/// The address of the element of input `stream` at `lpos` in the tile of the target at
/// `tpos`.
fn input_address<'ir, G: Gpu<'ir>>(
    g: &mut G,
    stream: &StreamRef<G::Leaf>,
    tpos: &[G::Leaf],
    tile: &[G::Leaf],
    lpos: &[G::Leaf],
) -> G::Leaf {
    let pos: Vec<G::Leaf> = (0..tpos.len())
        .map(|k| mul_add(g, tpos[k], tile[k], lpos[k]))
        .collect();
    let index = g.element_index(stream.offset, &pos, &stream.pitch);
    g.element_address(stream.base, index, stream.size)
}

/// Moves a position `by` steps along the last axis, which ends a whole number of such steps
/// from where it is (a run side by side): to the next row when it reaches the row's end.
fn advance_by<'ir, G: Gpu<'ir>>(g: &mut G, pos: &[G::Var], size: &[G::Leaf], by: u64) {
    let Some(last) = pos.len().checked_sub(1) else {
        return;
    };
    let step = g.index_constant(by);
    let at = g.read_var(pos[last]);
    let moved = u64_op(g, BinaryOp::Add, at, step);
    let wrapped = u64_op(g, BinaryOp::Eq, moved, size[last]);
    if last == 0 {
        g.write_var(pos[last], moved);
        return;
    }
    // The row's end: back to 0 and one step along the axes before it.
    let zero = g.index_constant(0);
    let moved = g.select(ScalarKind::U64, wrapped, zero, moved);
    g.write_var(pos[last], moved);
    let carry = g.begin_if(wrapped);
    advance(g, &pos[..last], &size[..last]);
    g.end_if(carry);
}

/// The memory of one value of `r`'s type at `addr` in device memory (a stream element or a
/// scratch slot: aligned to its type).
pub fn value_at<L>(module: &brook_ir::Module, ty: &Type, addr: L) -> Memory<L> {
    Memory {
        addr,
        ty: ty.clone(),
        layout: leaves(module, ty),
        space: Space::Stream,
        whole: true,
        element: false,
    }
}

/// The value of `r`'s type at slot `slot` of the scratch array at `base`.
pub fn load_slot<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    base: G::Leaf,
    slot: G::Leaf,
) -> Vec<G::Leaf> {
    let addr = g.element_address(base, slot, r.value_size);
    let at = value_at(g.module(), &r.ty, addr);
    g.load_memory(&at)
}

/// Stores `value` at slot `slot` of the scratch array at `base`.
pub fn store_slot<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    (base, slot): (G::Leaf, G::Leaf),
    value: &[G::Leaf],
) {
    let addr = g.element_address(base, slot, r.value_size);
    let at = value_at(g.module(), &r.ty, addr);
    g.store_memory(&at, value);
}

/// The reduction target's stream (bound with rank `rank`).
pub fn target_ref<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    layout: &BlockLayout,
    rank: usize,
) -> StreamRef<G::Leaf> {
    let at = layout.param_offset(r.target);
    crate::lower::binding::stream_ref(g, at, rank, r.value_size)
}

/// Stores `value` in stream `s`'s element at `pos`.
pub fn store_element<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    s: &StreamRef<G::Leaf>,
    pos: &[G::Leaf],
    value: &[G::Leaf],
) {
    let index = g.element_index(s.offset, pos, &s.pitch);
    let addr = g.element_address(s.base, index, s.size);
    let at = value_at(g.module(), &r.ty, addr);
    g.store_memory(&at, value);
}

/// Writes a piece's value: into the element of the target at `tpos` in the pass that reaches
/// the targets (mode bit 1), else into slot `slot` of the scratch array `dst`.
pub fn write_piece<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    layout: &BlockLayout,
    pass: &Pass<G::Leaf>,
    (tpos, slot): (&[G::Leaf], G::Leaf),
    value: &[G::Leaf],
) {
    let to_target = mode_bit(g, pass.mode, 2);
    let last = g.begin_if(to_target);
    let target = target_ref(g, r, layout, tpos.len());
    store_element(g, r, &target, tpos, value);
    g.begin_else(&last);
    store_slot(g, r, (pass.dst, slot), value);
    g.end_if(last);
}

/// The canonical tree of a power-of-two number of values: neighbours combined level by level.
pub fn tree<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    mut level: Vec<Vec<G::Leaf>>,
) -> Result<Vec<G::Leaf>, G::Error> {
    while level.len() > 1 {
        let mut up = Vec::with_capacity(level.len() / 2);
        for pair in level.chunks(2) {
            up.push(g.combine_step(r, &pair[0], &pair[1])?);
        }
        level = up;
    }
    Ok(level.pop().expect("a tree has leaves"))
}

/// The kind of the one 4-byte scalar that the reduction's input and values both are, if they
/// are (such leaves load four at a time).
pub fn one_quad_scalar(
    module: &brook_ir::Module,
    kernel: &brook_ir::Kernel,
    r: &Reduction,
) -> Option<ScalarKind> {
    let one = |ty: &Type| match leaves(module, ty).as_slice() {
        [leaf] if leaf.kind.size() == 4 && leaf.kind != ScalarKind::Bool => Some(leaf.kind),
        _ => None,
    };
    let kind = one(&kernel.params[r.input].ty)?;
    (one(&r.ty) == Some(kind) && r.value_size == 4).then_some(kind)
}

/// Variables for one value of `r`'s type.
pub fn value_vars<'ir, G: Gpu<'ir>>(g: &mut G, r: &Reduction) -> Vec<G::Var> {
    leaves(g.module(), &r.ty)
        .iter()
        .map(|leaf| g.temporary(leaf.kind))
        .collect()
}

/// The current values of variables.
pub fn read_all<'ir, G: Gpu<'ir>>(g: &mut G, vars: &[G::Var]) -> Vec<G::Leaf> {
    vars.iter().map(|&v| g.read_var(v)).collect()
}

/// Writes `values` into variables.
pub fn write_all<'ir, G: Gpu<'ir>>(g: &mut G, vars: &[G::Var], values: &[G::Leaf]) {
    for (&var, &v) in vars.iter().zip(values) {
        g.write_var(var, v);
    }
}
