//! MPI as the [`Link`] between ranks (the `mpi` feature: the `mpi` crate, against the Open MPI
//! or MPICH found when it is built).
//!
//! A process started by `mpirun` or `srun` ([`super::launched`]) joins the job the first time the
//! runtime looks for devices, or before `main` in a program linked with the C ABI built with
//! MPI ([`start`]): every rank but 0 then serves rank 0 until rank 0 ends, and leaves without
//! returning to the program; rank 0 goes on, and ends the others when it exits. MPI is asked
//! for `MPI_THREAD_MULTIPLE`: each device's queue talks to its rank from its own thread.

use super::link::{pieces, Link, LinkError};
use crate::registry::HostPlace;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Threading;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The job this process belongs to, once MPI is started ([`start`]); `None` outside `mpirun`
/// or where MPI could not start (said on stderr).
pub fn world() -> Option<Arc<MpiLink>> {
    WORLD.get_or_init(join).clone()
}

static WORLD: OnceLock<Option<Arc<MpiLink>>> = OnceLock::new();

/// Joins the job where this process was started as one of its ranks. On every rank but 0
/// this serves rank 0 and then ends the process; on rank 0 it returns.
pub fn start() {
    let Some(link) = world() else { return };
    if link.rank() == 0 {
        return;
    }
    // Rank 0's profile names this rank's work; this process has none of its own to show.
    crate::profile::set_profile(false);
    let code = match super::serve(link.as_ref()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("brook: rank {} stopped serving: {e}", link.rank());
            link.world.abort(1)
        }
    };
    finalize();
    std::process::exit(code);
}

/// Starts MPI; rank 0 ends the other ranks and MPI when it exits.
fn join() -> Option<Arc<MpiLink>> {
    super::launched()?;
    let Some((universe, threading)) = mpi::initialize_with_threading(Threading::Multiple) else {
        eprintln!("brook: MPI was started before Brook started it: Brook does not join the job");
        return None;
    };
    let world = universe.world();
    *UNIVERSE.lock().unwrap_or_else(|p| p.into_inner()) = Some(Kept(universe));
    if threading != Threading::Multiple {
        eprintln!(
            "brook: this MPI gives {threading:?} threading, not Multiple: each rank's devices \
             are served one call at a time"
        );
    }
    let link = Arc::new(MpiLink::new(world, threading));
    if link.rank() == 0 {
        extern "C" {
            fn atexit(f: extern "C" fn()) -> std::ffi::c_int;
        }
        // SAFETY: `end_job` is a plain function that may run at exit.
        unsafe { atexit(end_job) };
    }
    Some(link)
}

/// At rank 0's exit: the other ranks end, then MPI.
extern "C" fn end_job() {
    if let Some(Some(link)) = WORLD.get() {
        super::shutdown(link.as_ref());
    }
    finalize();
}

/// Ends MPI (`MPI_Finalize`), once; no message is sent after it.
fn finalize() {
    ENDED.store(true, std::sync::atomic::Ordering::SeqCst);
    let kept = UNIVERSE.lock().unwrap_or_else(|p| p.into_inner()).take();
    drop(kept);
}

/// Set when MPI has ended: a buffer freed later sends nothing.
static ENDED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The MPI universe, kept until the process ends.
static UNIVERSE: Mutex<Option<Kept<mpi::environment::Universe>>> = Mutex::new(None);

/// An MPI object shared by threads: MPI was started with `MPI_THREAD_MULTIPLE` (where it
/// gives less, every call is made under [`MpiLink::serial`]).
struct Kept<T>(T);
// SAFETY: see `Kept`.
unsafe impl<T> Send for Kept<T> {}

/// The link of this rank to the others of `MPI_COMM_WORLD`.
pub struct MpiLink {
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
    /// One lock per destination: a message's parts are sent together.
    sending: Vec<Mutex<()>>,
    /// Held around every MPI call where MPI does not allow calls from several threads at once.
    serial: Option<Mutex<()>>,
    /// How long to wait with no word from a rank (`BRT_MPI_TIMEOUT` seconds, 0 for ever).
    patience: Option<Duration>,
    /// This rank's place among the ranks on its host.
    place: HostPlace,
}

// SAFETY: MPI was started with `MPI_THREAD_MULTIPLE`, or every call is made under `serial`.
unsafe impl Send for MpiLink {}
// SAFETY: as for `Send`.
unsafe impl Sync for MpiLink {}

