//! [`Spmd`] as the shared lowering's [`Target`]: the gang's forms of each primitive.

use super::flow::{Mask, SpmdIf, SpmdLoop};
use super::{Leaf, Spmd, Var};
use crate::cpu::helpers::{self, Helper};
use crate::cpu::layout::leaves;
use crate::cpu::lower::PTR;
use crate::lower::{Binding, Memory, Root, StreamRef, Target};
use crate::CompileError;
use brook_ir::{
    BinaryOp, Expr, Handle, Kernel, Literal, Local, MathFun, Module, ParamId, ScalarKind, Type,
    UnaryOp,
};
use cranelift_codegen::ir::InstBuilder;
use std::collections::HashMap;

use cranelift_codegen::ir::types::I32 as I32_TYPE;
use ScalarKind::I64;

/// What a scatter's range guard restores.
pub struct GangGuard {
    saved: Option<Mask>,
    was_guarded: bool,
}

fn uniform(values: Vec<cranelift_codegen::ir::Value>) -> Vec<Leaf> {
    values.into_iter().map(Leaf::Uniform).collect()
}

impl<'a> Target<'a> for Spmd<'_, 'a, '_> {
    type Leaf = Leaf;
    type Var = Var;
    type Error = CompileError;

    fn module(&self) -> &'a Module {
        self.s.module
    }

    fn kernel(&self) -> &'a Kernel {
        self.s.kernel
    }

    fn memo(&mut self) -> &mut HashMap<Handle<Expr>, Vec<Leaf>> {
        &mut self.memo
    }

    fn index_within(&mut self, h: Handle<Expr>, len: u32) -> bool {
        self.s.bounds.within(h, len)
    }

    fn unsupported(&self, h: Handle<Expr>, what: String) -> CompileError {
        self.s.unsupported(h, what)
    }

    fn induction(&mut self) -> &mut crate::lower::induction::Induction<Leaf, Var> {
        &mut self.induction
    }

    fn max_fast_loop_gathers(&self) -> usize {
        super::super::FAST_LOOP_GATHERS
    }

    fn literal(&mut self, lit: Literal) -> Leaf {
        Leaf::Uniform(Target::literal(self.s, lit))
    }

    fn zeros(&mut self, ty: &Type) -> Vec<Leaf> {
        uniform(Target::zeros(self.s, ty))
    }

    fn unary(&mut self, op: UnaryOp, kind: ScalarKind, v: Leaf) -> Leaf {
        self.gang_unary(op, kind, v)
    }

    fn binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Leaf, b: Leaf) -> Leaf {
        self.gang_binary(op, kind, a, b)
    }

    fn select(&mut self, kind: ScalarKind, c: Leaf, a: Leaf, b: Leaf) -> Leaf {
        self.gang_select(kind, c, a, b)
    }

    fn convert(&mut self, from: ScalarKind, to: ScalarKind, v: Leaf) -> Leaf {
        self.gang_convert(from, to, v)
    }

    type Helper = Helper;

    fn math_helper(&self, fun: MathFun, double: bool) -> Option<Helper> {
        helpers::math_helper(fun, double)
    }

    fn call_math_helper(&mut self, helper: Helper, kind: ScalarKind, lane: &[Leaf]) -> Leaf {
        self.gang_helper(helper, kind, lane)
    }

    fn exact_math(&mut self, fun: MathFun, kind: ScalarKind, args: &[Vec<Leaf>]) -> Vec<Leaf> {
        self.gang_exact_math(fun, kind, args)
    }

    fn index_kind(&self) -> ScalarKind {
        if self.plan.narrow {
            ScalarKind::U32
        } else {
            ScalarKind::U64
        }
    }

    fn to_index(&mut self, kind: ScalarKind, v: Leaf) -> Leaf {
        if self.plan.narrow {
            return self.narrow_to_index(kind, v);
        }
        self.gang_to_index(kind, v)
    }

    fn index_constant(&mut self, value: u64) -> Leaf {
        let ty = if self.plan.narrow { I32_TYPE } else { PTR };
        Leaf::Uniform(self.s.iconst(ty, value as i64))
    }

    fn clamp_index(&mut self, i: Leaf, extent: Leaf) -> Leaf {
        if self.plan.narrow {
            return self.narrow_clamp(i, extent);
        }
        self.per_lane(&[(i, I64), (extent, I64)], I64, |s, v| {
            Target::clamp_index(s, v[0], v[1])
        })
    }

    fn mul_index(&mut self, a: Leaf, b: Leaf) -> Leaf {
        let kind = self.index_kind();
        self.gang_binary(BinaryOp::Mul, kind, a, b)
    }

    fn div_index(&mut self, a: Leaf, b: Leaf) -> Leaf {
        let kind = self.index_kind();
        self.per_lane(&[(a, kind), (b, kind)], kind, |s, v| {
            s.b.ins().udiv(v[0], v[1])
        })
    }

    fn element_index(&mut self, offset: Leaf, at: &[Leaf], pitch: &[Leaf]) -> Leaf {
        let kind = self.index_kind();
        let mut sum = offset;
        for (&i, &p) in at.iter().zip(pitch) {
            let term = self.gang_binary(BinaryOp::Mul, kind, i, p);
            sum = self.gang_binary(BinaryOp::Add, kind, sum, term);
        }
        sum
    }

    fn element_address(&mut self, base: Leaf, index: Leaf, size: u32) -> Leaf {
        if self.plan.narrow {
            return self.narrow_address(base, index, size);
        }
        let size = Leaf::Uniform(self.s.iconst(PTR, i64::from(size)));
        let bytes = self.gang_binary(BinaryOp::Mul, I64, index, size);
        self.gang_binary(BinaryOp::Add, I64, base, bytes)
    }

    fn block_index(&mut self, at: u32) -> Leaf {
        let word = Target::block_u64(self.s, at);
        if self.plan.narrow {
            return Leaf::Uniform(self.narrow_word(word));
        }
        Leaf::Uniform(word)
    }

    fn block_u64(&mut self, at: u32) -> Leaf {
        Leaf::Uniform(Target::block_u64(self.s, at))
    }

    fn block_scalar(&mut self, kind: ScalarKind, at: u32) -> Leaf {
        Leaf::Uniform(Target::block_scalar(self.s, kind, at))
    }

    /// Gangs take their cursors from the scalar lowering's bindings ([`super::Plan`]); a
    /// cursor made here steps by the stream's fastest-axis pitch.
    fn element_variable(&mut self, stream: &StreamRef<Leaf>) -> Var {
        let mut scalar = |l: &Leaf| self.lane(*l, I64, 0);
        let scalar_stream = StreamRef {
            base: scalar(&stream.base),
            offset: scalar(&stream.offset),
            shape: stream.shape.iter().map(&mut scalar).collect(),
            pitch: stream.pitch.iter().map(&mut scalar).collect(),
            size: stream.size,
        };
        let var = Target::element_variable(self.s, &scalar_stream);
        let step = self.s.cursors.last().map(|c| c.step);
        let step = step.unwrap_or_else(|| self.s.iconst(PTR, 0));
        Var::Cursor { var, step }
    }

    fn binding(&self, p: ParamId) -> Binding<Leaf, Var> {
        self.plan.bindings[p.0 as usize].clone()
    }

    /// Lane 0's position; the fastest axis steps by one per lane.
    fn position(&mut self) -> Vec<Leaf> {
        let vars = self.s.pos.clone();
        let last = vars.len().saturating_sub(1);
        let narrow = self.plan.narrow;
        vars.iter()
            .enumerate()
            .map(|(axis, &v)| {
                let p = self.s.b.use_var(v);
                if narrow && axis == last {
                    self.narrow_fastest_position(p)
                } else if narrow {
                    Leaf::Uniform(self.narrow_word(p))
                } else if axis == last {
                    let step = self.s.iconst(PTR, 1);
                    Leaf::Linear { base: p, step }
                } else {
                    Leaf::Uniform(p)
                }
            })
            .collect()
    }

    fn domain(&self) -> Vec<Leaf> {
        uniform(self.plan.domain.clone())
    }

    /// `x` is lane 0's place in the group plus the lane's offset (a gang of a group's
    /// threads, [`super::group`]); `y`, `z` and `w` are 0.
    fn instance_in_group(&mut self) -> Vec<Leaf> {
        let mut leaves = uniform(Target::instance_in_group(self.s));
        if let Some(first) = self.s.in_group {
            leaves[0] = self.narrow_fastest_position(first);
        }
        leaves
    }

    fn temporary(&mut self, kind: ScalarKind) -> Var {
        let var = super::declare(self.s, kind, None);
        let zero = self.s.zero(kind);
        self.def_var_all(var, Leaf::Uniform(zero));
        var
    }

    fn read_var(&mut self, var: Var) -> Leaf {
        self.read_gang_var(var)
    }

    fn snapshot_var(&mut self, var: Var) -> Leaf {
        self.read_gang_var(var)
    }

    fn write_var(&mut self, var: Var, value: Leaf) {
        self.write_gang_var(var, value);
    }

    fn local(&self, l: Handle<Local>) -> Root<Leaf, Var> {
        self.local_root(l.index())
    }

    fn load_element(&mut self, ty: &Type, addr: Leaf) -> Vec<Leaf> {
        let layout = leaves(self.s.module, ty);
        if let Some(base) = self.aos_base(&layout, addr) {
            return self.load_aos(&layout, base);
        }
        if self.aos_lanes(&layout, addr) {
            return self.load_aos_lanes(&layout, addr);
        }
        layout
            .into_iter()
            .map(|leaf| self.load_leaf(leaf.kind, addr, leaf.offset))
            .collect()
    }

    fn load_memory(&mut self, at: &Memory<Leaf>) -> Vec<Leaf> {
        if let Some(base) = self.aos_base(&at.layout, at.addr).filter(|_| at.whole) {
            return self.load_aos(&at.layout, base);
        }
        if self.aos_lanes(&at.layout, at.addr) {
            return self.load_aos_lanes(&at.layout, at.addr);
        }
        at.layout
            .iter()
            .map(|leaf| self.load_leaf(leaf.kind, at.addr, leaf.offset))
            .collect()
    }

    fn store_memory(&mut self, at: &Memory<Leaf>, values: &[Leaf]) {
        let whole = at.whole && !self.guarded;
        if let Some(base) = self.aos_base(&at.layout, at.addr).filter(|_| whole) {
            return self.store_aos(&at.layout, base, values);
        }
        if !self.guarded && self.mask().is_none() && self.aos_lanes(&at.layout, at.addr) {
            return self.store_aos_lanes(&at.layout, at.addr, values);
        }
        for (leaf, &value) in at.layout.iter().zip(values) {
            self.store_leaf(leaf.kind, at.addr, leaf.offset, value);
        }
    }

    type If = SpmdIf;
    type Loop = SpmdLoop;
    type Guard = GangGuard;

    fn if_arms(&mut self, accept: &brook_ir::Block, reject: &brook_ir::Block) {
        self.next_arms = Some(super::flow::ArmPlan::of(self.s.kernel, accept, reject));
    }

    fn begin_if(&mut self, cond: Leaf) -> SpmdIf {
        self.flow_begin_if(cond)
    }

    fn begin_else(&mut self, frame: &SpmdIf) {
        self.flow_begin_else(frame);
    }

    fn end_if(&mut self, frame: SpmdIf) {
        self.flow_end_if(frame);
    }

    fn begin_loop(&mut self) -> SpmdLoop {
        self.flow_begin_loop()
    }

    fn begin_continuing(&mut self, frame: SpmdLoop) {
        self.flow_begin_continuing(frame);
    }

    fn end_loop(&mut self, frame: SpmdLoop) {
        self.flow_end_loop(frame);
    }

    fn jump_break(&mut self, frame: SpmdLoop) {
        self.flow_break(frame);
    }

    fn jump_continue(&mut self, frame: SpmdLoop) {
        self.flow_continue(frame);
    }

    fn jump_return(&mut self) {
        self.flow_return();
    }

    /// Gangs run no thread groups ([`super::supported`]).
    fn barrier(&mut self) {}

    fn is_unreachable(&self) -> bool {
        self.dead
    }

    fn begin_guard(&mut self, flag: Leaf) -> GangGuard {
        let saved = self.mask();
        let flag = self.vectors(flag, ScalarKind::Bool);
        let on = match saved {
            Some(m) => self.and(m, flag),
            None => flag,
        };
        self.set_mask(on);
        let was_guarded = std::mem::replace(&mut self.guarded, true);
        GangGuard { saved, was_guarded }
    }

    fn end_guard(&mut self, guard: GangGuard) {
        match guard.saved {
            Some(m) => self.set_mask(m),
            None => self.all_active = true,
        }
        self.guarded = guard.was_guarded;
    }
}
