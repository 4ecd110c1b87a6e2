//! Thread-group collectives: a reduce or an inclusive scan across the lanes of a thread group,
//! the one order in which every backend combines them, and their expansion into stores and
//! barriers for a backend without a native form.
//!
//! # Lanes
//! A [`Collective`] combines the values of `lanes` threads whose positions in the group
//! (`instanceInGroup().x`) are `stride` apart: the thread at position `p` is lane
//! `(p / stride) % lanes` of its segment. A 1-D LOOM block is one segment (`stride` 1, `lanes`
//! the block size); a 2-D block `[X, Y]` numbers its threads Y fastest, so a collective along
//! X has `lanes` X and `stride` Y, one segment for each Y.
//!
//! # The canonical order
//! Lanes are taken in runs of [`RUN`] consecutive lanes (the last run may be shorter).
//!
//! - **Reduce**: [`crate::reduce_order`]'s aligned tree over the lanes. Each run is reduced as
//!   its own subtree (distances 1, 2, 4, ... inside the run), then the runs' results with the
//!   same tree. The lane at the start of a pair computes it; across runs, lane `k` combines
//!   for run `k`. Every lane receives the result.
//! - **Scan from the left** (`f /: a`): inside each run, Hillis and Steele: at distances 1, 2,
//!   4, ..., lane `l` takes `f(x[l - d], x[l])` when `l - d` is in its run. The runs' totals
//!   (their last lanes) are scanned the same way by lanes `0..runs`, and a lane of run
//!   `r > 0` then takes `f(total[r - 1], x[l])`.
//! - **Scan from the right** (`f :/ a`) mirrors it: `f(x[l], x[l + d])` inside a run, a run's
//!   total at its first lane, and `f(x[l], total[r + 1])`.
//!
//! [`scan_canonical`] computes the scans on plain values. A run is a GPU warp: a backend with
//! warp shuffles combines inside a run without barriers and needs one exchange through shared
//! memory between runs, and still gives the same bits as [`expand`]'s stores and barriers.
//! The combining function is evaluated only for the pairs above, by the lanes named above,
//! so even a function with effects behaves the same everywhere. A backend may evaluate a
//! [pure](Combiner::is_pure) function more often (in every warp rather than one, to save a
//! barrier): its values are the same and nothing else can tell.

use crate::arena::{Handle, SourceSpan};
use crate::builder::KernelBuilder;
use crate::expr::{Access, BinaryOp, Expr, ExprKind, Place, PlaceRoot};
use crate::module::{Kernel, Local, Type};
use crate::stmt::{Block, Stmt};
use crate::types::{ScalarKind, ValueType};

/// Lanes per run of the canonical order (a GPU warp).
pub const RUN: u32 = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CollectiveOp {
    Reduce,
    /// Inclusive, from the first lane.
    ScanLeft,
    /// Inclusive, from the last lane.
    ScanRight,
}

impl CollectiveOp {
    pub fn name(self) -> &'static str {
        match self {
            CollectiveOp::Reduce => "reduce",
            CollectiveOp::ScanLeft => "scan_left",
            CollectiveOp::ScanRight => "scan_right",
        }
    }
}

/// The combining function: `body` stores `f(left, right)` into `out`. It holds no barrier,
/// collective or `return`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Combiner {
    pub left: Handle<Local>,
    pub right: Handle<Local>,
    pub body: Block,
    pub out: Handle<Local>,
}

impl Combiner {
    /// Whether the body stores only to private locals (so evaluating it has no effect beyond
    /// its result).
    pub fn is_pure(&self, kernel: &Kernel) -> bool {
        stores_only_private(&self.body, kernel)
    }

    /// Whether `other` computes the same function (the same body up to the names of the
    /// locals each writes: a function inlined twice; [`crate::same`]).
    pub fn same_function(&self, other: &Combiner, kernel: &Kernel) -> bool {
        let mut own = vec![self.left, self.right, self.out];
        own.extend([other.left, other.right, other.out]);
        block_writes(&self.body, &mut own);
        block_writes(&other.body, &mut own);
        let mut renaming = crate::same::Renaming::new(kernel, own);
        renaming.local(self.left, other.left)
            && renaming.local(self.right, other.right)
            && renaming.local(self.out, other.out)
            && renaming.block(&self.body, &other.body)
    }
}

