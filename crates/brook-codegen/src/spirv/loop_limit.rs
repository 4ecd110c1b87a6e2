//! Loops counted where the device ends them: Mesa's lavapipe stops every loop of a subgroup,
//! silently, once the subgroup's loops have run a number of iterations in all (65,535; the
//! device's probe finds it, `Options::loop_limit`). Lavapipe runs a subgroup's invocations
//! as the lanes of one vector program, and the limit counts that program's iterations: an
//! iteration run by any lane counts once, and loops that lanes run apart (the arms of a
//! divergent `if`) add up, so two lanes looping 40,000 times each in different arms end
//! each other's loops though each lane alone stays within the limit. A kernel that needs
//! more would give wrong results there, so on such a device every module counts its
//! subgroup's loop iterations the way the driver does (each iteration's end, and each loop's
//! exit, which the driver's masked loops also pass through) in a workgroup-shared counter
//! per subgroup, one increment per step from one of the lanes running it, and an invocation
//! whose subgroup's count has reached the limit when it ends sets its dispatch's status
//! word: the 32-bit word [`STATUS_BYTES`] before the scratch frames (push word 1), which the
//! runtime zeroes and reads after the dispatch ran, failing the launch with a typed error
//! instead of handing back wrong results.
//!
//! Lavapipe also passes code that no lane runs: the arms of an `if` that every lane skips,
//! what follows a `continue` or `break` that every lane took, a function called there; each
//! loop passed so costs it one iteration. No lane can count those, so the counts are kept an
//! upper bound instead: where an `if` ends, and where a loop's iteration (with a `continue`
//! in it) or the loop itself ends, the subgroup's counter also gets one step for every loop
//! written inside it ([`Written`]), a helper function's counted at each call. A kernel near
//! the limit may so be refused where lavapipe would have run it; none gets wrong results.
//!
//! The counter is zeroed where the entry point starts and checked where it returns, once its
//! first loop has made the counter. Helper functions written after the entry point (a
//! reduction's combine step) count into the same counter; every reduction entry loops, so
//! its returns check them.

use super::shell::{Scalar, Shell};
use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{BuiltIn, Capability, Op, Scope, StorageClass, Word};

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

impl Shell {
    /// Counts one step of the subgroup's loops (an iteration's end, or a loop's exit);
    /// nothing where the device has no limit.
    pub(crate) fn count_loop_step(&mut self) {
        if self.loop_limit == 0 || self.in_dead_block {
            return;
        }
        let one = self.const_u32(1);
        self.count_steps(one);
    }

    /// Counts a step for every loop written since `since` (a helper's, at each of its calls
    /// written since): what the subgroup may have passed without lanes.
    pub(crate) fn count_passes_without_lanes(&mut self, since: Written) {
        if self.loop_limit == 0 || self.in_dead_block {
            return;
        }
        let loops = self.written.loops - since.loops;
        let calls = self.written.calls - since.calls;
        if loops == 0 && calls == 0 {
            return;
        }
        let u32_ty = self.u32_ty();
        let mut steps = self.const_u32(loops);
        if calls > 0 {
            let calls = self.const_u32(calls);
            let per_call = self.helper_loops();
            let called = self
                .b
                .i_mul(u32_ty, None, calls, per_call)
                .expect("in a block");
            steps = self
                .b
                .i_add(u32_ty, None, steps, called)
                .expect("in a block");
        }
        self.count_steps(steps);
    }

    /// Adds `steps` (a `u32`) to the subgroup's counter, from one of the lanes here.
    fn count_steps(&mut self, steps: Word) {
        let u32_ty = self.u32_ty();
        let bool_ty = self.b.type_bool();
        let subgroup = self.const_u32(Scope::Subgroup as u32);
        let relaxed = self.const_u32(0);
        let slot = self.loop_slot();
        let elected = self
            .b
            .group_non_uniform_elect(bool_ty, None, subgroup)
            .expect("in a block");
        let zero = self.const_u32(0);
        let step = self
            .b
            .select(u32_ty, None, elected, steps, zero)
            .expect("in a block");
        self.b
            .atomic_i_add(u32_ty, None, slot, subgroup, relaxed, step)
            .expect("in a block");
    }

    /// Notes a call of the helper function (written after the entry point).
    pub(crate) fn note_helper_call(&mut self) {
        self.written.calls += 1;
    }

    /// The loops the helper function holds: a constant defined once the module is written
    /// ([`Shell::define_helper_loops`]).
    fn helper_loops(&mut self) -> Word {
        match self.helper_loops {
            Some(id) => id,
            None => {
                let id = self.b.id();
                self.helper_loops = Some(id);
                id
            }
        }
    }

