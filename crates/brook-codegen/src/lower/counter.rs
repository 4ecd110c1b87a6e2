//! The binary-counter stack: how every backend folds leaves that arrive one after another
//! into the canonical tree of `brook_ir::reduce_order`, written once over [`Target`].
//!
//! Slot `k` holds the aligned subtree of `2^k` leaves that is still waiting for its right
//! neighbour. Pushing leaf number `n` (counting from 0) is adding one to a binary counter:
//! while bit `k` of `n` is set, slot `k` is full and its subtree is combined with the new one
//! (the older on the left); the first clear bit's slot takes the result. At the end the
//! waiting subtrees are folded lowest level first, each on the right of the older ones: the
//! canonical tree's ragged end. A subtree of `2^j` leaves computed another way (a block
//! reduced in registers) is pushed the same way into the slots from level `j` on, counted in
//! units of `2^j`.
//!
//! Where the slots live decides the code's shape ([`Slots`]): variables, one per leaf of the
//! reduced value (registers on the GPU), with the levels unrolled; or cells of memory (the
//! CPU), with one loop over the levels, so the combine step is written out once (unrolled
//! over variables, a CPU function took nine times longer to compile). A stack of `levels + 1` slots
//! ([`slot_count`]) holds `2^levels` leaves — the last push of a full piece carries through
//! every lower slot into the top one — so pieces are at most [`MAX_PIECE`] leaves (the entries
//! declare it to the runtime's planner).

use super::{Memory, Space, Target};
use crate::leaves::Leaf;
use brook_ir::{BinaryOp, Literal, ScalarKind, Type};

/// Levels of the serial stacks: a call reduces at most `2^LEVELS` leaves.
pub const LEVELS: u32 = 22;
/// The most leaves one stack reduces, as the entries declare it.
pub const MAX_PIECE: u64 = 1 << LEVELS;

/// The slots a stack needs to hold `2^levels` leaves.
pub const fn slot_count(levels: u32) -> usize {
    levels as usize + 1
}

/// Where a stack's slots live, lowest level first.
pub enum Slots<L, V> {
    /// A variable per leaf of the value, per level.
    Vars(Vec<Vec<V>>),
    /// `levels` cells of `size` bytes from `base`, each holding a value of type `ty`.
    Memory {
        base: L,
        size: u32,
        levels: usize,
        ty: Type,
        layout: Vec<Leaf>,
    },
}

impl<L: Copy, V: Copy> Slots<L, V> {
    pub fn levels(&self) -> usize {
        match self {
            Slots::Vars(vars) => vars.len(),
            Slots::Memory { levels, .. } => *levels,
        }
    }

    fn cell<'ir, T: Target<'ir, Leaf = L, Var = V>>(&self, t: &mut T, level: usize) -> Memory<L> {
        let index = t.index_constant(level as u64);
        self.cell_at(t, index)
    }

    /// The memory cell of the level an index value names.
    fn cell_at<'ir, T: Target<'ir, Leaf = L, Var = V>>(&self, t: &mut T, level: L) -> Memory<L> {
        let Slots::Memory {
            base,
            size,
            ty,
            layout,
            ..
        } = self
        else {
            unreachable!("cells are slots in memory");
        };
        Memory {
            addr: t.element_address(*base, level, *size),
            ty: ty.clone(),
            layout: layout.clone(),
            space: Space::Local,
            whole: false,
            element: false,
        }
    }

    fn read<'ir, T: Target<'ir, Leaf = L, Var = V>>(&self, t: &mut T, level: usize) -> Vec<L> {
        match self {
            Slots::Vars(vars) => vars[level].iter().map(|&var| t.read_var(var)).collect(),
            Slots::Memory { .. } => {
                let cell = self.cell(t, level);
                t.load_memory(&cell)
            }
        }
    }

    fn write<'ir, T: Target<'ir, Leaf = L, Var = V>>(&self, t: &mut T, level: usize, value: &[L]) {
        match self {
            Slots::Vars(vars) => {
                for (&var, &leaf) in vars[level].iter().zip(value) {
                    t.write_var(var, leaf);
                }
            }
            Slots::Memory { .. } => {
                let cell = self.cell(t, level);
                t.store_memory(&cell, value);
            }
        }
    }
}

