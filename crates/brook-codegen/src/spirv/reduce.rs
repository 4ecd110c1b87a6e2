//! Reductions and scans as SPIR-V: the shared strategies of [`crate::gpu::reduce`] (the
//! serial path; the column path; the subgroup paths of reductions and scans where the device
//! shuffles; the multi-pass scan) over this
//! dialect's [`Gpu`] primitives, a module per entry.
//!
//! Push constants: words 0-2 as a map's ([`super::map`]: the parameter block, the scratch
//! frames of local arrays, the dispatch's width), then the pass parameters in the order of
//! [`PassParam::SCAN`] (a reduction module has the first six).
//!
//! The combine step is one function of the module (the kernel body, its `return`s returning
//! the accumulator), called wherever the strategy combines: the module stays small however
//! often the stack is unrolled, and the driver decides what to inline. Drivers inline every
//! call (Mesa always), so a heavy reduction (a long step) has the serial entry alone, with
//! its stack in the scratch frame walked by loops: a few calls (`HEAVY_STEP_WORDS`).

use super::lower::Lower;
use super::map::{frame_bytes, linear_invocation, shell, Options};
use super::SpirvModule;
use crate::abi::{BlockLayout, ReduceEntry, ReduceShape, Variant};
use crate::gpu::map::MapGpu;
use crate::gpu::reduce::{columns, lookback, scan, scan_warp, serial, warp, Pass, Reduction};
use crate::gpu::{Gpu, PassParam, SubgroupSize, Subgroups, MAX_SUBGROUP};
use crate::leaves::leaves;
use crate::lower::binding::{reduction_source, Source};
use crate::lower::counter::{slot_count, Slots, LEVELS, MAX_PIECE};
use crate::lower::{bind_params, Binding, Target};
use crate::CompileError;
use brook_ir::{BinaryOp, Kernel, KernelKind, Module, ScalarKind};
use rspirv::spirv::{BuiltIn, Capability, Scope, Word};

/// Push-constant words before the pass parameters.
const FIXED_WORDS: u32 = 3;

/// A reduction's modules: one per entry, the serial entry first.
#[derive(Clone, Debug)]
pub struct SpirvReduce {
    pub entries: Vec<(ReduceEntry, SpirvModule)>,
    /// Bytes of one reduced value.
    pub value_size: u32,
    /// Scratch bytes each invocation's local arrays take (push word 1).
    pub frame_bytes: u32,
}

/// Writes the entries of reduction `kernel` (a scan's too when `variant.scan`).
pub fn compile(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    options: &Options,
) -> Result<SpirvReduce, CompileError> {
    if kernel.kind != KernelKind::Reduce {
        return Err(super::map::unsupported(
            kernel,
            "a map kernel compiled as a reduction",
        ));
    }
    let prepared = crate::lower::prepared_kernel(kernel, |_| false, &options.tuning);
    let kernel: &Kernel = &prepared;
    let sunk = super::sink::after_jumps(kernel);
    let kernel: &Kernel = &sunk;
    let mut r = Reduction::of(module, kernel, crate::BackendKind::Spirv)?;
    let step = one_step(module, kernel, variant, options, &r)?;
    // Where the device ends loops early, every inlined copy of a combine step's loops also
    // carries the code that counts them (`super::loop_limit`), and lavapipe took minutes
    // over the ~75 copies of a few dead loops: such a reduction is heavy too, its serial
    // entry walking pieces of two leaves (fuzz seed 56001 kernel 3360, 8x8 loops with a
    // `double` remainder in the step: 60 leaves in one walk passed the limit).
    let loops_counted = options.loop_limit > 0 && step.helper_loops > 0;
    r.heavy = step.words > HEAVY_STEP_WORDS || loops_counted;
    // Counted combine loops add up along an invocation's serial walk: pieces of two leaves
    // (a pass per level) keep each dispatch's count to one combine step's.
    let serial_piece = if loops_counted { 2 } else { MAX_PIECE };
    let mut shapes = vec![(ReduceShape::Serial, serial_piece)];
    // A heavy reduction has no faster paths: each calls its combine step many times.
    let stream_input = !r.heavy
        && !variant
            .inputs
            .get(r.input)
            .copied()
            .flatten()
            .is_some_and(|m| m.is_iterator());
    if options.subgroup_shuffle && stream_input {
        shapes.push((ReduceShape::Warp, MAX_PIECE));
    }
    if stream_input && columns::applies(module, kernel, &r) {
        shapes.push((ReduceShape::Columns, columns::MAX_PIECE));
    }
    if variant.scan {
        shapes.push((ReduceShape::Scan, scan::MAX_PIECE));
        if options.subgroup_shuffle && stream_input {
            shapes.push((ReduceShape::ScanWarp, scan_warp::MAX_PIECE));
            if options.lookback_scans && lookback::applies(module, &r) {
                shapes.push((ReduceShape::ScanLookback, scan_warp::MAX_PIECE));
            }
        }
    }
    let entries = shapes
        .into_iter()
        .map(|(shape, max_piece)| {
            let entry = ReduceEntry {
                name: super::shell::ENTRY,
                shape,
                max_piece,
            };
            Ok((
                entry,
                entry_module(module, kernel, variant, options, (&r, &step), shape)?,
            ))
        })
        .collect::<Result<_, CompileError>>()?;
    Ok(SpirvReduce {
        entries,
        value_size: r.value_size,
        frame_bytes: frame(module, kernel, &r).stride,
    })
}

