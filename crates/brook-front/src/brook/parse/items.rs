//! Top-level items: kernels and reduce functions, structs, typedefs, and the host code between.

use super::{Failed, PResult, Parser};
use crate::brook::ast::{
    Attribute, Field, HostItem, Item, Kernel, KernelMarks, Param, StructDef, TypeSpec, Typedef,
};
use crate::brook::token::{Punct, TokenKind};

impl Parser<'_, '_> {
    pub(super) fn items(&mut self) -> Vec<Item> {
        let mut items = Vec::new();
        let mut host_start: Option<usize> = None;
        let mut depth = 0i32;
        let mut at_item_start = true;
        while !self.at_eof() {
            if depth == 0 && at_item_start {
                let item_start = self.pos;
                let item = self.brook_item();
                if item.is_some() || self.pos != item_start {
                    // A Brook item, or one that failed to parse and was skipped.
                    self.flush_host(&mut items, host_start.take(), item_start);
                    items.extend(item);
                    continue;
                }
            }
            let token = self.bump();
            host_start.get_or_insert(self.pos - 1);
            match token.kind {
                TokenKind::Punct(Punct::LBrace) => depth += 1,
                TokenKind::Punct(Punct::RBrace) => depth = (depth - 1).max(0),
                _ => {}
            }
            at_item_start = matches!(
                token.kind,
                TokenKind::Punct(Punct::Semi | Punct::RBrace | Punct::LBrace)
                    | TokenKind::Directive
            );
        }
        let end = self.pos;
        self.flush_host(&mut items, host_start, end);
        items
    }

    /// Adds the host tokens `start..end` as one item.
    fn flush_host(&mut self, items: &mut Vec<Item>, start: Option<usize>, end: usize) {
        let Some(start) = start else { return };
        let span = self.tokens[start].span.to(self.tokens[end - 1].span);
        items.push(Item::Host(HostItem {
            tokens: start..end,
            span,
            ..HostItem::default()
        }));
    }

    /// A kernel, struct or typedef starting here, if there is one.
    fn brook_item(&mut self) -> Option<Item> {
        if self.at_kernel_start() {
            let start = self.pos;
            return match self.kernel() {
                Ok(kernel) => Some(Item::Kernel(kernel)),
                Err(Failed) => {
                    self.skip_failed_kernel(start);
                    None
                }
            };
        }
        if self.at_ident("struct") && self.nth(2).is_punct(Punct::LBrace) {
            return self.speculate(|p| p.struct_def()).map(Item::Struct);
        }
        if self.at_ident("typedef") {
            return self.speculate(|p| p.typedef());
        }
        None
    }

    /// After a kernel that failed to parse, skips to the end of its body so that the rest of the
    /// file is still checked.
    fn skip_failed_kernel(&mut self, start: usize) {
        if self.pos == start {
            self.bump();
        }
        let mut depth = 0i32;
        while !self.at_eof() {
            match self.bump().kind {
                TokenKind::Punct(Punct::LBrace) => depth += 1,
                TokenKind::Punct(Punct::RBrace) => {
                    depth -= 1;
                    if depth <= 0 {
                        return;
                    }
                }
                TokenKind::Punct(Punct::Semi) if depth == 0 => return,
                _ => {}
            }
        }
    }

    /// `kernel`/`reduce` among the words before the function name, or an `Attribute[...]`.
    fn at_kernel_start(&self) -> bool {
        if self.at_ident("Attribute") && self.nth(1).is_punct(Punct::LBracket) {
            return true;
        }
        // `kernel` or `reduce` first, then at least a name: a kernel header, parsed (and its
        // mistakes reported) even when the `(` is missing.
        if matches!(self.text_of(self.peek()), "kernel" | "reduce")
            && self.peek().kind == TokenKind::Ident
            && self.nth(1).kind == TokenKind::Ident
        {
            return true;
        }
        let mut ahead = 0;
        let mut marked = false;
        while self.nth(ahead).kind == TokenKind::Ident {
            marked |= matches!(self.text_of(self.nth(ahead)), "kernel" | "reduce");
            ahead += 1;
        }
        marked && ahead >= 2 && self.nth(ahead).is_punct(Punct::LParen)
    }

