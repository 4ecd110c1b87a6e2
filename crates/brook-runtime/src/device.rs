//! The `Device` trait: what the runtime asks of an executor of kernels.
//!
//! A device owns buffers, an in-order work [`Queue`], and runs launch plans that the runtime
//! has already validated ([`crate::plan`]): buffers, shapes and constants, never streams. Every
//! method but `info`, `allocate` and `queue` runs on the device's queue, so a device sees its
//! work one job at a time, in order. Byte ranges arrive checked ([`Span`], [`Rows`]).
//!
//! Which devices exist and which one a program uses is [`crate::registry`]'s business.

use crate::buffer::{Buffer, Rows, Span};
use crate::error::{LaunchProblem, RuntimeError};
use crate::plan::LaunchPlan;
use crate::queue::Queue;
use crate::shared_memory::{ForeignMemory, MemorySpace};
use brook_codegen::abi::ParamBlock;
use std::fmt;
use std::sync::Arc;

/// What kind of executor a device is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// The reference interpreter: slow, bounds-checked, the semantic oracle.
    Interp,
    /// Native code on the host CPU.
    Cpu,
    /// An NVIDIA GPU.
    Cuda,
    /// A Vulkan device (any vendor's GPU, or lavapipe on the CPU).
    Vulkan,
    /// Several devices used as one, each stream split among them ([`crate::group`]).
    Group,
}

impl DeviceKind {
    /// The type name (`Device::getType` in Brook+): `interp`, `cpu` or `cuda`; the
    /// registry ([`crate::registry`]) knows the other names a runtime may be asked by.
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Interp => "interp",
            DeviceKind::Cpu => "cpu",
            DeviceKind::Cuda => "cuda",
            DeviceKind::Vulkan => "vulkan",
            DeviceKind::Group => "group",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    pub kind: DeviceKind,
    /// The MPI rank of the process that holds the device, for a device served by another
    /// process ([`crate::remote`]); `None` for this process's own.
    pub rank: Option<usize>,
    /// The index among devices of its kind.
    pub ordinal: usize,
    /// A description for people (`interp`, `cuda:0 (NVIDIA H200)`).
    pub description: String,
    /// What the device compiles kernels for; `None` for the interpreter, which compiles
    /// nothing.
    pub target: Option<brook_codegen::CodeTarget>,
    /// Whether the device flushes `float` subnormal operands and results to zero (a Vulkan
    /// driver may; its probe finds out). Its results then differ from the interpreter's where
    /// a `float` operation meets a subnormal: `docs/SEMANTICS.md`, "Types and arithmetic".
    pub flushes_float_subnormals: bool,
}

impl DeviceInfo {
    /// The device's short name: `cuda:1`, `interp:0`, `rank2:cpu:0`.
    pub fn short_name(&self) -> String {
        let local = format!("{}:{}", self.kind.name(), self.ordinal);
        match self.rank {
            Some(rank) => format!("rank{rank}:{local}"),
            None => local,
        }
    }
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.description)
    }
}

/// A point in a device's queued work that another device's work can be made to wait for
/// ([`Device::mark`], [`Device::wait_for_mark`]): a GPU event.
#[derive(Clone)]
pub struct Marker(pub Arc<dyn std::any::Any + Send + Sync>);

