//! Where a stream's elements lie in its buffer.
//!
//! A stream made by `RawStream::new` owns a row-major buffer. A `domain()` view shares its
//! parent's buffer: it is a box of the root stream (same rank), so its elements are found with
//! the root's row-major pitches from the box's origin. Every executor addresses stream elements
//! through an [`Addressing`], so views are read and written in place, never copied.

/// Element `pos` (slowest axis first) of a stream lies at element
/// `offset + sum(pos[k] * pitches[k])` of its buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Addressing {
    pub offset: usize,
    pub pitches: Dims,
}

/// Extents, positions or pitches of a stream's axes (at most four), held inline: a launch
/// allocates nothing for them.
pub type Dims = smallvec::SmallVec<[usize; 4]>;

impl Addressing {
    /// The addressing of a row-major buffer of `shape`.
    pub fn row_major(shape: &[usize]) -> Addressing {
        let mut pitches: Dims = smallvec::smallvec![1; shape.len()];
        for axis in (0..shape.len().saturating_sub(1)).rev() {
            pitches[axis] = pitches[axis + 1] * shape[axis + 1];
        }
        Addressing { offset: 0, pitches }
    }

    /// The buffer element of position `pos` (the same rank as the pitches).
    pub fn element(&self, pos: &[usize]) -> usize {
        self.offset
            + pos
                .iter()
                .zip(&self.pitches)
                .map(|(p, pitch)| p * pitch)
                .sum::<usize>()
    }

    /// The same elements seen with `rank` axes: leading axes (of extent 1) are dropped, or
    /// leading axes of extent 1 (pitch 0) are added.
    pub fn fit(&self, rank: usize) -> Addressing {
        let have = self.pitches.len();
        let pitches = if rank <= have {
            Dims::from_slice(&self.pitches[have - rank..])
        } else {
            let mut padded: Dims = smallvec::smallvec![0; rank - have];
            padded.extend_from_slice(&self.pitches);
            padded
        };
        Addressing {
            offset: self.offset,
            pitches,
        }
    }

    /// Whether the elements of `shape` fill `[offset, offset + len)` in row-major order.
    pub fn is_contiguous(&self, shape: &[usize]) -> bool {
        let dense = Addressing::row_major(shape);
        shape
            .iter()
            .zip(self.pitches.iter().zip(&dense.pitches))
            .all(|(&extent, (p, d))| extent == 1 || p == d)
    }

    /// The contiguous runs of `shape`'s elements in row-major order, `(first element, length)`:
    /// one run when the elements are contiguous, else one per row.
    pub fn runs(&self, shape: &[usize]) -> Vec<(usize, usize)> {
        if self.is_contiguous(shape) {
            return vec![(self.offset, shape.iter().product())];
        }
        self.rows(shape)
    }

    /// The rows (runs along the fastest axis) of `shape`'s elements in row-major order.
    pub fn rows(&self, shape: &[usize]) -> Vec<(usize, usize)> {
        let len: usize = shape.iter().product();
        let row = shape.last().copied().unwrap_or(1);
        let mut pos = vec![0; shape.len()];
        (0..len / row.max(1))
            .map(|r| {
                unravel(r * row, shape, &mut pos);
                (self.element(&pos), row)
            })
            .collect()
    }
}

/// The position (slowest axis first) of row-major index `linear` in `shape`.
pub fn unravel(mut linear: usize, shape: &[usize], pos: &mut [usize]) {
    for (p, &extent) in pos.iter_mut().zip(shape).rev() {
        *p = linear % extent.max(1);
        linear /= extent.max(1);
    }
}

/// A box of a root stream: its origin and extent per axis, in the root's axes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub origin: Vec<usize>,
    pub shape: Vec<usize>,
}

impl Region {
    /// Whether two boxes of one root share an element.
    pub fn overlaps(&self, other: &Region) -> bool {
        self.origin
            .iter()
            .zip(&self.shape)
            .zip(other.origin.iter().zip(&other.shape))
            .all(|((&a, &an), (&b, &bn))| a < b + bn && b < a + an)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_major_pitches_and_views() {
        let root = Addressing::row_major(&[3, 4, 5]);
        assert_eq!(root.pitches.as_slice(), [20, 5, 1]);
        assert_eq!(root.element(&[1, 2, 3]), 33);
        assert!(root.is_contiguous(&[3, 4, 5]));
        let view = Addressing {
            offset: root.element(&[1, 1, 1]),
            pitches: root.pitches.clone(),
        };
        assert!(!view.is_contiguous(&[2, 2, 2]));
        assert_eq!(view.runs(&[1, 2, 3]), vec![(26, 3), (31, 3)]);
        assert_eq!(root.runs(&[3, 4, 5]), vec![(0, 60)]);
        // A full-width view of whole rows is contiguous.
        assert!(view.is_contiguous(&[1, 1, 5]));
    }

    #[test]
    fn fitting_drops_or_adds_leading_axes() {
        let a = Addressing::row_major(&[1, 6]);
        assert_eq!(a.fit(1).pitches.as_slice(), [1]);
        assert_eq!(a.fit(3).pitches.as_slice(), [0, 6, 1]);
    }

    #[test]
    fn boxes_overlap_only_when_every_axis_does() {
        let a = Region {
            origin: vec![0, 0],
            shape: vec![2, 2],
        };
        let b = Region {
            origin: vec![1, 2],
            shape: vec![2, 2],
        };
        let c = Region {
            origin: vec![1, 1],
            shape: vec![1, 1],
        };
        assert!(!a.overlaps(&b));
        assert!(a.overlaps(&c));
        assert!(!b.overlaps(&c));
    }
}
