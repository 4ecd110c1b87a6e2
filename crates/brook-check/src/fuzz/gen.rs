//! Random well-typed expressions and statements over a scope of readable and writable names.
//! Every expression is built for a wanted type, so the programs need no implicit conversion.

use super::ast::{Cond, Expr, Stmt, Ty, WalkLoop};
use super::rng::Rng;
use brook_ir::ScalarKind;

/// An array that can be gathered from: its name, rank and element type.
#[derive(Clone, Debug)]
pub struct GatherArray {
    pub name: String,
    pub rank: usize,
    pub ty: Ty,
}

/// What the statement being written can see.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// Readable values: names, fields, `indexof(a)`, shared-array reads.
    pub readable: Vec<(String, Ty)>,
    /// Local variables (readable too).
    pub writable: Vec<(String, Ty)>,
    /// Outputs that may be assigned anywhere (never read).
    pub outputs: Vec<(String, Ty)>,
    pub gathers: Vec<GatherArray>,
    /// Float variables of enclosing walk loops, for gather indices.
    pub walkers: Vec<String>,
}

/// The kinds a kernel's values are drawn from, with weights.
const KINDS: [(ScalarKind, usize); 8] = [
    (ScalarKind::F32, 8),
    (ScalarKind::I32, 6),
    (ScalarKind::U32, 3),
    (ScalarKind::F64, 3),
    (ScalarKind::I8, 1),
    (ScalarKind::U8, 1),
    (ScalarKind::I16, 1),
    (ScalarKind::U16, 1),
];

pub fn random_kind(rng: &mut Rng) -> ScalarKind {
    let total: usize = KINDS.iter().map(|(_, w)| w).sum();
    let mut at = rng.below(total);
    for (kind, weight) in KINDS {
        if at < weight {
            return kind;
        }
        at -= weight;
    }
    ScalarKind::F32
}

/// The widest vector of `kind` (doubles have 1 or 2 components).
pub fn max_width(kind: ScalarKind) -> u8 {
    if kind == ScalarKind::F64 {
        2
    } else {
        4
    }
}

pub fn random_ty(rng: &mut Rng) -> Ty {
    let kind = random_kind(rng);
    let width = if rng.chance(50) {
        1
    } else {
        rng.between(2, i64::from(max_width(kind))) as u8
    };
    Ty::new(kind, width)
}

/// A literal of a scalar type.
pub fn literal(rng: &mut Rng, ty: Ty) -> Expr {
    debug_assert_eq!(ty.width, 1);
    let text = match ty.kind {
        ScalarKind::F32 => float_text(
            *rng.pick(&[0.0, 1.0, 2.0, 0.5, -1.0, 3.25, 100.0, 0.001]),
            "f",
        ),
        ScalarKind::F64 => float_text(*rng.pick(&[0.0, 1.0, 2.0, 0.5, -1.0, 3.25, 1e10, 0.1]), ""),
        ScalarKind::I32 => signed_text(rng.between(-9, 9)),
        ScalarKind::U32 => format!("{}u", rng.between(0, 9)),
        kind => format!(
            "(({})({}))",
            kind.brook_name(),
            signed_text(rng.between(-9, 9))
        ),
    };
    Expr::Lit(ty, text)
}

fn float_text(v: f64, suffix: &str) -> String {
    let text = format!("{v:?}{suffix}");
    if v < 0.0 {
        format!("({text})")
    } else {
        text
    }
}

fn signed_text(v: i64) -> String {
    if v < 0 {
        format!("({v})")
    } else {
        v.to_string()
    }
}

/// Zero of any value type (the minimiser's last resort).
pub fn zero(ty: Ty) -> Expr {
    let scalar = ty.scalar();
    let text = match ty.kind {
        ScalarKind::F32 => "0.0f".to_string(),
        ScalarKind::F64 => "0.0".to_string(),
        ScalarKind::I32 => "0".to_string(),
        ScalarKind::U32 => "0u".to_string(),
        kind => format!("(({})(0))", kind.brook_name()),
    };
    let lit = Expr::Lit(scalar, text);
    if ty.width == 1 {
        lit
    } else {
        Expr::Construct(ty, vec![lit; usize::from(ty.width)])
    }
}

const SWIZZLE: [char; 4] = ['x', 'y', 'z', 'w'];

/// Writes expressions and statements.
pub struct Gen<'r> {
    pub rng: &'r mut Rng,
    pub scope: Scope,
    names: usize,
    /// Statements left to write in this kernel.
    budget: u32,
}

