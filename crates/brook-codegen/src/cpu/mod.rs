//! The CPU backend: kernel IR to native code through Cranelift, compiled in memory (JIT).
//!
//! [`compile`] turns one kernel of a module, specialised for a launch [`Variant`], into a
//! [`CompiledKernel`]: the entry points of `driver` and the parameter block layout they read.
//! The code follows `brook_ir::launch` exactly (the same operations in the same order as the
//! interpreter), so results are bit-identical to the interpreter's, transcendental functions
//! included (they call the same libm functions, [`helpers`]).
//!
//! Every memory access of compiled code is either at a position the runtime validated (inputs,
//! outputs, reduction leaves) or clamped (gathers, local arrays) or checked (scatters): no
//! kernel can reach outside its buffers.

mod driver;
pub mod helpers;
mod layout;
mod lower;

use crate::abi::{BlockLayout, ReduceEntry, ReduceShape, Variant};
use crate::{Backend, BackendKind, CompileError};
use brook_ir::{Kernel, KernelKind, Module, ValidModule};
use cranelift_codegen::ir::{types, AbiParam, Signature};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Linkage, Module as _};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A map kernel's loop: instances `start..end` of the execution region.
pub type MapFn = unsafe extern "C" fn(block: *const u8, start: u64, end: u64);
/// One thread of a group: returns 1 at a barrier, 0 when finished.
pub type GroupFn = unsafe extern "C" fn(
    block: *const u8,
    state: *mut u8,
    shared: *mut u8,
    instance: u64,
    in_group: u64,
) -> u32;
/// A whole thread group in SIMD gangs: threads `first..first + count` of a one-dimensional
/// region, `state` holding the group's save area ([`GroupRun::Gangs`]).
pub type GroupGangsFn =
    unsafe extern "C" fn(block: *const u8, state: *mut u8, shared: *mut u8, first: u64, count: u64);
/// Reduces leaves `lo..hi` of target element `target`'s tile into `out`.
pub type RangeFn =
    unsafe extern "C" fn(block: *const u8, target: u64, lo: u64, hi: u64, out: *mut u8);
/// Scans leaves `lo..hi` (an aligned piece) of target element `target`'s tile from the
/// exclusive prefix at `before` (null: nothing comes before them) into the output stream;
/// exclusive prefixes where `exclusive` is not 0.
pub type ScanFn = unsafe extern "C" fn(
    block: *const u8,
    target: u64,
    lo: u64,
    hi: u64,
    before: *const u8,
    exclusive: u64,
);
/// `*left = combine(*left, *right)`.
pub type CombineFn = unsafe extern "C" fn(block: *const u8, left: *mut u8, right: *const u8);

/// The entry every CPU reduction has ([`Entry::Reduce`]'s `range`): any piece of a tile's
/// leaves up to the counter stack's size ([`crate::lower::counter::MAX_PIECE`]).
pub const REDUCE_ENTRY: ReduceEntry = ReduceEntry {
    name: "range",
    shape: ReduceShape::Serial,
    max_piece: crate::lower::counter::MAX_PIECE,
};

/// The compiled entry points of one kernel variant.
#[derive(Clone, Copy, Debug)]
pub enum Entry {
    Map(MapFn),
    Group {
        run: GroupRun,
        /// Bytes of a group's shared locals.
        shared_size: usize,
        /// Threads per group.
        group_size: usize,
    },
    Reduce {
        range: RangeFn,
        combine: CombineFn,
        /// A launch as a scan's ([`Variant::scan`]).
        scan: Option<ScanFn>,
        /// Bytes of one reduced value.
        value_size: usize,
    },
}

/// How a thread group's threads run.
#[derive(Clone, Copy, Debug)]
pub enum GroupRun {
    /// One thread at a time, interleaved at barriers by the runtime.
    Threads {
        thread: GroupFn,
        /// Bytes of one thread's state (resume point and locals).
        state_size: usize,
    },
    /// The whole group in one call, its threads in SIMD gangs.
    Gangs {
        group: GroupGangsFn,
        /// Bytes of the group's save area (its gangs' locals between phases).
        state_size: usize,
    },
}

