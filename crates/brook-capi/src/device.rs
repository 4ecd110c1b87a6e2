//! Devices (Brook+ `getDevices`, `useDevices`, `Device::getType`, `getBindings`), named by
//! their position in the runtime's device list.

use crate::{guard, text};
use brook_runtime::{devices, get_devices, use_devices, Device};
use std::ffi::c_char;
use std::sync::Arc;

/// A device's number: its position in the runtime's list, or one past the list's end for the
/// default device where that is a device group (`BRT_RUNTIME=cuda:all`), which the list does
/// not hold.
fn index_of(device: &Arc<dyn Device>) -> u32 {
    devices()
        .iter()
        .position(|d| Arc::ptr_eq(d, device))
        .unwrap_or(devices().len()) as u32
}

/// The device numbered `index` ([`index_of`]).
fn device_at(index: u32) -> Option<Arc<dyn Device>> {
    let index = index as usize;
    match devices().get(index) {
        Some(d) => Some(d.clone()),
        None if index == devices().len() => Some(brook_runtime::default_device()),
        None => None,
    }
}

/// The devices of type `type_name` (`"all"`, `"cpu"`, `"interp"`, `"cuda"`, `"cal"`): writes up
/// to `capacity` of their numbers to `out` and returns how many there are (0 for an unknown
/// type or a type this machine has none of).
///
/// # Safety
/// `type_name` is null or a C string; `out` is null or has room for `capacity` numbers.
#[no_mangle]
pub unsafe extern "C" fn brk_devices(
    type_name: *const c_char,
    out: *mut u32,
    capacity: u32,
) -> u32 {
    guard(0, || {
        // SAFETY: as documented.
        let name = unsafe { text(type_name) }.unwrap_or("all");
        let found = get_devices(name).unwrap_or_default();
        if !out.is_null() {
            for (i, device) in found.iter().take(capacity as usize).enumerate() {
                // SAFETY: `out` has room for `capacity` numbers.
                unsafe { *out.add(i) = index_of(device) };
            }
        }
        found.len() as u32
    })
}

/// The type name of device `index` (`"cpu"`, `"interp"`, `"cuda"`, `"group"`; `""` for no
/// such device).
#[no_mangle]
pub extern "C" fn brk_device_type(index: u32) -> *const c_char {
    guard(c"".as_ptr(), || match device_at(index) {
        Some(d) => match d.info().kind.name() {
            "cpu" => c"cpu".as_ptr(),
            "cuda" => c"cuda".as_ptr(),
            "interp" => c"interp".as_ptr(),
            "group" => c"group".as_ptr(),
            _ => c"".as_ptr(),
        },
        None => c"".as_ptr(),
    })
}

/// The calling thread's devices from now on (`count` 0: back to the default); unknown numbers
/// are skipped.
///
/// # Safety
/// `indices` is null or points at `count` numbers.
#[no_mangle]
pub unsafe extern "C" fn brk_use_devices(indices: *const u32, count: u32) {
    guard((), || {
        let chosen: Vec<Arc<dyn Device>> = if indices.is_null() {
            Vec::new()
        } else {
            // SAFETY: `count` numbers, as documented.
            unsafe { std::slice::from_raw_parts(indices, count as usize) }
                .iter()
                .filter_map(|&i| device_at(i))
                .collect()
        };
        use_devices(&chosen);
    })
}

/// The calling thread's devices (the default device if it chose none): writes up to
/// `capacity` numbers to `out` and returns how many there are.
///
/// # Safety
/// `out` is null or has room for `capacity` numbers.
#[no_mangle]
pub unsafe extern "C" fn brk_thread_devices(out: *mut u32, capacity: u32) -> u32 {
    guard(0, || {
        let current = brook_runtime::thread_devices();
        if !out.is_null() {
            for (i, device) in current.iter().take(capacity as usize).enumerate() {
                // SAFETY: `out` has room for `capacity` numbers.
                unsafe { *out.add(i) = index_of(device) };
            }
        }
        current.len() as u32
    })
}
