//! Source lines with the span underlined, rendered by `annotate-snippets` (the renderer rustc
//! and cargo use): the one place excerpts are drawn, for the frontends' diagnostics and for
//! errors found later (a backend that cannot compile a construct, a launch).
//!
//! ```text
//!   |
//! 3 |     x = 1;
//!   |     ^ `x` is not declared
//!   |
//!   = help: declare it
//! ```

use crate::arena::SourceSpan;
use crate::source::SourceFile;
use annotate_snippets::renderer::{AnsiColor, Effects, Style};
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

/// Whether rendered text carries ANSI colours (for a terminal) or is plain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Colors {
    #[default]
    Plain,
    Ansi,
}

/// What a snippet's carets mark: the colour they take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    Error,
    Warning,
    Note,
}

/// A line under the snippet: `= note: ...` or `= help: ...`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Footer<'a> {
    Note(&'a str),
    Help(&'a str),
}

/// The renderer's width: wide enough that it never cuts a line itself ([`LineWindow`] has
/// already cut long ones around the span).
const LINE_WIDTH: usize = 100_000;

/// Lines up to this many bytes are shown whole; a longer one (minified or generated code, a
/// file of garbage on one line) is shown as a window of about this size around the span, so
/// each diagnostic costs the same whatever the line's length.
const LONG_LINE: usize = 240;

/// The part of a source line an excerpt shows: the line itself, or for a long line a window
/// around the span with `...` where text was left out.
struct LineWindow {
    text: String,
    /// Byte offset in the line of the window's first shown byte.
    from: usize,
    /// Bytes put before it (the leading `...`).
    lead: usize,
    /// Bytes of the line shown.
    shown: usize,
}

impl LineWindow {
    fn around(line: &str, at: usize) -> LineWindow {
        if line.len() <= LONG_LINE {
            return LineWindow {
                text: line.to_string(),
                from: 0,
                lead: 0,
                shown: line.len(),
            };
        }
        let floor = |mut i: usize| {
            while !line.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let from = floor(at.saturating_sub(LONG_LINE / 3).min(line.len()));
        let to = floor((from + LONG_LINE).min(line.len()));
        let lead = if from > 0 { "..." } else { "" };
        let tail = if to < line.len() { "..." } else { "" };
        LineWindow {
            text: format!("{lead}{}{tail}", &line[from..to]),
            from,
            lead: lead.len(),
            shown: to - from,
        }
    }

    /// A byte offset in the line as an offset in the window's text (clamped to the shown part).
    fn shift(&self, offset: usize) -> usize {
        self.lead + offset.saturating_sub(self.from).min(self.shown)
    }
}

impl Colors {
    fn renderer(self) -> Renderer {
        match self {
            Colors::Plain => Renderer::plain(),
            Colors::Ansi => Renderer::styled(),
        }
        .term_width(LINE_WIDTH)
    }

    /// `text` in the style of a diagnostic's first line for `tone` (its kind), or bold.
    pub fn paint(self, text: &str, tone: Option<Tone>) -> String {
        if self == Colors::Plain {
            return text.to_string();
        }
        let style = match tone {
            Some(Tone::Error) => AnsiColor::BrightRed.on_default(),
            Some(Tone::Warning) => AnsiColor::Yellow.on_default(),
            Some(Tone::Note) => AnsiColor::BrightGreen.on_default(),
            None => Style::new(),
        }
        .effects(Effects::BOLD);
        format!("{style}{text}{style:#}")
    }
}

impl Tone {
    fn level(self) -> Level<'static> {
        match self {
            Tone::Error => Level::ERROR,
            Tone::Warning => Level::WARNING,
            Tone::Note => Level::NOTE,
        }
    }
}

/// What to draw: the span, how its carets look, and what goes with them.
#[derive(Clone, Copy, Debug)]
pub struct Excerpt<'a> {
    pub span: SourceSpan,
    pub tone: Tone,
    /// Written after the carets.
    pub label: Option<&'a str>,
    /// Lines under the snippet, in order.
    pub footers: &'a [Footer<'a>],
    /// A ` --> file:line:column` line first.
    pub with_location: bool,
}

impl<'a> Excerpt<'a> {
    /// The span's excerpt with plain carets: no label, no footers, no location line.
    pub fn of(span: SourceSpan, tone: Tone) -> Self {
        Excerpt {
            span,
            tone,
            label: None,
            footers: &[],
            with_location: false,
        }
    }
}