/// Invocations per workgroup of the entry of `shape`.
pub fn group_size(shape: ReduceShape, tuning: &crate::Tuning) -> u32 {
    match shape {
        ReduceShape::ScanLookback => tuning.scan_group,
        _ => super::map::GROUP,
    }
}

/// SPIR-V words of a module that calls a reduction's combine step once, above which the
/// reduction is heavy (as PTX's `HEAVY_COMBINE_LINES`). The serial entry calls the step
/// about 75 times (two unrolled stacks of 23 levels, a batch tree), the subgroup entry as
/// often again, and drivers inline every call: a fuzz reduction whose step NVIDIA's Vulkan
/// compiler took 145 s over compiles in 0.7 s as heavy (lavapipe's JIT: 56 s and 0.4 s,
/// but see the loop limit in `compile`). A heavy reduction has the serial entry alone, its
/// stack in the invocation's scratch frame walked by one loop (three calls).
/// A float sum's module is about 400 words, one of four `float` divisions about 2,500.
const HEAVY_STEP_WORDS: usize = 3_000;

/// What a module calling the combine step once shows of the step.
struct OneStep {
    /// The module's SPIR-V words.
    words: usize,
    /// The loops the combine function holds (counted where the device ends loops early).
    helper_loops: u32,
}

/// A module calling the combine step once: its size (what makes a reduction heavy) and the
/// loops of its combine function.
fn one_step(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    options: &Options,
    r: &Reduction,
) -> Result<OneStep, CompileError> {
    let layout = BlockLayout::new(module, kernel);
    let s = shell(options, FIXED_WORDS, super::map::GROUP);
    let mut lower = Lower::new(module, kernel, s, 0);
    let value = lower.zeros(&r.ty);
    lower.combine_step(r, &value, &value)?;
    let f = lower.combine.take().expect("the step was called");
    let mut s = lower.s;
    s.close_function();
    let loops_before = s.written.loops;
    let s = combine_function(module, kernel, variant, &layout, r, s, &f)?;
    let helper_loops = s.written.loops - loops_before;
    Ok(OneStep {
        words: s.finish().words.len(),
        helper_loops,
    })
}

/// Where an invocation's scratch frame holds what: the kernel's local arrays from its
/// start, then (in a heavy reduction) the serial stack's slots.
struct Frame {
    /// The offset of the stack's slots.
    stack: u32,
    /// Bytes of a slot: the value's, in 8-byte steps.
    slot: u32,
    /// Bytes of a frame, a multiple of 16 (0 when there is nothing to hold).
    stride: u32,
}

fn frame(module: &Module, kernel: &Kernel, r: &Reduction) -> Frame {
    let locals = frame_bytes(module, kernel);
    let slot = r.value_size.next_multiple_of(8).max(8);
    let stack = if r.heavy {
        slot * slot_count(LEVELS) as u32
    } else {
        0
    };
    Frame {
        stack: locals,
        slot,
        stride: (locals + stack).next_multiple_of(16),
    }
}

