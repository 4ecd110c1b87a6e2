//! The LOOM syntax tree (seed 004, sections 3.3–3.6), as the parser builds it: items (type
//! definitions, constants, device functions, the kernel), statements and expressions, each
//! with the span of the text it came from. Every expression has an [`ExprId`], unique in its
//! program, so the checker can keep what it learns (types) in side tables.

use super::token::{Op, ThreadParam};
use crate::source::Span;

/// A name as written, with where.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A whole program: the main file with its imports spliced in.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Program {
    pub items: Vec<Item>,
    /// How many expressions the parser numbered ([`ExprId`]s are below this).
    pub expr_count: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// `type Name T`.
    Type { name: Ident, ty: TypeExpr },
    /// `const name: T <- e` at the top level.
    Const(Decl),
    /// `func f(params): T` (device function) or `kernel k(params)` (no return type).
    Func(Func),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    pub kind: FuncKind,
    pub name: Ident,
    pub params: Vec<Param>,
    /// `None` for the kernel.
    pub ret: Option<TypeExpr>,
    pub body: Block,
    /// The header, from the keyword to the end of the parameter list or return type.
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuncKind {
    Kernel,
    Device,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub ty: TypeExpr,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeExprKind {
    Basic(BasicType),
    /// A `type`-defined name or `Range`.
    Named(String),
    /// `{a: T, b: U}`.
    Record(Vec<(Ident, TypeExpr)>),
    /// `T[N]`, `T[N, M]`; `T[]` has one `None` extent (a block's worth of elements, or any
    /// length for a `func` parameter).
    Array {
        elem: Box<TypeExpr>,
        dims: Vec<Option<Expr>>,
    },
}

/// The basic types of section 3.3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BasicType {
    Bool,
    Byte,
    Int32,
    Int64,
    UInt32,
    UInt64,
    Float32,
    Float64,
}

impl BasicType {
    pub fn name(self) -> &'static str {
        match self {
            BasicType::Bool => "Bool",
            BasicType::Byte => "Byte",
            BasicType::Int32 => "Int32",
            BasicType::Int64 => "Int64",
            BasicType::UInt32 => "UInt32",
            BasicType::UInt64 => "UInt64",
            BasicType::Float32 => "Float32",
            BasicType::Float64 => "Float64",
        }
    }

    pub fn is_integer(self) -> bool {
        !matches!(
            self,
            BasicType::Bool | BasicType::Float32 | BasicType::Float64
        )
    }

    pub fn is_float(self) -> bool {
        matches!(self, BasicType::Float32 | BasicType::Float64)
    }

    pub fn is_numeric(self) -> bool {
        self != BasicType::Bool
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Local,
    Shared,
    Global,
    /// `const`: a value fixed at its declaration.
    Const,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Local => "local",
            Space::Shared => "shared",
            Space::Global => "global",
            Space::Const => "const",
        }
    }
}

/// `space name: T <- init` (the space `local` when none is written).
#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    pub space: Space,
    pub name: Ident,
    pub ty: TypeExpr,
    pub init: Option<Expr>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignOp {
    /// `<-`
    Set,
    /// `+=`, `-=`, `*=`: `x <- x op e`.
    Add,
    Sub,
    Mul,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    Decl(Decl),
    Assign {
        target: Expr,
        op: AssignOp,
        value: Expr,
    },
    /// An expression evaluated for its effect (a call).
    Expr(Expr),
    If {
        cond: Expr,
        then: Block,
        /// `else` block; `else if` is an `else` block holding the `if`.
        otherwise: Option<Block>,
    },
    While {
        cond: Expr,
        body: Block,
    },
    /// `for i: T <- from .. to` (`to` excluded) or `from ... to` (included). With a type the
    /// variable is declared in the enclosing block; without one it must exist.
    For {
        var: Ident,
        ty: Option<TypeExpr>,
        from: Expr,
        to: Expr,
        inclusive: bool,
        body: Block,
    },
    Break,
    Continue,
    Return(Option<Expr>),
}