impl<'r> Gen<'r> {
    pub fn new(rng: &'r mut Rng, scope: Scope) -> Gen<'r> {
        let budget = rng.between(1, 14) as u32;
        Gen {
            rng,
            scope,
            names: 0,
            budget,
        }
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.names += 1;
        format!("{prefix}{}", self.names)
    }

    /// An expression of type `ty`, at most `depth` operators deep.
    pub fn expr(&mut self, ty: Ty, depth: u32) -> Expr {
        if depth == 0 || self.rng.chance(20) {
            return self.leaf(ty);
        }
        let d = depth - 1;
        let integer = ty.kind.is_integer();
        let bitwise = has_bitwise(ty.kind);
        loop {
            match self.rng.below(12) {
                0 => {
                    let op = if bitwise && self.rng.chance(30) {
                        "~"
                    } else {
                        "-"
                    };
                    return Expr::Unary(op, Box::new(self.expr(ty, d)), ty);
                }
                1..=3 => {
                    let ops: &[&'static str] = if bitwise {
                        &["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"]
                    } else if integer {
                        &["+", "-", "*", "/", "%"]
                    } else {
                        &["+", "-", "*", "/"]
                    };
                    let op = *self.rng.pick(ops);
                    let (a, b) = (self.expr(ty, d), self.expr(ty, d));
                    return Expr::Binary(op, Box::new(a), Box::new(b), ty);
                }
                4 => {
                    let c = self.cond(d);
                    let (a, b) = (self.expr(ty, d), self.expr(ty, d));
                    return Expr::Select(Box::new(c), Box::new(a), Box::new(b));
                }
                5 => {
                    let from = Ty::new(random_kind(self.rng), ty.width);
                    if from.width <= max_width(from.kind) && from != ty {
                        return Expr::Cast(ty, Box::new(self.expr(from, d)));
                    }
                }
                6 | 7 => {
                    if let Some(e) = self.call(ty, d) {
                        return e;
                    }
                }
                8 => {
                    let from_width = self.rng.between(1, i64::from(max_width(ty.kind))) as u8;
                    let from = self.expr(Ty::new(ty.kind, from_width), d);
                    return swizzle(self.rng, from, ty);
                }
                9 if ty.width > 1 => {
                    let parts = (0..ty.width).map(|_| self.expr(ty.scalar(), d)).collect();
                    return Expr::Construct(ty, parts);
                }
                10 => {
                    if let Some(e) = self.gather(ty, d) {
                        return e;
                    }
                }
                _ => return self.leaf(ty),
            }
        }
    }

    /// A name of the type, a swizzle of a name of the kind, or a literal.
    fn leaf(&mut self, ty: Ty) -> Expr {
        let names: Vec<(String, Ty)> = self
            .scope
            .readable
            .iter()
            .chain(&self.scope.writable)
            .filter(|(_, t)| t.kind == ty.kind)
            .cloned()
            .collect();
        if !names.is_empty() && self.rng.chance(75) {
            let (name, t) = self.rng.pick(&names).clone();
            let var = Expr::Var(name, t);
            return if t == ty {
                var
            } else {
                swizzle(self.rng, var, ty)
            };
        }
        if ty.width == 1 {
            literal(self.rng, ty)
        } else {
            let parts = (0..ty.width)
                .map(|_| literal(self.rng, ty.scalar()))
                .collect();
            Expr::Construct(ty, parts)
        }
    }

    /// An intrinsic call returning `ty`, when one fits.
    fn call(&mut self, ty: Ty, d: u32) -> Option<Expr> {
        let float = ty.is_float();
        let choice = self.rng.below(if float { 14 } else { 5 });
        let args = |g: &mut Gen, n: usize| (0..n).map(|_| g.expr(ty, d)).collect::<Vec<_>>();
        Some(match choice {
            0 => Expr::Call("min", args(self, 2), ty),
            1 => Expr::Call("max", args(self, 2), ty),
            2 => Expr::Call("abs", args(self, 1), ty),
            3 => Expr::Call("clamp", args(self, 3), ty),
            4 => Expr::Call("sign", args(self, 1), ty),
            5 => {
                let name = self
                    .rng
                    .one_of(&["floor", "ceil", "frac", "round", "sqrt", "rsqrt"]);
                Expr::Call(name, args(self, 1), ty)
            }
            6 => Expr::Call("fmod", args(self, 2), ty),
            7 => {
                let name = self.rng.one_of(&["lerp", "fma"]);
                Expr::Call(name, args(self, 3), ty)
            }
            8 if ty.width > 1 => Expr::Call("normalize", args(self, 1), ty),
            9 if ty.width == 3 && ty.kind == ScalarKind::F32 => {
                Expr::Call("cross", args(self, 2), ty)
            }
            10..=13 if ty.width == 1 => {
                let width = self.rng.between(2, i64::from(max_width(ty.kind))) as u8;
                let v = Ty::new(ty.kind, width);
                let name = *self.rng.pick(&["dot", "length", "distance"]);
                let n = if name == "length" { 1 } else { 2 };
                let vs = (0..n).map(|_| self.expr(v, d)).collect();
                Expr::Call(name, vs, ty)
            }
            _ => return None,
        })
    }

    /// A gather from an array of this type, when there is one.
    fn gather(&mut self, ty: Ty, d: u32) -> Option<Expr> {
        let arrays: Vec<GatherArray> = self
            .scope
            .gathers
            .iter()
            .filter(|g| g.ty == ty)
            .cloned()
            .collect();
        if arrays.is_empty() {
            return None;
        }
        let array = self.rng.pick(&arrays).clone();
        let walkers = self.scope.walkers.clone();
        let indices = (0..array.rank)
            .map(|_| {
                if !walkers.is_empty() && self.rng.chance(60) {
                    let w = self.rng.pick(&walkers).clone();
                    return Expr::Var(w, Ty::new(ScalarKind::F32, 1));
                }
                let kind = if self.rng.chance(70) {
                    ScalarKind::I32
                } else {
                    ScalarKind::F32
                };
                self.expr(Ty::new(kind, 1), d.min(2))
            })
            .collect();
        Some(Expr::Gather(array.name, indices, ty))
    }

    /// A scalar condition.
    pub fn cond(&mut self, depth: u32) -> Cond {
        if depth > 0 && self.rng.chance(20) {
            let d = depth - 1;
            return match self.rng.below(3) {
                0 => Cond::And(Box::new(self.cond(d)), Box::new(self.cond(d))),
                1 => Cond::Or(Box::new(self.cond(d)), Box::new(self.cond(d))),
                _ => Cond::Not(Box::new(self.cond(d))),
            };
        }
        let ty = Ty::new(random_kind(self.rng), 1);
        let op = *self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
        Cond::Cmp(op, self.expr(ty, depth.min(2)), self.expr(ty, depth.min(2)))
    }

    /// A block of statements. `in_loop` allows `break`/`continue`; `may_return` allows `return`.
    pub fn block(&mut self, depth: u32, in_loop: bool, may_return: bool) -> Vec<Stmt> {
        let mut out = Vec::new();
        let count = self.rng.between(1, 4);
        let saved = self.scope.writable.len();
        let saved_readable = self.scope.readable.len();
        for _ in 0..count {
            if self.budget == 0 {
                break;
            }
            self.budget -= 1;
            out.push(self.stmt(depth, in_loop, may_return));
        }
        self.scope.writable.truncate(saved);
        self.scope.readable.truncate(saved_readable);
        out
    }

    fn stmt(&mut self, depth: u32, in_loop: bool, may_return: bool) -> Stmt {
        loop {
            match self.rng.below(14) {
                0..=3 => {
                    let ty = random_ty(self.rng);
                    let value = self.expr(ty, 3);
                    let name = self.fresh("v");
                    self.scope.writable.push((name.clone(), ty));
                    return Stmt::Decl(name, ty, value);
                }
                4..=6 => {
                    if let Some(s) = self.assign() {
                        return s;
                    }
                }
                7 | 8 if depth > 0 => {
                    let c = self.cond(2);
                    let then = self.block(depth - 1, in_loop, may_return);
                    let otherwise = if self.rng.chance(40) {
                        self.block(depth - 1, in_loop, may_return)
                    } else {
                        Vec::new()
                    };
                    return Stmt::If(c, then, otherwise);
                }
                9 | 10 if depth > 0 => {
                    let var = self.fresh("i");
                    let n = self.rng.between(0, 5) as u32;
                    self.scope
                        .readable
                        .push((var.clone(), Ty::new(ScalarKind::I32, 1)));
                    let body = self.block(depth - 1, true, may_return);
                    self.scope.readable.pop();
                    if self.rng.chance(30) {
                        return self.walk(depth, may_return);
                    }
                    return match self.rng.below(4) {
                        0 => Stmt::While(var, n, body),
                        1 => Stmt::DoWhile(var, n.max(1), body),
                        _ => Stmt::For(var, n, body),
                    };
                }
                11 if in_loop => {
                    let jump = if self.rng.chance(50) {
                        Stmt::Break
                    } else {
                        Stmt::Continue
                    };
                    return Stmt::If(self.cond(1), vec![jump], Vec::new());
                }
                12 if may_return => {
                    return Stmt::If(self.cond(1), vec![Stmt::Return], Vec::new());
                }
                13 => {
                    if let Some(s) = self.assign_output() {
                        return s;
                    }
                }
                _ => {}
            }
        }
    }

    /// A walk loop: a float variable stepped once an iteration after the body, which the
    /// body's gathers index with (starts and steps mostly integers, sometimes not; often
    /// walking off the arrays' ends); sometimes readable in the body too.
    fn walk(&mut self, depth: u32, may_return: bool) -> Stmt {
        let var = self.fresh("w");
        let counter = self.fresh("c");
        let start = *self
            .rng
            .pick(&[0.0f32, 0.0, 1.0, 2.0, 3.0, 5.0, -1.0, 0.5, 2.5]);
        let step = *self
            .rng
            .pick(&[1.0f32, 1.0, 1.0, 2.0, -1.0, 0.0, 3.0, 0.5, -2.0]);
        let trips = self.rng.between(0, 12) as u32;
        let readable = self.rng.chance(40);
        if readable {
            self.scope
                .readable
                .push((var.clone(), Ty::new(ScalarKind::F32, 1)));
        }
        self.scope.walkers.push(var.clone());
        // A value gathered along the walk, readable by the rest of the body.
        let lead = self.scope.gathers.first().map(|g| g.ty).and_then(|ty| {
            let value = self.gather(ty, 1)?;
            let name = self.fresh("v");
            Some((name, ty, value))
        });
        let saved = self.scope.readable.len();
        if let Some((name, ty, _)) = &lead {
            self.scope.readable.push((name.clone(), *ty));
        }
        let mut body = self.block(depth.saturating_sub(1), true, may_return);
        self.scope.readable.truncate(saved);
        if let Some((name, ty, value)) = lead {
            body.insert(0, Stmt::Decl(name, ty, value));
        }
        self.scope.walkers.pop();
        if readable {
            self.scope.readable.pop();
        }
        Stmt::Walk(Box::new(WalkLoop {
            var,
            start,
            step,
            counter,
            trips,
            body,
        }))
    }

    /// An assignment to a local: whole, one component, or compound.
    fn assign(&mut self) -> Option<Stmt> {
        let locals = self.scope.writable.clone();
        let (target, ty) = self.target(&locals, 30)?;
        let ops: &[&'static str] = if has_bitwise(ty.kind) {
            &[
                "=", "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=",
            ]
        } else if ty.kind.is_integer() {
            &["=", "=", "+=", "-=", "*=", "/=", "%="]
        } else {
            &["=", "=", "+=", "-=", "*=", "/="]
        };
        let op = *self.rng.pick(ops);
        Some(Stmt::Assign(target, op, self.expr(ty, 3)))
    }

    /// An assignment to an output (whole or one component).
    pub fn assign_output(&mut self) -> Option<Stmt> {
        let outputs = self.scope.outputs.clone();
        let (target, ty) = self.target(&outputs, 25)?;
        Some(Stmt::Assign(target, "=", self.expr(ty, 4)))
    }

    /// One of `names` to assign, whole or (`percent` of the time, for a vector) one component.
    fn target(&mut self, names: &[(String, Ty)], percent: u32) -> Option<(String, Ty)> {
        if names.is_empty() {
            return None;
        }
        let (name, ty) = self.rng.pick(names).clone();
        Some(if ty.width > 1 && self.rng.chance(percent) {
            let c = SWIZZLE[self.rng.below(usize::from(ty.width))];
            (format!("{name}.{c}"), ty.scalar())
        } else {
            (name, ty)
        })
    }
}

/// Whether the bitwise operators take `kind` (Brook+: int and uint only).
pub fn has_bitwise(kind: ScalarKind) -> bool {
    matches!(kind, ScalarKind::I32 | ScalarKind::U32)
}

/// `from` swizzled to `ty`'s width (components picked from `from`'s).
fn swizzle(rng: &mut Rng, from: Expr, ty: Ty) -> Expr {
    let width = usize::from(from.ty().width);
    let comps: String = (0..ty.width).map(|_| SWIZZLE[rng.below(width)]).collect();
    Expr::Swizzle(Box::new(from), comps, ty)
}
