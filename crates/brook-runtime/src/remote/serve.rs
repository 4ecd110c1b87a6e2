//! A serving rank: it opens the devices rank 0 names and does what rank 0 asks of them, in
//! the order asked, until rank 0 says it is done.
//!
//! Work that is not answered (uploads, copies, launches) reports its failure in the answer to
//! the device's next answered request (a download, an allocation, a synchronize), as a GPU
//! reports an asynchronous error: the first one, once.

use super::link::{Link, LinkError};
use super::wire::{self, tag, BufferId, Hello, ModuleId, Reply, Request, WireError, WireInfo};
use crate::buffer::{Buffer, Rows, Span, Strided};
use crate::device::Device;
use crate::error::{BError, LaunchError, RuntimeError};
use brook_ir::ValidModule;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const OPERATION: &str = "MPI rank";

/// Why a serving rank stopped before rank 0 said it was done.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Link(#[from] LinkError),
    #[error("rank 0 sent {0}")]
    Protocol(String),
}

/// How a serving rank opens the devices of a spec ([`Request::Start`]).
pub type Opener = dyn Fn(&str) -> Result<Vec<Arc<dyn Device>>, RuntimeError> + Send + Sync;

/// Serves rank 0 over `link` until it sends [`Request::Shutdown`], with this rank's devices
/// of the spec rank 0 sends.
pub fn serve(link: &dyn Link) -> Result<(), ServeError> {
    serve_with(link, &super::job::own_devices)
}

/// [`serve`], with the devices `open` gives for the spec.
pub fn serve_with(link: &dyn Link, open: &Opener) -> Result<(), ServeError> {
    let mut server = Server {
        open,
        link,
        devices: Vec::new(),
        buffers: HashMap::new(),
        modules: HashMap::new(),
        failed: HashMap::new(),
    };
    let working = AtomicBool::new(false);
    let ended = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| heartbeat(link, &working, &ended));
        // The heartbeat ends with the loop, also when the loop panics.
        let _end = SetOnDrop(&ended);
        (|| loop {
            let header = link.receive(0, tag::REQUEST)?;
            let request: Request =
                wire::decode(&header, "request").map_err(ServeError::Protocol)?;
            working.store(true, Ordering::SeqCst);
            if matches!(request, Request::Shutdown) {
                // Rank 0 is gone: a last failure can only be printed here.
                for device in &server.devices {
                    if let Err(e) = device.synchronize() {
                        eprintln!("brook: rank {}: {}: {e}", link.rank(), device.info());
                    }
                }
                return Ok(());
            }
            let handled = server.handle(request);
            working.store(false, Ordering::SeqCst);
            handled?;
        })()
    })
}

/// Sets its flag when dropped.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Tells rank 0, every [`Link::heartbeat`], that this rank is working on a request, so that
/// a long one (a launch on the CPU, a synchronize after long kernels) is not taken for a lost
/// rank; stops when `ended` is set.
fn heartbeat(link: &dyn Link, working: &AtomicBool, ended: &AtomicBool) {
    let beat = link.heartbeat();
    let step = (beat / 10).max(Duration::from_millis(1));
    let mut since = Instant::now();
    while !ended.load(Ordering::SeqCst) {
        std::thread::sleep(step);
        if since.elapsed() < beat {
            continue;
        }
        since = Instant::now();
        if working.load(Ordering::SeqCst) && link.send(0, tag::ALIVE, &[&[]]).is_err() {
            return;
        }
    }
}

struct Server<'l> {
    open: &'l Opener,
    link: &'l dyn Link,
    devices: Vec<Arc<dyn Device>>,
    buffers: HashMap<BufferId, Arc<dyn Buffer>>,
    modules: HashMap<ModuleId, Arc<ValidModule>>,
    /// The first failure of unanswered work on each device since its last answer.
    failed: HashMap<u32, WireError>,
}

