//! The LOOM frontend (seed 004): the second kernel language, compiled like Brook to the
//! kernel IR.
//!
//! Stages, each reporting every problem it finds and carrying on:
//! 1. [`import`]: `import <path>` lines splice other files in (once each; cycles are errors);
//! 2. [`lex`]: tokens, with the block and statement tokens of the layout rules (section 3.1)
//!    inserted ([`layout`]);
//! 3. [`parse`]: the syntax tree ([`ast`]);
//! 4. [`check`]: names, types and the program's rules, giving [`check::Info`].
//!
//! [`check_source`] runs them all. Decisions where the draft is silent are in `docs/LOOM.md`.

pub mod ast;
pub mod check;
pub mod import;
pub mod layout;
pub mod lexer;
pub mod lower;
pub mod parse;
pub mod token;

use crate::diagnostic::{Diagnostic, Diagnostics, WarningPolicy};
use crate::source::{SourceFile, Span};
pub use import::ReadFile;
use token::Token;

/// A lexed LOOM file: its tokens (layout inserted) and its diagnostics, in source order.
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Lexes a LOOM file and applies the layout rules (`import` lines are skipped: see
/// [`check_source`]).
pub fn lex(file: &SourceFile) -> Lexed {
    let mut diagnostics = Diagnostics::new(WarningPolicy::default());
    let tokens = layout::layout(file, &mut diagnostics);
    Lexed {
        tokens,
        diagnostics: diagnostics.into_sorted(),
    }
}

/// The tokens as the preprocessed text of section 3.1 (inserted braces and semicolons shown):
/// one space between tokens.
pub fn token_text(tokens: &[Token]) -> String {
    tokens
        .iter()
        .map(|t| t.kind.text())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A checked LOOM program: the text (imports spliced in), the syntax tree, what the checker
/// learned, and every diagnostic in source order.
pub struct Checked {
    pub file: SourceFile,
    pub program: ast::Program,
    pub info: check::Info,
    pub diagnostics: Vec<Diagnostic>,
}

impl Checked {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    pub fn error_count(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    /// Every diagnostic rendered (file:line:column, the line, notes and help).
    pub fn render_diagnostics(&self) -> String {
        self.diagnostics
            .iter()
            .map(|d| d.render(&self.file))
            .collect()
    }
}

/// Checks the LOOM program `name` (text `text`); `read` reads imported files.
pub fn check_source(name: &str, text: &str, read: &mut ReadFile<'_>) -> Checked {
    let spliced = import::splice(name, text, read);
    crate::frontend_stack::on_frontend_stack(
        spliced,
        |spliced| check_spliced(spliced.file, spliced.diagnostics),
        || import::Spliced {
            file: SourceFile::new(name, ""),
            diagnostics: Vec::new(),
        },
    )
}

/// Lexes, parses and checks a program whose imports are spliced in.
fn check_spliced(file: SourceFile, found: Vec<Diagnostic>) -> Checked {
    let mut diagnostics = Diagnostics::new(WarningPolicy::default());
    for d in found {
        diagnostics.push(d);
    }
    let tokens = layout::layout(&file, &mut diagnostics);
    let end = Span::new(file.text().len(), file.text().len());
    let program = parse::parse(&tokens, file.text().len(), &mut diagnostics);
    let parsed_whole = !diagnostics.has_errors();
    let info = check::check(&program, end, parsed_whole, &mut diagnostics);
    let diagnostics = without_echoes(&file, diagnostics.into_sorted());
    Checked {
        file,
        program,
        info,
        diagnostics,
    }
}

/// Drops syntax errors on a line that already has a lexical one (the parser only saw what
/// the lexer kept of the line).
fn without_echoes(file: &SourceFile, diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    use crate::diagnostic::Code;
    let line = |d: &Diagnostic| file.line_index(d.span.start as usize);
    let lexical: Vec<usize> = diagnostics
        .iter()
        .filter(|d| matches!(d.code, Code::LoomInvalidToken | Code::LoomMalformedNumber))
        .map(line)
        .collect();
    diagnostics
        .into_iter()
        .filter(|d| d.code != Code::LoomSyntax || !lexical.contains(&line(d)))
        .collect()
}

/// Reads imports from the file system.
pub fn read_from_disk(path: &str) -> Result<String, String> {
    std::fs::read(path)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests;
