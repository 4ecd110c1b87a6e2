//! Moving a gang's values between their forms ([`Leaf`]): one lane as a scalar, lanes packed
//! into vectors, and operations applied lane by lane through the scalar lowering (the form
//! every operation without a vector instruction takes).

use super::{packs, vector_type, Leaf, Spmd, MAX_LANES, MAX_PARTS, VECTOR_LANES};
use crate::cpu::lower::Lower;
use brook_ir::ScalarKind;
use cranelift_codegen::ir::{
    condcodes::IntCC, types, ConstantData, Endianness, InstBuilder, MemFlagsData, Value,
};
use cranelift_frontend::FunctionBuilder;

impl Spmd<'_, '_, '_> {
    /// Lanes per gang.
    pub fn lane_count(&self) -> usize {
        self.gang.lanes()
    }

    /// Vectors per packed value.
    pub fn parts(&self) -> usize {
        self.gang.parts
    }

    /// The lane numbers of part `p`, `4p .. 4p + 3`, as an `I32X4` constant.
    pub fn lane_numbers(&mut self, p: usize) -> Value {
        let bytes: Vec<u8> = (0..VECTOR_LANES)
            .flat_map(|i| ((p * VECTOR_LANES + i) as i32).to_le_bytes())
            .collect();
        let constant = self
            .s
            .b
            .func
            .dfg
            .constants
            .insert(ConstantData::from(bytes));
        self.s.b.ins().vconst(types::I32X4, constant)
    }

    /// Lane `k` of `leaf` (of `kind`) as the scalar lowering holds it (a bool as `i8` 0 or 1).
    pub fn lane(&mut self, leaf: Leaf, kind: ScalarKind, k: usize) -> Value {
        match leaf {
            Leaf::Uniform(v) => v,
            Leaf::Linear { base, step } => {
                let scaled = self.s.b.ins().imul(self.offsets[k], step);
                self.s.b.ins().iadd(base, scaled)
            }
            Leaf::Packed(parts) => {
                let vector = parts[k / VECTOR_LANES];
                let x = self.s.b.ins().extractlane(vector, (k % VECTOR_LANES) as u8);
                if kind == ScalarKind::Bool {
                    self.s.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0)
                } else {
                    x
                }
            }
            Leaf::Lanes(values) => values[k],
        }
    }

    /// Every lane of `leaf`.
    pub fn all_lanes(&mut self, leaf: Leaf, kind: ScalarKind) -> Vec<Value> {
        (0..self.lane_count())
            .map(|k| self.lane(leaf, kind, k))
            .collect()
    }

    /// A gang value from one scalar per lane (of `kind`, in the scalar lowering's types).
    pub fn pack(&mut self, kind: ScalarKind, lanes: &[Value]) -> Leaf {
        if !packs(kind) {
            let mut all = [lanes[0]; MAX_LANES];
            all[..lanes.len()].copy_from_slice(lanes);
            return Leaf::Lanes(all);
        }
        let ty = vector_type(kind);
        let mut parts = Vec::with_capacity(self.parts());
        for chunk in lanes.chunks(VECTOR_LANES) {
            let mut vector = None;
            for (i, &x) in chunk.iter().enumerate() {
                let x = if kind == ScalarKind::Bool {
                    self.s.b.ins().bmask(types::I32, x)
                } else {
                    x
                };
                vector = Some(match vector {
                    None => self.s.b.ins().scalar_to_vector(ty, x),
                    Some(v) => self.s.b.ins().insertlane(v, x, i as u8),
                });
            }
            parts.extend(vector);
        }
        Leaf::Packed(std::array::from_fn(|p| parts[p.min(parts.len() - 1)]))
    }

    /// The vectors of `leaf`, a value of a packed `kind` in any form.
    pub fn vectors(&mut self, leaf: Leaf, kind: ScalarKind) -> [Value; MAX_PARTS] {
        match leaf {
            Leaf::Packed(parts) => parts,
            Leaf::Uniform(v) => [self.splat(kind, v); MAX_PARTS],
            _ => {
                let lanes = self.all_lanes(leaf, kind);
                match self.pack(kind, &lanes) {
                    Leaf::Packed(parts) => parts,
                    _ => unreachable!("a packed kind packs"),
                }
            }
        }
    }

    /// A scalar of `kind` in every lane of a vector.
    pub fn splat(&mut self, kind: ScalarKind, v: Value) -> Value {
        let x = if kind == ScalarKind::Bool {
            self.s.b.ins().bmask(types::I32, v)
        } else {
            v
        };
        self.s.b.ins().splat(vector_type(kind), x)
    }

    /// `leaf` in the varying form of `kind` (packed, or one scalar per lane).
    pub fn varying(&mut self, leaf: Leaf, kind: ScalarKind) -> Leaf {
        if packs(kind) {
            return Leaf::Packed(self.vectors(leaf, kind));
        }
        match leaf {
            Leaf::Lanes(_) => leaf,
            _ => {
                let lanes = self.all_lanes(leaf, kind);
                self.pack(kind, &lanes)
            }
        }
    }

    /// `f` of the scalar lowering applied to each lane of `args` (each with its kind): once
    /// where every argument is uniform. The result is of kind `out`.
    pub fn per_lane(
        &mut self,
        args: &[(Leaf, ScalarKind)],
        out: ScalarKind,
        mut f: impl FnMut(&mut Lower<'_, '_>, &[Value]) -> Value,
    ) -> Leaf {
        if let Some(values) = uniform_values(args.iter().map(|a| a.0)) {
            return Leaf::Uniform(f(self.s, &values));
        }
        let results: Vec<Value> = (0..self.lane_count())
            .map(|k| {
                let values: Vec<Value> = args
                    .iter()
                    .map(|&(leaf, kind)| self.lane(leaf, kind, k))
                    .collect();
                f(self.s, &values)
            })
            .collect();
        self.pack(out, &results)
    }

    /// Like [`Spmd::per_lane`] for functions of whole values: `args` are values' leaves,
    /// and `f` returns the leaves of a value whose leaves are of kind `out`.
    pub fn per_lane_values(
        &mut self,
        args: &[Vec<Leaf>],
        kind: ScalarKind,
        out: ScalarKind,
        mut f: impl FnMut(&mut Lower<'_, '_>, &[Vec<Value>]) -> Vec<Value>,
    ) -> Vec<Leaf> {
        let all = args.iter().flatten().copied();
        if uniform_values(all).is_some() {
            let values: Vec<Vec<Value>> = args
                .iter()
                .map(|a| a.iter().map(|l| self.lane(*l, kind, 0)).collect())
                .collect();
            return f(self.s, &values).into_iter().map(Leaf::Uniform).collect();
        }
        let mut per_leaf: Vec<Vec<Value>> = Vec::new();
        for k in 0..self.lane_count() {
            let values: Vec<Vec<Value>> = args
                .iter()
                .map(|a| a.iter().map(|l| self.lane(*l, kind, k)).collect())
                .collect();
            let results = f(self.s, &values);
            per_leaf.resize(results.len(), Vec::new());
            for (slot, r) in per_leaf.iter_mut().zip(results) {
                slot.push(r);
            }
        }
        per_leaf
            .into_iter()
            .map(|lanes| self.pack(out, &lanes))
            .collect()
    }
}

