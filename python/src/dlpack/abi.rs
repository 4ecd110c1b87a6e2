//! The structs of `dlpack.h` as Brook shares them: the tensor, the unversioned managed tensor
//! (capsule `"dltensor"`, which every consumer takes) and the versioned one of DLPack 1.0
//! (capsule `"dltensor_versioned"`, which consumers ask for with `max_version`), and the
//! mapping between DLPack's data types and Brook's scalars.

use brook_ir::ScalarKind;
use std::ffi::{c_void, CStr};

/// DLPack's device types Brook shares memory with.
pub const CPU: i32 = 1;
pub const CUDA: i32 = 2;

/// The capsule names: a producer's, and a consumer's once it has taken the tensor.
pub const LEGACY: (&CStr, &CStr) = (c"dltensor", c"used_dltensor");
pub const VERSIONED: (&CStr, &CStr) = (c"dltensor_versioned", c"used_dltensor_versioned");

/// The version of the versioned tensors Brook makes and takes.
pub const VERSION: DlPackVersion = DlPackVersion { major: 1, minor: 0 };

/// A versioned tensor's flag: its memory must not be written.
pub const READ_ONLY: u64 = 1;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DlDevice {
    pub device_type: i32,
    pub device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DlDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

#[repr(C)]
pub struct DlTensor {
    pub data: *mut c_void,
    pub device: DlDevice,
    pub ndim: i32,
    pub dtype: DlDataType,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}

#[repr(C)]
pub struct DlManagedTensor {
    pub dl_tensor: DlTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DlPackVersion {
    pub major: u32,
    pub minor: u32,
}

#[repr(C)]
pub struct DlManagedTensorVersioned {
    pub version: DlPackVersion,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(*mut DlManagedTensorVersioned)>,
    pub flags: u64,
    pub dl_tensor: DlTensor,
}

/// DLPack's type codes: int, uint, float, bool.
pub fn data_type(kind: ScalarKind) -> DlDataType {
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

/// The Brook scalar of a DLPack data type, where there is one.
pub fn kind_of(dtype: DlDataType) -> Option<ScalarKind> {
    ScalarKind::ALL.into_iter().find(|&k| {
        dtype.lanes == 1 && data_type(k).code == dtype.code && data_type(k).bits == dtype.bits
    })
}
