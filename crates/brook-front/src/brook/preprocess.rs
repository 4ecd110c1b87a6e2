//! The brcc preprocessor (seed 001, section 1.15), run on tokens so that every token keeps its
//! source position.
//!
//! With `-pp` it interprets `#define` (object-like, one line), `#undef`, `#ifdef`, `#ifndef`,
//! `#if` (an integer or a macro name), `#else` and `#endif`, and expands macros. `#include` and
//! `#pragma` lines are kept as host text for the C++ compiler; `#elif`, `#error` and `#line` are
//! errors, as the seed lists them as unsupported. Without `-pp`, every directive line is kept as
//! host text, untouched.

use super::token::{Punct, Token, TokenKind};
use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::source::{SourceFile, Span};
use std::collections::HashMap;

/// A `-D NAME` or `-D NAME=value` definition from the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Define {
    pub name: String,
    pub value: Option<String>,
}

impl Define {
    /// Parses the text after `-D`. The value must be a signed decimal integer (seed 001, 1.15.2).
    pub fn parse(text: &str) -> Result<Define, String> {
        let (name, value) = match text.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (text, None),
        };
        let name_ok = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name_ok {
            return Err(format!("`{name}` is not a valid macro name"));
        }
        if let Some(value) = value {
            if value.parse::<i32>().is_err() {
                return Err(format!(
                    "Follow signed integer semantics (only decimal format) for macro value: `{value}` is not a 32-bit decimal integer"
                ));
            }
        }
        Ok(Define {
            name: name.to_string(),
            value: value.map(str::to_string),
        })
    }
}

/// Token spellings: the source text, followed by the text of command-line macro values.
/// A token's `text` span indexes this combined text.
#[derive(Clone, Debug)]
pub struct Spellings {
    file_len: usize,
    extra: String,
}

impl Spellings {
    pub fn get<'a>(&'a self, file: &'a SourceFile, span: Span) -> &'a str {
        let range = span.range();
        if range.start >= self.file_len && !span.is_empty() {
            let start = range.start - self.file_len;
            return self.extra.get(start..start + range.len()).unwrap_or("");
        }
        file.text().get(range).unwrap_or("")
    }
}

#[derive(Clone, Debug)]
struct Macro {
    name_span: Span,
    body: Vec<Token>,
}

/// Runs the preprocessor over `tokens` (ending in `Eof`). With `enabled == false` it only turns
/// directive lines into `Directive` tokens.
pub fn preprocess(
    file: &SourceFile,
    tokens: Vec<Token>,
    enabled: bool,
    defines: &[Define],
    diags: &mut Diagnostics,
) -> (Vec<Token>, Spellings) {
    let mut pp = Preprocessor {
        file,
        macros: HashMap::new(),
        conditions: Vec::new(),
        out: Vec::with_capacity(tokens.len()),
        diags,
        spellings: Spellings {
            file_len: file.text().len(),
            extra: String::new(),
        },
        expansion_limit_reported: false,
    };
    if enabled {
        pp.command_line_defines(defines);
    }
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i];
        if token.kind == TokenKind::Eof {
            break;
        }
        if token.line_start && token.is_punct(Punct::Hash) {
            let end = directive_end(&tokens, i);
            if enabled {
                pp.directive(&tokens[i..end]);
            } else {
                pp.out.push(directive_token(&tokens[i..end]));
            }
            i = end;
            continue;
        }
        if pp.active() {
            if enabled {
                pp.expand(token, &mut Vec::new());
            } else {
                pp.out.push(token);
            }
        }
        i += 1;
    }
    pp.finish(tokens.last().copied());
    (pp.out, pp.spellings)
}

/// The index just past a directive line starting at `start`, following `\` continuations.
fn directive_end(tokens: &[Token], start: usize) -> usize {
    let mut end = start + 1;
    loop {
        while end < tokens.len() && !tokens[end].line_start {
            end += 1;
        }
        let continued = tokens[end - 1].is_punct(Punct::Backslash);
        if !continued || end >= tokens.len() || tokens[end].kind == TokenKind::Eof {
            return end;
        }
        end += 1;
    }
}

