//! Reductions in the canonical order of `brook_ir::reduce_order`, in passes.
//!
//! One entry does every pass. A thread reduces one aligned piece of one target's leaves,
//! serially, with a binary-counter stack of aligned subtrees (level `k` holds a subtree of
//! `2^k` leaves), which gives exactly the canonical tree of the piece. Threads are numbered
//! target-fastest, so neighbouring threads read neighbouring targets (columns of a matrix lie
//! side by side). A pass either writes each piece's value to a dense scratch array
//! (`[target][piece]`: each target's pieces consecutive, so later passes can use the warp
//! entry; `[piece][target]` after a column pass, read by the column entry again) or, when a
//! target has one piece, the target element; the next pass reduces the scratch array's
//! pieces the same way. Because every piece is an aligned
//! power-of-two subtree, combining pieces canonically gives the canonical result.
//!
//! Besides the parameter block, the entry takes `src` and `dst` (scratch addresses),
//! `leaves` (leaves per target in this pass), `piece` (leaves per thread, a power of two),
//! `pieces` (pieces per target) and `mode` (bit 0: leaves come from `src`; bit 1: results go
//! to the targets). Two more entries with the same parameters serve layouts that allow
//! more: [`WARP_ENTRY`] ([`super::reduce_warp`]: a warp per piece of consecutive leaves) and
//! [`COLUMNS_ENTRY`] ([`super::reduce_columns`]: a thread per four neighbouring targets).

use super::{entry_text, special, ENTRY};
use crate::abi::{header, BlockLayout, Variant};
use crate::leaves::leaves;
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::{bind_params, Binding, Lower, StreamRef};
use crate::ptx::CompileError;
use brook_ir::{Kernel, Module, ParamRole, Type};

/// Levels of the counter stack: a thread reduces at most `2^LEVELS` leaves.
pub const LEVELS: u32 = 22;
/// Leaves a serial thread loads together (a power of two).
pub(super) const BATCH: u64 = 8;
/// The most leaves one thread reduces in a pass.
pub const MAX_PIECE: u64 = 1 << LEVELS;

/// Where a thread's leaves come from when they are the kernel's input.
pub(super) type Source = crate::lower::binding::Source<Reg>;

pub(super) struct Reduction {
    pub input: usize,
    pub target: usize,
    pub ty: Type,
    pub value_size: u32,
}

/// Which entries a reduction module has besides the serial one (the runtime picks one per
/// pass; separate entries keep each path's register count its own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Paths {
    /// [`WARP_ENTRY`] ([`super::reduce_warp`]): a warp per piece of consecutive leaves.
    pub cooperative: bool,
    /// [`COLUMNS_ENTRY`] ([`super::reduce_columns`]): a thread per four neighbouring targets.
    pub columns: bool,
}

/// The entry of the cooperative path.
pub const WARP_ENTRY: &str = "brook_warp";
/// The entry of the column path.
pub const COLUMNS_ENTRY: &str = "brook_columns";

/// The paths, one entry each.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Path {
    Serial,
    Warp,
    Columns,
}

pub fn build(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    layout: &BlockLayout,
) -> Result<(String, Vec<&'static str>, u32, Paths), CompileError> {
    let input = kernel
        .params
        .iter()
        .position(|p| matches!(p.role, ParamRole::Input | ParamRole::Iterator));
    let target = kernel
        .params
        .iter()
        .position(|p| p.role == ParamRole::Reduce);
    let (Some(input), Some(target)) = (input, target) else {
        return Err(CompileError::Unsupported {
            kernel: kernel.name.clone(),
            span: kernel.span,
            construct: "a reduction without one input and one reduction target".into(),
        });
    };
    let ty = kernel.params[target].ty.clone();
    let r = Reduction {
        input,
        target,
        value_size: module.layout(&ty).size,
        ty,
    };
    let stream_input = !variant
        .inputs
        .get(input)
        .copied()
        .flatten()
        .is_some_and(|m| m.is_iterator());
    let paths = Paths {
        cooperative: stream_input,
        columns: stream_input && super::reduce_columns::applies(module, kernel, &r),
    };
    let mut chosen = vec![(Path::Serial, ENTRY)];
    if paths.cooperative {
        chosen.push((Path::Warp, WARP_ENTRY));
    }
    if paths.columns {
        chosen.push((Path::Columns, COLUMNS_ENTRY));
    }
    let mut text = String::new();
    let mut helpers: Vec<&'static str> = Vec::new();
    for (path, name) in chosen {
        let mut lower = Lower::new(module, kernel);
        lower.place_locals(false);
        bind_params(&mut lower, layout, variant);
        emit(&mut lower, &r, variant, layout, path)?;
        for h in std::mem::take(&mut lower.helpers) {
            if !helpers.contains(&h) {
                helpers.push(h);
            }
        }
        let extra = ",\n\t.param .u64 src, .param .u64 dst, .param .u64 leaves, .param .u64 piece, .param .u64 pieces, .param .u32 mode";
        let entry = entry_text(name, layout.size(), lower.e.finish(), "");
        // The extra parameters follow the block in the signature.
        text.push_str(&entry.replacen(")\n{", &format!("{extra})\n{{"), 1));
        text.push('\n');
    }
    Ok((text, helpers, r.value_size, paths))
}

