//! The fast loop of a loop with induction gathers ([`brook_ir::induction`]), written once over
//! [`Target`] for every compiled device.
//!
//! At the loop's entry the lowering checks, per induction component a gather reads, that it
//! and its step hold integers (the value survives `floor(f + 0.25)` and the round trip
//! through an index), that it lies in `[0, hi]` (`hi` the smallest last position of the axes
//! it indexes, at most `2^24 - 1`, where every float addition of such integers is exact), and
//! that `|step| <= 2^24`; it counts the updates `K` for which every such component stays in
//! `[0, hi]`. Where all of that holds, the loop runs as written except that each induction
//! gather keeps its element index in an integer variable, moved by `step * pitch` right after
//! its variable's update, and reads its element there without converting or clamping: the
//! element the gather would read, since the conversion gives the integer and no clamp
//! applies. A variable nothing else reads ([`brook_ir::induction::InductionLoop::unread`])
//! whose components the gathers all read is not updated at all, only counted. Before an
//! iteration that might update a variable past its `K` updates, the fast loop stops (writing
//! the counted variables' values) and the loop as written goes on from there; it also runs
//! where the checks fail. So every kernel computes exactly what it computed before.
//!
//! A straight-line loop (its exit test, then stores to locals) runs its fast loop in groups of
//! iterations under a predicate, without a branch per iteration (`grouped`), so that the
//! gathers of a whole group are in flight at once.
//!
//! Gathers at the same indices share one element index where their arrays have the same
//! offset, pitches and clamped extents at run time (an entry check); a fast loop keeps at
//! most [`MAX_GATHERS`] element indices, and a loop has at most
//! [`Target::max_fast_loop_gathers`] induction gathers (four on a GPU, sixteen on the CPU).
//! Measured on an H100 (docs/PERFORMANCE.md): seed 001's simple multiply (two gathers) ran
//! 10% faster, its 8x4-blocked one (twelve) 20-37% slower whatever the form — an element
//! index per gather, one integer shadow per component, or two shared element indices — as
//! the extra registers took it past what keeps its blocks resident; on the CPU the shared
//! form runs it 10% faster. A fast loop without the exit test (its trips counted at the
//! entry) made the simple multiply 28% slower; the test stays.

mod grouped;

use super::{stmt, ExprWalk, StreamRef, Target};
use brook_ir::induction::{IndexSource, InductionLoop};
use brook_ir::{BinaryOp, Block, Expr, Handle, Literal, Place, ScalarKind, UnaryOp};
use std::collections::HashMap;

/// The most element indices a loop's fast loop keeps (each holds two registers; gathers at
/// the same indices of arrays of the same geometry share one), and the most induction
/// gathers a fast loop runs in groups.
pub const MAX_GATHERS: usize = 4;
/// Components and steps at most this large keep float additions exact.
const EXACT: u64 = 1 << 24;
/// The count of a component whose step is zero (any launch's loop ends first or never).
const UNBOUNDED: u64 = 1 << 30;

/// What a target keeps while it lowers a fast loop: the element index variable of each
/// induction gather, and the steps to add after each induction variable's update.
pub struct Induction<L, V> {
    gathers: HashMap<Handle<Expr>, V>,
    updates: HashMap<Handle<Expr>, Vec<(V, L)>>,
    /// Updates counted instead of done (their variables are read nowhere else), by value.
    counted: HashMap<Handle<Expr>, V>,
    active: bool,
    /// Whether loops get fast loops at all ([`crate::Tuning::induction`]).
    enabled: bool,
}

impl<L, V> Induction<L, V> {
    /// The state of a kernel being lowered; `enabled`: loops get fast loops.
    pub fn new(enabled: bool) -> Self {
        Induction {
            gathers: HashMap::new(),
            updates: HashMap::new(),
            counted: HashMap::new(),
            active: false,
            enabled,
        }
    }
}

impl<L: Copy, V: Copy> Induction<L, V> {
    /// The element index variable of induction gather `h` in the fast loop being lowered.
    pub fn gather(&self, h: Handle<Expr>) -> Option<V> {
        self.gathers.get(&h).copied()
    }

    /// The element index variables to move, and by how much, after the update whose value
    /// is `h`.
    pub fn steps_after(&self, h: Handle<Expr>) -> Option<Vec<(V, L)>> {
        self.updates.get(&h).cloned()
    }
}

