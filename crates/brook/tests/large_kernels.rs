//! Kernels that are large once expanded (issue 16, item 6): thousands of inlined subkernel
//! calls, with and without early returns, and one expression of thousands of terms. Each
//! compiles on every device (the CPU JIT in time and memory linear in the inlined size, no
//! stack overflow on any thread) and gives the interpreter's bits.

use brook::{args, Device, Program, Stream};

/// How each subkernel of [`doubling_subkernels`] may return early.
#[derive(Clone, Copy)]
enum Early {
    /// No early return: straight-line code.
    Never,
    /// `if (...) return x;` first: inlined as an `if` whose other branch holds the rest.
    Return,
    /// A return under two `if`s whose outer one may fall through either way: inlined as a
    /// loop that the `return` leaves.
    NestedReturn,
}

/// `depth` subkernels, each calling the previous one twice: 2^depth inlined calls.
fn doubling_subkernels(depth: usize, early: Early) -> String {
    let guard = match early {
        Early::Never => "",
        Early::Return => "if (x > 1000000.0f) return x; ",
        Early::NestedReturn => "if (x > 1000000.0f) { if (x > 2000000.0f) return x; } ",
    };
    let mut source = format!("kernel float f0(float x) {{ {guard}return x * 0.5f + 1.0f; }}\n");
    for i in 1..=depth {
        source += &format!(
            "kernel float f{i}(float x) {{ {guard}return f{p}(x) + f{p}(x * 0.25f); }}\n",
            p = i - 1
        );
    }
    source + &format!("kernel void k(float a<>, out float o<>) {{ o = f{depth}(a); }}\n")
}

/// One assignment of `terms` products summed left to right.
fn long_sum(terms: usize) -> String {
    let sum: Vec<String> = (0..terms)
        .map(|i| format!("a * {}.0f", i % 7 + 1))
        .collect();
    format!(
        "kernel void k(float a<>, out float o<>) {{ o = {}; }}\n",
        sum.join(" + ")
    )
}

/// Runs kernel `k` of `source` (one float input, one float output) over `input` on `device`;
/// the output's bits.
fn run(source: &str, input: &[f32], device: &Device) -> Vec<u32> {
    let program = Program::from_source("large.br", source).expect("compiles");
    let a = Stream::from_slice(device, &[input.len()], input).expect("a");
    let o = Stream::<f32>::new(device, &[input.len()]).expect("o");
    program
        .kernel("k")
        .expect("k")
        .launch(args![&a, &o])
        .unwrap_or_else(|e| panic!("{}: {e}", device.info()));
    o.to_vec().expect("o").iter().map(|v| v.to_bits()).collect()
}

/// Runs `source` on the interpreter and on every other device: all results equal.
fn same_on_every_device(source: &str, input: &[f32]) {
    let reference = run(source, input, &Device::interp());
    for device in Device::all().iter().filter(|d| d.type_name() != "interp") {
        assert_eq!(
            run(source, input, device),
            reference,
            "{} differs from the interpreter",
            device.info()
        );
    }
}

/// 16 values, negative and positive.
fn sixteen() -> Vec<f32> {
    (0..16).map(|i| i as f32 * 2.75 - 20.0).collect()
}

#[test]
fn thirteen_levels_of_doubled_subkernel_calls() {
    same_on_every_device(&doubling_subkernels(13, Early::Never), &sixteen());
}

#[test]
fn thirteen_levels_of_doubled_subkernel_calls_with_early_returns() {
    same_on_every_device(&doubling_subkernels(13, Early::Return), &sixteen());
}

#[test]
fn nine_levels_of_doubled_subkernel_calls_with_returns_inlined_as_loops() {
    // 512 inlined loops, each left by its `return` (large inputs take it).
    let mut input = sixteen();
    input.extend([3.0e6, 1.5e6, -3.0e6, 9.0e6]);
    same_on_every_device(&doubling_subkernels(9, Early::NestedReturn), &input);
}

#[test]
fn an_expression_of_6500_terms() {
    same_on_every_device(&long_sum(6500), &sixteen());
}

#[test]
fn an_expression_past_the_limit_is_a_diagnostic_not_a_crash() {
    let error = Program::from_source("long.br", &long_sum(25_002)).expect_err("refused");
    let text = error.to_string();
    assert!(
        text.contains("expression too long") && text.contains("long.br:1:"),
        "{text}"
    );
}

#[test]
fn a_local_array_of_pages_over_instances_spread_on_the_workers() {
    // A frame of several pages, probed page by page, on the CPU device's worker threads
    // (enough instances for several chunks).
    let source = "
        kernel void k(float a<>, out float o<>)
        {
            float table[1280];
            int i;
            for (i = 0; i < 1280; i += 128) table[i] = a * (float)i;
            o = table[1152] + table[(int)abs(a) % 16];
        }";
    let input: Vec<f32> = (0..8_200).map(|i| (i % 977) as f32 - 300.0).collect();
    same_on_every_device(source, &input);
}
