//! Single values between Python and Brook: kernel constants in, reduction results out.
//!
//! A scalar is a Python number (`bool`, `int`, `float`, or a NumPy scalar); a vector a sequence
//! of its components (`(1.0, 2.0, 3.0, 4.0)`); a struct a sequence of its fields in order, or
//! a NumPy structured scalar of the same layout.

use crate::errors::usage;
use brook_ir::ScalarKind;
use brook_runtime::ElementType;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyTuple};

/// The bytes of `value` as an element of type `element` (little-endian, C layout).
pub fn to_bytes(value: &Bound<'_, PyAny>, element: &ElementType) -> PyResult<Vec<u8>> {
    let mut bytes = vec![0u8; element.size()];
    write(value, element, &mut bytes)?;
    Ok(bytes)
}

fn write(value: &Bound<'_, PyAny>, element: &ElementType, out: &mut [u8]) -> PyResult<()> {
    match element {
        ElementType::Value(v) if v.is_scalar() => write_scalar(value, v.kind, out),
        ElementType::Value(v) => {
            let parts = components(value, usize::from(v.width), element)?;
            let size = v.kind.size() as usize;
            for (k, part) in parts.iter().enumerate() {
                write_scalar(part, v.kind, &mut out[k * size..(k + 1) * size])?;
            }
            Ok(())
        }
        ElementType::Struct(layout) => {
            if let Ok(raw) = value.call_method0("tobytes") {
                let raw: Vec<u8> = raw.extract()?;
                if raw.len() == layout.size && value.hasattr("dtype")? {
                    out.copy_from_slice(&raw);
                    return Ok(());
                }
            }
            let parts = components(value, layout.fields.len(), element)?;
            for (field, part) in layout.fields.iter().zip(&parts) {
                let end = field.offset + field.ty.size();
                write(part, &field.ty, &mut out[field.offset..end])?;
            }
            Ok(())
        }
    }
}

/// The `count` parts of a vector or struct value.
fn components<'py>(
    value: &Bound<'py, PyAny>,
    count: usize,
    element: &ElementType,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let parts: Vec<Bound<'py, PyAny>> = value
        .try_iter()
        .and_then(|items| items.collect::<PyResult<_>>())
        .map_err(|_| {
            usage(format!(
                "a {element} value is a sequence of {count} values, not {}",
                describe(value)
            ))
        })?;
    if parts.len() != count {
        return Err(usage(format!(
            "a {element} value has {count} parts, not {} ({})",
            parts.len(),
            describe(value)
        )));
    }
    Ok(parts)
}

fn write_scalar(value: &Bound<'_, PyAny>, kind: ScalarKind, out: &mut [u8]) -> PyResult<()> {
    let refuse = || usage(format!("{} is not a `{kind}` value", describe(value)));
    if kind.is_float() {
        if value.is_instance_of::<PyBool>() {
            return Err(refuse());
        }
        let x: f64 = value.extract().map_err(|_| refuse())?;
        match kind {
            ScalarKind::F32 => out.copy_from_slice(&(x as f32).to_le_bytes()),
            _ => out.copy_from_slice(&x.to_le_bytes()),
        }
        return Ok(());
    }
    if kind == ScalarKind::Bool {
        let b: bool = value.extract().map_err(|_| refuse())?;
        out[0] = u8::from(b);
        return Ok(());
    }
    if value.is_instance_of::<PyFloat>() {
        return Err(usage(format!(
            "{} is not a `{kind}` value (an integer parameter takes an int)",
            describe(value)
        )));
    }
    let n: i128 = value
        .call_method0("__index__")
        .and_then(|i| i.extract())
        .map_err(|_| refuse())?;
    let size = kind.size() as usize;
    let (low, high) = if kind.is_signed() {
        (-(1i128 << (size * 8 - 1)), (1i128 << (size * 8 - 1)) - 1)
    } else {
        (0, (1i128 << (size * 8)) - 1)
    };
    if n < low || n > high {
        return Err(usage(format!(
            "{n} does not fit a `{kind}` ({low} to {high})"
        )));
    }
    out.copy_from_slice(&n.to_le_bytes()[..size]);
    Ok(())
}

/// A short description of a Python value for messages: `'abc' (str)`.
pub fn describe(value: &Bound<'_, PyAny>) -> String {
    let repr = value
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".into());
    let repr = if repr.chars().count() > 40 {
        format!("{}...", repr.chars().take(37).collect::<String>())
    } else {
        repr
    };
    let type_name = value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    format!("{repr} ({type_name})")
}

/// The Python value of an element's bytes: a number, a tuple for a vector, a tuple of the
/// fields for a struct.
pub fn from_bytes<'py>(
    py: Python<'py>,
    bytes: &[u8],
    element: &ElementType,
) -> PyResult<Bound<'py, PyAny>> {
    match element {
        ElementType::Value(v) if v.is_scalar() => scalar(py, bytes, v.kind),
        ElementType::Value(v) => {
            let size = v.kind.size() as usize;
            let parts = (0..usize::from(v.width))
                .map(|k| scalar(py, &bytes[k * size..(k + 1) * size], v.kind))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyTuple::new(py, parts)?.into_any())
        }
        ElementType::Struct(layout) => {
            let parts = layout
                .fields
                .iter()
                .map(|f| from_bytes(py, &bytes[f.offset..f.offset + f.ty.size()], &f.ty))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyTuple::new(py, parts)?.into_any())
        }
    }
}

fn scalar<'py>(py: Python<'py>, bytes: &[u8], kind: ScalarKind) -> PyResult<Bound<'py, PyAny>> {
    let mut raw = [0u8; 8];
    raw[..bytes.len()].copy_from_slice(bytes);
    let unsigned = u64::from_le_bytes(raw);
    let bits = kind.size() * 8;
    let value = match kind {
        ScalarKind::Bool => (unsigned != 0).into_pyobject(py)?.to_owned().into_any(),
        ScalarKind::F32 => f32::from_le_bytes(raw[..4].try_into().unwrap_or_default())
            .into_pyobject(py)?
            .into_any(),
        ScalarKind::F64 => f64::from_bits(unsigned).into_pyobject(py)?.into_any(),
        _ if kind.is_signed() => {
            let shift = 64 - bits;
            (((unsigned << shift) as i64) >> shift)
                .into_pyobject(py)?
                .into_any()
        }
        _ => unsigned.into_pyobject(py)?.into_any(),
    };
    Ok(value)
}
