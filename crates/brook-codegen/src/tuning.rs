//! Code generation choices kept to compare against (a benchmark with and without a
//! transformation, a slowdown bisected): [`Tuning`], part of every backend's options.
//!
//! The defaults are what Brook ships; each choice can be changed by an environment variable
//! that the runtime reads once, when it makes its devices ([`Tuning::from_env`]). A device's
//! options, its tuning included, are fixed when it is made, and its compiled kernels are kept
//! per device: two devices made with different tunings never share a compiled kernel.

/// How wide the CPU backend runs map kernels' instances in SIMD lanes (`BROOK_SPMD`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gangs {
    /// The host's vector width: 8 lanes with AVX2, 4 with SSE4.1 or NEON, else one at a time.
    Host,
    /// One instance at a time (`off`, `0` or `1`).
    Off,
    /// Gangs of 4 lanes, one 128-bit vector per value (`4`).
    Four,
    /// Gangs of 8 lanes, two 128-bit vectors per value (`8`).
    Eight,
}

/// The code generation choices of every backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tuning {
    /// Counted loops are unrolled before lowering (`BROOK_UNROLL=0` keeps them).
    pub unroll: bool,
    /// Loops stepping an index get a fast loop that moves their gathers' element indices
    /// instead of recomputing them (`BROOK_INDUCTION=0` turns it off).
    pub induction: bool,
    /// The CPU backend's SIMD gangs (`BROOK_SPMD`).
    pub gangs: Gangs,
    /// PTX scans: the tile entry's blocks per SM, 1 to 8 (`BROOK_SCAN_BLOCKS`).
    pub scan_blocks: u32,
    /// PTX scans: tiles per SM between a tile and the one whose input its block prefetches,
    /// 0 (none) to 16 (`BROOK_SCAN_AHEAD`).
    pub scan_ahead: u32,
    /// The shared one-pass scan ([`crate::gpu::reduce::lookback`]): leaves per tile, 0 for the
    /// tile a subgroup holds in registers, else a power of two from 256 to 65536 (tiles then
    /// load their leaves twice; `BROOK_SCAN_TILE`).
    pub scan_tile: u32,
    /// The shared one-pass scan: how often a tile reads a tree node that another tile has not
    /// published yet before it computes the node itself, 0 to 2^20 (`BROOK_SCAN_SPINS`).
    pub scan_spins: u32,
    /// The shared one-pass scan: chunks a subgroup holds per tile, 0 for the default by
    /// the value's size, else 1, 2, 4, 8 or 16 (`BROOK_SCAN_CHUNKS`).
    pub scan_chunks: u32,
    /// The shared one-pass scan: invocations per workgroup, a power of two from 32 to 1024
    /// (`BROOK_SCAN_GROUP`; each subgroup still scans its own tiles).
    pub scan_group: u32,
    /// Vulkan GPUs scan in one pass with the shared entry (`BROOK_SCAN_ONE_PASS=1`), else in
    /// levels (faster on NVIDIA's driver today: see docs/PERFORMANCE.md); CUDA GPUs then use
    /// the shared entry in place of PTX's own one-pass scan (to compare the dialects, and to
    /// profile the shared entry with `ncu`).
    pub scan_one_pass: bool,
}

impl Tuning {
    /// What Brook ships.
    pub const DEFAULT: Tuning = Tuning {
        unroll: true,
        induction: true,
        gangs: Gangs::Host,
        scan_blocks: 5,
        scan_ahead: 1,
        scan_tile: 0,
        scan_spins: 512,
        scan_chunks: 0,
        scan_group: 64,
        scan_one_pass: false,
    };

    /// The defaults with the environment's changes; a value it cannot take is named on
    /// stderr and the default kept.
    pub fn from_env() -> Tuning {
        let (tuning, problems) = Tuning::from_vars(|name| std::env::var(name).ok());
        for problem in problems {
            eprintln!("brook: {problem}");
        }
        tuning
    }