/// The module of one entry.
fn entry_module(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    options: &Options,
    (r, step): (&Reduction, &OneStep),
    shape: ReduceShape,
) -> Result<SpirvModule, CompileError> {
    let layout = BlockLayout::new(module, kernel);
    let params: &[PassParam] = match shape {
        ReduceShape::Scan | ReduceShape::ScanWarp => PassParam::SCAN,
        ReduceShape::ScanLookback => PassParam::LOOKBACK,
        _ => PassParam::REDUCE,
    };
    let mut s = shell(
        options,
        FIXED_WORDS + params.len() as u32,
        group_size(shape, &options.tuning),
    );
    s.helper_loops = step.helper_loops;
    let block = s.push_word(0);
    let thread = linear_invocation(&mut s);
    let mut lower = Lower::new(module, kernel, s, block);
    lower.thread = Some(thread);
    let pass = Pass::load(&mut lower, variant.rank);
    let source = reduction_source(&mut lower, r.input, &layout, variant);
    match (shape, &source) {
        (ReduceShape::Scan, _) => scan::emit(&mut lower, r, &layout, &pass, &source)?,
        (ReduceShape::Warp, Source::Stream(stream)) => {
            warp::emit(&mut lower, r, &layout, &pass, stream)?
        }
        (ReduceShape::ScanWarp, Source::Stream(stream)) => {
            scan_warp::emit(&mut lower, r, &layout, &pass, stream)?
        }
        (ReduceShape::ScanLookback, Source::Stream(stream)) => {
            lookback::emit(&mut lower, r, &layout, (&pass, stream), &options.tuning)?
        }
        (ReduceShape::Columns, Source::Stream(stream)) => {
            columns::emit(&mut lower, r, &layout, &pass, stream)?
        }
        _ => serial::emit(&mut lower, r, &layout, &pass, &source)?,
    }
    if let Some(problem) = lower.problem.take() {
        return Err(problem);
    }
    let combine = lower.combine.take();
    let mut s = lower.s;
    if let Some(f) = combine {
        s.close_function();
        s = combine_function(module, kernel, variant, &layout, r, s, &f)?;
    }
    Ok(s.finish()
        .labelled(format!("`{}` ({shape:?} entry)", kernel.name)))
}

/// The combine function a module calls: its id, the composite it returns, its leaves' types.
#[derive(Clone, Debug)]
pub struct CombineFn {
    id: Word,
    value_ty: Word,
    leaf_tys: Vec<Word>,
}

/// Writes the combine function `f`: the kernel body on an accumulator that starts as the
/// first half of the parameters, with the input bound to the second half.
fn combine_function(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    layout: &BlockLayout,
    r: &Reduction,
    mut s: super::shell::Shell,
    f: &CombineFn,
) -> Result<super::shell::Shell, CompileError> {
    let param_tys: Vec<Word> = f.leaf_tys.iter().chain(&f.leaf_tys).copied().collect();
    let params = s.begin_helper(f.id, f.value_ty, &param_tys);
    let (left, right) = params.split_at(f.leaf_tys.len());
    super::map::opaque_zero(&mut s);
    let block = s.push_word(0);
    let scratch = s.push_word(1);
    let thread = linear_invocation(&mut s);
    let mut c = Lower::new(module, kernel, s, block);
    let bytes = frame(module, kernel, r).stride;
    let frame = c.s.address(scratch, thread, bytes.max(16));
    c.place_locals(frame);
    c.bindings = bind_params(&mut c, layout, variant);
    let acc: Vec<Word> = f.leaf_tys.iter().map(|&ty| c.variable(ty)).collect();
    for (&var, &value) in acc.iter().zip(left) {
        c.s.write(var, value);
    }
    c.bindings[r.target] = Binding::Vars(acc.clone());
    c.bindings[r.input] = Binding::Values(right.to_vec());
    c.zero_locals();
    c.s.returns = Some((
        f.value_ty,
        acc.into_iter().zip(f.leaf_tys.clone()).collect(),
    ));
    c.body()?;
    Ok(c.s)
}

impl Lower<'_> {
    /// The operands of a relaxed atomic at device scope: its scope and memory semantics.
    fn device_scope(&mut self) -> (Word, Word) {
        let scope = self.s.const_u32(Scope::Device as u32);
        let relaxed = self.s.const_u32(0);
        (scope, relaxed)
    }
}

