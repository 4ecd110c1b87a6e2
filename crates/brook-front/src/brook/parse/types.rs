//! Types and qualifiers as written: `float4`, `unsigned int`, `struct pair`, `out`, `const`.

use super::{PResult, Parser};
use crate::brook::ast::{Qualifiers, TypeSpec, TypeSpecKind, Unorm};
use crate::brook::token::{Punct, TokenKind};
use brook_ir::{ScalarKind, ValueType};

/// The built-in type a name spells (`float4`, `uchar`, `long2`), if any. BrookGPU's `fixed`
/// and `shortfixed` compute as `float` (their storage is `TypeSpec::unorm`).
pub fn builtin_type(text: &str) -> Option<TypeSpecKind> {
    const BASES: [(&str, Option<ScalarKind>); 13] = [
        ("shortfixed", Some(ScalarKind::F32)),
        ("fixed", Some(ScalarKind::F32)),
        ("uchar", Some(ScalarKind::U8)),
        ("ushort", Some(ScalarKind::U16)),
        ("uint", Some(ScalarKind::U32)),
        ("ulong", None),
        ("char", Some(ScalarKind::I8)),
        ("short", Some(ScalarKind::I16)),
        ("int", Some(ScalarKind::I32)),
        ("long", None),
        ("float", Some(ScalarKind::F32)),
        ("double", Some(ScalarKind::F64)),
        ("bool", Some(ScalarKind::Bool)),
    ];
    for (base, kind) in BASES {
        let Some(rest) = text.strip_prefix(base) else {
            continue;
        };
        let width = if rest.is_empty() {
            1
        } else if rest.len() <= 2 && rest.bytes().all(|b| b.is_ascii_digit()) {
            rest.parse::<u8>().ok()?
        } else {
            return None;
        };
        return Some(match kind {
            Some(kind) => TypeSpecKind::Value(ValueType::vector(kind, width)),
            None => TypeSpecKind::Reserved(text.to_string()),
        });
    }
    None
}

pub(crate) const QUALIFIER_WORDS: [&str; 12] = [
    "out", "reduce", "iter", "vout", "const", "shared", "volatile", "restrict", "static", "extern",
    "auto", "register",
];

impl Parser<'_, '_> {
    /// The current token starts a type.
    pub(super) fn at_type_start(&self) -> bool {
        self.token_starts_type(0)
    }

    pub(super) fn token_starts_type(&self, ahead: usize) -> bool {
        let token = self.nth(ahead);
        if token.kind != TokenKind::Ident {
            return false;
        }
        let text = self.text_of(token);
        matches!(text, "void" | "struct" | "unsigned" | "signed")
            || builtin_type(text).is_some()
            || self.type_names.contains(text)
            || self.type_macros.contains_key(text)
    }

    /// Finds the macros whose whole body is a built-in type (`float4`, `unsigned int`): kernel
    /// code without `-pp` may use them as type names (`REAL x = a;`, `REAL a<>`).
    pub(super) fn find_type_macros(&mut self) {
        let bodies = self.macro_bodies;
        for (name, body) in bodies {
            let saved = (std::mem::replace(&mut self.tokens, body), self.pos);
            self.pos = 0;
            let parsed = self.speculate(|p| {
                let ty = p.type_spec()?;
                let builtin = matches!(ty.kind, TypeSpecKind::Value(_) | TypeSpecKind::Reserved(_));
                if builtin && p.at_eof() {
                    Ok(ty.kind)
                } else {
                    Err(super::Failed)
                }
            });
            (self.tokens, self.pos) = saved;
            if let Some(kind) = parsed {
                self.type_macros.insert(name.clone(), kind);
            }
        }
    }

    /// The current token is a qualifier word followed, after more qualifiers, by a type.
    pub(super) fn at_qualified_type(&self) -> bool {
        let mut ahead = 0;
        while self.nth(ahead).kind == TokenKind::Ident
            && QUALIFIER_WORDS.contains(&self.text_of(self.nth(ahead)))
        {
            let vout = self.text_of(self.nth(ahead)) == "vout";
            ahead += 1;
            if vout {
                ahead = self.skip_brackets(ahead);
            }
        }
        self.token_starts_type(ahead)
    }

    /// The token index after the `[...]` groups starting `ahead` tokens on (`ahead` itself
    /// when none starts there).
    pub(super) fn skip_brackets(&self, mut ahead: usize) -> usize {
        let mut depth = 0usize;
        loop {
            let token = self.nth(ahead);
            match token.kind {
                TokenKind::Punct(Punct::LBracket) => depth += 1,
                TokenKind::Punct(Punct::RBracket) if depth > 0 => depth -= 1,
                TokenKind::Eof => return ahead,
                _ if depth == 0 => return ahead,
                _ => {}
            }
            ahead += 1;
        }
    }

