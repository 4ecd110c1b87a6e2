//! How brcc shows what it finds in a program: rendered text on stderr (coloured on a terminal
//! unless `NO_COLOR` is set, or as `--color` says), or with `--message-format json` one JSON
//! object per line on stderr, as rustc's `--error-format json` does
//! ([`brook_front::diagnostic::json`] describes the fields).

use brook_front::brook::include::IncludeError;
use brook_front::diagnostic::json::{self, Record};
use brook_front::diagnostic::{Diagnostic, Severity};
use brook_front::source::{SourceFile, Span};
use brook_ir::snippet::{Colors, Excerpt, Tone};
use std::io::IsTerminal;

/// `--message-format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MessageFormat {
    #[default]
    Human,
    Json,
}

/// `--color`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorChoice {
    /// Colour when stderr is a terminal and `NO_COLOR` is unset or empty.
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    fn colors(self) -> Colors {
        let wanted = match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stderr().is_terminal()
            }
        };
        if wanted {
            Colors::Ansi
        } else {
            Colors::Plain
        }
    }
}

/// Writes brcc's messages about a program to stderr in the chosen format.
pub struct Reporter {
    format: MessageFormat,
    colors: Colors,
}

impl Reporter {
    pub fn new(format: MessageFormat, color: ColorChoice) -> Self {
        Reporter {
            format,
            colors: color.colors(),
        }
    }

    /// The frontend's diagnostics of `file`, in order.
    pub fn diagnostics(&self, file: &SourceFile, diagnostics: &[Diagnostic]) {
        let text = match self.format {
            MessageFormat::Json => diagnostics
                .iter()
                .map(|d| format!("{}\n", d.to_json(file)))
                .collect::<String>(),
            MessageFormat::Human => diagnostics
                .iter()
                .map(|d| d.render_with(file, self.colors))
                .collect::<Vec<_>>()
                .join("\n"),
        };
        eprint!("{text}");
    }

    /// An error at a place that has no diagnostic code (the C++ generator's, a LOOM kernel that
    /// cannot be compiled for its grid, an internal compiler error): `kind` is how it is named
    /// (`error`, `internal compiler error`).
    pub fn error_at(&self, file: &SourceFile, span: Span, kind: &str, message: &str) {
        let start = span.start as usize;
        let (line, column) = file.line_col(start);
        let location = format!("{}:{line}:{column}:", file.file_of(start));
        let rendered = |colors: Colors| {
            format!(
                "{} {} {}\n{}",
                colors.paint(&location, None),
                colors.paint(&format!("{kind}:"), Some(Tone::Error)),
                colors.paint(message, None),
                file.render_excerpt(&Excerpt::of(span.into(), Tone::Error), colors)
            )
        };
        match self.format {
            MessageFormat::Human => eprint!("{}", rendered(self.colors)),
            MessageFormat::Json => {
                let message = format!("{kind}: {message}");
                let record = Record {
                    severity: Severity::Error,
                    code: None,
                    message: &message,
                    at: Some((file, span)),
                    label: None,
                    notes: Vec::new(),
                    help: None,
                    rendered: rendered(Colors::Plain),
                };
                eprintln!("{}", record.to_json());
            }
        }
    }

    /// An error in the file `path` with no place in it (an internal compiler error found after
    /// the frontend).
    pub fn error_in(&self, path: &str, kind: &str, message: &str) {
        let text = format!("{kind}: {message}");
        match self.format {
            MessageFormat::Human => eprintln!("{path}: {text}"),
            MessageFormat::Json => {
                let mut value = json::without_place(Severity::Error, &text);
                value["file"] = path.into();
                eprintln!("{value}");
            }
        }
    }

    /// A header a `.br` file includes that cannot be read.
    pub fn include_error(&self, error: &IncludeError) {
        match self.format {
            MessageFormat::Human => eprintln!("{error}"),
            MessageFormat::Json => {
                let mut value = json::without_place(Severity::Error, &error.to_string());
                value["message"] = format!(
                    "cannot include the header `{}` ({}): {}",
                    error.header, error.path, error.why
                )
                .into();
                value["file"] = error.file.as_str().into();
                value["line"] = error.line.into();
                value["column"] = 1.into();
                eprintln!("{value}");
            }
        }
    }

    /// A message about no place in a file (`brcc: cannot read ...`), or a warning about the
    /// command line.
    pub fn plain(&self, severity: Severity, message: &str) {
        match self.format {
            MessageFormat::Human => eprintln!("brcc: {message}"),
            MessageFormat::Json => eprintln!("{}", json::without_place(severity, message)),
        }
    }

    /// A closing line for people (`brcc: x.br: 1 error(s)`); JSON readers count the objects.
    pub fn summary(&self, text: &str) {
        if self.format == MessageFormat::Human {
            eprintln!("{text}");
        }
    }
}
