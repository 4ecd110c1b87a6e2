//! What travels between the ranks: requests from rank 0 to a serving rank, its replies, and
//! launch plans with buffers named by number. Headers are `postcard` bytes; the bytes of a
//! transfer travel after their header as a message of their own, never re-encoded.

use crate::buffer::Strided;
use crate::device::{DeviceInfo, DeviceKind};
use crate::error::{BError, RuntimeError};
use crate::iter::IterStream;
use crate::plan::{Bound, ConstantBytes, ExecRegion, LaunchPlan, ScanPlan};
use crate::stream::addressing::{Addressing, Dims};
use brook_ir::scan_order::ScanKind;
use brook_ir::{Module, ValidModule};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Tags that keep the kinds of message apart (a message matches by sender and tag).
pub mod tag {
    /// Rank 0 to a serving rank: a [`super::Request`].
    pub const REQUEST: u32 = 1;
    /// A serving rank to rank 0, once, when it starts: a [`super::Hello`].
    pub const HELLO: u32 = 2;
    /// Bytes sent from one rank's buffer to another's (a copy between members): each copy has
    /// a tag of its own from `PEER..PEER_END` (numbered by rank 0, `next_peer_tag`), so copies
    /// sent from several threads of a rank cannot be taken one for another.
    pub const PEER: u32 = 1024;
    /// The end of the copies' tags (MPI allows tags up to at least 32767).
    pub const PEER_END: u32 = 32768;
    /// A serving rank to rank 0, empty, every [`crate::remote::Link::heartbeat`] while it
    /// works on a request: it is alive, however long the work takes.
    pub const ALIVE: u32 = 4;
    /// A serving rank to rank 0, answering a request for its device `d`: `REPLY + d`.
    pub const REPLY: u32 = 16;
}

/// A buffer on a serving rank, named by rank 0 (unique within the job).
pub type BufferId = u64;
/// A module sent to a serving rank, named by rank 0.
pub type ModuleId = u64;

/// What rank 0 asks of a serving rank. `device` is the index of one of the rank's devices.
#[derive(Debug, Serialize, Deserialize)]
pub enum Request {
    /// Open the devices that `spec` names (a `BRT_RUNTIME` spec, or the default device when
    /// empty) and answer with a [`Hello`].
    Start {
        spec: String,
    },
    /// Allocate `bytes` as buffer `buffer` (answered).
    Allocate {
        device: u32,
        buffer: BufferId,
        bytes: usize,
    },
    Free {
        buffer: BufferId,
    },
    /// The payload that follows goes to `rows` of the buffer (one span when `rows.rows` is 1).
    Upload {
        device: u32,
        buffer: BufferId,
        rows: Strided,
    },
    /// Answered by the rows' bytes, packed.
    Download {
        device: u32,
        buffer: BufferId,
        rows: Strided,
    },
    Copy {
        device: u32,
        from: (BufferId, usize),
        to: (BufferId, usize),
        len: usize,
    },
    /// Send `len` bytes of the buffer from `offset` to rank `rank` with tag `tag` (one of
    /// [`tag::PEER`]'s), once the device's work so far is done.
    SendTo {
        device: u32,
        buffer: BufferId,
        offset: usize,
        len: usize,
        rank: u32,
        tag: u32,
    },
    /// Receive `len` bytes from rank `rank` with tag `tag` into the buffer at `offset`, before
    /// the device's later work.
    ReceiveFrom {
        device: u32,
        buffer: BufferId,
        offset: usize,
        len: usize,
        rank: u32,
        tag: u32,
    },
    /// A copy between two devices of this rank.
    CopyBetween {
        from: (u32, BufferId, usize),
        to: (u32, BufferId, usize),
        len: usize,
    },
    /// The payload that follows is the module (`len` bytes of `postcard` [`Module`]).
    Module {
        module: ModuleId,
        len: usize,
    },
    Launch {
        device: u32,
        plan: WirePlan,
    },
    /// Wait for the device's work (answered, with the first error of the work since the last
    /// answer).
    Synchronize {
        device: u32,
    },
    /// Rank 0 is done: the serving rank ends.
    Shutdown,
}

