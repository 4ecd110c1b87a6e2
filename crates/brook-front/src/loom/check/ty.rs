//! The checker's types: basic types, untagged constants (which take the type their use
//! needs), records (structural: `Range` is `{start: Int32, end: Int32}`) and 1-D and 2-D
//! arrays whose extents are constants, sizes known at launch, a block's worth of elements or
//! a slice's run-time length.

use crate::loom::ast::BasicType;
use crate::loom::token::{Axis, ThreadName, ThreadParam};
use std::fmt;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Basic(BasicType),
    /// An integer constant without a type tag: it becomes the type its use needs
    /// (`Int64` where nothing says).
    UntypedInt,
    /// A floating-point constant without a type tag (`Float64` where nothing says).
    UntypedFloat,
    Record(Arc<Record>),
    Array {
        elem: Box<Ty>,
        dims: Vec<Dim>,
    },
    /// The type of something already reported as wrong: accepted everywhere, so one mistake
    /// gives one error.
    Error,
}

/// A record type. Records are structural: two with the same fields are one type; the name
/// of a `type` definition is kept for messages.
#[derive(Clone, Debug)]
pub struct Record {
    pub name: Option<String>,
    pub fields: Vec<(String, Ty)>,
}

impl PartialEq for Record {
    fn eq(&self, other: &Record) -> bool {
        self.fields == other.fields
    }
}

/// One extent of an array.
#[derive(Clone, Debug, PartialEq)]
pub enum Dim {
    /// Known when the program is compiled.
    Const(u64),
    /// Known at launch: an expression over the grid's sizes.
    Launch(Size),
    /// `[]`: a block's worth of elements (`BLOCKSIZE`) for a `shared` array, the argument's
    /// for a `func` parameter.
    Unsized,
    /// `[]` in a kernel parameter: the length of the host's array, known at launch.
    Host,
    /// A slice by a `Range`: its length is known when it runs.
    Slice,
}

/// A size known at launch.
#[derive(Clone, Debug, PartialEq)]
pub enum Size {
    Literal(u64),
    /// `THREADS`, `BLOCKS`, `BLOCKSIZE` and their `X_`/`Y_` forms.
    Grid(ThreadParam),
    Binary(SizeOp, Box<Size>, Box<Size>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// How an array's extent relates to the grid: what parallel operators and whole-array
/// statements need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spread {
    /// One element per thread of the grid along the axis (`THREADS`, `X_THREADS`, ...).
    Threads(Option<Axis>),
    /// One element per block along the axis (`BLOCKS`, `X_BLOCKS`, ...).
    Blocks(Option<Axis>),
    /// One element per thread of a block (`BLOCKSIZE`, `X_BLOCKSIZE`, `[]` shared, a slice).
    Block(Option<Axis>),
    /// Anything else.
    Other,
}

impl Dim {
    pub fn spread(&self) -> Spread {
        match self {
            Dim::Launch(Size::Grid(ThreadParam { name, axis })) => match name {
                ThreadName::Threads => Spread::Threads(*axis),
                ThreadName::Blocks => Spread::Blocks(*axis),
                ThreadName::BlockSize => Spread::Block(*axis),
                _ => Spread::Other,
            },
            Dim::Unsized | Dim::Slice => Spread::Block(None),
            _ => Spread::Other,
        }
    }

    /// Whether two extents are certainly different (both known, or different grid sizes).
    pub fn differs_from(&self, other: &Dim) -> bool {
        match (self, other) {
            (Dim::Const(a), Dim::Const(b)) => a != b,
            (Dim::Const(_), Dim::Launch(_)) | (Dim::Launch(_), Dim::Const(_)) => true,
            (Dim::Launch(a), Dim::Launch(b)) => a != b,
            _ => false,
        }
    }
}

impl Ty {
    pub const BOOL: Ty = Ty::Basic(BasicType::Bool);
    pub const INT32: Ty = Ty::Basic(BasicType::Int32);

