//! Map kernels without thread groups as SPIR-V: one invocation per instance of the execution
//! region, in workgroups of [`GROUP`] invocations laid out in two dimensions (a dispatch has
//! at most 65,535 workgroups along an axis), the body lowered once by the shared lowering.
//!
//! Push constants: word 0 the parameter block's address ([`crate::abi`]), word 1 the scratch
//! memory of local arrays (a frame of [`SpirvMap::frame_bytes`] per instance, by the instance's
//! linear index), word 2 the dispatch's width in invocations (workgroups along x times
//! [`GROUP`]; its top bit, always 0, hides float literals from the driver's folding).

use super::lower::Lower;
use super::shell::Shell;
use super::SpirvModule;
use crate::abi::{header, BlockLayout, Variant};
use crate::leaves::has_array;
use crate::lower::{bind_params, Target};
use crate::CompileError;
use brook_ir::{BinaryOp, Kernel, KernelKind, Module, ScalarKind};
use rspirv::spirv::{BuiltIn, Capability};

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
}

/// Writes map kernel `kernel` of `module` for a launch of `variant`: an invocation per
/// instance, a thread-group kernel's groups as workgroups ([`super::group`]).
pub fn compile(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    options: &Options,
) -> Result<SpirvMap, CompileError> {
    if kernel.kind != KernelKind::Map {
        return Err(unsupported(kernel, "a reduction compiled as a map"));
    }
    let group_size = kernel.group_size.map(|g| g.iter().product::<u32>().max(1));
    let prepared = crate::lower::prepared_kernel(kernel, |_| false);
    let kernel: &Kernel = &prepared;
    let sunk = super::sink::after_jumps(kernel);
    let kernel: &Kernel = &sunk;
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
    let rank = variant.rank;
    // Past the region's end, nothing.
    lower.domain = crate::lower::binding::axes(&mut lower, header::DOMAIN, rank);
    let origin = crate::lower::binding::axes(&mut lower, header::REGION_ORIGIN, rank);
    let size = crate::lower::binding::axes(&mut lower, header::REGION_SIZE, rank);
    let mut total = lower.index_constant(1);
    for &n in &size {
        total = lower.mul_index(total, n);
    }
    let bytes = frame_bytes(module, kernel);
    let frame = lower.s.address(scratch, linear, bytes.max(16));
    lower.place_locals(frame);
    // A group's shared array is zeroed before any thread leaves.
    lower.zero_shared();
    let outside = lower
        .s
        .binary(BinaryOp::Ge, ScalarKind::U64, linear, total)
        .expect("compare");
    let leave = lower.begin_if(outside);
    lower.jump_return();
    lower.end_if(leave);
    lower.pos = unravel(&mut lower, linear, &size, &origin);
    lower.bindings = bind_params(&mut lower, &layout, variant);
    lower.zero_locals();
    lower.body()?;
    let shared_bytes = lower.group.map_or(0, |g| 4 * g.words.1);
    Ok(SpirvMap {
        module: lower.s.finish(),
        frame_bytes: bytes,
        group_size: group_size.unwrap_or(GROUP),
        shared_bytes,
    })
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
    s.flushes_f32 = options.flushes_f32;
    s.preserve_signed_zero = options.preserve_signed_zero;
    opaque_zero(&mut s);
    s
}

/// Sets the shell's opaque zero ([`Shell::opaque_zero`]) for the function being written (each
/// function computes its own): the dispatch's width is below 2^63, so its top bit is a zero
/// the driver's compiler cannot see.
pub fn opaque_zero(s: &mut Shell) {
    let width = s.push_word(2);
    let sixty_three = s.const_u64(63);
    let u64_ty = s.u64_ty();
    let zero64 =
        s.b.shift_right_logical(u64_ty, None, width, sixty_three)
            .expect("in a block");
    let u32_ty = s.u32_ty();
    let zero32 = s.b.u_convert(u32_ty, None, zero64).expect("in a block");
    s.opaque_zero = Some((zero32, zero64));
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

/// `linear` unravelled row-major in a box of `size`, plus `origin` (slowest first).
fn unravel(
    lower: &mut Lower<'_>,
    linear: rspirv::spirv::Word,
    size: &[rspirv::spirv::Word],
    origin: &[rspirv::spirv::Word],
) -> Vec<rspirv::spirv::Word> {
    let mut pos = vec![linear; size.len()];
    let mut rest = linear;
    for k in (0..size.len()).rev() {
        let p = if k == 0 {
            rest
        } else {
            let t = lower.s.u64_ty();
            let p = lower.s.b.u_mod(t, None, rest, size[k]).expect("in a block");
            rest = lower.div_index(rest, size[k]);
            p
        };
        pos[k] = lower
            .s
            .binary(BinaryOp::Add, ScalarKind::U64, p, origin[k])
            .expect("add");
    }
    pos
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