/// A kernel compiled for the CPU. The code stays valid while this value lives.
pub struct CompiledKernel {
    pub entry: Entry,
    pub layout: BlockLayout,
    /// How long compiling took.
    pub compile_time: Duration,
    /// Instances a map kernel's loop (or a thread group) runs at once, or leaves a
    /// reduction's block combines at once: the host's gang ([`planned_gang_lanes`]), or 1
    /// (one at a time: kernels gangs cannot run, and a kernel whose gangs failed to compile).
    pub gang_lanes: usize,
    jit: Mutex<Option<JITModule>>,
}

/// The instances a map kernel of `module` runs at once on this host, in SIMD lanes, when
/// launched over a region of `rank` axes, or the leaves a reduction's block combines at once
/// (the tuning's gangs, the host's vector width, and what the kernel holds decide; 1 for
/// kernels that run one at a time).
pub fn planned_gang_lanes(
    module: &ValidModule,
    kernel: usize,
    rank: usize,
    options: &Options,
) -> usize {
    let tuning = &options.tuning;
    let module = module.module();
    let prepared = crate::lower::prepared_kernel(&module.kernels[kernel], |_| false, tuning);
    if prepared.kind == KernelKind::Reduce {
        return lower::spmd::combine::lane_kind(module, &prepared, tuning)
            .map_or(1, |_| lower::spmd::MAX_LANES);
    }
    if prepared.group_size.is_some() {
        return lower::spmd::group::host_group_gang(module, &prepared, rank, tuning)
            .map_or(1, |(g, _)| g.lanes());
    }
    gang_for(module, &prepared, tuning).map_or(1, |g| g.lanes())
}

/// The gang a prepared map kernel runs in on this host (`None`: one instance at a time).
fn gang_for(module: &Module, kernel: &Kernel, tuning: &crate::Tuning) -> Option<lower::spmd::Gang> {
    lower::spmd::Gang::host(tuning.gangs).filter(|&g| lower::spmd::supported(module, kernel, g))
}

impl std::fmt::Debug for CompiledKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledKernel")
            .field("entry", &self.entry)
            .field("compile_time", &self.compile_time)
            .finish()
    }
}

impl Drop for CompiledKernel {
    fn drop(&mut self) {
        let jit = self.jit.get_mut().map(Option::take).unwrap_or(None);
        if let Some(jit) = jit {
            // SAFETY: the entry points die with `self`; nothing else holds the code.
            unsafe { jit.free_memory() };
        }
    }
}

fn host_isa() -> Result<OwnedTargetIsa, CompileError> {
    static ISA: OnceLock<Result<OwnedTargetIsa, String>> = OnceLock::new();
    ISA.get_or_init(|| {
        let mut flags = settings::builder();
        let set = |f: &mut settings::Builder, k: &str, v: &str| {
            f.set(k, v).map_err(|e| format!("setting {k}={v}: {e}"))
        };
        set(&mut flags, "opt_level", "speed")?;
        set(&mut flags, "use_colocated_libcalls", "false")?;
        set(&mut flags, "is_pic", "false")?;
        // A frame larger than a page touches each page on the way down, so a stack too small
        // for a kernel's locals stops at the guard page instead of writing past it.
        set(&mut flags, "enable_probestack", "true")?;
        set(&mut flags, "probestack_strategy", "inline")?;
        let isa = cranelift_native::builder().map_err(|e| e.to_string())?;
        isa.finish(settings::Flags::new(flags))
            .map_err(|e| e.to_string())
    })
    .clone()
    .map_err(|message| CompileError::Host {
        backend: BackendKind::Cpu,
        message,
    })
}

/// Says under `BROOK_DUMP_CPU` that a kernel's gangs failed to compile (it then runs one
/// instance, or one leaf, at a time: the same results, slower).
fn fell_back(kernel: &Kernel, error: &CompileError) {
    if dumping() {
        eprintln!(
            "; kernel `{}`: gangs failed ({error}); one at a time",
            kernel.name
        );
    }
}

