//! Diagnostics as JSON, one object per diagnostic (`brcc --message-format json`), for editors
//! and CI. Lines and columns are one-based, columns counted in characters, positions in the
//! file the text was written in (a `.brh` header's own lines inside an expanded header).
//!
//! ```json
//! {"severity":"error","code":"BR0401","message":"variable not defined","file":"t.br",
//!  "line":3,"column":5,"end_line":3,"end_column":6,"label":"`x` is not declared",
//!  "notes":[{"message":"...","file":"t.br","line":1,"column":1}],"help":"declare it",
//!  "rendered":"t.br:3:5: error[BR0401]: ..."}
//! ```
//!
//! `code`, `label`, `help` and the position fields are `null` where a message has none.

use super::{Code, Diagnostic, Severity};
use crate::source::{SourceFile, Span};
use serde_json::{json, Map, Value};

/// One message: what [`Diagnostic::to_json`] writes, also for errors that have no code.
pub struct Record<'a> {
    pub severity: Severity,
    pub code: Option<Code>,
    pub message: &'a str,
    /// Where it is: the file the span is in, and the span.
    pub at: Option<(&'a SourceFile, Span)>,
    pub label: Option<&'a str>,
    /// Notes, each with its place where it has one.
    pub notes: Vec<(Option<Span>, &'a str)>,
    /// The help lines, one a line (`None` without any).
    pub help: Option<String>,
    /// The message as a terminal shows it (plain text).
    pub rendered: String,
}

impl Record<'_> {
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("severity".into(), self.severity.word().into());
        object.insert("code".into(), self.code.map(|c| c.to_string()).into());
        object.insert("message".into(), self.message.into());
        let (file, span) = match self.at {
            Some((file, span)) => (Some(file), Some(span)),
            None => (None, None),
        };
        insert_position(&mut object, file, span, true);
        object.insert("label".into(), self.label.into());
        let notes = self
            .notes
            .iter()
            .map(|&(span, message)| {
                let mut note = Map::new();
                note.insert("message".into(), message.into());
                insert_position(&mut note, file, span, false);
                Value::Object(note)
            })
            .collect();
        object.insert("notes".into(), Value::Array(notes));
        object.insert("help".into(), self.help.clone().into());
        object.insert("rendered".into(), self.rendered.as_str().into());
        Value::Object(object)
    }
}

/// `file`, `line`, `column` (and with `with_end`, `end_line`, `end_column`) of a span; `null`s
/// where there is none.
fn insert_position(
    object: &mut Map<String, Value>,
    file: Option<&SourceFile>,
    span: Option<Span>,
    with_end: bool,
) {
    let position = file.zip(span).map(|(file, span)| {
        let (line, column) = file.line_col(span.start as usize);
        let (end_line, end_column) = file.line_col(span.end.max(span.start) as usize);
        let name = file.file_of(span.start as usize).to_string();
        (name, line, column, end_line, end_column)
    });
    let field = |value: Option<usize>| value.map_or(Value::Null, Value::from);
    let p = position.as_ref();
    object.insert("file".into(), p.map(|p| p.0.clone()).into());
    object.insert("line".into(), field(p.map(|p| p.1)));
    object.insert("column".into(), field(p.map(|p| p.2)));
    if with_end {
        object.insert("end_line".into(), field(p.map(|p| p.3)));
        object.insert("end_column".into(), field(p.map(|p| p.4)));
    }
}

impl Diagnostic {
    /// This diagnostic as one JSON object ([`Record`]).
    pub fn to_json(&self, file: &SourceFile) -> Value {
        Record {
            severity: self.severity,
            code: Some(self.code),
            message: &self.message,
            at: Some((file, self.span)),
            label: self.label.as_deref(),
            notes: self
                .notes
                .iter()
                .map(|n| (n.span, n.message.as_str()))
                .collect(),
            help: (!self.help.is_empty()).then(|| self.help.join("\n")),
            rendered: self.render(file),
        }
        .to_json()
    }
}

/// A message with no place in a source file (a file that cannot be read) as a JSON object.
pub fn without_place(severity: Severity, message: &str) -> Value {
    json!({
        "severity": severity.word(), "code": null, "message": message, "file": null, "line": null,
        "column": null, "end_line": null, "end_column": null, "label": null, "notes": [],
        "help": null, "rendered": format!("{message}\n"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diagnostic_as_json() {
        let file = SourceFile::new("t.br", "kernel void f()\n{\n    x = 1;\n}\n");
        let d = Diagnostic::error(Code::UndefinedName, Span::new(22, 23), "not defined")
            .with_label("`x` is not declared")
            .with_note(Some(Span::new(0, 6)), "in this kernel")
            .with_help("declare it");
        let value = d.to_json(&file);
        assert_eq!(value["severity"], "error");
        assert_eq!(value["code"], "BR0401");
        assert_eq!(value["file"], "t.br");
        assert_eq!(
            (value["line"].as_u64(), value["column"].as_u64()),
            (Some(3), Some(5))
        );
        assert_eq!(value["end_column"], 6);
        assert_eq!(value["notes"][0]["line"], 1);
        assert_eq!(value["help"], "declare it");
        assert!(value["rendered"]
            .as_str()
            .unwrap()
            .starts_with("t.br:3:5: error[BR0401]: not defined\n"));
        let line = value.to_string();
        assert!(!line.contains('\n'), "one line per diagnostic: {line}");
    }

    #[test]
    fn an_error_without_a_place() {
        let value = without_place(Severity::Error, "cannot read `x.br`");
        assert_eq!(value["line"], Value::Null);
        assert_eq!(value["message"], "cannot read `x.br`");
    }
}
