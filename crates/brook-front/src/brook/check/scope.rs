//! Lexical scopes of a kernel body: parameters, then nested blocks of locals.

use super::{Checker, ParamRole, Type};
use crate::brook::ast::Ident;
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VarKind {
    Param(ParamRole),
    Local,
    /// A local array with constant sizes.
    LocalArray,
    /// A `shared` array of a thread group.
    Shared,
}

#[derive(Clone, Debug)]
pub struct Var {
    /// For stream parameters, the element type; for arrays, `Type::Array`.
    pub ty: Type,
    pub kind: VarKind,
    pub is_const: bool,
    pub span: Span,
}

impl Checker<'_> {
    pub fn push_scope(&mut self) {
        self.scopes.push(HashMap::new());
    }

    pub fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    /// Declares a name in the innermost scope. Parameters and the outermost block of a kernel
    /// share one scope, as in C. A variable may be named like a kernel (BrookGPU and Brook+
    /// code does it): it hides the kernel in its scope, as in C.
    pub fn declare(&mut self, name: &Ident, var: Var) {
        let clash = self
            .scopes
            .last()
            .and_then(|scope| scope.get(&name.name))
            .map(|previous| previous.span);
        if let Some(previous) = clash {
            self.diags.push(
                Diagnostic::error(
                    Code::DuplicateName,
                    name.span,
                    format!("Variable name Duplicated: {}", name.name),
                )
                .with_note(Some(previous), "first declared here"),
            );
            return;
        }
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.name.clone(), var);
        }
    }

    pub fn lookup(&self, name: &str) -> Option<&Var> {
        self.scopes.iter().rev().find_map(|scope| scope.get(name))
    }
}
