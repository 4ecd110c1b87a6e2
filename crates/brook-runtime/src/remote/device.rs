//! A device of another rank as rank 0 sees it: [`RemoteDevice`], its buffers, and the
//! [`Peer`] (the rank) its requests go to.

use super::link::{Link, LinkError};
use super::wire::{self, tag, BufferId, ModuleId, Reply, Request, WireError, WirePlan};
use crate::buffer::{Buffer, Rows, Span, Strided};
use crate::device::{Device, DeviceInfo};
use crate::error::{LaunchProblem, RuntimeError};
use crate::plan::LaunchPlan;
use crate::queue::Queue;
use brook_ir::ValidModule;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One serving rank as rank 0 sees it: the link and the modules it has been sent.
pub(super) struct Peer {
    link: Arc<dyn Link>,
    rank: usize,
    /// The modules sent, by address (each kept alive, so no address is reused).
    modules: Mutex<HashMap<usize, (Arc<ValidModule>, ModuleId)>>,
    /// Why the rank is out of reach, after a message failed: every later request fails so
    /// (a late answer must never be taken for the answer to another request).
    lost: Mutex<Option<RuntimeError>>,
}

impl Peer {
    pub(super) fn new(link: Arc<dyn Link>, rank: usize) -> Peer {
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
    /// Whether work was sent since the last answer (shared with the device's buffers, which
    /// take copies from this process: [`copy_across`]).
    unsettled: Arc<AtomicBool>,
}

/// A buffer of a [`RemoteDevice`]: its number on its rank.
pub struct RemoteBuffer {
    id: BufferId,
    len: usize,
    peer: Arc<Peer>,
    device: u32,
    /// Its device's [`RemoteDevice::unsettled`].
    unsettled: Arc<AtomicBool>,
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
    pub(super) fn new(info: DeviceInfo, peer: Arc<Peer>, index: u32) -> RemoteDevice {
        RemoteDevice {
            queue: Queue::new(format!("brook-{}", info.short_name())),
            info,
            peer,
            index,
            conversation: Mutex::new(()),
            unsettled: Arc::new(AtomicBool::new(false)),
        }
    }

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
            unsettled: self.unsettled.clone(),
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
        let tag = next_peer_tag();
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
            tag,
        };
        let receive = Request::ReceiveFrom {
            device: self.index,
            buffer: target.id,
            offset: to.offset(),
            len,
            rank: source.peer.rank as u32,
            tag,
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

/// The tag of a copy's bytes between two ranks: the next of [`tag::PEER`]'s range (rank 0
/// numbers every copy of the job).
fn next_peer_tag() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    tag::PEER + NEXT.fetch_add(1, Ordering::Relaxed) % (tag::PEER_END - tag::PEER)
}

/// A copy between a device of another rank and a device of this process (`giver` holds
/// `from`, `taker` holds `to`): the pair of requests of a copy between two serving ranks, with
/// this process as one side (its device's bytes sent, or received and uploaded, here). `None`
/// where neither span, or both, are another rank's.
pub fn copy_across(
    giver: &dyn Device,
    from: Span<'_>,
    taker: &dyn Device,
    to: Span<'_>,
) -> Option<Result<(), RuntimeError>> {
    match (remote_buffer(from.buffer()), remote_buffer(to.buffer())) {
        (Some(source), None) => Some(take_here(source, from, taker, to)),
        (None, Some(target)) => Some(give_there(giver, from, target, to)),
        _ => None,
    }
}

/// `source`'s rank sends `from`; `taker` uploads the bytes into `to` once they come.
fn take_here(
    source: &RemoteBuffer,
    from: Span<'_>,
    taker: &dyn Device,
    to: Span<'_>,
) -> Result<(), RuntimeError> {
    let (peer, tag, len) = (source.peer.clone(), next_peer_tag(), from.len());
    let send = Request::SendTo {
        device: source.device,
        buffer: source.id,
        offset: from.offset(),
        len,
        rank: peer.link.rank() as u32,
        tag,
    };
    peer.send(&send, None)?;
    upload_received(taker, to, peer.receive_len(tag, len)?)
}

/// `giver` downloads `from` and sends it to `target`'s rank, which receives it into `to`.
fn give_there(
    giver: &dyn Device,
    from: Span<'_>,
    target: &RemoteBuffer,
    to: Span<'_>,
) -> Result<(), RuntimeError> {
    let (peer, tag, len) = (target.peer.clone(), next_peer_tag(), from.len());
    let receive = Request::ReceiveFrom {
        device: target.device,
        buffer: target.id,
        offset: to.offset(),
        len,
        rank: peer.link.rank() as u32,
        tag,
    };
    target.unsettled.store(true, Ordering::Release);
    peer.send(&receive, None)?;
    download_and_send(giver, from, |bytes| {
        peer.reachable()?;
        peer.link
            .send(peer.rank, tag, &[bytes])
            .map_err(|e| peer.lose(e))
    })
}

/// Downloads `from` and gives the bytes to `send`, also after a failure (zeros), so that the
/// rank waiting for them is never left waiting; returns the download's failure, else the
/// send's.
pub(super) fn download_and_send(
    device: &dyn Device,
    from: Span<'_>,
    send: impl FnOnce(&[u8]) -> Result<(), RuntimeError>,
) -> Result<(), RuntimeError> {
    let mut data = crate::host_memory::zeroed(
        "a copy to another rank",
        crate::error::BError::Kernel,
        from.len(),
    )?;
    let done = device.download(from, &mut data);
    if done.is_err() {
        data.fill(0);
    }
    let sent = send(&data);
    done.and(sent)
}

/// Uploads `data`, bytes another rank sent, into `to` (as long, or a protocol error).
pub(super) fn upload_received(
    device: &dyn Device,
    to: Span<'_>,
    data: Vec<u8>,
) -> Result<(), RuntimeError> {
    if data.len() != to.len() {
        return Err(RuntimeError::NoDevice(
            device.info().short_name(),
            format!(
                "{} bytes came from another rank for {}",
                data.len(),
                to.len()
            ),
        ));
    }
    device.upload(to, &data)
}

pub(super) fn link_failed(rank: usize, e: LinkError) -> RuntimeError {
    no_rank(rank, e.to_string())
}

pub(super) fn no_rank(rank: usize, why: String) -> RuntimeError {
    RuntimeError::NoDevice(format!("rank {rank}"), why)
}
