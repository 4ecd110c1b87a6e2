//! The parser: precedence and grouping (section 3.2.3), statement forms, recovery.

use super::*;
use crate::loom::ast::{Expr, ExprKind, Item, Program, Stmt, StmtKind};

/// An expression as a prefix form: `(+ a (* b c))`.
fn sexpr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Float(v) => format!("{v:?}"),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Name(n) => n.clone(),
        ExprKind::Thread(t) => crate::loom::token::TokenKind::Thread(*t).text(),
        ExprKind::Unary { op, arg } => format!("({op:?} {})", sexpr(arg)),
        ExprKind::Binary { op, left, right } => {
            format!("({} {} {})", op.symbol(), sexpr(left), sexpr(right))
        }
        ExprKind::Tagged { value, ty } => format!("(: {} {:?})", sexpr(value), ty.kind),
        ExprKind::Index {
            base,
            indices,
            safe,
        } => {
            let brackets = if *safe { "[[]]" } else { "[]" };
            let indices: Vec<String> = indices.iter().map(sexpr).collect();
            format!("({brackets} {} {})", sexpr(base), indices.join(" "))
        }
        ExprKind::Field { base, field } => format!("(. {} {})", sexpr(base), field.name),
        ExprKind::Call { func, args } => {
            let args: Vec<String> = args.iter().map(sexpr).collect();
            format!("(call {} {})", func.name, args.join(" "))
        }
        ExprKind::Parallel { op, func, array } => {
            format!("({} {} {})", op.symbol(), func.name, sexpr(array))
        }
    }
}

fn kernel_body(program: &Program) -> &[Stmt] {
    program
        .items
        .iter()
        .find_map(|item| match item {
            Item::Func(f) => Some(f.body.stmts.as_slice()),
            _ => None,
        })
        .expect("a function")
}

/// The expression assigned by `x <- EXPR` in a kernel.
fn parsed(expr: &str) -> String {
    let checked = checked(&format!("kernel k(x: Int32)\n  x <- {expr}\n  return\n"));
    let syntax: Vec<_> = checked
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::LoomSyntax)
        .collect();
    assert!(syntax.is_empty(), "{}", checked.render_diagnostics());
    match &kernel_body(&checked.program)[0].kind {
        StmtKind::Assign { value, .. } => sexpr(value),
        other => panic!("not an assignment: {other:?}"),
    }
}

#[test]
fn binary_operators_follow_the_table_of_section_3_2_3() {
    assert_eq!(parsed("a + b * c"), "(+ a (* b c))");
    // `<<`, `>>` and `&` bind like `*`; `|` and `^` like `+`.
    assert_eq!(parsed("a + b << 2"), "(+ a (<< b 2))");
    assert_eq!(parsed("a * b & c"), "(& (* a b) c)");
    assert_eq!(parsed("a | b + c"), "(+ (| a b) c)");
    assert_eq!(parsed("a - b - c"), "(- (- a b) c)");
    assert_eq!(parsed("a < b && c = d || e"), "(|| (&& (< a b) (= c d)) e)");
    assert_eq!(parsed("(a + b) * c"), "(* (+ a b) c)");
}

#[test]
fn prefix_operators_and_type_tags_bind_tighter_than_binary_ones() {
    assert_eq!(parsed("-a * b"), "(* (Neg a) b)");
    assert_eq!(parsed("!a && b"), "(&& (Not a) b)");
    assert_eq!(parsed("^a + 1"), "(+ (Complement a) 1)");
    assert_eq!(parsed("-1: Float32"), "(Neg (: 1 Basic(Float32)))");
    assert_eq!(parsed("a: Float64 * 2"), "(* (: a Basic(Float64)) 2)");
}

#[test]
fn parallel_operators_take_a_function_name_and_group_to_the_right() {
    assert_eq!(parsed("sum /. sqr // t"), "(/. sum (// sqr t))");
    assert_eq!(parsed("sum /. (sqr // t)"), "(/. sum (// sqr t))");
    assert_eq!(parsed("f /: a"), "(/: f a)");
    assert_eq!(parsed("f :/ a"), "(:/ f a)");
}

