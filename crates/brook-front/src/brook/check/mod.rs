//! The Brook+ semantic checker (seed 003, section 6).
use crate::brook::ast::Program;
use crate::brook::preprocess::Spellings;
use crate::brook::CheckOptions;
use crate::diagnostic::Diagnostics;
use crate::source::SourceFile;

#[derive(Debug, Default)]
pub struct ProgramInfo {}

pub fn check(
    _file: &SourceFile,
    _spellings: &Spellings,
    _program: &Program,
    _options: &CheckOptions,
    _diags: &mut Diagnostics,
) -> ProgramInfo {
    ProgramInfo::default()
}
