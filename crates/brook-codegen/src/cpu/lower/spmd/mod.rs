//! SPMD: a map kernel's body compiled once over a *gang* of consecutive instances, one per
//! SIMD lane, as ISPC does. The shared lowering ([`crate::lower`]) runs unchanged over
//! [`Spmd`], whose leaves are gang-wide values ([`Leaf`]).
//!
//! - **Values.** A leaf is the same for every lane ([`Leaf::Uniform`]: launch parameters,
//!   literals, whatever only they compute), an address or index that grows by a step per lane
//!   ([`Leaf::Linear`]: cursors, the position's fastest axis), 32-bit lanes packed in 128-bit
//!   vectors ([`Leaf::Packed`]: `float`, `int`, `uint`, and `bool` as all-ones masks), or one
//!   scalar per lane ([`Leaf::Lanes`]: every other kind). An operation with a vector form
//!   is one vector instruction per 4 lanes; any other is the scalar lowering's own operation
//!   once per lane ([`lanes`]), so every lane computes exactly what the instance computes
//!   alone: results are bit-identical to the interpreter.
//! - **Indices** ([`index`]): in a narrow variant, index leaves are 32-bit lanes, so a
//!   gather's index conversion, clamps and pitches are vector operations; a gather whose
//!   lanes read consecutive elements is one vector load ([`gather`]).
//! - **Control flow** ([`flow`]) is masked: `if` narrows the execution mask (and skips an
//!   arm no lane takes, or runs a small arm without a test), loops run while any lane is
//!   active, `break`, `continue` and `return` switch lanes off. Stores to locals keep
//!   inactive lanes' values (a blend), except block-scoped locals at their block's level
//!   ([`brook_ir::scope`]); stores to memory ([`memory`]) are per lane, in lane order (the
//!   domain's order), or one blended vector store for a whole gang's consecutive elements
//!   (and `float4`-like elements one vector each, transposed: [`aos`]).
//! - **Gangs.** The map driver runs full gangs along a row of the region, then at most one
//!   *ragged* gang for the rest, whose missing lanes start switched off and read the last
//!   real lane's elements (so every address stays inside its stream).
//!
//! Reductions use gangs for their blocks of 16 leaves ([`combine`]): each level of a block's
//! canonical tree is one gang run of the body.
//!
//! A gang is 4 lanes per 128-bit vector times [`Gang::parts`]: 8 lanes (two vectors, which
//! also hides the latency of dependent operations) where the host has AVX2, 4 elsewhere.
//! `BROOK_SPMD=off|4|8` overrides the choice (`off` runs one instance at a time, to compare).

mod aos;
pub mod combine;
mod flow;
mod gather;
pub mod group;
mod index;
mod lanes;
mod memory;
mod ops;
mod target;

use super::{Binding as ScalarBinding, Lower, PTR};
use crate::cpu::layout::{clif_type, has_array, leaves};
use crate::lower::{Binding, Root, Space, StreamRef};
use brook_ir::{Expr, Handle, Kernel, KernelKind, Module, ScalarKind, Stmt};
use cranelift_codegen::ir::{types, InstBuilder, StackSlotData, StackSlotKind, Value};
use cranelift_frontend::Variable;
use std::collections::HashMap;

/// Vectors per gang at most.
pub const MAX_PARTS: usize = 2;
/// Lanes per 128-bit vector of 32-bit lanes.
pub const VECTOR_LANES: usize = 4;
/// Lanes per gang at most.
pub const MAX_LANES: usize = VECTOR_LANES * MAX_PARTS;

/// A gang-wide value (see the module docs). Only the first [`Gang::parts`] vectors or
/// [`Gang::lanes`] scalars are meaningful.
#[derive(Clone, Copy, Debug)]
pub enum Leaf {
    /// The same scalar in every lane.
    Uniform(Value),
    /// An `i64` that is `base + offset(k) * step` in lane `k` (offsets: [`Spmd::offsets`]).
    Linear { base: Value, step: Value },
    /// 32-bit lanes in vectors (`F32X4`, or `I32X4` for integers and masks).
    Packed([Value; MAX_PARTS]),
    /// One scalar per lane, in the scalar lowering's types.
    Lanes([Value; MAX_LANES]),
}

