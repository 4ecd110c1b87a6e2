//! The runtime's behaviour through the Rust API: asynchronous work, devices and threads,
//! assign and views, reductions into host variables, and the runtime errors of seed 003
//! section 8 (each as an `Err` and on the stream's error state).

use brook::{args, host_var, BError, Device, Error, IterStream, Program, Stream};
use std::sync::mpsc;
use std::time::Duration;

const KERNELS: &str = "
kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }
kernel void copy(float a<>, out float b<>) { b = a; }
reduce void sum(float a<>, reduce float r<>) { r = r + a; }
";

fn program() -> Program {
    Program::from_source("runtime.br", KERNELS).expect("compiles")
}

fn interp(ordinal: usize) -> Device {
    Device::find("interp", ordinal).expect("interpreter device")
}

#[test]
fn launches_are_queued_and_reading_an_output_waits_for_them() {
    let program = program();
    let saxpy = program.kernel("saxpy").expect("saxpy");
    let device = interp(0);
    let n = 1000;
    let x = Stream::from_slice(&device, &[n], &vec![1.0f32; n]).expect("x");
    let mut y = Stream::from_slice(&device, &[n], &vec![0.0f32; n]).expect("y");
    for _ in 0..20 {
        let r = Stream::<f32>::new(&device, &[n]).expect("r");
        saxpy.launch(args![2.0f32, &x, &y, &r]).expect("launch");
        y = r;
    }
    let pending = y.write_async().expect("write_async");
    assert_eq!(pending.wait().expect("wait"), vec![40.0f32; n]);
    y.finish().expect("finish");
    assert!(y.is_sync());
    y.finish().expect("finish twice is harmless");
    assert_eq!(y.to_vec().expect("to_vec")[n - 1], 40.0);
}

/// Hundreds of dependent launches queued without a wait, on every device: devices that
/// submit queued work in runs while the host queues more (Vulkan) must order the runs, and
/// reads in between must see every launch before them.
#[test]
fn long_chains_of_queued_launches_see_each_others_writes_on_every_device() {
    let program = program();
    let (saxpy, sum) = (
        program.kernel("saxpy").expect("saxpy"),
        program.kernel("sum").expect("sum"),
    );
    for device in Device::all() {
        let n = 1 << 14;
        let ones = Stream::from_slice(&device, &[n], &vec![1.0f32; n]).expect("ones");
        let mut x = Stream::from_slice(&device, &[n], &vec![0.0f32; n]).expect("x");
        let mut next = Stream::<f32>::new(&device, &[n]).expect("next");
        let totals: Vec<Stream<f32>> = (0..6)
            .map(|_| Stream::<f32>::new(&device, &[1]).expect("a total"))
            .collect();
        for step in 1..=300 {
            saxpy
                .launch(args![1.0f32, &x, &ones, &next])
                .expect("saxpy");
            std::mem::swap(&mut x, &mut next);
            if step % 50 == 0 {
                sum.launch(args![&x, &totals[step / 50 - 1]]).expect("sum");
            }
            if step == 120 {
                assert_eq!(
                    x.to_vec().expect("a read")[n - 1],
                    120.0,
                    "{}",
                    device.info()
                );
            }
        }
        assert_eq!(
            x.to_vec().expect("x"),
            vec![300.0f32; n],
            "{}",
            device.info()
        );
        for (k, total) in totals.iter().enumerate() {
            let expected = (50 * (k + 1) * n) as f32;
            assert_eq!(
                total.to_vec().expect("total"),
                vec![expected],
                "{}",
                device.info()
            );
        }
    }
}

