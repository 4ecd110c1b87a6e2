//! How much code statements stand for: each statement once, plus the expression trees it
//! evaluates, a sub-expression counted at each use (backends evaluate a shared expression
//! where it is used). Decisions that multiply code (unrolling loops, several instances a
//! thread) bound this weight, so a kernel's generated code stays within what a backend's own
//! compiler handles in reasonable time (the CUDA driver's JIT took two minutes on a kernel of
//! 63,000 PTX lines that unrolling and four instances a thread had made from 16 lines).
//!
//! Weights saturate at `usize::MAX`: an expression DAG's tree size can grow exponentially
//! with its depth.

use crate::arena::{Arena, Handle};
use crate::expr::Expr;
use crate::stmt::{Statement, Stmt};
use std::collections::HashMap;

/// Weighs statements of one kernel's expression arena (each expression's tree size computed
/// once).
pub struct Weigher<'k> {
    exprs: &'k Arena<Expr>,
    sizes: HashMap<Handle<Expr>, usize>,
}

impl<'k> Weigher<'k> {
    pub fn new(exprs: &'k Arena<Expr>) -> Self {
        Weigher {
            exprs,
            sizes: HashMap::new(),
        }
    }

    /// The weight of `statements` and the blocks they hold (a collective counts as one
    /// statement: its combining body is the backend's).
    pub fn statements(&mut self, statements: &[Statement]) -> usize {
        statements.iter().fold(0usize, |total, s| {
            let mut roots = Vec::new();
            let nested = match &s.stmt {
                Stmt::If { accept, reject, .. } => self
                    .statements(&accept.0)
                    .saturating_add(self.statements(&reject.0)),
                Stmt::Loop { body, continuing } => self
                    .statements(&body.0)
                    .saturating_add(self.statements(&continuing.0)),
                _ => 0,
            };
            let own = match &s.stmt {
                Stmt::If { cond, .. } => self.expr(*cond),
                Stmt::Loop { .. } | Stmt::Collective(_) => 0,
                stmt => {
                    stmt.expr_roots(&mut roots);
                    roots
                        .iter()
                        .fold(0usize, |sum, &h| sum.saturating_add(self.expr(h)))
                }
            };
            total
                .saturating_add(1)
                .saturating_add(own)
                .saturating_add(nested)
        })
    }

    /// The tree size of expression `root`: 1 plus its operands' sizes (iteratively, since
    /// expressions may nest tens of thousands deep).
    pub fn expr(&mut self, root: Handle<Expr>) -> usize {
        let mut stack = vec![(root, false)];
        while let Some((h, operands_done)) = stack.pop() {
            if self.sizes.contains_key(&h) {
                continue;
            }
            let operands = self.exprs[h].kind.operands();
            if operands_done {
                let size = operands.iter().fold(1usize, |sum, o| {
                    sum.saturating_add(self.sizes.get(o).copied().unwrap_or(0))
                });
                self.sizes.insert(h, size);
            } else {
                stack.push((h, true));
                stack.extend(operands.into_iter().map(|o| (o, false)));
            }
        }
        self.sizes[&root]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{BinaryOp, ExprKind, Literal};
    use crate::module::Type;
    use crate::types::{ScalarKind, ValueType};

    #[test]
    fn a_shared_expression_counts_at_each_use_and_deep_sharing_saturates() {
        let mut exprs = Arena::new();
        let ty = Type::Value(ValueType::scalar(ScalarKind::I32));
        let literal = ExprKind::Literal(Literal::int(ScalarKind::I32, 1));
        let mut e = exprs.append(
            Expr {
                kind: literal,
                ty: ty.clone(),
            },
            Default::default(),
        );
        assert_eq!(Weigher::new(&exprs).expr(e), 1);
        for _ in 0..80 {
            let kind = ExprKind::Binary {
                op: BinaryOp::Add,
                left: e,
                right: e,
            };
            e = exprs.append(
                Expr {
                    kind,
                    ty: ty.clone(),
                },
                Default::default(),
            );
        }
        let first_sum = Handle::from_index(1);
        assert_eq!(Weigher::new(&exprs).expr(first_sum), 3);
        assert_eq!(
            Weigher::new(&exprs).expr(e),
            usize::MAX,
            "2^81 - 1 nodes as a tree"
        );
    }
}
