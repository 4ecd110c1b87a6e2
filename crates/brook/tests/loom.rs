//! LOOM programs (seed 004 and our own) run on every device, checked against plain host
//! computations, and bit for bit against the reference interpreter.

use brook::{args, Device, Grid, LoomProgram, Stream};
use brook_ir::collective::scan_canonical;

/// A program of `examples/loom/`, compiled into the test (so it runs from anywhere).
macro_rules! example {
    ($name:literal) => {
        LoomProgram::from_source(
            $name,
            include_str!(concat!("../../../examples/loom/", $name)),
        )
        .unwrap_or_else(|e| panic!("{e}"))
    };
}

/// Every device, the interpreter first.
fn devices() -> Vec<Device> {
    let mut all = Device::all();
    all.sort_by_key(|d| d.type_name() != "interp");
    if !all.iter().any(|d| d.type_name() == "cuda") {
        eprintln!("note: no CUDA device here; LOOM runs on the interpreter and the CPU only");
    }
    all
}

/// Runs `f` on every device; each result must equal the host's `expected` and the
/// interpreter's.
fn on_every_device<T: PartialEq + std::fmt::Debug>(expected: &T, f: impl Fn(&Device) -> T) {
    for device in devices() {
        let found = f(&device);
        assert_eq!(&found, expected, "on {}", device.info());
    }
}

/// Pseudo-random floats whose sums depend on the order of additions.
fn wobbly(n: usize, seed: u32) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let unit = (state >> 8) as f32 / (1u32 << 24) as f32;
            (unit - 0.5) * [1e-3f32, 1.0, 1e3, 1e6][(state >> 3) as usize % 4]
        })
        .collect()
}

/// Floats as their bits (so NaN and -0 compare exactly).
fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// The canonical pairwise tree of a block reduce (brook_ir::reduce_order) on the host.
fn tree_sum(values: &[f32]) -> f32 {
    let mut level: Vec<f32> = values.to_vec();
    let mut stride = 1;
    while stride < level.len() {
        let mut i = 0;
        while i + stride < level.len() {
            level[i] += level[i + stride];
            i += 2 * stride;
        }
        stride *= 2;
    }
    level[0]
}

#[test]
fn maximum_of_a_2d_array_by_block_column() {
    let program = example!("maximum.loom");
    let (tx, ty, bx, by) = (32usize, 24usize, 8usize, 4usize);
    let data: Vec<i32> = (0..tx * ty)
        .map(|i| ((i * 7919) % 1000) as i32 - 500)
        .collect();
    let mut expected = vec![0i32; (tx / bx) * ty];
    for block in 0..tx / bx {
        for y in 0..ty {
            expected[block * ty + y] = (0..bx)
                .map(|x| data[(block * bx + x) * ty + y])
                .max()
                .unwrap();
        }
    }
    let grid = Grid {
        threads: [tx as u32, ty as u32],
        block: [bx as u32, by as u32],
    };
    let kernel = program.kernel(grid).expect("compiles for the grid");
    on_every_device(&expected, |d| {
        let input = Stream::from_slice(d, &[tx, ty], &data).expect("in");
        let out = Stream::<i32>::new(d, &[tx / bx, ty]).expect("out");
        kernel.launch(args![&input, &out]).expect("launch");
        out.to_vec().expect("read")
    });
}

#[test]
fn shift_left_by_one_block_both_forms() {
    let (n, block) = (96usize, 16usize);
    let data = wobbly(n, 1);
    let expected: Vec<u32> = (0..n)
        .map(|i| if i < block { 0.0f32 } else { data[i - block] }.to_bits())
        .collect();
    for program in [example!("shift_left.loom"), example!("shift_left1.loom")] {
        let kernel = program
            .kernel(Grid::one_d(n as u32, block as u32))
            .expect("compiles");
        on_every_device(&expected, |d| {
            let input = Stream::from_slice(d, &[n], &data).expect("in");
            let out = Stream::from_slice(d, &[n], &vec![7.0f32; n]).expect("out");
            kernel.launch(args![&input, &out]).expect("launch");
            bits(&out.to_vec().expect("read"))
        });
    }
}

