//! What the reduction entries share: the pass parameters, a worker's share of a pass, the
//! combine step (the kernel body), the binary-counter stack of aligned subtrees (the shared
//! [`crate::lower::counter`] with the PTX combine), and where a piece's value goes.

use crate::abi::{BlockLayout, Variant};
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::{Binding, Lower, StreamRef};
use crate::CompileError;
use brook_ir::Type;

pub(super) use crate::lower::counter::Slots;
pub(super) use crate::lower::counter::{slot_count, LEVELS, MAX_PIECE};

/// Leaves a serial thread loads together (a power of two).
pub(super) const BATCH: u64 = 8;

/// Where a thread's leaves come from when they are the kernel's input.
pub(super) type Source = crate::lower::binding::Source<Reg>;

/// The reduction's input and target parameters and its value.
pub(super) struct Reduction {
    pub input: usize,
    pub target: usize,
    pub ty: Type,
    pub value_size: u32,
    /// The combine step is long ([`HEAVY_COMBINE_LINES`]): the entries write it out a few
    /// times, not once per level of unrolled stacks and trees.
    pub heavy: bool,
}

/// PTX lines of one combine step above which a reduction is heavy. An unrolled serial entry
/// writes the step out about 75 times (two stacks of 23 levels, a batch tree), the warp entry
/// as often again; a step of 600 lines made 67,000 lines that the driver's JIT compiled for
/// minutes. A heavy reduction has the serial entry alone, its stack in local memory walked by
/// one loop (three copies of the step), which costs little next to the step itself.
pub(super) const HEAVY_COMBINE_LINES: usize = 160;

/// The slots of a counter stack of `slot_count(LEVELS)` levels: registers, or cells of
/// `.local` memory when the reduction is heavy.
pub(super) fn stack_slots(lower: &mut Lower<'_>, r: &Reduction) -> Slots<Reg, Reg> {
    let layout = crate::leaves::leaves(lower.module, &r.ty);
    let levels = slot_count(LEVELS);
    if !r.heavy {
        let vars = (0..levels)
            .map(|_| {
                layout
                    .iter()
                    .map(|l| lower.e.reg(Class::of(l.kind)))
                    .collect()
            })
            .collect();
        return Slots::Vars(vars);
    }
    let size = r.value_size.next_multiple_of(8).max(8);
    let name = lower.e.memory(false, size * levels as u32, 16);
    let raw = lower.e.mov_imm(Class::B64, &name);
    let base = lower
        .e
        .compute(Class::B64, |reg| format!("cvta.local.u64 {reg}, {raw}"));
    Slots::Memory {
        base,
        size,
        levels,
        ty: r.ty.clone(),
        layout,
    }
}

/// The pass parameters the entry has loaded (shared by the faster paths).
pub(super) struct Pass {
    pub src: Reg,
    pub dst: Reg,
    pub leaves_per_target: Reg,
    pub piece: Reg,
    pub pieces: Reg,
    pub mode: Reg,
    pub targets: Reg,
    pub domain: Vec<Reg>,
    pub tile: Vec<Reg>,
    pub ret: crate::ptx::emit::Label,
}

/// A worker's share of a pass.
pub(super) struct Share {
    /// The target (or group of targets) it reduces.
    pub unit: Reg,
    /// Which piece of the unit's leaves, and where that piece starts and how long it is.
    pub piece_index: Reg,
    pub lo: Reg,
    pub count: Reg,
}

/// Worker `worker` of `units * pieces` takes unit `worker % units`, piece `worker / units`;
/// workers past the end leave (to `ret`).
pub(super) fn share(
    lower: &mut Lower<'_>,
    worker: Reg,
    units: Reg,
    pieces: Reg,
    piece: Reg,
    leaves_per_target: Reg,
    ret: crate::ptx::emit::Label,
) -> Share {
    let op =
        |lower: &mut Lower<'_>, text: &dyn Fn(Reg) -> String| lower.e.compute(Class::B64, text);
    let workers = op(lower, &|reg| format!("mul.lo.u64 {reg}, {units}, {pieces}"));
    let outside = lower.e.compute(Class::Pred, |reg| {
        format!("setp.ge.u64 {reg}, {worker}, {workers}")
    });
    lower.e.bra_if(outside, ret);
    let unit = op(lower, &|reg| format!("rem.u64 {reg}, {worker}, {units}"));
    let piece_index = op(lower, &|reg| format!("div.u64 {reg}, {worker}, {units}"));
    let lo = op(lower, &|reg| {
        format!("mul.lo.u64 {reg}, {piece_index}, {piece}")
    });
    let end = op(lower, &|reg| format!("add.u64 {reg}, {lo}, {piece}"));
    let hi = op(lower, &|reg| {
        format!("min.u64 {reg}, {end}, {leaves_per_target}")
    });
    let count = op(lower, &|reg| format!("sub.u64 {reg}, {hi}, {lo}"));
    Share {
        unit,
        piece_index,
        lo,
        count,
    }
}

