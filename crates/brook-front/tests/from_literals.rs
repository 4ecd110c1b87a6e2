//! `Kernel::from_literals` on conditions as the frontend lowers them: which are known when
//! the code is written (the SPIR-V dialect hides those around jumps from NVIDIA's Vulkan
//! compiler, which crashed on them).

use brook_ir::{Block, Kernel, Stmt};

#[path = "common/lowered.rs"]
mod lowered;
use lowered::module;

/// Whether each `if`'s condition of `source`'s last kernel is computed from literals alone,
/// in the order the `if`s are written.
fn conditions(source: &str) -> Vec<bool> {
    fn walk(kernel: &Kernel, block: &Block, out: &mut Vec<bool>) {
        for s in block.iter() {
            match &s.stmt {
                Stmt::If {
                    cond,
                    accept,
                    reject,
                } => {
                    out.push(kernel.from_literals(*cond));
                    walk(kernel, accept, out);
                    walk(kernel, reject, out);
                }
                Stmt::Loop { body, continuing } => {
                    walk(kernel, body, out);
                    walk(kernel, continuing, out);
                }
                _ => {}
            }
        }
    }
    let module = module(source);
    let kernel: &Kernel = module.kernels.last().expect("a kernel");
    let mut out = Vec::new();
    walk(kernel, &kernel.body, &mut out);
    out
}

#[test]
fn conditions_of_literals_alone_are_known_and_others_are_not() {
    let source = "kernel void k(float a<>, int c, float g[], out float o<>) {
        int n = 3;
        if (((short)(0)) < ((short)((-1)))) { return; }
        if ((2.0f >= 100.0f) || (8u > 8u)) { return; }
        if (max(((short)(7)), (((short)((-4))) % ((short)(4)))) < ((short)((-1)))) { o = 1.0f; }
        if (a > 0.0f) { return; }
        if (c > 1) { return; }
        if (n > 1) { return; }
        if (g[1] > 0.0f) { return; }
        if (instance().x > 0) { return; }
        o = a;
    }";
    assert_eq!(
        conditions(source),
        [true, true, true, false, false, false, false, false]
    );
}
