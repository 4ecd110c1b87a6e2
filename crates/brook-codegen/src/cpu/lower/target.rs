//! The CPU's [`Target`]: the shared lowering's primitive operations as Cranelift
//! instructions.
//!
//! Structured control flow becomes Cranelift blocks. After a jump (`break`, `continue`,
//! `return`, a barrier) lowering goes on in a fresh block without predecessors, so the builder
//! always stands in an open block; Cranelift drops the unreachable ones. Each block is sealed
//! as soon as its last predecessor is known, so SSA construction adds block parameters only
//! where values really merge (sealing everything at the end made every variable a parameter
//! of every block: quadratic in inlined code).

use super::{Binding, CursorInfo, Flow, LocalStore, Lower, StreamRef, PTR};
use crate::cpu::layout::clif_type;
use crate::lower::{Memory, Root, Space, Target};
use crate::CompileError;
use brook_ir::{
    BinaryOp, Expr, Handle, Kernel, Literal, Local, MathFun, Module, ParamId, ScalarKind, Type,
    UnaryOp,
};
use cranelift_codegen::ir::{
    condcodes::IntCC, immediates::Ieee32, types, Block, InstBuilder, MemFlagsData, Value,
};
use cranelift_frontend::Variable;
use std::collections::HashMap;

impl<'a> Target<'a> for Lower<'a, '_> {
    type Leaf = Value;
    type Var = Variable;
    type Error = CompileError;

