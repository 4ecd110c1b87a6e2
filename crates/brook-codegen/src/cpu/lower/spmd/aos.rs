//! Stream elements of four 32-bit components (`float4`, `int4`, `uint4`) at a full gang's
//! consecutive positions, moved with one vector access per element and a 4x4 transpose
//! between elements (one vector each, as stored) and components (one vector of 4 lanes each,
//! as a gang computes), instead of a scalar access and a lane insert or extract per component.
//! Elements at addresses of each lane's own (gathers, shared arrays) move the same way, one
//! vector access per lane.

use super::lanes::{retype, shuffle_dwords};
use super::{packs, vector_type, Leaf, Spmd, MAX_PARTS};
use crate::leaves::Leaf as LayoutLeaf;
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};

/// Components per element, lanes per vector.
const WIDTH: usize = 4;

/// Four 32-bit vector-packed components (not bools) at offsets 0, 4, 8, 12.
fn is_quad(layout: &[LayoutLeaf]) -> bool {
    layout.len() == WIDTH
        && layout.iter().enumerate().all(|(i, leaf)| {
            packs(leaf.kind)
                && leaf.kind != brook_ir::ScalarKind::Bool
                && leaf.offset == 4 * i as u32
        })
}

/// `unpcklps`/`unpckhps` and `unpcklpd`/`unpckhpd` as 32-bit lane selections from `a`
/// (0-3) and `b` (4-7).
const LOW_DWORDS: [u8; 4] = [0, 4, 1, 5];
const HIGH_DWORDS: [u8; 4] = [2, 6, 3, 7];
const LOW_QWORDS: [u8; 4] = [0, 1, 4, 5];
const HIGH_QWORDS: [u8; 4] = [2, 3, 6, 7];

