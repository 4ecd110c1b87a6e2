use brook::{Device, Program, Stream};
fn main() {
    let program = Program::from_source("add.br", "reduce void add(int a<>, reduce int r<>) { r += a; }").unwrap();
    let add = program.kernel("add").unwrap();
    let spins: u32 = std::env::var("SP").map(|v| v.parse().unwrap()).unwrap_or(512);
    let tile: u32 = std::env::var("TILE").map(|v| v.parse().unwrap()).unwrap_or(256);
    let vk = Device::from_raw(brook_runtime::vulkan::device_with(0, |o| { o.lookback_scans = true; o.tuning.scan_tile = tile; o.tuning.scan_spins = spins; }).unwrap());
    for len in std::env::args().skip(1).map(|a| a.parse::<usize>().unwrap()) {
        let input = vec![1i32; len];
        let s = Stream::from_slice(&vk, &[len], &input).unwrap();
        let r = Stream::<i32>::new(&vk, &[len]).unwrap();
        add.scan(&s, &r).unwrap();
        let out = r.to_vec().unwrap();
        let mut bad = 0;
        for (i, &v) in out.iter().enumerate() {
            if v != i as i32 + 1 {
                if i % tile as usize == 0 { println!("tile {} offset {}: got {} want {}", i / tile as usize, i % tile as usize, v, i + 1); }
                bad += 1;
            }
        }
        println!("{len}: {bad} wrong");
    }
}
