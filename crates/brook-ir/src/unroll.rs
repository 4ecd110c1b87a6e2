//! Unrolling counted loops: a `for` whose trip count is known when the kernel is compiled (the
//! taps of a stencil, the inner `k` loop of a blocked matrix multiply) becomes its body written
//! out once per trip, so a backend sees straight-line code with constant indices (which it
//! folds) instead of a loop that tests and branches per trip.
//!
//! The result does exactly what the loop did, in the same order: each copy of the body is
//! followed by the loop's `continuing` statements (the counter's increment), and only the tests,
//! all known to pass but the last, are gone. So the bits of every result are unchanged. In each
//! copy the body reads the counter as the literal it holds on that trip (new expressions,
//! appended to the kernel's arena), so later passes see constants: an index `a[4 * i + 1]`
//! becomes `a[4 * 2 + 1]` on the third trip, which an analysis of index ranges can bound.
//!
//! A loop is counted when:
//! - the statement before it stores an integer literal into a local counter;
//! - its body starts with `if (counter CMP literal) {} else { break }` (the form `for` and
//!   `while` lower to), or the literal on the left;
//! - its `continuing` block only stores into locals, with values computed from literals, the
//!   counter and locals it stored before (`old = i; i = old + 1`);
//! - the rest of the body never stores into the counter or those locals, and has no `break` or
//!   `continue` of this loop (those of loops inside it are theirs);
//! - it runs between 1 and [`MAX_TRIPS`] times, and the copies stay within
//!   [`MAX_UNROLLED_STATEMENTS`] and [`MAX_UNROLLED_WEIGHT`] ([`MAX_UNROLLED_REDUCE_WEIGHT`] in
//!   a reduce kernel).

use crate::arena::Arena;
use crate::expr::{BinaryOp, ExprKind, Literal, Place, PlaceRoot, UnaryOp};
use crate::module::{Kernel, KernelKind, Local, Type};
use crate::stmt::{Block, Statement, Stmt};
use crate::types::ValueType;
use crate::weight::Weigher;
use crate::{Expr, Handle};
use std::collections::HashMap;

/// The most trips a loop is unrolled for.
pub const MAX_TRIPS: u64 = 32;
/// The most statements (counted through nested blocks) the copies of one loop may hold.
pub const MAX_UNROLLED_STATEMENTS: usize = 1024;
/// The most [`crate::weight`] (statements and the expression trees they evaluate) the copies
/// of one loop may have: statements of large expressions multiply code as much as many
/// statements do.
pub const MAX_UNROLLED_WEIGHT: usize = 4096;
/// The same for a reduce kernel, whose body a backend writes out many times (at each level
/// of its reduction trees, in each entry of its module): random reduce kernels of two nested
/// loops unrolled within [`MAX_UNROLLED_WEIGHT`] kept the CUDA driver's JIT busy for minutes.
pub const MAX_UNROLLED_REDUCE_WEIGHT: usize = MAX_UNROLLED_WEIGHT / 16;

/// The kernel with its counted loops unrolled, innermost first; `None` when it has none.
pub fn unroll_counted_loops(kernel: &Kernel) -> Option<Kernel> {
    let mut changed = false;
    let mut exprs = kernel.exprs.clone();
    let budget = match kernel.kind {
        KernelKind::Map => MAX_UNROLLED_WEIGHT,
        KernelKind::Reduce => MAX_UNROLLED_REDUCE_WEIGHT,
    };
    let body = unroll_block(&mut exprs, &kernel.body, budget, &mut changed);
    changed.then(|| Kernel {
        body,
        exprs,
        ..kernel.clone()
    })
}

