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
//!   subgroup scan entry's code ([`super::scan_warp`]). A whole tile of [`held_tile_leaves`]
//!   (not its row's last) was loaded and reduced into registers before the wait and is
//!   scanned from there; any other tile is loaded again.
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
use super::{
    mode_bit, mul_add, read_all, tree, u64_op, unravel, value_vars, write_all, Pass, Reduction,
};
use crate::abi::BlockLayout;
use crate::gpu::MAX_SUBGROUP;
use crate::gpu::{Gpu, PassParam, SubgroupSize, Subgroups};
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

/// The entry's body: the tile of the subgroup's ticket (none past the last); a node waited
/// for at most `spins` reads.
pub fn emit<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    layout: &BlockLayout,
    (pass, input): (&Pass<G::Leaf>, &StreamRef<G::Leaf>),
    tuning: &crate::Tuning,
) -> Result<(), G::Error> {
    let spins = tuning.scan_spins;
    let sub = g.subgroups();
    let table = g.pass_param(PassParam::Table);
    let ticket = g.pass_param(PassParam::Ticket);
    let init = g.pass_param(PassParam::Init);
    let exclusive = mode_bit(g, pass.mode, 4);
    let tiles = u64_op(g, BinaryOp::Mul, pass.targets, pass.pieces);
    // One ticket a subgroup (the launch has a subgroup per tile or more): a subgroup that
    // looped over tickets would run its loops ever longer, and lavapipe ends a
    // subgroup's loops after 65,535 iterations in all.
    let t = take_ticket(g, &sub, ticket);
    let done = u64_op(g, BinaryOp::Ge, t, tiles);
    let leave = g.begin_if(done);
    g.jump_return();
    g.end_if(leave);
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
        entry_bytes: entry_bytes(r.value_size),
        spins,
    };
    let w = mul_add(g, j, pass.targets, row);
    let first = Held::fresh(g, r);
    initial_prefix(g, r, init, exclusive, &first);
    let most = most_tile_leaves(r.value_size, tuning);
    let piece = Piece::start(g, r, layout, (pass, input), (&sub, w), (Some(&first), most));
    scan_tile(g, (r, tuning), &tile, &piece, (init, exclusive))
}

/// Scans the tile from its exclusive prefix. A whole tile that is not its row's last stays
/// in registers while it waits: its chunks are loaded and reduced first.
fn scan_tile<'ir, G: Gpu<'ir>>(
    g: &mut G,
    (r, tuning): (&Reduction, &crate::Tuning),
    tile: &Tile<'_, G::Leaf>,
    piece: &Piece<'_, G::Leaf, G::Var>,
    (init, exclusive): (G::Leaf, G::Leaf),
) -> Result<(), G::Error> {
    let (pass, j) = (tile.pass, tile.j);
    let chunk = piece.leaves().chunk(g);
    let chunks = chunks_per_tile(r.value_size, tuning);
    let count = g.index_constant(chunks);
    let held_leaves = u64_op(g, BinaryOp::Mul, chunk, count);
    let whole = u64_op(g, BinaryOp::Eq, held_leaves, pass.piece);
    let one = g.index_constant(1);
    let final_tile = u64_op(g, BinaryOp::Sub, pass.pieces, one);
    let not_last = u64_op(g, BinaryOp::Ne, j, final_tile);
    let held = g.binary(BinaryOp::LogicAnd, ScalarKind::Bool, whole, not_last);
    let total = value_vars(g, r);
    let holding = g.begin_if(held);
    let mut kept = Vec::new();
    for c in 0..chunks {
        let offset = g.index_constant(c);
        let offset = u64_op(g, BinaryOp::Mul, offset, chunk);
        kept.push(piece.hold_chunk(g, offset)?);
    }
    let totals = kept.iter().map(|k| read_all(g, &k.total)).collect();
    let value = tree(g, r, totals)?;
    write_all(g, &total, &value);
    g.end_if(holding);
    let e = tile.prefix(g, (init, exclusive), (held, &total))?;
    piece.set_prefix(g, &e);
    let scanning = g.begin_if(held);
    for (c, k) in kept.iter().enumerate() {
        let c = g.index_constant(c as u64);
        piece.release_chunk(g, k, c)?;
    }
    g.begin_else(&scanning);
    piece.scan(g)?;
    g.end_if(scanning);
    Ok(())
}

