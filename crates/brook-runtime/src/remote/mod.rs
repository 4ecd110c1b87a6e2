//! Devices of other processes: the ranks of an MPI job (`BRT_RUNTIME=mpi`), used as members of
//! a device group.
//!
//! The host program runs on rank 0. Every other rank [`serve`]s: it opens the devices rank 0
//! names ([`connect`] sends the spec) and does what rank 0 asks of them, in order. On rank 0
//! each served device is a [`RemoteDevice`], a [`Device`] like any other, so a
//! [`crate::group::DeviceGroup`] splits streams over the ranks as it does over the GPUs of one
//! host: each member runs its rows, gathers fetch their footprint from the member that holds
//! it (rank to rank, never through rank 0), reductions combine their pieces in the canonical
//! order, and the results are the single device's bits.
//!
//! Requests that need no answer (uploads, copies, launches) are sent and not waited for, so
//! the ranks work at the same time; a failure among them comes back with the device's next
//! answer ([`serve`]). Buffers and modules are named by number ([`wire`]); a module is sent to
//! a rank once. The transport is a [`Link`]: MPI (`mpi`, behind the `mpi` feature) or threads
//! of this process ([`link::local_world`], which the tests use).

mod job;
pub mod link;
#[cfg(feature = "mpi")]
pub mod mpi;
mod serve;
pub mod wire;

pub use job::{job_group, local_job, local_job_of};
pub use link::{Link, LinkError};
pub use serve::{serve, serve_with, Opener, ServeError};

use crate::buffer::{Buffer, Rows, Span, Strided};
use crate::device::{Device, DeviceInfo};
use crate::error::{LaunchProblem, RuntimeError};
use crate::plan::LaunchPlan;
use crate::queue::Queue;
use brook_ir::ValidModule;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use wire::{tag, BufferId, Hello, ModuleId, Reply, Request, WireError, WirePlan};

/// This process's rank in the job, and the job's size, where `mpirun` (Open MPI) or a PMI
/// launcher (MPICH's `mpiexec`, Slurm's `srun`) started it as one of several ranks.
pub fn launched() -> Option<(usize, usize)> {
    let read = |name: &str| std::env::var(name).ok()?.trim().parse::<usize>().ok();
    [
        ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
        ("PMI_RANK", "PMI_SIZE"),
        ("PMIX_RANK", "OMPI_COMM_WORLD_SIZE"),
        ("SLURM_PROCID", "SLURM_NTASKS"),
    ]
    .iter()
    .find_map(|(rank, size)| Some((read(rank)?, read(size)?)))
    .filter(|&(_, size)| size > 1)
}

/// Joins the MPI job this process was started in, once, before any device is opened: every
/// rank but 0 serves and never returns (`mpi::start`). Without the `mpi` feature a process
/// started as one of several ranks is told, on stderr, that it runs the program alone.
pub fn join_job() {
    static STARTED: AtomicBool = AtomicBool::new(false);
    if STARTED.swap(true, Ordering::SeqCst) {
        return;
    }
    #[cfg(feature = "mpi")]
    mpi::start();
    #[cfg(not(feature = "mpi"))]
    if let Some((rank, size)) = launched() {
        eprintln!(
            "brook: started as rank {rank} of {size} (mpirun), but this build of Brook has no \
             MPI support (build it with the `mpi` feature): every rank runs the program alone"
        );
    }
}

/// The group of every rank's devices that `spec` names (`BRT_RUNTIME=mpi:SPEC`; empty for
/// each rank's best device): rank 0's, then the other ranks' in order.
pub fn mpi_group(spec: &str) -> Result<Arc<dyn Device>, RuntimeError> {
    join_job();
    #[cfg(feature = "mpi")]
    return mpi::group(spec);
    #[cfg(not(feature = "mpi"))]
    Err(RuntimeError::NoDevice(
        format!("mpi:{spec}").trim_end_matches(':').to_string(),
        "this build of Brook has no MPI support: build it with the `mpi` feature \
         (docs/GUIDE.md, \"Programs over MPI\")"
            .into(),
    ))
}

