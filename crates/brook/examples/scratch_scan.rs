use brook::{Device, Program, Stream};
fn spread(len: usize) -> Vec<f32> {
    (0..len)
        .map(|i| {
            let x = ((i as u64).wrapping_mul(2654435761) % 1000) as f32;
            let scale = [1.0e-3, 1.0, 1.0e3, 1.0e6][i % 4];
            (x - 500.0) * scale
        })
        .collect()
}
fn main() {
    let program = Program::from_source("add.br", "reduce void add(float a<>, reduce float r<>) { r += a; }").unwrap();
    let add = program.kernel("add").unwrap();
    let cpu = Device::from_spec("cpu:0").unwrap();
    let vk = Device::from_spec("vulkan:0").unwrap();
    for len in std::env::args().skip(1).map(|a| a.parse::<usize>().unwrap()) {
        let input = spread(len);
        let mut outs = vec![];
        for d in [&cpu, &vk] {
            let s = Stream::from_slice(d, &[len], &input).unwrap();
            let r = Stream::<f32>::new(d, &[len]).unwrap();
            add.scan(&s, &r).unwrap();
            outs.push(r.to_vec().unwrap());
        }
        let first = outs[0].iter().zip(&outs[1]).position(|(a, b)| a.to_bits() != b.to_bits());
        let count = outs[0].iter().zip(&outs[1]).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
        let mut tiles = std::collections::BTreeMap::new();
        for (i, (a, b)) in outs[0].iter().zip(&outs[1]).enumerate() {
            if a.to_bits() != b.to_bits() { tiles.entry(i / 2048).or_insert((i % 2048, *a, *b, input[i])); }
        }
        for (t, v) in tiles.iter().take(6) { println!("tile {t}: first offset {v:?}, tile start cpu {} vk {}", outs[0][t*2048], outs[1][t*2048]); }
        println!("{len}: first difference {first:?} (tile {:?}), {count} differ", first.map(|f| f / 2048));
    }
}