impl SourceFile {
    /// The first line of the excerpt's span with carets under the spanned characters (one
    /// caret just after the line's text for a span that starts past it: at a trailing `\r`, at
    /// the end of the file), then its footers. Ends with a newline.
    pub fn render_excerpt(&self, excerpt: &Excerpt<'_>, colors: Colors) -> String {
        let start = (excerpt.span.start as usize).min(self.text().len());
        let index = self.line_index(start);
        let line_start = self.line_start(index);
        let whole = self.line_text(index);
        let caret_start = start.clamp(line_start, line_start + whole.len()) - line_start;
        let caret_end = (excerpt.span.end as usize)
            .saturating_sub(line_start)
            .clamp(caret_start, whole.len());
        let window = LineWindow::around(whole, caret_start);
        let text = window.text.as_str();
        let (caret_start, caret_end) = (window.shift(caret_start), window.shift(caret_end));
        let mut annotation = AnnotationKind::Primary.span(caret_start..caret_end);
        if let Some(label) = excerpt.label {
            annotation = annotation.label(label);
        }
        let mut snippet = Snippet::source(text)
            .line_start(self.line_col(start).0)
            .annotation(annotation);
        if excerpt.with_location {
            snippet = snippet.path(self.file_of(start));
        }
        let mut group = Group::with_level(excerpt.tone.level()).element(snippet);
        for footer in excerpt.footers {
            group = group.element(match *footer {
                Footer::Note(text) => Level::NOTE.message(text),
                Footer::Help(text) => Level::HELP.message(text),
            });
        }
        let mut rendered = colors.renderer().render(&[group]);
        rendered.push('\n');
        rendered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> SourceFile {
        SourceFile::new("t.br", "kernel void f()\n{\n\tx = 1;\n}\na = b\r")
    }

    #[test]
    fn carets_label_and_footers() {
        let footers = [Footer::Note("a note"), Footer::Help("declare it")];
        let excerpt = Excerpt {
            label: Some("`x` is not declared"),
            footers: &footers,
            ..Excerpt::of(SourceSpan { start: 19, end: 20 }, Tone::Error)
        };
        assert_eq!(
            file().render_excerpt(&excerpt, Colors::Plain),
            "  |\n3 |     x = 1;\n  |     ^ `x` is not declared\n  |\n  = note: a note\n  = help: declare it\n"
        );
    }

    #[test]
    fn a_span_past_the_line_gets_one_caret_after_it() {
        let excerpt = Excerpt {
            with_location: true,
            ..Excerpt::of(SourceSpan { start: 33, end: 40 }, Tone::Warning)
        };
        assert_eq!(
            file().render_excerpt(&excerpt, Colors::Plain),
            " --> t.br:5:6\n  |\n5 | a = b\n  |      ^\n"
        );
    }

    #[test]
    fn colours_only_when_asked() {
        let excerpt = Excerpt::of(SourceSpan { start: 19, end: 20 }, Tone::Error);
        assert!(!file()
            .render_excerpt(&excerpt, Colors::Plain)
            .contains('\u{1b}'));
        assert!(file()
            .render_excerpt(&excerpt, Colors::Ansi)
            .contains("\u{1b}["));
        assert_eq!(Colors::Plain.paint("error", Some(Tone::Error)), "error");
    }

    #[test]
    fn a_long_line_is_shown_as_a_window_around_the_span() {
        let line = format!("{}BAD{}", "a".repeat(5000), "b".repeat(5000));
        let file = SourceFile::new("t.br", line.as_str());
        let excerpt = Excerpt::of(
            SourceSpan {
                start: 5000,
                end: 5003,
            },
            Tone::Error,
        );
        let text = file.render_excerpt(&excerpt, Colors::Plain);
        assert!(text.len() < 2 * LONG_LINE, "{text}");
        let lines: Vec<&str> = text.lines().collect();
        let shown = lines[1].split_once("| ").unwrap().1;
        assert!(
            shown.starts_with("...a") && shown.ends_with("b..."),
            "{text}"
        );
        let carets = lines[2].split_once("| ").unwrap().1;
        assert_eq!(carets.find('^'), shown.find("BAD"), "{text}");
        assert_eq!(carets.trim(), "^^^", "{text}");
    }
}
