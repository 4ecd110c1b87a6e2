//! Programs over MPI ranks (`BRT_RUNTIME=mpi`), for real: this test starts itself under
//! `mpirun` with 3 ranks (a ragged split of the rows) and checks what rank 0 printed and how
//! the job ended. Under `mpirun`, rank 0 runs the conformance suite on the job's group of CPU
//! devices (`mpi:cpu`) against the interpreter, and the other ranks serve their devices. A
//! second job, of 2 ranks on `mpi:interp`, checks that the ranks took the host's devices in
//! turn and kills rank 1 in the middle: the job must end, non-zero, naming it.
//! Then Brook programs (examples and compatibility programs) run unchanged through `brcc run
//! --np 2` and `--np 3`, each printing its expected output, with `libbrook_capi.so` built with
//! MPI (this test builds it, and brcc).
//!
//! It needs the `mpi` feature and Open MPI's `mpirun` (`cargo test -p brook-check --features
//! mpi --test mpi_ranks`); without them it says so and passes, unless `BROOK_MPI_TESTS=required`
//! (CI) makes that a failure.

use brook_check::exec;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What rank 0 prints when its suite passed.
const PASSED: &str = "mpi_ranks: rank 0 of";

fn main() {
    if brook::raw::launched_rank().is_some() {
        rank();
        return;
    }
    if !cfg!(feature = "mpi") {
        return skipped(
            "built without the `mpi` feature (cargo test -p brook-check --features mpi --test \
             mpi_ranks)",
        );
    }
    if Command::new("mpirun").arg("--version").output().is_err() {
        return skipped("no `mpirun` on the PATH (apt-get install openmpi-bin)");
    }
    // Three ranks split the rows raggedly; the programs below run on two as well.
    let (ok, out, err) = job(3, &[]);
    assert!(ok, "3 ranks failed:\n{out}\n{err}");
    assert!(out.contains(PASSED), "3 ranks:\n{out}\n{err}");
    assert!(out.contains("3 members"), "3 ranks:\n{out}");
    println!("mpi_ranks: the suite on 3 ranks: passed");
    // On the interpreter, named without an index: the ranks of this one host take its
    // devices in turn (as two ranks on a host of two GPUs take one each).
    let spec = ("BROOK_MPI_TEST_SPEC", "interp");
    let (ok, out, err) = job(2, &[("BROOK_TEST_KILL_RANK", "1"), spec]);
    assert!(
        out.contains("the group: interp:0 + rank1:interp:1"),
        "the ranks of one host did not take its devices in turn:\n{out}\n{err}"
    );
    assert!(
        !ok,
        "a job whose rank 1 was killed ended well:\n{out}\n{err}"
    );
    assert!(!out.contains(PASSED), "{out}");
    assert!(
        err.contains("rank 1"),
        "the job's end names no rank:\n{out}\n{err}"
    );
    println!("mpi_ranks: a killed rank ends the job, non-zero, naming it");
    programs_through_brcc();
}

/// Says why nothing ran; a failure where `BROOK_MPI_TESTS=required`.
fn skipped(why: &str) {
    let required = std::env::var("BROOK_MPI_TESTS").is_ok_and(|v| v == "required");
    assert!(!required, "mpi_ranks: BROOK_MPI_TESTS=required, but {why}");
    println!("mpi_ranks: skipped: {why}");
}

/// Programs, each with its expected output beside it, run through `brcc run --np N`.
const PROGRAMS: &[&str] = &[
    "examples/heat.br",
    "examples/cg.br",
    "examples/prefix_sums.br",
    "tests/compat/brookgpu_cg_vectors.br",
    "tests/compat/brookplus_scans.br",
];

