//! The Brook (`.br`) frontend: BrookGPU and Brook+ source, checked with the Brook+ rules.

pub mod ast;
pub mod c_library;
pub mod check;
pub mod include;
pub mod lexer;
pub mod lower;
pub mod parse;
pub mod preprocess;
pub mod token;

pub use preprocess::Define;

use crate::diagnostic::{Diagnostic, Diagnostics, WarningPolicy};
use crate::frontend_stack::on_frontend_stack;
use crate::source::SourceFile;
use check::ProgramInfo;
use preprocess::Spellings;
use token::Token;

/// The options that change what the frontend accepts (seed 001 section 1.2.2, seed 003 section 9).
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Strong type checking (the default); `-a` turns it off.
    pub strong_types: bool,
    /// `-w N`: the warning level, 0 to 3.
    pub warning_level: u8,
    /// `-x`: warnings are errors (only without strong type checking).
    pub warnings_as_errors: bool,
    /// Gather arrays with sizes are constant buffers (the default); `-c` turns this off.
    pub constant_buffers: bool,
    /// `-pp`: run the brcc preprocessor.
    pub preprocess: bool,
    /// `-D NAME[=value]` definitions for the preprocessor.
    pub defines: Vec<Define>,
    /// Which compiler's rules apply (`-g` / `--brookgpu` selects BrookGPU).
    pub dialect: Dialect,
}

/// BrookGPU's host types that only its OpenGL and DirectX backends had (occlusion queries and
/// write masks over the depth buffer): named in host code, they get a diagnostic
/// ([`crate::diagnostic::Code::GraphicsOnly`]) rather than a C++ compile error.
pub const GRAPHICS_ONLY_HOST: [&str; 2] = ["write_query", "write_mask"];

/// The language rules a file is checked with (`SEMANTICS.md`, "Dialects").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// AMD Brook+ 1.4 (seeds 001, 003): strong type checking reports implicit conversions as
    /// level-1 warnings (`-a` relaxes it to the conversion-rule warnings).
    #[default]
    BrookPlus,
    /// Stanford BrookGPU (seeds 000, 002): Cg/C implicit conversions without warnings, and a
    /// kernel may read and write one stream (the result is as if every input element were read
    /// before any output element is written).
    BrookGpu,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            strong_types: true,
            warning_level: 0,
            warnings_as_errors: false,
            constant_buffers: true,
            preprocess: false,
            defines: Vec::new(),
            dialect: Dialect::BrookPlus,
        }
    }
}

impl CheckOptions {
    pub fn warning_policy(&self) -> WarningPolicy {
        WarningPolicy {
            strong: self.strong_types,
            level: self.warning_level,
            as_errors: self.warnings_as_errors,
        }
    }
}

/// The result of checking one file: the tree, what the checker learned, and the diagnostics in
/// source order.
#[derive(Debug)]
pub struct Checked {
    pub file: SourceFile,
    pub tokens: Vec<Token>,
    pub spellings: Spellings,
    pub program: ast::Program,
    pub info: ProgramInfo,
    pub diagnostics: Vec<Diagnostic>,
}

impl Checked {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// All diagnostics rendered with their source lines, in source order.
    pub fn render_diagnostics(&self) -> String {
        self.diagnostics
            .iter()
            .map(|d| d.render(&self.file))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Runs the whole frontend on one file, on a thread with a stack large enough for the deepest
/// nesting the parser accepts.
pub fn check_source(file: SourceFile, options: &CheckOptions) -> Checked {
    on_frontend_stack(
        file,
        |file| check_on_this_thread(file, options),
        || SourceFile::new("<input>", ""),
    )
}

/// A checked program and, when it has no errors, its IR.
pub struct Compiled {
    pub checked: Checked,
    /// `None` when the check found errors; a lowering error is a compiler defect.
    pub module: Option<Result<brook_ir::Module, lower::LowerError>>,
}

/// Checks a file and, if it has no errors, lowers it to IR (on the frontend's large stack).
pub fn compile_source(file: SourceFile, options: &CheckOptions) -> Compiled {
    on_frontend_stack(
        file,
        |file| {
            let checked = check_on_this_thread(file, options);
            let module = if checked.has_errors() {
                None
            } else {
                let lowered = lower::lower(&checked.program, &checked.info);
                Some(lowered.map(|mut module| {
                    module.source = Some(std::sync::Arc::new(checked.file.clone()));
                    module
                }))
            };
            Compiled { checked, module }
        },
        || SourceFile::new("<input>", ""),
    )
}

fn check_on_this_thread(file: SourceFile, options: &CheckOptions) -> Checked {
    let mut diags = Diagnostics::new(options.warning_policy());
    let raw = lexer::lex(&file, &mut diags);
    let (tokens, spellings) =
        preprocess::preprocess(&file, raw, options.preprocess, &options.defines, &mut diags);
    let program = parse::parse(&file, &spellings, &tokens, &mut diags);
    let info = check::check(&program, options, &mut diags);
    Checked {
        file,
        tokens,
        spellings,
        program,
        info,
        diagnostics: diags.into_sorted(),
    }
}
