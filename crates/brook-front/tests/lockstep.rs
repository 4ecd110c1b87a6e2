//! `brook_ir::lockstep` on thread-group kernels as the frontend lowers them: when a group's
//! threads may run in lockstep, its phases, and what each phase needs from earlier ones. What
//! the CPU's gangs make of them is checked against the interpreter by
//! `tests/conformance/group_gangs.case` and `crates/brook/tests/group_races.rs`.

use brook_ir::lockstep::phases;
use brook_ir::Kernel;

#[path = "common/lowered.rs"]
mod lowered;
use lowered::module;

fn kernel(source: &str) -> Kernel {
    module(source).kernels[0].clone()
}

/// Each phase's `live_in` locals by name.
fn live_names(source: &str) -> Option<Vec<Vec<String>>> {
    let k = kernel(source);
    let phases = phases(&k)?;
    Some(
        phases
            .iter()
            .map(|p| {
                p.live_in
                    .iter()
                    .map(|&l| k.locals[l].name.clone())
                    .collect()
            })
            .collect(),
    )
}

const HEAD: &str = "Attribute[GroupSize(16, 1, 1)]\nkernel void k(float a<>, out float r[])\n";

#[test]
fn brook_plus_exchange_runs_in_lockstep_with_the_locals_it_carries() {
    let live = live_names(&format!(
        "{HEAD}{{
            shared float4 lds[32];
            int me = instanceInGroup().x;
            float x = a * 2.0f;
            float unused = 3.0f;
            lds[2 * instanceInGroup().x + 1] = float4(x, x, x, x);
            syncGroup();
            float y = lds[(2 * me + 2) % 32].x;
            x = x + y;
            syncGroup();
            lds[2 * instanceInGroup().x + 0] = float4(x, y, 0.0f, 0.0f);
            float own = lds[2 * instanceInGroup().x + 1].y;
            syncGroup();
            r[instance().x] = lds[31 - 2 * me].x + own;
        }}"
    ));
    assert_eq!(
        live,
        Some(vec![
            vec![],
            vec!["me".into(), "x".into()],
            vec!["me".into(), "x".into(), "y".into()],
            vec!["me".into(), "own".into()],
        ])
    );
}

#[test]
fn no_thread_group_or_no_barrier() {
    let k = kernel("kernel void k(float a<>, out float r<>) { r = a; }");
    assert_eq!(phases(&k), None);
    let one = live_names(&format!(
        "{HEAD}{{ shared float4 lds[16]; lds[1 * instanceInGroup().x + 0] = float4(a, a, a, a); r[instance().x] = a; }}"
    ));
    assert_eq!(one, Some(vec![vec![]]));
}

#[test]
fn reading_another_share_in_the_phase_that_writes_it_is_refused() {
    // Thread t would see threads 0..t's writes one at a time, all or none in lockstep.
    let racy = live_names(&format!(
        "{HEAD}{{
            shared float4 lds[16];
            int me = instanceInGroup().x;
            lds[1 * instanceInGroup().x + 0] = float4(a, a, a, a);
            float n = lds[(me + 1) % 16].x;
            syncGroup();
            r[instance().x] = n;
        }}"
    ));
    assert_eq!(racy, None);
    // The same read after the barrier is fine.
    let safe = live_names(&format!(
        "{HEAD}{{
            shared float4 lds[16];
            int me = instanceInGroup().x;
            lds[1 * instanceInGroup().x + 0] = float4(a, a, a, a);
            syncGroup();
            r[instance().x] = lds[(me + 1) % 16].x;
        }}"
    ));
    assert_eq!(safe, Some(vec![vec![], vec!["me".into()]]));
}

#[test]
fn barriers_in_control_flow_and_returns_are_refused() {
    for body in [
        "if (a > 0.0f) { syncGroup(); } r[instance().x] = a;",
        "int i; for (i = 0; i < 2; i++) { syncGroup(); } r[instance().x] = a;",
        "if (a > 0.0f) { return; } syncGroup(); r[instance().x] = a;",
    ] {
        let source = format!(
            "{HEAD}{{ shared float4 lds[16]; lds[1 * instanceInGroup().x + 0] = float4(a, a, a, a); {body} }}"
        );
        assert_eq!(live_names(&source), None, "{body}");
    }
}
