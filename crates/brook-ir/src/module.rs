//! The IR module: struct declarations and kernels, with their parameters and locals.
//!
//! A [`Module`] is what a frontend produces from one source file. Each [`Kernel`] owns its
//! expressions and locals in arenas and a structured [`Block`] of statements. Subkernels are
//! inlined by the frontend, so a kernel never calls another kernel.
//!
//! # When expressions are evaluated
//! Expressions are pure: none has a side effect, and none can trap (integer division by zero
//! gives 0, gathers clamp, local-array indices clamp). An expression is evaluated when the
//! statement that uses it runs, and [`crate::ExprKind::Load`] reads the place's value at that
//! moment. Several uses of one handle inside one statement see the same value. So a backend may
//! evaluate an expression tree lazily, eagerly or more than once: the result is the same.
//!
//! # Locals
//! Locals are zero-initialised on entry (every component 0, every field 0) on every backend, so a
//! local read before it is written has a defined value. Shared locals (`shared` arrays of a thread
//! group) are zero-initialised once per group.

use crate::arena::{Arena, SourceSpan};
use crate::expr::Expr;
use crate::source::SourceFile;
use crate::stmt::Block;
use crate::types::ValueType;
use std::fmt;
use std::sync::Arc;

/// The index of a struct in [`Module::structs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct StructId(pub u32);

/// The index of a parameter in [`Kernel::params`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ParamId(pub u32);

/// The type of an IR value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Type {
    /// A scalar or short vector.
    Value(ValueType),
    /// A struct, laid out as C would.
    Struct(StructId),
    /// A fixed-size array (`float a[4][2]` is an array of 4 arrays of 2).
    Array { elem: Box<Type>, len: u32 },
}

impl Type {
    pub fn value(&self) -> Option<ValueType> {
        match self {
            Type::Value(v) => Some(*v),
            _ => None,
        }
    }

    pub fn is_bool_scalar(&self) -> bool {
        *self == Type::Value(ValueType::scalar(crate::ScalarKind::Bool))
    }
}

/// Size and alignment in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Layout {
    pub size: u32,
    pub align: u32,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StructDecl {
    pub name: String,
    pub fields: Vec<FieldDecl>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FieldDecl {
    pub name: String,
    pub ty: Type,
}

/// How a kernel parameter is bound at launch (seed 003, section 4).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ParamRole {
    /// `T a<>`: the element for the current position, after implicit resize.
    Input,
    /// `iter T a<>`: an iterator stream, computed from its range.
    Iterator,
    /// `out T b<>`: the element at the current position, written in place.
    Output,
    /// `T c`: the same value everywhere.
    Constant,
    /// `T a[]`, `T a[N][M]`: random-access reads; `None` dimensions are unspecified.
    Gather { dims: Vec<Option<u32>> },
    /// `out T b[]`: writes at computed positions; the rank is the number of brackets.
    Scatter { rank: u8 },
    /// `reduce T r`: the accumulator of a reduction.
    Reduce,
}

