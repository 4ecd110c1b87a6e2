//! The GPU strategies, written once for every GPU dialect over [`Gpu`]: the primitives a
//! dialect offers beside the kernel-body operations of [`crate::lower::Target`] (the
//! invocation's place in the launch, a pass entry's parameters, the reduction's combine
//! step, where a counter stack lives).
//!
//! - [`map`]: the map driver (a grid-stride loop, unrolled steps, 16-byte loads).
//! - [`reduce`]: the reduction and scan passes every GPU dialect has (the serial path, the
//!   subgroup path, the multi-pass scan), in the canonical order of `brook_ir::reduce_order`.
//!
//! PTX ([`crate::ptx`]) and SPIR-V ([`crate::spirv`]) implement [`Gpu`]; a dialect's own
//! faster paths (PTX's column reductions and one-pass scan) stay beside it.

pub mod map;
pub mod reduce;

use crate::lower::counter::Slots;
use crate::lower::Target;
use brook_ir::ScalarKind;
use reduce::Reduction;

/// The parameters a pass entry (a reduction's or a scan's) takes beside the parameter
/// block; see [`reduce`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassParam {
    /// The previous pass's values (a device address; 0 in the first pass).
    Src,
    /// Where this pass writes its values when it is not the last.
    Dst,
    /// Leaves per target in this pass.
    Leaves,
    /// Leaves per worker, a power of two.
    Piece,
    /// Pieces per target.
    Pieces,
    /// Bit 0: leaves come from `Src`; bit 1: results go to the targets; bit 2 (scans): the
    /// scan is exclusive. A `u32`.
    Mode,
    /// A scan's exclusive prefixes of its pieces (`[row][piece]`).
    Pre,
    /// An exclusive scan's initial value (a device address; 0 when it has none).
    Init,
    /// The one-pass scan's table of published tree nodes (zeroed; see
    /// [`reduce::lookback`]).
    Table,
    /// The one-pass scan's ticket counter (a zeroed `u32`).
    Ticket,
}

impl PassParam {
    /// The parameters of a reduction pass, in the order the runtime passes them: a scan's
    /// without `Pre` and `Init`.
    pub const REDUCE: &[PassParam] = PassParam::LOOKBACK.split_at(6).0;
    /// A scan pass's: the reduction's, then `Pre` and `Init`.
    pub const SCAN: &[PassParam] = PassParam::LOOKBACK.split_at(8).0;
    /// The one-pass scan's: a scan pass's, then `Table` and `Ticket`.
    pub const LOOKBACK: &[PassParam] = &[
        PassParam::Src,
        PassParam::Dst,
        PassParam::Leaves,
        PassParam::Piece,
        PassParam::Pieces,
        PassParam::Mode,
        PassParam::Pre,
        PassParam::Init,
        PassParam::Table,
        PassParam::Ticket,
    ];
}

/// What a GPU dialect offers the strategies. Index values are `u64` leaves.
pub trait Gpu<'ir>: Target<'ir> {
    /// The invocation's index in the launch, numbered across the whole grid (a `u64`).
    fn global_thread(&mut self) -> Self::Leaf;
    /// A pass parameter (`u64`; [`PassParam::Mode`] a `u32`).
    fn pass_param(&mut self, p: PassParam) -> Self::Leaf;
    /// One combine step of reduction `r`: the kernel body with the accumulator starting as
    /// `left` and the input bound to `right`; the accumulator's final value.
    fn combine_step(
        &mut self,
        r: &Reduction,
        left: &[Self::Leaf],
        right: &[Self::Leaf],
    ) -> Result<Vec<Self::Leaf>, Self::Error>;
    /// The slots of a counter stack of `levels` levels of `r`'s values: variables, or (a
    /// dialect's choice, for a heavy reduction) memory.
    fn stack_slots(&mut self, r: &Reduction, levels: usize) -> Slots<Self::Leaf, Self::Var>;
    /// Four consecutive scalars of `kind` (4 bytes) from `addr`, with one 16-byte load when
    /// `addr` is 16-byte aligned.
    fn load_quad(&mut self, kind: ScalarKind, addr: Self::Leaf) -> [Self::Leaf; 4];
    /// Four consecutive scalars of `kind` (4 bytes) from `addr`, 16-byte aligned: one load.
    fn load_aligned_quad(&mut self, kind: ScalarKind, addr: Self::Leaf) -> [Self::Leaf; 4];
    /// Stores four scalars of `kind` (4 bytes) at `addr`, 16-byte aligned: one store.
    fn store_aligned_quad(&mut self, kind: ScalarKind, addr: Self::Leaf, values: [Self::Leaf; 4]);
    /// The invocation's subgroup (a warp): where it stands in the launch and its size.
    fn subgroups(&mut self) -> Subgroups<Self::Leaf>;
    /// The value `v` (of `kind`) that lane `lane ^ mask` of the subgroup holds. Every lane
    /// of the subgroup runs it together.
    fn shuffle_xor(&mut self, kind: ScalarKind, v: Self::Leaf, mask: u64) -> Self::Leaf;
    /// The value `v` (of `kind`) that lane `lane` (a `u64`, the same in every lane) holds.
    /// Every lane of the subgroup runs it together.
    fn shuffle_from(&mut self, kind: ScalarKind, v: Self::Leaf, lane: Self::Leaf) -> Self::Leaf;
    /// Whether the bool `p` is true in every lane. Every lane of the subgroup runs it
    /// together.
    fn subgroup_all(&mut self, p: Self::Leaf) -> Self::Leaf;
    /// Adds `amount` to the `u32` at `addr` atomically (relaxed, at device scope); the old
    /// value, as a `u64`.
    fn atomic_add_u32(&mut self, addr: Self::Leaf, amount: u32) -> Self::Leaf;
    /// The `u64` at `addr` (8-byte aligned), read atomically (relaxed, at device scope): it
    /// sees the atomic stores of other workgroups, never a stale copy.
    fn atomic_load_u64(&mut self, addr: Self::Leaf) -> Self::Leaf;
    /// Stores the `u64` `v` at `addr` (8-byte aligned) atomically (relaxed, at device scope).
    fn atomic_store_u64(&mut self, addr: Self::Leaf, v: Self::Leaf);
    /// The bits of `v`, a scalar of `kind` of 4 or 8 bytes, as a `u64` (zero-extended).
    fn to_bits(&mut self, kind: ScalarKind, v: Self::Leaf) -> Self::Leaf;
    /// The scalar of `kind` (4 or 8 bytes) whose bits are the low bytes of the `u64` `bits`.
    fn scalar_of_bits(&mut self, kind: ScalarKind, bits: Self::Leaf) -> Self::Leaf;
}

/// An invocation's subgroup: its index among the launch's subgroups (`u64`s), the
/// invocation's lane in it, and its size.
#[derive(Clone, Copy, Debug)]
pub struct Subgroups<L> {
    pub index: L,
    pub count: L,
    pub lane: L,
    pub size: SubgroupSize<L>,
}

/// The most invocations a subgroup has (Vulkan's limit).
pub const MAX_SUBGROUP: u64 = 128;

/// How many lanes a subgroup has: a power of two known when the code is written (PTX's
/// warps of 32), or read at run time (Vulkan: 8 on lavapipe, 32 on NVIDIA, 64 on AMD), at
/// most `max`.
#[derive(Clone, Copy, Debug)]
pub enum SubgroupSize<L> {
    Fixed(u64),
    Runtime { size: L, max: u64 },
}
