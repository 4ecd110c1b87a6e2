//! The subgroup path: a subgroup (a warp) per piece whose leaves are consecutive in memory (a
//! whole-stream or row reduction of a dense stream, or a scratch array laid out
//! `[target][piece]`), for any subgroup size.
//!
//! A subgroup of `S` lanes takes its piece in chunks of `S * R` leaves. Lane `l` reduces the
//! run of `R` ([`run_length`]) leaves `R l ..` of the chunk in registers (the run's canonical tree; runs
//! of 4-byte scalars come in 16-byte loads), then `log2 S` butterfly levels combine the runs
//! of neighbouring lanes into the chunk's tree. Every chunk is an aligned power-of-two subtree
//! whatever `S` is, so the piece's value does not depend on the subgroup size. Every lane ends
//! with the same bits, so all lanes keep the same binary-counter stack of chunk subtrees (see
//! [`super::serial`]). A last, partial chunk is the same tree with its missing leaves pruned,
//! which is the canonical tree of its leaf count; it is combined right of the stack. Lane 0
//! writes the result. No combine ever runs on a missing leaf.
//!
//! Subgroups loop over the pass's workers (a target's piece each), so a launch of any number
//! of subgroups covers them.

use super::{
    mode_bit, mul_add, one_quad_scalar, read_all, serial::combine_fn, share_of, tree, u64_op,
    unravel, value_at, value_vars, write_all, write_piece, Pass, Reduction,
};
use crate::abi::BlockLayout;
use crate::gpu::{Gpu, SubgroupSize, Subgroups};
use crate::leaves::leaves;
use crate::lower::counter::{self, slot_count, LEVELS};
use crate::lower::StreamRef;
use brook_ir::{BinaryOp, Literal, ScalarKind};

/// Leaves of a lane's run: 64 bytes of 4-byte values (four 16-byte loads in flight), else 8
/// (measured on an H200: a float sum 0.274 -> 0.264 ms with runs of 16; a `float4` sum's
/// runs of 16 take too many registers).
pub fn run_length(r: &Reduction) -> u64 {
    run_leaves(r.value_size)
}

/// [`run_length`] for values of `value_size` bytes.
pub fn run_leaves(value_size: u32) -> u64 {
    if value_size <= 4 {
        16
    } else {
        8
    }
}

/// The entry's body: every worker of the pass, a subgroup each.
pub fn emit<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    layout: &BlockLayout,
    pass: &Pass<G::Leaf>,
    input: &StreamRef<G::Leaf>,
) -> Result<(), G::Error> {
    let sub = g.subgroups();
    each_worker(g, pass, &sub, |g, w| {
        piece(g, r, layout, pass, input, (&sub, w))
    })
}

/// Runs `body` for every worker of the pass (a target's piece each) this subgroup takes:
/// worker `index`, then every `count`-th after it.
pub(super) fn each_worker<'ir, G: Gpu<'ir>>(
    g: &mut G,
    pass: &Pass<G::Leaf>,
    sub: &Subgroups<G::Leaf>,
    mut body: impl FnMut(&mut G, G::Leaf) -> Result<(), G::Error>,
) -> Result<(), G::Error> {
    let workers = u64_op(g, BinaryOp::Mul, pass.targets, pass.pieces);
    let worker = g.temporary(ScalarKind::U64);
    g.write_var(worker, sub.index);
    let each = g.begin_loop();
    let w = g.read_var(worker);
    let finished = u64_op(g, BinaryOp::Ge, w, workers);
    let stop = g.begin_if(finished);
    g.jump_break(each);
    g.end_if(stop);
    body(g, w)?;
    g.begin_continuing(each);
    let w = g.read_var(worker);
    let next = u64_op(g, BinaryOp::Add, w, sub.count);
    g.write_var(worker, next);
    g.end_loop(each);
    Ok(())
}

