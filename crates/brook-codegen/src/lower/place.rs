//! Places — locals, output elements, reduction accumulators and scatter elements, with their
//! paths of fields, components and (clamped) array indices — and their loads and stores,
//! written once over [`Target`].
//!
//! A place's root is found first ([`Root`]), then its path is walked: through memory (an
//! address and a byte offset) or through the leaves of a value held in variables. A store to
//! a scatter element out of range is dropped; a load of one reads the clamped element.

use super::{launch, Binding, ExprWalk, Target};
use crate::leaves::{leaf_count, leaves, Leaf};
use brook_ir::{BinaryOp, Place, PlaceRoot, ScalarKind, Type};

/// Which memory a place is in (a backend may address them differently).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// A stream's element: an output, or a scatter array's element.
    Stream,
    /// A thread's local kept in memory (an array).
    Local,
    /// A thread group's shared local.
    Shared,
}

/// Where a place's path starts.
#[derive(Clone, Debug)]
pub enum Root<L, V> {
    /// A value held in variables, one per leaf.
    Vars(Vec<V>),
    /// A value in memory at `addr + offset`, in C layout.
    Memory { addr: L, offset: u32, space: Space },
    /// A read-only value's leaves.
    Values(Vec<L>),
    /// Nothing (an unbound parameter): loads read zeros, stores are dropped.
    Nowhere,
}

/// A value of type `ty` in memory at `addr`, its leaves at `layout`'s offsets.
#[derive(Clone, Debug)]
pub struct Memory<L> {
    pub addr: L,
    pub ty: Type,
    pub layout: Vec<Leaf>,
    pub space: Space,
    /// A whole stream element (not a part reached by a path): aligned to its type, so a
    /// backend may access it with vector instructions.
    pub whole: bool,
    /// A whole element of a local array (`lds[i]`): at a multiple of its size from the
    /// local's start, so a backend that aligns local memory to 16 bytes may access a vector
    /// element with vector instructions.
    pub element: bool,
}

/// A place with its root found and its path walked.
enum Resolved<L, V> {
    /// Leaves `first..first + count` of a value held in variables.
    Vars {
        vars: Vec<V>,
        first: usize,
        count: usize,
    },
    Memory(Memory<L>),
    /// A read-only value's leaves.
    Values(Vec<L>),
    /// Nothing: loads read zeros of this type, stores are dropped.
    Nowhere(Type),
}