fn extra_u64(lower: &mut Lower<'_>, name: &str) -> Reg {
    lower
        .e
        .compute(Class::B64, |r| format!("ld.param.u64 {r}, [{name}]"))
}

fn emit(
    lower: &mut Lower<'_>,
    r: &Reduction,
    variant: &Variant,
    layout: &BlockLayout,
    path: Path,
) -> Result<(), CompileError> {
    let rank = variant.rank;
    let domain = lower.param_axes(header::DOMAIN, rank);
    let tile = lower.param_axes(header::TILE, rank);
    let src = extra_u64(lower, "src");
    let dst = extra_u64(lower, "dst");
    let leaves_per_target = extra_u64(lower, "leaves");
    let piece = extra_u64(lower, "piece");
    let pieces = extra_u64(lower, "pieces");
    let mode = lower
        .e
        .compute(Class::B32, |reg| format!("ld.param.u32 {reg}, [mode]"));
    let mut targets = lower.u64_imm(1);
    for &d in &domain {
        targets = lower.e.compute(Class::B64, |reg| {
            format!("mul.lo.u64 {reg}, {targets}, {d}")
        });
    }
    let ret = lower.ret;
    let source = input_source(lower, r, layout, variant);
    if let (Source::Stream(stream), Path::Warp | Path::Columns) = (&source, path) {
        let pass = Pass {
            src,
            dst,
            leaves_per_target,
            piece,
            pieces,
            mode,
            targets,
            domain: domain.clone(),
            tile: tile.clone(),
            ret,
        };
        if path == Path::Warp {
            super::reduce_warp::emit(lower, r, layout, &pass, stream)?;
        } else {
            super::reduce_columns::emit(lower, r, layout, &pass, stream)?;
        }
        lower.e.at(ret);
        lower.e.op("ret");
        return Ok(());
    }
    let ctaid = special(lower, "%ctaid.x");
    let ntid = special(lower, "%ntid.x");
    let tid = special(lower, "%tid.x");
    let g = lower.e.compute(Class::B64, |reg| {
        format!("mad.lo.u64 {reg}, {ctaid}, {ntid}, {tid}")
    });
    let Share {
        unit: t,
        piece_index: j,
        lo,
        count,
    } = share(lower, g, targets, pieces, piece, leaves_per_target, ret);
    // The target's position and, for input leaves, the tile's first position.
    let tpos = unravel_fresh(lower, t, &domain);
    let from_scratch = {
        let bit = lower
            .e
            .compute(Class::B32, |reg| format!("and.b32 {reg}, {mode}, 1"));
        lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u32 {reg}, {bit}, 0"))
    };
    let to_target = {
        let bit = lower
            .e
            .compute(Class::B32, |reg| format!("and.b32 {reg}, {mode}, 2"));
        lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u32 {reg}, {bit}, 0"))
    };
    let leaf_leaves = leaves(lower.module, &r.ty);
    let value: Vec<Reg> = leaf_leaves
        .iter()
        .map(|l| lower.e.reg(Class::of(l.kind)))
        .collect();
    let slots: Vec<Vec<Reg>> = (0..LEVELS)
        .map(|_| {
            leaf_leaves
                .iter()
                .map(|l| lower.e.reg(Class::of(l.kind)))
                .collect()
        })
        .collect();
    // Position of the current leaf inside the tile (input leaves only).
    let lpos: Vec<Reg> = (0..rank).map(|_| lower.e.reg(Class::B64)).collect();
    let first = unravel_fresh(lower, lo, &tile);
    for (p, f) in lpos.iter().zip(&first) {
        lower.e.mov(*p, *f);
    }
    let n = lower.e.mov_imm(Class::B64, 0);
    let leaf_source = SerialLeaves {
        from_scratch,
        src,
        lo,
        leaves: leaves_per_target,
        t,
        tpos: &tpos,
        tile: &tile,
        lpos: &lpos,
        source: &source,
    };
    // Batches of BATCH leaves while they last: their loads are independent (in flight
    // together), and each batch is an aligned subtree inserted above the levels it fills.
    let (batch_head, single_head, done) = (lower.e.label(), lower.e.label(), lower.e.label());
    lower.e.at(batch_head);
    let next = lower
        .e
        .compute(Class::B64, |reg| format!("add.u64 {reg}, {n}, {BATCH}"));
    let short = lower.e.compute(Class::Pred, |reg| {
        format!("setp.gt.u64 {reg}, {next}, {count}")
    });
    lower.e.bra_if(short, single_head);
    let mut level: Vec<Vec<Reg>> = Vec::with_capacity(BATCH as usize);
    for k in 0..BATCH {
        let at = lower
            .e
            .compute(Class::B64, |reg| format!("add.u64 {reg}, {n}, {k}"));
        let v: Vec<Reg> = value.iter().map(|v| lower.e.reg(v.class)).collect();
        load_serial_leaf(lower, r, &leaf_source, at, &v);
        level.push(v);
    }
    while level.len() > 1 {
        let mut up = Vec::with_capacity(level.len() / 2);
        for pair in level.chunks(2) {
            let out: Vec<Reg> = pair[0].iter().map(|v| lower.e.reg(v.class)).collect();
            combine(lower, r, &out, &pair[0], &pair[1])?;
            up.push(out);
        }
        level = up;
    }
    let batches = lower.e.compute(Class::B64, |reg| {
        format!("shr.u64 {reg}, {n}, {}", BATCH.trailing_zeros())
    });
    insert(
        lower,
        r,
        &level[0],
        &slots[BATCH.trailing_zeros() as usize..],
        batches,
    )?;
    lower.e.mov(n, next);
    lower.e.bra(batch_head);
    // The rest, one leaf at a time.
    lower.e.at(single_head);
    let finished = lower.e.compute(Class::Pred, |reg| {
        format!("setp.ge.u64 {reg}, {n}, {count}")
    });
    lower.e.bra_if(finished, done);
    load_serial_leaf(lower, r, &leaf_source, n, &value);
    insert(lower, r, &value, &slots, n)?;
    lower.e.op(format!("add.u64 {n}, {n}, 1"));
    lower.e.bra(single_head);
    lower.e.at(done);
    let result = finish_stack(lower, r, &slots, count)?;
    let written = Written {
        to_target,
        dst,
        tpos: &tpos,
        piece_index: j,
        target_index: t,
        scratch: Scratch::TargetMajor { pieces },
    };
    write_result(lower, r, layout, rank, &written, &result);
    lower.e.at(ret);
    lower.e.op("ret");
    Ok(())
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

/// Where a serial thread's leaves come from.
struct SerialLeaves<'a> {
    from_scratch: Reg,
    src: Reg,
    lo: Reg,
    /// Leaves per target in this pass (the scratch array's row length).
    leaves: Reg,
    t: Reg,
    tpos: &'a [Reg],
    tile: &'a [Reg],
    /// The position of the next input leaf in the tile (advanced by each load).
    lpos: &'a [Reg],
    source: &'a Source,
}