/// An induction component at the loop's entry: its value and its step, as indices.
#[derive(Clone, Copy)]
struct Component<L> {
    at: L,
    step: L,
}

/// Lowers `loop { body } continuing { continuing }` with its fast loop where `plan` allows:
/// the fast loop runs while the entry's checks hold and stops before an update past the
/// count; the loop as written runs where the checks fail or the fast loop stopped.
pub fn lower_loop<'ir, T: Target<'ir>>(
    t: &mut T,
    body: &Block,
    continuing: &Block,
    plan: &InductionLoop,
) -> Result<(), T::Error> {
    let entry = Entry::compute(t, plan)?;
    let stopped = t.temporary(ScalarKind::Bool);
    let no = t.literal(Literal::bool(false));
    t.write_var(stopped, no);
    let fast = t.begin_if(entry.guard);
    fast_loop(t, body, continuing, plan, &entry, stopped)?;
    t.begin_else(&fast);
    t.end_if(fast);
    let checks_failed = t.unary(UnaryOp::Not, ScalarKind::Bool, entry.guard);
    let stopped = t.read_var(stopped);
    let written = t.binary(BinaryOp::LogicOr, ScalarKind::Bool, checks_failed, stopped);
    let slow = t.begin_if(written);
    plain_loop(t, body, continuing)?;
    t.begin_else(&slow);
    t.end_if(slow);
    Ok(())
}

/// The loop as written.
pub fn plain_loop<'ir, T: Target<'ir>>(
    t: &mut T,
    body: &Block,
    continuing: &Block,
) -> Result<(), T::Error> {
    t.loop_body(body, continuing);
    let frame = t.begin_loop();
    stmt::block(t, body, Some(frame))?;
    t.begin_continuing(frame);
    stmt::block(t, continuing, Some(frame))?;
    t.end_loop(frame);
    Ok(())
}

/// A component checked at the entry: its value and step as indices, whether the checks hold,
/// and how many updates keep it in range.
struct Checked<L> {
    component: Component<L>,
    ok: L,
    updates: L,
}

/// A gather's element index at the entry, and per induction variable it reads, the move of
/// its element index at that variable's update.
struct FirstIndex<L> {
    element: L,
    moves: Vec<(usize, L)>,
}

/// The checks at the loop's entry, the count of updates, and each induction gather's first
/// element index and its moves per variable update.
struct Entry<L> {
    guard: L,
    count: L,
    /// Per variable whose components are all checked: its value and step at the entry.
    whole: Vec<Option<(Vec<L>, Vec<L>)>>,
    /// Per gather (in the plan's order): its first element index, and per induction
    /// variable it reads, the move of its element index at that variable's update.
    gathers: Vec<FirstIndex<L>>,
    /// Per gather: the earlier gather whose element index it shares (the same indices, and
    /// at run time the same offset, pitches and extents of the axes they clamp).
    leaders: Vec<Option<usize>>,
}

