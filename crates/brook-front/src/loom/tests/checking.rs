//! The checker: what is accepted (and the types it gives), and each rule's diagnostic.

use super::*;
use crate::loom::ast::{ExprKind, Item, StmtKind};
use crate::loom::check::{Callee, Dim, Ty};

/// The type the checker gave the value of the first assignment `x <- EXPR` in the kernel.
fn type_of_assigned(program_text: &str) -> String {
    let checked = clean(program_text);
    let kernel = checked.info.kernel.expect("one kernel");
    let Item::Func(func) = &checked.program.items[kernel] else {
        unreachable!()
    };
    let value = func
        .body
        .stmts
        .iter()
        .find_map(|s| match &s.kind {
            StmtKind::Assign { value, .. } => Some(value),
            _ => None,
        })
        .expect("an assignment");
    checked.info.types[value.id.0 as usize].to_string()
}

fn only(code: Code, text: &str) -> Vec<usize> {
    let found = codes(text);
    assert!(
        found.iter().all(|(c, _)| *c == code),
        "expected only {code}: {}",
        checked(text).render_diagnostics()
    );
    found.into_iter().map(|(_, line)| line).collect()
}

#[test]
fn untagged_constants_take_the_type_their_use_needs() {
    clean("kernel k(a: Float32[THREADS], b: Byte[THREADS], n: Int64)\n  a[T] <- a[T] * 2 + 0.5\n  b[T] <- 255\n  n <- n << 3\n  x: Float64 <- 1 + 2.5\n  return\n");
    assert_eq!(
        type_of_assigned("kernel k(x: Float32)\n  x <- x * 2\n  return\n"),
        "Float32"
    );
    assert_eq!(
        only(Code::LoomType, "kernel k(b: Byte)\n  b <- 256\n  return\n"),
        [2]
    );
    assert_eq!(
        only(
            Code::LoomType,
            "kernel k(n: Int32)\n  n <- n + 0.5\n  return\n"
        ),
        [2]
    );
}

#[test]
fn assignments_convert_numbers_and_operators_do_not() {
    // The seed's sumOfSquares stores Int32 elements into Float32 and back.
    clean("kernel k(a: Int32[THREADS], f: Float32[THREADS])\n  f[T] <- a[T]\n  a[T] <- f[T] * 2\n  return\n");
    assert_eq!(
        only(
            Code::LoomType,
            "kernel k(a: Int32[THREADS], f: Float32[THREADS])\n  f[T] <- f[T] + a[T]\n  return\n"
        ),
        [2]
    );
    assert_eq!(
        type_of_assigned("kernel k(a: Int32[THREADS], f: Float32[THREADS])\n  f[T] <- f[T] + a[T]: Float32\n  return\n"),
        "Float32"
    );
    assert_eq!(
        only(
            Code::LoomType,
            "kernel k(a: Int32[THREADS], ok: Bool)\n  ok <- a[T]\n  return\n"
        ),
        [2]
    );
}

#[test]
fn parallel_operators_give_per_element_and_per_block_types() {
    let program = "func sqr(x: Float32): Float32\n  return x * x\n\nfunc add(x: Float32, y: Float32): Float32\n  return x + y\n\nkernel k(a: Float32[THREADS], s: Float32[THREADS], out: Float32[BLOCKS])\n  ";
    let typed = |stmt: &str| type_of_assigned(&format!("{program}{stmt}\n  return\n"));
    assert_eq!(typed("s <- sqr // a"), "Float32[THREADS]");
    assert_eq!(typed("out[B] <- add /. a"), "Float32");
    assert_eq!(typed("out[B] <- add /. sqr // a"), "Float32");
    assert_eq!(typed("s <- add /: a"), "Float32[THREADS]");
    assert_eq!(typed("s <- add :/ a"), "Float32[THREADS]");
    // Predefined functions work for any numeric element type.
    assert_eq!(
        type_of_assigned("kernel k(a: Int64[X_THREADS, Y_THREADS], m: Int64[X_BLOCKS, Y_THREADS])\n  m <- max /. a\n  return\n"),
        "Int64"
    );
    assert_eq!(
        type_of_assigned("kernel k(a: Float64[THREADS])\n  a <- sqrt // a\n  return\n"),
        "Float64[THREADS]"
    );
}

