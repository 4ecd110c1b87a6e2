//! Host code: C or C++ that brcc passes through. The scanner finds the Brook constructs in it —
//! stream declarations, calls of kernels and stream operators — and parses those; it also
//! reports kernel-only intrinsics used outside kernels.

use super::{PResult, Parser};
use crate::brook::ast::{HostArg, HostCall, HostItem, Ident, Item, StreamDecl, StreamParam};
use crate::brook::token::{Punct, TokenKind};
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;
use std::collections::HashSet;

/// Stream operators that host code calls like functions.
pub const STREAM_OPERATORS: [&str; 4] = [
    "streamRead",
    "streamWrite",
    "streamScatterOp",
    "streamGatherOp",
];

/// Intrinsics that mean something only inside a kernel.
pub(crate) const KERNEL_ONLY: [&str; 4] = ["indexof", "instance", "instanceInGroup", "syncGroup"];

impl Parser<'_, '_> {
    /// Scans every host item; returns the functions defined in host code.
    pub(super) fn scan_host_items(&mut self, items: &mut [Item]) -> Vec<Ident> {
        let mut functions = Vec::new();
        for item in items {
            if let Item::Host(host) = item {
                self.scan_host(host, &mut functions);
            }
        }
        functions
    }

    /// Every word of host code outside the arguments of the calls the scan recorded (kernels
    /// and stream operators), and every word of a directive: an argument that names none of
    /// them is declared nowhere in the file. `None` when the file includes a header of its own
    /// (not a Brook header, which is spliced in), which may declare anything.
    pub(super) fn host_words(&self, items: &[Item]) -> Option<HashSet<String>> {
        let mut words = HashSet::new();
        for token in self.tokens {
            if token.kind != TokenKind::Directive {
                continue;
            }
            let text = self.text_of(*token);
            let directive = text.trim_start_matches('#').trim_start();
            if let Some(header) = directive.strip_prefix("include") {
                let header = header.trim();
                let brook = [".brh\"", ".brhi\""].iter().any(|e| header.ends_with(e));
                if header.starts_with('"') && !brook {
                    return None;
                }
            }
            words.extend(
                text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .map(str::to_string),
            );
        }
        for item in items {
            let Item::Host(host) = item else { continue };
            let mut calls = host.calls.iter().map(|c| c.span).peekable();
            for token in &self.tokens[host.tokens.clone()] {
                while calls.peek().is_some_and(|c| c.end <= token.span.start) {
                    calls.next();
                }
                let in_call = calls.peek().is_some_and(|c| c.start < token.span.start);
                if token.kind == TokenKind::Ident && !in_call {
                    words.insert(self.text_of(*token).to_string());
                }
            }
        }
        Some(words)
    }

    /// The first use in host code of each of BrookGPU's occlusion queries and write masks
    /// ([`crate::brook::GRAPHICS_ONLY_HOST`]).
    pub(super) fn graphics_only(&self, items: &[Item]) -> Vec<(String, Span)> {
        let mut found = Vec::new();
        for item in items {
            let Item::Host(host) = item else { continue };
            for token in &self.tokens[host.tokens.clone()] {
                let text = self.text_of(*token);
                let first = !found.iter().any(|(name, _)| name == text);
                if token.kind == TokenKind::Ident
                    && first
                    && crate::brook::GRAPHICS_ONLY_HOST.contains(&text)
                {
                    found.push((text.to_string(), token.span));
                }
            }
        }
        found
    }

    fn scan_host(&mut self, host: &mut HostItem, functions: &mut Vec<Ident>) {
        self.pos = host.tokens.start;
        let end = host.tokens.end;
        let mut statement_start = true;
        let mut depth = 0i32;
        self.host_scope.clear();
        while self.pos < end {
            let token = self.peek();
            let before = self.pos;
            if statement_start && self.at_stream_declaration() {
                self.stream_declarations(host);
            } else if statement_start && self.at_stream_pointer_declaration() {
                self.stream_pointer_declaration(host);
            } else if statement_start && self.at_unnamed_stream() {
                let span = self.peek().span.to(self.nth(1).span);
                self.report(
                    Diagnostic::error(
                        Code::StreamDeclaration,
                        span,
                        "Problem with stream declaration: the stream has no name",
                    )
                    .with_help("write the name before the lengths, as in `float a<10>;`"),
                );
                self.recover_to_statement_end();
            } else if statement_start && self.malformed_stream_declaration() {
                self.recover_to_statement_end();
            } else if token.kind == TokenKind::Ident
                && self.nth(1).is_punct(Punct::LParen)
                && !self.after_member_access()
            {
                self.host_identifier_call(host, functions, depth);
            }
            if self.pos == before {
                self.bump();
            }
            let last = self.tokens[self.pos - 1];
            match last.kind {
                TokenKind::Punct(Punct::LBrace) => {
                    depth += 1;
                    self.host_scope.push(self.next_scope);
                    self.next_scope += 1;
                }
                TokenKind::Punct(Punct::RBrace) => {
                    depth -= 1;
                    self.host_scope.pop();
                }
                _ => {}
            }
            statement_start = matches!(
                last.kind,
                TokenKind::Punct(
                    Punct::Semi | Punct::LBrace | Punct::RBrace | Punct::RParen | Punct::Colon
                ) | TokenKind::Directive
            ) || self.text_of(last) == "else";
        }
    }