    /// Defines the constant [`Shell::helper_loops`] stands for: the loops written since the
    /// helper function began (`helper_from`).
    pub(crate) fn define_helper_loops(&mut self) {
        let Some(id) = self.helper_loops else {
            return;
        };
        let loops = self.written.loops - self.helper_from.unwrap_or(self.written.loops);
        let u32_ty = self.u32_ty();
        self.b
            .module_mut()
            .types_global_values
            .push(Instruction::new(
                Op::Constant,
                Some(u32_ty),
                Some(id),
                vec![Operand::LiteralBit32(loops)],
            ));
    }

    /// Where the invocation ends (a return from the entry point), sets the dispatch's status
    /// word when its subgroup's count of loop steps has reached the device's limit. The count only
    /// grows, so checking at the ends sees every early end of a loop, and keeps the check
    /// out of the loops (a check at every loop's end took lavapipe's compiles of the
    /// conformance suite from 58 s to 69 s; one in every iteration, to 132 s).
    pub(crate) fn report_loop_limit(&mut self) {
        if self.loop_count.is_none() || self.loop_limit == 0 {
            return;
        }
        let u32_ty = self.u32_ty();
        let subgroup = self.const_u32(Scope::Subgroup as u32);
        let relaxed = self.const_u32(0);
        let slot = self.loop_slot();
        let count = self
            .b
            .atomic_load(u32_ty, None, slot, subgroup, relaxed)
            .expect("in a block");
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

    /// The counters of the workgroup's subgroups (a workgroup array of a `u32` per four
    /// invocations: subgroups have at least four), made at the first loop, before anything
    /// in it may return; the entry point zeroes its subgroup's where it starts.
    pub(crate) fn loop_counter(&mut self) -> Word {
        if let Some(counter) = self.loop_count {
            return counter;
        }
        self.require(&[Capability::GroupNonUniform]);
        let u32_ty = self.u32_ty();
        let [x, y, z] = self.local_size();
        let slots = self.const_u32((x * y * z / 4).max(1));
        let array = self.b.type_array(u32_ty, slots);
        let pointer = self.b.type_pointer(None, StorageClass::Workgroup, array);
        let counter = self.global_variable(pointer, StorageClass::Workgroup, None);
        self.loop_count = Some(counter);
        self.zero_loop_counter_at_entry(counter);
        counter
    }

    /// Zeroes the subgroup's counter at the start of the entry point (its first function),
    /// after its variables.
    fn zero_loop_counter_at_entry(&mut self, counter: Word) {
        let u32_ty = self.u32_ty();
        let slot_ty = self.b.type_pointer(None, StorageClass::Workgroup, u32_ty);
        let subgroup_id = self.builtin_variable(BuiltIn::SubgroupId, u32_ty);
        let subgroup = self.const_u32(Scope::Subgroup as u32);
        let relaxed = self.const_u32(0);
        let zero = self.const_u32(0);
        let (id, slot) = (self.b.id(), self.b.id());
        let code = [
            Instruction::new(
                Op::Load,
                Some(u32_ty),
                Some(id),
                vec![Operand::IdRef(subgroup_id)],
            ),
            Instruction::new(
                Op::AccessChain,
                Some(slot_ty),
                Some(slot),
                vec![Operand::IdRef(counter), Operand::IdRef(id)],
            ),
            Instruction::new(
                Op::AtomicStore,
                None,
                None,
                vec![
                    Operand::IdRef(slot),
                    Operand::IdRef(subgroup),
                    Operand::IdRef(relaxed),
                    Operand::IdRef(zero),
                ],
            ),
        ];
        let entry = &mut self.b.module_mut().functions[0].blocks[0].instructions;
        let after_variables = entry
            .iter()
            .position(|i| i.class.opcode != Op::Variable)
            .unwrap_or(entry.len());
        entry.splice(after_variables..after_variables, code);
    }

    /// A pointer to the open invocation's subgroup's counter.
    fn loop_slot(&mut self) -> Word {
        let counter = self.loop_counter();
        let u32_ty = self.u32_ty();
        let slot_ty = self.b.type_pointer(None, StorageClass::Workgroup, u32_ty);
        let subgroup_id = self.builtin_variable(BuiltIn::SubgroupId, u32_ty);
        let id = self.read(u32_ty, subgroup_id);
        self.b
            .access_chain(slot_ty, None, counter, [id])
            .expect("in a block")
    }
}
