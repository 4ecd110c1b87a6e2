//! An inlined body's early returns as branches.
//!
//! A frontend inlines a function into a loop that its `return`s leave with `break`. Most
//! bodies need no loop: `if (c) return x; rest` is `if (c) { x } else { rest }`. [`flatten`]
//! rewrites a body that way where it can without copying code: a `break` leaves the body at
//! its top level, or from an `if` one of whose branches always leaves, so the statements after
//! the `if` move into its other branch. A `break` under a nested loop, or an `if` whose both
//! branches may fall through and one may leave, keeps the loop (moving the rest into both
//! branches would copy it). Thousands of inlined calls with early returns so stay free of
//! loops, which some drivers' compilers (NVIDIA's Vulkan compiler) take minutes over.

use crate::stmt::{Block, Statement, Stmt};

/// The statements of a body run inside a loop that its `break`s leave (and that ends after
/// one pass), as statements without that loop; the body back where that needs copying code.
/// A body holding a barrier or a collective (which every thread of a group must meet in the
/// same place) loses only `break`s at its top level: none is moved into a branch.
pub fn flatten(body: Block) -> Result<Vec<Statement>, Block> {
    let meets = body.iter().any(|s| holds_meeting(&s.stmt));
    match without_breaks(body.0.clone(), meets) {
        Some(statements) => Ok(statements),
        None => Err(body),
    }
}

/// `statements` (a run that ends where the loop ends) with every `break` leaving the loop
/// turned into falling through to the end; `None` where that would copy statements, or
/// move them into a branch where the body `meets` at barriers.
fn without_breaks(mut statements: Vec<Statement>, meets: bool) -> Option<Vec<Statement>> {
    let mut done = Vec::with_capacity(statements.len());
    let mut rest = statements.drain(..);
    while let Some(statement) = rest.next() {
        if !leaves(&statement.stmt) {
            done.push(statement);
            continue;
        }
        let Statement { stmt, span } = statement;
        let Stmt::If {
            cond,
            accept,
            reject,
        } = stmt
        else {
            // A `break` at this level: what follows never runs.
            return Some(done);
        };
        if meets {
            return None;
        }
        let after: Vec<Statement> = rest.collect();
        let (accept, reject) = if after.is_empty() {
            (accept.0, reject.0)
        } else if always_leaves(&accept) {
            (accept.0, joined(reject, after))
        } else if always_leaves(&reject) {
            (joined(accept, after), reject.0)
        } else {
            return None;
        };
        done.push(Statement {
            stmt: Stmt::If {
                cond,
                accept: Block(without_breaks(accept, meets)?),
                reject: Block(without_breaks(reject, meets)?),
            },
            span,
        });
        return Some(done);
    }
    Some(done)
}

fn joined(block: Block, after: Vec<Statement>) -> Vec<Statement> {
    let mut statements = block.0;
    statements.extend(after);
    statements
}

/// Whether a statement holds a `break` that leaves the loop around it (one not inside a
/// nested loop of its own).
pub(crate) fn leaves(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Break => true,
        Stmt::If { accept, reject, .. } => {
            accept.iter().chain(reject.iter()).any(|s| leaves(&s.stmt))
        }
        _ => false,
    }
}

/// Whether every run of `block` leaves the loop around it.
fn always_leaves(block: &Block) -> bool {
    block.iter().any(|s| match &s.stmt {
        Stmt::Break => true,
        Stmt::If { accept, reject, .. } => always_leaves(accept) && always_leaves(reject),
        _ => false,
    })
}

/// Whether a statement holds a barrier or a collective, where every thread of a group meets.
fn holds_meeting(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Barrier | Stmt::Collective(_) => true,
        Stmt::If { accept, reject, .. } => accept
            .iter()
            .chain(reject.iter())
            .any(|s| holds_meeting(&s.stmt)),
        Stmt::Loop { body, continuing } => body
            .iter()
            .chain(continuing.iter())
            .any(|s| holds_meeting(&s.stmt)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::{Handle, SourceSpan};

    fn at(stmt: Stmt) -> Statement {
        Statement {
            stmt,
            span: SourceSpan::default(),
        }
    }

    fn cond() -> Handle<crate::expr::Expr> {
        Handle::from_index(0)
    }

    fn iff(accept: Vec<Statement>, reject: Vec<Statement>) -> Statement {
        at(Stmt::If {
            cond: cond(),
            accept: Block(accept),
            reject: Block(reject),
        })
    }

    /// A store standing for any statement, told apart by `n`.
    fn work(n: u32) -> Statement {
        at(Stmt::Loop {
            body: Block(vec![at(Stmt::Continue); n as usize]),
            continuing: Block(vec![at(Stmt::Break)]),
        })
    }

    #[test]
    fn an_early_return_takes_the_rest_into_its_other_branch() {
        // if (c) { a; return } b; return  ==>  if (c) { a } else { b }
        let body = vec![
            iff(vec![work(1), at(Stmt::Break)], vec![]),
            work(2),
            at(Stmt::Break),
        ];
        assert_eq!(
            flatten(Block(body)),
            Ok(vec![iff(vec![work(1)], vec![work(2)])])
        );
    }

    #[test]
    fn a_return_in_the_else_branch_and_nested_ifs() {
        // if (c) { a } else { if (c) return; b; return } d  ==>
        // if (c) { a; d } else { if (c) {} else { b } }
        let inner = vec![iff(vec![at(Stmt::Break)], vec![]), work(2), at(Stmt::Break)];
        let body = vec![iff(vec![work(1)], inner), work(4), at(Stmt::Break)];
        assert_eq!(
            flatten(Block(body)),
            Ok(vec![iff(
                vec![work(1), work(4)],
                vec![iff(vec![], vec![work(2)])]
            )])
        );
    }

    #[test]
    fn statements_after_a_return_are_dropped() {
        let body = vec![work(1), at(Stmt::Break), work(2)];
        assert_eq!(flatten(Block(body)), Ok(vec![work(1)]));
    }

    #[test]
    fn a_return_that_would_copy_the_rest_keeps_the_loop() {
        // if (c) { if (c) return; } b: `b` would go into both branches.
        let body = Block(vec![
            iff(vec![iff(vec![at(Stmt::Break)], vec![])], vec![work(1)]),
            work(2),
            at(Stmt::Break),
        ]);
        assert_eq!(flatten(body.clone()), Err(body));
    }

    #[test]
    fn a_barrier_keeps_the_loop_around_an_early_return() {
        let body = Block(vec![
            iff(vec![at(Stmt::Break)], vec![]),
            at(Stmt::Barrier),
            at(Stmt::Break),
        ]);
        assert_eq!(flatten(body.clone()), Err(body));
    }

    #[test]
    fn a_barrier_with_one_return_at_the_end_needs_no_loop() {
        let body = vec![work(1), at(Stmt::Barrier), work(2), at(Stmt::Break)];
        assert_eq!(
            flatten(Block(body)),
            Ok(vec![work(1), at(Stmt::Barrier), work(2)])
        );
    }

    #[test]
    fn a_break_of_a_nested_loop_stays() {
        let nested = at(Stmt::Loop {
            body: Block(vec![iff(vec![at(Stmt::Break)], vec![])]),
            continuing: Block::new(),
        });
        let body = vec![nested.clone(), at(Stmt::Break)];
        assert_eq!(flatten(Block(body)), Ok(vec![nested]));
    }
}
