//! Gathers that walk an array along a loop's float induction variables, found for the
//! compiled devices' fast loop (seed 001's gather matrix multiply: `A[index.zw]`,
//! `B[index.xy]` with `index += step` once an iteration).
//!
//! An **induction variable** of a loop is a `float` local (scalar or vector) stored exactly
//! once in the loop, outside any loop nested in it, as `v = v + step` or `v = v - step` (or
//! `step + v`) where `step` is **loop-invariant**: literals, constants, inputs, positions,
//! and loads of locals the loop never stores, combined by pure operations. So `v` moves by
//! the same step at most once an iteration.
//!
//! An **induction gather** is a gather in the loop (at any depth) each of whose indices is a
//! component of an induction variable or loop-invariant, at least one of them a component.
//! While every component it reads holds an integer in its axis and below 2^24, its element
//! index moves by the same amount at every update (`floor(f + 0.25)` of an exact integer is
//! the integer, no clamp applies, float additions of such integers are exact). A backend
//! checks that at the loop's entry and bounds the iterations for which it stays so; then it
//! may keep the element index in an integer variable stepped at the update
//! (`brook_codegen::lower::induction`). Nothing here changes what a kernel computes.

use crate::{
    Access, BinaryOp, Block, Expr, ExprKind, Handle, Kernel, Local, ParamId, PlaceRoot, ScalarKind,
    Stmt, Type,
};
use std::collections::HashSet;

/// The induction variables and gathers of one loop.
#[derive(Clone, Debug, PartialEq)]
pub struct InductionLoop {
    pub vars: Vec<InductionVar>,
    pub gathers: Vec<InductionGather>,
    /// Per variable: nothing in the kernel reads it but its update and the loop's induction
    /// gathers, and the loop is in no other loop. Where the gathers read every component, a
    /// backend may then count the updates instead of doing them, and write the variable only
    /// if the loop as written must go on from it.
    pub unread: Vec<bool>,
}

/// `local = local ± step`, once an iteration at most.
#[derive(Clone, Debug, PartialEq)]
pub struct InductionVar {
    pub local: Handle<Local>,
    /// The loop-invariant step, of the local's type.
    pub step: Handle<Expr>,
    /// The update subtracts the step.
    pub negated: bool,
    /// The update's value expression (it names the update statement).
    pub update: Handle<Expr>,
    /// The update's load of the whole local (its value before the update).
    pub current: Handle<Expr>,
}

