//! The recursive-descent parser for `.br` files.
//!
//! Parsing never fails as a whole: errors are reported to [`Diagnostics`] and the parser resumes
//! at the next statement or item. Kernels, structs and typedefs are parsed fully; everything else
//! is host code, kept as tokens and scanned for stream declarations and kernel calls
//! (`host`). Nesting is limited to [`MAX_DEPTH`] so that no input can exhaust the stack.

mod expr;
pub(crate) mod host;
mod items;
mod stmt;
pub(crate) mod types;

use super::ast::{Expr, ExprId, ExprKind, Ident, Program};
use super::preprocess::Spellings;
use super::token::{Punct, Token, TokenKind};
use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::source::{SourceFile, Span};
use std::collections::{HashMap, HashSet};

/// The deepest nesting of expressions and statements the parser accepts.
pub const MAX_DEPTH: u32 = 200;

/// The most binary (and comma) operators in the chains open at once: `a + b + ... + z` is a
/// tree as deep as it has terms, and every later stage (checker, lowering, code generators,
/// interpreter, even dropping the tree) walks it recursively. Generated kernels of several
/// thousand terms are accepted; past this the parser says so instead of exhausting a stack.
pub const MAX_CHAIN: u32 = 25_000;

/// Marks a parse that failed after reporting its error.
#[derive(Debug, Clone, Copy)]
pub struct Failed;

pub type PResult<T> = Result<T, Failed>;

/// Parses a preprocessed token list (ending with `Eof`) into a [`Program`].
pub fn parse(
    file: &SourceFile,
    spellings: &Spellings,
    tokens: &[Token],
    diags: &mut Diagnostics,
) -> Program {
    let object_macros: Vec<ObjectMacro> = tokens
        .iter()
        .filter(|t| t.kind == TokenKind::Directive)
        .filter_map(|t| ObjectMacro::of_directive(file, spellings, *t))
        .collect();
    let (macro_bodies, ambiguous_macros) = unambiguous_bodies(&object_macros);
    let mut parser = Parser {
        file,
        spellings,
        tokens,
        macro_bodies: &macro_bodies,
        ambiguous_macros: &ambiguous_macros,
        expanding: Vec::new(),
        macro_cycle: false,
        macro_tokens_left: expr::MAX_MACRO_TOKENS,
        macro_expansions: HashMap::new(),
        type_macros: HashMap::new(),
        pos: 0,
        diags,
        quiet: None,
        next_expr: 0,
        depth: 0,
        chain: 0,
        type_names: HashSet::new(),
        unorm_typedefs: HashMap::new(),
        kernel_names: HashSet::new(),
        host_scope: Vec::new(),
        next_scope: 0,
        vout_limit: None,
    };
    parser.find_type_macros();
    let mut items = parser.items();
    let host_functions = parser.scan_host_items(&mut items);
    let host_words = parser.host_words(&items);
    let graphics_only = parser.graphics_only(&items);
    let macro_expansions = std::mem::take(&mut parser.macro_expansions);
    Program {
        host_words,
        graphics_only,
        items,
        expr_count: parser.next_expr,
        host_functions,
        object_macros: object_macros
            .into_iter()
            .map(|m| (m.name, m.body))
            .collect(),
        macro_expansions,
        ambiguous_macros,
    }
}

/// The body of each macro kernel code may read: one defined twice with different bodies (in
/// the branches of an `#if` the C++ compiler decides, or around an `#undef`) is left out, as
/// brcc cannot tell which one the C++ compiler will see.
/// Also returns the names left out.
fn unambiguous_bodies(macros: &[ObjectMacro]) -> (HashMap<String, Vec<Token>>, HashSet<String>) {
    let mut bodies: HashMap<String, Option<(&str, &Vec<Token>)>> = HashMap::new();
    for m in macros {
        let entry = bodies
            .entry(m.name.clone())
            .or_insert(Some((&m.body, &m.tokens)));
        if entry.is_some_and(|(body, _)| body != m.body) {
            *entry = None;
        }
    }
    let mut kept = HashMap::new();
    let mut ambiguous = HashSet::new();
    for (name, body) in bodies {
        match body {
            Some((_, tokens)) => {
                kept.insert(name, tokens.clone());
            }
            None => {
                ambiguous.insert(name);
            }
        }
    }
    (kept, ambiguous)
}

