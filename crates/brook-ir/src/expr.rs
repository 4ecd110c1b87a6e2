//! IR expressions: pure, typed trees stored in a kernel's expression arena.
//!
//! Every [`Expr`] records its result type. Operands are always of the types the operator needs:
//! the frontend inserts every conversion ([`ExprKind::Convert`]) and broadcast
//! ([`ExprKind::Splat`]) explicitly. Children are appended to the arena before their parents, so
//! a handle always points to an earlier expression (the validator checks this).

use crate::arena::{Handle, SourceSpan};
use crate::intrinsic::{Exactness, Intrinsic, INTRINSICS};
use crate::module::{Local, ParamId, Type};
use crate::types::ScalarKind;

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Type,
}

/// A scalar constant: `bits` holds an integer sign- or zero-extended to 64 bits, the IEEE bits of
/// a float (`f32` in the low 32 bits), or 0/1 for a bool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Literal {
    pub kind: ScalarKind,
    pub bits: u64,
}

impl Literal {
    pub fn bool(value: bool) -> Self {
        Literal {
            kind: ScalarKind::Bool,
            bits: u64::from(value),
        }
    }

    /// An integer of `kind`, wrapped to its width (two's complement).
    pub fn int(kind: ScalarKind, value: i64) -> Self {
        let bits = 8 * kind.size();
        let wrapped = if kind.is_signed() {
            crate::launch::wrap(value, bits)
        } else if bits == 64 {
            value
        } else {
            value & ((1i64 << bits) - 1)
        };
        Literal {
            kind,
            bits: wrapped as u64,
        }
    }

    pub fn f32(value: f32) -> Self {
        Literal {
            kind: ScalarKind::F32,
            bits: u64::from(value.to_bits()),
        }
    }

    pub fn f64(value: f64) -> Self {
        Literal {
            kind: ScalarKind::F64,
            bits: value.to_bits(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum UnaryOp {
    /// Arithmetic negation (wrapping for integers).
    Neg,
    /// Logical not of a bool.
    Not,
    /// Bitwise complement of an integer.
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// Integer division by zero gives 0; float division is IEEE.
    Div,
    /// Integer remainder by zero gives 0; float remainder keeps the sign of the left operand.
    Rem,
    /// Shift counts are taken modulo the bit width of the left operand.
    Shl,
    /// Arithmetic for signed kinds, logical for unsigned kinds.
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    /// Both operands bool; evaluating both is harmless because expressions are pure.
    LogicAnd,
    LogicOr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::LogicAnd => "&&",
            BinaryOp::LogicOr => "||",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }

    pub fn is_shift(self) -> bool {
        matches!(self, BinaryOp::Shl | BinaryOp::Shr)
    }

    pub fn is_logic(self) -> bool {
        matches!(self, BinaryOp::LogicAnd | BinaryOp::LogicOr)
    }

    /// Operators defined only on integers.
    pub fn is_integer_only(self) -> bool {
        matches!(
            self,
            BinaryOp::Shl | BinaryOp::Shr | BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor
        )
    }
}

/// The intrinsic library (seed 003, section 5; its table: [`crate::intrinsic`]).
/// Component-wise unless said otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum MathFun {
    Abs,
    Acos,
    Asin,
    Atan,
    Atan2,
    Ceil,
    Clamp,
    Cos,
    /// `float3` cross product.
    Cross,
    /// Euclidean distance of two vectors: a scalar.
    Distance,
    /// Dot product: a scalar.
    Dot,
    Exp,
    Exp2,
    Floor,
    /// `fma(a, b, c)`: `a * b + c` rounded once (IEEE 754 fusedMultiplyAdd, C99 `fma`). Asked
    /// for by name only: no device contracts `a * b + c` on its own.
    Fma,
    /// Remainder with the sign of `x` (C `fmod`).
    Fmod,
    /// `x - floor(x)`.
    Frac,
    IsFinite,
    IsInf,
    IsNan,
    /// Euclidean length: a scalar.
    Length,
    /// `a + (b - a) * t`.
    Lerp,
    Log,
    Log2,
    Max,
    Min,
    Normalize,
    Pow,
    /// C99 `round`: halfway cases away from zero (`brook_ir::launch::round_half_away`).
    Round,
    Rsqrt,
    /// -1, 0 or 1.
    Sign,
    Sin,
    Sqrt,
    Tan,
}

impl MathFun {
    /// Its row of the intrinsic table.
    pub fn intrinsic(self) -> &'static Intrinsic {
        &INTRINSICS[self as usize]
    }

    /// Every intrinsic, in the table's order.
    pub fn all() -> impl Iterator<Item = MathFun> {
        INTRINSICS.iter().map(|i| i.fun)
    }

    /// The Brook name of the intrinsic.
    pub fn name(self) -> &'static str {
        self.intrinsic().name
    }

