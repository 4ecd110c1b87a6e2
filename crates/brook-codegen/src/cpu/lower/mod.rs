//! Lowering a kernel body to Cranelift IR inside one function.
//!
//! A [`Lower`] wraps a `FunctionBuilder` with what the body needs: how each parameter is bound
//! ([`Binding`]), where each local lives ([`LocalStore`]), the current domain position, and the
//! loop and return targets. The drivers ([`crate::cpu::driver`]) set these up and then lower the
//! body once per place they need it (the per-element loop, a reduction's combine step).
//!
//! Values are flat lists of scalars ([`crate::cpu::layout`]). Expressions are evaluated when
//! their statement runs and memoised for the rest of that statement, so a handle used twice in
//! one statement is computed once (the IR guarantees both uses see the same value).

mod math;
mod ops;
pub mod spmd;
mod target;

/// The most induction gathers a loop may have for a fast loop on the CPU (scalar and SIMD
/// lanes alike): the CPU has no register cliff like a GPU's, and seed 001's 8x4-blocked
/// multiply (twelve gathers, two shared element indices) runs 10% faster with its fast loop
/// (`cpu_bench matmul`, 1024^3: 91 -> 82 ms).
const FAST_LOOP_GATHERS: usize = 16;

use super::layout::{clif_type, leaves, Leaf};
use crate::abi::{BlockLayout, Variant};
use crate::CompileError;
use brook_ir::{Expr, Handle, Kernel, Module, ScalarKind, Type};
use cranelift_codegen::ir::{
    condcodes::IntCC, types, AbiParam, Block, InstBuilder, MemFlagsData, SigRef, Signature, Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, Variable};
use std::collections::HashMap;

/// The pointer-sized integer type (the backends run on 64-bit hosts).
pub const PTR: types::Type = types::I64;

/// How a parameter is reached from compiled code: an element's address is in a variable
/// (a cursor, [`CursorInfo`]), a reduction's accumulator in variables.
pub type Binding = crate::lower::Binding<Value, Variable>;

/// A stream's record, loaded into values.
pub type StreamRef = crate::lower::StreamRef<Value>;

/// A cursor: the address of a stream's element at the current position, kept up to date as
/// the position advances (`base + (offset + sum(pos[k] * pitch[k])) * size`).
#[derive(Clone, Debug)]
pub struct CursorInfo {
    pub var: Variable,
    pub stream: StreamRef,
    /// Bytes from one element to the next along the fastest axis.
    pub step: Value,
}

/// Where a local lives.
#[derive(Clone, Debug)]
pub enum LocalStore {
    /// One variable per leaf.
    Vars(Vec<Variable>),
    /// In memory at this address, in C layout.
    Memory(Value),
    /// In the kernel's frame of locals at `base + offset`, in C layout: one base value for all
    /// (an address per local would be one value per local live across the whole kernel).
    Frame { base: Value, offset: u32 },
}

/// What a `return` does and what the function does at a barrier.
#[derive(Clone, Debug)]
pub enum Flow {
    /// `return` jumps to this block (the next element, the end of a combine step).
    Jump(Block),
    /// A resumable thread of a group: `return` returns 0 from the function; a barrier stores
    /// its resume point at `state` and returns 1.
    Resumable {
        state: Value,
        resumes: Vec<Block>,
        next: usize,
    },
}

/// The lowering state of one function.
pub struct Lower<'a, 'f> {
    pub module: &'a Module,
    pub kernel: &'a Kernel,
    pub b: FunctionBuilder<'f>,
    pub call_conv: CallConv,
    pub bindings: Vec<Binding>,
    pub locals: Vec<LocalStore>,
    /// The domain's extents (slowest first), for implicit resize.
    pub domain: Vec<Value>,
    /// The current position in the domain (slowest first), `i64`.
    pub pos: Vec<Variable>,
    /// The position inside the thread group.
    pub in_group: Option<Value>,
    pub flow: Flow,
    pub cursors: Vec<CursorInfo>,
    /// The address of the launch's parameter block (every function's first argument).
    pub param_block: Value,
    memo: HashMap<Handle<Expr>, Vec<Value>>,
    /// Which array indices need no clamp.
    pub(crate) bounds: brook_ir::footprint::IndexBounds<'a>,
    induction: crate::lower::induction::Induction<Value, Variable>,
    /// The code generation choices ([`crate::Tuning`]).
    pub tuning: crate::Tuning,
    sigs: HashMap<super::helpers::HelperSig, SigRef>,
}