/// An executor of kernels with its own memory.
pub trait Device: Send + Sync {
    fn info(&self) -> &DeviceInfo;
    /// The device's in-order work queue.
    fn queue(&self) -> &Queue;
    fn allocate(&self, bytes: usize) -> Result<Arc<dyn Buffer>, RuntimeError>;
    /// Copies host bytes into a span (`data` is as long as the span).
    fn upload(&self, to: Span<'_>, data: &[u8]) -> Result<(), RuntimeError>;
    /// Copies a span's bytes to the host (`out` is as long as the span).
    fn download(&self, from: Span<'_>, out: &mut [u8]) -> Result<(), RuntimeError>;
    /// Copies between two equally long spans of this device's buffers (they may overlap).
    fn copy(&self, from: Span<'_>, to: Span<'_>) -> Result<(), RuntimeError>;
    /// Copies `data` (the rows one after another) into the rows `to`.
    fn upload_strided(&self, to: Rows<'_>, data: &[u8]) -> Result<(), RuntimeError> {
        let row_bytes = to.layout().row_bytes.max(1);
        for (span, row) in to.each().zip(data.chunks(row_bytes)) {
            self.upload(span, row)?;
        }
        Ok(())
    }
    /// Copies the rows `from` into `out`, one after another.
    fn download_strided(&self, from: Rows<'_>, out: &mut [u8]) -> Result<(), RuntimeError> {
        let row_bytes = from.layout().row_bytes.max(1);
        for (span, row) in from.each().zip(out.chunks_mut(row_bytes)) {
            self.download(span, row)?;
        }
        Ok(())
    }
    /// [`Device::upload`] from host memory the caller keeps unchanged until the job is done
    /// (Brook+ `"nocopy"`): a GPU pins it and copies from it directly.
    fn upload_in_place(&self, to: Span<'_>, data: &[u8]) -> Result<(), RuntimeError> {
        self.upload(to, data)
    }
    /// [`Device::download`] straight into host memory (Brook+ `"nocopy"`).
    fn download_in_place(&self, from: Span<'_>, out: &mut [u8]) -> Result<(), RuntimeError> {
        self.download(from, out)
    }
    /// Whether this device copies device to device with others of its kind
    /// ([`Device::copy_from_peer`]).
    fn peer_copies(&self) -> bool {
        false
    }
    /// Copies `from` (a span of another device's buffer) into the equally long `to`, device
    /// to device, ordered after the work queued so far on both devices (it may return before
    /// the copy is done). The giver's later work is not ordered after it: before the giver
    /// overwrites or frees the source, the caller makes it wait for this device's [`mark`]
    /// taken after the copy. `None` where this device cannot (the runtime then goes through
    /// the host).
    ///
    /// [`mark`]: Device::mark
    fn copy_from_peer(&self, from: Span<'_>, to: Span<'_>) -> Option<Result<(), RuntimeError>> {
        let _ = (from, to);
        None
    }
    /// A mark after the work queued on this device so far, for another device to wait for;
    /// `None` where this device's calls finish their work before they return.
    fn mark(&self) -> Result<Option<Marker>, RuntimeError> {
        Ok(None)
    }
    /// Makes the work queued on this device from now on wait for `mark` (another device's).
    fn wait_for_mark(&self, mark: &Marker) -> Result<(), RuntimeError> {
        let _ = mark;
        Ok(())
    }
    /// A second handle on this device whose work runs beside this one's (a second GPU
    /// stream), on the same memory: the two are ordered only through marks ([`Device::mark`]).
    /// `None` where the device has no such thing.
    fn beside(&self) -> Option<Arc<dyn Device>> {
        None
    }
    /// Where the device's buffers live, for sharing them with other libraries
    /// ([`crate::shared_memory`]); `None` for a device that shares none.
    fn memory_space(&self) -> Option<MemorySpace> {
        None
    }
    /// The address of one of this device's buffers in [`Device::memory_space`].
    fn buffer_address(&self, buffer: &dyn Buffer) -> Option<u64> {
        let _ = buffer;
        None
    }
    /// A buffer over memory another library made in this device's memory space.
    fn adopt(&self, memory: ForeignMemory) -> Result<Arc<dyn Buffer>, RuntimeError> {
        drop(memory);
        Err(crate::shared_memory::not_shared(&self.info().short_name()))
    }
    /// The members of a device group ([`crate::group`]); `None` for a single device.
    fn group_members(&self) -> Option<&[Arc<dyn Device>]> {
        None
    }
    /// Runs a validated launch plan.
    fn launch(&self, plan: &LaunchPlan) -> Result<(), LaunchProblem>;
    /// Readies `plan` on the calling thread, before it is queued, where the device already
    /// holds its compiled kernel: its worker then only starts it ([`Device::launch_ready`]),
    /// so the caller's work overlaps the launches queued before. Worth it where the worker is
    /// the slower side of a stream of launches (a GPU's, in the driver's launch call); the
    /// CPU device's caller is the slower side, so it readies nothing. `None` where the kernel
    /// is not compiled yet or the device readies nothing.
    fn prepare(&self, plan: &LaunchPlan) -> Option<Ready> {
        let _ = plan;
        None
    }
    /// Runs a launch that [`Device::prepare`] readied, as [`Device::launch`] runs it.
    fn launch_ready(&self, plan: &LaunchPlan, ready: Ready) -> Result<(), LaunchProblem> {
        let _ = ready;
        self.launch(plan)
    }
    /// Waits for all queued work.
    fn synchronize(&self) -> Result<(), RuntimeError>;
    /// Waits for work the queue has handed to the hardware (a GPU runs it asynchronously);
    /// called after the queue's jobs are done. Devices that finish work inside their jobs
    /// have nothing to wait for.
    fn settle(&self) -> Result<(), RuntimeError> {
        Ok(())
    }
    /// Whether the hardware has no unfinished work (see [`Device::settle`]).
    fn idle(&self) -> bool {
        true
    }
    /// Runs a launch (as [`Device::launch`]) and returns the device's own time for it where
    /// it has a clock (GPU events around it; the launch is then waited for), else `None`.
    fn launch_timed(
        &self,
        plan: &LaunchPlan,
    ) -> Result<Option<std::time::Duration>, LaunchProblem> {
        self.launch(plan).map(|()| None)
    }
    /// The device's own time for the work `work` queues (GPU events around it), after that
    /// work finished; `None` where the device has no such clock (the CPU and the interpreter).
    fn gpu_time(
        &self,
        work: &mut dyn FnMut(),
    ) -> Option<Result<std::time::Duration, RuntimeError>> {
        let _ = work;
        None
    }
}

/// A launch readied on the calling thread ([`Device::prepare`]): the device's compiled kernel
/// for the launch's variant and the launch's parameter block.
pub struct Ready {
    /// The device's own kind of compiled kernel.
    pub kernel: Arc<dyn std::any::Any + Send + Sync>,
    pub block: ParamBlock,
}

/// Whether two device handles are the same device.
pub fn same_device(a: &Arc<dyn Device>, b: &Arc<dyn Device>) -> bool {
    Arc::ptr_eq(a, b)
}