/// Whether `BROOK_DUMP_CPU` asks for the compiled code on stderr.
fn dumping() -> bool {
    std::env::var_os("BROOK_DUMP_CPU").is_some()
}

/// What the CPU backend is told (the host machine itself is asked directly).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    /// The code generation choices.
    pub tuning: crate::Tuning,
}

/// The CPU backend ([`Backend`]): native code for the host, through Cranelift.
pub struct Cpu;

impl Backend for Cpu {
    const KIND: BackendKind = BackendKind::Cpu;
    type Options = Options;
    type Artifact = CompiledKernel;

    fn compile(
        module: &ValidModule,
        kernel: usize,
        variant: &Variant,
        options: &Options,
    ) -> Result<CompiledKernel, CompileError> {
        compile(module, kernel, variant, options)
    }
}

/// Compiles kernel `kernel` of `module` for launches of `variant`.
pub fn compile(
    module: &ValidModule,
    kernel: usize,
    variant: &Variant,
    options: &Options,
) -> Result<CompiledKernel, CompileError> {
    let tuning = &options.tuning;
    let started = Instant::now();
    let module = module.module();
    // The CPU runs collectives as the canonical stores and barriers.
    let prepared = crate::lower::prepared_kernel(&module.kernels[kernel], |_| false, tuning);
    let ir: &brook_ir::Kernel = &prepared;
    let layout = BlockLayout::new(module, ir);
    let mut jit = JITModule::new(JITBuilder::with_isa(host_isa()?, default_libcall_names()));
    let mut builder = Builder {
        module,
        kernel: ir,
        jit: &mut jit,
        layout: &layout,
        variant,
        tuning,
    };
    let mut gang_lanes = 1;
    let entry = match (ir.kind, ir.group_size) {
        (KernelKind::Reduce, _) => {
            // Blocks of leaves in SIMD lanes where the kernel allows; a kernel whose lanes
            // fail to compile reduces one leaf at a time (and says why under
            // `BROOK_DUMP_CPU`).
            let params = &[types::I64; 5];
            let lanes = lower::spmd::combine::lane_kind(module, ir, tuning)
                .map_or(1, |_| lower::spmd::MAX_LANES);
            let range = builder
                .define("range", params, None, |lower, params, layout, variant| {
                    driver::reduce::build_range(lower, params, layout, variant, true)
                })
                .inspect(|_| gang_lanes = lanes)
                .or_else(|error| {
                    fell_back(ir, &error);
                    builder.define("range_one_by_one", params, None, |l, p, la, v| {
                        driver::reduce::build_range(l, p, la, v, false)
                    })
                })?;
            let combine = builder.define(
                "combine",
                &[types::I64; 3],
                None,
                driver::reduce::build_combine,
            )?;
            let scan = variant
                .scan
                .then(|| builder.define("scan", &[types::I64; 6], None, driver::scan::build_scan))
                .transpose()?;
            builder.finish()?;
            let value_size = ir
                .params
                .iter()
                .find(|p| p.role == brook_ir::ParamRole::Reduce)
                .map_or(0, |p| module.layout(&p.ty).size as usize);
            // SAFETY: the functions were compiled with these signatures.
            unsafe {
                Entry::Reduce {
                    range: std::mem::transmute::<*const u8, RangeFn>(
                        jit.get_finalized_function(range),
                    ),
                    combine: std::mem::transmute::<*const u8, CombineFn>(
                        jit.get_finalized_function(combine),
                    ),
                    scan: scan.map(|scan| {
                        std::mem::transmute::<*const u8, ScanFn>(jit.get_finalized_function(scan))
                    }),
                    value_size,
                }
            }
        }
        (KernelKind::Map, Some([x, y, z])) => {
            let group_size = (x as usize * y as usize * z as usize).max(1);
            let group = driver::group::group_layout(module, ir);
            // The whole group in gangs where its threads may run in lockstep; a kernel whose
            // gangs fail to compile runs a thread at a time (and says why under
            // `BROOK_DUMP_CPU`).
            let gangs = lower::spmd::group::host_group_gang(module, ir, variant.rank, tuning);
            let in_gangs = gangs.and_then(|(gang, phases)| {
                builder
                    .define("group", &[types::I64; 5], None, |l, p, la, v| {
                        driver::group_gangs::build(l, p, la, v, gang, &phases)
                    })
                    .inspect_err(|error| fell_back(ir, error))
                    .ok()
                    .map(|id| (id, gang))
            });
            let run = match in_gangs {
                Some((id, gang)) => {
                    let save = lower::spmd::group::save_size(module, ir, gang) as usize;
                    builder.finish()?;
                    gang_lanes = gang.lanes();
                    // SAFETY: compiled with this signature.
                    GroupRun::Gangs {
                        group: unsafe {
                            std::mem::transmute::<*const u8, GroupGangsFn>(
                                jit.get_finalized_function(id),
                            )
                        },
                        state_size: save * group_size.div_ceil(gang.lanes()),
                    }
                }
                None => {
                    let thread = builder.define(
                        "thread",
                        &[types::I64; 5],
                        Some(types::I32),
                        driver::group::build,
                    )?;
                    builder.finish()?;
                    // SAFETY: compiled with this signature.
                    GroupRun::Threads {
                        thread: unsafe {
                            std::mem::transmute::<*const u8, GroupFn>(
                                jit.get_finalized_function(thread),
                            )
                        },
                        state_size: group.state_size,
                    }
                }
            };
            Entry::Group {
                run,
                shared_size: group.shared_size,
                group_size,
            }
        }
        (KernelKind::Map, None) => {
            // A kernel whose gangs fail to compile runs one instance at a time (and says why
            // under `BROOK_DUMP_CPU`).
            let params = &[types::I64; 3];
            let gang = gang_for(module, ir, tuning);
            let run = builder
                .define("map", params, None, |lower, params, layout, variant| {
                    driver::map::build(lower, params, layout, variant, gang)
                })
                .inspect(|_| gang_lanes = gang.map_or(1, |g| g.lanes()))
                .or_else(|error| {
                    fell_back(ir, &error);
                    builder.define(
                        "map_scalar",
                        params,
                        None,
                        |lower, params, layout, variant| {
                            driver::map::build(lower, params, layout, variant, None)
                        },
                    )
                })?;
            builder.finish()?;
            // SAFETY: compiled with this signature.
            Entry::Map(unsafe {
                std::mem::transmute::<*const u8, MapFn>(jit.get_finalized_function(run))
            })
        }
    };
    Ok(CompiledKernel {
        entry,
        layout,
        compile_time: started.elapsed(),
        gang_lanes,
        jit: Mutex::new(Some(jit)),
    })
}