impl<'a, 'f> Lower<'a, 'f> {
    pub fn new(
        module: &'a Module,
        kernel: &'a Kernel,
        b: FunctionBuilder<'f>,
        call_conv: CallConv,
        param_block: Value,
        tuning: &crate::Tuning,
    ) -> Self {
        Lower {
            module,
            kernel,
            b,
            call_conv,
            bindings: vec![Binding::Unbound; kernel.params.len()],
            locals: Vec::new(),
            domain: Vec::new(),
            pos: Vec::new(),
            in_group: None,
            flow: Flow::Jump(Block::from_u32(0)),
            cursors: Vec::new(),
            param_block,
            memo: HashMap::new(),
            bounds: brook_ir::footprint::IndexBounds::new(kernel),
            induction: crate::lower::induction::Induction::new(tuning.induction),
            tuning: *tuning,
            sigs: HashMap::new(),
        }
    }

    /// Seals every block and finishes the function.
    pub fn finish(mut self, config: cranelift_codegen::isa::TargetFrontendConfig) {
        self.b.seal_all_blocks();
        self.b.finalize(config);
    }

    /// Lowers the kernel body where the builder stands. Control leaves through the end of the
    /// body (the builder then stands in a block still open) or through `return`.
    pub fn body(&mut self) -> Result<(), CompileError> {
        let body = &self.kernel.body;
        crate::lower::stmt::block(self, body, None)
    }

    pub fn iconst(&mut self, ty: types::Type, value: i64) -> Value {
        self.b.ins().iconst(ty, value)
    }

    /// A new variable of `ty` holding `value`.
    pub fn var_with(&mut self, ty: types::Type, value: Value) -> Variable {
        let var = self.b.declare_var(ty);
        self.b.def_var(var, value);
        var
    }

    /// The zero of a scalar kind.
    pub fn zero(&mut self, kind: ScalarKind) -> Value {
        match kind {
            ScalarKind::F32 => self.b.ins().f32const(0.0),
            ScalarKind::F64 => self.b.ins().f64const(0.0),
            k => self.b.ins().iconst(clif_type(k), 0),
        }
    }

    /// Loads one scalar from `addr + offset`; bools are normalised to 0 or 1.
    pub fn load_scalar(&mut self, kind: ScalarKind, addr: Value, offset: u32) -> Value {
        let flags = MemFlagsData::trusted();
        let value = self
            .b
            .ins()
            .load(clif_type(kind), flags, addr, offset as i32);
        if kind == ScalarKind::Bool {
            self.b.ins().icmp_imm_s(IntCC::NotEqual, value, 0)
        } else {
            value
        }
    }

    pub fn store_scalar(&mut self, value: Value, addr: Value, offset: u32) {
        self.b
            .ins()
            .store(MemFlagsData::trusted(), value, addr, offset as i32);
    }

    /// Loads a whole value of `ty` from `addr`.
    pub fn load_value(&mut self, ty: &Type, addr: Value) -> Vec<Value> {
        leaves(self.module, ty)
            .into_iter()
            .map(|leaf| self.load_scalar(leaf.kind, addr, leaf.offset))
            .collect()
    }

    /// Stores the leaves `values` of a value laid out as `layout` at `addr`.
    pub fn store_leaves(&mut self, layout: &[Leaf], values: &[Value], addr: Value) {
        for (leaf, &value) in layout.iter().zip(values) {
            self.store_scalar(value, addr, leaf.offset);
        }
    }

