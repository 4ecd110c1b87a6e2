//! Map kernels without thread groups: a grid-stride loop over the execution region, one
//! instance per thread and step.
//!
//! A small loop-free kernel runs [`UNROLL`] instances per step while they are all inside the
//! region (one basic block: the loads of all of them are in flight together, which a single
//! instance per thread does not give the memory system enough of), then single steps.

use super::{entry_text, load_region, special, unravel, Region, ENTRY};
use crate::abi::{BlockLayout, Variant};
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::{bind_params, Lower};
use crate::ptx::CompileError;
use brook_ir::{Block, Kernel, Module, Stmt};

/// Instances per step of the unrolled loop.
const UNROLL: u64 = 4;
/// Kernels with more expressions than this run one instance per step.
const SMALL: usize = 256;

pub fn build(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    layout: &BlockLayout,
) -> Result<(String, Vec<&'static str>, u64), CompileError> {
    let mut lower = Lower::new(module, kernel);
    lower.place_locals(false);
    bind_params(&mut lower, layout, variant);
    let region = load_region(&mut lower, variant.rank);
    let ctaid = special(&mut lower, "%ctaid.x");
    let ntid = special(&mut lower, "%ntid.x");
    let tid = special(&mut lower, "%tid.x");
    let nctaid = special(&mut lower, "%nctaid.x");
    let index = lower.e.compute(Class::B64, |r| {
        format!("mad.lo.u64 {r}, {ctaid}, {ntid}, {tid}")
    });
    let stride = lower
        .e
        .compute(Class::B64, |r| format!("mul.lo.u64 {r}, {nctaid}, {ntid}"));
    lower.pos = (0..variant.rank).map(|_| lower.e.reg(Class::B64)).collect();
    let (head, single, done) = (lower.e.label(), lower.e.label(), lower.e.label());
    lower.e.at(head);
    let unrolled = worth_unrolling(kernel);
    if unrolled {
        let last = lower.e.compute(Class::B64, |r| {
            format!("mad.lo.u64 {r}, {stride}, {}, {index}", UNROLL - 1)
        });
        let short = lower.e.compute(Class::Pred, |r| {
            format!("setp.ge.u64 {r}, {last}, {}", region.total)
        });
        lower.e.bra_if(short, single);
        for k in 0..UNROLL {
            let at = lower.e.compute(Class::B64, |r| {
                format!("mad.lo.u64 {r}, {stride}, {k}, {index}")
            });
            instance(&mut lower, at, &region)?;
        }
        lower
            .e
            .op(format!("mad.lo.u64 {index}, {stride}, {UNROLL}, {index}"));
        lower.e.bra(head);
    }
    lower.e.at(single);
    let finished = lower.e.compute(Class::Pred, |r| {
        format!("setp.ge.u64 {r}, {index}, {}", region.total)
    });
    lower.e.bra_if(finished, done);
    instance(&mut lower, index, &region)?;
    lower.e.op(format!("add.u64 {index}, {index}, {stride}"));
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

/// Small and loop-free: several instances in one basic block pay off.
fn worth_unrolling(kernel: &Kernel) -> bool {
    fn loop_free(block: &Block) -> bool {
        block.iter().all(|s| match &s.stmt {
            Stmt::Loop { .. } => false,
            Stmt::If { accept, reject, .. } => loop_free(accept) && loop_free(reject),
            _ => true,
        })
    }
    kernel.exprs.len() <= SMALL && loop_free(&kernel.body)
}
