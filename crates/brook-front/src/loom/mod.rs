//! The LOOM frontend (seed 004): the second kernel language, compiled like Brook to the
//! kernel IR.
//!
//! This is its first stage: [`lex`] turns a `.loom` file into tokens with the block and
//! statement tokens of the layout rules (section 3.1) inserted ([`layout`]), reporting every
//! lexical and indentation problem at once. Decisions where the draft is silent are in
//! `docs/LOOM.md`.

pub mod layout;
pub mod lexer;
pub mod token;

use crate::diagnostic::{Diagnostic, Diagnostics, WarningPolicy};
use crate::source::SourceFile;
use token::Token;

/// A lexed LOOM file: its tokens (layout inserted) and its diagnostics, in source order.
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Lexes a LOOM file and applies the layout rules.
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

#[cfg(test)]
mod tests;
