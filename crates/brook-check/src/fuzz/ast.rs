//! The kernel bodies the fuzzer writes, as a small tree that prints as Brook source and that
//! the minimiser can cut down (drop a statement, replace an expression by a part of it).

use brook_ir::ScalarKind;
use std::fmt::Write;

/// A value type: a scalar kind and 1 to 4 components.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ty {
    pub kind: ScalarKind,
    pub width: u8,
}

impl Ty {
    pub fn new(kind: ScalarKind, width: u8) -> Ty {
        Ty { kind, width }
    }

    pub fn scalar(self) -> Ty {
        Ty::new(self.kind, 1)
    }

    pub fn name(self) -> String {
        match self.width {
            1 => self.kind.brook_name().to_string(),
            w => format!("{}{w}", self.kind.brook_name()),
        }
    }

    pub fn is_float(self) -> bool {
        self.kind.is_float()
    }
}

#[derive(Clone, Debug)]
pub enum Expr {
    /// A literal, already written with its type (`2.5f`, `((uchar)3)`).
    Lit(Ty, String),
    /// A name or another fixed readable text (`a.x`, `indexof(a)`, `s[(me + 1) % 4]`).
    Var(String, Ty),
    Unary(&'static str, Box<Expr>, Ty),
    Binary(&'static str, Box<Expr>, Box<Expr>, Ty),
    Select(Box<Cond>, Box<Expr>, Box<Expr>),
    Cast(Ty, Box<Expr>),
    Call(&'static str, Vec<Expr>, Ty),
    Swizzle(Box<Expr>, String, Ty),
    Construct(Ty, Vec<Expr>),
    /// `array[i][j]`, indices slowest axis first.
    Gather(String, Vec<Expr>, Ty),
}

#[derive(Clone, Debug)]
pub enum Cond {
    Cmp(&'static str, Expr, Expr),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
    Not(Box<Cond>),
}

/// `float var = start; float counter = trips; while (counter > 0.0f) { counter = counter -
/// 1.0f; body; var = var + step; }`: `var` an induction variable of the loop (the compiled
/// devices' fast loop, `brook_codegen::lower::induction`).
#[derive(Clone, Debug)]
pub struct WalkLoop {
    pub var: String,
    pub start: f32,
    pub step: f32,
    pub counter: String,
    pub trips: u32,
    pub body: Vec<Stmt>,
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Decl(String, Ty, Expr),
    /// `target op value;` (`v = e`, `v.x += e`, `r[i] = e`).
    Assign(String, &'static str, Expr),
    If(Cond, Vec<Stmt>, Vec<Stmt>),
    /// `for (int v = 0; v < n; v++) { body }`.
    For(String, u32, Vec<Stmt>),
    /// `int v = 0; while (v < n) { v = v + 1; body }`.
    While(String, u32, Vec<Stmt>),
    /// A loop that walks a float variable the body's gathers may index with.
    Walk(Box<WalkLoop>),
    /// `do { body } while (cond);` run at least once; cond is `v < n` of a counter.
    DoWhile(String, u32, Vec<Stmt>),
    Break,
    Continue,
    Return,
    /// A line the minimiser keeps (`syncGroup();`, a shared array).
    Fixed(String),
}

impl Expr {
    pub fn ty(&self) -> Ty {
        match self {
            Expr::Lit(t, _)
            | Expr::Var(_, t)
            | Expr::Unary(_, _, t)
            | Expr::Binary(_, _, _, t)
            | Expr::Cast(t, _)
            | Expr::Call(_, _, t)
            | Expr::Swizzle(_, _, t)
            | Expr::Construct(t, _)
            | Expr::Gather(_, _, t) => *t,
            Expr::Select(_, a, _) => a.ty(),
        }
    }

    /// The direct sub-expressions (conditions' operands included).
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Lit(..) | Expr::Var(..) => Vec::new(),
            Expr::Unary(_, a, _) | Expr::Cast(_, a) | Expr::Swizzle(a, _, _) => vec![a],
            Expr::Binary(_, a, b, _) => vec![a, b],
            Expr::Select(c, a, b) => {
                let mut v = c.exprs();
                v.push(a);
                v.push(b);
                v
            }
            Expr::Call(_, args, _) | Expr::Construct(_, args) | Expr::Gather(_, args, _) => {
                args.iter().collect()
            }
        }
    }

    fn children_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Expr::Lit(..) | Expr::Var(..) => Vec::new(),
            Expr::Unary(_, a, _) | Expr::Cast(_, a) | Expr::Swizzle(a, _, _) => vec![a],
            Expr::Binary(_, a, b, _) => vec![a, b],
            Expr::Select(c, a, b) => {
                let mut v = c.exprs_mut();
                v.push(a);
                v.push(b);
                v
            }
            Expr::Call(_, args, _) | Expr::Construct(_, args) | Expr::Gather(_, args, _) => {
                args.iter_mut().collect()
            }
        }
    }

    pub fn write(&self, out: &mut String) {
        match self {
            Expr::Lit(_, text) | Expr::Var(text, _) => out.push_str(text),
            Expr::Unary(op, a, _) => {
                out.push_str(op);
                out.push('(');
                a.write(out);
                out.push(')');
            }
            Expr::Binary(op, a, b, _) => {
                out.push('(');
                a.write(out);
                let _ = write!(out, " {op} ");
                b.write(out);
                out.push(')');
            }
            Expr::Select(c, a, b) => {
                out.push('(');
                c.write(out);
                out.push_str(" ? ");
                a.write(out);
                out.push_str(" : ");
                b.write(out);
                out.push(')');
            }
            Expr::Cast(t, a) => {
                let _ = write!(out, "(({})(", t.name());
                a.write(out);
                out.push_str("))");
            }
            Expr::Call(name, args, _) => write_call(out, name, args),
            Expr::Construct(t, args) => write_call(out, &t.name(), args),
            Expr::Swizzle(a, s, _) => {
                out.push('(');
                a.write(out);
                let _ = write!(out, ").{s}");
            }
            Expr::Gather(array, indices, _) => {
                out.push_str(array);
                for i in indices {
                    out.push('[');
                    i.write(out);
                    out.push(']');
                }
            }
        }
    }
}

fn write_call(out: &mut String, name: &str, args: &[Expr]) {
    out.push_str(name);
    out.push('(');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        a.write(out);
    }
    out.push(')');
}

