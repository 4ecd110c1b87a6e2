//! Byte spans of the frontend; source files and their line/column lookup live in
//! [`brook_ir::source`] (a module keeps its source for errors found at launch).

use std::ops::Range;

/// A byte range in one source file. Spans are `u32` pairs so that AST nodes stay small.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn is_empty(self) -> bool {
        self.start >= self.end
    }
}

impl From<Span> for brook_ir::SourceSpan {
    fn from(span: Span) -> Self {
        brook_ir::SourceSpan {
            start: span.start,
            end: span.end,
        }
    }
}

pub use brook_ir::source::{Origin, SourceFile};
