//! The canonical reduction order: how every executor combines the elements of a reduction.
//!
//! Brook reductions have no identity and need only an associative operator (`SEMANTICS.md`).
//! To give the same bits on every backend, thread count and launch configuration, the grouping
//! of the combines is fixed here, as a function of the number of elements only.
//!
//! # The aligned power-of-two tree
//! The `L` elements of one reduced block, in row-major order, are the leaves `x[0..L)`. Let `P`
//! be the smallest power of two `>= L`. The value of the aligned node `(lo, size)` (`size` a
//! power of two, `lo` a multiple of `size`) is
//!
//! - nothing, if `lo >= L` (past the ragged end);
//! - `x[lo]`, if `size == 1`;
//! - otherwise `left = (lo, size/2)` and `right = (lo + size/2, size/2)`: `combine(left, right)`
//!   when `right` exists, else `left` alone.
//!
//! The result is node `(0, P)`. The left operand is always the earlier part, so a
//! non-commutative operator gives the left fold's value (for an associative operator).
//!
//! # Why this order
//! Every aligned node is an exact subtree. An executor may split `[0, L)` at any multiples of
//! `2^k`, reduce each piece as node `(j * 2^k, 2^k)` on its own (a CPU thread, a GPU warp using
//! shuffles at distances 1, 2, 4, ..., a thread block), and combine the pieces' results with this
//! same tree ([`reduce_canonical`] over the partial results): the value is identical. So CPU
//! threads, GPU warps and blocks, rows and columns can all divide the work differently and still
//! produce the same bits.
//!
//! # Reduced blocks
//! [`reduction_tile`] gives the block of input elements that one target element reduces.

/// Combines `items` in the canonical order; `None` when there are none.
pub fn reduce_canonical<T: Clone>(items: &[T], combine: &mut impl FnMut(&T, &T) -> T) -> Option<T> {
    reduce_canonical_streamed(items.iter().cloned(), combine)
}

/// [`reduce_canonical`] of items that arrive one at a time, holding one value per level of
/// the tree (a binary counter: a new leaf carries through the complete subtrees of its size),
/// so a reduction of `n` leaves needs `log2(n)` values, not `n`. At the end the waiting
/// subtrees, largest first, are the aligned nodes left of the ragged end: folded from the
/// right, they make the canonical tree's right spine.
pub fn reduce_canonical_streamed<T>(
    items: impl IntoIterator<Item = T>,
    combine: &mut impl FnMut(&T, &T) -> T,
) -> Option<T> {
    let mut waiting: Vec<(usize, T)> = Vec::new();
    for item in items {
        let (mut size, mut value) = (1usize, item);
        while waiting.last().is_some_and(|(s, _)| *s == size) {
            let Some((older, left)) = waiting.pop() else {
                break;
            };
            value = combine(&left, &value);
            size += older;
        }
        waiting.push((size, value));
    }
    let (_, mut result) = waiting.pop()?;
    while let Some((_, left)) = waiting.pop() {
        result = combine(&left, &result);
    }
    Some(result)
}

/// Why a target shape cannot receive a reduction of an input shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReduceShapeError {
    /// "Reduction operation don't allow output rank > input rank".
    TargetRankTooHigh,
    /// "Input dimensions should be integral multiple of output dimensions".
    NotDividing {
        axis: usize,
        input: usize,
        target: usize,
    },
}

/// The target's shape with leading 1s dropped while it has more than `rank` axes (a `<1, 10>`
/// target of a `<10, 4>` input is read as `<10>`).
pub fn fitted_target(target: &[usize], rank: usize) -> &[usize] {
    let mut t = target;
    while t.len() > rank && t[0] == 1 {
        t = &t[1..];
    }
    t
}

/// [`reduction_tile`] for streams as they are declared: the input's leading 1s dropped
/// ([`crate::launch::normalized_shape`]), the target [`fitted_target`] to the input's rank.
/// The runtime and brcc's check of shapes known at compile time both use it.
pub fn declared_reduction_tile(
    input: &[usize],
    target: &[usize],
) -> Result<Vec<usize>, ReduceShapeError> {
    let input = crate::launch::normalized_shape(input);
    reduction_tile(input, fitted_target(target, input.len()))
}