/// Whether expression `h` of `kernel` reads any of `locals` (directly or through the
/// expressions it is computed from).
pub fn reads_any_local(kernel: &Kernel, h: Handle<Expr>, locals: &[Handle<Local>]) -> bool {
    let expr = &kernel.exprs[h];
    if let ExprKind::Load(place) = &expr.kind {
        if matches!(place.root, PlaceRoot::Local(l) if locals.contains(&l)) {
            return true;
        }
    }
    expr.kind
        .operands()
        .into_iter()
        .any(|o| reads_any_local(kernel, o, locals))
}

/// Whether any expression of `block` (values, conditions, indices) reads any of `locals`.
fn block_reads_any_local(kernel: &Kernel, block: &Block, locals: &[Handle<Local>]) -> bool {
    let reads = |h: &Handle<Expr>| reads_any_local(kernel, *h, locals);
    block.iter().any(|s| match &s.stmt {
        Stmt::Store { place, value } => reads(value) || place.operands().iter().any(reads),
        Stmt::If {
            cond,
            accept,
            reject,
        } => {
            reads(cond)
                || block_reads_any_local(kernel, accept, locals)
                || block_reads_any_local(kernel, reject, locals)
        }
        Stmt::Loop { body, continuing } => {
            block_reads_any_local(kernel, body, locals)
                || block_reads_any_local(kernel, continuing, locals)
        }
        Stmt::Collective(c) => {
            reads(&c.value) || block_reads_any_local(kernel, &c.combine.body, locals)
        }
        _ => false,
    })
}

/// The locals a block stores to (directly or in nested blocks, a collective's result
/// included), added to `out`.
pub fn block_writes(block: &Block, out: &mut Vec<Handle<Local>>) {
    for s in block.iter() {
        match &s.stmt {
            Stmt::Store { place, .. } => {
                if let PlaceRoot::Local(l) = place.root {
                    out.push(l);
                }
            }
            Stmt::If { accept, reject, .. } => {
                block_writes(accept, out);
                block_writes(reject, out);
            }
            Stmt::Loop { body, continuing } => {
                block_writes(body, out);
                block_writes(continuing, out);
            }
            Stmt::Collective(c) => out.push(c.result),
            _ => {}
        }
    }
}

/// The longest run of collectives at the start of `stmts` that may run together: none reads
/// (in its value or its combining body) a local an earlier one writes (its result, its
/// combining function's locals). A backend can then share their barriers, evaluating every
/// value first and writing every result last.
pub fn independent_run<'k>(kernel: &Kernel, stmts: &'k [crate::Statement]) -> Vec<&'k Collective> {
    let mut run: Vec<&Collective> = Vec::new();
    let mut written: Vec<Handle<Local>> = Vec::new();
    for s in stmts {
        let Stmt::Collective(c) = &s.stmt else { break };
        let reads = reads_any_local(kernel, c.value, &written)
            || block_reads_any_local(kernel, &c.combine.body, &written);
        if reads {
            break;
        }
        written.extend([c.result, c.combine.left, c.combine.right, c.combine.out]);
        block_writes(&c.combine.body, &mut written);
        run.push(c);
    }
    run
}