/// The scalars of leaves that are all uniform.
pub fn uniform_values(leaves: impl IntoIterator<Item = Leaf>) -> Option<Vec<Value>> {
    leaves
        .into_iter()
        .map(|l| match l {
            Leaf::Uniform(v) => Some(v),
            _ => None,
        })
        .collect()
}

/// The first `parts` vectors of a packed value, mapped by `f`.
pub fn map_parts(
    parts: usize,
    a: [Value; MAX_PARTS],
    mut f: impl FnMut(Value) -> Value,
) -> [Value; MAX_PARTS] {
    let first = f(a[0]);
    let mut out = [first; MAX_PARTS];
    for p in 1..parts {
        out[p] = f(a[p]);
    }
    out
}

/// The first `parts` vectors of two packed values, combined by `f`.
pub fn zip_parts(
    parts: usize,
    a: [Value; MAX_PARTS],
    b: [Value; MAX_PARTS],
    mut f: impl FnMut(Value, Value) -> Value,
) -> [Value; MAX_PARTS] {
    let first = f(a[0], b[0]);
    let mut out = [first; MAX_PARTS];
    for p in 1..parts {
        out[p] = f(a[p], b[p]);
    }
    out
}

/// `v` as a vector of type `ty` (the same bits).
pub fn retype(b: &mut FunctionBuilder<'_>, v: Value, ty: types::Type) -> Value {
    if b.func.dfg.value_type(v) == ty {
        return v;
    }
    let little = MemFlagsData::new().with_endianness(Endianness::Little);
    b.ins().bitcast(ty, little, v)
}

/// The 32-bit lanes `lanes` picked from `a` (0-3) and `c` (4-7), in `a`'s type (one
/// `unpck*`, `shufps` or `pshufb` form on x86-64).
pub fn shuffle_dwords(b: &mut FunctionBuilder<'_>, a: Value, c: Value, lanes: [u8; 4]) -> Value {
    let ty = b.func.dfg.value_type(a);
    let bytes: Vec<u8> = lanes
        .iter()
        .flat_map(|&l| (0..4).map(move |byte| 4 * l + byte))
        .collect();
    let mask = b.func.dfg.immediates.push(ConstantData::from(bytes));
    let x = retype(b, a, types::I8X16);
    let y = retype(b, c, types::I8X16);
    let r = b.ins().shuffle(x, y, mask);
    retype(b, r, ty)
}
