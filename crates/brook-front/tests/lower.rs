//! IR snapshot tests: every clean fixture and example lowers to IR that validates, and its text
//! form matches `fixtures/ir/<name>.ir`. Run with `BLESS=1` to rewrite the snapshots.

mod common;

use brook_front::brook::lower::lower;
use brook_front::{check_source, SourceFile};
use std::fs;
use std::path::{Path, PathBuf};

fn sources() -> Vec<PathBuf> {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        crate_dir.join("tests/fixtures/ok"),
        crate_dir.join("../../examples"),
    ] {
        for entry in fs::read_dir(&dir).expect("fixture directory") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "br") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_clean_program_lowers_to_valid_ir_matching_its_snapshot() {
    let bless = std::env::var_os("BLESS").is_some();
    let snapshot_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ir");
    let mut failures = Vec::new();
    for path in sources() {
        let text = fs::read_to_string(&path).expect("read fixture");
        let options = common::options_from(&text);
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("name")
            .to_string();
        let checked = check_source(SourceFile::new(path.display().to_string(), text), &options);
        assert!(
            !checked.has_errors(),
            "{name}: {}",
            checked.render_diagnostics()
        );
        let module = match lower(&checked.program, &checked.info) {
            Ok(module) => module,
            Err(e) => {
                failures.push(format!("{name}: lowering failed: {e}"));
                continue;
            }
        };
        if let Err(e) = brook_ir::validate(module.clone()) {
            failures.push(format!("{name}: {e}"));
            continue;
        }
        let printed = brook_ir::print::print_module(&module);
        let snapshot = snapshot_dir.join(format!("{name}.ir"));
        if bless {
            fs::write(&snapshot, &printed).expect("write snapshot");
        } else if fs::read_to_string(&snapshot).ok().as_deref() != Some(printed.as_str()) {
            failures.push(format!(
                "{name}: IR differs from {}:\n{printed}",
                snapshot.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