impl Cond {
    fn exprs(&self) -> Vec<&Expr> {
        match self {
            Cond::Cmp(_, a, b) => vec![a, b],
            Cond::And(a, b) | Cond::Or(a, b) => {
                let mut v = a.exprs();
                v.extend(b.exprs());
                v
            }
            Cond::Not(a) => a.exprs(),
        }
    }

    fn exprs_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Cond::Cmp(_, a, b) => vec![a, b],
            Cond::And(a, b) | Cond::Or(a, b) => {
                let mut v = a.exprs_mut();
                v.extend(b.exprs_mut());
                v
            }
            Cond::Not(a) => a.exprs_mut(),
        }
    }

    pub fn write(&self, out: &mut String) {
        match self {
            Cond::Cmp(op, a, b) => {
                out.push('(');
                a.write(out);
                let _ = write!(out, " {op} ");
                b.write(out);
                out.push(')');
            }
            Cond::And(a, b) | Cond::Or(a, b) => {
                let op = if matches!(self, Cond::And(..)) {
                    "&&"
                } else {
                    "||"
                };
                out.push('(');
                a.write(out);
                let _ = write!(out, " {op} ");
                b.write(out);
                out.push(')');
            }
            Cond::Not(a) => {
                out.push_str("(!");
                a.write(out);
                out.push(')');
            }
        }
    }
}

