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
    /// Work on a member's copy queued elsewhere than on the member's own queue (a copy out of
    /// it on another GPU, a combine on the member's second stream) that may still be running.
    pending: Mutex<Vec<Pending>>,
}

/// Work on `[start, end)` of member `member`'s copy, done at `done`.
struct Pending {
    member: usize,
    /// The member's device (which frees the copy).
    owner: Arc<dyn Device>,
    start: usize,
    end: usize,
    done: Marker,
    writes: bool,
}

impl GroupBuffer {
    pub(super) fn new(len: usize, copies: Vec<Arc<dyn Buffer>>) -> GroupBuffer {
        let valid = Mutex::new(vec![ByteRanges::default(); copies.len()]);
        GroupBuffer {
            len,
            copies,
            valid,
            pending: Mutex::new(Vec::new()),
        }
    }

    fn pending(&self) -> MutexGuard<'_, Vec<Pending>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records work queued elsewhere that reads (or, `writes`, writes) `[start, end)` of member
    /// `member`'s copy and is done at `done`; `owner` is the member's device.
    pub(super) fn touched_elsewhere(
        &self,
        member: usize,
        owner: &Arc<dyn Device>,
        (start, end): (usize, usize),
        done: Marker,
        writes: bool,
    ) {
        self.pending().push(Pending {
            member,
            owner: owner.clone(),
            start,
            end,
            done,
            writes,
        });
    }

    /// Makes `reader`'s later work wait for the work elsewhere still writing `[start, end)` of
    /// member `member`'s copy: called before `reader` reads those bytes.
    pub(super) fn before_read(
        &self,
        member: usize,
        range: (usize, usize),
        reader: &dyn Device,
    ) -> Result<(), RuntimeError> {
        self.wait_for(member, range, reader, false)
    }

    /// Makes `writer`'s later work wait for the work elsewhere still reading or writing
    /// `[start, end)` of member `member`'s copy: called before `writer` writes those bytes.
    pub(super) fn before_write(
        &self,
        member: usize,
        range: (usize, usize),
        writer: &dyn Device,
    ) -> Result<(), RuntimeError> {
        self.wait_for(member, range, writer, true)
    }

    fn wait_for(
        &self,
        member: usize,
        (start, end): (usize, usize),
        waiter: &dyn Device,
        also_reads: bool,
    ) -> Result<(), RuntimeError> {
        let waiting: Vec<Pending> = {
            let mut pending = self.pending();
            if pending.is_empty() {
                return Ok(());
            }
            let (hit, kept) = pending.drain(..).partition(|p| {
                p.member == member && p.start < end && start < p.end && (also_reads || p.writes)
            });
            *pending = kept;
            hit
        };
        for work in waiting {
            waiter.wait_for_mark(&work.done)?;
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
    /// The copies are freed on their members' queues: after the work elsewhere on them.
    fn drop(&mut self) {
        for work in self.pending().drain(..) {
            if let Err(e) = work.owner.wait_for_mark(&work.done) {
                crate::log::append(&format!(
                    "error: a device group's buffer freed before the work on it: {e}"
                ));
            }
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
