//! Iterator streams (`iter float s<n> = iter(a, b);`): streams whose elements are computed from
//! their position ([`brook_ir::launch::iterator_value`]), never stored. An iterator is passed
//! wherever a kernel takes an input stream (also to a reduction); it cannot be written, gathered
//! from or viewed.

use crate::element::ElementType;
use crate::error::RuntimeError;
use crate::stream::addressing::unravel;
use crate::stream::shape::check_shape;
use brook_ir::launch::{iterator_axis, iterator_value};
use brook_ir::{ScalarKind, ValueType};

/// An iterator stream of `float` .. `float4` elements.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IterStream {
    width: u8,
    shape: Vec<usize>,
    start: [f32; 4],
    end: [f32; 4],
}

fn problem(dims: &[usize], text: String) -> RuntimeError {
    RuntimeError::Stream {
        code: crate::BError::Declaration,
        message: format!("Stream Allocation: iterator stream of shape {dims:?}: {text}"),
    }
}

impl IterStream {
    /// `iter(start, end)` over `dims` (slowest first); `start` and `end` have one value per
    /// component (1 to 4). A stream of rank `r >= 2` needs `r` components (`float2` for 2-D).
    pub fn new(dims: &[usize], start: &[f32], end: &[f32]) -> Result<IterStream, RuntimeError> {
        let width = start.len();
        if !(1..=4).contains(&width) || end.len() != width {
            return Err(problem(
                dims,
                format!(
                    "the start has {width} component(s) and the end {}; both need the element's 1 to 4",
                    end.len()
                ),
            ));
        }
        check_shape(dims, 4 * width)?;
        let rank = brook_ir::launch::normalized_shape(dims).len();
        if rank >= 2 && width != rank {
            return Err(problem(
                dims,
                format!("an iterator of rank {rank} has float{rank} elements, not {width} component(s): component k runs along axis k"),
            ));
        }
        let mut iter = IterStream {
            width: width as u8,
            shape: dims.to_vec(),
            start: [0.0; 4],
            end: [0.0; 4],
        };
        iter.start[..width].copy_from_slice(start);
        iter.end[..width].copy_from_slice(end);
        Ok(iter)
    }

    /// `float`, `float2`, `float3` or `float4`.
    pub fn element(&self) -> ElementType {
        ElementType::Value(ValueType::vector(ScalarKind::F32, self.width))
    }

    pub fn width(&self) -> usize {
        usize::from(self.width)
    }

    /// Dimensions, slowest first.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn start(&self) -> [f32; 4] {
        self.start
    }

    pub fn end(&self) -> [f32; 4] {
        self.end
    }

    /// The element at `pos` of the normalized shape (slowest first); unused components are 0.
    pub fn value(&self, pos: &[usize]) -> [f32; 4] {
        let shape = brook_ir::launch::normalized_shape(&self.shape);
        let mut out = [0.0; 4];
        for (k, slot) in out.iter_mut().enumerate().take(self.width()) {
            let axis = iterator_axis(shape.len(), k);
            *slot = iterator_value(self.start[k], self.end[k], pos[axis], shape[axis]);
        }
        out
    }

    /// Every element, row-major, as host bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let shape = brook_ir::launch::normalized_shape(&self.shape).to_vec();
        let mut pos = vec![0; shape.len()];
        let mut bytes = Vec::with_capacity(self.len() * 4 * self.width());
        for linear in 0..self.len() {
            unravel(linear, &shape, &mut pos);
            for v in &self.value(&pos)[..self.width()] {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(bytes: &[u8]) -> Vec<f32> {
        bytes
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn the_seed_iterators() {
        let s = IterStream::new(&[10], &[2.0], &[7.0]).unwrap();
        assert_eq!(
            floats(&s.to_bytes()),
            vec![2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5]
        );
        let s = IterStream::new(&[10], &[0.0, 0.0], &[10.0, 5.0]).unwrap();
        assert_eq!(&floats(&s.to_bytes())[..6], &[0.0, 0.0, 1.0, 0.5, 2.0, 1.0]);
        let s = IterStream::new(&[4, 4], &[0.0, 0.0], &[4.0, 10.0]).unwrap();
        let v = floats(&s.to_bytes());
        assert_eq!(&v[..8], &[0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 3.0, 0.0]);
        assert_eq!(&v[8..10], &[0.0, 2.5]);
        assert_eq!(&v[30..32], &[3.0, 7.5]);
    }

    #[test]
    fn a_2d_iterator_needs_two_components() {
        let e = IterStream::new(&[4, 4], &[0.0], &[1.0]).unwrap_err();
        assert!(e.to_string().contains("float2"), "{e}");
        assert!(IterStream::new(&[2, 3, 4], &[0.0; 3], &[1.0; 3]).is_ok());
        assert!(IterStream::new(&[4], &[0.0; 5], &[1.0; 5]).is_err());
    }
}
