//! The sum and the inclusive scan of 2^24 floats.

use super::{measure, Filter, Row};
use brook::{host_var, Device, Program, Stream};
use rayon::prelude::*;
use std::hint::black_box;

const N: usize = 1 << 24;

pub fn rows(
    program: &Program,
    device: &Device,
    filter: &Filter,
    rows: &mut Vec<Row>,
) -> Result<(), brook::Error> {
    let sum = program.kernel("sum")?;
    let ones: Vec<f32> = (0..N).map(|i| (i % 3) as f32).collect();
    let values = Stream::from_slice(device, &[N], &ones)?;
    if filter.wants("sum") {
        let mut total = 0.0f32;
        let mut native_total = 0.0f32;
        let (brook, native) = measure(
            || {
                sum.launch(brook::args![&values, host_var(&mut total)])
                    .expect("sum");
            },
            || native_total = black_box(&ones).par_iter().sum::<f32>(),
        );
        assert_eq!(total, native_total, "sums differ (both are exact here)");
        rows.push(Row {
            what: "sum, 2^24 floats".into(),
            brook,
            native,
            target: 1.0,
            flops: None,
        });
    }
    if filter.wants("scan") {
        // Exact here: small integers.
        let scanned = Stream::<f32>::new(device, &[N])?;
        let mut native_scan = vec![0.0f32; N];
        let (brook, native) = measure(
            || {
                sum.scan(&values, &scanned).expect("scan");
                scanned.finish().expect("scan");
            },
            || {
                let mut acc = 0.0f32;
                for (out, x) in native_scan.iter_mut().zip(black_box(&ones)) {
                    acc += x;
                    *out = acc;
                }
            },
        );
        assert!(
            scanned.to_vec()? == native_scan,
            "scans differ (both are exact here)"
        );
        rows.push(Row {
            what: "inclusive scan, 2^24 floats".into(),
            brook,
            native,
            target: 4.0,
            flops: None,
        });
    }
    Ok(())
}