/// A gang-wide variable.
#[derive(Clone, Copy, Debug)]
pub enum Var {
    Uniform(Variable),
    /// A cursor of the map driver: lane `k`'s element is `step` bytes after lane `k - 1`'s.
    Cursor {
        var: Variable,
        step: Value,
    },
    /// `scope`: the depth of the block whose own full stores write every lane
    /// ([`brook_ir::scope`]).
    Packed {
        kind: ScalarKind,
        vars: [Variable; MAX_PARTS],
        scope: Option<u32>,
    },
    Lanes {
        kind: ScalarKind,
        vars: [Variable; MAX_LANES],
        scope: Option<u32>,
    },
}

/// Whether varying values of `kind` are packed in vectors (else one scalar per lane).
pub fn packs(kind: ScalarKind) -> bool {
    matches!(
        kind,
        ScalarKind::F32 | ScalarKind::I32 | ScalarKind::U32 | ScalarKind::Bool
    )
}

/// The vector type holding packed lanes of `kind`.
pub fn vector_type(kind: ScalarKind) -> types::Type {
    if kind == ScalarKind::F32 {
        types::F32X4
    } else {
        types::I32X4
    }
}

/// The width of a gang.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gang {
    /// 128-bit vectors per packed value (1 or 2).
    pub parts: usize,
}

impl Gang {
    pub fn lanes(self) -> usize {
        self.parts * VECTOR_LANES
    }

