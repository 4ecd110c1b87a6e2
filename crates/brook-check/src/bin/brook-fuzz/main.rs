//! `brook-fuzz`: random kernels on every device, compared with the interpreter bit for bit.
//!
//! ```text
//! brook-fuzz [--seed S] [--count N] [--first I] [--devices cpu,cuda] [--jobs J]
//!            [--batch B] [--timeout SECS] [--tries T] [--out DIR] [--for SECS]
//! brook-fuzz show SEED INDEX      the case that kernel INDEX of seed SEED is, with the
//!                                  interpreter's outputs as its expected values
//! brook-fuzz replay [--devices cpu,cuda] FILE.case ...
//!                                  runs saved cases (findings) on the interpreter and the
//!                                  devices, and says for each whether it agrees
//! brook-fuzz shrink SEED INDEX [--devices vulkan] [--timeout SECS] [--tries T] [--out DIR]
//!                                  minimises a kernel that kills or hangs the process
//!                                  running it, each candidate in a process of its own
//! brook-fuzz run-case [--devices D] FILE
//!                                  runs a case's kernels on the devices, comparing nothing
//!                                  (what `shrink` runs)
//! ```
//! Kernels run in worker processes (`--jobs` at a time, `--batch` kernels each), so a crash or
//! a hang is caught and named (the kernel that was running) and the run goes on after it. Each
//! finding is minimised and written to `--out` (default `fuzz-findings/`) as a conformance case.
//! `--for SECS` ends the run after that long (the kernels being run are left unjudged) and
//! still prints its table.
//! The exit status is 1 when anything was found.

mod lost;

use brook_check::fuzz::{self, shrink};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
struct Options {
    seed: u64,
    first: u64,
    count: u64,
    devices: Vec<String>,
    jobs: usize,
    batch: u64,
    timeout: u64,
    /// How long the whole run may take (`--for`), if limited.
    run_for: Option<Duration>,
    tries: usize,
    out: PathBuf,
}

fn usage() -> ! {
    eprintln!(
        "usage: brook-fuzz [--seed S] [--count N] [--first I] [--devices cpu,cuda] [--jobs J] \
         [--batch B] [--timeout SECS] [--tries T] [--out DIR] [--for SECS]\n       brook-fuzz show SEED INDEX\n       \
         brook-fuzz replay [--devices cpu,cuda] FILE.case ...\n       \
         brook-fuzz shrink SEED INDEX [--devices vulkan] [--timeout SECS] [--tries T] [--out DIR]\n       \
         brook-fuzz run-case [--devices D] FILE"
    );
    std::process::exit(2)
}

fn parse(args: &[String]) -> Options {
    let mut o = Options {
        seed: 1,
        first: 0,
        count: 1000,
        devices: Vec::new(),
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        batch: 2000,
        timeout: 120,
        run_for: None,
        tries: 400,
        out: PathBuf::from("fuzz-findings"),
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().unwrap_or_else(|| usage());
        let number = |v: String| v.parse::<u64>().unwrap_or_else(|_| usage());
        match flag.as_str() {
            "--seed" => o.seed = number(value()),
            "--first" => o.first = number(value()),
            "--count" => o.count = number(value()),
            "--jobs" => o.jobs = number(value()).max(1) as usize,
            "--batch" => o.batch = number(value()).max(1),
            "--timeout" => o.timeout = number(value()).max(1),
            "--for" => o.run_for = Some(Duration::from_secs(number(value()))),
            "--tries" => o.tries = number(value()) as usize,
            "--devices" => o.devices = value().split(',').map(String::from).collect(),
            "--out" => o.out = PathBuf::from(value()),
            _ => usage(),
        }
    }
    o
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("show") => {
            let [_, seed, index] = args.as_slice() else {
                usage()
            };
            let (Ok(seed), Ok(index)) = (seed.parse(), index.parse()) else {
                usage()
            };
            let generated = fuzz::generate(seed, index);
            let origin =
                format!("`brook-fuzz show {seed} {index}`: expected values are the interpreter's");
            print!("{}", fuzz::expected_case_text(&generated, &origin));
        }
        Some("replay") => std::process::exit(replay(&args[1..])),
        Some("shrink") => std::process::exit(lost::shrink_command(&args[1..])),
        Some("run-case") => std::process::exit(lost::run_case_command(&args[1..])),
        Some("worker") => worker(&parse(&args[1..])),
        _ => std::process::exit(parent(&parse(&args))),
    }
}

