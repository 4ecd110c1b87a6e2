//! Groups of [`GROUP`] iterations of a straight-line fast loop run as one stretch of code
//! without branches, so that a GPU has every group's gathers in flight at once.
//!
//! A fast loop's induction gathers read in range for its first `count` iterations (the
//! entry's checks), so the gathers of the next `GROUP` iterations may all be issued before
//! any of their exit tests is known. A branch per iteration would let the GPU's assembler
//! sink each load back past its test (it does; measured in `bench/explore/gather_ilp.cu`), so
//! each iteration here runs under a predicate instead: `alive` stays true while every exit
//! test so far passed, and each store writes `alive ? new : old`. After a group where a test
//! failed the state is what the loop as written leaves, and the loop ends. Evaluating an
//! iteration after the exit is harmless: every expression is total (gathers clamp, integer
//! division guards its divisor, a local array's index is clamped) and its stores are
//! dropped.
//!
//! Only loops whose body is the exit test followed by stores to locals held in variables
//! (and whose continuing block holds only such stores) are grouped: seed 001's simple
//! multiply, `for` loops of sums along a row. Element index moves and counted updates happen
//! unconditionally: they matter only while the loop goes on, which needs every iteration of
//! the group alive.

use super::{after_update, counted_update};
use crate::leaves::leaves;
use crate::lower::{place, ExprWalk, Root, Target};
use brook_ir::{Access, BinaryOp, Block, Expr, Handle, Literal, Place, PlaceRoot, ScalarKind};
use brook_ir::{Stmt, UnaryOp};

/// Iterations a group runs. Measured on an H100 for seed 001's simple multiply in CUDA C
/// (`bench/explore/gather_ilp.cu`): one at a time 85.6 ms, groups of 2 48.4, of 4 36.0, of 8
/// 34.5, of 16 36.2; 4 keeps the code small.
pub const GROUP: usize = 4;

/// A loop body that is its exit test, then stores to locals held in variables.
pub struct StraightLine<'b> {
    /// The exit test's condition.
    test: Handle<Expr>,
    /// The loop ends where the condition is true (`if (c) break;`), not false.
    exit_when_true: bool,
    /// The stores of the body, then those of the continuing block, in order.
    stores: Vec<(&'b Place, Handle<Expr>)>,
}

impl<'b> StraightLine<'b> {
    /// The straight-line form of `loop { body } continuing { continuing }`, if it has one.
    pub fn of<'ir, T: Target<'ir>>(t: &T, body: &'b Block, continuing: &'b Block) -> Option<Self> {
        let (first, rest) = body.0.split_first()?;
        let Stmt::If {
            cond,
            accept,
            reject,
        } = &first.stmt
        else {
            return None;
        };
        let only_break = |b: &Block| matches!(b.0.as_slice(), [s] if matches!(s.stmt, Stmt::Break));
        let exit_when_true = match (accept.0.is_empty(), reject.0.is_empty()) {
            (true, false) if only_break(reject) => false,
            (false, true) if only_break(accept) => true,
            _ => return None,
        };
        let mut stores = Vec::with_capacity(rest.len() + continuing.0.len());
        for s in rest.iter().chain(continuing.0.iter()) {
            let Stmt::Store { place, value } = &s.stmt else {
                return None;
            };
            if !held_in_variables(t, place) {
                return None;
            }
            stores.push((place, *value));
        }
        Some(StraightLine {
            test: *cond,
            exit_when_true,
            stores,
        })
    }
}

/// A place in a local held in variables, reached without an array index.
fn held_in_variables<'ir, T: Target<'ir>>(t: &T, place: &Place) -> bool {
    let PlaceRoot::Local(l) = place.root else {
        return false;
    };
    matches!(t.local(l), Root::Vars(_)) && !place.path.iter().any(|a| matches!(a, Access::Index(_)))
}

/// Runs groups of [`GROUP`] iterations while `iterations + GROUP <= count`; returns a
/// variable that is true where an exit test ended the loop (the single-step fast loop then
/// has nothing left to do).
pub fn grouped_loop<'ir, T: Target<'ir>>(
    t: &mut T,
    line: &StraightLine<'_>,
    count: T::Leaf,
    iterations: T::Var,
) -> Result<T::Var, T::Error> {
    let kind = t.index_kind();
    let bool_kind = ScalarKind::Bool;
    let exited = t.temporary(bool_kind);
    let no = t.literal(Literal::bool(false));
    t.write_var(exited, no);
    let frame = t.begin_loop();
    let done = t.read_var(iterations);
    let group = t.index_constant(GROUP as u64);
    let after = t.binary(BinaryOp::Add, kind, done, group);
    let no_room = t.binary(BinaryOp::Gt, kind, after, count);
    let full = t.begin_if(no_room);
    t.jump_break(frame);
    t.begin_else(&full);
    t.end_if(full);
    let mut alive = t.literal(Literal::bool(true));
    for _ in 0..GROUP {
        alive = predicated_iteration(t, line, alive)?;
    }
    let done = t.read_var(iterations);
    let after = t.binary(BinaryOp::Add, kind, done, group);
    t.write_var(iterations, after);
    let dead = t.unary(UnaryOp::Not, bool_kind, alive);
    let out = t.begin_if(dead);
    let yes = t.literal(Literal::bool(true));
    t.write_var(exited, yes);
    t.jump_break(frame);
    t.begin_else(&out);
    t.end_if(out);
    t.begin_continuing(frame);
    t.end_loop(frame);
    Ok(exited)
}

/// One iteration under the predicate `alive`: its exit test, then its stores, each writing
/// `alive ? new : old`. Returns whether the loop is still going after it.
fn predicated_iteration<'ir, T: Target<'ir>>(
    t: &mut T,
    line: &StraightLine<'_>,
    alive: T::Leaf,
) -> Result<T::Leaf, T::Error> {
    let bool_kind = ScalarKind::Bool;
    t.forget();
    let test = t.scalar(line.test)?;
    let goes_on = if line.exit_when_true {
        t.unary(UnaryOp::Not, bool_kind, test)
    } else {
        test
    };
    let alive = t.binary(BinaryOp::LogicAnd, bool_kind, alive, goes_on);
    for &(place, value) in &line.stores {
        t.forget();
        if !counted_update(t, value) {
            let new = t.expr(value)?;
            let old = place::load_place(t, place)?;
            let kinds = leaves(t.module(), t.expr_type(value));
            let chosen: Vec<T::Leaf> = kinds
                .iter()
                .zip(new.iter().zip(&old))
                .map(|(leaf, (&n, &o))| t.select(leaf.kind, alive, n, o))
                .collect();
            place::store_place(t, place, &chosen)?;
        }
        after_update(t, value);
    }
    t.forget();
    Ok(alive)
}
