//! The Brook+ semantic checker (seed 003, section 6, and `SEMANTICS.md`).
//!
//! It runs after parsing, in four passes over the items: struct and typedef definitions, kernel
//! signatures (each parameter gets its [`ParamRole`]), kernel bodies, then host code. It records
//! in [`ProgramInfo`] what later stages need: each kernel's signature, the type of every kernel
//! expression, and the implicit conversions that `-a` allowed.

mod attributes;
mod body;
mod call;
mod constant;
mod expr;
mod host;
mod index;
mod inlining;
mod ops;
mod scope;
mod signature;
mod types;

pub use constant::{ConstSize, Constants};
pub use expr::swizzle_indices;
pub use scope::{Var, VarKind};
pub use types::{StructId, StructInfo, Type};

use crate::brook::ast::{ExprId, Ident, Item, Program};
use crate::brook::CheckOptions;
use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::source::Span;
use std::collections::HashMap;

/// How a kernel parameter is bound (seed 003, section 4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamRole {
    /// `T a<>`: one element per invocation.
    Input,
    /// `iter T a<>`: an iterator stream.
    Iterator,
    /// `out T b<>`: one element written per invocation.
    Output,
    /// `out T b[]`: written at computed positions; the rank is the number of brackets.
    Scatter { rank: usize },
    /// `T a[]`, `T a[N][M]`: read at computed positions.
    Gather { dims: Vec<Option<u32>> },
    /// `reduce T r<>` or `reduce T r`: the reduction target.
    Reduce,
    /// `T c`: the same value for every invocation.
    Constant,
    /// `vout [N] T s<>`: 0 to `limit` values pushed per invocation (`None` until the body's
    /// push sites give it, when no `[N]` was written).
    Vout { limit: Option<u32> },
}

#[derive(Clone, Debug)]
pub struct ParamInfo {
    pub name: String,
    pub ty: Type,
    pub role: ParamRole,
    /// Dimensions written between `< >` (empty for `<>`), for stream parameters.
    pub stream_rank: usize,
    /// `fixed`/`shortfixed` elements: stored unsigned normalized, computed as `ty`'s floats.
    pub unorm: Option<crate::brook::ast::Unorm>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelKind {
    /// Maps over its output domain (or scatters).
    Map,
    /// Has a `reduce` parameter.
    Reduce,
}

#[derive(Clone, Debug)]
pub struct KernelInfo {
    pub name: String,
    pub kind: KernelKind,
    pub params: Vec<ParamInfo>,
    pub return_type: Type,
    /// `Attribute[GroupSize(x, y, z)]`, when given.
    pub group_size: Option<[u32; 3]>,
    /// Where the definition (or the prototype, if there is no definition) is.
    pub span: Span,
    pub name_span: Span,
    pub defined: bool,
}

impl KernelInfo {
    pub fn has_scatter(&self) -> bool {
        self.params
            .iter()
            .any(|p| matches!(p.role, ParamRole::Scatter { .. }))
    }
}

/// Everything the checker learned about a program.
#[derive(Debug, Default)]
pub struct ProgramInfo {
    pub structs: Vec<StructInfo>,
    pub kernels: Vec<KernelInfo>,
    /// The type of each kernel expression, indexed by `ExprId` (`None` for host expressions).
    pub expr_types: Vec<Option<Type>>,
    /// Implicit conversions allowed by `-a`: the expression is converted to the type.
    pub conversions: Vec<(ExprId, Type)>,
    /// The `?:` expressions whose vector condition selects per component (BrookGPU's Cg
    /// form, `-g` only); elsewhere a vector condition's x component decides (`-a`).
    pub component_selects: std::collections::HashSet<ExprId>,
    /// Struct names, their aliases and typedef names, with the types they stand for.
    pub type_names: HashMap<String, Type>,
    /// The file's object-like macros, for array sizes and other integer constants, and the
    /// expressions their names stand for in kernel code.
    pub constants: Constants,
}

impl ProgramInfo {
    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.name == name)
    }

    pub fn expr_type(&self, id: ExprId) -> Option<&Type> {
        self.expr_types.get(id.0 as usize).and_then(Option::as_ref)
    }
}

/// Checks a parsed program, reporting to `diags`.
pub fn check(program: &Program, options: &CheckOptions, diags: &mut Diagnostics) -> ProgramInfo {
    let mut checker = Checker {
        options: options.clone(),
        diags,
        info: ProgramInfo {
            expr_types: vec![None; program.expr_count as usize],
            constants: Constants::new(program),
            ..ProgramInfo::default()
        },
        type_names: HashMap::new(),
        kernel_index: HashMap::new(),
        host_functions: program
            .host_functions
            .iter()
            .map(|f| (f.name.clone(), f.span))
            .collect(),
        scopes: Vec::new(),
        current: None,
        indexed_params: Default::default(),
        subkernel_calls: Vec::new(),
    };
    checker.type_definitions(program);
    checker.signatures(program);
    checker.bodies(program);
    let calls = std::mem::take(&mut checker.subkernel_calls);
    checker.inlined_sizes(&calls);
    checker.host_code(program);
    checker.info.type_names = checker.type_names;
    checker.info
}