#[test]
fn indexing_fields_and_calls() {
    assert_eq!(parsed("a[i, j]"), "([] a i j)");
    assert_eq!(parsed("a[[i - 1]]"), "([[]] a (- i 1))");
    assert_eq!(parsed("p.first + q[2].x"), "(+ (. p first) (. ([] q 2) x))");
    assert_eq!(parsed("f(a, g(b), 3.5)"), "(call f a (call g b) 3.5)");
    assert_eq!(
        parsed("X_B * X_BLOCKSIZE + X_T"),
        "(+ (* X_B X_BLOCKSIZE) X_T)"
    );
    assert_eq!(parsed("TRUE"), "true");
}

#[test]
fn statements_of_every_form() {
    let checked = checked(
        "kernel k(a: Int32[THREADS])\n  local x: Int32\n  shared s: Int32[]\n  y: Int32 <- 2\n  x += y\n  x -= 1\n  x *= 3\n  for i: Int32 <- 0 ... 3\n    if i = 1 then\n      continue\n    else if i = 2 then\n      break\n    else\n      x <- x + i\n  while x > 0\n    x <- x - 1\n  return\n",
    );
    let body = kernel_body(&checked.program);
    let kinds: Vec<&str> = body
        .iter()
        .map(|s| match &s.kind {
            StmtKind::Decl(_) => "decl",
            StmtKind::Assign { .. } => "assign",
            StmtKind::For {
                inclusive: true, ..
            } => "for...",
            StmtKind::For { .. } => "for..",
            StmtKind::While { .. } => "while",
            StmtKind::Return(None) => "return",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        ["decl", "decl", "decl", "assign", "assign", "assign", "for...", "while", "return"]
    );
    let StmtKind::For { body: for_body, .. } = &body[6].kind else {
        unreachable!()
    };
    let StmtKind::If {
        otherwise: Some(otherwise),
        ..
    } = &for_body.stmts[0].kind
    else {
        panic!("if with else")
    };
    assert!(
        matches!(
            &otherwise.stmts[0].kind,
            StmtKind::If {
                otherwise: Some(_),
                ..
            }
        ),
        "`else if` nests an `if` in the `else` block"
    );
    assert!(
        checked.diagnostics.is_empty(),
        "{}",
        checked.render_diagnostics()
    );
}

#[test]
fn every_syntax_error_is_reported_and_parsing_goes_on() {
    let found = codes(
        "kernel k(a: Int32[THREADS])\n  a[T] <- (1 +\n  )\n  x: <- 2\n  if a[T] then a[T] <- 1\n  return\n\nfunc f(: Int32\n\nfunc g(x: Int32): Int32\n  return x +\n",
    );
    let syntax: Vec<usize> = found
        .iter()
        .filter(|(c, _)| *c == Code::LoomSyntax)
        .map(|&(_, line)| line)
        .collect();
    assert_eq!(syntax, [3, 4, 5, 8, 11], "{found:?}");
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let depth = 5000;
    let expr = format!("{}1{}", "(".repeat(depth), ")".repeat(depth));
    let found = codes(&format!("kernel k(x: Int32)\n  x <- {expr}\n  return\n"));
    assert!(found.contains(&(Code::LoomSyntax, 2)), "{found:?}");
    let minus = "-".repeat(depth);
    let found = codes(&format!("kernel k(x: Int32)\n  x <- {minus}1\n  return\n"));
    assert!(found.contains(&(Code::LoomSyntax, 2)), "{found:?}");
    let chain = vec!["x"; 2500].join(" + ");
    let found = codes(&format!("kernel k(x: Int32)\n  x <- {chain}\n  return\n"));
    assert!(found.contains(&(Code::LoomSyntax, 2)), "{found:?}");
}

#[test]
fn a_kernel_with_a_return_type_is_a_syntax_error() {
    assert!(codes("kernel k(x: Int32): Int32\n  return\n").contains(&(Code::LoomSyntax, 1)));
}
