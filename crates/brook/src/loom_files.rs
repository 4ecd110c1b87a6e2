//! Where LOOM program text comes from: files embedded into the program (by `brcc build`,
//! through [`embed_loom_file`]), else the disk.
//!
//! An embedded file is found by the path it was embedded under or, when no embedded path is
//! that string, by its file name alone (one embedded file of that name), so a host program
//! built with `brcc build host.cpp kernels/scale.loom` finds `"scale.loom"` from any working
//! directory. Embedded files come first: the program behaves the same wherever it runs.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

static EMBEDDED: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

/// Makes `text` the contents of the LOOM file `path` for this process (a second call for
/// the same path replaces it).
pub fn embed_loom_file(path: &str, text: &str) {
    if let Ok(mut files) = EMBEDDED.lock() {
        files.insert(path.to_string(), text.to_string());
    }
}

/// The text of the LOOM file `path`: the embedded one, else the file on disk.
pub fn read_loom_file(path: &str) -> Result<String, String> {
    embedded(path).map_or_else(|| brook_front::loom::read_from_disk(path), Ok)
}

fn embedded(path: &str) -> Option<String> {
    let files = EMBEDDED.lock().ok()?;
    if let Some(text) = files.get(path) {
        return Some(text.clone());
    }
    let name = file_name(path)?;
    let mut same_name = files.iter().filter(|(p, _)| file_name(p) == Some(name));
    match (same_name.next(), same_name.next()) {
        (Some((_, text)), None) => Some(text.clone()),
        _ => None,
    }
}

fn file_name(path: &str) -> Option<&str> {
    Path::new(path).file_name().and_then(|n| n.to_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_files_are_found_by_path_or_unique_file_name() {
        embed_loom_file("kernels/a_test_only.loom", "one");
        assert_eq!(read_loom_file("kernels/a_test_only.loom").unwrap(), "one");
        assert_eq!(read_loom_file("a_test_only.loom").unwrap(), "one");
        assert_eq!(read_loom_file("../x/a_test_only.loom").unwrap(), "one");
        embed_loom_file("other/a_test_only.loom", "two");
        // Two files of the name: only the exact paths find them.
        assert_eq!(read_loom_file("other/a_test_only.loom").unwrap(), "two");
        assert!(read_loom_file("a_test_only.loom").is_err());
        assert!(read_loom_file("no_such_file_anywhere.loom").is_err());
    }
}