impl Server<'_> {
    fn handle(&mut self, request: Request) -> Result<(), ServeError> {
        match request {
            Request::Start { spec } => {
                let spec = crate::registry::spec_for_host_place(&spec, self.link.host_place());
                let devices = (self.open)(&spec);
                if let Ok(opened) = &devices {
                    self.devices = opened.clone();
                }
                let hello = Hello::of(
                    devices
                        .map(|all| all.iter().map(|d| WireInfo::of(d.info())).collect())
                        .map_err(|e| e.to_string()),
                );
                self.link.send(0, tag::HELLO, &[&wire::encode(&hello)])?;
            }
            Request::Allocate {
                device,
                buffer,
                bytes,
            } => {
                let reply = self.device(device).and_then(|d| d.allocate(bytes));
                let reply = reply.map(|allocated| {
                    self.buffers.insert(buffer, allocated);
                });
                self.answer(device, reply, None)?;
            }
            Request::Free { buffer } => {
                self.buffers.remove(&buffer);
            }
            Request::Upload {
                device,
                buffer,
                rows,
            } => {
                let data = self.link.receive_len(0, tag::REQUEST, rows.packed_len())?;
                let done = self.upload(device, buffer, rows, &data);
                self.note(device, done);
            }
            Request::Download {
                device,
                buffer,
                rows,
            } => {
                let mut data = vec![0; rows.packed_len()];
                let done = self.download(device, buffer, rows, &mut data);
                self.answer(device, done, Some(&data))?;
            }
            Request::Copy {
                device,
                from,
                to,
                len,
            } => {
                let done = self.copy(device, from, to, len);
                self.note(device, done);
            }
            Request::SendTo {
                device,
                buffer,
                offset,
                len,
                rank,
                tag,
            } => {
                let to = rank as usize;
                let send = |bytes: &[u8]| {
                    let sent = self.link.send(to, tag, &[bytes]);
                    sent.map_err(|e| super::device::link_failed(to, e))
                };
                let done = match self.span(device, buffer, offset, len) {
                    Ok((d, from)) => {
                        super::device::download_and_send(d.as_ref(), from.span(), send)
                    }
                    // The receiver still gets its bytes (zeros); the failure is this device's.
                    Err(e) => {
                        let zeros = crate::host_memory::zeroed(OPERATION, BError::Kernel, len);
                        zeros.and_then(|z| send(&z)).and(Err(e))
                    }
                };
                self.note(device, done);
            }
            Request::ReceiveFrom {
                device,
                buffer,
                offset,
                len,
                rank,
                tag,
            } => {
                let from = rank as usize;
                let data = self.link.receive_len(from, tag, len)?;
                let done = self.span(device, buffer, offset, len).and_then(|(d, to)| {
                    super::device::upload_received(d.as_ref(), to.span(), data)
                });
                self.note(device, done);
            }
            Request::CopyBetween { from, to, len } => {
                let done = self.copy_between(from, to, len);
                self.note(to.0, done);
            }
            Request::Module { module, len } => {
                let bytes = self.link.receive_len(0, tag::REQUEST, len)?;
                let valid = wire::module_from(&bytes).map_err(ServeError::Protocol)?;
                self.modules.insert(module, Arc::new(valid));
            }
            Request::Launch { device, plan } => {
                let done = self.launch(device, plan);
                self.note(device, done);
            }
            Request::Synchronize { device } => {
                let done = self.device(device).and_then(|d| d.synchronize());
                self.answer(device, done, None)?;
            }
            Request::Shutdown => {}
        }
        Ok(())
    }

    fn device(&self, index: u32) -> Result<&Arc<dyn Device>, RuntimeError> {
        self.devices
            .get(index as usize)
            .ok_or_else(|| protocol(format!("no device {index} on this rank")))
    }

    fn buffer(&self, id: BufferId) -> Result<&Arc<dyn Buffer>, RuntimeError> {
        self.buffers
            .get(&id)
            .ok_or_else(|| protocol(format!("no buffer {id} on this rank")))
    }

    /// Keeps the first failure of unanswered work.
    fn note(&mut self, device: u32, done: Result<(), RuntimeError>) {
        if let Err(e) = done {
            self.failed
                .entry(device)
                .or_insert_with(|| WireError::of(&e));
        }
    }

    /// Answers a request for `device`: the earlier failure, else its own result; `data`
    /// follows (empty after a failure).
    fn answer(
        &mut self,
        device: u32,
        done: Result<(), RuntimeError>,
        data: Option<&[u8]>,
    ) -> Result<(), LinkError> {
        let reply: Reply = match self.failed.remove(&device) {
            Some(earlier) => Err(earlier),
            None => done.map_err(|e| WireError::of(&e)),
        };
        let header = wire::encode(&reply);
        let data = data.map(|d| if reply.is_ok() { d } else { &[] });
        let parts: Vec<&[u8]> = std::iter::once(&header[..]).chain(data).collect();
        self.link.send(0, tag::REPLY + device, &parts)
    }

    /// A device of this rank and `len` bytes of one of its buffers from `offset`.
    fn span(
        &self,
        device: u32,
        buffer: BufferId,
        offset: usize,
        len: usize,
    ) -> Result<(&Arc<dyn Device>, Rows<'_>), RuntimeError> {
        let device = self.device(device)?;
        let rows = Rows::new(
            OPERATION,
            self.buffer(buffer)?.as_ref(),
            one_span(offset, len),
        )?;
        Ok((device, rows))
    }

    fn upload(
        &self,
        device: u32,
        buffer: BufferId,
        rows: Strided,
        data: &[u8],
    ) -> Result<(), RuntimeError> {
        let device = self.device(device)?;
        let target = Rows::new(OPERATION, self.buffer(buffer)?.as_ref(), rows)?;
        if data.len() != rows.packed_len() {
            return Err(protocol(format!(
                "{} bytes for {} bytes of rows",
                data.len(),
                rows.packed_len()
            )));
        }
        if rows.rows == 1 {
            device.upload(target.span(), data)
        } else {
            device.upload_strided(target, data)
        }
    }

    fn download(
        &self,
        device: u32,
        buffer: BufferId,
        rows: Strided,
        out: &mut [u8],
    ) -> Result<(), RuntimeError> {
        let device = self.device(device)?;
        let source = Rows::new(OPERATION, self.buffer(buffer)?.as_ref(), rows)?;
        if rows.rows == 1 {
            device.download(source.span(), out)
        } else {
            device.download_strided(source, out)
        }
    }

    fn copy(
        &self,
        device: u32,
        from: (BufferId, usize),
        to: (BufferId, usize),
        len: usize,
    ) -> Result<(), RuntimeError> {
        let device = self.device(device)?;
        let source = Span::new(OPERATION, self.buffer(from.0)?.as_ref(), from.1, len)?;
        let target = Span::new(OPERATION, self.buffer(to.0)?.as_ref(), to.1, len)?;
        device.copy(source, target)
    }

    /// A copy between two of this rank's devices: device to device where they can.
    fn copy_between(
        &self,
        from: (u32, BufferId, usize),
        to: (u32, BufferId, usize),
        len: usize,
    ) -> Result<(), RuntimeError> {
        let (giver, taker) = (self.device(from.0)?, self.device(to.0)?);
        let source = Span::new(OPERATION, self.buffer(from.1)?.as_ref(), from.2, len)?;
        let target = Span::new(OPERATION, self.buffer(to.1)?.as_ref(), to.2, len)?;
        if giver.peer_copies() && taker.peer_copies() {
            if let Some(done) = taker.copy_from_peer(source, target) {
                done?;
                // The giver's later work must not overwrite the bytes before the copy read them.
                if let Some(mark) = taker.mark()? {
                    giver.wait_for_mark(&mark)?;
                }
                return Ok(());
            }
        }
        let mut bytes = vec![0; len];
        giver.download(source, &mut bytes)?;
        taker.upload(target, &bytes)
    }

    fn launch(&self, device: u32, plan: wire::WirePlan) -> Result<(), RuntimeError> {
        let device = self.device(device)?;
        let module = self
            .modules
            .get(&plan.module)
            .cloned()
            .ok_or_else(|| protocol(format!("no module {} on this rank", plan.module)))?;
        let plan = plan
            .into_plan(module, |id| {
                self.buffer(id).cloned().map_err(|e| e.to_string())
            })
            .map_err(protocol)?;
        device.launch(&plan).map_err(|problem| {
            RuntimeError::from(LaunchError {
                kernel: plan.kernel().name.clone(),
                call_site: None,
                problem,
            })
        })
    }
}

fn one_span(offset: usize, len: usize) -> Strided {
    Strided {
        first: offset,
        row_bytes: len,
        pitch: len,
        rows: 1,
    }
}

fn protocol(problem: String) -> RuntimeError {
    RuntimeError::Stream {
        code: crate::error::BError::Kernel,
        message: format!("{OPERATION}: {problem}"),
    }
}
