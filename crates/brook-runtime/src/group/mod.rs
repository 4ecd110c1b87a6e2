//! A device group: several devices used as one, each stream split into row blocks.
//!
//! A [`DeviceGroup`] is a [`Device`] whose buffers (`buffer::GroupBuffer`) have a full-length
//! copy on every member and remember which bytes of each copy are up to date. A launch is split
//! along the slowest axis of its region into one contiguous block of rows per member
//! (`split`); each member runs the group's plan with its own buffers and its block as the
//! region, so positions, `indexof`, implicit resize and gathers keep their single-device
//! meaning. Before a member runs, the bytes its block reads are made up to date on it
//! (`coherence::fetch`: device to device where the members can, else through the host) —
//! a stream written by the same split is already there, a gathered stream is copied once and
//! then cached until it is written again. After it, the bytes it wrote are up to date on it
//! alone.
//!
//! The results are the single device's bits: a map's instances are independent; a reduction
//! splits at whole targets or at aligned power-of-two pieces of one target, both exact
//! subtrees of the canonical order ([`brook_ir::reduce_order`]), and combines the pieces with
//! the same tree (on a GPU, on a second stream of the first member, [`Device::beside`], so
//! that its next work need not wait for the combine). Scans of rows split like reductions.
//! Launches whose result depends on which instances share a device (scatter kernels, thread
//! groups, vouts) and whole-stream scans run whole on the first member.

mod access;
mod buffer;
mod coherence;
mod ranges;
mod run;
mod split;
mod whole;

use crate::buffer::{Buffer, Span};
use crate::device::{Device, DeviceInfo, DeviceKind};
use crate::error::{LaunchProblem, RuntimeError};
use crate::plan::LaunchPlan;
use crate::queue::Queue;
use buffer::{group_buffer, GroupBuffer};
use std::sync::Arc;

/// The partial-result buffers of a group and the one the last launch used.
type Partials = (usize, [Option<Arc<dyn Buffer>>; 2]);

/// Several devices used as one ([`crate::registry::device_group`] makes one).
pub struct DeviceGroup {
    info: DeviceInfo,
    members: Vec<Arc<dyn Device>>,
    queue: Queue,
    /// The partial results of split reductions, kept from one launch to the next; two, used
    /// in turn, so that a member's next pieces need not wait until the last launch's partials
    /// were copied out (launches run one at a time on the group's queue).
    partials: std::sync::Mutex<Partials>,
    /// A second queue of the first member, where split reductions combine their pieces
    /// beside the first member's next work (`None` where the member has none).
    combiner: Option<Arc<dyn Device>>,
}

impl DeviceGroup {
    /// A group of `members` (at least one; no member may be a group).
    pub fn new(members: Vec<Arc<dyn Device>>) -> Result<DeviceGroup, RuntimeError> {
        let names: Vec<String> = members.iter().map(|m| m.info().short_name()).collect();
        let description = names.join("+");
        if members.is_empty() {
            return Err(RuntimeError::NoDevice(
                "group".into(),
                "a device group needs at least one member".into(),
            ));
        }
        if members.iter().any(|m| m.info().kind == DeviceKind::Group) {
            return Err(RuntimeError::NoDevice(
                description,
                "a device group cannot be a member of another".into(),
            ));
        }
        Ok(DeviceGroup {
            info: DeviceInfo {
                kind: DeviceKind::Group,
                rank: None,
                ordinal: 0,
                description: description.clone(),
                target: None,
                flushes_float_subnormals: members.iter().any(|m| m.info().flushes_float_subnormals),
            },
            queue: Queue::new(format!("brook-group-{description}")),
            partials: std::sync::Mutex::new((0, [None, None])),
            combiner: if members.len() > 1 {
                members[0].beside()
            } else {
                None
            },
            members,
        })
    }

    /// A group buffer of at least `bytes` for the partial results of a split reduction, not
    /// the one the last launch used.
    fn partials(&self, bytes: usize) -> Result<Arc<dyn Buffer>, RuntimeError> {
        let mut kept = self.partials.lock().unwrap_or_else(|p| p.into_inner());
        let turn = 1 - kept.0;
        kept.0 = turn;
        match &kept.1[turn] {
            Some(buffer) if buffer.len() >= bytes => Ok(buffer.clone()),
            _ => {
                let buffer = allocate_on(&self.members, bytes)?;
                kept.1[turn] = Some(buffer.clone());
                Ok(buffer)
            }
        }
    }

    /// The first member's second queue, where split reductions combine ([`Device::beside`]).
    fn combiner(&self) -> Option<&Arc<dyn Device>> {
        self.combiner.as_ref()
    }

    /// The members, in the order their blocks of rows follow one another.
    pub fn members(&self) -> &[Arc<dyn Device>] {
        &self.members
    }

    /// The span of member `member`'s copy that `span` of the group's buffer stands for.
    fn member_span<'b>(
        &self,
        span: Span<'b>,
        member: usize,
    ) -> Result<(Span<'b>, &'b GroupBuffer), RuntimeError> {
        let group = group_buffer(span.buffer())?;
        let copy = Span::new(
            "Device Group",
            group.copies[member].as_ref(),
            span.offset(),
            span.len(),
        )?;
        Ok((copy, group))
    }
}

/// A group buffer of `bytes` with a copy on each of `members`.
fn allocate_on(members: &[Arc<dyn Device>], bytes: usize) -> Result<Arc<dyn Buffer>, RuntimeError> {
    let copies = members
        .iter()
        .map(|m| m.allocate(bytes))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Arc::new(GroupBuffer::new(bytes, copies)))
}

impl Device for DeviceGroup {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn queue(&self) -> &Queue {
        &self.queue
    }

