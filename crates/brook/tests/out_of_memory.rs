//! Running out of memory after a stream exists is an error of the operation, not an abort: a
//! child process limits its own address space (`setrlimit`) to a little above what it uses,
//! then reads a large stream (the staging copy cannot be had), writes it back (nor can the
//! host copy), and reduces a stream on the interpreter (whose reduction needs memory per tree
//! level, not per leaf: the old one took about 50 bytes a leaf). Linux only.

#[cfg(target_os = "linux")]
mod limited {
    use brook::{args, host_var, Device, Program, Stream};
    use std::process::Command;

    /// `struct rlimit` of Linux.
    #[repr(C)]
    struct Rlimit {
        current: u64,
        max: u64,
    }

    extern "C" {
        fn setrlimit(resource: i32, limit: *const Rlimit) -> i32;
    }

    const RLIMIT_AS: i32 = 9;

    /// This process's address space now, in bytes (`VmSize` of `/proc/self/status`).
    fn address_space() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
        let line = status
            .lines()
            .find(|l| l.starts_with("VmSize:"))
            .expect("VmSize");
        let kib: u64 = line
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse().ok())
            .expect("a number of kB");
        kib * 1024
    }

    /// Limits the address space to what is used now plus `headroom` bytes.
    fn limit_to_now_plus(headroom: u64) {
        let limit = address_space() + headroom;
        let rlimit = Rlimit {
            current: limit,
            max: limit,
        };
        // SAFETY: a valid struct; lowering one's own limit is always allowed.
        assert_eq!(unsafe { setrlimit(RLIMIT_AS, &rlimit) }, 0, "setrlimit");
    }

    const MIB: usize = 1 << 20;

    fn the_child() {
        let cpu = Device::from_spec("cpu").expect("cpu");
        let interp = Device::interp();
        let program = Program::from_source(
            "oom.br",
            "reduce void sum(float a<>, reduce float s<>) { s += a; }",
        )
        .expect("compiles");
        let big = 256 * MIB / 4;
        let host = vec![1.0f32; big];
        let stream = Stream::<f32>::new(&cpu, &[big]).expect("the stream itself fits");
        let leaves = 1 << 21;
        let ones = Stream::from_slice(&interp, &[leaves], &vec![1.0f32; leaves]).expect("ones");
        ones.finish().expect("read");
        limit_to_now_plus(96 * MIB as u64);

        let err = stream
            .read(&host)
            .expect_err("no room for the staging copy");
        println!("read: {err}");
        assert!(
            err.to_string().contains("Stream Read: out of memory"),
            "{err}"
        );
        assert!(err.to_string().contains(&(256 * MIB).to_string()), "{err}");
        let err = stream.to_vec().expect_err("no room for the host copy");
        println!("write: {err}");
        assert!(err.to_string().contains("out of memory"), "{err}");

        // The interpreter's reduction of two million leaves within 8 MiB more (the old
        // reduction held every leaf: about 100 MB, past what the queue thread's malloc arena
        // had reserved; it aborted here).
        drop(host);
        drop(stream);
        limit_to_now_plus(8 * MIB as u64);
        let mut total = 0.0f32;
        program
            .kernel("sum")
            .expect("sum")
            .launch(args![&ones, host_var(&mut total)])
            .expect("reduce");
        assert_eq!(total, leaves as f32);
        println!("reduced {total}");
    }

    #[test]
    fn out_of_memory_is_an_error_of_the_operation() {
        if std::env::var_os("BROOK_OOM_CHILD").is_some() {
            the_child();
            return;
        }
        let out = Command::new(std::env::current_exe().expect("this test"))
            .args([
                "--exact",
                "limited::out_of_memory_is_an_error_of_the_operation",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env("BROOK_OOM_CHILD", "1")
            .output()
            .expect("run the child");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "{stdout}\n{stderr}");
        assert!(stdout.contains("reduced 2097152"), "{stdout}");
        assert!(
            stderr.contains("brook: error: BR_ERROR_READ: Stream Read: out of memory"),
            "{stderr}"
        );
    }
}
