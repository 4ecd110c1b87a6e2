//! The math library ([`crate::mathlib`]) written as PTX: one `.func` per function and type.
//!
//! [`PtxArith`] implements [`Arith`] by appending one instruction per operation to a
//! function body; each value gets a fresh virtual register (ptxas allocates the real ones).

use crate::mathlib::{consts::TWO_OVER_PI_WORDS, Arith, Cmp, Fun};
use std::fmt::{self, Write};

/// The name of the module-level copy of [`TWO_OVER_PI_WORDS`].
const TABLE: &str = "brook_two_over_pi";

#[derive(Clone, Copy)]
pub struct FReg(u32);
#[derive(Clone, Copy)]
pub struct IReg(u32);
#[derive(Clone, Copy)]
pub struct PReg(u32);

impl fmt::Display for FReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%fd{}", self.0)
    }
}
impl fmt::Display for IReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%rd{}", self.0)
    }
}
impl fmt::Display for PReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%p{}", self.0)
    }
}

/// A function body being written.
#[derive(Default)]
pub struct PtxArith {
    body: String,
    floats: u32,
    ints: u32,
    preds: u32,
    words: u32,
}

impl PtxArith {
    fn line(&mut self, text: fmt::Arguments<'_>) {
        self.body.push('\t');
        self.body.write_fmt(text).expect("writing to a String");
        self.body.push_str(";\n");
    }

    fn float(&mut self) -> FReg {
        self.floats += 1;
        FReg(self.floats - 1)
    }

    fn integer(&mut self) -> IReg {
        self.ints += 1;
        IReg(self.ints - 1)
    }

    fn pred(&mut self) -> PReg {
        self.preds += 1;
        PReg(self.preds - 1)
    }

    /// A 32-bit register (shift amounts, `clz` results).
    fn word(&mut self) -> String {
        self.words += 1;
        format!("%r{}", self.words - 1)
    }

    fn float_op(&mut self, op: &str, args: &[FReg]) -> FReg {
        let d = self.float();
        let list = join(args);
        self.line(format_args!("{op} {d}, {list}"));
        d
    }

    fn int_op(&mut self, op: &str, a: IReg, b: IReg) -> IReg {
        let d = self.integer();
        self.line(format_args!("{op} {d}, {a}, {b}"));
        d
    }

    fn shift(&mut self, op: &str, a: IReg, by: IReg) -> IReg {
        let w = self.word();
        self.line(format_args!("cvt.u32.u64 {w}, {by}"));
        let d = self.integer();
        self.line(format_args!("{op} {d}, {a}, {w}"));
        d
    }
}

fn join(args: &[FReg]) -> String {
    args.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn cmp_name(op: Cmp) -> &'static str {
    match op {
        Cmp::Lt => "lt",
        Cmp::Le => "le",
        Cmp::Gt => "gt",
        Cmp::Ge => "ge",
        Cmp::Eq => "eq",
    }
}

impl Arith for PtxArith {
    type F = FReg;
    type I = IReg;
    type P = PReg;

