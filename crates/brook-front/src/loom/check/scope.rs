//! Block scope (section 3.5.2): a variable is visible from its declaration to the end of
//! its block; an inner block may declare a name again (shadowing), one block may not.

use super::ty::Ty;
use super::{Checker, Var, VarId, VarKind};
use crate::diagnostic::{Code, Diagnostic};
use crate::loom::ast::{Ident, Space};

impl Checker<'_, '_> {
    pub(super) fn push_scope(&mut self) {
        self.scopes.push(Default::default());
    }

    pub(super) fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    /// Declares a variable in the innermost scope; a second declaration there is an error
    /// (and the first stays).
    pub(super) fn declare(&mut self, name: &Ident, ty: Ty, space: Space, kind: VarKind) -> VarId {
        let id = VarId(self.info.vars.len() as u32);
        self.info.vars.push(Var {
            name: name.name.clone(),
            ty,
            space,
            kind,
            span: name.span,
        });
        self.info
            .declared
            .insert((name.span.start, name.span.end), id);
        let Some(scope) = self.scopes.last_mut() else {
            return id;
        };
        if let Some(&first) = scope.get(&name.name) {
            let first_span = self.info.vars[first.0 as usize].span;
            self.diagnostics.push(
                Diagnostic::error(
                    Code::LoomDuplicate,
                    name.span,
                    format!("`{}` is already declared in this block", name.name),
                )
                .with_note(Some(first_span), "declared here"),
            );
            return id;
        }
        scope.insert(name.name.clone(), id);
        id
    }

    pub(super) fn lookup(&self, name: &str) -> Option<VarId> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    pub(super) fn var(&self, id: VarId) -> &Var {
        &self.info.vars[id.0 as usize]
    }

    /// A visible variable close to `name` (a typo's likely meaning).
    pub(super) fn similar_variable(&self, name: &str) -> Option<String> {
        closest(
            name,
            self.scopes
                .iter()
                .flat_map(|s| s.keys().map(String::as_str)),
        )
    }

    /// A function (device or predefined) close to `name`.
    pub(super) fn similar_function(&self, name: &str) -> Option<String> {
        let predefined = super::builtins::Builtin::names();
        let device = self.funcs.keys().map(String::as_str);
        closest(name, device.chain(predefined.map(|n: &'static str| n)))
    }
}

/// The candidate closest to `name` (ties: the first in name order): within one edit for
/// names of up to 3 characters, two for longer ones.
fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    let limit = if name.chars().count() <= 3 { 1 } else { 2 };
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let distance = edit_distance(name, candidate);
        if distance <= limit
            && distance < name.chars().count()
            && best.is_none_or(|(d, c)| (distance, candidate) < (d, c))
        {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c.to_string())
}

/// Levenshtein distance (for suggestions; names are short).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}
