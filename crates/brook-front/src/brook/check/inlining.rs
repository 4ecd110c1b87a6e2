//! How large a kernel is once its subkernel calls are inlined (every call is expanded in
//! place: seed 003, section 4.3). A chain of subkernels each calling the next twice doubles
//! the code at every level, so 20 levels make a million calls that no compiler would finish:
//! past [`MAX_INLINED_CALLS`] (or [`MAX_INLINED_BYTES`] of source expanded, for large
//! bodies called fewer times) the kernel gets a diagnostic naming the chain of calls that
//! makes it so, instead of the lowering or a backend running out of memory.

use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;
use std::collections::HashMap;

/// The most subkernel calls one kernel may expand to, counting calls inside inlined bodies
/// (the largest kernels of the tests expand 8,192).
pub const MAX_INLINED_CALLS: u64 = 1 << 16;
/// The most source text (bytes of kernel definitions, each counted once per expansion) one
/// kernel may expand to: a kernel at [`MAX_INLINED_CALLS`] of one-line subkernels expands
/// about 4.6 MB, which the CPU device compiles in 1.7 s and 260 MB.
pub const MAX_INLINED_BYTES: u64 = 8 << 20;

/// A kernel's expansion: the subkernel calls and the source bytes it stands for.
#[derive(Clone, Copy, Default)]
struct Expansion {
    calls: u64,
    bytes: u64,
}

impl Expansion {
    fn too_large(self) -> bool {
        self.calls > MAX_INLINED_CALLS || self.bytes > MAX_INLINED_BYTES
    }
}

/// The subkernel calls each kernel body makes: `(caller, callee, place)`.
pub(crate) type CallSites = Vec<(usize, usize, Span)>;

impl Checker<'_> {
    /// One diagnostic for each kernel that expands past the limit while every kernel it
    /// calls stays within it (the place where the program becomes too large).
    pub(super) fn inlined_sizes(&mut self, calls: &CallSites) {
        let mut callees: HashMap<usize, Vec<usize>> = HashMap::new();
        for &(caller, callee, _) in calls {
            callees.entry(caller).or_default().push(callee);
        }
        // A kernel calls only kernels defined before it (others are errors, not recorded):
        // in definition order every callee's size is known when its caller's is computed.
        let mut order: Vec<usize> = (0..self.info.kernels.len()).collect();
        order.sort_by_key(|&k| self.info.kernels[k].span.start);
        let mut sizes: HashMap<usize, Expansion> = HashMap::new();
        for kernel in order {
            let info = &self.info.kernels[kernel];
            let own = u64::from(info.span.end.saturating_sub(info.span.start));
            let size = callees.get(&kernel).map_or(
                Expansion {
                    calls: 0,
                    bytes: own,
                },
                |list| {
                    list.iter().fold(
                        Expansion {
                            calls: 0,
                            bytes: own,
                        },
                        |sum, callee| {
                            let inner = sizes.get(callee).copied().unwrap_or_default();
                            Expansion {
                                calls: sum.calls.saturating_add(1).saturating_add(inner.calls),
                                bytes: sum.bytes.saturating_add(inner.bytes),
                            }
                        },
                    )
                },
            );
            sizes.insert(kernel, size);
        }
        let mut reported: Vec<(usize, Expansion)> = sizes
            .iter()
            .filter(|(kernel, size)| {
                let own = callees.get(kernel).map_or(&[][..], Vec::as_slice);
                size.too_large()
                    && own
                        .iter()
                        .all(|c| !sizes.get(c).copied().unwrap_or_default().too_large())
            })
            .map(|(k, s)| (*k, *s))
            .collect();
        reported.sort_by_key(|(k, _)| *k);
        for (kernel, size) in reported {
            let chain = self.heaviest_chain(kernel, &callees, &sizes);
            let info = &self.info.kernels[kernel];
            self.diags.push(
                Diagnostic::error(
                    Code::InlinedTooLarge,
                    info.name_span,
                    format!(
                        "`{}` is too large once its subkernel calls are inlined: {} calls and {} bytes of kernel code expanded (at most {MAX_INLINED_CALLS} and {MAX_INLINED_BYTES})",
                        info.name, size.calls, size.bytes
                    ),
                )
                .with_label("every call of a subkernel is expanded in place")
                .with_note(None, format!("the calls multiply along {chain}"))
                .with_help("call fewer subkernels from each other, or loop over one call instead of writing several"),
            );
        }
    }

    /// `` `a` (2 calls) -> `b` (2 calls) -> `c` ``: from `kernel`, each step to the callee that
    /// expands most, with how many times it is called there.
    fn heaviest_chain(
        &self,
        kernel: usize,
        callees: &HashMap<usize, Vec<usize>>,
        sizes: &HashMap<usize, Expansion>,
    ) -> String {
        let mut chain = format!("`{}`", self.info.kernels[kernel].name);
        let mut at = kernel;
        for _ in 0..12 {
            let Some(own) = callees.get(&at) else { break };
            let Some(&next) = own
                .iter()
                .max_by_key(|c| sizes.get(c).map_or(0, |s| s.bytes))
            else {
                break;
            };
            let times = own.iter().filter(|&&c| c == next).count();
            chain.push_str(&format!(
                " -> `{}` ({times} call{})",
                self.info.kernels[next].name,
                if times == 1 { "" } else { "s" }
            ));
            at = next;
        }
        if callees.contains_key(&at) {
            chain.push_str(" -> ...");
        }
        chain
    }
}
