//! A thread group whose threads read a share another thread writes in the same phase (between
//! two barriers). The interpreter runs a group's threads one after another up to each barrier,
//! so thread `t` sees the writes of threads `0..t` and none of later ones; the CPU device keeps
//! that order: such a kernel runs one thread at a time there, not in SIMD gangs
//! (`brook_ir::lockstep`). GPUs run a group's threads at once, so there the result of the race
//! is unspecified, and this test runs on the interpreter and the CPU only.

use brook::{args, Device, Program, Stream};

const KERNEL: &str = "
Attribute[GroupSize(16, 1, 1)]
kernel void racy(float a<>, out float r[])
{
    shared float4 lds[16];
    int me = instanceInGroup().x;
    lds[1 * instanceInGroup().x + 0] = float4(a, a, a, a);
    float right = lds[(me + 1) % 16].x;
    syncGroup();
    r[instance().x] = right * 10.0f + lds[(me + 15) % 16].x;
}
";

/// The interpreter's order, written out: within a group, thread `me` stores its share, then
/// reads its right neighbour's, which that thread has not written yet (thread 15 reads
/// thread 0's, written before it). In lockstep, the neighbour's store would come first.
fn expected(a: &[f32]) -> Vec<f32> {
    let mut r = vec![0.0; a.len()];
    for (g, group) in a.chunks(16).enumerate() {
        let mut lds = [0.0f32; 16];
        let mut right = [0.0f32; 16];
        for (me, &x) in group.iter().enumerate() {
            lds[me] = x;
            right[me] = lds[(me + 1) % 16];
        }
        for me in 0..group.len() {
            r[g * 16 + me] = right[me] * 10.0 + lds[(me + 15) % 16];
        }
    }
    r
}

#[test]
fn a_race_in_a_phase_keeps_the_interpreters_thread_order_on_the_cpu() {
    let program = Program::from_source("racy.br", KERNEL).expect("compiles");
    // 3 groups and a partial one.
    let a: Vec<f32> = (0..53).map(|i| (i * 7 % 13) as f32 + 0.5).collect();
    let want = expected(&a);
    assert_eq!(
        want[0], a[15],
        "thread 0 sees its neighbour's share unwritten"
    );
    for device in Device::all()
        .into_iter()
        .filter(|d| matches!(d.type_name(), "interp" | "cpu"))
    {
        let sa = Stream::from_slice(&device, &[a.len()], &a).expect("a");
        let r = Stream::<f32>::new(&device, &[a.len()]).expect("r");
        program
            .kernel("racy")
            .expect("racy")
            .launch(args![&sa, &r])
            .expect("launch");
        assert_eq!(r.to_vec().expect("r"), want, "{}", device.info());
    }
}
