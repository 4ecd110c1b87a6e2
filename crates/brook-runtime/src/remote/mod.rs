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

mod device;
mod job;
pub mod link;
#[cfg(feature = "mpi")]
pub mod mpi;
mod serve;
pub mod wire;

pub use device::{copy_across, RemoteBuffer, RemoteDevice};
pub use job::{job_group, local_job, local_job_of};
pub use link::{Link, LinkError};
pub use serve::{serve, serve_with, Opener, ServeError};

use crate::device::Device;
use crate::error::RuntimeError;
use device::{link_failed, no_rank, Peer};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use wire::{tag, Hello, Request};

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
            devices.push(Arc::new(RemoteDevice::new(
                info,
                peer.clone(),
                index as u32,
            )));
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
