//! Whether two pieces of one kernel compute the same thing up to the names of their locals:
//! the same statements and expressions, their locals paired one to one (a function inlined
//! twice, as a LOOM kernel's blocks of one thread group each inline the combining function of
//! their reduce). A backend may then run either piece in place of the other.

use crate::arena::Handle;
use crate::expr::{Access, Expr, ExprKind, Place, PlaceRoot};
use crate::module::{Kernel, Local};
use crate::stmt::{Block, Stmt};
use std::collections::HashMap;

/// A pairing of one piece's locals with the other's, grown as the pieces are compared. Only
/// the pieces' own locals pair (`own`: those each piece writes, and any named up front); a
/// local from outside must be the same local in both.
pub struct Renaming<'k> {
    kernel: &'k Kernel,
    own: Vec<Handle<Local>>,
    there: HashMap<Handle<Local>, Handle<Local>>,
    back: HashMap<Handle<Local>, Handle<Local>>,
}

impl<'k> Renaming<'k> {
    /// A pairing in which the locals of `own` (both pieces' own locals) may be renamed.
    pub fn new(kernel: &'k Kernel, own: Vec<Handle<Local>>) -> Self {
        Renaming {
            kernel,
            own,
            there: HashMap::new(),
            back: HashMap::new(),
        }
    }

    /// Pairs `a` with `b`: true when neither is paired with another and both have one type;
    /// a local not of the pieces' own pairs only with itself.
    pub fn local(&mut self, a: Handle<Local>, b: Handle<Local>) -> bool {
        if !self.own.contains(&a) || !self.own.contains(&b) {
            return a == b;
        }
        let (la, lb) = (&self.kernel.locals[a], &self.kernel.locals[b]);
        if la.ty != lb.ty || la.shared != lb.shared {
            return false;
        }
        match (self.there.get(&a), self.back.get(&b)) {
            (Some(&x), Some(&y)) => x == b && y == a,
            (None, None) => {
                self.there.insert(a, b);
                self.back.insert(b, a);
                true
            }
            _ => false,
        }
    }

    pub fn block(&mut self, a: &Block, b: &Block) -> bool {
        a.0.len() == b.0.len()
            && a.iter()
                .zip(b.iter())
                .all(|(x, y)| self.stmt(&x.stmt, &y.stmt))
    }

    fn stmt(&mut self, a: &Stmt, b: &Stmt) -> bool {
        match (a, b) {
            (
                Stmt::Store { place, value },
                Stmt::Store {
                    place: p2,
                    value: v2,
                },
            ) => self.place(place, p2) && self.expr(*value, *v2),
            (
                Stmt::If {
                    cond,
                    accept,
                    reject,
                },
                Stmt::If {
                    cond: c2,
                    accept: a2,
                    reject: r2,
                },
            ) => self.expr(*cond, *c2) && self.block(accept, a2) && self.block(reject, r2),
            (
                Stmt::Loop { body, continuing },
                Stmt::Loop {
                    body: b2,
                    continuing: c2,
                },
            ) => self.block(body, b2) && self.block(continuing, c2),
            (Stmt::Break, Stmt::Break)
            | (Stmt::Continue, Stmt::Continue)
            | (Stmt::Return, Stmt::Return)
            | (Stmt::Barrier, Stmt::Barrier) => true,
            _ => false,
        }
    }

    fn place(&mut self, a: &Place, b: &Place) -> bool {
        let roots = match (&a.root, &b.root) {
            (PlaceRoot::Local(x), PlaceRoot::Local(y)) => self.local(*x, *y),
            (PlaceRoot::Output(x), PlaceRoot::Output(y)) => x == y,
            (PlaceRoot::Scatter { param: x, .. }, PlaceRoot::Scatter { param: y, .. }) => x == y,
            _ => false,
        };
        let paths = a.path.len() == b.path.len()
            && a.path.iter().zip(&b.path).all(|pair| match pair {
                (Access::Index(_), Access::Index(_)) => true,
                (x, y) => x == y,
            });
        roots && paths && self.operands(&a.operands(), &b.operands())
    }

