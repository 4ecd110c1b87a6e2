//! An observer never changes what it observes: the whole conformance suite again with
//! `BRT_PROFILE=1` (every launch timed, with events on a GPU) and with `BRT_CROSSCHECK=1`
//! (every launch run again on the interpreter and compared), on every device. Each mode is its
//! own process (the variables are read once): the test runs itself again as that child.

use brook_check::exec;
use std::process::Command;

/// In the child: the suite on every device. In the parent: the child with `variable=1`.
fn suite_with(variable: &str, test: &str) {
    if std::env::var_os("BROOK_OBSERVED_CHILD").is_some() {
        let devices = exec::devices_interpreter_first();
        exec::run_suite(&devices).assert_passed(&format!("conformance ({variable}=1)"));
        return;
    }
    let out = Command::new(std::env::current_exe().expect("this test"))
        .args(["--exact", test, "--nocapture"])
        .env(variable, "1")
        .env("BROOK_OBSERVED_CHILD", "1")
        .output()
        .expect("run the child");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!("conformance ({variable}=1):")),
        "{stdout}"
    );
}

#[test]
fn the_suite_under_brt_profile() {
    suite_with("BRT_PROFILE", "the_suite_under_brt_profile");
}

#[test]
fn the_suite_under_brt_crosscheck() {
    suite_with("BRT_CROSSCHECK", "the_suite_under_brt_crosscheck");
}
