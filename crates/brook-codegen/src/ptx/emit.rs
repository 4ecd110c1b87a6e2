//! PTX text under construction: virtual registers, labels and instructions.
//!
//! PTX has as many virtual registers as a function declares; `ptxas` allocates the real ones.
//! So every value gets fresh registers, a variable is a register that `mov`s overwrite, and
//! the declarations are written once the body is known.

use brook_ir::ScalarKind;
use std::fmt::{self, Write};

/// A register class: what `.reg` type declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    Pred,
    /// 32-bit integers; `char`, `short` and their unsigned kinds too, kept sign- or
    /// zero-extended from their width.
    B32,
    B64,
    F32,
    F64,
}

const CLASSES: [Class; 5] = [Class::Pred, Class::B32, Class::B64, Class::F32, Class::F64];

impl Class {
    fn index(self) -> usize {
        self as usize
    }

    fn prefix(self) -> &'static str {
        match self {
            Class::Pred => "%p",
            Class::B32 => "%r",
            Class::B64 => "%rd",
            Class::F32 => "%f",
            Class::F64 => "%fd",
        }
    }

    fn decl(self) -> &'static str {
        match self {
            Class::Pred => ".pred",
            Class::B32 => ".b32",
            Class::B64 => ".b64",
            Class::F32 => ".f32",
            Class::F64 => ".f64",
        }
    }

    /// The class holding a scalar of `kind`.
    pub fn of(kind: ScalarKind) -> Class {
        match kind {
            ScalarKind::Bool => Class::Pred,
            ScalarKind::I64 | ScalarKind::U64 => Class::B64,
            ScalarKind::F32 => Class::F32,
            ScalarKind::F64 => Class::F64,
            _ => Class::B32,
        }
    }
}

/// A virtual register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reg {
    pub class: Class,
    n: u32,
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.class.prefix(), self.n)
    }
}

/// A branch target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label(u32);

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "$L{}", self.0)
    }
}

/// The instruction type of arithmetic on `kind` (narrow integers compute in 32 bits).
pub fn op_type(kind: ScalarKind) -> &'static str {
    match kind {
        ScalarKind::Bool => "pred",
        ScalarKind::I8 | ScalarKind::I16 | ScalarKind::I32 => "s32",
        ScalarKind::U8 | ScalarKind::U16 | ScalarKind::U32 => "u32",
        ScalarKind::I64 => "s64",
        ScalarKind::U64 => "u64",
        ScalarKind::F32 => "f32",
        ScalarKind::F64 => "f64",
    }
}

/// The memory type of `kind` (loads extend narrow kinds into 32-bit registers).
pub fn mem_type(kind: ScalarKind) -> &'static str {
    match kind {
        ScalarKind::Bool | ScalarKind::U8 => "u8",
        ScalarKind::I8 => "s8",
        ScalarKind::I16 => "s16",
        ScalarKind::U16 => "u16",
        ScalarKind::I32 => "s32",
        ScalarKind::U32 => "u32",
        ScalarKind::I64 => "s64",
        ScalarKind::U64 => "u64",
        ScalarKind::F32 => "f32",
        ScalarKind::F64 => "f64",
    }
}

/// The `mov` type of a register class.
fn mov_type(class: Class) -> &'static str {
    match class {
        Class::Pred => "pred",
        Class::B32 => "b32",
        Class::B64 => "b64",
        Class::F32 => "f32",
        Class::F64 => "f64",
    }
}

/// The text of one function body.
#[derive(Default)]
pub struct Emitter {
    text: String,
    counts: [u32; 5],
    labels: u32,
    /// `.local` and `.shared` declarations of the function.
    memory: String,
    memories: u32,
    /// Bytes of `.shared` memory declared (with alignment padding).
    shared_bytes: u32,
    /// Registers that hold an immediate (written once by [`Emitter::mov_imm`] and not since),
    /// by register name: their bits. See [`Emitter::float_bits`] and [`Emitter::int_bits`].
    immediates: std::collections::HashMap<String, u64>,
    /// The labels placed so far.
    placed: std::collections::HashSet<u32>,
}

impl Emitter {
    pub fn reg(&mut self, class: Class) -> Reg {
        let n = self.counts[class.index()];
        self.counts[class.index()] += 1;
        Reg { class, n }
    }

    /// One instruction (without its `;`).
    pub fn op(&mut self, text: impl AsRef<str>) {
        // An instruction writing a register ends what it held (`@p op dst, ...` too).
        let mut words = text.as_ref().split_whitespace();
        let first = words.next().unwrap_or("");
        let destination = if first.starts_with('@') {
            words.nth(1)
        } else {
            words.next()
        };
        if let Some(destination) = destination {
            self.immediates.remove(destination.trim_end_matches(','));
        }
        self.text.push('\t');
        self.text.push_str(text.as_ref());
        self.text.push_str(";\n");
    }

    /// Lines written so far (instructions and labels).
    pub fn lines(&self) -> usize {
        self.text.matches('\n').count()
    }

    pub fn label(&mut self) -> Label {
        self.labels += 1;
        Label(self.labels)
    }

