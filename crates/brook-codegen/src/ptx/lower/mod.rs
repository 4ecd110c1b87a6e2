//! Lowering a kernel body to PTX instructions inside one entry function.
//!
//! A [`Lower`] holds the [`Emitter`] and what the body needs: how each parameter is bound
//! ([`Binding`]), where each local lives ([`LocalStore`]), the current domain position, and
//! the loop and return targets. The drivers ([`crate::ptx::driver`]) set these up and lower
//! the body where they need it.
//!
//! Values are flat lists of scalar leaves ([`crate::leaves`]) in registers of their
//! [`Class`]. Expressions are evaluated when their statement runs and memoised for the rest of
//! that statement, as in the CPU backend.

mod collective;
mod index;
mod math;
mod ops;
mod target;

use super::emit::{mem_type, Class, Emitter, Label, Reg};
use crate::abi::{BlockLayout, Variant};
use crate::leaves::{has_array, leaves, Leaf};
use crate::CompileError;
use brook_ir::{Expr, Handle, Kernel, Module, ScalarKind, Type};
pub use collective::is_native;
pub use index::IndexWidth;
use std::collections::HashMap;

/// The name of the parameter block in every entry's signature.
pub const PARAMS: &str = "params";

/// How a parameter is reached: an element's (global) address is in a register set for each
/// instance ([`Lower::set_elements`]), a reduction's accumulator in registers that stores
/// overwrite.
pub type Binding = crate::lower::Binding<Reg, Reg>;

/// A stream's record, loaded into `u64` registers.
pub type StreamRef = crate::lower::StreamRef<Reg>;

/// Where a local lives.
#[derive(Clone, Debug)]
pub enum LocalStore {
    /// One register per leaf.
    Vars(Vec<Reg>),
    /// In memory, in C layout: `.local` memory at this generic address, or (`shared`) a
    /// group's `.shared` memory at this address of the shared window.
    Memory { addr: Reg, size: u32, shared: bool },
}

/// The lowering state of one entry function.
pub struct Lower<'a> {
    pub module: &'a Module,
    pub kernel: &'a Kernel,
    pub e: Emitter,
    pub bindings: Vec<Binding>,
    pub locals: Vec<LocalStore>,
    /// The domain's extents (slowest first), for implicit resize.
    pub domain: Vec<Reg>,
    /// The current position in the domain (slowest first), indices.
    pub pos: Vec<Reg>,
    /// The position inside the thread group (an index).
    pub in_group: Option<Reg>,
    /// The width of index leaves (set by the driver before anything is lowered).
    pub index: IndexWidth,
    /// Where `return` goes.
    pub ret: Label,
    /// Element bindings and their streams, whose addresses follow the position.
    pub elements: Vec<(Reg, StreamRef)>,
    memo: HashMap<Handle<Expr>, Vec<Reg>>,
    /// Which array indices need no clamp.
    bounds: brook_ir::footprint::IndexBounds<'a>,
    induction: crate::lower::induction::Induction<Reg, Reg>,
    /// The code generation choices ([`crate::Tuning`]).
    pub tuning: crate::Tuning,
    /// Helper functions (`.func`) the body calls, by name.
    pub helpers: Vec<&'static str>,
}

impl<'a> Lower<'a> {
    pub fn new(module: &'a Module, kernel: &'a Kernel, tuning: &crate::Tuning) -> Self {
        let mut e = Emitter::default();
        let ret = e.label();
        Lower {
            module,
            kernel,
            e,
            bindings: vec![Binding::Unbound; kernel.params.len()],
            locals: Vec::new(),
            domain: Vec::new(),
            pos: Vec::new(),
            in_group: None,
            index: IndexWidth::Wide,
            ret,
            elements: Vec::new(),
            memo: HashMap::new(),
            bounds: brook_ir::footprint::IndexBounds::new(kernel),
            induction: crate::lower::induction::Induction::new(tuning.induction),
            tuning: *tuning,
            helpers: Vec::new(),
        }
    }

    /// Lowers the kernel body where the emitter stands; `return` jumps to `self.ret`.
    pub fn body(&mut self) -> Result<(), CompileError> {
        let body = &self.kernel.body;
        crate::lower::stmt::block(self, body, None)
    }

    pub fn unsupported(&self, h: Handle<Expr>, what: String) -> CompileError {
        CompileError::Unsupported {
            backend: crate::BackendKind::Ptx,
            kernel: self.kernel.name.clone(),
            span: self.kernel.exprs.span(h),
            construct: what,
        }
    }

