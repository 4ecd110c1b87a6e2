//! Every run-time error is seen even when the program checks none: `tests/errors/unchecked.br`
//! is built once and run once per error kind (its first argument) on each kind of device this
//! machine has; stderr must name the operation, the `.br` line and the reason, once, and the
//! program must survive (exit 0, no stale results printed as if they were right).

#[path = "../../brook-capi/tests/support/cxx.rs"]
mod cxx;

use std::path::Path;
use std::process::Command;

/// One error kind: the argument that selects it and what its stderr must hold.
struct Kind {
    argument: &'static str,
    what: &'static str,
    /// Pieces that must appear exactly once.
    once: &'static [&'static str],
}

const KINDS: &[Kind] = &[
    Kind {
        argument: "1",
        what: "a refused launch",
        once: &[
            "error: BR_ERROR_KERNEL: kernel `copy` (called at tests/errors/unchecked.br:30): argument 1 (`a`): Kernel Execution: Input stream is same as output stream",
            "Stream Write: the stream has an error (BR_ERROR_KERNEL); the host memory was not written",
        ],
    },
    Kind {
        argument: "2",
        what: "a program that does not compile at run time",
        once: &["broken.br:1:50: error[BR0201]: expected an expression"],
    },
    Kind {
        argument: "3",
        what: "an input stream that was never created",
        once: &[
            "error: BR_ERROR_DECLARATION: Stream Declaration (at tests/errors/unchecked.br:24): Stream Allocation: invalid shape [4294967293]",
            "kernel `copy` (called at tests/errors/unchecked.br:37): argument 1 (`a`): Kernel Execution: Invalid stream: it was not created",
            "Stream Write: the stream has an error (BR_ERROR_KERNEL)",
        ],
    },
    Kind {
        argument: "4",
        what: "a shape the reduction cannot use",
        once: &["kernel `sum` (called at tests/errors/unchecked.br:41): argument 2 (`r`): Kernel Execution: Input dimensions should be integral multiple of output dimensions: input [10], target [3]"],
    },
    Kind {
        argument: "5",
        what: "a failed allocation",
        once: &[
            "error: BR_ERROR_DECLARATION: Stream Declaration (at tests/errors/unchecked.br:46): Stream Allocation: Failed to create buffer of 4611686018427387904 bytes",
            "kernel `copy` (called at tests/errors/unchecked.br:48): argument 1 (`a`): Kernel Execution: Invalid stream: it was not created",
        ],
    },
    Kind {
        argument: "6",
        what: "a bad domain()",
        once: &[
            "error: BR_ERROR_DOMAIN: Domain Operator: Domain dimensions are bigger than original stream, failed to create domain stream: end [20] on a stream of [10]",
            "kernel `copy` (called at tests/errors/unchecked.br:52)",
        ],
    },
    Kind {
        argument: "7",
        what: "a reduction into a host variable from a stream never created",
        once: &["kernel `sum` (called at tests/errors/unchecked.br:57): argument 1 (`a`): Kernel Execution: Invalid stream: it was not created"],
    },
];

#[test]
fn every_runtime_error_kind_is_printed_on_stderr_once() {
    if cxx::compiler().is_none() {
        println!("runtime_errors: no C++ compiler ($CXX, c++, g++, clang++): not run");
        return;
    }
    let brcc = Path::new(env!("CARGO_BIN_EXE_brcc"));
    cxx::static_library(brcc.parent().expect("target/<profile>"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let exe = std::env::temp_dir().join(format!("brook-unchecked-{}", std::process::id()));
    let build = Command::new(brcc)
        .current_dir(&root)
        .args(["build", "tests/errors/unchecked.br", "-o"])
        .arg(&exe)
        .output()
        .expect("run brcc");
    assert!(
        build.status.success(),
        "brcc build: {}",
        String::from_utf8_lossy(&build.stderr)
    );
    let runtimes = cxx::runtimes();
    for runtime in runtimes {
        let clean = run(&exe, runtime, "0");
        assert_eq!(clean.0, "done 1 55\n", "{runtime}: {}", clean.1);
        assert!(
            clean.1.is_empty(),
            "{runtime}: a clean run printed {}",
            clean.1
        );
        for kind in KINDS {
            let (stdout, stderr) = run(&exe, runtime, kind.argument);
            assert_eq!(stdout, "done 0 0\n", "{runtime}, {}: {stderr}", kind.what);
            for piece in kind.once {
                assert_eq!(
                    stderr.matches(piece).count(),
                    1,
                    "{runtime}, {}: `{piece}` once in:\n{stderr}",
                    kind.what
                );
            }
        }
    }
    let _ = std::fs::remove_file(&exe);
}

/// Runs the program with one argument on one device; its stdout and stderr.
fn run(exe: &Path, runtime: &str, argument: &str) -> (String, String) {
    let out = Command::new(exe)
        .arg(argument)
        .env("BRT_RUNTIME", runtime)
        .env_remove("BRT_LOG_FILE")
        .output()
        .expect("run the program");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{runtime}, argument {argument}: exit {:?}\n{stderr}",
        out.status
    );
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}