impl<'a> Gpu<'a> for Lower<'a> {
    fn global_thread(&mut self) -> Word {
        self.thread
            .expect("a pass entry numbers its invocations first")
    }

    fn pass_param(&mut self, p: PassParam) -> Word {
        let index = PassParam::LOOKBACK
            .iter()
            .position(|&q| q == p)
            .expect("every pass parameter is the one-pass scan's");
        let word = self.s.push_word(FIXED_WORDS + index as u32);
        if p == PassParam::Mode {
            return self.convert(ScalarKind::U64, ScalarKind::U32, word);
        }
        word
    }

    fn combine_step(
        &mut self,
        r: &Reduction,
        left: &[Word],
        right: &[Word],
    ) -> Result<Vec<Word>, CompileError> {
        let f = match &self.combine {
            Some(f) => f.clone(),
            None => {
                let leaf_tys: Vec<Word> = leaves(self.module, &r.ty)
                    .iter()
                    .map(|leaf| self.s.container(leaf.kind))
                    .collect();
                let value_ty = self.s.b.type_struct(leaf_tys.clone());
                let f = CombineFn {
                    id: self.s.b.id(),
                    value_ty,
                    leaf_tys,
                };
                self.combine = Some(f.clone());
                f
            }
        };
        let args: Vec<Word> = left.iter().chain(right).copied().collect();
        self.s.note_helper_call();
        let value = self
            .s
            .b
            .function_call(f.value_ty, None, f.id, args)
            .expect("in a block");
        Ok(f.leaf_tys
            .iter()
            .enumerate()
            .map(|(k, &ty)| {
                self.s
                    .b
                    .composite_extract(ty, None, value, [k as u32])
                    .expect("in a block")
            })
            .collect())
    }

    /// Variables, or for a heavy reduction slots in the invocation's scratch frame.
    fn stack_slots(&mut self, r: &Reduction, levels: usize) -> Slots<Word, Word> {
        let kinds = leaves(self.module, &r.ty);
        if r.heavy {
            let at = frame(self.module, self.kernel, r);
            let scratch = self.s.push_word(1);
            let thread = self.global_thread();
            let frame = self.s.address(scratch, thread, at.stride.max(16));
            let offset = self.s.const_u64(u64::from(at.stack));
            let u64_ty = self.s.u64_ty();
            let base = self
                .s
                .b
                .i_add(u64_ty, None, frame, offset)
                .expect("in a block");
            return Slots::Memory {
                base,
                size: at.slot,
                levels,
                ty: r.ty.clone(),
                layout: kinds,
            };
        }
        Slots::Vars(
            (0..levels)
                .map(|_| kinds.iter().map(|leaf| self.temporary(leaf.kind)).collect())
                .collect(),
        )
    }
    fn load_quad(&mut self, kind: ScalarKind, addr: Word) -> [Word; 4] {
        let ty = self.s.container(kind);
        let vars = [(); 4].map(|_| self.variable(ty));
        let fifteen = self.s.const_u64(15);
        let u64_ty = self.s.u64_ty();
        let low = self
            .s
            .b
            .bitwise_and(u64_ty, None, addr, fifteen)
            .expect("in a block");
        let zero = self.s.const_u64(0);
        let aligned = self
            .s
            .binary(BinaryOp::Eq, ScalarKind::U64, low, zero)
            .expect("compare");
        let arms = self.s.begin_if(aligned);
        for (&var, v) in vars.iter().zip(self.load_aligned_quad(kind, addr)) {
            self.s.write(var, v);
        }
        self.s.begin_else(&arms);
        for (k, &var) in vars.iter().enumerate() {
            let k = self.s.const_u64(k as u64);
            let at = self.s.address(addr, k, 4);
            let v = self.s.load_kind(kind, at);
            self.s.write(var, v);
        }
        self.s.end_if(arms);
        vars.map(|var| self.read_var(var))
    }

    fn load_aligned_quad(&mut self, kind: ScalarKind, addr: Word) -> [Word; 4] {
        let ty = self.s.container(kind);
        let vec4 = self.s.b.type_vector(ty, 4);
        let four = self.s.load_typed(vec4, 16, addr);
        [0u32, 1, 2, 3].map(|k| {
            self.s
                .b
                .composite_extract(ty, None, four, [k])
                .expect("in a block")
        })
    }

    fn store_aligned_quad(&mut self, kind: ScalarKind, addr: Word, values: [Word; 4]) {
        let ty = self.s.container(kind);
        let vec4 = self.s.b.type_vector(ty, 4);
        let four = self
            .s
            .b
            .composite_construct(vec4, None, values)
            .expect("in a block");
        self.s.store_typed(vec4, 16, addr, four);
    }

    /// The subgroup's size compiled in where the device's is known
    /// ([`Options::subgroup_size`]), else `SubgroupSize` read at run time (at most 128 in
    /// Vulkan); the subgroup's index in the launch from its workgroup's first invocation (a
    /// workgroup is whole subgroups).
    fn subgroups(&mut self) -> Subgroups<Word> {
        self.s.require(&[
            Capability::GroupNonUniform,
            Capability::GroupNonUniformShuffle,
        ]);
        let known = u64::from(self.s.subgroup_size);
        let size = match known {
            0 => self.s.builtin_scalar_u64(BuiltIn::SubgroupSize),
            known => self.s.const_u64(known),
        };
        let lane = self
            .s
            .builtin_scalar_u64(BuiltIn::SubgroupLocalInvocationId);
        let in_group = self.s.builtin_scalar_u64(BuiltIn::SubgroupId);
        let local = self.s.builtin_u64(BuiltIn::LocalInvocationId, 0);
        let thread = self.global_thread();
        let first = self.binary(BinaryOp::Sub, ScalarKind::U64, thread, local);
        let groups_before = self.div_index(first, size);
        let index = self.binary(BinaryOp::Add, ScalarKind::U64, groups_before, in_group);
        let invocations = <Self as MapGpu>::invocations(self);
        let count = self.div_index(invocations, size);
        Subgroups {
            index,
            count,
            lane,
            size: match known {
                0 => SubgroupSize::Runtime {
                    size,
                    max: MAX_SUBGROUP,
                },
                known => SubgroupSize::Fixed(known),
            },
        }
    }

    fn shuffle_xor(&mut self, kind: ScalarKind, v: Word, mask: u64) -> Word {
        let ty = self.s.container(kind);
        let scope = self.s.const_u32(Scope::Subgroup as u32);
        let mask = self.s.const_u32(mask as u32);
        self.s
            .b
            .group_non_uniform_shuffle_xor(ty, None, scope, v, mask)
            .expect("in a block")
    }

    fn shuffle_from(&mut self, kind: ScalarKind, v: Word, lane: Word) -> Word {
        let ty = self.s.container(kind);
        let scope = self.s.const_u32(Scope::Subgroup as u32);
        let lane = self.convert(ScalarKind::U64, ScalarKind::U32, lane);
        self.s
            .b
            .group_non_uniform_shuffle(ty, None, scope, v, lane)
            .expect("in a block")
    }

    fn subgroup_all(&mut self, p: Word) -> Word {
        self.s.require(&[Capability::GroupNonUniformVote]);
        let ty = self.s.container(ScalarKind::Bool);
        let scope = self.s.const_u32(Scope::Subgroup as u32);
        self.s
            .b
            .group_non_uniform_all(ty, None, scope, p)
            .expect("in a block")
    }

    fn atomic_add_u32(&mut self, addr: Word, amount: u32) -> Word {
        let ty = self.s.u32_ty();
        let ptr = self.s.pointer(ty, addr);
        let (scope, relaxed) = self.device_scope();
        let amount = self.s.const_u32(amount);
        let old = self
            .s
            .b
            .atomic_i_add(ty, None, ptr, scope, relaxed, amount)
            .expect("in a block");
        self.convert(ScalarKind::U32, ScalarKind::U64, old)
    }

    fn atomic_load_u64(&mut self, addr: Word) -> Word {
        self.s.require(&[Capability::Int64Atomics]);
        let ty = self.s.u64_ty();
        let ptr = self.s.pointer(ty, addr);
        let (scope, relaxed) = self.device_scope();
        self.s
            .b
            .atomic_load(ty, None, ptr, scope, relaxed)
            .expect("in a block")
    }

    fn atomic_store_u64(&mut self, addr: Word, v: Word) {
        self.s.require(&[Capability::Int64Atomics]);
        let ty = self.s.u64_ty();
        let ptr = self.s.pointer(ty, addr);
        let (scope, relaxed) = self.device_scope();
        self.s
            .b
            .atomic_store(ptr, scope, relaxed, v)
            .expect("in a block");
    }

    fn to_bits(&mut self, kind: ScalarKind, v: Word) -> Word {
        match kind {
            ScalarKind::F64 => {
                let ty = self.s.u64_ty();
                self.s.b.bitcast(ty, None, v).expect("in a block")
            }
            ScalarKind::F32 => {
                let ty = self.s.u32_ty();
                let word = self.s.b.bitcast(ty, None, v).expect("in a block");
                self.convert(ScalarKind::U32, ScalarKind::U64, word)
            }
            k if k.size() == 8 => v,
            _ => self.convert(ScalarKind::U32, ScalarKind::U64, v),
        }
    }

    fn scalar_of_bits(&mut self, kind: ScalarKind, bits: Word) -> Word {
        let ty = self.s.container(kind);
        match kind {
            ScalarKind::F64 => self.s.b.bitcast(ty, None, bits).expect("in a block"),
            ScalarKind::F32 => {
                let word = self.convert(ScalarKind::U64, ScalarKind::U32, bits);
                self.s.b.bitcast(ty, None, word).expect("in a block")
            }
            k if k.size() == 8 => bits,
            _ => self.convert(ScalarKind::U64, ScalarKind::U32, bits),
        }
    }
}