impl ParamRole {
    pub fn name(&self) -> &'static str {
        match self {
            ParamRole::Input => "in",
            ParamRole::Iterator => "iter",
            ParamRole::Output => "out",
            ParamRole::Constant => "const",
            ParamRole::Gather { .. } => "gather",
            ParamRole::Scatter { .. } => "scatter",
            ParamRole::Reduce => "reduce",
        }
    }

    /// Whether the kernel writes through this parameter.
    pub fn is_written(&self) -> bool {
        matches!(
            self,
            ParamRole::Output | ParamRole::Scatter { .. } | ParamRole::Reduce
        )
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Param {
    pub name: String,
    /// The element type for streams and arrays; the value type for constants.
    pub ty: Type,
    pub role: ParamRole,
    pub span: SourceSpan,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Local {
    pub name: String,
    pub ty: Type,
    /// A `shared` array, one per thread group.
    pub shared: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum KernelKind {
    /// Runs once per element of the output domain (or of the scatter domain).
    Map,
    /// Combines input elements into its `reduce` parameter (`r` earlier, input later).
    Reduce,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Kernel {
    pub name: String,
    pub kind: KernelKind,
    pub params: Vec<Param>,
    /// `Attribute[GroupSize(x, y, z)]`: the kernel runs in thread groups of this size.
    pub group_size: Option<[u32; 3]>,
    /// Variable outputs (`vout [N] T s<>`), lowered to output slots and counts
    /// ([`crate::vout`]); empty for most kernels.
    pub vouts: Vec<crate::vout::Vout>,
    pub locals: Arena<Local>,
    pub exprs: Arena<Expr>,
    pub body: Block,
    pub span: SourceSpan,
}

impl Kernel {
    pub fn param(&self, id: ParamId) -> Option<&Param> {
        self.params.get(id.0 as usize)
    }

    /// Whether expression `h` is computed from literals alone (no parameter, place, stream
    /// element or position): the same value in every instance, known when the code is
    /// written.
    pub fn from_literals(&self, h: crate::Handle<crate::Expr>) -> bool {
        use crate::ExprKind;
        match &self.exprs[h].kind {
            ExprKind::Literal(_) => true,
            ExprKind::Load(_)
            | ExprKind::Input(_)
            | ExprKind::Constant(_)
            | ExprKind::Gather { .. }
            | ExprKind::IndexOf(_)
            | ExprKind::Instance
            | ExprKind::InstanceInGroup => false,
            kind => kind.operands().into_iter().all(|o| self.from_literals(o)),
        }
    }

    /// The local of each load of a local among the expressions rooted at `roots` and those
    /// they are computed from (each expression once; a local loaded by two expressions is
    /// there twice).
    pub fn local_loads(&self, roots: &[crate::Handle<crate::Expr>]) -> Vec<crate::Handle<Local>> {
        let mut seen = std::collections::HashSet::new();
        let mut stack = roots.to_vec();
        let mut loads = Vec::new();
        while let Some(h) = stack.pop() {
            if !seen.insert(h) {
                continue;
            }
            let kind = &self.exprs[h].kind;
            if let crate::ExprKind::Load(place) = kind {
                if let crate::PlaceRoot::Local(l) = place.root {
                    loads.push(l);
                }
            }
            stack.extend(kind.operands());
        }
        loads
    }

    /// Whether the kernel reads an element of a scatter array: an instance then sees what
    /// earlier instances wrote there (in domain order on the interpreter), so its results
    /// depend on the order instances run in.
    /// Only expressions the body evaluates count (the frontend leaves unused ones in the
    /// arena, such as a store's target read as a value); where a collective hides what it
    /// evaluates, every expression of the arena does.
    pub fn reads_scatter_array(&self) -> bool {
        let is_scatter_load = |e: &crate::Expr| {
            matches!(&e.kind, crate::ExprKind::Load(place)
                if matches!(place.root, crate::PlaceRoot::Scatter { .. }))
        };
        let mut stack = Vec::new();
        if !self.body.expr_roots(&mut stack) {
            return self.exprs.iter().any(|(_, e)| is_scatter_load(e));
        }
        let mut seen = std::collections::HashSet::new();
        while let Some(h) = stack.pop() {
            if !seen.insert(h) {
                continue;
            }
            let e = &self.exprs[h];
            if is_scatter_load(e) {
                return true;
            }
            stack.extend(e.kind.operands());
        }
        false
    }

    /// The parameters with their ids.
    pub fn params_with_ids(&self) -> impl Iterator<Item = (ParamId, &Param)> {
        self.params
            .iter()
            .enumerate()
            .map(|(i, p)| (ParamId(i as u32), p))
    }
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Module {
    pub structs: Vec<StructDecl>,
    pub kernels: Vec<Kernel>,
    /// The source the module was compiled from, where the frontend keeps it: the spans of
    /// errors found later (a backend's) are shown as file, line and column with the line.
    pub source: Option<Arc<SourceFile>>,
}

impl Module {
    /// Where a span is in the source, with the line shown ([`SourceFile::excerpt`]); `None`
    /// when the module kept no source.
    pub fn excerpt(&self, span: SourceSpan) -> Option<String> {
        self.source.as_ref().map(|file| file.excerpt(span))
    }

    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    pub fn struct_decl(&self, id: StructId) -> Option<&StructDecl> {
        self.structs.get(id.0 as usize)
    }

    /// The C layout of a type. Struct ids must be valid (the validator checks them first).
    pub fn layout(&self, ty: &Type) -> Layout {
        match ty {
            Type::Value(v) => Layout {
                size: v.size(),
                align: v.align(),
            },
            Type::Struct(id) => self.struct_layout(*id).0,
            Type::Array { elem, len } => {
                let e = self.layout(elem);
                Layout {
                    size: e.size * len,
                    align: e.align,
                }
            }
        }
    }

    /// A struct's layout and the byte offset of each field, as a C compiler lays it out.
    pub fn struct_layout(&self, id: StructId) -> (Layout, Vec<u32>) {
        let Some(decl) = self.struct_decl(id) else {
            return (Layout { size: 0, align: 1 }, Vec::new());
        };
        let mut offset = 0u32;
        let mut align = 1u32;
        let mut offsets = Vec::with_capacity(decl.fields.len());
        for field in &decl.fields {
            let l = self.layout(&field.ty);
            offset = offset.next_multiple_of(l.align);
            offsets.push(offset);
            offset += l.size;
            align = align.max(l.align);
        }
        let size = offset.next_multiple_of(align);
        (Layout { size, align }, offsets)
    }

    /// The type as Brook writes it (`float4`, `struct pair`, `float[4]`).
    pub fn type_name(&self, ty: &Type) -> String {
        match ty {
            Type::Value(v) => v.to_string(),
            Type::Struct(id) => match self.struct_decl(*id) {
                Some(decl) => format!("struct {}", decl.name),
                None => format!("struct #{}", id.0),
            },
            Type::Array { elem, len } => format!("{}[{len}]", self.type_name(elem)),
        }
    }
}

impl fmt::Display for ParamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "param{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ScalarKind;

    #[test]
    fn struct_layout_matches_c() {
        let module = Module {
            source: None,
            structs: vec![StructDecl {
                name: "s".into(),
                fields: vec![
                    FieldDecl {
                        name: "c".into(),
                        ty: Type::Value(ValueType::scalar(ScalarKind::I8)),
                    },
                    FieldDecl {
                        name: "d".into(),
                        ty: Type::Value(ValueType::scalar(ScalarKind::F64)),
                    },
                    FieldDecl {
                        name: "f".into(),
                        ty: Type::Value(ValueType::vector(ScalarKind::F32, 3)),
                    },
                ],
            }],
            kernels: Vec::new(),
        };
        let (layout, offsets) = module.struct_layout(StructId(0));
        assert_eq!(offsets, vec![0, 8, 16]);
        assert_eq!(layout, Layout { size: 32, align: 8 });
    }
}
