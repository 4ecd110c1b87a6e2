//! `.brh` headers: `#include "name.brh"` (or BrookGPU's `"name.brhi"`) in a `.br` file (or in
//! another header) is replaced by the header's text, so the kernels, structs and host code it holds are part of the program, as
//! with BrookGPU's and Brook+'s brcc. The header is found next to the file that includes it.
//! Each header is expanded once (a second include of it is dropped, as an include guard would).
//! The [`SourceFile`] keeps where every line came from, so diagnostics name the header and its
//! line. Other `#include`s are left for the C++ compiler.

use crate::source::{Origin, SourceFile};
use std::collections::HashSet;
use std::path::Path;

/// Headers included inside headers, at most this deep (a cycle is dropped anyway).
const MAX_DEPTH: usize = 32;

/// Reads a header by its path; the error is the reason it cannot be read.
pub type ReadHeader<'a> = dyn FnMut(&str) -> Result<String, String> + 'a;

/// A header that cannot be read, at the `#include` line naming it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IncludeError {
    /// The file with the `#include` line, and the line (one-based).
    pub file: String,
    pub line: usize,
    /// The header as written, and the path it was looked for at.
    pub header: String,
    pub path: String,
    pub why: String,
}

impl std::fmt::Display for IncludeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:1: error: cannot include the header `{}` ({}): {}",
            self.file, self.line, self.header, self.path, self.why
        )
    }
}

impl std::error::Error for IncludeError {}

/// `name`'s text with its `.brh` headers expanded, or the `#include` whose header cannot be
/// read.
pub fn expand_headers(
    name: &str,
    text: &str,
    read: &mut ReadHeader<'_>,
) -> Result<SourceFile, IncludeError> {
    if !text.lines().any(|line| header_name(line).is_some()) {
        return Ok(SourceFile::new(name, text));
    }
    let mut expansion = Expansion {
        out: String::with_capacity(text.len()),
        lines: 0,
        origins: Vec::new(),
        seen: HashSet::from([name.to_string()]),
        read,
    };
    expansion.file(name, text, 0)?;
    Ok(SourceFile::with_origins(
        name,
        expansion.out,
        expansion.origins,
    ))
}

/// The header named by `#include "x.brh"` (or BrookGPU's `"x.brhi"`) on this line, if it is
/// one.
fn header_name(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("include")?.trim_start();
    let rest = rest.strip_prefix('"')?;
    let (name, after) = rest.split_once('"')?;
    let after = after.trim();
    let comment_only = after.is_empty() || after.starts_with("//") || after.starts_with("/*");
    let brook_header = name.ends_with(".brh") || name.ends_with(".brhi");
    (brook_header && comment_only).then_some(name)
}

struct Expansion<'r, 'a> {
    out: String,
    /// Line breaks in `out` so far.
    lines: usize,
    origins: Vec<Origin>,
    seen: HashSet<String>,
    read: &'r mut ReadHeader<'a>,
}

impl Expansion<'_, '_> {
    fn file(&mut self, name: &str, text: &str, depth: usize) -> Result<(), IncludeError> {
        self.resume(name, 0);
        for (index, line) in text.split_inclusive('\n').enumerate() {
            let Some(header) = header_name(line) else {
                self.push(line);
                continue;
            };
            let path = Path::new(name)
                .parent()
                .map_or_else(|| header.into(), |dir| dir.join(header));
            let path = path.to_string_lossy().into_owned();
            if depth < MAX_DEPTH && self.seen.insert(path.clone()) {
                let header_text = (self.read)(&path).map_err(|why| IncludeError {
                    file: name.to_string(),
                    line: index + 1,
                    header: header.to_string(),
                    path: path.clone(),
                    why,
                })?;
                let header_text = header_text
                    .strip_prefix(brook_ir::source::BYTE_ORDER_MARK)
                    .unwrap_or(&header_text);
                self.file(&path, header_text, depth + 1)?;
                if !self.out.is_empty() && !self.out.ends_with('\n') {
                    self.push("\n");
                }
            } else {
                // Already included (or a cycle): nothing, as an include guard would give.
                self.push("\n");
            }
            self.resume(name, index + 1);
        }
        Ok(())
    }

    /// The next line of the text is line `file_line` (zero-based) of `file`.
    fn resume(&mut self, file: &str, file_line: usize) {
        self.origins.retain(|o| o.line != self.lines);
        self.origins.push(Origin {
            line: self.lines,
            file: file.to_string(),
            file_line,
        });
    }

    fn push(&mut self, text: &str) {
        self.out.push_str(text);
        self.lines += text.matches('\n').count();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(files: &[(&str, &str)]) -> impl FnMut(&str) -> Result<String, String> {
        let files: Vec<(String, String)> = files
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect();
        move |path: &str| {
            files
                .iter()
                .find(|(n, _)| n == path)
                .map(|(_, t)| t.clone())
                .ok_or_else(|| "No such file".to_string())
        }
    }

    #[test]
    fn headers_are_expanded_once_and_lines_map_back() {
        let mut read = reader(&[
            (
                "dir/k.brh",
                "// k\nkernel void k(float a<>, out float b<>) { b = a; }\n",
            ),
            ("dir/m.brh", "#include \"k.brh\"\nfloat m;"),
        ]);
        let main = "#include <stdio.h>\n#include \"k.brh\"\n#include \"m.brh\"\nint x;\n";
        let file = expand_headers("dir/main.br", main, &mut read).expect("expands");
        assert_eq!(
            file.text(),
            "#include <stdio.h>\n// k\nkernel void k(float a<>, out float b<>) { b = a; }\n\nfloat m;\nint x;\n"
        );
        let at = |needle: &str| {
            let offset = file.text().find(needle).expect("present");
            (file.file_of(offset).to_string(), file.line_col(offset).0)
        };
        assert_eq!(at("#include <stdio"), ("dir/main.br".into(), 1));
        assert_eq!(at("kernel"), ("dir/k.brh".into(), 2));
        assert_eq!(at("float m"), ("dir/m.brh".into(), 2));
        assert_eq!(at("int x"), ("dir/main.br".into(), 4));
    }

    #[test]
    fn brookgpu_kernel_headers_are_expanded_too() {
        let mut read = reader(&[(
            "h.brhi",
            "kernel float twice(float x) { return 2.0f * x; }\n",
        )]);
        let file =
            expand_headers("p.br", "#include \"h.brhi\"\nint x;\n", &mut read).expect("expands");
        assert!(
            file.text().starts_with("kernel float twice"),
            "{}",
            file.text()
        );
        assert_eq!(header_name("#include \"a.h\""), None);
    }

    #[test]
    fn a_missing_header_names_the_include_line() {
        let mut read = reader(&[]);
        let err = expand_headers("p.br", "int a;\n#include \"gone.brh\"\n", &mut read)
            .expect_err("no such header");
        assert_eq!(
            err.to_string(),
            "p.br:2:1: error: cannot include the header `gone.brh` (gone.brh): No such file"
        );
    }
}
