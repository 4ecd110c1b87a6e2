//! The Vulkan devices of this machine: each is described, opened and probed (what it does
//! with subnormal floats, how long its loops may run) without a panic; where there are none, the test says so. CI installs
//! Mesa's lavapipe, so there is at least one there.

use brook_codegen::spirv::probe::Subnormals;
use brook_runtime::vulkan;

#[test]
fn list_devices() {
    let gpus = match vulkan::gpus() {
        Ok(gpus) => gpus,
        Err(why) => {
            eprintln!("no Vulkan devices: {why}");
            return;
        }
    };
    eprintln!("{} Vulkan devices", gpus.len());
    for (k, gpu) in gpus.iter().enumerate() {
        eprintln!("vulkan:{k}: {}", gpu.info);
        let Ok(_context) = &gpu.context else {
            assert!(gpu.info.unusable.is_some(), "an unopened device says why");
            continue;
        };
        if gpu.info.unusable.is_some() {
            continue;
        }
        let f32 = gpu.info.subnormals_f32.expect("an opened device is probed");
        assert_eq!(gpu.info.subnormals_f64.is_some(), gpu.info.float64);
        if gpu.info.promises_denorm_preserve.0 {
            assert_eq!(f32, Subnormals::Preserved, "the driver promised");
        }
        if gpu.info.signed_zero_inf_nan.0 {
            assert_eq!(gpu.info.signed_zero_kept, Some(true), "0.0 * -1.0 is -0.0");
        }
        assert!(gpu.info.subgroup_size >= 1 && gpu.info.max_group_invocations >= 128);
        // Lavapipe (llvmpipe's compiler) ends a subgroup's loops after 65,535 iterations;
        // the probe finds it, and the device's line says so.
        if gpu.info.driver.to_lowercase().contains("llvmpipe") {
            assert_eq!(gpu.info.loop_limit, Some(65_535), "{}", gpu.info);
            let device = vulkan::device(k).expect("the device opens");
            let line = &device.info().description;
            assert!(line.contains("loops end after 65535 iterations"), "{line}");
        }
    }
}

/// A loader that finds no driver (`VK_DRIVER_FILES` naming nothing) leaves no devices and
/// no panic.
#[test]
fn no_driver_means_no_devices() {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["--exact", "list_devices", "--nocapture"])
        .env("VK_DRIVER_FILES", "/nonexistent/brook-no-driver.json")
        .env("VK_ICD_FILENAMES", "/nonexistent/brook-no-driver.json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("no Vulkan devices") || err.contains("0 Vulkan devices"),
        "{err}"
    );
}
