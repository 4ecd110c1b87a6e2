//! The one-pass scan entry: subgroups take the tiles of rows whose leaves are consecutive in
//! memory by ticket and scan each from its exclusive prefix, in the canonical order of
//! `brook_ir::scan_order`, reading the input about once and writing the output once — for
//! any subgroup size, and without counting on workgroups to make progress together.
//!
//! A row is cut into tiles of `T` leaves (`piece`, a power of two); `pieces` tiles a row. The
//! exclusive prefix of tile `j` is the left fold of the aligned blocks of `j`'s binary
//! digits, the highest first, each the canonical tree over its tiles: node `(b, s)` of the
//! row's tree of tiles (the `2^b` tiles from `s`). Tiles publish those nodes in a table:
//! - a tile (not the row's last) publishes its total, node `(0, j)`, then each node it ends
//!   — while bit `c` of `j` is set, node `(c + 1, s - 2^c)` is its left sibling
//!   `(c, s - 2^c)` combined with the node `(c, s)` it has;
//! - then it reads the nodes of its digits and folds them onto the row's first prefix (an
//!   exclusive scan's initial value, or nothing), and scans its leaves from there with the
//!   subgroup scan entry's code ([`super::scan_warp`]), loading them again.
//!
//! Tickets are taken in order, so a tile waits only on tiles that were given out before it.
//! Vulkan does not promise that their workgroups run meanwhile, so no wait is unbounded (the
//! "decoupled fallback" of Smith, Levien and Owens, SPAA 2025): a node still missing after
//! `spins` reads is reduced by the waiting subgroup from the input itself (and published).
//! Every writer of a node writes the same bits, so a node published twice is no harm.
//!
//! The table holds, per row, `2 * pieces` entries in the in-order numbering of the tree
//! (node `(b, s)` at `2 s + 2^b - 1`), each [`entry_bytes`] long: a 64-bit word per 32 bits of
//! the value, the bits in its low half and 1 in its high half, written and read with relaxed
//! atomics at device scope. A word is its own flag: a reader needs no ordering between words,
//! and takes a node only when all its words are there. The table and the ticket (a `u32`)
//! start zeroed.
//!
//! Parameters: the scan pass's (`leaves`, `piece`, `pieces`, `mode` bit 2 for an exclusive
//! scan, `init`), then [`PassParam::Table`] and [`PassParam::Ticket`].

use super::scan::{combine_after, initial_prefix, Held};
use super::scan_warp::Piece;
use super::warp::{piece_value, PieceLeaves};
use super::{mode_bit, mul_add, read_all, u64_op, unravel, value_vars, write_all, Pass, Reduction};
use crate::abi::BlockLayout;
use crate::gpu::{Gpu, PassParam, Subgroups};
use crate::leaves::leaves;
use crate::lower::StreamRef;
use brook_ir::{BinaryOp, Literal, ScalarKind, UnaryOp};

/// Levels of the fallback's stack: a node it reduces has at most `2^FALLBACK_LEVELS` leaves.
const FALLBACK_LEVELS: u32 = 40;
/// Bits of a tile's index in its row: a row has fewer than `2^TILE_BITS` tiles.
pub const TILE_BITS: u32 = 32;
/// A published word's flag, its high half.
const FLAG: u64 = 1 << 32;

/// Whether the entry scans values of `r`'s type: each of its scalars 4 or 8 bytes long (a
/// published word carries 32 bits).
pub fn applies(module: &brook_ir::Module, r: &Reduction) -> bool {
    leaves(module, &r.ty)
        .iter()
        .all(|leaf| leaf.kind != ScalarKind::Bool && matches!(leaf.kind.size(), 4 | 8))
}

/// Bytes of a table entry for values of `value_size` bytes: a word of 8 bytes per 4 bytes.
pub fn entry_bytes(value_size: u32) -> u64 {
    2 * u64::from(value_size).next_multiple_of(4)
}