impl<L: Copy> Entry<L> {
    fn compute<'ir, T: Target<'ir, Leaf = L>>(
        t: &mut T,
        plan: &InductionLoop,
    ) -> Result<Entry<L>, T::Error> {
        let mut streams = Vec::with_capacity(plan.gathers.len());
        for g in &plan.gathers {
            match t.binding(g.param) {
                super::Binding::Array { stream } => streams.push(stream),
                _ => return Ok(Entry::never(t, plan)),
            }
        }
        let used = components(plan);
        let mut guard = t.literal(Literal::bool(true));
        let mut count = t.index_constant(UNBOUNDED);
        let mut found = HashMap::new();
        for &(var, component) in &used {
            let hi = highest(t, plan, &streams, (var, component));
            let Checked {
                component: c,
                ok,
                updates,
            } = check_component(t, plan, (var, component), hi)?;
            guard = t.binary(BinaryOp::LogicAnd, ScalarKind::Bool, guard, ok);
            count = min_index(t, count, updates);
            found.insert((var, component), c);
        }
        let mut gathers: Vec<FirstIndex<L>> = Vec::with_capacity(plan.gathers.len());
        let leaders = leaders(plan);
        for (i, (g, stream)) in plan.gathers.iter().zip(&streams).enumerate() {
            // An empty axis has no last position to stay below.
            for (k, source) in g.indices.iter().enumerate() {
                if matches!(source, IndexSource::Induction { .. }) {
                    let zero = t.index_constant(0);
                    let kind = t.index_kind();
                    let filled = t.binary(BinaryOp::Ne, kind, stream.shape[k], zero);
                    guard = t.binary(BinaryOp::LogicAnd, ScalarKind::Bool, guard, filled);
                }
            }
            // (Extents along induction axes may differ: every array's bounds the count.)
            if let Some(j) = leaders[i] {
                let same = same_geometry(t, &g.indices, stream, &streams[j]);
                guard = t.binary(BinaryOp::LogicAnd, ScalarKind::Bool, guard, same);
                gathers.push(FirstIndex {
                    element: gathers[j].element,
                    moves: Vec::new(),
                });
                continue;
            }
            gathers.push(first_index(t, &g.indices, stream, &found)?);
        }
        let mut whole = Vec::with_capacity(plan.vars.len());
        for (index, var) in plan.vars.iter().enumerate() {
            let width = t.expr(var.current)?.len();
            let checked = used.iter().filter(|(v, _)| *v == index).count() == width;
            whole.push(if checked && plan.unread[index] {
                let value = t.expr(var.current)?;
                let mut step = t.expr(var.step)?;
                if var.negated {
                    for s in &mut step {
                        *s = t.unary(UnaryOp::Neg, ScalarKind::F32, *s);
                    }
                }
                Some((value, step))
            } else {
                None
            });
        }
        Ok(Entry {
            guard,
            count,
            whole,
            gathers,
            leaders,
        })
    }

    /// An entry whose checks fail (a gather without its array bound never happens in a
    /// launch; the loop as written handles it).
    fn never<'ir, T: Target<'ir, Leaf = L>>(t: &mut T, plan: &InductionLoop) -> Entry<L> {
        let zero = t.index_constant(0);
        Entry {
            guard: t.literal(Literal::bool(false)),
            count: zero,
            whole: plan.vars.iter().map(|_| None).collect(),
            gathers: plan
                .gathers
                .iter()
                .map(|_| FirstIndex {
                    element: zero,
                    moves: Vec::new(),
                })
                .collect(),
            leaders: plan.gathers.iter().map(|_| None).collect(),
        }
    }
}

/// Per gather: the first earlier gather with the same indices, whose element index it may
/// share (seed 001's 8x4-blocked multiply reads eight arrays at `index.wy` and four at
/// `index.xw`: two element indices, not twelve).
fn leaders(plan: &InductionLoop) -> Vec<Option<usize>> {
    plan.gathers
        .iter()
        .enumerate()
        .map(|(i, g)| {
            plan.gathers[..i]
                .iter()
                .position(|earlier| earlier.indices == g.indices)
        })
        .collect()
}

/// How many element indices a fast loop keeps: one per distinct list of indices.
pub fn element_indices(plan: &InductionLoop) -> usize {
    leaders(plan).iter().filter(|l| l.is_none()).count()
}

/// Whether two arrays gathered at the same indices have the same element index: the same
/// offset and pitches, and the same extent on each axis an invariant index is clamped to.
fn same_geometry<'ir, T: Target<'ir>>(
    t: &mut T,
    indices: &[IndexSource],
    a: &StreamRef<T::Leaf>,
    b: &StreamRef<T::Leaf>,
) -> T::Leaf {
    let kind = t.index_kind();
    let mut same = t.binary(BinaryOp::Eq, kind, a.offset, b.offset);
    for (k, source) in indices.iter().enumerate() {
        let pitch = t.binary(BinaryOp::Eq, kind, a.pitch[k], b.pitch[k]);
        same = t.binary(BinaryOp::LogicAnd, ScalarKind::Bool, same, pitch);
        if matches!(source, IndexSource::Invariant(_)) {
            let extent = t.binary(BinaryOp::Eq, kind, a.shape[k], b.shape[k]);
            same = t.binary(BinaryOp::LogicAnd, ScalarKind::Bool, same, extent);
        }
    }
    same
}