/// Rank 0's side of a job: asks every other rank to open the devices `spec` names (its
/// best device when empty) and returns them, rank by rank.
pub fn connect(link: Arc<dyn Link>, spec: &str) -> Result<Vec<Arc<dyn Device>>, RuntimeError> {
    let start = wire::encode(&Request::Start {
        spec: spec.to_string(),
    });
    for rank in 1..link.size() {
        link.send(rank, tag::REQUEST, &[&start])
            .map_err(|e| link_failed(rank, e))?;
    }
    let mut devices: Vec<Arc<dyn Device>> = Vec::new();
    for rank in 1..link.size() {
        let hello = link
            .receive(rank, tag::HELLO)
            .map_err(|e| link_failed(rank, e))?;
        let hello: Hello = wire::decode(&hello, "hello").map_err(|e| no_rank(rank, e))?;
        let infos = hello.devices.map_err(|e| no_rank(rank, e))?;
        let place = format!("{}, pid {}", hello.host, hello.pid);
        let peer = Arc::new(Peer::new(link.clone(), rank));
        for (index, info) in infos.iter().enumerate() {
            let info = info.on_rank(rank, &place);
            devices.push(Arc::new(RemoteDevice {
                queue: Queue::new(format!("brook-{}", info.short_name())),
                info,
                peer: peer.clone(),
                index: index as u32,
                conversation: Mutex::new(()),
                unsettled: AtomicBool::new(false),
            }));
        }
    }
    Ok(devices)
}

/// Tells every other rank that rank 0 is done (they end).
pub fn shutdown(link: &dyn Link) {
    let bye = wire::encode(&Request::Shutdown);
    for rank in 1..link.size() {
        let _ = link.send(rank, tag::REQUEST, &[&bye]);
    }
}

/// One serving rank as rank 0 sees it: the link and the modules it has been sent.
struct Peer {
    link: Arc<dyn Link>,
    rank: usize,
    /// The modules sent, by address (each kept alive, so no address is reused).
    modules: Mutex<HashMap<usize, (Arc<ValidModule>, ModuleId)>>,
    /// Why the rank is out of reach, after a message failed: every later request fails so
    /// (a late answer must never be taken for the answer to another request).
    lost: Mutex<Option<RuntimeError>>,
}

impl Peer {
    fn new(link: Arc<dyn Link>, rank: usize) -> Peer {
        Peer {
            link,
            rank,
            modules: Mutex::new(HashMap::new()),
            lost: Mutex::new(None),
        }
    }

    /// Fails with the first failure of the link to this rank, once there was one.
    fn reachable(&self) -> Result<(), RuntimeError> {
        match &*self.lost.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Keeps a link failure as the rank's, and returns it.
    fn lose(&self, e: LinkError) -> RuntimeError {
        let error = link_failed(self.rank, e);
        let mut lost = self.lost.lock().unwrap_or_else(|p| p.into_inner());
        lost.get_or_insert_with(|| error.clone()).clone()
    }

    fn send(&self, request: &Request, payload: Option<&[u8]>) -> Result<(), RuntimeError> {
        self.reachable()?;
        let header = wire::encode(request);
        let parts: Vec<&[u8]> = std::iter::once(&header[..]).chain(payload).collect();
        self.link
            .send(self.rank, tag::REQUEST, &parts)
            .map_err(|e| self.lose(e))
    }

    fn receive(&self, tag: u32) -> Result<Vec<u8>, RuntimeError> {
        self.reachable()?;
        self.link.receive(self.rank, tag).map_err(|e| self.lose(e))
    }

    fn receive_len(&self, tag: u32, len: usize) -> Result<Vec<u8>, RuntimeError> {
        self.reachable()?;
        self.link
            .receive_len(self.rank, tag, len)
            .map_err(|e| self.lose(e))
    }

    /// The module's number on this rank, sending it the first time.
    fn module(&self, module: &Arc<ValidModule>) -> Result<ModuleId, RuntimeError> {
        let mut sent = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        let key = Arc::as_ptr(module) as usize;
        if let Some((_, id)) = sent.get(&key) {
            return Ok(*id);
        }
        let id = next_id();
        let bytes = wire::module_bytes(module);
        let request = Request::Module {
            module: id,
            len: bytes.len(),
        };
        self.send(&request, Some(&bytes))?;
        sent.insert(key, (module.clone(), id));
        Ok(id)
    }
}

/// A number unique within this process (buffers and modules).
fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A device of another rank.
pub struct RemoteDevice {
    info: DeviceInfo,
    queue: Queue,
    peer: Arc<Peer>,
    /// The device's index among its rank's devices.
    index: u32,
    /// Held from a request to its answer, so that answers meet their requests.
    conversation: Mutex<()>,
    /// Whether work was sent since the last answer.
    unsettled: AtomicBool,
}

/// A buffer of a [`RemoteDevice`]: its number on its rank.
pub struct RemoteBuffer {
    id: BufferId,
    len: usize,
    peer: Arc<Peer>,
    device: u32,
}

impl Buffer for RemoteBuffer {
    fn len(&self) -> usize {
        self.len
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Drop for RemoteBuffer {
    fn drop(&mut self) {
        // A rank that is gone has freed everything already.
        let _ = self.peer.send(&Request::Free { buffer: self.id }, None);
    }
}

fn remote_buffer(buffer: &dyn Buffer) -> Option<&RemoteBuffer> {
    buffer.as_any().downcast_ref::<RemoteBuffer>()
}

impl RemoteDevice {
    /// The span's buffer, which must be one of this device's.
    fn own<'b>(&self, buffer: &'b dyn Buffer) -> Result<&'b RemoteBuffer, RuntimeError> {
        remote_buffer(buffer)
            .filter(|b| Arc::ptr_eq(&b.peer, &self.peer) && b.device == self.index)
            .ok_or_else(|| {
                RuntimeError::NoDevice(
                    self.info.short_name(),
                    "the buffer belongs to another device".into(),
                )
            })
    }

