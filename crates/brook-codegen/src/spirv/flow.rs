//! Structured control flow and function variables on a [`Shell`], in the shape the shared
//! lowering's `Target` asks for (`begin_if`/`begin_else`/`end_if`, loops with a continuing
//! part, `break`, `continue`, `return`) and SPIR-V requires: every selection names its merge
//! block, every loop its merge and continue blocks. A jump ends its block; what follows it
//! goes into a fresh block that nothing reaches (SPIR-V allows those), so a block is always
//! open.

use super::shell::Shell;
use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{LoopControl, Op, SelectionControl, StorageClass, Word};

/// An `if` being written: where both arms meet, and the rejecting arm's block.
pub struct IfFrame {
    merge: Word,
    reject: Word,
}

/// A loop being written.
#[derive(Clone, Copy, Debug)]
pub struct LoopFrame {
    header: Word,
    continuing: Word,
    merge: Word,
}

impl Shell {
    /// A variable of type `ty` in the function (declared in its first block, as SPIR-V
    /// requires).
    pub fn function_variable(&mut self, ty: Word) -> Word {
        let ptr = self.b.type_pointer(None, StorageClass::Function, ty);
        let id = self.b.id();
        let inst = Instruction::new(
            Op::Variable,
            Some(ptr),
            Some(id),
            vec![Operand::StorageClass(StorageClass::Function)],
        );
        let f = self.b.selected_function().expect("in a function");
        self.b.module_mut().functions[f].blocks[0]
            .instructions
            .insert(0, inst);
        id
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
        self.b.branch(to).expect("in a block");
        self.b.begin_block(None).expect("in a function");
    }

    /// Branches on `cond`; goes on in the accepting arm.
    pub fn begin_if(&mut self, cond: Word) -> IfFrame {
        let (accept, reject, merge) = (self.b.id(), self.b.id(), self.b.id());
        self.b
            .selection_merge(merge, SelectionControl::NONE)
            .expect("in a block");
        self.b
            .branch_conditional(cond, accept, reject, [])
            .expect("in a block");
        self.b.begin_block(Some(accept)).expect("in a function");
        IfFrame { merge, reject }
    }

    /// Leaves the accepting arm; goes on in the rejecting arm.
    pub fn begin_else(&mut self, frame: &IfFrame) {
        self.b.branch(frame.merge).expect("in a block");
        self.b
            .begin_block(Some(frame.reject))
            .expect("in a function");
    }

    /// Leaves the rejecting arm; goes on after the `if`. (An `if` without `begin_else` gets
    /// an empty rejecting arm.)
    pub fn end_if(&mut self, frame: IfFrame) {
        self.b.branch(frame.merge).expect("in a block");
        let f = self.b.selected_function().expect("in a function");
        let reject_written = self.b.module_ref().functions[f]
            .blocks
            .iter()
            .any(|b| b.label_id() == Some(frame.reject));
        if !reject_written {
            self.b
                .begin_block(Some(frame.reject))
                .expect("in a function");
            self.b.branch(frame.merge).expect("in a block");
        }
        self.b
            .begin_block(Some(frame.merge))
            .expect("in a function");
    }

    /// Starts a loop; goes on in its body.
    pub fn begin_loop(&mut self) -> LoopFrame {
        let (header, body, continuing, merge) =
            (self.b.id(), self.b.id(), self.b.id(), self.b.id());
        self.b.branch(header).expect("in a block");
        self.b.begin_block(Some(header)).expect("in a function");
        self.b
            .loop_merge(merge, continuing, LoopControl::NONE, [])
            .expect("in a block");
        self.b.branch(body).expect("in a block");
        self.b.begin_block(Some(body)).expect("in a function");
        LoopFrame {
            header,
            continuing,
            merge,
        }
    }

    /// Leaves the body for the continuing part (where `continue` goes too).
    pub fn begin_continuing(&mut self, frame: LoopFrame) {
        self.b.branch(frame.continuing).expect("in a block");
        self.b
            .begin_block(Some(frame.continuing))
            .expect("in a function");
    }

    /// Leaves the continuing part (back to the header); goes on after the loop.
    pub fn end_loop(&mut self, frame: LoopFrame) {
        self.b.branch(frame.header).expect("in a block");
        self.b
            .begin_block(Some(frame.merge))
            .expect("in a function");
    }

    pub fn jump_break(&mut self, frame: LoopFrame) {
        self.jump(frame.merge);
    }

    pub fn jump_continue(&mut self, frame: LoopFrame) {
        self.jump(frame.continuing);
    }

    /// Ends the invocation.
    pub fn jump_return(&mut self) {
        self.b.ret().expect("in a block");
        self.b.begin_block(None).expect("in a function");
    }
}
