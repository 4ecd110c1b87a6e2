//! A job's device group: rank 0's own devices first, then every other rank's, in rank order.

use super::link::{local_world, Link};
use super::serve::Opener;
use crate::device::Device;
use crate::error::RuntimeError;
use crate::group::DeviceGroup;
use std::sync::Arc;
use std::time::Duration;

/// The group of every rank's devices that `spec` names (a device spec such as `cpu`,
/// `cuda:all`; empty for each rank's best device): rank 0's, then those [`super::connect`]
/// gets from the others. Ranks that share a host take its devices in turn where `spec` names
/// a kind without an index ([`crate::registry::spec_for_host_place`]).
pub fn job_group(link: Arc<dyn Link>, spec: &str) -> Result<Arc<dyn Device>, RuntimeError> {
    let mut members = own_devices(&crate::registry::spec_for_host_place(
        spec,
        link.host_place(),
    ))?;
    members.extend(super::connect(link, spec)?);
    Ok(Arc::new(DeviceGroup::new(members)?))
}

/// This rank's devices of `spec` (a group's members one by one; the best device when empty).
pub(super) fn own_devices(spec: &str) -> Result<Vec<Arc<dyn Device>>, RuntimeError> {
    let device = if spec.is_empty() {
        crate::registry::devices()[0].clone()
    } else {
        crate::registry::device_from_spec(spec, 0)?
    };
    Ok(match device.group_members() {
        Some(members) => members.to_vec(),
        None => vec![device],
    })
}

/// A job of `ranks` ranks whose other ranks are threads of this process, serving over
/// [`local_world`]'s link: the whole protocol of an MPI job without MPI (the tests use it).
/// Returns [`job_group`] of `spec`.
pub fn local_job(ranks: usize, spec: &str) -> Result<Arc<dyn Device>, RuntimeError> {
    local_job_of(ranks, spec, Arc::new(own_devices), Duration::from_secs(120))
}

/// [`local_job`], the other ranks opening their devices with `open`, rank 0 waiting
/// `patience` for a word from a rank before it gives up on it.
pub fn local_job_of(
    ranks: usize,
    spec: &str,
    open: Arc<Opener>,
    patience: Duration,
) -> Result<Arc<dyn Device>, RuntimeError> {
    let mut links = local_world(ranks.max(1), patience).into_iter();
    let first = links.next().expect("a job has rank 0");
    for link in links {
        let rank = link.rank();
        let open = open.clone();
        std::thread::Builder::new()
            .name(format!("brook-rank{rank}"))
            .spawn(move || {
                if let Err(e) = super::serve::serve_with(&link, open.as_ref()) {
                    eprintln!("brook: rank {rank} stopped serving: {e}");
                }
            })
            .map_err(|e| RuntimeError::NoDevice(format!("rank {rank}"), e.to_string()))?;
    }
    job_group(Arc::new(first), spec)
}