#[test]
fn sum_of_squares_by_block() {
    let (n, block) = (256usize, 64usize);
    let data: Vec<i32> = (0..n as i32).map(|i| (i * 37) % 101 - 50).collect();
    let expected: Vec<i32> = data
        .chunks(block)
        .map(|c| {
            let squares: Vec<f32> = c.iter().map(|&v| (v as f32) * (v as f32)).collect();
            tree_sum(&squares) as i32
        })
        .collect();
    let kernel = example!("sum_of_squares.loom")
        .kernel(Grid::one_d(n as u32, block as u32))
        .expect("compiles");
    on_every_device(&expected, |d| {
        let input = Stream::from_slice(d, &[n], &data).expect("in");
        let out = Stream::<i32>::new(d, &[n / block]).expect("out");
        kernel.launch(args![&input, &out]).expect("launch");
        out.to_vec().expect("read")
    });
}

#[test]
fn the_layout_example_foo_gives_30() {
    let n = 40usize;
    let kernel = example!("foo.loom")
        .kernel(Grid::one_d(n as u32, 8))
        .expect("compiles");
    on_every_device(&vec![30i32; n], |d| {
        let out = Stream::<i32>::new(d, &[n]).expect("out");
        kernel.launch(args![&out]).expect("launch");
        out.to_vec().expect("read")
    });
}

#[test]
fn a_block_reduce_of_wobbly_floats_has_the_canonical_bits() {
    let program = LoomProgram::from_source(
        "sums.loom",
        "func add(x: Float32, y: Float32): Float32\n  return x + y\n\nkernel sums(in: Float32[THREADS], out: Float32[BLOCKS])\n  out[B] <- add /. in\n  return\n",
    )
    .expect("checks");
    for block in [1usize, 2, 32, 96, 256] {
        let n = block * 5;
        let data = wobbly(n, block as u32);
        let expected: Vec<u32> = data.chunks(block).map(|c| tree_sum(c).to_bits()).collect();
        let kernel = program
            .kernel(Grid::one_d(n as u32, block as u32))
            .expect("compiles");
        on_every_device(&expected, |d| {
            let input = Stream::from_slice(d, &[n], &data).expect("in");
            let out = Stream::<f32>::new(d, &[n / block]).expect("out");
            kernel.launch(args![&input, &out]).expect("launch");
            bits(&out.to_vec().expect("read"))
        });
    }
}