    /// Whether expressions `a` and `b` compute the same value under the pairing.
    pub fn expr(&mut self, a: Handle<Expr>, b: Handle<Expr>) -> bool {
        let (ea, eb) = (&self.kernel.exprs[a], &self.kernel.exprs[b]);
        if ea.ty != eb.ty {
            return false;
        }
        let alike = match (&ea.kind, &eb.kind) {
            (ExprKind::Load(x), ExprKind::Load(y)) => return self.place(x, y),
            (ExprKind::Literal(x), ExprKind::Literal(y)) => x == y,
            (ExprKind::Input(x), ExprKind::Input(y))
            | (ExprKind::Constant(x), ExprKind::Constant(y))
            | (ExprKind::IndexOf(x), ExprKind::IndexOf(y))
            | (ExprKind::Gather { param: x, .. }, ExprKind::Gather { param: y, .. }) => x == y,
            (ExprKind::Field { index: x, .. }, ExprKind::Field { index: y, .. }) => x == y,
            (ExprKind::Component { index: x, .. }, ExprKind::Component { index: y, .. }) => x == y,
            (ExprKind::Swizzle { pattern: x, .. }, ExprKind::Swizzle { pattern: y, .. }) => x == y,
            (ExprKind::Unary { op: x, .. }, ExprKind::Unary { op: y, .. }) => x == y,
            (ExprKind::Binary { op: x, .. }, ExprKind::Binary { op: y, .. }) => x == y,
            (ExprKind::Math { fun: x, .. }, ExprKind::Math { fun: y, .. }) => x == y,
            (x, y) => std::mem::discriminant(x) == std::mem::discriminant(y),
        };
        alike && self.operands(&ea.kind.operands(), &eb.kind.operands())
    }

    fn operands(&mut self, a: &[Handle<Expr>], b: &[Handle<Expr>]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| self.expr(x, y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::KernelBuilder;
    use crate::expr::{BinaryOp, NO_SPAN};
    use crate::module::{KernelKind, Type};
    use crate::types::{ScalarKind, ValueType};

    /// `out = left op right` with fresh locals, twice; `out` of the second compared.
    fn two(op_a: BinaryOp, op_b: BinaryOp) -> bool {
        let float = Type::Value(ValueType::scalar(ScalarKind::F32));
        let mut b = KernelBuilder::new();
        let piece = |b: &mut KernelBuilder, op| {
            let [l, r, o] = ["l", "r", "o"].map(|n| b.new_local(n, float.clone(), false, NO_SPAN));
            b.open_block();
            let (x, y) = (
                b.load(Place::local(l), NO_SPAN),
                b.load(Place::local(r), NO_SPAN),
            );
            let v = b.binary(op, x, y, NO_SPAN);
            b.store(Place::local(o), v, NO_SPAN);
            ([l, r, o], b.close_block())
        };
        let (la, ba) = piece(&mut b, op_a);
        let (lb, bb) = piece(&mut b, op_b);
        let kernel = b.finish("k".into(), KernelKind::Map, None, NO_SPAN);
        let mut renaming = Renaming::new(&kernel, la.iter().chain(&lb).copied().collect());
        la.iter().zip(&lb).all(|(&x, &y)| renaming.local(x, y)) && renaming.block(&ba, &bb)
    }

    #[test]
    fn a_function_inlined_twice_is_the_same_up_to_its_locals() {
        assert!(two(BinaryOp::Add, BinaryOp::Add));
        assert!(!two(BinaryOp::Add, BinaryOp::Mul));
    }

    #[test]
    fn a_local_pairs_with_one_other_only() {
        let float = Type::Value(ValueType::scalar(ScalarKind::F32));
        let mut b = KernelBuilder::new();
        let [x, y, z] = ["x", "y", "z"].map(|n| b.new_local(n, float.clone(), false, NO_SPAN));
        let kernel = b.finish("k".into(), KernelKind::Map, None, NO_SPAN);
        let mut renaming = Renaming::new(&kernel, vec![x, y, z]);
        assert!(renaming.local(x, y));
        assert!(renaming.local(x, y));
        assert!(!renaming.local(x, z), "x is paired with y");
        assert!(!renaming.local(z, y), "y is paired with x");
        let mut outside = Renaming::new(&kernel, vec![x, y]);
        assert!(!outside.local(x, z), "z is not the pieces' own");
        assert!(outside.local(z, z));
    }
}
