use brook_codegen::abi::{ReduceShape, Variant};
use brook_codegen::spirv::{map, reduce};
#[test]
fn dump() {
    let p = brook::Program::from_source("add.br", "reduce void add(int a<>, reduce int r<>) { r += a; }").unwrap();
    let module = p.module().module();
    let kernel = &module.kernels[0];
    let mut variant = Variant::plain(kernel, 1);
    variant.scan = true;
    let options = map::Options { float64: true, subgroup_shuffle: true, lookback_scans: true, ..Default::default() };
    let r = reduce::compile(module, kernel, &variant, &options).unwrap();
    for (e, m) in &r.entries {
        if e.shape == ReduceShape::ScanLookback {
            let bytes: Vec<u8> = m.words.iter().flat_map(|w| w.to_le_bytes()).collect();
            std::fs::write("/tmp/lb.spv", bytes).unwrap();
        }
    }
}