fn stores_only_private(block: &Block, kernel: &Kernel) -> bool {
    block.iter().all(|s| match &s.stmt {
        Stmt::Store { place, .. } => match place.root {
            PlaceRoot::Local(l) => kernel.locals.try_get(l).is_some_and(|l| !l.shared),
            _ => false,
        },
        Stmt::If { accept, reject, .. } => {
            stores_only_private(accept, kernel) && stores_only_private(reject, kernel)
        }
        Stmt::Loop { body, continuing } => {
            stores_only_private(body, kernel) && stores_only_private(continuing, kernel)
        }
        Stmt::Collective(_) => false,
        _ => true,
    })
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Collective {
    pub op: CollectiveOp,
    /// Threads combined together.
    pub lanes: u32,
    /// The distance between two neighbouring lanes' positions in the group.
    pub stride: u32,
    /// This thread's value.
    pub value: Handle<Expr>,
    pub combine: Combiner,
    /// Receives the segment's reduce, or the scan's value at this lane.
    pub result: Handle<Local>,
}

/// The scan of `items` in the canonical order.
pub fn scan_canonical<T: Clone>(
    items: &[T],
    from_left: bool,
    combine: &mut impl FnMut(&T, &T) -> T,
) -> Vec<T> {
    let run = RUN as usize;
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(run) {
        out.extend(hillis_steele(chunk, from_left, combine));
    }
    let totals: Vec<T> = out
        .chunks(run)
        .map(|c| {
            if from_left {
                c[c.len() - 1].clone()
            } else {
                c[0].clone()
            }
        })
        .collect();
    let totals = hillis_steele(&totals, from_left, combine);
    let runs = totals.len();
    for (l, value) in out.iter_mut().enumerate() {
        let r = l / run;
        if from_left && r > 0 {
            *value = combine(&totals[r - 1], value);
        } else if !from_left && r + 1 < runs {
            *value = combine(value, &totals[r + 1]);
        }
    }
    out
}

fn hillis_steele<T: Clone>(
    items: &[T],
    from_left: bool,
    combine: &mut impl FnMut(&T, &T) -> T,
) -> Vec<T> {
    let mut x = items.to_vec();
    let mut d = 1;
    while d < x.len() {
        let prev = x.clone();
        for (l, value) in x.iter_mut().enumerate() {
            if from_left && l >= d {
                *value = combine(&prev[l - d], &prev[l]);
            } else if !from_left && l + d < prev.len() {
                *value = combine(&prev[l], &prev[l + d]);
            }
        }
        d *= 2;
    }
    x
}

/// Whether a block holds a collective for which `pick` holds.
pub fn block_has(block: &Block, pick: &impl Fn(&Collective) -> bool) -> bool {
    block.iter().any(|s| match &s.stmt {
        Stmt::Collective(c) => pick(c),
        Stmt::If { accept, reject, .. } => block_has(accept, pick) || block_has(reject, pick),
        Stmt::Loop { body, continuing } => block_has(body, pick) || block_has(continuing, pick),
        _ => false,
    })
}

/// The kernel with every collective that `native` refuses rewritten into shared locals,
/// stores and barriers in the canonical order; `None` when there is none to rewrite.
pub fn expand(kernel: &Kernel, native: impl Fn(&Collective) -> bool) -> Option<Kernel> {
    if !block_has(&kernel.body, &|c| !native(c)) {
        return None;
    }
    let k = kernel.clone();
    let group = k.group_size.map_or(1, |g| g.iter().product::<u32>()).max(1);
    let mut b = KernelBuilder::resume(k.params, k.locals, k.exprs);
    let body = rewrite(&mut b, &k.body, group, &native);
    let mut out = b.finish(k.name, k.kind, k.group_size, k.span);
    out.vouts = k.vouts;
    out.body = body;
    Some(out)
}

fn rewrite(
    b: &mut KernelBuilder,
    block: &Block,
    group: u32,
    native: &impl Fn(&Collective) -> bool,
) -> Block {
    b.open_block();
    for statement in block.iter() {
        let span = statement.span;
        match &statement.stmt {
            Stmt::Collective(c) if !native(c) => Expansion::new(b, c, group, span).emit(),
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                let accept = rewrite(b, accept, group, native);
                let reject = rewrite(b, reject, group, native);
                let cond = *cond;
                b.emit(
                    Stmt::If {
                        cond,
                        accept,
                        reject,
                    },
                    span,
                );
            }
            Stmt::Loop { body, continuing } => {
                let body = rewrite(b, body, group, native);
                let continuing = rewrite(b, continuing, group, native);
                b.emit(Stmt::Loop { body, continuing }, span);
            }
            other => b.emit(other.clone(), span),
        }
    }
    b.close_block()
}

/// One collective being written out.
struct Expansion<'b> {
    b: &'b mut KernelBuilder,
    c: &'b Collective,
    s: SourceSpan,
    group: u32,
    /// The thread's position in the group.
    p: Handle<Expr>,
    /// The thread's lane.
    lane: Handle<Expr>,
}

