//! A value argument of another number type than its parameter's: converted as a C argument
//! is where nothing is lost or the C programmer expects rounding, refused otherwise.
//!
//! - to `float`/`double` from `double`/`float`: rounded to nearest (a `double` argument for a
//!   `float` parameter, `args![2.0, ...]` in Rust, where a literal is a `double`);
//! - to a float type from an integer that it holds exactly (`|v| <= 2^24` for `float`);
//! - to an integer type from an integer that fits it.
//!
//! Anything else (a float for an integer parameter, vectors and structs of another type,
//! `bool`) stays an argument-kind error: there the conversion would hide a mistake.

use super::args::Constant;
use crate::element::ElementType;
use brook_ir::ScalarKind;

/// A scalar's value, read from a constant's bytes.
#[derive(Clone, Copy)]
enum Number {
    Int(i128),
    Float(f64),
}

/// `constant`'s bytes as the parameter type `to`, when the rules above allow it.
pub fn converted(constant: &Constant, to: &ElementType) -> Option<Vec<u8>> {
    let from = scalar_kind(&constant.element)?;
    let to = scalar_kind(to)?;
    let value = read(from, &constant.bytes)?;
    write(to, value)
}

fn scalar_kind(element: &ElementType) -> Option<ScalarKind> {
    match element {
        ElementType::Value(v) if v.width == 1 && v.kind != ScalarKind::Bool => Some(v.kind),
        _ => None,
    }
}

fn read(kind: ScalarKind, bytes: &[u8]) -> Option<Number> {
    use ScalarKind::*;
    let b = |n: usize| bytes.get(..n);
    Some(match kind {
        I8 => Number::Int(i8::from_le_bytes(b(1)?.try_into().ok()?).into()),
        U8 => Number::Int(b(1)?[0].into()),
        I16 => Number::Int(i16::from_le_bytes(b(2)?.try_into().ok()?).into()),
        U16 => Number::Int(u16::from_le_bytes(b(2)?.try_into().ok()?).into()),
        I32 => Number::Int(i32::from_le_bytes(b(4)?.try_into().ok()?).into()),
        U32 => Number::Int(u32::from_le_bytes(b(4)?.try_into().ok()?).into()),
        I64 => Number::Int(i64::from_le_bytes(b(8)?.try_into().ok()?).into()),
        U64 => Number::Int(u64::from_le_bytes(b(8)?.try_into().ok()?).into()),
        F32 => Number::Float(f32::from_le_bytes(b(4)?.try_into().ok()?).into()),
        F64 => Number::Float(f64::from_le_bytes(b(8)?.try_into().ok()?)),
        Bool => return None,
    })
}

fn write(kind: ScalarKind, value: Number) -> Option<Vec<u8>> {
    use ScalarKind::*;
    match (kind, value) {
        (F32, Number::Float(f)) => Some((f as f32).to_le_bytes().to_vec()),
        (F64, Number::Float(f)) => Some(f.to_le_bytes().to_vec()),
        (F32, Number::Int(i)) if i.unsigned_abs() <= 1 << 24 => {
            Some((i as f32).to_le_bytes().to_vec())
        }
        (F64, Number::Int(i)) if i.unsigned_abs() <= 1 << 53 => {
            Some((i as f64).to_le_bytes().to_vec())
        }
        (I8, Number::Int(i)) => i8::try_from(i).ok().map(|v| v.to_le_bytes().to_vec()),
        (U8, Number::Int(i)) => u8::try_from(i).ok().map(|v| v.to_le_bytes().to_vec()),
        (I16, Number::Int(i)) => i16::try_from(i).ok().map(|v| v.to_le_bytes().to_vec()),
        (U16, Number::Int(i)) => u16::try_from(i).ok().map(|v| v.to_le_bytes().to_vec()),
        (I32, Number::Int(i)) => i32::try_from(i).ok().map(|v| v.to_le_bytes().to_vec()),
        (U32, Number::Int(i)) => u32::try_from(i).ok().map(|v| v.to_le_bytes().to_vec()),
        (I64, Number::Int(i)) => i64::try_from(i).ok().map(|v| v.to_le_bytes().to_vec()),
        (U64, Number::Int(i)) => u64::try_from(i).ok().map(|v| v.to_le_bytes().to_vec()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brook_ir::ValueType;

    fn constant<T: crate::element::Element>(v: T) -> Constant {
        Constant::of(v)
    }

    fn to(kind: ScalarKind) -> ElementType {
        ElementType::Value(ValueType::scalar(kind))
    }

    #[test]
    fn numbers_convert_as_c_arguments_where_nothing_surprising_happens() {
        let f = |c: &Constant, k| converted(c, &to(k));
        assert_eq!(
            f(&constant(2.0f64), ScalarKind::F32),
            Some(2.0f32.to_le_bytes().to_vec())
        );
        assert_eq!(
            f(&constant(0.1f64), ScalarKind::F32),
            Some(0.1f32.to_le_bytes().to_vec())
        );
        assert_eq!(
            f(&constant(3i32), ScalarKind::F32),
            Some(3.0f32.to_le_bytes().to_vec())
        );
        assert_eq!(f(&constant(3i32), ScalarKind::U8), Some(vec![3]));
        assert_eq!(
            f(&constant(-1i64), ScalarKind::I32),
            Some((-1i32).to_le_bytes().to_vec())
        );
        // Refused: a fraction for an integer, an integer too large to be exact or to fit.
        assert_eq!(f(&constant(2.0f64), ScalarKind::I32), None);
        assert_eq!(f(&constant(16_777_217i32), ScalarKind::F32), None);
        assert_eq!(f(&constant(-1i32), ScalarKind::U32), None);
        assert_eq!(f(&constant(300i32), ScalarKind::U8), None);
        assert_eq!(f(&constant([1.0f64, 2.0]), ScalarKind::F32), None);
    }
}
