//! The PTX dialect's [`Gpu`] primitives for the shared reduction strategies
//! ([`crate::gpu::reduce`]): the grid-wide thread index, the pass entries' `.param`s, the
//! combine step written inline, and the counter stack in registers (or, for a heavy
//! reduction, in `.local` memory walked by one loop).

use super::common::{combine, Reduction};
use crate::gpu::{Gpu, PassParam};
use crate::lower::counter::Slots;
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::Lower;
use crate::CompileError;

/// The name of a pass parameter in the entries' signatures.
pub(super) fn param_name(p: PassParam) -> &'static str {
    match p {
        PassParam::Src => "src",
        PassParam::Dst => "dst",
        PassParam::Leaves => "leaves",
        PassParam::Piece => "piece",
        PassParam::Pieces => "pieces",
        PassParam::Mode => "mode",
        PassParam::Pre => "pre",
        PassParam::Init => "init",
    }
}

/// The `.param` declarations of `params`, as they follow the parameter block.
pub(super) fn param_declarations(params: &[PassParam]) -> String {
    params
        .iter()
        .map(|&p| {
            let ty = if p == PassParam::Mode { "u32" } else { "u64" };
            format!(", .param .{ty} {}", param_name(p))
        })
        .collect()
}

impl<'a> Gpu<'a> for Lower<'a> {
    /// `%ctaid.x * %ntid.x + %tid.x` in 64 bits, whatever the index width.
    fn global_thread(&mut self) -> Reg {
        let [ctaid, ntid, tid] = ["%ctaid.x", "%ntid.x", "%tid.x"].map(|name| {
            self.e
                .compute(Class::B32, |r| format!("mov.u32 {r}, {name}"))
        });
        let tid = self
            .e
            .compute(Class::B64, |r| format!("cvt.u64.u32 {r}, {tid}"));
        self.e.compute(Class::B64, |r| {
            format!("mad.wide.u32 {r}, {ctaid}, {ntid}, {tid}")
        })
    }

    fn pass_param(&mut self, p: PassParam) -> Reg {
        let name = param_name(p);
        if p == PassParam::Mode {
            return self
                .e
                .compute(Class::B32, |reg| format!("ld.param.u32 {reg}, [{name}]"));
        }
        self.e
            .compute(Class::B64, |reg| format!("ld.param.u64 {reg}, [{name}]"))
    }

    fn combine_step(
        &mut self,
        r: &Reduction,
        left: &[Reg],
        right: &[Reg],
    ) -> Result<Vec<Reg>, CompileError> {
        let dest: Vec<Reg> = left.iter().map(|v| self.e.reg(v.class)).collect();
        combine(self, r, &dest, left, right)?;
        Ok(dest)
    }

    fn stack_slots(&mut self, r: &Reduction, levels: usize) -> Slots<Reg, Reg> {
        let layout = crate::leaves::leaves(self.module, &r.ty);
        if !r.heavy {
            let vars = (0..levels)
                .map(|_| {
                    layout
                        .iter()
                        .map(|l| self.e.reg(Class::of(l.kind)))
                        .collect()
                })
                .collect();
            return Slots::Vars(vars);
        }
        let size = r.value_size.next_multiple_of(8).max(8);
        let name = self.e.memory(false, size * levels as u32, 16);
        let raw = self.e.mov_imm(Class::B64, &name);
        let base = self
            .e
            .compute(Class::B64, |reg| format!("cvta.local.u64 {reg}, {raw}"));
        Slots::Memory {
            base,
            size,
            levels,
            ty: r.ty.clone(),
            layout,
        }
    }
}