    /// Sends work that is not answered.
    fn post(&self, request: &Request, payload: Option<&[u8]>) -> Result<(), RuntimeError> {
        self.unsettled.store(true, Ordering::Release);
        self.peer.send(request, payload)
    }

    /// Sends a request and waits for its answer; `out` receives the bytes that follow it.
    fn ask(&self, request: &Request, out: Option<&mut [u8]>) -> Result<(), RuntimeError> {
        let _turn = self.conversation.lock().unwrap_or_else(|p| p.into_inner());
        self.peer.send(request, None)?;
        let answer_tag = tag::REPLY + self.index;
        let header = self.peer.receive(answer_tag)?;
        let reply: Reply =
            wire::decode(&header, "reply").map_err(|e| no_rank(self.peer.rank, e))?;
        self.unsettled.store(false, Ordering::Release);
        // The bytes follow an answer that asked for them: all of them, or none after a failure.
        let data = match (&out, &reply) {
            (Some(out), Ok(())) => Some(self.peer.receive_len(answer_tag, out.len())?),
            (Some(_), Err(_)) => Some(self.peer.receive(answer_tag)?),
            (None, _) => None,
        };
        reply.map_err(|e: WireError| e.on(&self.info))?;
        if let (Some(out), Some(data)) = (out, data) {
            if data.len() != out.len() {
                return Err(no_rank(
                    self.peer.rank,
                    format!("{} bytes came for {}", data.len(), out.len()),
                ));
            }
            out.copy_from_slice(&data);
        }
        Ok(())
    }

    fn rows_of(&self, rows: Rows<'_>) -> Result<(BufferId, Strided), RuntimeError> {
        Ok((self.own(rows.span().buffer())?.id, rows.layout()))
    }
}

fn span_rows(span: Span<'_>) -> Strided {
    Strided {
        first: span.offset(),
        row_bytes: span.len(),
        pitch: span.len(),
        rows: 1,
    }
}

impl Device for RemoteDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn queue(&self) -> &Queue {
        &self.queue
    }

    fn allocate(&self, bytes: usize) -> Result<Arc<dyn Buffer>, RuntimeError> {
        let id = next_id();
        let request = Request::Allocate {
            device: self.index,
            buffer: id,
            bytes,
        };
        self.ask(&request, None)
            .map_err(|e| RuntimeError::Allocation {
                device: self.info.short_name(),
                bytes,
                reason: e.to_string(),
            })?;
        Ok(Arc::new(RemoteBuffer {
            id,
            len: bytes,
            peer: self.peer.clone(),
            device: self.index,
        }))
    }

