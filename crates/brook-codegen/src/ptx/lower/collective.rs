//! Thread-group collectives in their native PTX form: warp shuffles inside each run of 32
//! lanes (a warp), one exchange through `.shared` memory between the warps, in
//! `brook_ir::collective`'s canonical order, so the bits are those of the expansion the
//! other devices run.
//!
//! Native where the collective spans the whole group in order (`stride` 1, `lanes` the group
//! size, a multiple of 32 up to 1,024), its value is one scalar and its function is pure;
//! any other collective is expanded before lowering ([`is_native`]).
//!
//! Inside a warp, the pairs of the canonical order are combined by the lanes the order names.
//! Across warps, each warp's result (or total) goes to the collective's own `.shared` scratch
//! (never zeroed), one barrier, and then every warp combines them itself, the same tree or
//! scan over the same values (a pure function allows it): one barrier instead of two and no
//! warp waiting for another. A reduce over up to eight warps reads the warps' results in
//! every thread and combines them in registers. A group of one warp takes no barrier. Where
//! the statement is in a loop, a second barrier keeps its next run from writing the scratch
//! while a slow warp still reads it.
//!
//! Independent collectives next to each other (the blocks of a LOOM thread group:
//! [`brook_ir::collective::independent_run`]) run together: every one's warp part, one
//! barrier for all. Several reduces then share out the work across warps: warp `k` combines
//! reduce `k`'s warp results and publishes the total, and after a second barrier every
//! thread reads the totals ([`Lower::shared_totals`]).

use super::Lower;
use crate::lower::{place, ExprWalk};
use crate::ptx::emit::{Class, Reg};
use crate::CompileError;
use brook_ir::collective::RUN;
use brook_ir::{Collective, CollectiveOp, Kernel, Place, ScalarKind, Type};

/// Whether the PTX backend lowers `c` of `kernel` natively in a group of `group` threads.
pub fn is_native(c: &Collective, group: u32, kernel: &Kernel) -> bool {
    let scalar = matches!(&kernel.exprs[c.value].ty, Type::Value(v) if v.width == 1);
    let whole_group =
        c.stride == 1 && c.lanes == group && group.is_multiple_of(RUN) && group <= 1024;
    whole_group && scalar && c.combine.is_pure(kernel)
}

/// Reduces over at most this many warps combine the warps' results in registers.
const IN_THREAD_WARPS: u32 = 8;

/// Whether `block` holds a loop (at any depth).
fn has_loop(block: &brook_ir::Block) -> bool {
    block.iter().any(|s| match &s.stmt {
        brook_ir::Stmt::Loop { .. } => true,
        brook_ir::Stmt::If { accept, reject, .. } => has_loop(accept) || has_loop(reject),
        _ => false,
    })
}

/// Whether reduces run together share their totals ([`Lower::shared_totals`]): two or more
/// reduces, each over the same two to [`IN_THREAD_WARPS`] warps, no more of them than warps.
fn shares_totals(pending: &[Pending<'_>]) -> bool {
    let warps = pending.first().map_or(0, |p| p.lanes.warps);
    pending.len() >= 2
        && pending.len() as u32 <= warps
        && (2..=IN_THREAD_WARPS).contains(&warps)
        && pending.iter().all(|p| {
            p.c.op == CollectiveOp::Reduce && p.scratch.is_some() && p.lanes.warps == warps
        })
}

/// A thread's coordinates for a collective.
struct Lanes {
    /// `%tid.x % 32`.
    lane: Reg,
    /// `%tid.x / 32`.
    warp: Reg,
    /// Warps in the group.
    warps: u32,
}

/// A collective between the halves of a run: its accumulator, coordinates, and (for a
/// group of several warps) the scratch its warps' results went to before the barrier.
struct Pending<'c> {
    c: &'c Collective,
    kind: ScalarKind,
    acc: Reg,
    lanes: Lanes,
    scratch: Option<Reg>,
}

