//! What a device group does, as the profile shows it (its own process, since profiling is
//! process-wide): each member runs its block of a launch, and a stencil that gathers the rows
//! around its own copies only those rows (the halo) between the members, not the array.

use brook::{args, Device, Program, Stream};

const KERNELS: &str = "
kernel void twice(float x<>, out float y<>) { y = 2.0f * x; }

kernel void smooth(float g[][], float h, out float r<>)
{
    float2 p = indexof(r).xy;
    float up = g[float2(p.x, max(p.y - 1.0f, 0.0f))];
    float down = g[float2(p.x, min(p.y + 1.0f, h - 1.0f))];
    r = (up + down) * 0.25f + g[p] * 0.5f;
}
";

fn rows_of(report: &str, device: &str, what: &str) -> Vec<String> {
    report
        .lines()
        .filter(|l| l.split_whitespace().next() == Some(device) && l.contains(what))
        .map(str::to_string)
        .collect()
}

#[test]
fn members_run_their_blocks_and_copy_only_the_halo() {
    brook::set_profile(true);
    let program = Program::from_source("group.br", KERNELS).expect("compiles");
    let group = Device::from_spec("interp:0+interp:1").expect("group");
    let (h, w) = (32, 200);
    let start: Vec<f32> = (0..h * w).map(|i| (i % 97) as f32).collect();
    let x = Stream::from_slice(&group, &[h, w], &start).expect("x");
    let y = Stream::<f32>::new(&group, &[h, w]).expect("y");
    program
        .kernel("twice")
        .expect("twice")
        .launch(args![&x, &y])
        .expect("twice");
    y.to_vec().expect("y");
    let report = brook::profile_report();
    for device in ["interp:0+interp:1", "interp:0", "interp:1"] {
        let rows = rows_of(&report, device, "twice");
        assert_eq!(rows.len(), 1, "no row for {device}:\n{report}");
        assert_eq!(rows[0].split_whitespace().nth(2), Some("1"), "{}", rows[0]);
    }
    assert!(
        rows_of(&report, "interp:1", "in group").is_empty(),
        "a map over the rows the host wrote copies nothing:\n{report}"
    );

    // Ten steps of a stencil, each gathering what the other member wrote the step before.
    let smooth = program.kernel("smooth").expect("smooth");
    for _ in 0..5 {
        smooth.launch(args![&x, h as f32, &y]).expect("smooth");
        smooth.launch(args![&y, h as f32, &x]).expect("smooth back");
    }
    let got = x.to_vec().expect("x");
    let reference = Device::interp();
    let rx = Stream::from_slice(&reference, &[h, w], &start).expect("rx");
    let ry = Stream::<f32>::new(&reference, &[h, w]).expect("ry");
    for _ in 0..5 {
        smooth.launch(args![&rx, h as f32, &ry]).expect("smooth");
        smooth
            .launch(args![&ry, h as f32, &rx])
            .expect("smooth back");
    }
    assert_eq!(got, rx.to_vec().expect("rx"), "the group's stencil differs");
    let report = brook::profile_report();
    let copied: f64 = ["interp:0", "interp:1"]
        .iter()
        .flat_map(|d| rows_of(&report, d, "in group"))
        .map(|row| {
            row.split_whitespace()
                .nth(4)
                .expect("MB")
                .parse::<f64>()
                .expect("MB")
        })
        .sum();
    // Each step copies a few rows each way (the rows next to the block, a row more each side
    // for the gathers' rounding), not the other member's 16 rows.
    let row_mb = (w * 4) as f64 / 1e6;
    assert!(copied > 0.0, "the stencil must fetch its halo:\n{report}");
    assert!(
        copied <= 10.0 * 2.0 * 8.0 * row_mb,
        "{copied} MB copied for 10 steps of 2 members:\n{report}"
    );
}