fn unroll_block(
    exprs: &mut Arena<Expr>,
    block: &Block,
    budget: usize,
    changed: &mut bool,
) -> Block {
    let mut out: Vec<Statement> = Vec::with_capacity(block.0.len());
    for statement in block.iter() {
        let stmt = match &statement.stmt {
            Stmt::If {
                cond,
                accept,
                reject,
            } => Stmt::If {
                cond: *cond,
                accept: unroll_block(exprs, accept, budget, changed),
                reject: unroll_block(exprs, reject, budget, changed),
            },
            Stmt::Loop { body, continuing } => {
                let body = unroll_block(exprs, body, budget, changed);
                let continuing = unroll_block(exprs, continuing, budget, changed);
                let start = out.last().and_then(|before| counter_start(exprs, before));
                let copies = start.and_then(|s| unrolled(exprs, s, (&body, &continuing), budget));
                if let Some(copies) = copies {
                    *changed = true;
                    out.extend(copies);
                    continue;
                }
                Stmt::Loop { body, continuing }
            }
            other => other.clone(),
        };
        out.push(Statement {
            stmt,
            span: statement.span,
        });
    }
    Block(out)
}

/// `counter = literal` before a loop: the counter and its first value.
fn counter_start(exprs: &Arena<Expr>, before: &Statement) -> Option<(Handle<Local>, Literal)> {
    let Stmt::Store { place, value } = &before.stmt else {
        return None;
    };
    let local = plain_local(place)?;
    Some((local, evaluate(exprs, *value, &HashMap::new())?))
}

fn plain_local(place: &Place) -> Option<Handle<Local>> {
    match place.root {
        PlaceRoot::Local(local) if place.path.is_empty() => Some(local),
        _ => None,
    }
}

/// The loop written out once per trip (body then continuing, without the test), or `None`
/// when it is not a counted loop within the limits.
fn unrolled(
    exprs: &mut Arena<Expr>,
    (counter, first): (Handle<Local>, Literal),
    (body, continuing): (&Block, &Block),
    budget: usize,
) -> Option<Vec<Statement>> {
    let (test, rest) = body.0.split_first()?;
    let test = LoopTest::of(exprs, test, counter)?;
    let stepped = stepped_locals(continuing)?;
    if !stepped.contains(&counter) || writes_or_leaves(rest, &stepped) {
        return None;
    }
    let mut values = HashMap::from([(counter, first)]);
    // The counter's value at the start of each trip.
    let mut trips = Vec::new();
    while test.passes(values[&counter])? {
        trips.push(values[&counter]);
        if trips.len() as u64 > MAX_TRIPS {
            return None;
        }
        for statement in continuing.iter() {
            let Stmt::Store { place, value } = &statement.stmt else {
                return None;
            };
            let result = evaluate(exprs, *value, &values)?;
            values.insert(plain_local(place)?, result);
        }
    }
    let per_trip = count_statements(rest) + count_statements(&continuing.0);
    let mut weigher = Weigher::new(exprs);
    let weight = weigher
        .statements(rest)
        .saturating_add(weigher.statements(&continuing.0));
    if trips.is_empty()
        || per_trip * trips.len() > MAX_UNROLLED_STATEMENTS
        || weight.saturating_mul(trips.len()) > budget
    {
        return None;
    }
    let mut copies = Vec::with_capacity(per_trip * trips.len());
    for value in trips {
        let mut at_trip = Substitution::new(exprs, counter, value);
        copies.extend(rest.iter().map(|s| at_trip.statement(s)));
        copies.extend_from_slice(&continuing.0);
    }
    Some(copies)
}

/// Statements rewritten to read a local as a literal (the counter on one trip): expressions
/// that read it are copied with the literal in its place; the others are shared.
struct Substitution<'a> {
    exprs: &'a mut Arena<Expr>,
    counter: Handle<Local>,
    literal: Handle<Expr>,
    copied: HashMap<Handle<Expr>, Handle<Expr>>,
}

impl<'a> Substitution<'a> {
    fn new(exprs: &'a mut Arena<Expr>, counter: Handle<Local>, value: Literal) -> Self {
        let ty = Type::Value(ValueType::scalar(value.kind));
        let literal = exprs.append(
            Expr {
                kind: ExprKind::Literal(value),
                ty,
            },
            crate::expr::NO_SPAN,
        );
        Substitution {
            exprs,
            counter,
            literal,
            copied: HashMap::new(),
        }
    }

