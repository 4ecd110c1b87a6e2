//! Map kernels as SPIR-V: the shared grid-stride driver ([`crate::gpu::map`]) over this
//! dialect's primitives, in workgroups of [`GROUP`] invocations laid out in two dimensions (a
//! dispatch has at most 65,535 workgroups along an axis); thread-group kernels (and kernels
//! that `return` from inside a loop) an invocation per instance.
//!
//! Push constants: word 0 the parameter block's address ([`crate::abi`]), word 1 the scratch
//! memory of local arrays (a frame of [`SpirvMap::frame_bytes`] per invocation, by its linear
//! index), word 2 the dispatch's width in invocations (workgroups along x times the workgroup
//! size; its top bit, always 0, hides float literals from the driver's folding).

use super::lower::Lower;
use super::shell::Shell;
use super::SpirvModule;
use crate::abi::{header, BlockLayout, Variant};
use crate::gpu;
use crate::gpu::map::{MapGpu, Region, Stepping};
use crate::leaves::has_array;
use crate::lower::{bind_params, Binding, Target};
use crate::CompileError;
use brook_ir::{BinaryOp, Kernel, KernelKind, Module, ScalarKind};
use rspirv::spirv::{BuiltIn, Capability, Word};

/// Invocations per workgroup.
pub const GROUP: u32 = 64;

/// What the device offers that the module may use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    /// `shaderFloat64`.
    pub float64: bool,
    /// The device's `Fma` on doubles is fused.
    pub fused_fma: bool,
    /// `shaderSignedZeroInfNanPreserveFloat32`/`64`.
    pub preserve_signed_zero: (bool, bool),
    /// The device flushes `float` subnormals (its probe says so).
    pub flushes_f32: bool,
    /// Maps take the shared driver's unrolled steps ([`Stepping::of`]); else single steps.
    /// A device on the CPU (lavapipe) gains nothing from them and compiles each module with
    /// LLVM: four copies of a body cost it compile time (a cold CI run took minutes more).
    pub unrolled_maps: bool,
    /// The device runs subgroup shuffles in compute shaders, its subgroups no larger than a
    /// workgroup of [`GROUP`]: reductions get the subgroup path ([`crate::gpu::reduce::warp`]).
    pub subgroup_shuffle: bool,
    /// Invocations of every subgroup, compiled in as a constant: the device's
    /// `subgroupSize`, which is what a SPIR-V 1.5 module's `SubgroupSize` holds in a pipeline
    /// made without a varying or required size (the Vulkan specification's rule); 0 reads
    /// `SubgroupSize` at run time.
    pub subgroup_size: u32,
    /// Loop iterations after which the device ends a subgroup's loops, as its probe
    /// found (lavapipe: 65,535); 0 for none. Where set, modules count their loops' steps
    /// ([`super::loop_limit`]).
    pub loop_limit: u32,
    /// Scans get the one-pass entry ([`crate::gpu::reduce::lookback`]): the device has atomics
    /// on 64-bit integers in buffers (`shaderBufferInt64Atomics`) and subgroup votes.
    pub lookback_scans: bool,
    /// The code generation choices.
    pub tuning: crate::Tuning,
}

/// A map kernel's module and the scratch memory each instance needs.
#[derive(Clone, Debug)]
pub struct SpirvMap {
    pub module: SpirvModule,
    pub frame_bytes: u32,
    /// Invocations per workgroup: [`GROUP`], or a thread-group kernel's group size.
    pub group_size: u32,
    /// Bytes of the group's shared array (thread-group kernels).
    pub shared_bytes: u32,
    /// `Some(k)`: a grid-stride loop whose invocations run `k` instances a step (the launch
    /// needs `total / k` invocations, and may have fewer); `None`: an invocation per instance.
    pub instances_per_step: Option<u64>,
}

/// Writes map kernel `kernel` of `module` for a launch of `variant`: the shared grid-stride
/// driver ([`crate::gpu::map`]), or an invocation per instance for a thread-group kernel's
/// groups as workgroups ([`super::group`]) and a kernel that returns from inside a loop.
pub fn compile(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    options: &Options,
) -> Result<SpirvMap, CompileError> {
    if kernel.kind != KernelKind::Map {
        return Err(unsupported(kernel, "a reduction compiled as a map"));
    }
    let prepared = crate::lower::prepared_kernel(kernel, |_| false, &options.tuning);
    let kernel: &Kernel = &prepared;
    let sunk = super::sink::after_jumps(kernel);
    let kernel: &Kernel = &sunk;
    if kernel.group_size.is_none() && !gpu::map::returns_in_loops(kernel) {
        return grid_stride(module, kernel, variant, options);
    }
    per_invocation(module, kernel, variant, options)
}

