//! The Rust API: results, and a precise `Err` (never a panic) for every kind of bad input.

use brook::raw::LaunchProblem;
use brook::{args, brook_struct, BError, Device, Error, Program, Stream};

const COPY: &str = "kernel void copy(float a<>, out float b<>) { b = a; }";

fn copy_program() -> Program {
    Program::from_source("copy.br", COPY).expect("compiles")
}

#[test]
fn compile_errors_point_at_the_source() {
    let err = Program::from_source(
        "bad.br",
        "kernel void f(float a<>, out float b<>) { b = a + c; }",
    )
    .expect_err("`c` is not declared");
    let text = err.to_string();
    assert!(text.contains("bad.br:1:"), "{text}");
    assert!(matches!(err, Error::Compile { count: 1, .. }), "{err:?}");
    // `fn main() -> Result<(), brook::Error>` prints the error with `Debug`: the same text,
    // its lines as lines (not a struct with escaped newlines).
    assert_eq!(format!("{err:?}"), text);
    assert!(
        format!("{err:?}").contains("\n1 | kernel void f"),
        "{err:?}"
    );
}

/// A diagnostic that suggests brcc's `-a` says how to relax checking from Rust, and that
/// way works.
#[test]
fn a_suggested_flag_is_named_as_rust_options() {
    let source = "kernel void k(float2 a<>, out float b<>) { if (a) b = 1.0f; else b = 0.0f; }";
    let err = Program::from_source("vec.br", source).expect_err("a vector condition");
    let text = err.to_string();
    assert!(text.contains("pass -a"), "{text}");
    assert!(
        text.contains("from Rust, `-a` is `Program::compile"),
        "{text}"
    );
    let relaxed = brook::CompileOptions::from_flags("-a").expect("flags");
    Program::compile("vec.br", source, &relaxed).expect("relaxed typing accepts it");
}

/// A value of another number type converts as a C argument would where nothing is lost or
/// rounding is what C does (`args![2.0, ...]`: a Rust float literal is an `f64`).
#[test]
fn number_values_convert_to_the_parameter_type_as_in_c() {
    let program = Program::from_source(
        "scale.br",
        "kernel void scale(float a, int k, float x<>, out float y<>) { y = a * x + (float)k; }",
    )
    .expect("compiles");
    let scale = program.kernel("scale").expect("kernel");
    for device in Device::of_type("all").expect("devices") {
        let x = Stream::from_slice(&device, &[3], &[1.0f32, 2.0, 3.0]).expect("x");
        let y = Stream::<f32>::new(&device, &[3]).expect("y");
        scale
            .launch(args![2.0, 1u8, &x, &y])
            .expect("f64 and u8 values");
        assert_eq!(y.to_vec().expect("y"), [3.0, 5.0, 7.0], "{}", device.info());
        scale
            .launch(args![0.1, 0i64, &x, &y])
            .expect("0.1 as float");
        assert_eq!(
            y.to_vec().expect("y"),
            [0.1f32, 0.2, 0.3f32 * 1.0],
            "{}",
            device.info()
        );
        let err = scale
            .launch(args![2.0f32, 2.5, &x, &y])
            .expect_err("a fraction for an int");
        assert!(
            err.to_string()
                .contains("argument 2 (`k`): expected a int value, got a double value"),
            "{err}"
        );
    }
}

#[test]
fn warnings_are_kept_on_the_program() {
    assert_eq!(copy_program().warnings(), "");
    let program = Program::from_source(
        "mixed.br",
        "kernel void f(float a<>, int k, out float b<>) { b = a * k; }",
    )
    .expect("a level-1 warning compiles");
    let warnings = program.warnings();
    assert!(warnings.contains("mixed.br:1:"), "{warnings}");
    assert!(warnings.contains("warning[BR0403]"), "{warnings}");
}

#[test]
fn unknown_kernels_list_the_available_ones() {
    let err = copy_program().kernel("paste").expect_err("no such kernel");
    assert_eq!(
        err.to_string(),
        "no kernel `paste` in copy.br; launchable kernels: copy"
    );
}

#[test]
fn short_and_long_host_buffers_are_refused_and_recorded() {
    let device = Device::interp();
    let s = Stream::<f32>::new(&device, &[4]).expect("stream");
    let err = s.read(&[1.0, 2.0]).expect_err("too short");
    assert_eq!(
        err.to_string(),
        "Stream Read: the host buffer has 2 elements, the stream 4"
    );
    assert_eq!(s.error(), BError::Read);
    assert_eq!(s.error(), BError::NoError, "error() clears the code");
    assert!(s.error_log().contains("Stream Read"));
    let mut long = vec![0.0f32; 5];
    assert!(s.write(&mut long).is_err());
}