/// The chunk loop over a subgroup's piece of `count` leaves in chunks of `chunk`: for each
/// whole chunk `c` at `offset`, `push(whole(offset), c)`; for a last, partial one of `left`
/// leaves, `partial(offset, left)`. The variable counting the whole chunks.
pub(super) fn each_chunk<'ir, G: Gpu<'ir>>(
    g: &mut G,
    (chunk, count): (G::Leaf, G::Leaf),
    mut partial: impl FnMut(&mut G, G::Leaf, G::Leaf) -> Result<(), G::Error>,
    mut whole: impl FnMut(&mut G, G::Leaf) -> Result<Vec<G::Leaf>, G::Error>,
    mut push: impl FnMut(&mut G, Vec<G::Leaf>, G::Leaf) -> Result<(), G::Error>,
) -> Result<G::Var, G::Error> {
    let chunks = g.temporary(ScalarKind::U64);
    let zero = g.index_constant(0);
    g.write_var(chunks, zero);
    let each = g.begin_loop();
    let c = g.read_var(chunks);
    let offset = u64_op(g, BinaryOp::Mul, c, chunk);
    let finished = u64_op(g, BinaryOp::Ge, offset, count);
    let stop = g.begin_if(finished);
    g.jump_break(each);
    g.end_if(stop);
    let left = u64_op(g, BinaryOp::Sub, count, offset);
    let short = u64_op(g, BinaryOp::Lt, left, chunk);
    let last = g.begin_if(short);
    partial(g, offset, left)?;
    g.jump_break(each);
    g.end_if(last);
    let value = whole(g, offset)?;
    let c = g.read_var(chunks);
    push(g, value, c)?;
    let one = g.index_constant(1);
    let next = u64_op(g, BinaryOp::Add, c, one);
    g.write_var(chunks, next);
    g.begin_continuing(each);
    g.end_loop(each);
    Ok(chunks)
}

/// Where the leaves of a subgroup's piece lie, and the subgroup.
pub(super) struct PieceLeaves<L> {
    /// Leaf `i` of the piece is at `base + i * size`.
    pub base: L,
    pub from_scratch: L,
    /// Bytes of an input leaf.
    pub input_size: u32,
    /// `base` is 16-byte aligned (runs of 4-byte scalars may come in 16-byte loads).
    pub aligned: L,
    pub lane: L,
    pub size: SubgroupSize<L>,
    /// Leaves of a lane's run ([`run_length`]).
    pub run: u64,
}

impl<L: Copy> PieceLeaves<L> {
    /// The leaves of the piece from leaf `lo` of target `t` (at `tpos`), from the scratch
    /// array when `from_scratch`, else from the input.
    pub fn new<'ir, G: Gpu<'ir, Leaf = L>>(
        g: &mut G,
        r: &Reduction,
        (pass, input): (&Pass<L>, &StreamRef<L>),
        (sub, tpos): (&Subgroups<L>, &[L]),
        (t, lo): (L, L),
        from_scratch: L,
    ) -> PieceLeaves<L> {
        let base = piece_base(g, r, pass, input, (tpos, t, lo), from_scratch);
        let fifteen = g.index_constant(15);
        let low = u64_op(g, BinaryOp::BitAnd, base, fifteen);
        let zero = g.index_constant(0);
        let aligned = u64_op(g, BinaryOp::Eq, low, zero);
        PieceLeaves {
            base,
            from_scratch,
            input_size: input.size,
            aligned,
            lane: sub.lane,
            size: sub.size,
            run: run_length(r),
        }
    }

    /// Leaves of a chunk: the subgroup's size times a run's.
    pub fn chunk<'ir, G: Gpu<'ir, Leaf = L>>(&self, g: &mut G) -> L {
        match self.size {
            SubgroupSize::Fixed(size) => g.index_constant(size * self.run),
            SubgroupSize::Runtime { size, .. } => {
                let run = g.index_constant(self.run);
                u64_op(g, BinaryOp::Mul, size, run)
            }
        }
    }
}

