//! Rendered diagnostics against their `.stderr` snapshot, shared by the fixture tests.

use std::fs;
use std::path::Path;

/// Compares `rendered` with the snapshot at `snapshot` (rewrites it under `BLESS=1`): the
/// mismatch to report, if any.
pub fn mismatch(snapshot: &Path, rendered: &str) -> Option<String> {
    if std::env::var_os("BLESS").is_some() {
        fs::write(snapshot, rendered).expect("write snapshot");
        return None;
    }
    let expected = fs::read_to_string(snapshot).unwrap_or_default();
    (expected != rendered).then(|| format!("--- {}\n{rendered}", snapshot.display()))
}

/// Fails with every mismatch, if there are any.
pub fn assert_none(mismatches: &[String]) {
    assert!(
        mismatches.is_empty(),
        "{} snapshot(s) differ (rerun with BLESS=1 to accept):\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
