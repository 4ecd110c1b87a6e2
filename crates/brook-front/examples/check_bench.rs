//! Benchmark: check a generated `.br` file of about 10,000 lines, stage by stage.
//!
//! `cargo run --release -p brook-front --example check_bench [LINES]` prints a table of the
//! median and best time of each frontend stage over 20 runs. The target (issue 2) is under
//! 100 ms for the whole check of 10,000 lines.

use brook_front::brook::{check, lexer, parse, preprocess, CheckOptions};
use brook_front::{check_source, Diagnostics, SourceFile};
use std::time::{Duration, Instant};

const RUNS: usize = 20;

/// One kernel of about 30 lines using loops, gathers, vectors and intrinsics.
fn kernel(n: usize) -> String {
    format!(
        "kernel void k{n}(float width, float a<>, float4 v<>, float g[][], out float r<>, out float4 q<>)
{{
    float2 at = indexof(r).xy;
    float4 cursor = float4(at.x, 0.0f, 0.0f, at.y);
    float4 step = float4(0.0f, 1.0f, 1.0f, 0.0f);
    float sum = 0.0f;
    float left = width;
    int i;
    while (left > 0.0f)
    {{
        sum += g[cursor.zw] * g[cursor.xy];
        cursor += step;
        left = left - 1.0f;
    }}
    for (i = 0; i < 8; i++)
    {{
        if (sum > 100.0f)
            break;
        sum = sum * 1.5f + sin(a) * cos(a);
    }}
    float4 w = v * float4(sum, sum, sum, sum);
    w.xy = w.yx;
    q = normalize(w) + float4(dot(w, v), length(v), 0.0f, 1.0f);
    r = sum > 0.0f ? sqrt(sum) : -sqrt(-sum);
}}

"
    )
}

/// Host code of about 20 lines calling kernel `n`.
fn host(n: usize) -> String {
    format!(
        "int run{n}(int size)
{{
    float a<size, size>;
    float4 v<size, size>;
    float g<size, size>;
    float r<size, size>;
    float4 q<size, size>;
    float* data = (float*) malloc(sizeof(float) * size * size * 4);
    int i;
    for (i = 0; i < size * size; i++)
        data[i] = (float) i;
    streamRead(a, data);
    streamRead(v, data);
    streamRead(g, data);
    k{n}((float) size, a, v, g, r, q);
    streamWrite(r, data);
    streamWrite(q, data);
    free(data);
    return 0;
}}

"
    )
}

fn generate(lines: usize) -> String {
    let mut text = String::from("#include <stdio.h>\n#include <stdlib.h>\n\n");
    let mut n = 0;
    while text.lines().count() < lines {
        text.push_str(&kernel(n));
        text.push_str(&host(n));
        n += 1;
    }
    text
}

fn time<T>(mut f: impl FnMut() -> T) -> (Duration, Duration, T) {
    let mut times = Vec::with_capacity(RUNS);
    let mut last = None;
    for _ in 0..RUNS {
        let start = Instant::now();
        last = Some(f());
        times.push(start.elapsed());
    }
    times.sort();
    (times[RUNS / 2], times[0], last.expect("at least one run"))
}

fn ms(d: Duration) -> String {
    format!("{:8.2}", d.as_secs_f64() * 1e3)
}

fn main() {
    let lines: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let text = generate(lines);
    let file = SourceFile::new("generated.br", text.clone());
    let options = CheckOptions::default();
    let new_diags = || Diagnostics::new(options.warning_policy());

    let (lex_med, lex_min, tokens) = time(|| lexer::lex(&file, &mut new_diags()));
    let (pp_med, pp_min, (pp_tokens, spellings)) =
        time(|| preprocess::preprocess(&file, tokens.clone(), true, &[], &mut new_diags()));
    let (parse_med, parse_min, program) =
        time(|| parse::parse(&file, &spellings, &pp_tokens, &mut new_diags()));
    let (check_med, check_min, info) = time(|| check::check(&program, &options, &mut new_diags()));
    let (all_med, all_min, checked) = time(|| check_source(file.clone(), &options));
    assert!(
        !checked.has_errors(),
        "the generated file must check clean:\n{}",
        checked.render_diagnostics()
    );

    println!(
        "checking {} lines, {} bytes, {} tokens, {} kernels ({} runs, milliseconds)",
        text.lines().count(),
        text.len(),
        tokens.len(),
        info.kernels.len(),
        RUNS
    );
    println!("| stage          |   median |     best |");
    println!("|----------------|----------|----------|");
    println!("| lex            | {} | {} |", ms(lex_med), ms(lex_min));
    println!("| preprocess -pp | {} | {} |", ms(pp_med), ms(pp_min));
    println!("| parse          | {} | {} |", ms(parse_med), ms(parse_min));
    println!("| check          | {} | {} |", ms(check_med), ms(check_min));
    println!("| check_source   | {} | {} |", ms(all_med), ms(all_min));
    let rate = text.lines().count() as f64 / all_med.as_secs_f64();
    println!(
        "whole check (no -pp): {:.0} lines/s; target: 10,000 lines under 100 ms",
        rate
    );
}