/// Reduces worker `w`'s piece and writes its value.
fn piece<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    layout: &BlockLayout,
    pass: &Pass<G::Leaf>,
    input: &StreamRef<G::Leaf>,
    (sub, w): (&Subgroups<G::Leaf>, G::Leaf),
) -> Result<(), G::Error> {
    let share = share_of(g, w, pass.targets, pass.piece, pass.leaves_per_target);
    let tpos = unravel(g, share.unit, &pass.domain);
    let from_scratch = mode_bit(g, pass.mode, 1);
    let at = PieceLeaves::new(
        g,
        r,
        (pass, input),
        (sub, &tpos),
        (share.unit, share.lo),
        from_scratch,
    );
    let value = piece_value(g, r, &at, share.count, LEVELS)?;
    let zero = g.index_constant(0);
    let first_lane = u64_op(g, BinaryOp::Eq, sub.lane, zero);
    let writes = g.begin_if(first_lane);
    let slot = mul_add(g, share.unit, pass.pieces, share.piece_index);
    write_piece(g, r, layout, pass, (&tpos, slot), &value);
    g.end_if(writes);
    Ok(())
}

/// The canonical value of the `count` leaves (at least one, at most `2^levels`) of a
/// subgroup's piece, in every lane.
pub(super) fn piece_value<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    at: &PieceLeaves<G::Leaf>,
    count: G::Leaf,
    levels: u32,
) -> Result<Vec<G::Leaf>, G::Error> {
    let chunk = at.chunk(g);
    let smallest = match at.size {
        SubgroupSize::Fixed(size) => size * at.run,
        SubgroupSize::Runtime { .. } => at.run,
    };
    let levels = levels - smallest.trailing_zeros();
    let slots = g.stack_slots(r, slot_count(levels));
    let tail = value_vars(g, r);
    let has_tail = g.temporary(ScalarKind::Bool);
    let no = g.literal(Literal::bool(false));
    g.write_var(has_tail, no);
    // Whole chunks go onto the stack; a partial last one into `tail`.
    let chunks = each_chunk(
        g,
        (chunk, count),
        |g, offset, left| {
            let value = partial_chunk(g, r, at, offset, left)?;
            write_all(g, &tail, &value);
            let yes = g.literal(Literal::bool(true));
            g.write_var(has_tail, yes);
            Ok(())
        },
        |g, offset| full_chunk(g, r, at, offset),
        |g, value, c| counter::insert(g, &slots, 0, c, value, &mut combine_fn(r)),
    )?;
    let c = g.read_var(chunks);
    counter::finish_onto(g, &slots, c, &tail, has_tail, &mut combine_fn(r))?;
    Ok(read_all(g, &tail))
}

/// The address of the piece's first leaf: in the scratch array (`[target][piece]`: the
/// target's row, leaf `lo`), or in the input at the target's tile start plus `lo`.
pub(super) fn piece_base<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    pass: &Pass<G::Leaf>,
    input: &StreamRef<G::Leaf>,
    (tpos, t, lo): (&[G::Leaf], G::Leaf, G::Leaf),
    from_scratch: G::Leaf,
) -> G::Leaf {
    let base = g.temporary(ScalarKind::U64);
    let arms = g.begin_if(from_scratch);
    let slot = mul_add(g, t, pass.leaves_per_target, lo);
    let at = g.element_address(pass.src, slot, r.value_size);
    g.write_var(base, at);
    g.begin_else(&arms);
    let first: Vec<G::Leaf> = tpos
        .iter()
        .zip(&pass.tile)
        .map(|(&tp, &tl)| u64_op(g, BinaryOp::Mul, tp, tl))
        .collect();
    let index = g.element_index(input.offset, &first, &input.pitch);
    let index = u64_op(g, BinaryOp::Add, index, lo);
    let at = g.element_address(input.base, index, input.size);
    g.write_var(base, at);
    g.end_if(arms);
    g.read_var(base)
}

/// Leaf `i` of the piece (from the scratch array or the input).
pub(super) fn load_leaf<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    at: &PieceLeaves<G::Leaf>,
    i: G::Leaf,
) -> Vec<G::Leaf> {
    let into = value_vars(g, r);
    let arms = g.begin_if(at.from_scratch);
    let addr = g.element_address(at.base, i, r.value_size);
    let cell = value_at(g.module(), &r.ty, addr);
    let v = g.load_memory(&cell);
    write_all(g, &into, &v);
    g.begin_else(&arms);
    let addr = g.element_address(at.base, i, at.input_size);
    let input_ty = g.kernel().params[r.input].ty.clone();
    let v = g.load_element(&input_ty, addr);
    write_all(g, &into, &v);
    g.end_if(arms);
    read_all(g, &into)
}

