//! Cross-check mode (`BRT_CROSSCHECK=1`, or [`set_crosscheck`]): every launch on a device other
//! than the interpreter also runs on the reference interpreter, on a copy of the buffers it
//! binds as they were just before the launch, and every element of every output must have the
//! same bits. The first difference fails the launch: its outputs carry the error, which names
//! the kernel, the output, the element, both values (hex and decimal) and, for floats, their
//! distance in ulps; like every launch error it is also printed on stderr.
//!
//! Every device gives the interpreter's bits (the canonical reduction order, correctly rounded
//! arithmetic), any NaN equalling any NaN, except where a kernel calls a transcendental
//! function (`sin`, `exp`, `pow`, ...), which each device's math library computes within a
//! few ulps: such a kernel's float outputs may be [`ulp_tolerance`] ulps apart
//! (`BRT_CROSSCHECK_ULP`, 4 when unset). The check costs a copy of every bound buffer to the
//! host and an interpreted launch, so it is a debugging mode.

use crate::buffer::{Buffer, Span};
use crate::device::{Device, DeviceKind};
use crate::element::ElementType;
use crate::env_switch::EnvSwitch;
use crate::error::LaunchProblem;
use crate::plan::{Bound, LaunchPlan};
use brook_ir::ScalarKind;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// On with `BRT_CROSSCHECK` (read at the first launch) or [`set_crosscheck`].
static MODE: EnvSwitch = EnvSwitch::new("BRT_CROSSCHECK");
/// A test hook: the next cross-checked launch's device result is altered (one bit of its
/// first output element), so a test can see the check find a difference.
static CORRUPT_NEXT: AtomicBool = AtomicBool::new(false);

/// Turns cross-check mode on or off for the rest of the process (overriding
/// `BRT_CROSSCHECK`).
pub fn set_crosscheck(on: bool) {
    MODE.set(on);
}

/// Whether launches are cross-checked.
pub fn crosscheck_enabled() -> bool {
    MODE.is_on()
}

/// For tests of the check itself: the next cross-checked launch's device result is altered
/// before the comparison, as a faulty device would alter it.
#[doc(hidden)]
pub fn corrupt_next_crosschecked_result() {
    CORRUPT_NEXT.store(true, Ordering::SeqCst);
}

/// How many ulps apart a float output of a kernel that calls a transcendental function may
/// be: `BRT_CROSSCHECK_ULP`, else 4 (the library is within 1 ulp per call, 2 for `tan` on
/// doubles; arithmetic around the calls may widen it).
pub fn ulp_tolerance() -> u64 {
    static ULP: OnceLock<u64> = OnceLock::new();
    *ULP.get_or_init(|| {
        std::env::var("BRT_CROSSCHECK_ULP")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(4)
    })
}

/// Whether the kernel calls a transcendental function (its subkernels are inlined).
fn calls_transcendental(kernel: &brook_ir::Kernel) -> bool {
    kernel.exprs.iter().any(
        |(_, e)| matches!(&e.kind, brook_ir::ExprKind::Math { fun, .. } if fun.is_transcendental()),
    )
}

/// The interpreter every device's launches are checked against.
fn reference() -> &'static Arc<dyn Device> {
    static REFERENCE: OnceLock<Arc<dyn Device>> = OnceLock::new();
    REFERENCE.get_or_init(|| {
        Arc::new(crate::interp::InterpDevice::new(
            crate::interp::INTERP_DEVICES,
        ))
    })
}

/// Runs `plan` on `device` and, in cross-check mode on a device other than the interpreter,
/// on the interpreter too, comparing the outputs.
pub fn launch(device: &dyn Device, plan: &LaunchPlan) -> Result<(), LaunchProblem> {
    if device.info().kind == DeviceKind::Interp || !crosscheck_enabled() {
        return super::profiled::launch(device, plan);
    }
    let before = Snapshot::take(device, plan)?;
    super::profiled::launch(device, plan)?;
    let reference = reference();
    let twin = before.plan_on(reference.as_ref(), plan)?;
    reference.launch(&twin)?;
    let ulp = if calls_transcendental(plan.kernel()) {
        ulp_tolerance()
    } else {
        0
    };
    for index in 0..plan.args.len() {
        check_output(device, plan, &twin, index, ulp)?;
    }
    Ok(())
}

