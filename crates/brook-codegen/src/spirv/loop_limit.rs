//! Loops counted where the device ends them: Mesa's lavapipe stops every loop of a subgroup,
//! silently, once the subgroup's loops have run a number of iterations in all (65,535; the
//! device's probe finds it, `Options::loop_limit`). Lavapipe runs a subgroup's invocations
//! as the lanes of one vector program, and the limit counts that program's iterations: an
//! iteration run by any lane counts once, and loops that lanes run apart (the arms of a
//! divergent `if`) add up, so two lanes looping 40,000 times each in different arms end
//! each other's loops though each lane alone stays within the limit. It also passes code no
//! lane runs (an `if`'s arm every lane skips, what follows a `continue` or `break` every lane
//! took, a function called there), each loop passed so costing one iteration.
//!
//! A kernel that needs more would give wrong results there, so on such a device every
//! module counts its subgroup's loop iterations the way the driver does, in a private
//! counter each lane keeps equal to its subgroup's: each iteration's end and each loop's
//! exit add one (the driver's masked loops pass there too); where an `if` whose arms hold
//! loops ends, the lanes take the count before it plus what each arm added (the largest
//! count of the lanes that took it: `OpGroupNonUniformUMax`); where a loop ends, or one of
//! its iterations with a `continue`, the largest count of the lanes there. Lane-less passes
//! cannot be counted, so the counts are kept an upper bound instead: at those same places
//! the counter also gets a step for every loop written inside ([`Written`], a helper
//! function's loops at each of its calls). An invocation whose count has reached the limit
//! when it ends sets its dispatch's status word: the 32-bit word [`STATUS_BYTES`] before the
//! scratch frames (push word 1), which the runtime zeroes and reads after the dispatch ran,
//! failing the launch with a typed error instead of handing back wrong results. Lanes that
//! jump out of an arm (`return`, or `break`/`continue` of a loop around the `if`) go through
//! the `if`'s end first ([`super::flow`]), so their steps are counted there too; in a helper
//! function (a reduction's combine step) a `return` from an arm still leaves at once, and
//! what its lanes counted in the arm is not seen by the other arm's (docs/SEMANTICS.md).
//!
//! The check is written where the entry point returns. Helper functions written after the
//! entry point (a reduction's combine step) count into the same counter; every reduction
//! entry loops, so its returns check them.

use super::shell::{Scalar, Shell};
use rspirv::spirv::{Capability, GroupOperation, Scope, StorageClass, Word};

/// Bytes between a dispatch's status word and its scratch frames (the frames stay aligned).
pub const STATUS_BYTES: u64 = 256;

/// What a module has written so far that lavapipe may pass without lanes: loops, `continue`s,
/// calls of the helper function (counted where the device ends loops early).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    pub(crate) loops: u32,
    pub(crate) continues: u32,
    pub(crate) calls: u32,
}

/// Where an `if` began, as its end reconciles the lanes' counts.
#[derive(Clone, Copy, Debug)]
pub struct CountAtIf {
    cond: Word,
    count: Word,
}

impl Shell {
    /// Counts one step of the subgroup's loops (an iteration's end, or a loop's exit);
    /// nothing where the device has no limit.
    pub(crate) fn count_loop_step(&mut self) {
        if self.loop_limit == 0 || self.in_dead_block {
            return;
        }
        let one = self.const_u32(1);
        let count = self.loop_count_value();
        let next = self.add_u32(count, one);
        self.set_loop_count(next);
    }

    /// Where an `if` on `cond` begins: the count the lanes share there.
    pub(crate) fn count_at_if(&mut self, cond: Word) -> Option<CountAtIf> {
        if self.loop_limit == 0 || self.in_dead_block {
            return None;
        }
        let count = self.loop_count_value();
        Some(CountAtIf { cond, count })
    }