/// Macro expansion stops past this nesting depth (`#define A B`, `#define B C`, ...).
const MAX_EXPANSION_DEPTH: usize = 64;
/// Macro expansion stops once it has produced this many tokens (`#define A B B`, ...).
const MAX_EXPANDED_TOKENS: usize = 1_000_000;

fn directive_token(line: &[Token]) -> Token {
    let span = line[0].span.to(line[line.len() - 1].span);
    Token {
        kind: TokenKind::Directive,
        span,
        text: span,
        line_start: true,
    }
}

struct Condition {
    /// Where the `#if`/`#ifdef`/`#ifndef` was, for "missing #endif".
    opened_at: Span,
    /// This branch is taken.
    taking: bool,
    /// Some branch of this conditional has been taken already (controls `#else`).
    taken_before: bool,
    /// The enclosing region is active.
    parent_active: bool,
    seen_else: bool,
}

struct Preprocessor<'a, 'd> {
    file: &'a SourceFile,
    macros: HashMap<String, Macro>,
    conditions: Vec<Condition>,
    out: Vec<Token>,
    diags: &'d mut Diagnostics,
    spellings: Spellings,
    expansion_limit_reported: bool,
}

impl Preprocessor<'_, '_> {
    fn text(&self, token: &Token) -> &str {
        self.spellings.get(self.file, token.text)
    }

    fn active(&self) -> bool {
        self.conditions.last().is_none_or(|c| c.taking)
    }

    fn command_line_defines(&mut self, defines: &[Define]) {
        for define in defines {
            let mut body = Vec::new();
            if let Some(value) = &define.value {
                let start = self.spellings.file_len + self.spellings.extra.len();
                self.spellings.extra.push_str(value);
                let span = Span::new(start, start + value.len());
                body.push(Token {
                    kind: TokenKind::IntLit,
                    span,
                    text: span,
                    line_start: false,
                });
            }
            let name_span = Span::new(0, 0);
            self.macros
                .insert(define.name.clone(), Macro { name_span, body });
        }
    }

    /// Appends `token` to the output, expanding it if it names a macro not already being expanded.
    fn expand(&mut self, token: Token, expanding: &mut Vec<String>) {
        if token.kind != TokenKind::Ident {
            self.out.push(token);
            return;
        }
        let name = self.text(&token).to_string();
        let Some(body) = self.macros.get(&name).map(|m| m.body.clone()) else {
            self.out.push(token);
            return;
        };
        if expanding.contains(&name) {
            self.out.push(token);
            return;
        }
        if expanding.len() >= MAX_EXPANSION_DEPTH || self.out.len() >= MAX_EXPANDED_TOKENS {
            self.out.push(token);
            if !self.expansion_limit_reported {
                self.expansion_limit_reported = true;
                self.diags.push(
                    Diagnostic::error(
                        Code::UnsupportedDirective,
                        token.span,
                        format!("Unsupported preprocessor directive syntax: expanding `{name}` nests more than {MAX_EXPANSION_DEPTH} macros deep or produces more than {MAX_EXPANDED_TOKENS} tokens"),
                    ),
                );
            }
            return;
        }
        expanding.push(name);
        for (k, t) in body.into_iter().enumerate() {
            let placed = Token {
                span: token.span,
                line_start: token.line_start && k == 0,
                ..t
            };
            self.expand(placed, expanding);
        }
        expanding.pop();
    }

