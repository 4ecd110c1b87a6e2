//! The frame every SPIR-V module of Brook shares: header, capabilities, memory model, the
//! push-constant block of 64-bit words, the entry point and its workgroup size, and typed
//! loads and stores through device addresses.

use super::SpirvModule;
use brook_ir::ScalarKind;
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{
    AddressingModel, BuiltIn, Capability, Decoration, ExecutionMode, ExecutionModel,
    FunctionControl, MemoryAccess, MemoryModel, StorageClass, Word,
};
use std::collections::HashMap;

/// The `GLSL.std.450` instructions the dialect uses (their numbers in that set).
pub mod glsl {
    pub const ROUND_EVEN: u32 = 2;
    pub const TRUNC: u32 = 3;
    pub const FABS: u32 = 4;
    pub const FLOOR: u32 = 8;
    pub const SQRT: u32 = 31;
    pub const CEIL: u32 = 9;
    pub const FMA: u32 = 50;
    pub const FIND_U_MSB: u32 = 75;
}

/// The entry point's name in every module.
pub const ENTRY: &str = "main";

/// A compute module being written: its one function is open, in its first block.
pub struct Shell {
    pub b: Builder,
    push: Word,
    push_words: u32,
    u64_ty: Word,
    interface: Vec<Word>,
    entry: Word,
    local_size: [u32; 3],
    glsl: Option<Word>,
    /// The device's `Fma` on doubles is fused (else the math library emulates it).
    pub fused_fma: bool,
    /// The code generation choices ([`crate::Tuning`]).
    pub tuning: crate::Tuning,
    /// The device flushes `float` subnormals: a `float` widened to `double` is flushed
    /// explicitly first ([`Shell::widen`]), so that every use sees the same zero.
    pub flushes_f32: bool,
    /// The device has `double` arithmetic (`shaderFloat64`); without it, `float` division
    /// and square roots are computed from integers ([`crate::mathlib::float32_int`]).
    pub float64: bool,
    /// Ask the device to keep signed zeros, infinities and NaNs in `float` and `double`
    /// operations (`shaderSignedZeroInfNanPreserveFloat32`/`64`: only where it offers it).
    pub preserve_signed_zero: (bool, bool),
    /// Invocations of every subgroup, known when the module is written; 0: read at run time
    /// ([`super::map::Options::subgroup_size`]).
    pub subgroup_size: u32,
    /// Loop iterations after which the device ends a subgroup's loops (lavapipe); 0 for
    /// none. Where set, loops are counted ([`super::loop_limit`]).
    pub loop_limit: u32,
    /// The counter of loop steps, once a loop was written ([`super::loop_limit`]).
    pub(crate) loop_count: Option<Word>,
    /// Some loop of the module counts its steps against the limit.
    pub(crate) counts_loops: bool,
    /// What the module has written that lavapipe may pass without lanes
    /// ([`super::loop_limit`]).
    pub(crate) written: super::loop_limit::Written,
    /// The loops the module's helper function holds (a reduction's combine step, counted
    /// before its entries are written: `spirv::reduce`); 0 without one.
    pub(crate) helper_loops: u32,
    /// The open function is a helper, not the entry point.
    pub(crate) in_helper: bool,
    capabilities: Vec<Capability>,
    builtins: Vec<(BuiltIn, Word)>,
    /// A zero (`u32`, `u64`) the driver's compiler cannot prove, computed from a push
    /// constant, that masks and integers are mixed with where a driver must not see through
    /// them; `None`: plain constants.
    pub opaque_zero: Option<(Word, Word)>,
    /// Another such zero, for float literals (see `Shell::literal`): a literal mixed with the
    /// same zero as a sign mask would give the constant back when the two are combined.
    pub literal_zero: Option<(Word, Word)>,
    /// The open block follows a jump: nothing reaches it ([`crate::spirv::flow`]).
    pub(crate) in_dead_block: bool,
    /// In a helper function that returns a value: its type and the variables (with their
    /// types) whose values it returns, as one composite; `None` in the entry point.
    pub returns: Option<(Word, Vec<(Word, Word)>)>,
    /// The rejecting arms begun so far of the `if`s still open ([`crate::spirv::flow`]).
    pub(crate) rejects_begun: std::collections::HashSet<Word>,
    /// The constructs still open, innermost last ([`crate::spirv::flow`]).
    pub(crate) open: Vec<crate::spirv::flow::Open>,
    /// The function's jump variable (the code of a jump going through the ends of open
    /// constructs, [`crate::spirv::flow`]), once one was written.
    pub(crate) jump_code: Option<Word>,
    /// The module's constants by type and bits ([`Shell::constant32`]): each written once.
    constants: HashMap<(Word, u64), Word>,
    /// The open function's float literals mixed with [`Shell::literal_zero`], by kind and
    /// bits: computed once, in its first block (`Shell::literal`).
    pub(crate) hoisted_literals: HashMap<(ScalarKind, u64), Word>,
}

