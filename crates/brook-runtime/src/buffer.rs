//! Device memory as the runtime sees it: the [`Buffer`] trait, and [`Span`]s and [`Rows`] of a
//! buffer, the byte ranges transfers touch.
//!
//! A span or a box of rows is checked against its buffer's length once, when it is made
//! ([`Span::new`], [`Rows::new`]); devices receive only checked ones, so no device checks a
//! range again, and a device's pointer arithmetic inside a span is always in bounds.

use crate::error::RuntimeError;
use std::any::Any;

/// Device memory. A buffer never changes size.
pub trait Buffer: Any + Send + Sync {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn as_any(&self) -> &dyn Any;
}

/// The bytes `offset..offset + len` of a buffer, known to lie inside it.
#[derive(Clone, Copy)]
pub struct Span<'b> {
    buffer: &'b dyn Buffer,
    offset: usize,
    len: usize,
}

impl<'b> Span<'b> {
    /// The span, or the error of `operation` (`Stream Read`, ...) when it does not fit.
    pub fn new(
        operation: &'static str,
        buffer: &'b dyn Buffer,
        offset: usize,
        len: usize,
    ) -> Result<Span<'b>, RuntimeError> {
        let size = buffer.len();
        match offset.checked_add(len) {
            Some(end) if end <= size => Ok(Span {
                buffer,
                offset,
                len,
            }),
            _ => Err(RuntimeError::HostLength {
                operation,
                expected: size.saturating_sub(offset),
                found: len,
            }),
        }
    }

    pub fn buffer(&self) -> &'b dyn Buffer {
        self.buffer
    }

    pub fn offset(&self) -> usize {
        self.offset
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Equally long rows at equal distances in a buffer (a 2-D box of a view), in bytes: `rows`
/// rows of `row_bytes`, the first at `first`, each `pitch` after the one before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Strided {
    pub first: usize,
    pub row_bytes: usize,
    pub pitch: usize,
    pub rows: usize,
}

impl Strided {
    /// The rows of element runs `(first element, length)` of `size`-byte elements, when they
    /// are equally long and equally spaced (more than one).
    pub fn of_runs(runs: &[(usize, usize)], size: usize) -> Option<Strided> {
        let (&(first, len), rest) = runs.split_first()?;
        let &(second, _) = rest.first()?;
        let step = second.checked_sub(first)?;
        let regular = runs
            .iter()
            .enumerate()
            .all(|(r, &(start, l))| l == len && start == first + r * step);
        regular.then_some(Strided {
            first: first * size,
            row_bytes: len * size,
            pitch: step * size,
            rows: runs.len(),
        })
    }

    /// The bytes from the first row's start to the last row's end.
    pub fn extent(&self) -> usize {
        self.rows.saturating_sub(1) * self.pitch + self.row_bytes
    }

    /// How many bytes the rows hold, packed.
    pub fn packed_len(&self) -> usize {
        self.rows * self.row_bytes
    }
}

/// [`Strided`] rows of a buffer, known to lie inside it.
#[derive(Clone, Copy)]
pub struct Rows<'b> {
    span: Span<'b>,
    rows: Strided,
}

impl<'b> Rows<'b> {
    /// The rows, or the error of `operation` when they do not fit the buffer.
    pub fn new(
        operation: &'static str,
        buffer: &'b dyn Buffer,
        rows: Strided,
    ) -> Result<Rows<'b>, RuntimeError> {
        let extent = rows
            .rows
            .saturating_sub(1)
            .checked_mul(rows.pitch)
            .and_then(|n| n.checked_add(rows.row_bytes))
            .unwrap_or(usize::MAX);
        let span = Span::new(operation, buffer, rows.first, extent)?;
        Ok(Rows { span, rows })
    }

    /// The bytes from the first row's start to the last row's end.
    pub fn span(&self) -> Span<'b> {
        self.span
    }

    pub fn layout(&self) -> Strided {
        self.rows
    }

    /// Each row as a span, in order.
    pub fn each(&self) -> impl Iterator<Item = Span<'b>> + '_ {
        (0..self.rows.rows).map(|r| Span {
            buffer: self.span.buffer,
            offset: self.rows.first + r * self.rows.pitch,
            len: self.rows.row_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Bytes(usize);

    impl Buffer for Bytes {
        fn len(&self) -> usize {
            self.0
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    #[test]
    fn equal_rows_at_equal_distances_are_one_strided_copy() {
        let rows = Strided::of_runs(&[(5, 3), (15, 3), (25, 3)], 4);
        assert_eq!(
            rows,
            Some(Strided {
                first: 20,
                row_bytes: 12,
                pitch: 40,
                rows: 3
            })
        );
        assert_eq!(
            Strided::of_runs(&[(5, 3)], 4),
            None,
            "one run is contiguous"
        );
        assert_eq!(
            Strided::of_runs(&[(0, 2), (10, 2), (30, 2)], 4),
            None,
            "uneven gaps"
        );
        assert_eq!(
            Strided::of_runs(&[(0, 2), (10, 3)], 4),
            None,
            "uneven lengths"
        );
    }

    #[test]
    fn spans_and_rows_are_checked_once_against_the_buffer() {
        let buffer = Bytes(112);
        assert!(Span::new("Stream Read", &buffer, 102, 10).is_ok());
        let e = Span::new("Stream Read", &buffer, 102, 11).err().unwrap();
        assert!(e.to_string().contains("Stream Read"), "{e}");
        assert!(Span::new("Stream Read", &buffer, usize::MAX, 2).is_err());
        let rows = Strided {
            first: 20,
            row_bytes: 12,
            pitch: 40,
            rows: 3,
        };
        let checked = Rows::new("Stream Write", &buffer, rows).unwrap();
        assert_eq!(checked.span().len(), 92);
        let starts: Vec<usize> = checked.each().map(|s| s.offset()).collect();
        assert_eq!(starts, [20, 60, 100]);
        let too_long = Strided { rows: 4, ..rows };
        assert!(Rows::new("Stream Write", &buffer, too_long).is_err());
    }
}
