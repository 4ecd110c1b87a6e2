//! Structured control flow and function variables on a [`Shell`], in the shape the shared
//! lowering's `Target` asks for (`begin_if`/`begin_else`/`end_if`, loops with a continuing
//! part, `break`, `continue`, `return`) and SPIR-V requires: every selection names its merge
//! block, every loop its merge and continue blocks. A jump ends its block; what follows it
//! goes into a fresh block that nothing reaches (SPIR-V allows those), so a block is always
//! open.

use super::loop_limit::{CountAtIf, Written};
use super::shell::Shell;
use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{LoopControl, Op, SelectionControl, StorageClass, Word};

/// An `if` being written: where both arms meet, and the rejecting arm's block.
pub struct IfFrame {
    merge: Word,
    reject: Word,
    /// What the module had written when the `if` began, and the loop count there
    /// ([`super::loop_limit`]).
    written: Written,
    count: Option<CountAtIf>,
}

/// A loop being written.
#[derive(Clone, Copy, Debug)]
pub struct LoopFrame {
    header: Word,
    continuing: Word,
    merge: Word,
    /// A `bool` variable: a `break` in the continuing part sets it, and the back edge leaves
    /// the loop when it holds (SPIR-V lets a continue construct leave its loop only from the
    /// back-edge block).
    leave: Word,
    /// What the module had written when the loop's body began ([`super::loop_limit`]).
    written: Written,
}

/// A loop still open, as a `return` inside it leaves it ([`Shell::jump_return`]).
#[derive(Clone, Copy, Debug)]
pub struct OpenLoop {
    merge: Word,
    /// The code stands in the loop's continuing part (which only its back edge may leave).
    in_continuing: bool,
    /// A `return` left the loop: after it, the entry point returns too.
    returned_inside: bool,
}

impl LoopFrame {
    /// The loop's flag: set by a `break` in its continuing part.
    pub fn leave_flag(&self) -> Word {
        self.leave
    }
}

impl Shell {
    /// A variable of type `ty` in the function (declared in its first block, as SPIR-V
    /// requires).
    pub fn function_variable(&mut self, ty: Word) -> Word {
        self.function_variable_with(ty, None)
    }

    /// A variable of type `ty` in the function starting as the constant `init`, if given.
    pub fn function_variable_with(&mut self, ty: Word, init: Option<Word>) -> Word {
        let ptr = self.b.type_pointer(None, StorageClass::Function, ty);
        let id = self.b.id();
        let mut operands = vec![Operand::StorageClass(StorageClass::Function)];
        operands.extend(init.map(Operand::IdRef));
        let inst = Instruction::new(Op::Variable, Some(ptr), Some(id), operands);
        let f = self.b.selected_function().expect("in a function");
        self.b.module_mut().functions[f].blocks[0]
            .instructions
            .insert(0, inst);
        id
    }

    /// Inserts `code` into the open function's first block right after the last of the
    /// instructions that define `after` (so that it dominates every block of the function);
    /// false, inserting nothing, where the first block defines none of them.
    pub fn insert_after_in_first_block(
        &mut self,
        after: &[Word],
        code: impl IntoIterator<Item = Instruction>,
    ) -> bool {
        let f = self.b.selected_function().expect("in a function");
        let first = &mut self.b.module_mut().functions[f].blocks[0].instructions;
        let defines = |i: &Instruction| i.result_id.is_some_and(|id| after.contains(&id));
        match first.iter().rposition(defines) {
            Some(at) => {
                first.splice(at + 1..at + 1, code);
                true
            }
            None => false,
        }
    }

    /// The value of variable `var` of type `ty`.
    pub fn read(&mut self, ty: Word, var: Word) -> Word {
        self.b.load(ty, None, var, None, []).expect("in a block")
    }

    pub fn write(&mut self, var: Word, value: Word) {
        self.b.store(var, value, None, []).expect("in a block");
    }

    /// Ends the open block with a branch to `to` and opens a fresh one that nothing reaches.
    fn jump(&mut self, to: Word) {
        self.branch_out(to);
        self.begin_dead_block();
    }

    /// Ends the open block with a branch to `to`, or with `OpUnreachable` when nothing
    /// reaches it (a block that follows a jump belongs to no construct, so it may not branch
    /// into one).
    fn branch_out(&mut self, to: Word) {
        if self.in_dead_block {
            self.b.unreachable().expect("in a block");
        } else {
            self.b.branch(to).expect("in a block");
        }
    }

    fn begin_dead_block(&mut self) {
        self.b.begin_block(None).expect("in a function");
        self.in_dead_block = true;
    }

    /// Opens the block `label`, which the structure reaches.
    fn begin_live_block(&mut self, label: Word) {
        self.b.begin_block(Some(label)).expect("in a function");
        self.in_dead_block = false;
    }

    /// Branches on `cond`; goes on in the accepting arm.
    pub fn begin_if(&mut self, cond: Word) -> IfFrame {
        let count = self.count_at_if(cond);
        let (accept, reject, merge) = (self.b.id(), self.b.id(), self.b.id());
        self.b
            .selection_merge(merge, SelectionControl::NONE)
            .expect("in a block");
        self.b
            .branch_conditional(cond, accept, reject, [])
            .expect("in a block");
        self.begin_live_block(accept);
        IfFrame {
            merge,
            reject,
            written: self.written,
            count,
        }
    }