    fn kernel(&mut self) -> PResult<Kernel> {
        let start = self.peek().span;
        let attributes = self.attributes()?;
        let mut marks = KernelMarks::default();
        let mut return_type: Option<TypeSpec> = None;
        let name = loop {
            if let Some(span) = self.eat_ident("kernel") {
                marks.kernel = Some(span);
            } else if let Some(span) = self.eat_ident("reduce") {
                marks.reduce = Some(span);
            } else if self.at_type_start() && return_type.is_none() {
                return_type = Some(self.type_spec()?);
            } else {
                break self.ident("a kernel name")?;
            }
        };
        let params = self.params()?;
        let body = if self.eat(Punct::Semi).is_some() {
            None
        } else {
            Some(self.block()?)
        };
        self.kernel_names.insert(name.name.clone());
        Ok(Kernel {
            name,
            marks,
            attributes,
            return_type,
            params,
            body,
            span: self.span_from(start),
        })
    }

    /// `Attribute[GroupSize(64, 1, 1)]`, possibly several.
    fn attributes(&mut self) -> PResult<Vec<Attribute>> {
        let mut attributes = Vec::new();
        while self.at_ident("Attribute") {
            self.bump();
            self.expect(Punct::LBracket)?;
            loop {
                let name = self.ident("an attribute name such as `GroupSize`")?;
                let args = if self.at(Punct::LParen) {
                    self.call_args()?
                } else {
                    Vec::new()
                };
                let span = self.span_from(name.span);
                attributes.push(Attribute { name, args, span });
                if self.eat(Punct::Comma).is_none() {
                    break;
                }
            }
            self.expect(Punct::RBracket)?;
        }
        Ok(attributes)
    }

    fn params(&mut self) -> PResult<Vec<Param>> {
        self.expect(Punct::LParen)?;
        if self.at_ident("void") && self.nth(1).is_punct(Punct::RParen) {
            self.bump();
        }
        self.list_until_rparen(Self::param)
    }

    fn param(&mut self) -> PResult<Param> {
        let start = self.peek().span;
        let qualifiers = self.qualifiers();
        let vout_limit = self.vout_limit.take();
        let ty = self.type_spec()?;
        let pointer = self.eat(Punct::Star).or(self.eat(Punct::Amp));
        while self.eat(Punct::Star).is_some() {}
        let name = self.ident("a parameter name")?;
        let stream_dims = self.stream_dims()?;
        let array_dims = self.array_dims()?;
        Ok(Param {
            qualifiers,
            ty,
            pointer,
            name,
            stream_dims,
            array_dims,
            vout_limit,
            span: self.span_from(start),
        })
    }

    fn struct_def(&mut self) -> PResult<StructDef> {
        let start = self.bump().span;
        let name = self.ident("a struct name")?;
        self.type_names.insert(name.name.clone());
        let fields = self.struct_body()?;
        self.expect(Punct::Semi)?;
        Ok(StructDef {
            name,
            aliases: Vec::new(),
            fields,
            span: self.span_from(start),
        })
    }

    /// `{ float4 a; float b, c[2]; }`
    fn struct_body(&mut self) -> PResult<Vec<Field>> {
        self.expect(Punct::LBrace)?;
        let mut fields = Vec::new();
        while self.eat(Punct::RBrace).is_none() {
            let ty = self.type_spec()?;
            loop {
                let name = self.ident("a field name")?;
                let array_dims = self.array_dims()?.map(|d| d.0).unwrap_or_default();
                fields.push(Field {
                    ty: ty.clone(),
                    name,
                    array_dims,
                });
                if self.eat(Punct::Comma).is_none() {
                    break;
                }
            }
            self.expect(Punct::Semi)?;
        }
        Ok(fields)
    }

    /// `typedef T name;` or `typedef struct [tag] { ... } name;`
    fn typedef(&mut self) -> PResult<Item> {
        let start = self.bump().span;
        if self.at_ident("struct") && !self.nth(2).is_punct(Punct::Semi) {
            self.bump();
            let tag = if self.peek().kind == TokenKind::Ident {
                Some(self.ident("a struct name")?)
            } else {
                None
            };
            let fields = self.struct_body()?;
            let name = self.ident("a type name")?;
            self.expect(Punct::Semi)?;
            self.type_names.insert(name.name.clone());
            let aliases = tag.into_iter().collect::<Vec<_>>();
            for alias in &aliases {
                self.type_names.insert(alias.name.clone());
            }
            return Ok(Item::Struct(StructDef {
                name,
                aliases,
                fields,
                span: self.span_from(start),
            }));
        }
        let ty = self.type_spec()?;
        let name = self.ident("a type name")?;
        self.expect(Punct::Semi)?;
        self.type_names.insert(name.name.clone());
        if let Some(unorm) = ty.unorm {
            self.unorm_typedefs.insert(name.name.clone(), unorm);
        }
        Ok(Item::Typedef(Typedef {
            name,
            ty,
            span: self.span_from(start),
        }))
    }
}
