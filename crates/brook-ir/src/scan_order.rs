//! The canonical scan order: how every executor combines the elements of a stream scan (a
//! prefix reduction with the user's associative operator), so that a scan gives the same bits
//! on every device, for every tile size and thread count, run after run.
//!
//! # The order
//! Take one row `x[0..n)`. For a position `i`, split `[0, i)` into aligned blocks by the binary
//! digits of `i`, largest first: `i = 2^a1 + 2^a2 + ...` (`a1 > a2 > ...`) gives
//! `[0, 2^a1)`, `[2^a1, 2^a1 + 2^a2)`, ... Each block is an exact subtree of
//! [`crate::reduce_order`]'s aligned tree, and its value `v` is that subtree's (its canonical
//! reduction). Then
//!
//! - the **exclusive** prefix is the left fold of the blocks' values in that order, from the
//!   scan's initial value when it has one: `E(i) = ((init ∘ v1) ∘ v2) ∘ ...`; without an
//!   initial value the fold starts at `v1`, and `E(0)` is nothing (Brook operators have no
//!   identity);
//! - the **inclusive** prefix is `I(i) = E(i) ∘ x[i]`, or `x[0]` at `i = 0` without an
//!   initial value.
//!
//! The left operand is always the earlier part, so a non-commutative operator keeps operand
//! order (for an associative one, `I(i)` is the left fold `x[0] ∘ ... ∘ x[i]`).
//!
//! # Why this order
//! At a multiple of a tile size `2^k`, the blocks of `[0, t·2^k)` are all of `2^k` elements
//! or more, and each is the reduction of whole aligned tiles. So `E(t·2^k)` is the exclusive
//! scan, in this same order, of the tiles' totals (each tile reduced as
//! [`crate::reduce_order`] does); inside tile `t` the fold goes on from `E(t·2^k)` with the
//! tile's own blocks, which is what Blelloch's down-sweep computes. An executor may therefore
//! reduce aligned tiles of any size on its own (a CPU thread, a GPU warp or block), scan the
//! totals, and finish each tile from its prefix: [`scan_tiled`] does exactly that and gives
//! the bits of [`scan_exclusive`] and [`scan_inclusive`]. A GPU may even scan in one pass:
//! tile `t` needs only the values of the aligned groups of tiles in `t`'s binary digits,
//! each made by the last tile of its group.
//!
//! # Serially
//! [`scan_serial`] walks a piece once with a binary counter of its aligned blocks (as
//! [`crate::reduce_order`]'s executors reduce), keeping beside each waiting block the fold of
//! everything before it, so each position costs a constant number of combines on average.
//! It is how the interpreter and the CPU scan, and the model of the GPU's per-thread code.

use crate::reduce_order::reduce_canonical;

/// Which prefix a scan gives position `i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ScanKind {
    /// `x[0] ∘ ... ∘ x[i]`.
    Inclusive,
    /// `init ∘ x[0] ∘ ... ∘ x[i - 1]` (`init` at position 0).
    Exclusive,
}

impl ScanKind {
    pub fn name(self) -> &'static str {
        match self {
            ScanKind::Inclusive => "inclusive",
            ScanKind::Exclusive => "exclusive",
        }
    }
}

/// Scans one piece serially in the canonical order: `items` are positions `0..` of an aligned
/// piece (its first position a multiple of a power of two at least as long as the piece),
/// `before` the exclusive prefix of its first position (`None`: nothing comes before it).
/// `emit(j, prefix)` receives each position's prefix (`None` only for an exclusive prefix with
/// nothing before it).
///
/// The state: `slots[k]` is the waiting aligned block of `2^k` positions (while bit `k` of the
/// count is set) and `above[k]` the fold of `before` and every waiting block older than it;
/// `e` is the exclusive prefix of the next position. Pushing position `j` carries through the
/// set low bits of `j` (older blocks on the left); the block lands at the first clear bit `b`,
/// whose `above` is `e` when `b = 0`, else `above[b - 1]` (the same higher blocks); then the
/// next prefix is `above[b] ∘ block`.
pub fn scan_serial<T: Clone>(
    items: impl IntoIterator<Item = T>,
    before: Option<T>,
    kind: ScanKind,
    combine: &mut impl FnMut(&T, &T) -> T,
    emit: &mut impl FnMut(usize, Option<T>),
) {
    let mut slots: Vec<Option<T>> = Vec::new();
    let mut above: Vec<Option<T>> = Vec::new();
    let mut e = before;
    for (j, x) in items.into_iter().enumerate() {
        let prefix = match kind {
            ScanKind::Exclusive => e.clone(),
            ScanKind::Inclusive => Some(match &e {
                Some(e) => combine(e, &x),
                None => x.clone(),
            }),
        };
        emit(j, prefix);
        let mut carry = x;
        let mut level = 0;
        let mut over = e.take();
        while j >> level & 1 == 1 {
            let older = slots[level].take().expect("a set bit's block waits");
            carry = combine(&older, &carry);
            over = above[level].take();
            level += 1;
        }
        if slots.len() <= level {
            slots.resize(level + 1, None);
            above.resize(level + 1, None);
        }
        e = Some(match &over {
            Some(over) => combine(over, &carry),
            None => carry.clone(),
        });
        slots[level] = Some(carry);
        above[level] = over;
    }
}