impl<'b> Expansion<'b> {
    fn new(b: &'b mut KernelBuilder, c: &'b Collective, group: u32, s: SourceSpan) -> Self {
        let int4 = Type::Value(ValueType::vector(ScalarKind::I32, 4));
        let int = Type::Value(ValueType::scalar(ScalarKind::I32));
        let in_group = b.append(ExprKind::InstanceInGroup, int4, s);
        let p = b.append(
            ExprKind::Component {
                base: in_group,
                index: 0,
            },
            int,
            s,
        );
        let stride = b.int(i64::from(c.stride), s);
        let along = b.binary(BinaryOp::Div, p, stride, s);
        let lanes = b.int(i64::from(c.lanes), s);
        let lane = b.binary(BinaryOp::Rem, along, lanes, s);
        Expansion {
            b,
            c,
            s,
            group,
            p,
            lane,
        }
    }

    fn emit(mut self) {
        match self.c.op {
            CollectiveOp::Reduce => self.reduce(),
            CollectiveOp::ScanLeft => self.scan(true),
            CollectiveOp::ScanRight => self.scan(false),
        }
        self.barrier();
    }

    fn runs(&self) -> u32 {
        self.c.lanes.div_ceil(RUN)
    }

    fn reduce(&mut self) {
        let x = self.scratch();
        self.store_at(x, self.p, self.c.value);
        self.barrier();
        let mut d = 1;
        while d < RUN.min(self.c.lanes) {
            let cond = self.pair_start(d, self.c.lanes);
            self.when(cond, |e| {
                let partner = e.shifted(i64::from(d));
                let combined = e.combine_at(x, e.p, x, partner);
                e.store_at(x, e.p, combined);
            });
            self.barrier();
            d *= 2;
        }
        let first = self.lane_position(0);
        let result = if self.c.lanes > RUN {
            let y = self.gather_run_ends(x, false);
            let runs = self.runs();
            let mut d = 1;
            while d < runs {
                let cond = self.pair_start(d, runs);
                self.when(cond, |e| {
                    let partner = e.shifted(i64::from(d));
                    let combined = e.combine_at(y, e.p, y, partner);
                    e.store_at(y, e.p, combined);
                });
                self.barrier();
                d *= 2;
            }
            self.load_at(y, first)
        } else {
            self.load_at(x, first)
        };
        let s = self.s;
        self.b.store(Place::local(self.c.result), result, s);
    }

    fn scan(&mut self, from_left: bool) {
        let x = self.scratch();
        self.store_at(x, self.p, self.c.value);
        self.barrier();
        let within_run = |e: &mut Self, d: u32| e.takes_in_run(d, from_left);
        self.hillis_steele(x, RUN.min(self.c.lanes), from_left, within_run);
        let own = self.load_at(x, self.p);
        let s = self.s;
        self.b.store(Place::local(self.c.result), own, s);
        if self.c.lanes <= RUN {
            return;
        }
        let runs = self.runs();
        let y = self.gather_run_ends(x, from_left);
        let among_totals = |e: &mut Self, d: u32| e.takes_among_totals(d, from_left);
        self.hillis_steele(y, runs, from_left, among_totals);
        let run = self.b.int(i64::from(RUN), s);
        let r = self.b.binary(BinaryOp::Div, self.lane, run, s);
        let (cond, neighbour) = if from_left {
            let zero = self.b.int(0, s);
            let one = self.b.int(1, s);
            (
                self.b.binary(BinaryOp::Gt, r, zero, s),
                self.b.binary(BinaryOp::Sub, r, one, s),
            )
        } else {
            let last = self.b.int(i64::from(runs - 1), s);
            let one = self.b.int(1, s);
            (
                self.b.binary(BinaryOp::Lt, r, last, s),
                self.b.binary(BinaryOp::Add, r, one, s),
            )
        };
        self.when(cond, |e| {
            let at = e.lane_position_of(neighbour);
            let combined = if from_left {
                e.combine_at(y, at, x, e.p)
            } else {
                e.combine_at(x, e.p, y, at)
            };
            let s = e.s;
            e.b.store(Place::local(e.c.result), combined, s);
        });
    }

