//! The programs of seed 004 check clean (with the corrections docs/LOOM.md explains), and
//! the draft's own slips are reported.

use super::*;

const EXAMPLES: &[(&str, &str)] = &[
    (
        "maximum",
        include_str!("../../../../../examples/loom/maximum.loom"),
    ),
    (
        "shiftLeft",
        include_str!("../../../../../examples/loom/shift_left.loom"),
    ),
    (
        "shiftLeft1",
        include_str!("../../../../../examples/loom/shift_left1.loom"),
    ),
    (
        "sumOfSquares",
        include_str!("../../../../../examples/loom/sum_of_squares.loom"),
    ),
    ("foo", include_str!("../../../../../examples/loom/foo.loom")),
];

#[test]
fn the_seed_programs_check_clean() {
    for (name, text) in EXAMPLES {
        let checked = clean(text);
        assert!(checked.info.kernel.is_some(), "{name}");
    }
}

#[test]
fn the_drafts_undeclared_i2_is_reported_with_a_suggestion() {
    let text = "func foo(a: Int32): Int32\n  local sum: Int32 <- 0\n  for i: Int32 <- 1 .. 5\n    iSqr: Int32 <- i*i\n    sum += i2\n  return sum\n\nkernel k(out: Int32[THREADS])\n  out[T] <- foo(T)\n  return\n";
    let checked = checked(text);
    assert_eq!(codes(text), [(Code::LoomUndeclared, 5)]);
    assert_eq!(
        checked.diagnostics[0].help.first().map(String::as_str),
        Some("did you mean `i`?")
    );
}
