//! `brook_ir::induction` on kernels as the frontend lowers them: which loops have induction
//! variables and gathers, and which variables nothing else reads. What the compiled devices
//! make of them is checked against the interpreter by `tests/conformance/induction_gathers.case`.

use brook_ir::induction::{analyse, IndexSource, InductionLoop};
use brook_ir::{Block, Kernel, Stmt};

#[path = "common/lowered.rs"]
mod lowered;
use lowered::module;

/// The analysis of every loop of the first kernel, outermost first.
fn loops(source: &str) -> (Kernel, Vec<Option<InductionLoop>>) {
    fn walk(kernel: &Kernel, block: &Block, out: &mut Vec<Option<InductionLoop>>) {
        for s in block.iter() {
            match &s.stmt {
                Stmt::If { accept, reject, .. } => {
                    walk(kernel, accept, out);
                    walk(kernel, reject, out);
                }
                Stmt::Loop { body, continuing } => {
                    out.push(analyse(kernel, body, continuing));
                    walk(kernel, body, out);
                    walk(kernel, continuing, out);
                }
                _ => {}
            }
        }
    }
    let m = module(source);
    let kernel = m.kernels[0].clone();
    let mut out = Vec::new();
    walk(&kernel, &kernel.body, &mut out);
    (kernel, out)
}

fn var_names(kernel: &Kernel, plan: &InductionLoop) -> Vec<String> {
    plan.vars
        .iter()
        .map(|v| kernel.locals[v.local].name.clone())
        .collect()
}

#[test]
fn seed_001_simple_matmult_walks_both_arrays_along_its_index() {
    let (kernel, loops) = loops(
        "kernel void simple_matmult(float Width, float A[][], float B[][], out float result<>)
        {
            float2 vPos = indexof(result).xy;
            float4 index = float4(vPos.x, 0.0f, 0.0f, vPos.y);
            float4 step = float4(0.0f, 1.0f, 1.0f, 0.0f);
            float accumulator = 0.0f;
            float i0 = Width;
            while (i0 > 0.0f) {
                accumulator += A[index.zw] * B[index.xy];
                index += step;
                i0 = i0 - 1.0f;
            }
            result = accumulator;
        }",
    );
    let plan = loops[0].as_ref().expect("induction gathers");
    assert_eq!(var_names(&kernel, plan), ["index", "i0"]);
    assert!(plan.vars[1].negated, "i0 counts down");
    let sources: Vec<Vec<IndexSource>> = plan.gathers.iter().map(|g| g.indices.clone()).collect();
    let at = |component| IndexSource::Induction { var: 0, component };
    // A[index.zw]: row .w, column .z; B[index.xy]: row .y, column .x.
    assert_eq!(sources, [vec![at(3), at(2)], vec![at(1), at(0)]]);
    assert_eq!(
        plan.unread,
        [true, false],
        "the index is read by the gathers alone"
    );
}

#[test]
fn invariant_indices_steps_and_what_else_reads_a_variable() {
    let (kernel, loops) = loops(
        "kernel void k(float a[][], float s, out float o<>)
        {
            float row = indexof(o).y;
            float i = 0.0f;
            float acc = 0.0f;
            float n;
            for (n = 0.0f; n < 8.0f; n = n + 1.0f) {
                acc += a[row][i];
                i = i + s * 2.0f;
            }
            o = acc + i;
        }",
    );
    let plan = loops[0].as_ref().expect("induction gathers");
    assert_eq!(var_names(&kernel, plan), ["i", "n"]);
    let g = &plan.gathers[0];
    assert!(matches!(g.indices[0], IndexSource::Invariant(_)), "the row");
    assert_eq!(
        g.indices[1],
        IndexSource::Induction {
            var: 0,
            component: 0
        }
    );
    assert_eq!(
        plan.unread,
        [false, false],
        "`o = acc + i` reads i after the loop"
    );
}

#[test]
fn loops_without_induction_gathers_have_no_plan() {
    let (_, loops) = loops(
        "kernel void k(float a[], float s, out float o<>)
        {
            float i = 0.0f;
            float j = 1.0f;
            float acc = 0.0f;
            int n;
            for (n = 0; n < 4; n = n + 1) {
                acc += a[i * 2.0f];         // not a component of i: converted and clamped
                i = i + 1.0f;
            }
            while (acc < 100.0f) {
                acc += a[j];
                j = j + acc;                // a step that changes in the loop
            }
            while (acc < 200.0f) {
                acc += a[j];
                j = j + 1.0f;
                if (acc > 150.0f) j = j + 1.0f;   // stored twice
            }
            while (acc < 300.0f) {
                acc += a[j];
                int m;
                for (m = 0; m < 2; m = m + 1) { j = j + 1.0f; }  // in a nested loop
            }
            o = acc;
        }",
    );
    assert_eq!(loops.len(), 5);
    assert!(loops.iter().all(Option::is_none), "{loops:?}");
}

#[test]
fn a_loop_inside_another_keeps_its_variable_written() {
    let (_, loops) = loops(
        "kernel void k(float a[], out float o<>)
        {
            float acc = 0.0f;
            float r;
            for (r = 0.0f; r < 3.0f; r = r + 1.0f) {
                float i = r;
                float n = 4.0f;
                while (n > 0.0f) {
                    acc += a[i];
                    i = i + 1.0f;
                    n = n - 1.0f;
                }
            }
            o = acc;
        }",
    );
    let inner = loops[1].as_ref().expect("the inner loop walks a");
    assert!(!inner.unread[0], "in a loop, the next round reads i again");
}
