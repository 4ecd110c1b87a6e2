//! Devices (Brook+ `getDevices`, `useDevices`, `Device::getType`, `getBindings`), named by
//! their position in the runtime's device list.

use crate::{guard, text};
use brook_runtime::{devices, get_devices, use_devices, Device};
use std::ffi::c_char;
use std::sync::Arc;

/// Devices outside the runtime's list, numbered after it: device groups (made by
/// [`brk_device_group`], or the default device when `BRT_RUNTIME` names several).
fn others() -> std::sync::MutexGuard<'static, Vec<Arc<dyn Device>>> {
    static OTHERS: std::sync::Mutex<Vec<Arc<dyn Device>>> = std::sync::Mutex::new(Vec::new());
    OTHERS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A device's number: its position in the runtime's list, else after the list's end.
fn index_of(device: &Arc<dyn Device>) -> u32 {
    if let Some(i) = devices().iter().position(|d| Arc::ptr_eq(d, device)) {
        return i as u32;
    }
    let mut others = others();
    let at = match others.iter().position(|d| Arc::ptr_eq(d, device)) {
        Some(at) => at,
        None => {
            others.push(device.clone());
            others.len() - 1
        }
    };
    (devices().len() + at) as u32
}

/// The device numbered `index` ([`index_of`]).
fn device_at(index: u32) -> Option<Arc<dyn Device>> {
    let index = index as usize;
    match devices().get(index) {
        Some(d) => Some(d.clone()),
        None => {
            let _ = index_of(&brook_runtime::default_device());
            others().get(index - devices().len()).cloned()
        }
    }
}

/// A device group of the devices numbered `indices` (Brook+'s devices used as one: streams
/// are split into row blocks, one per member): its number, or `u32::MAX` (with a message on
/// stderr) for an unknown number, a group inside a group or no members.
///
/// # Safety
/// `indices` is null or points at `count` numbers.
#[no_mangle]
pub unsafe extern "C" fn brk_device_group(indices: *const u32, count: u32) -> u32 {
    guard(u32::MAX, || {
        let numbers: &[u32] = if indices.is_null() {
            &[]
        } else {
            // SAFETY: `count` numbers, as documented.
            unsafe { std::slice::from_raw_parts(indices, count as usize) }
        };
        let mut members = Vec::new();
        for &n in numbers {
            match device_at(n) {
                Some(d) => members.push(d),
                None => {
                    brook_runtime::log::append(&format!(
                        "error: brk_device_group: no device number {n}"
                    ));
                    return u32::MAX;
                }
            }
        }
        match brook_runtime::device_group(&members) {
            Ok(group) => index_of(&group),
            Err(e) => {
                brook_runtime::log::append(&format!("error: brk_device_group: {e}"));
                u32::MAX
            }
        }
    })
}

/// The device a runtime spec names (what `BRT_RUNTIME` takes: `cpu`, `cuda:1`, `cuda:all`,
/// `interp:0+interp:1`, `mpi:cuda` for every rank's GPU of an MPI job): its number, or
/// `u32::MAX` (with a message on stderr) when there is no such device.
///
/// # Safety
/// `spec` is null or a C string.
#[no_mangle]
pub unsafe extern "C" fn brk_device_from_spec(spec: *const c_char) -> u32 {
    guard(u32::MAX, || {
        // SAFETY: as documented.
        let spec = unsafe { text(spec) }.unwrap_or("");
        match brook_runtime::device_from_spec(spec, 0) {
            Ok(device) => index_of(&device),
            Err(e) => {
                brook_runtime::log::append(&format!("error: brk_device_from_spec: {e}"));
                u32::MAX
            }
        }
    })
}

/// BrookGPU `brook::finish()`: waits until every device has done the work queued on it;
/// 1 when each finished without an error (an error is also on stderr or `BRT_LOG_FILE`).
#[no_mangle]
pub extern "C" fn brk_finish() -> std::ffi::c_int {
    guard(0, || {
        let mut all: Vec<Arc<dyn Device>> = devices().to_vec();
        all.extend(others().iter().cloned());
        let mut finished = true;
        for device in all {
            if let Err(e) = device.synchronize() {
                brook_runtime::log::append(&format!("error: brook::finish: {e}"));
                finished = false;
            }
        }
        std::ffi::c_int::from(finished)
    })
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
/// are skipped with a warning on stderr.
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
                .filter_map(|&i| {
                    let device = device_at(i);
                    if device.is_none() {
                        brook_runtime::log::append(&format!(
                            "warning: useDevices: there is no device {i} (getDevices counts \
                             {}); it is skipped",
                            devices().len()
                        ));
                    }
                    device
                })
                .collect()
        };
        if chosen.is_empty() && count > 0 {
            brook_runtime::log::append(
                "warning: useDevices: none of the devices named exists; the thread keeps \
                 the default device",
            );
        }
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