#[test]
fn blocks_grouped_per_thread_group_give_the_same_bits() {
    // Each thread group runs 1, 2 or 4 (the choice for a large grid) consecutive blocks, their
    // elements loaded up front. A reduce, a scan from each side and a plain copy, each block
    // checked against the host.
    let program = LoomProgram::from_source(
        "grouped.loom",
        "func add(x: Float32, y: Float32): Float32\n  return x + y\n\nkernel k(in: Float32[THREADS], sums: Float32[BLOCKS], left: Float32[THREADS], right: Float32[THREADS], copy: Float32[THREADS])\n  sums[B] <- add /. in\n  left <- add /: in\n  right <- add :/ in\n  copy <- in\n  return\n",
    )
    .expect("checks");
    // One warp, four and eight warps per block: the reduces of a group's blocks share
    // their totals where there are at least as many warps as blocks (PTX; 128 threads in
    // 8 blocks per group do not).
    let shapes: [(usize, usize, &[u32]); 3] =
        [(32, 64, &[1, 2, 4, 8]), (128, 16, &[4, 8]), (256, 8, &[8])];
    for (block, count, groupings) in shapes {
        let n = block * count;
        let data = wobbly(n, 7 + block as u32);
        let mut add = |a: &f32, b: &f32| a + b;
        let sums: Vec<u32> = data.chunks(block).map(|c| tree_sum(c).to_bits()).collect();
        let scan = |from_left: bool, add: &mut dyn FnMut(&f32, &f32) -> f32| -> Vec<u32> {
            data.chunks(block)
                .flat_map(|c| scan_canonical(c, from_left, &mut |a, b| add(a, b)))
                .map(f32::to_bits)
                .collect()
        };
        let expected = (
            sums,
            scan(true, &mut add),
            scan(false, &mut add),
            bits(&data),
        );
        let grid = Grid::one_d(n as u32, block as u32);
        for &copies in groupings {
            let kernel = program.kernel_grouped(grid, copies).expect("compiles");
            assert_eq!(kernel.blocks_per_group(), copies);
            on_every_device(&expected, |d| {
                let input = Stream::from_slice(d, &[n], &data).expect("in");
                let sums = Stream::<f32>::new(d, &[n / block]).expect("sums");
                let left = Stream::<f32>::new(d, &[n]).expect("left");
                let right = Stream::<f32>::new(d, &[n]).expect("right");
                let copy = Stream::<f32>::new(d, &[n]).expect("copy");
                kernel
                    .launch(args![&input, &sums, &left, &right, &copy])
                    .expect("launch");
                // A Vulkan device with less shared memory than the grouped blocks need
                // (lavapipe: 32 KiB) refuses the launch, naming the limit and the device.
                if let Err(e) = sums.to_vec() {
                    let text = e.to_string();
                    let limit = text.contains("bytes of shared memory per thread group");
                    assert!(
                        d.type_name() == "vulkan" && limit,
                        "on {}: {text}",
                        d.info()
                    );
                    eprintln!("note: {text}");
                    return expected.clone();
                }
                let read = |s: &Stream<f32>| bits(&s.to_vec().expect("read"));
                (read(&sums), read(&left), read(&right), read(&copy))
            });
        }
    }
    let grid = Grid::one_d(64 * 32, 32);
    let large = Grid::one_d(4096 * 256, 256);
    assert_eq!(
        program.kernel(large).expect("compiles").blocks_per_group(),
        4
    );
    assert_eq!(
        program.kernel(grid).expect("compiles").blocks_per_group(),
        1
    );
    let refused = program
        .kernel_grouped(grid, 3)
        .expect_err("3 does not divide 64");
    assert!(refused.to_string().contains("1, 2, 4 or 8"), "{refused}");
}

#[test]
fn a_reduce_in_a_loop_sees_each_round_of_data() {
    let program = LoomProgram::from_source(
        "rounds.loom",
        "func add(x: Float32, y: Float32): Float32\n  return x + y\n\nfunc twice(x: Float32): Float32\n  return 2.0 * x\n\nkernel k(in: Float32[THREADS], out: Float32[BLOCKS], scans: Float32[THREADS])\n  total: Float32\n  for i: Int32 <- 0 .. 3\n    in <- twice // in\n    total += add /. in\n    scans <- add /: in\n  out[B] <- total\n  return\n",
    )
    .expect("checks");
    let (n, block) = (5 * 256usize, 256usize);
    let data = wobbly(n, 11);
    let mut totals = Vec::new();
    let mut scans = Vec::new();
    for chunk in data.chunks(block) {
        let mut values = chunk.to_vec();
        let mut total = 0f32;
        for _ in 0..3 {
            values.iter_mut().for_each(|v| *v *= 2.0);
            total += tree_sum(&values);
        }
        totals.push(total.to_bits());
        scans.extend(bits(&scan_canonical(&values, true, &mut |a, b| a + b)));
    }
    let kernel = program
        .kernel(Grid::one_d(n as u32, block as u32))
        .expect("compiles");
    on_every_device(&(totals, scans), |d| {
        let input = Stream::from_slice(d, &[n], &data).expect("in");
        let out = Stream::<f32>::new(d, &[n / block]).expect("out");
        let s = Stream::<f32>::new(d, &[n]).expect("scans");
        kernel.launch(args![&input, &out, &s]).expect("launch");
        (
            bits(&out.to_vec().expect("out")),
            bits(&s.to_vec().expect("s")),
        )
    });
}

