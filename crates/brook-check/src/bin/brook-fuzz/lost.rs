//! Kernels that kill or hang the process that runs them (a driver's compiler crashing, a
//! device that never finishes), minimised: each candidate runs in a process of its own
//! (`brook-fuzz run-case`), and a change is kept while that process still ends the same way
//! (killed by the same signal, or still running at the timeout).
//!
//! ```text
//! brook-fuzz shrink SEED INDEX [--devices vulkan] [--timeout SECS] [--tries T] [--out DIR]
//! ```

use brook_check::fuzz::{self, shrink, Generated};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How a process running a kernel ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// It finished (whatever the kernel's results).
    Finished,
    /// It exited with a failure status of its own.
    Failed(i32),
    /// A signal killed it (a crash: 11 is SIGSEGV).
    Killed(i32),
    /// It was still running at the timeout, and was killed.
    Hung,
}

impl Ending {
    /// How a process that exited with `status` ended.
    pub fn of(status: ExitStatus) -> Ending {
        #[cfg(unix)]
        if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
            return Ending::Killed(signal);
        }
        match status.code() {
            Some(0) => Ending::Finished,
            Some(code) => Ending::Failed(code),
            None => Ending::Killed(0),
        }
    }

    /// Whether a kernel that ends so is worth minimising (it did not finish).
    fn is_lost(self) -> bool {
        self != Ending::Finished
    }
}

impl std::fmt::Display for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ending::Finished => write!(f, "finished"),
            Ending::Failed(code) => write!(f, "exited with status {code}"),
            Ending::Killed(11) => write!(f, "killed by SIGSEGV"),
            Ending::Killed(signal) => write!(f, "killed by signal {signal}"),
            Ending::Hung => write!(f, "still running at the timeout"),
        }
    }
}

/// Runs `command` to its end or to `timeout` (then kills it).
pub fn run_to_end(mut command: Command, timeout: Duration) -> std::io::Result<Ending> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Ending::of(status));
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(Ending::Hung);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

struct Options {
    seed: u64,
    index: u64,
    devices: Vec<String>,
    timeout: Duration,
    tries: usize,
    out: PathBuf,
}

fn parse(args: &[String]) -> Option<Options> {
    let [seed, index, flags @ ..] = args else {
        return None;
    };
    let mut o = Options {
        seed: seed.parse().ok()?,
        index: index.parse().ok()?,
        devices: Vec::new(),
        timeout: Duration::from_secs(120),
        tries: 200,
        out: PathBuf::from("fuzz-findings"),
    };
    let mut it = flags.iter();
    while let Some(flag) = it.next() {
        let value = it.next()?;
        match flag.as_str() {
            "--devices" => o.devices = value.split(',').map(String::from).collect(),
            "--timeout" => o.timeout = Duration::from_secs(value.parse().ok()?),
            "--tries" => o.tries = value.parse().ok()?,
            "--out" => o.out = PathBuf::from(value),
            _ => return None,
        }
    }
    Some(o)
}

/// `brook-fuzz shrink`: minimises kernel INDEX of SEED while a process running it on the
/// devices ends as the whole kernel's does; writes the result as a case. The exit status is
/// 0 when a case was written, 1 when the kernel finishes here, 2 on bad arguments.
pub fn shrink_command(args: &[String]) -> i32 {
    let Some(o) = parse(args) else {
        eprintln!(
            "usage: brook-fuzz shrink SEED INDEX [--devices vulkan] [--timeout SECS] \
             [--tries T] [--out DIR]"
        );
        return 2;
    };
    if let Err(e) = std::fs::create_dir_all(&o.out) {
        eprintln!("brook-fuzz: cannot make {}: {e}", o.out.display());
        return 2;
    }
    let scratch = o
        .out
        .join(format!(".shrinking_{}_{}.case", o.seed, o.index));
    let generated = fuzz::generate(o.seed, o.index);
    let devices = o.devices.join(",");
    let ending_of = |candidate: &Generated, devices: &str| -> Ending {
        ending_on(candidate, devices, &scratch, o.timeout)
    };
    let whole = ending_of(&generated, &devices);
    println!(
        "brook-fuzz: kernel {} of seed {} on {}: {whole}",
        o.index,
        o.seed,
        if devices.is_empty() {
            "every device"
        } else {
            &devices
        }
    );
    if !whole.is_lost() {
        let _ = std::fs::remove_file(&scratch);
        return 1;
    }
    let small = shrink::minimise_while(&generated, o.tries, |candidate| {
        ending_of(candidate, &devices) == whole
    });
    let reference = ending_of(&small, "interp");
    let _ = std::fs::remove_file(&scratch);
    let comment = format!(
        "Found by brook-fuzz (seed {} kernel {}: `brook-fuzz show {} {}`), minimised in \
         processes of its own (`brook-fuzz shrink`): the process running it on {} was {whole}.",
        o.seed,
        o.index,
        o.seed,
        o.index,
        if devices.is_empty() {
            "every device"
        } else {
            &devices
        }
    );
    let text = if reference == Ending::Finished {
        fuzz::expected_case_text(&small, &comment)
    } else {
        let comment =
            format!("{comment}\nThe interpreter was {reference} on it: no expected values.");
        brook_check::case::write(&small.case(), &comment)
    };
    let path = o
        .out
        .join(format!("fuzz_{}_{}_shrunk.case", o.seed, o.index));
    if let Err(e) = std::fs::write(&path, &text) {
        eprintln!("brook-fuzz: cannot write {}: {e}", path.display());
        return 2;
    }
    println!(
        "brook-fuzz: minimised: {}\n{}",
        path.display(),
        small.source()
    );
    0
}