/// Scalar types a probe or kernel stores through an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    F32,
    F64,
    U32,
    U64,
}

impl Scalar {
    pub fn bytes(self) -> u32 {
        match self {
            Scalar::F32 | Scalar::U32 => 4,
            Scalar::F64 | Scalar::U64 => 8,
        }
    }
}

impl Shell {
    /// A module whose push-constant block holds `push_words` 64-bit words, with the
    /// capabilities `extra` beside the ones every module has (`Shader`, `Int64`,
    /// `PhysicalStorageBufferAddresses`).
    pub fn new(push_words: u32, local_size: [u32; 3], extra: &[Capability]) -> Shell {
        let mut b = Builder::new();
        b.set_version(1, 5);
        let capabilities: Vec<Capability> = [
            Capability::Shader,
            Capability::Int64,
            Capability::PhysicalStorageBufferAddresses,
        ]
        .iter()
        .chain(extra)
        .copied()
        .collect();
        for &cap in &capabilities {
            b.capability(cap);
        }
        b.memory_model(
            AddressingModel::PhysicalStorageBuffer64,
            MemoryModel::GLSL450,
        );
        let u64_ty = b.type_int(64, 0);
        let u32_ty = b_u32(&mut b);
        let words = b.constant_bit32(u32_ty, push_words.max(1));
        let array = b.type_array(u64_ty, words);
        b.decorate(array, Decoration::ArrayStride, [Operand::LiteralBit32(8)]);
        let block = b.type_struct([array]);
        b.decorate(block, Decoration::Block, []);
        b.member_decorate(block, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
        let block_ptr = b.type_pointer(None, StorageClass::PushConstant, block);
        let push = b.variable(block_ptr, None, StorageClass::PushConstant, None);
        let void = b.type_void();
        let fn_ty = b.type_function(void, []);
        let entry = b
            .begin_function(void, None, FunctionControl::NONE, fn_ty)
            .expect("no function is open");
        b.begin_block(None).expect("the function has no open block");
        Shell {
            b,
            push,
            push_words,
            u64_ty,
            interface: vec![push],
            entry,
            local_size,
            glsl: None,
            fused_fma: false,
            tuning: crate::Tuning::DEFAULT,
            flushes_f32: false,
            float64: true,
            preserve_signed_zero: (false, false),
            subgroup_size: 0,
            loop_limit: 0,
            loop_count: None,
            counts_loops: false,
            written: Default::default(),
            helper_loops: 0,
            in_helper: false,
            capabilities,
            builtins: Vec::new(),
            in_dead_block: false,
            opaque_zero: None,
            literal_zero: None,
            returns: None,
            rejects_begun: Default::default(),
            open: Vec::new(),
            jump_code: None,
            constants: HashMap::new(),
            hoisted_literals: HashMap::new(),
        }
    }

    /// The workgroup's size.
    pub fn local_size(&self) -> [u32; 3] {
        self.local_size
    }

    pub fn u32_ty(&mut self) -> Word {
        b_u32(&mut self.b)
    }

    pub fn u64_ty(&self) -> Word {
        self.u64_ty
    }

    pub fn ty(&mut self, s: Scalar) -> Word {
        match s {
            Scalar::F32 => self.b.type_float(32),
            Scalar::F64 => self.b.type_float(64),
            Scalar::U32 => self.u32_ty(),
            Scalar::U64 => self.u64_ty,
        }
    }

    pub fn const_u32(&mut self, v: u32) -> Word {
        let t = self.u32_ty();
        self.constant32(t, v)
    }

    pub fn const_u64(&mut self, v: u64) -> Word {
        let t = self.u64_ty;
        self.constant64(t, v)
    }

    /// The constant of 32-bit type `ty` holding `bits`, written once in the module.
    pub fn constant32(&mut self, ty: Word, bits: u32) -> Word {
        let key = (ty, u64::from(bits));
        if let Some(&c) = self.constants.get(&key) {
            return c;
        }
        let c = self.b.constant_bit32(ty, bits);
        self.constants.insert(key, c);
        c
    }

    /// The constant of 64-bit type `ty` holding `bits`, written once in the module.
    pub fn constant64(&mut self, ty: Word, bits: u64) -> Word {
        if let Some(&c) = self.constants.get(&(ty, bits)) {
            return c;
        }
        let c = self.b.constant_bit64(ty, bits);
        self.constants.insert((ty, bits), c);
        c
    }

    /// Push-constant word `k`.
    pub fn push_word(&mut self, k: u32) -> Word {
        let ptr_ty = self
            .b
            .type_pointer(None, StorageClass::PushConstant, self.u64_ty);
        let zero = self.const_u32(0);
        let index = self.const_u32(k);
        let ptr = self
            .b
            .access_chain(ptr_ty, None, self.push, [zero, index])
            .expect("in a block");
        self.b
            .load(self.u64_ty, None, ptr, None, [])
            .expect("in a block")
    }

    /// The invocation's global index along x (`GlobalInvocationId.x`) as a `u64`.
    pub fn global_x(&mut self) -> Word {
        self.builtin_u64(BuiltIn::GlobalInvocationId, 0)
    }

    /// The workgroup's index along x (`WorkgroupId.x`) as a `u64`.
    pub fn workgroup_x(&mut self) -> Word {
        self.builtin_u64(BuiltIn::WorkgroupId, 0)
    }

    /// Component `component` of a `uvec3` built-in as a `u64` (each built-in's variable is
    /// declared once).
    pub fn builtin_u64(&mut self, builtin: BuiltIn, component: u32) -> Word {
        let u32_ty = self.u32_ty();
        let v3 = self.b.type_vector(u32_ty, 3);
        let var = self.builtin_variable(builtin, v3);
        let all = self.b.load(v3, None, var, None, []).expect("in a block");
        let x = self
            .b
            .composite_extract(u32_ty, None, all, [component])
            .expect("in a block");
        self.b.u_convert(self.u64_ty, None, x).expect("in a block")
    }

    /// A `u32` scalar built-in (a subgroup's) as a `u64` (declared once).
    pub fn builtin_scalar_u64(&mut self, builtin: BuiltIn) -> Word {
        let u32_ty = self.u32_ty();
        let var = self.builtin_variable(builtin, u32_ty);
        let x = self
            .b
            .load(u32_ty, None, var, None, [])
            .expect("in a block");
        self.b.u_convert(self.u64_ty, None, x).expect("in a block")
    }

    /// The input variable of `builtin`, of type `ty` (declared once).
    pub(crate) fn builtin_variable(&mut self, builtin: BuiltIn, ty: Word) -> Word {
        if let Some(&(_, var)) = self.builtins.iter().find(|(b, _)| *b == builtin) {
            return var;
        }
        let ptr_ty = self.b.type_pointer(None, StorageClass::Input, ty);
        let var = self.global_variable(ptr_ty, StorageClass::Input, None);
        self.b
            .decorate(var, Decoration::BuiltIn, [Operand::BuiltIn(builtin)]);
        self.builtins.push((builtin, var));
        var
    }

    /// The `GLSL.std.450` extended instruction set (imported once).
    pub fn glsl(&mut self) -> Word {
        if let Some(set) = self.glsl {
            return set;
        }
        let set = self.b.ext_inst_import("GLSL.std.450");
        self.glsl = Some(set);
        set
    }

    /// A module-scope variable (written among the globals whatever block is open), added to
    /// the entry point's interface (SPIR-V 1.4 on lists every global it reaches).
    pub fn global_variable(
        &mut self,
        pointer_ty: Word,
        storage: StorageClass,
        init: Option<Word>,
    ) -> Word {
        let (function, block) = (self.b.selected_function(), self.b.selected_block());
        self.b.select_block(None).expect("deselecting");
        self.b.select_function(None).expect("deselecting");
        let var = self.b.variable(pointer_ty, None, storage, init);
        self.b
            .select_function(function)
            .expect("the function was open");
        self.b.select_block(block).expect("the block was open");
        self.interface.push(var);
        var
    }

    /// `base + index * size`, a `u64` address.
    pub fn address(&mut self, base: Word, index: Word, size: u32) -> Word {
        let size = self.const_u64(u64::from(size));
        let offset = self
            .b
            .i_mul(self.u64_ty, None, index, size)
            .expect("in a block");
        self.b
            .i_add(self.u64_ty, None, base, offset)
            .expect("in a block")
    }

    /// A pointer to a value of type `ty` at device address `addr`.
    pub fn pointer(&mut self, ty: Word, addr: Word) -> Word {
        let ptr_ty = self
            .b
            .type_pointer(None, StorageClass::PhysicalStorageBuffer, ty);
        self.b
            .convert_u_to_ptr(ptr_ty, None, addr)
            .expect("in a block")
    }

    /// The scalar at `addr` (aligned to its size).
    pub fn load(&mut self, s: Scalar, addr: Word) -> Word {
        let ty = self.ty(s);
        self.load_typed(ty, s.bytes(), addr)
    }

    /// Stores `value` at `addr` (aligned to its size).
    pub fn store(&mut self, s: Scalar, addr: Word, value: Word) {
        let ty = self.ty(s);
        self.store_typed(ty, s.bytes(), addr, value);
    }

    /// A value of type `ty` at `addr`, aligned to `align` bytes.
    pub fn load_typed(&mut self, ty: Word, align: u32, addr: Word) -> Word {
        let ptr = self.pointer(ty, addr);
        self.b
            .load(
                ty,
                None,
                ptr,
                Some(MemoryAccess::ALIGNED),
                [Operand::LiteralBit32(align)],
            )
            .expect("in a block")
    }

    /// Stores `value` of type `ty` at `addr`, aligned to `align` bytes.
    pub fn store_typed(&mut self, ty: Word, align: u32, addr: Word, value: Word) {
        let ptr = self.pointer(ty, addr);
        self.b
            .store(
                ptr,
                value,
                Some(MemoryAccess::ALIGNED),
                [Operand::LiteralBit32(align)],
            )
            .expect("in a block");
    }

    /// Declares capabilities the module's code needs (each once).
    pub fn require(&mut self, capabilities: &[Capability]) {
        for &c in capabilities {
            if !self.capabilities.contains(&c) {
                self.capabilities.push(c);
                self.b.capability(c);
            }
        }
    }

    /// Marks a float operation's result as not to be contracted with others.
    pub fn exact(&mut self, result: Word) -> Word {
        self.b.decorate(result, Decoration::NoContraction, []);
        result
    }

    /// Ends the open block with the function's return (of [`Shell::returns`]'s value in a
    /// helper function).
    pub fn return_here(&mut self) {
        match self.returns.clone() {
            Some((ty, vars)) => {
                let values: Vec<Word> = vars
                    .iter()
                    .map(|&(var, var_ty)| self.read(var_ty, var))
                    .collect();
                let value = self
                    .b
                    .composite_construct(ty, None, values)
                    .expect("in a block");
                self.b.ret_value(value).expect("in a block");
            }
            None => {
                if !self.in_helper {
                    self.report_loop_limit();
                }
                self.b.ret().expect("in a block")
            }
        }
    }

    /// Closes the open function: its last block returns (or is unreachable after a jump).
    pub fn close_function(&mut self) {
        if self.in_dead_block {
            self.b.unreachable().expect("in a block");
        } else {
            self.return_here();
        }
        self.b.end_function().expect("in a function");
        self.hoisted_literals.clear();
        self.jump_code = None;
        self.in_dead_block = false;
        self.returns = None;
        self.in_helper = false;
    }

    /// Opens helper function `id` returning `ret_ty` with parameters of `params` types, in its
    /// first block; its parameters' ids.
    pub fn begin_helper(&mut self, id: Word, ret_ty: Word, params: &[Word]) -> Vec<Word> {
        self.in_helper = true;
        let fn_ty = self.b.type_function(ret_ty, params.to_vec());
        self.b
            .begin_function(ret_ty, Some(id), FunctionControl::NONE, fn_ty)
            .expect("no function is open");
        let ids = params
            .iter()
            .map(|&ty| self.b.function_parameter(ty).expect("in a function"))
            .collect();
        self.b
            .begin_block(None)
            .expect("the function has no open block");
        ids
    }

    /// Closes the open function, if any, and writes the module.
    pub fn finish(mut self) -> SpirvModule {
        if self.b.selected_function().is_some() {
            self.close_function();
        }
        self.b.entry_point(
            ExecutionModel::GLCompute,
            self.entry,
            ENTRY,
            self.interface.clone(),
        );
        let [x, y, z] = self.local_size;
        self.b
            .execution_mode(self.entry, ExecutionMode::LocalSize, [x, y, z]);
        // Signed zeros, infinities and NaNs kept exactly (no `0 * x` folded to +0), where the
        // device offers it.
        let widths = [
            (self.preserve_signed_zero.0, 32),
            (self.preserve_signed_zero.1, 64),
        ];
        if widths.iter().any(|(on, _)| *on) {
            self.b.capability(Capability::SignedZeroInfNanPreserve);
        }
        for (on, width) in widths {
            if on {
                self.b
                    .execution_mode(self.entry, ExecutionMode::SignedZeroInfNanPreserve, [width]);
            }
        }
        use rspirv::binary::Assemble;
        SpirvModule {
            words: self.b.module().assemble(),
            entry: ENTRY,
            push_bytes: 8 * self.push_words,
            label: String::new(),
            counts_loops: self.counts_loops,
        }
    }
}

fn b_u32(b: &mut Builder) -> Word {
    b.type_int(32, 0)
}