#[test]
fn global_values_are_shared_by_the_grid() {
    // A `global` scalar and a `global` record: one zeroed element each for the launch, read
    // back by the thread that wrote it (every thread writes the same values); `seen` reads `h`,
    // never written (zero).
    let program = LoomProgram::from_source(
        "globals.loom",
        "type Pair {a: Int32, b: Int32}\n\nkernel k(out: Int32[THREADS], seen: Int32[THREADS])\n  global g: Int32\n  global p: Pair\n  global h: Int32\n  seen[T] <- h\n  g <- 6\n  p.a <- 2\n  out[T] <- g * p.a + p.b + T\n  return\n",
    )
    .expect("checks");
    let n = 3 * 64usize;
    let expected: (Vec<i32>, Vec<i32>) = ((0..n as i32).map(|t| 12 + t).collect(), vec![0; n]);
    let kernel = program.kernel(Grid::one_d(n as u32, 64)).expect("compiles");
    for _ in 0..2 {
        // Twice: each launch starts from zeroed globals.
        on_every_device(&expected, |d| {
            let out = Stream::<i32>::new(d, &[n]).expect("out");
            let seen = Stream::<i32>::new(d, &[n]).expect("seen");
            kernel.launch(args![&out, &seen]).expect("launch");
            (out.to_vec().expect("out"), seen.to_vec().expect("seen"))
        });
    }
}

#[test]
fn grouped_blocks_read_early_only_what_they_have_not_written() {
    // Each thread writes its element of `a`, then copies `a` into `b` (inside an `if`): the
    // copy must see the write, however many blocks a group runs.
    let program = LoomProgram::from_source(
        "aliased.loom",
        "kernel k(a: Int32[THREADS], b: Int32[THREADS])\n  if T >= 0 then\n    a[T] <- T + 7\n    b <- a\n  return\n",
    )
    .expect("checks");
    let n = 16 * 32usize;
    let expected: Vec<i32> = (0..n as i32).map(|t| t + 7).collect();
    for copies in [1, 4] {
        let kernel = program
            .kernel_grouped(Grid::one_d(n as u32, 32), copies)
            .expect("compiles");
        on_every_device(&(expected.clone(), expected.clone()), |d| {
            let a = Stream::<i32>::new(d, &[n]).expect("a");
            let b = Stream::<i32>::new(d, &[n]).expect("b");
            kernel.launch(args![&a, &b]).expect("launch");
            (a.to_vec().expect("a"), b.to_vec().expect("b"))
        });
    }
}

#[test]
fn an_early_return_keeps_one_block_per_group() {
    let program = LoomProgram::from_source(
        "early.loom",
        "kernel k(in: Int32[THREADS], out: Int32[THREADS])\n  if in[T] < 0 then\n    return\n  out[T] <- in[T] + 1\n  return\n",
    )
    .expect("checks");
    let n = 64 * 32usize;
    let data: Vec<i32> = (0..n as i32)
        .map(|i| if i % 3 == 0 { -i } else { i })
        .collect();
    let expected: Vec<i32> = data
        .iter()
        .map(|&v| if v < 0 { 0 } else { v + 1 })
        .collect();
    let grid = Grid::one_d(n as u32, 32);
    let large = Grid::one_d(4096 * 256, 256);
    assert_eq!(
        program.kernel(large).expect("compiles").blocks_per_group(),
        1
    );
    let refused = program.kernel_grouped(grid, 2).expect_err("returns early");
    assert!(
        refused.to_string().contains("returns before its end"),
        "{refused}"
    );
    let kernel = program.kernel(grid).expect("compiles");
    on_every_device(&expected, |d| {
        let input = Stream::from_slice(d, &[n], &data).expect("in");
        let out = Stream::<i32>::new(d, &[n]).expect("out");
        kernel.launch(args![&input, &out]).expect("launch");
        out.to_vec().expect("read")
    });
}