/// Where one index of an induction gather comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IndexSource {
    /// Component `component` of induction variable `var` (an index into
    /// [`InductionLoop::vars`]).
    Induction { var: usize, component: u8 },
    /// A loop-invariant expression.
    Invariant(Handle<Expr>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct InductionGather {
    /// The gather expression.
    pub expr: Handle<Expr>,
    pub param: ParamId,
    /// One source per index, slowest axis first.
    pub indices: Vec<IndexSource>,
}

/// The induction gathers of the loop `body`/`continuing` in `kernel` (`None`: it has none, or
/// holds barriers or collectives, which a backend must not duplicate).
pub fn analyse(kernel: &Kernel, body: &Block, continuing: &Block) -> Option<InductionLoop> {
    let mut stores = Stores::default();
    for block in [body, continuing] {
        stores.walk(block, false);
    }
    if stores.barriers {
        return None;
    }
    let finder = Finder {
        kernel,
        stored: &stores.locals,
    };
    let vars: Vec<InductionVar> = stores
        .updates
        .iter()
        .filter(|(local, _, nested)| !nested && stores.count(*local) == 1)
        .filter_map(|&(local, value, _)| finder.induction_var(local, value))
        .collect();
    if vars.is_empty() {
        return None;
    }
    let mut gathers = Vec::new();
    let mut seen = HashSet::new();
    for block in [body, continuing] {
        finder.gathers_in(block, &vars, &mut seen, &mut gathers);
    }
    if gathers.is_empty() {
        return None;
    }
    let unread = vars
        .iter()
        .map(|v| !in_a_loop(&kernel.body, body, false) && !read_elsewhere(kernel, v, &gathers))
        .collect();
    Some(InductionLoop {
        vars,
        gathers,
        unread,
    })
}

/// Whether the loop whose body is `body` lies inside another loop of `block`.
fn in_a_loop(block: &Block, body: &Block, inside: bool) -> bool {
    block.iter().any(|s| match &s.stmt {
        Stmt::If { accept, reject, .. } => {
            in_a_loop(accept, body, inside) || in_a_loop(reject, body, inside)
        }
        Stmt::Loop {
            body: b,
            continuing,
        } => {
            (std::ptr::eq(b, body) && inside)
                || in_a_loop(b, body, true)
                || in_a_loop(continuing, body, true)
        }
        _ => false,
    })
}

/// Whether anything in `kernel` reads `var`'s local other than its update and the induction
/// gathers.
fn read_elsewhere(kernel: &Kernel, var: &InductionVar, gathers: &[InductionGather]) -> bool {
    let skip: HashSet<Handle<Expr>> = gathers
        .iter()
        .map(|g| g.expr)
        .chain([var.current])
        .collect();
    let mut seen = HashSet::new();
    let mut stack: Vec<Handle<Expr>> = Vec::new();
    if !kernel.body.expr_roots(&mut stack) {
        return true;
    }
    while let Some(h) = stack.pop() {
        if skip.contains(&h) || !seen.insert(h) {
            continue;
        }
        let kind = &kernel.exprs[h].kind;
        if matches!(kind, ExprKind::Load(p) if p.root == PlaceRoot::Local(var.local)) {
            return true;
        }
        stack.extend(kind.operands());
    }
    false
}

/// What a loop stores: every local (with repeats) and the whole-local stores.
#[derive(Default)]
struct Stores {
    /// Locals stored anywhere in the loop, once per store.
    all: Vec<Handle<Local>>,
    locals: HashSet<Handle<Local>>,
    /// Whole-local stores: the local, the value, and whether a nested loop holds it.
    updates: Vec<(Handle<Local>, Handle<Expr>, bool)>,
    barriers: bool,
}

impl Stores {
    fn count(&self, local: Handle<Local>) -> usize {
        self.all.iter().filter(|&&l| l == local).count()
    }

    fn walk(&mut self, block: &Block, nested: bool) {
        for s in block.iter() {
            match &s.stmt {
                Stmt::Store { place, value } => {
                    if let PlaceRoot::Local(local) = place.root {
                        self.all.push(local);
                        self.locals.insert(local);
                        if place.path.is_empty() {
                            self.updates.push((local, *value, nested));
                        }
                    }
                }
                Stmt::If { accept, reject, .. } => {
                    self.walk(accept, nested);
                    self.walk(reject, nested);
                }
                Stmt::Loop { body, continuing } => {
                    self.walk(body, true);
                    self.walk(continuing, true);
                }
                Stmt::Barrier | Stmt::Collective(_) => self.barriers = true,
                Stmt::Break | Stmt::Continue | Stmt::Return => {}
            }
        }
    }
}

struct Finder<'k> {
    kernel: &'k Kernel,
    stored: &'k HashSet<Handle<Local>>,
}

