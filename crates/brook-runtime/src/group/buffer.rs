//! A group's buffer: one equally long copy on every member, and which bytes of each copy are
//! up to date.
//!
//! Every copy has the buffer's full length, so an element lies at the same offset on every
//! member and a member's launch plan differs from the group's only in its buffers and its
//! region. The invariant: every byte that was ever written is up to date on at least one
//! member; a write on one member makes the other members' copies of those bytes stale.

use super::ranges::ByteRanges;
use crate::buffer::Buffer;
use crate::device::{Device, Marker};
use crate::error::RuntimeError;
use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard};

pub struct GroupBuffer {
    len: usize,
    /// One copy per member, in member order.
    pub(super) copies: Vec<Arc<dyn Buffer>>,
    /// The up-to-date bytes of each copy.
    valid: Mutex<Vec<ByteRanges>>,
    /// Device-to-device copies out of a member's copy that may still be reading it: the
    /// member waits for each before it writes those bytes, or frees the copy.
    reads: Mutex<Vec<PendingRead>>,
}

/// A copy out of `[start, end)` of a member's copy, done when `done` is reached.
struct PendingRead {
    member: usize,
    giver: Arc<dyn Device>,
    start: usize,
    end: usize,
    done: Marker,
}

impl GroupBuffer {
    pub(super) fn new(len: usize, copies: Vec<Arc<dyn Buffer>>) -> GroupBuffer {
        let valid = Mutex::new(vec![ByteRanges::default(); copies.len()]);
        GroupBuffer {
            len,
            copies,
            valid,
            reads: Mutex::new(Vec::new()),
        }
    }

    fn reads(&self) -> MutexGuard<'_, Vec<PendingRead>> {
        self.reads.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a copy out of `[start, end)` of member `member`'s copy, on `giver`, that is
    /// done at `done`.
    pub(super) fn read_by_copy(
        &self,
        member: usize,
        giver: &Arc<dyn Device>,
        (start, end): (usize, usize),
        done: Marker,
    ) {
        self.reads().push(PendingRead {
            member,
            giver: giver.clone(),
            start,
            end,
            done,
        });
    }

    /// Makes member `member`'s later work wait for the copies still reading `[start, end)`
    /// of its copy: called before the member writes those bytes.
    pub(super) fn before_write(
        &self,
        member: usize,
        (start, end): (usize, usize),
    ) -> Result<(), RuntimeError> {
        let waiting: Vec<PendingRead> = {
            let mut reads = self.reads();
            let (hit, kept) = reads
                .drain(..)
                .partition(|r| r.member == member && r.start < end && start < r.end);
            *reads = kept;
            hit
        };
        for read in waiting {
            read.giver.wait_for_mark(&read.done)?;
        }
        Ok(())
    }

    pub(super) fn valid(&self) -> MutexGuard<'_, Vec<ByteRanges>> {
        self.valid.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records that member `member` wrote `[start, end)`: its copy is the only up-to-date one.
    pub(super) fn written(&self, member: usize, start: usize, end: usize) {
        let mut valid = self.valid();
        for (m, set) in valid.iter_mut().enumerate() {
            if m == member {
                set.insert(start, end);
            } else {
                set.remove(start, end);
            }
        }
    }

    /// Records that every member's copy of `[start, end)` holds the same bytes.
    pub(super) fn written_everywhere(&self, start: usize, end: usize) {
        for set in self.valid().iter_mut() {
            set.insert(start, end);
        }
    }
}

impl Drop for GroupBuffer {
    /// The copies are freed on their members' queues: after the copies still reading them.
    fn drop(&mut self) {
        for read in self.reads().drain(..) {
            let _ = read.giver.wait_for_mark(&read.done);
        }
    }
}

impl Buffer for GroupBuffer {
    fn len(&self) -> usize {
        self.len
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The group buffer behind `buffer`, or an error naming what it is instead.
pub(super) fn group_buffer(buffer: &dyn Buffer) -> Result<&GroupBuffer, RuntimeError> {
    buffer
        .as_any()
        .downcast_ref::<GroupBuffer>()
        .ok_or_else(|| RuntimeError::Stream {
            code: crate::BError::Kernel,
            message: "a device group was handed a buffer of another device".into(),
        })
}