/// The entry's body: tiles by ticket until every row's are taken; a node waited for at most
/// `spins` reads.
pub fn emit<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    layout: &BlockLayout,
    (pass, input): (&Pass<G::Leaf>, &StreamRef<G::Leaf>),
    spins: u32,
) -> Result<(), G::Error> {
    let sub = g.subgroups();
    let table = g.pass_param(PassParam::Table);
    let ticket = g.pass_param(PassParam::Ticket);
    let init = g.pass_param(PassParam::Init);
    let exclusive = mode_bit(g, pass.mode, 4);
    let tiles = u64_op(g, BinaryOp::Mul, pass.targets, pass.pieces);
    let each = g.begin_loop();
    let t = take_ticket(g, &sub, ticket);
    let done = u64_op(g, BinaryOp::Ge, t, tiles);
    let stop = g.begin_if(done);
    g.jump_break(each);
    g.end_if(stop);
    // Ticket `t`: tile `j` of row `row`, the scan entry's worker `j * rows + row`.
    let row = g.div_index(t, pass.pieces);
    let before = u64_op(g, BinaryOp::Mul, row, pass.pieces);
    let j = u64_op(g, BinaryOp::Sub, t, before);
    let two = g.index_constant(2);
    let entries = u64_op(g, BinaryOp::Mul, before, two);
    let tile = Tile {
        r,
        pass,
        input,
        sub: &sub,
        tpos: unravel(g, row, &pass.domain),
        row,
        j,
        table,
        entries,
        spins,
    };
    let e = tile.prefix(g, init, exclusive)?;
    let w = mul_add(g, j, pass.targets, row);
    Piece::start(g, r, layout, (pass, input), (&sub, w), Some(&e)).scan(g)?;
    g.begin_continuing(each);
    g.end_loop(each);
    Ok(())
}

/// The next ticket, in every lane: lane 0 takes it.
fn take_ticket<'ir, G: Gpu<'ir>>(g: &mut G, sub: &Subgroups<G::Leaf>, at: G::Leaf) -> G::Leaf {
    let got = g.temporary(ScalarKind::U64);
    let zero = g.index_constant(0);
    g.write_var(got, zero);
    let first = u64_op(g, BinaryOp::Eq, sub.lane, zero);
    let only = g.begin_if(first);
    let old = g.atomic_add_u32(at, 1);
    g.write_var(got, old);
    g.end_if(only);
    let mine = g.read_var(got);
    g.first_lane(ScalarKind::U64, mine)
}

/// A subgroup's tile `j` of row `row` (at `tpos` in the domain), and where the row's nodes
/// are published.
struct Tile<'a, L> {
    r: &'a Reduction,
    pass: &'a Pass<L>,
    input: &'a StreamRef<L>,
    sub: &'a Subgroups<L>,
    tpos: Vec<L>,
    row: L,
    j: L,
    table: L,
    /// The row's first entry in the table.
    entries: L,
    spins: u32,
}

