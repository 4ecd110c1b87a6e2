//! Kernels that used to run one instance at a time on one core: a thread-group kernel
//! (Brook+'s `GroupSize` with a `shared` array: each thread shares a value, then reads its two
//! neighbours' shares in its group of 64; native: the same per group with rayon, in the same
//! operation order) and a scatter through a permutation.

use super::{measure, Filter, Row};
use brook::{args, Device, Program, Stream};
use rayon::prelude::*;

const N: usize = 1 << 22;
const GROUP: usize = 64;

pub const SOURCE: &str = r#"
Attribute[GroupSize(64, 1, 1)]
kernel void smooth(float a<>, out float r[])
{
    shared float4 lds[64];
    int me = instanceInGroup().x;
    float x = a * 0.5f + 1.0f;
    lds[1 * instanceInGroup().x + 0] = float4(x, x * x, 0.0f, 0.0f);
    syncGroup();
    float4 left = lds[(me + 63) % 64];
    float4 right = lds[(me + 1) % 64];
    r[instance().x] = (left.x + x + right.x) / 3.0f + (left.y - right.y) * 0.125f;
}
"#;

fn smooth_native(a: &[f32], out: &mut [f32]) {
    out.par_chunks_mut(GROUP * 64)
        .zip(a.par_chunks(GROUP * 64))
        .for_each(|(out, a)| {
            for (out, a) in out.chunks_mut(GROUP).zip(a.chunks(GROUP)) {
                let mut share = [(0.0f32, 0.0f32); GROUP];
                for (s, &a) in share.iter_mut().zip(a) {
                    let x = a * 0.5 + 1.0;
                    *s = (x, x * x);
                }
                for (me, r) in out.iter_mut().enumerate() {
                    let (l, x, rr) = (
                        share[(me + GROUP - 1) % GROUP],
                        share[me].0,
                        share[(me + 1) % GROUP],
                    );
                    *r = (l.0 + x + rr.0) / 3.0 + (l.1 - rr.1) * 0.125;
                }
            }
        });
}

pub fn rows(device: &Device, filter: &Filter, rows: &mut Vec<Row>) -> Result<(), brook::Error> {
    if !filter.wants("group") {
        return Ok(());
    }
    let program = Program::from_source("groups.br", SOURCE)?;
    let smooth = program.kernel("smooth")?;
    let a: Vec<f32> = (0..N).map(|i| ((i * 37) % 1000) as f32 * 0.01).collect();
    let sa = Stream::from_slice(device, &[N], &a)?;
    let sr = Stream::<f32>::new(device, &[N])?;
    let mut out = vec![0.0f32; N];
    let (brook, native) = measure(
        || {
            smooth.launch(args![&sa, &sr]).expect("smooth");
            sr.finish().expect("finish");
        },
        || smooth_native(&a, &mut out),
    );
    assert_eq!(sr.to_vec()?, out, "thread-group results differ");
    rows.push(Row {
        what: "thread groups of 64, shared neighbours, 2^22".into(),
        brook,
        native,
        // No issue sets one: a thread at a time was 10-12x; gangs are 3.4-4x (the scatter
        // store and the neighbours' index arithmetic per lane are what is left).
        target: 4.0,
        flops: None,
    });
    Ok(())
}

const SCATTER: &str = r#"
kernel void permute(float a<>, int to<>, out float r[]) { r[to] = a * 2.0f + 1.0f; }
"#;

/// Where the CPU's workers may write: distinct elements of one vector from several threads.
#[derive(Clone, Copy)]
struct Shared(*mut f32);
// SAFETY: each element is written by one instance only (a permutation).
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

impl Shared {
    /// The address (a method, so that closures capture the whole `Sync` wrapper).
    fn at(self, index: usize) -> *mut f32 {
        self.0.wrapping_add(index)
    }
}

/// A scatter through a permutation of 2^22 elements (every target written once): Brook runs
/// its instances in gangs on every core; native: rayon writing through the permutation.
pub fn scatter_rows(
    device: &Device,
    filter: &Filter,
    rows: &mut Vec<Row>,
) -> Result<(), brook::Error> {
    if !filter.wants("scatter") {
        return Ok(());
    }
    let program = Program::from_source("scatter.br", SCATTER)?;
    let permute = program.kernel("permute")?;
    let a: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.5).collect();
    let to: Vec<i32> = (0..N).map(|i| ((i * 40_503 + 17) % N) as i32).collect();
    let (sa, st) = (
        Stream::from_slice(device, &[N], &a)?,
        Stream::from_slice(device, &[N], &to)?,
    );
    let sr = Stream::<f32>::new(device, &[N])?;
    let mut out = vec![0.0f32; N];
    let target = Shared(out.as_mut_ptr());
    let (brook, native) = measure(
        || {
            permute.launch(args![&sa, &st, &sr]).expect("permute");
            sr.finish().expect("finish");
        },
        || {
            a.par_chunks(1 << 14)
                .zip(to.par_chunks(1 << 14))
                .for_each(|(a, to)| {
                    for (&a, &t) in a.iter().zip(to) {
                        // SAFETY: `t` is in range and no other instance writes it.
                        unsafe { *target.at(t as usize) = a * 2.0 + 1.0 };
                    }
                });
        },
    );
    assert_eq!(sr.to_vec()?, out, "scatter results differ");
    rows.push(Row {
        what: "scatter through a permutation, 2^22".into(),
        brook,
        native,
        target: 1.5,
        flops: None,
    });
    Ok(())
}
