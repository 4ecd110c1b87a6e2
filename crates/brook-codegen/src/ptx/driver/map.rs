//! Map kernels without thread groups: a grid-stride loop over the execution region, one
//! instance per thread and step.
//!
//! A small loop-free kernel runs [`UNROLL`] instances per step while they are all inside the
//! region (one basic block: the loads of all of them are in flight together, which a single
//! instance per thread does not give the memory system enough of), then single steps. On a
//! one-dimensional domain with unit-stride streams the step's instances are consecutive
//! ([`quads`]): each 4-byte input is read for all four with one 16-byte load.

use super::{entry_text, load_region, special, unravel, Region, ENTRY};
use crate::abi::InputMode;
use crate::abi::{BlockLayout, Variant};
use crate::leaves::leaves;
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::Binding;
use crate::ptx::lower::{bind_params, IndexWidth, Lower};
use crate::CompileError;
use brook_ir::{Block, Kernel, Module, ParamRole, Stmt};

/// Instances per step of the unrolled loop.
const UNROLL: u64 = 4;
/// Kernels of a greater weight ([`brook_ir::weight`]) run one instance per step.
const SMALL: usize = 256;

pub fn build(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    layout: &BlockLayout,
) -> Result<(String, Vec<&'static str>, u64), CompileError> {
    let mut lower = Lower::new(module, kernel);
    lower.index = IndexWidth::of(variant);
    let (u, class) = (lower.index.unsigned(), lower.index.class());
    lower.place_locals(false);
    bind_params(&mut lower, layout, variant);
    let region = load_region(&mut lower, variant.rank);
    let ctaid = special(&mut lower, "%ctaid.x");
    let ntid = special(&mut lower, "%ntid.x");
    let tid = special(&mut lower, "%tid.x");
    let nctaid = special(&mut lower, "%nctaid.x");
    let index = lower
        .e
        .compute(class, |r| format!("mad.lo.{u} {r}, {ctaid}, {ntid}, {tid}"));
    let stride = lower.index_op("mul.lo", nctaid, ntid);
    lower.pos = (0..variant.rank).map(|_| lower.e.reg(class)).collect();
    let (head, single, done) = (lower.e.label(), lower.e.label(), lower.e.label());
    let unrolled = worth_unrolling(kernel);
    let consecutive = unrolled && vectorizable(module, kernel, variant);
    if consecutive {
        quads(&mut lower, index, stride, &region)?;
        lower.e.bra(single);
    }
    lower.e.at(head);
    if unrolled && !consecutive {
        let last = lower.e.compute(class, |r| {
            format!("mad.lo.{u} {r}, {stride}, {}, {index}", UNROLL - 1)
        });
        let short = lower.e.compute(Class::Pred, |r| {
            format!("setp.ge.{u} {r}, {last}, {}", region.total)
        });
        lower.e.bra_if(short, single);
        for k in 0..UNROLL {
            let at = lower
                .e
                .compute(class, |r| format!("mad.lo.{u} {r}, {stride}, {k}, {index}"));
            instance(&mut lower, at, &region)?;
        }
        lower
            .e
            .op(format!("mad.lo.{u} {index}, {stride}, {UNROLL}, {index}"));
        lower.e.bra(head);
    }
    lower.e.at(single);
    let finished = lower.e.compute(Class::Pred, |r| {
        format!("setp.ge.{u} {r}, {index}, {}", region.total)
    });
    lower.e.bra_if(finished, done);
    instance(&mut lower, index, &region)?;
    lower.e.op(format!("add.{u} {index}, {index}, {stride}"));
    lower.e.bra(single);
    lower.e.at(done);
    lower.e.op("ret");
    let helpers = std::mem::take(&mut lower.helpers);
    Ok((
        entry_text(ENTRY, layout.size(), lower.e.finish(), ""),
        helpers,
        if unrolled { UNROLL } else { 1 },
    ))
}

/// Runs the body for the instance at `linear` in the region (its own return label).
fn instance(lower: &mut Lower<'_>, linear: Reg, region: &Region) -> Result<(), CompileError> {
    let pos = lower.pos.clone();
    unravel(lower, &pos, linear, &region.size, &region.origin);
    lower.set_elements();
    lower.zero_locals();
    lower.ret = lower.e.label();
    lower.body()?;
    let end = lower.ret;
    lower.e.at(end);
    Ok(())
}

/// Small ([`brook_ir::weight`], which counts unrolled loops' copies where the arena shares
/// their expressions) and loop-free: several instances in one basic block pay off.
fn worth_unrolling(kernel: &Kernel) -> bool {
    fn loop_free(block: &Block) -> bool {
        block.iter().all(|s| match &s.stmt {
            Stmt::Loop { .. } => false,
            Stmt::If { accept, reject, .. } => loop_free(accept) && loop_free(reject),
            _ => true,
        })
    }
    loop_free(&kernel.body)
        && brook_ir::weight::Weigher::new(&kernel.exprs).statements(&kernel.body.0) <= SMALL
}

