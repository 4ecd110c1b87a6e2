//! Map kernels without thread groups: the shared grid-stride driver ([`crate::gpu::map`])
//! over PTX's primitives. An instance's `return` branches to the instance's own end label;
//! quads of 4-byte inputs come with one `ld.global.nc.v4.b32` where the element is 16-byte
//! aligned.

use super::{entry_text, load_region, ENTRY};
use crate::abi::{BlockLayout, Variant};
use crate::gpu::map::{self, MapGpu, Stepping};
use crate::ptx::emit::{Label, Reg};
use crate::ptx::lower::Binding;
use crate::ptx::lower::{bind_params, IndexWidth, Lower};
use crate::CompileError;
use brook_ir::{Kernel, Module};

/// The entry's text, the math helpers it calls and the instances a thread runs per step.
pub fn build(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    layout: &BlockLayout,
    tuning: &crate::Tuning,
) -> Result<(String, Vec<&'static str>, u64), CompileError> {
    let mut lower = Lower::new(module, kernel, tuning);
    lower.index = IndexWidth::of(variant);
    lower.place_locals(false);
    bind_params(&mut lower, layout, variant);
    let region = load_region(&mut lower, variant.rank);
    let stepping = Stepping::of(module, kernel, variant);
    map::emit(&mut lower, stepping, &region)?;
    lower.e.op("ret");
    let helpers = std::mem::take(&mut lower.helpers);
    Ok((
        entry_text(ENTRY, layout.size(), lower.e.finish(), ""),
        helpers,
        stepping.instances_per_step(),
    ))
}

impl<'a> MapGpu<'a> for Lower<'a> {
    /// The instance's end label and the one `return` went to before.
    type Instance = (Label, Label);

    /// `%nctaid.x * %ntid.x`.
    fn invocations(&mut self) -> Reg {
        let nctaid = self.special_index("%nctaid.x");
        let ntid = self.special_index("%ntid.x");
        self.index_op("mul.lo", nctaid, ntid)
    }

    fn set_position(&mut self, pos: Vec<Reg>) {
        self.pos = pos;
        self.set_elements();
    }

    fn set_binding(&mut self, param: usize, binding: Binding) {
        self.bindings[param] = binding;
    }

    fn begin_instance(&mut self) -> (Label, Label) {
        let end = self.e.label();
        (end, std::mem::replace(&mut self.ret, end))
    }

    fn end_instance(&mut self, (end, outer): (Label, Label)) {
        self.e.at(end);
        self.ret = outer;
    }

    fn zero_locals(&mut self) {
        Lower::zero_locals(self);
    }

    fn lower_body(&mut self) -> Result<(), CompileError> {
        self.body()
    }
}
