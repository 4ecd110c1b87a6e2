//! The scan module a GPU is given, read as PTX text (no GPU needed; the GPU tests run it): on
//! sm_80 and later, rows of more than one tile get the prefetching entry, whose tiles are twice
//! as long and come into a dynamic shared array by `cp.async`; older GPUs keep the plain
//! one-pass entry.
use brook::Program;
use brook_codegen::abi::Variant;
use brook_codegen::ptx::{
    compile, scan_ahead_stage_bytes, scan_ahead_tile_leaves, scan_tile_leaves, Target,
    SCAN_TILES_AHEAD_ENTRY,
};

/// The PTX of the scan module of the file's only kernel for compute capability `sm`.
fn scan_module(source: &str, sm: u32) -> (Vec<&'static str>, String) {
    let target = Target {
        sm,
        ..Target::DEFAULT
    };
    scan_module_for(source, &target)
}

fn scan_module_for(source: &str, target: &Target) -> (Vec<&'static str>, String) {
    let program = Program::from_source("scan.br", source).expect("compiles");
    let mut variant = Variant::plain(&program.module().kernels[0], 1);
    variant.scan = true;
    let ptx = compile(program.module(), 0, &variant, target).expect("PTX");
    (ptx.entry_names(), ptx.text)
}

const FLOAT_SUM: &str = "reduce void sum(float a<>, reduce float s<>) { s += a; }";

#[test]
fn long_float_rows_stage_twice_as_long_tiles_by_cp_async_from_sm_80() {
    assert_eq!(scan_ahead_tile_leaves(4), 2 * scan_tile_leaves(4));
    assert_eq!(scan_ahead_stage_bytes(4), 64 << 10);
    for sm in [80, 90] {
        let (entries, text) = scan_module(FLOAT_SUM, sm);
        assert!(
            entries.contains(&SCAN_TILES_AHEAD_ENTRY),
            "sm_{sm}: {entries:?}"
        );
        let ahead = &text[text.find(SCAN_TILES_AHEAD_ENTRY).expect("the entry's text")..];
        assert!(text.contains(".extern .shared .align 16 .b8 brook_scan_stage[];"));
        assert!(ahead.contains("cp.async.ca.shared.global"), "sm_{sm}");
        assert!(ahead.contains("cp.async.wait_all"), "sm_{sm}");
        assert!(ahead.contains(".minnctapersm 3"), "sm_{sm}");
    }
}

/// The target's tuning sets the tile entry's blocks per SM and the prefetch distance
/// (`BROOK_SCAN_BLOCKS`, `BROOK_SCAN_AHEAD`).
#[test]
fn the_tuning_sets_blocks_per_sm_and_the_prefetch() {
    let (_, shipped) = scan_module(FLOAT_SUM, 90);
    assert!(shipped.contains(".minnctapersm 5"));
    assert!(shipped.contains("prefetch.global.L2"));
    let tuning = brook_codegen::Tuning {
        scan_blocks: 3,
        scan_ahead: 0,
        ..brook_codegen::Tuning::DEFAULT
    };
    let target = Target { sm: 90, tuning };
    let (_, tuned) = scan_module_for(FLOAT_SUM, &target);
    let plain = &tuned[tuned
        .find(".entry brook_scan_tiles(")
        .expect("the tile entry")..];
    let plain = &plain[..plain[1..].find(".entry ").map_or(plain.len(), |e| e + 1)];
    assert!(plain.contains(".minnctapersm 3"));
    assert!(!tuned.contains(".minnctapersm 5"));
    assert!(!tuned.contains("prefetch.global.L2"));
}

#[test]
fn gpus_before_sm_80_keep_the_plain_entry() {
    let (entries, text) = scan_module(FLOAT_SUM, 75);
    assert!(!entries.contains(&SCAN_TILES_AHEAD_ENTRY), "{entries:?}");
    assert!(entries.contains(&"brook_scan_tiles"), "{entries:?}");
    assert!(!text.contains("cp.async"));
    assert!(!text.contains("brook_scan_stage"));
}

/// Values of 16 bytes (a `float4` sum) stage too: tiles of 4096 in 64 KiB.
#[test]
fn float4_rows_stage_too() {
    let (entries, text) = scan_module(
        "reduce void sum4(float4 a<>, reduce float4 s<>) { s += a; }",
        90,
    );
    assert!(entries.contains(&SCAN_TILES_AHEAD_ENTRY), "{entries:?}");
    assert!(text.contains("cp.async.ca.shared.global"));
    assert_eq!(scan_ahead_stage_bytes(16), 64 << 10);
}