    /// Leaves the accepting arm; goes on in the rejecting arm.
    pub fn begin_else(&mut self, frame: &IfFrame) {
        self.rejects_begun.insert(frame.reject);
        self.branch_out(frame.merge);
        self.begin_live_block(frame.reject);
    }

    /// Leaves the rejecting arm; goes on after the `if`. (An `if` without `begin_else` gets
    /// an empty rejecting arm.)
    pub fn end_if(&mut self, frame: IfFrame) {
        self.branch_out(frame.merge);
        if !self.rejects_begun.remove(&frame.reject) {
            self.begin_live_block(frame.reject);
            self.b.branch(frame.merge).expect("in a block");
        }
        self.begin_live_block(frame.merge);
        self.count_after_if(frame.count, frame.written);
    }

    /// Starts a loop; goes on in its body.
    pub fn begin_loop(&mut self) -> LoopFrame {
        self.begin_loop_with(LoopControl::NONE)
    }

    /// Starts a loop the driver is asked to treat as `control` says; goes on in its body.
    pub fn begin_loop_with(&mut self, control: LoopControl) -> LoopFrame {
        if self.loop_limit > 0 {
            self.loop_counter();
            self.written.loops += 1;
        }
        let (header, body, continuing, merge) =
            (self.b.id(), self.b.id(), self.b.id(), self.b.id());
        let bool_ty = self.b.type_bool();
        let leave = self.function_variable(bool_ty);
        let no = self.b.constant_false(bool_ty);
        self.write(leave, no);
        self.branch_out(header);
        self.begin_live_block(header);
        self.b
            .loop_merge(merge, continuing, control, [])
            .expect("in a block");
        self.b.branch(body).expect("in a block");
        self.begin_live_block(body);
        self.open_loops.push(OpenLoop {
            merge,
            in_continuing: false,
            returned_inside: false,
        });
        LoopFrame {
            header,
            continuing,
            merge,
            leave,
            written: self.written,
        }
    }

    /// Leaves the body for the continuing part (where `continue` goes too).
    pub fn begin_continuing(&mut self, frame: LoopFrame) {
        if let Some(open) = self.open_loops.last_mut() {
            open.in_continuing = true;
        }
        self.branch_out(frame.continuing);
        self.begin_live_block(frame.continuing);
    }

    /// Leaves the continuing part (back to the header, or out when a `break` in it set the
    /// loop's flag); goes on after the loop.
    pub fn end_loop(&mut self, frame: LoopFrame) {
        if self.in_dead_block {
            self.b.unreachable().expect("in a block");
        } else {
            if self.written.continues > frame.written.continues {
                // Lanes that went on to the next iteration skipped the rest of the body.
                self.count_after_loop(frame.written);
            }
            self.count_loop_step();
            let bool_ty = self.b.type_bool();
            let leave = self.read(bool_ty, frame.leave);
            self.b
                .branch_conditional(leave, frame.merge, frame.header, [])
                .expect("in a block");
        }
        self.begin_live_block(frame.merge);
        self.count_loop_step();
        self.count_after_loop(frame.written);
        let open = self.open_loops.pop().expect("the loop is open");
        if let (true, Some(returned)) = (open.returned_inside, self.returned) {
            let bool_ty = self.b.type_bool();
            let taken = self.read(bool_ty, returned);
            let frame = self.begin_if(taken);
            self.jump_return();
            self.end_if(frame);
        }
    }

    /// A `break` in the loop's continuing part: sets the flag the back edge reads (the
    /// lowering guards what follows it in the continuing part by the flag).
    pub fn break_from_continuing(&mut self, frame: LoopFrame) {
        let bool_ty = self.b.type_bool();
        let yes = self.b.constant_true(bool_ty);
        self.write(frame.leave, yes);
    }

    pub fn jump_break(&mut self, frame: LoopFrame) {
        self.jump(frame.merge);
    }

    pub fn jump_continue(&mut self, frame: LoopFrame) {
        self.written.continues += 1;
        self.jump(frame.continuing);
    }

    /// Ends the invocation (in a helper function: returns from it). Inside a loop of the
    /// entry point it sets the entry's `returned` flag and leaves the loop, and each loop it
    /// leaves so returns after it in the same way: NVIDIA's Vulkan compiler (driver 580)
    /// crashed on an `OpReturn` inside a loop inside a loop (fuzz seed 55301 kernel 34307:
    /// `fuzz_vulkan_return_in_nested_loops`). From a loop's continuing part (which only its
    /// back edge may leave) it returns at once.
    pub fn jump_return(&mut self) {
        let top = self.open_loops.last().copied();
        match top {
            Some(open) if !self.in_helper && !open.in_continuing && !self.in_dead_block => {
                let returned = self.returned_flag();
                let bool_ty = self.b.type_bool();
                let yes = self.b.constant_true(bool_ty);
                self.write(returned, yes);
                if let Some(open) = self.open_loops.last_mut() {
                    open.returned_inside = true;
                }
                self.jump(open.merge);
            }
            _ => {
                if self.in_dead_block {
                    self.b.unreachable().expect("in a block");
                } else {
                    self.return_here();
                }
                self.begin_dead_block();
            }
        }
    }

    /// The entry point's flag that a `return` inside a loop was taken (false where it
    /// starts).
    fn returned_flag(&mut self) -> Word {
        if let Some(flag) = self.returned {
            return flag;
        }
        let bool_ty = self.b.type_bool();
        let no = self.b.constant_false(bool_ty);
        let flag = self.function_variable_with(bool_ty, Some(no));
        self.returned = Some(flag);
        flag
    }
}