    /// The previous token makes the current identifier a member (`a.f(`, `p->f(`, `ns::f(`).
    fn after_member_access(&self) -> bool {
        self.pos > 0 && {
            let prev = self.tokens[self.pos - 1];
            prev.is_punct(Punct::Dot)
                || prev.is_punct(Punct::Arrow)
                || prev.is_punct(Punct::ColonColon)
        }
    }

    /// The previous token is a type or declarator word: `void sum(` declares rather than calls.
    fn after_type_word(&self) -> bool {
        self.pos > 0 && {
            let prev = self.tokens[self.pos - 1];
            prev.kind == TokenKind::Ident && !matches!(self.text_of(prev), "return" | "else" | "do")
                || prev.is_punct(Punct::Star)
                || prev.is_punct(Punct::Amp)
        }
    }

    fn host_identifier_call(
        &mut self,
        host: &mut HostItem,
        functions: &mut Vec<Ident>,
        depth: i32,
    ) {
        let token = self.peek();
        let name = self.text_of(token).to_string();
        if depth == 0 && self.after_type_word() {
            if self.is_function_definition() {
                functions.push(Ident {
                    name: name.clone(),
                    span: token.span,
                });
            }
            self.function_stream_params(host, &name);
            return;
        }
        if KERNEL_ONLY.contains(&name.as_str()) && !self.after_type_word() {
            self.report(
                Diagnostic::error(
                    Code::IntrinsicContext,
                    token.span,
                    format!("{name}() operator has no meaning inside Non-kernel functions"),
                )
                .with_help(format!("`{name}` can be used only inside a kernel body")),
            );
            return;
        }
        let known = self.kernel_names.contains(&name) || STREAM_OPERATORS.contains(&name.as_str());
        if known && !self.after_type_word() {
            if let Ok(call) = self.host_call() {
                host.calls.push(call);
            }
        }
    }

    /// At `name (` of a host function: records its stream parameters, for the body's scope
    /// (the next block to open). Stops after the `)`.
    fn function_stream_params(&mut self, host: &mut HostItem, function: &str) {
        let name_at = self.pos;
        self.bump();
        self.bump();
        let scope = vec![self.next_scope];
        let mut found = false;
        while !self.at_eof()
            && !self.at(Punct::RParen)
            && !self.at(Punct::LBrace)
            && !self.at(Punct::Semi)
        {
            let before = self.pos;
            if let Some((param, out)) = self.speculate(|p| p.stream_param(scope.clone())) {
                if let Some(out) = out {
                    self.out_param_outside_kernel(out, &param.name.name);
                }
                host.stream_params.push(param);
                found = true;
            }
            self.skip_to_parameter_end();
            self.eat(Punct::Comma);
            if self.pos == before {
                self.bump();
            }
        }
        self.eat(Punct::RParen);
        if found {
            self.misspelt_kernel_keyword(name_at, function);
        }
    }

    /// `[const] [out] TYPE name<...>`, `TYPE (*name)<...>` or `TYPE (**name)<...>`, ending at
    /// `,` or `)`; with the place of `out`, if written.
    fn stream_param(
        &mut self,
        scope: crate::brook::ast::HostScope,
    ) -> PResult<(StreamParam, Option<crate::source::Span>)> {
        let start = self.peek().span;
        self.eat_ident("const");
        let out = self.eat_ident("out");
        let param = self.stream_declarator(start, scope)?;
        if !(self.at(Punct::Comma) || self.at(Punct::RParen)) {
            return Err(super::Failed);
        }
        Ok((param, out))
    }

