//! Zero-copy interchange through DLPack (the `__dlpack__` protocol of the Python array API):
//! a stream's memory given to PyTorch, CuPy, JAX or NumPy, and theirs taken as a stream's.
//!
//! The structs are those of `dlpack.h` (v0.8, the unversioned capsule `"dltensor"`, which
//! every consumer takes). A stream shares its buffer as it is (`brook_runtime::shared_memory`):
//! the CPU device's in host memory, a CUDA device's in device memory of the primary context.
//! Order between libraries: an exported stream's work is finished first; an imported array is
//! asked for with the device's CUDA stream, so the producer makes Brook's stream wait for its
//! work (the protocol's `stream=` argument).

use crate::elements::{brook_name, element_of, trailing_axis};
use crate::errors::{runtime, usage};
use brook_ir::{ScalarKind, ValueType};
use brook_runtime::shared_memory::{ForeignMemory, MemorySpace};
use brook_runtime::{ElementType, RawStream};
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::ffi::{c_void, CStr};

const CPU: i32 = 1;
const CUDA: i32 = 2;
const NAME: &CStr = c"dltensor";
const USED_NAME: &CStr = c"used_dltensor";

#[repr(C)]
#[derive(Clone, Copy)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DlManagedTensor {
    dl_tensor: DlTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}

/// DLPack's type codes: int, uint, float, bool.
fn data_type(kind: ScalarKind) -> DlDataType {
    let code = match kind {
        ScalarKind::Bool => 6,
        ScalarKind::F32 | ScalarKind::F64 => 2,
        k if k.is_signed() => 0,
        _ => 1,
    };
    DlDataType {
        code,
        bits: (kind.size() * 8) as u8,
        lanes: 1,
    }
}

fn kind_of(dtype: DlDataType) -> Option<ScalarKind> {
    ScalarKind::ALL.into_iter().find(|&k| {
        dtype.lanes == 1 && data_type(k).code == dtype.code && data_type(k).bits == dtype.bits
    })
}

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

/// What an exported capsule owns: the tensor (first, so its address is this struct's), its
/// shape, and the stream keeping the buffer alive.
#[repr(C)]
struct Exported {
    tensor: DlManagedTensor,
    shape: Vec<i64>,
    stream: RawStream,
}

unsafe extern "C" fn delete_exported(tensor: *mut DlManagedTensor) {
    if !tensor.is_null() {
        // SAFETY: made by `export` from a `Box<Exported>`; the consumer calls this once.
        drop(unsafe { Box::from_raw((*tensor).manager_ctx as *mut Exported) });
    }
}

unsafe extern "C" fn destroy_capsule(capsule: *mut ffi::PyObject) {
    // SAFETY: called by Python with the capsule; a consumer renames what it took.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, NAME.as_ptr()) == 1 {
            let tensor = ffi::PyCapsule_GetPointer(capsule, NAME.as_ptr()) as *mut DlManagedTensor;
            if let Some(deleter) = (*tensor).deleter {
                deleter(tensor);
            }
        }
    }
}

/// The capsule of `stream`'s memory, once its queued work is done.
pub fn export<'py>(
    py: Python<'py>,
    stream: RawStream,
    dl_device: Option<&Bound<'py, PyAny>>,
    copy: Option<bool>,
) -> PyResult<Bound<'py, PyAny>> {
    let (device_type, device_id) = device_of(&stream)?;
    if let Some(wanted) = dl_device.filter(|d| !d.is_none()) {
        let wanted: (i32, i32) = wanted.extract()?;
        if wanted != (device_type, device_id) {
            return Err(PyBufferError::new_err(format!(
                "the stream is on DLPack device {:?}, not {wanted:?}",
                (device_type, device_id)
            )));
        }
    }
    let ElementType::Value(value) = stream.element().clone() else {
        return Err(PyBufferError::new_err(format!(
            "a {} stream cannot be shared through DLPack (it has no struct types): copy it \
             with stream.numpy()",
            brook_name(stream.element())
        )));
    };
    let stream = if copy == Some(true) {
        let fresh = RawStream::new(stream.device(), stream.element().clone(), stream.shape())
            .map_err(runtime)?;
        fresh.assign(&stream).map_err(runtime)?;
        fresh
    } else {
        stream
    };
    let finished = stream.clone();
    py.detach(move || {
        finished.finish();
        finished.device().synchronize()
    })
    .map_err(runtime)?;
    if let Some(code) = stream.error() {
        return Err(crate::errors::StreamError::new_err(format!(
            "the stream holds an error ({code}): {}",
            stream.error_log().trim_end()
        )));
    }
    let (_, address) = stream
        .shared_address()
        .map_err(|e| PyBufferError::new_err(e.to_string()))?;
    let shape: Vec<i64> = crate::stream::numpy_shape(&stream)
        .into_iter()
        .map(|n| n as i64)
        .collect();
    let mut exported = Box::new(Exported {
        tensor: DlManagedTensor {
            dl_tensor: DlTensor {
                data: address as *mut c_void,
                device: DlDevice {
                    device_type,
                    device_id,
                },
                ndim: shape.len() as i32,
                dtype: data_type(value.kind),
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_exported),
        },
        shape,
        stream,
    });
    exported.tensor.dl_tensor.shape = exported.shape.as_mut_ptr();
    let raw = Box::into_raw(exported);
    // SAFETY: `raw` is a live box; the tensor is its first field.
    unsafe {
        (*raw).tensor.manager_ctx = raw as *mut c_void;
        let capsule = ffi::PyCapsule_New(raw as *mut c_void, NAME.as_ptr(), Some(destroy_capsule));
        if capsule.is_null() {
            drop(Box::from_raw(raw));
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, capsule))
    }
}

/// A taken DLPack tensor: its deleter runs when the stream's buffer is dropped.
struct Taken(*mut DlManagedTensor);

// SAFETY: DLPack's deleters may be called from any thread (NumPy's and CuPy's take the GIL
// themselves); the tensor is not touched otherwise.
unsafe impl Send for Taken {}
// SAFETY: as above; nothing reads through the pointer after the stream is made.
unsafe impl Sync for Taken {}

impl Drop for Taken {
    fn drop(&mut self) {
        // SAFETY: the producer's tensor, handed over by its capsule; deleted once, here.
        unsafe {
            if let Some(deleter) = (*self.0).deleter {
                deleter(self.0);
            }
        }
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
    let capsule = array.call_method("__dlpack__", (), Some(&kwargs))?;
    // SAFETY: a capsule named "dltensor" holds a `DLManagedTensor` (the protocol).
    let tensor = unsafe {
        let pointer = ffi::PyCapsule_GetPointer(capsule.as_ptr(), NAME.as_ptr());
        if pointer.is_null() {
            return Err(PyErr::fetch(py));
        }
        if ffi::PyCapsule_SetName(capsule.as_ptr(), USED_NAME.as_ptr()) != 0 {
            return Err(PyErr::fetch(py));
        }
        Taken(pointer as *mut DlManagedTensor)
    };
    // SAFETY: the tensor is live until `tensor` is dropped.
    let (address, dims, element) = unsafe { describe(&(*tensor.0).dl_tensor, dtype)? };
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