/// Runs each case file on the interpreter and the chosen devices, printing `agrees FILE` or
/// the first failure; 1 when any case failed or could not be read.
fn replay(args: &[String]) -> i32 {
    let (mut devices, mut files) = (Vec::new(), Vec::new());
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--devices" => {
                let list = it.next().unwrap_or_else(|| usage());
                devices = list.split(',').map(String::from).collect();
            }
            file => files.push(file.to_string()),
        }
    }
    if files.is_empty() {
        usage();
    }
    let devices = fuzz::devices(&devices);
    let mut status = 0;
    for file in files {
        let outcome = std::fs::read_to_string(&file)
            .map_err(|e| e.to_string())
            .and_then(|text| brook_check::case::parse(&text))
            .and_then(|case| {
                let program = brook_check::exec::compile(&file, &case)?;
                let judgement = brook_check::exec::judge(&case, &program, &devices);
                match judgement.failures.first() {
                    None => Ok(()),
                    Some(f) => Err(format!("on {}: {}", f.device, f.message)),
                }
            });
        match outcome {
            Ok(()) => println!("agrees {file}"),
            Err(e) => {
                println!("fails {file}: {e}");
                status = 1;
            }
        }
    }
    status
}

/// Runs kernels `first..first + count` in this process, printing `at I` before each and
/// `finding I PATH` for each finding, `flushed I` for a kernel that differed only by float
/// subnormals a device flushes (counted apart), then `done`.
fn worker(o: &Options) {
    let devices = fuzz::devices(&o.devices);
    let stdout = std::io::stdout();
    // Keep panics' own messages off stderr: check() reports them as findings.
    std::panic::set_hook(Box::new(|_| {}));
    // BROOK_FUZZ_SLOW_MS: name the kernels that take longer than this to check.
    let slow = std::env::var("BROOK_FUZZ_SLOW_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok());
    for index in o.first..o.first + o.count {
        let _ = writeln!(stdout.lock(), "at {index}");
        let generated = fuzz::generate(o.seed, index);
        let started = Instant::now();
        let (found, flushed) = fuzz::check_counting(&generated, &devices);
        if flushed {
            let _ = writeln!(stdout.lock(), "flushed {index}");
        }
        let took = started.elapsed();
        if slow.is_some_and(|ms| took > Duration::from_millis(ms)) {
            let _ = writeln!(stdout.lock(), "slow {index} {} ms", took.as_millis());
        }
        if let Some(finding) = found {
            let small = shrink::minimise(&generated, &finding, &devices, o.tries);
            let path = write_finding(
                o,
                index,
                &fuzz::case_text(&small, &finding, &origin(o, index)),
            );
            let _ = writeln!(
                stdout.lock(),
                "finding {index} {} {:?} on {}",
                path.display(),
                finding.kind,
                finding.device
            );
        }
    }
    let _ = writeln!(stdout.lock(), "done");
}

fn origin(o: &Options, index: u64) -> String {
    format!(
        "seed {} kernel {index}: `brook-fuzz show {} {index}`",
        o.seed, o.seed
    )
}

fn write_finding(o: &Options, index: u64, text: &str) -> PathBuf {
    let _ = std::fs::create_dir_all(&o.out);
    let path = o.out.join(format!("fuzz_{}_{index}.case", o.seed));
    if let Err(e) = std::fs::write(&path, text) {
        eprintln!("brook-fuzz: cannot write {}: {e}", path.display());
    }
    path
}

/// A worker process and the kernels it still has to run.
struct Worker {
    child: Child,
    next: u64,
    end: u64,
    last_line: Instant,
    done: bool,
}

enum Line {
    Text(usize, String),
    Closed(usize),
}

fn spawn(o: &Options, id: usize, first: u64, end: u64, tx: &mpsc::Sender<Line>) -> Worker {
    let exe = std::env::current_exe().expect("the path of brook-fuzz");
    let mut child = Command::new(exe)
        .arg("worker")
        .args(["--seed", &o.seed.to_string()])
        .args(["--first", &first.to_string()])
        .args(["--count", &(end - first).to_string()])
        .args(["--tries", &o.tries.to_string()])
        .args(["--devices", &o.devices.join(",")])
        .arg("--out")
        .arg(&o.out)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start a brook-fuzz worker");
    let stdout = child.stdout.take().expect("piped stdout");
    let tx = tx.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(Line::Text(id, line));
        }
        let _ = tx.send(Line::Closed(id));
    });
    Worker {
        child,
        next: first,
        end,
        last_line: Instant::now(),
        done: false,
    }
}