    /// At the start of a host statement: `TYPE (*name...)<` declares stream pointers.
    fn at_stream_pointer_declaration(&mut self) -> bool {
        let shape = self.token_starts_type(0)
            && self.nth(1).is_punct(Punct::LParen)
            && self.nth(2).is_punct(Punct::Star);
        if !shape {
            return false;
        }
        let saved = self.pos;
        let declares = self
            .speculate(|p| {
                let start = p.peek().span;
                p.stream_declarator(start, Vec::new())?;
                if p.at(Punct::Semi) {
                    Ok(())
                } else {
                    Err(super::Failed)
                }
            })
            .is_some();
        self.pos = saved;
        declares
    }

    /// `float (*ptrs[3])<>;`: host variables of stream pointers (BrookGPU's libraries kept
    /// streams so), declared as C++ `Stream<float>* ptrs[3];`.
    fn stream_pointer_declaration(&mut self, host: &mut HostItem) {
        let start = self.peek().span;
        match self.stream_declarator(start, self.host_scope.clone()) {
            Ok(param) if self.eat(Punct::Semi).is_some() => host.stream_params.push(param),
            _ => self.recover_to_statement_end(),
        }
    }

    /// `TYPE name<...>` or `TYPE (*...name[N])<...>`: one stream or stream-pointer declarator.
    fn stream_declarator(
        &mut self,
        start: crate::source::Span,
        scope: crate::brook::ast::HostScope,
    ) -> PResult<StreamParam> {
        let ty = self.type_spec()?;
        let (mut pointers, mut array) = (0u8, None);
        let name = if self.eat(Punct::LParen).is_some() {
            while self.eat(Punct::Star).is_some() {
                pointers = pointers.saturating_add(1);
            }
            if pointers == 0 {
                return Err(super::Failed);
            }
            let name = self.ident("a stream name")?;
            if self.at(Punct::LBracket) {
                let open = self.peek().span;
                for _ in 0..self.skip_brackets(0) {
                    self.bump();
                }
                array = Some(self.span_from(open));
            }
            self.expect(Punct::RParen)?;
            name
        } else {
            self.ident("a stream name")?
        };
        if self.stream_dims()?.is_none() {
            return Err(super::Failed);
        }
        Ok(StreamParam {
            ty,
            name,
            pointers,
            array,
            span: self.span_from(start),
            scope,
        })
    }

    /// An `out` stream parameter of a host function: only kernels write streams through
    /// parameters.
    fn out_param_outside_kernel(&mut self, out: crate::source::Span, name: &str) {
        self.report(
            Diagnostic::error(
                Code::StreamDeclaration,
                out,
                format!("`out` stream parameter `{name}` in a function that is not a kernel"),
            )
            .with_help(
                "only kernels write streams through parameters: declare the function with `kernel`",
            ),
        );
    }

    /// Skips the rest of one parameter (to the `,` or `)` at its level; a malformed list also
    /// ends at `{` or `;`).
    fn skip_to_parameter_end(&mut self) {
        let mut depth = 0i32;
        while !self.at_eof() {
            match self.peek().kind {
                TokenKind::Punct(Punct::LParen | Punct::LBracket) => depth += 1,
                TokenKind::Punct(Punct::RParen) if depth == 0 => return,
                TokenKind::Punct(Punct::Comma | Punct::LBrace | Punct::Semi) if depth == 0 => {
                    return
                }
                TokenKind::Punct(Punct::RParen | Punct::RBracket) => depth = (depth - 1).max(0),
                _ => {}
            }
            self.bump();
        }
    }

    /// A function with stream parameters whose declaration starts with a word like `kernel`
    /// (`kernal void f(float a<>)`): a misspelt keyword, reported where it is.
    fn misspelt_kernel_keyword(&mut self, name_at: usize, function: &str) {
        let first = (0..name_at)
            .rev()
            .take_while(|&i| self.tokens[i].kind == TokenKind::Ident)
            .last();
        let Some(first) = first.filter(|&i| i + 1 < name_at) else {
            return;
        };
        let token = self.tokens[first];
        let word = self.text_of(token).to_string();
        let Some(keyword) = ["kernel", "reduce"]
            .into_iter()
            .find(|k| word != *k && edit_distance(&word, k) <= 2)
        else {
            return;
        };
        self.report(
            Diagnostic::error(
                Code::Syntax,
                token.span,
                format!("unknown word `{word}` before function `{function}`, which has stream parameters: did you mean `{keyword}`?"),
            )
            .with_help(format!("a function with stream parameters that runs on the device is declared `{keyword} void {function}(...)`")),
        );
    }