    pub fn from_name(name: &str) -> Option<MathFun> {
        crate::intrinsic::lookup(name).map(|i| i.fun)
    }

    pub fn arity(self) -> usize {
        self.intrinsic().signature.arity()
    }

    /// The transcendental functions: computed by each device's math library, within a few
    /// ulps of one another rather than bit-identical (docs/GUIDE.md, the math library).
    pub fn is_transcendental(self) -> bool {
        self.intrinsic().exactness == Exactness::Library
    }

    /// Functions that accept integer operands too.
    pub fn is_numeric(self) -> bool {
        self.intrinsic().signature.takes_integers()
    }
}

/// Where a value lives: a local, the current element of an output, or a scatter target; then a
/// path of fields, array elements and vector components.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Place {
    pub root: PlaceRoot,
    pub path: Vec<Access>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum PlaceRoot {
    Local(Handle<Local>),
    /// The current element of an output stream or the reduction accumulator. Reading it before
    /// writing gives the stream's previous contents.
    Output(ParamId),
    /// An element of a scatter array, indices slowest axis first (as `b[row][col]`). Float
    /// indices select `floor(f + 0.25)`; out-of-range stores are dropped and out-of-range loads
    /// read the clamped element.
    Scatter {
        param: ParamId,
        indices: Vec<Handle<Expr>>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Access {
    Field(u32),
    Component(u8),
    /// An element of a local array; the index (an integer scalar) is clamped to the array.
    Index(Handle<Expr>),
}

impl Place {
    /// The expressions the place's indices are computed from (scatter indices, then the
    /// path's array indices).
    pub fn operands(&self) -> Vec<Handle<Expr>> {
        let mut out = match &self.root {
            PlaceRoot::Scatter { indices, .. } => indices.clone(),
            _ => Vec::new(),
        };
        out.extend(self.path.iter().filter_map(|a| match a {
            Access::Index(h) => Some(*h),
            _ => None,
        }));
        out
    }

    /// The place with each index expression replaced by `f` of it.
    pub fn map_operands(&self, f: &mut impl FnMut(Handle<Expr>) -> Handle<Expr>) -> Place {
        let root = match &self.root {
            PlaceRoot::Scatter { param, indices } => PlaceRoot::Scatter {
                param: *param,
                indices: indices.iter().map(|&h| f(h)).collect(),
            },
            other => other.clone(),
        };
        let path = self
            .path
            .iter()
            .map(|access| match *access {
                Access::Index(h) => Access::Index(f(h)),
                other => other,
            })
            .collect();
        Place { root, path }
    }

    pub fn local(local: Handle<Local>) -> Self {
        Place {
            root: PlaceRoot::Local(local),
            path: Vec::new(),
        }
    }

    pub fn with(mut self, access: Access) -> Self {
        self.path.push(access);
        self
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ExprKind {
    Literal(Literal),
    /// A vector from one scalar per component, or a struct from one value per field.
    Compose(Vec<Handle<Expr>>),
    /// A scalar repeated in every component of the result vector.
    Splat(Handle<Expr>),
    /// The current value of a place.
    Load(Place),
    /// The current element of an input or iterator stream, after implicit resize.
    Input(ParamId),
    /// The value of a constant parameter.
    Constant(ParamId),
    /// An element of a gather array; indices slowest axis first (`a[row][col]`), each an integer
    /// or float scalar. Floats select `floor(f + 0.25)`; every index is clamped to its axis.
    Gather {
        param: ParamId,
        indices: Vec<Handle<Expr>>,
    },
    Field {
        base: Handle<Expr>,
        index: u32,
    },
    /// One component of a vector, as a scalar.
    Component {
        base: Handle<Expr>,
        index: u8,
    },
    /// Components of a vector, as a vector of 2 to 4 components.
    Swizzle {
        base: Handle<Expr>,
        pattern: Vec<u8>,
    },
    Unary {
        op: UnaryOp,
        arg: Handle<Expr>,
    },
    /// Component-wise; both operands have one type. Comparisons give bools of the same width.
    Binary {
        op: BinaryOp,
        left: Handle<Expr>,
        right: Handle<Expr>,
    },
    /// `cond ? accept : reject`. With a bool scalar condition the value of one arm; with a bool
    /// vector of the arms' width (BrookGPU's Cg form) each component comes from the arm its
    /// condition component picks. Arms are pure, so a backend may evaluate both.
    Select {
        cond: Handle<Expr>,
        accept: Handle<Expr>,
        reject: Handle<Expr>,
    },
    /// Component-wise conversion to the result type's kind (same width). Float to integer
    /// truncates toward zero and saturates (NaN gives 0); integer to integer wraps; to bool
    /// tests against zero.
    Convert(Handle<Expr>),
    Math {
        fun: MathFun,
        args: Vec<Handle<Expr>>,
    },
    /// `indexof(s)`: the position of the current element of a stream parameter, `float4`,
    /// `.x` the fastest axis.
    IndexOf(ParamId),
    /// `instance()`: the position in the execution domain, `int4`, `.x` the fastest axis.
    Instance,
    /// `instanceInGroup()`: the position inside the thread group, `int4`.
    InstanceInGroup,
}

impl ExprKind {
    /// The expressions this one is computed from directly.
    pub fn operands(&self) -> Vec<Handle<Expr>> {
        match self {
            ExprKind::Compose(parts) | ExprKind::Math { args: parts, .. } => parts.clone(),
            ExprKind::Gather { indices, .. } => indices.clone(),
            ExprKind::Load(place) => place.operands(),
            ExprKind::Splat(h)
            | ExprKind::Convert(h)
            | ExprKind::Field { base: h, .. }
            | ExprKind::Component { base: h, .. }
            | ExprKind::Swizzle { base: h, .. }
            | ExprKind::Unary { arg: h, .. } => vec![*h],
            ExprKind::Binary { left, right, .. } => vec![*left, *right],
            ExprKind::Select {
                cond,
                accept,
                reject,
            } => vec![*cond, *accept, *reject],
            ExprKind::Literal(_)
            | ExprKind::Input(_)
            | ExprKind::Constant(_)
            | ExprKind::IndexOf(_)
            | ExprKind::Instance
            | ExprKind::InstanceInGroup => Vec::new(),
        }
    }

    /// This expression with each operand replaced by `f` of it (the order of
    /// [`ExprKind::operands`]).
    pub fn map_operands(&self, f: &mut impl FnMut(Handle<Expr>) -> Handle<Expr>) -> ExprKind {
        match self {
            ExprKind::Compose(parts) => ExprKind::Compose(parts.iter().map(|&h| f(h)).collect()),
            ExprKind::Math { fun, args } => ExprKind::Math {
                fun: *fun,
                args: args.iter().map(|&h| f(h)).collect(),
            },
            ExprKind::Gather { param, indices } => ExprKind::Gather {
                param: *param,
                indices: indices.iter().map(|&h| f(h)).collect(),
            },
            ExprKind::Load(place) => ExprKind::Load(place.map_operands(f)),
            ExprKind::Splat(h) => ExprKind::Splat(f(*h)),
            ExprKind::Convert(h) => ExprKind::Convert(f(*h)),
            ExprKind::Field { base, index } => ExprKind::Field {
                base: f(*base),
                index: *index,
            },
            ExprKind::Component { base, index } => ExprKind::Component {
                base: f(*base),
                index: *index,
            },
            ExprKind::Swizzle { base, pattern } => ExprKind::Swizzle {
                base: f(*base),
                pattern: pattern.clone(),
            },
            ExprKind::Unary { op, arg } => ExprKind::Unary {
                op: *op,
                arg: f(*arg),
            },
            ExprKind::Binary { op, left, right } => ExprKind::Binary {
                op: *op,
                left: f(*left),
                right: f(*right),
            },
            ExprKind::Select {
                cond,
                accept,
                reject,
            } => ExprKind::Select {
                cond: f(*cond),
                accept: f(*accept),
                reject: f(*reject),
            },
            ExprKind::Literal(_)
            | ExprKind::Input(_)
            | ExprKind::Constant(_)
            | ExprKind::IndexOf(_)
            | ExprKind::Instance
            | ExprKind::InstanceInGroup => self.clone(),
        }
    }
}

/// A source span for nodes made up by passes.
pub const NO_SPAN: SourceSpan = SourceSpan { start: 0, end: 0 };
