//! Places: locals, output elements, reduction accumulators and scatter elements, with their
//! paths of fields, components and (clamped) array indices.

use super::{Binding, LocalStore, Lower};
use crate::cpu::layout::{leaf_count, leaves, Leaf};
use crate::cpu::CompileError;
use crate::leaf_walk::LeafOps;
use brook_ir::{Place, PlaceRoot, Type};
use cranelift_codegen::ir::{condcodes::IntCC, InstBuilder, Value};
use cranelift_frontend::Variable;

/// A place with its root found and its path walked.
enum Resolved {
    /// Leaves `first..first + count` of a value held in variables.
    Vars {
        vars: Vec<Variable>,
        first: usize,
        count: usize,
    },
    /// A value in memory at `addr`, laid out as `layout`.
    Memory { addr: Value, layout: Vec<Leaf> },
    /// A read-only value's leaves.
    Values(Vec<Value>),
    /// Nothing (an unbound parameter): loads read zeros, stores are dropped.
    Nowhere(Type),
}

/// Where a path starts.
enum Root {
    Vars(Vec<Variable>),
    /// At `addr` plus a constant byte offset.
    Memory(Value, u32),
    Values(Vec<Value>),
    Nowhere,
}

impl Lower<'_, '_> {
    pub fn load_place(&mut self, place: &Place) -> Result<Vec<Value>, CompileError> {
        let (resolved, _) = self.resolve(place, false)?;
        Ok(match resolved {
            Resolved::Vars { vars, first, count } => vars[first..first + count]
                .iter()
                .map(|&v| self.b.use_var(v))
                .collect(),
            Resolved::Memory { addr, layout } => layout
                .iter()
                .map(|leaf| self.load_scalar(leaf.kind, addr, leaf.offset))
                .collect(),
            Resolved::Values(values) => values,
            Resolved::Nowhere(ty) => self.zeros(&ty),
        })
    }

    /// Writes `values` to `place`; a scatter element out of range is not written.
    pub fn store_place(&mut self, place: &Place, values: &[Value]) -> Result<(), CompileError> {
        let (resolved, in_range) = self.resolve(place, true)?;
        let done = in_range.map(|flag| {
            let write = self.b.create_block();
            let done = self.b.create_block();
            self.b.ins().brif(flag, write, &[], done, &[]);
            self.b.seal_block(write);
            self.b.switch_to_block(write);
            done
        });
        match resolved {
            Resolved::Vars { vars, first, .. } => {
                for (var, &value) in vars[first..].iter().zip(values) {
                    self.b.def_var(*var, value);
                }
            }
            Resolved::Memory { addr, layout } => self.store_leaves(&layout, values, addr),
            Resolved::Values(_) | Resolved::Nowhere(_) => {}
        }
        if let Some(done) = done {
            self.b.ins().jump(done, &[]);
            self.b.switch_to_block(done);
            self.b.seal_block(done);
        }
        Ok(())
    }

    fn root_type(&self, root: &PlaceRoot) -> Type {
        match root {
            PlaceRoot::Local(l) => self.kernel.locals[*l].ty.clone(),
            PlaceRoot::Output(p) | PlaceRoot::Scatter { param: p, .. } => {
                self.kernel.params[p.0 as usize].ty.clone()
            }
        }
    }

    /// Finds the root (and, for a scatter store, whether the element is in range).
    fn root(
        &mut self,
        root: &PlaceRoot,
        for_store: bool,
    ) -> Result<(Root, Option<Value>), CompileError> {
        let p = match root {
            PlaceRoot::Local(l) => {
                return Ok((
                    match &self.locals[l.index()] {
                        LocalStore::Vars(vars) => Root::Vars(vars.clone()),
                        LocalStore::Memory(addr) => Root::Memory(*addr, 0),
                        LocalStore::Frame { base, offset } => Root::Memory(*base, *offset),
                    },
                    None,
                ))
            }
            PlaceRoot::Output(p) | PlaceRoot::Scatter { param: p, .. } => *p,
        };
        let binding = self.bindings[p.0 as usize].clone();
        Ok(match (root, binding) {
            (PlaceRoot::Output(_), Binding::Element { addr: cursor }) => {
                (Root::Memory(self.b.use_var(cursor), 0), None)
            }
            (PlaceRoot::Output(_), Binding::Vars(vars)) => (Root::Vars(vars), None),
            (PlaceRoot::Output(_), Binding::Values(values)) => (Root::Values(values), None),
            (PlaceRoot::Scatter { indices, .. }, Binding::Array { stream }) => {
                if !for_store {
                    let index = crate::lower::launch::clamped_element(self, &stream, indices)?;
                    let addr = self.element_address(stream.base, index, stream.size);
                    return Ok((Root::Memory(addr, 0), None));
                }
                let mut at = Vec::with_capacity(indices.len());
                let mut in_range = None;
                for (&h, &extent) in indices.iter().zip(&stream.shape) {
                    let i = self.index_value(h)?;
                    let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, i, extent);
                    in_range = Some(match in_range {
                        Some(all) => self.b.ins().band(all, ok),
                        None => ok,
                    });
                    at.push(i);
                }
                let pitch = stream.pitch[..at.len()].to_vec();
                let index = self.element_index(stream.offset, &at, &pitch);
                let addr = self.element_address(stream.base, index, stream.size);
                (Root::Memory(addr, 0), in_range)
            }
            _ => (Root::Nowhere, None),
        })
    }

    fn resolve(
        &mut self,
        place: &Place,
        for_store: bool,
    ) -> Result<(Resolved, Option<Value>), CompileError> {
        let mut ty = self.root_type(&place.root);
        let (root, in_range) = self.root(&place.root, for_store)?;
        let resolved = match root {
            Root::Memory(addr, root_offset) => {
                let (addr, offset) = self.walk_memory(addr, &mut ty, &place.path)?;
                let offset = offset + root_offset;
                let layout = leaves(self.module, &ty)
                    .into_iter()
                    .map(|leaf| Leaf {
                        kind: leaf.kind,
                        offset: leaf.offset + offset,
                    })
                    .collect();
                Resolved::Memory { addr, layout }
            }
            Root::Vars(vars) => {
                let first = self.walk_leaves(&mut ty, &place.path)?;
                let count = leaf_count(self.module, &ty);
                Resolved::Vars { vars, first, count }
            }
            Root::Values(values) => {
                let first = self.walk_leaves(&mut ty, &place.path)?;
                let count = leaf_count(self.module, &ty);
                Resolved::Values(values[first..first + count].to_vec())
            }
            Root::Nowhere => {
                self.walk_leaves(&mut ty, &place.path)?;
                Resolved::Nowhere(ty)
            }
        };
        Ok((resolved, in_range))
    }
}
