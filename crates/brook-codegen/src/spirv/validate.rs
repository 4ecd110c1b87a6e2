//! Checking a module with `spirv-val` (SPIRV-Tools), the Khronos validator, where it is
//! installed: the tests of every module the dialect writes go through here.

use super::SpirvModule;
use std::process::Command;

/// The validator's verdict on `module` for Vulkan 1.2 (with scalar block layout, as Brook's
/// element layouts are C's): `None` when `spirv-val` is not installed.
pub fn spirv_val(module: &SpirvModule) -> Option<Result<(), String>> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("brook-spirv-val-{}-{n}.spv", std::process::id()));
    std::fs::write(&path, module.bytes()).ok()?;
    let out = Command::new("spirv-val")
        .args(["--target-env", "vulkan1.2", "--scalar-block-layout"])
        .arg(&path)
        .output();
    let _ = std::fs::remove_file(&path);
    let out = out.ok()?;
    Some(if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    })
}

/// For tests: panics with the validator's message when `module` is invalid; says so on
/// stderr when `spirv-val` is not installed (CI installs it).
pub fn check(module: &SpirvModule, what: &str) {
    match spirv_val(module) {
        Some(Ok(())) => {}
        Some(Err(message)) => panic!("spirv-val rejects the {what} module:\n{message}"),
        None => eprintln!("spirv-val is not installed: the {what} module was not validated"),
    }
}
