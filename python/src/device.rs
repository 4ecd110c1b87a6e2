//! Devices: `brook.Device("cuda:0")`, `brook.devices()`, `brook.default_device()`.

use crate::errors::to_py;
use pyo3::prelude::*;

/// A device that runs kernels: `Device("cpu")`, `Device("cuda:1")`, `Device("interp")`,
/// or a group (`Device("cpu:0+interp:0")`): any spec `BRT_RUNTIME` takes.
#[pyclass(name = "Device", module = "brook", frozen)]
#[derive(Clone)]
pub struct PyDevice {
    pub device: brook::Device,
}

#[pymethods]
impl PyDevice {
    #[new]
    fn new(py: Python<'_>, spec: &str) -> PyResult<PyDevice> {
        let spec = spec.to_string();
        let device = py
            .detach(move || brook::Device::from_spec(&spec))
            .map_err(to_py)?;
        Ok(PyDevice { device })
    }

    /// The device's spec, which `Device(name)` takes back: `cuda:0`, `cpu:0`, `interp:0`, or
    /// a group's members joined by `+` (`cuda:0+cuda:1`).
    #[getter]
    fn name(&self) -> String {
        spec_of(&self.device)
    }

    /// The type name: `interp`, `cpu`, `cuda`, `vulkan` or `group`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.device.type_name()
    }

    /// A description for people (`cuda:0 (NVIDIA H200)`).
    #[getter]
    fn description(&self) -> String {
        self.device.info().to_string()
    }

    /// The members of a device group, in the order of their blocks (empty for one device).
    #[getter]
    fn members(&self) -> Vec<PyDevice> {
        self.device
            .members()
            .into_iter()
            .map(|device| PyDevice { device })
            .collect()
    }

    /// Waits for every launch and transfer queued on the device.
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        let raw = self.device.raw().clone();
        py.detach(move || {
            raw.queue().wait_all();
            raw.synchronize()
        })
        .map_err(crate::errors::runtime)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyDevice>()
            .map(|o| std::sync::Arc::ptr_eq(o.get().device.raw(), self.device.raw()))
            .unwrap_or(false)
    }

    fn __hash__(&self) -> u64 {
        std::sync::Arc::as_ptr(self.device.raw()) as *const u8 as u64
    }

    fn __repr__(&self) -> String {
        format!("brook.Device('{}')", self.name())
    }

    fn __str__(&self) -> String {
        self.description()
    }
}

/// A device's spec, which `brook::Device::from_spec` takes back.
pub fn spec_of(device: &brook::Device) -> String {
    let members = device.members();
    if members.is_empty() {
        return device.info().short_name();
    }
    let names: Vec<String> = members.iter().map(|m| m.info().short_name()).collect();
    names.join("+")
}

impl PyDevice {
    pub fn of(device: brook::Device) -> PyDevice {
        PyDevice { device }
    }
}

/// Every device this machine has, the default first among its kind: interpreter, CPU, GPUs.
#[pyfunction]
pub fn devices(py: Python<'_>) -> Vec<PyDevice> {
    py.detach(brook::Device::all)
        .into_iter()
        .map(PyDevice::of)
        .collect()
}

/// The device chosen by `BRT_RUNTIME`, or the best one this machine has.
#[pyfunction]
pub fn default_device(py: Python<'_>) -> PyDevice {
    PyDevice::of(py.detach(brook::Device::default_device))
}

/// The device a `device=` argument names: a `Device`, a spec string, or `None` (the default).
pub fn resolve(py: Python<'_>, device: Option<&Bound<'_, PyAny>>) -> PyResult<brook::Device> {
    match device {
        None => Ok(py.detach(brook::Device::default_device)),
        Some(d) if d.is_none() => Ok(py.detach(brook::Device::default_device)),
        Some(d) => {
            if let Ok(device) = d.cast::<PyDevice>() {
                return Ok(device.get().device.clone());
            }
            let spec: String = d.extract().map_err(|_| {
                crate::errors::usage(format!(
                    "device= takes a brook.Device or a spec such as 'cuda:0', not {}",
                    crate::values::describe(d)
                ))
            })?;
            Ok(PyDevice::new(py, &spec)?.device)
        }
    }
}