    /// At `name (`: the parentheses are followed by `{`, so this defines a function.
    fn is_function_definition(&self) -> bool {
        let mut ahead = 1;
        let mut depth = 0;
        loop {
            let token = self.nth(ahead);
            match token.kind {
                TokenKind::Eof => return false,
                TokenKind::Punct(Punct::LParen) => depth += 1,
                TokenKind::Punct(Punct::RParen) => {
                    depth -= 1;
                    if depth == 0 {
                        return self.nth(ahead + 1).is_punct(Punct::LBrace);
                    }
                }
                _ => {}
            }
            ahead += 1;
        }
    }

    /// `name(arg, ...)` where each argument is parsed as an expression if it is one.
    fn host_call(&mut self) -> PResult<HostCall> {
        let callee = self.ident("a function name")?;
        self.expect(Punct::LParen)?;
        let args = self.list_until_rparen(|p| Ok(p.host_arg()))?;
        let span = self.span_from(callee.span);
        Ok(HostCall {
            callee,
            args,
            span,
            scope: self.host_scope.clone(),
        })
    }

    fn host_arg(&mut self) -> HostArg {
        let start = self.peek().span;
        if self.at(Punct::Comma) || self.at(Punct::RParen) {
            // `k(a, )`, `k(, b)`: an empty argument, an empty span where it should be.
            return HostArg::Raw(Span::new(start.start as usize, start.start as usize));
        }
        let parsed = self.speculate(|p| {
            let expr = p.assign_expr()?;
            if p.at(Punct::Comma) || p.at(Punct::RParen) {
                Ok(expr)
            } else {
                Err(super::Failed)
            }
        });
        if let Some(expr) = parsed {
            return HostArg::Expr(expr);
        }
        let mut depth = 0i32;
        while !self.at_eof() {
            match self.peek().kind {
                TokenKind::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => depth += 1,
                TokenKind::Punct(Punct::RParen | Punct::RBracket | Punct::RBrace) => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
                TokenKind::Punct(Punct::Comma) if depth == 0 => break,
                _ => {}
            }
            self.bump();
        }
        HostArg::Raw(self.span_from(start))
    }

    /// `[const] [iter] TYPE name <`
    fn at_stream_declaration(&self) -> bool {
        let mut ahead = 0;
        for word in ["const", "iter"] {
            if self.nth(ahead).kind == TokenKind::Ident && self.text_of(self.nth(ahead)) == word {
                ahead += 1;
            }
        }
        if !self.token_starts_type(ahead) {
            return false;
        }
        // Skip the type's words (`unsigned int`, `struct pair`).
        while self.nth(ahead + 1).kind == TokenKind::Ident && self.token_type_word(ahead + 1) {
            ahead += 1;
        }
        if self.text_of(self.nth(ahead)) == "struct" {
            ahead += 1;
        }
        self.nth(ahead + 1).kind == TokenKind::Ident && self.nth(ahead + 2).is_punct(Punct::Lt)
    }

    /// `float <10>;`: a Brook value type directly followed by `<` (never C++).
    fn at_unnamed_stream(&self) -> bool {
        let mut ahead = 0;
        while matches!(
            self.text_of(self.nth(ahead)),
            "const" | "iter" | "unsigned" | "signed"
        ) && self.nth(ahead).kind == TokenKind::Ident
        {
            ahead += 1;
        }
        self.nth(ahead).kind == TokenKind::Ident
            && super::types::builtin_type(self.text_of(self.nth(ahead))).is_some()
            && self.nth(ahead + 1).is_punct(Punct::Lt)
    }

    /// A statement that can only be a stream declaration gone wrong (no C++ reads it either):
    /// `A keys<32>;` with `A` no type, `s float4<2>;` (name and type swapped), `float a 10>;`
    /// (no `<`). Reports it and returns true.
    fn malformed_stream_declaration(&mut self) -> bool {
        let (first, second, third) = (self.nth(0), self.nth(1), self.nth(2));
        if first.kind != TokenKind::Ident || second.kind != TokenKind::Ident {
            return false;
        }
        let (first_text, second_text) = (self.text_of(first), self.text_of(second));
        let problem = if third.is_punct(Punct::Lt)
            && super::types::builtin_type(second_text).is_some()
            && !self.token_starts_type(0)
        {
            Some((
                first.span.to(second.span),
                format!("Problem with stream declaration: the name `{first_text}` comes before the type `{second_text}`"),
                format!("write the type first: `{second_text} {first_text}<...>;`"),
            ))
        } else if third.is_punct(Punct::Lt)
            && !self.token_starts_type(0)
            && !C_WORDS_BEFORE_A_NAME.contains(&first_text)
        {
            Some((
                first.span,
                format!("Problem with stream declaration: unknown type `{first_text}`"),
                "a stream's elements are a Brook type, or a struct or typedef of this file"
                    .to_string(),
            ))
        } else if self.token_starts_type(0)
            && super::types::builtin_type(first_text).is_some()
            && matches!(third.kind, TokenKind::IntLit)
        {
            Some((
                third.span,
                format!("Problem with stream declaration: expected `<` before the lengths of `{second_text}`"),
                format!("write `{first_text} {second_text}<{}>;`", self.text_of(third)),
            ))
        } else {
            None
        };
        let Some((span, message, help)) = problem else {
            return false;
        };
        self.report(Diagnostic::error(Code::StreamDeclaration, span, message).with_help(help));
        true
    }

