//! Heavy reductions in SPIR-V (a module of the `spirv_coverage` test binary): a reduction
//! whose combine step is long gets the serial entry alone, its stack in the invocation's
//! scratch frame walked by loops, so the step is called a few times, not about 75 times
//! (drivers inline every call: NVIDIA's Vulkan compiler took 145 s over such a fuzz kernel).
//! A light one keeps its unrolled stack and subgroup entry. The heavy path's bits are
//! checked on every Vulkan GPU by the conformance suite (`fuzz_jit_heavy_reduce.case`,
//! `fuzz_jit_size_reduce.case` and others: fuzz kernels whose combine steps are tens of
//! thousands of words), on devices that end loops early (lavapipe) too.

use brook_codegen::abi::{ReduceShape, Variant};
use brook_codegen::spirv::{map, reduce, validate};

/// The suite's options for 1-D launches (`spirv_coverage::options`), with `loop_limit`.
fn options_with_loop_limit(loop_limit: u32) -> map::Options {
    map::Options {
        loop_limit,
        ..super::options(1)
    }
}

fn options() -> map::Options {
    options_with_loop_limit(0)
}

/// The entries of `source`'s reduction `k` and how often each module calls a function.
fn entries(source: &str) -> Vec<(ReduceShape, usize)> {
    entries_with(source, &options())
}

fn entries_with(source: &str, options: &map::Options) -> Vec<(ReduceShape, usize)> {
    let program = brook::Program::from_source("heavy.br", source).expect("compiles");
    let module = program.module();
    let kernel = &module.kernels[0];
    let variant = Variant::plain(kernel, 1);
    let compiled = reduce::compile(module, kernel, &variant, options).expect("SPIR-V");
    compiled
        .entries
        .iter()
        .map(|(entry, m)| {
            if let Some(Err(message)) = validate::spirv_val(m) {
                panic!("{:?} entry is not valid SPIR-V:\n{message}", entry.shape);
            }
            (entry.shape, calls(&m.words))
        })
        .collect()
}

/// How many `OpFunctionCall` instructions a module holds.
fn calls(words: &[u32]) -> usize {
    const OP_FUNCTION_CALL: u32 = 57;
    let mut at = 5;
    let mut count = 0;
    while at < words.len() {
        let length = (words[at] >> 16) as usize;
        count += usize::from(words[at] & 0xffff == OP_FUNCTION_CALL);
        at += length.max(1);
    }
    count
}

const HEAVY: &str = "reduce void k(float4 a<>, reduce float4 r<>) {
        r = fmod(r + a, float4(3.0f, 5.0f, 7.0f, 9.0f)) / (a * a + float4(1.0f, 2.0f, 3.0f, 4.0f));
    }";

#[test]
fn a_heavy_combine_step_is_called_a_few_times_from_the_serial_entry_alone() {
    let found = entries(HEAVY);
    assert_eq!(found.len(), 1, "{found:?}");
    let (shape, calls) = found[0];
    assert_eq!(shape, ReduceShape::Serial);
    assert!(
        (1..=4).contains(&calls),
        "the serial entry calls {calls} times"
    );
}

#[test]
fn a_light_combine_step_keeps_the_unrolled_stack_and_the_subgroup_entry() {
    let found = entries("reduce void k(float a<>, reduce float r<>) { r += a; }");
    let shapes: Vec<ReduceShape> = found.iter().map(|&(shape, _)| shape).collect();
    assert!(shapes.contains(&ReduceShape::Warp), "{shapes:?}");
    let serial_calls = found[0].1;
    assert!(
        serial_calls > 20,
        "the serial entry calls {serial_calls} times"
    );
}

#[test]
fn a_device_that_ends_loops_early_walks_a_heavy_step_in_loops_too() {
    // Its loops are counted per subgroup as lavapipe counts them (`spirv::loop_limit`):
    // fuzz seed 54103 kernel 8721, whose stack walk passed the limit unreported when a
    // lane's own loops were counted, is refused by name now (`loop_limit` test binary).
    let found = entries_with(HEAVY, &options_with_loop_limit(65_535));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, ReduceShape::Serial);
    assert!((1..=4).contains(&found[0].1), "{found:?}");
}