/// Loads leaf `lo + n` into `into`: from the scratch array, or the next input leaf.
fn load_serial_leaf(
    lower: &mut Lower<'_>,
    r: &Reduction,
    l: &SerialLeaves<'_>,
    n: Reg,
    into: &[Reg],
) {
    let (from_input, loaded) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(l.from_scratch, from_input);
    {
        let (lo, leaves, t) = (l.lo, l.leaves, l.t);
        let leaf = lower
            .e
            .compute(Class::B64, |reg| format!("add.u64 {reg}, {lo}, {n}"));
        let slot = lower.e.compute(Class::B64, |reg| {
            format!("mad.lo.u64 {reg}, {t}, {leaves}, {leaf}")
        });
        let addr = lower.element_address(l.src, slot, r.value_size);
        let v = lower.load_value(&r.ty, addr, "global", true);
        for (d, s) in into.iter().zip(&v) {
            lower.e.mov(*d, *s);
        }
        lower.e.bra(loaded);
    }
    lower.e.at(from_input);
    {
        let pos: Vec<Reg> = (0..l.tpos.len())
            .map(|k| {
                let (tp, tl, lp) = (l.tpos[k], l.tile[k], l.lpos[k]);
                lower.e.compute(Class::B64, |reg| {
                    format!("mad.lo.u64 {reg}, {tp}, {tl}, {lp}")
                })
            })
            .collect();
        let v = match l.source {
            Source::Stream(s) => {
                let index = lower.element_index(s.offset, &pos, &s.pitch);
                let addr = lower.element_address(s.base, index, s.size);
                let input_ty = lower.kernel.params[r.input].ty.clone();
                lower.load_value(&input_ty, addr, "global", true)
            }
            Source::Iterator { start, end, shape } => {
                crate::lower::launch::iterator_value(lower, start, end, shape, &pos)
            }
        };
        for (d, s) in into.iter().zip(&v) {
            lower.e.mov(*d, *s);
        }
        advance(lower, l.lpos, l.tile);
    }
    lower.e.at(loaded);
}