/// The run of leaves from leaf `first` (a multiple of the run's length) on: 16-byte loads for runs of
/// one 4-byte scalar when the piece is aligned, else one load each.
pub(super) fn load_run<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    at: &PieceLeaves<G::Leaf>,
    first: G::Leaf,
) -> Vec<Vec<G::Leaf>> {
    let into: Vec<Vec<G::Var>> = (0..at.run).map(|_| value_vars(g, r)).collect();
    let packed = one_quad_scalar(g.module(), g.kernel(), r).map(|kind| {
        let arms = g.begin_if(at.aligned);
        let addr = g.element_address(at.base, first, 4);
        for q in 0..at.run / 4 {
            let offset = g.index_constant(16 * q);
            let quad_at = u64_op(g, BinaryOp::Add, addr, offset);
            let quad = g.load_aligned_quad(kind, quad_at);
            for (k, &v) in quad.iter().enumerate() {
                write_all(g, &into[(4 * q) as usize + k], &[v]);
            }
        }
        g.begin_else(&arms);
        arms
    });
    for (k, vars) in into.iter().enumerate() {
        let offset = g.index_constant(k as u64);
        let i = u64_op(g, BinaryOp::Add, first, offset);
        let v = load_leaf(g, r, at, i);
        write_all(g, vars, &v);
    }
    if let Some(arms) = packed {
        g.end_if(arms);
    }
    into.iter().map(|vars| read_all(g, vars)).collect()
}

/// The canonical value of the whole chunk at `offset`, in every lane.
fn full_chunk<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    at: &PieceLeaves<G::Leaf>,
    offset: G::Leaf,
) -> Result<Vec<G::Leaf>, G::Error> {
    let run = g.index_constant(at.run);
    let first = mul_add(g, at.lane, run, offset);
    let loaded = load_run(g, r, at, first);
    let value = tree(g, r, loaded)?;
    Ok(across_lanes(g, r, at, value, None)?.0)
}

/// The canonical value of the first `valid` (fewer than a chunk) leaves of the chunk at
/// `offset`, in every lane: the chunk's tree with the missing leaves pruned.
fn partial_chunk<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    at: &PieceLeaves<G::Leaf>,
    offset: G::Leaf,
    valid: G::Leaf,
) -> Result<Vec<G::Leaf>, G::Error> {
    let run = g.index_constant(at.run);
    let own = u64_op(g, BinaryOp::Mul, at.lane, run);
    // Leaf `own + k` of the chunk is there when it is below `valid`.
    let present = |g: &mut G, k: u64| {
        let k = g.index_constant(k);
        let i = u64_op(g, BinaryOp::Add, own, k);
        u64_op(g, BinaryOp::Lt, i, valid)
    };
    let mut level = Vec::with_capacity(at.run as usize);
    for k in 0..at.run {
        let into = value_vars(g, r);
        let here = present(g, k);
        let load = g.begin_if(here);
        let i = u64_op(g, BinaryOp::Add, offset, own);
        let k = g.index_constant(k);
        let i = u64_op(g, BinaryOp::Add, i, k);
        let v = load_leaf(g, r, at, i);
        write_all(g, &into, &v);
        g.end_if(load);
        level.push(read_all(g, &into));
    }
    let mut width = 1;
    while level.len() > 1 {
        let mut up = Vec::with_capacity(level.len() / 2);
        for (p, pair) in level.chunks(2).enumerate() {
            let right_here = present(g, (2 * p as u64 + 1) * width);
            up.push(pruned_combine(g, r, right_here, &pair[0], &pair[1])?);
        }
        level = up;
        width *= 2;
    }
    let value = level.pop().expect("a run has leaves");
    Ok(across_lanes(g, r, at, value, Some(valid))?.0)
}

/// A chunk's value after the butterfly levels, and at each level `b` the lower block's value
/// (the `2^b` runs before this lane's block, when bit `b` of the lane is set).
pub(super) type Butterflies<L, V> = (Vec<L>, Vec<Vec<V>>);