/// A `#define NAME body` line (an object-like macro) kept as host text (without `-pp`).
struct ObjectMacro {
    name: String,
    body: String,
    /// The body's tokens (ending in `Eof`), positioned in the file.
    tokens: Vec<Token>,
}

impl ObjectMacro {
    fn of_directive(file: &SourceFile, spellings: &Spellings, directive: Token) -> Option<Self> {
        let line = spellings.get(file, directive.text);
        let rest = line.trim_start().strip_prefix('#')?.trim_start();
        let rest = rest.strip_prefix("define")?;
        if !rest.starts_with([' ', '\t']) {
            return None;
        }
        let rest = rest.trim_start();
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (name, body) = rest.split_at(end);
        if name.is_empty() || body.starts_with('(') {
            return None;
        }
        let body = body.split("//").next().unwrap_or("").trim();
        // `body` is a slice of `line`, which is a slice of the file's text.
        let offset =
            directive.text.start as usize + (body.as_ptr() as usize - line.as_ptr() as usize);
        Some(ObjectMacro {
            name: name.to_string(),
            body: body.to_string(),
            tokens: body_tokens(body, offset),
        })
    }
}

/// `body` lexed on its own (its diagnostics dropped: the line belongs to the C++ compiler),
/// each token moved to `offset` in the file so that its spelling and position are the file's.
fn body_tokens(body: &str, offset: usize) -> Vec<Token> {
    let mut quiet = Diagnostics::new(crate::diagnostic::WarningPolicy::default());
    let moved = |span: Span| Span::new(span.start as usize + offset, span.end as usize + offset);
    super::lexer::lex(&SourceFile::new("#define", body), &mut quiet)
        .into_iter()
        .map(|t| Token {
            span: moved(t.span),
            text: moved(t.text),
            line_start: false,
            ..t
        })
        .collect()
}

pub(crate) struct Parser<'a, 'd> {
    file: &'a SourceFile,
    spellings: &'a Spellings,
    tokens: &'a [Token],
    /// The tokens of each object-like macro's body ([`ObjectMacro`]).
    macro_bodies: &'a HashMap<String, Vec<Token>>,
    /// Macros defined more than once with different bodies (not read in kernel code).
    ambiguous_macros: &'a HashSet<String>,
    /// The macros whose bodies are being parsed now (a macro naming itself is not expanded).
    expanding: Vec<String>,
    /// Set when a macro was met inside its own expansion (see `expand_macro`).
    macro_cycle: bool,
    /// Tokens of macro bodies the file's expansions may still parse.
    macro_tokens_left: usize,
    macro_expansions: HashMap<ExprId, Expr>,
    /// The macros whose bodies are a built-in type (`#define REAL float`): type names.
    type_macros: HashMap<String, crate::brook::ast::TypeSpecKind>,
    pos: usize,
    diags: &'d mut Diagnostics,
    /// While parsing speculatively: the number of errors suppressed so far.
    quiet: Option<usize>,
    next_expr: u32,
    depth: u32,
    /// Operators in the binary chains open now (see [`MAX_CHAIN`]).
    chain: u32,
    /// Struct and typedef names seen so far: they start declarations and casts.
    type_names: HashSet<String>,
    /// Typedef names of `fixed`/`shortfixed` types (`typedef fixed4 color;`): their storage.
    unorm_typedefs: HashMap<String, crate::brook::ast::Unorm>,
    /// Names of kernels and reduce functions: calls to them are found in host code.
    kernel_names: HashSet<String>,
    /// While scanning host code: the blocks open at the current token.
    host_scope: crate::brook::ast::HostScope,
    /// The id the next host block gets.
    next_scope: u32,
    /// `[N]` written after the last `vout` qualifier, for the parameter being parsed.
    vout_limit: Option<(crate::brook::ast::ArrayDims, Span)>,
}