/// The thread's index in the whole grid (`%ctaid.x * %ntid.x + %tid.x`).
pub(super) fn global_thread(lower: &mut Lower<'_>) -> Reg {
    let ctaid = crate::ptx::driver::special(lower, "%ctaid.x");
    let ntid = crate::ptx::driver::special(lower, "%ntid.x");
    let tid = crate::ptx::driver::special(lower, "%tid.x");
    lower.e.compute(Class::B64, |reg| {
        format!("mad.lo.u64 {reg}, {ctaid}, {ntid}, {tid}")
    })
}

impl Pass {
    /// [`share`] of this pass for worker `worker`.
    pub(super) fn share(&self, lower: &mut Lower<'_>, worker: Reg) -> Share {
        share(
            lower,
            worker,
            self.targets,
            self.pieces,
            self.piece,
            self.leaves_per_target,
            self.ret,
        )
    }
}

/// Fresh registers for one value of the reduction's type.
pub(super) fn fresh_value(lower: &mut Lower<'_>, r: &Reduction) -> Vec<Reg> {
    crate::leaves::leaves(lower.module, &r.ty)
        .iter()
        .map(|l| lower.e.reg(Class::of(l.kind)))
        .collect()
}

/// Copies a value's registers.
pub(super) fn copy_into(lower: &mut Lower<'_>, to: &[Reg], from: &[Reg]) {
    for (d, s) in to.iter().zip(from) {
        lower.e.mov(*d, *s);
    }
}

/// A scan's value in registers and whether it is there (a prefix may be nothing).
#[derive(Clone)]
pub(super) struct Held {
    pub value: Vec<Reg>,
    pub has: Reg,
}

impl Held {
    pub(super) fn fresh(lower: &mut Lower<'_>, r: &Reduction) -> Held {
        Held {
            value: fresh_value(lower, r),
            has: lower.e.reg(Class::Pred),
        }
    }
}

/// `dest = held ∘ right` when `held` is there, else `right`.
pub(super) fn combine_after(
    lower: &mut Lower<'_>,
    r: &Reduction,
    dest: &[Reg],
    held: &Held,
    right: &[Reg],
) -> Result<(), CompileError> {
    let (alone, done) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(held.has, alone);
    combine(lower, r, dest, &held.value, right)?;
    lower.e.bra(done);
    lower.e.at(alone);
    copy_into(lower, dest, right);
    lower.e.at(done);
    Ok(())
}

/// Whether `bit` of the `mode` parameter is set.
pub(super) fn mode_bit(lower: &mut Lower<'_>, mode: Reg, bit: u32) -> Reg {
    let b = lower
        .e
        .compute(Class::B32, |reg| format!("and.b32 {reg}, {mode}, {bit}"));
    lower
        .e
        .compute(Class::Pred, |reg| format!("setp.ne.u32 {reg}, {b}, 0"))
}

/// Where a piece's value goes.
pub(super) struct Written<'a> {
    pub to_target: Reg,
    pub dst: Reg,
    pub tpos: &'a [Reg],
    pub piece_index: Reg,
    pub target_index: Reg,
    pub scratch: Scratch,
}

/// How a pass that is not the last lays out its scratch array.
pub(super) enum Scratch {
    /// `[target][piece]`, each target's pieces consecutive (read next by the serial or warp
    /// entry), with this many pieces per target.
    TargetMajor { pieces: Reg },
    /// `[piece][target]`, neighbouring targets side by side (read next by the column
    /// entry), with this many targets.
    PieceMajor { targets: Reg },
}

/// Stores a piece's value: into the target element when the pass is the last, else into the
/// scratch array (laid out as `w.scratch` says).
pub(super) fn write_result(
    lower: &mut Lower<'_>,
    r: &Reduction,
    layout: &BlockLayout,
    rank: usize,
    w: &Written<'_>,
    result: &[Reg],
) {
    let (to_scratch, written) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(w.to_target, to_scratch);
    {
        let target = target_ref(lower, r, layout, rank);
        let index = lower.element_index(target.offset, w.tpos, &target.pitch);
        let addr = lower.element_address(target.base, index, target.size);
        lower.store_value(&r.ty.clone(), result, addr, "global", true);
        lower.e.bra(written);
    }
    lower.e.at(to_scratch);
    {
        let (j, t) = (w.piece_index, w.target_index);
        let slot = lower.e.compute(Class::B64, |reg| match w.scratch {
            Scratch::TargetMajor { pieces } => format!("mad.lo.u64 {reg}, {t}, {pieces}, {j}"),
            Scratch::PieceMajor { targets } => format!("mad.lo.u64 {reg}, {j}, {targets}, {t}"),
        });
        let addr = lower.element_address(w.dst, slot, r.value_size);
        lower.store_value(&r.ty.clone(), result, addr, "global", true);
    }
    lower.e.at(written);
}

