//! `BRT_LOG_FILE`: stream errors and warnings are also appended to the named file (its own
//! process, since the variable is read once).

use brook::{args, Device, Program, Stream};

#[test]
fn errors_and_warnings_reach_the_log_file() {
    let path = std::env::temp_dir().join(format!("brook-log-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&path);
    std::env::set_var("BRT_LOG_FILE", &path);
    let program = Program::from_source(
        "log.br",
        "kernel void copy(float a<>, out float b<>) { b = a; }",
    )
    .expect("compiles");
    let device = Device::interp();
    let a = Stream::<f32>::new(&device, &[4]).expect("a");
    let b = Stream::<f32>::new(&device, &[5]).expect("b");
    let c = Stream::<f32>::new(&device, &[4]).expect("c");
    let _ = program.kernel("copy").expect("copy").launch(args![&a, &c]);
    let _ = b.assign(&a);
    let log = std::fs::read_to_string(&path).expect("the log file exists");
    let _ = std::fs::remove_file(&path);
    assert!(log.contains("Uninitialized Input streams"), "{log}");
    assert!(
        log.contains("Stream Assign: Input stream rank and dimension doesn't match"),
        "{log}"
    );
}
