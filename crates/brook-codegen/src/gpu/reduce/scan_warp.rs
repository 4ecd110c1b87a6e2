//! The subgroup scan entry: a subgroup scans one aligned piece of a row whose leaves are
//! consecutive in memory, from the piece's exclusive prefix, in the canonical order of
//! `brook_ir::scan_order`, for any subgroup size.
//!
//! The piece goes by in chunks of `S * R` leaves ([`super::warp`]'s chunks: lane `l` loads
//! the run of `R` leaves `R l ..`, reduces it as a tree, and `log2 S` butterfly levels make
//! the chunk's total in every lane). A position's exclusive prefix is the left fold of the
//! aligned blocks of its binary digits, largest first, so it splits at every aligned level:
//! - the chunk's prefix comes from the piece's prefix and the waiting chunks, by
//!   [`super::scan`]'s binary counter of chunk totals (every lane keeps the same one);
//! - lane `l`'s run prefix folds onto it, for each set bit `b` of `l` from the highest, the
//!   block of `2^b` runs before it: the lower half of the butterfly at level `b`;
//! - leaf `j` of the run folds onto that, for each set bit of `j`, a node of the run's tree.
//!
//! Then an inclusive scan combines the leaf itself last. A last, partial chunk loads only its
//! leaves and combines nothing missing (pruned as [`super::warp`] prunes); its total is never
//! needed. Mode bits as [`super::scan`]'s.

use super::scan::{combine_after, prefix_of_piece, push, Held, Level};
use super::warp::{
    across_lanes, each_chunk, each_worker, load_leaf, load_run, pruned_combine, PieceLeaves,
};
use super::{
    index_vars, mode_bit, mul_add, next_positions, one_quad_scalar, read_all, share_of,
    store_element, store_slot, target_ref, u64_op, unravel, value_vars, write_all, Pass, Reduction,
};
use crate::abi::BlockLayout;
use crate::gpu::{Gpu, PassParam, SubgroupSize};
use crate::lower::StreamRef;
use brook_ir::{BinaryOp, Literal, ScalarKind};

/// A value's leaves.
type Value<L> = Vec<L>;
/// A run's tree: `nodes[level][k]` is node `(k 2^level, 2^level)`.
type RunTree<L> = [Vec<Value<L>>];

/// The most leaves the entry scans in one piece (the runtime's pieces: a level of a scan in
/// levels). The chunk counter has a level for each bit of a piece's chunk count, each level
/// kept through the piece's loop, so it is sized by the pieces.
pub const MAX_PIECE: u64 = 1 << 12;

/// The entry's body: every piece of the pass, a subgroup each.
pub fn emit<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    layout: &BlockLayout,
    pass: &Pass<G::Leaf>,
    input: &StreamRef<G::Leaf>,
) -> Result<(), G::Error> {
    let sub = g.subgroups();
    each_worker(g, pass, &sub, |g, w| {
        Piece::start(g, r, layout, (pass, input), (&sub, w), (None, MAX_PIECE)).scan(g)
    })
}

/// A whole chunk loaded and reduced, waiting for its prefix: where its lane's run starts in
/// the row, the run's leaves, the chunk's total and the butterfly's lower blocks.
pub(super) struct HeldChunk<V> {
    first: V,
    xs: Vec<Vec<V>>,
    pub total: Vec<V>,
    lowers: Vec<Vec<V>>,
}

/// One subgroup's piece being scanned.
pub(super) struct Piece<'a, L, V> {
    r: &'a Reduction,
    layout: &'a BlockLayout,
    pass: &'a Pass<L>,
    at: PieceLeaves<L>,
    /// The row (target) and its position in the domain.
    t: L,
    tpos: Vec<L>,
    /// The piece's first leaf in its row and its leaves.
    lo: L,
    count: L,
    to_output: L,
    exclusive: L,
    /// The next chunk's exclusive prefix, and the counter of chunk totals.
    e: Held<V>,
    levels: Vec<Level<V>>,
}

