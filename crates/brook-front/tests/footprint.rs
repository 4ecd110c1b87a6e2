//! `brook_ir::footprint` on kernels as the frontend lowers them: the rows of each gather array
//! a block of instances may read. What a device group copies with it is checked by
//! `crates/brook/tests/group_profile.rs`; that its results are the interpreter's by
//! `crates/brook/tests/device_group.rs`.

use brook_ir::footprint::gather_rows;
use brook_ir::{Kernel, ParamId};

#[path = "common/lowered.rs"]
mod lowered;
use lowered::module;

fn kernel(source: &str) -> Kernel {
    module(source).kernels[0].clone()
}

/// The rows `[first, end)` of an array of `of` rows that gather parameter `param` may read
/// for the domain rows `block` of a domain of `rank` axes, constant parameters being 100.
fn rows(
    source: &str,
    rank: usize,
    param: u32,
    block: (usize, usize),
    of: usize,
) -> Option<(usize, usize)> {
    let k = kernel(source);
    gather_rows(&k, rank, block, &|_: ParamId| Some(100.0))
        .into_iter()
        .find(|(p, _)| p.0 == param)
        .expect("a gather parameter")
        .1
        .rows(of)
}

const CLAMPED: &str = "kernel void s(float g[][], float h, out float r<>) {
    float2 p = indexof(r).xy;
    float up = g[float2(p.x, max(p.y - 1.0f, 0.0f))];
    float down = g[float2(p.x, min(p.y + 1.0f, h - 1.0f))];
    r = up + down + g[p];
}";

#[test]
fn a_clamped_stencil_reads_the_rows_next_to_its_block() {
    // Rows 40..=59 read 39..=60, widened by one each side.
    assert_eq!(rows(CLAMPED, 2, 0, (40, 60), 100), Some((38, 62)));
    // The clamps keep the first and last blocks' reads inside the array.
    assert_eq!(rows(CLAMPED, 2, 0, (0, 10), 100), Some((0, 12)));
    assert_eq!(rows(CLAMPED, 2, 0, (90, 100), 100), Some((88, 100)));
}

#[test]
fn one_dimensional_gathers_follow_the_only_axis_and_instance() {
    let source = "kernel void s(float g[], out float r<>) {
        int i = instance().x;
        r = g[i + 3] + g[indexof(r).x - 2.0f];
    }";
    // Rows 100..=199 read 98..=202, widened by one each side.
    assert_eq!(rows(source, 1, 0, (100, 200), 1000), Some((97, 204)));
}

#[test]
fn what_cannot_be_bounded_needs_every_row() {
    // A loop counter depends on itself.
    let looped = "kernel void s(float g[][], out float r<>) {
        float2 p = indexof(r).xy;
        float t = 0.0f;
        float d;
        for (d = -2.0f; d <= 2.0f; d += 1.0f) { t += g[float2(p.x, p.y + d)]; }
        r = t;
    }";
    assert_eq!(rows(looped, 2, 0, (10, 20), 100), None);
    // The fast axis is not the row; a gathered value can be anything.
    let sideways = "kernel void s(float g[][], out float r<>) {
        float2 p = indexof(r).xy;
        r = g[float2(p.y, p.x)];
    }";
    assert_eq!(rows(sideways, 2, 0, (10, 20), 100), None);
    let indirect = "kernel void s(float g[], float at[], out float r<>) {
        r = g[at[indexof(r).x]];
    }";
    assert_eq!(rows(indirect, 1, 0, (10, 20), 100), None);
    assert_eq!(rows(indirect, 1, 1, (10, 20), 100), Some((9, 21)));
}

#[test]
fn constants_and_arithmetic_bound_rows_away_from_the_block() {
    let source = "kernel void s(float g[][], float h, out float r<>) {
        float2 p = indexof(r).xy;
        r = g[float2(p.x, h * 0.5f)] + g[float2(p.x, (p.y - p.y) * 0.0f + 2.0f)];
    }";
    // Row 50 (half the constant 100) and row 2: their hull, whatever the block.
    assert_eq!(rows(source, 2, 0, (70, 80), 100), Some((1, 52)));
}

#[test]
fn unsigned_arithmetic_that_would_wrap_needs_every_row() {
    // Row 0's `0u - 1u` wraps to the largest uint, which the gather clamps to the last row.
    let source = "kernel void s(float g[], out float r<>) {
        uint i = (uint)instance().x;
        r = g[i - 1u];
    }";
    assert_eq!(rows(source, 1, 0, (0, 10), 100), None);
    // Away from row 0 the subtraction cannot wrap.
    assert_eq!(rows(source, 1, 0, (10, 20), 100), Some((7, 21)));
}

#[test]
fn a_local_read_before_its_first_store_reads_row_zero() {
    // `y` is 0 at the first gather, then the instance's row.
    let source = "kernel void s(float g[][], out float r<>) {
        float y;
        float first = g[y][0.0f];
        y = indexof(r).y;
        r = first + g[y][0.0f];
    }";
    assert_eq!(rows(source, 2, 0, (40, 60), 100), Some((0, 61)));
    // Stored before any read: only the block's rows and their neighbours.
    let stored_first = "kernel void s(float g[][], out float r<>) {
        float y = indexof(r).y;
        r = g[y][0.0f];
    }";
    assert_eq!(rows(stored_first, 2, 0, (40, 60), 100), Some((39, 61)));
}

#[test]
fn only_the_stores_a_read_sees_bound_a_local() {
    // `float y;` stores 0, but both arms of the `if` store over it before the read: rows
    // 30..=70 (and one more each side, as gathers round), not 0.
    let both_arms = "kernel void s(float g[][], float t<>, out float r<>) {
        float y;
        if (t > 0.5f) { y = 30.0f; } else { y = 70.0f; }
        r = g[y][0.0f];
    }";
    assert_eq!(rows(both_arms, 2, 0, (40, 60), 100), Some((29, 72)));
    // Stored in one arm only: the other path reads the declaration's 0.
    let one_arm = "kernel void s(float g[][], float t<>, out float r<>) {
        float y;
        if (t > 0.5f) { y = 30.0f; }
        r = g[y][0.0f];
    }";
    assert_eq!(rows(one_arm, 2, 0, (40, 60), 100), Some((0, 32)));
    // Stored only inside a loop, read after it: the loop may not run.
    let in_loop = "kernel void s(float g[][], float n, out float r<>) {
        float y = 50.0f;
        for (float i = 0.0f; i < n; i += 1.0f) { y = 30.0f; }
        r = g[y][0.0f];
    }";
    assert_eq!(rows(in_loop, 2, 0, (40, 60), 100), Some((29, 52)));
    // A store the next trip's read sees, through the loop's back edge.
    let next_trip = "kernel void s(float g[][], float n, out float r<>) {
        float y = 50.0f;
        float sum = 0.0f;
        for (float i = 0.0f; i < n; i += 1.0f) { sum += g[y][0.0f]; y = 10.0f; }
        r = sum;
    }";
    assert_eq!(rows(next_trip, 2, 0, (40, 60), 100), Some((9, 52)));
    // Stored over before any read, after a `return` on the other path.
    let returned = "kernel void s(float g[][], float t<>, out float r<>) {
        float y = 90.0f;
        if (t > 0.5f) { r = 0.0f; return; }
        y = 45.0f;
        r = g[y][0.0f];
    }";
    assert_eq!(rows(returned, 2, 0, (40, 60), 100), Some((44, 47)));
}
