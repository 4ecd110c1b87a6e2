//! `BRT_LOG_FILE`: every stream error and warning is also appended, one line each, to the file
//! this variable names (read once, when the first message is logged). A file that cannot be
//! opened is reported once on stderr and then ignored: logging never fails an operation.

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
                    "brook: BRT_LOG_FILE={}: cannot open it ({e}); stream errors are not logged there",
                    path.to_string_lossy()
                );
                None
            }
        }
    })
    .as_ref()
}

/// Appends one line to the `BRT_LOG_FILE` log, if there is one.
pub fn append(line: &str) {
    if let Some(file) = log_file() {
        let mut file = file.lock().unwrap_or_else(|p| p.into_inner());
        // A full disk must not turn into a stream error: the message is also on the stream.
        let _ = writeln!(file, "brook: {line}");
    }
}
