//! Statements: structured control flow onto Cranelift blocks.
//!
//! After a jump (`break`, `continue`, `return`, a barrier) lowering goes on in a fresh block
//! without predecessors, so the builder always stands in an open block; Cranelift drops the
//! unreachable ones. Each block is sealed as soon as its last predecessor is known, so SSA
//! construction adds block parameters only where values really merge (sealing everything at
//! the end made every variable a parameter of every block: quadratic in inlined code).

use super::{Flow, Lower};
use crate::cpu::CompileError;
use crate::leaf_walk::LeafOps;
use brook_ir::{Block, Stmt};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData};

impl Lower<'_, '_> {
    pub fn block(&mut self, block: &Block) -> Result<(), CompileError> {
        for statement in block.iter() {
            self.forget();
            self.statement(&statement.stmt)?;
        }
        self.forget();
        Ok(())
    }

    /// A block without predecessors (code after a jump): sealed at once.
    fn fresh_block(&mut self) {
        let next = self.b.create_block();
        self.b.switch_to_block(next);
        self.b.seal_block(next);
    }

    /// Jumps to `target` unless the builder stands in unreachable code (after a `break`, say):
    /// a jump from there would make `target` look like a merge of values that never flow.
    fn jump_if_reachable(&mut self, target: cranelift_codegen::ir::Block) {
        if !self.b.is_unreachable() {
            self.b.ins().jump(target, &[]);
        }
    }

    fn statement(&mut self, stmt: &Stmt) -> Result<(), CompileError> {
        // Dead code (after a jump) is not lowered, except where it holds barriers: each barrier
        // owns a resume block that must be filled.
        if self.b.is_unreachable() && count_barriers_in(stmt) == 0 {
            return Ok(());
        }
        match stmt {
            Stmt::Store { place, value } => {
                let values = self.expr(*value)?;
                self.store_place(place, &values)?;
            }
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                let c = self.scalar(*cond)?;
                let (then_block, else_block, merge) = (
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                );
                self.b.ins().brif(c, then_block, &[], else_block, &[]);
                self.b.seal_block(then_block);
                self.b.seal_block(else_block);
                self.b.switch_to_block(then_block);
                self.block(accept)?;
                self.jump_if_reachable(merge);
                self.b.switch_to_block(else_block);
                self.block(reject)?;
                self.jump_if_reachable(merge);
                self.b.switch_to_block(merge);
                self.b.seal_block(merge);
            }
            Stmt::Loop { body, continuing } => {
                let (header, next, exit) = (
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                );
                self.b.ins().jump(header, &[]);
                self.b.switch_to_block(header);
                self.loops.push((next, exit));
                self.block(body)?;
                self.jump_if_reachable(next);
                self.b.switch_to_block(next);
                self.b.seal_block(next);
                self.block(continuing)?;
                self.jump_if_reachable(header);
                self.b.seal_block(header);
                self.loops.pop();
                self.b.switch_to_block(exit);
                self.b.seal_block(exit);
            }
            Stmt::Break => {
                if let Some(&(_, exit)) = self.loops.last() {
                    self.b.ins().jump(exit, &[]);
                    self.fresh_block();
                }
            }
            Stmt::Continue => {
                if let Some(&(next, _)) = self.loops.last() {
                    self.b.ins().jump(next, &[]);
                    self.fresh_block();
                }
            }
            Stmt::Return => {
                match &self.flow {
                    Flow::Jump(target) => {
                        let target = *target;
                        self.b.ins().jump(target, &[]);
                    }
                    Flow::Resumable { .. } => {
                        let finished = self.iconst(types::I32, 0);
                        self.b.ins().return_(&[finished]);
                    }
                }
                self.fresh_block();
            }
            Stmt::Barrier => self.barrier(),
        }
        Ok(())
    }

    /// In a resumable thread: saves the resume point, returns 1 ("waiting at a barrier"), and
    /// goes on in the block the next call resumes at. Elsewhere a barrier does nothing.
    fn barrier(&mut self) {
        let Flow::Resumable {
            state,
            resumes,
            next,
        } = &mut self.flow
        else {
            return;
        };
        let (state, resume) = (*state, resumes[*next]);
        *next += 1;
        let point = *next as i64;
        let point = self.iconst(types::I32, point);
        self.b.ins().store(MemFlagsData::trusted(), point, state, 0);
        let waiting = self.iconst(types::I32, 1);
        self.b.ins().return_(&[waiting]);
        self.b.switch_to_block(resume);
    }
}

/// How many barriers a block holds (each is a resume point of a resumable thread).
pub fn count_barriers(block: &Block) -> usize {
    block.iter().map(|s| count_barriers_in(&s.stmt)).sum()
}

fn count_barriers_in(stmt: &Stmt) -> usize {
    match stmt {
        Stmt::Barrier => 1,
        Stmt::If { accept, reject, .. } => count_barriers(accept) + count_barriers(reject),
        Stmt::Loop { body, continuing } => count_barriers(body) + count_barriers(continuing),
        _ => 0,
    }
}
