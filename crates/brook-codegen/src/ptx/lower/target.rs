//! The GPU's [`Target`]: the shared lowering's primitive operations as PTX instructions on
//! virtual registers. Structured control flow becomes labels and branches; the parameter
//! block is the entry's `.param` array.

use super::{Binding, LocalStore, Lower, StreamRef, PARAMS};
use crate::lower::{Memory, Root, Space, Target};
use crate::ptx::emit::{mem_type, Class, Label, Reg};
use crate::CompileError;
use brook_ir::{
    BinaryOp, Expr, Handle, Kernel, Literal, Local, MathFun, Module, ParamId, ScalarKind, Type,
    UnaryOp,
};
use std::collections::HashMap;

impl<'a> Target<'a> for Lower<'a> {
    type Leaf = Reg;
    type Var = Reg;
    type Error = CompileError;

    fn module(&self) -> &'a Module {
        self.module
    }

    fn kernel(&self) -> &'a Kernel {
        self.kernel
    }

    fn memo(&mut self) -> &mut HashMap<Handle<Expr>, Vec<Reg>> {
        &mut self.memo
    }

    fn index_within(&mut self, h: Handle<Expr>, len: u32) -> bool {
        self.bounds.within(h, len)
    }

    fn unsupported(&self, h: Handle<Expr>, what: String) -> CompileError {
        Lower::unsupported(self, h, what)
    }

    fn induction(&mut self) -> &mut crate::lower::induction::Induction<Reg, Reg> {
        &mut self.induction
    }

    fn literal(&mut self, lit: Literal) -> Reg {
        match lit.kind {
            ScalarKind::Bool => self.pred_const(lit.bits != 0),
            ScalarKind::F32 => self
                .e
                .mov_imm(Class::F32, format!("0f{:08X}", lit.bits as u32)),
            ScalarKind::F64 => self.e.mov_imm(Class::F64, format!("0d{:016X}", lit.bits)),
            ScalarKind::I64 | ScalarKind::U64 => self.e.int_literal(Class::B64, lit.bits),
            k => {
                // Narrow kinds are held extended from their width.
                let bits = 8 * k.size();
                let raw = lit.bits & ((1u64 << bits) - 1);
                let value = if k.is_signed() && raw >> (bits - 1) == 1 {
                    (raw | !((1u64 << bits) - 1)) as u32
                } else {
                    raw as u32
                };
                self.e.int_literal(Class::B32, u64::from(value))
            }
        }
    }

    /// The zero value of `ty`, as leaves.
    fn zeros(&mut self, ty: &Type) -> Vec<Reg> {
        crate::leaves::leaves(self.module, ty)
            .into_iter()
            .map(|leaf| self.zero(leaf.kind))
            .collect()
    }

    fn index_kind(&self) -> ScalarKind {
        self.index.kind()
    }

    fn to_index(&mut self, kind: ScalarKind, v: Reg) -> Reg {
        self.index_of_value(kind, v)
    }

    fn index_constant(&mut self, value: u64) -> Reg {
        self.index_imm(value)
    }

    fn clamp_index(&mut self, i: Reg, extent: Reg) -> Reg {
        self.clamp_to_extent(i, extent)
    }

    fn element_address(&mut self, base: Reg, index: Reg, size: u32) -> Reg {
        Lower::element_address(self, base, index, size)
    }

    /// 32-bit indices (`int`, `uint`) are clamped in 32 bits and widened once by the
    /// multiply-add (64-bit integer arithmetic is several instructions each on the GPU).
    fn array_element(
        &mut self,
        base: Reg,
        kind: ScalarKind,
        i: Reg,
        (len, size): (u32, u32),
        in_range: bool,
    ) -> Reg {
        let last = len.saturating_sub(1);
        match kind {
            ScalarKind::I32 | ScalarKind::U32 if base.class == Class::B32 => {
                // A shared array: 32-bit addresses.
                let at = if in_range {
                    i
                } else {
                    let low = match kind {
                        ScalarKind::I32 => self
                            .e
                            .compute(Class::B32, |r| format!("max.s32 {r}, {i}, 0")),
                        _ => i,
                    };
                    let t = if kind == ScalarKind::I32 {
                        "s32"
                    } else {
                        "u32"
                    };
                    self.e
                        .compute(Class::B32, |r| format!("min.{t} {r}, {low}, {last}"))
                };
                self.e.compute(Class::B32, |r| {
                    format!("mad.lo.u32 {r}, {at}, {size}, {base}")
                })
            }
            ScalarKind::I32 | ScalarKind::U32 if in_range => {
                let sign = if kind == ScalarKind::I32 { "s" } else { "u" };
                self.e.compute(Class::B64, |r| {
                    format!("mad.wide.{sign}32 {r}, {i}, {size}, {base}")
                })
            }
            ScalarKind::I32 => {
                let low = self
                    .e
                    .compute(Class::B32, |r| format!("max.s32 {r}, {i}, 0"));
                let clamped = self
                    .e
                    .compute(Class::B32, |r| format!("min.s32 {r}, {low}, {last}"));
                self.e.compute(Class::B64, |r| {
                    format!("mad.wide.s32 {r}, {clamped}, {size}, {base}")
                })
            }
            ScalarKind::U32 => {
                let clamped = self
                    .e
                    .compute(Class::B32, |r| format!("min.u32 {r}, {i}, {last}"));
                self.e.compute(Class::B64, |r| {
                    format!("mad.wide.u32 {r}, {clamped}, {size}, {base}")
                })
            }
            _ => crate::lower::array_element_by_word(self, base, kind, i, (len, size), in_range),
        }
    }

    fn unary(&mut self, op: UnaryOp, kind: ScalarKind, v: Reg) -> Reg {
        Lower::unary(self, op, kind, v)
    }

    fn binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Reg, b: Reg) -> Reg {
        Lower::binary(self, op, kind, a, b)
    }

    /// `c ? a : b` for registers of one class.
    fn select(&mut self, _kind: ScalarKind, c: Reg, a: Reg, b: Reg) -> Reg {
        if a.class == Class::Pred {
            // (c & a) | (!c & b)
            let x = self
                .e
                .compute(Class::Pred, |r| format!("and.pred {r}, {c}, {a}"));
            let y = self
                .e
                .compute(Class::Pred, |r| format!("and.pred {r}, !{c}, {b}"));
            return self
                .e
                .compute(Class::Pred, |r| format!("or.pred {r}, {x}, {y}"));
        }
        let ty = match a.class {
            Class::B64 => "b64",
            Class::F32 => "f32",
            Class::F64 => "f64",
            _ => "b32",
        };
        self.e
            .compute(a.class, |r| format!("selp.{ty} {r}, {a}, {b}, {c}"))
    }

    fn convert(&mut self, from: ScalarKind, to: ScalarKind, v: Reg) -> Reg {
        Lower::convert(self, from, to, v)
    }

    type Helper = &'static str;

    fn math_helper(&self, fun: MathFun, double: bool) -> Option<&'static str> {
        crate::ptx::helpers::math_helper(fun, double)
    }

    fn call_math_helper(&mut self, helper: &'static str, kind: ScalarKind, lane: &[Reg]) -> Reg {
        Lower::call_helper(self, helper, Class::of(kind), lane)
    }

    fn exact_math(&mut self, fun: MathFun, kind: ScalarKind, args: &[Vec<Reg>]) -> Vec<Reg> {
        Lower::exact_math(self, fun, kind, args)
    }

    fn instance_in_group(&mut self) -> Vec<Reg> {
        let mut lanes = vec![self.e.mov_imm(Class::B32, 0); 4];
        if let Some(g) = self.in_group {
            lanes[0] = self.index_low_word(g);
        }
        lanes
    }

    fn binding(&self, p: ParamId) -> Binding {
        self.bindings[p.0 as usize].clone()
    }

    fn temporary(&mut self, kind: ScalarKind) -> Reg {
        let zero = self.literal(Literal { kind, bits: 0 });
        let var = self.e.reg(Class::of(kind));
        self.e.mov(var, zero);
        var
    }

    fn read_var(&mut self, var: Reg) -> Reg {
        var
    }

    fn position(&mut self) -> Vec<Reg> {
        self.pos.clone()
    }

    fn domain(&self) -> Vec<Reg> {
        self.domain.clone()
    }

    /// Inputs are never written by the kernel (aliased streams are copied first): the
    /// read-only path lets ptxas move these loads ahead of stores.
    fn load_element(&mut self, ty: &Type, addr: Reg) -> Vec<Reg> {
        self.load_value(ty, addr, "global.nc", true)
    }

    fn element_index(&mut self, offset: Reg, at: &[Reg], pitch: &[Reg]) -> Reg {
        Lower::element_index(self, offset, at, pitch)
    }

    fn mul_index(&mut self, a: Reg, b: Reg) -> Reg {
        self.index_op("mul.lo", a, b)
    }

    fn div_index(&mut self, a: Reg, b: Reg) -> Reg {
        self.index_op("div", a, b)
    }

    fn block_u64(&mut self, at: u32) -> Reg {
        self.param_u64(at)
    }

    fn block_index(&mut self, at: u32) -> Reg {
        self.param_index(at)
    }

    fn block_scalar(&mut self, kind: ScalarKind, at: u32) -> Reg {
        if kind == ScalarKind::Bool {
            let byte = self
                .e
                .compute(Class::B32, |r| format!("ld.param.u8 {r}, [{PARAMS}+{at}]"));
            return self
                .e
                .compute(Class::Pred, |r| format!("setp.ne.u32 {r}, {byte}, 0"));
        }
        let ty = mem_type(kind);
        self.e.compute(Class::of(kind), |r| {
            format!("ld.param.{ty} {r}, [{PARAMS}+{at}]")
        })
    }

    /// A register set by [`Lower::set_elements`].
    fn element_variable(&mut self, stream: &StreamRef) -> Reg {
        let addr = self.e.reg(Class::B64);
        self.elements.push((addr, stream.clone()));
        addr
    }

    /// A copy: later stores to the variable must not change this value.
    fn snapshot_var(&mut self, var: Reg) -> Reg {
        let copy = self.e.reg(var.class);
        self.e.mov(copy, var);
        copy
    }

    fn write_var(&mut self, var: Reg, value: Reg) {
        self.e.mov(var, value);
    }

    fn local(&self, l: Handle<Local>) -> Root<Reg, Reg> {
        match &self.locals[l.index()] {
            LocalStore::Vars(regs) => Root::Vars(regs.clone()),
            LocalStore::Memory { addr, shared, .. } => Root::Memory {
                addr: *addr,
                offset: 0,
                space: if *shared { Space::Shared } else { Space::Local },
            },
        }
    }

    /// A whole stream element, or a whole element of a local array (local memory is aligned
    /// to 16 bytes), with vector loads where they fit.
    fn load_memory(&mut self, at: &Memory<Reg>) -> Vec<Reg> {
        let space = state_space(at.space);
        if at.whole || at.element {
            return self.load_value(&at.ty, at.addr, space, true);
        }
        at.layout
            .iter()
            .map(|leaf| self.load_scalar(leaf.kind, at.addr, leaf.offset, space))
            .collect()
    }

    fn store_memory(&mut self, at: &Memory<Reg>, values: &[Reg]) {
        let space = state_space(at.space);
        if at.whole || at.element {
            self.store_value(&at.ty, values, at.addr, space, true);
        } else {
            self.store_leaves(&at.layout, values, at.addr, space);
        }
    }

    /// The labels of the rejecting arm and of the end.
    type If = (Label, Label);
    type Loop = PtxLoop;
    /// The label after the guarded code.
    type Guard = Label;

    fn begin_if(&mut self, cond: Reg) -> (Label, Label) {
        let (otherwise, merge) = (self.e.label(), self.e.label());
        self.e.bra_unless(cond, otherwise);
        (otherwise, merge)
    }

    fn begin_else(&mut self, &(otherwise, merge): &(Label, Label)) {
        self.e.bra(merge);
        self.e.at(otherwise);
    }

    /// An `if` without `begin_else` has an empty rejecting arm: its label is the end's.
    fn end_if(&mut self, (otherwise, merge): (Label, Label)) {
        if !self.e.is_placed(otherwise) {
            self.e.at(otherwise);
        }
        self.e.at(merge);
    }

    fn begin_loop(&mut self) -> PtxLoop {
        let frame = PtxLoop {
            header: self.e.label(),
            next: self.e.label(),
            exit: self.e.label(),
        };
        self.e.at(frame.header);
        frame
    }

    fn begin_continuing(&mut self, frame: PtxLoop) {
        self.e.at(frame.next);
    }

    fn end_loop(&mut self, frame: PtxLoop) {
        self.e.bra(frame.header);
        self.e.at(frame.exit);
    }

    fn jump_break(&mut self, frame: PtxLoop) {
        self.e.bra(frame.exit);
    }

    fn jump_continue(&mut self, frame: PtxLoop) {
        self.e.bra(frame.next);
    }

    fn jump_return(&mut self) {
        let ret = self.ret;
        self.e.bra(ret);
    }

    /// A barrier right after another one adds nothing: it is left out.
    fn barrier(&mut self) {
        if !self.e.last_line_is("bar.sync 0") {
            self.e.op("bar.sync 0");
        }
    }

    /// PTX keeps dead code (ptxas removes it).
    fn is_unreachable(&self) -> bool {
        false
    }

    fn begin_guard(&mut self, flag: Reg) -> Label {
        let skip = self.e.label();
        self.e.bra_unless(flag, skip);
        skip
    }

    fn end_guard(&mut self, skip: Label) {
        self.e.at(skip);
    }

    fn collective(&mut self, c: &brook_ir::Collective, in_loop: bool) -> Result<(), CompileError> {
        self.lower_collective(c, in_loop)
    }

    fn collectives(
        &mut self,
        run: &[&brook_ir::Collective],
        in_loop: bool,
    ) -> Result<(), CompileError> {
        self.lower_collectives(run, in_loop)
    }
}

/// A loop's labels.
#[derive(Clone, Copy, Debug)]
pub struct PtxLoop {
    header: Label,
    /// The continuing part (where `continue` goes).
    next: Label,
    exit: Label,
}

/// The PTX state space of a place's memory: stream elements are global, shared locals
/// shared; local arrays are addressed generically (converted with `cvta`).
fn state_space(space: Space) -> &'static str {
    match space {
        Space::Stream => "global",
        Space::Local => "",
        Space::Shared => "shared",
    }
}
