//! Structured control flow and function variables on a [`Shell`], in the shape the shared
//! lowering's `Target` asks for (`begin_if`/`begin_else`/`end_if`, loops with a continuing
//! part, `break`, `continue`, `return`) and SPIR-V requires: every selection names its merge
//! block, every loop its merge and continue blocks. A jump ends its block; what follows it
//! goes into a fresh block that nothing reaches (SPIR-V allows those), so a block is always
//! open.
//!
//! Some jumps go through the ends of the constructs they leave: a `return` inside a loop of
//! the entry point (NVIDIA's Vulkan compiler crashed on an `OpReturn` in nested loops), and,
//! where loops are counted ([`super::loop_limit`]), any jump out of an `if` (its end
//! reconciles the lanes' loop counts, and lanes that jumped past it would not be counted).
//! Such a jump stores its code (a `return`, a `break` or `continue` of the loop at a depth)
//! in the function's jump variable and branches to the end of the innermost open construct;
//! each construct's end sends the lanes with a code on, to the next end or to their target.

use super::loop_limit::{CountAtIf, Written};
use super::shell::Shell;
use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{LoopControl, Op, SelectionControl, StorageClass, Word};

/// An `if` being written: where both arms meet, and the rejecting arm's block.
pub struct IfFrame {
    merge: Word,
    reject: Word,
    /// Whether the `if` is on the stack of open constructs (where loops are counted).
    open: bool,
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

/// A construct still open, innermost last on the shell's stack (`Shell::open`): a loop, or
/// (where loops are counted, in the entry point) an `if`.
#[derive(Clone, Debug)]
pub struct Open {
    merge: Word,
    /// A loop's continue target; `None` for an `if`.
    continuing: Option<Word>,
    /// The code stands in the loop's continuing part (which only its back edge may leave).
    in_continuing: bool,
    /// Jumps for beyond the construct went through its end: they go on from there.
    passed: bool,
    /// A loop's own `break`s and `continue`s that come through the end of an `if` inside it.
    breaks: bool,
    continues: bool,
    /// A selection that skips the rest of an `if`'s arm for lanes passing a jump on (its
    /// merge is at the arm's end, where the `if`'s arm ends: `Shell::close_guards`).
    guard: bool,
}

/// Where a jump through the constructs' ends goes: its code in the jump variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Jump {
    Return,
    /// The `break` of the loop at this depth of the stack.
    Break(usize),
    /// Its `continue`.
    Continue(usize),
}