    /// Hillis–Steele over `array` at distances below `count`, `takes(d)` saying whether this
    /// thread combines at distance `d`: everyone reads, a barrier, everyone writes, a barrier.
    fn hillis_steele(
        &mut self,
        array: Handle<Local>,
        count: u32,
        from_left: bool,
        takes: impl Fn(&mut Self, u32) -> Handle<Expr>,
    ) {
        let s = self.s;
        let ty = self.b.locals[self.c.result].ty.clone();
        let held = self.b.new_local("held", ty, false, s);
        let mut d = 1;
        while d < count {
            let own = self.load_at(array, self.p);
            self.b.store(Place::local(held), own, s);
            let cond = takes(self, d);
            self.when(cond, |e| {
                let combined = if from_left {
                    let partner = e.shifted(-i64::from(d));
                    let partner = e.load_at(array, partner);
                    let mine = e.b.load(Place::local(held), s);
                    e.combine(partner, mine)
                } else {
                    let partner = e.shifted(i64::from(d));
                    let partner = e.load_at(array, partner);
                    let mine = e.b.load(Place::local(held), s);
                    e.combine(mine, partner)
                };
                e.b.store(Place::local(held), combined, s);
            });
            self.barrier();
            let value = self.b.load(Place::local(held), s);
            self.store_at(array, self.p, value);
            self.barrier();
            d *= 2;
        }
    }

    /// Whether this lane combines at distance `d` inside its run: from the left when
    /// `lane % RUN >= d`, from the right when `lane % RUN + d < RUN` and the partner is a lane.
    fn takes_in_run(&mut self, d: u32, from_left: bool) -> Handle<Expr> {
        let s = self.s;
        let run = self.b.int(i64::from(RUN), s);
        let in_run = self.b.binary(BinaryOp::Rem, self.lane, run, s);
        let dist = self.b.int(i64::from(d), s);
        if from_left {
            return self.b.binary(BinaryOp::Ge, in_run, dist, s);
        }
        let reach = self.b.binary(BinaryOp::Add, in_run, dist, s);
        let run = self.b.int(i64::from(RUN), s);
        let inside = self.b.binary(BinaryOp::Lt, reach, run, s);
        let exists = self.below(self.lane, d, self.c.lanes);
        self.b.binary(BinaryOp::LogicAnd, inside, exists, s)
    }

    /// Whether lane `l < runs` combines at distance `d` in the scan of the totals.
    fn takes_among_totals(&mut self, d: u32, from_left: bool) -> Handle<Expr> {
        let s = self.s;
        let runs = self.runs();
        if !from_left {
            return self.below(self.lane, d, runs);
        }
        let dist = self.b.int(i64::from(d), s);
        let inside = self.b.binary(BinaryOp::Ge, self.lane, dist, s);
        let exists = self.below(self.lane, 0, runs);
        self.b.binary(BinaryOp::LogicAnd, inside, exists, s)
    }

    /// `at + d < count`.
    fn below(&mut self, at: Handle<Expr>, d: u32, count: u32) -> Handle<Expr> {
        let s = self.s;
        let dist = self.b.int(i64::from(d), s);
        let reach = self.b.binary(BinaryOp::Add, at, dist, s);
        let n = self.b.int(i64::from(count), s);
        self.b.binary(BinaryOp::Lt, reach, n, s)
    }

    /// `y[lane] = x[end of run lane]` for the lanes below the number of runs (the run's last
    /// lane from the left, its first from the right), then a barrier.
    fn gather_run_ends(&mut self, x: Handle<Local>, last: bool) -> Handle<Local> {
        let s = self.s;
        let y = self.scratch();
        let runs = self.b.int(i64::from(self.runs()), s);
        let cond = self.b.binary(BinaryOp::Lt, self.lane, runs, s);
        self.when(cond, |e| {
            let run = e.b.int(i64::from(RUN), s);
            let start = e.b.binary(BinaryOp::Mul, e.lane, run, s);
            let end = if last {
                let width = e.b.int(i64::from(RUN - 1), s);
                let end = e.b.binary(BinaryOp::Add, start, width, s);
                let final_lane = e.b.int(i64::from(e.c.lanes - 1), s);
                let past = e.b.binary(BinaryOp::Gt, end, final_lane, s);
                let int = e.b.ty(end).clone();
                e.b.append(
                    ExprKind::Select {
                        cond: past,
                        accept: final_lane,
                        reject: end,
                    },
                    int,
                    s,
                )
            } else {
                start
            };
            let at = e.lane_position_of(end);
            let value = e.load_at(x, at);
            e.store_at(y, e.p, value);
        });
        self.barrier();
        y
    }

