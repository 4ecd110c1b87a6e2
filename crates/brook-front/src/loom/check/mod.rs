//! The LOOM checker: names, types and the program-wide rules of seed 004 on a parsed
//! [`Program`], with every problem reported at once.
//!
//! What it checks: exactly one kernel (`LM0403`); names declared before use in block scope
//! (`LM0301`; functions and types may be used anywhere in the file); types of operators,
//! assignments, initializers, arguments and returns (`LM0302`); declarations by memory space
//! (`LM0308`) and array sizes (`LM0306`); function arity (`LM0401`); no recursion
//! (`LM0402`); a kernel with a `return` and device functions that return a value on every
//! path (`LM0404`, `LM0405`); parallel operators whose function matches the array's
//! elements (`LM0406`) and whose array spans the grid or a block (`LM0407`). The result,
//! [`Info`], is the types and bindings that lowering needs.

mod builtins;
mod by_reference;
mod constant;
mod expr;
mod program;
mod scope;
mod stmt;
pub mod ty;

pub use builtins::Builtin;
pub use constant::ConstValue;
pub use ty::{Dim, Size, Spread, Ty};

use super::ast::{ExprId, FuncKind, Program, Space};
use crate::diagnostic::Diagnostics;
use crate::source::Span;
use std::collections::HashMap;

/// What the checker learned about a program.
#[derive(Clone, Debug, Default)]
pub struct Info {
    /// The type of every expression, by [`ExprId`].
    pub types: Vec<Ty>,
    /// The variable each name expression reads.
    pub names: HashMap<ExprId, VarId>,
    /// The function each call and parallel operator calls.
    pub callees: HashMap<ExprId, Callee>,
    /// The variable each declaration and typed `for` declares, and the variable an untyped
    /// `for` counts with, by the span of the name there.
    pub declared: HashMap<(u32, u32), VarId>,
    pub vars: Vec<Var>,
    /// The return type of each device function, by item index.
    pub returns: HashMap<usize, Ty>,
    /// The item index of the kernel (when there is exactly one).
    pub kernel: Option<usize>,
}

/// Identifies a variable in [`Info::vars`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VarId(pub u32);

#[derive(Clone, Debug)]
pub struct Var {
    pub name: String,
    pub ty: Ty,
    pub space: Space,
    pub kind: VarKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum VarKind {
    /// Parameter `index` of the function at item `func`.
    Param {
        func: usize,
        index: usize,
    },
    Local,
    /// A `const`, with its value.
    Const(ConstValue),
    /// A loop variable declared by `for i: T`.
    Loop,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Callee {
    /// The device function at this item index.
    Func(usize),
    Builtin(Builtin),
}

/// Checks a parsed program; `end` is the span of the end of the text (for a missing
/// kernel). `parsed_whole` says that no text was skipped by an earlier error: only then are
/// missing things (a kernel, a `return`) reported, which skipped text may hold.
pub fn check(
    program: &Program,
    end: Span,
    parsed_whole: bool,
    diagnostics: &mut Diagnostics,
) -> Info {
    let mut checker = Checker::new(program, diagnostics);
    checker.report_missing = parsed_whole;
    checker.check_program(end);
    checker.info
}

/// A function's parameter and return types.
#[derive(Clone, Debug)]
struct Signature {
    kind: FuncKind,
    params: Vec<Ty>,
    ret: Option<Ty>,
}

/// The function being checked.
struct FuncContext {
    item: usize,
    kind: FuncKind,
    ret: Option<Ty>,
    saw_return: bool,
}

struct Checker<'p, 'd> {
    program: &'p Program,
    diagnostics: &'d mut Diagnostics,
    info: Info,
    /// Item indices of functions and named types by name.
    funcs: HashMap<String, usize>,
    type_items: HashMap<String, usize>,
    /// Resolved named types (`None` while being resolved: a cycle).
    named: HashMap<String, Option<Ty>>,
    signatures: HashMap<usize, Signature>,
    scopes: Vec<HashMap<String, VarId>>,
    func: Option<FuncContext>,
    loops: usize,
    /// Calls between device functions: (caller item, callee item, where).
    calls: Vec<(usize, usize, Span)>,
    /// Whether to report what is missing (see [`check`]).
    report_missing: bool,
    /// The variables assignments write (the root of each target).
    written_roots: Vec<VarId>,
    /// Calls with array arguments.
    array_calls: Vec<by_reference::ArrayCall>,
}