/// The aligned blocks `(start, len)` of `[0, i)`, largest first (the binary digits of `i`).
pub fn prefix_blocks(i: usize) -> impl Iterator<Item = (usize, usize)> {
    let mut start = 0;
    (0..usize::BITS).rev().filter_map(move |bit| {
        let len = 1usize << bit;
        (i & len != 0).then(|| {
            let block = (start, len);
            start += len;
            block
        })
    })
}

/// The exclusive prefix of every position, in the canonical order: `None` where there is
/// nothing to combine (position 0 without an initial value).
pub fn scan_exclusive<T: Clone>(
    items: &[T],
    init: Option<T>,
    combine: &mut impl FnMut(&T, &T) -> T,
) -> Vec<Option<T>> {
    (0..items.len())
        .map(|i| {
            prefix_blocks(i).fold(init.clone(), |acc, (start, len)| {
                let block = reduce_canonical(&items[start..start + len], combine)?;
                Some(match acc {
                    Some(acc) => combine(&acc, &block),
                    None => block,
                })
            })
        })
        .collect()
}

/// The inclusive prefix of every position, in the canonical order.
pub fn scan_inclusive<T: Clone>(
    items: &[T],
    init: Option<T>,
    combine: &mut impl FnMut(&T, &T) -> T,
) -> Vec<T> {
    let exclusive = scan_exclusive(items, init, combine);
    exclusive
        .into_iter()
        .zip(items)
        .map(|(before, x)| match before {
            Some(before) => combine(&before, x),
            None => x.clone(),
        })
        .collect()
}

/// The exclusive scan as a tiled executor computes it: tiles of `2^tile_log2` elements are
/// reduced on their own, their totals scanned (recursively, in tiles of the same size), and
/// each tile finished by a down-sweep from its exclusive prefix. It gives the bits of
/// [`scan_exclusive`] for every tile size; the devices' executors follow it.
pub fn scan_tiled<T: Clone>(
    items: &[T],
    init: Option<T>,
    tile_log2: u32,
    combine: &mut impl FnMut(&T, &T) -> T,
) -> Vec<Option<T>> {
    let tile = 1usize << tile_log2.max(1);
    if items.len() <= tile {
        let mut out = vec![None; items.len()];
        down_sweep(items, init, 0, tile, &mut out, combine);
        return out;
    }
    let totals: Vec<T> = items
        .chunks(tile)
        .filter_map(|chunk| reduce_canonical(chunk, combine))
        .collect();
    let prefixes = scan_tiled(&totals, init, tile_log2, combine);
    let mut out = vec![None; items.len()];
    for (t, (chunk, before)) in items.chunks(tile).zip(prefixes).enumerate() {
        down_sweep(chunk, before, 0, tile, &mut out[t * tile..], combine);
    }
    out
}

