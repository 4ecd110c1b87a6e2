//! `BRT_RUNTIME` and `BRT_ADAPTER` choose the default device (their own process, since the
//! default device is chosen once).

use brook::{Device, DeviceKind};

#[test]
fn the_adapter_variable_picks_the_device_index() {
    std::env::set_var("BRT_RUNTIME", "interp");
    std::env::set_var("BRT_ADAPTER", "1");
    let device = Device::default_device();
    assert_eq!(device.kind(), DeviceKind::Interp);
    assert_eq!(device.info().ordinal, 1);
    assert_eq!(Device::current().info(), device.info());
    let from_thread = std::thread::spawn(|| Device::current().info().ordinal)
        .join()
        .expect("thread");
    assert_eq!(from_thread, 1, "a new thread starts on the default device");
}

/// `BRT_RUNTIME=interp:0+interp:1` makes the default device a group of both interpreters (the
/// test runs itself again as that program, since the default device is chosen once).
#[test]
fn a_runtime_spec_of_several_devices_makes_the_default_a_group() {
    if std::env::var_os("BROOK_GROUP_CHILD").is_some() {
        let device = Device::default_device();
        assert_eq!(device.type_name(), "group");
        assert_eq!(device.info().to_string(), "interp:0+interp:1");
        let program = brook::Program::from_source(
            "group.br",
            "kernel void twice(float x<>, out float y<>) { y = 2.0f * x; }",
        )
        .expect("compiles");
        let x = brook::Stream::from_slice(&device, &[5], &[1.0f32, 2.0, 3.0, 4.0, 5.0]).expect("x");
        let y = brook::Stream::<f32>::new(&device, &[5]).expect("y");
        program
            .kernel("twice")
            .expect("twice")
            .launch(brook::args![&x, &y])
            .expect("launch");
        assert_eq!(y.to_vec().expect("y"), [2.0, 4.0, 6.0, 8.0, 10.0]);
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().expect("this test"))
        .args([
            "--exact",
            "a_runtime_spec_of_several_devices_makes_the_default_a_group",
            "--nocapture",
        ])
        .env("BRT_RUNTIME", "interp:0+interp:1")
        .env_remove("BRT_ADAPTER")
        .env("BROOK_GROUP_CHILD", "1")
        .output()
        .expect("run the child");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
}

/// `BRT_ADAPTER` naming no device, or no number, is said on stderr and the program goes on
/// with the first device (a child process each, since the default device is chosen once).
#[test]
fn an_adapter_that_names_no_device_is_a_warning() {
    if std::env::var_os("BROOK_ADAPTER_CHILD").is_some() {
        let device = Device::default_device();
        assert_eq!(device.info().ordinal, 0);
        return;
    }
    let cases = [
        (Some("interp"), "999", "BRT_RUNTIME=interp BRT_ADAPTER=999"),
        (None, "999", "BRT_ADAPTER=999"),
        (
            Some("interp"),
            "first",
            "BRT_ADAPTER=first is not a device index",
        ),
    ];
    for (runtime, adapter, expected) in cases {
        let mut child = std::process::Command::new(std::env::current_exe().expect("this test"));
        child
            .args([
                "--exact",
                "an_adapter_that_names_no_device_is_a_warning",
                "--nocapture",
            ])
            .env("BRT_ADAPTER", adapter)
            .env("BROOK_ADAPTER_CHILD", "1");
        match runtime {
            Some(r) => child.env("BRT_RUNTIME", r),
            None => child.env_remove("BRT_RUNTIME"),
        };
        let out = child.output().expect("run the child");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(err.contains(expected), "{runtime:?} {adapter}: {err}");
        assert!(err.contains("brook: "), "{err}");
    }
}