/// A root or a resolved place, and for a scatter store whether its element is in range.
type WithRange<'ir, T, P> =
    Result<(P, Option<<T as Target<'ir>>::Leaf>), <T as Target<'ir>>::Error>;

/// The value at `place`.
pub fn load_place<'ir, T: Target<'ir>>(t: &mut T, place: &Place) -> Result<Vec<T::Leaf>, T::Error> {
    let (resolved, _) = resolve(t, place, false)?;
    Ok(match resolved {
        Resolved::Vars { vars, first, count } => vars[first..first + count]
            .iter()
            .map(|&v| t.snapshot_var(v))
            .collect(),
        Resolved::Memory(at) => t.load_memory(&at),
        Resolved::Values(values) => values,
        Resolved::Nowhere(ty) => t.zeros(&ty),
    })
}

/// Writes `values` to `place`; a scatter element out of range is not written.
pub fn store_place<'ir, T: Target<'ir>>(
    t: &mut T,
    place: &Place,
    values: &[T::Leaf],
) -> Result<(), T::Error> {
    let (resolved, in_range) = resolve(t, place, true)?;
    let guard = in_range.map(|flag| t.begin_guard(flag));
    match resolved {
        Resolved::Vars { vars, first, .. } => {
            for (&var, &value) in vars[first..].iter().zip(values) {
                t.write_var(var, value);
            }
        }
        Resolved::Memory(at) => t.store_memory(&at, values),
        Resolved::Values(_) | Resolved::Nowhere(_) => {}
    }
    if let Some(guard) = guard {
        t.end_guard(guard);
    }
    Ok(())
}

fn root_type<'ir, T: Target<'ir>>(t: &T, root: &PlaceRoot) -> Type {
    let kernel = t.kernel();
    match root {
        PlaceRoot::Local(l) => kernel.locals[*l].ty.clone(),
        PlaceRoot::Output(p) | PlaceRoot::Scatter { param: p, .. } => {
            kernel.params[p.0 as usize].ty.clone()
        }
    }
}

/// Finds the root (and, for a scatter store, whether the element is in range).
fn root<'ir, T: Target<'ir>>(
    t: &mut T,
    root: &PlaceRoot,
    for_store: bool,
) -> WithRange<'ir, T, Root<T::Leaf, T::Var>> {
    let element = |addr| Root::Memory {
        addr,
        offset: 0,
        space: Space::Stream,
    };
    let p = match root {
        PlaceRoot::Local(l) => return Ok((t.local(*l), None)),
        PlaceRoot::Output(p) | PlaceRoot::Scatter { param: p, .. } => *p,
    };
    Ok(match (root, t.binding(p)) {
        (PlaceRoot::Output(_), Binding::Element { addr }) => (element(t.read_var(addr)), None),
        (PlaceRoot::Output(_), Binding::Vars(vars)) => (Root::Vars(vars), None),
        (PlaceRoot::Output(_), Binding::Values(values)) => (Root::Values(values), None),
        (PlaceRoot::Scatter { indices, .. }, Binding::Array { stream }) => {
            if !for_store {
                let index = launch::clamped_element(t, &stream, indices)?;
                let addr = t.element_address(stream.base, index, stream.size);
                return Ok((element(addr), None));
            }
            let mut at = Vec::with_capacity(indices.len());
            let mut in_range = None;
            for (&h, &extent) in indices.iter().zip(&stream.shape) {
                let i = t.index_value(h)?;
                let ok = t.binary(BinaryOp::Lt, t.index_kind(), i, extent);
                in_range = Some(match in_range {
                    Some(all) => t.binary(BinaryOp::LogicAnd, ScalarKind::Bool, all, ok),
                    None => ok,
                });
                at.push(i);
            }
            let pitch = stream.pitch[..at.len()].to_vec();
            let index = t.element_index(stream.offset, &at, &pitch);
            let addr = t.element_address(stream.base, index, stream.size);
            (element(addr), in_range)
        }
        _ => (Root::Nowhere, None),
    })
}

fn resolve<'ir, T: Target<'ir>>(
    t: &mut T,
    place: &Place,
    for_store: bool,
) -> WithRange<'ir, T, Resolved<T::Leaf, T::Var>> {
    let mut ty = root_type(t, &place.root);
    let (root, in_range) = root(t, &place.root, for_store)?;
    let module = t.module();
    let resolved = match root {
        Root::Memory {
            addr,
            offset: root_offset,
            space,
        } => {
            let whole = place.path.is_empty() && space == Space::Stream;
            let element = matches!(space, Space::Local | Space::Shared)
                && root_offset == 0
                && matches!(ty, Type::Array { .. })
                && matches!(place.path.as_slice(), [brook_ir::Access::Index(_)]);
            let (addr, offset) = t.walk_memory(addr, &mut ty, &place.path)?;
            let offset = offset + root_offset;
            let layout = leaves(module, &ty)
                .into_iter()
                .map(|leaf| Leaf {
                    kind: leaf.kind,
                    offset: leaf.offset + offset,
                })
                .collect();
            Resolved::Memory(Memory {
                addr,
                ty,
                layout,
                space,
                whole,
                element,
            })
        }
        Root::Vars(vars) => {
            let first = t.walk_leaves(&mut ty, &place.path)?;
            let count = leaf_count(module, &ty);
            Resolved::Vars { vars, first, count }
        }
        Root::Values(values) => {
            let first = t.walk_leaves(&mut ty, &place.path)?;
            let count = leaf_count(module, &ty);
            Resolved::Values(values[first..first + count].to_vec())
        }
        Root::Nowhere => {
            t.walk_leaves(&mut ty, &place.path)?;
            Resolved::Nowhere(ty)
        }
    };
    Ok((resolved, in_range))
}
