//! `brook_ir::unroll` on kernels as the frontend lowers them: counted `for` loops become
//! straight-line copies of their body and step (and the result still validates); loops that
//! only look counted stay loops. The results of both are checked on every device by the
//! conformance case `counted_loops.case`.

use brook_ir::print::print_module;
use brook_ir::{Kernel, Module, Stmt};

#[path = "common/lowered.rs"]
mod lowered;
use lowered::module;

fn loops(block: &brook_ir::Block) -> usize {
    block
        .iter()
        .map(|s| match &s.stmt {
            Stmt::Loop { body, continuing } => 1 + loops(body) + loops(continuing),
            Stmt::If { accept, reject, .. } => loops(accept) + loops(reject),
            _ => 0,
        })
        .sum()
}

fn unrolled(module: &Module, kernel: usize) -> Option<Kernel> {
    brook_ir::unroll::unroll_counted_loops(&module.kernels[kernel])
}

#[test]
fn nested_counted_loops_become_straight_line_code() {
    let mut m = module(
        "kernel void k(float a[][], out float o<>) {\n\
         float2 p = indexof(o).xy; float s = 0.0f; int dy; int dx;\n\
         for (dy = -1; dy <= 1; dy++) { for (dx = -1; dx <= 1; dx++) {\n\
         s += a[p.y + (float)dy][p.x + (float)dx]; } }\n\
         o = s; }\n",
    );
    assert_eq!(loops(&m.kernels[0].body), 2);
    let k = unrolled(&m, 0).expect("unrolled");
    assert_eq!(loops(&k.body), 0, "{}", print_module(&m));
    m.kernels[0] = k;
    let text = print_module(&m);
    // Nine taps, each followed by the inner step; three outer steps.
    assert_eq!(text.matches("s$1 = (s$1 + a[").count(), 9, "{text}");
    assert_eq!(text.matches("dy$2 = (old").count(), 3, "{text}");
    brook_ir::validate(m).expect("the unrolled kernel validates");
}

#[test]
fn loops_that_only_look_counted_stay() {
    let sources = [
        // The counter is written in the body.
        "kernel void k(int n<>, out int s<>) { int i; int t = 0;\n\
         for (i = 0; i < 10; i++) { t += i; if (i == n) i += 3; } s = t; }\n",
        // A break of this loop.
        "kernel void k(int n<>, out int s<>) { int i; int t = 0;\n\
         for (i = 0; i < 10; i++) { if (t > n) break; t += i; } s = t; }\n",
        // A bound that is not a constant.
        "kernel void k(int n<>, out int s<>) { int i; int t = 0;\n\
         for (i = 0; i < n; i++) { t += i; } s = t; }\n",
        // More trips than unrolling allows.
        "kernel void k(int n<>, out int s<>) { int i; int t = n;\n\
         for (i = 0; i < 33; i++) { t += i; } s = t; }\n",
        // A float counter.
        "kernel void k(float n<>, out float s<>) { float x; float t = n;\n\
         for (x = 0.0f; x < 3.0f; x += 1.0f) { t += x; } s = t; }\n",
    ];
    for source in sources {
        let m = module(source);
        assert!(unrolled(&m, 0).is_none(), "{}", print_module(&m));
    }
}

#[test]
fn a_break_of_an_inner_loop_does_not_stop_the_outer_unroll() {
    let m = module(
        "kernel void k(int n<>, out int s<>) { int i; int t = 0;\n\
         for (i = 0; i < 4; i++) { while (t < n) { t += 1; if (t == 7) break; } t += i; }\n\
         s = t; }\n",
    );
    let k = unrolled(&m, 0).expect("the outer loop unrolls");
    // Four copies of the inner `while`.
    assert_eq!(loops(&k.body), 4);
}

#[test]
fn a_zero_trip_loop_stays_a_loop() {
    let m = module(
        "kernel void k(int n<>, out int s<>) { int i; int t = n;\n\
         for (i = 5; i < 3; i++) { t = 0; } s = t + i; }\n",
    );
    assert!(unrolled(&m, 0).is_none());
}
