//! The entry functions generated for a kernel: the code around its body.
//!
//! - [`map`]: one thread per instance of the execution region (a grid-stride loop).
//! - [`group`]: a kernel with a thread group: one CTA per group, barriers are `bar.sync`.
//! - [`reduce`]: reductions in the canonical order (see that module).
//!
//! Every entry takes the launch's parameter block ([`crate::abi`]) as one `.param` byte
//! array, so a launch passes one pointer to the driver.

pub mod group;
pub mod map;
pub mod reduce;

use super::emit::Reg;
use super::lower::{Lower, PARAMS};
use crate::abi::header;
use std::fmt::Write;

/// The name of the entry function of every generated module.
pub const ENTRY: &str = "brook_main";

/// The execution region, in index registers.
pub type Region = crate::gpu::map::Region<Reg>;

/// Loads the domain (into `lower.domain`) and the execution region.
pub fn load_region(lower: &mut Lower<'_>, rank: usize) -> Region {
    lower.domain = lower.param_axes(header::DOMAIN, rank);
    let origin = lower.param_axes(header::REGION_ORIGIN, rank);
    let size = lower.param_axes(header::REGION_SIZE, rank);
    let mut total = lower.index_imm(1);
    for &s in &size {
        total = lower.index_op("mul.lo", total, s);
    }
    Region {
        origin,
        size,
        total,
    }
}

/// Sets `pos` (existing registers, slowest first) to `linear` unravelled row-major in a box
/// of `size`, plus `origin`.
pub fn unravel(lower: &mut Lower<'_>, pos: &[Reg], linear: Reg, size: &[Reg], origin: &[Reg]) {
    let mut rest = linear;
    for k in (0..size.len()).rev() {
        let p = if k == 0 {
            rest
        } else {
            let s = size[k];
            let p = lower.index_op("rem", rest, s);
            rest = lower.index_op("div", rest, s);
            p
        };
        let (o, at, u) = (origin[k], pos[k], lower.index.unsigned());
        lower.e.op(format!("add.{u} {at}, {p}, {o}"));
    }
}

/// A special register (`%tid.x`, `%ctaid.x`, ...) as an index.
pub fn special(lower: &mut Lower<'_>, name: &str) -> Reg {
    lower.special_index(name)
}

/// The text of an entry function around a finished body.
pub fn entry_text(name: &str, block_size: usize, body: String, attributes: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        ".visible .entry {name}(.param .align 8 .b8 {PARAMS}[{block_size}]){attributes}\n{{"
    );
    out.push_str(&body);
    out.push_str("}\n");
    out
}