/// Compares argument `index` of the device's launch with the interpreter's `twin`, if it is
/// a stream the kernel writes.
fn check_output(
    device: &dyn Device,
    plan: &LaunchPlan,
    twin: &LaunchPlan,
    index: usize,
    ulp: u64,
) -> Result<(), LaunchProblem> {
    let param = &plan.kernel().params[index];
    let (
        Bound::Stream {
            buffer,
            shape,
            addressing,
        },
        Bound::Stream { buffer: theirs, .. },
    ) = (&plan.args[index], &twin.args[index])
    else {
        return Ok(());
    };
    if !param.role.is_written() {
        return Ok(());
    }
    let size = plan.module.layout(&param.ty).size as usize;
    let mut got = read_all(device, buffer.as_ref())?;
    if CORRUPT_NEXT.swap(false, Ordering::SeqCst) {
        if let Some(byte) = got.get_mut(addressing.offset * size) {
            *byte ^= 1;
        }
    }
    let want = read_all(reference().as_ref(), theirs.as_ref())?;
    let element = ElementType::from_ir(&plan.module, &param.ty);
    let layout = Layout {
        element: element.as_ref(),
        ulp,
        shape,
        pitches: &addressing.pitches,
        offset: addressing.offset,
        size,
    };
    let Some(difference) = first_difference(&got, &want, &layout) else {
        return Ok(());
    };
    let mut report = difference.describe(&param.name, element.as_ref(), &device.info().to_string());
    if ulp > 0 {
        report.push_str(&format!(
            " (allowed: {ulp} ulp, since the kernel calls a transcendental function; BRT_CROSSCHECK_ULP sets it)"
        ));
    }
    if let Some(at) = plan.module.excerpt(plan.kernel().span) {
        report = format!("{report}\n{at}");
    }
    Err(LaunchProblem::Execution(report))
}

/// Every buffer a launch binds, read before it runs (each buffer once, so views that share
/// a buffer share it again on the interpreter).
struct Snapshot {
    buffers: Vec<(*const u8, Vec<u8>)>,
}

impl Snapshot {
    fn take(device: &dyn Device, plan: &LaunchPlan) -> Result<Snapshot, LaunchProblem> {
        let mut buffers: Vec<(*const u8, Vec<u8>)> = Vec::new();
        for arg in &plan.args {
            if let Bound::Stream { buffer, .. } = arg {
                let key = identity(buffer);
                if !buffers.iter().any(|(k, _)| *k == key) {
                    buffers.push((key, read_all(device, buffer.as_ref())?));
                }
            }
        }
        Ok(Snapshot { buffers })
    }

    /// `plan` with every buffer replaced by a copy of its snapshot on `device`.
    fn plan_on(&self, device: &dyn Device, plan: &LaunchPlan) -> Result<LaunchPlan, LaunchProblem> {
        let mut copies: Vec<(*const u8, Arc<dyn Buffer>)> = Vec::new();
        for (key, bytes) in &self.buffers {
            let copy = device.allocate(bytes.len()).map_err(problem)?;
            let span = Span::new("Stream Read", copy.as_ref(), 0, bytes.len()).map_err(problem)?;
            device.upload(span, bytes).map_err(problem)?;
            copies.push((*key, copy));
        }
        let args = plan
            .args
            .iter()
            .map(|arg| match arg {
                Bound::Stream {
                    buffer,
                    shape,
                    addressing,
                } => {
                    let key = identity(buffer);
                    let copy = copies
                        .iter()
                        .find(|(k, _)| *k == key)
                        .map(|(_, c)| c.clone());
                    Bound::Stream {
                        buffer: copy.unwrap_or_else(|| buffer.clone()),
                        shape: shape.clone(),
                        addressing: addressing.clone(),
                    }
                }
                other => other.clone(),
            })
            .collect();
        Ok(LaunchPlan {
            args,
            ..plan.clone()
        })
    }
}

