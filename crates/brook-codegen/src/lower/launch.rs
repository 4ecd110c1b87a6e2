//! The executable forms of `brook_ir::launch`, written once over [`Target`]: what an input,
//! a gather, `indexof` and `instance()` read at the current position — implicit resize,
//! iterator values, clamped gather indices, position vectors.

use super::{Binding, ExprWalk, Target};
use brook_ir::launch::iterator_axis;
use brook_ir::{BinaryOp, Expr, Handle, ParamId, ScalarKind, Type};

/// The current element of an input, iterator or reduction operand `p`.
pub fn input<'ir, T: Target<'ir>>(t: &mut T, p: ParamId) -> Vec<T::Leaf> {
    let ty = t.kernel().params[p.0 as usize].ty.clone();
    match t.binding(p) {
        Binding::Element { addr } => {
            let addr = t.read_var(addr);
            t.load_element(&ty, addr)
        }
        Binding::Resized { stream } => {
            let at = resized(t, &stream.shape);
            let index = t.element_index(stream.offset, &at, &stream.pitch);
            let addr = t.element_address(stream.base, index, stream.size);
            t.load_element(&ty, addr)
        }
        Binding::Iterator {
            start,
            end,
            shape,
            resized: is_resized,
        } => {
            let at = if is_resized {
                resized(t, &shape)
            } else {
                t.position()
            };
            iterator_value(t, &start, &end, &shape, &at)
        }
        Binding::Vars(vars) => vars.into_iter().map(|v| t.read_var(v)).collect(),
        Binding::Values(values) => values,
        _ => t.zeros(&ty),
    }
}

/// The leaves of constant `p` (`None` where it has none bound).
pub fn constant<'ir, T: Target<'ir>>(t: &mut T, p: ParamId) -> Option<Vec<T::Leaf>> {
    match t.binding(p) {
        Binding::Constant(values) => Some(values),
        _ => None,
    }
}

/// An element of gather array `p` at `indices`, each clamped to its axis.
pub fn gather<'ir, T: Target<'ir>>(
    t: &mut T,
    p: ParamId,
    indices: &[Handle<Expr>],
) -> Result<Vec<T::Leaf>, T::Error> {
    let ty = t.kernel().params[p.0 as usize].ty.clone();
    let Binding::Array { stream } = t.binding(p) else {
        return Ok(t.zeros(&ty));
    };
    let index = clamped_element(t, &stream, indices)?;
    let addr = t.element_address(stream.base, index, stream.size);
    Ok(t.load_element(&ty, addr))
}

/// The element of gather array `p` at element index `element` (in range: an induction
/// gather's, [`super::induction`]).
pub fn gather_at<'ir, T: Target<'ir>>(t: &mut T, p: ParamId, element: T::Leaf) -> Vec<T::Leaf> {
    let ty = t.kernel().params[p.0 as usize].ty.clone();
    let Binding::Array { stream } = t.binding(p) else {
        return t.zeros(&ty);
    };
    let addr = t.element_address(stream.base, element, stream.size);
    t.load_element(&ty, addr)
}

/// The clamped element index of a gather (or of a scatter place read).
pub fn clamped_element<'ir, T: Target<'ir>>(
    t: &mut T,
    stream: &super::StreamRef<T::Leaf>,
    indices: &[Handle<Expr>],
) -> Result<T::Leaf, T::Error> {
    let mut at = Vec::with_capacity(indices.len());
    for (&h, &extent) in indices.iter().zip(&stream.shape) {
        let i = t.index_value(h)?;
        at.push(t.clamp_index(i, extent));
    }
    let pitch = stream.pitch[..at.len()].to_vec();
    Ok(t.element_index(stream.offset, &at, &pitch))
}

/// `indexof(p)`: the position it reports as a `float4`, fastest axis in `.x`.
pub fn index_of<'ir, T: Target<'ir>>(t: &mut T, p: ParamId) -> Vec<T::Leaf> {
    let at = match t.binding(p) {
        Binding::Resized { stream } => resized(t, &stream.shape),
        Binding::Iterator {
            shape,
            resized: true,
            ..
        } => resized(t, &shape),
        _ => t.position(),
    };
    position_vector(t, &at, ScalarKind::F32)
}

/// `instance()`: the position as an `int4`, fastest axis in `.x`.
pub fn instance<'ir, T: Target<'ir>>(t: &mut T) -> Vec<T::Leaf> {
    let at = t.position();
    position_vector(t, &at, ScalarKind::I32)
}

/// Element `at` of an iterator: `start + ((end - start) * i) / n` per component, in `f32`,
/// component `c` running along [`iterator_axis`].
pub fn iterator_value<'ir, T: Target<'ir>>(
    t: &mut T,
    start: &[T::Leaf],
    end: &[T::Leaf],
    shape: &[T::Leaf],
    at: &[T::Leaf],
) -> Vec<T::Leaf> {
    let rank = shape.len();
    let f32 = ScalarKind::F32;
    (0..start.len())
        .map(|c| {
            let axis = iterator_axis(rank, c);
            let i = t.convert(t.index_kind(), f32, at[axis]);
            let n = t.convert(t.index_kind(), f32, shape[axis]);
            let span = t.binary(BinaryOp::Sub, f32, end[c], start[c]);
            let scaled = t.binary(BinaryOp::Mul, f32, span, i);
            let step = t.binary(BinaryOp::Div, f32, scaled, n);
            t.binary(BinaryOp::Add, f32, start[c], step)
        })
        .collect()
}

/// The input position read at the current position through implicit resize:
/// `floor(pos * n_in / n_out)` per axis.
fn resized<'ir, T: Target<'ir>>(t: &mut T, shape: &[T::Leaf]) -> Vec<T::Leaf> {
    let pos = t.position();
    let domain = t.domain();
    pos.into_iter()
        .zip(shape)
        .zip(domain)
        .map(|((p, &n_in), n_out)| {
            let product = t.mul_index(p, n_in);
            t.div_index(product, n_out)
        })
        .collect()
}

/// A position (slowest first) as a 4-vector of `kind` (`F32` or `I32`), fastest axis in `.x`.
fn position_vector<'ir, T: Target<'ir>>(
    t: &mut T,
    at: &[T::Leaf],
    kind: ScalarKind,
) -> Vec<T::Leaf> {
    (0..4)
        .map(
            |lane| match at.len().checked_sub(lane + 1).map(|axis| at[axis]) {
                Some(p) => t.convert(t.index_kind(), kind, p),
                None => {
                    let zero = t.zeros(&Type::Value(brook_ir::ValueType::scalar(kind)));
                    zero[0]
                }
            },
        )
        .collect()
}