    fn allocate(&self, bytes: usize) -> Result<Arc<dyn Buffer>, RuntimeError> {
        allocate_on(&self.members, bytes)
    }

    /// Host data goes to every member: whatever block a later launch gives a member, its
    /// inputs are there.
    /// A large write goes to the members in shares, each member's the block of bytes a
    /// launch split by rows mostly gives it (the rest is fetched where a launch needs it); a
    /// small one to every member whole.
    fn upload(&self, to: Span<'_>, data: &[u8]) -> Result<(), RuntimeError> {
        let (start, end) = (to.offset(), to.offset() + to.len());
        let group = group_buffer(to.buffer())?;
        let Some(shares) = upload_shares((start, end), self.members.len()) else {
            for (m, member) in self.members.iter().enumerate() {
                let (copy, group) = self.member_span(to, m)?;
                group.before_write(m, (start, end), member.as_ref())?;
                member.upload(copy, data)?;
            }
            group.written_everywhere(start, end);
            return Ok(());
        };
        for (m, (s, e)) in shares.iter().copied().enumerate() {
            let member = &self.members[m];
            group.before_write(m, (s, e), member.as_ref())?;
            let copy = Span::new("Device Group", group.copies[m].as_ref(), s, e - s)?;
            member.upload(copy, &data[s - start..e - start])?;
        }
        for (m, (s, e)) in shares.into_iter().enumerate() {
            group.written(m, s, e);
        }
        Ok(())
    }

    /// Each part comes from a member that holds it up to date.
    fn download(&self, from: Span<'_>, out: &mut [u8]) -> Result<(), RuntimeError> {
        let group = group_buffer(from.buffer())?;
        let (start, end) = (from.offset(), from.offset() + from.len());
        let mut parts: Vec<(usize, usize, usize)> = Vec::new();
        {
            let valid = group.valid();
            let mut left = ranges::ByteRanges::default();
            left.insert(start, end);
            for (m, set) in valid.iter().enumerate() {
                for (s, e) in set.within(start, end) {
                    parts.extend(left.within(s, e).into_iter().map(|(a, b)| (m, a, b)));
                    left.remove(s, e);
                }
            }
            // Bytes nobody wrote: any copy will do.
            parts.extend(left.within(start, end).into_iter().map(|(a, b)| (0, a, b)));
        }
        for (m, s, e) in parts {
            group.before_read(m, (s, e), self.members[m].as_ref())?;
            let copy = Span::new("Device Group", group.copies[m].as_ref(), s, e - s)?;
            self.members[m].download(copy, &mut out[s - start..e - start])?;
        }
        Ok(())
    }

    /// On the member that holds most of `from`, after the rest is fetched there.
    fn copy(&self, from: Span<'_>, to: Span<'_>) -> Result<(), RuntimeError> {
        let source = group_buffer(from.buffer())?;
        let (start, end) = (from.offset(), from.offset() + from.len());
        let m = coherence::best_holder(source, start, end);
        coherence::fetch(&self.members, source, m, (start, end))?;
        let (from_copy, _) = self.member_span(from, m)?;
        let (to_copy, target) = self.member_span(to, m)?;
        source.before_read(m, (start, end), self.members[m].as_ref())?;
        target.before_write(
            m,
            (to.offset(), to.offset() + to.len()),
            self.members[m].as_ref(),
        )?;
        self.members[m].copy(from_copy, to_copy)?;
        target.written(m, to.offset(), to.offset() + to.len());
        Ok(())
    }

    fn group_members(&self) -> Option<&[Arc<dyn Device>]> {
        Some(&self.members)
    }

    fn launch(&self, plan: &LaunchPlan) -> Result<(), LaunchProblem> {
        split::launch(self, plan)
    }

    fn synchronize(&self) -> Result<(), RuntimeError> {
        self.queue.wait_all();
        self.settle()
    }

    fn settle(&self) -> Result<(), RuntimeError> {
        for member in self.members.iter().chain(&self.combiner) {
            member.settle()?;
        }
        Ok(())
    }

    fn idle(&self) -> bool {
        self.members.iter().chain(&self.combiner).all(|m| m.idle())
    }
}

/// Bytes of a write below which every member gets all of it: a member's share smaller than
/// this saves less than the fetches a launch may then make.
const SHARE_MIN: usize = 1 << 16;

/// The members' shares of a write of `[start, end)`: `members` contiguous blocks, as
/// `split` cuts rows, at multiples of 64 bytes; `None` where the write is small.
fn upload_shares((start, end): (usize, usize), members: usize) -> Option<Vec<(usize, usize)>> {
    let len = end - start;
    if members < 2 || len < members * SHARE_MIN {
        return None;
    }
    let cut = |k: usize| match k {
        0 => start,
        k if k == members => end,
        k => start + (len * k / members) / 64 * 64,
    };
    Some((0..members).map(|k| (cut(k), cut(k + 1))).collect())
}

#[cfg(test)]
mod upload_tests {
    use super::upload_shares;

    #[test]
    fn shares_cover_a_large_write_once_and_small_ones_go_whole() {
        assert_eq!(upload_shares((0, 1000), 2), None);
        assert_eq!(upload_shares((0, 1 << 20), 1), None);
        let shares = upload_shares((100, 100 + 3_000_000), 3).expect("split");
        assert_eq!(shares.len(), 3);
        assert_eq!(shares[0].0, 100);
        assert_eq!(shares[2].1, 3_000_100);
        for pair in shares.windows(2) {
            assert_eq!(pair[0].1, pair[1].0);
            assert!(pair[0].0 < pair[0].1);
        }
    }
}