/// A serving rank's answer: `Ok` or the first error since its last answer.
pub type Reply = Result<(), WireError>;

/// An error as it travels: its stream error code and its message.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WireError {
    pub code: BError,
    pub message: String,
}

/// The longest error message an answer carries (a header stays one message).
pub const MESSAGE_LIMIT: usize = 8 * 1024;

impl WireError {
    pub fn of(error: &RuntimeError) -> WireError {
        let mut message = error.to_string();
        if message.len() > MESSAGE_LIMIT {
            let mut end = MESSAGE_LIMIT;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
            message.push_str(" [...]");
        }
        WireError {
            code: error.code(),
            message,
        }
    }

    /// The error on rank 0, naming the device it happened on.
    pub fn on(self, device: &DeviceInfo) -> RuntimeError {
        RuntimeError::Stream {
            code: self.code,
            message: format!("on {}: {}", device.short_name(), self.message),
        }
    }
}

/// A serving rank's devices, sent when it starts, with where it runs.
#[derive(Debug, Serialize, Deserialize)]
pub struct Hello {
    pub host: String,
    pub pid: u32,
    pub devices: Result<Vec<WireInfo>, String>,
}

impl Hello {
    /// This process's hello.
    pub fn of(devices: Result<Vec<WireInfo>, String>) -> Hello {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .or_else(|| std::env::var("COMPUTERNAME").ok())
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|| "an unnamed host".into());
        Hello {
            host,
            pid: std::process::id(),
            devices,
        }
    }
}

/// What rank 0 learns of a served device.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WireInfo {
    pub kind: String,
    pub ordinal: usize,
    pub description: String,
    pub flushes_float_subnormals: bool,
}

impl WireInfo {
    pub fn of(info: &DeviceInfo) -> WireInfo {
        WireInfo {
            kind: info.kind.name().to_string(),
            ordinal: info.ordinal,
            description: info.description.clone(),
            flushes_float_subnormals: info.flushes_float_subnormals,
        }
    }

    /// The device's info on rank 0: its kind and ordinal on its rank, its description
    /// prefixed by the rank and followed by `place`, where the rank runs
    /// (`rank1:cpu:0 (native code, 8 threads) on node7, pid 4242`).
    pub fn on_rank(&self, rank: usize, place: &str) -> DeviceInfo {
        let kind = [
            DeviceKind::Interp,
            DeviceKind::Cpu,
            DeviceKind::Cuda,
            DeviceKind::Vulkan,
        ]
        .into_iter()
        .find(|k| k.name() == self.kind)
        .unwrap_or(DeviceKind::Cpu);
        DeviceInfo {
            kind,
            rank: Some(rank),
            ordinal: self.ordinal,
            description: format!("rank{rank}:{} on {place}", self.description),
            target: None,
            flushes_float_subnormals: self.flushes_float_subnormals,
        }
    }
}

/// A launch plan with its module and buffers named by number.
#[derive(Debug, Serialize, Deserialize)]
pub struct WirePlan {
    pub module: ModuleId,
    pub kernel: usize,
    pub domain: Vec<usize>,
    pub origin: Vec<usize>,
    pub size: Vec<usize>,
    pub reduction_tile: Option<Vec<usize>>,
    pub scan: Option<(ScanKind, Option<Vec<u8>>)>,
    pub args: Vec<WireBound>,
}

/// A bound argument with its buffer named by number.
#[derive(Debug, Serialize, Deserialize)]
pub enum WireBound {
    Stream {
        buffer: BufferId,
        shape: Vec<usize>,
        offset: usize,
        pitches: Vec<usize>,
    },
    Iterator {
        iter: IterStream,
        shape: Vec<usize>,
    },
    Constant(Vec<u8>),
}