#[test]
fn bad_shapes_are_refused() {
    let device = Device::interp();
    for dims in [&[][..], &[0][..], &[1, 2, 3, 4, 5][..]] {
        let err = Stream::<f32>::new(&device, dims).expect_err("bad shape");
        assert!(
            err.to_string()
                .starts_with("Stream Allocation: invalid shape"),
            "{err}"
        );
    }
    let err = Stream::<f32>::new(&device, &[usize::MAX, 4]).expect_err("too large");
    assert!(
        err.to_string().contains("larger than the address space"),
        "{err}"
    );
}

#[test]
fn launch_errors_name_the_kernel_and_argument_and_mark_the_outputs() {
    let device = Device::interp();
    let program = copy_program();
    let kernel = program.kernel("copy").expect("kernel");
    let a = Stream::from_slice(&device, &[3], &[1i32, 2, 3]).expect("a");
    let b = Stream::<f32>::new(&device, &[3]).expect("b");
    let err = kernel
        .launch(args![&a, &b])
        .expect_err("int stream for float");
    assert_eq!(
        err.to_string(),
        "kernel `copy`: argument 1 (`a`): expected a float stream, got a int stream"
    );
    assert_eq!(b.error(), BError::InvalidParameter);
    let err = kernel.launch(args![&b]).expect_err("one argument");
    assert!(err.to_string().contains("expected 2 arguments, got 1"));
    let err = kernel
        .launch(args![1.0f32, &b])
        .expect_err("value for a stream");
    assert!(
        err.to_string()
            .contains("expected a float stream, got a float value"),
        "{err}"
    );
}

#[test]
fn errors_propagate_from_inputs_to_outputs() {
    let device = Device::interp();
    let kernel = copy_program().kernel("copy").expect("kernel");
    let a = Stream::<f32>::new(&device, &[2]).expect("a");
    let _ = a.read(&[1.0]);
    let b = Stream::<f32>::new(&device, &[2]).expect("b");
    let err = kernel.launch(args![&a, &b]).expect_err("input in error");
    assert!(err.to_string().contains("Invalid Input stream"), "{err}");
    let mut out = [0.0f32; 2];
    let err = b.write(&mut out).expect_err("output carries the error");
    assert!(err.to_string().contains("BR_ERROR_KERNEL"), "{err}");
}

#[test]
fn streams_from_another_device_are_refused() {
    let program = copy_program();
    let kernel = program.kernel("copy").expect("kernel");
    let one = Device::find("interp", 0).expect("interp:0");
    let two = Device::find("interp", 1).expect("interp:1");
    let a = Stream::<f32>::from_slice(&one, &[2], &[1.0, 2.0]).expect("a");
    let b = Stream::<f32>::new(&two, &[2]).expect("b");
    let err = match kernel.launch(args![&a, &b]).expect_err("two devices") {
        brook::Error::Launch(e) => e,
        other => panic!("not a launch error: {other}"),
    };
    assert!(
        matches!(err.problem, LaunchProblem::OtherDevice { .. }),
        "{err}"
    );
    assert!(err
        .to_string()
        .contains("Input stream device is different from current device"));
    assert_eq!(one.kind(), two.kind());
}

#[test]
fn permitted_aliasing_equals_the_unaliased_result() {
    let program = Program::from_source(
        "shift.br",
        "kernel void shift(float a[], out float b<>) { int i = instance().x; b = a[i + 1] + a[i]; }",
    )
    .expect("compiles");
    let kernel = program.kernel("shift").expect("kernel");
    let device = Device::interp();
    let data = [1.0f32, 2.0, 4.0, 8.0];
    let s = Stream::from_slice(&device, &[4], &data).expect("s");
    let err = kernel.launch(args![&s, &s]).expect_err("aliased");
    assert!(err
        .to_string()
        .contains("Input stream is same as output stream"));
    let _ = s.error();
    std::env::set_var("BRT_PERMIT_READ_WRITE_ALIASING", "1");
    let result = kernel.launch(args![&s, &s]);
    std::env::remove_var("BRT_PERMIT_READ_WRITE_ALIASING");
    result.expect("aliasing permitted");
    assert_eq!(s.to_vec().expect("read back"), vec![3.0, 6.0, 12.0, 16.0]);
}

brook_struct! {
    pub struct Body { pub position: [f32; 3], pub mass: f32 }
}

