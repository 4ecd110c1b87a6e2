//! The editor grammars in `editors/` (TextMate for VS Code, Vim syntax) highlight every word the
//! languages reserve: checked against the lexer's and parser's own lists, so a new keyword
//! without highlighting fails here.

use crate::brook::parse::{host::KERNEL_ONLY, host::STREAM_OPERATORS, types::QUALIFIER_WORDS};
use crate::loom::token::Keyword;
use std::collections::HashSet;

/// The words of a grammar file: its text split at everything but letters, digits and `_`.
fn words(file: &str) -> HashSet<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../editors")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

fn missing<'w>(file: &str, wanted: impl IntoIterator<Item = &'w str>) -> Vec<&'w str> {
    let have = words(file);
    wanted.into_iter().filter(|w| !have.contains(*w)).collect()
}

#[test]
fn editor_grammars_highlight_every_loom_reserved_word() {
    let thread = ["B", "BLOCKS", "BLOCKSIZE", "T", "THREADS", "X_", "Y_"];
    let reserved = Keyword::ALL.iter().map(|k| k.text());
    let wanted: Vec<&str> = reserved.chain(thread).chain(["block", "Range"]).collect();
    for file in [
        "vscode/syntaxes/loom.tmLanguage.json",
        "vim/syntax/loom.vim",
    ] {
        assert_eq!(
            missing(file, wanted.iter().copied()),
            Vec::<&str>::new(),
            "{file}"
        );
    }
}

#[test]
fn editor_grammars_highlight_every_brook_keyword_and_intrinsic() {
    let own: Vec<&str> = ["kernel", "reduce", "out", "iter", "vout", "shared"]
        .into_iter()
        .chain(KERNEL_ONLY)
        .chain(STREAM_OPERATORS)
        .collect();
    assert_eq!(
        missing("vim/syntax/brook.vim", own.iter().copied()),
        Vec::<&str>::new()
    );
    let all = own.iter().copied().chain(QUALIFIER_WORDS);
    assert_eq!(
        missing("vscode/syntaxes/brook.tmLanguage.json", all),
        Vec::<&str>::new()
    );
}