    fn directive(&mut self, line: &[Token]) {
        let Some(name_token) = line.get(1).copied() else {
            return; // The null directive `#` alone.
        };
        let name = self.text(&name_token).to_string();
        let args = &line[2..];
        match name.as_str() {
            "ifdef" | "ifndef" => self.ifdef(&name, line, args),
            "if" => self.if_directive(line, args),
            "else" => self.else_directive(line, args),
            "endif" => self.endif(line, args),
            "elif" => self.unsupported_directive(name_token, &name),
            _ if !self.active() => {}
            "define" => self.define(line, args),
            "undef" => self.undef(line, args),
            "include" | "pragma" => self.out.push(directive_token(line)),
            "line" => self.diags.push(
                Diagnostic::error(
                    Code::LineDirective,
                    name_token.span,
                    "'#line' is not yet supported",
                )
                .with_help(
                    "remove the directive, or compile without -pp to pass it to the C++ compiler",
                ),
            ),
            "error" => self.unsupported_directive(name_token, &name),
            _ => self.diags.push(
                Diagnostic::error(
                    Code::UnknownDirective,
                    name_token.span,
                    format!("Undefined preprocessor directive(\"{name}\")"),
                )
                .with_help("supported directives: #define #undef #ifdef #ifndef #if #else #endif"),
            ),
        }
    }

    fn unsupported_directive(&mut self, name_token: Token, name: &str) {
        self.diags.push(
            Diagnostic::error(
                Code::UnsupportedDirective,
                name_token.span,
                format!("Unsupported preprocessor directive syntax: `#{name}` is not supported by the brcc preprocessor"),
            )
            .with_help("use nested #if/#else/#endif, or compile without -pp"),
        );
    }

    fn missing_name(&mut self, line: &[Token], directive: &str) {
        self.diags.push(
            Diagnostic::error(
                Code::DirectiveMissingName,
                line[1].span,
                format!("Expecting token after '#{directive}'"),
            )
            .with_label("a macro name must follow"),
        );
    }

    fn trailing_tokens(&mut self, directive: &str, rest: &[Token]) {
        if let Some(first) = rest.first() {
            let span = first.span.to(rest[rest.len() - 1].span);
            self.diags.push(
                Diagnostic::warning(
                    Code::DirectiveTrailingTokens,
                    0,
                    span,
                    format!("Unexpected token following preprocessor directive ({directive}) -- expected a new line"),
                )
                .with_label("ignored"),
            );
        }
    }

