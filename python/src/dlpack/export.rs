//! A stream's memory as a DLPack capsule: versioned (DLPack 1.0) where the consumer asks for
//! it with `max_version`, else the unversioned capsule every consumer takes.

use super::abi::{
    data_type, DlDevice, DlManagedTensor, DlManagedTensorVersioned, DlTensor, LEGACY, VERSION,
    VERSIONED,
};
use crate::elements::brook_name;
use crate::errors::runtime;
use brook_runtime::{ElementType, RawStream};
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{c_void, CStr};

/// What an exported capsule owns: the managed tensor (first, so its address is this
/// struct's), its shape, and the stream keeping the buffer alive.
#[repr(C)]
struct Exported<M> {
    managed: M,
    shape: Vec<i64>,
    stream: RawStream,
}

/// A managed tensor of either kind, as a capsule holds it.
trait Managed: Sized {
    /// The capsule's name.
    const NAME: &'static CStr;
    /// Frees what the capsule holds when no consumer took it.
    const DESTROY: unsafe extern "C" fn(*mut ffi::PyObject);
    fn new(tensor: DlTensor) -> Self;
    fn tensor(&mut self) -> &mut DlTensor;
    fn set_context(&mut self, context: *mut c_void);
}

impl Managed for DlManagedTensor {
    const NAME: &'static CStr = LEGACY.0;
    const DESTROY: unsafe extern "C" fn(*mut ffi::PyObject) = destroy::<DlManagedTensor>;
    fn new(dl_tensor: DlTensor) -> Self {
        DlManagedTensor {
            dl_tensor,
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete::<DlManagedTensor>),
        }
    }
    fn tensor(&mut self) -> &mut DlTensor {
        &mut self.dl_tensor
    }
    fn set_context(&mut self, context: *mut c_void) {
        self.manager_ctx = context;
    }
}

impl Managed for DlManagedTensorVersioned {
    const NAME: &'static CStr = VERSIONED.0;
    const DESTROY: unsafe extern "C" fn(*mut ffi::PyObject) = destroy::<DlManagedTensorVersioned>;
    fn new(dl_tensor: DlTensor) -> Self {
        DlManagedTensorVersioned {
            version: VERSION,
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete::<DlManagedTensorVersioned>),
            flags: 0,
            dl_tensor,
        }
    }
    fn tensor(&mut self) -> &mut DlTensor {
        &mut self.dl_tensor
    }
    fn set_context(&mut self, context: *mut c_void) {
        self.manager_ctx = context;
    }
}

/// The deleter a consumer calls once: frees the box `export` made.
unsafe extern "C" fn delete<M: Managed>(managed: *mut M) {
    if !managed.is_null() {
        // SAFETY: the managed tensor is the first field of an `Exported<M>` box.
        drop(unsafe { Box::from_raw(managed as *mut Exported<M>) });
    }
}

/// The capsule's destructor: frees the tensor where no consumer took it (a consumer renames
/// what it took).
unsafe extern "C" fn destroy<M: Managed>(capsule: *mut ffi::PyObject) {
    // SAFETY: called by Python with the capsule.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, M::NAME.as_ptr()) == 1 {
            let managed = ffi::PyCapsule_GetPointer(capsule, M::NAME.as_ptr()) as *mut M;
            delete(managed);
        }
    }
}

/// Whether the consumer's `max_version` asks for a versioned capsule (DLPack 1.0 or later).
fn wants_versioned(max_version: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
    match max_version.filter(|v| !v.is_none()) {
        None => Ok(false),
        Some(v) => {
            let (major, _minor): (u32, u32) = v.extract()?;
            Ok(major >= VERSION.major)
        }
    }
}

/// The capsule of `stream`'s memory, once its queued work is done: on DLPack device
/// `dl_device` (which must be the stream's), a copy where `copy`, versioned where
/// `max_version` allows.
pub fn export<'py>(
    py: Python<'py>,
    stream: RawStream,
    (dl_device, copy): (Option<&Bound<'py, PyAny>>, Option<bool>),
    max_version: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (device_type, device_id) = super::device_of(&stream)?;
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
    let tensor = DlTensor {
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
    };
    if wants_versioned(max_version)? {
        capsule::<DlManagedTensorVersioned>(py, tensor, (shape, stream))
    } else {
        capsule::<DlManagedTensor>(py, tensor, (shape, stream))
    }
}

/// A capsule holding `tensor` as an `M`, owning `shape` and `stream`.
fn capsule<'py, M: Managed>(
    py: Python<'py>,
    tensor: DlTensor,
    (shape, stream): (Vec<i64>, RawStream),
) -> PyResult<Bound<'py, PyAny>> {
    let mut exported = Box::new(Exported {
        managed: M::new(tensor),
        shape,
        stream,
    });
    exported.managed.tensor().shape = exported.shape.as_mut_ptr();
    let raw = Box::into_raw(exported);
    // SAFETY: `raw` is a live box; the managed tensor is its first field.
    unsafe {
        (*raw).managed.set_context(raw as *mut c_void);
        let capsule = ffi::PyCapsule_New(raw as *mut c_void, M::NAME.as_ptr(), Some(M::DESTROY));
        if capsule.is_null() {
            drop(Box::from_raw(raw));
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, capsule))
    }
}