#[test]
fn block_scans_from_both_sides_keep_operand_order() {
    // A non-commutative operator: keep the left operand's digits shifted (x * 10 + y mod 10^9).
    let program = LoomProgram::from_source(
        "scans.loom",
        "func digits(x: Int64, y: Int64): Int64\n  return (x * 10 + y) % 1000000000\n\nkernel scans(in: Int64[THREADS], left: Int64[THREADS], right: Int64[THREADS])\n  left <- digits /: in\n  right <- digits :/ in\n  return\n",
    )
    .expect("checks");
    let mut f = |x: &i64, y: &i64| (x * 10 + y) % 1_000_000_000;
    // One run of 32 lanes, several, a short last run, a whole warp, and the largest CUDA block.
    for (n, block) in [
        (48, 12),
        (192, 96),
        (200, 100),
        (64, 32),
        (512, 256),
        (1024, 1024),
    ] {
        let data: Vec<i64> = (0..n as i64).map(|i| (i * 7) % 10).collect();
        let scan = |from_left: bool, f: &mut dyn FnMut(&i64, &i64) -> i64| -> Vec<i64> {
            data.chunks(block)
                .flat_map(|c| scan_canonical(c, from_left, &mut |a, b| f(a, b)))
                .collect()
        };
        let (left, right) = (scan(true, &mut f), scan(false, &mut f));
        let kernel = program
            .kernel(Grid::one_d(n as u32, block as u32))
            .expect("compiles");
        on_every_device(&(left, right), |d| {
            let input = Stream::from_slice(d, &[n], &data).expect("in");
            let l = Stream::<i64>::new(d, &[n]).expect("left");
            let r = Stream::<i64>::new(d, &[n]).expect("right");
            kernel.launch(args![&input, &l, &r]).expect("launch");
            (l.to_vec().expect("l"), r.to_vec().expect("r"))
        });
    }
}

#[test]
fn a_launch_with_a_wrong_array_shape_is_refused() {
    let kernel = example!("foo.loom")
        .kernel(Grid::one_d(16, 8))
        .expect("compiles");
    let out = Stream::<i32>::new(&Device::interp(), &[15]).expect("out");
    let err = kernel.launch(args![&out]).expect_err("refused").to_string();
    assert!(err.contains("[16]") && err.contains("[15]"), "{err}");
    // A refusal nobody checks is still on the stream (and printed), as for Brook launches.
    assert_ne!(out.error(), brook::BError::NoError);
    assert!(out.error_log().contains("[16]"), "{}", out.error_log());
    let err = kernel
        .launch(args![&out, 1i32])
        .expect_err("too many arguments")
        .to_string();
    assert!(err.contains("argument"), "{err}");
    let err = example!("foo.loom")
        .kernel(Grid::one_d(10, 4))
        .expect_err("not whole blocks")
        .to_string();
    assert!(err.contains("whole blocks"), "{err}");
}

brook::brook_struct! {
    struct Particle { x: f32, v: f32, alive: i32 }
}

#[test]
fn a_record_typed_particle_update() {
    let n = 64usize;
    let start: Vec<Particle> = (0..n)
        .map(|i| Particle {
            x: (i as f32) * 0.25 - 2.0,
            v: (i as f32 % 7.0) - 3.0,
            alive: (i % 5 != 0) as i32,
        })
        .collect();
    let g = -9.5f32;
    let dt = 0.5f32;
    let expected: Vec<Particle> = start
        .iter()
        .map(|&p| {
            let mut q = p;
            if q.alive != 0 {
                q.v += g * dt;
                q.x += q.v * dt;
                if q.x < 0.0 {
                    q.x = -q.x;
                    q.v = -q.v;
                }
            }
            q
        })
        .collect();
    let kernel = example!("particles.loom")
        .kernel(Grid::one_d(n as u32, 16))
        .expect("compiles");
    on_every_device(&expected, |d| {
        let ps = Stream::from_slice(d, &[n], &start).expect("particles");
        kernel.launch(args![&ps, g]).expect("launch");
        ps.to_vec().expect("read")
    });
}

