//! The launch ABI shared by the native backends: one packed parameter block per launch, and the
//! variant of a kernel that a launch needs.
//!
//! The runtime builds a [`ParamBlock`] from a validated launch; compiled code reads everything it
//! needs from it (buffer addresses, shapes, pitches, the domain, iterator ranges, constants).
//! All fields are little-endian and naturally aligned; the layout is:
//!
//! | bytes | field |
//! |---|---|
//! | 0..32 | the domain, `u64` x 4, slowest axis first (unused axes 0) |
//! | 32..64 | the execution region's origin |
//! | 64..96 | the execution region's size |
//! | 96..128 | a reduction's tile (elements of input per target element, per axis) |
//! | 128.. | one record per kernel parameter, at [`BlockLayout::param_offset`] |
//!
//! A stream record (inputs, outputs, gathers, scatters, reduction targets) is the buffer
//! address (`u64`), the element offset of position 0 (`u64`), the shape (`u64` x 4, slowest
//! first, of the rank the launch bound) and the element pitches (`u64` x 4). An iterator record
//! has its shape at the same place, then `start` and `end` (`f32` x 4 each). A constant record
//! holds the value's bytes in C layout.

use brook_ir::{Kernel, KernelKind, Module, ParamRole};
use smallvec::SmallVec;

/// Byte offsets of the block's header fields.
pub mod header {
    pub const DOMAIN: u32 = 0;
    pub const REGION_ORIGIN: u32 = 32;
    pub const REGION_SIZE: u32 = 64;
    pub const TILE: u32 = 96;
    pub const SIZE: u32 = 128;
}

/// Byte offsets inside a stream or iterator record.
pub mod record {
    pub const ADDRESS: u32 = 0;
    pub const OFFSET: u32 = 8;
    pub const SHAPE: u32 = 16;
    pub const PITCH: u32 = 48;
    pub const ITER_START: u32 = 48;
    pub const ITER_END: u32 = 64;
    pub const STREAM_SIZE: u32 = 80;
}

/// The most axes a stream has.
pub const MAX_RANK: usize = 4;

/// Where each parameter's record lies in the block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockLayout {
    offsets: Vec<u32>,
    size: u32,
}

impl BlockLayout {
    pub fn new(module: &Module, kernel: &Kernel) -> BlockLayout {
        let mut offset = header::SIZE;
        let mut offsets = Vec::with_capacity(kernel.params.len());
        for param in &kernel.params {
            offsets.push(offset);
            let bytes = match param.role {
                ParamRole::Constant => module.layout(&param.ty).size.max(1),
                _ => record::STREAM_SIZE,
            };
            offset += bytes.next_multiple_of(8);
        }
        BlockLayout {
            offsets,
            size: offset,
        }
    }

    pub fn param_offset(&self, param: usize) -> u32 {
        self.offsets[param]
    }

    pub fn size(&self) -> usize {
        self.size as usize
    }
}

/// A parameter block under construction (8-byte aligned storage).
#[derive(Clone, Debug)]
pub struct ParamBlock {
    /// Inline up to [`INLINE_BLOCK_WORDS`] words: a launch's block is built on the calling
    /// thread and used on the device's, and an allocation freed on another thread costs
    /// both (launch overhead).
    words: SmallVec<[u64; INLINE_BLOCK_WORDS]>,
}

/// The words a [`ParamBlock`] holds without allocating: the header and four stream records
/// fit (56), six do not (76); `smallvec` offers 64.
pub const INLINE_BLOCK_WORDS: usize = 64;