    /// Where an `if` ends whose arms wrote something counted since `since`: the count before
    /// it plus each arm's steps (the largest count of the lanes that took the arm), plus a
    /// step for each loop the arms hold (lane-less passes).
    pub(crate) fn count_after_if(&mut self, at: Option<CountAtIf>, since: Written) {
        let Some(CountAtIf {
            cond,
            count: before,
        }) = at
        else {
            return;
        };
        let calls = self.written.calls - since.calls;
        if self.in_dead_block
            || (self.written.loops == since.loops && calls * self.helper_loops == 0)
        {
            return;
        }
        let u32_ty = self.u32_ty();
        let now = self.loop_count_value();
        let accepted = self
            .b
            .select(u32_ty, None, cond, now, before)
            .expect("in a block");
        let rejected = self
            .b
            .select(u32_ty, None, cond, before, now)
            .expect("in a block");
        let accepted = self.subgroup_max(accepted);
        let rejected = self.subgroup_max(rejected);
        let both = self.add_u32(accepted, rejected);
        let steps = self
            .b
            .i_sub(u32_ty, None, both, before)
            .expect("in a block");
        let steps = self.add_lane_less_passes(steps, since);
        self.set_loop_count(steps);
    }

    /// Where a loop, or one of its iterations with a `continue`, ends: the largest count of
    /// the lanes there (lanes that left it, or skipped part of its body, counted less), plus
    /// a step for each loop its body holds (lane-less passes).
    pub(crate) fn count_after_loop(&mut self, since: Written) {
        if self.loop_limit == 0 || self.in_dead_block {
            return;
        }
        let count = self.loop_count_value();
        let largest = self.subgroup_max(count);
        let steps = self.add_lane_less_passes(largest, since);
        self.set_loop_count(steps);
    }

    /// `steps` plus a step for every loop written since `since` (a helper's at each of its
    /// calls written since).
    fn add_lane_less_passes(&mut self, steps: Word, since: Written) -> Word {
        let loops = self.written.loops - since.loops;
        let calls = self.written.calls - since.calls;
        let mut steps = steps;
        let passes = loops + calls * self.helper_loops;
        if passes > 0 {
            let passes = self.const_u32(passes);
            steps = self.add_u32(steps, passes);
        }
        steps
    }

    /// The largest of the subgroup's active lanes' `value`s (`u32`).
    fn subgroup_max(&mut self, value: Word) -> Word {
        self.require(&[
            Capability::GroupNonUniform,
            Capability::GroupNonUniformArithmetic,
        ]);
        let u32_ty = self.u32_ty();
        let subgroup = self.const_u32(Scope::Subgroup as u32);
        self.b
            .group_non_uniform_u_max(u32_ty, None, subgroup, GroupOperation::Reduce, value, None)
            .expect("in a block")
    }

    fn add_u32(&mut self, a: Word, b: Word) -> Word {
        let u32_ty = self.u32_ty();
        self.b.i_add(u32_ty, None, a, b).expect("in a block")
    }

    fn loop_count_value(&mut self) -> Word {
        let counter = self.loop_counter();
        let u32_ty = self.u32_ty();
        self.read(u32_ty, counter)
    }

    fn set_loop_count(&mut self, value: Word) {
        let counter = self.loop_counter();
        self.write(counter, value);
    }

    /// Notes a call of the helper function (written after the entry point).
    pub(crate) fn note_helper_call(&mut self) {
        self.written.calls += 1;
    }

    /// Where the invocation ends (a return from the entry point), sets the dispatch's status
    /// word when its subgroup's count of loop steps has reached the device's limit. The
    /// count only grows, so checking at the ends sees every early end of a loop, and keeps
    /// the check out of the loops (a check at every loop's end took lavapipe's compiles of
    /// the conformance suite from 58 s to 69 s; one in every iteration, to 132 s).
    pub(crate) fn report_loop_limit(&mut self) {
        if self.loop_count.is_none() || self.loop_limit == 0 {
            return;
        }
        let count = self.loop_count_value();
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

    /// The invocation's count of loop steps, equal to its subgroup's: a private variable
    /// starting at zero, shared by the module's functions.
    pub(crate) fn loop_counter(&mut self) -> Word {
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