#[test]
fn a_2d_stencil_with_zero_borders() {
    let (h, w) = (24usize, 40usize);
    let a = wobbly(h * w, 9);
    let at = |x: i64, y: i64| {
        if x < 0 || y < 0 || x >= h as i64 || y >= w as i64 {
            0.0
        } else {
            a[x as usize * w + y as usize]
        }
    };
    let mut expected = Vec::new();
    for x in 0..h as i64 {
        for y in 0..w as i64 {
            let sum = at(x, y) + at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1);
            expected.push((sum / 5.0).to_bits());
        }
    }
    let grid = Grid {
        threads: [h as u32, w as u32],
        block: [4, 8],
    };
    let kernel = example!("stencil.loom").kernel(grid).expect("compiles");
    on_every_device(&expected, |d| {
        let input = Stream::from_slice(d, &[h, w], &a).expect("a");
        let out = Stream::<f32>::new(d, &[h, w]).expect("out");
        kernel.launch(args![&input, &out]).expect("launch");
        bits(&out.to_vec().expect("read"))
    });
}

#[test]
fn block_prefix_sums_and_totals() {
    let (n, block) = (320usize, 64usize);
    let data = wobbly(n, 4);
    let mut sums = Vec::new();
    let mut totals = Vec::new();
    for chunk in data.chunks(block) {
        let v = scan_canonical(chunk, true, &mut |a, b| a + b);
        sums.extend(v.iter().map(|x| x.to_bits()));
        totals.push(tree_sum(chunk).to_bits());
    }
    let kernel = example!("prefix_sum.loom")
        .kernel(Grid::one_d(n as u32, block as u32))
        .expect("compiles");
    on_every_device(&(sums, totals), |d| {
        let input = Stream::from_slice(d, &[n], &data).expect("in");
        let s = Stream::<f32>::new(d, &[n]).expect("sums");
        let t = Stream::<f32>::new(d, &[n / block]).expect("totals");
        kernel.launch(args![&input, &s, &t]).expect("launch");
        (bits(&s.to_vec().expect("s")), bits(&t.to_vec().expect("t")))
    });
}

