//! `brook.Stream`: a stream on a device, made from and copied to NumPy arrays.
//!
//! The shape is Brook's, slowest axis first, without a vector's trailing axis: a `float4`
//! stream of shape `(h, w)` is a NumPy array of shape `(h, w, 4)`.

use crate::device::{resolve, PyDevice};
use crate::elements::{brook_name, dtype_of, element_of, trailing_axis};
use crate::errors::{runtime, to_py, usage};
use brook_runtime::{ElementType, RawStream};
use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::sync::Mutex;

/// A stream of elements on a device. Its contents stay on the device: `numpy()` copies them
/// out, `read(array)` copies an array in; kernels read and write it in place.
#[pyclass(name = "Stream", module = "brook", frozen)]
pub struct PyStream {
    /// Replaced when a kernel's `vout` parameter fills the stream.
    raw: Mutex<RawStream>,
}

/// An address that may cross into code running without the GIL (the memory is kept alive by
/// the caller, which holds the array).
#[derive(Clone, Copy)]
struct Address(usize);

impl PyStream {
    pub fn wrap(raw: RawStream) -> PyStream {
        PyStream {
            raw: Mutex::new(raw),
        }
    }

    /// The stream (a cheap handle on the same memory).
    pub fn raw(&self) -> RawStream {
        self.raw.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Makes this object the stream `raw` (a vout's result).
    pub fn replace(&self, raw: RawStream) {
        *self.raw.lock().unwrap_or_else(|p| p.into_inner()) = raw;
    }
}

#[pymethods]
impl PyStream {
    /// A stream holding a copy of `array` on `device` (the default device if `None`).
    /// `dtype` picks the element type (a Brook name such as `"float4"`, or a NumPy dtype);
    /// without it the array's dtype decides. A vector type takes the array's last axis.
    #[staticmethod]
    #[pyo3(signature = (array, device=None, dtype=None))]
    fn from_numpy(
        py: Python<'_>,
        array: &Bound<'_, PyAny>,
        device: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyStream> {
        let device = resolve(py, device)?;
        let element = match dtype {
            Some(d) if !d.is_none() => Some(element_of(d)?),
            _ => None,
        };
        upload(py, array, &device, element.as_ref()).map(PyStream::wrap)
    }

    /// A zero-filled stream of `shape` (an int or a tuple, slowest axis first).
    #[staticmethod]
    #[pyo3(signature = (shape, dtype=None, device=None))]
    fn empty(
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
        device: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyStream> {
        let device = resolve(py, device)?;
        let element = match dtype {
            Some(d) if !d.is_none() => element_of(d)?,
            _ => ElementType::Value(brook_ir::ValueType::scalar(brook_ir::ScalarKind::F32)),
        };
        let dims = shape_of(shape)?;
        let stream = RawStream::new(device.raw(), element, &dims).map_err(runtime)?;
        Ok(PyStream::wrap(stream))
    }

    /// A stream over the memory of `array` (a PyTorch, CuPy or JAX array on a CUDA device,
    /// or a NumPy array on the CPU) without a copy: see `brook.Stream.__dlpack__`.
    #[staticmethod]
    #[pyo3(signature = (array, device=None, dtype=None))]
    fn from_dlpack(
        py: Python<'_>,
        array: &Bound<'_, PyAny>,
        device: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyStream> {
        crate::dlpack::import(py, array, device, dtype).map(PyStream::wrap)
    }

    /// Copies `array` (the stream's shape and element type) into the stream.
    fn read(&self, py: Python<'_>, array: &Bound<'_, PyAny>) -> PyResult<()> {
        let stream = self.raw();
        let element = stream.element().clone();
        let (array, _) = host_array(py, array, Some(&element))?;
        let dims = brook_shape(&array, &element)?;
        if dims != stream.shape() {
            return Err(usage(format!(
                "the array's shape {:?} is not the stream's {:?}",
                array.shape(),
                numpy_shape(&stream)
            )));
        }
        copy_in(py, &stream, &array, &element)
    }

    /// The stream's elements in a new NumPy array (waits for the kernels writing them).
    fn numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let stream = self.raw();
        let element = stream.element().clone();
        let numpy = py.import("numpy")?;
        let shape = PyTuple::new(py, numpy_shape(&stream))?;
        let out = numpy.call_method1("empty", (shape, dtype_of(py, &element)?))?;
        let array = out.cast::<PyUntypedArray>()?;
        let (address, bytes) = (Address(data_address(array)), array_bytes(array));
        py.detach(move || {
            // SAFETY: `out` (held by the caller's frame) owns `bytes` writable bytes there.
            let host = unsafe { std::slice::from_raw_parts_mut(address.0 as *mut u8, bytes) };
            stream.write_bytes(&element, host)
        })
        .map_err(runtime)?;
        Ok(out)
    }

    /// `numpy.asarray(stream)`: the elements, copied.
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if copy == Some(false) {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "a brook.Stream cannot be seen as a NumPy array without a copy (use \
                 numpy.from_dlpack(stream) on the CPU device)",
            ));
        }
        let array = self.numpy(py)?;
        match dtype {
            Some(d) if !d.is_none() => array.call_method1("astype", (d,)),
            _ => Ok(array),
        }
    }

    /// The shape, slowest axis first (without a vector's trailing axis).
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.raw().shape())
    }

    #[getter]
    fn ndim(&self) -> usize {
        self.raw().shape().len()
    }

    /// The NumPy dtype of `numpy()`'s array (a vector's component type).
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        dtype_of(py, self.raw().element())
    }

    /// The Brook element type: `float`, `float4`, `struct numpy`.
    #[getter]
    fn element(&self) -> String {
        brook_name(self.raw().element())
    }

    #[getter]
    fn device(&self) -> PyDevice {
        PyDevice::of(brook::Device::from_raw(self.raw().device().clone()))
    }

    /// The view of the box from `start` to `end` (exclusive), slowest axis first, sharing this
    /// stream's memory (Brook+ `domain`).
    fn domain(&self, start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<PyStream> {
        let (start, end) = (shape_of(start)?, shape_of(end)?);
        let start: Vec<usize> = start.into_iter().rev().collect();
        let end: Vec<usize> = end.into_iter().rev().collect();
        let view = self.raw().domain(&start, &end).map_err(runtime)?;
        Ok(PyStream::wrap(view))
    }

    /// Copies `source` (the same shape and element type, on any device) into this stream.
    fn assign(&self, py: Python<'_>, source: &Bound<'_, PyStream>) -> PyResult<()> {
        let (target, source) = (self.raw(), source.get().raw());
        py.detach(move || target.assign(&source)).map_err(runtime)
    }

    /// Waits for the stream's queued work; raises `StreamError` if the stream holds an error.
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        let stream = self.raw();
        py.detach(move || finish(&stream)).map_err(to_py)
    }

    /// Every error and warning recorded on the stream ("" when none).
    #[getter]
    fn error_log(&self) -> String {
        self.raw().error_log()
    }

    fn __len__(&self) -> usize {
        self.raw().len()
    }

    fn __repr__(&self) -> String {
        let stream = self.raw();
        format!(
            "brook.Stream({} {:?} on {})",
            brook_name(stream.element()),
            stream.shape(),
            crate::device::spec_of(&brook::Device::from_raw(stream.device().clone()))
        )
    }

    /// The DLPack capsule of the stream's memory (PyTorch's `torch.from_dlpack(stream)`,
    /// CuPy's, NumPy's): shared, not copied. Streams of the CPU and CUDA devices only.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<&Bound<'py, PyAny>>,
        max_version: Option<&Bound<'py, PyAny>>,
        dl_device: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = stream;
        crate::dlpack::export(py, self.raw(), (dl_device, copy), max_version)
    }

    /// `(device type, device id)` as DLPack numbers them: `(1, 0)` for the CPU, `(2, n)` for
    /// CUDA device `n`.
    fn __dlpack_device__(&self) -> PyResult<(i32, i32)> {
        crate::dlpack::device_of(&self.raw())
    }
}