/// `combine(left, right)`: the reduction's body on two values, giving the combined value.
pub trait Combine<'ir, T: Target<'ir>>:
    FnMut(&mut T, &[T::Leaf], &[T::Leaf]) -> Result<Vec<T::Leaf>, T::Error>
{
}

impl<'ir, T: Target<'ir>, F> Combine<'ir, T> for F where
    F: FnMut(&mut T, &[T::Leaf], &[T::Leaf]) -> Result<Vec<T::Leaf>, T::Error>
{
}

/// Whether bit `level` of the index value `n` is clear (a bool leaf).
fn bit_clear<'ir, T: Target<'ir>>(t: &mut T, n: T::Leaf, level: usize) -> T::Leaf {
    let mask = t.index_constant(1 << level);
    let bit = t.binary(BinaryOp::BitAnd, ScalarKind::U64, n, mask);
    let zero = t.index_constant(0);
    t.binary(BinaryOp::Eq, ScalarKind::U64, bit, zero)
}

/// Whether bit `shift` (an index value) of the index value `n` is clear (a bool leaf).
fn bit_clear_at<'ir, T: Target<'ir>>(t: &mut T, n: T::Leaf, shift: T::Leaf) -> T::Leaf {
    let shifted = t.binary(BinaryOp::Shr, ScalarKind::U64, n, shift);
    let one = t.index_constant(1);
    let bit = t.binary(BinaryOp::BitAnd, ScalarKind::U64, shifted, one);
    let zero = t.index_constant(0);
    t.binary(BinaryOp::Eq, ScalarKind::U64, bit, zero)
}

/// Variables holding `value`, one per leaf of `layout`.
fn held<'ir, T: Target<'ir>>(t: &mut T, layout: &[Leaf], value: &[T::Leaf]) -> Vec<T::Var> {
    layout
        .iter()
        .zip(value)
        .map(|(leaf, &v)| {
            let var = t.temporary(leaf.kind);
            t.write_var(var, v);
            var
        })
        .collect()
}

fn read_all<'ir, T: Target<'ir>>(t: &mut T, vars: &[T::Var]) -> Vec<T::Leaf> {
    vars.iter().map(|&var| t.read_var(var)).collect()
}

/// One waiting subtree `older` folded onto `result`: `combine(older, result)` when `has`
/// holds, else `older` itself; then `has` holds.
fn fold_onto<'ir, T: Target<'ir>>(
    t: &mut T,
    older: &[T::Leaf],
    result: &[T::Var],
    has: T::Var,
    combine: &mut impl Combine<'ir, T>,
) -> Result<(), T::Error> {
    let some = t.read_var(has);
    let onto = t.begin_if(some);
    let newer = read_all(t, result);
    let merged = combine(t, older, &newer)?;
    for (&var, &leaf) in result.iter().zip(&merged) {
        t.write_var(var, leaf);
    }
    t.begin_else(&onto);
    for (&var, &leaf) in result.iter().zip(older) {
        t.write_var(var, leaf);
    }
    t.end_if(onto);
    let yes = t.literal(Literal::bool(true));
    t.write_var(has, yes);
    Ok(())
}

/// Pushes `value`, the subtree number `n` (an index value) of level `first`, onto the stack:
/// slots `first..` take part. `n` is below `2^(slots.levels() - 1 - first)`, so the top slot
/// is never full.
pub fn insert<'ir, T: Target<'ir>>(
    t: &mut T,
    slots: &Slots<T::Leaf, T::Var>,
    first: usize,
    n: T::Leaf,
    value: Vec<T::Leaf>,
    combine: &mut impl Combine<'ir, T>,
) -> Result<(), T::Error> {
    if let Slots::Memory { layout, .. } = slots {
        return insert_looped(t, slots, layout, first, n, value, combine);
    }
    let mut frames = Vec::with_capacity(slots.levels());
    let mut carry = value;
    for level in first..slots.levels() {
        let empty = bit_clear(t, n, level - first);
        let frame = t.begin_if(empty);
        slots.write(t, level, &carry);
        t.begin_else(&frame);
        let older = slots.read(t, level);
        carry = combine(t, &older, &carry)?;
        frames.push(frame);
    }
    for frame in frames.into_iter().rev() {
        t.end_if(frame);
    }
    Ok(())
}

