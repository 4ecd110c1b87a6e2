//! Map kernels without thread groups: a grid-stride loop over the execution region, one
//! instance per thread and step.

use super::{entry_text, load_region, special, unravel, ENTRY};
use crate::abi::{BlockLayout, Variant};
use crate::ptx::emit::Class;
use crate::ptx::lower::{bind_params, Lower};
use crate::ptx::CompileError;
use brook_ir::{Kernel, Module};

pub fn build(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    layout: &BlockLayout,
) -> Result<(String, Vec<&'static str>), CompileError> {
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
    let (head, done) = (lower.e.label(), lower.e.label());
    lower.e.at(head);
    let finished = lower.e.compute(Class::Pred, |r| {
        format!("setp.ge.u64 {r}, {index}, {}", region.total)
    });
    lower.e.bra_if(finished, done);
    let pos = lower.pos.clone();
    unravel(&mut lower, &pos, index, &region.size, &region.origin);
    lower.set_elements();
    lower.zero_locals();
    lower.body()?;
    let next = lower.ret;
    lower.e.at(next);
    lower.e.op(format!("add.u64 {index}, {index}, {stride}"));
    lower.e.bra(head);
    lower.e.at(done);
    lower.e.op("ret");
    let helpers = std::mem::take(&mut lower.helpers);
    Ok((
        entry_text(ENTRY, layout.size(), lower.e.finish(), ""),
        helpers,
    ))
}
