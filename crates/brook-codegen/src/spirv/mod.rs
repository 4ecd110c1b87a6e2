//! The SPIR-V dialect: compute modules for Vulkan devices, built in memory with `rspirv`.
//!
//! Every module has the same shape ([`shell::Shell`]): SPIR-V 1.5 (Vulkan 1.2), the
//! `PhysicalStorageBuffer64` addressing model, so a kernel reads and writes memory through
//! 64-bit device addresses as the PTX dialect does (no descriptor sets; nothing bounds a
//! stream by `maxStorageBufferRange`), and its parameters in a push-constant block of 64-bit
//! words. Float operations carry `NoContraction`: the driver may not fuse or reassociate them.
//!
//! What is here: the shell; Brook's scalar operations ([`scalar`], with exact float
//! remainders in [`fmod`]; the exact intrinsics in [`math`]); structured control flow and
//! function variables ([`flow`]), with loops counted where the device ends them
//! ([`loop_limit`]); the math library ([`libm`], over `crate::mathlib`, with division,
//! square root and, where the device's is not fused, `fma` computed exactly; from integers on
//! devices without doubles, [`without_doubles`]); the probe the runtime runs when it opens a
//! device ([`probe`]); the validator's check ([`validate`]); the lowering of kernel bodies
//! ([`lower`], the dialect's `crate::lower::Target`), the map driver ([`map`]), thread groups
//! ([`group`]) and the reduction and scan entries ([`reduce`]), the last three over the GPU
//! strategies written once for PTX and SPIR-V (`crate::gpu`).

pub mod flow;
pub mod fmod;
pub mod group;
pub mod libm;
pub mod loop_limit;
pub mod lower;
pub mod map;
pub mod math;
pub mod probe;
pub mod reduce;
pub mod scalar;
pub mod shell;
pub mod sink;
pub mod validate;
pub mod without_doubles;

/// A module's code: SPIR-V words, ready for `vkCreateShaderModule`.
#[derive(Clone, Debug)]
pub struct SpirvModule {
    pub words: Vec<u32>,
    /// The entry point's name.
    pub entry: &'static str,
    /// Bytes of the push-constant block.
    pub push_bytes: u32,
    /// What the module computes, for messages about it (a kernel's name and its entry's
    /// shape); empty for Brook's own modules (probes, tests).
    pub label: String,
    /// The module counts its loop steps against the device's limit and sets its dispatch's
    /// status word when it reaches it ([`loop_limit`]).
    pub counts_loops: bool,
}

impl SpirvModule {
    /// The module labelled `label`.
    pub fn labelled(self, label: String) -> SpirvModule {
        SpirvModule { label, ..self }
    }

    /// What the module computes, as a message about what it did names it: its label, or
    /// its size.
    pub fn name(&self) -> String {
        match self.label.as_str() {
            "" => format!("a module of {} words", self.words.len()),
            label => label.to_string(),
        }
    }

    /// The module's label and size, as a message about compiling it names it.
    pub fn describe(&self) -> String {
        match self.label.as_str() {
            "" => self.name(),
            label => format!("{label} ({} words)", self.words.len()),
        }
    }

    /// The module as bytes (little-endian words), as `spirv-val` reads a file.
    pub fn bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}