impl<L: Copy> Tile<'_, L> {
    /// Publishes the tile's nodes (unless it is the row's last) and folds the nodes of its
    /// digits into its exclusive prefix. One loop of steps, each getting one node, so the
    /// wait and its fallback are written once: while `publishing`, the tile's total, then
    /// the left sibling of the node built so far (`built` levels high) while the tile ends
    /// its parent; then for each set bit of `j`, the highest first, that digit's node.
    fn prefix<'ir, G: Gpu<'ir, Leaf = L>>(
        &self,
        g: &mut G,
        init: L,
        exclusive: L,
    ) -> Result<Held<G::Var>, G::Error> {
        let r = self.r;
        let e = Held::fresh(g, r);
        initial_prefix(g, r, init, exclusive, &e);
        let node = value_vars(g, r);
        let one = g.index_constant(1);
        let final_tile = u64_op(g, BinaryOp::Sub, self.pass.pieces, one);
        let last = u64_op(g, BinaryOp::Eq, self.j, final_tile);
        let publishing = g.temporary(ScalarKind::Bool);
        let not_last = g.unary(UnaryOp::Not, ScalarKind::Bool, last);
        g.write_var(publishing, not_last);
        let has_total = g.temporary(ScalarKind::Bool);
        let no = g.literal(Literal::bool(false));
        g.write_var(has_total, no);
        let built = g.temporary(ScalarKind::U64);
        let zero = g.index_constant(0);
        g.write_var(built, zero);
        let digits = g.temporary(ScalarKind::U64);
        let all = g.index_constant(u64::from(TILE_BITS));
        g.write_var(digits, all);

        let steps = g.begin_loop();
        let (level, start, own) = (
            g.temporary(ScalarKind::U64),
            g.temporary(ScalarKind::U64),
            g.temporary(ScalarKind::Bool),
        );
        g.write_var(own, no);
        let in_publication = g.read_var(publishing);
        let phase = g.begin_if(in_publication);
        {
            let started = g.read_var(has_total);
            let which = g.begin_if(started);
            let c = g.read_var(built);
            let ends_parent = self.bit_of_j(g, c);
            let parent = g.begin_if(ends_parent);
            g.begin_else(&parent);
            g.write_var(publishing, no);
            g.jump_continue(steps);
            g.end_if(parent);
            let span = u64_op(g, BinaryOp::Shl, one, c);
            let aligned = self.aligned_j(g, c);
            let sibling = u64_op(g, BinaryOp::Sub, aligned, span);
            g.write_var(level, c);
            g.write_var(start, sibling);
            g.begin_else(&which);
            let yes = g.literal(Literal::bool(true));
            g.write_var(own, yes);
            g.write_var(level, zero);
            g.write_var(start, self.j);
            g.end_if(which);
        }
        g.begin_else(&phase);
        {
            let d = g.read_var(digits);
            let finished = u64_op(g, BinaryOp::Eq, d, zero);
            let stop = g.begin_if(finished);
            g.jump_break(steps);
            g.end_if(stop);
            let b = u64_op(g, BinaryOp::Sub, d, one);
            g.write_var(digits, b);
            let set = self.bit_of_j(g, b);
            let skip = g.begin_if(set);
            g.begin_else(&skip);
            g.jump_continue(steps);
            g.end_if(skip);
            let above = u64_op(g, BinaryOp::Add, b, one);
            let block = self.aligned_j(g, above);
            g.write_var(level, b);
            g.write_var(start, block);
        }
        g.end_if(phase);
        let (at_level, at_start, is_own) = (g.read_var(level), g.read_var(start), g.read_var(own));
        let value = self.node(g, (at_level, at_start), is_own)?;
        let phase = g.begin_if(in_publication);
        {
            let started = g.read_var(has_total);
            let which = g.begin_if(started);
            let right = read_all(g, &node);
            let merged = g.combine_step(r, &value, &right)?;
            write_all(g, &node, &merged);
            let c = g.read_var(built);
            let up = u64_op(g, BinaryOp::Add, c, one);
            g.write_var(built, up);
            let at = self.entry(g, up, at_start);
            self.publish(g, at, &merged);
            g.begin_else(&which);
            write_all(g, &node, &value);
            let yes = g.literal(Literal::bool(true));
            g.write_var(has_total, yes);
            g.end_if(which);
        }
        g.begin_else(&phase);
        {
            combine_after(g, r, &e.value, &e, &value)?;
            let yes = g.literal(Literal::bool(true));
            g.write_var(e.has, yes);
        }
        g.end_if(phase);
        g.begin_continuing(steps);
        g.end_loop(steps);
        Ok(e)
    }

    /// Whether bit `b` of `j` is set.
    fn bit_of_j<'ir, G: Gpu<'ir, Leaf = L>>(&self, g: &mut G, b: L) -> L {
        let one = g.index_constant(1);
        let shifted = u64_op(g, BinaryOp::Shr, self.j, b);
        let bit = u64_op(g, BinaryOp::BitAnd, shifted, one);
        u64_op(g, BinaryOp::Eq, bit, one)
    }

    /// `j` with its low `b` bits cleared.
    fn aligned_j<'ir, G: Gpu<'ir, Leaf = L>>(&self, g: &mut G, b: L) -> L {
        let down = u64_op(g, BinaryOp::Shr, self.j, b);
        u64_op(g, BinaryOp::Shl, down, b)
    }

    /// The address of node `(level, start)`'s entry.
    fn entry<'ir, G: Gpu<'ir, Leaf = L>>(&self, g: &mut G, level: L, start: L) -> L {
        let one = g.index_constant(1);
        let span = u64_op(g, BinaryOp::Shl, one, level);
        let twice = u64_op(g, BinaryOp::Add, start, start);
        let index = u64_op(g, BinaryOp::Add, twice, span);
        let index = u64_op(g, BinaryOp::Sub, index, one);
        let index = u64_op(g, BinaryOp::Add, self.entries, index);
        let bytes = g.index_constant(entry_bytes(self.r.value_size));
        mul_add(g, index, bytes, self.table)
    }

    /// Node `(level, start)`'s value, in every lane: read from the table (up to `spins`
    /// times while it is missing; not at all for the tile's own total), else reduced from
    /// the input and published.
    fn node<'ir, G: Gpu<'ir, Leaf = L>>(
        &self,
        g: &mut G,
        (level, start): (L, L),
        own: L,
    ) -> Result<Vec<L>, G::Error> {
        let r = self.r;
        let value = value_vars(g, r);
        let ready = g.temporary(ScalarKind::Bool);
        let no = g.literal(Literal::bool(false));
        g.write_var(ready, no);
        let at = self.entry(g, level, start);
        let elsewhere = g.unary(UnaryOp::Not, ScalarKind::Bool, own);
        let reading = g.begin_if(elsewhere);
        {
            let tries = g.temporary(ScalarKind::U64);
            let zero = g.index_constant(0);
            g.write_var(tries, zero);
            let wait = g.begin_loop();
            let (there, got) = self.read(g, at);
            let found = g.begin_if(there);
            write_all(g, &value, &got);
            let yes = g.literal(Literal::bool(true));
            g.write_var(ready, yes);
            g.jump_break(wait);
            g.end_if(found);
            let n = g.read_var(tries);
            let limit = g.index_constant(u64::from(self.spins));
            let tired = u64_op(g, BinaryOp::Ge, n, limit);
            let give_up = g.begin_if(tired);
            g.jump_break(wait);
            g.end_if(give_up);
            let one = g.index_constant(1);
            let next = u64_op(g, BinaryOp::Add, n, one);
            g.write_var(tries, next);
            g.begin_continuing(wait);
            g.end_loop(wait);
        }
        g.end_if(reading);
        let was_ready = g.read_var(ready);
        let missing = g.unary(UnaryOp::Not, ScalarKind::Bool, was_ready);
        let compute = g.begin_if(missing);
        {
            let tile = self.pass.piece;
            let lo = u64_op(g, BinaryOp::Mul, start, tile);
            let span = u64_op(g, BinaryOp::Shl, tile, level);
            let from_scratch = g.literal(Literal::bool(false));
            let leaves = PieceLeaves::new(
                g,
                r,
                (self.pass, self.input),
                (self.sub, &self.tpos),
                (self.row, lo),
                from_scratch,
            );
            let got = piece_value(g, r, &leaves, span, FALLBACK_LEVELS)?;
            write_all(g, &value, &got);
            self.publish(g, at, &got);
        }
        g.end_if(compute);
        Ok(read_all(g, &value))
    }

    /// Reads the entry at `at`: whether every word of it is there (the same in every lane:
    /// lane 0's reads), and the value.
    fn read<'ir, G: Gpu<'ir, Leaf = L>>(&self, g: &mut G, at: L) -> (L, Vec<L>) {
        let mut there = g.literal(Literal::bool(true));
        let mut values = Vec::new();
        let (zero, low_half) = (g.index_constant(0), g.index_constant(FLAG - 1));
        let half = g.index_constant(32);
        let mut offset = 0;
        for leaf in leaves(g.module(), &self.r.ty) {
            let mut bits = None;
            for w in 0..leaf.kind.size() as u64 / 4 {
                let by = g.index_constant(offset);
                offset += 8;
                let addr = u64_op(g, BinaryOp::Add, at, by);
                let word = g.atomic_load_u64(addr);
                let word = g.first_lane(ScalarKind::U64, word);
                let flag = u64_op(g, BinaryOp::Shr, word, half);
                let has = u64_op(g, BinaryOp::Ne, flag, zero);
                there = g.binary(BinaryOp::LogicAnd, ScalarKind::Bool, there, has);
                let low = u64_op(g, BinaryOp::BitAnd, word, low_half);
                bits = Some(match bits {
                    None => low,
                    Some(below) => {
                        let shift = g.index_constant(32 * w);
                        let high = u64_op(g, BinaryOp::Shl, low, shift);
                        u64_op(g, BinaryOp::BitOr, below, high)
                    }
                });
            }
            let bits = bits.expect("a scalar has a word");
            values.push(g.from_bits(leaf.kind, bits));
        }
        (there, values)
    }

    /// Publishes `value` at entry `at` (lane 0 writes it).
    fn publish<'ir, G: Gpu<'ir, Leaf = L>>(&self, g: &mut G, at: L, value: &[L]) {
        let zero = g.index_constant(0);
        let first = u64_op(g, BinaryOp::Eq, self.sub.lane, zero);
        let only = g.begin_if(first);
        let (flag, low_half) = (g.index_constant(FLAG), g.index_constant(FLAG - 1));
        let mut offset = 0;
        for (leaf, &v) in leaves(g.module(), &self.r.ty).iter().zip(value) {
            let bits = g.to_bits(leaf.kind, v);
            for w in 0..leaf.kind.size() as u64 / 4 {
                let shift = g.index_constant(32 * w);
                let part = u64_op(g, BinaryOp::Shr, bits, shift);
                let part = u64_op(g, BinaryOp::BitAnd, part, low_half);
                let word = u64_op(g, BinaryOp::BitOr, part, flag);
                let by = g.index_constant(offset);
                offset += 8;
                let addr = u64_op(g, BinaryOp::Add, at, by);
                g.atomic_store_u64(addr, word);
            }
        }
        g.end_if(only);
    }
}
