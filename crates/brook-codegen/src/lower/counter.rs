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
//! The levels are unrolled: a slot is a variable per leaf of the reduced value (registers on
//! the GPU). A stack of `levels + 1` slots ([`slot_count`]) holds `2^levels` leaves — the
//! last push of a full piece carries through every lower slot into the top one — so pieces
//! are at most [`MAX_PIECE`] leaves (the entries declare it to the runtime's planner).

use super::Target;
use brook_ir::{BinaryOp, Literal, ScalarKind};

/// Levels of the serial stacks: a call reduces at most `2^LEVELS` leaves.
pub const LEVELS: u32 = 22;
/// The most leaves one stack reduces, as the entries declare it.
pub const MAX_PIECE: u64 = 1 << LEVELS;

/// The slots a stack needs to hold `2^levels` leaves.
pub const fn slot_count(levels: u32) -> usize {
    levels as usize + 1
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

/// Pushes `value`, the subtree number `n` (an index value) of the slots' lowest level, onto
/// the stack `slots` (lowest level first, one variable per leaf of the value). `n` is below
/// `2^(slots.len() - 1)`, so the top slot is never full.
pub fn insert<'ir, T: Target<'ir>>(
    t: &mut T,
    slots: &[Vec<T::Var>],
    n: T::Leaf,
    value: Vec<T::Leaf>,
    combine: &mut impl Combine<'ir, T>,
) -> Result<(), T::Error> {
    let mut frames = Vec::with_capacity(slots.len());
    let mut carry = value;
    for (level, slot) in slots.iter().enumerate() {
        let empty = bit_clear(t, n, level);
        let frame = t.begin_if(empty);
        for (&var, &leaf) in slot.iter().zip(&carry) {
            t.write_var(var, leaf);
        }
        t.begin_else(&frame);
        let older: Vec<T::Leaf> = slot.iter().map(|&var| t.read_var(var)).collect();
        carry = combine(t, &older, &carry)?;
        frames.push(frame);
    }
    for frame in frames.into_iter().rev() {
        t.end_if(frame);
    }
    Ok(())
}

/// Folds the stack of `count` subtrees (an index value, in units of the slots' lowest level)
/// onto `result`, lowest level first, each waiting subtree on the left of what is folded so
/// far. `has` (a bool variable) says whether `result` already holds a value (one right of
/// every subtree of the stack); it is set when the stack had any.
pub fn finish_onto<'ir, T: Target<'ir>>(
    t: &mut T,
    slots: &[Vec<T::Var>],
    count: T::Leaf,
    result: &[T::Var],
    has: T::Var,
    combine: &mut impl Combine<'ir, T>,
) -> Result<(), T::Error> {
    for (level, slot) in slots.iter().enumerate() {
        let empty = bit_clear(t, count, level);
        let frame = t.begin_if(empty);
        t.begin_else(&frame);
        let some = t.read_var(has);
        let onto = t.begin_if(some);
        let older: Vec<T::Leaf> = slot.iter().map(|&var| t.read_var(var)).collect();
        let newer: Vec<T::Leaf> = result.iter().map(|&var| t.read_var(var)).collect();
        let merged = combine(t, &older, &newer)?;
        for (&var, &leaf) in result.iter().zip(&merged) {
            t.write_var(var, leaf);
        }
        t.begin_else(&onto);
        for (&var, &from) in result.iter().zip(slot) {
            let leaf = t.read_var(from);
            t.write_var(var, leaf);
        }
        t.end_if(onto);
        let yes = t.literal(Literal::bool(true));
        t.write_var(has, yes);
        t.end_if(frame);
    }
    Ok(())
}