    /// Whether this lane starts a pair at distance `d` of a row of `count`: `lane % 2d == 0`
    /// and `lane + d < count`.
    fn pair_start(&mut self, d: u32, count: u32) -> Handle<Expr> {
        let s = self.s;
        let mask = self.b.int(i64::from(2 * d - 1), s);
        let low = self.b.binary(BinaryOp::BitAnd, self.lane, mask, s);
        let zero = self.b.int(0, s);
        let aligned = self.b.binary(BinaryOp::Eq, low, zero, s);
        let exists = self.below(self.lane, d, count);
        self.b.binary(BinaryOp::LogicAnd, aligned, exists, s)
    }

    /// A shared array with one element per position of the group.
    fn scratch(&mut self) -> Handle<Local> {
        let ty = Type::Array {
            elem: Box::new(self.b.locals[self.c.result].ty.clone()),
            len: self.group,
        };
        self.b.new_local(self.c.op.name(), ty, true, self.s)
    }

    /// The position `d` lanes from this thread's.
    fn shifted(&mut self, d: i64) -> Handle<Expr> {
        let s = self.s;
        let by = self.b.int(d * i64::from(self.c.stride), s);
        self.b.binary(BinaryOp::Add, self.p, by, s)
    }

    /// The position of lane `k` of this thread's segment.
    fn lane_position(&mut self, k: u32) -> Handle<Expr> {
        let k = self.b.int(i64::from(k), self.s);
        self.lane_position_of(k)
    }

    fn lane_position_of(&mut self, k: Handle<Expr>) -> Handle<Expr> {
        let s = self.s;
        let delta = self.b.binary(BinaryOp::Sub, k, self.lane, s);
        let stride = self.b.int(i64::from(self.c.stride), s);
        let by = self.b.binary(BinaryOp::Mul, delta, stride, s);
        self.b.binary(BinaryOp::Add, self.p, by, s)
    }

    fn place(array: Handle<Local>, at: Handle<Expr>) -> Place {
        Place {
            root: PlaceRoot::Local(array),
            path: vec![Access::Index(at)],
        }
    }

    fn load_at(&mut self, array: Handle<Local>, at: Handle<Expr>) -> Handle<Expr> {
        self.b.load(Self::place(array, at), self.s)
    }

    fn store_at(&mut self, array: Handle<Local>, at: Handle<Expr>, value: Handle<Expr>) {
        self.b.store(Self::place(array, at), value, self.s);
    }

    /// `f(a[i], b[j])`.
    fn combine_at(
        &mut self,
        a: Handle<Local>,
        i: Handle<Expr>,
        b: Handle<Local>,
        j: Handle<Expr>,
    ) -> Handle<Expr> {
        let left = self.load_at(a, i);
        let right = self.load_at(b, j);
        self.combine(left, right)
    }

    /// `f(left, right)`: the combiner's body with its operands stored.
    fn combine(&mut self, left: Handle<Expr>, right: Handle<Expr>) -> Handle<Expr> {
        let s = self.s;
        let f = &self.c.combine;
        self.b.store(Place::local(f.left), left, s);
        self.b.store(Place::local(f.right), right, s);
        self.b.splice(f.body.clone());
        self.b.load(Place::local(f.out), s)
    }

    fn when(&mut self, cond: Handle<Expr>, f: impl FnOnce(&mut Self)) {
        self.b.open_block();
        f(self);
        let accept = self.b.close_block();
        self.b.emit(
            Stmt::If {
                cond,
                accept,
                reject: Block::new(),
            },
            self.s,
        );
    }