#[test]
fn struct_and_vector_streams_keep_c_layout() {
    let program = Program::from_source(
        "body.br",
        "struct body { float3 position; float mass; };
         kernel void heavier(struct body b<>, float4 scale, out struct body c<>, out float4 v<>) {
             c = b; c.mass = b.mass * scale.x; v = float4(b.position.x, b.position.y, b.position.z, b.mass) * scale;
         }",
    )
    .expect("compiles");
    let device = Device::interp();
    let bodies = [
        Body {
            position: [1.0, 2.0, 3.0],
            mass: 4.0,
        },
        Body {
            position: [-1.0, 0.0, 1.0],
            mass: 0.5,
        },
    ];
    let b = Stream::from_slice(&device, &[2], &bodies).expect("b");
    let c = Stream::<Body>::new(&device, &[2]).expect("c");
    let v = Stream::<[f32; 4]>::new(&device, &[2]).expect("v");
    program
        .kernel("heavier")
        .expect("kernel")
        .launch(args![&b, [2.0f32, 2.0, 2.0, 2.0], &c, &v])
        .expect("launch");
    let c = c.to_vec().expect("c");
    assert_eq!(
        c[0],
        Body {
            position: [1.0, 2.0, 3.0],
            mass: 8.0
        }
    );
    assert_eq!(c[1].mass, 1.0);
    assert_eq!(v.to_vec().expect("v")[1], [-2.0, 0.0, 2.0, 1.0]);
}

#[test]
fn the_matmul_example_kernels_match_plain_rust() {
    let program = Program::from_source(
        "matmul.br",
        include_str!("../../../examples/kernels/matmul.br"),
    )
    .expect("compiles");
    let device = Device::interp();
    let (n, k, m) = (5, 7, 3);
    let a: Vec<f32> = (0..n * k).map(|i| (i % 5) as f32 - 2.0).collect();
    let b: Vec<f32> = (0..k * m).map(|i| (i % 3) as f32 + 0.5).collect();
    let mut expected = vec![0.0f32; n * m];
    for r in 0..n {
        for c in 0..m {
            expected[r * m + c] = (0..k).fold(0.0, |s, i| s + a[r * k + i] * b[i * m + c]);
        }
    }
    let a_s = Stream::from_slice(&device, &[n, k], &a).expect("a");
    let b_s = Stream::from_slice(&device, &[k, m], &b).expect("b");
    for name in ["simple_matmult_indexof", "simple_matmult_instance"] {
        let width = match name {
            "simple_matmult_indexof" => brook::Arg::from(k as f32),
            _ => brook::Arg::from(k as u32),
        };
        let c_s = Stream::<f32>::new(&device, &[n, m]).expect("c");
        let kernel = program.kernel(name).expect("kernel");
        kernel
            .launch(&[width, (&a_s).into(), (&b_s).into(), (&c_s).into()])
            .expect("launch");
        assert_eq!(c_s.to_vec().expect("c"), expected, "{name}");
    }
}

#[test]
fn dimensions_can_be_given_fastest_first() {
    let device = Device::interp();
    let s = Stream::<f32>::new_x_first(&device, &[3, 2]).expect("stream");
    assert_eq!(s.shape(), &[2, 3]);
    let program = Program::from_source(
        "pos.br",
        "kernel void pos(out float2 p<>) { p = indexof(p).xy; }",
    )
    .expect("compiles");
    let p = Stream::<[f32; 2]>::new_x_first(&device, &[3, 2]).expect("p");
    program
        .kernel("pos")
        .expect("kernel")
        .launch(args![&p])
        .expect("launch");
    assert_eq!(
        p.to_vec().expect("p"),
        vec![
            [0.0, 0.0],
            [1.0, 0.0],
            [2.0, 0.0],
            [0.0, 1.0],
            [1.0, 1.0],
            [2.0, 1.0]
        ]
    );
}

#[test]
fn gpu_time_measures_gpu_work_and_is_absent_elsewhere() {
    let program = copy_program();
    let copy = program.kernel("copy").expect("copy");
    for device in Device::all() {
        let a = Stream::from_slice(&device, &[1 << 16], &vec![1.5f32; 1 << 16]).expect("a");
        let b = Stream::<f32>::new(&device, &[1 << 16]).expect("b");
        let timed = device.gpu_time(|| {
            copy.launch(args![&a, &b]).expect("launch");
        });
        match (device.type_name(), timed) {
            // Vulkan devices with timestamps (lavapipe's too) measure like CUDA's events.
            ("cuda" | "vulkan", Some(Ok(t))) => {
                assert!(t.as_secs_f64() > 0.0 && t.as_secs_f64() < 10.0, "{t:?}");
                assert_eq!(b.to_vec().expect("b")[12345], 1.5);
            }
            ("cuda", other) => panic!("{}: {other:?}", device.info()),
            ("vulkan", Some(Err(e))) => panic!("{}: {e}", device.info()),
            (_, None) => {}
            (_, Some(r)) => panic!("{} has no GPU clock: {r:?}", device.info()),
        }
    }
}

