//! `brook_ir::unassigned` on kernels as the frontend lowers them: which locals a read may
//! find at the 0 they start with, so the backends must zero them at each instance's start.

use brook_ir::unassigned::Unassigned;
use brook_ir::{Block, Kernel, Statement, Stmt};

#[path = "common/lowered.rs"]
mod lowered;
use lowered::module;

/// The names of the locals of `source`'s last kernel that must be zeroed.
fn zeroed(source: &str) -> Vec<String> {
    let module = module(source);
    let kernel: &Kernel = module.kernels.last().expect("a kernel");
    let unassigned = Unassigned::of(kernel);
    kernel
        .locals
        .iter()
        .enumerate()
        .filter(|(i, _)| unassigned.needs_zero(*i))
        .map(|(_, (_, l))| l.name.clone())
        .collect()
}

#[test]
fn declared_locals_are_stored_before_they_are_read() {
    // The frontend stores `float y;`'s 0 where it is declared, in a loop too.
    let source = "kernel void k(float a<>, out float o<>) {
        float y;
        float2 v;
        int i;
        if (a > 0.0f) { y = 1.0f; }
        v.x = a;
        for (i = 0; i < 4; i++) { float t; o = t; t = a; }
        o = y + v.y;
    }";
    assert_eq!(zeroed(source), Vec::<String>::new());
}

#[test]
fn inlined_calls_need_no_zeros() {
    let source = "kernel float f(float x) { if (x > 1.0f) return x; return x * 0.5f; }
        kernel void k(float a<>, out float o<>) { o = f(a) + f(a * 2.0f); }";
    let module = module(source);
    let kernel = module.kernels.last().expect("k");
    assert!(
        kernel.locals.len() >= 4,
        "the calls' temporaries are locals"
    );
    assert_eq!(zeroed(source), Vec::<String>::new());
}

#[test]
fn arrays_stored_an_element_at_a_time_need_zeros() {
    let source = "kernel void k(float a<>, out float o<>) {
        float b[4];
        b[1] = a;
        o = b[0];
    }";
    assert_eq!(zeroed(source), vec!["b".to_string()]);
}

/// Kernel `float t = a; o = t;` with its first statement (the store of `t`) put where
/// `place` says: whether `t` must then be zeroed.
fn with_store_of_t(place: impl Fn(Statement, Statement) -> Stmt) -> bool {
    let mut module = module("kernel void k(float a<>, out float o<>) { float t = a; o = t; }");
    let kernel = &mut module.kernels[0];
    let store = kernel.body.0[0].clone();
    assert_eq!(kernel.locals.len(), 1, "`t` alone");
    let Stmt::Store { value, .. } = store.stmt else {
        panic!("the store of `t` comes first")
    };
    // Any expression serves as the condition: the walk does not evaluate it.
    let cond = value;
    let leave = Statement {
        stmt: Stmt::If {
            cond,
            accept: Block(vec![Statement {
                stmt: Stmt::Break,
                span: store.span,
            }]),
            reject: Block::new(),
        },
        span: store.span,
    };
    kernel.body.0[0].stmt = place(store, leave);
    Unassigned::of(kernel).needs_zero(0)
}

#[test]
fn reads_after_a_path_that_stored_nothing_need_zeros() {
    let cond = |s: &Statement| match &s.stmt {
        Stmt::Store { value, .. } => *value,
        _ => unreachable!(),
    };
    // if (c) t = a;  o = t;
    assert!(with_store_of_t(|store, _| Stmt::If {
        cond: cond(&store),
        accept: Block(vec![store]),
        reject: Block::new(),
    }));
    // if (c) t = a; else t = a;  o = t;
    assert!(!with_store_of_t(|store, _| Stmt::If {
        cond: cond(&store),
        accept: Block(vec![store.clone()]),
        reject: Block(vec![store]),
    }));
    // loop { if (c) break; t = a; }  o = t;  (left before the store)
    assert!(with_store_of_t(|store, leave| Stmt::Loop {
        body: Block(vec![leave, store]),
        continuing: Block::new(),
    }));
    // loop { t = a; if (c) break; }  o = t;  (stored before every way out)
    assert!(!with_store_of_t(|store, leave| Stmt::Loop {
        body: Block(vec![store, leave]),
        continuing: Block::new(),
    }));
}
