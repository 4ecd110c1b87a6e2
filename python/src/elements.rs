//! Element types between Brook and NumPy.
//!
//! A Brook scalar is a NumPy scalar type (`float` is `float32`, `long` is `int64`, `bool` is
//! `bool`); a vector (`float4`) is its component's type with a trailing axis of its width; a
//! struct is a structured dtype laid out as C lays out the struct (`np.dtype([...],
//! align=True)`). Where an element type is asked for, a Brook name (`"float4"`, `"uint"`)
//! comes first, then anything `numpy.dtype()` takes: `"float"` is Brook's 32-bit `float`.

use crate::errors::usage;
use brook_ir::{ScalarKind, ValueType};
use brook_runtime::ElementType;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

/// NumPy's name of a scalar kind's type.
pub fn numpy_name(kind: ScalarKind) -> &'static str {
    match kind {
        ScalarKind::Bool => "bool",
        ScalarKind::I8 => "int8",
        ScalarKind::U8 => "uint8",
        ScalarKind::I16 => "int16",
        ScalarKind::U16 => "uint16",
        ScalarKind::I32 => "int32",
        ScalarKind::U32 => "uint32",
        ScalarKind::I64 => "int64",
        ScalarKind::U64 => "uint64",
        ScalarKind::F32 => "float32",
        ScalarKind::F64 => "float64",
    }
}

/// The scalar kind of a NumPy type character (`dtype.kind`) and size.
fn kind_of(kind: char, size: usize) -> Option<ScalarKind> {
    ScalarKind::ALL.into_iter().find(|k| {
        k.size() as usize == size
            && match kind {
                'b' => *k == ScalarKind::Bool,
                'f' => k.is_float(),
                'i' => k.is_integer() && k.is_signed(),
                'u' => k.is_integer() && !k.is_signed(),
                _ => false,
            }
    })
}

/// The element type a user named: a Brook name, or a NumPy dtype (or what makes one).
pub fn element_of(spec: &Bound<'_, PyAny>) -> PyResult<ElementType> {
    if spec.is_instance_of::<PyString>() {
        if let Some(value) = ValueType::from_brook_name(&spec.extract::<String>()?) {
            return Ok(ElementType::Value(value));
        }
    }
    let py = spec.py();
    let dtype = numpy_dtype(py)?.call1((spec,)).map_err(|_| {
        usage(format!(
            "`{}` is not an element type: use a Brook type (`float`, `int2`, `float4`) or a \
             NumPy dtype",
            spec.str().map(|s| s.to_string()).unwrap_or_default()
        ))
    })?;
    element_of_dtype(&dtype)
}

