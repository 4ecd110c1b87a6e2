//! Variable outputs (BrookGPU `vout [N] T s<>` with `push`): how a kernel's source signature
//! maps to its IR parameters.
//!
//! The frontend lowers each `vout` parameter to `N` ordinary output slots of the element type
//! and one `int` output counting the pushes of each instance; these are appended after the
//! kernel's other parameters, and the `vout` itself has no IR parameter. A push stores its value
//! in the next slot while fewer than `N` were stored, and every push increments the count, so a
//! count above `N` says values were lost. Backends see ordinary outputs only.
//!
//! Callers launch with arguments in **source order** (the vout's argument at its source
//! position); [`source_params`] is the one place that maps those positions to IR parameters.
//! The runtime allocates the slots and counts, launches, and gathers the pushed values in
//! domain order into the vout's new one-dimensional stream.

use crate::module::{Kernel, Param, ParamId, Type};

/// One `vout [limit] T name<>` parameter.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Vout {
    pub name: String,
    /// The element type.
    pub ty: Type,
    /// Its position among the kernel's source parameters.
    pub position: usize,
    /// The most values one instance keeps (`N` of `vout [N]`).
    pub limit: u32,
    /// The output slots, one per value an instance may keep, in push order.
    pub slots: Vec<ParamId>,
    /// The `int` output holding how many values each instance pushed.
    pub count: ParamId,
}

/// A parameter as the kernel's source declared it.
#[derive(Clone, Copy, Debug)]
pub enum SourceParam<'a> {
    /// An ordinary parameter, with its IR id.
    Param(ParamId, &'a Param),
    /// A variable output, which has no IR parameter of its own.
    Vout(&'a Vout),
}

impl SourceParam<'_> {
    pub fn name(&self) -> &str {
        match self {
            SourceParam::Param(_, p) => &p.name,
            SourceParam::Vout(v) => &v.name,
        }
    }
}

/// The kernel's parameters in source order: its IR parameters except vout slots and counts,
/// with each vout at its source position.
pub fn source_params(kernel: &Kernel) -> Vec<SourceParam<'_>> {
    let hidden = |id: ParamId| {
        kernel
            .vouts
            .iter()
            .any(|v| v.count == id || v.slots.contains(&id))
    };
    let mut params: Vec<SourceParam<'_>> = kernel
        .params_with_ids()
        .filter(|(id, _)| !hidden(*id))
        .map(|(id, p)| SourceParam::Param(id, p))
        .collect();
    let mut vouts: Vec<&Vout> = kernel.vouts.iter().collect();
    vouts.sort_by_key(|v| v.position);
    for vout in vouts {
        let at = vout.position.min(params.len());
        params.insert(at, SourceParam::Vout(vout));
    }
    params
}
