//! Scalar operators and conversions, following `brook_ir::launch`'s arithmetic rules exactly:
//! integers wrap, integer division and remainder by zero give 0 (never a trap), shift counts
//! are taken modulo the width, float operations are single IEEE operations in round-to-nearest
//! (`.rn`, which also forbids contraction into `fma`), and float-to-integer conversions
//! truncate and saturate with NaN giving 0.
//!
//! `char` and `short` kinds live in 32-bit registers, sign- or zero-extended from their
//! width; every operation that can leave that range is followed by [`Lower::normalize`].

use super::Lower;
use crate::ptx::emit::{op_type, Class, Reg};
use brook_ir::{BinaryOp, ScalarKind, UnaryOp};

/// The comparison suffix of `op` (`ne` on floats is unordered: NaN != x holds).
fn compare_suffix(op: BinaryOp, kind: ScalarKind) -> &'static str {
    match op {
        BinaryOp::Eq => "eq",
        BinaryOp::Ne if kind.is_float() => "neu",
        BinaryOp::Ne => "ne",
        BinaryOp::Lt => "lt",
        BinaryOp::Le => "le",
        BinaryOp::Gt => "gt",
        _ => "ge",
    }
}

impl Lower<'_> {
    /// Brings a narrow integer held in 32 bits back to its kind's range.
    pub fn normalize(&mut self, kind: ScalarKind, v: Reg) -> Reg {
        let bits = 8 * kind.size();
        match kind {
            ScalarKind::I8 | ScalarKind::I16 => self
                .e
                .compute(Class::B32, |r| format!("bfe.s32 {r}, {v}, 0, {bits}")),
            ScalarKind::U8 | ScalarKind::U16 => {
                let mask = (1u32 << bits) - 1;
                self.e
                    .compute(Class::B32, |r| format!("and.b32 {r}, {v}, {mask}"))
            }
            _ => v,
        }
    }

    /// 0 or 1 in a 32-bit register from a predicate.
    pub fn pred_to_u32(&mut self, p: Reg) -> Reg {
        self.e
            .compute(Class::B32, |r| format!("selp.u32 {r}, 1, 0, {p}"))
    }

    /// A predicate: `v != 0`.
    pub fn nonzero(&mut self, kind: ScalarKind, v: Reg) -> Reg {
        match kind {
            ScalarKind::Bool => v,
            k if k.is_float() => {
                let t = op_type(k);
                let zero = self.zero(k);
                self.e
                    .compute(Class::Pred, |r| format!("setp.neu.{t} {r}, {v}, {zero}"))
            }
            k => {
                let t = op_type(k);
                self.e
                    .compute(Class::Pred, |r| format!("setp.ne.{t} {r}, {v}, 0"))
            }
        }
    }

    pub fn unary(&mut self, op: UnaryOp, kind: ScalarKind, v: Reg) -> Reg {
        let t = op_type(kind);
        match (op, kind) {
            (UnaryOp::Neg, ScalarKind::Bool) => v,
            (UnaryOp::Neg, k) if k.is_float() => {
                if let Some(bits) = self.e.float_bits(v) {
                    let sign = if k == ScalarKind::F64 {
                        1 << 63
                    } else {
                        1 << 31
                    };
                    return self.float_immediate(k, bits ^ sign);
                }
                self.e.compute(v.class, |r| format!("neg.{t} {r}, {v}"))
            }
            (UnaryOp::Neg, k) => {
                // Two's-complement negation: PTX's `neg` takes only signed types, and the
                // signed form of the register's width gives the same bits for unsigned kinds.
                let signed = if v.class == Class::B64 { "s64" } else { "s32" };
                let n = self
                    .e
                    .compute(v.class, |r| format!("neg.{signed} {r}, {v}"));
                self.normalize(k, n)
            }
            (UnaryOp::Not, k) => {
                let nz = self.nonzero(k, v);
                self.e
                    .compute(Class::Pred, |r| format!("not.pred {r}, {nz}"))
            }
            (UnaryOp::BitNot, ScalarKind::Bool) => self.pred_const(true),
            (UnaryOp::BitNot, k) => {
                let bits = if v.class == Class::B64 { "b64" } else { "b32" };
                let n = self.e.compute(v.class, |r| format!("not.{bits} {r}, {v}"));
                self.normalize(k, n)
            }
        }
    }

    pub fn binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Reg, b: Reg) -> Reg {
        if kind.is_float() {
            return self.float_binary(op, kind, a, b);
        }
        if kind == ScalarKind::Bool {
            return self.bool_binary(op, a, b);
        }
        if op.is_logic() {
            let (x, y) = (self.nonzero(kind, a), self.nonzero(kind, b));
            return self.bool_binary(op, x, y);
        }
        self.int_binary(op, kind, a, b)
    }

    fn float_binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Reg, b: Reg) -> Reg {
        let t = op_type(kind);
        let arith = match op {
            BinaryOp::Add => "add.rn",
            BinaryOp::Sub => "sub.rn",
            BinaryOp::Mul => "mul.rn",
            BinaryOp::Div => "div.rn",
            BinaryOp::Rem => return self.fmod(kind, a, b),
            op if op.is_comparison() => {
                let cc = compare_suffix(op, kind);
                return self
                    .e
                    .compute(Class::Pred, |r| format!("setp.{cc}.{t} {r}, {a}, {b}"));
            }
            // Bitwise and logical operators never reach floats (the validator checks).
            _ => return a,
        };
        if let (Some(x), Some(y)) = (self.e.float_bits(a), self.e.float_bits(b)) {
            return self.fold(op, kind, x, y);
        }
        self.e
            .compute(a.class, |r| format!("{arith}.{t} {r}, {a}, {b}"))
    }

    /// `x op y` on two immediates, computed here with IEEE arithmetic (see
    /// [`crate::ptx::emit::Emitter::float_bits`]).
    fn fold(&mut self, op: BinaryOp, kind: ScalarKind, x: u64, y: u64) -> Reg {
        if kind == ScalarKind::F64 {
            let (a, b) = (f64::from_bits(x), f64::from_bits(y));
            let v = match op {
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a * b,
                _ => a / b,
            };
            self.float_immediate(kind, v.to_bits())
        } else {
            let (a, b) = (f32::from_bits(x as u32), f32::from_bits(y as u32));
            let v = match op {
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a * b,
                _ => a / b,
            };
            self.float_immediate(kind, u64::from(v.to_bits()))
        }
    }

    /// A register holding the float of these bits.
    fn float_immediate(&mut self, kind: ScalarKind, bits: u64) -> Reg {
        if kind == ScalarKind::F64 {
            self.e.mov_imm(Class::F64, format!("0d{bits:016X}"))
        } else {
            self.e.mov_imm(Class::F32, format!("0f{:08X}", bits as u32))
        }
    }

    /// Operators on bools: logic directly on predicates, the rest on 0/1 integers.
    fn bool_binary(&mut self, op: BinaryOp, a: Reg, b: Reg) -> Reg {
        let logic = match op {
            BinaryOp::LogicAnd | BinaryOp::BitAnd => Some("and"),
            BinaryOp::LogicOr | BinaryOp::BitOr => Some("or"),
            BinaryOp::BitXor | BinaryOp::Ne => Some("xor"),
            _ => None,
        };
        if let Some(l) = logic {
            return self
                .e
                .compute(Class::Pred, |r| format!("{l}.pred {r}, {a}, {b}"));
        }
        let (x, y) = (self.pred_to_u32(a), self.pred_to_u32(b));
        let v = self.int_binary(op, ScalarKind::U32, x, y);
        if v.class == Class::Pred {
            v
        } else {
            self.nonzero(ScalarKind::U32, v)
        }
    }

    fn int_binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Reg, b: Reg) -> Reg {
        let t = op_type(kind);
        let class = a.class;
        let bits = if class == Class::B64 { "b64" } else { "b32" };
        let plain =
            |l: &mut Self, text: String| l.e.compute(class, |r| format!("{text} {r}, {a}, {b}"));
        match op {
            BinaryOp::Add => {
                let v = plain(self, format!("add.{t}"));
                self.normalize(kind, v)
            }
            BinaryOp::Sub => {
                let v = plain(self, format!("sub.{t}"));
                self.normalize(kind, v)
            }
            BinaryOp::Mul => {
                let v = plain(self, format!("mul.lo.{t}"));
                self.normalize(kind, v)
            }
            BinaryOp::Div | BinaryOp::Rem => self.int_divide(op, kind, a, b),
            BinaryOp::Shl | BinaryOp::Shr => self.shift(op, kind, a, b),
            BinaryOp::BitAnd => plain(self, format!("and.{bits}")),
            BinaryOp::BitOr => plain(self, format!("or.{bits}")),
            BinaryOp::BitXor => {
                let v = plain(self, format!("xor.{bits}"));
                self.normalize(kind, v)
            }
            op => {
                let cc = compare_suffix(op, kind);
                self.e
                    .compute(Class::Pred, |r| format!("setp.{cc}.{t} {r}, {a}, {b}"))
            }
        }
    }

    /// Shifts with the count taken modulo the kind's width.
    fn shift(&mut self, op: BinaryOp, kind: ScalarKind, a: Reg, count: Reg) -> Reg {
        let width = 8 * kind.size();
        let count32 = if count.class == Class::B64 {
            self.e
                .compute(Class::B32, |r| format!("cvt.u32.u64 {r}, {count}"))
        } else {
            count
        };
        let masked = self.e.compute(Class::B32, |r| {
            format!("and.b32 {r}, {count32}, {}", width - 1)
        });
        let size = if a.class == Class::B64 { 64 } else { 32 };
        let text = match op {
            BinaryOp::Shl => format!("shl.b{size}"),
            _ if kind.is_signed() => format!("shr.s{size}"),
            _ => format!("shr.u{size}"),
        };
        let v = self
            .e
            .compute(a.class, |r| format!("{text} {r}, {a}, {masked}"));
        self.normalize(kind, v)
    }

    /// `a / 2^k` or `a % 2^k`, rounding toward zero as `div`/`rem` do: a negative signed
    /// dividend is first raised by `2^k - 1`.
    fn divide_by_power_of_two(&mut self, op: BinaryOp, kind: ScalarKind, a: Reg, k: u32) -> Reg {
        let class = a.class;
        let w = if class == Class::B64 { 64 } else { 32 };
        let emit = |e: &mut crate::ptx::emit::Emitter, text: String| {
            e.compute(class, |r| text.replace("{r}", &r.to_string()))
        };
        if !kind.is_signed() {
            return match op {
                BinaryOp::Div => emit(&mut self.e, format!("shr.u{w} {{r}}, {a}, {k}")),
                _ => emit(
                    &mut self.e,
                    format!("and.b{w} {{r}}, {a}, {}", (1u64 << k) - 1),
                ),
            };
        }
        let quotient = if k == 0 {
            a
        } else {
            let sign = emit(&mut self.e, format!("shr.s{w} {{r}}, {a}, {}", w - 1));
            let bias = emit(&mut self.e, format!("shr.u{w} {{r}}, {sign}, {}", w - k));
            let raised = emit(&mut self.e, format!("add.s{w} {{r}}, {a}, {bias}"));
            emit(&mut self.e, format!("shr.s{w} {{r}}, {raised}, {k}"))
        };
        if op == BinaryOp::Div {
            return quotient;
        }
        let whole = emit(&mut self.e, format!("shl.b{w} {{r}}, {quotient}, {k}"));
        emit(&mut self.e, format!("sub.s{w} {{r}}, {a}, {whole}"))
    }

    /// Division and remainder that never trap: a zero divisor gives 0, and `MIN / -1` wraps
    /// to `MIN` (remainder 0).
    /// A constant divisor other than 0 and -1 needs no guard, and as an immediate ptxas
    /// turns the division into a multiply and shifts (a power of two takes shifts here:
    /// ptxas divides a signed value by one the slow way).
    fn int_divide(&mut self, op: BinaryOp, kind: ScalarKind, a: Reg, b: Reg) -> Reg {
        let t = op_type(kind);
        let class = a.class;
        let bits = if class == Class::B64 { "b64" } else { "b32" };
        let name = if op == BinaryOp::Div { "div" } else { "rem" };
        let all_ones = if class == Class::B64 {
            u64::MAX
        } else {
            u64::from(u32::MAX)
        };
        if let Some(divisor) = self.e.int_bits(b) {
            let positive = !kind.is_signed() || divisor < all_ones / 2;
            if divisor.is_power_of_two() && positive {
                let v = self.divide_by_power_of_two(op, kind, a, divisor.trailing_zeros());
                return self.normalize(kind, v);
            }
            let trap_free = divisor != 0 && !(kind.is_signed() && divisor == all_ones);
            if trap_free {
                // As an immediate: ptxas divides by a constant register the slow way.
                let imm = match (kind.is_signed(), class) {
                    (true, Class::B64) => (divisor as i64).to_string(),
                    (true, _) => (divisor as u32 as i32).to_string(),
                    _ => divisor.to_string(),
                };
                let v = self
                    .e
                    .compute(class, |r| format!("{name}.{t} {r}, {a}, {imm}"));
                return self.normalize(kind, v);
            }
        }
        let zero_divisor = self
            .e
            .compute(Class::Pred, |r| format!("setp.eq.{t} {r}, {b}, 0"));
        let result = if kind.is_signed() {
            let minus_one = self
                .e
                .compute(Class::Pred, |r| format!("setp.eq.{t} {r}, {b}, -1"));
            let unsafe_divisor = self.e.compute(Class::Pred, |r| {
                format!("or.pred {r}, {zero_divisor}, {minus_one}")
            });
            let safe = self.e.compute(class, |r| {
                format!("selp.{bits} {r}, 1, {b}, {unsafe_divisor}")
            });
            let plain = self
                .e
                .compute(class, |r| format!("{name}.{t} {r}, {a}, {safe}"));
            let by_minus_one = if op == BinaryOp::Div {
                self.e.compute(class, |r| format!("neg.{t} {r}, {a}"))
            } else {
                self.e.mov_imm(class, 0)
            };
            self.e.compute(class, |r| {
                format!("selp.{bits} {r}, {by_minus_one}, {plain}, {minus_one}")
            })
        } else {
            let safe = self.e.compute(class, |r| {
                format!("selp.{bits} {r}, 1, {b}, {zero_divisor}")
            });
            self.e
                .compute(class, |r| format!("{name}.{t} {r}, {a}, {safe}"))
        };
        let result = self.e.compute(class, |r| {
            format!("selp.{bits} {r}, 0, {result}, {zero_divisor}")
        });
        self.normalize(kind, result)
    }

    /// Component conversion from `from` to `to` (see `brook_ir::ExprKind::Convert`).
    pub fn convert(&mut self, from: ScalarKind, to: ScalarKind, v: Reg) -> Reg {
        if from == to {
            return v;
        }
        if to == ScalarKind::Bool {
            return self.nonzero(from, v);
        }
        if from == ScalarKind::Bool {
            return self.bool_to(to, v);
        }
        if to.is_float() {
            if let Some(bits) = self.fold_to_float(from, to, v) {
                return self.float_immediate(to, bits);
            }
        }
        match (from.is_float(), to.is_float()) {
            (true, true) if to == ScalarKind::F64 => self
                .e
                .compute(Class::F64, |r| format!("cvt.f64.f32 {r}, {v}")),
            (true, true) => self
                .e
                .compute(Class::F32, |r| format!("cvt.rn.f32.f64 {r}, {v}")),
            (true, false) => self.float_to_int(from, to, v),
            (false, true) if from == ScalarKind::U32 => self.u32_to_float(to, v),
            (false, true) => {
                let (ft, tt) = (op_type(from), op_type(to));
                self.e
                    .compute(Class::of(to), |r| format!("cvt.rn.{tt}.{ft} {r}, {v}"))
            }
            (false, false) => self.int_to_int(from, to, v),
        }
    }

    /// `true`/`false` as 1/0 of `to`.
    fn bool_to(&mut self, to: ScalarKind, v: Reg) -> Reg {
        if to.is_float() {
            // Literal registers, not immediates: see `crate::ptx::literals`.
            let (one, zero) = if to == ScalarKind::F64 {
                (1f64.to_bits(), 0)
            } else {
                (u64::from(1f32.to_bits()), 0)
            };
            let (one, zero) = (
                self.float_immediate(to, one),
                self.float_immediate(to, zero),
            );
            let t = op_type(to);
            return self
                .e
                .compute(one.class, |r| format!("selp.{t} {r}, {one}, {zero}, {v}"));
        }
        let t = if Class::of(to) == Class::B64 {
            "u64"
        } else {
            "u32"
        };
        self.e
            .compute(Class::of(to), |r| format!("selp.{t} {r}, 1, 0, {v}"))
    }

    /// The bits of the conversion of immediate `v` to the float kind `to`, computed here
    /// (round to nearest even, as `cvt.rn`), or `None` when `v` is not an immediate or is a
    /// NaN (whose payload the lowering leaves to the instruction).
    fn fold_to_float(&self, from: ScalarKind, to: ScalarKind, v: Reg) -> Option<u64> {
        let single = to == ScalarKind::F32;
        let wide = |x: f64| {
            if single {
                u64::from((x as f32).to_bits())
            } else {
                x.to_bits()
            }
        };
        if from.is_float() {
            let bits = self.e.float_bits(v)?;
            let x = if from == ScalarKind::F32 {
                f64::from(f32::from_bits(bits as u32))
            } else {
                f64::from_bits(bits)
            };
            return (!x.is_nan()).then(|| wide(x));
        }
        let bits = self.e.int_bits(v)?;
        // One rounding, straight from the integer (never through f64 for f32).
        Some(match (from, single) {
            (ScalarKind::I64, true) => u64::from((bits as i64 as f32).to_bits()),
            (ScalarKind::U64, true) => u64::from((bits as f32).to_bits()),
            (ScalarKind::I64, false) => (bits as i64 as f64).to_bits(),
            (ScalarKind::U64, false) => (bits as f64).to_bits(),
            (k, true) if k.is_signed() => u64::from((bits as u32 as i32 as f32).to_bits()),
            (_, true) => u64::from((bits as u32 as f32).to_bits()),
            (k, false) if k.is_signed() => f64::from(bits as u32 as i32).to_bits(),
            (_, false) => f64::from(bits as u32).to_bits(),
        })
    }

    /// A `uint` as a float, without `cvt.rn.f*.u32`: ptxas (CUDA 13, sm_90) turns the sign
    /// extension that keeps a `short` or `char` in its register (`bfe.s32`) followed by
    /// `cvt.rn.f64.u32` into one signed conversion from 16 bits, so `(double)(uint)s` came out
    /// negative for a negative `short` `s` (found by brook-fuzz). The value is converted as
    /// signed (exact in `double`), 2^32 is added when it is negative, and a `float` is
    /// rounded once from the exact `double`.
    fn u32_to_float(&mut self, to: ScalarKind, v: Reg) -> Reg {
        let signed = self
            .e
            .compute(Class::F64, |r| format!("cvt.rn.f64.s32 {r}, {v}"));
        let negative = self
            .e
            .compute(Class::Pred, |r| format!("setp.lt.s32 {r}, {v}, 0"));
        let two_to_32 = self.float_immediate(ScalarKind::F64, 4_294_967_296f64.to_bits());
        let wrapped = self.e.compute(Class::F64, |r| {
            format!("add.rn.f64 {r}, {signed}, {two_to_32}")
        });
        let exact = self.e.compute(Class::F64, |r| {
            format!("selp.f64 {r}, {wrapped}, {signed}, {negative}")
        });
        if to == ScalarKind::F64 {
            return exact;
        }
        self.e
            .compute(Class::F32, |r| format!("cvt.rn.f32.f64 {r}, {exact}"))
    }

    fn int_to_int(&mut self, from: ScalarKind, to: ScalarKind, v: Reg) -> Reg {
        let (a, b) = (Class::of(from), Class::of(to));
        let v = match (a, b) {
            (Class::B32, Class::B64) => {
                let ft = op_type(from);
                let tt = if from.is_signed() { "s64" } else { "u64" };
                self.e
                    .compute(Class::B64, |r| format!("cvt.{tt}.{ft} {r}, {v}"))
            }
            (Class::B64, Class::B32) => self
                .e
                .compute(Class::B32, |r| format!("cvt.u32.u64 {r}, {v}")),
            _ => v,
        };
        self.normalize(to, v)
    }

    /// Truncating, saturating float-to-integer conversion (NaN gives 0).
    fn float_to_int(&mut self, from: ScalarKind, to: ScalarKind, v: Reg) -> Reg {
        let ft = op_type(from);
        let converted = self.float_to_int_raw(from, to, v);
        // `cvt` gives 0x80000000 for a NaN on some paths: make it 0 explicitly.
        let nan = self
            .e
            .compute(Class::Pred, |r| format!("setp.nan.{ft} {r}, {v}, {v}"));
        let bits = if converted.class == Class::B64 {
            "b64"
        } else {
            "b32"
        };
        self.e.compute(converted.class, |r| {
            format!("selp.{bits} {r}, 0, {converted}, {nan}")
        })
    }

    fn float_to_int_raw(&mut self, from: ScalarKind, to: ScalarKind, v: Reg) -> Reg {
        let ft = op_type(from);
        match to {
            ScalarKind::I64 | ScalarKind::U64 | ScalarKind::I32 | ScalarKind::U32 => {
                let tt = op_type(to);
                self.e
                    .compute(Class::of(to), |r| format!("cvt.rzi.{tt}.{ft} {r}, {v}"))
            }
            _ => {
                let (low, high) = match to {
                    ScalarKind::I8 => (-128, 127),
                    ScalarKind::I16 => (-32768, 32767),
                    ScalarKind::U8 => (0, 255),
                    _ => (0, 65535),
                };
                let wide = self
                    .e
                    .compute(Class::B32, |r| format!("cvt.rzi.s32.{ft} {r}, {v}"));
                let clamped = self
                    .e
                    .compute(Class::B32, |r| format!("max.s32 {r}, {wide}, {low}"));
                self.e
                    .compute(Class::B32, |r| format!("min.s32 {r}, {clamped}, {high}"))
            }
        }
    }
}