impl WirePlan {
    /// `plan` with module `module` and each buffer named by `name_of`.
    pub fn of(
        plan: &LaunchPlan,
        module: ModuleId,
        mut name_of: impl FnMut(&dyn crate::Buffer) -> Result<BufferId, RuntimeError>,
    ) -> Result<WirePlan, RuntimeError> {
        let args = plan
            .args
            .iter()
            .map(|bound| {
                Ok(match bound {
                    Bound::Stream {
                        buffer,
                        shape,
                        addressing,
                    } => WireBound::Stream {
                        buffer: name_of(buffer.as_ref())?,
                        shape: shape.to_vec(),
                        offset: addressing.offset,
                        pitches: addressing.pitches.to_vec(),
                    },
                    Bound::Iterator { iter, shape } => WireBound::Iterator {
                        iter: iter.clone(),
                        shape: shape.to_vec(),
                    },
                    Bound::Constant(bytes) => WireBound::Constant(bytes.to_vec()),
                })
            })
            .collect::<Result<Vec<_>, RuntimeError>>()?;
        Ok(WirePlan {
            module,
            kernel: plan.kernel,
            domain: plan.domain.to_vec(),
            origin: plan.region.origin.to_vec(),
            size: plan.region.size.to_vec(),
            reduction_tile: plan.reduction_tile.as_ref().map(|t| t.to_vec()),
            scan: plan.scan.as_ref().map(|s| (s.kind, s.init.clone())),
            args,
        })
    }

    /// The plan on the serving rank, with its module and buffers found by `buffer_of`.
    pub fn into_plan(
        self,
        module: Arc<ValidModule>,
        mut buffer_of: impl FnMut(BufferId) -> Result<Arc<dyn crate::Buffer>, String>,
    ) -> Result<LaunchPlan, String> {
        if self.kernel >= module.kernels.len() {
            return Err(format!("the module has no kernel {}", self.kernel));
        }
        let args = self
            .args
            .into_iter()
            .map(|bound| {
                Ok(match bound {
                    WireBound::Stream {
                        buffer,
                        shape,
                        offset,
                        pitches,
                    } => Bound::Stream {
                        buffer: buffer_of(buffer)?,
                        shape: Dims::from_vec(shape),
                        addressing: Addressing {
                            offset,
                            pitches: Dims::from_vec(pitches),
                        },
                    },
                    WireBound::Iterator { iter, shape } => Bound::Iterator {
                        iter,
                        shape: Dims::from_vec(shape),
                    },
                    WireBound::Constant(bytes) => Bound::Constant(ConstantBytes::from_vec(bytes)),
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(LaunchPlan {
            module,
            kernel: self.kernel,
            domain: Dims::from_vec(self.domain),
            region: ExecRegion {
                origin: Dims::from_vec(self.origin),
                size: Dims::from_vec(self.size),
            },
            reduction_tile: self.reduction_tile.map(Dims::from_vec),
            scan: self.scan.map(|(kind, init)| ScanPlan { kind, init }),
            args,
        })
    }
}

/// A module's bytes.
pub fn module_bytes(module: &ValidModule) -> Vec<u8> {
    postcard::to_stdvec(module.module()).expect("a module always encodes")
}

/// A module from its bytes, validated again (a serving rank trusts nothing it is sent).
pub fn module_from(bytes: &[u8]) -> Result<ValidModule, String> {
    let module: Module = postcard::from_bytes(bytes).map_err(|e| format!("a bad module: {e}"))?;
    brook_ir::valid::validate(module).map_err(|e| format!("an invalid module: {e}"))
}

/// Encodes a header.
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    postcard::to_stdvec(value).expect("headers always encode")
}

/// Decodes a header, or says what was wrong with it.
pub fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8], what: &str) -> Result<T, String> {
    postcard::from_bytes(bytes).map_err(|e| format!("a bad {what} message: {e}"))
}
