//! What both frontends' lowerings to the IR share: their error (a construct with its place)
//! and the conversion of source spans. The kernel builder itself is
//! `brook_ir::builder::KernelBuilder`.

use crate::source::Span;
use brook_ir::SourceSpan;
use std::fmt;

/// A construct a lowering cannot translate, with its place in the source: a compiler defect
/// (the checker rejects what would cause one), or for LOOM a construct not lowered yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LowerError {
    pub span: Span,
    pub message: String,
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LowerError {}

pub(crate) type Lowered<T> = Result<T, LowerError>;

pub(crate) fn fail<T>(span: Span, message: impl Into<String>) -> Lowered<T> {
    Err(LowerError {
        span,
        message: message.into(),
    })
}

/// A frontend span as the IR keeps it.
pub(crate) fn source_span(span: Span) -> SourceSpan {
    span.into()
}