/// State while checking one kernel body.
/// How the checker reports an implicit conversion it performs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConversionReporting {
    /// BrookGPU: Cg/C conversions, no message.
    Silent,
    /// Brook+ strong type checking: the mismatch as a level-1 warning (Brook+ 1.4 brcc's
    /// `semanticsForIntRealOps` did the same), the note about `-a` once per file.
    StrongTyping,
    /// `-a`: the conversion-rule warnings of seed 003 6.3.3, by level.
    Rules,
}

pub(crate) struct CurrentKernel {
    pub index: usize,
    pub loop_depth: u32,
    pub shared_arrays: u32,
    /// Each `push` in the body: the vout parameter's index, and whether a loop encloses it.
    pub pushes: Vec<(usize, bool)>,
}

pub(crate) struct Checker<'d> {
    pub options: CheckOptions,
    pub diags: &'d mut Diagnostics,
    pub info: ProgramInfo,
    /// Structs (by name and alias) and typedefs.
    pub type_names: HashMap<String, Type>,
    pub kernel_index: HashMap<String, usize>,
    pub host_functions: HashMap<String, Span>,
    pub scopes: Vec<HashMap<String, Var>>,
    pub current: Option<CurrentKernel>,
    /// (kernel, parameter) pairs whose stream position a body needs: `indexof` is applied to
    /// the parameter, there or in a subkernel it is passed to. Such a parameter must be given
    /// a stream, never a local.
    pub indexed_params: std::collections::HashSet<(usize, usize)>,
    /// Every subkernel call of a kernel body to a kernel defined before it.
    pub subkernel_calls: inlining::CallSites,
}

impl Checker<'_> {
    pub fn strong(&self) -> bool {
        self.options.strong_types
    }

    /// How an implicit conversion is reported under the file's dialect and flags.
    pub fn conversion_reporting(&self) -> ConversionReporting {
        if self.options.dialect == super::Dialect::BrookGpu {
            ConversionReporting::Silent
        } else if self.strong() {
            ConversionReporting::StrongTyping
        } else {
            ConversionReporting::Rules
        }
    }

    fn type_definitions(&mut self, program: &Program) {
        for item in &program.items {
            match item {
                Item::Struct(def) => self.struct_def(def),
                Item::Typedef(def) => {
                    let ty = self.resolve_type(&def.ty);
                    self.define_type_name(&def.name, ty);
                }
                _ => {}
            }
        }
    }

    fn struct_def(&mut self, def: &crate::brook::ast::StructDef) {
        let id = StructId(self.info.structs.len() as u32);
        let mut fields: Vec<(String, Type)> = Vec::new();
        for field in &def.fields {
            let ty = self.resolve_type(&field.ty);
            if fields.iter().any(|(name, _)| *name == field.name.name) {
                self.diags.error(
                    Code::DuplicateName,
                    field.name.span,
                    format!("Variable name Duplicated: field `{}`", field.name.name),
                );
            }
            if let Some(unorm) = field.ty.unorm {
                let name = unorm.name();
                self.diags.push(
                    Diagnostic::error(
                        Code::StreamElementType,
                        field.ty.span,
                        format!("`{name}` storage is not supported in a struct (field `{}`): only input and output streams and gather arrays store {name} values", field.name.name),
                    )
                    .with_help("declare the field `float`, or keep the fixed values in a stream of their own"),
                );
            }
            if ty == Type::Void {
                self.diags.push(
                    Diagnostic::error(
                        Code::StreamElementType,
                        field.name.span,
                        format!("Stream element type not supported: field `{}` must be a scalar, vector or struct", field.name.name),
                    ),
                );
            }
            // An array member is fine for host code; such a struct is not a stream element
            // (reported where it is used as one).
            let ty = if field.array_dims.is_empty() {
                ty
            } else {
                let dims = field
                    .array_dims
                    .iter()
                    .map(|d| match d {
                        Some(e) => self.array_size(e, "Member"),
                        None => {
                            self.diags.error(
                                Code::ArraySize,
                                field.name.span,
                                "Member Array size must be non-zero positive int value",
                            );
                            None
                        }
                    })
                    .collect();
                Type::Array {
                    elem: Box::new(ty),
                    dims,
                }
            };
            fields.push((field.name.name.clone(), ty));
        }
        self.info.structs.push(StructInfo {
            name: def.name.name.clone(),
            fields,
        });
        self.define_type_name(&def.name, Type::Struct(id));
        for alias in &def.aliases {
            self.define_type_name(alias, Type::Struct(id));
        }
    }

    fn define_type_name(&mut self, name: &Ident, ty: Type) {
        // `typedef struct Pixel {...} Pixel;` names one type twice, as C allows.
        if let Some(previous) = self.type_names.insert(name.name.clone(), ty.clone()) {
            if previous == ty {
                return;
            }
            self.diags.error(
                Code::DuplicateName,
                name.span,
                format!(
                    "Variable name Duplicated: type `{}` is defined twice",
                    name.name
                ),
            );
        }
    }

    pub fn record_type(&mut self, id: ExprId, ty: &Type) {
        if let Some(slot) = self.info.expr_types.get_mut(id.0 as usize) {
            *slot = Some(ty.clone());
        }
    }

    pub fn current_kernel(&self) -> Option<&KernelInfo> {
        self.current.as_ref().map(|c| &self.info.kernels[c.index])
    }
}