#[test]
fn a_device_function_hides_a_predefined_one_of_its_name() {
    let checked = clean("func max(x: Int32, y: Int32): Int32\n  return x\n\nkernel k(a: Int32[THREADS], o: Int32[BLOCKS])\n  o[B] <- max /. a\n  return\n");
    assert!(checked
        .info
        .callees
        .values()
        .all(|c| matches!(c, Callee::Func(0))));
}

#[test]
fn ranges_slice_arrays_and_shared_blocks_have_a_block_of_elements() {
    let checked = clean("kernel k(a: Float32[THREADS])\n  r: Range <- block(B)\n  shared t: Float32[] <- a[r]\n  a[[r]] <- t\n  x: Int32 <- r.end - r.start\n  return\n");
    let shared = checked.info.vars.iter().find(|v| v.name == "t").expect("t");
    assert_eq!(
        shared.ty,
        Ty::Array {
            elem: Box::new(Ty::Basic(crate::loom::ast::BasicType::Float32)),
            dims: vec![Dim::Unsized]
        }
    );
}

/// A `Range` on a 2-D array selects a block's tile.
#[test]
fn a_range_on_a_2d_array_selects_a_block_tile() {
    assert_eq!(
        type_of_assigned("kernel k(a: Int32[X_THREADS, Y_THREADS])\n  shared t: Int32[X_BLOCKSIZE, Y_BLOCKSIZE]\n  t <- a[block(B)]\n  return\n"),
        "Int32[X_BLOCKSIZE, Y_BLOCKSIZE]"
    );
    assert_eq!(
        only(Code::LoomType, "kernel k(a: Int32[X_THREADS, Y_THREADS])\n  shared t: Int32[X_BLOCKSIZE]\n  t <- a[block(B)]\n  return\n"),
        [3]
    );
}

#[test]
fn records_type_definitions_and_constants() {
    clean("type Particle {pos: Float32, vel: Float32, alive: Bool}\ntype Cloud Particle[THREADS]\nconst STEPS: Int32 <- 2 * 4\nconst DT: Float32 <- 0.5\n\nkernel step(ps: Cloud)\n  local p: Particle <- ps[T]\n  local hist: Float32[STEPS]\n  for s: Int32 <- 0 .. STEPS\n    if p.alive then\n      p.pos <- p.pos + p.vel * DT\n      hist[s] <- p.pos\n  ps[T] <- p\n  return\n");
    assert_eq!(
        only(
            Code::LoomType,
            "type P {q: Q}\ntype Q {p: P}\nkernel k(x: P)\n  return\n"
        ),
        [2]
    );
}

#[test]
fn block_scope_shadowing_and_for_variables() {
    // A `for` variable declared in the loop lives on in the enclosing block (3.5.4).
    clean("kernel k(a: Int32[THREADS])\n  for i: Int32 <- 0 .. 4\n    x: Int32 <- i\n  a[T] <- i\n  if T > 0 then\n    a: Int32 <- 3\n    a <- a + 1\n  return\n");
    assert_eq!(
        only(Code::LoomUndeclared, "kernel k(a: Int32[THREADS])\n  if T > 0 then\n    x: Int32 <- 1\n  a[T] <- x\n  return\n"),
        [4]
    );
    // Without a type the loop variable must exist, and be an integer.
    clean("kernel k(a: Int32[THREADS])\n  j: Int32\n  for j <- 0 ... 3\n    a[T] <- j\n  return\n");
    assert_eq!(
        only(
            Code::LoomUndeclared,
            "kernel k(a: Int32[THREADS])\n  for j <- 0 ... 3\n    a[T] <- 1\n  return\n"
        ),
        [2]
    );
}

#[test]
fn functions_may_be_used_before_their_definition() {
    clean("kernel k(a: Float32[THREADS])\n  a[T] <- twice(a[T])\n  return\n\nfunc twice(x: Float32): Float32\n  return 2 * x\n");
}