/// Waits for `stream`'s work; the stream's error if it then holds one.
fn finish(stream: &RawStream) -> Result<(), brook::Error> {
    if stream.finish() {
        return Ok(());
    }
    Err(brook::Error::Stream {
        code: stream.error().unwrap_or(brook_runtime::BError::Kernel),
        log: stream.error_log().trim_end().to_string(),
    })
}

/// The NumPy shape of a stream: its shape, then a vector's width.
pub fn numpy_shape(stream: &RawStream) -> Vec<usize> {
    let mut shape = stream.shape().to_vec();
    shape.extend(trailing_axis(stream.element()));
    shape
}

/// A shape given as an int or a sequence of ints.
pub fn shape_of(shape: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    if let Ok(n) = shape.extract::<usize>() {
        return Ok(vec![n]);
    }
    shape.extract::<Vec<usize>>().map_err(|_| {
        usage(format!(
            "a shape is an int or a tuple of ints, not {}",
            crate::values::describe(shape)
        ))
    })
}

/// A new stream on `device` holding a copy of `array` (its elements converted to `element`,
/// or of its own type).
pub fn upload(
    py: Python<'_>,
    array: &Bound<'_, PyAny>,
    device: &brook::Device,
    element: Option<&ElementType>,
) -> PyResult<RawStream> {
    let (array, element) = host_array(py, array, element)?;
    let dims = brook_shape(&array, &element)?;
    let stream = RawStream::new(device.raw(), element.clone(), &dims).map_err(runtime)?;
    copy_in(py, &stream, &array, &element)?;
    Ok(stream)
}

