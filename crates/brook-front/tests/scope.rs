//! `brook_ir::scope` on kernels as the frontend lowers them: which locals a masked SIMD
//! backend may write in every lane (their value before their block's first store is never
//! read). Their results on the CPU device's gangs are checked against the interpreter by the
//! conformance cases `lanes_*.case`.

#[path = "common/lowered.rs"]
mod lowered;
use lowered::module;

/// The depth each named local is scoped to, by name.
fn scopes(source: &str) -> Vec<(String, Option<u32>)> {
    let m = module(source);
    let kernel = &m.kernels[0];
    let scoped = brook_ir::scope::scoped_locals(kernel);
    kernel
        .locals
        .iter()
        .zip(scoped)
        .map(|((_, l), s)| (l.name.clone(), s))
        .collect()
}

fn scope_of(scopes: &[(String, Option<u32>)], name: &str) -> Option<u32> {
    scopes
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no local `{name}` in {scopes:?}"))
        .1
}

#[test]
fn loop_temporaries_are_scoped_to_the_loop_body() {
    let s = scopes(
        "kernel void k(float a<>, out float r<>) {\n\
         float x = a; int i = 0;\n\
         while (i < 10) { float xx = x * x; if (xx > 4.0f) break; x = xx + a; i = i + 1; }\n\
         r = x; }",
    );
    assert_eq!(scope_of(&s, "xx"), Some(1));
    // Written before the loop and read in it: scoped to the body of the kernel, where only
    // its first store writes every lane.
    assert_eq!(scope_of(&s, "x"), Some(0));
    assert_eq!(scope_of(&s, "i"), Some(0));
}

#[test]
fn a_local_is_scoped_to_the_block_of_its_declaration() {
    // A declaration without a value stores zero: the first store of `t`, in the kernel's
    // body; the stores in the loop are one deeper, and keep switched-off lanes' values.
    let s = scopes(
        "kernel void k(float a<>, out float r<>) {\n\
         float t; int i = 0;\n\
         while (i < 3) { float u; u = u + t; t = t + a; i = i + 1; }\n\
         r = t; }",
    );
    assert_eq!(scope_of(&s, "t"), Some(0));
    assert_eq!(scope_of(&s, "u"), Some(1));
}

#[test]
fn partial_stores_and_uses_across_blocks_are_not_scoped() {
    let s = scopes(
        "kernel void k(float a<>, out float2 r<>) {\n\
         float2 v = float2(a, a); float w = a; int i = 0;\n\
         while (i < 3) { v.x = v.x + 1.0f; if (a > 0.0f) { w = w + 1.0f; } i = i + 1; }\n\
         r = v + float2(w, w); }",
    );
    assert_eq!(scope_of(&s, "v"), None, "a component is stored alone");
    assert_eq!(scope_of(&s, "w"), Some(0), "first stored whole in the body");
}

#[test]
fn a_local_of_the_continuing_part_and_the_body_is_scoped_to_neither() {
    let s = scopes(
        "kernel void k(float a<>, out float r<>) {\n\
         float s = 0.0f; int k;\n\
         for (k = 0; k < (int)a; k++) { float t = a * 2.0f; s += t; }\n\
         r = s; }",
    );
    assert_eq!(scope_of(&s, "t"), Some(1));
    assert_eq!(scope_of(&s, "k"), Some(0));
}