impl ParamBlock {
    pub fn new(layout: &BlockLayout) -> ParamBlock {
        ParamBlock {
            words: smallvec::smallvec![0; layout.size().div_ceil(8)],
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.words.len() * 8;
        // SAFETY: a `u64` slice is valid as bytes of 8 times its length.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast::<u8>(), len) }
    }

    pub fn put_u64(&mut self, at: u32, value: u64) {
        let at = at as usize;
        self.bytes_mut()[at..at + 8].copy_from_slice(&value.to_le_bytes());
    }

    pub fn put_f32(&mut self, at: u32, value: f32) {
        let at = at as usize;
        self.bytes_mut()[at..at + 4].copy_from_slice(&value.to_le_bytes());
    }

    pub fn put_bytes(&mut self, at: u32, bytes: &[u8]) {
        let at = at as usize;
        self.bytes_mut()[at..at + bytes.len()].copy_from_slice(bytes);
    }

    /// Writes up to four `u64`s from `at` (slowest axis first).
    pub fn put_axes(&mut self, at: u32, values: &[usize]) {
        for (k, &v) in values.iter().take(MAX_RANK).enumerate() {
            self.put_u64(at + 8 * k as u32, v as u64);
        }
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.words.as_ptr().cast()
    }
}

/// How a launch binds one input parameter: the compiled code differs for each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InputMode {
    /// A stream of the domain's shape: read at the current position.
    Direct,
    /// A stream of another shape: read through implicit resize.
    Resized,
    /// An iterator of the domain's shape.
    Iterator,
    /// An iterator of another shape, resized.
    IteratorResized,
}

impl InputMode {
    pub fn is_iterator(self) -> bool {
        matches!(self, InputMode::Iterator | InputMode::IteratorResized)
    }

    pub fn is_resized(self) -> bool {
        matches!(self, InputMode::Resized | InputMode::IteratorResized)
    }
}

/// What a compiled kernel is specialised for: the domain's rank and how each input is bound
/// (`None` for parameters that are not inputs). One kernel may have several variants.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    pub rank: usize,
    pub inputs: Vec<Option<InputMode>>,
    /// Every input of the domain's shape and every output has a fastest-axis pitch of 1 (true
    /// for every stream and `domain()` view of a row-major stream).
    pub unit_stride: bool,
    /// Every element index the launch computes fits in 31 bits ([`NARROW_INDEX_LIMIT`]):
    /// the domain, the region, every bound stream's elements (offset plus the last
    /// element's place) and every implicit resize's product of extents. A backend may then
    /// do its index arithmetic in 32 bits. Reductions never use it.
    pub narrow_index: bool,
    /// A reduction launched as a scan: a compiled module then has a scan entry
    /// ([`ReduceShape::Scan`]).
    pub scan: bool,
}

/// Indices below this fit the 32-bit index arithmetic of a [`Variant::narrow_index`]
/// variant as non-negative signed values.
pub const NARROW_INDEX_LIMIT: u64 = 1 << 31;

/// What a launch binds to one input or iterator parameter, as far as a variant depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputBinding {
    /// An iterator (else a stream).
    pub iterator: bool,
    /// Its shape differs from the domain's (read through implicit resize; reductions read
    /// their input by tiles and never resize).
    pub other_shape: bool,
}

impl Variant {
    /// The variant of `kernel` for a launch over `rank` axes: `bound(p)` tells how input or
    /// iterator parameter `p` is bound (`None`: not bound to a stream or iterator); other
    /// parameters get no mode. The one place a variant is made (the devices, brcc and the
    /// benchmarks all come here).
    pub fn new(
        kernel: &Kernel,
        rank: usize,
        (unit_stride, narrow_index): (bool, bool),
        mut bound: impl FnMut(usize) -> Option<InputBinding>,
    ) -> Variant {
        let reduce = kernel.kind == KernelKind::Reduce;
        let inputs = kernel
            .params
            .iter()
            .enumerate()
            .map(|(index, param)| {
                if !matches!(param.role, ParamRole::Input | ParamRole::Iterator) {
                    return None;
                }
                let b = bound(index)?;
                let resized = !reduce && b.other_shape;
                Some(match (b.iterator, resized) {
                    (false, false) => InputMode::Direct,
                    (false, true) => InputMode::Resized,
                    (true, false) => InputMode::Iterator,
                    (true, true) => InputMode::IteratorResized,
                })
            })
            .collect();
        Variant {
            rank,
            inputs,
            unit_stride,
            narrow_index: narrow_index && !reduce,
            scan: false,
        }
    }