    /// The defaults with the changes `var` gives (a variable's value by name), and a line for
    /// each value that could not be taken.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> (Tuning, Vec<String>) {
        let mut t = Tuning::DEFAULT;
        let mut problems = Vec::new();
        let mut setting = Setting {
            var: &var,
            problems: &mut problems,
        };
        if let Some(on) = setting.read("BROOK_UNROLL", "0 or 1", switch) {
            t.unroll = on;
        }
        if let Some(on) = setting.read("BROOK_INDUCTION", "0 or 1", switch) {
            t.induction = on;
        }
        if let Some(gangs) = setting.read("BROOK_SPMD", "off, 4, 8 or host", gangs) {
            t.gangs = gangs;
        }
        let blocks = |v: &str| number_in(v, 1, 8);
        if let Some(n) = setting.read("BROOK_SCAN_BLOCKS", "a number from 1 to 8", blocks) {
            t.scan_blocks = n;
        }
        let ahead = |v: &str| number_in(v, 0, 16);
        if let Some(n) = setting.read("BROOK_SCAN_AHEAD", "a number from 0 to 16", ahead) {
            t.scan_ahead = n;
        }
        let tile = |v: &str| {
            let n = number_in(v, 0, 65536)?;
            (n == 0 || (n >= 256 && n.is_power_of_two())).then_some(n)
        };
        let expected = "0 or a power of two from 256 to 65536";
        if let Some(n) = setting.read("BROOK_SCAN_TILE", expected, tile) {
            t.scan_tile = n;
        }
        let spins = |v: &str| number_in(v, 0, 1 << 20);
        if let Some(n) = setting.read("BROOK_SCAN_SPINS", "a number from 0 to 1048576", spins) {
            t.scan_spins = n;
        }
        let chunks = |v: &str| number_in(v, 0, 16).filter(|n| *n == 0 || n.is_power_of_two());
        let expected = "0, 1, 2, 4, 8 or 16";
        if let Some(n) = setting.read("BROOK_SCAN_CHUNKS", expected, chunks) {
            t.scan_chunks = n;
        }
        let group = |v: &str| number_in(v, 32, 1024).filter(|n| n.is_power_of_two());
        let expected = "a power of two from 32 to 1024";
        if let Some(n) = setting.read("BROOK_SCAN_GROUP", expected, group) {
            t.scan_group = n;
        }
        if let Some(on) = setting.read("BROOK_SCAN_ONE_PASS", "0 or 1", switch) {
            t.scan_one_pass = on;
        }
        (t, problems)
    }
}

/// The variables being read, and the lines naming values that could not be taken.
struct Setting<'a, V> {
    var: &'a V,
    problems: &'a mut Vec<String>,
}

impl<V: Fn(&str) -> Option<String>> Setting<'_, V> {
    /// Variable `name` parsed by `parse`; `None` where it is unset or its value is not
    /// `expected` (which is noted).
    fn read<T>(
        &mut self,
        name: &str,
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Option<T> {
        let text = (self.var)(name)?;
        let value = parse(text.trim());
        if value.is_none() {
            self.problems.push(format!(
                "{name}={text:?} is not {expected}; the default is kept"
            ));
        }
        value
    }
}

fn switch(v: &str) -> Option<bool> {
    match v {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

fn gangs(v: &str) -> Option<Gangs> {
    match v {
        "off" | "0" | "1" => Some(Gangs::Off),
        "4" => Some(Gangs::Four),
        "8" => Some(Gangs::Eight),
        "host" => Some(Gangs::Host),
        _ => None,
    }
}

fn number_in(v: &str, low: u32, high: u32) -> Option<u32> {
    v.parse().ok().filter(|n| (low..=high).contains(n))
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuning(vars: &[(&str, &str)]) -> (Tuning, Vec<String>) {
        Tuning::from_vars(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn no_variables_give_the_defaults() {
        assert_eq!(tuning(&[]), (Tuning::DEFAULT, vec![]));
        assert_eq!(Tuning::default(), Tuning::DEFAULT);
    }

    #[test]
    fn each_variable_changes_its_choice() {
        let (t, problems) = tuning(&[
            ("BROOK_UNROLL", "0"),
            ("BROOK_INDUCTION", " 0 "),
            ("BROOK_SPMD", "4"),
            ("BROOK_SCAN_BLOCKS", "3"),
            ("BROOK_SCAN_AHEAD", "0"),
            ("BROOK_SCAN_TILE", "512"),
            ("BROOK_SCAN_SPINS", "0"),
            ("BROOK_SCAN_CHUNKS", "8"),
            ("BROOK_SCAN_GROUP", "256"),
            ("BROOK_SCAN_ONE_PASS", "1"),
        ]);
        assert!(problems.is_empty(), "{problems:?}");
        let expected = Tuning {
            unroll: false,
            induction: false,
            gangs: Gangs::Four,
            scan_blocks: 3,
            scan_ahead: 0,
            scan_tile: 512,
            scan_spins: 0,
            scan_chunks: 8,
            scan_group: 256,
            scan_one_pass: true,
        };
        assert_eq!(t, expected);
        assert_eq!(tuning(&[("BROOK_SPMD", "off")]).0.gangs, Gangs::Off);
        assert_eq!(tuning(&[("BROOK_SPMD", "8")]).0.gangs, Gangs::Eight);
    }

    #[test]
    fn a_value_out_of_range_is_named_and_the_default_kept() {
        let (t, problems) = tuning(&[
            ("BROOK_SCAN_BLOCKS", "9"),
            ("BROOK_SPMD", "16"),
            ("BROOK_UNROLL", "no"),
            ("BROOK_SCAN_TILE", "1000"),
        ]);
        assert_eq!(t, Tuning::DEFAULT);
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems
            .iter()
            .any(|p| p.contains("BROOK_SCAN_BLOCKS=\"9\"") && p.contains("from 1 to 8")));
        assert!(problems.iter().any(|p| p.contains("BROOK_SPMD=\"16\"")));
    }
}
