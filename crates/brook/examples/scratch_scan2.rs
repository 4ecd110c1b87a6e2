use brook::{Device, Program, Stream};
fn main() {
    let program = Program::from_source("add.br", "reduce void add(int a<>, reduce int r<>) { r += a; }").unwrap();
    let add = program.kernel("add").unwrap();
    let vk = Device::from_spec("vulkan:0").unwrap();
    for len in std::env::args().skip(1).map(|a| a.parse::<usize>().unwrap()) {
        let input = vec![1i32; len];
        let s = Stream::from_slice(&vk, &[len], &input).unwrap();
        let r = Stream::<i32>::new(&vk, &[len]).unwrap();
        add.scan(&s, &r).unwrap();
        let out = r.to_vec().unwrap();
        let mut bad = 0;
        for (i, &v) in out.iter().enumerate() {
            if v != i as i32 + 1 {
                if i % 2048 == 0 || bad < 5 { println!("tile {} offset {}: got {} want {}", i / 2048, i % 2048, v, i + 1); }
                bad += 1;
            }
        }
        println!("{len}: {bad} wrong");
    }
}
