//! Source files and byte spans, with line/column lookup for diagnostics.

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

/// One source file: its name as the user gave it, its text, and where each line starts.
///
/// The text may hold `.brh` headers expanded in place ([`crate::brook::include`]): each
/// [`Origin`] says which file a run of lines came from, so positions are reported in the file
/// and line the user wrote.
#[derive(Clone, Debug)]
pub struct SourceFile {
    name: String,
    text: String,
    line_starts: Vec<usize>,
    /// Sorted by `line`; the first starts at line 0 in this file.
    origins: Vec<Origin>,
}

/// From zero-based line `line` of the text on, the lines are those of `file` from its
/// zero-based line `file_line`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub line: usize,
    pub file: String,
    pub file_line: usize,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        let name = name.into();
        let origin = Origin {
            line: 0,
            file: name.clone(),
            file_line: 0,
        };
        SourceFile::with_origins(name, text, vec![origin])
    }

    /// A text assembled from several files (`origins` sorted by line, the first at line 0).
    pub fn with_origins(
        name: impl Into<String>,
        text: impl Into<String>,
        origins: Vec<Origin>,
    ) -> Self {
        let text = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceFile {
            name: name.into(),
            text,
            line_starts,
            origins,
        }
    }

    /// The name of the file compiled (the `.br` file, not a header it includes).
    pub fn name(&self) -> &str {
        &self.name
    }

    fn origin(&self, line: usize) -> Option<&Origin> {
        let after = self.origins.partition_point(|o| o.line <= line);
        after.checked_sub(1).and_then(|i| self.origins.get(i))
    }

    /// The file a byte offset was written in (a header's name inside an expanded header).
    pub fn file_of(&self, offset: usize) -> &str {
        let line = self.line_index(offset.min(self.text.len()));
        self.origin(line).map_or(&self.name, |o| &o.file)
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn slice(&self, span: Span) -> &str {
        self.text.get(span.range()).unwrap_or("")
    }

    /// Zero-based line index of a byte offset.
    pub fn line_index(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(line) => line,
            Err(next) => next - 1,
        }
    }

    /// One-based line and column (in characters) of a byte offset, in the file it was
    /// written in ([`SourceFile::file_of`]).
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_index(offset);
        let start = self.line_starts[line];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count())
            + 1;
        let file_line = self
            .origin(line)
            .map_or(line, |o| line - o.line + o.file_line);
        (file_line + 1, column)
    }

    /// The text of a zero-based line, without its line break.
    pub fn line_text(&self, line: usize) -> &str {
        let start = self.line_starts[line];
        let end = self
            .line_starts
            .get(line + 1)
            .copied()
            .unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Byte offset at which a zero-based line starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts[line]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column() {
        let file = SourceFile::new("t.br", "ab\ncd\n\nx");
        assert_eq!(file.line_col(0), (1, 1));
        assert_eq!(file.line_col(4), (2, 2));
        assert_eq!(file.line_col(7), (4, 1));
        assert_eq!(file.line_text(1), "cd");
        assert_eq!(file.line_text(2), "");
    }
}