impl Parser<'_, '_> {
    fn peek(&self) -> Token {
        self.nth(0)
    }

    fn nth(&self, ahead: usize) -> Token {
        let last = self.tokens.len() - 1;
        self.tokens[(self.pos + ahead).min(last)]
    }

    fn text_of(&self, token: Token) -> &str {
        self.spellings.get(self.file, token.text)
    }

    fn peek_text(&self) -> &str {
        self.text_of(self.peek())
    }

    fn at_eof(&self) -> bool {
        self.peek().kind == TokenKind::Eof
    }

    fn at(&self, p: Punct) -> bool {
        self.peek().is_punct(p)
    }

    fn at_ident(&self, word: &str) -> bool {
        self.peek().kind == TokenKind::Ident && self.peek_text() == word
    }

    fn bump(&mut self) -> Token {
        let token = self.peek();
        if token.kind != TokenKind::Eof {
            self.pos += 1;
        }
        token
    }

    fn eat(&mut self, p: Punct) -> Option<Span> {
        self.at(p).then(|| self.bump().span)
    }

    fn eat_ident(&mut self, word: &str) -> Option<Span> {
        self.at_ident(word).then(|| self.bump().span)
    }

    /// The span of the previous token (for the end of a construct).
    fn prev_span(&self) -> Span {
        self.tokens[self.pos.saturating_sub(1)].span
    }

    fn span_from(&self, start: Span) -> Span {
        start.to(self.prev_span())
    }

    fn report(&mut self, diagnostic: Diagnostic) {
        match &mut self.quiet {
            Some(count) => *count += diagnostic.is_error() as usize,
            None => self.diags.push(diagnostic),
        }
    }

    /// Reports "expected X, found Y" at the current token.
    fn expected(&mut self, what: &str) -> Failed {
        let token = self.peek();
        let found = match token.kind {
            TokenKind::Eof => "end of file".to_string(),
            TokenKind::Directive => "a preprocessor directive".to_string(),
            _ => format!("`{}`", self.text_of(token)),
        };
        self.report(
            Diagnostic::error(
                Code::Syntax,
                token.span,
                format!("expected {what}, found {found}"),
            )
            .with_label(format!("expected {what}")),
        );
        Failed
    }

    fn expect(&mut self, p: Punct) -> PResult<Span> {
        match self.eat(p) {
            Some(span) => Ok(span),
            None => Err(self.expected(&format!("`{}`", p.text()))),
        }
    }

    fn ident(&mut self, what: &str) -> PResult<Ident> {
        if self.peek().kind == TokenKind::Ident {
            let token = self.bump();
            return Ok(Ident {
                name: self.text_of(token).to_string(),
                span: token.span,
            });
        }
        Err(self.expected(what))
    }

    fn new_expr(&mut self, kind: ExprKind, span: Span) -> Expr {
        let id = ExprId(self.next_expr);
        self.next_expr += 1;
        Expr { id, kind, span }
    }

    /// Enters one level of nesting, failing past [`MAX_DEPTH`].
    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            let span = self.peek().span;
            self.report(Diagnostic::error(
                Code::Syntax,
                span,
                format!("nesting is too deep (more than {MAX_DEPTH} levels)"),
            ));
            return Err(Failed);
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Counts one more operator of an open chain, failing past [`MAX_CHAIN`].
    fn extend_chain(&mut self) -> PResult<()> {
        if self.chain >= MAX_CHAIN {
            let span = self.peek().span;
            self.report(Diagnostic::error(
                Code::Syntax,
                span,
                format!(
                    "expression too long: more than {MAX_CHAIN} operators in a row; split it \
                     into several statements"
                ),
            ));
            return Err(Failed);
        }
        self.chain += 1;
        Ok(())
    }

