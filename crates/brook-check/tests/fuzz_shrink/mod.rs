//! `brook-fuzz shrink`, the minimiser of kernels that kill or hang their process, end to end
//! (a module of the `fuzz` test binary): with a timeout of 0 every process running a
//! candidate is still running at the timeout, so every candidate "hangs" as the whole kernel
//! does and the minimiser takes the kernel down to its fixed lines; the case it writes says
//! how the process ended.

use std::process::Command;

#[test]
fn a_kernel_whose_process_hangs_is_minimised_in_processes_of_its_own() {
    let out = std::env::temp_dir().join(format!("brook_fuzz_shrink_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_brook-fuzz"))
        .args(["shrink", "52401", "2446", "--devices", "cpu"])
        .args(["--timeout", "0", "--tries", "60", "--out"])
        .arg(&out)
        .output()
        .expect("brook-fuzz runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}");
    assert!(stdout.contains("still running at the timeout"), "{stdout}");
    let case = std::fs::read_to_string(out.join("fuzz_52401_2446_shrunk.case"))
        .expect("the minimised case is written");
    let _ = std::fs::remove_dir_all(&out);
    assert!(case.contains("minimised in processes of its own"), "{case}");
    let whole = Command::new(env!("CARGO_BIN_EXE_brook-fuzz"))
        .args(["show", "52401", "2446"])
        .output()
        .expect("brook-fuzz show runs");
    let source_lines = |text: &str| {
        text.lines()
            .skip_while(|l| *l != "source:")
            .take_while(|l| !l.starts_with("run "))
            .count()
    };
    let whole = String::from_utf8_lossy(&whole.stdout);
    assert!(
        source_lines(&case) < source_lines(&whole),
        "not smaller:\n{case}"
    );
}