    /// Consumes qualifier words that precede a type.
    /// `vout [N]` keeps its `[N]` for the parameter that takes it (`Parser::vout_limit`).
    pub(super) fn qualifiers(&mut self) -> Qualifiers {
        let mut q = Qualifiers::default();
        self.vout_limit = None;
        while self.peek().kind == TokenKind::Ident && self.at_qualified_type() {
            let token = self.peek();
            let slot = match self.text_of(token) {
                "out" => &mut q.out,
                "reduce" => &mut q.reduce,
                "iter" => &mut q.iter,
                "vout" => &mut q.vout,
                "const" => &mut q.const_,
                "shared" => &mut q.shared,
                "volatile" => &mut q.volatile,
                "restrict" => &mut q.restrict,
                "static" => &mut q.static_,
                "extern" => &mut q.extern_,
                "auto" => &mut q.auto,
                "register" => &mut q.register,
                _ => break,
            };
            *slot = Some(token.span);
            self.bump();
            if q.vout == Some(token.span) && self.at(Punct::LBracket) {
                self.vout_limit = self.array_dims().ok().flatten();
            }
        }
        q
    }

    pub(super) fn type_spec(&mut self) -> PResult<TypeSpec> {
        let first = self.peek();
        if first.kind != TokenKind::Ident {
            return Err(self.expected("a type"));
        }
        let text = self.text_of(first).to_string();
        let unorm = match text.as_str() {
            t if t.starts_with("shortfixed") => Some(Unorm::ShortFixed),
            t if t.starts_with("fixed") => Some(Unorm::Fixed),
            t => self.unorm_typedefs.get(t).copied(),
        };
        let kind = match text.as_str() {
            "void" => {
                self.bump();
                TypeSpecKind::Void
            }
            "struct" => {
                self.bump();
                TypeSpecKind::Named(self.ident("a struct name")?.name)
            }
            "unsigned" | "signed" => self.signedness(text == "unsigned"),
            "long" => {
                self.bump();
                self.long_tail("long")
            }
            _ => {
                if let Some(kind) = builtin_type(&text) {
                    self.bump();
                    kind
                } else if self.type_names.contains(&text) {
                    self.bump();
                    TypeSpecKind::Named(text)
                } else if let Some(kind) = self.type_macros.get(&text).cloned() {
                    self.bump();
                    kind
                } else {
                    return Err(self.expected("a type"));
                }
            }
        };
        let unorm =
            unorm.filter(|_| matches!(kind, TypeSpecKind::Value(_) | TypeSpecKind::Named(_)));
        Ok(TypeSpec {
            kind,
            span: self.span_from(first.span),
            unorm,
        })
    }

    /// `unsigned`, `unsigned int`, `unsigned char4`, `signed short`, `unsigned long`.
    fn signedness(&mut self, unsigned: bool) -> TypeSpecKind {
        self.bump();
        let next = self.peek();
        let word = if next.kind == TokenKind::Ident {
            self.text_of(next).to_string()
        } else {
            String::new()
        };
        if word == "long" {
            self.bump();
            let prefix = if unsigned { "unsigned long" } else { "long" };
            return self.long_tail(prefix);
        }
        let Some(TypeSpecKind::Value(value)) = builtin_type(&word) else {
            return TypeSpecKind::Value(ValueType::scalar(if unsigned {
                ScalarKind::U32
            } else {
                ScalarKind::I32
            }));
        };
        let kind = match (value.kind, unsigned) {
            (ScalarKind::I8, true) => ScalarKind::U8,
            (ScalarKind::I16, true) => ScalarKind::U16,
            (ScalarKind::I32, true) => ScalarKind::U32,
            (k @ (ScalarKind::I8 | ScalarKind::I16 | ScalarKind::I32), false) => k,
            _ => return TypeSpecKind::Value(ValueType::scalar(ScalarKind::U32)),
        };
        self.bump();
        TypeSpecKind::Value(value.with_kind(kind))
    }

    /// After `long`: `long long`, `long int`, `long double` are all reserved spellings.
    fn long_tail(&mut self, prefix: &str) -> TypeSpecKind {
        let mut name = prefix.to_string();
        while ["long", "int", "double"].contains(&self.peek_text()) {
            name.push(' ');
            name.push_str(self.peek_text());
            self.bump();
        }
        TypeSpecKind::Reserved(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_names() {
        assert_eq!(
            builtin_type("float4"),
            Some(TypeSpecKind::Value(ValueType::vector(ScalarKind::F32, 4)))
        );
        assert_eq!(
            builtin_type("uchar"),
            Some(TypeSpecKind::Value(ValueType::scalar(ScalarKind::U8)))
        );
        assert_eq!(
            builtin_type("ulong2"),
            Some(TypeSpecKind::Reserved("ulong2".into()))
        );
        assert_eq!(builtin_type("uint8_t"), None);
        assert_eq!(builtin_type("floaty"), None);
        assert_eq!(builtin_type("internal"), None);
    }
}
