//! Loops counted where the device ends them: Mesa's lavapipe stops every loop of an
//! invocation, silently, once its loops have run a number of iterations in all (65,535;
//! the device's probe finds it, `Options::loop_limit`). A kernel that needs more would give
//! wrong results there, so on such a device every module counts its invocation's loop
//! iterations the way the driver does (each iteration's end, and each loop's exit, which the
//! driver's masked loops also pass through), and an invocation whose count has reached the
//! limit when it ends sets its dispatch's status word: the 32-bit word [`STATUS_BYTES`]
//! before the scratch frames (push word 1), which the runtime zeroes and reads after the
//! dispatch ran, failing the launch with a typed error instead of handing back wrong results.
//!
//! The check is written where the entry point returns, once its first loop has made the
//! counter. Helper functions written after the entry point (a reduction's combine step)
//! count into the same counter; every reduction entry loops, so its returns check them.

use super::shell::{Scalar, Shell};
use rspirv::spirv::StorageClass;

/// Bytes between a dispatch's status word and its scratch frames (the frames stay aligned).
pub const STATUS_BYTES: u64 = 256;

impl Shell {
    /// Counts one step of the invocation's loops (an iteration's end, or a loop's exit);
    /// nothing where the device has no limit.
    pub(crate) fn count_loop_step(&mut self) {
        if self.loop_limit == 0 || self.in_dead_block {
            return;
        }
        let u32_ty = self.u32_ty();
        let counter = self.loop_counter();
        let count = self.read(u32_ty, counter);
        let one = self.const_u32(1);
        let next = self.b.i_add(u32_ty, None, count, one).expect("in a block");
        self.write(counter, next);
    }

    /// Where the invocation ends (a return from the entry point), sets the dispatch's status
    /// word when its count of loop steps has reached the device's limit. The count only
    /// grows, so checking at the ends sees every early end of a loop, and keeps the check
    /// out of the loops (a check at every loop's end took lavapipe's compiles of the
    /// conformance suite from 58 s to 69 s; one in every iteration, to 132 s).
    pub(crate) fn report_loop_limit(&mut self) {
        let Some(counter) = self.loop_count.filter(|_| self.loop_limit > 0) else {
            return;
        };
        let u32_ty = self.u32_ty();
        let count = self.read(u32_ty, counter);
        let limit = self.const_u32(self.loop_limit);
        let bool_ty = self.b.type_bool();
        let reached = self
            .b
            .u_greater_than_equal(bool_ty, None, count, limit)
            .expect("in a block");
        let frame = self.begin_if(reached);
        let frames = self.push_word(1);
        let back = self.const_u64(STATUS_BYTES);
        let u64_ty = self.u64_ty();
        let status = self
            .b
            .i_sub(u64_ty, None, frames, back)
            .expect("in a block");
        let one = self.const_u32(1);
        self.store(Scalar::U32, status, one);
        self.end_if(frame);
        self.counts_loops = true;
    }

    /// The invocation's count of loop steps: a private variable starting at zero, shared by
    /// the module's functions (made at the first loop, before anything in it may return).
    pub(crate) fn loop_counter(&mut self) -> rspirv::spirv::Word {
        if let Some(counter) = self.loop_count {
            return counter;
        }
        let u32_ty = self.u32_ty();
        let zero = self.const_u32(0);
        let pointer = self.b.type_pointer(None, StorageClass::Private, u32_ty);
        let counter = self.global_variable(pointer, StorageClass::Private, Some(zero));
        self.loop_count = Some(counter);
        counter
    }
}