/// The shared map driver: a grid-stride loop of [`Stepping`] steps.
fn grid_stride(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    options: &Options,
) -> Result<SpirvMap, CompileError> {
    let layout = BlockLayout::new(module, kernel);
    let mut s = shell(options, 3, GROUP);
    let block = s.push_word(0);
    let scratch = s.push_word(1);
    let linear = linear_invocation(&mut s);
    let mut lower = Lower::new(module, kernel, s, block);
    lower.thread = Some(linear);
    let region = region(&mut lower, variant.rank);
    // Frames by invocation: its instances run one after another.
    let bytes = frame_bytes(module, kernel);
    let frame = lower.s.address(scratch, linear, bytes.max(16));
    lower.place_locals(frame);
    lower.pos = vec![lower.index_constant(0); variant.rank];
    lower.bindings = bind_params(&mut lower, &layout, variant);
    let stepping = match options.unrolled_maps {
        true => Stepping::of(module, kernel, variant),
        false => Stepping::Single,
    };
    gpu::map::emit(&mut lower, stepping, &region)?;
    if let Some(problem) = lower.problem.take() {
        return Err(problem);
    }
    Ok(SpirvMap {
        module: lower.s.finish().labelled(format!("`{}`", kernel.name)),
        frame_bytes: bytes,
        group_size: GROUP,
        shared_bytes: 0,
        instances_per_step: Some(stepping.instances_per_step()),
    })
}

/// An invocation per instance: a group kernel's, and one whose `return` in a loop could not
/// end an instance of the grid-stride loop (SPIR-V leaves one construct at a time).
fn per_invocation(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    options: &Options,
) -> Result<SpirvMap, CompileError> {
    let group_size = kernel.group_size.map(|g| g.iter().product::<u32>().max(1));
    let layout = BlockLayout::new(module, kernel);
    let mut s = shell(options, 3, group_size.unwrap_or(GROUP));
    let block = s.push_word(0);
    let scratch = s.push_word(1);
    let linear = linear_invocation(&mut s);
    let tid = s.builtin_u64(BuiltIn::LocalInvocationId, 0);
    let mut lower = Lower::new(module, kernel, s, block);
    lower.group = group_size.map(|size| super::group::Group {
        size,
        tid,
        words: (0, 0),
    });
    let region = region(&mut lower, variant.rank);
    let bytes = frame_bytes(module, kernel);
    let frame = lower.s.address(scratch, linear, bytes.max(16));
    lower.place_locals(frame);
    // A group's shared array is zeroed before any thread leaves.
    lower.zero_shared();
    let outside = lower
        .s
        .binary(BinaryOp::Ge, ScalarKind::U64, linear, region.total)
        .expect("compare");
    let leave = lower.begin_if(outside);
    lower.jump_return();
    lower.end_if(leave);
    lower.pos = gpu::map::unravel(&mut lower, linear, &region.size, &region.origin);
    lower.bindings = bind_params(&mut lower, &layout, variant);
    lower.zero_locals();
    lower.body()?;
    let shared_bytes = lower.group.map_or(0, |g| 4 * g.words.1);
    Ok(SpirvMap {
        module: lower.s.finish().labelled(format!("`{}`", kernel.name)),
        frame_bytes: bytes,
        group_size: group_size.unwrap_or(GROUP),
        shared_bytes,
        instances_per_step: None,
    })
}

/// Reads the domain (into `lower.domain`) and the execution region.
fn region(lower: &mut Lower<'_>, rank: usize) -> Region<Word> {
    lower.domain = crate::lower::binding::axes(lower, header::DOMAIN, rank);
    let origin = crate::lower::binding::axes(lower, header::REGION_ORIGIN, rank);
    let size = crate::lower::binding::axes(lower, header::REGION_SIZE, rank);
    let mut total = lower.index_constant(1);
    for &n in &size {
        total = lower.mul_index(total, n);
    }
    Region {
        origin,
        size,
        total,
    }
}

/// The dialect's error for a construct of `kernel` it cannot write.
pub fn unsupported(kernel: &Kernel, construct: &str) -> CompileError {
    CompileError::Unsupported {
        backend: crate::BackendKind::Spirv,
        kernel: kernel.name.clone(),
        span: kernel.span,
        construct: construct.into(),
    }
}

/// A module's shell for a device with `options`, its push-constant block `push_words` words
/// (word 2 the dispatch's width, whose top bit hides float literals from the driver), its
/// workgroups of `group` invocations.
pub fn shell(options: &Options, push_words: u32, group: u32) -> Shell {
    let extra: &[Capability] = if options.float64 {
        &[Capability::Float64]
    } else {
        &[]
    };
    let mut s = Shell::new(push_words, [group, 1, 1], extra);
    s.fused_fma = options.fused_fma;
    s.tuning = options.tuning;
    s.flushes_f32 = options.flushes_f32;
    s.float64 = options.float64;
    s.preserve_signed_zero = options.preserve_signed_zero;
    s.subgroup_size = options.subgroup_size;
    s.loop_limit = options.loop_limit;
    opaque_zero(&mut s);
    s
}