impl<'a, L: Copy, V: Copy> Piece<'a, L, V> {
    /// Worker `w`'s piece of at most `most_leaves` leaves, from its exclusive prefix:
    /// `prefix` where the caller has it, else from the pass's parameters
    /// ([`prefix_of_piece`]).
    pub(super) fn start<'ir, G: Gpu<'ir, Leaf = L, Var = V>>(
        g: &mut G,
        r: &'a Reduction,
        layout: &'a BlockLayout,
        (pass, input): (&'a Pass<L>, &StreamRef<L>),
        (sub, w): (&crate::gpu::Subgroups<L>, L),
        (prefix, most_leaves): (Option<&Held<V>>, u64),
    ) -> Self {
        let share = share_of(g, w, pass.targets, pass.piece, pass.leaves_per_target);
        let (t, j) = (share.unit, share.piece_index);
        let tpos = unravel(g, t, &pass.domain);
        let from_scratch = mode_bit(g, pass.mode, 1);
        let exclusive = mode_bit(g, pass.mode, 4);
        let e = match prefix {
            Some(given) => {
                let e = Held::fresh(g, r);
                e.copy_from(g, given);
                e
            }
            None => {
                let (pre, init) = (g.pass_param(PassParam::Pre), g.pass_param(PassParam::Init));
                prefix_of_piece(g, r, (pre, init), exclusive, (t, j), pass.pieces)
            }
        };
        let at = PieceLeaves::new(
            g,
            r,
            (pass, input),
            (sub, &tpos),
            (t, share.lo),
            from_scratch,
        );
        let levels = (0..counter_levels(&at, most_leaves))
            .map(|_| Level {
                block: value_vars(g, r),
                above: Held::fresh(g, r),
            })
            .collect();
        Piece {
            r,
            layout,
            pass,
            at,
            t,
            tpos,
            lo: share.lo,
            count: share.count,
            to_output: mode_bit(g, pass.mode, 2),
            exclusive,
            e,
            levels,
        }
    }

    /// Whole chunks while they last, then the partial one.
    pub(super) fn scan<'ir, G: Gpu<'ir, Leaf = L, Var = V>>(
        &self,
        g: &mut G,
    ) -> Result<(), G::Error> {
        let chunk = self.at.chunk(g);
        each_chunk(
            g,
            (chunk, self.count),
            |g, offset, left| self.chunk(g, offset, Some(left)).map(drop),
            |g, offset| self.chunk(g, offset, None),
            |g, total, c| push(g, self.r, &self.levels, c, &total, &self.e),
        )?;
        Ok(())
    }

    /// Scans the chunk at `offset` from the chunk prefix `e` (all of it, or its first
    /// `valid` leaves) and writes its prefixes; the chunk's total (used only when whole).
    fn chunk<'ir, G: Gpu<'ir, Leaf = L, Var = V>>(
        &self,
        g: &mut G,
        offset: L,
        valid: Option<L>,
    ) -> Result<Vec<L>, G::Error> {
        let (r, run) = (self.r, self.at.run);
        let run_leaves = g.index_constant(run);
        let own = u64_op(g, BinaryOp::Mul, self.at.lane, run_leaves);
        let first = u64_op(g, BinaryOp::Add, offset, own);
        // Leaf `k` of the run is there (always, in a whole chunk).
        let present = |g: &mut G, k: u64| {
            valid.map(|valid| {
                let k = g.index_constant(k);
                let i = u64_op(g, BinaryOp::Add, own, k);
                u64_op(g, BinaryOp::Lt, i, valid)
            })
        };
        let xs = match valid {
            None => load_run(g, r, &self.at, first),
            Some(_) => (0..run)
                .map(|k| {
                    let into = value_vars(g, r);
                    let here = present(g, k).expect("a partial chunk");
                    let load = g.begin_if(here);
                    let k = g.index_constant(k);
                    let i = u64_op(g, BinaryOp::Add, first, k);
                    let v = load_leaf(g, r, &self.at, i);
                    write_all(g, &into, &v);
                    g.end_if(load);
                    read_all(g, &into)
                })
                .collect(),
        };
        let nodes = self.run_tree(g, &xs, &present)?;
        let run_total = nodes.last().expect("the root")[0].clone();
        let (total, lowers) = across_lanes(g, r, &self.at, run_total, valid)?;
        let lane_here = present(g, 0);
        let lane_prefix = self.lane_prefix(g, &lowers, lane_here)?;
        self.write_run(g, (first, &xs, &nodes), &lane_prefix, &present)?;
        Ok(total)
    }

    /// The run's tree over `xs`: `nodes[level][k]` is node `(k 2^level, 2^level)`; a node
    /// whose right half is missing (`present`) is its left half.
    fn run_tree<'ir, G: Gpu<'ir, Leaf = L, Var = V>>(
        &self,
        g: &mut G,
        xs: &[Value<L>],
        present: &impl Fn(&mut G, u64) -> Option<L>,
    ) -> Result<Vec<Vec<Value<L>>>, G::Error> {
        let (r, run) = (self.r, self.at.run);
        let mut nodes = vec![xs.to_vec()];
        while nodes.last().is_some_and(|level| level.len() > 1) {
            let below = nodes.last().expect("a level");
            let width = (run as usize / below.len()) as u64;
            let mut up = Vec::with_capacity(below.len() / 2);
            for (p, pair) in below.chunks(2).enumerate() {
                up.push(match present(g, (2 * p as u64 + 1) * width) {
                    None => g.combine_step(r, &pair[0], &pair[1])?,
                    Some(here) => pruned_combine(g, r, here, &pair[0], &pair[1])?,
                });
            }
            nodes.push(up);
        }
        Ok(nodes)
    }

    /// Loads and reduces the whole chunk at `offset` into variables, to be scanned once the
    /// piece's prefix is known ([`Self::release_chunk`]).
    pub(super) fn hold_chunk<'ir, G: Gpu<'ir, Leaf = L, Var = V>>(
        &self,
        g: &mut G,
        offset: L,
    ) -> Result<HeldChunk<V>, G::Error> {
        let r = self.r;
        let run_leaves = g.index_constant(self.at.run);
        let own = u64_op(g, BinaryOp::Mul, self.at.lane, run_leaves);
        let first = u64_op(g, BinaryOp::Add, offset, own);
        let xs = load_run(g, r, &self.at, first);
        let nodes = self.run_tree(g, &xs, &|_, _| None)?;
        let run_total = nodes.last().expect("the root")[0].clone();
        let (total, lowers) = across_lanes(g, r, &self.at, run_total, None)?;
        let keep = |g: &mut G, value: &[L]| {
            let vars = value_vars(g, r);
            write_all(g, &vars, value);
            vars
        };
        let first_var = g.temporary(ScalarKind::U64);
        g.write_var(first_var, first);
        Ok(HeldChunk {
            first: first_var,
            xs: xs.iter().map(|x| keep(g, x)).collect(),
            total: keep(g, &total),
            lowers,
        })
    }

    /// Scans a held chunk (chunk `c` of the piece) from the piece's prefix and the chunks
    /// before it, and writes its prefixes.
    pub(super) fn release_chunk<'ir, G: Gpu<'ir, Leaf = L, Var = V>>(
        &self,
        g: &mut G,
        held: &HeldChunk<V>,
        c: L,
    ) -> Result<(), G::Error> {
        let xs: Vec<Value<L>> = held.xs.iter().map(|x| read_all(g, x)).collect();
        let nodes = self.run_tree(g, &xs, &|_, _| None)?;
        let lane_prefix = self.lane_prefix(g, &held.lowers, None)?;
        let first = g.read_var(held.first);
        self.write_run(g, (first, &xs, &nodes), &lane_prefix, &|_, _| None)?;
        let total = read_all(g, &held.total);
        push(g, self.r, &self.levels, c, &total, &self.e)
    }

    /// Makes `prefix` the piece's exclusive prefix.
    pub(super) fn set_prefix<'ir, G: Gpu<'ir, Leaf = L, Var = V>>(
        &self,
        g: &mut G,
        prefix: &Held<V>,
    ) {
        self.e.copy_from(g, prefix);
    }

    /// The piece's leaves.
    pub(super) fn leaves(&self) -> &PieceLeaves<L> {
        &self.at
    }

    /// This lane's run prefix: the chunk's prefix folded with the lower blocks of the set
    /// bits of the lane, the highest first (levels past the subgroup have no set bits).
    /// In a partial chunk a lane whose run is missing folds nothing.
    fn lane_prefix<'ir, G: Gpu<'ir, Leaf = L, Var = V>>(
        &self,
        g: &mut G,
        lowers: &[Vec<V>],
        lane_here: Option<L>,
    ) -> Result<Held<V>, G::Error> {
        let r = self.r;
        let held = Held::fresh(g, r);
        held.copy_from(g, &self.e);
        let guard = lane_here.map(|here| g.begin_if(here));
        for (b, lower) in lowers.iter().enumerate().rev() {
            let bit = g.index_constant(1 << b);
            let set = u64_op(g, BinaryOp::BitAnd, self.at.lane, bit);
            let zero = g.index_constant(0);
            let set = u64_op(g, BinaryOp::Ne, set, zero);
            let fold = g.begin_if(set);
            let block = read_all(g, lower);
            combine_after(g, r, &held.value, &held, &block)?;
            let yes = g.literal(Literal::bool(true));
            g.write_var(held.has, yes);
            g.end_if(fold);
        }
        if let Some(guard) = guard {
            g.end_if(guard);
        }
        Ok(held)
    }

    /// Writes the prefixes of the run from leaf `first` (leaves `xs`, tree `nodes`) onto
    /// the lane's prefix: leaf `j`'s exclusive prefix is `F(j & (j - 1))` combined with the
    /// node of `j`'s lowest set bit that ends at `j`.
    fn write_run<'ir, G: Gpu<'ir, Leaf = L, Var = V>>(
        &self,
        g: &mut G,
        (first, xs, nodes): (L, &[Value<L>], &RunTree<L>),
        lane_prefix: &Held<V>,
        present: &impl Fn(&mut G, u64) -> Option<L>,
    ) -> Result<(), G::Error> {
        let r = self.r;
        let mut folds: Vec<Held<V>> = Vec::with_capacity(xs.len());
        let mut outs = Vec::with_capacity(xs.len());
        for j in 0..xs.len() {
            let fold = if j == 0 {
                lane_prefix.clone()
            } else {
                let low = j & j.wrapping_neg();
                let from = &folds[j & (j - 1)];
                let node = &nodes[low.trailing_zeros() as usize][(j - low) / low];
                let next = Held::fresh(g, r);
                combine_after(g, r, &next.value, from, node)?;
                let yes = g.literal(Literal::bool(true));
                g.write_var(next.has, yes);
                next
            };
            let guard = present(g, j as u64).map(|here| g.begin_if(here));
            let out = value_vars(g, r);
            let kind = g.begin_if(self.exclusive);
            let prefix = read_all(g, &fold.value);
            write_all(g, &out, &prefix);
            g.begin_else(&kind);
            combine_after(g, r, &out, &fold, &xs[j])?;
            g.end_if(kind);
            if let Some(guard) = guard {
                g.end_if(guard);
            }
            outs.push(out);
            folds.push(fold);
        }
        let row_first = u64_op(g, BinaryOp::Add, self.lo, first);
        let whole = present(g, 0).is_none();
        let quads = one_quad_scalar(g.module(), g.kernel(), r).filter(|_| whole);
        let by_quads = quads.map(|kind| {
            let (addr, side_by_side) = self.run_address(g, row_first);
            let arms = g.begin_if(side_by_side);
            for (q, four) in outs.chunks(4).enumerate() {
                let values = [0, 1, 2, 3].map(|k| g.read_var(four[k][0]));
                let offset = g.index_constant(16 * q as u64);
                let at = u64_op(g, BinaryOp::Add, addr, offset);
                g.store_aligned_quad(kind, at, values);
            }
            g.begin_else(&arms);
            arms
        });
        let first_pos = unravel(g, row_first, &self.pass.tile);
        let lpos = index_vars(g, &first_pos);
        let positions = next_positions(g, &lpos, &self.pass.tile, self.at.run);
        for (j, out) in outs.iter().enumerate() {
            let guard = present(g, j as u64).map(|here| g.begin_if(here));
            let out = read_all(g, out);
            let offset = g.index_constant(j as u64);
            let leaf = u64_op(g, BinaryOp::Add, row_first, offset);
            self.store(g, leaf, &positions[j], &out);
            if let Some(guard) = guard {
                g.end_if(guard);
            }
        }
        if let Some(arms) = by_quads {
            g.end_if(arms);
        }
        Ok(())
    }

    /// Where a whole run of prefixes from leaf `leaf` of the row goes, and whether it lies
    /// side by side there, 16-byte aligned: in the output stream (unit pitch along the last
    /// axis, the run inside one row of the tile), or in the row of the scratch array.
    fn run_address<'ir, G: Gpu<'ir, Leaf = L, Var = V>>(&self, g: &mut G, leaf: L) -> (L, L) {
        let (r, pass) = (self.r, self.pass);
        let here = unravel(g, leaf, &pass.tile);
        let pos: Vec<L> = (0..self.tpos.len())
            .map(|k| mul_add(g, self.tpos[k], pass.tile[k], here[k]))
            .collect();
        let output = target_ref(g, r, self.layout, pos.len());
        let index = g.element_index(output.offset, &pos, &output.pitch);
        let output_addr = g.element_address(output.base, index, output.size);
        let (zero, one) = (g.index_constant(0), g.index_constant(1));
        let run = g.index_constant(self.at.run);
        let mut in_row = g.literal(Literal::bool(true));
        if let (Some(&pitch), Some(&at), Some(&row)) =
            (output.pitch.last(), here.last(), pass.tile.last())
        {
            let unit = u64_op(g, BinaryOp::Eq, pitch, one);
            let end = u64_op(g, BinaryOp::Add, at, run);
            let inside = u64_op(g, BinaryOp::Le, end, row);
            in_row = g.binary(BinaryOp::LogicAnd, ScalarKind::Bool, unit, inside);
        }
        let slot = mul_add(g, self.t, pass.leaves_per_target, leaf);
        let scratch_addr = g.element_address(pass.dst, slot, r.value_size);
        let addr = g.select(ScalarKind::U64, self.to_output, output_addr, scratch_addr);
        let yes = g.literal(Literal::bool(true));
        let lies = g.select(ScalarKind::Bool, self.to_output, in_row, yes);
        let fifteen = g.index_constant(15);
        let low = u64_op(g, BinaryOp::BitAnd, addr, fifteen);
        let aligned = u64_op(g, BinaryOp::Eq, low, zero);
        let side_by_side = g.binary(BinaryOp::LogicAnd, ScalarKind::Bool, lies, aligned);
        (addr, side_by_side)
    }

    /// Stores the prefix of leaf `leaf` of the row (at `here` in the tile): into the output
    /// stream in the pass that reads the streams, else into `dst[row][leaf]`.
    fn store<'ir, G: Gpu<'ir, Leaf = L, Var = V>>(
        &self,
        g: &mut G,
        leaf: L,
        here: &[L],
        out: &[L],
    ) {
        let (r, pass) = (self.r, self.pass);
        let to = g.begin_if(self.to_output);
        let pos: Vec<L> = (0..self.tpos.len())
            .map(|k| mul_add(g, self.tpos[k], pass.tile[k], here[k]))
            .collect();
        let output = target_ref(g, r, self.layout, pos.len());
        store_element(g, r, &output, &pos, out);
        g.begin_else(&to);
        let slot = mul_add(g, self.t, pass.leaves_per_target, leaf);
        store_slot(g, r, (pass.dst, slot), out);
        g.end_if(to);
    }
}

/// Levels of a piece's chunk counter: one per bit of the most chunks a piece of
/// `most_leaves` leaves has (chunks of the smallest size the subgroup may have), at least one.
fn counter_levels<L>(at: &PieceLeaves<L>, most_leaves: u64) -> usize {
    let smallest_chunk = match at.size {
        SubgroupSize::Fixed(size) => size * at.run,
        SubgroupSize::Runtime { .. } => at.run,
    };
    let chunks = most_leaves.div_ceil(smallest_chunk).next_power_of_two();
    (chunks.trailing_zeros() as usize).max(1)
}