/// The butterfly levels: at level `half`, lanes `lane` and `lane ^ half` combine their blocks,
/// the upper one pruned where it starts at or past `valid` leaves (a partial chunk). Levels
/// past a run-time subgroup size are skipped (a branch every lane takes alike).
pub(super) fn across_lanes<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    at: &PieceLeaves<G::Leaf>,
    value: Vec<G::Leaf>,
    valid: Option<G::Leaf>,
) -> Result<Butterflies<G::Leaf, G::Var>, G::Error> {
    let (levels, runtime) = match at.size {
        SubgroupSize::Fixed(size) => (size.trailing_zeros(), None),
        SubgroupSize::Runtime { size, max } => (max.trailing_zeros(), Some(size)),
    };
    let kinds: Vec<ScalarKind> = leaves(g.module(), &r.ty).iter().map(|l| l.kind).collect();
    let vars = value_vars(g, r);
    write_all(g, &vars, &value);
    let mut lowers = Vec::with_capacity(levels as usize);
    for k in 0..levels {
        let half = 1u64 << k;
        let lower_vars = value_vars(g, r);
        let level = runtime.map(|size| {
            let h = g.index_constant(half);
            let inside = u64_op(g, BinaryOp::Lt, h, size);
            g.begin_if(inside)
        });
        let value = read_all(g, &vars);
        let (lower, upper) = butterfly(g, &kinds, at.lane, half, &value);
        write_all(g, &lower_vars, &lower);
        let joined = match valid {
            None => g.combine_step(r, &lower, &upper)?,
            Some(valid) => {
                // The upper block's first lane is `(lane & !(2 half - 1)) + half`.
                let mask = g.index_constant(!(2 * half - 1));
                let block = u64_op(g, BinaryOp::BitAnd, at.lane, mask);
                let h = g.index_constant(half);
                let first = u64_op(g, BinaryOp::Add, block, h);
                let run = g.index_constant(at.run);
                let first_leaf = u64_op(g, BinaryOp::Mul, first, run);
                let upper_here = u64_op(g, BinaryOp::Lt, first_leaf, valid);
                pruned_combine(g, r, upper_here, &lower, &upper)?
            }
        };
        write_all(g, &vars, &joined);
        if let Some(level) = level {
            g.end_if(level);
        }
        lowers.push(lower_vars);
    }
    Ok((read_all(g, &vars), lowers))
}

/// Exchanges `value` with lane `lane ^ half`: the lower and the upper lane's values.
pub(super) fn butterfly<'ir, G: Gpu<'ir>>(
    g: &mut G,
    kinds: &[ScalarKind],
    lane: G::Leaf,
    half: u64,
    value: &[G::Leaf],
) -> (Vec<G::Leaf>, Vec<G::Leaf>) {
    let bit = g.index_constant(half);
    let set = u64_op(g, BinaryOp::BitAnd, lane, bit);
    let zero = g.index_constant(0);
    let upper_me = u64_op(g, BinaryOp::Ne, set, zero);
    let partner: Vec<G::Leaf> = kinds
        .iter()
        .zip(value)
        .map(|(&kind, &v)| g.shuffle_xor(kind, v, half))
        .collect();
    let pick = |g: &mut G, a: &[G::Leaf], b: &[G::Leaf]| -> Vec<G::Leaf> {
        kinds
            .iter()
            .zip(a.iter().zip(b))
            .map(|(&kind, (&x, &y))| g.select(kind, upper_me, x, y))
            .collect()
    };
    let lower = pick(g, &partner, value);
    let upper = pick(g, value, &partner);
    (lower, upper)
}

/// `present ? combine(left, right) : left` (the tree with an empty right subtree pruned).
pub(super) fn pruned_combine<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    present: G::Leaf,
    left: &[G::Leaf],
    right: &[G::Leaf],
) -> Result<Vec<G::Leaf>, G::Error> {
    let out = value_vars(g, r);
    let arms = g.begin_if(present);
    let joined = g.combine_step(r, left, right)?;
    write_all(g, &out, &joined);
    g.begin_else(&arms);
    write_all(g, &out, left);
    g.end_if(arms);
    Ok(read_all(g, &out))
}