    /// Whether the last line written is the instruction `text` (no label after it).
    pub fn last_line_is(&self, text: &str) -> bool {
        self.text
            .trim_end()
            .rsplit('\n')
            .next()
            .is_some_and(|line| line.trim().trim_end_matches(';') == text)
    }

    /// Places `label` here.
    pub fn at(&mut self, label: Label) {
        self.placed.insert(label.0);
        let _ = writeln!(self.text, "{label}:");
    }

    /// Whether `label` has been placed.
    pub fn is_placed(&self, label: Label) -> bool {
        self.placed.contains(&label.0)
    }

    pub fn bra(&mut self, to: Label) {
        self.op(format!("bra {to}"));
    }

    /// Branches to `to` when `pred` holds.
    pub fn bra_if(&mut self, pred: Reg, to: Label) {
        self.op(format!("@{pred} bra {to}"));
    }

    /// Branches to `to` when `pred` does not hold.
    pub fn bra_unless(&mut self, pred: Reg, to: Label) {
        self.op(format!("@!{pred} bra {to}"));
    }

    /// A new register holding `value`: `mov.<ty>` for integers and predicates; a float
    /// (`0f…`/`0d…`) is loaded from `.const` memory instead ([`super::literals`]).
    pub fn mov_imm(&mut self, class: Class, value: impl fmt::Display) -> Reg {
        let r = self.reg(class);
        let value = value.to_string();
        let double = match class {
            Class::F32 => Some(false),
            Class::F64 => Some(true),
            _ => None,
        };
        let literal = double.and_then(|d| Some((d, super::literals::float_bits(d, &value)?)));
        let bits = if let Some((double, bits)) = literal {
            self.op(super::literals::load(r, double, bits));
            Some(bits)
        } else {
            self.op(format!("mov.{} {r}, {value}", mov_type(class)));
            value.parse::<u64>().ok()
        };
        if let Some(bits) = bits {
            self.immediates.insert(r.to_string(), bits);
        }
        r
    }

    /// A new register holding the integer literal `bits` of a kernel (a `B32` or `B64`
    /// class), loaded from `.const` memory so that the JIT does not know its value
    /// ([`super::literals`]); the lowering still does ([`Emitter::int_bits`]).
    pub fn int_literal(&mut self, class: Class, bits: u64) -> Reg {
        let r = self.reg(class);
        self.op(super::literals::load_int(r, class == Class::B64, bits));
        self.immediates.insert(r.to_string(), bits);
        r
    }

    /// The bits of the float immediate `r` holds, if it holds one. The lowering folds float
    /// arithmetic on immediates itself, exactly (IEEE, round to nearest even), rather than
    /// leaving constant expressions to the JIT, which folds some with more precision than
    /// `add.rn`/`mul.rn` promise (found by brook-fuzz: a dot product of constant vectors came
    /// out one ulp off).
    pub fn float_bits(&self, r: Reg) -> Option<u64> {
        matches!(r.class, Class::F32 | Class::F64)
            .then(|| self.immediates.get(&r.to_string()).copied())
            .flatten()
    }

    /// The bits of the integer immediate `r` holds, if it holds one (narrow kinds extended
    /// from their width, as registers keep them).
    pub fn int_bits(&self, r: Reg) -> Option<u64> {
        matches!(r.class, Class::B32 | Class::B64)
            .then(|| self.immediates.get(&r.to_string()).copied())
            .flatten()
    }

    /// Copies `from` into the existing register `to`.
    pub fn mov(&mut self, to: Reg, from: Reg) {
        if to == from {
            return;
        }
        self.op(format!("mov.{} {to}, {from}", mov_type(to.class)));
    }

    /// A new register of `class` computed by `f(dest)` (the instruction text).
    pub fn compute(&mut self, class: Class, f: impl FnOnce(Reg) -> String) -> Reg {
        let r = self.reg(class);
        let text = f(r);
        self.op(text);
        r
    }

    /// Declares `bytes` of `.local` (or `.shared`) memory; returns its symbol.
    pub fn memory(&mut self, shared: bool, bytes: u32, align: u32) -> String {
        self.memories += 1;
        if shared {
            self.shared_bytes = self.shared_bytes.next_multiple_of(align.max(4)) + bytes.max(1);
        }
        let (space, name) = if shared {
            (".shared", format!("shared_{}", self.memories))
        } else {
            (".local", format!("local_{}", self.memories))
        };
        let _ = writeln!(
            self.memory,
            "\t{space} .align {} .b8 {name}[{}];",
            align.max(4),
            bytes.max(1)
        );
        name
    }

    /// Bytes of `.shared` memory the function declares.
    pub fn shared_bytes(&self) -> u32 {
        self.shared_bytes
    }

    /// The finished body: memory and register declarations, then the instructions.
    pub fn finish(self) -> String {
        let mut out = self.memory;
        for class in CLASSES {
            let n = self.counts[class.index()];
            if n > 0 {
                let _ = writeln!(out, "\t.reg {} {}<{n}>;", class.decl(), class.prefix());
            }
        }
        out.push_str(&self.text);
        out
    }
}