#[test]
fn arrays_pass_by_reference_and_must_match_in_rank_and_elements() {
    clean("func total(v: Float32[], n: Int32): Float32\n  s: Float32 <- 0\n  for i: Int32 <- 0 .. n\n    s += v[i]\n  return s\n\nkernel k(a: Float32[THREADS], o: Float32[THREADS])\n  o[T] <- total(a, T)\n  return\n");
    assert_eq!(
        only(Code::LoomType, "func first(v: Float32[]): Float32\n  return v[0]\n\nkernel k(a: Int32[THREADS], o: Float32[THREADS])\n  o[T] <- first(a)\n  return\n"),
        [5]
    );
}

/// A map or scan passed to a function is read-only there: a write to it, through another
/// function too, or to an array it is made from is an error at the argument.
#[test]
fn computed_arrays_pass_read_only() {
    let funcs = "func sq(x: Float32): Float32\n  return x * x\n\nfunc first(v: Float32[]): Float32\n  return v[0]\n\nfunc zero(v: Float32[]): Float32\n  v[0] <- 0\n  return 0\n\nfunc zeroes(v: Float32[]): Float32\n  return zero(v)\n\nfunc copy(dst: Float32[], src: Float32[]): Float32\n  dst[0] <- src[0]\n  return 0\n\n";
    let kernel = |body: &str| {
        format!("{funcs}kernel k(a: Float32[THREADS], o: Float32[THREADS])\n  current: Range <- block(B)\n{body}  return\n")
    };
    clean(&kernel("  o[T] <- first(sq // a) + first(a[current]) + zero(a[current])\n  o[T] <- first(sq // a[current]) + copy(o, sq // a)\n"));
    // Lines: the kernel starts on line 18, its body's first line is 20.
    assert_eq!(
        only(Code::LoomType, &kernel("  o[T] <- zero(sq // a)\n")),
        [20]
    );
    assert_eq!(
        only(Code::LoomType, &kernel("  o[T] <- zeroes(sq // a)\n")),
        [20]
    );
    assert_eq!(
        only(
            Code::LoomType,
            &kernel("  o[T] <- copy(a, sq // a[current])\n")
        ),
        [20]
    );
    let message = checked(&kernel("  o[T] <- copy(a, sq // a)\n")).render_diagnostics();
    assert!(
        message.contains(
            "`copy` writes its parameter `dst`, here `a`, and this computed array is made from `a`"
        ),
        "{message}"
    );
    let message = checked(&kernel("  o[T] <- zero(sq // a)\n")).render_diagnostics();
    assert!(
        message.contains("`zero` writes its parameter `v`"),
        "{message}"
    );
    // Other expressions are not arrays passed by reference.
    assert_eq!(
        only(Code::LoomType, "func first(v: Float32[]): Float32\n  return v[0]\n\nkernel k(a: Float32[THREADS], o: Float32[THREADS])\n  o[T] <- first(o[T])\n  return\n"),
        [5]
    );
}

#[test]
fn the_kernel_is_not_called_and_returns_no_value() {
    let found = codes(
        "func f(x: Int32): Int32\n  return k(x)\n\nkernel k(a: Int32[THREADS])\n  return 1\n",
    );
    assert_eq!(
        found,
        [(Code::LoomType, 2), (Code::LoomKernelReturn, 5)],
        "{found:?}"
    );
}

#[test]
fn every_device_function_path_returns() {
    clean("func sign(x: Float32): Float32\n  if x < 0 then\n    return -1\n  else\n    if x > 0 then\n      return 1\n    return 0\n\nkernel k(a: Float32[THREADS])\n  a[T] <- sign(a[T])\n  return\n");
}

#[test]
fn thread_parameters_are_int32_and_extents_may_use_grid_sizes() {
    let checked = clean("kernel k(a: Int32[X_THREADS, Y_THREADS], o: Float32[2 * BLOCKS + 1])\n  shared s: Int32[X_BLOCKSIZE, Y_BLOCKSIZE]\n  a[X_T, Y_T] <- X_B + Y_BLOCKS + BLOCKSIZE\n  return\n");
    let o = checked.info.vars.iter().find(|v| v.name == "o").unwrap();
    assert_eq!(o.ty.to_string(), "Float32[((2*BLOCKS)+1)]");
    assert!(checked.program.items.iter().any(|i| matches!(
        i,
        Item::Func(f) if f.body.stmts.iter().any(|s| matches!(&s.kind, StmtKind::Assign { value, .. } if matches!(value.kind, ExprKind::Binary { .. })))
    )));
}
