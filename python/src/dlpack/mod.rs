//! Zero-copy interchange through DLPack (the `__dlpack__` protocol of the Python array API):
//! a stream's memory given to PyTorch, CuPy, JAX or NumPy, and theirs taken as a stream's.
//!
//! Both capsules of `dlpack.h` ([`abi`]): the versioned one of DLPack 1.0 where the other
//! side asks for or gives it (`max_version`), else the unversioned one every library takes.
//! A stream shares its buffer as it is (`brook_runtime::shared_memory`): the CPU device's in
//! host memory, a CUDA device's in device memory of the primary context. Order between
//! libraries: an exported stream's work is finished first ([`export`]); an imported array is
//! asked for with the device's CUDA stream, so the producer makes Brook's stream wait for its
//! work (the protocol's `stream=` argument).

mod abi;
mod export;

pub use export::export;

use crate::elements::{brook_name, element_of, trailing_axis};
use crate::errors::{runtime, usage};
use abi::{
    kind_of, DlManagedTensor, DlManagedTensorVersioned, DlTensor, CPU, CUDA, LEGACY, READ_ONLY,
    VERSION, VERSIONED,
};
use brook_ir::ValueType;
use brook_runtime::shared_memory::{ForeignMemory, MemorySpace};
use brook_runtime::{ElementType, RawStream};
use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `(device type, device id)` of a stream's memory.
pub fn device_of(stream: &RawStream) -> PyResult<(i32, i32)> {
    match stream.device().memory_space() {
        Some(MemorySpace::Host) => Ok((CPU, 0)),
        Some(MemorySpace::Cuda { ordinal, .. }) => Ok((CUDA, ordinal as i32)),
        None => Err(PyBufferError::new_err(format!(
            "{} does not share stream memory (only the CPU device and CUDA devices do): copy \
             with stream.numpy()",
            stream.device().info().short_name()
        ))),
    }
}

/// A taken DLPack tensor, of either kind: its deleter runs when the stream's buffer is
/// dropped.
enum Taken {
    Legacy(*mut DlManagedTensor),
    Versioned(*mut DlManagedTensorVersioned),
}

// SAFETY: DLPack's deleters may be called from any thread (NumPy's and CuPy's take the GIL
// themselves); the tensor is not touched otherwise.
unsafe impl Send for Taken {}
// SAFETY: as above; nothing reads through the pointer after the stream is made.
unsafe impl Sync for Taken {}

impl Taken {
    /// The tensor.
    ///
    /// # Safety
    /// The tensor is live (not yet dropped).
    unsafe fn tensor(&self) -> &DlTensor {
        // SAFETY: as the caller promises.
        unsafe {
            match self {
                Taken::Legacy(m) => &(**m).dl_tensor,
                Taken::Versioned(m) => &(**m).dl_tensor,
            }
        }
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        // SAFETY: the producer's tensor, handed over by its capsule; deleted once, here.
        unsafe {
            match *self {
                Taken::Legacy(m) => {
                    if let Some(deleter) = (*m).deleter {
                        deleter(m);
                    }
                }
                Taken::Versioned(m) => {
                    if let Some(deleter) = (*m).deleter {
                        deleter(m);
                    }
                }
            }
        }
    }
}

/// The tensor in `capsule` (versioned or not), taken: the capsule renamed so that it no
/// longer frees it. A versioned tensor of another major version, or a read-only one, is
/// refused and left to its capsule.
///
/// # Safety
/// `capsule` is what a `__dlpack__` returned.
unsafe fn take(py: Python<'_>, capsule: &Bound<'_, PyAny>) -> PyResult<Taken> {
    let c = capsule.as_ptr();
    // SAFETY: a capsule named as the protocol says holds that kind of managed tensor.
    unsafe {
        if ffi::PyCapsule_IsValid(c, VERSIONED.0.as_ptr()) == 1 {
            let m =
                ffi::PyCapsule_GetPointer(c, VERSIONED.0.as_ptr()) as *mut DlManagedTensorVersioned;
            let version = (*m).version;
            if version.major != VERSION.major {
                return Err(usage(format!(
                    "the array came as DLPack {}.{}; Brook takes DLPack {}.x",
                    version.major, version.minor, VERSION.major
                )));
            }
            if (*m).flags & READ_ONLY != 0 {
                return Err(usage(
                    "the array is read-only and a stream's memory is written: copy it with \
                     brook.Stream.from_numpy"
                        .to_string(),
                ));
            }
            if ffi::PyCapsule_SetName(c, VERSIONED.1.as_ptr()) != 0 {
                return Err(PyErr::fetch(py));
            }
            return Ok(Taken::Versioned(m));
        }
        let m = ffi::PyCapsule_GetPointer(c, LEGACY.0.as_ptr());
        if m.is_null() {
            return Err(PyErr::fetch(py));
        }
        if ffi::PyCapsule_SetName(c, LEGACY.1.as_ptr()) != 0 {
            return Err(PyErr::fetch(py));
        }
        Ok(Taken::Legacy(m as *mut DlManagedTensor))
    }
}

/// `array.__dlpack__(**kwargs)`, asking for a versioned capsule first; a producer that
/// does not take `max_version` (DLPack before 1.0) is asked again without it.
fn request<'py>(
    array: &Bound<'py, PyAny>,
    kwargs: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyAny>> {
    let versioned = kwargs.copy()?;
    versioned.set_item("max_version", (VERSION.major, VERSION.minor))?;
    match array.call_method("__dlpack__", (), Some(&versioned)) {
        Err(e) if e.is_instance_of::<PyTypeError>(array.py()) => {
            array.call_method("__dlpack__", (), Some(kwargs))
        }
        other => other,
    }
}