/// One-dimensional, unit pitch, every stream input read directly (no resize), and every
/// input and output element at most 4 bytes (wider elements already load 16 bytes per
/// instance; four consecutive ones per thread would leave the warp's accesses strided).
fn vectorizable(module: &Module, kernel: &Kernel, variant: &Variant) -> bool {
    let narrow = kernel
        .params
        .iter()
        .filter(|p| matches!(p.role, ParamRole::Input | ParamRole::Output))
        .all(|p| module.layout(&p.ty).size <= 4);
    narrow
        && variant.rank == 1
        && variant.unit_stride
        && variant
            .inputs
            .iter()
            .flatten()
            .all(|m| matches!(m, InputMode::Direct | InputMode::Iterator))
}

/// Runs the region in steps of four consecutive instances (thread `index`, then every
/// `stride`-th quad), then leaves `index` at the first instance after the last whole quad
/// for the single steps. 4-byte scalar inputs are loaded once per quad (16 bytes when aligned).
fn quads(
    lower: &mut Lower<'_>,
    index: Reg,
    stride: Reg,
    region: &Region,
) -> Result<(), CompileError> {
    let total = region.total;
    let (u, class) = (lower.index.unsigned(), lower.index.class());
    let thread = lower.e.reg(class);
    lower.e.mov(thread, index);
    let whole = lower.index_op("shr", total, 2);
    let (head, done) = (lower.e.label(), lower.e.label());
    lower.e.at(head);
    let finished = lower.e.compute(Class::Pred, |r| {
        format!("setp.ge.{u} {r}, {index}, {whole}")
    });
    lower.e.bra_if(finished, done);
    let first = lower.index_op("mul.lo", index, 4);
    let pos = lower.pos.clone();
    unravel(lower, &pos, first, &region.size, &region.origin);
    lower.set_elements();
    let preloaded = preload(lower);
    for k in 0..UNROLL {
        if k > 0 {
            let at = lower.index_op("add", first, k);
            unravel(lower, &pos, at, &region.size, &region.origin);
            lower.set_elements();
        }
        for (param, _, values) in &preloaded {
            lower.bindings[*param] = Binding::Values(vec![values[k as usize]]);
        }
        lower.zero_locals();
        lower.ret = lower.e.label();
        lower.body()?;
        let end = lower.ret;
        lower.e.at(end);
    }
    for (param, addr, _) in preloaded {
        lower.bindings[param] = Binding::Element { addr };
    }
    lower.e.op(format!("add.{u} {index}, {index}, {stride}"));
    lower.e.bra(head);
    lower.e.at(done);
    // The last (up to three) instances.
    lower
        .e
        .op(format!("mad.lo.{u} {index}, {whole}, 4, {thread}"));
    Ok(())
}

/// Loads the four consecutive elements of each 4-byte scalar input read directly (at the
/// quad's first element): the parameter, its element address register and the values.
fn preload(lower: &mut Lower<'_>) -> Vec<(usize, Reg, Vec<Reg>)> {
    let mut out = Vec::new();
    for (i, param) in lower.kernel.params.iter().enumerate() {
        if param.role != ParamRole::Input {
            continue;
        }
        let Binding::Element { addr } = lower.bindings[i].clone() else {
            continue;
        };
        let kind = match leaves(lower.module, &param.ty).as_slice() {
            [leaf] if leaf.kind.size() == 4 && Class::of(leaf.kind) != Class::Pred => leaf.kind,
            _ => continue,
        };
        out.push((i, addr, kind));
    }
    out.into_iter()
        .map(|(i, addr, kind)| {
            let values: Vec<Reg> = (0..UNROLL).map(|_| lower.e.reg(Class::of(kind))).collect();
            let low = lower
                .e
                .compute(Class::B64, |r| format!("and.b64 {r}, {addr}, 15"));
            let aligned = lower
                .e
                .compute(Class::Pred, |r| format!("setp.eq.u64 {r}, {low}, 0"));
            let (one_by_one, loaded) = (lower.e.label(), lower.e.label());
            lower.e.bra_unless(aligned, one_by_one);
            let list = values
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            lower
                .e
                .op(format!("ld.global.nc.v4.b32 {{{list}}}, [{addr}]"));
            lower.e.bra(loaded);
            lower.e.at(one_by_one);
            for (c, &v) in values.iter().enumerate() {
                let got = lower.load_scalar(kind, addr, 4 * c as u32, "global.nc");
                lower.e.mov(v, got);
            }
            lower.e.at(loaded);
            (i, addr, values)
        })
        .collect()
}
