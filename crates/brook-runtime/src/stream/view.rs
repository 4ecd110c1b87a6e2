//! `domain()` and `execDomain()`: views of part of a stream.
//!
//! A view shares its parent's buffer, so a change through either is seen by the other at once
//! (Brook+ allows it to be delayed until the view is destroyed; immediate is within that). A
//! view can be read, written, passed to a kernel as an input, output or gather array, viewed
//! again, and assigned. Positions are given fastest axis first, as the Brook+ API takes them;
//! `end` is exclusive.

use super::{RawStream, Region};
use crate::error::{BError, RuntimeError};
use brook_ir::launch::normalized_shape;

fn domain_error(message: String) -> RuntimeError {
    RuntimeError::Stream {
        code: BError::Domain,
        message,
    }
}

impl RawStream {
    /// The view of the box from `start` to `end` (exclusive), both fastest axis first with one
    /// component per axis of the stream.
    pub fn domain(
        &self,
        start_x_first: &[usize],
        end_x_first: &[usize],
    ) -> Result<RawStream, RuntimeError> {
        let rank = self.shape().len();
        if start_x_first.len() != rank || end_x_first.len() != rank {
            return Err(domain_error(format!(
                "Domain Operator: Failed to create domain stream: the stream has {rank} dimension(s), the start point {} and the end point {}",
                start_x_first.len(),
                end_x_first.len()
            )));
        }
        let start: Vec<usize> = start_x_first.iter().rev().copied().collect();
        let end: Vec<usize> = end_x_first.iter().rev().copied().collect();
        // `start == end` on an axis is an empty view (seed 003 section 8 refuses only a start
        // past the end): every operation on it does nothing.
        if let Some(axis) = (0..rank).find(|&a| start[a] > end[a]) {
            return Err(domain_error(format!(
                "Domain Operator: Start point is more than end point, failed to create domain stream: start {:?}, end {:?} (fastest axis first; the end is exclusive, so each end must be at least its start; axis {} fails)",
                start_x_first,
                end_x_first,
                rank - 1 - axis
            )));
        }
        if let Some(axis) = (0..rank).find(|&a| end[a] > self.shape()[a]) {
            return Err(domain_error(format!(
                "Domain Operator: Domain dimensions are bigger than original stream, failed to create domain stream: end {:?} on a stream of {:?} (fastest axis first; axis {} fails)",
                end_x_first,
                self.shape().iter().rev().collect::<Vec<_>>(),
                rank - 1 - axis
            )));
        }
        let origin = self
            .inner
            .region
            .origin
            .iter()
            .zip(&start)
            .map(|(o, s)| o + s)
            .collect();
        let shape = start.iter().zip(&end).map(|(s, e)| e - s).collect();
        Ok(self.view(Region { origin, shape }))
    }

    /// The view of the first `threads` elements of a one-dimensional stream (Brook+
    /// `execDomain`): a kernel writing it runs that many instances.
    pub fn exec_domain(&self, threads: usize) -> Result<RawStream, RuntimeError> {
        if normalized_shape(self.shape()).len() != 1 {
            return Err(domain_error(format!(
                "Exec Domain: This API is valid only for 1D stream: the stream has shape {:?}",
                self.shape()
            )));
        }
        if threads == 0 {
            return Err(domain_error(
                "Exec Domain: Number of threads must be more than 0".into(),
            ));
        }
        if threads > self.len() {
            return Err(domain_error(format!(
                "Exec Domain: Number of threads specified more than stream dimension: {threads} threads, {} elements",
                self.len()
            )));
        }
        let rank = self.shape().len();
        let start = vec![0; rank];
        let mut end = vec![1; rank];
        end[0] = threads;
        self.domain(&start, &end)
    }
}
