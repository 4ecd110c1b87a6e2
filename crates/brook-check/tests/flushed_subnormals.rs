//! The conformance judge's rule for devices that flush `float` subnormals (NVIDIA's Vulkan
//! driver does; `docs/SEMANTICS.md`): a run that differs from the exact interpreter is put
//! apart, counted and said, exactly when it equals the interpreter flushing `float`
//! subnormals; anything else is still a failure. No machine at hand flushes (lavapipe keeps
//! subnormals), so the devices judged here are the interpreter in disguise: flushing or exact,
//! claiming to flush or not.

use brook::Device;
use brook_check::exec::{judge, FailureKind};
use brook_runtime::buffer::Span;
use brook_runtime::{Buffer, DeviceInfo, DeviceKind, LaunchPlan, LaunchProblem, RuntimeError};
use std::sync::Arc;

/// Another device's work under a made-up identity: a CPU device that does or does not say
/// that it flushes `float` subnormals.
struct Disguised {
    inner: Arc<dyn brook_runtime::Device>,
    info: DeviceInfo,
    /// Whether downloads flip the sign bit of the second `float`.
    corrupt: bool,
}

impl brook_runtime::Device for Disguised {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn queue(&self) -> &brook_runtime::queue::Queue {
        self.inner.queue()
    }
    fn allocate(&self, bytes: usize) -> Result<Arc<dyn Buffer>, RuntimeError> {
        self.inner.allocate(bytes)
    }
    fn upload(&self, to: Span<'_>, data: &[u8]) -> Result<(), RuntimeError> {
        self.inner.upload(to, data)
    }
    fn download(&self, from: Span<'_>, out: &mut [u8]) -> Result<(), RuntimeError> {
        self.inner.download(from, out)?;
        if self.corrupt && from.len() >= 8 {
            out[7] ^= 0x80;
        }
        Ok(())
    }
    fn copy(&self, from: Span<'_>, to: Span<'_>) -> Result<(), RuntimeError> {
        self.inner.copy(from, to)
    }
    fn launch(&self, launch: &LaunchPlan) -> Result<(), LaunchProblem> {
        self.inner.launch(launch)
    }
    fn synchronize(&self) -> Result<(), RuntimeError> {
        self.inner.synchronize()
    }
}

/// `inner`'s work on a device that says it is `cpu:9` and whether it flushes.
fn disguised(inner: Device, says_it_flushes: bool) -> Device {
    let info = DeviceInfo {
        kind: DeviceKind::Cpu,
        rank: None,
        ordinal: 9,
        description: format!(
            "cpu:9 (disguised {}, flushes: {says_it_flushes})",
            inner.info()
        ),
        target: None,
        flushes_float_subnormals: says_it_flushes,
    };
    let inner = inner.raw().clone();
    Device::from_raw(Arc::new(Disguised {
        inner,
        info,
        corrupt: false,
    }))
}

/// `device` (a disguised one) with its downloads corrupted.
fn corrupting(device: Device) -> Device {
    let raw = device.raw().clone();
    Device::from_raw(Arc::new(Disguised {
        info: raw.info().clone(),
        inner: raw,
        corrupt: true,
    }))
}

/// Halves each element, then doubles it: 2^-126 (the smallest normal) goes through the
/// subnormal 2^-127, so flushing gives 0 where IEEE gives 2^-126 back; 3 and -0.25 never
/// meet a subnormal.
const CASE: &str = "\
source:
kernel void halve_double(float a<>, out float r<>, out float h<>)
{
    h = a * 0.5f;
    r = h * 2.0f;
}
run halve_double:
  a: float<3> = 1.1754943508222875e-38 3 -0.25
  r: float<3>
  h: float<3>
";

fn judged(device: Device) -> brook_check::exec::Judgement {
    let case = brook_check::case::parse(CASE).expect("the case parses");
    let program = brook_check::exec::compile("halve_double", &case).expect("it compiles");
    judge(&case, &program, &[Device::interp(), device])
}

#[test]
fn the_flushing_interpreter_flushes_float_subnormal_results() {
    let judgement = judged(Device::interp());
    let exact = &judgement.reference[&0]["r"];
    assert_eq!(&exact[..4], 1.1754944e-38f32.to_le_bytes());
    let flushing = Device::interp_flushing_float_subnormals();
    assert!(flushing.info().flushes_float_subnormals);
    let judgement = judged(disguised(flushing, false));
    assert_eq!(judgement.failures.len(), 1, "{:?}", judgement.failures);
    let failure = &judgement.failures[0];
    assert_eq!(failure.kind, FailureKind::Differs);
    assert!(failure.message.contains("element 0"), "{}", failure.message);
}

#[test]
fn a_flushing_device_that_flushes_is_put_apart_not_failed() {
    let flushing = Device::interp_flushing_float_subnormals();
    let judgement = judged(disguised(flushing, true));
    assert!(judgement.failures.is_empty(), "{:?}", judgement.failures);
    assert_eq!(judgement.flushed_subnormals.len(), 1);
    let apart = &judgement.flushed_subnormals[0];
    assert!(
        apart.message.contains("float subnormals"),
        "{}",
        apart.message
    );
    assert!(apart.device.contains("cpu:9"), "{}", apart.device);
}

#[test]
fn a_device_that_says_it_flushes_but_gives_exact_bits_passes_plainly() {
    let judgement = judged(disguised(Device::interp(), true));
    assert!(judgement.failures.is_empty(), "{:?}", judgement.failures);
    assert!(judgement.flushed_subnormals.is_empty());
}

/// A device that flushes but is also wrong in another way is still a failure: here its
/// downloads flip the sign of element 1 (3 becomes -3).
#[test]
fn other_differences_on_a_flushing_device_are_failures() {
    let mut device = disguised(Device::interp_flushing_float_subnormals(), true);
    device = corrupting(device);
    let judgement = judged(device);
    assert!(judgement.flushed_subnormals.is_empty());
    assert!(
        judgement
            .failures
            .iter()
            .any(|f| f.kind == FailureKind::Differs),
        "{:?}",
        judgement.failures
    );
}
