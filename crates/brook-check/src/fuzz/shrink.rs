//! The minimiser: drops statements, replaces `if`s and loops by their bodies and expressions by
//! a part of the same type or zero, keeping each change while the kernel still fails the same
//! way (same kind, same device; or, for a kernel that kills or hangs its process, while a
//! process of its own running it dies the same way), until no change helps or the budget of
//! tries is spent.

use super::ast::{all_exprs, replace_expr, Expr, Stmt};
use super::gen::zero;
use super::{check, Finding, Generated};
use brook::Device;

/// A smaller kernel that fails like `finding`, trying at most `tries` candidates.
pub fn minimise(
    generated: &Generated,
    finding: &Finding,
    devices: &[Device],
    tries: usize,
) -> Generated {
    minimise_while(generated, tries, |candidate| {
        check(candidate, devices).is_some_and(|f| f.same_as(finding))
    })
}

/// A smaller kernel for which `still_fails` holds (it holds for `generated`), trying at most
/// `tries` candidates: the minimiser of findings, and of kernels that kill or hang the
/// process that runs them (`still_fails` runs each candidate in a process of its own).
pub fn minimise_while(
    generated: &Generated,
    tries: usize,
    mut holds: impl FnMut(&Generated) -> bool,
) -> Generated {
    let mut best = generated.clone();
    let left = std::cell::Cell::new(tries);
    let mut still_fails = |candidate: &Generated| -> bool {
        if left.get() == 0 {
            return false;
        }
        left.set(left.get() - 1);
        holds(candidate)
    };
    loop {
        let mut changed = false;
        // Statements, last first: later statements depend on earlier ones.
        let count = count_stmts(&best.body);
        for n in (0..count).rev() {
            for unwrap in [false, true] {
                let mut candidate = best.clone();
                if edit_stmt(&mut candidate.body, &mut { n }, unwrap) && still_fails(&candidate) {
                    best = candidate;
                    changed = true;
                    break;
                }
            }
        }
        // Expressions, outermost first.
        let mut n = 0;
        while n < all_exprs(&best.body).len() {
            let exprs = all_exprs(&best.body);
            for replacement in smaller(&exprs[n]) {
                let mut candidate = best.clone();
                replace_expr(&mut candidate.body, n, &replacement);
                if still_fails(&candidate) {
                    best = candidate;
                    changed = true;
                    break;
                }
            }
            n += 1;
        }
        if !changed || left.get() == 0 {
            return best;
        }
    }
}

/// Smaller expressions of the same type: the children of that type, then zero.
fn smaller(e: &Expr) -> Vec<Expr> {
    if matches!(e, Expr::Lit(..)) {
        return Vec::new();
    }
    let ty = e.ty();
    let mut out: Vec<Expr> = e
        .children()
        .into_iter()
        .filter(|c| c.ty() == ty)
        .cloned()
        .collect();
    out.push(zero(ty));
    out
}

fn count_stmts(stmts: &[Stmt]) -> usize {
    stmts
        .iter()
        .map(|s| {
            1 + match s {
                Stmt::If(_, a, b) => count_stmts(a) + count_stmts(b),
                Stmt::For(_, _, body) | Stmt::While(_, _, body) | Stmt::DoWhile(_, _, body) => {
                    count_stmts(body)
                }
                Stmt::Walk(w) => count_stmts(&w.body),
                _ => 0,
            }
        })
        .sum()
}

/// Removes (or, with `unwrap`, replaces by its first block) the statement at pre-order
/// position `n`; false when there is nothing to do there (a fixed line, a statement without a
/// block to unwrap).
fn edit_stmt(stmts: &mut Vec<Stmt>, n: &mut usize, unwrap: bool) -> bool {
    let mut i = 0;
    while i < stmts.len() {
        if *n == 0 {
            if matches!(stmts[i], Stmt::Fixed(_)) {
                return false;
            }
            if !unwrap {
                stmts.remove(i);
                return true;
            }
            let inner = match &mut stmts[i] {
                Stmt::If(_, a, _) => std::mem::take(a),
                Stmt::For(_, _, body) | Stmt::While(_, _, body) | Stmt::DoWhile(_, _, body) => {
                    std::mem::take(body)
                }
                Stmt::Walk(w) => std::mem::take(&mut w.body),
                _ => return false,
            };
            stmts.splice(i..=i, inner);
            return true;
        }
        *n -= 1;
        for block in stmts[i].blocks_mut() {
            let before = count_stmts(block);
            if *n < before {
                return edit_stmt(block, n, unwrap);
            }
            *n -= before;
        }
        i += 1;
    }
    false
}
