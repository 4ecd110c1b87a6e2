//! Brook frontends: from `.br` source text to a checked syntax tree, with diagnostics.
//!
//! The Brook frontend ([`brook`]) runs: lex -> preprocess (with `-pp`) -> parse -> check. Each
//! stage reports problems to one [`Diagnostics`] collection and carries on, so that one run
//! reports every error of a file. No stage panics or loops on any input.

pub mod brook;
pub mod diagnostic;
mod frontend_stack;
pub mod loom;
pub mod lowering;
pub mod source;
mod token_table;

#[cfg(test)]
mod editor_grammars;

pub use brook::{check_source, compile_source, CheckOptions, Checked, Compiled};
pub use diagnostic::{Code, Diagnostic, Diagnostics, Severity, WarningPolicy};
pub use source::{SourceFile, Span};
