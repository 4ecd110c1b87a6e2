//! `import <path>` (section 3.1): the named file's text is spliced in place of the line, like
//! C's `#include`. The path is relative to the importing file (or absolute), written as
//! `<path>`, `"path"` or bare. A file is spliced once per program (a second import of it is
//! dropped, as an include guard would); a file that imports itself, directly or through
//! others, is an error naming the chain (`LM0106`), as are an import that is not at the top
//! level and a file that cannot be read. The import line stays in the text (the layout skips
//! it) so that errors point at it, and the [`SourceFile`]'s origins say which file each line
//! came from.

use crate::diagnostic::{Code, Diagnostic};
use crate::source::{Origin, SourceFile, Span};
use std::path::Path;

/// Reads an imported file by its path; the error is why it cannot be read.
pub type ReadFile<'a> = dyn FnMut(&str) -> Result<String, String> + 'a;

/// The program's text with its imports spliced in, and the problems found.
pub struct Spliced {
    pub file: SourceFile,
    pub diagnostics: Vec<Diagnostic>,
}

/// The path of an `import` line and where it is in the line, when the line is one.
pub fn import_path(line: &str) -> Option<(usize, &str)> {
    let trimmed = line.trim_start_matches([' ', '\t']);
    let rest = trimmed.strip_prefix("import")?;
    if !rest.is_empty() && !rest.starts_with([' ', '\t', '<', '"']) {
        return None;
    }
    let rest = rest.split("--").next().unwrap_or("");
    let inner = rest.trim();
    let path = inner
        .strip_prefix('<')
        .and_then(|p| p.strip_suffix('>'))
        .or_else(|| inner.strip_prefix('"').and_then(|p| p.strip_suffix('"')))
        .unwrap_or(inner);
    let at = line.len() - trimmed.len() + "import".len() + (rest.len() - rest.trim_start().len());
    Some((at, path.trim()))
}

/// Splices every import of `name` (whose text is `text`).
pub fn splice(name: &str, text: &str, read: &mut ReadFile<'_>) -> Spliced {
    let mut splicer = Splicer {
        out: String::with_capacity(text.len()),
        lines: 0,
        origins: Vec::new(),
        done: vec![name.to_string()],
        stack: Vec::new(),
        problems: Vec::new(),
        read,
    };
    splicer.file(name, text);
    let file = SourceFile::with_origins(name, splicer.out, splicer.origins);
    Spliced {
        file,
        diagnostics: splicer.problems,
    }
}

struct Splicer<'r, 'a> {
    out: String,
    /// Line breaks in `out` so far.
    lines: usize,
    origins: Vec<Origin>,
    /// Files spliced so far (each once).
    done: Vec<String>,
    /// The chain of files being spliced, outermost first.
    stack: Vec<String>,
    problems: Vec<Diagnostic>,
    read: &'r mut ReadFile<'a>,
}

impl Splicer<'_, '_> {
    fn file(&mut self, name: &str, text: &str) {
        self.stack.push(name.to_string());
        self.resume(name, 0);
        for (index, line) in text.split_inclusive('\n').enumerate() {
            let start = self.out.len();
            self.push(line);
            let Some((at, path)) = import_path(line) else {
                continue;
            };
            let span = Span::new(start + at, start + line.trim_end().len().max(at));
            if let Some(problem) = self.import(name, line, path, span) {
                self.problems.push(problem);
            }
            self.resume(name, index + 1);
        }
        self.stack.pop();
    }

    /// Splices one import; a problem is returned to report.
    fn import(&mut self, from: &str, line: &str, path: &str, span: Span) -> Option<Diagnostic> {
        if line.starts_with([' ', '\t']) {
            return Some(Diagnostic::error(
                Code::LoomImport,
                span,
                "`import` must be at the top level (column 1): it splices definitions, not statements",
            ));
        }
        if path.is_empty() {
            return Some(Diagnostic::error(
                Code::LoomImport,
                span,
                "`import` needs the path of a file: `import <path>`",
            ));
        }
        let resolved = resolve(from, path);
        if let Some(at) = self.stack.iter().position(|f| *f == resolved) {
            let mut chain: Vec<&str> = self.stack[at..].iter().map(String::as_str).collect();
            chain.push(&resolved);
            return Some(Diagnostic::error(
                Code::LoomImport,
                span,
                format!("import cycle: {}", chain.join(" imports ")),
            ));
        }
        if self.done.contains(&resolved) {
            return None;
        }
        self.done.push(resolved.clone());
        match (self.read)(&resolved) {
            Ok(text) => {
                if !self.out.ends_with('\n') {
                    self.push("\n");
                }
                self.file(&resolved, &text);
                if !self.out.ends_with('\n') {
                    self.push("\n");
                }
                None
            }
            Err(why) => Some(Diagnostic::error(
                Code::LoomImport,
                span,
                format!("cannot import `{path}` ({resolved}): {why}"),
            )),
        }
    }

    fn push(&mut self, text: &str) {
        self.out.push_str(text);
        self.lines += text.matches('\n').count();
    }

    /// From the next line of the output on, lines come from `file` at its line `file_line`.
    fn resume(&mut self, file: &str, file_line: usize) {
        let origin = Origin {
            line: self.lines,
            file: file.to_string(),
            file_line,
        };
        match self.origins.last_mut() {
            Some(last) if last.line == origin.line => *last = origin,
            _ => self.origins.push(origin),
        }
    }
}

/// `path` relative to the directory of `from` (absolute paths as they are).
fn resolve(from: &str, path: &str) -> String {
    let path = Path::new(path);
    if path.is_absolute() {
        return path.to_string_lossy().into_owned();
    }
    let joined = Path::new(from)
        .parent()
        .map_or_else(|| path.to_path_buf(), |dir| dir.join(path));
    normalize(&joined)
}

/// Removes `.` and `name/..` parts, so one file has one name.
fn normalize(path: &Path) -> String {
    use std::path::Component;
    let mut parts: Vec<Component> = Vec::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir if matches!(parts.last(), Some(Component::Normal(_))) => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let joined: std::path::PathBuf = parts.iter().collect();
    joined.to_string_lossy().into_owned()
}
