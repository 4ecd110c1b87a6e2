//! The PTX dialect's [`Gpu`] primitives for the shared reduction strategies
//! ([`crate::gpu::reduce`]): the grid-wide thread index, the pass entries' `.param`s, the
//! combine step written inline, and the counter stack in registers (or, for a heavy
//! reduction, in `.local` memory walked by one loop).

use super::common::{combine, Reduction};
use crate::gpu::{Gpu, PassParam, SubgroupSize, Subgroups};
use crate::lower::counter::Slots;
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::Lower;
use crate::CompileError;
use brook_ir::ScalarKind;

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
        PassParam::Table => "table",
        PassParam::Ticket => "ticket",
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
    fn load_quad(&mut self, kind: ScalarKind, addr: Reg) -> [Reg; 4] {
        let values = [(); 4].map(|_| self.e.reg(Class::of(kind)));
        let low = self
            .e
            .compute(Class::B64, |r| format!("and.b64 {r}, {addr}, 15"));
        let aligned = self
            .e
            .compute(Class::Pred, |r| format!("setp.eq.u64 {r}, {low}, 0"));
        let (one_by_one, loaded) = (self.e.label(), self.e.label());
        self.e.bra_unless(aligned, one_by_one);
        for (&v, got) in values.iter().zip(self.load_aligned_quad(kind, addr)) {
            self.e.mov(v, got);
        }
        self.e.bra(loaded);
        self.e.at(one_by_one);
        for (c, &v) in values.iter().enumerate() {
            let got = self.load_scalar(kind, addr, 4 * c as u32, "global.nc");
            self.e.mov(v, got);
        }
        self.e.at(loaded);
        values
    }

    fn load_aligned_quad(&mut self, kind: ScalarKind, addr: Reg) -> [Reg; 4] {
        let values = [(); 4].map(|_| self.e.reg(Class::of(kind)));
        let list = values.map(|v| v.to_string()).join(", ");
        self.e
            .op(format!("ld.global.nc.v4.b32 {{{list}}}, [{addr}]"));
        values
    }

    fn store_aligned_quad(&mut self, _kind: ScalarKind, addr: Reg, values: [Reg; 4]) {
        let list = values.map(|v| v.to_string()).join(", ");
        self.e.op(format!("st.global.v4.b32 [{addr}], {{{list}}}"));
    }

    /// Warps of 32: the lane is the thread's index modulo 32 (a block is whole warps).
    fn subgroups(&mut self) -> Subgroups<Reg> {
        let g = self.global_thread();
        let [nctaid, ntid] = ["%nctaid.x", "%ntid.x"].map(|name| {
            self.e
                .compute(Class::B32, |r| format!("mov.u32 {r}, {name}"))
        });
        let threads = self.e.compute(Class::B64, |r| {
            format!("mul.wide.u32 {r}, {nctaid}, {ntid}")
        });
        let wide =
            |lower: &mut Lower<'_>, text: &dyn Fn(Reg) -> String| lower.e.compute(Class::B64, text);
        Subgroups {
            index: wide(self, &|r| format!("shr.u64 {r}, {g}, 5")),
            count: wide(self, &|r| format!("shr.u64 {r}, {threads}, 5")),
            lane: wide(self, &|r| format!("and.b64 {r}, {g}, 31")),
            size: SubgroupSize::Fixed(32),
        }
    }

    fn shuffle_xor(&mut self, _kind: ScalarKind, v: Reg, mask: u64) -> Reg {
        super::lanes::shuffle(self, v, mask)
    }

    fn shuffle_from(&mut self, _kind: ScalarKind, v: Reg, lane: Reg) -> Reg {
        let lane = self
            .e
            .compute(Class::B32, |r| format!("cvt.u32.u64 {r}, {lane}"));
        super::lanes::shuffle_with(self, v, "idx", &lane.to_string())
    }

    fn subgroup_all(&mut self, p: Reg) -> Reg {
        self.e.compute(Class::Pred, |r| {
            format!("vote.sync.all.pred {r}, {p}, 0xffffffff")
        })
    }

    fn atomic_add_u32(&mut self, addr: Reg, amount: u32) -> Reg {
        let old = self.e.compute(Class::B32, |r| {
            format!("atom.relaxed.gpu.global.add.u32 {r}, [{addr}], {amount}")
        });
        self.e
            .compute(Class::B64, |r| format!("cvt.u64.u32 {r}, {old}"))
    }

    fn atomic_load_u64(&mut self, addr: Reg) -> Reg {
        self.e.compute(Class::B64, |r| {
            format!("ld.relaxed.gpu.global.u64 {r}, [{addr}]")
        })
    }

    fn atomic_store_u64(&mut self, addr: Reg, v: Reg) {
        self.e
            .op(format!("st.relaxed.gpu.global.u64 [{addr}], {v}"));
    }

    fn to_bits(&mut self, kind: ScalarKind, v: Reg) -> Reg {
        match Class::of(kind) {
            Class::B64 => v,
            Class::F64 => self.e.compute(Class::B64, |r| format!("mov.b64 {r}, {v}")),
            class => {
                let word = match class {
                    Class::F32 => self.e.compute(Class::B32, |r| format!("mov.b32 {r}, {v}")),
                    _ => v,
                };
                self.e
                    .compute(Class::B64, |r| format!("cvt.u64.u32 {r}, {word}"))
            }
        }
    }

    fn scalar_of_bits(&mut self, kind: ScalarKind, bits: Reg) -> Reg {
        match Class::of(kind) {
            Class::B64 => bits,
            Class::F64 => self
                .e
                .compute(Class::F64, |r| format!("mov.b64 {r}, {bits}")),
            class => {
                let word = self
                    .e
                    .compute(Class::B32, |r| format!("cvt.u32.u64 {r}, {bits}"));
                self.e.compute(class, |r| format!("mov.b32 {r}, {word}"))
            }
        }
    }
}