    /// `Range`: `{start: Int32, end: Int32}` (`end` excluded).
    pub fn range() -> Ty {
        Ty::Record(Arc::new(Record {
            name: Some("Range".into()),
            fields: vec![("start".into(), Ty::INT32), ("end".into(), Ty::INT32)],
        }))
    }

    pub fn is_range(&self) -> bool {
        *self == Ty::range()
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Ty::Error)
    }

    /// A number: a numeric basic type or an untagged constant.
    pub fn is_numeric(&self) -> bool {
        match self {
            Ty::Basic(b) => b.is_numeric(),
            Ty::UntypedInt | Ty::UntypedFloat => true,
            _ => false,
        }
    }

    pub fn is_integer(&self) -> bool {
        match self {
            Ty::Basic(b) => b.is_integer(),
            Ty::UntypedInt => true,
            _ => false,
        }
    }

    pub fn is_scalar(&self) -> bool {
        matches!(self, Ty::Basic(_) | Ty::UntypedInt | Ty::UntypedFloat)
    }

    pub fn is_array(&self) -> bool {
        matches!(self, Ty::Array { .. })
    }

    /// The type an untagged constant takes where nothing else says (seed 004 3.2.5: constants
    /// are 64-bit).
    pub fn defaulted(&self) -> Ty {
        match self {
            Ty::UntypedInt => Ty::Basic(BasicType::Int64),
            Ty::UntypedFloat => Ty::Basic(BasicType::Float64),
            other => other.clone(),
        }
    }

    /// Whether a value of this type may be stored where `target` is expected (an assignment,
    /// an initializer, an argument passed by value, a return): the same type, or numbers of
    /// any two numeric types (converted as assigned), an untagged integer to any number, an
    /// untagged float to a float type.
    pub fn assignable_to(&self, target: &Ty) -> bool {
        match (self, target) {
            (Ty::Error, _) | (_, Ty::Error) => true,
            (Ty::UntypedFloat, Ty::Basic(b)) => b.is_float(),
            (Ty::UntypedInt, Ty::Basic(b)) => b.is_numeric(),
            (Ty::Basic(a), Ty::Basic(b)) => a == b || (a.is_numeric() && b.is_numeric()),
            (Ty::Record(a), Ty::Record(b)) => a == b,
            (
                Ty::Array { elem, dims },
                Ty::Array {
                    elem: target_elem,
                    dims: target_dims,
                },
            ) => {
                dims.len() == target_dims.len()
                    && elem.assignable_to(target_elem)
                    && !dims.iter().zip(target_dims).any(|(a, b)| a.differs_from(b))
            }
            _ => false,
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Basic(b) => f.write_str(b.name()),
            Ty::UntypedInt => f.write_str("an integer constant"),
            Ty::UntypedFloat => f.write_str("a floating-point constant"),
            Ty::Record(record) if record.name.is_some() => {
                f.write_str(record.name.as_deref().unwrap_or_default())
            }
            Ty::Record(record) => {
                f.write_str("{")?;
                for (i, (name, ty)) in record.fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{name}: {ty}")?;
                }
                f.write_str("}")
            }
            Ty::Array { elem, dims } => {
                write!(f, "{elem}[")?;
                for (i, dim) in dims.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{dim}")?;
                }
                f.write_str("]")
            }
            Ty::Error => f.write_str("{unknown}"),
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Const(n) => write!(f, "{n}"),
            Dim::Launch(size) => write!(f, "{size}"),
            Dim::Unsized | Dim::Host => Ok(()),
            Dim::Slice => f.write_str("slice"),
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Size::Literal(n) => write!(f, "{n}"),
            Size::Grid(param) => {
                let token = crate::loom::token::TokenKind::Thread(*param);
                f.write_str(&token.text())
            }
            Size::Binary(op, a, b) => {
                let symbol = match op {
                    SizeOp::Add => "+",
                    SizeOp::Sub => "-",
                    SizeOp::Mul => "*",
                    SizeOp::Div => "/",
                };
                write!(f, "({a}{symbol}{b})")
            }
        }
    }
}
