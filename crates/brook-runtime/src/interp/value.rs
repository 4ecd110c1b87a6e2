//! Interpreter values and their byte encoding.
//!
//! A [`Num`] is a scalar or vector: up to four lanes of 64 bits. Integers are stored sign- or
//! zero-extended to 64 bits (always normalized to their kind's width), `float` as its IEEE bits
//! in the low 32 bits, `double` as its bits, `bool` as 0 or 1. Structs and arrays are
//! [`Value::Composite`]s of their fields or elements.

use brook_ir::{Literal, Module, ScalarKind, Type, ValueType};

thread_local! {
    static FLUSH_F32_SUBNORMALS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The interpreter's `float` rules on this thread while it lives: exact IEEE 754 (the
/// reference), or `float` subnormal operands and results flushed to zero (sign kept), the
/// model of a device that flushes them. Restores the previous rules when dropped.
pub struct FloatRules {
    previous: bool,
}

impl FloatRules {
    pub fn enter(flush_f32_subnormals: bool) -> FloatRules {
        let previous = FLUSH_F32_SUBNORMALS.with(|f| f.replace(flush_f32_subnormals));
        FloatRules { previous }
    }
}

impl Drop for FloatRules {
    fn drop(&mut self) {
        FLUSH_F32_SUBNORMALS.with(|f| f.set(self.previous));
    }
}

/// `x`, or a zero of its sign when it is subnormal and this thread's [`FloatRules`] flush.
pub fn flush_f32(x: f32) -> f32 {
    if x.is_subnormal() && FLUSH_F32_SUBNORMALS.with(|f| f.get()) {
        0.0f32.copysign(x)
    } else {
        x
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Num {
    pub ty: ValueType,
    pub lanes: [u64; 4],
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Num(Num),
    Composite(Vec<Value>),
}

impl Num {
    pub fn zero(ty: ValueType) -> Num {
        Num { ty, lanes: [0; 4] }
    }

    pub fn from_literal(lit: Literal) -> Num {
        Num {
            ty: ValueType::scalar(lit.kind),
            lanes: [lit.bits, 0, 0, 0],
        }
    }

    pub fn width(&self) -> usize {
        usize::from(self.ty.width)
    }

    pub fn lane(&self, i: usize) -> u64 {
        self.lanes[i]
    }

    /// Lane `i` as a `float` operand (a subnormal reads as zero under [`FloatRules`] that
    /// flush).
    pub fn f32(&self, i: usize) -> f32 {
        flush_f32(f32::from_bits(self.lanes[i] as u32))
    }

    pub fn f64(&self, i: usize) -> f64 {
        f64::from_bits(self.lanes[i])
    }

    /// The lane as a signed integer (meaningful for integer kinds).
    pub fn int(&self, i: usize) -> i64 {
        self.lanes[i] as i64
    }

    /// An index value: integers as they are, floats by the gather rule `floor(f + 0.25)`.
    pub fn index(&self, i: usize) -> i64 {
        match self.ty.kind {
            ScalarKind::F32 => brook_ir::launch::float_index_f32(self.f32(i)),
            ScalarKind::F64 => brook_ir::launch::float_index(self.f64(i)),
            ScalarKind::U64 => i64::try_from(self.lanes[i]).unwrap_or(i64::MAX),
            _ => self.int(i),
        }
    }
}

/// Normalizes 64 bits to an integer kind: sign-extends signed kinds, masks unsigned ones.
pub fn normalize(kind: ScalarKind, bits: u64) -> u64 {
    match kind {
        ScalarKind::Bool => u64::from(bits != 0),
        ScalarKind::I8 => bits as i8 as i64 as u64,
        ScalarKind::U8 => bits as u8 as u64,
        ScalarKind::I16 => bits as i16 as i64 as u64,
        ScalarKind::U16 => bits as u16 as u64,
        ScalarKind::I32 => bits as i32 as i64 as u64,
        ScalarKind::U32 => bits as u32 as u64,
        ScalarKind::I64 | ScalarKind::U64 | ScalarKind::F64 => bits,
        ScalarKind::F32 => bits & 0xffff_ffff,
    }
}

/// Precomputed struct layouts of a module (offsets of each field), for encoding.
#[derive(Clone)]
pub struct Layouts {
    structs: Vec<(u32, Vec<u32>)>,
}

impl Layouts {
    pub fn new(module: &Module) -> Layouts {
        let structs = (0..module.structs.len())
            .map(|i| {
                let (layout, offsets) = module.struct_layout(brook_ir::StructId(i as u32));
                (layout.size, offsets)
            })
            .collect();
        Layouts { structs }
    }

    pub fn size(&self, module: &Module, ty: &Type) -> usize {
        match ty {
            Type::Value(v) => v.size() as usize,
            Type::Struct(id) => self.structs[id.0 as usize].0 as usize,
            Type::Array { .. } => module.layout(ty).size as usize,
        }
    }

    /// Decodes a value of type `ty` from the start of `bytes` (which holds at least its size).
    pub fn decode(&self, module: &Module, ty: &Type, bytes: &[u8]) -> Value {
        match ty {
            Type::Value(v) => Value::Num(decode_num(*v, bytes)),
            Type::Struct(id) => {
                let decl = &module.structs[id.0 as usize];
                let offsets = &self.structs[id.0 as usize].1;
                Value::Composite(
                    decl.fields
                        .iter()
                        .zip(offsets)
                        .map(|(f, &o)| self.decode(module, &f.ty, &bytes[o as usize..]))
                        .collect(),
                )
            }
            Type::Array { elem, len } => {
                let size = self.size(module, elem);
                Value::Composite(
                    (0..*len as usize)
                        .map(|i| self.decode(module, elem, &bytes[i * size..]))
                        .collect(),
                )
            }
        }
    }

    /// Encodes a value of type `ty` at the start of `out`.
    pub fn encode(&self, module: &Module, ty: &Type, value: &Value, out: &mut [u8]) {
        match (ty, value) {
            (Type::Value(_), Value::Num(n)) => encode_num(n, out),
            (Type::Struct(id), Value::Composite(fields)) => {
                let decl = &module.structs[id.0 as usize];
                let offsets = &self.structs[id.0 as usize].1;
                for ((f, &o), v) in decl.fields.iter().zip(offsets).zip(fields) {
                    self.encode(module, &f.ty, v, &mut out[o as usize..]);
                }
            }
            (Type::Array { elem, .. }, Value::Composite(items)) => {
                let size = self.size(module, elem);
                for (i, v) in items.iter().enumerate() {
                    self.encode(module, elem, v, &mut out[i * size..]);
                }
            }
            _ => {}
        }
    }
}

/// The zero value of a type.
pub fn zero(module: &Module, ty: &Type) -> Value {
    match ty {
        Type::Value(v) => Value::Num(Num::zero(*v)),
        Type::Struct(id) => Value::Composite(
            module.structs[id.0 as usize]
                .fields
                .iter()
                .map(|f| zero(module, &f.ty))
                .collect(),
        ),
        Type::Array { elem, len } => {
            Value::Composite((0..*len).map(|_| zero(module, elem)).collect())
        }
    }
}

pub fn decode_num(ty: ValueType, bytes: &[u8]) -> Num {
    let size = ty.kind.size() as usize;
    let mut lanes = [0u64; 4];
    for (i, lane) in lanes.iter_mut().enumerate().take(usize::from(ty.width)) {
        let b = &bytes[i * size..(i + 1) * size];
        let raw = match size {
            1 => u64::from(b[0]),
            2 => u64::from(u16::from_le_bytes([b[0], b[1]])),
            4 => u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        };
        *lane = normalize(ty.kind, raw);
    }
    Num { ty, lanes }
}

pub fn encode_num(n: &Num, out: &mut [u8]) {
    let size = n.ty.kind.size() as usize;
    for i in 0..n.width() {
        let bytes = n.lanes[i].to_le_bytes();
        out[i * size..(i + 1) * size].copy_from_slice(&bytes[..size]);
    }
}
