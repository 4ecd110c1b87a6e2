//! Statements: structured control flow onto labels and branches.

use super::Lower;
use crate::leaf_walk::LeafOps;
use crate::ptx::CompileError;
use brook_ir::{Block, Stmt};

impl Lower<'_> {
    pub fn block(&mut self, block: &Block) -> Result<(), CompileError> {
        for statement in block.iter() {
            self.forget();
            self.statement(&statement.stmt)?;
        }
        self.forget();
        Ok(())
    }

    fn statement(&mut self, stmt: &Stmt) -> Result<(), CompileError> {
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
                let (otherwise, merge) = (self.e.label(), self.e.label());
                self.e.bra_unless(c, otherwise);
                self.block(accept)?;
                self.e.bra(merge);
                self.e.at(otherwise);
                self.block(reject)?;
                self.e.at(merge);
            }
            Stmt::Loop { body, continuing } => {
                let (header, next, exit) = (self.e.label(), self.e.label(), self.e.label());
                self.e.at(header);
                self.loops.push((next, exit));
                self.block(body)?;
                self.e.at(next);
                self.block(continuing)?;
                self.e.bra(header);
                self.loops.pop();
                self.e.at(exit);
            }
            Stmt::Break => {
                if let Some(&(_, exit)) = self.loops.last() {
                    self.e.bra(exit);
                }
            }
            Stmt::Continue => {
                if let Some(&(next, _)) = self.loops.last() {
                    self.e.bra(next);
                }
            }
            Stmt::Return => {
                let ret = self.ret;
                self.e.bra(ret);
            }
            Stmt::Barrier => self.e.op("bar.sync 0"),
        }
        Ok(())
    }
}
