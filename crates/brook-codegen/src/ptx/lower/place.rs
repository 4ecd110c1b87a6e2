//! Places: locals, output elements, reduction accumulators and scatter elements, with their
//! paths of fields, components and (clamped) array indices.

use super::{Binding, LocalStore, Lower};
use crate::leaf_walk::LeafOps;
use crate::leaves::{leaf_count, leaves, Leaf};
use crate::ptx::emit::{Class, Reg};
use crate::ptx::CompileError;
use brook_ir::{Place, PlaceRoot, Type};

/// A place with its root found and its path walked.
enum Resolved {
    /// Leaves `first..first + count` of a value held in registers.
    Vars {
        regs: Vec<Reg>,
        first: usize,
        count: usize,
    },
    /// A value in memory at `addr` (in `space`), laid out as `layout`; `whole` when it is a
    /// whole stream element (vector accesses allowed).
    Memory {
        addr: Reg,
        layout: Vec<Leaf>,
        space: &'static str,
        whole: Option<Type>,
    },
    /// A read-only value's leaves.
    Values(Vec<Reg>),
    /// Nothing (an unbound parameter): loads read zeros, stores are dropped.
    Nowhere(Type),
}

/// Where a path starts.
enum Root {
    Vars(Vec<Reg>),
    Memory(Reg, &'static str),
    Values(Vec<Reg>),
    Nowhere,
}

impl Lower<'_> {
    pub fn load_place(&mut self, place: &Place) -> Result<Vec<Reg>, CompileError> {
        let (resolved, _) = self.resolve(place, false)?;
        Ok(match resolved {
            Resolved::Vars { regs, first, count } => {
                // A copy: later stores to the local must not change this value.
                regs[first..first + count]
                    .iter()
                    .map(|&r| {
                        let copy = self.e.reg(r.class);
                        self.e.mov(copy, r);
                        copy
                    })
                    .collect()
            }
            Resolved::Memory {
                addr,
                whole: Some(ty),
                space,
                ..
            } => self.load_value(&ty, addr, space, true),
            Resolved::Memory {
                addr,
                layout,
                space,
                ..
            } => layout
                .iter()
                .map(|leaf| self.load_scalar(leaf.kind, addr, leaf.offset, space))
                .collect(),
            Resolved::Values(values) => values,
            Resolved::Nowhere(ty) => self.zeros(&ty),
        })
    }

    /// Writes `values` to `place`; a scatter element out of range is not written.
    pub fn store_place(&mut self, place: &Place, values: &[Reg]) -> Result<(), CompileError> {
        let (resolved, in_range) = self.resolve(place, true)?;
        let skip = in_range.map(|flag| {
            let skip = self.e.label();
            self.e.bra_unless(flag, skip);
            skip
        });
        match resolved {
            Resolved::Vars { regs, first, .. } => {
                for (reg, &value) in regs[first..].iter().zip(values) {
                    self.e.mov(*reg, value);
                }
            }
            Resolved::Memory {
                addr,
                whole: Some(ty),
                space,
                ..
            } => self.store_value(&ty, values, addr, space, true),
            Resolved::Memory {
                addr,
                layout,
                space,
                ..
            } => self.store_leaves(&layout, values, addr, space),
            Resolved::Values(_) | Resolved::Nowhere(_) => {}
        }
        if let Some(skip) = skip {
            self.e.at(skip);
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
    ) -> Result<(Root, Option<Reg>), CompileError> {
        let p = match root {
            PlaceRoot::Local(l) => {
                return Ok((
                    match &self.locals[l.index()] {
                        LocalStore::Vars(regs) => Root::Vars(regs.clone()),
                        LocalStore::Memory { addr, .. } => Root::Memory(*addr, ""),
                    },
                    None,
                ))
            }
            PlaceRoot::Output(p) | PlaceRoot::Scatter { param: p, .. } => *p,
        };
        let binding = self.bindings[p.0 as usize].clone();
        Ok(match (root, binding) {
            (PlaceRoot::Output(_), Binding::Element { addr }) => {
                (Root::Memory(addr, "global"), None)
            }
            (PlaceRoot::Output(_), Binding::Vars(regs)) => (Root::Vars(regs), None),
            (PlaceRoot::Output(_), Binding::Values(values)) => (Root::Values(values), None),
            (PlaceRoot::Scatter { indices, .. }, Binding::Array { stream }) => {
                if !for_store {
                    let index = crate::lower::launch::clamped_element(self, &stream, indices)?;
                    let addr = self.element_address(stream.base, index, stream.size);
                    return Ok((Root::Memory(addr, "global"), None));
                }
                let mut at = Vec::with_capacity(indices.len());
                let mut in_range: Option<Reg> = None;
                for (&h, &extent) in indices.iter().zip(&stream.shape) {
                    let i = self.index_value(h)?;
                    let ok = self
                        .e
                        .compute(Class::Pred, |r| format!("setp.lt.u64 {r}, {i}, {extent}"));
                    in_range = Some(match in_range {
                        Some(all) => self
                            .e
                            .compute(Class::Pred, |r| format!("and.pred {r}, {all}, {ok}")),
                        None => ok,
                    });
                    at.push(i);
                }
                let pitch = stream.pitch[..at.len()].to_vec();
                let index = self.element_index(stream.offset, &at, &pitch);
                let addr = self.element_address(stream.base, index, stream.size);
                (Root::Memory(addr, "global"), in_range)
            }
            _ => (Root::Nowhere, None),
        })
    }

    fn resolve(
        &mut self,
        place: &Place,
        for_store: bool,
    ) -> Result<(Resolved, Option<Reg>), CompileError> {
        let mut ty = self.root_type(&place.root);
        let (root, in_range) = self.root(&place.root, for_store)?;
        let resolved = match root {
            Root::Memory(addr, space) => {
                let whole = (place.path.is_empty() && space == "global").then(|| ty.clone());
                let (addr, offset) = self.walk_memory(addr, &mut ty, &place.path)?;
                let layout = leaves(self.module, &ty)
                    .into_iter()
                    .map(|leaf| Leaf {
                        kind: leaf.kind,
                        offset: leaf.offset + offset,
                    })
                    .collect();
                Resolved::Memory {
                    addr,
                    layout,
                    space,
                    whole,
                }
            }
            Root::Vars(regs) => {
                let first = self.walk_leaves(&mut ty, &place.path)?;
                let count = leaf_count(self.module, &ty);
                Resolved::Vars { regs, first, count }
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