impl Spmd<'_, '_, '_> {
    /// The address of lane 0's element where `layout`'s leaves are four 32-bit vector-packed
    /// components at offsets 0, 4, 8, 12 of whole elements 16 bytes apart in a full gang.
    pub fn aos_base(&self, layout: &[LayoutLeaf], addr: Leaf) -> Option<Value> {
        let Leaf::Linear { base, step } = addr else {
            return None;
        };
        let fits = self.full && is_quad(layout) && self.constant_of(step) == Some(16);
        fits.then_some(base)
    }

    /// Whether whole elements of `layout` at `addr` are moved one vector per lane
    /// ([`Spmd::load_aos_lanes`], [`Spmd::store_aos_lanes`]): four 32-bit vector-packed
    /// components at offsets 0, 4, 8, 12, each lane at an address of its own.
    pub fn aos_lanes(&self, layout: &[LayoutLeaf], addr: Leaf) -> bool {
        !matches!(addr, Leaf::Uniform(_)) && is_quad(layout)
    }

    /// The components of the elements at each lane's address (`aos_lanes`), one vector load
    /// per lane: the gathers of `float4`s and shared `float4` arrays.
    pub fn load_aos_lanes(&mut self, layout: &[LayoutLeaf], addr: Leaf) -> Vec<Leaf> {
        self.load_quads(layout, |t, k| {
            (t.lane(addr, brook_ir::ScalarKind::I64, k), 0)
        })
    }

    /// The components of the gang's elements, lane `k`'s element at `at(k)` (an address
    /// and an offset): one vector load per lane, a transpose per part.
    fn load_quads(
        &mut self,
        layout: &[LayoutLeaf],
        at: impl Fn(&mut Self, usize) -> (Value, i32),
    ) -> Vec<Leaf> {
        let flags = MemFlagsData::new().with_notrap();
        let per_part: Vec<[Value; WIDTH]> = (0..self.parts())
            .map(|p| {
                let rows: [Value; WIDTH] = std::array::from_fn(|i| {
                    let (addr, offset) = at(self, WIDTH * p + i);
                    self.s.b.ins().load(types::I32X4, flags, addr, offset)
                });
                self.transpose(rows)
            })
            .collect();
        self.columns_to_leaves(layout, &per_part)
    }

    /// Stores `values` to each lane's element (`aos_lanes`) where every lane is active: one
    /// vector store per lane, in lane order (a later lane's element wins where two lanes'
    /// addresses are the same, as lane by lane).
    pub fn store_aos_lanes(&mut self, layout: &[LayoutLeaf], addr: Leaf, values: &[Leaf]) {
        let flags = MemFlagsData::new().with_notrap();
        let columns = self.leaves_to_columns(layout, values);
        let parts = self.parts();
        for (p, rows) in self.part_rows(&columns, parts).into_iter().enumerate() {
            for (i, &row) in rows.iter().enumerate() {
                let at = self.lane(addr, brook_ir::ScalarKind::I64, WIDTH * p + i);
                self.s.b.ins().store(flags, row, at, 0);
            }
        }
    }

    /// Each part's elements (one vector each) from the components' columns.
    fn part_rows(&mut self, columns: &[[Value; MAX_PARTS]], parts: usize) -> Vec<[Value; WIDTH]> {
        (0..parts)
            .map(|p| self.transpose(std::array::from_fn(|c| columns[c][p])))
            .collect()
    }

    fn columns_to_leaves(
        &mut self,
        layout: &[LayoutLeaf],
        per_part: &[[Value; WIDTH]],
    ) -> Vec<Leaf> {
        let parts = self.parts();
        let columns: [[Value; MAX_PARTS]; WIDTH] =
            std::array::from_fn(|c| std::array::from_fn(|p| per_part[p.min(parts - 1)][c]));
        layout
            .iter()
            .zip(columns)
            .map(|(leaf, parts)| {
                let ty = vector_type(leaf.kind);
                Leaf::Packed(parts.map(|v| self.retype(v, ty)))
            })
            .collect()
    }

    fn leaves_to_columns(
        &mut self,
        layout: &[LayoutLeaf],
        values: &[Leaf],
    ) -> Vec<[Value; MAX_PARTS]> {
        layout
            .iter()
            .zip(values)
            .map(|(leaf, &v)| {
                self.vectors(v, leaf.kind)
                    .map(|x| self.retype(x, types::I32X4))
            })
            .collect()
    }

    /// The components of the gang's elements at `base`, as one packed leaf each.
    pub fn load_aos(&mut self, layout: &[LayoutLeaf], base: Value) -> Vec<Leaf> {
        self.load_quads(layout, |_, k| (base, (16 * k) as i32))
    }

    /// Stores `values` (one leaf per component) to the gang's elements at `base`, in the
    /// active lanes (an inactive lane's element is written back as it was).
    pub fn store_aos(&mut self, layout: &[LayoutLeaf], base: Value, values: &[Leaf]) {
        let flags = MemFlagsData::new().with_notrap();
        let mask = self.mask();
        let columns = self.leaves_to_columns(layout, values);
        let parts = self.parts();
        for (p, rows) in self.part_rows(&columns, parts).into_iter().enumerate() {
            for (i, &row) in rows.iter().enumerate() {
                let at = (16 * (WIDTH * p + i)) as i32;
                let row = match mask {
                    None => row,
                    Some(m) => {
                        let old = self.s.b.ins().load(types::I32X4, flags, base, at);
                        let lane = i as u8;
                        let on = self.shuffle(m[p], m[p], [lane; WIDTH]);
                        self.blend_vector(false, on, row, old)
                    }
                };
                self.s.b.ins().store(flags, row, base, at);
            }
        }
    }

    /// Rows of four 32-bit lanes to columns (an involution: also columns to rows).
    fn transpose(&mut self, rows: [Value; WIDTH]) -> [Value; WIDTH] {
        let [r0, r1, r2, r3] = rows;
        let t0 = self.shuffle(r0, r1, LOW_DWORDS);
        let t1 = self.shuffle(r2, r3, LOW_DWORDS);
        let t2 = self.shuffle(r0, r1, HIGH_DWORDS);
        let t3 = self.shuffle(r2, r3, HIGH_DWORDS);
        [
            self.shuffle(t0, t1, LOW_QWORDS),
            self.shuffle(t0, t1, HIGH_QWORDS),
            self.shuffle(t2, t3, LOW_QWORDS),
            self.shuffle(t2, t3, HIGH_QWORDS),
        ]
    }

    /// The 32-bit lanes `lanes` picked from `a` (0-3) and `b` (4-7).
    fn shuffle(&mut self, a: Value, b: Value, lanes: [u8; WIDTH]) -> Value {
        shuffle_dwords(&mut self.s.b, a, b, lanes)
    }

    fn retype(&mut self, v: Value, ty: types::Type) -> Value {
        retype(&mut self.s.b, v, ty)
    }
}