/// The induction components the gathers read, each once, in a fixed order.
fn components(plan: &InductionLoop) -> Vec<(usize, u8)> {
    let mut out: Vec<(usize, u8)> = plan
        .gathers
        .iter()
        .flat_map(|g| g.indices.iter())
        .filter_map(|s| match *s {
            IndexSource::Induction { var, component } => Some((var, component)),
            IndexSource::Invariant(_) => None,
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The highest value component `c` may take: the last position of every axis it indexes,
/// and `2^24 - 1`.
fn highest<'ir, T: Target<'ir>>(
    t: &mut T,
    plan: &InductionLoop,
    streams: &[StreamRef<T::Leaf>],
    c: (usize, u8),
) -> T::Leaf {
    let mut hi = t.index_constant(EXACT - 1);
    let one = t.index_constant(1);
    for (g, stream) in plan.gathers.iter().zip(streams) {
        for (k, source) in g.indices.iter().enumerate() {
            if *source
                == (IndexSource::Induction {
                    var: c.0,
                    component: c.1,
                })
            {
                let last = t.binary(BinaryOp::Sub, t.index_kind(), stream.shape[k], one);
                hi = min_index(t, hi, last);
            }
        }
    }
    hi
}

/// The smaller of two non-negative indices.
fn min_index<'ir, T: Target<'ir>>(t: &mut T, a: T::Leaf, b: T::Leaf) -> T::Leaf {
    let kind = t.index_kind();
    let less = t.binary(BinaryOp::Lt, kind, a, b);
    t.select(kind, less, a, b)
}

/// Component `c` at the loop's entry: its value and step as indices, whether both are exact
/// integers with the value in `[0, hi]` and `|step| <= 2^24`, and how many updates keep it in
/// `[0, hi]`.
fn check_component<'ir, T: Target<'ir>>(
    t: &mut T,
    plan: &InductionLoop,
    (var, component): (usize, u8),
    hi: T::Leaf,
) -> Result<Checked<T::Leaf>, T::Error> {
    let v = &plan.vars[var];
    let f32 = ScalarKind::F32;
    let value = t.expr(v.current)?[usize::from(component)];
    let mut step = t.expr(v.step)?[usize::from(component)];
    if v.negated {
        step = t.unary(UnaryOp::Neg, f32, step);
    }
    let kind = t.index_kind();
    let sign = if kind == ScalarKind::U32 {
        ScalarKind::I32
    } else {
        ScalarKind::I64
    };
    let at = t.to_index(f32, value);
    let by = t.to_index(f32, step);
    let exact = |t: &mut T, i: T::Leaf, f: T::Leaf| {
        let back = t.convert(sign, f32, i);
        t.binary(BinaryOp::Eq, f32, back, f)
    };
    let exact_at = exact(t, at, value);
    let exact_by = exact(t, by, step);
    // Unsigned comparisons: a negative value wraps past every bound.
    let in_range = t.binary(BinaryOp::Le, kind, at, hi);
    let exact_limit = t.index_constant(EXACT);
    let shifted = t.binary(BinaryOp::Add, kind, by, exact_limit);
    let twice = t.index_constant(2 * EXACT);
    let small_step = t.binary(BinaryOp::Le, kind, shifted, twice);
    let mut ok = t.binary(BinaryOp::LogicAnd, ScalarKind::Bool, exact_at, exact_by);
    ok = t.binary(BinaryOp::LogicAnd, ScalarKind::Bool, ok, in_range);
    ok = t.binary(BinaryOp::LogicAnd, ScalarKind::Bool, ok, small_step);
    // Updates that stay in [0, hi]: (hi - at) / step upwards, at / -step downwards.
    let zero = t.index_constant(0);
    let one = t.index_constant(1);
    let up = t.binary(BinaryOp::Gt, sign, by, zero);
    let still = t.binary(BinaryOp::Eq, kind, by, zero);
    let room_up = t.binary(BinaryOp::Sub, kind, hi, at);
    let room = t.select(kind, up, room_up, at);
    let down = t.binary(BinaryOp::Sub, kind, zero, by);
    let size = t.select(kind, up, by, down);
    let size = t.select(kind, still, one, size);
    let updates = t.div_index(room, size);
    let unbounded = t.index_constant(UNBOUNDED);
    let updates = t.select(kind, still, unbounded, updates);
    Ok(Checked {
        component: Component { at, step: by },
        ok,
        updates,
    })
}

/// A gather's first element index (its induction indices at their entry values, invariant
/// ones converted and clamped as a gather does) and its moves per variable update.
fn first_index<'ir, T: Target<'ir>>(
    t: &mut T,
    indices: &[IndexSource],
    stream: &StreamRef<T::Leaf>,
    found: &HashMap<(usize, u8), Component<T::Leaf>>,
) -> Result<FirstIndex<T::Leaf>, T::Error> {
    let kind = t.index_kind();
    let mut at = Vec::with_capacity(indices.len());
    let mut moves: Vec<(usize, T::Leaf)> = Vec::new();
    for (k, source) in indices.iter().enumerate() {
        match *source {
            IndexSource::Induction { var, component } => {
                let c = found[&(var, component)];
                at.push(c.at);
                let term = t.mul_index(c.step, stream.pitch[k]);
                match moves.iter_mut().find(|(v, _)| *v == var) {
                    Some((_, sum)) => *sum = t.binary(BinaryOp::Add, kind, *sum, term),
                    None => moves.push((var, term)),
                }
            }
            IndexSource::Invariant(h) => {
                let i = t.index_value(h)?;
                at.push(t.clamp_index(i, stream.shape[k]));
            }
        }
    }
    let pitch = stream.pitch[..at.len()].to_vec();
    Ok(FirstIndex {
        element: t.element_index(stream.offset, &at, &pitch),
        moves,
    })
}

/// The loop with the induction gathers' element indices in variables, stopping (and setting
/// `stopped`) before an iteration past the entry's count of updates.
fn fast_loop<'ir, T: Target<'ir>>(
    t: &mut T,
    body: &Block,
    continuing: &Block,
    plan: &InductionLoop,
    entry: &Entry<T::Leaf>,
    stopped: T::Var,
) -> Result<(), T::Error> {
    let kind = t.index_kind();
    let mut state: Induction<T::Leaf, T::Var> = Induction {
        active: true,
        ..Induction::new(true)
    };
    let mut vars: Vec<T::Var> = Vec::with_capacity(plan.gathers.len());
    for (i, (g, first)) in plan.gathers.iter().zip(&entry.gathers).enumerate() {
        // A gather with a leader shares its variable (the leader comes first in the plan).
        if let Some(leader) = entry.leaders[i] {
            let var = vars[leader];
            vars.push(var);
            state.gathers.insert(g.expr, var);
            continue;
        }
        let var = t.temporary(kind);
        t.write_var(var, first.element);
        vars.push(var);
        state.gathers.insert(g.expr, var);
        for &(v, by) in &first.moves {
            state
                .updates
                .entry(plan.vars[v].update)
                .or_default()
                .push((var, by));
        }
    }
    let iterations = t.temporary(kind);
    let zero = t.index_constant(0);
    t.write_var(iterations, zero);
    let mut counters = Vec::new();
    for (var, whole) in plan.vars.iter().zip(&entry.whole) {
        if let Some(whole) = whole {
            let updates = t.temporary(kind);
            t.write_var(updates, zero);
            state.counted.insert(var.update, updates);
            counters.push((var.local, updates, whole));
        }
    }
    let saved = std::mem::replace(t.induction(), state);
    // Grouping multiplies the gathers in flight by four: only for loops of few gathers.
    let group = plan.gathers.len() <= MAX_GATHERS;
    let result = grouped_then_single(
        t,
        (body, continuing, group),
        entry,
        stopped,
        iterations,
        &counters,
    );
    *t.induction() = saved;
    result
}

/// A variable counted instead of updated: its local, its count, and its value and step at
/// the entry.
type Counter<'e, L, V> = (Handle<brook_ir::Local>, V, &'e (Vec<L>, Vec<L>));

/// The fast loop proper: groups of iterations where the loop is straight-line
/// ([`grouped`]), then (unless an exit test ended it there) one iteration at a time,
/// stopping before an iteration past the entry's count.
fn grouped_then_single<'ir, T: Target<'ir>>(
    t: &mut T,
    (body, continuing, group): (&Block, &Block, bool),
    entry: &Entry<T::Leaf>,
    stopped: T::Var,
    iterations: T::Var,
    counters: &[Counter<'_, T::Leaf, T::Var>],
) -> Result<(), T::Error> {
    let line = group
        .then(|| grouped::StraightLine::of(t, body, continuing))
        .flatten();
    let grouped = match line {
        Some(line) => Some(grouped::grouped_loop(t, &line, entry.count, iterations)?),
        None => None,
    };
    let single = grouped.map(|exited| {
        let exited = t.read_var(exited);
        let going = t.unary(UnaryOp::Not, ScalarKind::Bool, exited);
        t.begin_if(going)
    });
    single_loop(t, body, continuing, entry, stopped, iterations, counters)?;
    if let Some(frame) = single {
        t.begin_else(&frame);
        t.end_if(frame);
    }
    Ok(())
}

/// One iteration at a time, stopping (and setting `stopped`) before an iteration past the
/// entry's count of updates.
fn single_loop<'ir, T: Target<'ir>>(
    t: &mut T,
    body: &Block,
    continuing: &Block,
    entry: &Entry<T::Leaf>,
    stopped: T::Var,
    iterations: T::Var,
    counters: &[Counter<'_, T::Leaf, T::Var>],
) -> Result<(), T::Error> {
    let kind = t.index_kind();
    let frame = t.begin_loop();
    let done = t.read_var(iterations);
    let past = t.binary(BinaryOp::Ge, kind, done, entry.count);
    let stop = t.begin_if(past);
    let yes = t.literal(Literal::bool(true));
    t.write_var(stopped, yes);
    for &(local, updates, whole) in counters {
        let updates = t.read_var(updates);
        let value = after_updates(t, updates, whole);
        super::place::store_place(t, &Place::local(local), &value)?;
    }
    t.jump_break(frame);
    t.begin_else(&stop);
    t.end_if(stop);
    stmt::block(t, body, Some(frame))?;
    t.begin_continuing(frame);
    let done = t.read_var(iterations);
    let one = t.index_constant(1);
    let next = t.binary(BinaryOp::Add, kind, done, one);
    t.write_var(iterations, next);
    stmt::block(t, continuing, Some(frame))?;
    t.end_loop(frame);
    Ok(())
}

/// A variable's value after `updates` updates of `step` from `start` (`(start, step)`): exact,
/// as every value on the way is an integer below 2^24 (the start itself, sign of zero
/// included, where there was none).
fn after_updates<'ir, T: Target<'ir>>(
    t: &mut T,
    updates: T::Leaf,
    (start, step): &(Vec<T::Leaf>, Vec<T::Leaf>),
) -> Vec<T::Leaf> {
    let (kind, f32) = (t.index_kind(), ScalarKind::F32);
    let zero = t.index_constant(0);
    let none = t.binary(BinaryOp::Eq, kind, updates, zero);
    let n = t.convert(kind, f32, updates);
    start
        .iter()
        .zip(step)
        .map(|(&v, &s)| {
            let moved = t.binary(BinaryOp::Mul, f32, n, s);
            let sum = t.binary(BinaryOp::Add, f32, v, moved);
            t.select(f32, none, v, sum)
        })
        .collect()
}

/// Counts the update whose value is `value` where the fast loop counts it instead of doing
/// it ([`brook_ir::induction::InductionLoop::unread`]); false where it must be done.
pub fn counted_update<'ir, T: Target<'ir>>(t: &mut T, value: Handle<Expr>) -> bool {
    let Some(updates) = t.induction().counted.get(&value).copied() else {
        return false;
    };
    let kind = t.index_kind();
    let n = t.read_var(updates);
    let one = t.index_constant(1);
    let next = t.binary(BinaryOp::Add, kind, n, one);
    t.write_var(updates, next);
    true
}

/// Whether a loop gets a fast loop: not inside another one's (each would double the code),
/// and not where the tuning turns them off ([`crate::Tuning::induction`]).
pub fn applies<'ir, T: Target<'ir>>(t: &mut T) -> bool {
    let state = t.induction();
    state.enabled && !state.active
}

/// After the update whose value is `value`: moves the element indices of the gathers that
/// read its variable.
pub fn after_update<'ir, T: Target<'ir>>(t: &mut T, value: Handle<Expr>) {
    let Some(steps) = t.induction().steps_after(value) else {
        return;
    };
    let kind = t.index_kind();
    for (var, by) in steps {
        let e = t.read_var(var);
        let moved = t.binary(BinaryOp::Add, kind, e, by);
        t.write_var(var, moved);
    }
}