/// Chunks of a tile that a subgroup holds in registers while it waits for the tile's prefix
/// (a lane keeps a run of each): for values of up to 4 bytes 4, up to 8 bytes 2, else 1.
pub fn chunks_per_tile(value_size: u32, tuning: &crate::Tuning) -> u64 {
    if tuning.scan_chunks != 0 {
        return u64::from(tuning.scan_chunks);
    }
    match value_size {
        0..=4 => 4,
        5..=8 => 2,
        _ => 1,
    }
}

/// The most leaves a tile has with `tuning`: its `scan_tile`, else a held tile of the largest
/// subgroup (whose size is not always known when the entry is written).
fn most_tile_leaves(value_size: u32, tuning: &crate::Tuning) -> u64 {
    match tuning.scan_tile {
        0 => held_tile_leaves(value_size, MAX_SUBGROUP, tuning),
        tile => u64::from(tile),
    }
}

/// Leaves of a tile that a subgroup of `subgroup_size` lanes holds for values of
/// `value_size` bytes: the runtime's tile size where it can.
pub fn held_tile_leaves(value_size: u32, subgroup_size: u64, tuning: &crate::Tuning) -> u64 {
    chunks_per_tile(value_size, tuning) * subgroup_size * super::warp::run_leaves(value_size)
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
    g.shuffle_from(ScalarKind::U64, mine, zero)
}

/// A node a tile needs in one slot of a phase.
struct Request<L> {
    needed: L,
    /// The tile's own total (never read: the tile reduces it).
    own: L,
    level: L,
    start: L,
}

/// A round of a phase: its first slot, the subgroup's size, and the slots the phase uses.
struct Round<L> {
    looking: L,
    ones: L,
    base: L,
    size: L,
    top: L,
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
    /// The row's first entry in the table, and the bytes between entries.
    entries: L,
    entry_bytes: u64,
    spins: u32,
}

