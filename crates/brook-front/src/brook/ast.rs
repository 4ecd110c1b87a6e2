//! The syntax tree of a `.br` file.
//!
//! A file is a sequence of items: kernels (fully parsed), struct and typedef definitions, and host
//! code. Host code is kept as token ranges (it is C or C++ that brcc passes through), with the
//! Brook constructs found in it parsed: stream declarations, kernel calls and stream operators.
//! Every node carries a [`Span`]; every expression has an [`ExprId`] that the checker's side
//! tables are indexed by.

use crate::source::Span;
use brook_ir::ValueType;
use std::collections::{HashMap, HashSet};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, Default)]
pub struct Program {
    pub items: Vec<Item>,
    /// How many expressions the parser created: every `ExprId` is below this.
    pub expr_count: u32,
    /// Functions defined in host code (`int main(...) { ... }`): kernels may not call them.
    pub host_functions: Vec<Ident>,
    /// Object-like macros of `#define` lines left in the text (without `-pp`): name and body,
    /// in file order. Array sizes may name them (`float a[N]`), as brcc evaluated them.
    pub object_macros: Vec<(String, String)>,
    /// Each identifier that names such a macro whose body is an expression, with that body
    /// parsed: kernel code where no variable of the name is in scope uses the body, so
    /// `#define SCALE 0.5f` works in kernels without `-pp` (as the C++ compiler would read it).
    pub macro_expansions: HashMap<ExprId, Expr>,
    /// The macros defined more than once with different bodies: kernel code does not read them.
    pub ambiguous_macros: HashSet<String>,
    /// Every word of host code outside kernel-call arguments, and of directives: a kernel
    /// argument naming none of them is declared nowhere. `None` when a header of the user's
    /// own is included (it may declare anything).
    pub host_words: Option<HashSet<String>>,
    /// Host code's uses of BrookGPU features only its graphics backends had (`write_query`,
    /// `write_mask`): the name and where.
    pub graphics_only: Vec<(String, Span)>,
}

#[derive(Clone, Debug)]
pub enum Item {
    Kernel(Kernel),
    Struct(StructDef),
    Typedef(Typedef),
    Host(HostItem),
}

/// A type as written.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeSpec {
    pub kind: TypeSpecKind,
    pub span: Span,
    /// BrookGPU's `fixed` or `shortfixed` types (`kind` is the `float` type they compute as):
    /// stored unsigned normalized.
    pub unorm: Option<Unorm>,
}

/// BrookGPU's unsigned normalized storage (`SEMANTICS.md`, "Dialects"): a component is one
/// `unsigned char` (`fixed`) or `unsigned short` (`shortfixed`) holding `value * max`; kernels
/// compute with the `float` `stored / max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unorm {
    Fixed,
    ShortFixed,
}

impl Unorm {
    /// The type word (`fixed`, `shortfixed`).
    pub fn name(self) -> &'static str {
        match self {
            Unorm::Fixed => "fixed",
            Unorm::ShortFixed => "shortfixed",
        }
    }

    /// The storage's scalar kind.
    pub fn storage(self) -> brook_ir::ScalarKind {
        match self {
            Unorm::Fixed => brook_ir::ScalarKind::U8,
            Unorm::ShortFixed => brook_ir::ScalarKind::U16,
        }
    }

    /// The stored value of 1.0.
    pub fn max(self) -> f32 {
        match self {
            Unorm::Fixed => 255.0,
            Unorm::ShortFixed => 65535.0,
        }
    }

    /// What a store adds before truncating (BrookGPU's host constructors: `fixed` truncates,
    /// `shortfixed` rounds).
    pub fn rounding(self) -> f32 {
        match self {
            Unorm::Fixed => 0.0,
            Unorm::ShortFixed => 0.5,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeSpecKind {
    Void,
    /// A built-in scalar or vector type (`float`, `unsigned int4`). The width is as written and
    /// may be out of range (`double4`, `float7`): the checker reports that.
    Value(ValueType),
    /// A reserved type that Brook+ does not support (`long`, `ulong2`, `long long`).
    Reserved(String),
    /// A struct or typedef name (`struct pair`, `pair`).
    Named(String),
}

/// `Attribute[GroupSize(64, 1, 1)]` before a kernel.
#[derive(Clone, Debug)]
pub struct Attribute {
    pub name: Ident,
    pub args: Vec<Expr>,
    pub span: Span,
}

/// How a function was marked: `kernel`, `reduce`, both, or neither (a plain function that a
/// kernel may not call).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct KernelMarks {
    pub kernel: Option<Span>,
    pub reduce: Option<Span>,
}

#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: Ident,
    pub marks: KernelMarks,
    pub attributes: Vec<Attribute>,
    /// `None` when no return type was written.
    pub return_type: Option<TypeSpec>,
    pub params: Vec<Param>,
    /// `None` for a prototype (`kernel void f(float a<>);`).
    pub body: Option<Block>,
    pub span: Span,
}

