//! Typed iterator streams.

use crate::error::Error;
use brook_runtime::Element;
use std::marker::PhantomData;

/// The element types an iterator can have: `f32` (`float`) and `[f32; 2..4]` (`float2`..`float4`).
pub trait IterElement: Element {
    /// The components, `.x` first.
    fn components(&self) -> Vec<f32>;
}

impl IterElement for f32 {
    fn components(&self) -> Vec<f32> {
        vec![*self]
    }
}

impl<const N: usize> IterElement for [f32; N]
where
    [f32; N]: Element,
{
    fn components(&self) -> Vec<f32> {
        self.to_vec()
    }
}

/// An iterator stream, `iter float s<n> = iter(start, end);`: element `i` is
/// `start + (end - start) * i / n`, computed where it is read, never stored. Pass it wherever a
/// kernel takes an input stream. A 2-D iterator has `[f32; 2]` elements: `.x` runs along the
/// columns and `.y` along the rows (rank `r` needs `r` components).
#[derive(Clone, Debug)]
pub struct IterStream<T: IterElement> {
    raw: brook_runtime::IterStream,
    marker: PhantomData<T>,
}

impl<T: IterElement> IterStream<T> {
    /// `iter(start, end)` over `dims` (slowest first).
    pub fn new(dims: &[usize], start: T, end: T) -> Result<Self, Error> {
        let raw = brook_runtime::IterStream::new(dims, &start.components(), &end.components())?;
        Ok(IterStream {
            raw,
            marker: PhantomData,
        })
    }

    /// The elements, row-major (an error when the host memory for them cannot be had).
    pub fn to_vec(&self) -> Result<Vec<T>, Error> {
        crate::stream::from_bytes(&self.raw.to_bytes(), self.raw.len())
    }

    pub fn shape(&self) -> &[usize] {
        self.raw.shape()
    }

    pub fn raw(&self) -> &brook_runtime::IterStream {
        &self.raw
    }
}
