//! Launches large enough that the CPU device splits them across threads (rows cut in the
//! middle, tiles cut into pieces, many thread groups), compared bit for bit with the reference
//! interpreter on every other device. The conformance cases are small and run in one piece;
//! these cover the parallel paths.

#[path = "common/values.rs"]
mod values;
use values::{bits, wobbly};

use brook::{args, host_var, Device, Program, Stream};

const KERNELS: &str = "
kernel void shade(float scale, float small<>, float big<>, out float r<>, out int4 at<>)
{
    float4 p = indexof(r);
    float acc = small * scale + big;
    int i = 0;
    while (i < 8) {
        if (acc > 1000.0f) break;
        acc = acc * 1.5f + p.x - p.y * 0.25f;
        i = i + 1;
    }
    if (p.x > 290.0f) return;
    r = acc;
    at = instance();
}

reduce void sum(float a<>, reduce float s<>) { s += a; }
reduce void sum_double(double a<>, reduce double s<>) { s += a; }
reduce void hash(uint a<>, reduce uint h<>) { h = (h ^ (h >> 3u)) * 31u + a; }

reduce void product(float4 a<>, reduce float4 m<>)
{
    float4 l = m;
    m = float4(l.x * a.x + l.y * a.z, l.x * a.y + l.y * a.w,
               l.z * a.x + l.w * a.z, l.z * a.y + l.w * a.w);
}

Attribute[GroupSize(8, 1, 1)]
kernel void rotate(float a<>, out float r[])
{
    shared float4 ring[8];
    int me = instanceInGroup().x;
    ring[1 * instanceInGroup().x + 0] = float4(a, a * 2.0f, a, a);
    syncGroup();
    r[instance().x] = ring[(me + 3) % 8].y + ring[me].x;
}
";

/// Every device but the interpreter, and device groups: the CPU twice (its launches split
/// into row blocks with copies between them), two interpreters, and the GPUs (the one GPU
/// twice where there is one).
fn other_devices() -> Vec<Device> {
    let mut devices: Vec<Device> = Device::all()
        .into_iter()
        .filter(|d| d.type_name() != "interp")
        .collect();
    let mut groups = vec!["cpu:0+cpu:0", "interp:0+interp:1"];
    match Device::of_type("cuda").unwrap_or_default().len() {
        0 => {}
        1 => groups.push("cuda:0+cuda:0"),
        _ => groups.push("cuda:all"),
    }
    devices.extend(groups.into_iter().map(|g| Device::from_spec(g).expect(g)));
    devices
}

/// Runs `f` on the interpreter and on every other device; every result must equal the
/// interpreter's.
fn same_everywhere<T: PartialEq + std::fmt::Debug>(f: impl Fn(&Device) -> T) {
    let reference = f(&Device::interp());
    for device in other_devices() {
        let found = f(&device);
        assert!(
            found == reference,
            "{} differs from the interpreter",
            device.info()
        );
    }
}

#[test]
fn a_large_2d_map_with_resize_loops_early_return_and_a_region() {
    let program = Program::from_source("large.br", KERNELS).expect("compiles");
    let (h, w) = (300, 301);
    let small_data = wobbly(150 * 100, 1);
    let big_data = wobbly(h * w, 2);
    same_everywhere(|d| {
        let small = Stream::from_slice(d, &[150, 100], &small_data).expect("small");
        let big = Stream::from_slice(d, &[h, w], &big_data).expect("big");
        let r = Stream::from_slice(d, &[h, w], &vec![-1.0f32; h * w]).expect("r");
        let at = Stream::<[i32; 4]>::new(d, &[h, w]).expect("at");
        let shade = program.kernel("shade").expect("shade");
        shade
            .launch(args![0.5f32, &small, &big, &r, &at])
            .expect("launch");
        let first = (bits(&r.to_vec().expect("r")), at.to_vec().expect("at"));
        // Only a box of the domain, cutting rows in the middle.
        let r2 = Stream::from_slice(d, &[h, w], &vec![-1.0f32; h * w]).expect("r2");
        shade
            .with_domain(&[7, 13], &[250, 280])
            .launch(args![0.25f32, &small, &big, &r2, &at])
            .expect("launch region");
        (first, bits(&r2.to_vec().expect("r2")))
    });
}