impl Jump {
    /// The code (0: no jump).
    fn code(self) -> u32 {
        match self {
            Jump::Return => 1,
            Jump::Break(depth) => 2 + 2 * depth as u32,
            Jump::Continue(depth) => 3 + 2 * depth as u32,
        }
    }
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
        // Every `if` where loops are counted (one begun after a jump too: code in its arms
        // is written as reachable, and its jumps must end at its merge).
        let open = self.loop_limit > 0 && !self.in_helper;
        if open {
            self.open.push(Open {
                merge,
                continuing: None,
                in_continuing: false,
                passed: false,
                breaks: false,
                continues: false,
                guard: false,
            });
        }
        IfFrame {
            merge,
            reject,
            open,
            written: self.written,
            count,
        }
    }

    /// Leaves the accepting arm; goes on in the rejecting arm.
    pub fn begin_else(&mut self, frame: &IfFrame) {
        if frame.open {
            self.close_guards();
        }
        self.rejects_begun.insert(frame.reject);
        self.branch_out(frame.merge);
        self.begin_live_block(frame.reject);
    }

    /// Leaves the rejecting arm; goes on after the `if`. (An `if` without `begin_else` gets
    /// an empty rejecting arm.)
    pub fn end_if(&mut self, frame: IfFrame) {
        if frame.open {
            self.close_guards();
        }
        self.branch_out(frame.merge);
        if !self.rejects_begun.remove(&frame.reject) {
            self.begin_live_block(frame.reject);
            self.b.branch(frame.merge).expect("in a block");
        }
        self.begin_live_block(frame.merge);
        self.count_after_if(frame.count, frame.written);
        if frame.open {
            let open = self.open.pop().expect("the if is open");
            if open.passed {
                self.pass_on();
            }
        }
    }

    /// Ends the selections that skip the rest of the innermost open `if`'s arm (lanes with
    /// a jump code go on to the `if`'s end, which sends them on).
    fn close_guards(&mut self) {
        while self.open.last().is_some_and(|open| open.guard) {
            let guard = self.open.pop().expect("a guard is open");
            self.branch_out(guard.merge);
            self.begin_live_block(guard.merge);
        }
    }

    /// A selection on `cond` that the stack of open constructs and the loop counts do not
    /// see (the dispatch of jumps); goes on in its accepting arm.
    fn begin_plain_if(&mut self, cond: Word) -> Word {
        let (accept, merge) = (self.b.id(), self.b.id());
        self.selection(cond, merge, (accept, merge), accept);
        merge
    }

    /// Writes a selection on `cond` that merges at `merge` (to `accept` where `cond` holds,
    /// else to `reject`; one of them may be `merge`), and goes on in block `next`.
    fn selection(&mut self, cond: Word, merge: Word, (accept, reject): (Word, Word), next: Word) {
        self.b
            .selection_merge(merge, SelectionControl::NONE)
            .expect("in a block");
        self.b
            .branch_conditional(cond, accept, reject, [])
            .expect("in a block");
        self.begin_live_block(next);
    }

    /// Ends [`Shell::begin_plain_if`]'s arm (which jumped) and goes on after it.
    fn end_plain_if(&mut self, merge: Word) {
        self.branch_out(merge);
        self.begin_live_block(merge);
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
        self.open.push(Open {
            merge,
            continuing: Some(continuing),
            in_continuing: false,
            passed: false,
            breaks: false,
            continues: false,
            guard: false,
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
        if let Some(open) = self.open.last_mut() {
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
        let open = self.open.pop().expect("the loop is open");
        if open.passed {
            self.pass_on();
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
        match self.depth_of(frame.merge) {
            Some(depth) if depth + 1 < self.open.len() && !self.in_dead_block => {
                self.jump_through(Jump::Break(depth))
            }
            _ => self.jump(frame.merge),
        }
    }

    pub fn jump_continue(&mut self, frame: LoopFrame) {
        self.written.continues += 1;
        match self.depth_of(frame.merge) {
            Some(depth) if depth + 1 < self.open.len() && !self.in_dead_block => {
                self.jump_through(Jump::Continue(depth))
            }
            _ => self.jump(frame.continuing),
        }
    }

    /// Ends the invocation (in a helper function: returns from it). Inside an open
    /// construct of the entry point it leaves through the constructs' ends, returning after
    /// the outermost: NVIDIA's Vulkan compiler (driver 580) crashed on an `OpReturn` inside
    /// a loop inside a loop (fuzz seed 55301 kernel 34307:
    /// `fuzz_vulkan_return_in_nested_loops`), and where loops are counted the ends of `if`s
    /// count what the returning lanes looped. From a loop's continuing part (which only its
    /// back edge may leave) it returns at once.
    pub fn jump_return(&mut self) {
        match self.open.last() {
            Some(top) if !self.in_helper && !top.in_continuing && !self.in_dead_block => {
                self.jump_through(Jump::Return)
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

    /// The depth on the stack of open constructs of the loop that ends at `merge`.
    fn depth_of(&self, merge: Word) -> Option<usize> {
        self.open.iter().rposition(|open| open.merge == merge)
    }

    /// Stores `jump`'s code and branches to the end of the innermost open construct, marking
    /// the constructs it passes (and its target loop) so their ends send it on.
    fn jump_through(&mut self, jump: Jump) {
        let var = self.jump_variable();
        let code = self.const_u32(jump.code());
        self.write(var, code);
        let passed_from = match jump {
            Jump::Return => 0,
            Jump::Break(depth) | Jump::Continue(depth) => depth + 1,
        };
        for open in &mut self.open[passed_from..] {
            open.passed = true;
        }
        match jump {
            Jump::Return => {}
            Jump::Break(depth) => self.open[depth].breaks = true,
            Jump::Continue(depth) => self.open[depth].continues = true,
        }
        let innermost = self.open.last().expect("a construct is open").merge;
        self.jump(innermost);
    }

    /// Where a construct that jumps passed has ended: lanes with a jump code go on — to the
    /// enclosing loop's end or next iteration where the jump is its own (the code cleared),
    /// else to the end of the enclosing construct, or return where none is open.
    fn pass_on(&mut self) {
        let var = self.jump_variable();
        let u32_ty = self.u32_ty();
        let code = self.read(u32_ty, var);
        let none = self.const_u32(0);
        let bool_ty = self.b.type_bool();
        let pending = self
            .b
            .i_not_equal(bool_ty, None, code, none)
            .expect("in a block");
        let depth = self.open.len().checked_sub(1);
        if self
            .open
            .last()
            .is_some_and(|open| open.continuing.is_none())
        {
            // The rest of the enclosing `if`'s arm skipped, to its end (a branch to its
            // merge from inside another selection would not be a structured exit); jumps
            // inside the skipped part end at the guard's merge.
            let (skip, rest) = (self.b.id(), self.b.id());
            self.selection(pending, skip, (skip, rest), rest);
            self.open.push(Open {
                merge: skip,
                continuing: None,
                in_continuing: false,
                passed: false,
                breaks: false,
                continues: false,
                guard: true,
            });
            return;
        }
        let after = self.begin_plain_if(pending);
        match self.open.last().cloned() {
            Some(open) if open.continuing.is_some() && !open.in_continuing => {
                let depth = depth.expect("a loop is open");
                let own = [
                    (open.breaks, Jump::Break(depth), open.merge),
                    (
                        open.continues,
                        Jump::Continue(depth),
                        open.continuing.unwrap_or(open.merge),
                    ),
                ];
                for (taken, jump, to) in own {
                    if taken {
                        let value = self.const_u32(jump.code());
                        let is_it = self
                            .b
                            .i_equal(bool_ty, None, code, value)
                            .expect("in a block");
                        let next = self.begin_plain_if(is_it);
                        self.write(var, none);
                        self.jump(to);
                        self.end_plain_if(next);
                    }
                }
                self.jump(open.merge);
            }
            // Only a `return` comes here: nothing open, or a loop's continuing part.
            _ => {
                self.return_here();
                self.begin_dead_block();
            }
        }
        self.end_plain_if(after);
    }

    /// The entry point's jump variable (0, no jump, where it starts).
    fn jump_variable(&mut self) -> Word {
        if let Some(var) = self.jump_code {
            return var;
        }
        let u32_ty = self.u32_ty();
        let none = self.const_u32(0);
        let var = self.function_variable_with(u32_ty, Some(none));
        self.jump_code = Some(var);
        var
    }
}