    fn num(&mut self, value: f64) -> FReg {
        let d = self.float();
        self.line(format_args!("mov.f64 {d}, 0d{:016X}", value.to_bits()));
        d
    }
    fn int(&mut self, value: i64) -> IReg {
        let d = self.integer();
        self.line(format_args!("mov.b64 {d}, 0x{:X}", value as u64));
        d
    }
    fn add(&mut self, a: FReg, b: FReg) -> FReg {
        self.float_op("add.rn.f64", &[a, b])
    }
    fn sub(&mut self, a: FReg, b: FReg) -> FReg {
        self.float_op("sub.rn.f64", &[a, b])
    }
    fn mul(&mut self, a: FReg, b: FReg) -> FReg {
        self.float_op("mul.rn.f64", &[a, b])
    }
    fn div(&mut self, a: FReg, b: FReg) -> FReg {
        self.float_op("div.rn.f64", &[a, b])
    }
    fn fma(&mut self, a: FReg, b: FReg, c: FReg) -> FReg {
        self.float_op("fma.rn.f64", &[a, b, c])
    }
    fn sqrt(&mut self, a: FReg) -> FReg {
        self.float_op("sqrt.rn.f64", &[a])
    }
    fn neg(&mut self, a: FReg) -> FReg {
        self.float_op("neg.f64", &[a])
    }
    fn abs(&mut self, a: FReg) -> FReg {
        self.float_op("abs.f64", &[a])
    }
    fn rint(&mut self, a: FReg) -> FReg {
        self.float_op("cvt.rni.f64.f64", &[a])
    }
    fn cmp(&mut self, op: Cmp, a: FReg, b: FReg) -> PReg {
        let d = self.pred();
        self.line(format_args!("setp.{}.f64 {d}, {a}, {b}", cmp_name(op)));
        d
    }
    fn is_nan(&mut self, a: FReg) -> PReg {
        let d = self.pred();
        self.line(format_args!("setp.nan.f64 {d}, {a}, {a}"));
        d
    }
    fn and(&mut self, a: PReg, b: PReg) -> PReg {
        let d = self.pred();
        self.line(format_args!("and.pred {d}, {a}, {b}"));
        d
    }
    fn or(&mut self, a: PReg, b: PReg) -> PReg {
        let d = self.pred();
        self.line(format_args!("or.pred {d}, {a}, {b}"));
        d
    }
    fn not(&mut self, a: PReg) -> PReg {
        let d = self.pred();
        self.line(format_args!("not.pred {d}, {a}"));
        d
    }
    fn select(&mut self, p: PReg, a: FReg, b: FReg) -> FReg {
        let d = self.float();
        self.line(format_args!("selp.f64 {d}, {a}, {b}, {p}"));
        d
    }
    fn select_int(&mut self, p: PReg, a: IReg, b: IReg) -> IReg {
        let d = self.integer();
        self.line(format_args!("selp.b64 {d}, {a}, {b}, {p}"));
        d
    }
    fn to_bits(&mut self, a: FReg) -> IReg {
        let d = self.integer();
        self.line(format_args!("mov.b64 {d}, {a}"));
        d
    }
    fn bits_to_float(&mut self, a: IReg) -> FReg {
        let d = self.float();
        self.line(format_args!("mov.b64 {d}, {a}"));
        d
    }
    fn iadd(&mut self, a: IReg, b: IReg) -> IReg {
        self.int_op("add.s64", a, b)
    }
    fn isub(&mut self, a: IReg, b: IReg) -> IReg {
        self.int_op("sub.s64", a, b)
    }
    fn imul(&mut self, a: IReg, b: IReg) -> IReg {
        self.int_op("mul.lo.s64", a, b)
    }
    fn umulhi(&mut self, a: IReg, b: IReg) -> IReg {
        self.int_op("mul.hi.u64", a, b)
    }
    fn urem(&mut self, a: IReg, b: IReg) -> IReg {
        self.int_op("rem.u64", a, b)
    }
    fn iand(&mut self, a: IReg, b: IReg) -> IReg {
        self.int_op("and.b64", a, b)
    }
    fn ior(&mut self, a: IReg, b: IReg) -> IReg {
        self.int_op("or.b64", a, b)
    }
    fn shl(&mut self, a: IReg, by: IReg) -> IReg {
        self.shift("shl.b64", a, by)
    }
    fn lshr(&mut self, a: IReg, by: IReg) -> IReg {
        self.shift("shr.u64", a, by)
    }
    fn ashr(&mut self, a: IReg, by: IReg) -> IReg {
        self.shift("shr.s64", a, by)
    }
    fn clz(&mut self, a: IReg) -> IReg {
        let w = self.word();
        self.line(format_args!("clz.b64 {w}, {a}"));
        let d = self.integer();
        self.line(format_args!("cvt.u64.u32 {d}, {w}"));
        d
    }
    fn icmp(&mut self, op: Cmp, a: IReg, b: IReg) -> PReg {
        let d = self.pred();
        self.line(format_args!("setp.{}.s64 {d}, {a}, {b}", cmp_name(op)));
        d
    }
    fn ult(&mut self, a: IReg, b: IReg) -> PReg {
        let d = self.pred();
        self.line(format_args!("setp.lt.u64 {d}, {a}, {b}"));
        d
    }
    fn int_to_float(&mut self, a: IReg) -> FReg {
        let d = self.float();
        self.line(format_args!("cvt.rn.f64.s64 {d}, {a}"));
        d
    }
    fn uint_to_float(&mut self, a: IReg) -> FReg {
        let d = self.float();
        self.line(format_args!("cvt.rn.f64.u64 {d}, {a}"));
        d
    }
    fn two_over_pi_word(&mut self, index: IReg) -> IReg {
        let base = self.integer();
        self.line(format_args!("mov.u64 {base}, {TABLE}"));
        let three = self.int(3);
        let offset = self.shl(index, three);
        let at = self.iadd(base, offset);
        let d = self.integer();
        self.line(format_args!("ld.global.nc.u64 {d}, [{at}]"));
        d
    }
}

/// The `.func` computing `fun` in `f64`, or in `f32` (through `f64`, rounded once at the end).
pub fn function_text(name: &str, fun: Fun, double: bool) -> String {
    let mut a = PtxArith::default();
    let ty = if double { "f64" } else { "f32" };
    let params: Vec<String> = (0..fun.arity())
        .map(|i| format!(".reg .{ty} %x{i}"))
        .collect();
    let mut args = Vec::new();
    for i in 0..fun.arity() {
        let r = a.float();
        if double {
            a.line(format_args!("mov.f64 {r}, %x{i}"));
        } else {
            a.line(format_args!("cvt.f64.f32 {r}, %x{i}"));
        }
        args.push(r);
    }
    let result = fun.build(&mut a, &args);
    if double {
        a.line(format_args!("mov.f64 %res, {result}"));
    } else {
        a.line(format_args!("cvt.rn.f32.f64 %res, {result}"));
    }
    format!(
        "\n.func (.reg .{ty} %res) {name}({})\n{{\n\t.reg .f64 %fd<{}>;\n\t.reg .b64 %rd<{}>;\n\t.reg .pred %p<{}>;\n\t.reg .b32 %r<{}>;\n{}\tret;\n}}\n",
        params.join(", "),
        a.floats.max(1),
        a.ints.max(1),
        a.preds.max(1),
        a.words.max(1),
        a.body
    )
}

/// The module-level 2/pi table the trigonometric functions read.
pub fn table_text() -> String {
    let words = TWO_OVER_PI_WORDS
        .iter()
        .map(|w| format!("0x{w:016X}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "\n.global .align 8 .u64 {TABLE}[{}] = {{{words}}};\n",
        TWO_OVER_PI_WORDS.len()
    )
}