#[test]
fn large_reductions_split_into_pieces_keep_the_canonical_order() {
    let program = Program::from_source("large.br", KERNELS).expect("compiles");
    let n = (1 << 17) + 13;
    let data = wobbly(n, 3);
    let rows_data = wobbly(64 * 3001, 4);
    // Shears near the identity: their product depends on the order (not commutative).
    let shears: Vec<[f32; 4]> = wobbly(50_001, 6)
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let e = (v / 1e9).clamp(-1e-4, 1e-4);
            if i % 2 == 0 {
                [1.0, e, 0.0, 1.0]
            } else {
                [1.0, 0.0, e, 1.0]
            }
        })
        .collect();
    same_everywhere(|d| {
        let sum = program.kernel("sum").expect("sum");
        let values = Stream::from_slice(d, &[n], &data).expect("values");
        let mut total = 0.0f32;
        sum.launch(args![&values, host_var(&mut total)])
            .expect("sum");
        let grid = Stream::from_slice(d, &[64, 3001], &rows_data).expect("grid");
        let rows = Stream::<f32>::new(d, &[64]).expect("rows");
        sum.launch(args![&grid, &rows]).expect("rows");
        let columns = Stream::<f32>::new(d, &[1, 3001]).expect("columns");
        sum.launch(args![&grid, &columns]).expect("columns");
        let tiles = Stream::<f32>::new(d, &[8, 1]).expect("tiles");
        sum.launch(args![&grid, &tiles]).expect("tiles");
        let product = program.kernel("product").expect("product");
        let matrices = Stream::from_slice(d, &[shears.len()], &shears).expect("shears");
        let mut turned = [0.0f32; 4];
        product
            .launch(args![&matrices, host_var(&mut turned)])
            .expect("product");
        (
            total.to_bits(),
            bits(&rows.to_vec().expect("rows")),
            bits(&columns.to_vec().expect("columns")),
            bits(&tiles.to_vec().expect("tiles")),
            bits(&turned),
        )
    });
}

/// The canonical sum of each of `count` runs of `len` leaves, the first at `first(k)`, the
/// next `step` after it (rows: step 1; columns: step the row length).
fn canonical_sums(
    data: &[f32],
    count: usize,
    len: usize,
    first: impl Fn(usize) -> usize,
    step: usize,
) -> Vec<u32> {
    (0..count)
        .map(|k| {
            let leaves: Vec<f32> = (0..len).map(|i| data[first(k) + i * step]).collect();
            brook_ir::reduce_order::reduce_canonical(&leaves, &mut |a: &f32, b: &f32| a + b)
                .expect("leaves")
                .to_bits()
        })
        .collect()
}

