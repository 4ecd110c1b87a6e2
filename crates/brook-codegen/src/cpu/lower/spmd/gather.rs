//! Gathers whose lanes read consecutive elements: one vector load instead of one load per
//! lane.
//!
//! A gather's narrow element index is a vector ([`super::index`]); where a full gang's lanes
//! turn out to read elements `i, i + 1, ...` (a stencil's taps away from the edges, a matrix
//! row), a run-time test of the index vector sends them to a vector load of those elements,
//! and any other gang to the per-lane loads. Both give every lane its own element, so results
//! do not depend on the path.

use super::{Leaf, Spmd, MAX_LANES, MAX_PARTS};
use brook_ir::ScalarKind;
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};

/// A gather's address in every lane: `base + index[k] * size`.
#[derive(Clone, Copy, Debug)]
pub struct GatherAddress {
    pub base: Value,
    pub index: [Value; MAX_PARTS],
    pub size: u32,
}

impl Spmd<'_, '_, '_> {
    /// Remembers that the per-lane addresses `lanes` are `gather`'s.
    pub fn note_gather(&mut self, lanes: &[Value; MAX_LANES], gather: GatherAddress) {
        self.gathers.insert(lanes[0], gather);
    }

    /// The gather a per-lane address leaf came from, where one 32-bit leaf of `kind` at
    /// `offset` is a whole element that a vector load can read.
    pub fn consecutive_candidate(
        &self,
        kind: ScalarKind,
        addr: Leaf,
        offset: u32,
    ) -> Option<GatherAddress> {
        let Leaf::Lanes(lanes) = addr else {
            return None;
        };
        let gather = *self.gathers.get(&lanes[0])?;
        let fits = self.full
            && super::packs(kind)
            && kind != ScalarKind::Bool
            && offset == 0
            && gather.size == kind.size();
        fits.then_some(gather)
    }

    /// Loads lane `k`'s element of `gather` for every lane: one vector load per part where
    /// the indices are consecutive, `per_lane` otherwise.
    pub fn load_consecutive(
        &mut self,
        kind: ScalarKind,
        gather: GatherAddress,
        per_lane: impl FnOnce(&mut Self) -> Leaf,
    ) -> Leaf {
        let ty = super::vector_type(kind);
        let parts = self.parts();
        let first = self.s.b.ins().extractlane(gather.index[0], 0);
        let consecutive = self.is_consecutive(first, gather.index);
        let (vector, lanes, merge) = (
            self.s.b.create_block(),
            self.s.b.create_block(),
            self.s.b.create_block(),
        );
        for _ in 0..parts {
            self.s.b.append_block_param(merge, ty);
        }
        self.s.b.ins().brif(consecutive, vector, &[], lanes, &[]);

        self.s.b.seal_block(vector);
        self.s.b.switch_to_block(vector);
        let wide = self.s.b.ins().uextend(types::I64, first);
        let at = self.s.element_address(gather.base, wide, gather.size);
        let flags = MemFlagsData::new().with_notrap();
        let loaded: Vec<_> = (0..parts)
            .map(|p| {
                let v = self.s.b.ins().load(ty, flags, at, 16 * p as i32);
                cranelift_codegen::ir::BlockArg::Value(v)
            })
            .collect();
        self.s.b.ins().jump(merge, &loaded);

        self.s.b.seal_block(lanes);
        self.s.b.switch_to_block(lanes);
        let each = per_lane(self);
        let vectors = self.vectors(each, kind);
        let args: Vec<_> = vectors[..parts]
            .iter()
            .map(|&v| cranelift_codegen::ir::BlockArg::Value(v))
            .collect();
        self.s.b.ins().jump(merge, &args);

        self.s.b.seal_block(merge);
        self.s.b.switch_to_block(merge);
        let params = self.s.b.block_params(merge).to_vec();
        Leaf::Packed(std::array::from_fn(|p| params[p.min(parts - 1)]))
    }

    /// Whether lane `k` of `index` is `first + k` in every lane (an `i8`).
    pub fn is_consecutive(&mut self, first: Value, index: [Value; MAX_PARTS]) -> Value {
        let first = self.s.b.ins().splat(types::I32X4, first);
        let mut all = None;
        for (p, &part) in index.iter().enumerate().take(self.parts()) {
            let iota = self.lane_numbers(p);
            let expected = self.s.b.ins().iadd(first, iota);
            let same = self.s.b.ins().icmp(
                cranelift_codegen::ir::condcodes::IntCC::Equal,
                part,
                expected,
            );
            all = Some(match all {
                None => same,
                Some(a) => self.s.b.ins().band(a, same),
            });
        }
        let all = all.expect("a gang has a part");
        self.s.b.ins().vall_true(all)
    }
}