impl<L: Copy> Tile<'_, L> {
    /// Publishes the tile's nodes (unless it is the row's last) and folds the nodes of its
    /// digits into its exclusive prefix, in two phases of slots, each a node the tile needs. Publication: slot 0 is the tile's total, slot `s >= 1` the left sibling at
    /// level `s - 1` while the tile ends its parent, folded in order, each fold a node to
    /// publish. Look-back: slot `b` is the node of bit `b` of `j` where it is set, folded
    /// from the highest. A round gets the nodes of `S` slots at once, a lane each (one trip
    /// to memory for all), and folds them.
    fn prefix<'ir, G: Gpu<'ir, Leaf = L>>(
        &self,
        g: &mut G,
        (init, exclusive): (L, L),
        own: (L, &[G::Var]),
    ) -> Result<Held<G::Var>, G::Error> {
        let r = self.r;
        let e = Held::fresh(g, r);
        initial_prefix(g, r, init, exclusive, &e);
        // A held tile's total is known: published before anything is waited for.
        let publishing = g.begin_if(own.0);
        let total = read_all(g, own.1);
        let zero = g.index_constant(0);
        let at = self.entry(g, zero, self.j);
        self.publish(g, at, &total);
        g.end_if(publishing);
        let node = value_vars(g, r);
        let (zero, one) = (g.index_constant(0), g.index_constant(1));
        let final_tile = u64_op(g, BinaryOp::Sub, self.pass.pieces, one);
        let last = u64_op(g, BinaryOp::Eq, self.j, final_tile);
        let ones = self.count_bits(g, true);
        let top_a = u64_op(g, BinaryOp::Add, ones, one);
        let top_b = self.count_bits(g, false);
        let size = match self.sub.size {
            SubgroupSize::Fixed(size) => g.index_constant(size),
            SubgroupSize::Runtime { size, .. } => size,
        };
        let first = g.select(ScalarKind::U64, last, one, zero);
        let two = g.index_constant(2);
        counted_loop(g, first, two, |g, ph| {
            let looking = u64_op(g, BinaryOp::Eq, ph, one);
            let top = g.select(ScalarKind::U64, looking, top_b, top_a);
            let size_less = u64_op(g, BinaryOp::Sub, size, one);
            let spread = u64_op(g, BinaryOp::Add, top, size_less);
            let rounds = g.div_index(spread, size);
            counted_loop(g, zero, rounds, |g, k| {
                // Publication folds its rounds upward, the look-back downward.
                let k_less = u64_op(g, BinaryOp::Sub, rounds, one);
                let downward = u64_op(g, BinaryOp::Sub, k_less, k);
                let at_round = g.select(ScalarKind::U64, looking, downward, k);
                let base = u64_op(g, BinaryOp::Mul, at_round, size);
                let slot = u64_op(g, BinaryOp::Add, base, self.sub.lane);
                let value = self.gather(g, (looking, ones), slot, (base, size), own)?;
                let round_slots = Round {
                    looking,
                    ones,
                    base,
                    size,
                    top,
                };
                self.fold(g, &round_slots, &value, (&node, &e))
            })
        })?;
        Ok(e)
    }

    /// With `ones`: how many of `j`'s lowest bits are set; else `j`'s bit length.
    fn count_bits<'ir, G: Gpu<'ir, Leaf = L>>(&self, g: &mut G, ones: bool) -> L {
        let count = g.temporary(ScalarKind::U64);
        let zero = g.index_constant(0);
        g.write_var(count, zero);
        let each = g.begin_loop();
        let c = g.read_var(count);
        let shifted = u64_op(g, BinaryOp::Shr, self.j, c);
        let bits = g.index_constant(u64::from(TILE_BITS));
        let outside = u64_op(g, BinaryOp::Ge, c, bits);
        let end = if ones {
            let one = g.index_constant(1);
            let bit = u64_op(g, BinaryOp::BitAnd, shifted, one);
            u64_op(g, BinaryOp::Eq, bit, zero)
        } else {
            u64_op(g, BinaryOp::Eq, shifted, zero)
        };
        let end = g.binary(BinaryOp::LogicOr, ScalarKind::Bool, end, outside);
        let stop = g.begin_if(end);
        g.jump_break(each);
        g.end_if(stop);
        let one = g.index_constant(1);
        let next = u64_op(g, BinaryOp::Add, c, one);
        g.write_var(count, next);
        g.begin_continuing(each);
        g.end_loop(each);
        g.read_var(count)
    }

    /// The node in slot `slot` of a phase (`looking`: the look-back's; `ones`: how many low
    /// bits of `j` are set): whether the tile needs it, whether it is the tile's own total,
    /// its level and its first tile.
    fn request<'ir, G: Gpu<'ir, Leaf = L>>(
        &self,
        g: &mut G,
        (looking, ones): (L, L),
        slot: L,
    ) -> Request<L> {
        let (zero, one) = (g.index_constant(0), g.index_constant(1));
        // Publication: the total, then the siblings at levels below `ones`.
        let is_total = u64_op(g, BinaryOp::Eq, slot, zero);
        let within = u64_op(g, BinaryOp::Le, slot, ones);
        let below = u64_op(g, BinaryOp::Sub, slot, one);
        let sibling_level = g.select(ScalarKind::U64, is_total, zero, below);
        let span = u64_op(g, BinaryOp::Shl, one, sibling_level);
        let aligned = self.aligned_j(g, sibling_level);
        let sibling = u64_op(g, BinaryOp::Sub, aligned, span);
        let sibling = g.select(ScalarKind::U64, is_total, self.j, sibling);
        // Look-back: the node of each set bit of `j`.
        let bits = g.index_constant(u64::from(TILE_BITS));
        let inside = u64_op(g, BinaryOp::Lt, slot, bits);
        let set = self.bit_of_j(g, slot);
        let digit = g.binary(BinaryOp::LogicAnd, ScalarKind::Bool, inside, set);
        let above = u64_op(g, BinaryOp::Add, slot, one);
        let block = self.aligned_j(g, above);
        let no = g.literal(Literal::bool(false));
        Request {
            needed: g.select(ScalarKind::Bool, looking, digit, within),
            own: g.select(ScalarKind::Bool, looking, no, is_total),
            level: g.select(ScalarKind::U64, looking, slot, sibling_level),
            start: g.select(ScalarKind::U64, looking, block, sibling),
        }
    }

    /// Each lane's node of a round (its slot's; slots from `base`, `size` of them): the
    /// tile's own total reduced first; then the others read from the table, all lanes at
    /// once, while some are missing (at most `spins + 1` times), and each still missing
    /// reduced by the whole subgroup and published.
    fn gather<'ir, G: Gpu<'ir, Leaf = L>>(
        &self,
        g: &mut G,
        phase: (L, L),
        slot: L,
        (base, size): (L, L),
        (held, total): (L, &[G::Var]),
    ) -> Result<Vec<G::Var>, G::Error> {
        let r = self.r;
        let want = self.request(g, phase, slot);
        let value = value_vars(g, r);
        let ready = g.temporary(ScalarKind::Bool);
        let unneeded = g.unary(UnaryOp::Not, ScalarKind::Bool, want.needed);
        let known = g.binary(BinaryOp::LogicAnd, ScalarKind::Bool, want.own, held);
        let have = g.binary(BinaryOp::LogicOr, ScalarKind::Bool, unneeded, known);
        g.write_var(ready, have);
        let copy = g.begin_if(known);
        let t = read_all(g, total);
        write_all(g, &value, &t);
        g.end_if(copy);
        let at = self.entry(g, want.level, want.start);
        // Two passes: the tile's own total first (other tiles wait for it), then the wait
        // and the nodes still missing after it.
        let (zero, one, two) = (
            g.index_constant(0),
            g.index_constant(1),
            g.index_constant(2),
        );
        counted_loop(g, zero, two, |g, p| {
            let second = u64_op(g, BinaryOp::Eq, p, one);
            let waiting = g.begin_if(second);
            self.wait(g, &want, at, (&value, ready));
            g.end_if(waiting);
            let now = g.read_var(ready);
            let missing = g.unary(UnaryOp::Not, ScalarKind::Bool, now);
            let own_missing = g.binary(BinaryOp::LogicAnd, ScalarKind::Bool, want.own, missing);
            let serve = g.select(ScalarKind::Bool, second, missing, own_missing);
            self.reduce_missing(g, (phase, serve), (base, size), (&value, ready))
        })?;
        Ok(value)
    }

    /// Reads each lane's node (not the tile's own total) until every lane has its node or
    /// `spins + 1` reads were made.
    fn wait<'ir, G: Gpu<'ir, Leaf = L>>(
        &self,
        g: &mut G,
        want: &Request<L>,
        at: L,
        (value, ready): (&[G::Var], G::Var),
    ) {
        let tries = g.temporary(ScalarKind::U64);
        let zero = g.index_constant(0);
        g.write_var(tries, zero);
        let wait = g.begin_loop();
        let now = g.read_var(ready);
        let skip = g.binary(BinaryOp::LogicOr, ScalarKind::Bool, now, want.own);
        let reading = g.unary(UnaryOp::Not, ScalarKind::Bool, skip);
        let read = g.begin_if(reading);
        let (there, got) = self.read(g, at);
        let found = g.begin_if(there);
        write_all(g, value, &got);
        let yes = g.literal(Literal::bool(true));
        g.write_var(ready, yes);
        g.end_if(found);
        g.end_if(read);
        let now = g.read_var(ready);
        let settled = g.binary(BinaryOp::LogicOr, ScalarKind::Bool, now, want.own);
        let all = g.subgroup_all(settled);
        let n = g.read_var(tries);
        let limit = g.index_constant(u64::from(self.spins));
        let tired = u64_op(g, BinaryOp::Ge, n, limit);
        let stop = g.binary(BinaryOp::LogicOr, ScalarKind::Bool, all, tired);
        let leave = g.begin_if(stop);
        g.jump_break(wait);
        g.end_if(leave);
        let one = g.index_constant(1);
        let next = u64_op(g, BinaryOp::Add, n, one);
        g.write_var(tries, next);
        g.begin_continuing(wait);
        g.end_loop(wait);
    }

    /// The nodes of the lanes where `serve` holds, one after another, each reduced by the
    /// whole subgroup and published; the lane keeps it.
    fn reduce_missing<'ir, G: Gpu<'ir, Leaf = L>>(
        &self,
        g: &mut G,
        (phase, serve): ((L, L), L),
        (base, size): (L, L),
        (value, ready): (&[G::Var], G::Var),
    ) -> Result<(), G::Error> {
        let serving = g.temporary(ScalarKind::Bool);
        g.write_var(serving, serve);
        let lane = g.temporary(ScalarKind::U64);
        let zero = g.index_constant(0);
        g.write_var(lane, zero);
        let each = g.begin_loop();
        let now = g.read_var(serving);
        let idle = g.unary(UnaryOp::Not, ScalarKind::Bool, now);
        let none = g.subgroup_all(idle);
        let l = g.read_var(lane);
        let past = u64_op(g, BinaryOp::Ge, l, size);
        let stop = g.binary(BinaryOp::LogicOr, ScalarKind::Bool, none, past);
        let leave = g.begin_if(stop);
        g.jump_break(each);
        g.end_if(leave);
        let theirs_wanted = g.shuffle_from(ScalarKind::Bool, now, l);
        let reduce = g.begin_if(theirs_wanted);
        let their_slot = u64_op(g, BinaryOp::Add, base, l);
        let theirs = self.request(g, phase, their_slot);
        let got = self.reduce_node(g, (theirs.level, theirs.start))?;
        let mine = u64_op(g, BinaryOp::Eq, self.sub.lane, l);
        let keep = g.begin_if(mine);
        write_all(g, value, &got);
        let (yes, no) = (
            g.literal(Literal::bool(true)),
            g.literal(Literal::bool(false)),
        );
        g.write_var(ready, yes);
        g.write_var(serving, no);
        g.end_if(keep);
        g.end_if(reduce);
        let one = g.index_constant(1);
        let next = u64_op(g, BinaryOp::Add, l, one);
        g.write_var(lane, next);
        g.begin_continuing(each);
        g.end_loop(each);
        Ok(())
    }

    /// Node `(level, start)` reduced from the input by the whole subgroup, and published.
    fn reduce_node<'ir, G: Gpu<'ir, Leaf = L>>(
        &self,
        g: &mut G,
        (level, start): (L, L),
    ) -> Result<Vec<L>, G::Error> {
        let r = self.r;
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
        let at = self.entry(g, level, start);
        self.publish(g, at, &got);
        Ok(got)
    }

    /// Folds a round's nodes, each lane's `value`, in the phase's order: publication onto
    /// `node` (the total first, then each sibling on its left, each result published);
    /// look-back onto `e`.
    fn fold<'ir, G: Gpu<'ir, Leaf = L>>(
        &self,
        g: &mut G,
        round: &Round<L>,
        value: &[G::Var],
        (node, e): (&[G::Var], &Held<G::Var>),
    ) -> Result<(), G::Error> {
        let r = self.r;
        let kinds: Vec<ScalarKind> = leaves(g.module(), &r.ty).iter().map(|l| l.kind).collect();
        let (zero, one) = (g.index_constant(0), g.index_constant(1));
        let step = g.temporary(ScalarKind::U64);
        g.write_var(step, zero);
        let each = g.begin_loop();
        // A snapshot: the step is counted on before the body (whose `continue` skips its end).
        let t = g.snapshot_var(step);
        let past = u64_op(g, BinaryOp::Ge, t, round.size);
        let stop = g.begin_if(past);
        g.jump_break(each);
        g.end_if(stop);
        let next = u64_op(g, BinaryOp::Add, t, one);
        g.write_var(step, next);
        let size_less = u64_op(g, BinaryOp::Sub, round.size, one);
        let down = u64_op(g, BinaryOp::Sub, size_less, t);
        let i = g.select(ScalarKind::U64, round.looking, down, t);
        let slot = u64_op(g, BinaryOp::Add, round.base, i);
        let used = u64_op(g, BinaryOp::Lt, slot, round.top);
        let want = self.request(g, (round.looking, round.ones), slot);
        let needed = g.binary(BinaryOp::LogicAnd, ScalarKind::Bool, used, want.needed);
        let skip = g.begin_if(needed);
        g.begin_else(&skip);
        g.jump_continue(each);
        g.end_if(skip);
        let mine = read_all(g, value);
        let v: Vec<L> = kinds
            .iter()
            .zip(mine)
            .map(|(&kind, x)| g.shuffle_from(kind, x, i))
            .collect();
        let phase = g.begin_if(round.looking);
        {
            combine_after(g, r, &e.value, e, &v)?;
            let yes = g.literal(Literal::bool(true));
            g.write_var(e.has, yes);
        }
        g.begin_else(&phase);
        {
            let which = g.begin_if(want.own);
            write_all(g, node, &v);
            g.begin_else(&which);
            let right = read_all(g, node);
            let merged = g.combine_step(r, &v, &right)?;
            write_all(g, node, &merged);
            let up = u64_op(g, BinaryOp::Add, want.level, one);
            let at = self.entry(g, up, want.start);
            self.publish(g, at, &merged);
            g.end_if(which);
        }
        g.end_if(phase);
        g.begin_continuing(each);
        g.end_loop(each);
        Ok(())
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
        let bytes = g.index_constant(self.entry_bytes);
        mul_add(g, index, bytes, self.table)
    }

    /// Reads the entry at `at` (this lane's): whether every word of it is there, and the
    /// value.
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
            values.push(g.scalar_of_bits(leaf.kind, bits));
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

/// `for (k = start; k < stop; k++) body(g, k)` over `u64` counters: the loop's `k` is read at
/// the top of each trip, and the counter stepped after the body.
fn counted_loop<'ir, G: Gpu<'ir>>(
    g: &mut G,
    start: G::Leaf,
    stop: G::Leaf,
    mut body: impl FnMut(&mut G, G::Leaf) -> Result<(), G::Error>,
) -> Result<(), G::Error> {
    let counter = g.temporary(ScalarKind::U64);
    g.write_var(counter, start);
    let frame = g.begin_loop();
    let k = g.read_var(counter);
    let done = u64_op(g, BinaryOp::Ge, k, stop);
    let leave = g.begin_if(done);
    g.jump_break(frame);
    g.end_if(leave);
    body(g, k)?;
    let one = g.index_constant(1);
    let next = u64_op(g, BinaryOp::Add, k, one);
    g.write_var(counter, next);
    g.begin_continuing(frame);
    g.end_loop(frame);
    Ok(())
}