/// `array` as a C-contiguous NumPy array of `element`s (or of its own type), and that
/// element type.
fn host_array<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyAny>,
    element: Option<&ElementType>,
) -> PyResult<(Bound<'py, PyUntypedArray>, ElementType)> {
    let numpy = py.import("numpy")?;
    let element = element.cloned();
    let converted = match &element {
        Some(e) => numpy.call_method1("ascontiguousarray", (array, dtype_of(py, e)?)),
        None => numpy.call_method1("ascontiguousarray", (array,)),
    }
    .map_err(|e| {
        usage(format!(
            "{} cannot be made a NumPy array{}: {e}",
            crate::values::describe(array),
            element
                .as_ref()
                .map(|e| format!(" of {}", brook_name(e)))
                .unwrap_or_default()
        ))
    })?;
    let converted = converted.cast_into::<PyUntypedArray>()?;
    let element = match element {
        Some(e) => e,
        None => crate::elements::element_of_dtype(converted.dtype().as_any())?,
    };
    Ok((converted, element))
}

/// The Brook shape of a host array of `element`s: its shape less a vector's trailing axis;
/// `[1]` for a single element.
fn brook_shape(array: &Bound<'_, PyUntypedArray>, element: &ElementType) -> PyResult<Vec<usize>> {
    let mut dims = array.shape().to_vec();
    if let Some(width) = trailing_axis(element) {
        if dims.last() != Some(&width) {
            return Err(usage(format!(
                "a {} array needs a last axis of {width}; this one's shape is {:?}",
                brook_name(element),
                array.shape()
            )));
        }
        dims.pop();
    }
    if dims.is_empty() {
        dims.push(1);
    }
    Ok(dims)
}

/// Copies a contiguous host array into `stream` without the GIL.
fn copy_in(
    py: Python<'_>,
    stream: &RawStream,
    array: &Bound<'_, PyUntypedArray>,
    element: &ElementType,
) -> PyResult<()> {
    let (address, bytes) = (Address(data_address(array)), array_bytes(array));
    let (stream, element) = (stream.clone(), element.clone());
    py.detach(move || {
        // SAFETY: the caller holds the contiguous array, which has `bytes` bytes there.
        let host = unsafe { std::slice::from_raw_parts(address.0 as *const u8, bytes) };
        stream.read_bytes(&element, host)
    })
    .map_err(runtime)
}

/// The address of a NumPy array's first element.
fn data_address(array: &Bound<'_, PyUntypedArray>) -> usize {
    // SAFETY: a live array object's struct.
    unsafe { (*array.as_array_ptr()).fields.data as usize }
}

/// The bytes of a contiguous array.
fn array_bytes(array: &Bound<'_, PyUntypedArray>) -> usize {
    let itemsize: usize = array
        .dtype()
        .getattr("itemsize")
        .and_then(|i| i.extract())
        .unwrap_or(0);
    array.len() * itemsize
}