impl Stmt {
    pub fn write(&self, depth: usize, out: &mut String) {
        let pad = "    ".repeat(depth);
        match self {
            Stmt::Decl(name, ty, e) => {
                let _ = write!(out, "{pad}{} {name} = ", ty.name());
                e.write(out);
                out.push_str(";\n");
            }
            Stmt::Assign(target, op, e) => {
                let _ = write!(out, "{pad}{target} {op} ");
                e.write(out);
                out.push_str(";\n");
            }
            Stmt::If(c, then, otherwise) => {
                out.push_str(&pad);
                out.push_str("if ");
                c.write(out);
                out.push_str(" {\n");
                write_block(then, depth + 1, out);
                if otherwise.is_empty() {
                    let _ = writeln!(out, "{pad}}}");
                } else {
                    let _ = writeln!(out, "{pad}}} else {{");
                    write_block(otherwise, depth + 1, out);
                    let _ = writeln!(out, "{pad}}}");
                }
            }
            Stmt::For(v, n, body) => {
                let _ = writeln!(out, "{pad}for (int {v} = 0; {v} < {n}; {v}++) {{");
                write_block(body, depth + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::While(v, n, body) => {
                let _ = writeln!(out, "{pad}int {v} = 0;");
                let _ = writeln!(out, "{pad}while ({v} < {n}) {{");
                let _ = writeln!(out, "{pad}    {v} = {v} + 1;");
                write_block(body, depth + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Walk(w) => {
                let (v, c) = (&w.var, &w.counter);
                let _ = writeln!(out, "{pad}float {v} = {:?}f;", w.start);
                let _ = writeln!(out, "{pad}float {c} = {}.0f;", w.trips);
                let _ = writeln!(out, "{pad}while ({c} > 0.0f) {{");
                let _ = writeln!(out, "{pad}    {c} = {c} - 1.0f;");
                write_block(&w.body, depth + 1, out);
                let _ = writeln!(out, "{pad}    {v} = {v} + {:?}f;", w.step);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::DoWhile(v, n, body) => {
                let _ = writeln!(out, "{pad}int {v} = 0;");
                let _ = writeln!(out, "{pad}do {{");
                let _ = writeln!(out, "{pad}    {v} = {v} + 1;");
                write_block(body, depth + 1, out);
                let _ = writeln!(out, "{pad}}} while ({v} < {n});");
            }
            Stmt::Break => {
                let _ = writeln!(out, "{pad}break;");
            }
            Stmt::Continue => {
                let _ = writeln!(out, "{pad}continue;");
            }
            Stmt::Return => {
                let _ = writeln!(out, "{pad}return;");
            }
            Stmt::Fixed(line) => {
                let _ = writeln!(out, "{pad}{line}");
            }
        }
    }

    /// The statements nested directly in this one.
    pub fn blocks_mut(&mut self) -> Vec<&mut Vec<Stmt>> {
        match self {
            Stmt::If(_, a, b) => vec![a, b],
            Stmt::For(_, _, body) | Stmt::While(_, _, body) | Stmt::DoWhile(_, _, body) => {
                vec![body]
            }
            Stmt::Walk(w) => vec![&mut w.body],
            _ => Vec::new(),
        }
    }

    /// The expressions written directly in this statement (not in nested blocks).
    fn exprs_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Stmt::Decl(_, _, e) | Stmt::Assign(_, _, e) => vec![e],
            Stmt::If(c, _, _) => c.exprs_mut(),
            _ => Vec::new(),
        }
    }
}

pub fn write_block(stmts: &[Stmt], depth: usize, out: &mut String) {
    for s in stmts {
        s.write(depth, out);
    }
}

/// Every expression of a block, outermost first, read-only, with its position in a pre-order
/// walk that [`replace_expr`] uses.
pub fn all_exprs(stmts: &[Stmt]) -> Vec<Expr> {
    let mut out = Vec::new();
    let mut copy: Vec<Stmt> = stmts.to_vec();
    walk_exprs(&mut copy, &mut |e| out.push(e.clone()));
    out
}

/// Replaces the `n`th expression of a pre-order walk by `with`.
pub fn replace_expr(stmts: &mut [Stmt], n: usize, with: &Expr) {
    let mut seen = 0;
    let mut done = false;
    walk_exprs(stmts, &mut |e| {
        if !done && seen == n {
            *e = with.clone();
            done = true;
        }
        seen += 1;
    });
}

/// Visits every expression in pre-order (a node, then its children), letting the visitor
/// change it; the children visited are those of the expression after the change.
fn walk_exprs(stmts: &mut [Stmt], visit: &mut dyn FnMut(&mut Expr)) {
    for s in stmts.iter_mut() {
        for e in s.exprs_mut() {
            walk_expr(e, visit);
        }
        for block in s.blocks_mut() {
            walk_exprs(block, visit);
        }
    }
}

fn walk_expr(e: &mut Expr, visit: &mut dyn FnMut(&mut Expr)) {
    visit(e);
    for child in e.children_mut() {
        walk_expr(child, visit);
    }
}
