//! Profiling: per device and kernel, launches, time, bytes, compiles and cache hits, and the
//! transfers apart (its own process, since profiling is process-wide).

use brook::{args, Device, DeviceKind, Program, Stream};

#[test]
fn the_profile_counts_launches_compiles_hits_and_transfers_per_device() {
    brook::set_profile(true);
    assert!(brook::profiling());
    let program = Program::from_source(
        "prof.br",
        "kernel void twice(float x<>, out float y<>) { y = 2.0f * x; }",
    )
    .expect("compiles");
    let twice = program.kernel("twice").expect("kernel");
    let devices = Device::of_type("all").expect("devices");
    for device in &devices {
        let x = Stream::from_slice(device, &[1000], &vec![1.5f32; 1000]).expect("x");
        let y = Stream::<f32>::new(device, &[1000]).expect("y");
        for _ in 0..3 {
            twice.launch(args![&x, &y]).expect("launch");
        }
        assert_eq!(y.to_vec().expect("y")[999], 3.0);
    }
    let report = brook::profile_report();
    for device in &devices {
        let name = device.info().to_string();
        let short = name.split_whitespace().next().expect("a name");
        let row = report
            .lines()
            .find(|l| l.starts_with(short) && l.contains("twice"))
            .unwrap_or_else(|| panic!("no row for {short}:\n{report}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[2], "3", "launches on {short}: {row}");
        // Compiled once, then found twice (the interpreter compiles nothing).
        let (compiles, hits) = if device.kind() == DeviceKind::Interp {
            ("0", "0")
        } else {
            ("1", "2")
        };
        assert_eq!((cells[7], cells[9]), (compiles, hits), "{short}: {row}");
        assert!(
            report
                .lines()
                .any(|l| l.starts_with(short) && l.contains("to device")),
            "{report}"
        );
        assert!(
            report
                .lines()
                .any(|l| l.starts_with(short) && l.contains("to host")),
            "{report}"
        );
    }
    brook::reset_profile();
    brook::set_profile(false);
}

/// `BRT_PROFILE=1` prints the table on stderr when the program exits (the test runs itself
/// again as that program). On each device the program's first work is a launch whose only
/// input is an iterator (it failed on the GPU with `cuEventCreate: CUDA_ERROR_INVALID_CONTEXT`
/// when nothing had bound the GPU's context on that thread yet).
#[test]
fn brt_profile_prints_the_table_at_exit() {
    if std::env::var_os("BROOK_PROFILE_CHILD").is_some() {
        let program = Program::from_source(
            "child.br",
            "kernel void sample(float s<>, out float y<>) { y = 2.0f * s; }",
        )
        .expect("compiles");
        let ramp = brook::IterStream::new(&[10], 2.0f32, 7.0).expect("iterator");
        for device in Device::all() {
            let y = Stream::<f32>::new(&device, &[10]).expect("y");
            program
                .kernel("sample")
                .unwrap()
                .launch(args![&ramp, &y])
                .expect("launch");
            let values = y.to_vec().expect("read");
            assert_eq!(values[0], 4.0, "{}", device.info());
            assert_eq!(values[9], 13.0, "{}", device.info());
            println!("sampled on {}", device.info());
        }
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().expect("this test"))
        .args([
            "--exact",
            "brt_profile_prints_the_table_at_exit",
            "--nocapture",
        ])
        .env("BRT_PROFILE", "1")
        .env("BROOK_PROFILE_CHILD", "1")
        .output()
        .expect("run the child");
    let err = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{err}");
    assert!(err.contains("brook profile (BRT_PROFILE)"), "{err}");
    for device in Device::all() {
        let name = device.info().to_string();
        let name = name.split(' ').next().unwrap_or_default().to_string();
        assert!(
            stdout.contains(&format!("sampled on {}", device.info())),
            "{stdout}"
        );
        assert!(
            err.lines()
                .any(|l| l.starts_with(&name) && l.contains(" sample ")),
            "{name}: {err}"
        );
    }
}