    fn macro_name<'t>(
        &mut self,
        line: &[Token],
        args: &'t [Token],
        directive: &str,
    ) -> Option<(Token, &'t [Token])> {
        match args.first() {
            Some(t) if t.kind == TokenKind::Ident => Some((*t, &args[1..])),
            _ => {
                self.missing_name(line, directive);
                None
            }
        }
    }

    fn define(&mut self, line: &[Token], args: &[Token]) {
        let Some((name, body)) = self.macro_name(line, args, "define") else {
            return;
        };
        if let Some(slash) = body.iter().find(|t| t.is_punct(Punct::Backslash)) {
            self.diags.push(
                Diagnostic::error(
                    Code::UnsupportedDirective,
                    slash.span,
                    "Unsupported preprocessor directive syntax: the line separator `\\` is not handled",
                )
                .with_help("write the whole #define on one line"),
            );
            return;
        }
        if body
            .first()
            .is_some_and(|t| t.is_punct(Punct::LParen) && t.span.start == name.span.end)
        {
            self.diags.push(
                Diagnostic::error(
                    Code::UnsupportedDirective,
                    body[0].span,
                    "Unsupported preprocessor directive syntax: function-like macros are not supported",
                )
                .with_help("only object-like macros (`#define NAME text`) are supported"),
            );
            return;
        }
        let name_text = self.text(&name).to_string();
        if let Some(previous) = self.macros.get(&name_text) {
            let mut warning = Diagnostic::warning(
                Code::MacroRedefinition,
                0,
                name.span,
                format!("\"{name_text}\": Macro redefinition"),
            );
            warning = if previous.name_span.is_empty() {
                warning.with_note(None, "the previous definition came from the command line (-D); the latest one is considered")
            } else {
                warning.with_note(
                    Some(previous.name_span),
                    format!("See previous definition of \"{name_text}\" and latest one considered as macro"),
                )
            };
            self.diags.push(warning);
        }
        let body = body
            .iter()
            .map(|t| Token {
                line_start: false,
                ..*t
            })
            .collect();
        self.macros.insert(
            name_text,
            Macro {
                name_span: name.span,
                body,
            },
        );
    }

    fn undef(&mut self, line: &[Token], args: &[Token]) {
        let Some((name, rest)) = self.macro_name(line, args, "undef") else {
            return;
        };
        let name_text = self.text(&name).to_string();
        self.trailing_tokens(&format!("#undef \"{name_text}\""), rest);
        self.macros.remove(&name_text);
    }

    fn push_condition(&mut self, line: &[Token], taking: bool) {
        let parent_active = self.active();
        let taking = parent_active && taking;
        self.conditions.push(Condition {
            opened_at: line[0].span.to(line[1].span),
            taking,
            taken_before: taking,
            parent_active,
            seen_else: false,
        });
    }

    fn ifdef(&mut self, directive: &str, line: &[Token], args: &[Token]) {
        if !self.active() {
            self.push_condition(line, false);
            return;
        }
        let Some((name, rest)) = self.macro_name(line, args, directive) else {
            self.push_condition(line, false);
            return;
        };
        let name_text = self.text(&name).to_string();
        self.trailing_tokens(&format!("#{directive} \"{name_text}\""), rest);
        let defined = self.macros.contains_key(&name_text);
        self.push_condition(line, defined == (directive == "ifdef"));
    }

    fn if_directive(&mut self, line: &[Token], args: &[Token]) {
        if !self.active() {
            self.push_condition(line, false);
            return;
        }
        let value = self.if_value(line, args);
        self.push_condition(line, value.unwrap_or(0) != 0);
    }

    /// The value of `#if INT`, `#if -INT` or `#if NAME` where NAME is undefined (0) or defined as
    /// an integer.
    fn if_value(&mut self, line: &[Token], args: &[Token]) -> Option<i64> {
        let (negative, rest) = match args.first() {
            Some(t) if t.is_punct(Punct::Minus) => (true, &args[1..]),
            _ => (false, args),
        };
        let value = match rest {
            [t] if t.kind == TokenKind::IntLit => parse_int(self.text(t)),
            [t] if t.kind == TokenKind::Ident && !negative => {
                let name = self.text(t).to_string();
                match self.macros.get(&name).map(|m| m.body.clone()) {
                    None => Some(0),
                    Some(body) => match body.as_slice() {
                        [v] if v.kind == TokenKind::IntLit => parse_int(self.text(v)),
                        _ => None,
                    },
                }
            }
            _ => None,
        };
        let value = value.map(|v| if negative { -v } else { v });
        if value.is_none_or(|v| i32::try_from(v).is_err()) {
            let span = args
                .first()
                .map_or(line[1].span, |t| t.span.to(args[args.len() - 1].span));
            self.diags.push(
                Diagnostic::error(Code::UnsupportedIf, span, "Unsupported #if syntax")
                    .with_label("expected a 32-bit signed integer or a macro defined as one")
                    .with_help("the brcc preprocessor evaluates no expressions in #if"),
            );
            return None;
        }
        value
    }

    fn else_directive(&mut self, line: &[Token], args: &[Token]) {
        self.trailing_tokens("#else", args);
        let stray = match self.conditions.last_mut() {
            Some(c) if !c.seen_else => {
                c.seen_else = true;
                c.taking = c.parent_active && !c.taken_before;
                c.taken_before |= c.taking;
                false
            }
            _ => true,
        };
        if stray {
            self.stray(line, "#else without a matching #if, #ifdef or #ifndef");
        }
    }

    fn endif(&mut self, line: &[Token], args: &[Token]) {
        self.trailing_tokens("#endif", args);
        if self.conditions.pop().is_none() {
            self.stray(line, "#endif without a matching #if, #ifdef or #ifndef");
        }
    }

    fn stray(&mut self, line: &[Token], what: &str) {
        self.diags.push(Diagnostic::error(
            Code::UnsupportedDirective,
            line[0].span.to(line[1].span),
            format!("Unsupported preprocessor directive syntax: {what}"),
        ));
    }

    fn finish(&mut self, eof: Option<Token>) {
        for condition in std::mem::take(&mut self.conditions) {
            self.diags.push(
                Diagnostic::error(
                    Code::MissingEndif,
                    condition.opened_at,
                    "Expecting '#endif' before end of file",
                )
                .with_label("this conditional is never closed"),
            );
        }
        if let Some(eof) = eof {
            self.out.push(eof);
        }
    }
}