    /// The variant of `kernel` for the plainest launch over `rank` axes: every input stream
    /// and iterator of the domain's shape, every stream row-major and under 2^31 elements
    /// (what `brcc --emit ptx` writes and the benchmarks compile).
    pub fn plain(kernel: &Kernel, rank: usize) -> Variant {
        Variant::new(kernel, rank, (true, true), |index| {
            Some(InputBinding {
                iterator: kernel.params[index].role == ParamRole::Iterator,
                other_shape: false,
            })
        })
    }
}

/// How one entry of a compiled reduction reduces the pieces of a pass (the runtime's planner,
/// `brook_runtime::reduce_plan`, picks an entry per pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceShape {
    /// A thread (a call, on the CPU) per piece of one target's leaves, in any layout.
    Serial,
    /// A warp per piece; each target's leaves must be consecutive in memory.
    Warp,
    /// A thread per four neighbouring targets' pieces; their leaves must lie side by side.
    Columns,
    /// A thread scans a piece of a row from its prefix (a [`Variant::scan`] module's entry,
    /// never a reduction pass's).
    Scan,
    /// A warp scans a tile of a row whose leaves are consecutive, in one pass over the data
    /// (a [`Variant::scan`] module's entry, for stream inputs).
    ScanTiles,
    /// A subgroup scans a piece of a row whose leaves are consecutive from its prefix, as
    /// [`ReduceShape::Scan`]'s thread does (a [`Variant::scan`] module's entry).
    ScanWarp,
    /// Subgroups take the tiles of rows whose leaves are consecutive by ticket and scan each
    /// in one pass over the data, their prefixes from a table of published tree nodes
    /// (`gpu::reduce::lookback`; a [`Variant::scan`] module's entry, for stream inputs).
    ScanLookback,
}

/// An entry a compiled reduction declares: its name in the compiled module, its shape, and
/// the most leaves one piece may have (a power of two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceEntry {
    pub name: &'static str,
    pub shape: ReduceShape,
    pub max_piece: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_kernels::param;

    fn kernel(kind: KernelKind, roles: &[ParamRole]) -> Kernel {
        let params = roles.iter().map(|role| param(role.clone(), 1)).collect();
        crate::test_kernels::kernel(kind, params)
    }

    #[test]
    fn a_variant_gives_modes_to_inputs_and_iterators_only() {
        let roles = [
            ParamRole::Input,
            ParamRole::Iterator,
            ParamRole::Input,
            ParamRole::Constant,
            ParamRole::Output,
        ];
        let k = kernel(KernelKind::Map, &roles);
        let bound = |index: usize| {
            Some(InputBinding {
                iterator: index == 1,
                other_shape: index >= 1,
            })
        };
        let v = Variant::new(&k, 2, (false, false), bound);
        assert_eq!(
            v.inputs,
            [
                Some(InputMode::Direct),
                Some(InputMode::IteratorResized),
                Some(InputMode::Resized),
                None,
                None
            ]
        );
        assert_eq!((v.rank, v.unit_stride), (2, false));
        let plain = Variant::plain(&k, 1);
        assert_eq!(
            plain.inputs,
            [
                Some(InputMode::Direct),
                Some(InputMode::Iterator),
                Some(InputMode::Direct),
                None,
                None
            ]
        );
        assert!(plain.unit_stride && plain.narrow_index);
    }

    #[test]
    fn a_reduction_input_of_another_shape_is_not_resized() {
        let k = kernel(KernelKind::Reduce, &[ParamRole::Input, ParamRole::Reduce]);
        let v = Variant::new(&k, 1, (true, true), |_| {
            Some(InputBinding {
                iterator: false,
                other_shape: true,
            })
        });
        assert_eq!(v.inputs, [Some(InputMode::Direct), None]);
        // Reduction drivers index in 64 bits whatever the launch.
        assert!(!v.narrow_index);
    }
}