    fn module(&self) -> &'a Module {
        self.module
    }

    fn kernel(&self) -> &'a Kernel {
        self.kernel
    }

    fn memo(&mut self) -> &mut HashMap<Handle<Expr>, Vec<Value>> {
        &mut self.memo
    }

    fn index_within(&mut self, h: Handle<Expr>, len: u32) -> bool {
        self.bounds.within(h, len)
    }

    fn unsupported(&self, h: Handle<Expr>, what: String) -> CompileError {
        Lower::unsupported(self, h, what)
    }

    fn induction(&mut self) -> &mut crate::lower::induction::Induction<Value, Variable> {
        &mut self.induction
    }

    fn max_fast_loop_gathers(&self) -> usize {
        super::FAST_LOOP_GATHERS
    }

    fn literal(&mut self, lit: Literal) -> Value {
        match lit.kind {
            ScalarKind::F32 => self.b.ins().f32const(Ieee32::with_bits(lit.bits as u32)),
            ScalarKind::F64 => self.b.ins().f64const(f64::from_bits(lit.bits)),
            k => self.b.ins().iconst(clif_type(k), lit.bits as i64),
        }
    }

    /// The zero value of `ty`, as leaves.
    fn zeros(&mut self, ty: &Type) -> Vec<Value> {
        crate::cpu::layout::leaves(self.module, ty)
            .into_iter()
            .map(|leaf| self.zero(leaf.kind))
            .collect()
    }

    /// An index as `i64`.
    fn to_index(&mut self, kind: ScalarKind, v: Value) -> Value {
        match kind {
            ScalarKind::F32 => {
                let quarter = self.b.ins().f32const(0.25);
                let shifted = self.b.ins().fadd(v, quarter);
                let floor = self.b.ins().floor(shifted);
                self.b.ins().fcvt_to_sint_sat(PTR, floor)
            }
            ScalarKind::F64 => {
                let quarter = self.b.ins().f64const(0.25);
                let shifted = self.b.ins().fadd(v, quarter);
                let floor = self.b.ins().floor(shifted);
                self.b.ins().fcvt_to_sint_sat(PTR, floor)
            }
            ScalarKind::I64 => v,
            ScalarKind::U64 => {
                let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, v, 0);
                let max = self.iconst(PTR, i64::MAX);
                self.b.ins().select(negative, max, v)
            }
            k if k.is_signed() => self.b.ins().sextend(PTR, v),
            _ => self.b.ins().uextend(PTR, v),
        }
    }

    fn index_constant(&mut self, value: u64) -> Value {
        self.iconst(PTR, value as i64)
    }

    /// `i` clamped to `[0, extent - 1]`.
    fn clamp_index(&mut self, i: Value, extent: Value) -> Value {
        let zero = self.iconst(PTR, 0);
        let low = self.b.ins().smax(i, zero);
        let last = self.b.ins().iadd_imm_s(extent, -1);
        self.b.ins().umin(low, last)
    }

    fn element_address(&mut self, base: Value, index: Value, size: u32) -> Value {
        Lower::element_address(self, base, index, size)
    }

    fn unary(&mut self, op: UnaryOp, kind: ScalarKind, v: Value) -> Value {
        Lower::unary(self, op, kind, v)
    }

    fn binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Value, b: Value) -> Value {
        Lower::binary(self, op, kind, a, b)
    }

    fn select(&mut self, _kind: ScalarKind, c: Value, a: Value, b: Value) -> Value {
        self.b.ins().select(c, a, b)
    }

    fn convert(&mut self, from: ScalarKind, to: ScalarKind, v: Value) -> Value {
        Lower::convert(self, from, to, v)
    }

    type Helper = crate::cpu::helpers::Helper;

    fn math_helper(&self, fun: MathFun, double: bool) -> Option<crate::cpu::helpers::Helper> {
        crate::cpu::helpers::math_helper(fun, double)
    }

    fn call_math_helper(
        &mut self,
        helper: crate::cpu::helpers::Helper,
        _kind: ScalarKind, // the helper's signature says its types
        lane: &[Value],
    ) -> Value {
        Lower::call_helper(self, helper, lane)
    }

    fn exact_math(&mut self, fun: MathFun, kind: ScalarKind, args: &[Vec<Value>]) -> Vec<Value> {
        Lower::exact_math(self, fun, kind, args)
    }

    fn instance_in_group(&mut self) -> Vec<Value> {
        let mut lanes = vec![self.iconst(types::I32, 0); 4];
        if let Some(g) = self.in_group {
            lanes[0] = self.b.ins().ireduce(types::I32, g);
        }
        lanes
    }

    fn binding(&self, p: ParamId) -> Binding {
        self.bindings[p.0 as usize].clone()
    }

    fn temporary(&mut self, kind: ScalarKind) -> Variable {
        let zero = self.zero(kind);
        self.var_with(clif_type(kind), zero)
    }

    fn read_var(&mut self, var: Variable) -> Value {
        self.b.use_var(var)
    }

    fn position(&mut self) -> Vec<Value> {
        Lower::position(self)
    }

    fn domain(&self) -> Vec<Value> {
        self.domain.clone()
    }

    fn load_element(&mut self, ty: &Type, addr: Value) -> Vec<Value> {
        self.load_value(ty, addr)
    }

    fn element_index(&mut self, offset: Value, at: &[Value], pitch: &[Value]) -> Value {
        Lower::element_index(self, offset, at, pitch)
    }

    fn mul_index(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().imul(a, b)
    }

    fn div_index(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().udiv(a, b)
    }

    fn block_u64(&mut self, at: u32) -> Value {
        let flags = MemFlagsData::trusted().with_readonly();
        let block = self.param_block;
        self.b.ins().load(types::I64, flags, block, at as i32)
    }

    fn block_scalar(&mut self, kind: ScalarKind, at: u32) -> Value {
        let flags = MemFlagsData::trusted().with_readonly();
        let block = self.param_block;
        let value = self.b.ins().load(clif_type(kind), flags, block, at as i32);
        if kind == ScalarKind::Bool {
            self.b.ins().icmp_imm_s(IntCC::NotEqual, value, 0)
        } else {
            value
        }
    }

    /// A cursor ([`CursorInfo`]), set by the driver.
    fn element_variable(&mut self, stream: &StreamRef) -> Variable {
        let zero = self.iconst(PTR, 0);
        let cursor = self.var_with(PTR, zero);
        let last = *stream.pitch.last().unwrap_or(&zero);
        let step = self.b.ins().imul_imm_s(last, i64::from(stream.size));
        self.cursors.push(CursorInfo {
            var: cursor,
            stream: stream.clone(),
            step,
        });
        cursor
    }

    /// SSA values never change: the value read is already a snapshot.
    fn snapshot_var(&mut self, var: Variable) -> Value {
        self.b.use_var(var)
    }

    fn write_var(&mut self, var: Variable, value: Value) {
        self.b.def_var(var, value);
    }

    fn local(&self, l: Handle<Local>) -> Root<Value, Variable> {
        let memory = |addr, offset| Root::Memory {
            addr,
            offset,
            space: Space::Local,
        };
        match &self.locals[l.index()] {
            LocalStore::Vars(vars) => Root::Vars(vars.clone()),
            LocalStore::Memory(addr) => memory(*addr, 0),
            LocalStore::Frame { base, offset } => memory(*base, *offset),
        }
    }

    fn load_memory(&mut self, at: &Memory<Value>) -> Vec<Value> {
        at.layout
            .iter()
            .map(|leaf| self.load_scalar(leaf.kind, at.addr, leaf.offset))
            .collect()
    }

    fn store_memory(&mut self, at: &Memory<Value>, values: &[Value]) {
        self.store_leaves(&at.layout, values, at.addr);
    }

    /// The else and merge blocks.
    type If = (Block, Block);
    /// The continuing part's block, the header and the exit.
    type Loop = CpuLoop;
    /// The block after the guarded code.
    type Guard = Block;

    fn begin_if(&mut self, cond: Value) -> (Block, Block) {
        let (then_block, else_block, merge) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(cond, then_block, &[], else_block, &[]);
        self.b.seal_block(then_block);
        self.b.seal_block(else_block);
        self.b.switch_to_block(then_block);
        (else_block, merge)
    }

    fn begin_else(&mut self, &(else_block, merge): &(Block, Block)) {
        self.jump_if_reachable(merge);
        self.b.switch_to_block(else_block);
    }

    fn end_if(&mut self, (_, merge): (Block, Block)) {
        self.jump_if_reachable(merge);
        self.b.switch_to_block(merge);
        self.b.seal_block(merge);
    }

    fn begin_loop(&mut self) -> CpuLoop {
        let frame = CpuLoop {
            header: self.b.create_block(),
            next: self.b.create_block(),
            exit: self.b.create_block(),
        };
        self.b.ins().jump(frame.header, &[]);
        self.b.switch_to_block(frame.header);
        frame
    }

    fn begin_continuing(&mut self, frame: CpuLoop) {
        self.jump_if_reachable(frame.next);
        self.b.switch_to_block(frame.next);
        self.b.seal_block(frame.next);
    }

    fn end_loop(&mut self, frame: CpuLoop) {
        self.jump_if_reachable(frame.header);
        self.b.seal_block(frame.header);
        self.b.switch_to_block(frame.exit);
        self.b.seal_block(frame.exit);
    }

    fn jump_break(&mut self, frame: CpuLoop) {
        self.b.ins().jump(frame.exit, &[]);
        self.fresh_block();
    }

    fn jump_continue(&mut self, frame: CpuLoop) {
        self.b.ins().jump(frame.next, &[]);
        self.fresh_block();
    }

    /// Jumps to the flow's target, or returns 0 ("finished") from a resumable thread.
    fn jump_return(&mut self) {
        match &self.flow {
            Flow::Jump(target) => {
                let target = *target;
                self.b.ins().jump(target, &[]);
            }
            Flow::Resumable { .. } => {
                let finished = self.iconst(types::I32, 0);
                self.b.ins().return_(&[finished]);
            }
        }
        self.fresh_block();
    }

    /// In a resumable thread: saves the resume point, returns 1 ("waiting at a barrier"), and
    /// goes on in the block the next call resumes at. Elsewhere a barrier does nothing.
    fn barrier(&mut self) {
        let Flow::Resumable {
            state,
            resumes,
            next,
        } = &mut self.flow
        else {
            return;
        };
        let (state, resume) = (*state, resumes[*next]);
        *next += 1;
        let point = *next as i64;
        let point = self.iconst(types::I32, point);
        self.b.ins().store(MemFlagsData::trusted(), point, state, 0);
        let waiting = self.iconst(types::I32, 1);
        self.b.ins().return_(&[waiting]);
        self.b.switch_to_block(resume);
    }

    fn is_unreachable(&self) -> bool {
        self.b.is_unreachable()
    }

    fn begin_guard(&mut self, flag: Value) -> Block {
        let write = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(flag, write, &[], done, &[]);
        self.b.seal_block(write);
        self.b.switch_to_block(write);
        done
    }

    fn end_guard(&mut self, done: Block) {
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
    }
}

/// A loop's blocks.
#[derive(Clone, Copy, Debug)]
pub struct CpuLoop {
    header: Block,
    /// The continuing part (where `continue` goes).
    next: Block,
    exit: Block,
}

impl Lower<'_, '_> {
    pub fn unsupported(&self, h: Handle<Expr>, what: String) -> CompileError {
        CompileError::Unsupported {
            backend: crate::BackendKind::Cpu,
            kernel: self.kernel.name.clone(),
            span: self.kernel.exprs.span(h),
            construct: what,
        }
    }

    /// A block without predecessors (code after a jump): sealed at once.
    fn fresh_block(&mut self) {
        let next = self.b.create_block();
        self.b.switch_to_block(next);
        self.b.seal_block(next);
    }

    /// Jumps to `target` unless the builder stands in unreachable code (after a `break`, say):
    /// a jump from there would make `target` look like a merge of values that never flow.
    fn jump_if_reachable(&mut self, target: Block) {
        if !self.b.is_unreachable() {
            self.b.ins().jump(target, &[]);
        }
    }
}