    /// `count` consecutive `u64`s of the parameter block ([`crate::lower::binding::axes`]).
    pub fn block_axes(&mut self, at: u32, count: usize) -> Vec<Value> {
        crate::lower::binding::axes(self, at, count)
    }

    /// `offset + sum(index[k] * pitch[k])`: an element index.
    pub fn element_index(&mut self, offset: Value, index: &[Value], pitch: &[Value]) -> Value {
        let mut sum = offset;
        for (&i, &p) in index.iter().zip(pitch) {
            let term = self.b.ins().imul(i, p);
            sum = self.b.ins().iadd(sum, term);
        }
        sum
    }

    /// `base + index * size`: an element's address.
    pub fn element_address(&mut self, base: Value, index: Value, size: u32) -> Value {
        let bytes = self.b.ins().imul_imm_s(index, i64::from(size));
        self.b.ins().iadd(base, bytes)
    }

    /// The current position, slowest first.
    pub fn position(&mut self) -> Vec<Value> {
        let vars = self.pos.clone();
        vars.into_iter().map(|v| self.b.use_var(v)).collect()
    }

    /// Sets every cursor from the position `pos`.
    pub fn set_cursors(&mut self, pos: &[Value]) {
        for c in self.cursors.clone() {
            let s = &c.stream;
            let index = self.element_index(s.offset, pos, &s.pitch);
            let addr = self.element_address(s.base, index, s.size);
            self.b.def_var(c.var, addr);
        }
    }

    /// Moves every cursor one element along the fastest axis. With `unit_stride` (every
    /// cursor's fastest pitch is 1) the step is the constant element size, which lets
    /// Cranelift fold consecutive steps into address offsets.
    pub fn advance_cursors(&mut self, unit_stride: bool) {
        for c in self.cursors.clone() {
            let old = self.b.use_var(c.var);
            let new = if unit_stride {
                self.b.ins().iadd_imm_s(old, i64::from(c.stream.size))
            } else {
                self.b.ins().iadd(old, c.step)
            };
            self.b.def_var(c.var, new);
        }
    }

    /// Moves every cursor `count` (an `i64`) elements along the fastest axis.
    pub fn advance_cursors_by(&mut self, count: Value, unit_stride: bool) {
        for c in self.cursors.clone() {
            let old = self.b.use_var(c.var);
            let bytes = if unit_stride {
                self.b.ins().imul_imm_s(count, i64::from(c.stream.size))
            } else {
                self.b.ins().imul(count, c.step)
            };
            let new = self.b.ins().iadd(old, bytes);
            self.b.def_var(c.var, new);
        }
    }

    /// A signature reference for calls to helpers of `sig`.
    pub fn helper_sig(&mut self, sig: super::helpers::HelperSig) -> SigRef {
        use super::helpers::HelperSig;
        if let Some(&r) = self.sigs.get(&sig) {
            return r;
        }
        let (ty, arity) = match sig {
            HelperSig::F32Unary => (types::F32, 1),
            HelperSig::F32Binary => (types::F32, 2),
            HelperSig::F64Unary => (types::F64, 1),
            HelperSig::F64Binary => (types::F64, 2),
        };
        let mut signature = Signature::new(self.call_conv);
        for _ in 0..arity {
            signature.params.push(AbiParam::new(ty));
        }
        signature.returns.push(AbiParam::new(ty));
        let r = self.b.import_signature(signature);
        self.sigs.insert(sig, r);
        r
    }
}

/// Reads the records of a launch's parameter block into bindings
/// ([`crate::lower::bind_params`]). Inputs and outputs of the domain's shape get a cursor
/// variable (set by the caller); reduction parameters are left for the reduction driver.
pub fn bind_params(lower: &mut Lower<'_, '_>, layout: &BlockLayout, variant: &Variant) {
    lower.bindings = crate::lower::bind_params(lower, layout, variant);
}