    /// A word that continues a multi-word type (`unsigned int`, `long long`, `unsigned int4`).
    fn token_type_word(&self, ahead: usize) -> bool {
        let word = self.text_of(self.nth(ahead));
        let previous = self.text_of(self.nth(ahead - 1));
        let vector_after_sign = matches!(previous, "unsigned" | "signed")
            && ["int", "char", "short"].iter().any(|base| {
                word.strip_prefix(base)
                    .is_some_and(|width| matches!(width, "2" | "3" | "4"))
            });
        (matches!(word, "int" | "char" | "short" | "long" | "double") || vector_after_sign)
            && previous != "struct"
    }

    /// `float a<10, 10>, b<n>;` or `iter float s<100> = iter(0.0f, 100.0f);`
    fn stream_declarations(&mut self, host: &mut HostItem) {
        let result = self.stream_declaration_list(host);
        if result.is_err() {
            self.recover_to_statement_end();
        }
    }

    fn stream_declaration_list(&mut self, host: &mut HostItem) -> PResult<()> {
        let start = self.peek().span;
        self.eat_ident("const");
        let iter = self.eat_ident("iter");
        let ty = self.type_spec()?;
        loop {
            let name = self.ident("a stream name")?;
            let (dims, dims_span) = self.stream_dims()?.unwrap_or_default();
            let init = self.stream_initializer()?;
            let dims = self.host_dims(dims, dims_span);
            host.streams.push(StreamDecl {
                ty: ty.clone(),
                name,
                dims,
                dims_span,
                iter,
                init,
                span: self.span_from(start),
                scope: self.host_scope.clone(),
            });
            if self.eat(Punct::Comma).is_none() {
                break;
            }
        }
        self.expect(Punct::Semi)?;
        Ok(())
    }

    /// Host streams need every length: `float a<>;` is reported.
    fn host_dims(
        &mut self,
        dims: crate::brook::ast::ArrayDims,
        span: crate::source::Span,
    ) -> Vec<crate::brook::ast::Expr> {
        if dims.is_empty() || dims.iter().any(Option::is_none) {
            self.report(
                Diagnostic::error(
                    Code::StreamDeclaration,
                    span,
                    "Problem with stream declaration: unspecified lengths are permitted only for kernel parameters",
                )
                .with_help("give every dimension a length, such as `float a<10, 10>;`"),
            );
        }
        dims.into_iter().flatten().collect()
    }

    /// `= iter(a, b)` (or another initializer, which the checker rejects for data streams).
    fn stream_initializer(
        &mut self,
    ) -> PResult<Option<(Vec<crate::brook::ast::Expr>, crate::source::Span)>> {
        let Some(eq) = self.eat(Punct::Assign) else {
            return Ok(None);
        };
        if self.at_ident("iter") && self.nth(1).is_punct(Punct::LParen) {
            self.bump();
            let args = self.call_args()?;
            return Ok(Some((args, self.span_from(eq))));
        }
        let init = self.initializer()?;
        let span = eq.to(init.span());
        Ok(Some((Vec::new(), span)))
    }
}

/// C and C++ words that may stand before `name <` in a statement that is no declaration
/// (`return x < 3;`, `class Box<int> {...}`).
const C_WORDS_BEFORE_A_NAME: &[&str] = &[
    "return",
    "else",
    "case",
    "goto",
    "delete",
    "throw",
    "new",
    "sizeof",
    "class",
    "struct",
    "union",
    "enum",
    "typename",
    "template",
    "namespace",
    "friend",
    "using",
    "typedef",
    "operator",
    "co_return",
    "co_yield",
    "co_await",
    "static",
    "extern",
    "inline",
    "virtual",
    "explicit",
    "public",
    "private",
    "protected",
    "do",
    "not",
    "and",
    "or",
];

/// The Levenshtein distance of two short words.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}
