//! IR statements: structured control flow over stores.
//!
//! The only side effect is [`Stmt::Store`]. Control flow is structured: `if`, `loop` (with a
//! `continuing` block run after the body and after `continue`, which may `break`), `break`,
//! `continue`, `return` (ends the invocation) and `barrier` (`syncGroup()`, only in kernels with
//! a thread group). This maps directly onto PTX labels, Cranelift blocks and a tree walker.
//! A thread-group collective ([`crate::collective`]) is one statement too: a backend lowers it
//! natively or has [`crate::collective::expand`] rewrite it into stores and barriers.

use crate::arena::{Handle, SourceSpan};
use crate::expr::{Expr, Place};

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Block(pub Vec<Statement>);

impl Block {
    pub fn new() -> Self {
        Block(Vec::new())
    }

    pub fn push(&mut self, stmt: Stmt, span: SourceSpan) {
        self.0.push(Statement { stmt, span });
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Statement> {
        self.0.iter()
    }

    /// Whether every run of the block stores a whole value into output `param` (a store of
    /// the element itself at the block's top level, no `return` before it): then no
    /// element keeps its previous contents. False where unsure (a store under a branch or
    /// of one component, a `return` that may come first).
    pub fn always_stores_output(&self, param: crate::ParamId) -> bool {
        for statement in self.iter() {
            match &statement.stmt {
                Stmt::Store { place, .. }
                    if place.root == crate::PlaceRoot::Output(param) && place.path.is_empty() =>
                {
                    return true;
                }
                other if other.may_return() => return false,
                _ => {}
            }
        }
        false
    }

    /// Adds every expression a statement of the block evaluates directly (place indices,
    /// stored values, conditions) to `out`; false where a collective (whose combining body
    /// this does not follow) makes that unknown.
    pub fn expr_roots(&self, out: &mut Vec<Handle<Expr>>) -> bool {
        self.iter().all(|s| s.stmt.expr_roots(out))
    }
}

impl Stmt {
    /// Whether the statement may end the invocation (a `return` in it or in a block it holds).
    pub fn may_return(&self) -> bool {
        match self {
            Stmt::Return => true,
            Stmt::If { accept, reject, .. } => {
                accept.iter().any(|s| s.stmt.may_return())
                    || reject.iter().any(|s| s.stmt.may_return())
            }
            Stmt::Loop { body, continuing } => {
                body.iter().any(|s| s.stmt.may_return())
                    || continuing.iter().any(|s| s.stmt.may_return())
            }
            Stmt::Collective(_) => true,
            Stmt::Store { .. } | Stmt::Break | Stmt::Continue | Stmt::Barrier => false,
        }
    }

    /// [`Block::expr_roots`] of one statement (and the blocks it holds).
    pub fn expr_roots(&self, out: &mut Vec<Handle<Expr>>) -> bool {
        match self {
            Stmt::Store { place, value } => {
                out.extend(place.operands());
                out.push(*value);
                true
            }
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                out.push(*cond);
                accept.expr_roots(out) && reject.expr_roots(out)
            }
            Stmt::Loop { body, continuing } => body.expr_roots(out) && continuing.expr_roots(out),
            Stmt::Collective(_) => false,
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier => true,
        }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Statement {
    pub stmt: Stmt,
    pub span: SourceSpan,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Stmt {
    /// Evaluates `value`, then writes it to `place` (whose indices are evaluated first).
    Store {
        place: Place,
        value: Handle<Expr>,
    },
    If {
        cond: Handle<Expr>,
        accept: Block,
        reject: Block,
    },
    /// Runs `body` then `continuing` until a `break`. `continue` in the body jumps to
    /// `continuing`; a `break` in `continuing` leaves the loop.
    Loop {
        body: Block,
        continuing: Block,
    },
    Break,
    Continue,
    /// Ends the invocation; outputs not written keep their previous contents.
    Return,
    /// Waits until every live thread of the group reaches a barrier (`syncGroup()`). A thread
    /// that has returned no longer takes part, so a barrier never hangs.
    Barrier,
    /// A reduce or scan across the lanes of the thread group ([`crate::collective`]); every
    /// live thread of the group takes part, as at a barrier.
    Collective(Box<crate::collective::Collective>),
}