/// Pieces as long as one counter stack holds (2^22 leaves on the serial entries, 256 rows on
/// the GPU's column entry) fill every slot: the last leaf carries the whole piece into the
/// top slot. Rows longer than that are cut into pieces combined in a later pass. Each sum is
/// still the canonical tree, computed here on the host (the interpreter would take minutes
/// over 2^24 leaves). Four rows are enough targets that a 2-core CPU reduces each whole but
/// for the limit; 8192 columns of 8192 rows give a large GPU column pieces of 256 rows.
#[test]
fn pieces_that_fill_a_counter_stack_keep_the_canonical_order() {
    let program = Program::from_source("large.br", KERNELS).expect("compiles");
    let (rows, row) = (4, 1 << 22);
    let long = wobbly(rows * row + 3, 9);
    let expected_rows = canonical_sums(&long, rows, row, |k| k * row, 1);
    let longer = (1 << 22) + 77;
    let expected_longer = canonical_sums(&long, 1, longer, |_| 0, 1);
    let side = 8192;
    let square = wobbly(side * side, 10);
    let expected_columns = canonical_sums(&square, side, side, |k| k, side);
    // The interpreter would take minutes over these: groups of compiled devices only.
    let compiled = other_devices()
        .into_iter()
        .filter(|d| !d.members().iter().any(|m| m.type_name() == "interp"));
    for device in compiled {
        let sum = program.kernel("sum").expect("sum");
        let grid = Stream::from_slice(&device, &[rows, row], &long[..rows * row]).expect("grid");
        let sums = Stream::<f32>::new(&device, &[rows]).expect("sums");
        sum.launch(args![&grid, &sums]).expect("rows");
        assert_eq!(
            bits(&sums.to_vec().expect("rows")),
            expected_rows,
            "rows on {}",
            device.info()
        );
        let one = Stream::from_slice(&device, &[1, longer], &long[..longer]).expect("longer");
        let total = Stream::<f32>::new(&device, &[1]).expect("total");
        sum.launch(args![&one, &total]).expect("longer");
        assert_eq!(
            bits(&total.to_vec().expect("total")),
            expected_longer,
            "a longer row on {}",
            device.info()
        );
        let matrix = Stream::from_slice(&device, &[side, side], &square).expect("square");
        let columns = Stream::<f32>::new(&device, &[1, side]).expect("columns");
        sum.launch(args![&matrix, &columns]).expect("columns");
        assert_eq!(
            bits(&columns.to_vec().expect("columns")),
            expected_columns,
            "columns on {}",
            device.info()
        );
    }
}

#[test]
fn many_thread_groups_with_barriers() {
    let program = Program::from_source("large.br", KERNELS).expect("compiles");
    let n = 8 * 2000 + 5;
    let data = wobbly(n, 5);
    same_everywhere(|d| {
        let a = Stream::from_slice(d, &[n], &data).expect("a");
        let r = Stream::<f32>::new(d, &[n]).expect("r");
        program
            .kernel("rotate")
            .expect("rotate")
            .launch(args![&a, &r])
            .expect("launch");
        bits(&r.to_vec().expect("r"))
    });
}