/// `linear` unravelled row-major in a box of `size` (fresh registers, slowest first).
pub(super) fn unravel_fresh(lower: &mut Lower<'_>, linear: Reg, size: &[Reg]) -> Vec<Reg> {
    let pos: Vec<Reg> = (0..size.len()).map(|_| lower.e.reg(Class::B64)).collect();
    let zero: Vec<Reg> = (0..size.len()).map(|_| lower.u64_imm(0)).collect();
    super::unravel(lower, &pos, linear, size, &zero);
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
    let end = lower.e.label();
    lower.ret = end;
    lower.body()?;
    lower.e.at(end);
    Ok(())
}

/// Pushes leaf number `n` (value `value`) onto the counter stack: while the levels below are
/// full, the new subtree is combined with them (the older subtree on the left).
pub(super) fn insert(
    lower: &mut Lower<'_>,
    r: &Reduction,
    value: &[Reg],
    slots: &[Vec<Reg>],
    n: Reg,
) -> Result<(), CompileError> {
    let stored = lower.e.label();
    for (level, slot) in slots.iter().enumerate() {
        let (place, next) = (lower.e.label(), lower.e.label());
        let bit = lower.e.compute(Class::B64, |reg| {
            format!("and.b64 {reg}, {n}, {}", 1u64 << level)
        });
        let empty = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {bit}, 0"));
        lower.e.bra_if(empty, place);
        combine(lower, r, value, slot, value)?;
        lower.e.bra(next);
        lower.e.at(place);
        for (d, s) in slot.iter().zip(value) {
            lower.e.mov(*d, *s);
        }
        lower.e.bra(stored);
        lower.e.at(next);
    }
    lower.e.at(stored);
    Ok(())
}

/// Combines the stack's subtrees, lowest level first (each on the right of the older ones):
/// the canonical value of `count` leaves.
fn finish_stack(
    lower: &mut Lower<'_>,
    r: &Reduction,
    slots: &[Vec<Reg>],
    count: Reg,
) -> Result<Vec<Reg>, CompileError> {
    let result: Vec<Reg> = slots[0].iter().map(|s| lower.e.reg(s.class)).collect();
    let has = lower.e.reg(Class::Pred);
    let no = lower.pred_const(false);
    lower.e.mov(has, no);
    finish_stack_onto(lower, r, slots, count, &result, has)?;
    Ok(result)
}

/// [`finish_stack`] onto `result`, a value right of every subtree of the stack when `has`
/// holds (else `result` is empty). Leaves the value in `result`.
pub(super) fn finish_stack_onto(
    lower: &mut Lower<'_>,
    r: &Reduction,
    slots: &[Vec<Reg>],
    count: Reg,
    result: &[Reg],
    has: Reg,
) -> Result<(), CompileError> {
    for (level, slot) in slots.iter().enumerate() {
        let (skip, first) = (lower.e.label(), lower.e.label());
        let bit = lower.e.compute(Class::B64, |reg| {
            format!("and.b64 {reg}, {count}, {}", 1u64 << level)
        });
        let empty = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {bit}, 0"));
        lower.e.bra_if(empty, skip);
        lower.e.bra_unless(has, first);
        combine(lower, r, result, slot, result)?;
        lower.e.bra(skip);
        lower.e.at(first);
        for (d, s) in result.iter().zip(slot) {
            lower.e.mov(*d, *s);
        }
        let yes = lower.pred_const(true);
        lower.e.mov(has, yes);
        lower.e.at(skip);
    }
    Ok(())
}