const VOUT: &str = "
kernel void positives(float a<>, vout [1] float kept<>)
{
    if (a > 0.0f) {
        kept = a;
        push(kept);
    }
}

kernel void pairs(float a<>, out float same<>, vout [2] int2 b<>)
{
    int i = (int)a;
    same = a;
    if (i > 0)
        push(b, int2(i, 0));
    if (i > 1)
        push(b, int2(i, 1));
}
";

#[test]
fn vout_streams_hold_the_pushed_values_in_domain_order_on_every_device() {
    let program = Program::from_source("vout.br", VOUT).expect("compiles");
    let positives = program.kernel("positives").expect("positives");
    let pairs = program.kernel("pairs").expect("pairs");
    for device in Device::all() {
        let data = [3.0f32, -1.0, 0.0, 7.0, 2.0, -5.0];
        let a = Stream::from_slice(&device, &[2, 3], &data).expect("a");
        let mut kept = Stream::<f32>::new(&device, &[1]).expect("kept");
        positives
            .launch(args![&a, brook::vout(&mut kept)])
            .expect("launch");
        assert_eq!(kept.shape(), &[3], "{}", device.info());
        assert_eq!(kept.to_vec().expect("kept"), vec![3.0, 7.0, 2.0]);

        let same = Stream::<f32>::new(&device, &[2, 3]).expect("same");
        let mut b = Stream::<[i32; 2]>::new(&device, &[1]).expect("b");
        pairs
            .launch(args![&a, &same, brook::vout(&mut b)])
            .expect("launch");
        assert_eq!(same.to_vec().expect("same"), data.to_vec());
        assert_eq!(
            b.to_vec().expect("b"),
            vec![[3, 0], [3, 1], [7, 0], [7, 1], [2, 0], [2, 1]],
            "{}",
            device.info()
        );

        let negative = Stream::from_slice(&device, &[2], &[-1.0f32, -2.0]).expect("negative");
        positives
            .launch(args![&negative, brook::vout(&mut kept)])
            .expect("launch");
        assert_eq!(kept.shape(), &[0], "nothing pushed: an empty stream");
        let err = positives
            .launch(args![&kept, brook::vout(&mut b)])
            .expect_err("an empty input and a vout of another type");
        assert!(matches!(err, Error::Launch(_)), "{err:?}");
    }
}

#[test]
fn a_vout_parameter_needs_brook_vout() {
    let program = Program::from_source("vout.br", VOUT).expect("compiles");
    let positives = program.kernel("positives").expect("positives");
    let device = Device::interp();
    let a = Stream::from_slice(&device, &[2], &[1.0f32, 2.0]).expect("a");
    let kept = Stream::<f32>::new(&device, &[2]).expect("kept");
    let err = positives
        .launch(args![&a, &kept])
        .expect_err("a shared borrow cannot receive the pushed values");
    assert!(
        err.to_string()
            .contains("argument 2 (`kept`) is a vout: pass brook::vout(&mut stream)"),
        "{err}"
    );
}

#[test]
fn brh_headers_are_read_next_to_the_source() {
    let dir = std::env::temp_dir().join(format!("brook-brh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("copy.brh"),
        "kernel void copy(float a<>, out float b<>)\n{\n    b = a + missing;\n}\n",
    )
    .expect("header");
    let main = dir.join("main.br");
    let main = main.to_str().expect("utf-8 path");
    let err = Program::from_source(main, "#include \"copy.brh\"\n")
        .expect_err("the header's kernel has an error");
    let text = err.to_string();
    assert!(text.contains("copy.brh:3:13: error[BR0401]"), "{text}");
    std::fs::write(
        dir.join("copy.brh"),
        "kernel void copy(float a<>, out float b<>) { b = a; }\n",
    )
    .expect("header");
    let program = Program::from_source(main, "#include \"copy.brh\"\n").expect("compiles");
    assert_eq!(program.kernel_names(), vec!["copy".to_string()]);
    let err = Program::from_source(main, "#include \"absent.brh\"\n").expect_err("no header");
    assert!(
        err.to_string()
            .contains("cannot include the header `absent.brh`"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