/// The tile of input elements (per axis, slowest first) that one element of `target` reduces.
///
/// - A target of one element (a host scalar, `<1>`, `<1, 1>`) reduces everything.
/// - A target of the input's rank whose every dimension divides the input's reduces tiles of
///   `input / target` per axis (`<100, 200>` into `<50, 20>`: 2x10 tiles).
/// - A target of lower rank whose dimensions equal the leading input dimensions reduces the
///   trailing axes (`<100, 200>` into `<100>`: rows).
pub fn reduction_tile(input: &[usize], target: &[usize]) -> Result<Vec<usize>, ReduceShapeError> {
    if target.iter().product::<usize>() == 1 {
        return Ok(input.to_vec());
    }
    if target.len() > input.len() {
        return Err(ReduceShapeError::TargetRankTooHigh);
    }
    let reduced_axes = input.len() - target.len();
    if reduced_axes > 0 {
        // Lower rank: the target must equal the leading axes; the trailing ones are reduced away.
        if let Some(axis) = (0..target.len()).find(|&a| target[a] != input[a]) {
            return Err(ReduceShapeError::NotDividing {
                axis,
                input: input[axis],
                target: target[axis],
            });
        }
        let kept = std::iter::repeat_n(1, target.len());
        return Ok(kept.chain(input[target.len()..].iter().copied()).collect());
    }
    let padded = target;
    input
        .iter()
        .zip(padded)
        .enumerate()
        .map(|(axis, (&i, &t))| {
            if t != 0 && i % t == 0 {
                Ok(i / t)
            } else {
                Err(ReduceShapeError::NotDividing {
                    axis,
                    input: i,
                    target: t,
                })
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn concat(a: &String, b: &String) -> String {
        format!("({a} {b})")
    }

    fn leaves(n: usize) -> Vec<String> {
        (0..n).map(|i| i.to_string()).collect()
    }

    /// The tree as the module docs define it, node by node (the definition the streamed
    /// form must equal).
    fn node(items: &[String], lo: usize, size: usize) -> Option<String> {
        if lo >= items.len() {
            return None;
        }
        if size == 1 {
            return Some(items[lo].clone());
        }
        let left = node(items, lo, size / 2)?;
        match node(items, lo + size / 2, size / 2) {
            Some(right) => Some(concat(&left, &right)),
            None => Some(left),
        }
    }

    #[test]
    fn the_streamed_reduction_is_the_defined_tree() {
        for n in 1..600 {
            let items = leaves(n);
            let defined = node(&items, 0, n.next_power_of_two());
            let mut calls = 0;
            let streamed = reduce_canonical_streamed(items, &mut |a: &String, b: &String| {
                calls += 1;
                concat(a, b)
            });
            assert_eq!(streamed, defined, "{n} leaves");
            assert_eq!(
                calls,
                n - 1,
                "{n} leaves: one combine per leaf but the first"
            );
        }
    }

    #[test]
    fn the_tree_is_aligned_and_ragged_at_the_end() {
        let tree = |n| reduce_canonical(&leaves(n), &mut concat).unwrap_or_default();
        assert_eq!(tree(1), "0");
        assert_eq!(tree(2), "(0 1)");
        assert_eq!(tree(3), "((0 1) 2)");
        assert_eq!(tree(5), "(((0 1) (2 3)) 4)");
        assert_eq!(tree(6), "(((0 1) (2 3)) (4 5))");
        assert_eq!(tree(7), "(((0 1) (2 3)) ((4 5) 6))");
        assert_eq!(reduce_canonical::<String>(&[], &mut concat), None);
    }

    #[test]
    fn aligned_splits_give_the_same_result() {
        for n in 1..200 {
            let whole = reduce_canonical(&leaves(n), &mut concat);
            for k in 0..8 {
                let chunk = 1 << k;
                let partials: Vec<String> = leaves(n)
                    .chunks(chunk)
                    .map(|c| reduce_canonical(c, &mut concat).expect("non-empty chunk"))
                    .collect();
                assert_eq!(
                    reduce_canonical(&partials, &mut concat),
                    whole,
                    "n = {n}, chunk = {chunk}"
                );
            }
        }
    }

    #[test]
    fn a_non_commutative_product_equals_the_left_fold() {
        type M = [i64; 4];
        let mul = |a: &M, b: &M| {
            [
                a[0] * b[0] + a[1] * b[2],
                a[0] * b[1] + a[1] * b[3],
                a[2] * b[0] + a[3] * b[2],
                a[2] * b[1] + a[3] * b[3],
            ]
        };
        let ms: Vec<M> = (0..37).map(|i| [1, i % 3, (i * 7) % 5 - 2, 1]).collect();
        let fold = ms[1..].iter().fold(ms[0], |acc, m| mul(&acc, m));
        assert_eq!(reduce_canonical(&ms, &mut |a, b| mul(a, b)), Some(fold));
    }

    #[test]
    fn reduction_tiles_follow_the_target_shape() {
        assert_eq!(reduction_tile(&[100, 200], &[1]), Ok(vec![100, 200]));
        assert_eq!(reduction_tile(&[100, 200], &[100, 1]), Ok(vec![1, 200]));
        assert_eq!(reduction_tile(&[100, 200], &[1, 200]), Ok(vec![100, 1]));
        assert_eq!(reduction_tile(&[100, 200], &[50, 20]), Ok(vec![2, 10]));
        assert_eq!(reduction_tile(&[100, 200], &[100]), Ok(vec![1, 200]));
        assert_eq!(reduction_tile(&[100, 200], &[100, 50]), Ok(vec![1, 4]));
        assert_eq!(
            reduction_tile(&[100], &[10, 10]),
            Err(ReduceShapeError::TargetRankTooHigh)
        );
        assert_eq!(
            reduction_tile(&[100, 200], &[30, 200]),
            Err(ReduceShapeError::NotDividing {
                axis: 0,
                input: 100,
                target: 30
            })
        );
    }
}