    /// Runs `f` and then closes the operators it added to the open chains.
    fn in_chain<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        let open = self.chain;
        let result = f(self);
        self.chain = open;
        result
    }

    /// Runs `f` without reporting errors; on failure restores the position and returns `None`.
    fn speculate<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> Option<T> {
        let saved_pos = self.pos;
        let saved_quiet = self.quiet.replace(0);
        let saved_depth = self.depth;
        let result = f(self);
        let errors = self.quiet.unwrap_or(0);
        self.quiet = saved_quiet;
        self.depth = saved_depth;
        match result {
            Ok(value) if errors == 0 => Some(value),
            _ => {
                self.pos = saved_pos;
                None
            }
        }
    }

    /// After an opening `(`: comma-separated items, then the closing `)`.
    fn list_until_rparen<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        let mut items = Vec::new();
        if self.eat(Punct::RParen).is_some() {
            return Ok(items);
        }
        loop {
            items.push(item(self)?);
            if self.eat(Punct::Comma).is_none() {
                break;
            }
        }
        self.expect(Punct::RParen)?;
        Ok(items)
    }

    /// Skips tokens up to and including the next `;` at this nesting level, or up to (not
    /// including) a `}` that closes the current block.
    fn recover_to_statement_end(&mut self) {
        let mut depth = 0i32;
        while !self.at_eof() {
            let token = self.peek();
            match token.kind {
                TokenKind::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => depth += 1,
                TokenKind::Punct(Punct::RParen | Punct::RBracket) => depth -= 1,
                TokenKind::Punct(Punct::RBrace) => {
                    if depth <= 0 {
                        return;
                    }
                    depth -= 1;
                }
                TokenKind::Punct(Punct::Semi) if depth <= 0 => {
                    self.bump();
                    return;
                }
                _ => {}
            }
            self.bump();
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::brook::ast::{ExprKind, HostArg, Item, TypeSpecKind};
    use crate::brook::{check_source, CheckOptions};
    use crate::source::SourceFile;

    fn items(text: &str) -> Vec<Item> {
        let checked = check_source(SourceFile::new("t.br", text), &CheckOptions::default());
        assert!(!checked.has_errors(), "{}", checked.render_diagnostics());
        checked.program.items
    }

    #[test]
    fn kernels_and_host_code_are_split_at_the_top_level() {
        let items = items(
            "#include <stdio.h>\nkernel void k(float a<>, out float b<>) { b = a; }\nint main() { return 0; }\n",
        );
        assert!(matches!(items[0], Item::Host(_)));
        assert!(matches!(&items[1], Item::Kernel(k) if k.name.name == "k" && k.params.len() == 2));
        assert!(matches!(items[2], Item::Host(_)));
    }

    #[test]
    fn host_streams_and_calls_are_found() {
        let items = items(
            "kernel void k(float a<>, out float b<>) { b = a; }\n\
             int main() { int n = 4; float s<n, 10>, t<n, 10>; float* p = 0;\n\
             streamRead(s, p); k(s, t); obj.k(1); streamWrite(t, p + 1 * n); return 0; }",
        );
        let Item::Host(host) = &items[1] else {
            panic!("host item")
        };
        let names: Vec<&str> = host.streams.iter().map(|s| s.name.name.as_str()).collect();
        assert_eq!(names, ["s", "t"]);
        assert_eq!(host.streams[0].dims.len(), 2);
        assert!(matches!(host.streams[0].ty.kind, TypeSpecKind::Value(_)));
        let calls: Vec<&str> = host.calls.iter().map(|c| c.callee.name.as_str()).collect();
        assert_eq!(
            calls,
            ["streamRead", "k", "streamWrite"],
            "a method call `obj.k(1)` is not a kernel call"
        );
        assert!(
            matches!(&host.calls[2].args[1], HostArg::Expr(e) if matches!(e.kind, ExprKind::Binary(..)))
        );
    }

    #[test]
    fn cxx_arguments_stay_raw() {
        let items = items(
            "kernel void k(float a, out float b<>) { b = a; }\n\
             void f(brook::Stream<float>& out) { k(static_cast<float>(2), out); }",
        );
        let Item::Host(host) = &items[1] else {
            panic!("host item")
        };
        assert!(matches!(host.calls[0].args[0], HostArg::Raw(_)));
        assert!(matches!(host.calls[0].args[1], HostArg::Expr(_)));
    }
}