impl Lower<'_> {
    pub fn lower_collective(&mut self, c: &Collective, in_loop: bool) -> Result<(), CompileError> {
        self.lower_collectives(&[c], in_loop)
    }

    /// Independent collectives together: every one's warp part, one barrier for all of them,
    /// then every one's part across warps, and the results last.
    pub fn lower_collectives(
        &mut self,
        run: &[&Collective],
        in_loop: bool,
    ) -> Result<(), CompileError> {
        // One scratch for reduces of one function: warp k finds reduce k's at an offset.
        let area = self.one_function_reduces(run).map(|kind| {
            let bytes = RUN * kind.size().max(1);
            let name = self.e.memory(true, bytes * run.len() as u32, 16);
            (self.e.mov_imm(Class::B64, &name), bytes)
        });
        let mut pending = Vec::with_capacity(run.len());
        for (k, c) in run.iter().enumerate() {
            let scratch = area.map(|(base, bytes)| {
                let offset = bytes * k as u32;
                self.e
                    .compute(Class::B64, |r| format!("add.u64 {r}, {base}, {offset}"))
            });
            pending.push(self.warp_half(c, scratch)?);
        }
        let waits = pending.iter().any(|p| p.scratch.is_some());
        if waits {
            self.e.op("bar.sync 0");
        }
        if let Some((base, bytes)) = area {
            self.one_function_totals(&pending, base, bytes)?;
        } else if shares_totals(&pending) {
            self.shared_totals(&pending)?;
        } else {
            for p in &pending {
                self.group_half(p)?;
            }
        }
        // The same statements may run again: their scratch is free once all have read it.
        if waits && in_loop {
            self.e.op("bar.sync 0");
        }
        for p in &pending {
            place::store_place(self, &Place::local(p.c.result), &[p.acc])?;
        }
        Ok(())
    }

    /// The part before the barrier: the value, the collective inside each warp, and each
    /// warp's result (or total) in the scratch.
    fn warp_half<'c>(
        &mut self,
        c: &'c Collective,
        scratch: Option<Reg>,
    ) -> Result<Pending<'c>, CompileError> {
        let Type::Value(v) = self.kernel.exprs[c.value].ty.clone() else {
            return Err(self.unsupported(c.value, "a collective of a record".into()));
        };
        let kind = v.kind;
        let value = self.scalar(c.value)?;
        let acc = self.e.reg(Class::of(kind));
        self.e.mov(acc, value);
        let lanes = self.lanes(c)?;
        let mut pending = Pending {
            c,
            kind,
            acc,
            lanes,
            scratch: None,
        };
        if pending.lanes.warps == 1 {
            self.one_warp(c, kind, acc, &pending.lanes)?;
            return Ok(pending);
        }
        let (lane, warp) = (pending.lanes.lane, pending.lanes.warp);
        let end = match c.op {
            CollectiveOp::Reduce => {
                self.shuffle_tree(c, kind, acc, lane, RUN)?;
                0
            }
            op => {
                let from_left = op == CollectiveOp::ScanLeft;
                self.shuffle_scan(c, kind, acc, lane, RUN, from_left)?;
                if from_left {
                    RUN - 1
                } else {
                    0
                }
            }
        };
        let scratch = scratch.unwrap_or_else(|| self.scratch(kind));
        let holder = self.lane_is(lane, end);
        self.store_scratch((scratch, kind, warp), acc, holder);
        pending.scratch = Some(scratch);
        Ok(pending)
    }

    /// The kind of the reduces of `run` when they can share out the cross-warp part with one
    /// piece of code ([`Self::one_function_totals`]): two or more reduces of one function
    /// over the same two to [`IN_THREAD_WARPS`] warps, no more of them than warps.
    fn one_function_reduces(&self, run: &[&Collective]) -> Option<ScalarKind> {
        let first = run.first()?;
        let warps = first.lanes / RUN;
        let Type::Value(v) = &self.kernel.exprs[first.value].ty else {
            return None;
        };
        let alike = run.iter().all(|c| {
            c.op == CollectiveOp::Reduce
                && c.lanes == first.lanes
                && c.combine.same_function(&first.combine, self.kernel)
        });
        let fits = run.len() >= 2 && run.len() as u32 <= warps;
        (alike && fits && (2..=IN_THREAD_WARPS).contains(&warps)).then_some(v.kind)
    }

    /// [`Self::shared_totals`] for reduces of one function whose scratches lie `bytes` apart
    /// from `base`: warp `k` reads reduce `k`'s at `base + k * bytes`, so one piece of code
    /// serves every warp.
    fn one_function_totals(
        &mut self,
        pending: &[Pending<'_>],
        base: Reg,
        bytes: u32,
    ) -> Result<(), CompileError> {
        let first = &pending[0];
        let (warp, lane, kind) = (first.lanes.warp, first.lanes.lane, first.kind);
        let totals = self.totals(pending.len());
        let mine = self.below(warp, pending.len() as u32);
        let skip = self.e.label();
        self.e.bra_unless(mine, skip);
        let offset = self
            .e
            .compute(Class::B64, |r| format!("mul.wide.u32 {r}, {warp}, {bytes}"));
        let scratch = self
            .e
            .compute(Class::B64, |r| format!("add.u64 {r}, {base}, {offset}"));
        let results = self.load_all_scratch(scratch, kind, first.lanes.warps);
        let total = self.register_tree(first.c, results)?;
        let is_first = self.lane_is(lane, 0);
        self.e.bra_unless(is_first, skip);
        let slot = self
            .e
            .compute(Class::B64, |r| format!("mul.wide.u32 {r}, {warp}, 8"));
        let at = self
            .e
            .compute(Class::B64, |r| format!("add.u64 {r}, {totals}, {slot}"));
        self.store_scalar(kind, total, at, 0, "shared");
        self.e.at(skip);
        self.read_totals(pending, totals);
        Ok(())
    }

    /// `.shared` room for `count` totals (8 bytes each): its address.
    fn totals(&mut self, count: usize) -> Reg {
        let name = self.e.memory(true, 8 * count as u32, 16);
        self.e.mov_imm(Class::B64, &name)
    }

    /// After a barrier, every thread takes each reduce's total from `totals`.
    fn read_totals(&mut self, pending: &[Pending<'_>], totals: Reg) {
        self.e.op("bar.sync 0");
        for (k, p) in pending.iter().enumerate() {
            let total = self.load_scalar(p.kind, totals, 8 * k as u32, "shared");
            self.e.mov(p.acc, total);
        }
    }

    /// The part after the barrier for several reduces at once ([`shares_totals`]): warp `k`
    /// combines reduce `k`'s warp results (the same tree) and its first lane puts the total in
    /// `.shared` memory; after a second barrier every thread reads the totals. Each warp
    /// combines one reduce instead of every warp all of them.
    fn shared_totals(&mut self, pending: &[Pending<'_>]) -> Result<(), CompileError> {
        let totals = self.totals(pending.len());
        for (k, p) in pending.iter().enumerate() {
            let Some(scratch) = p.scratch else { continue };
            let (warp, lane) = (p.lanes.warp, p.lanes.lane);
            let mine = self.lane_is(warp, k as u32);
            let skip = self.e.label();
            self.e.bra_unless(mine, skip);
            let results = self.load_all_scratch(scratch, p.kind, p.lanes.warps);
            let total = self.register_tree(p.c, results)?;
            let first = self.lane_is(lane, 0);
            let stored = self.e.label();
            self.e.bra_unless(first, stored);
            self.store_scalar(p.kind, total, totals, 8 * k as u32, "shared");
            self.e.at(stored);
            self.e.at(skip);
        }
        self.read_totals(pending, totals);
        Ok(())
    }

    /// The part after the barrier: every warp combines the warps' results itself.
    fn group_half(&mut self, p: &Pending<'_>) -> Result<(), CompileError> {
        let Some(scratch) = p.scratch else {
            return Ok(());
        };
        match p.c.op {
            CollectiveOp::Reduce => self.every_warp_reduce(p, scratch),
            op => self.every_warp_scan(p, scratch, op == CollectiveOp::ScanLeft),
        }
    }

    fn lanes(&mut self, c: &Collective) -> Result<Lanes, CompileError> {
        let Some(tid) = self.in_group else {
            return Err(self.unsupported(c.value, "a collective outside a thread group".into()));
        };
        let tid = self.index_low_word(tid);
        let lane = self
            .e
            .compute(Class::B32, |r| format!("and.b32 {r}, {tid}, {}", RUN - 1));
        let warp = self
            .e
            .compute(Class::B32, |r| format!("shr.u32 {r}, {tid}, 5"));
        Ok(Lanes {
            lane,
            warp,
            warps: c.lanes / RUN,
        })
    }

    /// A group of one warp: shuffles only.
    fn one_warp(
        &mut self,
        c: &Collective,
        kind: ScalarKind,
        acc: Reg,
        l: &Lanes,
    ) -> Result<(), CompileError> {
        match c.op {
            CollectiveOp::Reduce => {
                self.shuffle_tree(c, kind, acc, l.lane, RUN)?;
                let all = self.shuffle(kind, acc, "idx", 0);
                self.e.mov(acc, all);
                Ok(())
            }
            op => self.shuffle_scan(c, kind, acc, l.lane, RUN, op == CollectiveOp::ScanLeft),
        }
    }

    /// Reduce across warps, every warp itself (the same tree, the same bits). Up to
    /// [`IN_THREAD_WARPS`] results are read by every thread and combined in registers;
    /// more are combined by a shuffle tree and taken from lane 0.
    fn every_warp_reduce(&mut self, p: &Pending<'_>, scratch: Reg) -> Result<(), CompileError> {
        let (c, kind, acc, l) = (p.c, p.kind, p.acc, &p.lanes);
        if l.warps <= IN_THREAD_WARPS {
            let results = self.load_all_scratch(scratch, kind, l.warps);
            let total = self.register_tree(c, results)?;
            self.e.mov(acc, total);
            return Ok(());
        }
        let holds = self.below(l.lane, l.warps);
        self.load_scratch((scratch, kind, l.lane), acc, holds);
        self.shuffle_tree(c, kind, acc, l.lane, l.warps)?;
        let all = self.shuffle(kind, acc, "idx", 0);
        self.e.mov(acc, all);
        Ok(())
    }

    /// Elements `0..count` of the scratch (the same address in every lane: a broadcast),
    /// four at a time where they are words.
    fn load_all_scratch(&mut self, scratch: Reg, kind: ScalarKind, count: u32) -> Vec<Reg> {
        let size = kind.size().max(1);
        let class = Class::of(kind);
        let vector = size == 4 && class != Class::Pred && count.is_multiple_of(4);
        if !vector {
            return (0..count)
                .map(|k| self.load_scalar(kind, scratch, k * size, "shared"))
                .collect();
        }
        let ty = if class == Class::F32 { "f32" } else { "b32" };
        let mut out = Vec::new();
        for quad in 0..count / 4 {
            let regs: Vec<Reg> = (0..4).map(|_| self.e.reg(class)).collect();
            let list = regs
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            self.e.op(format!(
                "ld.shared.v4.{ty} {{{list}}}, [{scratch}+{}]",
                16 * quad
            ));
            out.extend(regs);
        }
        out
    }

    /// The canonical tree over `values` in one thread: at distances 1, 2, 4, ..., element
    /// `i` (with `i % 2d == 0` and `i + d` present) becomes `f(values[i], values[i + d])`,
    /// as [`Self::shuffle_tree`] does across lanes.
    fn register_tree(&mut self, c: &Collective, mut values: Vec<Reg>) -> Result<Reg, CompileError> {
        let count = values.len();
        let mut d = 1;
        while d < count {
            for i in (0..count).step_by(2 * d) {
                if i + d < count {
                    let into = self.e.reg(values[i].class);
                    self.combine_values(c, into, values[i], values[i + d])?;
                    values[i] = into;
                }
            }
            d *= 2;
        }
        Ok(values[0])
    }

    /// Scan across warps: every warp scans the warps' totals itself and takes its
    /// neighbour's prefix from the lane of that warp's number.
    fn every_warp_scan(
        &mut self,
        p: &Pending<'_>,
        scratch: Reg,
        from_left: bool,
    ) -> Result<(), CompileError> {
        let (c, kind, acc, l) = (p.c, p.kind, p.acc, &p.lanes);
        let t = self.e.reg(Class::of(kind));
        self.e.mov(t, acc);
        let holds = self.below(l.lane, l.warps);
        self.load_scratch((scratch, kind, l.lane), t, holds);
        self.shuffle_scan(c, kind, t, l.lane, l.warps, from_left)?;
        // The neighbour warp's number (clamped into the warp; unused where there is none).
        let w = l.warp;
        let (has_neighbour, source) = if from_left {
            let later = self
                .e
                .compute(Class::Pred, |r| format!("setp.gt.u32 {r}, {w}, 0"));
            let source = self
                .e
                .compute(Class::B32, |r| format!("max.u32 {r}, {w}, 1"));
            let source = self
                .e
                .compute(Class::B32, |r| format!("sub.u32 {r}, {source}, 1"));
            (later, source)
        } else {
            let earlier = self.below(w, l.warps - 1);
            let last = l.warps - 1;
            let next = self
                .e
                .compute(Class::B32, |r| format!("add.u32 {r}, {w}, 1"));
            let source = self
                .e
                .compute(Class::B32, |r| format!("min.u32 {r}, {next}, {last}"));
            (earlier, source)
        };
        let prefix = self.shuffle_from(kind, t, source);
        if from_left {
            self.combine_into(c, has_neighbour, acc, prefix, acc)?;
        } else {
            self.combine_into(c, has_neighbour, acc, acc, prefix)?;
        }
        Ok(())
    }

    /// `acc = f(acc, acc of lane + d)` on the lanes with `lane % 2d == 0` and `lane + d <
    /// count`, at distances 1, 2, 4, ... below `count`.
    ///
    /// Where `count` is a multiple of `2d`, every aligned lane has its partner, and a lane
    /// that is not aligned holds a value no aligned lane reads again (its partner at the next
    /// distance is aligned to `2d`): a combining function without loops is then applied in
    /// every lane, with no condition.
    fn shuffle_tree(
        &mut self,
        c: &Collective,
        kind: ScalarKind,
        acc: Reg,
        lane: Reg,
        count: u32,
    ) -> Result<(), CompileError> {
        let loop_free = !has_loop(&c.combine.body);
        let mut d = 1;
        while d < count {
            let other = self.shuffle(kind, acc, "down", d);
            let paired = count.is_multiple_of(2 * d);
            if paired && loop_free {
                let combined = self.e.reg(acc.class);
                self.combine_values(c, combined, acc, other)?;
                self.e.mov(acc, combined);
                d *= 2;
                continue;
            }
            let mask = 2 * d - 1;
            let low = self
                .e
                .compute(Class::B32, |r| format!("and.b32 {r}, {lane}, {mask}"));
            let mut flag = self.lane_is(low, 0);
            if !paired {
                let exists = self.below_plus(lane, d, count);
                flag = self.both(flag, exists);
            }
            self.combine_into(c, flag, acc, acc, other)?;
            d *= 2;
        }
        Ok(())
    }

    /// Hillis–Steele over lanes `0..count` of a warp: at distance `d`, from the left
    /// `acc = f(acc of lane - d, acc)` when `d <= lane < count`, from the right
    /// `acc = f(acc, acc of lane + d)` when `lane + d < count`.
    fn shuffle_scan(
        &mut self,
        c: &Collective,
        kind: ScalarKind,
        acc: Reg,
        lane: Reg,
        count: u32,
        from_left: bool,
    ) -> Result<(), CompileError> {
        let mut d = 1;
        while d < count {
            if from_left {
                let other = self.shuffle(kind, acc, "up", d);
                let reaches = self
                    .e
                    .compute(Class::Pred, |r| format!("setp.ge.u32 {r}, {lane}, {d}"));
                let inside = self.below(lane, count);
                let flag = self.both(reaches, inside);
                self.combine_into(c, flag, acc, other, acc)?;
            } else {
                let other = self.shuffle(kind, acc, "down", d);
                let flag = self.below_plus(lane, d, count);
                self.combine_into(c, flag, acc, acc, other)?;
            }
            d *= 2;
        }
        Ok(())
    }

    /// `if flag { into = f(left, right) }`, through the combiner's locals and body.
    fn combine_into(
        &mut self,
        c: &Collective,
        flag: Reg,
        into: Reg,
        left: Reg,
        right: Reg,
    ) -> Result<(), CompileError> {
        let skip = self.e.label();
        self.e.bra_unless(flag, skip);
        self.combine_values(c, into, left, right)?;
        self.e.at(skip);
        Ok(())
    }

    /// `into = f(left, right)`, through the combiner's locals and body.
    fn combine_values(
        &mut self,
        c: &Collective,
        into: Reg,
        left: Reg,
        right: Reg,
    ) -> Result<(), CompileError> {
        let f = &c.combine;
        place::store_place(self, &Place::local(f.left), &[left])?;
        place::store_place(self, &Place::local(f.right), &[right])?;
        crate::lower::stmt::block(self, &f.body, None)?;
        let out = place::load_place(self, &Place::local(f.out))?;
        self.e.mov(into, out[0]);
        self.forget();
        Ok(())
    }

    /// `shfl.sync.<mode>` of one scalar over the whole warp (`down`/`up` by `b` lanes, `idx`
    /// from lane `b`); 64-bit values in two halves, predicates as words.
    fn shuffle(&mut self, kind: ScalarKind, v: Reg, mode: &str, b: u32) -> Reg {
        self.shuffle_by(kind, v, mode, &b.to_string())
    }

    /// `shfl.sync.idx` from the lane in register `source`.
    fn shuffle_from(&mut self, kind: ScalarKind, v: Reg, source: Reg) -> Reg {
        self.shuffle_by(kind, v, "idx", &source.to_string())
    }

    fn shuffle_by(&mut self, kind: ScalarKind, v: Reg, mode: &str, b: &str) -> Reg {
        let clamp = if mode == "up" { 0 } else { RUN - 1 };
        let word = |e: &mut crate::ptx::emit::Emitter, w: Reg| {
            e.compute(Class::B32, |r| {
                format!("shfl.sync.{mode}.b32 {r}, {w}, {b}, {clamp}, 0xffffffff")
            })
        };
        match v.class {
            Class::B32 => word(&mut self.e, v),
            Class::F32 => {
                let w = self.e.compute(Class::B32, |r| format!("mov.b32 {r}, {v}"));
                let moved = word(&mut self.e, w);
                self.e
                    .compute(Class::F32, |r| format!("mov.b32 {r}, {moved}"))
            }
            Class::Pred => {
                let w = self
                    .e
                    .compute(Class::B32, |r| format!("selp.u32 {r}, 1, 0, {v}"));
                let moved = word(&mut self.e, w);
                self.e
                    .compute(Class::Pred, |r| format!("setp.ne.u32 {r}, {moved}, 0"))
            }
            Class::B64 | Class::F64 => {
                let (lo, hi) = (self.e.reg(Class::B32), self.e.reg(Class::B32));
                self.e.op(format!("mov.b64 {{{lo}, {hi}}}, {v}"));
                let (lo, hi) = (word(&mut self.e, lo), word(&mut self.e, hi));
                let class = v.class;
                debug_assert!(kind.size() == 8);
                self.e
                    .compute(class, |r| format!("mov.b64 {r}, {{{lo}, {hi}}}"))
            }
        }
    }

    /// The collective's scratch: 32 elements of `kind` in `.shared` memory (its address).
    fn scratch(&mut self, kind: ScalarKind) -> Reg {
        let size = kind.size().max(1);
        let name = self.e.memory(true, RUN * size, 16);
        self.e.mov_imm(Class::B64, &name)
    }

    /// The address of element `index` of the scratch.
    fn scratch_at(&mut self, scratch: Reg, kind: ScalarKind, index: Reg) -> Reg {
        let size = kind.size().max(1);
        let wide = self
            .e
            .compute(Class::B64, |r| format!("mul.wide.u32 {r}, {index}, {size}"));
        self.e
            .compute(Class::B64, |r| format!("add.u64 {r}, {scratch}, {wide}"))
    }

    /// Stores `value` at element `index` of the scratch when `flag` holds.
    fn store_scratch(&mut self, at: (Reg, ScalarKind, Reg), value: Reg, flag: Reg) {
        let (scratch, kind, index) = at;
        let addr = self.scratch_at(scratch, kind, index);
        let skip = self.e.label();
        self.e.bra_unless(flag, skip);
        self.store_scalar(kind, value, addr, 0, "shared");
        self.e.at(skip);
    }

    /// Loads element `index` of the scratch into `into` when `flag` holds.
    fn load_scratch(&mut self, at: (Reg, ScalarKind, Reg), into: Reg, flag: Reg) {
        let (scratch, kind, index) = at;
        let addr = self.scratch_at(scratch, kind, index);
        let skip = self.e.label();
        self.e.bra_unless(flag, skip);
        let value = self.load_scalar(kind, addr, 0, "shared");
        self.e.mov(into, value);
        self.e.at(skip);
    }

    fn lane_is(&mut self, r: Reg, value: u32) -> Reg {
        self.e
            .compute(Class::Pred, |p| format!("setp.eq.u32 {p}, {r}, {value}"))
    }

    fn below(&mut self, r: Reg, bound: u32) -> Reg {
        self.e
            .compute(Class::Pred, |p| format!("setp.lt.u32 {p}, {r}, {bound}"))
    }

    /// `r + d < bound`.
    fn below_plus(&mut self, r: Reg, d: u32, bound: u32) -> Reg {
        self.below(r, bound.saturating_sub(d))
    }

    fn both(&mut self, a: Reg, b: Reg) -> Reg {
        self.e
            .compute(Class::Pred, |p| format!("and.pred {p}, {a}, {b}"))
    }
}