    fn barrier(&mut self) {
        self.b.emit(Stmt::Barrier, self.s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records the combines as strings, to show their grouping.
    fn show(items: usize, from_left: bool) -> Vec<String> {
        let leaves: Vec<String> = (0..items).map(|i| i.to_string()).collect();
        scan_canonical(&leaves, from_left, &mut |a, b| format!("({a} {b})"))
    }

    #[test]
    fn short_scans_are_hillis_steele() {
        assert_eq!(show(4, true), ["0", "(0 1)", "(0 (1 2))", "((0 1) (2 3))"]);
        assert_eq!(show(3, false), ["((0 1) 2)", "(1 2)", "2"]);
    }

    #[test]
    fn runs_join_through_their_totals() {
        let left = show(40, true);
        assert_eq!(left[33], format!("({} (32 33))", left[31]));
        let right = show(40, false);
        let first_run = &show(32, false)[0];
        let total = "(((32 33) (34 35)) ((36 37) (38 39)))";
        assert_eq!(right[0], format!("({first_run} {total})"));
    }

    /// A group kernel whose body is one collective of `op` over 64 lanes, combining by `+`,
    /// with `extra` appended to the combining body.
    fn kernel_with(op: CollectiveOp, group: Option<[u32; 3]>, extra: Option<Stmt>) -> Kernel {
        let s = SourceSpan::default();
        let mut b = KernelBuilder::new();
        let float = Type::Value(ValueType::scalar(ScalarKind::F32));
        let [left, right, out, result] =
            ["l", "r", "o", "x"].map(|n| b.new_local(n, float.clone(), false, s));
        b.open_block();
        let (l, r) = (
            b.load(Place::local(left), s),
            b.load(Place::local(right), s),
        );
        let sum = b.binary(BinaryOp::Add, l, r, s);
        b.store(Place::local(out), sum, s);
        if let Some(stmt) = extra {
            b.emit(stmt, s);
        }
        let body = b.close_block();
        let value = b.constant(ScalarKind::F32, 1, s);
        let c = Collective {
            op,
            lanes: 64,
            stride: 1,
            value,
            combine: Combiner {
                left,
                right,
                body,
                out,
            },
            result,
        };
        b.emit(Stmt::Collective(Box::new(c)), s);
        b.finish("k".into(), crate::KernelKind::Map, group, s)
    }

    fn validate(kernel: Kernel) -> Result<(), crate::ValidationError> {
        let module = crate::Module {
            kernels: vec![kernel],
            ..Default::default()
        };
        crate::validate(module).map(|_| ())
    }

    #[test]
    fn collectives_validate_and_expand_into_valid_ir() {
        for op in [
            CollectiveOp::Reduce,
            CollectiveOp::ScanLeft,
            CollectiveOp::ScanRight,
        ] {
            let kernel = kernel_with(op, Some([64, 1, 1]), None);
            assert!(kernel
                .body
                .iter()
                .all(|s| matches!(s.stmt, Stmt::Collective(_))));
            validate(kernel.clone()).expect("valid");
            let expanded = expand(&kernel, |_| false).expect("expanded");
            assert!(!block_has(&expanded.body, &|_| true));
            validate(expanded).expect("the expansion is valid");
            assert!(
                expand(&kernel, |_| true).is_none(),
                "all native: nothing to expand"
            );
        }
    }

    #[test]
    fn the_validator_refuses_misplaced_collectives() {
        let no_group = validate(kernel_with(CollectiveOp::Reduce, None, None));
        assert!(no_group
            .unwrap_err()
            .to_string()
            .contains("without a thread group"));
        let too_small = validate(kernel_with(CollectiveOp::Reduce, Some([32, 1, 1]), None));
        assert!(too_small.unwrap_err().to_string().contains("64 lanes"));
        let barrier = validate(kernel_with(
            CollectiveOp::Reduce,
            Some([64, 1, 1]),
            Some(Stmt::Barrier),
        ));
        assert!(barrier
            .unwrap_err()
            .to_string()
            .contains("barrier in a collective"));
    }

    #[test]
    fn scans_of_an_associative_operator_are_prefix_sums() {
        let items: Vec<u64> = (1..=300).collect();
        let left = scan_canonical(&items, true, &mut |a, b| a + b);
        let right = scan_canonical(&items, false, &mut |a, b| a + b);
        for (i, (&l, &r)) in left.iter().zip(&right).enumerate() {
            assert_eq!(l, (1..=i as u64 + 1).sum::<u64>());
            assert_eq!(r, (i as u64 + 1..=300).sum::<u64>());
        }
    }
}