/// How a process of its own running `generated` on `devices` ends (the kernel written to
/// `scratch` first).
fn ending_on(generated: &Generated, devices: &str, scratch: &Path, timeout: Duration) -> Ending {
    let text = brook_check::case::write(&generated.case(), "a candidate of brook-fuzz shrink");
    if let Err(e) = std::fs::write(scratch, text) {
        eprintln!("brook-fuzz: cannot write {}: {e}", scratch.display());
        return Ending::Failed(-1);
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("brook-fuzz: cannot find its own program to run a candidate: {e}");
            return Ending::Failed(-1);
        }
    };
    let mut command = Command::new(exe);
    command.arg("run-case");
    if !devices.is_empty() {
        command.args(["--devices", devices]);
    }
    command.arg(scratch);
    run_to_end(command, timeout).unwrap_or_else(|e| {
        eprintln!("brook-fuzz: cannot run a candidate: {e}");
        Ending::Failed(-1)
    })
}

/// `brook-fuzz run-case [--devices D] FILE`: runs a case's kernels on the devices (the
/// interpreter only where `interp` is named), comparing nothing; exits 0 when it got
/// through, 1 when the case could not be read or compiled.
pub fn run_case_command(args: &[String]) -> i32 {
    let (types, file) = match args {
        [flag, list, file] if flag == "--devices" => {
            (list.split(',').map(String::from).collect::<Vec<_>>(), file)
        }
        [file] => (Vec::new(), file),
        _ => {
            eprintln!("usage: brook-fuzz run-case [--devices D] FILE");
            return 2;
        }
    };
    let case = match std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|text| brook_check::case::parse(&text))
    {
        Ok(case) => case,
        Err(e) => {
            eprintln!("brook-fuzz: {file}: {e}");
            return 1;
        }
    };
    let program = match brook_check::exec::compile(file, &case) {
        Ok(program) => program,
        Err(e) => {
            eprintln!("brook-fuzz: {file}: {e}");
            return 1;
        }
    };
    let wants_interp = types.iter().any(|t| t == "interp");
    for device in fuzz::devices(&types) {
        if device.kind() == brook::DeviceKind::Interp && !wants_interp {
            continue;
        }
        for run in &case.runs {
            if let Err(e) = brook_check::exec::run_once(&program, run, &device) {
                eprintln!("brook-fuzz: on {}: {e}", device.info());
            }
        }
    }
    0
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    #[test]
    fn endings_are_told_apart() {
        let second = Duration::from_secs(5);
        assert_eq!(run_to_end(sh("exit 0"), second).unwrap(), Ending::Finished);
        assert_eq!(run_to_end(sh("exit 3"), second).unwrap(), Ending::Failed(3));
        assert_eq!(
            run_to_end(sh("kill -SEGV $$"), second).unwrap(),
            Ending::Killed(11)
        );
        assert_eq!(
            run_to_end(sh("sleep 5"), Duration::from_millis(200)).unwrap(),
            Ending::Hung
        );
    }
}