    fn expr(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        if let Some(&done) = self.copied.get(&h) {
            return done;
        }
        let original = self.exprs[h].clone();
        let result = match &original.kind {
            ExprKind::Load(place) if plain_local(place) == Some(self.counter) => self.literal,
            kind => {
                let mut changed = false;
                let mapped = kind.map_operands(&mut |operand| {
                    let new = self.expr(operand);
                    changed |= new != operand;
                    new
                });
                if changed {
                    let span = self.exprs.span(h);
                    self.exprs.append(
                        Expr {
                            kind: mapped,
                            ty: original.ty,
                        },
                        span,
                    )
                } else {
                    h
                }
            }
        };
        self.copied.insert(h, result);
        result
    }

    fn block(&mut self, block: &Block) -> Block {
        Block(block.iter().map(|s| self.statement(s)).collect())
    }

    fn statement(&mut self, statement: &Statement) -> Statement {
        let stmt = match &statement.stmt {
            Stmt::Store { place, value } => Stmt::Store {
                place: place.map_operands(&mut |h| self.expr(h)),
                value: self.expr(*value),
            },
            Stmt::If {
                cond,
                accept,
                reject,
            } => Stmt::If {
                cond: self.expr(*cond),
                accept: self.block(accept),
                reject: self.block(reject),
            },
            Stmt::Loop { body, continuing } => Stmt::Loop {
                body: self.block(body),
                continuing: self.block(continuing),
            },
            // A collective's operands are left as they are (it reads the counter then).
            other => other.clone(),
        };
        Statement {
            stmt,
            span: statement.span,
        }
    }
}

/// The loop's test: `counter CMP limit` (or `limit CMP counter`), leaving on false.
struct LoopTest {
    op: BinaryOp,
    limit: Literal,
    counter_on_left: bool,
}

impl LoopTest {
    fn of(exprs: &Arena<Expr>, statement: &Statement, counter: Handle<Local>) -> Option<LoopTest> {
        let Stmt::If {
            cond,
            accept,
            reject,
        } = &statement.stmt
        else {
            return None;
        };
        let leaves = matches!(
            reject.0.as_slice(),
            [Statement {
                stmt: Stmt::Break,
                ..
            }]
        );
        if !accept.is_empty() || !leaves {
            return None;
        }
        let ExprKind::Binary { op, left, right } = exprs[*cond].kind else {
            return None;
        };
        let reads_counter = |h: Handle<Expr>| match &exprs[h].kind {
            ExprKind::Load(place) => plain_local(place) == Some(counter),
            _ => false,
        };
        let literal = |h: Handle<Expr>| match exprs[h].kind {
            ExprKind::Literal(l) if l.kind.is_integer() => Some(l),
            _ => None,
        };
        let (counter_on_left, limit) = if reads_counter(left) {
            (true, literal(right)?)
        } else if reads_counter(right) {
            (false, literal(left)?)
        } else {
            return None;
        };
        Some(LoopTest {
            op,
            limit,
            counter_on_left,
        })
    }

    fn passes(&self, counter: Literal) -> Option<bool> {
        let (a, b) = if self.counter_on_left {
            (counter, self.limit)
        } else {
            (self.limit, counter)
        };
        compare(self.op, a, b)
    }
}

/// The locals `continuing` stores into, when it is only stores into plain locals.
fn stepped_locals(continuing: &Block) -> Option<Vec<Handle<Local>>> {
    continuing
        .iter()
        .map(|statement| match &statement.stmt {
            Stmt::Store { place, .. } => plain_local(place),
            _ => None,
        })
        .collect()
}