/// Identifies an expression within its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub u32);

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub id: ExprId,
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `!`
    Not,
    /// `-`
    Neg,
    /// `^` (one's complement)
    Complement,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    Add,
    Sub,
    BitOr,
    BitXor,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinaryOp {
    /// The operator for a token, with its precedence level (higher binds tighter: section
    /// 3.2.3's table, whose rows are levels).
    pub fn from_op(op: Op) -> Option<(BinaryOp, u8)> {
        Some(match op {
            Op::Star => (BinaryOp::Mul, 4),
            Op::Slash => (BinaryOp::Div, 4),
            Op::Percent => (BinaryOp::Rem, 4),
            Op::Shl => (BinaryOp::Shl, 4),
            Op::Shr => (BinaryOp::Shr, 4),
            Op::Amp => (BinaryOp::BitAnd, 4),
            Op::Plus => (BinaryOp::Add, 3),
            Op::Minus => (BinaryOp::Sub, 3),
            Op::Pipe => (BinaryOp::BitOr, 3),
            Op::Caret => (BinaryOp::BitXor, 3),
            Op::Eq => (BinaryOp::Eq, 2),
            Op::Ne => (BinaryOp::Ne, 2),
            Op::Lt => (BinaryOp::Lt, 2),
            Op::Le => (BinaryOp::Le, 2),
            Op::Gt => (BinaryOp::Gt, 2),
            Op::Ge => (BinaryOp::Ge, 2),
            Op::AndAnd => (BinaryOp::And, 1),
            Op::OrOr => (BinaryOp::Or, 1),
            _ => return None,
        })
    }

    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::BitAnd => "&",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Eq => "=",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }

    pub fn is_logic(self) -> bool {
        matches!(self, BinaryOp::And | BinaryOp::Or)
    }

    pub fn is_bitwise(self) -> bool {
        matches!(
            self,
            BinaryOp::Shl | BinaryOp::Shr | BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor
        )
    }
}

/// The parallel operators of section 3.5.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParallelOp {
    /// `f // a`
    Map,
    /// `f /. a`
    Reduce,
    /// `f /: a`: inclusive scan from the left.
    ScanLeft,
    /// `f :/ a`: inclusive scan from the right.
    ScanRight,
}

impl ParallelOp {
    pub fn from_op(op: Op) -> Option<ParallelOp> {
        Some(match op {
            Op::Map => ParallelOp::Map,
            Op::Reduce => ParallelOp::Reduce,
            Op::ScanLeft => ParallelOp::ScanLeft,
            Op::ScanRight => ParallelOp::ScanRight,
            _ => return None,
        })
    }

    pub fn symbol(self) -> &'static str {
        match self {
            ParallelOp::Map => "//",
            ParallelOp::Reduce => "/.",
            ParallelOp::ScanLeft => "/:",
            ParallelOp::ScanRight => ":/",
        }
    }

    /// How many arguments the function on the left takes.
    pub fn arity(self) -> usize {
        match self {
            ParallelOp::Map => 1,
            _ => 2,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Int(u64),
    Float(f64),
    Bool(bool),
    Name(String),
    Thread(ThreadParam),
    Unary {
        op: UnaryOp,
        arg: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    /// `e: T`: a constant of type `T`, or a conversion.
    Tagged {
        value: Box<Expr>,
        ty: TypeExpr,
    },
    /// `a[i]`, `a[i, j]` (unsafe) or `a[[i]]`, `a[[i, j]]` (safe: zero outside, writes
    /// outside dropped). An index of type `Range` selects a slice.
    Index {
        base: Box<Expr>,
        indices: Vec<Expr>,
        safe: bool,
    },
    Field {
        base: Box<Expr>,
        field: Ident,
    },
    Call {
        func: Ident,
        args: Vec<Expr>,
    },
    Parallel {
        op: ParallelOp,
        func: Ident,
        array: Box<Expr>,
    },
}