    /// The gang this host runs as `gangs` asks ([`crate::Tuning::gangs`]): the host's vector
    /// width unless it names one; `None` runs one instance at a time.
    pub fn host(gangs: crate::Gangs) -> Option<Gang> {
        match gangs {
            crate::Gangs::Off => None,
            crate::Gangs::Four => Some(Gang { parts: 1 }),
            crate::Gangs::Eight => Some(Gang { parts: 2 }),
            crate::Gangs::Host => {
                static DETECTED: std::sync::OnceLock<Option<Gang>> = std::sync::OnceLock::new();
                *DETECTED.get_or_init(Gang::detected)
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    fn detected() -> Option<Gang> {
        if is_x86_feature_detected!("avx2") {
            Some(Gang { parts: 2 })
        } else if is_x86_feature_detected!("sse4.1") {
            Some(Gang { parts: 1 })
        } else {
            None
        }
    }

    #[cfg(target_arch = "aarch64")]
    fn detected() -> Option<Gang> {
        Some(Gang { parts: 1 })
    }

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    fn detected() -> Option<Gang> {
        None
    }
}

/// Past this many (variable, block) pairs SSA construction grows too big (see
/// `driver::MAX_SSA_TABLE`); such kernels run one instance at a time.
const MAX_SSA_TABLE: usize = 1 << 24;

/// Whether a map kernel can run in gangs: no thread groups (their barriers interleave
/// single instances), no shared locals, no reads of a scatter array (an instance reads what
/// earlier instances wrote there, in domain order, where a gang reads before any lane writes),
/// and small enough for SSA construction over a gang's variables in two copies of the body.
pub fn supported(module: &Module, kernel: &Kernel, gang: Gang) -> bool {
    if kernel.kind != KernelKind::Map || kernel.group_size.is_some() {
        return false;
    }
    if kernel.reads_scatter_array() {
        return false;
    }
    if kernel.locals.iter().any(|(_, l)| l.shared) {
        return false;
    }
    fits_gang(module, kernel, gang)
}

/// Whether a kernel's body can be lowered for a gang: small enough for SSA construction over
/// the gang's variables in two copies of the body, and without barriers.
fn fits_gang(module: &Module, kernel: &Kernel, gang: Gang) -> bool {
    fits_ssa(module, kernel, gang) && !has_barrier(&kernel.body)
}

/// Whether SSA construction over the gang's variables in two copies of the body stays small.
fn fits_ssa(module: &Module, kernel: &Kernel, gang: Gang) -> bool {
    let variables: usize = kernel
        .locals
        .iter()
        .flat_map(|(_, l)| leaves(module, &l.ty))
        .map(|leaf| {
            if packs(leaf.kind) {
                gang.parts
            } else {
                gang.lanes()
            }
        })
        .sum();
    let blocks = 2 * super::super::driver::block_estimate(&kernel.body);
    variables.saturating_mul(blocks) <= MAX_SSA_TABLE
}

fn has_barrier(block: &brook_ir::Block) -> bool {
    block.iter().any(|s| match &s.stmt {
        Stmt::Barrier | Stmt::Collective(_) => true,
        Stmt::If { accept, reject, .. } => has_barrier(accept) || has_barrier(reject),
        Stmt::Loop { body, continuing } => has_barrier(body) || has_barrier(continuing),
        _ => false,
    })
}

/// Where a local lives in a gang.
#[derive(Clone, Debug)]
enum LocalSlot {
    /// One gang-wide variable per leaf.
    Vars(Vec<Var>),
    /// In memory: lane `k`'s copy at `base + k * size` (`step` holds `size`), in C layout.
    Memory { base: Value, size: u32, step: Value },
    /// A thread group's shared local: one copy at `base` for every lane (zeroed by the
    /// runtime before each group).
    Shared(Value),
}

/// What every gang body of one function shares, set up once in the function's entry block:
/// the locals, the parameters' bindings and the gang's control variables.
pub struct Plan {
    gang: Gang,
    locals: Vec<LocalSlot>,
    bindings: Vec<Binding<Leaf, Var>>,
    /// The execution mask (`I32X4` per part).
    mask: [Variable; MAX_PARTS],
    /// The lanes that returned.
    returned: [Variable; MAX_PARTS],
    /// Index arithmetic in 32-bit lanes ([`index`]).
    narrow: bool,
    /// The domain's extents as index leaves.
    domain: Vec<Value>,
}

impl Plan {
    /// Sets up a gang's state; the scalar lowering's bindings (cursors included) must be made.
    pub fn new(lower: &mut Lower<'_, '_>, gang: Gang, variant: &crate::abi::Variant) -> Plan {
        Plan::with_shared(lower, gang, variant, None)
    }

    /// [`Plan::new`] for the threads of a group: shared local `i` lives at `shared +
    /// offsets[i]` (the group's buffer).
    pub fn for_group(
        lower: &mut Lower<'_, '_>,
        gang: Gang,
        variant: &crate::abi::Variant,
        shared: Value,
        offsets: &[u32],
    ) -> Plan {
        Plan::with_shared(lower, gang, variant, Some((shared, offsets)))
    }

    fn with_shared(
        lower: &mut Lower<'_, '_>,
        gang: Gang,
        variant: &crate::abi::Variant,
        shared: Option<(Value, &[u32])>,
    ) -> Plan {
        let (unit_stride, narrow) = (variant.unit_stride, variant.narrow_index);
        let module = lower.module;
        let mut locals = Vec::new();
        let scopes = brook_ir::scope::scoped_locals(lower.kernel);
        for (index, ((_, local), scope)) in lower.kernel.locals.iter().zip(scopes).enumerate() {
            if let (true, Some((base, offsets))) = (local.shared, shared) {
                let at = lower.b.ins().iadd_imm_s(base, i64::from(offsets[index]));
                locals.push(LocalSlot::Shared(at));
            } else if has_array(module, &local.ty) {
                let size = module.layout(&local.ty).size.next_multiple_of(8).max(8);
                let slot = lower.b.create_sized_stack_slot(StackSlotData::new(
                    StackSlotKind::ExplicitSlot,
                    size * gang.lanes() as u32,
                    4,
                ));
                let base = lower.b.ins().stack_addr(PTR, slot, 0);
                let step = lower.iconst(PTR, i64::from(size));
                locals.push(LocalSlot::Memory { base, size, step });
            } else {
                let vars = leaves(module, &local.ty)
                    .iter()
                    .map(|leaf| declare(lower, leaf.kind, scope))
                    .collect();
                locals.push(LocalSlot::Vars(vars));
            }
        }
        let bindings = lower
            .bindings
            .clone()
            .into_iter()
            .map(|b| gang_binding(lower, b, unit_stride, narrow))
            .collect();
        let domain = gang_indices(lower, lower.domain.clone(), narrow)
            .into_iter()
            .map(|leaf| match leaf {
                Leaf::Uniform(v) => v,
                _ => unreachable!("extents are uniform"),
            })
            .collect();
        let mut mask_vars = || std::array::from_fn(|_| lower.b.declare_var(types::I32X4));
        let mask = mask_vars();
        let returned = mask_vars();
        Plan {
            gang,
            locals,
            bindings,
            mask,
            returned,
            narrow,
            domain,
        }
    }

    /// Lanes per gang.
    pub fn lanes(&self) -> usize {
        self.gang.lanes()
    }

    /// Lowers the body for one gang where the builder stands: a full gang, or a ragged one
    /// of `count` lanes (`0 < count < lanes`).
    pub fn body(
        &self,
        lower: &mut Lower<'_, '_>,
        count: Option<Value>,
    ) -> Result<(), crate::CompileError> {
        let lower_kernel = lower.kernel;
        let mut spmd = Spmd::new(lower, self, count);
        spmd.zero_locals();
        let body = &lower_kernel.body;
        crate::lower::stmt::block(&mut spmd, body, None)
    }
}

/// A new gang-wide variable for a local leaf of `kind`, scoped to a block at depth `scope`.
fn declare(lower: &mut Lower<'_, '_>, kind: ScalarKind, scope: Option<u32>) -> Var {
    if packs(kind) {
        let ty = vector_type(kind);
        let vars = std::array::from_fn(|_| lower.b.declare_var(ty));
        Var::Packed { kind, vars, scope }
    } else {
        let ty = clif_type(kind);
        let vars = std::array::from_fn(|_| lower.b.declare_var(ty));
        Var::Lanes { kind, vars, scope }
    }
}

/// A scalar binding as a gang's: launch records are uniform, cursors step per lane.
/// Where the gang's indices are narrow, the stream records' extents, pitches and offsets
/// (and iterators' shapes) become `i32`s.
fn gang_binding(
    lower: &mut Lower<'_, '_>,
    binding: ScalarBinding,
    unit_stride: bool,
    narrow: bool,
) -> Binding<Leaf, Var> {
    let u = |values: Vec<Value>| values.into_iter().map(Leaf::Uniform).collect::<Vec<_>>();
    match binding {
        Binding::Unbound => Binding::Unbound,
        Binding::Element { addr } => {
            let cursor = lower.cursors.iter().find(|c| c.var == addr).cloned();
            let step = match cursor {
                Some(c) if !unit_stride => c.step,
                Some(c) => lower.iconst(PTR, i64::from(c.stream.size)),
                None => lower.iconst(PTR, 0),
            };
            Binding::Element {
                addr: Var::Cursor { var: addr, step },
            }
        }
        Binding::Resized { stream } => Binding::Resized {
            stream: gang_stream(lower, stream, narrow),
        },
        Binding::Iterator {
            start,
            end,
            shape,
            resized,
        } => Binding::Iterator {
            start: u(start),
            end: u(end),
            shape: gang_indices(lower, shape, narrow),
            resized,
        },
        Binding::Array { stream } => Binding::Array {
            stream: gang_stream(lower, stream, narrow),
        },
        Binding::Constant(values) => Binding::Constant(u(values)),
        Binding::Vars(vars) => Binding::Vars(vars.into_iter().map(Var::Uniform).collect()),
        Binding::Values(values) => Binding::Values(u(values)),
    }
}

/// Uniform index leaves from the scalar lowering's `i64`s (`i32`s where `narrow`).
fn gang_indices(lower: &mut Lower<'_, '_>, values: Vec<Value>, narrow: bool) -> Vec<Leaf> {
    values
        .into_iter()
        .map(|v| {
            Leaf::Uniform(if narrow {
                lower.b.ins().ireduce(types::I32, v)
            } else {
                v
            })
        })
        .collect()
}

fn gang_stream(lower: &mut Lower<'_, '_>, s: StreamRef<Value>, narrow: bool) -> StreamRef<Leaf> {
    StreamRef {
        base: Leaf::Uniform(s.base),
        offset: gang_indices(lower, vec![s.offset], narrow)[0],
        shape: gang_indices(lower, s.shape, narrow),
        pitch: gang_indices(lower, s.pitch, narrow),
        size: s.size,
    }
}

/// The lowering of one gang body: the shared lowering's [`crate::lower::Target`].
pub struct Spmd<'l, 'a, 'f> {
    pub s: &'l mut Lower<'a, 'f>,
    plan: &'l Plan,
    gang: Gang,
    /// Lane `k`'s offset from lane 0 (`i64`): `k`, or `min(k, count - 1)` in a ragged gang.
    offsets: [Value; MAX_LANES],
    /// A ragged gang's lane count (`None`: a full gang).
    count: Option<Value>,
    /// A full gang (whose lanes' consecutive elements may be one vector access).
    full: bool,
    /// Whether every lane is known to be active here (the mask variables are then stale).
    all_active: bool,
    /// Whether a `return` was lowered (the returned lanes then matter).
    any_return: bool,
    loops: Vec<flow::LoopMasks>,
    /// Inside a scatter's range guard: stores are per lane, each only where its lane is on.
    guarded: bool,
    /// After a jump: the rest of the block runs for no lane.
    dead: bool,
    /// The nesting depth of the block being lowered (see [`brook_ir::scope`]).
    depth: u32,
    /// How the next `if`'s arms are lowered ([`Target::if_arms`](crate::lower::Target)).
    next_arms: Option<flow::ArmPlan>,
    memo: HashMap<Handle<Expr>, Vec<Leaf>>,
    induction: crate::lower::induction::Induction<Leaf, Var>,
    /// Per-lane gather addresses by their lane 0's value ([`gather`]).
    gathers: HashMap<Value, gather::GatherAddress>,
}

impl<'l, 'a, 'f> Spmd<'l, 'a, 'f> {
    fn new(s: &'l mut Lower<'a, 'f>, plan: &'l Plan, count: Option<Value>) -> Self {
        let gang = plan.gang;
        let induction = crate::lower::induction::Induction::new(s.tuning.induction);
        let offsets = std::array::from_fn(|k| {
            let k = k.min(gang.lanes() - 1) as i64;
            match count {
                None => s.iconst(PTR, k),
                Some(count) => {
                    let last = s.b.ins().iadd_imm_s(count, -1);
                    let k = s.iconst(PTR, k);
                    s.b.ins().umin(k, last)
                }
            }
        });
        let mut spmd = Spmd {
            s,
            plan,
            gang,
            offsets,
            count,
            full: count.is_none(),
            all_active: true,
            any_return: false,
            loops: Vec::new(),
            guarded: false,
            dead: false,
            depth: 0,
            next_arms: None,
            memo: HashMap::new(),
            induction,
            gathers: HashMap::new(),
        };
        let none = spmd.splat_mask(false);
        spmd.def_mask_vars(plan.returned, none);
        if let Some(count) = count {
            let active = spmd.lanes_below(count);
            spmd.set_mask(active);
        }
        spmd
    }

    /// Zeroes every local (at the start of each gang).
    fn zero_locals(&mut self) {
        let kernel = self.s.kernel;
        for (index, (_, local)) in kernel.locals.iter().enumerate() {
            match self.plan.locals[index].clone() {
                LocalSlot::Vars(vars) => {
                    for (var, leaf) in vars.iter().zip(leaves(self.s.module, &local.ty)) {
                        let zero = self.s.zero(leaf.kind);
                        self.def_var_all(*var, Leaf::Uniform(zero));
                    }
                }
                LocalSlot::Shared(_) => {}
                LocalSlot::Memory { base, size, .. } => {
                    let zero = self.s.iconst(PTR, 0);
                    let flags = cranelift_codegen::ir::MemFlagsData::trusted();
                    for at in (0..size * self.gang.lanes() as u32).step_by(8) {
                        self.s.b.ins().store(flags, zero, base, at as i32);
                    }
                }
            }
        }
    }

    /// Where local `index` lives, as the shared lowering sees it.
    fn local_root(&self, index: usize) -> Root<Leaf, Var> {
        match &self.plan.locals[index] {
            LocalSlot::Vars(vars) => Root::Vars(vars.clone()),
            &LocalSlot::Memory { base, step, .. } => Root::Memory {
                addr: Leaf::Linear { base, step },
                offset: 0,
                space: Space::Local,
            },
            &LocalSlot::Shared(base) => Root::Memory {
                addr: Leaf::Uniform(base),
                offset: 0,
                space: Space::Local,
            },
        }
    }
}