    fn upload(&self, to: Span<'_>, data: &[u8]) -> Result<(), RuntimeError> {
        let request = Request::Upload {
            device: self.index,
            buffer: self.own(to.buffer())?.id,
            rows: span_rows(to),
        };
        self.post(&request, Some(&data[..to.len()]))
    }

    fn upload_strided(&self, to: Rows<'_>, data: &[u8]) -> Result<(), RuntimeError> {
        let (buffer, rows) = self.rows_of(to)?;
        let request = Request::Upload {
            device: self.index,
            buffer,
            rows,
        };
        self.post(&request, Some(&data[..rows.packed_len()]))
    }

    fn download(&self, from: Span<'_>, out: &mut [u8]) -> Result<(), RuntimeError> {
        let request = Request::Download {
            device: self.index,
            buffer: self.own(from.buffer())?.id,
            rows: span_rows(from),
        };
        self.ask(&request, Some(&mut out[..from.len()]))
    }

    fn download_strided(&self, from: Rows<'_>, out: &mut [u8]) -> Result<(), RuntimeError> {
        let (buffer, rows) = self.rows_of(from)?;
        let request = Request::Download {
            device: self.index,
            buffer,
            rows,
        };
        self.ask(&request, Some(&mut out[..rows.packed_len()]))
    }

    fn copy(&self, from: Span<'_>, to: Span<'_>) -> Result<(), RuntimeError> {
        let request = Request::Copy {
            device: self.index,
            from: (self.own(from.buffer())?.id, from.offset()),
            to: (self.own(to.buffer())?.id, to.offset()),
            len: from.len(),
        };
        self.post(&request, None)
    }

    fn peer_copies(&self) -> bool {
        true
    }

    /// Rank to rank: the giver's rank sends, this one receives, each after the work queued
    /// on it so far; the giver's later work follows the send on its rank.
    fn copy_from_peer(&self, from: Span<'_>, to: Span<'_>) -> Option<Result<(), RuntimeError>> {
        let source = remote_buffer(from.buffer())?;
        let target = match self.own(to.buffer()) {
            Ok(target) => target,
            Err(e) => return Some(Err(e)),
        };
        if !Arc::ptr_eq(&source.peer.link, &self.peer.link) {
            // Another job's buffer: through the host.
            return None;
        }
        let len = from.len();
        if Arc::ptr_eq(&source.peer, &self.peer) {
            let request = Request::CopyBetween {
                from: (source.device, source.id, from.offset()),
                to: (self.index, target.id, to.offset()),
                len,
            };
            return Some(self.post(&request, None));
        }
        let send = Request::SendTo {
            device: source.device,
            buffer: source.id,
            offset: from.offset(),
            len,
            rank: self.peer.rank as u32,
        };
        let receive = Request::ReceiveFrom {
            device: self.index,
            buffer: target.id,
            offset: to.offset(),
            len,
            rank: source.peer.rank as u32,
        };
        Some(
            source
                .peer
                .send(&send, None)
                .and_then(|()| self.post(&receive, None)),
        )
    }

    fn launch(&self, plan: &LaunchPlan) -> Result<(), LaunchProblem> {
        let on_rank = |e: RuntimeError| LaunchProblem::Execution(e.to_string());
        let module = self.peer.module(&plan.module).map_err(on_rank)?;
        let wire_plan =
            WirePlan::of(plan, module, |b| self.own(b).map(|b| b.id)).map_err(on_rank)?;
        let request = Request::Launch {
            device: self.index,
            plan: wire_plan,
        };
        self.post(&request, None).map_err(on_rank)
    }

    fn synchronize(&self) -> Result<(), RuntimeError> {
        self.queue.wait_all();
        self.settle()
    }

    fn settle(&self) -> Result<(), RuntimeError> {
        self.ask(&Request::Synchronize { device: self.index }, None)
    }

    fn idle(&self) -> bool {
        !self.unsettled.load(Ordering::Acquire)
    }
}

fn link_failed(rank: usize, e: LinkError) -> RuntimeError {
    no_rank(rank, e.to_string())
}

fn no_rank(rank: usize, why: String) -> RuntimeError {
    RuntimeError::NoDevice(format!("rank {rank}"), why)
}
