//! A group's buffer: one equally long copy on every member, and which bytes of each copy are
//! up to date.
//!
//! Every copy has the buffer's full length, so an element lies at the same offset on every
//! member and a member's launch plan differs from the group's only in its buffers and its
//! region. The invariant: every byte that was ever written is up to date on at least one
//! member; a write on one member makes the other members' copies of those bytes stale.

use super::ranges::ByteRanges;
use crate::buffer::Buffer;
use crate::error::RuntimeError;
use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard};

pub struct GroupBuffer {
    len: usize,
    /// One copy per member, in member order.
    pub(super) copies: Vec<Arc<dyn Buffer>>,
    /// The up-to-date bytes of each copy.
    valid: Mutex<Vec<ByteRanges>>,
}

impl GroupBuffer {
    pub(super) fn new(len: usize, copies: Vec<Arc<dyn Buffer>>) -> GroupBuffer {
        let valid = Mutex::new(vec![ByteRanges::default(); copies.len()]);
        GroupBuffer { len, copies, valid }
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