/// Defines the functions of one compiled kernel in a JIT module.
struct Builder<'a> {
    module: &'a Module,
    kernel: &'a Kernel,
    jit: &'a mut JITModule,
    layout: &'a BlockLayout,
    variant: &'a Variant,
    tuning: &'a crate::Tuning,
}

impl Builder<'_> {
    fn codegen_error(&self, message: String) -> CompileError {
        CompileError::Codegen {
            backend: BackendKind::Cpu,
            kernel: self.kernel.name.clone(),
            message,
        }
    }

    fn define(
        &mut self,
        name: &str,
        params: &[types::Type],
        returns: Option<types::Type>,
        build: impl FnOnce(
            &mut lower::Lower<'_, '_>,
            &[cranelift_codegen::ir::Value],
            &BlockLayout,
            &Variant,
        ) -> Result<(), CompileError>,
    ) -> Result<FuncId, CompileError> {
        let call_conv = self.jit.isa().default_call_conv();
        let mut signature = Signature::new(call_conv);
        signature
            .params
            .extend(params.iter().map(|&t| AbiParam::new(t)));
        signature.returns.extend(returns.map(AbiParam::new));
        let mut ctx = self.jit.make_context();
        ctx.func.signature = signature.clone();
        let mut fbc = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fbc);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let args = b.block_params(entry).to_vec();
        let mut lower =
            lower::Lower::new(self.module, self.kernel, b, call_conv, args[0], self.tuning);
        build(&mut lower, &args, self.layout, self.variant)?;
        lower.finish(self.jit.isa().frontend_config());
        let id = self
            .jit
            .declare_function(name, Linkage::Local, &signature)
            .map_err(|e| self.codegen_error(e.to_string()))?;
        let dump = dumping();
        ctx.set_disasm(dump);
        self.jit
            .define_function(id, &mut ctx)
            .map_err(|e| self.codegen_error(format!("{e:?}")))?;
        if let Some(code) = ctx
            .compiled_code()
            .and_then(|c| c.vcode.as_ref())
            .filter(|_| dump)
        {
            eprintln!("; kernel `{}`, function `{name}`\n{code}", self.kernel.name);
        }
        Ok(id)
    }

    fn finish(&mut self) -> Result<(), CompileError> {
        self.jit
            .finalize_definitions()
            .map_err(|e| self.codegen_error(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brook_ir::{
        Access, Arena, Block, Expr, ExprKind, FieldDecl, Literal, Local, Param, ParamId, ParamRole,
        Place, PlaceRoot, ScalarKind, SourceSpan, Stmt, StructDecl, StructId, Type, ValueType,
    };

    const SPAN: SourceSpan = SourceSpan { start: 0, end: 0 };

    /// `reduce void pick(S a<>, reduce S r<>) { int i; r.v[i] = 1.0; }` with `struct S {
    /// float v[2]; }`: an array inside a reduction's value indexed by a computed value, which
    /// the frontend never produces and the CPU backend refuses with a clear error.
    fn array_in_reduction() -> Module {
        let float = Type::Value(ValueType::scalar(ScalarKind::F32));
        let int = Type::Value(ValueType::scalar(ScalarKind::I32));
        let s = Type::Struct(StructId(0));
        let mut locals = Arena::new();
        let i = locals.append(
            Local {
                name: "i".into(),
                ty: int.clone(),
                shared: false,
            },
            SPAN,
        );
        let mut exprs = Arena::new();
        let index = exprs.append(
            Expr {
                kind: ExprKind::Load(Place::local(i)),
                ty: int,
            },
            SPAN,
        );
        let one = exprs.append(
            Expr {
                kind: ExprKind::Literal(Literal::f32(1.0)),
                ty: float.clone(),
            },
            SPAN,
        );
        let mut body = Block::new();
        body.push(
            Stmt::Store {
                place: Place {
                    root: PlaceRoot::Output(ParamId(1)),
                    path: vec![Access::Field(0), Access::Index(index)],
                },
                value: one,
            },
            SPAN,
        );
        let param = |name: &str, role| Param {
            name: name.into(),
            ty: s.clone(),
            role,
            span: SPAN,
        };
        Module {
            source: None,
            structs: vec![StructDecl {
                name: "S".into(),
                fields: vec![FieldDecl {
                    name: "v".into(),
                    ty: Type::Array {
                        elem: Box::new(float),
                        len: 2,
                    },
                }],
            }],
            kernels: vec![Kernel {
                name: "pick".into(),
                kind: KernelKind::Reduce,
                params: vec![param("a", ParamRole::Input), param("r", ParamRole::Reduce)],
                group_size: None,
                vouts: Vec::new(),
                locals,
                exprs,
                body,
                span: SPAN,
            }],
        }
    }

    #[test]
    fn an_unsupported_construct_is_an_error_naming_kernel_and_construct() {
        let module = brook_ir::validate(array_in_reduction()).expect("valid IR");
        let variant = Variant::plain(&module.kernels[0], 1);
        let error = compile(&module, 0, &variant, &Options::default()).expect_err("refused");
        let text = error.to_string();
        assert!(text.contains("kernel `pick`"), "{text}");
        assert!(text.contains("array indexed by a computed value"), "{text}");
        assert!(matches!(error, CompileError::Unsupported { .. }));
    }
}