/// Folds the stack of `count` leaves (an index value) onto `result`, lowest level first, each
/// waiting subtree on the left of what is folded so far. `has` (a bool variable) says whether
/// `result` already holds a value (one right of every subtree of the stack); it is set when
/// the stack had any.
pub fn finish_onto<'ir, T: Target<'ir>>(
    t: &mut T,
    slots: &Slots<T::Leaf, T::Var>,
    count: T::Leaf,
    result: &[T::Var],
    has: T::Var,
    combine: &mut impl Combine<'ir, T>,
) -> Result<(), T::Error> {
    if let Slots::Memory { .. } = slots {
        return finish_looped(t, slots, count, result, has, combine);
    }
    for level in 0..slots.levels() {
        let empty = bit_clear(t, count, level);
        let frame = t.begin_if(empty);
        t.begin_else(&frame);
        let older = slots.read(t, level);
        fold_onto(t, &older, result, has, combine)?;
        t.end_if(frame);
    }
    Ok(())
}

/// [`insert`] over slots in memory: one loop over the levels (the level an index value, the
/// carry in variables), so the combine step is written out once.
fn insert_looped<'ir, T: Target<'ir>>(
    t: &mut T,
    slots: &Slots<T::Leaf, T::Var>,
    layout: &[Leaf],
    first: usize,
    n: T::Leaf,
    value: Vec<T::Leaf>,
    combine: &mut impl Combine<'ir, T>,
) -> Result<(), T::Error> {
    let carry = held(t, layout, &value);
    let level = t.temporary(ScalarKind::U64);
    let start = t.index_constant(first as u64);
    t.write_var(level, start);
    let frame = t.begin_loop();
    let at = t.read_var(level);
    let shift = t.binary(BinaryOp::Sub, ScalarKind::U64, at, start);
    let empty = bit_clear_at(t, n, shift);
    let cell = slots.cell_at(t, at);
    let store = t.begin_if(empty);
    let newer = read_all(t, &carry);
    t.store_memory(&cell, &newer);
    t.jump_break(frame);
    t.begin_else(&store);
    let older = t.load_memory(&cell);
    let newer = read_all(t, &carry);
    let merged = combine(t, &older, &newer)?;
    for (&var, &leaf) in carry.iter().zip(&merged) {
        t.write_var(var, leaf);
    }
    let one = t.index_constant(1);
    let up = t.binary(BinaryOp::Add, ScalarKind::U64, at, one);
    t.write_var(level, up);
    t.end_if(store);
    t.begin_continuing(frame);
    t.end_loop(frame);
    Ok(())
}

/// [`finish_onto`] over slots in memory: one loop over the levels.
fn finish_looped<'ir, T: Target<'ir>>(
    t: &mut T,
    slots: &Slots<T::Leaf, T::Var>,
    count: T::Leaf,
    result: &[T::Var],
    has: T::Var,
    combine: &mut impl Combine<'ir, T>,
) -> Result<(), T::Error> {
    let level = t.temporary(ScalarKind::U64);
    let frame = t.begin_loop();
    let at = t.read_var(level);
    let levels = t.index_constant(slots.levels() as u64);
    let past = t.binary(BinaryOp::Ge, ScalarKind::U64, at, levels);
    let stop = t.begin_if(past);
    t.jump_break(frame);
    t.begin_else(&stop);
    t.end_if(stop);
    let empty = bit_clear_at(t, count, at);
    let waiting = t.begin_if(empty);
    t.begin_else(&waiting);
    let cell = slots.cell_at(t, at);
    let older = t.load_memory(&cell);
    fold_onto(t, &older, result, has, combine)?;
    t.end_if(waiting);
    t.begin_continuing(frame);
    let at = t.read_var(level);
    let one = t.index_constant(1);
    let up = t.binary(BinaryOp::Add, ScalarKind::U64, at, one);
    t.write_var(level, up);
    t.end_loop(frame);
    Ok(())
}
