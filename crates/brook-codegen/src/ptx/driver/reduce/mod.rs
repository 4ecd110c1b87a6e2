//! Reductions in the canonical order of `brook_ir::reduce_order`, in passes.
//!
//! A pass reduces each target's leaves in aligned power-of-two pieces and writes each piece's
//! value to a dense scratch array (`[target][piece]`: each target's pieces consecutive;
//! `[piece][target]` after a column pass, read by the column entry again) or, when a target
//! has one piece, the target element; the next pass reduces the scratch array's pieces the
//! same way. Because every piece is an aligned power-of-two subtree, combining pieces
//! canonically gives the canonical result. The runtime plans the passes
//! (`brook_runtime::reduce_plan`) from the entries a module declares ([`ReduceEntry`]).
//!
//! A module has up to three entries with the same parameters — besides the parameter block,
//! `src` and `dst` (scratch addresses), `leaves` (leaves per target in this pass), `piece`
//! (leaves per worker, a power of two), `pieces` (pieces per target) and `mode` (bit 0:
//! leaves come from `src`; bit 1: results go to the targets):
//! - [`serial`]: a thread per piece, any layout (always there);
//! - [`warp`]: a warp per piece of consecutive leaves (stream inputs; written once for every
//!   GPU dialect);
//! - [`columns`]: a thread per four neighbouring targets whose leaves lie side by side
//!   (stream inputs of one 4-byte scalar; written once for every GPU dialect).
//!
//! A module of a [`Variant::scan`] launch also has [`scan`]'s entry, which the runtime runs
//! after reduction passes have made the pieces' prefixes.
//!
//! Separate entries keep each path's register count its own. [`common`] holds what they
//! share (the pass parameters, a worker's share, the combine step, the binary-counter stack,
//! writing results); [`lanes`] what the one-pass scan shares with a warp's lanes.

mod common;
mod gpu;
mod lanes;
mod scan_tiles;

use super::{entry_text, ENTRY};
use crate::abi::{BlockLayout, ReduceEntry, ReduceShape, Variant};
use crate::gpu::reduce::{columns, lookback, scan, scan_warp, serial, warp};
use crate::gpu::PassParam;
use crate::ptx::lower::{bind_params, Lower};
use crate::CompileError;
use brook_ir::{Kernel, Module};
use common::{input_source, Pass, Reduction, Source, HEAVY_COMBINE_LINES, MAX_PIECE};

/// The entry of the warp path.
const WARP_ENTRY: &str = "brook_warp";
/// The entry of the column path.
const COLUMNS_ENTRY: &str = "brook_columns";
/// The scan entry.
const SCAN_ENTRY: &str = "brook_scan";
/// The one-pass scan entry.
const SCAN_TILES_ENTRY: &str = "brook_scan_tiles";
/// The shared one-pass scan entry.
const LOOKBACK_ENTRY: &str = "brook_scan_lookback";
/// The one-pass scan entry whose blocks prefetch a later tile's input while they wait for
/// their prefix (for rows of more than one tile; its extra registers make rows of one tile,
/// which never wait, slower).
pub(crate) const SCAN_TILES_AHEAD_ENTRY: &str = "brook_scan_tiles_ahead";

pub(crate) use scan_tiles::{
    ahead_stage_bytes as scan_ahead_stage_bytes, ahead_tile_leaves as scan_ahead_tile_leaves,
    tile_leaves as scan_tile_leaves, TABLE_LEVELS as SCAN_TABLE_LEVELS,
    TABLE_WORD_BYTES as SCAN_TABLE_WORD_BYTES, THREADS as SCAN_TILE_THREADS,
};

/// The paths, one entry each.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Path {
    Serial,
    Warp,
    Columns,
    Scan,
    ScanTiles,
    ScanTilesAhead,
    /// The shared one-pass scan ([`crate::gpu::reduce::lookback`]), in place of `ScanTiles`
    /// where `Tuning::scan_one_pass` asks (to compare the dialects and to profile it).
    Lookback,
}

impl Path {
    /// One of the one-pass scan entries (`scan_tiles`).
    fn is_one_pass_scan(self) -> bool {
        matches!(self, Path::ScanTiles | Path::ScanTilesAhead)
    }

    /// What the entry `name` of this path declares.
    fn entry(self, name: &'static str) -> ReduceEntry {
        let (shape, max_piece) = match self {
            Path::Serial => (ReduceShape::Serial, MAX_PIECE),
            Path::Warp => (ReduceShape::Warp, MAX_PIECE),
            Path::Columns => (ReduceShape::Columns, columns::MAX_PIECE),
            Path::Scan => (ReduceShape::Scan, scan::MAX_PIECE),
            // Rows of any length (the runtime checks that the group table has the levels).
            Path::ScanTiles | Path::ScanTilesAhead => (ReduceShape::ScanTiles, u64::MAX),
            Path::Lookback => (ReduceShape::ScanLookback, scan_warp::MAX_PIECE),
        };
        ReduceEntry {
            name,
            shape,
            max_piece,
        }
    }
}

/// A reduction's entries, written.
pub struct Built {
    pub text: String,
    /// The helper functions they call.
    pub helpers: Vec<&'static str>,
    /// Bytes of one reduced value.
    pub value_size: u32,
    /// The entries, serial first.
    pub entries: Vec<ReduceEntry>,
}

