//! Tests of the LOOM frontend, stage by stage, and of the seed's programs end to end.

mod checking;
mod imports;
mod lexing;
mod parsing;
mod seed_programs;

use crate::diagnostic::Code;
use crate::loom::{check_source, Checked};

/// Checks a program with no importable files.
fn checked(text: &str) -> Checked {
    check_source("t.loom", text, &mut |path: &str| {
        Err(format!("no file `{path}` in this test"))
    })
}

/// The codes of a program's diagnostics with their 1-based lines.
fn codes(text: &str) -> Vec<(Code, usize)> {
    let checked = checked(text);
    checked
        .diagnostics
        .iter()
        .map(|d| (d.code, checked.file.line_col(d.span.start as usize).0))
        .collect()
}

/// Asserts that a program checks without any diagnostic.
fn clean(text: &str) -> Checked {
    let checked = checked(text);
    assert!(
        checked.diagnostics.is_empty(),
        "{}",
        checked.render_diagnostics()
    );
    checked
}