fn identity(buffer: &Arc<dyn Buffer>) -> *const u8 {
    Arc::as_ptr(buffer) as *const u8
}

fn problem(e: crate::error::RuntimeError) -> LaunchProblem {
    LaunchProblem::Execution(format!("crosscheck: {e}"))
}

fn read_all(device: &dyn Device, buffer: &dyn Buffer) -> Result<Vec<u8>, LaunchProblem> {
    let mut out = vec![0; buffer.len()];
    let span = Span::new("Stream Write", buffer, 0, buffer.len()).map_err(problem)?;
    device.download(span, &mut out).map_err(problem)?;
    Ok(out)
}

/// Where a stream's elements lie in its buffer, and their type.
struct Layout<'a> {
    /// Compared by value ([`ElementType::same_value`]); `None`: byte for byte.
    element: Option<&'a ElementType>,
    /// Float components may be this many ulps apart.
    ulp: u64,
    shape: &'a [usize],
    pitches: &'a [usize],
    offset: usize,
    size: usize,
}

/// The first element whose bytes differ, and how many differ.
#[derive(Debug, PartialEq)]
struct Difference {
    /// Slowest axis first.
    position: Vec<usize>,
    got: Vec<u8>,
    want: Vec<u8>,
    count: usize,
    total: usize,
}

fn first_difference(got: &[u8], want: &[u8], layout: &Layout<'_>) -> Option<Difference> {
    let total: usize = layout.shape.iter().product();
    let mut first = None;
    let mut count = 0;
    let mut position = vec![0; layout.shape.len()];
    for _ in 0..total {
        let element: usize = layout.offset
            + position
                .iter()
                .zip(layout.pitches)
                .map(|(p, s)| p * s)
                .sum::<usize>();
        let range = element * layout.size..(element + 1) * layout.size;
        let (a, b) = (got.get(range.clone()), want.get(range));
        let same = match (a, b, layout.element) {
            (Some(a), Some(b), Some(element)) => element.same_value(a, b, layout.ulp),
            _ => a == b,
        };
        if !same {
            count += 1;
            if first.is_none() {
                first = Some((
                    position.clone(),
                    a.unwrap_or(&[]).to_vec(),
                    b.unwrap_or(&[]).to_vec(),
                ));
            }
        }
        for axis in (0..position.len()).rev() {
            position[axis] += 1;
            if position[axis] < layout.shape[axis] {
                break;
            }
            position[axis] = 0;
        }
    }
    first.map(|(position, got, want)| Difference {
        position,
        got,
        want,
        count,
        total,
    })
}

impl Difference {
    fn describe(&self, output: &str, element: Option<&ElementType>, device: &str) -> String {
        let kind = match element {
            Some(ElementType::Value(v)) => Some(v.kind),
            _ => None,
        };
        let (got, want) = match kind {
            Some(kind) => (values(&self.got, kind), values(&self.want, kind)),
            None => (hex(&self.got), hex(&self.want)),
        };
        let ulps = kind.and_then(|k| ulp_distance(&self.got, &self.want, k));
        format!(
            "crosscheck: output `{output}` element {:?} differs from the reference interpreter's: {device} gave {got}, the interpreter {want}{}; {} of {} elements differ",
            self.position,
            ulps.map(|u| format!(" ({u} ulp apart)")).unwrap_or_default(),
            self.count,
            self.total,
        )
    }
}

fn hex(bytes: &[u8]) -> String {
    let digits: String = bytes.iter().rev().map(|b| format!("{b:02x}")).collect();
    format!("0x{digits}")
}

/// Each component as `0x... (decimal)`.
fn values(bytes: &[u8], kind: ScalarKind) -> String {
    let size = (kind.size() as usize).max(1);
    let parts: Vec<String> = bytes
        .chunks(size)
        .map(|c| format!("{} ({})", hex(c), decimal(c, kind)))
        .collect();
    parts.join(", ")
}