/// The element type of a NumPy dtype: a scalar type, or a structured dtype laid out as C
/// lays out the struct.
pub fn element_of_dtype(dtype: &Bound<'_, PyAny>) -> PyResult<ElementType> {
    if let Some(value) = value_of_dtype(dtype)? {
        return Ok(ElementType::Value(value));
    }
    let names = dtype.getattr("names")?;
    if names.is_none() {
        return Err(usage(format!(
            "NumPy dtype `{}` has no Brook element type (Brook has bool, 8 to 64-bit integers, \
             float32, float64, their vectors and structs of them)",
            dtype.str()?
        )));
    }
    let fields = dtype.getattr("fields")?;
    let mut laid_out = Vec::new();
    let mut offsets = Vec::new();
    for name in names.cast::<PyTuple>()?.iter() {
        let field = fields.get_item(&name)?;
        let (field_dtype, offset): (Bound<'_, PyAny>, usize) =
            (field.get_item(0)?, field.get_item(1)?.extract()?);
        laid_out.push((name.extract::<String>()?, field_element(&field_dtype)?));
        offsets.push(offset);
    }
    let element = ElementType::structure("numpy", laid_out);
    let ElementType::Struct(layout) = &element else {
        unreachable!("a structure is a struct")
    };
    let itemsize: usize = dtype.getattr("itemsize")?.extract()?;
    let same = layout.size == itemsize
        && layout
            .fields
            .iter()
            .zip(&offsets)
            .all(|(f, &offset)| f.offset == offset);
    if !same {
        return Err(usage(format!(
            "the structured dtype {} is not laid out as C lays out the struct (offsets {:?}, \
             size {}): make it with `numpy.dtype([...], align=True)`",
            dtype.str()?,
            layout.fields.iter().map(|f| f.offset).collect::<Vec<_>>(),
            layout.size
        )));
    }
    Ok(element)
}

/// A struct field's element type: a scalar, a vector (a sub-array of 2 to 4), or a struct.
fn field_element(dtype: &Bound<'_, PyAny>) -> PyResult<ElementType> {
    let sub = dtype.getattr("subdtype")?;
    if sub.is_none() {
        return element_of_dtype(dtype);
    }
    let (base, shape): (Bound<'_, PyAny>, Vec<usize>) = sub.extract()?;
    match (value_of_dtype(&base)?, shape.as_slice()) {
        (Some(v), &[width]) if v.is_scalar() && (2..=4).contains(&width) => {
            Ok(ElementType::Value(ValueType::vector(v.kind, width as u8)))
        }
        _ => Err(usage(format!(
            "struct field of dtype {} has no Brook type (a sub-array field must be one axis of \
             2 to 4 numbers: a vector)",
            dtype.str()?
        ))),
    }
}

/// The scalar type of a plain NumPy dtype, `None` for a structured one.
fn value_of_dtype(dtype: &Bound<'_, PyAny>) -> PyResult<Option<ValueType>> {
    if !dtype.getattr("names")?.is_none() || !dtype.getattr("subdtype")?.is_none() {
        return Ok(None);
    }
    let kind: String = dtype.getattr("kind")?.extract()?;
    let size: usize = dtype.getattr("itemsize")?.extract()?;
    let order: String = dtype.getattr("byteorder")?.extract()?;
    if order == ">" {
        return Err(usage(format!(
            "dtype {} is big-endian: convert it with `.astype(dtype.newbyteorder('='))`",
            dtype.str()?
        )));
    }
    let kind = kind.chars().next().and_then(|c| kind_of(c, size));
    match kind {
        Some(kind) => Ok(Some(ValueType::scalar(kind))),
        None => Err(usage(format!(
            "NumPy dtype `{}` has no Brook element type (Brook has bool, 8 to 64-bit integers, \
             float32 and float64)",
            dtype.str()?
        ))),
    }
}

/// `numpy.dtype`.
pub fn numpy_dtype(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    py.import("numpy")?.getattr("dtype")
}

/// The NumPy dtype of an element: a vector's is its component's (the array has a trailing
/// axis), a struct's a structured dtype with the struct's offsets.
pub fn dtype_of<'py>(py: Python<'py>, element: &ElementType) -> PyResult<Bound<'py, PyAny>> {
    match element {
        ElementType::Value(v) => numpy_dtype(py)?.call1((numpy_name(v.kind),)),
        ElementType::Struct(layout) => {
            let spec = PyDict::new(py);
            let names = PyList::empty(py);
            let formats = PyList::empty(py);
            let offsets = PyList::empty(py);
            for field in &layout.fields {
                names.append(&field.name)?;
                formats.append(field_format(py, &field.ty)?)?;
                offsets.append(field.offset)?;
            }
            spec.set_item("names", names)?;
            spec.set_item("formats", formats)?;
            spec.set_item("offsets", offsets)?;
            spec.set_item("itemsize", layout.size)?;
            numpy_dtype(py)?.call1((spec,))
        }
    }
}

/// A struct field's format for `numpy.dtype`: `(float32, (4,))` for a `float4`.
fn field_format<'py>(py: Python<'py>, ty: &ElementType) -> PyResult<Bound<'py, PyAny>> {
    let base = dtype_of(py, ty)?;
    match ty {
        ElementType::Value(v) if !v.is_scalar() => {
            Ok(PyTuple::new(py, [base, PyTuple::new(py, [v.width])?.into_any()])?.into_any())
        }
        _ => Ok(base),
    }
}

/// The element's width as a trailing NumPy axis: `Some(4)` for `float4`, `None` otherwise.
pub fn trailing_axis(element: &ElementType) -> Option<usize> {
    match element {
        ElementType::Value(v) if !v.is_scalar() => Some(usize::from(v.width)),
        _ => None,
    }
}

/// The Brook name of an element type (`float4`, or `struct numpy` style for a struct).
pub fn brook_name(element: &ElementType) -> String {
    element.to_string()
}
