//! Property: for random input shapes and every target shape the rules allow, a non-commutative
//! reduction (2x2 integer matrix products, wrapping: associative but not commutative) equals
//! the sequential left fold of each tile's elements in row-major order, on every device. This
//! checks the tiles, their element order and the combine order at once.

use brook::{args, Device, Program, Stream};
use proptest::prelude::*;

const SOURCE: &str = "
reduce void product(int4 m<>, reduce int4 acc<>)
{
    int4 l = acc;
    acc = int4(l.x * m.x + l.y * m.z, l.x * m.y + l.y * m.w,
               l.z * m.x + l.w * m.z, l.z * m.y + l.w * m.w);
}
";

type M = [i32; 4];

fn mul(l: M, m: M) -> M {
    let f = |a: i32, b: i32, c: i32, d: i32| a.wrapping_mul(b).wrapping_add(c.wrapping_mul(d));
    [
        f(l[0], m[0], l[1], m[2]),
        f(l[0], m[1], l[1], m[3]),
        f(l[2], m[0], l[3], m[2]),
        f(l[2], m[1], l[3], m[3]),
    ]
}

/// The left fold of each tile of `input` (shape `dims`) for a same-rank target `target`.
fn expected(input: &[M], dims: &[usize], target: &[usize]) -> Vec<M> {
    let tile: Vec<usize> = dims.iter().zip(target).map(|(d, t)| d / t).collect();
    let count: usize = target.iter().product();
    let tile_len: usize = tile.iter().product();
    (0..count)
        .map(|t| {
            let t_pos = unravel(t, target);
            (0..tile_len)
                .map(|u| {
                    let u_pos = unravel(u, &tile);
                    let at: Vec<usize> = (0..dims.len())
                        .map(|k| t_pos[k] * tile[k] + u_pos[k])
                        .collect();
                    input[at.iter().zip(dims).fold(0, |acc, (i, d)| acc * d + i)]
                })
                .reduce(mul)
                .expect("tiles are not empty")
        })
        .collect()
}

fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut pos = vec![0; shape.len()];
    for k in (0..shape.len()).rev() {
        pos[k] = i % shape[k];
        i /= shape[k];
    }
    pos
}

fn divisors(n: usize) -> Vec<usize> {
    (1..=n).filter(|d| n.is_multiple_of(*d)).collect()
}

fn case() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, u64)> {
    prop::collection::vec(1usize..=9, 1..=3).prop_flat_map(|dims| {
        let targets: Vec<BoxedStrategy<usize>> = dims
            .iter()
            .map(|&d| prop::sample::select(divisors(d)).boxed())
            .collect();
        (Just(dims), targets, any::<u64>())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn reductions_equal_the_left_fold_of_each_tile((dims, target, seed) in case()) {
        let program = Program::from_source("product.br", SOURCE).expect("compiles");
        let product = program.kernel("product").expect("kernel");
        let len: usize = dims.iter().product();
        let mut state = seed | 1;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 7) as i32 - 3
        };
        let input: Vec<M> = (0..len).map(|_| [next(), next(), next(), next()]).collect();
        let want = expected(&input, &dims, &target);
        for device in Device::of_type("all").expect("devices") {
            let s = Stream::from_slice(&device, &dims, &input).expect("input");
            let r = Stream::<M>::new(&device, &target).expect("target");
            product.launch(args![&s, &r]).expect("reduce");
            prop_assert_eq!(r.to_vec().expect("result"), want.clone(), "on {}", device.info());
        }
    }
}
