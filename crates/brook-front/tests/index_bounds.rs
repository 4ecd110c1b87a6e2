//! `brook_ir::footprint::IndexBounds` on kernels as the frontend lowers them (and unrolls, as
//! the compiled devices do): which array indices are proven to stay inside their array, so that
//! a backend drops their clamps. That the kernels still give the interpreter's bits is checked
//! on every device by `crates/brook/tests/tiled_matmul.rs` and the conformance cases.

use brook_ir::footprint::IndexBounds;
use brook_ir::{Access, Expr, ExprKind, Handle, Kernel, Place, Stmt};

#[path = "common/lowered.rs"]
mod lowered;
use lowered::module;

/// The kernel of `source`, with its counted loops unrolled.
fn kernel(source: &str) -> Kernel {
    let k = module(source).kernels[0].clone();
    brook_ir::unroll::unroll_counted_loops(&k).unwrap_or(k)
}

/// Every array index of the places the kernel's statements load or store (through the
/// expressions they use).
fn indices(k: &Kernel) -> Vec<Handle<Expr>> {
    fn place(k: &Kernel, place: &Place, out: &mut Vec<Handle<Expr>>) {
        for access in &place.path {
            if let Access::Index(h) = access {
                out.push(*h);
                expr(k, *h, out);
            }
        }
    }
    fn expr(k: &Kernel, h: Handle<Expr>, out: &mut Vec<Handle<Expr>>) {
        if let ExprKind::Load(p) = &k.exprs[h].kind {
            place(k, p, out);
        }
        for operand in k.exprs[h].kind.operands() {
            expr(k, operand, out);
        }
    }
    fn block(k: &Kernel, b: &brook_ir::Block, out: &mut Vec<Handle<Expr>>) {
        for s in b.iter() {
            match &s.stmt {
                Stmt::Store { place: p, value } => {
                    place(k, p, out);
                    expr(k, *value, out);
                }
                Stmt::If {
                    cond,
                    accept,
                    reject,
                } => {
                    expr(k, *cond, out);
                    block(k, accept, out);
                    block(k, reject, out);
                }
                Stmt::Loop { body, continuing } => {
                    block(k, body, out);
                    block(k, continuing, out);
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    block(k, &k.body, &mut out);
    out.sort_by_key(|h| h.index());
    out.dedup();
    out
}

/// For each array index of `source`'s kernel that is not a literal (an initializer's):
/// whether it is proven inside `0..len`.
fn proven(source: &str, len: u32) -> Vec<bool> {
    let k = kernel(source);
    let mut bounds = IndexBounds::new(&k);
    indices(&k)
        .into_iter()
        .filter(|&h| !matches!(k.exprs[h].kind, ExprKind::Literal(_)))
        .map(|h| bounds.within(h, len))
        .collect()
}

#[test]
fn indices_from_the_position_in_the_group_are_proven() {
    let source = "Attribute[GroupSize(64, 1, 1)]
        kernel void k(float a<>, out float r[]) {
            shared float4 lds[256];
            int me = instanceInGroup().x;
            int lane = me % 8;
            int row = me / 8;
            lds[4 * instanceInGroup().x + 1] = float4(a, a, a, a);
            syncGroup();
            r[instance().x] = lds[32 * (row % 8) + 4 * lane + 3].x + lds[(me & 15) + 240].y;
        }";
    let found = proven(source, 256);
    assert!(found.len() >= 3 && found.iter().all(|&p| p), "{found:?}");
    // The same indices into a smaller array are not.
    assert!(proven(source, 200).iter().all(|&p| !p));
}

#[test]
fn indices_that_may_leave_the_array_are_not_proven() {
    let sources = [
        // One past the end for the last thread.
        "Attribute[GroupSize(64, 1, 1)]
         kernel void k(float a<>, out float r[]) {
             shared float4 lds[256];
             lds[4 * instanceInGroup().x + 0] = float4(a, a, a, a);
             syncGroup();
             r[instance().x] = lds[4 * instanceInGroup().x + 4].x;
         }",
        // A value from a stream.
        "kernel void k(int i<>, out float r<>) {
             float t[4] = {1.0f, 2.0f, 3.0f, 4.0f};
             r = t[i];
         }",
        // Negative for some instances.
        "Attribute[GroupSize(64, 1, 1)]
         kernel void k(float a<>, out float r[]) {
             shared float4 lds[256];
             lds[4 * instanceInGroup().x + 0] = float4(a, a, a, a);
             syncGroup();
             r[instance().x] = lds[instanceInGroup().x - 1].x;
         }",
        // A counter of a loop that is not counted.
        "kernel void k(int n<>, out float r<>) {
             float t[4] = {1.0f, 2.0f, 3.0f, 4.0f};
             int i;
             float s = 0.0f;
             for (i = 0; i < n; i++) { s += t[i]; }
             r = s;
         }",
    ];
    for source in sources {
        let found = proven(source, 256.min(4 + 252 * u32::from(source.contains("lds"))));
        assert!(found.iter().any(|&p| !p), "{source}: {found:?}");
    }
}

#[test]
fn a_local_read_before_its_store_counts_as_zero() {
    // `j` holds 0 until it is stored; 0 - 1 would leave the array.
    let source = "kernel void k(int n<>, out float r<>) {
        float t[4] = {1.0f, 2.0f, 3.0f, 4.0f};
        int j;
        float s = t[j - 1];
        j = 2;
        r = s + t[j];
    }";
    assert_eq!(proven(source, 4), vec![false, true]);
}

#[test]
fn counters_of_unrolled_loops_are_literals_in_each_copy() {
    let source = "kernel void k(float a<>, out float r<>) {
        float t[8] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f};
        int i;
        float s = 0.0f;
        for (i = 0; i < 4; i++) { s += t[2 * i + 1]; }
        r = s;
    }";
    let found = proven(source, 8);
    assert_eq!(found, vec![true; 4]);
}
