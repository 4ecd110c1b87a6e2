//! Where the runtime's errors and warnings are seen: every stream error and warning is printed,
//! one line each, on stderr, or appended to the file `BRT_LOG_FILE` names (read once, when the
//! first message is logged), so that a program that never calls `error()` still sees what went
//! wrong. The same event recorded on several streams (a refused launch on each of its outputs)
//! is printed once: a line equal to the one before it is not repeated. A log file that cannot
//! be opened is reported once on stderr, and messages then go to stderr: logging never fails an
//! operation.

use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

fn log_file() -> Option<&'static Mutex<File>> {
    static FILE: OnceLock<Option<Mutex<File>>> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = std::env::var_os("BRT_LOG_FILE")?;
        if path.is_empty() {
            return None;
        }
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
        {
            Ok(file) => Some(Mutex::new(file)),
            Err(e) => {
                eprintln!(
                    "brook: BRT_LOG_FILE={}: cannot open it ({e}); stream errors go to stderr",
                    path.to_string_lossy()
                );
                None
            }
        }
    })
    .as_ref()
}

/// Prints one line (`brook: LINE`) on stderr or in the `BRT_LOG_FILE` log, unless it repeats
/// the line logged just before.
pub fn append(line: &str) {
    static LAST: Mutex<String> = Mutex::new(String::new());
    {
        let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
        if *last == line {
            return;
        }
        line.clone_into(&mut last);
    }
    match log_file() {
        Some(file) => {
            let mut file = file.lock().unwrap_or_else(|p| p.into_inner());
            // A full disk must not turn into a stream error: the message is also on the stream.
            let _ = writeln!(file, "brook: {line}");
        }
        None => eprintln!("brook: {line}"),
    }
}
