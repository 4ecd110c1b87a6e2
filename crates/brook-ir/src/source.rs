//! Source files and line/column lookup: where IR came from, kept with a module so that an
//! error found after the frontend (a backend that cannot compile a construct, at launch) still
//! points at the file, line and column the user wrote, with the line shown.

use crate::arena::SourceSpan;
use crate::snippet::{Colors, Excerpt, Tone};
use std::ops::Range;

/// U+FEFF at the start of a file: a byte-order mark, not text.
pub const BYTE_ORDER_MARK: char = '\u{FEFF}';

/// One source file: its name as the user gave it, its text, and where each line starts.
///
/// The text may hold `.brh` headers expanded in place ((the Brook frontend's `include`)): each
/// [`Origin`] says which file a run of lines came from, so positions are reported in the file
/// and line the user wrote.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SourceFile {
    name: String,
    text: String,
    line_starts: Vec<usize>,
    /// Sorted by `line`; the first starts at line 0 in this file.
    origins: Vec<Origin>,
}

/// From zero-based line `line` of the text on, the lines are those of `file` from its
/// zero-based line `file_line`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// A leading byte-order mark (which Windows editors write and C compilers skip) is dropped.
    pub fn with_origins(
        name: impl Into<String>,
        text: impl Into<String>,
        origins: Vec<Origin>,
    ) -> Self {
        let mut text = text.into();
        if text.starts_with(BYTE_ORDER_MARK) {
            text.drain(..BYTE_ORDER_MARK.len_utf8());
        }
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

    /// The text of a byte range ("" where it is not in the text).
    pub fn slice(&self, range: Range<usize>) -> &str {
        self.text.get(range).unwrap_or("")
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

impl SourceFile {
    /// Where a span starts, as `file:line:column`, with its line and a caret under the span
    /// (rendered by [`crate::snippet`]):
    ///
    /// ```text
    ///  --> k.br:3:9
    ///   |
    /// 3 |     r = foo(x);
    ///   |         ^^^^^^
    /// ```
    pub fn excerpt(&self, span: SourceSpan) -> String {
        let excerpt = Excerpt {
            with_location: true,
            ..Excerpt::of(span, Tone::Error)
        };
        let mut text = self.render_excerpt(&excerpt, Colors::Plain);
        text.truncate(text.trim_end().len());
        text
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

    #[test]
    fn an_excerpt_points_at_the_span_in_its_line() {
        let file = SourceFile::new("k.br", "kernel void k() {\n    r = sin(x);\n}\n");
        let span = SourceSpan { start: 26, end: 32 };
        assert_eq!(
            file.excerpt(span),
            " --> k.br:2:9\n  |\n2 |     r = sin(x);\n  |         ^^^^^^"
        );
    }
}