/// Runs the kernels over worker processes; returns the exit status.
fn parent(o: &Options) -> i32 {
    let start = Instant::now();
    let names: Vec<String> = fuzz::devices(&o.devices)
        .iter()
        .map(|d| d.info().to_string())
        .collect();
    println!(
        "brook-fuzz: seed {}, kernels {}..{}, devices {}",
        o.seed,
        o.first,
        o.first + o.count,
        names.join(", ")
    );
    if names.len() < 2 {
        println!(
            "brook-fuzz: no device to compare with the interpreter (of {:?})",
            o.devices
        );
        return 1;
    }
    let mut batches: VecDeque<(u64, u64)> = (o.first..o.first + o.count)
        .step_by(o.batch as usize)
        .map(|b| (b, (b + o.batch).min(o.first + o.count)))
        .collect();
    let (tx, rx) = mpsc::channel();
    let mut workers: Vec<Option<Worker>> = Vec::new();
    let (mut compared, mut findings, mut crashes, mut hangs) = (0u64, Vec::new(), 0, 0);
    let mut flushed = 0u64;
    let mut last_report = Instant::now();
    loop {
        if o.run_for.is_some_and(|limit| start.elapsed() > limit) {
            let stopped = stop_all(&mut workers);
            compared = compared.saturating_sub(stopped);
            println!(
                "brook-fuzz: stopped after {:.0} s (--for): {stopped} kernel(s) being run left unjudged",
                start.elapsed().as_secs_f64()
            );
            break;
        }
        while workers.iter().filter(|w| w.is_some()).count() < o.jobs {
            let Some((first, end)) = batches.pop_front() else {
                break;
            };
            let id = workers.len();
            workers.push(Some(spawn(o, id, first, end, &tx)));
        }
        if workers.iter().all(Option::is_none) {
            break;
        }
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(Line::Text(id, line)) => {
                let Some(w) = workers[id].as_mut() else {
                    continue;
                };
                w.last_line = Instant::now();
                let words: Vec<&str> = line.splitn(3, ' ').collect();
                match words.as_slice() {
                    ["at", i] => {
                        w.next = i.parse().unwrap_or(w.next);
                        compared += 1;
                    }
                    ["finding", i, rest] => {
                        println!("brook-fuzz: kernel {i}: {rest}");
                        findings.push(line.clone());
                    }
                    ["flushed", _] => flushed += 1,
                    ["done"] => w.done = true,
                    ["slow", i, rest] => println!("brook-fuzz: kernel {i}: {rest}"),
                    _ => {}
                }
            }
            Ok(Line::Closed(id)) => {
                let Some(mut w) = workers[id].take() else {
                    continue;
                };
                let status = w.child.wait();
                if !w.done {
                    crashes += 1;
                    let why = status.map_or("?".to_string(), |s| s.to_string());
                    report_lost(o, w.next, &format!("the worker died ({why})"));
                    if w.next + 1 < w.end {
                        batches.push_front((w.next + 1, w.end));
                    }
                }
            }
            Err(_) => {}
        }
        for slot in workers.iter_mut() {
            let hung = slot
                .as_ref()
                .is_some_and(|w| w.last_line.elapsed() > Duration::from_secs(o.timeout));
            if hung {
                let mut w = slot.take().expect("a hung worker");
                let _ = w.child.kill();
                let _ = w.child.wait();
                hangs += 1;
                report_lost(
                    o,
                    w.next,
                    &format!("no progress for {} s (a hang)", o.timeout),
                );
                if w.next + 1 < w.end {
                    batches.push_front((w.next + 1, w.end));
                }
            }
        }
        if last_report.elapsed() > Duration::from_secs(30) {
            last_report = Instant::now();
            println!(
                "brook-fuzz: {compared} kernels, {} findings, {flushed} float subnormals flushed, {:.0} s",
                findings.len() + crashes + hangs,
                start.elapsed().as_secs_f64()
            );
        }
    }
    println!();
    println!(
        "| seed | kernels | devices | mismatches/failures | crashes | hangs | \
         float subnormals flushed | seconds |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    println!(
        "| {} | {compared} | {} | {} | {crashes} | {hangs} | {flushed} | {:.0} |",
        o.seed,
        names.join(" vs "),
        findings.len(),
        start.elapsed().as_secs_f64()
    );
    if flushed > 0 {
        println!(
            "brook-fuzz: {flushed} kernel(s) differ from the exact interpreter only as a device \
             that flushes float subnormals must (they equal the interpreter flushing them; \
             docs/SEMANTICS.md): not mismatches"
        );
    }
    i32::from(!findings.is_empty() || crashes > 0 || hangs > 0)
}

/// Ends every worker still running; how many there were.
fn stop_all(workers: &mut [Option<Worker>]) -> u64 {
    let mut stopped = 0;
    for slot in workers.iter_mut() {
        if let Some(mut w) = slot.take() {
            let _ = w.child.kill();
            let _ = w.child.wait();
            stopped += u64::from(!w.done);
        }
    }
    stopped
}

/// A kernel that killed or hung its worker: written as it was generated (minimising it here
/// would run it again in this process; `brook-fuzz shrink` does it in processes of its own).
fn report_lost(o: &Options, index: u64, why: &str) {
    let generated = fuzz::generate(o.seed, index);
    let comment = format!("Found by brook-fuzz ({}): {why}.", origin(o, index));
    let path = write_finding(
        o,
        index,
        &brook_check::case::write(&generated.case(), &comment),
    );
    println!(
        "brook-fuzz: kernel {index}: {why}: {} (minimise it with `brook-fuzz shrink {} {index} \
         --devices {}`)",
        path.display(),
        o.seed,
        o.devices.join(",")
    );
}