/// Whether `statements` store into any of `locals` (through any path) or break out of or
/// continue the loop they are the body of.
fn writes_or_leaves(statements: &[Statement], locals: &[Handle<Local>]) -> bool {
    statements.iter().any(|s| match &s.stmt {
        Stmt::Store { place, .. } => {
            matches!(place.root, PlaceRoot::Local(l) if locals.contains(&l))
        }
        Stmt::Break | Stmt::Continue => true,
        Stmt::If { accept, reject, .. } => {
            writes_or_leaves(&accept.0, locals) || writes_or_leaves(&reject.0, locals)
        }
        // A loop inside owns its breaks and continues; its stores still count.
        Stmt::Loop { body, continuing } => {
            stores_into(&body.0, locals) || stores_into(&continuing.0, locals)
        }
        Stmt::Collective(c) => locals.contains(&c.result),
        Stmt::Return | Stmt::Barrier => false,
    })
}

fn stores_into(statements: &[Statement], locals: &[Handle<Local>]) -> bool {
    statements.iter().any(|s| match &s.stmt {
        Stmt::Store { place, .. } => {
            matches!(place.root, PlaceRoot::Local(l) if locals.contains(&l))
        }
        Stmt::If { accept, reject, .. } => {
            stores_into(&accept.0, locals) || stores_into(&reject.0, locals)
        }
        Stmt::Loop { body, continuing } => {
            stores_into(&body.0, locals) || stores_into(&continuing.0, locals)
        }
        Stmt::Collective(c) => locals.contains(&c.result),
        Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier => false,
    })
}

fn count_statements(statements: &[Statement]) -> usize {
    statements
        .iter()
        .map(|s| {
            1 + match &s.stmt {
                Stmt::If { accept, reject, .. } => {
                    count_statements(&accept.0) + count_statements(&reject.0)
                }
                Stmt::Loop { body, continuing } => {
                    count_statements(&body.0) + count_statements(&continuing.0)
                }
                _ => 0,
            }
        })
        .sum()
}

/// The value of an integer expression built from literals, known locals, negation, `+`, `-`
/// and `*`.
fn evaluate(
    exprs: &Arena<Expr>,
    h: Handle<Expr>,
    values: &HashMap<Handle<Local>, Literal>,
) -> Option<Literal> {
    let expr = &exprs[h];
    let kind = match expr.ty {
        Type::Value(v) if v.width == 1 && v.kind.is_integer() => v.kind,
        _ => return None,
    };
    match &expr.kind {
        ExprKind::Literal(literal) => Some(*literal),
        ExprKind::Load(place) => values.get(&plain_local(place)?).copied(),
        ExprKind::Unary {
            op: UnaryOp::Neg,
            arg,
        } => {
            let a = evaluate(exprs, *arg, values)?.bits as i64;
            Some(Literal::int(kind, a.wrapping_neg()))
        }
        ExprKind::Binary { op, left, right } => {
            let a = evaluate(exprs, *left, values)?.bits as i64;
            let b = evaluate(exprs, *right, values)?.bits as i64;
            let value = match op {
                BinaryOp::Add => a.wrapping_add(b),
                BinaryOp::Sub => a.wrapping_sub(b),
                BinaryOp::Mul => a.wrapping_mul(b),
                _ => return None,
            };
            Some(Literal::int(kind, value))
        }
        _ => None,
    }
}

/// `a OP b` for two integers of one kind (signed or unsigned as the kind says).
fn compare(op: BinaryOp, a: Literal, b: Literal) -> Option<bool> {
    if a.kind != b.kind || !a.kind.is_integer() {
        return None;
    }
    let ordering = if a.kind.is_signed() {
        (a.bits as i64).cmp(&(b.bits as i64))
    } else {
        a.bits.cmp(&b.bits)
    };
    use std::cmp::Ordering::*;
    Some(match op {
        BinaryOp::Lt => ordering == Less,
        BinaryOp::Le => ordering != Greater,
        BinaryOp::Gt => ordering == Greater,
        BinaryOp::Ge => ordering != Less,
        BinaryOp::Eq => ordering == Equal,
        BinaryOp::Ne => ordering != Equal,
        _ => return None,
    })
}