/// Builds brcc, and its runtime library with MPI, then runs [`PROGRAMS`] on 2 and 3 ranks.
fn programs_through_brcc() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let me = std::env::current_exe().expect("the test's own path");
    // target/<profile>/deps/mpi_ranks-HASH
    let profile = me
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    // brcc as the workspace builds it (it needs no MPI of its own), then the library with MPI
    // (it shares this test's MPI build of the runtime).
    for (package, features) in [("brcc", None), ("brook-capi", Some("brook-capi/mpi"))] {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "--quiet", "-p", package, "--target-dir"]);
        build.arg(profile.parent().expect("target"));
        if let Some(features) = features {
            build.args(["--features", features]);
        }
        if profile.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        assert!(
            build.status().expect("run cargo").success(),
            "building {package} failed"
        );
    }
    let brcc = profile.join("brcc");
    for program in PROGRAMS {
        let path = root.join(program);
        let expected = std::fs::read_to_string(path.with_extension("expected"))
            .expect("the program's expected output");
        let source = std::fs::read_to_string(&path).expect("the program");
        let flags: Vec<&str> = source
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("// brcc-flags:"))
            .map(|f| f.split_whitespace().collect())
            .unwrap_or_default();
        for ranks in [2, 3] {
            let run = Command::new(&brcc)
                .args(["run", "--np", &ranks.to_string()])
                .args(&flags)
                .arg(&path)
                .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
                .env("BRT_MPI_TIMEOUT", "60")
                .output()
                .expect("run brcc");
            assert_eq!(
                String::from_utf8_lossy(&run.stdout),
                expected,
                "brcc run --np {ranks} {program}: {}",
                String::from_utf8_lossy(&run.stderr)
            );
        }
        println!("mpi_ranks: brcc run --np 2 and --np 3 {program}: as expected");
    }
}

/// Runs this test under `mpirun` with `ranks` ranks; whether it succeeded, its output and
/// its errors. It must end within two minutes.
fn job(ranks: usize, env: &[(&str, &str)]) -> (bool, String, String) {
    let me = std::env::current_exe().expect("the test's own path");
    let mut command = Command::new("mpirun");
    command
        .args(["--oversubscribe", "-np", &ranks.to_string()])
        .arg(me)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("BRT_MPI_TIMEOUT", "60")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().expect("mpirun starts");
    let started = Instant::now();
    while child.try_wait().expect("mpirun runs").is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("a job of {ranks} ranks did not end within two minutes");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().expect("mpirun's output");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        output.status.success(),
        text(&output.stdout),
        text(&output.stderr),
    )
}

/// One rank of the job. Every rank but 0 serves from its first use of a device on and never
/// returns from it.
fn rank() {
    // `BROOK_MPI_TEST_SPEC=cuda` runs the suite on every rank's GPU (by hand, on a GPU machine).
    let per_rank = std::env::var("BROOK_MPI_TEST_SPEC").unwrap_or_else(|_| "cpu".into());
    let group = brook::Device::from_spec(&format!("mpi:{per_rank}")).expect("the job's group");
    let members = group.members();
    let names: Vec<String> = members.iter().map(|m| m.info().short_name()).collect();
    println!("mpi_ranks: the group: {}", names.join(" + "));
    if let Ok(rank) = std::env::var("BROOK_TEST_KILL_RANK") {
        kill_rank(&members, &rank);
    }
    let devices = [brook::Device::interp(), group];
    let outcome = exec::run_suite(&devices);
    outcome.assert_passed(&format!("conformance on mpi:{per_rank}"));
    let (rank, size) = brook::raw::launched_rank().expect("a rank");
    println!("{PASSED} {size}: {} members, suite passed", members.len());
    assert_eq!(rank, 0);
}

/// Kills the process of rank `rank` (its pid is in its members' descriptions).
fn kill_rank(members: &[brook::Device], rank: &str) {
    let prefix = format!("rank{rank}:");
    let member = members
        .iter()
        .find(|m| m.info().description.starts_with(&prefix))
        .expect("a member of that rank");
    let pid = member
        .info()
        .description
        .split("pid ")
        .nth(1)
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .expect("the member names its pid");
    let killed = Command::new("kill").args(["-9", pid]).status();
    assert!(killed.is_ok_and(|s| s.success()), "kill -9 {pid}");
    std::thread::sleep(Duration::from_millis(500));
}