    /// A new `u64` register holding `value`.
    pub fn u64_imm(&mut self, value: u64) -> Reg {
        self.e.mov_imm(Class::B64, value)
    }

    /// The zero of a scalar kind.
    pub fn zero(&mut self, kind: ScalarKind) -> Reg {
        match Class::of(kind) {
            Class::Pred => self.pred_const(false),
            Class::F32 => self.e.mov_imm(Class::F32, "0f00000000"),
            Class::F64 => self.e.mov_imm(Class::F64, "0d0000000000000000"),
            class => self.e.mov_imm(class, 0),
        }
    }

    /// A predicate register holding `value`.
    pub fn pred_const(&mut self, value: bool) -> Reg {
        let word = self.e.mov_imm(Class::B32, u32::from(value));
        self.e
            .compute(Class::Pred, |r| format!("setp.ne.u32 {r}, {word}, 0"))
    }

    /// Loads one scalar from `[addr + offset]` in `space` (`global` or generic `""`).
    pub fn load_scalar(&mut self, kind: ScalarKind, addr: Reg, offset: u32, space: &str) -> Reg {
        let dot = if space.is_empty() { "" } else { "." };
        let ty = mem_type(kind);
        if kind == ScalarKind::Bool {
            let byte = self.e.compute(Class::B32, |r| {
                format!("ld{dot}{space}.u8 {r}, [{addr}+{offset}]")
            });
            return self
                .e
                .compute(Class::Pred, |r| format!("setp.ne.u32 {r}, {byte}, 0"));
        }
        self.e.compute(Class::of(kind), |r| {
            format!("ld{dot}{space}.{ty} {r}, [{addr}+{offset}]")
        })
    }

    pub fn store_scalar(
        &mut self,
        kind: ScalarKind,
        value: Reg,
        addr: Reg,
        offset: u32,
        space: &str,
    ) {
        let dot = if space.is_empty() { "" } else { "." };
        let ty = match kind {
            ScalarKind::Bool | ScalarKind::I8 | ScalarKind::U8 => "u8",
            ScalarKind::I16 | ScalarKind::U16 => "u16",
            k => mem_type(k),
        };
        let value = if kind == ScalarKind::Bool {
            self.e
                .compute(Class::B32, |r| format!("selp.u32 {r}, 1, 0, {value}"))
        } else {
            value
        };
        self.e
            .op(format!("st{dot}{space}.{ty} [{addr}+{offset}], {value}"));
    }

    /// Loads a whole value of `ty` from `addr`; whole vectors of 4-byte (or two 8-byte)
    /// components use one vector load when `aligned` (stream elements are).
    pub fn load_value(&mut self, ty: &Type, addr: Reg, space: &str, aligned: bool) -> Vec<Reg> {
        if let Some(regs) = self.vector_access(ty, addr, space, aligned, None) {
            return regs;
        }
        leaves(self.module, ty)
            .into_iter()
            .map(|leaf| self.load_scalar(leaf.kind, addr, leaf.offset, space))
            .collect()
    }

    /// Stores the leaves `values` of a value laid out as `layout` at `addr`.
    pub fn store_leaves(&mut self, layout: &[Leaf], values: &[Reg], addr: Reg, space: &str) {
        for (leaf, &value) in layout.iter().zip(values) {
            self.store_scalar(leaf.kind, value, addr, leaf.offset, space);
        }
    }

    /// Stores a whole value of `ty` at `addr` (a vector store when `aligned` allows).
    pub fn store_value(
        &mut self,
        ty: &Type,
        values: &[Reg],
        addr: Reg,
        space: &str,
        aligned: bool,
    ) {
        if self
            .vector_access(ty, addr, space, aligned, Some(values))
            .is_some()
        {
            return;
        }
        let layout = leaves(self.module, ty);
        self.store_leaves(&layout, values, addr, space);
    }

    /// A `ld.v2`/`ld.v4` (or, with `store`, `st.v*`) of a whole vector value, when its type
    /// and alignment allow.
    fn vector_access(
        &mut self,
        ty: &Type,
        addr: Reg,
        space: &str,
        aligned: bool,
        store: Option<&[Reg]>,
    ) -> Option<Vec<Reg>> {
        let Type::Value(v) = ty else { return None };
        let width = usize::from(v.width);
        let fits = matches!((v.kind.size(), width), (4, 2) | (4, 4) | (8, 2));
        if !aligned || !fits || v.kind == ScalarKind::Bool {
            return None;
        }
        let dot = if space.is_empty() { "" } else { "." };
        let ty = mem_type(v.kind);
        let regs: Vec<Reg> = match store {
            Some(values) => values.to_vec(),
            None => (0..width).map(|_| self.e.reg(Class::of(v.kind))).collect(),
        };
        let list = regs
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        if store.is_some() {
            self.e
                .op(format!("st{dot}{space}.v{width}.{ty} [{addr}], {{{list}}}"));
        } else {
            self.e
                .op(format!("ld{dot}{space}.v{width}.{ty} {{{list}}}, [{addr}]"));
        }
        Some(regs)
    }

