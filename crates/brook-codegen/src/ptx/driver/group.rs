//! Thread-group kernels: one CTA per group of `group_size` instances (consecutive in the
//! execution region, row-major), `shared` locals in `.shared` memory (zeroed when the group
//! starts), and barriers as `bar.sync`. Threads past the region's end leave before the body.

use super::{entry_text, load_region, special, unravel, ENTRY};
use crate::abi::{BlockLayout, Variant};
use crate::ptx::emit::Class;
use crate::ptx::lower::{bind_params, IndexWidth, LocalStore, Lower};
use crate::CompileError;
use brook_ir::{Kernel, Module};

pub fn build(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    layout: &BlockLayout,
    group_size: u32,
    tuning: &crate::Tuning,
) -> Result<(String, Vec<&'static str>, u32), CompileError> {
    let mut lower = Lower::new(module, kernel, tuning);
    lower.index = IndexWidth::of(variant);
    lower.place_locals(true);
    bind_params(&mut lower, layout, variant);
    let region = load_region(&mut lower, variant.rank);
    let group = special(&mut lower, "%ctaid.x");
    let tid = special(&mut lower, "%tid.x");
    zero_shared(&mut lower, group_size);
    let (u, class) = (lower.index.unsigned(), lower.index.class());
    let instance = lower.e.compute(class, |r| {
        format!("mad.lo.{u} {r}, {group}, {group_size}, {tid}")
    });
    let outside = lower.e.compute(Class::Pred, |r| {
        format!("setp.ge.{u} {r}, {instance}, {}", region.total)
    });
    let ret = lower.ret;
    lower.e.bra_if(outside, ret);
    lower.pos = (0..variant.rank).map(|_| lower.e.reg(class)).collect();
    let pos = lower.pos.clone();
    unravel(&mut lower, &pos, instance, &region.size, &region.origin);
    lower.in_group = Some(tid);
    lower.set_elements();
    lower.zero_locals();
    lower.body()?;
    lower.e.at(ret);
    lower.e.op("ret");
    let helpers = std::mem::take(&mut lower.helpers);
    let attributes = format!("\n.maxntid {group_size}, 1, 1");
    let shared_bytes = lower.e.shared_bytes();
    Ok((
        entry_text(ENTRY, layout.size(), lower.e.finish(), &attributes),
        helpers,
        shared_bytes,
    ))
}

/// Every thread zeroes a strided share of the shared locals, then the group waits (unless
/// there are none).
fn zero_shared(lower: &mut Lower<'_>, group_size: u32) {
    if !lower.kernel.locals.iter().any(|(_, l)| l.shared) {
        return;
    }
    let tid = lower.e.compute(Class::B32, |r| {
        "mov.u32 ".to_string() + &format!("{r}, %tid.x")
    });
    for store in lower.locals.clone() {
        let LocalStore::Memory {
            addr,
            size,
            shared: true,
        } = store
        else {
            continue;
        };
        let words = size / 4;
        let word = lower.e.reg(Class::B32);
        lower.e.mov(word, tid);
        let (head, done) = (lower.e.label(), lower.e.label());
        lower.e.at(head);
        let finished = lower
            .e
            .compute(Class::Pred, |r| format!("setp.ge.u32 {r}, {word}, {words}"));
        lower.e.bra_if(finished, done);
        let at = lower
            .e
            .compute(Class::B32, |r| format!("mad.lo.u32 {r}, {word}, 4, {addr}"));
        lower.e.op(format!("st.shared.u32 [{at}], 0"));
        lower.e.op(format!("add.u32 {word}, {word}, {group_size}"));
        lower.e.bra(head);
        lower.e.at(done);
    }
    lower.e.op("bar.sync 0");
}
