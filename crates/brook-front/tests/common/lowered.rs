//! A source's IR module as the frontend lowers it, shared by the IR analysis tests.

use brook_front::{compile_source, CheckOptions, SourceFile};
use brook_ir::Module;

/// The module of `source` (a file `t.br`), failing with its diagnostics if it has errors.
pub fn module(source: &str) -> Module {
    let compiled = compile_source(SourceFile::new("t.br", source), &CheckOptions::default());
    assert!(
        !compiled.checked.has_errors(),
        "{}",
        compiled.checked.render_diagnostics()
    );
    compiled.module.expect("lowered").expect("lowers")
}