fn decimal(c: &[u8], kind: ScalarKind) -> String {
    let word = |n: usize| -> u64 {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(&c[..n]);
        u64::from_le_bytes(w)
    };
    let n = c.len().min(8);
    match kind {
        ScalarKind::F32 if n == 4 => format!("{:?}", f32::from_bits(word(4) as u32)),
        ScalarKind::F64 if n == 8 => format!("{:?}", f64::from_bits(word(8))),
        ScalarKind::I8 | ScalarKind::I16 | ScalarKind::I32 | ScalarKind::I64 => {
            let shift = 64 - 8 * n as u32;
            (((word(n) << shift) as i64) >> shift).to_string()
        }
        _ => word(n).to_string(),
    }
}

/// The largest distance in units in the last place between corresponding float components
/// (`None` for other kinds or where a NaN is involved).
fn ulp_distance(got: &[u8], want: &[u8], kind: ScalarKind) -> Option<u64> {
    let size = (kind.size() as usize).max(1);
    got.chunks(size)
        .zip(want.chunks(size))
        .map(|(a, b)| crate::element::float_ulps(kind, a, b))
        .try_fold(0, |most, d| Some(most.max(d?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|f| f.to_le_bytes()).collect()
    }

    #[test]
    fn the_first_differing_element_is_found_through_the_addressing() {
        // A 2 x 3 view at offset 1 with rows 4 apart, in a buffer of 9 floats.
        let want = floats(&[0.0, 1.0, 2.0, 3.0, 9.0, 4.0, 5.0, 6.0, 9.0]);
        let mut got = want.clone();
        got[4 * 6..4 * 7].copy_from_slice(&5.5f32.to_le_bytes());
        let float = ElementType::scalar(ScalarKind::F32);
        let layout = Layout {
            element: Some(&float),
            ulp: 0,
            shape: &[2, 3],
            pitches: &[4, 1],
            offset: 1,
            size: 4,
        };
        let d = first_difference(&got, &want, &layout).expect("a difference");
        assert_eq!(d.position, [1, 1]);
        assert_eq!((d.count, d.total), (1, 6));
        let text = d.describe(
            "b",
            Some(&ElementType::Value(brook_ir::ValueType::scalar(
                ScalarKind::F32,
            ))),
            "cpu:0",
        );
        assert!(
            text.contains("output `b` element [1, 1]") && text.contains("cpu:0 gave 0x40b00000 (5.5), the interpreter 0x40a00000 (5.0) (1048576 ulp apart); 1 of 6 elements differ"),
            "{text}"
        );
        // Outside the view nothing counts, and any NaN equals any NaN.
        let mut outside = want.clone();
        outside[0] = 7;
        assert_eq!(first_difference(&outside, &want, &layout), None);
        let (mut a, mut b) = (want.clone(), want.clone());
        a[4..8].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
        b[4..8].copy_from_slice(&0xffc0_0000u32.to_le_bytes());
        assert_eq!(first_difference(&a, &b, &layout), None);
        // With a tolerance (a kernel calling `sin`), 1 ulp passes and more does not.
        let near = Layout { ulp: 1, ..layout };
        let mut one_ulp = want.clone();
        one_ulp[4 * 6..4 * 7].copy_from_slice(&f32::from_bits(0x40a0_0001).to_le_bytes());
        assert_eq!(first_difference(&one_ulp, &want, &near), None);
        assert!(first_difference(&got, &want, &near).is_some());
    }

    #[test]
    fn ulps_count_across_zero_and_integers_print_signed() {
        assert_eq!(
            ulp_distance(
                &floats(&[1.0]),
                &floats(&[f32::from_bits(0x3f80_0001)]),
                ScalarKind::F32
            ),
            Some(1)
        );
        assert_eq!(
            ulp_distance(&floats(&[0.0]), &floats(&[-0.0]), ScalarKind::F32),
            Some(0)
        );
        assert_eq!(decimal(&(-3i32).to_le_bytes(), ScalarKind::I32), "-3");
        assert_eq!(decimal(&[0xff], ScalarKind::U8), "255");
        assert_eq!(
            ulp_distance(&floats(&[f32::NAN]), &floats(&[1.0]), ScalarKind::F32),
            None
        );
    }
}