impl MpiLink {
    fn new(world: SimpleCommunicator, threading: Threading) -> MpiLink {
        let (rank, size) = (world.rank() as usize, world.size() as usize);
        // Every rank joins when it first looks for devices, so this collective call is made
        // by all of them.
        let host = world.split_shared(world.rank());
        let place = HostPlace {
            index: host.rank() as usize,
            count: host.size() as usize,
        };
        let seconds = std::env::var("BRT_MPI_TIMEOUT")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(60);
        MpiLink {
            world,
            rank,
            size,
            sending: (0..size).map(|_| Mutex::new(())).collect(),
            serial: (threading != Threading::Multiple).then(|| Mutex::new(())),
            patience: (seconds > 0).then(|| Duration::from_secs(seconds)),
            place,
        }
    }

    fn serially<R>(&self, call: impl FnOnce() -> R) -> R {
        let _turn = self
            .serial
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()));
        call()
    }
}

impl Link for MpiLink {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn host_place(&self) -> HostPlace {
        self.place
    }

    fn send(&self, to: usize, tag: u32, parts: &[&[u8]]) -> Result<(), LinkError> {
        if ENDED.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(LinkError::Gone {
                rank: to,
                why: "MPI has ended".into(),
            });
        }
        let lock = self.sending.get(to).ok_or_else(|| LinkError::Gone {
            rank: to,
            why: format!("the job has {} ranks", self.size),
        })?;
        let _together = lock.lock().unwrap_or_else(|p| p.into_inner());
        let process = self.world.process_at_rank(to as i32);
        for part in parts {
            for piece in pieces(part, super::link::PIECE) {
                self.serially(|| process.send_with_tag(piece, tag as i32));
            }
        }
        Ok(())
    }

    /// A request is waited for as long as the job runs (inside MPI, which answers soonest);
    /// anything else within the patience, spinning at first (an answer usually comes within
    /// microseconds, and a sleeping thread wakes tens of microseconds late).
    fn receive(&self, from: usize, tag: u32) -> Result<Vec<u8>, LinkError> {
        let process = self.world.process_at_rank(from as i32);
        let patience = match tag {
            super::wire::tag::REQUEST => None,
            _ => self.patience,
        };
        if patience.is_none() && self.serial.is_none() {
            let found = process.matched_probe_with_tag(tag as i32);
            return Ok(found.matched_receive_vec::<u8>().0);
        }
        let started = Instant::now();
        let mut heard = started;
        loop {
            let found = self.serially(|| process.immediate_matched_probe_with_tag(tag as i32));
            if let Some(found) = found {
                return Ok(self.serially(|| found.matched_receive_vec::<u8>().0));
            }
            let alive = super::wire::tag::ALIVE as i32;
            if let Some(word) = self.serially(|| process.immediate_matched_probe_with_tag(alive)) {
                self.serially(|| word.matched_receive_vec::<u8>());
                heard = Instant::now();
            }
            let waited = started.elapsed();
            if let Some(patience) = patience.filter(|p| heard.elapsed() > *p) {
                return Err(LinkError::Timeout {
                    rank: from,
                    waited: patience,
                });
            }
            if waited < SPIN {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(20));
            }
        }
    }
}

/// How long a receive spins before it sleeps between looks.
const SPIN: Duration = Duration::from_millis(50);

/// The group of the job's devices of `spec` ([`super::job_group`]), made the first time.
pub fn group(spec: &str) -> Result<Arc<dyn crate::Device>, crate::RuntimeError> {
    use crate::RuntimeError;
    /// The spec the job's group was made for, and the group.
    type Made = (String, Result<Arc<dyn crate::Device>, RuntimeError>);
    static JOB: OnceLock<Made> = OnceLock::new();
    let Some(link) = world() else {
        return Err(RuntimeError::NoDevice(
            "mpi".into(),
            "this process was not started as one of several ranks by mpirun or srun \
             (run `mpirun -np N PROGRAM`)"
                .into(),
        ));
    };
    let (made_for, made) = JOB.get_or_init(|| {
        let link: Arc<dyn Link> = link;
        (spec.to_string(), super::job_group(link, spec))
    });
    if made_for != spec {
        return Err(RuntimeError::NoDevice(
            format!("mpi:{spec}"),
            format!("the job's ranks already serve `mpi:{made_for}`; a job has one device spec"),
        ));
    }
    made.clone()
}