#[test]
fn a_program_runs_with_its_imports() {
    let dir = std::env::temp_dir().join(format!("brook-loom-import-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("lib")).expect("temp dir");
    std::fs::write(
        dir.join("lib/ops.loom"),
        "type Pair {a: Int32, b: Int32}\n\nfunc twice(x: Int32): Int32\n  return 2 * x\n",
    )
    .expect("lib");
    let main = dir.join("main.loom");
    std::fs::write(
        &main,
        "import <lib/ops.loom>\n\nkernel k(out: Int32[THREADS])\n  p: Pair\n  p.a <- twice(T)\n  out[T] <- p.a + 1\n  return\n",
    )
    .expect("main");
    let program =
        LoomProgram::from_file(&main.to_string_lossy()).expect("compiles with its import");
    let kernel = program.kernel(Grid::one_d(6, 3)).expect("lowers");
    on_every_device(&vec![1, 3, 5, 7, 9, 11], |d| {
        let out = Stream::<i32>::new(d, &[6]).expect("out");
        kernel.launch(args![&out]).expect("launch");
        out.to_vec().expect("read")
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// `out[B] <- add /. a`: every thread would store the block's reduce to one element, so the
/// first thread alone does (the IR shows the guard); where the kernel reads the array back,
/// or a thread may return early, every thread stores as the program says. Both stores give
/// the canonical sums on every device.
#[test]
fn a_block_wide_store_is_made_once_unless_the_array_is_read_back() {
    const ADD: &str = "func add(x: Float32, y: Float32): Float32\n  return x + y\n\n";
    let once_program = LoomProgram::from_source(
        "once.loom",
        &format!("{ADD}kernel sums(in: Float32[THREADS], out: Float32[BLOCKS])\n  out[B] <- add /. in\n  return\n"),
    )
    .expect("compiles");
    let reread = LoomProgram::from_source(
        "reread.loom",
        &format!("{ADD}kernel sums(in: Float32[THREADS], out: Float32[BLOCKS])\n  out[B] <- add /. in\n  local s: Float32 <- out[B]\n  in[T] <- s\n  return\n"),
    )
    .expect("compiles");
    let (n, block) = (2048usize, 128usize);
    let data = wobbly(n, 11);
    let sums: Vec<f32> = data.chunks(block).map(tree_sum).collect();
    let grid = Grid::one_d(n as u32, block as u32);
    let (once, reread) = (
        once_program.kernel(grid).expect("grid"),
        reread.kernel(grid).expect("grid"),
    );
    let guarded =
        |k: &brook::LoomKernel| brook_ir::print::print_module(k.module()).contains("if (lane$");
    assert!(guarded(&once), "the first thread stores");
    assert!(!guarded(&reread), "every thread stores");
    // Four blocks per thread group: their first-thread stores share one test.
    let four = once_program.kernel_grouped(grid, 4).expect("grid");
    let tests = brook_ir::print::print_module(four.module())
        .matches("if (lane$")
        .count();
    assert_eq!(tests, 1, "one guard for the group's four stores");
    // A kernel whose threads may return early keeps every thread's store (the first thread
    // could be gone).
    let early = LoomProgram::from_source(
        "early.loom",
        &format!(
            "{ADD}kernel sums(in: Float32[THREADS], out: Float32[BLOCKS])
  if T = 5 then
    return
  out[B] <- add /. in
  return
"
        ),
    )
    .expect("compiles");
    assert!(
        !guarded(&early.kernel(grid).expect("grid")),
        "every thread stores"
    );
    on_every_device(&bits(&sums), |d| {
        let input = Stream::from_slice(d, &[n], &data).expect("in");
        let out = Stream::<f32>::new(d, &[n / block]).expect("out");
        once.launch(args![&input, &out]).expect("launch");
        bits(&out.to_vec().expect("read"))
    });
    let spread: Vec<u32> = sums
        .iter()
        .flat_map(|s| std::iter::repeat_n(s.to_bits(), block))
        .collect();
    on_every_device(&spread, |d| {
        let input = Stream::from_slice(d, &[n], &data).expect("in");
        let out = Stream::<f32>::new(d, &[n / block]).expect("out");
        reread.launch(args![&input, &out]).expect("launch");
        bits(&input.to_vec().expect("read"))
    });
}

/// Two different reduces in one statement run side by side (one barrier on a GPU; each warp
/// then finishes its own reduce's cross-warp part): both keep the canonical order.
#[test]
fn two_different_reduces_side_by_side() {
    let program = LoomProgram::from_source(
        "two.loom",
        "func add(x: Float32, y: Float32): Float32\n  return x + y\n\nfunc mx(x: Float32, y: Float32): Float32\n  if x > y then\n    return x\n  return y\n\nkernel both(in: Float32[THREADS], out: Float32[BLOCKS])\n  out[B] <- (add /. in) + (mx /. in)\n  return\n",
    )
    .expect("compiles");
    let (n, block) = (1024usize, 128usize);
    let data = wobbly(n, 5);
    let expected: Vec<u32> = data
        .chunks(block)
        .map(|c| (tree_sum(c) + c.iter().copied().fold(f32::MIN, f32::max)).to_bits())
        .collect();
    let kernel = program
        .kernel(Grid::one_d(n as u32, block as u32))
        .expect("grid");
    on_every_device(&expected, |d| {
        let input = Stream::from_slice(d, &[n], &data).expect("in");
        let out = Stream::<f32>::new(d, &[n / block]).expect("out");
        kernel.launch(args![&input, &out]).expect("launch");
        bits(&out.to_vec().expect("read"))
    });
}