/// `linear` unravelled row-major in a box of `size` (fresh registers, slowest first).
pub(super) fn unravel_fresh(lower: &mut Lower<'_>, linear: Reg, size: &[Reg]) -> Vec<Reg> {
    let pos: Vec<Reg> = (0..size.len()).map(|_| lower.e.reg(Class::B64)).collect();
    let zero: Vec<Reg> = (0..size.len()).map(|_| lower.u64_imm(0)).collect();
    crate::ptx::driver::unravel(lower, &pos, linear, size, &zero);
    pos
}

/// Moves a position one step in row-major order inside a box of `size` (branch-free carry).
pub(super) fn advance(lower: &mut Lower<'_>, pos: &[Reg], size: &[Reg]) {
    let Some(last) = pos.len().checked_sub(1) else {
        return;
    };
    let mut carry: Option<Reg> = None;
    for k in (0..=last).rev() {
        let p = pos[k];
        let step = match carry {
            None => lower.u64_imm(1),
            Some(c) => lower
                .e
                .compute(Class::B64, |reg| format!("selp.u64 {reg}, 1, 0, {c}")),
        };
        lower.e.op(format!("add.u64 {p}, {p}, {step}"));
        let s = size[k];
        let wrapped = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {p}, {s}"));
        if k > 0 {
            lower.e.op(format!("@{wrapped} mov.u64 {p}, 0"));
        }
        carry = Some(wrapped);
    }
}

pub(super) fn input_source(
    lower: &mut Lower<'_>,
    r: &Reduction,
    layout: &BlockLayout,
    variant: &Variant,
) -> Source {
    crate::lower::binding::reduction_source(lower, r.input, layout, variant)
}

pub(super) fn target_ref(
    lower: &mut Lower<'_>,
    r: &Reduction,
    layout: &BlockLayout,
    rank: usize,
) -> StreamRef {
    let at = layout.param_offset(r.target);
    crate::lower::binding::stream_ref(lower, at, rank, r.value_size)
}

/// `dest = combine(left, right)`: the kernel body with the accumulator `dest` starting as
/// `left` and the input bound to `right`.
pub(super) fn combine(
    lower: &mut Lower<'_>,
    r: &Reduction,
    dest: &[Reg],
    left: &[Reg],
    right: &[Reg],
) -> Result<(), CompileError> {
    let right: Vec<Reg> = right
        .iter()
        .map(|&v| {
            let copy = lower.e.reg(v.class);
            lower.e.mov(copy, v);
            copy
        })
        .collect();
    for (d, l) in dest.iter().zip(left) {
        lower.e.mov(*d, *l);
    }
    lower.bindings[r.target] = Binding::Vars(dest.to_vec());
    lower.bindings[r.input] = Binding::Values(right);
    lower.zero_locals();
    // The body's `return`s end the combine; the entry's end is restored after it.
    let (end, entry_end) = (lower.e.label(), lower.ret);
    lower.ret = end;
    let body = lower.body();
    lower.ret = entry_end;
    body?;
    lower.e.at(end);
    Ok(())
}

/// [`combine`] as the counter stack calls it: into fresh registers.
fn combine_fresh(
    r: &Reduction,
) -> impl FnMut(&mut Lower<'_>, &[Reg], &[Reg]) -> Result<Vec<Reg>, CompileError> + '_ {
    move |lower, left, right| {
        let dest: Vec<Reg> = left.iter().map(|v| lower.e.reg(v.class)).collect();
        combine(lower, r, &dest, left, right)?;
        Ok(dest)
    }
}

/// Pushes leaf number `n` (value `value`) onto the counter stack `slots`
/// ([`crate::lower::counter::insert`]).
pub(super) fn insert(
    lower: &mut Lower<'_>,
    r: &Reduction,
    value: &[Reg],
    slots: &Slots<Reg, Reg>,
    n: Reg,
) -> Result<(), CompileError> {
    let mut combine = combine_fresh(r);
    crate::lower::counter::insert(lower, slots, 0, n, value.to_vec(), &mut combine)
}

/// Combines the stack's subtrees, lowest level first (each on the right of the older ones):
/// the canonical value of `count` leaves.
pub(super) fn finish_stack(
    lower: &mut Lower<'_>,
    r: &Reduction,
    slots: &Slots<Reg, Reg>,
    count: Reg,
) -> Result<Vec<Reg>, CompileError> {
    let result = fresh_value(lower, r);
    let has = lower.e.reg(Class::Pred);
    let no = lower.pred_const(false);
    lower.e.mov(has, no);
    finish_stack_onto(lower, r, slots, count, &result, has)?;
    Ok(result)
}

/// [`finish_stack`] onto `result`, a value right of every subtree of the stack when `has`
/// holds (else `result` is empty). Leaves the value in `result`
/// ([`crate::lower::counter::finish_onto`]).
pub(super) fn finish_stack_onto(
    lower: &mut Lower<'_>,
    r: &Reduction,
    slots: &Slots<Reg, Reg>,
    count: Reg,
    result: &[Reg],
    has: Reg,
) -> Result<(), CompileError> {
    let mut combine = combine_fresh(r);
    crate::lower::counter::finish_onto(lower, slots, count, result, has, &mut combine)
}
