//! A gang's variables and memory accesses.
//!
//! - Variables: a write under a mask keeps the inactive lanes' values (a blend).
//! - Loads read every lane (inactive lanes' addresses are valid too: clamped, or a ragged
//!   gang's last real lane's). A full gang's consecutive 32-bit elements are one vector load
//!   per 4 lanes.
//! - Stores go lane by lane in lane order, so where lanes write the same element the last
//!   one wins, as in the domain's order. An inactive lane writes back what it reads (the
//!   element is its own, or a local's copy); inside a scatter's range guard an inactive lane
//!   writes nothing, as its address may be outside the stream. A full gang's consecutive
//!   32-bit elements are one (blended) vector store per 4 lanes.

use super::flow::Mask;
use super::{packs, vector_type, Leaf, Spmd, Var, MAX_LANES, MAX_PARTS, VECTOR_LANES};
use brook_ir::ScalarKind;
use cranelift_codegen::ir::{types, InstBuilder, InstructionData, MemFlagsData, Opcode, Value};

/// Vector accesses are only element-aligned.
fn vector_flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

impl Spmd<'_, '_, '_> {
    pub fn read_gang_var(&mut self, var: Var) -> Leaf {
        let (parts, lanes) = (self.parts(), self.lane_count());
        match var {
            Var::Uniform(v) => Leaf::Uniform(self.s.b.use_var(v)),
            Var::Cursor { var, step } => self.cursor(var, step),
            Var::Packed { vars, .. } => {
                let first = self.s.b.use_var(vars[0]);
                let mut out = [first; MAX_PARTS];
                for p in 1..parts {
                    out[p] = self.s.b.use_var(vars[p]);
                }
                Leaf::Packed(out)
            }
            Var::Lanes { vars, .. } => {
                let first = self.s.b.use_var(vars[0]);
                let mut out = [first; MAX_LANES];
                for k in 1..lanes {
                    out[k] = self.s.b.use_var(vars[k]);
                }
                Leaf::Lanes(out)
            }
        }
    }

    /// Sets every lane of `var` to `value`.
    pub fn def_var_all(&mut self, var: Var, value: Leaf) {
        match var {
            Var::Uniform(v) | Var::Cursor { var: v, .. } => {
                // Only a reduction's accumulator or a cursor is uniform, and neither is
                // written by a gang (gangs run map kernels, which only read cursors).
                let x = self.lane(value, ScalarKind::I64, 0);
                self.s.b.def_var(v, x);
            }
            Var::Packed { kind, vars, .. } => {
                let vectors = self.vectors(value, kind);
                for p in 0..self.parts() {
                    self.s.b.def_var(vars[p], vectors[p]);
                }
            }
            Var::Lanes { kind, vars, .. } => {
                for (k, &var) in vars.iter().enumerate().take(self.lane_count()) {
                    let x = self.lane(value, kind, k);
                    self.s.b.def_var(var, x);
                }
            }
        }
    }

    /// Writes `value` to `var` in the active lanes.
    pub fn write_gang_var(&mut self, var: Var, value: Leaf) {
        let scoped = match var {
            Var::Packed { scope, .. } | Var::Lanes { scope, .. } => scope == Some(self.depth),
            _ => false,
        };
        let mask = self.mask().filter(|_| !scoped);
        let Some(mask) = mask else {
            return self.def_var_all(var, value);
        };
        match var {
            Var::Packed { kind, vars, .. } => {
                let new = self.vectors(value, kind);
                let old = match self.read_gang_var(var) {
                    Leaf::Packed(old) => old,
                    _ => unreachable!("a packed variable reads packed"),
                };
                let blended = self.blend(kind, mask, new, old);
                for p in 0..self.parts() {
                    self.s.b.def_var(vars[p], blended[p]);
                }
            }
            Var::Lanes { kind, vars, .. } => {
                for (k, &var) in vars.iter().enumerate().take(self.lane_count()) {
                    let on = self.mask_lane(mask, k);
                    let new = self.lane(value, kind, k);
                    let old = self.s.b.use_var(var);
                    let x = self.s.b.ins().select(on, new, old);
                    self.s.b.def_var(var, x);
                }
            }
            _ => self.def_var_all(var, value),
        }
    }

    /// Lane `k` of a mask as an `i32` (nonzero when on).
    pub fn mask_lane(&mut self, mask: Mask, k: usize) -> Value {
        self.s
            .b
            .ins()
            .extractlane(mask[k / VECTOR_LANES], (k % VECTOR_LANES) as u8)
    }

    /// The constant an `i64` value was made from, if it was.
    pub fn constant_of(&self, v: Value) -> Option<i64> {
        let dfg = &self.s.b.func.dfg;
        let inst = dfg.value_def(v).inst()?;
        match dfg.insts[inst] {
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } => Some(imm.bits()),
            _ => None,
        }
    }

    /// Whether lanes of `kind` at `addr` are one vector access: a full gang's consecutive
    /// 32-bit elements.
    fn contiguous(&self, kind: ScalarKind, addr: Leaf) -> Option<Value> {
        let Leaf::Linear { base, step } = addr else {
            return None;
        };
        let fits = self.full
            && packs(kind)
            && kind != ScalarKind::Bool
            && self.constant_of(step) == Some(i64::from(kind.size()));
        fits.then_some(base)
    }

    /// One leaf of `kind` at `addr + offset` in every lane.
    pub fn load_leaf(&mut self, kind: ScalarKind, addr: Leaf, offset: u32) -> Leaf {
        if let Leaf::Uniform(a) = addr {
            return Leaf::Uniform(self.s.load_scalar(kind, a, offset));
        }
        if let Some(base) = self.contiguous(kind, addr) {
            return Leaf::Packed(self.load_vectors(kind, base, offset));
        }
        if let Some(gather) = self.consecutive_candidate(kind, addr, offset) {
            return self.load_consecutive(kind, gather, |t| t.load_lanes(kind, addr, offset));
        }
        self.load_lanes(kind, addr, offset)
    }

    /// One leaf of `kind` at `addr + offset`, loaded lane by lane.
    fn load_lanes(&mut self, kind: ScalarKind, addr: Leaf, offset: u32) -> Leaf {
        let lanes: Vec<Value> = (0..self.lane_count())
            .map(|k| {
                let at = self.lane(addr, ScalarKind::I64, k);
                self.s.load_scalar(kind, at, offset)
            })
            .collect();
        self.pack(kind, &lanes)
    }

    fn load_vectors(&mut self, kind: ScalarKind, base: Value, offset: u32) -> [Value; MAX_PARTS] {
        let ty = vector_type(kind);
        let first = self.s.b.ins().load(ty, vector_flags(), base, offset as i32);
        let mut out = [first; MAX_PARTS];
        for (p, slot) in out.iter_mut().enumerate().take(self.parts()).skip(1) {
            let at = offset as i32 + 16 * p as i32;
            *slot = self.s.b.ins().load(ty, vector_flags(), base, at);
        }
        out
    }

    /// Stores one leaf of `kind` at `addr + offset` in the active lanes.
    pub fn store_leaf(&mut self, kind: ScalarKind, addr: Leaf, offset: u32, value: Leaf) {
        let mask = self.mask();
        match (self.contiguous(kind, addr), mask) {
            (Some(base), mask) if !self.guarded => {
                self.store_vectors(kind, base, offset, value, mask);
            }
            // A scatter's store (inside its range guard): where every lane is in range, as in
            // all but a ragged edge's gangs, one vector store for consecutive elements, else
            // every lane's store without a branch each; lane by lane, each tested, otherwise.
            (contiguous, Some(m)) if self.guarded => {
                let all_on = self.all(m);
                let every = self.s.b.create_block();
                let some = self.s.b.create_block();
                let done = self.s.b.create_block();
                self.s.b.ins().brif(all_on, every, &[], some, &[]);
                self.s.b.seal_block(every);
                self.s.b.seal_block(some);
                self.s.b.switch_to_block(every);
                match (contiguous, self.consecutive_candidate(kind, addr, offset)) {
                    (Some(base), _) => self.store_vectors(kind, base, offset, value, None),
                    (None, Some(gather)) => self.store_consecutive(kind, gather, addr, value),
                    (None, None) => self.store_lanes(kind, addr, offset, value, None),
                }
                self.s.b.ins().jump(done, &[]);
                self.s.b.switch_to_block(some);
                self.store_lanes(kind, addr, offset, value, mask);
                self.s.b.ins().jump(done, &[]);
                self.s.b.seal_block(done);
                self.s.b.switch_to_block(done);
            }
            _ => self.store_lanes(kind, addr, offset, value, mask),
        }
    }

    /// A full gang's consecutive elements from `base + offset`, one vector store per 4 lanes;
    /// under `mask` the inactive lanes keep what they hold.
    fn store_vectors(
        &mut self,
        kind: ScalarKind,
        base: Value,
        offset: u32,
        value: Leaf,
        mask: Option<Mask>,
    ) {
        let new = self.vectors(value, kind);
        let stored = match mask {
            None => new,
            Some(m) => {
                let old = self.load_vectors(kind, base, offset);
                self.blend(kind, m, new, old)
            }
        };
        for (p, &part) in stored.iter().enumerate().take(self.parts()) {
            let at = offset as i32 + 16 * p as i32;
            self.s.b.ins().store(vector_flags(), part, base, at);
        }
    }

    /// Stores every lane's element of a scatter's `gather` address (all lanes active): one
    /// vector store per part where the indices turn out consecutive, lane by lane otherwise.
    fn store_consecutive(
        &mut self,
        kind: ScalarKind,
        gather: super::gather::GatherAddress,
        addr: Leaf,
        value: Leaf,
    ) {
        let first = self.s.b.ins().extractlane(gather.index[0], 0);
        let consecutive = self.is_consecutive(first, gather.index);
        let (vector, lanes, done) = (
            self.s.b.create_block(),
            self.s.b.create_block(),
            self.s.b.create_block(),
        );
        self.s.b.ins().brif(consecutive, vector, &[], lanes, &[]);
        self.s.b.seal_block(vector);
        self.s.b.seal_block(lanes);
        self.s.b.switch_to_block(vector);
        let wide = self.s.b.ins().uextend(types::I64, first);
        let base = self.s.element_address(gather.base, wide, gather.size);
        self.store_vectors(kind, base, 0, value, None);
        self.s.b.ins().jump(done, &[]);
        self.s.b.switch_to_block(lanes);
        self.store_lanes(kind, addr, 0, value, None);
        self.s.b.ins().jump(done, &[]);
        self.s.b.seal_block(done);
        self.s.b.switch_to_block(done);
    }

    /// Stores lane by lane, in lane order (see the module's notes on inactive lanes).
    fn store_lanes(
        &mut self,
        kind: ScalarKind,
        addr: Leaf,
        offset: u32,
        value: Leaf,
        mask: Option<Mask>,
    ) {
        for k in 0..self.lane_count() {
            let at = self.lane(addr, ScalarKind::I64, k);
            let x = self.lane(value, kind, k);
            match mask {
                None => self.s.store_scalar(x, at, offset),
                Some(m) if self.guarded => {
                    let on = self.mask_lane(m, k);
                    let (write, next) = (self.s.b.create_block(), self.s.b.create_block());
                    self.s.b.ins().brif(on, write, &[], next, &[]);
                    self.s.b.seal_block(write);
                    self.s.b.switch_to_block(write);
                    self.s.store_scalar(x, at, offset);
                    self.s.b.ins().jump(next, &[]);
                    self.s.b.switch_to_block(next);
                    self.s.b.seal_block(next);
                }
                Some(m) => {
                    let on = self.mask_lane(m, k);
                    let old = self.s.load_scalar(kind, at, offset);
                    let x = self.s.b.ins().select(on, x, old);
                    self.s.store_scalar(x, at, offset);
                }
            }
        }
    }
}