#[test]
fn reductions_of_every_width_and_alignment() {
    let program = Program::from_source("large.br", KERNELS).expect("compiles");
    let n = 300_007;
    let singles = wobbly(n, 7);
    let doubles: Vec<f64> = singles.iter().map(|&v| f64::from(v) * 1e-3 + 1e5).collect();
    let words: Vec<u32> = singles.iter().map(|v| v.to_bits()).collect();
    same_everywhere(|d| {
        let sum = program.kernel("sum").expect("sum");
        let sum_double = program.kernel("sum_double").expect("sum_double");
        let hash = program.kernel("hash").expect("hash");
        let mut out = Vec::new();
        // Aligned rows (4096 leaves) and a view starting at an odd element.
        let grid = Stream::from_slice(d, &[64, 4096], &singles[..64 * 4096]).expect("grid");
        let rows = Stream::<f32>::new(d, &[64]).expect("rows");
        sum.launch(args![&grid, &rows]).expect("rows");
        out.push(bits(&rows.to_vec().expect("rows")));
        let whole = Stream::from_slice(d, &[n], &singles).expect("whole");
        let view = whole.domain(&[3], &[n - 5]).expect("view");
        let mut total = 0.0f32;
        sum.launch(args![&view, host_var(&mut total)])
            .expect("view sum");
        out.push(vec![total.to_bits()]);
        // Column sums, four columns per thread: aligned, and through a view whose rows
        // start off 16-byte boundaries; integer columns with a non-commutative combine.
        let tall = Stream::from_slice(d, &[64, 4100], &singles[..64 * 4100]).expect("tall");
        let cols = Stream::<f32>::new(d, &[1, 4100]).expect("cols");
        sum.launch(args![&tall, &cols]).expect("columns");
        out.push(bits(&cols.to_vec().expect("cols")));
        let shifted = tall.domain(&[0, 1], &[64, 4097]).expect("shifted view");
        let cols = Stream::<f32>::new(d, &[1, 4096]).expect("cols");
        sum.launch(args![&shifted, &cols]).expect("shifted columns");
        out.push(bits(&cols.to_vec().expect("cols")));
        // The column entry through a view on a 16-byte boundary, over two outer axes whose
        // leaves are evenly spaced, and (the serial entry) over a view whose outer axes
        // leave a gap between rows.
        let aligned = tall.domain(&[0, 4], &[64, 4100]).expect("aligned view");
        sum.launch(args![&aligned, &cols])
            .expect("aligned view columns");
        out.push(bits(&cols.to_vec().expect("cols")));
        let cube = Stream::from_slice(d, &[16, 12, 64], &singles[..16 * 12 * 64]).expect("cube");
        let floor = Stream::<f32>::new(d, &[1, 1, 64]).expect("floor");
        sum.launch(args![&cube, &floor]).expect("cube columns");
        out.push(bits(&floor.to_vec().expect("floor")));
        let gappy = cube.domain(&[0, 0, 0], &[16, 11, 64]).expect("gappy view");
        sum.launch(args![&gappy, &floor]).expect("gappy columns");
        out.push(bits(&floor.to_vec().expect("floor")));
        let grid = Stream::from_slice(d, &[3000, 64], &words[..3000 * 64]).expect("grid");
        let hashes = Stream::<u32>::new(d, &[1, 64]).expect("hashes");
        hash.launch(args![&grid, &hashes]).expect("column hashes");
        out.push(hashes.to_vec().expect("hashes"));
        // 8-byte leaves and a non-commutative integer combine.
        let dd = Stream::from_slice(d, &[n], &doubles).expect("doubles");
        let mut dt = 0.0f64;
        sum_double
            .launch(args![&dd, host_var(&mut dt)])
            .expect("double sum");
        out.push(vec![dt.to_bits() as u32, (dt.to_bits() >> 32) as u32]);
        let ww = Stream::from_slice(d, &[n], &words).expect("words");
        let mut h = 0u32;
        hash.launch(args![&ww, host_var(&mut h)]).expect("hash");
        out.push(vec![h]);
        out
    });
}

/// Brook+ allows one shared array of at most 16 KiB per group, below every GPU's 48 KiB, so no
/// valid program reaches the CUDA device's shared-memory check; the amount it checks is the
/// one the PTX declares.
#[test]
fn the_ptx_of_a_group_kernel_declares_and_addresses_its_shared_memory() {
    use brook_codegen::abi::Variant;
    use brook_codegen::ptx::{compile, EntryKind, Target};
    let program = Program::from_source("large.br", KERNELS).expect("compiles");
    let index = program
        .module()
        .kernels
        .iter()
        .position(|k| k.name == "rotate")
        .expect("rotate");
    let variant = Variant::plain(&program.module().kernels[index], 1);
    let ptx = compile(program.module(), index, &variant, &Target::DEFAULT).expect("ptx");
    // `shared float4 ring[8]`: 128 bytes.
    assert_eq!(
        ptx.entry,
        EntryKind::Group {
            group_size: 8,
            shared_bytes: 128
        }
    );
    assert!(
        ptx.text.contains(".shared .align 16 .b8 shared_1[128];"),
        "{}",
        ptx.text
    );
    // Shared elements are read and written in the shared state space (whole `float4`s), not
    // through generic addresses.
    assert!(
        ptx.text.contains("st.shared.v4.f32") && ptx.text.contains("ld.shared.v4.f32"),
        "{}",
        ptx.text
    );
    assert!(!ptx.text.contains("cvta.shared"), "{}", ptx.text);
}
