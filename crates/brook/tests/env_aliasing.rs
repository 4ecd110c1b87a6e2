//! `BRT_PERMIT_READ_WRITE_ALIASING`: a stream bound as both input and output gives the result
//! of the unaliased launch (its own process, since the variable is read by the runtime).

use brook::{args, Device, Program, Stream};

const KERNELS: &str = "
kernel void bump(float a<>, out float b<>) { b = a + 1.0f; }
kernel void reverse(float a[], out float b<>)
{
    int n = 6;
    b = a[n - 1 - instance().x];
}
";

#[test]
fn aliased_launches_equal_unaliased_ones_when_permitted() {
    std::env::set_var("BRT_PERMIT_READ_WRITE_ALIASING", "1");
    let program = Program::from_source("alias.br", KERNELS).expect("compiles");
    for device in Device::of_type("all").expect("devices") {
        let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        for kernel in ["bump", "reverse"] {
            let k = program.kernel(kernel).expect("kernel");
            let a = Stream::from_slice(&device, &[6], &data).expect("a");
            let b = Stream::<f32>::new(&device, &[6]).expect("b");
            k.launch(args![&a, &b]).expect("unaliased");
            let s = Stream::from_slice(&device, &[6], &data).expect("s");
            k.launch(args![&s, &s]).expect("aliased, permitted");
            assert_eq!(
                s.to_vec().expect("s"),
                b.to_vec().expect("b"),
                "{kernel} on {}",
                device.info()
            );
        }
    }
}