    /// A `u64` field of the parameter block.
    pub fn param_u64(&mut self, at: u32) -> Reg {
        self.e
            .compute(Class::B64, |r| format!("ld.param.u64 {r}, [{PARAMS}+{at}]"))
    }

    /// `count` consecutive `u64`s of the block ([`crate::lower::binding::axes`]).
    pub fn param_axes(&mut self, at: u32, count: usize) -> Vec<Reg> {
        crate::lower::binding::axes(self, at, count)
    }

    /// Points every element binding at the element of the current position.
    pub fn set_elements(&mut self) {
        let pos = self.pos.clone();
        for (addr, s) in self.elements.clone() {
            let index = self.element_index(s.offset, &pos, &s.pitch);
            let a = self.element_address(s.base, index, s.size);
            self.e.mov(addr, a);
        }
    }

    /// Places every local: registers, or `.local` memory for locals holding arrays (and
    /// `.shared` memory for `shared` locals of a thread-group kernel when `groups`).
    pub fn place_locals(&mut self, groups: bool) {
        let mut stores = Vec::new();
        for (_, local) in self.kernel.locals.iter() {
            if local.shared || has_array(self.module, &local.ty) {
                let layout = self.module.layout(&local.ty);
                let size = layout.size.next_multiple_of(4).max(4);
                let shared = local.shared && groups;
                // 16: a vector element of an array is then aligned for `ld.v4`/`ld.v2`.
                let name = self.e.memory(shared, size, layout.align.max(16));
                // Shared memory is read and written with `ld.shared`/`st.shared` at its own
                // 32-bit addresses (no generic-to-shared check per access, and offsets that
                // ptxas folds into the access); local arrays generically.
                let addr = if shared {
                    self.e.mov_imm(Class::B32, &name)
                } else {
                    let raw = self.e.mov_imm(Class::B64, &name);
                    self.e
                        .compute(Class::B64, |r| format!("cvta.local.u64 {r}, {raw}"))
                };
                stores.push(LocalStore::Memory { addr, size, shared });
            } else {
                let regs = leaves(self.module, &local.ty)
                    .iter()
                    .map(|leaf| self.e.reg(Class::of(leaf.kind)))
                    .collect();
                stores.push(LocalStore::Vars(regs));
            }
        }
        self.locals = stores;
    }

    /// Zeroes every private local some read may find unassigned (at the start of each
    /// instance): the others are stored before every read ([`brook_ir::unassigned`]). Shared
    /// locals are zeroed by the group driver.
    pub fn zero_locals(&mut self) {
        let unassigned = brook_ir::unassigned::Unassigned::of(self.kernel);
        for (index, (_, local)) in self.kernel.locals.iter().enumerate() {
            if !unassigned.needs_zero(index) {
                continue;
            }
            match self.locals[index].clone() {
                LocalStore::Vars(regs) => {
                    for (reg, leaf) in regs.iter().zip(leaves(self.module, &local.ty)) {
                        let zero = self.zero(leaf.kind);
                        self.e.mov(*reg, zero);
                    }
                }
                LocalStore::Memory {
                    addr,
                    size,
                    shared: false,
                } => self.zero_memory(addr, size, ""),
                LocalStore::Memory { .. } => {}
            }
        }
    }

    /// Zeroes `size` bytes (a multiple of 4) at `addr`.
    pub fn zero_memory(&mut self, addr: Reg, size: u32, space: &str) {
        let dot = if space.is_empty() { "" } else { "." };
        for at in (0..size).step_by(4) {
            self.e.op(format!("st{dot}{space}.u32 [{addr}+{at}], 0"));
        }
    }
}

/// Reads the records of the parameter block into bindings ([`crate::lower::bind_params`]).
/// Inputs and outputs of the domain's shape get an element address register (set by
/// [`Lower::set_elements`]); reduction parameters are left for the reduction driver.
pub fn bind_params(lower: &mut Lower<'_>, layout: &BlockLayout, variant: &Variant) {
    lower.bindings = crate::lower::bind_params(lower, layout, variant);
}