#[test]
fn dropping_streams_with_queued_work_is_safe() {
    let program = program();
    let copy = program.kernel("copy").expect("copy");
    let device = interp(0);
    let kept = Stream::<f32>::new(&device, &[4]).expect("kept");
    for round in 0..50 {
        let a = Stream::from_slice(&device, &[64], &vec![round as f32; 64]).expect("a");
        let b = Stream::<f32>::new(&device, &[64]).expect("b");
        copy.launch(args![&a, &b]).expect("launch");
        // `a` and `b` are dropped while the copy may still be queued.
    }
    let a = Stream::from_slice(&device, &[4], &[1.0f32, 2.0, 3.0, 4.0]).expect("a");
    copy.launch(args![&a, &kept]).expect("launch");
    assert_eq!(kept.to_vec().expect("kept"), vec![1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn a_reduction_into_a_host_variable_returns_its_result() {
    let program = program();
    let sum = program.kernel("sum").expect("sum");
    let device = interp(1);
    let x = Stream::from_slice(&device, &[3, 5], &[2.0f32; 15]).expect("x");
    let mut total = -1.0f32;
    sum.launch(args![&x, host_var(&mut total)]).expect("reduce");
    assert_eq!(total, 30.0);
    let ramp = IterStream::new(&[10], 0.0f32, 10.0).expect("iterator");
    sum.launch(args![&ramp, host_var(&mut total)])
        .expect("reduce");
    assert_eq!(total, 45.0);
    let copy = program.kernel("copy").expect("copy");
    let err = copy
        .launch(args![&x, host_var(&mut total)])
        .expect_err("not a reduction");
    assert!(
        err.to_string().contains("can only receive a reduction"),
        "{err}"
    );
}

#[test]
fn devices_by_type_name() {
    let all = Device::of_type("all").expect("all");
    assert!(all.len() >= 2, "two interpreter devices at least");
    let interp = Device::of_type("interp").expect("interp");
    assert!(interp.iter().all(|d| d.type_name() == "interp"));
    for name in ["cpu", "cuda", "vulkan"] {
        let devices = Device::of_type(name).expect(name);
        assert!(devices.iter().all(|d| d.type_name() == name), "{name}");
        assert!(devices.len() <= all.len());
    }
    // "cal" (Brook+'s name for its GPUs): the GPUs (CUDA's, then Vulkan's), or the CPU
    // standing in without one.
    let gpus = Device::of_type("gpu").expect("gpu");
    let cal = Device::of_type("cal").expect("cal");
    assert!(!cal.is_empty());
    if gpus.is_empty() {
        assert!(cal.iter().all(|d| d.type_name() == "cpu"), "cal");
    } else {
        assert_eq!(cal.len(), gpus.len(), "cal");
        assert!(cal
            .iter()
            .all(|d| ["cuda", "vulkan"].contains(&d.type_name())));
    }
    let err = Device::of_type("dsp").expect_err("unknown type");
    assert!(err.to_string().contains("known device types"), "{err}");
}

#[test]
fn use_devices_is_per_thread_and_not_inherited() {
    let second = interp(1);
    brook::use_devices(std::slice::from_ref(&second));
    assert_eq!(Device::current().info(), second.info());
    let seen_by_child = std::thread::spawn(|| Device::current().info().clone())
        .join()
        .expect("child");
    assert_eq!(seen_by_child, Device::default_device().info().clone());
    brook::use_devices(&[]);
    assert_eq!(Device::current().info(), Device::default_device().info());
}

#[test]
fn assign_copies_within_and_across_devices_and_into_views() {
    let (one, two) = (interp(0), interp(1));
    let source = Stream::from_slice(&one, &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).expect("s");
    let there = Stream::<f32>::new(&two, &[2, 3]).expect("there");
    there.assign(&source).expect("across devices");
    assert_eq!(
        there.to_vec().expect("there"),
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    );
    let big = Stream::<f32>::new(&two, &[4, 4]).expect("big");
    let corner = big.domain(&[1, 1], &[3, 4]).expect("view");
    corner.assign(&there).expect("into a view");
    let expected = [
        0.0, 0.0, 0.0, 0.0, //
        0.0, 1.0, 2.0, 3.0, //
        0.0, 4.0, 5.0, 6.0, //
        0.0, 0.0, 0.0, 0.0,
    ];
    assert_eq!(big.to_vec().expect("big"), expected);
    assert_eq!(
        corner.to_vec().expect("view"),
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    );
}

#[test]
fn many_threads_on_several_devices_lose_nothing_and_never_deadlock() {
    let threads = 16;
    let (done, results) = mpsc::channel();
    for t in 0..threads {
        let done = done.clone();
        std::thread::spawn(move || {
            let program = program();
            let saxpy = program.kernel("saxpy").expect("saxpy");
            let device = interp(t % 2);
            brook::use_devices(std::slice::from_ref(&device));
            let n = 257;
            let x: Vec<f32> = (0..n).map(|i| (i + t) as f32).collect();
            let xs = Stream::from_slice(&Device::current(), &[n], &x).expect("x");
            let mut y = Stream::from_slice(&device, &[n], &vec![0.0f32; n]).expect("y");
            for _ in 0..10 {
                let r = Stream::<f32>::new(&device, &[n]).expect("r");
                saxpy.launch(args![1.0f32, &xs, &y, &r]).expect("launch");
                y = r;
            }
            let other = Stream::<f32>::new(&interp((t + 1) % 2), &[n]).expect("other");
            other.assign(&y).expect("assign across devices");
            let got = other.to_vec().expect("result");
            let expected: Vec<f32> = x.iter().map(|v| v * 10.0).collect();
            done.send((t, got == expected)).expect("report");
        });
    }
    drop(done);
    for _ in 0..threads {
        let (t, ok) = results
            .recv_timeout(Duration::from_secs(120))
            .expect("every thread finishes (no deadlock)");
        assert!(ok, "thread {t} lost data");
    }
}

fn expect_stream_error(result: Result<impl std::fmt::Debug, Error>, text: &str) {
    match result {
        Ok(v) => panic!("expected an error containing `{text}`, got {v:?}"),
        Err(e) => assert!(e.to_string().contains(text), "`{e}` lacks `{text}`"),
    }
}

#[test]
fn stream_operation_errors_are_clear() {
    let device = interp(0);
    let s = Stream::<f32>::new(&device, &[4, 6]).expect("s");
    expect_stream_error(
        s.domain(&[2, 0], &[1, 3]),
        "Domain Operator: Start point is more than end point",
    );
    expect_stream_error(
        s.domain(&[0, 0], &[5, 6]),
        "Domain Operator: Domain dimensions are bigger than original stream",
    );
    expect_stream_error(
        s.domain(&[0], &[1]),
        "Domain Operator: Failed to create domain stream",
    );
    expect_stream_error(
        s.exec_domain(2),
        "Exec Domain: This API is valid only for 1D stream",
    );
    let line = Stream::<f32>::new(&device, &[8]).expect("line");
    expect_stream_error(
        line.exec_domain(0),
        "Exec Domain: Number of threads must be more than 0",
    );
    expect_stream_error(
        line.exec_domain(9),
        "Exec Domain: Number of threads specified more than stream dimension",
    );
    assert_eq!(line.exec_domain(3).expect("exec domain").shape(), &[3]);
    let wrong = Stream::<f32>::new(&device, &[6, 4]).expect("wrong");
    expect_stream_error(
        wrong.assign(&s),
        "Stream Assign: Input stream rank and dimension doesn't match with destination",
    );
    assert_eq!(wrong.error(), BError::InvalidParameter);
    expect_stream_error(s.read(&[1.0; 5]), "Stream Read");
    assert_eq!(s.error(), BError::Read);
    expect_stream_error(
        Stream::<f32>::new(&device, &[1 << 30, 1 << 30]),
        "Stream Allocation: Failed to create buffer",
    );
}

#[test]
fn warnings_for_uninitialized_streams_are_logged() {
    let device = interp(0);
    let never_written = Stream::<f32>::new(&device, &[3]).expect("s");
    assert_eq!(never_written.to_vec().expect("zeros"), vec![0.0; 3]);
    assert!(never_written
        .error_log()
        .contains("Stream Write: Uninitialized stream"));
    let target = Stream::<f32>::new(&device, &[3]).expect("t");
    target.assign(&never_written).expect("assign");
    assert!(target
        .error_log()
        .contains("Stream Assign: Uninitialized input stream"));
    assert_eq!(target.error(), BError::NoError);
}

#[test]
fn errors_propagate_from_inputs_to_outputs_through_the_queue() {
    let program = program();
    let copy = program.kernel("copy").expect("copy");
    let device = interp(1);
    let source = Stream::from_slice(&device, &[4], &[1.0f32; 4]).expect("source");
    let bad = Stream::<f32>::new(&device, &[4]).expect("bad");
    let _ = bad.assign(&Stream::<f32>::new(&device, &[5]).expect("five"));
    let middle = Stream::<f32>::new(&device, &[4]).expect("middle");
    let err = copy
        .launch(args![&bad, &middle])
        .expect_err("input in error");
    assert!(err.to_string().contains("Invalid Input stream"), "{err}");
    let last = Stream::<f32>::new(&device, &[4]).expect("last");
    expect_stream_error(copy.launch(args![&middle, &last]), "Invalid Input stream");
    assert_eq!(last.error(), BError::Kernel);
    assert!(last.error_log().contains("Invalid Input stream"));
    assert_eq!(last.error(), BError::NoError, "error() clears the code");
    copy.launch(args![&source, &last]).expect("a clean launch");
    assert!(last.finish().is_ok());
}

#[test]
fn scatter_and_gather_ops_from_rust() {
    let program = program();
    let sum = program.kernel("sum").expect("sum");
    let copy = program.kernel("copy").expect("copy");
    let device = interp(0);
    let s = Stream::from_slice(&device, &[4], &[1.0f32, 2.0, 3.0, 4.0]).expect("s");
    let index = Stream::from_slice(&device, &[4], &[0i32, 2, 0, 7]).expect("index");
    let array = Stream::from_slice(&device, &[3], &[10.0f32, 20.0, 30.0]).expect("array");
    brook::scatter_op(&s, &index, &array, brook::ScatterOp::Reduce(&sum)).expect("scatter");
    assert_eq!(array.to_vec().expect("array"), vec![14.0, 20.0, 32.0]);
    brook::scatter_op(&s, &index, &array, brook::ScatterOp::Assign).expect("assign");
    assert_eq!(array.to_vec().expect("array"), vec![3.0, 20.0, 2.0]);
    let t = Stream::<f32>::new(&device, &[4]).expect("t");
    brook::gather_op(&t, &index, &array, brook::GatherOp::Fetch).expect("gather");
    assert_eq!(t.to_vec().expect("t"), vec![3.0, 2.0, 3.0, 0.0]);
    let err = brook::gather_op(&t, &index, &array, brook::GatherOp::Kernel(&sum))
        .expect_err("a reduce kernel is not a fetch operator");
    assert!(
        err.to_string()
            .contains("one input stream and one output stream"),
        "{err}"
    );
    assert_eq!(
        t.error(),
        BError::InvalidParameter,
        "the error stays until error() reads it"
    );
    brook::gather_op(&t, &index, &array, brook::GatherOp::Kernel(&copy)).expect("fetch-and-copy");
}

#[test]
fn stream_ops_take_vector_indices_one_coordinate_per_axis() {
    let program = program();
    let sum = program.kernel("sum").expect("sum");
    for device in Device::all() {
        // A 2x3 array; (column, row) indices: (2, 1) twice, (0, 0), a row out of range.
        let array = Stream::from_slice(&device, &[2, 3], &[0.0f32, 1.0, 2.0, 10.0, 11.0, 12.0])
            .expect("array");
        let where_ = [[2.0f32, 1.0], [0.0, 0.0], [2.0, 1.0], [1.0, 2.0]];
        let index = Stream::from_slice(&device, &[4], &where_).expect("index");
        let s = Stream::from_slice(&device, &[4], &[1.0f32, 2.0, 3.0, 4.0]).expect("s");
        brook::scatter_op(&s, &index, &array, brook::ScatterOp::Reduce(&sum)).expect("scatter");
        assert_eq!(
            array.to_vec().expect("array"),
            vec![2.0, 1.0, 2.0, 10.0, 11.0, 16.0],
            "on {}",
            device.info()
        );
        let t = Stream::from_slice(&device, &[4], &[-1.0f32; 4]).expect("t");
        brook::gather_op(&t, &index, &array, brook::GatherOp::Inc).expect("gather");
        assert_eq!(
            t.to_vec().expect("t"),
            vec![16.0, 2.0, 17.0, -1.0],
            "on {}",
            device.info()
        );
        assert_eq!(
            array.to_vec().expect("array"),
            vec![3.0, 1.0, 2.0, 10.0, 11.0, 18.0],
            "on {}",
            device.info()
        );
        // A float2 index cannot address a 3-D array.
        let cube = Stream::<f32>::new(&device, &[2, 2, 2]).expect("cube");
        let err = brook::gather_op(&t, &index, &cube, brook::GatherOp::Fetch)
            .expect_err("2 components, 3 axes");
        assert!(
            err.to_string()
                .contains("an index of 2 components addresses at most 2 axes, but the array has 3"),
            "{err}"
        );
    }
}

#[test]
fn views_are_read_and_written_in_place_on_every_device() {
    for device in Device::all() {
        let data: Vec<f32> = (0..30).map(|i| i as f32).collect();
        let big = Stream::from_slice(&device, &[5, 6], &data).expect("big");
        // Rows 1-3, columns 2-4: three rows of three, six apart.
        let box3 = big.domain(&[1, 2], &[4, 5]).expect("view");
        assert_eq!(
            box3.to_vec().expect("view"),
            vec![8.0, 9.0, 10.0, 14.0, 15.0, 16.0, 20.0, 21.0, 22.0],
            "{}",
            device.info()
        );
        let fresh: Vec<f32> = (100..109).map(|i| i as f32).collect();
        box3.read(&fresh).expect("read into the view");
        let all = big.to_vec().expect("big");
        assert_eq!(
            &all[6..12],
            &[6.0, 7.0, 100.0, 101.0, 102.0, 11.0],
            "{}",
            device.info()
        );
        assert_eq!(&all[18..24], &[18.0, 19.0, 106.0, 107.0, 108.0, 23.0]);
        // A 3-D view whose rows are not equally spaced (a gap between planes).
        let cube_data: Vec<f32> = (0..48).map(|i| i as f32).collect();
        let cube = Stream::from_slice(&device, &[3, 4, 4], &cube_data).expect("cube");
        let part = cube.domain(&[1, 1, 0], &[3, 3, 2]).expect("part");
        assert_eq!(
            part.to_vec().expect("part"),
            vec![20.0, 21.0, 24.0, 25.0, 36.0, 37.0, 40.0, 41.0],
            "{}",
            device.info()
        );
    }
}

/// An empty `domain()` view (start equal to end on an axis): a launch over it, a copy into it,
/// a reduction and a scan of it do nothing and record no error, on every device; a host
/// reduction target keeps its value. An empty input beside a non-empty domain is still refused.
#[test]
fn an_empty_view_is_a_launch_over_nothing() {
    let program = Program::from_source(
        "empty.br",
        "kernel void inc(float a<>, out float b<>) { b = a + 1.0f; }\n\
         reduce void sum(float a<>, reduce float s<>) { s += a; }",
    )
    .expect("compiles");
    let (inc, sum) = (
        program.kernel("inc").unwrap(),
        program.kernel("sum").unwrap(),
    );
    for device in Device::all() {
        let at = device.info().to_string();
        let values: Vec<f32> = (0..16).map(|x| x as f32).collect();
        let s = Stream::from_slice(&device, &[4, 4], &values).expect("s");
        let t = Stream::from_slice(&device, &[4, 4], &values).expect("t");
        let empty = s.domain(&[1, 2], &[1, 4]).expect("an empty view");
        assert_eq!(empty.shape(), [0, 2], "{at}");
        let other = t.domain(&[3, 0], &[3, 2]).expect("another");
        inc.launch(args![&empty, &other]).expect(&at);
        empty.read(&[]).expect(&at);
        other.assign(&empty).expect(&at);
        assert_eq!(empty.to_vec().expect(&at), Vec::<f32>::new());
        let mut total = -1.0f32;
        sum.launch(args![&empty, host_var(&mut total)]).expect(&at);
        assert_eq!(total, -1.0, "{at}: the host target keeps its value");
        let no_rows = t.domain(&[0, 0], &[0, 4]).expect("no columns");
        sum.launch(args![&s, &no_rows]).expect(&at);
        sum.scan(&empty, &other).expect(&at);
        assert_eq!(t.to_vec().expect(&at), values, "{at}: nothing written");
        assert_eq!(s.error(), BError::NoError, "{at}");
        assert_eq!(t.error(), BError::NoError, "{at}");
        let full = Stream::<f32>::new(&device, &[2, 2]).expect("full");
        let refused = inc.launch(args![&empty, &full]);
        assert!(
            refused.is_err(),
            "{at}: an empty input of a non-empty domain"
        );
        let backwards = s.domain(&[2, 0], &[1, 4]);
        assert!(
            backwards.is_err(),
            "{at}: a start past its end stays an error"
        );
    }
}