/// Writes the entries of reduction `kernel` for `target`.
pub fn build(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    layout: &BlockLayout,
    target: &crate::ptx::Target,
) -> Result<Built, CompileError> {
    let sm = target.sm;
    let mut r = Reduction::of(module, kernel, crate::BackendKind::Ptx)?;
    let input = r.input;
    r.heavy = combine_lines(module, kernel, variant, layout, &r, target)? > HEAVY_COMBINE_LINES;
    let stream_input = !variant
        .inputs
        .get(input)
        .copied()
        .flatten()
        .is_some_and(|m| m.is_iterator());
    // A heavy reduction has no faster paths: each writes its combine step out many times.
    let fast = stream_input && !r.heavy;
    let mut chosen = vec![(Path::Serial, ENTRY)];
    if fast {
        chosen.push((Path::Warp, WARP_ENTRY));
    }
    if fast && columns::applies(module, kernel, &r) {
        chosen.push((Path::Columns, COLUMNS_ENTRY));
    }
    if variant.scan {
        chosen.push((Path::Scan, SCAN_ENTRY));
        if fast && target.tuning.scan_one_pass && lookback::applies(module, &r) {
            chosen.push((Path::Lookback, LOOKBACK_ENTRY));
        } else if fast && sm >= 70 {
            // Its group table uses acquire and release accesses (sm_70 on).
            chosen.push((Path::ScanTiles, SCAN_TILES_ENTRY));
            // Its tiles' bytes are copied into shared memory as they are: a reduction's input
            // has its target's type (the checker's BR0315). `cp.async`: sm_80 on.
            if sm >= 80 && scan_tiles::prefetches(r.value_size) {
                chosen.push((Path::ScanTilesAhead, SCAN_TILES_AHEAD_ENTRY));
            }
        }
    }
    let mut text = String::new();
    let mut helpers: Vec<&'static str> = Vec::new();
    let entries = chosen
        .iter()
        .map(|&(path, name)| path.entry(name))
        .collect();
    for (path, name) in chosen {
        let mut lower = Lower::new(module, kernel, &target.tuning);
        lower.place_locals(false);
        bind_params(&mut lower, layout, variant);
        emit(&mut lower, &r, variant, layout, path)?;
        for h in std::mem::take(&mut lower.helpers) {
            if !helpers.contains(&h) {
                helpers.push(h);
            }
        }
        let params: &[PassParam] = match path {
            Path::Scan => PassParam::SCAN,
            Path::Lookback => PassParam::LOOKBACK,
            _ => PassParam::REDUCE,
        };
        let mut extra = format!(",\n\t{}", &gpu::param_declarations(params)[2..]);
        if path.is_one_pass_scan() {
            extra = scan_tiles::PARAMS.to_string();
        }
        // The one-pass scan entries' blocks per SM (`.minnctapersm`, which bounds their
        // registers): more tiles wait on their prefixes at once (see `scan_tiles`).
        let attributes = match path {
            Path::ScanTilesAhead => {
                text.push_str(&scan_tiles::stage_declaration());
                scan_tiles::ahead_attributes()
            }
            Path::ScanTiles => scan_tiles::attributes(target.tuning.scan_blocks),
            _ => String::new(),
        };
        let entry = entry_text(name, layout.size(), lower.e.finish(), &attributes);
        // The extra parameters follow the block in the signature.
        let block = format!("[{}])", layout.size());
        text.push_str(&entry.replacen(&block, &format!("[{}]{extra})", layout.size()), 1));
        text.push('\n');
    }
    Ok(Built {
        text,
        helpers,
        value_size: r.value_size,
        entries,
    })
}

/// PTX lines of one combine step of reduction `r` (written alone, as the entries write it).
fn combine_lines(
    module: &Module,
    kernel: &Kernel,
    variant: &Variant,
    layout: &BlockLayout,
    r: &Reduction,
    target: &crate::ptx::Target,
) -> Result<usize, CompileError> {
    let mut lower = Lower::new(module, kernel, &target.tuning);
    lower.place_locals(false);
    bind_params(&mut lower, layout, variant);
    let (left, right) = (
        common::fresh_value(&mut lower, r),
        common::fresh_value(&mut lower, r),
    );
    let dest = common::fresh_value(&mut lower, r);
    let before = lower.e.lines();
    common::combine(&mut lower, r, &dest, &left, &right)?;
    Ok(lower.e.lines() - before)
}

fn emit(
    lower: &mut Lower<'_>,
    r: &Reduction,
    variant: &Variant,
    layout: &BlockLayout,
    path: Path,
) -> Result<(), CompileError> {
    let rank = variant.rank;
    if path.is_one_pass_scan() {
        let Source::Stream(stream) = input_source(lower, r, layout, variant) else {
            return Err(CompileError::Unsupported {
                backend: crate::BackendKind::Ptx,
                kernel: lower.kernel.name.clone(),
                span: lower.kernel.span,
                construct: "a one-pass scan of an iterator".into(),
            });
        };
        let ret = lower.ret;
        scan_tiles::emit(
            lower,
            r,
            layout,
            rank,
            &stream,
            path == Path::ScanTilesAhead,
        )?;
        lower.e.at(ret);
        lower.e.op("ret");
        return Ok(());
    }
    let ret = lower.ret;
    let pass = Pass::load(lower, rank);
    let source = input_source(lower, r, layout, variant);
    let tuning = lower.tuning;
    match (&source, path) {
        (_, Path::Scan) => scan::emit(lower, r, layout, &pass, &source)?,
        (Source::Stream(stream), Path::Lookback) => {
            lookback::emit(lower, r, layout, (&pass, stream), &tuning)?
        }
        (Source::Stream(stream), Path::Warp) => warp::emit(lower, r, layout, &pass, stream)?,
        (Source::Stream(stream), Path::Columns) => columns::emit(lower, r, layout, &pass, stream)?,
        _ => serial::emit(lower, r, layout, &pass, &source)?,
    }
    lower.e.at(ret);
    lower.e.op("ret");
    Ok(())
}