impl Finder<'_> {
    fn expr(&self, h: Handle<Expr>) -> &Expr {
        &self.kernel.exprs[h]
    }

    /// `local = local ± step` with `step` invariant, for a `float` local.
    fn induction_var(&self, local: Handle<Local>, value: Handle<Expr>) -> Option<InductionVar> {
        let is_float = matches!(&self.kernel.locals[local].ty,
            Type::Value(v) if v.kind == ScalarKind::F32);
        let ExprKind::Binary { op, left, right } = self.expr(value).kind else {
            return None;
        };
        if !is_float {
            return None;
        }
        let (current, step, negated) = match op {
            BinaryOp::Add if self.is_whole_load(left, local) => (left, right, false),
            BinaryOp::Add if self.is_whole_load(right, local) => (right, left, false),
            BinaryOp::Sub if self.is_whole_load(left, local) => (left, right, true),
            _ => return None,
        };
        self.invariant(step).then_some(InductionVar {
            local,
            step,
            negated,
            update: value,
            current,
        })
    }

    fn is_whole_load(&self, h: Handle<Expr>, local: Handle<Local>) -> bool {
        matches!(&self.expr(h).kind, ExprKind::Load(p)
            if p.root == PlaceRoot::Local(local) && p.path.is_empty())
    }

    /// Whether `h` has the same value everywhere in the loop.
    fn invariant(&self, h: Handle<Expr>) -> bool {
        let e = self.expr(h);
        match &e.kind {
            ExprKind::Literal(_)
            | ExprKind::Constant(_)
            | ExprKind::Input(_)
            | ExprKind::IndexOf(_)
            | ExprKind::Instance
            | ExprKind::InstanceInGroup => true,
            ExprKind::Load(place) => match place.root {
                PlaceRoot::Local(local) => {
                    !self.stored.contains(&local)
                        && place.path.iter().all(|a| match a {
                            Access::Index(i) => self.invariant(*i),
                            Access::Field(_) | Access::Component(_) => true,
                        })
                }
                PlaceRoot::Output(_) | PlaceRoot::Scatter { .. } => false,
            },
            ExprKind::Gather { .. } => false,
            ExprKind::Compose(_)
            | ExprKind::Splat(_)
            | ExprKind::Field { .. }
            | ExprKind::Component { .. }
            | ExprKind::Swizzle { .. }
            | ExprKind::Unary { .. }
            | ExprKind::Binary { .. }
            | ExprKind::Select { .. }
            | ExprKind::Convert(_)
            | ExprKind::Math { .. } => e.kind.operands().into_iter().all(|o| self.invariant(o)),
        }
    }

    /// The induction component `h` reads (`v.c`, `v.zw.y`, a scalar `v`), if any.
    fn component(&self, h: Handle<Expr>, vars: &[InductionVar]) -> Option<(usize, u8)> {
        let var_of = |local: Handle<Local>| vars.iter().position(|v| v.local == local);
        match &self.expr(h).kind {
            ExprKind::Component { base, index } => self.lane(*base, *index, vars),
            ExprKind::Load(p) => {
                let PlaceRoot::Local(local) = p.root else {
                    return None;
                };
                let var = var_of(local)?;
                match p.path.as_slice() {
                    [] if matches!(&self.kernel.locals[local].ty,
                        Type::Value(v) if v.width == 1) =>
                    {
                        Some((var, 0))
                    }
                    [Access::Component(c)] => Some((var, *c)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Component `index` of the vector `base` (a whole induction variable, or a swizzle of
    /// one).
    fn lane(&self, base: Handle<Expr>, index: u8, vars: &[InductionVar]) -> Option<(usize, u8)> {
        match &self.expr(base).kind {
            ExprKind::Load(p) if p.path.is_empty() => {
                let PlaceRoot::Local(local) = p.root else {
                    return None;
                };
                let var = vars.iter().position(|v| v.local == local)?;
                Some((var, index))
            }
            ExprKind::Swizzle { base, pattern } => {
                self.lane(*base, *pattern.get(usize::from(index))?, vars)
            }
            _ => None,
        }
    }

    fn gathers_in(
        &self,
        block: &Block,
        vars: &[InductionVar],
        seen: &mut HashSet<Handle<Expr>>,
        out: &mut Vec<InductionGather>,
    ) {
        for s in block.iter() {
            match &s.stmt {
                Stmt::Store { place, value } => {
                    for o in place.operands() {
                        self.gathers_of_expr(o, vars, seen, out);
                    }
                    self.gathers_of_expr(*value, vars, seen, out);
                }
                Stmt::If {
                    cond,
                    accept,
                    reject,
                } => {
                    self.gathers_of_expr(*cond, vars, seen, out);
                    self.gathers_in(accept, vars, seen, out);
                    self.gathers_in(reject, vars, seen, out);
                }
                Stmt::Loop { body, continuing } => {
                    self.gathers_in(body, vars, seen, out);
                    self.gathers_in(continuing, vars, seen, out);
                }
                Stmt::Break
                | Stmt::Continue
                | Stmt::Return
                | Stmt::Barrier
                | Stmt::Collective(_) => {}
            }
        }
    }

    fn gathers_of_expr(
        &self,
        h: Handle<Expr>,
        vars: &[InductionVar],
        seen: &mut HashSet<Handle<Expr>>,
        out: &mut Vec<InductionGather>,
    ) {
        if !seen.insert(h) {
            return;
        }
        let kind = &self.expr(h).kind;
        if let ExprKind::Gather { param, indices } = kind {
            if let Some(g) = self.induction_gather(h, *param, indices, vars) {
                out.push(g);
            }
        }
        for o in kind.operands() {
            self.gathers_of_expr(o, vars, seen, out);
        }
    }

    fn induction_gather(
        &self,
        h: Handle<Expr>,
        param: ParamId,
        indices: &[Handle<Expr>],
        vars: &[InductionVar],
    ) -> Option<InductionGather> {
        let sources: Vec<IndexSource> = indices
            .iter()
            .map(|&i| match self.component(i, vars) {
                Some((var, component)) => Some(IndexSource::Induction { var, component }),
                None => self.invariant(i).then_some(IndexSource::Invariant(i)),
            })
            .collect::<Option<_>>()?;
        sources
            .iter()
            .any(|s| matches!(s, IndexSource::Induction { .. }))
            .then_some(InductionGather {
                expr: h,
                param,
                indices: sources,
            })
    }
}
