//! The structured statement walk, written once over [`Target`]'s control flow: stores, `if`,
//! loops with `break` and `continue`, `return` and barriers.
//!
//! Expression values are memoised for one statement ([`ExprWalk::forget`] between
//! statements), as control flow may change what a load reads.

use super::{place, ExprWalk, Target};
use brook_ir::{Block, Stmt};

/// Lowers `block` where the target stands; `innermost` is the loop that `break` and
/// `continue` leave (none outside loops).
pub fn block<'ir, T: Target<'ir>>(
    t: &mut T,
    block: &Block,
    innermost: Option<T::Loop>,
) -> Result<(), T::Error> {
    let stmts = &block.0;
    let mut at = 0;
    while at < stmts.len() {
        t.forget();
        let run = brook_ir::collective::independent_run(t.kernel(), &stmts[at..]);
        if run.len() > 1 && !t.is_unreachable() {
            t.collectives(&run, innermost.is_some())?;
            at += run.len();
            continue;
        }
        self::statement(t, &stmts[at].stmt, innermost)?;
        at += 1;
    }
    t.forget();
    Ok(())
}

fn statement<'ir, T: Target<'ir>>(
    t: &mut T,
    stmt: &Stmt,
    innermost: Option<T::Loop>,
) -> Result<(), T::Error> {
    // Dead code (after a jump) is not lowered, except where it holds barriers: a target may
    // need each barrier's resume point filled.
    if t.is_unreachable() && count_barriers_in(stmt) == 0 {
        return Ok(());
    }
    match stmt {
        Stmt::Store { place, value } => {
            if !super::induction::counted_update(t, *value) {
                let values = t.expr(*value)?;
                place::store_place(t, place, &values)?;
            }
            super::induction::after_update(t, *value);
        }
        Stmt::If {
            cond,
            accept,
            reject,
        } => {
            let mut c = t.scalar(*cond)?;
            if t.kernel().from_literals(*cond) && (jumps(accept) || jumps(reject)) {
                c = t.unfoldable(c);
            }
            t.if_arms(accept, reject);
            let frame = t.begin_if(c);
            block(t, accept, innermost)?;
            t.begin_else(&frame);
            block(t, reject, innermost)?;
            t.end_if(frame);
        }
        Stmt::Loop { body, continuing } => {
            let plan = super::induction::applies(t)
                .then(|| brook_ir::induction::analyse(t.kernel(), body, continuing))
                .flatten()
                .filter(|plan| {
                    plan.gathers.len() <= t.max_fast_loop_gathers()
                        && super::induction::element_indices(plan) <= super::induction::MAX_GATHERS
                });
            match plan {
                Some(plan) => super::induction::lower_loop(t, body, continuing, &plan)?,
                None => super::induction::plain_loop(t, body, continuing)?,
            }
        }
        Stmt::Break => {
            if let Some(frame) = innermost {
                t.jump_break(frame);
            }
        }
        Stmt::Continue => {
            if let Some(frame) = innermost {
                t.jump_continue(frame);
            }
        }
        Stmt::Return => t.jump_return(),
        Stmt::Barrier => t.barrier(),
        Stmt::Collective(c) => t.collective(c, innermost.is_some())?,
    }
    Ok(())
}

/// Whether a block holds a `return`, `break` or `continue` (at any depth).
fn jumps(block: &Block) -> bool {
    block.iter().any(|s| match &s.stmt {
        Stmt::Return | Stmt::Break | Stmt::Continue => true,
        Stmt::If { accept, reject, .. } => jumps(accept) || jumps(reject),
        Stmt::Loop { body, continuing } => jumps(body) || jumps(continuing),
        _ => false,
    })
}

/// How many barriers a block holds (each is a resume point of a resumable thread).
pub fn count_barriers(block: &Block) -> usize {
    block.iter().map(|s| count_barriers_in(&s.stmt)).sum()
}

fn count_barriers_in(stmt: &Stmt) -> usize {
    match stmt {
        Stmt::Barrier => 1,
        Stmt::If { accept, reject, .. } => count_barriers(accept) + count_barriers(reject),
        Stmt::Loop { body, continuing } => count_barriers(body) + count_barriers(continuing),
        // A collective reaches a target only where it is native (`Target::collective`).
        _ => 0,
    }
}
