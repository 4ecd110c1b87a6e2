use crate::diagnostic::Code;
use crate::loom::token::{Axis, Keyword, Op, ThreadName, TokenKind};
use crate::loom::*;

fn lexed(text: &str) -> Lexed {
    lex(&SourceFile::new("t.loom", text))
}

fn text_of(text: &str) -> String {
    let lexed = lexed(text);
    assert!(
        lexed.diagnostics.is_empty(),
        "{:?}",
        lexed
            .diagnostics
            .iter()
            .map(|d| &d.message)
            .collect::<Vec<_>>()
    );
    token_text(&lexed.tokens)
}

fn codes(text: &str) -> Vec<(Code, (usize, usize))> {
    let file = SourceFile::new("t.loom", text);
    lex(&file)
        .diagnostics
        .iter()
        .map(|d| (d.code, file.line_col(d.span.start as usize)))
        .collect()
}

#[test]
fn the_seed_example_gets_its_braces_and_semicolons() {
    let source = "\
func foo(a: Int32): Int32
  local sum: Int32 <- 0
  for i: Int32 <- 1 .. 5
    iSqr: Int32 <- i*i
    sum += i2
  return sum -- sum = 1 + 2*2 + 3*3 + 4*4 = 30
";
    assert_eq!(
        text_of(source),
        "func foo ( a : Int32 ) : Int32 { local sum : Int32 <- 0 ; for i : Int32 <- 1 .. 5 { iSqr : Int32 <- i * i ; sum += i2 ; } return sum ; }"
    );
}

#[test]
fn else_closes_the_then_block_and_opens_its_own() {
    let source = "kernel k(x: Int32)\n  if x > 0 then\n    y <- 1\n  else\n    y <- 2\n  return\n";
    assert_eq!(
        text_of(source),
        "kernel k ( x : Int32 ) { if x > 0 then { y <- 1 ; } else { y <- 2 ; } return ; }"
    );
}

#[test]
fn blank_and_comment_lines_do_not_count_and_open_brackets_continue_a_line() {
    let source = "kernel k(a: Int32,\n         b: Int32)\n\n  -- a comment\n  return\n";
    assert_eq!(
        text_of(source),
        "kernel k ( a : Int32 , b : Int32 ) { return ; }"
    );
}

#[test]
fn indentation_problems_name_their_line_and_column() {
    // A tab, a line deeper than its block, a dedent to no enclosing level.
    assert_eq!(
        codes("kernel k()\n\treturn\n"),
        vec![(Code::LoomTab, (2, 1))]
    );
    assert_eq!(
        codes("kernel k()\n  a <- 1\n    b <- 2\n"),
        vec![(Code::LoomIndentation, (3, 5))]
    );
    assert_eq!(
        codes("kernel k()\n    a <- 1\n  b <- 2\n"),
        vec![(Code::LoomIndentation, (3, 3))]
    );
    assert_eq!(
        codes("kernel k()\nreturn\n"),
        vec![(Code::LoomIndentation, (2, 1))]
    );
    assert_eq!(codes("kernel k()\n"), vec![(Code::LoomIndentation, (2, 1))]);
    // The open bracket swallows the rest of the file: one line that opens a block, left empty.
    assert_eq!(
        codes("kernel k(a: Int32\n  return\n"),
        vec![
            (Code::LoomUnclosedBracket, (1, 9)),
            (Code::LoomIndentation, (3, 1))
        ]
    );
}

#[test]
fn every_problem_of_a_file_is_reported_and_layout_goes_on() {
    let found = codes("kernel k()\n  a <- 1 @ 2\n      b <- 12abc\n  c <- 3\n");
    let kinds: Vec<Code> = found.iter().map(|(c, _)| *c).collect();
    assert_eq!(
        kinds,
        vec![
            Code::LoomInvalidToken,
            Code::LoomIndentation,
            Code::LoomMalformedNumber
        ]
    );
    assert_eq!(Code::LoomTab.to_string(), "LM0103");
}

#[test]
fn operators_take_their_longest_spelling() {
    let kinds: Vec<TokenKind> = lexed("f // a /. b /: c :/ d [[ e ]] g ... h <- i != j")
        .tokens
        .into_iter()
        .map(|t| t.kind)
        .filter(|k| matches!(k, TokenKind::Op(_)))
        .collect();
    let ops: Vec<Op> = kinds
        .into_iter()
        .map(|k| match k {
            TokenKind::Op(op) => op,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        ops,
        vec![
            Op::Map,
            Op::Reduce,
            Op::ScanLeft,
            Op::ScanRight,
            Op::LeftBrackets,
            Op::RightBrackets,
            Op::Range3,
            Op::Assign,
            Op::Ne
        ]
    );
}

#[test]
fn words_numbers_and_thread_parameters() {
    let kinds: Vec<TokenKind> = lexed("x' y_2 123: Float32 1..5 2.5e-3 7. X_BLOCKSIZE T TRUE")
        .tokens
        .into_iter()
        .map(|t| t.kind)
        .collect();
    assert_eq!(
        kinds,
        vec![
            TokenKind::Ident("x'".into()),
            TokenKind::Ident("y_2".into()),
            TokenKind::Int(123),
            TokenKind::Op(Op::Colon),
            TokenKind::Keyword(Keyword::Float32),
            TokenKind::Int(1),
            TokenKind::Op(Op::Range2),
            TokenKind::Int(5),
            TokenKind::Float(2.5e-3),
            TokenKind::Float(7.0),
            TokenKind::Thread(token::ThreadParam {
                name: ThreadName::BlockSize,
                axis: Some(Axis::X)
            }),
            TokenKind::Thread(token::ThreadParam {
                name: ThreadName::Thread,
                axis: None
            }),
            TokenKind::Keyword(Keyword::True),
            TokenKind::StmtEnd,
        ]
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// Any text lexes without a panic, and every block opened is closed.
    #[test]
    fn any_text_lexes_and_blocks_balance(text in "(( {0,6}|\\t)(kernel k\\(\\)|if a then|else|x <- 1|\\[\\[|\\]\\]|\\(|\\)|--c|[a-z0-9.:/<>@]{0,4}| ){0,5}\\n){0,12}") {
        let tokens = lexed(&text).tokens;
        let opens = tokens.iter().filter(|t| t.kind == TokenKind::BlockOpen).count();
        let closes = tokens.iter().filter(|t| t.kind == TokenKind::BlockClose).count();
        proptest::prop_assert_eq!(opens, closes);
    }
}