/// Blelloch's down-sweep over the aligned block `(lo, size)` of `items` (which may end before
/// the block does): `before` is the exclusive prefix of its first element; the left half
/// starts from it, the right half from it combined with the left half's value.
fn down_sweep<T: Clone>(
    items: &[T],
    before: Option<T>,
    lo: usize,
    size: usize,
    out: &mut [Option<T>],
    combine: &mut impl FnMut(&T, &T) -> T,
) {
    if lo >= items.len() {
        return;
    }
    if size == 1 {
        out[lo] = before;
        return;
    }
    let half = size / 2;
    let right_before = if lo + half < items.len() {
        // The left half lies wholly inside `items`: its value is a whole block's.
        let left = reduce_canonical(&items[lo..lo + half], combine);
        match (before.clone(), left) {
            (Some(b), Some(l)) => Some(combine(&b, &l)),
            (b, l) => b.or(l),
        }
    } else {
        None
    };
    down_sweep(items, before, lo, half, out, combine);
    down_sweep(items, right_before, lo + half, half, out, combine);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A combine that records its grouping: any difference in order shows.
    fn tree(a: &String, b: &String) -> String {
        format!("({a} {b})")
    }

    fn leaves(n: usize) -> Vec<String> {
        (0..n).map(|i| i.to_string()).collect()
    }

    #[test]
    fn blocks_follow_the_binary_digits() {
        assert_eq!(prefix_blocks(0).count(), 0);
        assert_eq!(prefix_blocks(6).collect::<Vec<_>>(), [(0, 4), (4, 2)]);
        assert_eq!(
            prefix_blocks(7).collect::<Vec<_>>(),
            [(0, 4), (4, 2), (6, 1)]
        );
        assert_eq!(prefix_blocks(8).collect::<Vec<_>>(), [(0, 8)]);
    }

    #[test]
    fn the_order_is_written_out() {
        let inclusive = scan_inclusive(&leaves(7), None, &mut tree);
        assert_eq!(inclusive[0], "0");
        assert_eq!(inclusive[1], "(0 1)");
        assert_eq!(inclusive[2], "((0 1) 2)");
        assert_eq!(inclusive[3], "(((0 1) 2) 3)");
        assert_eq!(inclusive[4], "(((0 1) (2 3)) 4)");
        assert_eq!(inclusive[6], "((((0 1) (2 3)) (4 5)) 6)");
        let exclusive = scan_exclusive(&leaves(3), Some("s".to_string()), &mut tree);
        assert_eq!(
            exclusive,
            [
                Some("s".into()),
                Some("(s 0)".into()),
                Some("(s (0 1))".into())
            ]
        );
        assert_eq!(scan_exclusive(&leaves(2), None, &mut tree)[0], None);
    }

    /// The serial executor gives the canonical grouping, from any exclusive prefix, for both
    /// kinds.
    #[test]
    fn the_serial_executor_gives_the_canonical_grouping() {
        for n in [0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 33, 100] {
            let items = leaves(n);
            for before in [None, Some("s".to_string())] {
                let mut exclusive = vec![None; n];
                let mut inclusive = vec![None; n];
                scan_serial(
                    items.clone(),
                    before.clone(),
                    ScanKind::Exclusive,
                    &mut tree,
                    &mut |j, v| exclusive[j] = v,
                );
                scan_serial(
                    items.clone(),
                    before.clone(),
                    ScanKind::Inclusive,
                    &mut tree,
                    &mut |j, v| inclusive[j] = v,
                );
                assert_eq!(exclusive, scan_exclusive(&items, before.clone(), &mut tree));
                let want: Vec<Option<String>> = scan_inclusive(&items, before.clone(), &mut tree)
                    .into_iter()
                    .map(Some)
                    .collect();
                assert_eq!(inclusive, want, "n = {n}, before {before:?}");
            }
        }
    }

    /// Pieces of a row scanned on their own from their prefixes (the totals scanned
    /// serially) give the row's canonical scan.
    #[test]
    fn pieces_from_their_prefixes_give_the_row() {
        let items = leaves(45);
        let want = scan_inclusive(&items, None, &mut tree);
        for piece in [1, 2, 4, 8, 16, 64] {
            let totals: Vec<String> = items
                .chunks(piece)
                .filter_map(|c| reduce_canonical(c, &mut tree))
                .collect();
            let mut prefixes = vec![None; totals.len()];
            scan_serial(totals, None, ScanKind::Exclusive, &mut tree, &mut |m, v| {
                prefixes[m] = v
            });
            let mut got = vec![String::new(); items.len()];
            for (m, chunk) in items.chunks(piece).enumerate() {
                let before = prefixes[m].clone();
                scan_serial(
                    chunk.to_vec(),
                    before,
                    ScanKind::Inclusive,
                    &mut tree,
                    &mut |j, v| got[m * piece + j] = v.expect("inclusive"),
                );
            }
            assert_eq!(got, want, "pieces of {piece}");
        }
    }

    #[test]
    fn an_associative_operator_gives_the_left_fold() {
        let items: Vec<u64> = (1..=100).collect();
        let sums = scan_inclusive(&items, None, &mut |a, b| a + b);
        assert_eq!(sums[99], 5050);
        assert_eq!(sums[9], 55);
    }

    /// Every tile size, with and without an initial value, over ragged lengths: the tiled
    /// executor's grouping is the canonical one.
    #[test]
    fn tiled_executors_give_the_canonical_grouping() {
        for n in [0, 1, 2, 3, 5, 8, 13, 31, 64, 100, 257] {
            let items = leaves(n);
            for init in [None, Some("s".to_string())] {
                let want = scan_exclusive(&items, init.clone(), &mut tree);
                for tile_log2 in 1..=6 {
                    let got = scan_tiled(&items, init.clone(), tile_log2, &mut tree);
                    assert_eq!(got, want, "n = {n}, tiles of 2^{tile_log2}, init {init:?}");
                }
            }
        }
    }
}
