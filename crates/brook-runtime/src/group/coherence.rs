//! Moving bytes between a group's members so that a member's copy is up to date where a
//! launch or a transfer needs it.

use super::buffer::GroupBuffer;
use super::ranges::ByteRanges;
use crate::buffer::Span;
use crate::device::{same_device, Device};
use crate::error::RuntimeError;
use std::sync::Arc;

const OPERATION: &str = "Device Group";

/// Makes `[start, end)` of member `to`'s copy up to date, copying each stale part from a
/// member that holds it (device to device where both can, else through the host). Bytes no
/// member holds (never written) stay as they are.
pub(super) fn fetch(
    members: &[Arc<dyn Device>],
    buffer: &GroupBuffer,
    to: usize,
    range: (usize, usize),
) -> Result<(), RuntimeError> {
    fetch_on(members, &members[to], buffer, to, range)
}

/// [`fetch`] with the copies queued on `taker`: member `to`'s device, or a second queue of it
/// ([`crate::Device::beside`]).
pub(super) fn fetch_on(
    members: &[Arc<dyn Device>],
    taker: &Arc<dyn Device>,
    buffer: &GroupBuffer,
    to: usize,
    (start, end): (usize, usize),
) -> Result<(), RuntimeError> {
    for (member, s, e) in sources(buffer, to, start, end) {
        let started = std::time::Instant::now();
        copy_between(members, taker, buffer, (member, to), (s, e))?;
        buffer.valid()[to].insert(s, e);
        if crate::profile::profiling() {
            let taker = members[to].info().to_string();
            crate::profile::record_transfer(&taker, "in group", (e - s) as u64, started.elapsed());
        }
    }
    Ok(())
}

/// For each stale part of `[start, end)` on `to`: a member holding it and the part.
fn sources(
    buffer: &GroupBuffer,
    to: usize,
    start: usize,
    end: usize,
) -> Vec<(usize, usize, usize)> {
    let valid = buffer.valid();
    let mut missing = ByteRanges::default();
    for (s, e) in valid[to].gaps(start, end) {
        missing.insert(s, e);
    }
    let mut found = Vec::new();
    for (member, set) in valid.iter().enumerate() {
        if member == to {
            continue;
        }
        for (s, e) in set.within(start, end) {
            for part in missing.within(s, e) {
                found.push((member, part.0, part.1));
            }
            missing.remove(s, e);
        }
    }
    found
}

/// Copies `[start, end)` of member `from`'s copy into member `to`'s, on `taker`.
fn copy_between(
    members: &[Arc<dyn Device>],
    taker: &Arc<dyn Device>,
    buffer: &GroupBuffer,
    (from, to): (usize, usize),
    (start, end): (usize, usize),
) -> Result<(), RuntimeError> {
    let source = Span::new(OPERATION, buffer.copies[from].as_ref(), start, end - start)?;
    let target = Span::new(OPERATION, buffer.copies[to].as_ref(), start, end - start)?;
    let giver = &members[from];
    buffer.before_read(from, (start, end), taker.as_ref())?;
    buffer.before_write(to, (start, end), taker.as_ref())?;
    if same_device(giver, taker) {
        return taker.copy(source, target);
    }
    if giver.peer_copies() && taker.peer_copies() {
        // Ordered after the giver's queued kernels, which may still be writing the bytes;
        // the giver waits for it before it writes them again.
        if let Some(done) = taker.copy_from_peer(source, target) {
            done?;
            if let Some(mark) = taker.mark()? {
                buffer.touched_elsewhere(from, giver, (start, end), mark, false);
            }
            return Ok(());
        }
    }
    // Between this process and another rank: the other rank sends or receives the bytes
    // itself (rank to rank, as between two serving ranks), not through a read.
    if let Some(done) = crate::remote::copy_across(giver.as_ref(), source, taker.as_ref(), target) {
        return done;
    }
    let mut bytes = crate::host_memory::zeroed(
        "copying between a group's members",
        crate::error::BError::Kernel,
        end - start,
    )?;
    giver.download(source, &mut bytes)?;
    taker.upload(target, &bytes)
}

/// The member whose copy holds the most of `[start, end)` up to date.
pub(super) fn best_holder(buffer: &GroupBuffer, start: usize, end: usize) -> usize {
    let valid = buffer.valid();
    (0..valid.len())
        .max_by_key(|&m| (valid[m].covered(start, end), std::cmp::Reverse(m)))
        .unwrap_or(0)
}