/// Sets the shell's opaque zeros ([`Shell::opaque_zero`], [`Shell::literal_zero`]) for the
/// function being written (each function computes its own): the dispatch's width is below
/// 2^63, so its top bit is a zero the driver's compiler cannot see; moved to where a
/// `float`'s (a `double`'s) exponent lies it is a second one, for float literals. A literal
/// `-0.0` (a `0.0` negated by a flip of its sign bit, whose mask is mixed with the first zero)
/// mixed with the same zero as the mask gave lavapipe's LLVM the constant back, and it folded
/// `x - -0.0` to `x` (`-0.0 - -0.0` gave -0: `fuzz_vulkan_minus_negative_zero`).
pub fn opaque_zero(s: &mut Shell) {
    let width = s.push_word(2);
    let u64_ty = s.u64_ty();
    let u32_ty = s.u32_ty();
    let shift = |s: &mut Shell, v: Word, right: bool, by: u64| {
        let by = s.const_u64(by);
        match right {
            true => s.b.shift_right_logical(u64_ty, None, v, by),
            false => s.b.shift_left_logical(u64_ty, None, v, by),
        }
        .expect("in a block")
    };
    let zero64 = shift(s, width, true, 63);
    let zero32 = s.b.u_convert(u32_ty, None, zero64).expect("in a block");
    s.opaque_zero = Some((zero32, zero64));
    let literal64 = shift(s, zero64, false, 52);
    let wide32 = shift(s, zero64, false, 23);
    let literal32 = s.b.u_convert(u32_ty, None, wide32).expect("in a block");
    s.literal_zero = Some((literal32, literal64));
}

/// The invocation's index in the dispatch (`y * width + x`, width in push word 2), a `u64`.
pub fn linear_invocation(s: &mut Shell) -> rspirv::spirv::Word {
    let width = s.push_word(2);
    let x = s.builtin_u64(BuiltIn::GlobalInvocationId, 0);
    let y = s.builtin_u64(BuiltIn::GlobalInvocationId, 1);
    let rows = s
        .binary(BinaryOp::Mul, ScalarKind::U64, y, width)
        .expect("integer multiply");
    s.binary(BinaryOp::Add, ScalarKind::U64, rows, x)
        .expect("integer add")
}

/// Bytes of scratch memory an instance's local arrays take (each at a multiple of 16; a
/// group kernel's `shared` locals live in the group's shared array).
pub fn frame_bytes(module: &Module, kernel: &Kernel) -> u32 {
    let mut used = 0u32;
    for (_, local) in kernel.locals.iter() {
        if local.shared && kernel.group_size.is_some() {
            continue;
        }
        if has_array(module, &local.ty) {
            used = used.next_multiple_of(16) + module.layout(&local.ty).size.max(1);
        }
    }
    used.next_multiple_of(16)
}

impl<'a> MapGpu<'a> for Lower<'a> {
    type Instance = Option<Option<super::flow::LoopFrame>>;

    /// The dispatch's width times its rows (`NumWorkgroups.y`).
    fn invocations(&mut self) -> Word {
        let width = self.s.push_word(2);
        let rows = self.s.builtin_u64(BuiltIn::NumWorkgroups, 1);
        self.mul_index(width, rows)
    }

    fn set_position(&mut self, pos: Vec<Word>) {
        self.pos = pos;
        self.set_elements();
    }

    fn set_binding(&mut self, param: usize, binding: Binding<Word, Word>) {
        self.bindings[param] = binding;
    }

    /// A run-once construct where the kernel has a `return` (it leaves the construct).
    fn begin_instance(&mut self) -> Self::Instance {
        has_return(&self.kernel.body).then(|| self.begin_instance_construct())
    }

    fn end_instance(&mut self, instance: Self::Instance) {
        if let Some(outer) = instance {
            self.end_instance_construct(outer);
        }
    }

    fn zero_locals(&mut self) {
        Lower::zero_locals(self);
    }

    fn lower_body(&mut self) -> Result<(), CompileError> {
        self.body()
    }
}

/// Whether `block` holds a `return` (in nested blocks too).
pub(crate) fn has_return(block: &brook_ir::Block) -> bool {
    block.iter().any(|s| match &s.stmt {
        brook_ir::Stmt::Return => true,
        brook_ir::Stmt::Loop { body, continuing } => has_return(body) || has_return(continuing),
        brook_ir::Stmt::If { accept, reject, .. } => has_return(accept) || has_return(reject),
        _ => false,
    })
}