/// A stream over the memory of `array` (anything with `__dlpack__`), on `device` or the
/// device of the array's memory (`cpu:0`, or `cuda:N`).
pub fn import(
    py: Python<'_>,
    array: &Bound<'_, PyAny>,
    device: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<RawStream> {
    if let Ok(stream) = array.cast::<crate::stream::PyStream>() {
        return Ok(stream.get().raw());
    }
    let (device_type, device_id): (i32, i32) = array
        .call_method0("__dlpack_device__")
        .and_then(|d| d.extract())
        .map_err(|_| {
            usage(format!(
                "{} does not support DLPack (no __dlpack_device__): use brook.Stream.from_numpy",
                crate::values::describe(array)
            ))
        })?;
    let device = match device.filter(|d| !d.is_none()) {
        Some(d) => crate::device::resolve(py, Some(d))?,
        None => home_device(py, device_type, device_id)?,
    };
    let space = device.raw().memory_space();
    let kwargs = PyDict::new(py);
    match space {
        Some(MemorySpace::Host) if device_type == CPU => {}
        Some(MemorySpace::Cuda { ordinal, stream })
            if (CUDA, ordinal as i32) == (device_type, device_id) =>
        {
            kwargs.set_item("stream", stream)?;
        }
        _ => {
            return Err(usage(format!(
                "the array's memory (DLPack device {:?}) is not {}'s: pass device= the device \
                 that holds it, or copy with brook.Stream.from_numpy",
                (device_type, device_id),
                device.info().short_name()
            )))
        }
    }
    let capsule = request(array, &kwargs)?;
    // SAFETY: `capsule` is what `__dlpack__` returned.
    let tensor = unsafe { take(py, &capsule)? };
    // SAFETY: the tensor is live until `tensor` is dropped.
    let (address, dims, element) = unsafe { describe(tensor.tensor(), dtype)? };
    let bytes = dims.iter().product::<usize>() * element.size();
    let memory = ForeignMemory {
        address,
        bytes,
        keep: Box::new(tensor),
    };
    RawStream::adopt(device.raw(), element, &dims, memory).map_err(runtime)
}

/// The device that holds DLPack device `(type, id)`'s memory.
fn home_device(py: Python<'_>, device_type: i32, device_id: i32) -> PyResult<brook::Device> {
    let (name, ordinal) = match device_type {
        CPU => ("cpu", 0),
        CUDA => ("cuda", device_id.max(0) as usize),
        other => {
            return Err(usage(format!(
                "DLPack device type {other} has no Brook device (Brook shares the CPU's and \
                 CUDA's memory)"
            )))
        }
    };
    py.detach(move || brook::Device::find(name, ordinal))
        .map_err(crate::errors::to_py)
}

/// The address, Brook shape and element type of a tensor; `dtype` may ask for a vector
/// element (its width the tensor's last axis).
///
/// # Safety
/// `tensor` must be a live DLPack tensor.
unsafe fn describe(
    tensor: &DlTensor,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<(u64, Vec<usize>, ElementType)> {
    let kind = kind_of(tensor.dtype).ok_or_else(|| {
        usage(format!(
            "DLPack type (code {}, {} bits, {} lanes) has no Brook element type",
            tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes
        ))
    })?;
    let ndim = tensor.ndim.max(0) as usize;
    // SAFETY: `shape` and `strides` (when not null) have `ndim` entries (the protocol).
    let shape: Vec<usize> = (0..ndim)
        .map(|k| unsafe { *tensor.shape.add(k) }.max(0) as usize)
        .collect();
    if !tensor.strides.is_null() {
        let strides: Vec<i64> = (0..ndim)
            .map(|k| unsafe { *tensor.strides.add(k) })
            .collect();
        let mut expected = 1i64;
        for (k, (&extent, &stride)) in shape.iter().zip(&strides).enumerate().rev() {
            if extent > 1 && stride != expected {
                return Err(usage(format!(
                    "the array is not C-contiguous (axis {k} has stride {stride}, not \
                     {expected}): make it contiguous first (`.contiguous()`, \
                     `numpy.ascontiguousarray`)"
                )));
            }
            expected *= extent as i64;
        }
    }
    let mut element = ElementType::Value(ValueType::scalar(kind));
    let mut dims = shape.clone();
    if let Some(spec) = dtype.filter(|d| !d.is_none()) {
        let wanted = element_of(spec)?;
        let fits = matches!(&wanted, ElementType::Value(v) if v.kind == kind);
        if !fits {
            return Err(usage(format!(
                "the array holds {kind}, not {}: DLPack shares memory as it is (convert it first)",
                brook_name(&wanted)
            )));
        }
        if let Some(width) = trailing_axis(&wanted) {
            if dims.last() != Some(&width) {
                return Err(usage(format!(
                    "a {} stream needs the array's last axis to be {width}; its shape is {shape:?}",
                    brook_name(&wanted)
                )));
            }
            dims.pop();
        }
        element = wanted;
    }
    if dims.is_empty() {
        dims.push(1);
    }
    let address = tensor.data as u64 + tensor.byte_offset;
    Ok((address, dims, element))
}