/// Parses a C integer literal (decimal, hex or octal, with `u`/`l` suffixes).
pub fn parse_int(text: &str) -> Option<i64> {
    let digits = text.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        return i64::from_str_radix(hex, 16).ok();
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return i64::from_str_radix(&digits[1..], 8).ok();
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brook::lexer::lex;
    use crate::diagnostic::WarningPolicy;

    fn run(text: &str, defines: &[Define]) -> (String, Vec<Code>) {
        let file = SourceFile::new("t.br", text);
        let mut diags = Diagnostics::new(WarningPolicy::default());
        let tokens = lex(&file, &mut diags);
        let (out, spellings) = preprocess(&file, tokens, true, defines, &mut diags);
        let text: Vec<&str> = out
            .iter()
            .filter(|t| t.kind != TokenKind::Eof)
            .map(|t| spellings.get(&file, t.text))
            .collect();
        (
            text.join(" "),
            diags.into_sorted().iter().map(|d| d.code).collect(),
        )
    }

    #[test]
    fn defines_expand_with_the_latest_definition() {
        let (text, codes) = run("#define V 10\n#define V 15\nint a = V;", &[]);
        assert_eq!(text, "int a = 15 ;");
        assert_eq!(codes, [Code::MacroRedefinition]);
    }

    #[test]
    fn conditionals_select_branches() {
        let src = "#ifdef A\na\n#else\nb\n#endif\n#if 0\nc\n#else\nd\n#endif\n#ifndef A\ne\n#endif";
        assert_eq!(run(src, &[]).0, "b d e");
        let a = Define::parse("A=1").unwrap();
        assert_eq!(run(src, &[a]).0, "a d");
    }

    #[test]
    fn nested_inactive_regions_stay_inactive() {
        let src = "#if 0\n#ifdef X\na\n#else\nb\n#endif\n#else\nc\n#endif";
        assert_eq!(run(src, &[]).0, "c");
    }

    #[test]
    fn self_reference_does_not_loop() {
        assert_eq!(run("#define X X + 1\nX", &[]).0, "X + 1");
    }

    #[test]
    fn runaway_expansion_is_stopped() {
        let chain: String = (0..200)
            .map(|i| format!("#define M{i} M{}\n", i + 1))
            .collect();
        assert_eq!(
            run(&format!("{chain}M0"), &[]).1,
            [Code::UnsupportedDirective]
        );
        let doubling: String = (0..24)
            .map(|i| format!("#define D{i} D{} D{}\n", i + 1, i + 1))
            .collect();
        assert_eq!(
            run(&format!("{doubling}D0"), &[]).1,
            [Code::UnsupportedDirective]
        );
    }

    #[test]
    fn errors_are_reported() {
        assert_eq!(run("#if 1\na", &[]).1, [Code::MissingEndif]);
        assert_eq!(run("#if 1 + 2\n#endif", &[]).1, [Code::UnsupportedIf]);
        assert_eq!(run("#frob\n", &[]).1, [Code::UnknownDirective]);
        assert_eq!(run("#define\n", &[]).1, [Code::DirectiveMissingName]);
        assert!(Define::parse("V=0x10").is_err());
    }
}