/// Qualifiers and storage classes written before a declaration or parameter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Qualifiers {
    pub out: Option<Span>,
    pub reduce: Option<Span>,
    pub iter: Option<Span>,
    pub vout: Option<Span>,
    pub const_: Option<Span>,
    pub shared: Option<Span>,
    pub volatile: Option<Span>,
    pub restrict: Option<Span>,
    pub static_: Option<Span>,
    pub extern_: Option<Span>,
    pub auto: Option<Span>,
    pub register: Option<Span>,
}

/// `[N][M]` or `[][]` dimensions; `None` for an empty pair of brackets.
pub type ArrayDims = Vec<Option<Expr>>;

#[derive(Clone, Debug)]
pub struct Param {
    pub qualifiers: Qualifiers,
    pub ty: TypeSpec,
    /// A `*` was written (pointers are not allowed in kernels).
    pub pointer: Option<Span>,
    pub name: Ident,
    /// `<>` or `<,100>`: a stream parameter, with its dimensions as written.
    pub stream_dims: Option<(ArrayDims, Span)>,
    /// `[]`, `[][]`, `[N][M]`: a gather or scatter array.
    pub array_dims: Option<(ArrayDims, Span)>,
    /// `[N]` of `vout [N] T s<>`: the most values one instance pushes.
    pub vout_limit: Option<(ArrayDims, Span)>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct StructDef {
    pub name: Ident,
    /// Other names of the same struct: the tag of `typedef struct tag { ... } name;`.
    pub aliases: Vec<Ident>,
    pub fields: Vec<Field>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Field {
    pub ty: TypeSpec,
    pub name: Ident,
    pub array_dims: ArrayDims,
}

/// `typedef T name;` or `typedef struct { ... } name;` (the struct then has the typedef's name).
#[derive(Clone, Debug)]
pub struct Typedef {
    pub name: Ident,
    pub ty: TypeSpec,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    Decl(Decl),
    Expr(Expr),
    Block(Block),
    If {
        cond: Expr,
        then: Box<Stmt>,
        otherwise: Option<Box<Stmt>>,
    },
    While {
        cond: Expr,
        body: Box<Stmt>,
    },
    DoWhile {
        body: Box<Stmt>,
        cond: Expr,
    },
    For {
        init: Option<Box<Stmt>>,
        cond: Option<Expr>,
        step: Option<Expr>,
        body: Box<Stmt>,
    },
    Break,
    Continue,
    Return(Option<Expr>),
    Empty,
    /// `switch`, `goto`, labels and `case`: parsed to be reported, not run.
    Unsupported(UnsupportedStmt),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnsupportedStmt {
    Switch,
    Goto,
    Label,
}

#[derive(Clone, Debug)]
pub struct Decl {
    pub qualifiers: Qualifiers,
    pub ty: TypeSpec,
    pub declarators: Vec<Declarator>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Declarator {
    pub name: Ident,
    pub pointer: Option<Span>,
    pub array_dims: Option<(ArrayDims, Span)>,
    pub stream_dims: Option<(ArrayDims, Span)>,
    pub init: Option<Init>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum Init {
    Expr(Expr),
    /// `{ a, b, c }`
    List(Vec<Init>, Span),
}

impl Init {
    pub fn span(&self) -> Span {
        match self {
            Init::Expr(e) => e.span,
            Init::List(_, span) => *span,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub u32);

#[derive(Clone, Debug)]
pub struct Expr {
    pub id: ExprId,
    pub kind: ExprKind,
    pub span: Span,
}

impl Expr {
    /// `a[i][j]` as its root (`a`) and its indices, outermost first (`[i, j]`).
    pub fn index_chain(&self) -> (&Expr, Vec<&Expr>) {
        let mut indices = Vec::new();
        let mut root = self;
        while let ExprKind::Index(base, index) = &root.kind {
            indices.push(index.as_ref());
            root = base;
        }
        indices.reverse();
        (root, indices)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Plus,
    Not,
    BitNot,
    PreInc,
    PreDec,
    PostInc,
    PostDec,
    /// `&x`: reported, never supported in kernels.
    AddrOf,
    /// `*p`: reported, never supported in kernels.
    Deref,
}

/// The binary operators of C, shared with the IR.
pub use brook_ir::BinaryOp;

#[derive(Clone, Debug)]
pub enum ExprKind {
    Ident(String),
    /// An integer literal; `unsigned` from a `u` suffix, `long` from an `l` suffix.
    IntLit {
        value: u64,
        unsigned: bool,
        long: bool,
    },
    /// A floating literal; `single` from an `f` suffix.
    FloatLit {
        value: f64,
        single: bool,
    },
    BoolLit(bool),
    CharLit(i64),
    StrLit,
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `a = b` (op `None`) or `a op= b`.
    Assign(Option<BinaryOp>, Box<Expr>, Box<Expr>),
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    Comma(Box<Expr>, Box<Expr>),
    Cast(TypeSpec, Box<Expr>),
    /// `float4(a, b, c, d)`, also `float(x)`.
    Construct(TypeSpec, Vec<Expr>),
    Call(Box<Expr>, Vec<Expr>),
    Index(Box<Expr>, Box<Expr>),
    Member(Box<Expr>, Ident),
    /// `p->field`: reported, pointers are not supported in kernels.
    Arrow(Box<Expr>, Ident),
    Sizeof,
    /// A malformed literal, already reported by the lexer: typed as an error, never reported again.
    Error,
}

impl Expr {
    /// Moves the expression and everything in it to `span` (a macro's body to where the macro
    /// was used, so that its diagnostics point at the use, as with `-pp`).
    pub fn place_at(&mut self, span: Span) {
        self.span = span;
        match &mut self.kind {
            ExprKind::Unary(_, a) => a.place_at(span),
            ExprKind::Binary(_, a, b) | ExprKind::Assign(_, a, b) | ExprKind::Comma(a, b) => {
                a.place_at(span);
                b.place_at(span);
            }
            ExprKind::Index(a, b) => {
                a.place_at(span);
                b.place_at(span);
            }
            ExprKind::Ternary(a, b, c) => {
                a.place_at(span);
                b.place_at(span);
                c.place_at(span);
            }
            ExprKind::Cast(ty, a) => {
                ty.span = span;
                a.place_at(span);
            }
            ExprKind::Construct(ty, args) => {
                ty.span = span;
                args.iter_mut().for_each(|a| a.place_at(span));
            }
            ExprKind::Call(callee, args) => {
                callee.place_at(span);
                args.iter_mut().for_each(|a| a.place_at(span));
            }
            ExprKind::Member(a, field) | ExprKind::Arrow(a, field) => {
                a.place_at(span);
                field.span = span;
            }
            ExprKind::Ident(_)
            | ExprKind::IntLit { .. }
            | ExprKind::FloatLit { .. }
            | ExprKind::BoolLit(_)
            | ExprKind::CharLit(_)
            | ExprKind::StrLit
            | ExprKind::Sizeof
            | ExprKind::Error => {}
        }
    }
}

/// A piece of host code: its tokens (indices into the token list) and the Brook constructs in it.
#[derive(Clone, Debug, Default)]
pub struct HostItem {
    pub tokens: std::ops::Range<usize>,
    pub span: Span,
    pub streams: Vec<StreamDecl>,
    pub calls: Vec<HostCall>,
    /// Stream parameters of host functions (`void run(float a<>, float b<>)`).
    pub stream_params: Vec<StreamParam>,
}

/// A stream parameter of a host function: `float a<>` (a stream handle) or `float (*a)<>` (a
/// pointer to one). The function body's scope holds it.
#[derive(Clone, Debug)]
pub struct StreamParam {
    pub ty: TypeSpec,
    pub name: Ident,
    /// Pointer levels: `float (*out)<>` 1, `float (**streams)<>` 2 (BrookGPU's host
    /// libraries passed streams so); 0 for `float a<>`.
    pub pointers: u8,
    /// An array of stream pointers, `float (*ptrs[3])<>`: the `[3]`.
    pub array: Option<Span>,
    /// The whole parameter, replaced in the generated C++.
    pub span: Span,
    pub scope: HostScope,
}

/// (A `StreamParam` is also a host variable of stream pointers, `float (*ptrs[3])<>;`.)
///
/// A host stream declaration: `float a<10, 10>;`, `float4 s<n>;`,
/// `iter float2 s<4, 4> = iter(float2(0, 0), float2(4, 10));`.
#[derive(Clone, Debug)]
pub struct StreamDecl {
    pub ty: TypeSpec,
    pub name: Ident,
    pub dims: Vec<Expr>,
    pub dims_span: Span,
    pub iter: Option<Span>,
    /// The arguments of `iter(a, b)`, or any other initializer (an error for data streams).
    pub init: Option<(Vec<Expr>, Span)>,
    pub span: Span,
    /// The blocks around the declaration, outermost first (see [`HostScope`]).
    pub scope: HostScope,
}

/// Where in host code something is: the ids of the enclosing `{ }` blocks, outermost first
/// (empty at file level). A stream declared in scope `d` is visible at scope `s` after its
/// declaration when `d` is a prefix of `s`.
pub type HostScope = Vec<u32>;

/// A kernel call or stream operator (`streamRead`, `streamWrite`, ...) in host code.
#[derive(Clone, Debug)]
pub struct HostCall {
    pub callee: Ident,
    pub args: Vec<HostArg>,
    pub span: Span,
    pub scope: HostScope,
}

#[derive(Clone, Debug)]
pub enum HostArg {
    /// An argument the parser understood as an expression.
    Expr(Expr),
    /// C++ that the Brook parser does not model; passed through untouched.
    Raw(Span),
}

impl HostArg {
    pub fn span(&self) -> Span {
        match self {
            HostArg::Expr(e) => e.span,
            HostArg::Raw(span) => *span,
        }
    }
}
