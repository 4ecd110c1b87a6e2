//! Statements after an `if` one of whose arms always jumps (`break`, `continue`, `return`)
//! moved into its other arm: the same program, with the jump at the end of its construct.
//!
//! An inlined subkernel call with an early `return` is a loop whose body breaks from an `if`
//! and again at its end; moved this way, the early `break` ends its arm, nothing after it
//! needs the flag and guard a `break` in the middle of a run-once body costs
//! ([`super::lower`]), and thousands of inlined calls stay a tree of plain `if`s (lavapipe
//! compiled the guarded form of 8,192 such calls in 110 s). Statements holding a barrier are
//! not moved into an arm: a barrier stays where every thread of its group reaches it.

use crate::lower::count_barriers;
use brook_ir::{Block, Kernel, Statement, Stmt};
use std::borrow::Cow;

/// `kernel` with its statements sunk, borrowed when nothing moves.
pub fn after_jumps(kernel: &Kernel) -> Cow<'_, Kernel> {
    let (body, moved) = sink(kernel.body.0.clone());
    if !moved {
        return Cow::Borrowed(kernel);
    }
    let mut sunk = kernel.clone();
    sunk.body = Block(body);
    Cow::Owned(sunk)
}

/// Whether a block always ends in a jump.
pub fn ends_in_jump(block: &[Statement]) -> bool {
    match block.last().map(|s| &s.stmt) {
        Some(Stmt::Break | Stmt::Continue | Stmt::Return) => true,
        Some(Stmt::If { accept, reject, .. }) => ends_in_jump(&accept.0) && ends_in_jump(&reject.0),
        _ => false,
    }
}

/// A block's statements sunk, and whether any moved.
fn sink(statements: Vec<Statement>) -> (Vec<Statement>, bool) {
    let mut out = Vec::with_capacity(statements.len());
    let mut moved = false;
    let mut rest = statements.into_iter();
    while let Some(statement) = rest.next() {
        let span = statement.span;
        match statement.stmt {
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                let (mut accept, a) = sink(accept.0);
                let (mut reject, b) = sink(reject.0);
                moved |= a || b;
                let after: Vec<Statement> = rest.by_ref().collect();
                let movable = !after.is_empty() && count_barriers(&Block(after.clone())) == 0;
                let (accept_jumps, reject_jumps) = (ends_in_jump(&accept), ends_in_jump(&reject));
                let (after, tail) = if movable && accept_jumps != reject_jumps {
                    let (after, _) = sink(after);
                    moved = true;
                    (Vec::new(), after)
                } else {
                    (after, Vec::new())
                };
                if accept_jumps {
                    reject.extend(tail);
                } else {
                    accept.extend(tail);
                }
                out.push(Statement {
                    stmt: Stmt::If {
                        cond,
                        accept: Block(accept),
                        reject: Block(reject),
                    },
                    span,
                });
                rest = after.into_iter();
            }
            Stmt::Loop { body, continuing } => {
                let (body, a) = sink(body.0);
                let (continuing, b) = sink(continuing.0);
                moved |= a || b;
                out.push(Statement {
                    stmt: Stmt::Loop {
                        body: Block(body),
                        continuing: Block(continuing),
                    },
                    span,
                });
            }
            stmt => out.push(Statement { stmt, span }),
        }
    }
    (out, moved)
}
