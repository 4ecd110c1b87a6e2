//! Device groups (`Device::group`, `BRT_RUNTIME=interp:0+interp:1`): streams split into row
//! blocks among the members, launches run on every member over its block. Every result is
//! compared bit for bit with the single interpreter. Here the groups are two interpreters and
//! the CPU twice (the same device as two members: its blocks still go through the group's
//! copies); with GPUs, every GPU and the first GPU twice.

#[path = "common/values.rs"]
mod values;
use values::{bits, wobbly};

use brook::{args, host_var, Device, Program, ScanRequest, Stream};

const KERNELS: &str = "
kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }

kernel void mark(float a<>, float v, out float r<>)
{
    if (a > 0.5f) { return; }
    r = v;
}

kernel void smooth(float g[][], float w, float h, out float r<>)
{
    float2 p = indexof(r).xy;
    float left = g[float2(max(p.x - 1.0f, 0.0f), p.y)];
    float right = g[float2(min(p.x + 1.0f, w - 1.0f), p.y)];
    float up = g[float2(p.x, max(p.y - 1.0f, 0.0f))];
    float down = g[float2(p.x, min(p.y + 1.0f, h - 1.0f))];
    r = (left + right + up + down) * 0.25f + g[p] * 0.1f;
}

kernel void stretch(float small<>, out float r<>) { r = small * 3.0f + indexof(r).y; }

kernel void place(float v<>, int to<>, out float t[]) { t[to] = v + 0.5f; }

kernel void behind(float g[], out float r<>)
{
    uint i = (uint)instance().x;
    r = g[i - 1u] * 2.0f;
}

kernel void first_row(float g[][], out float r<>)
{
    float y;
    float x = indexof(r).x;
    float top = g[y][x];
    y = indexof(r).y;
    r = top + g[y][x];
}

kernel void either_neighbour(float g[][], float t<>, out float r<>)
{
    float2 p = indexof(r).xy;
    float y;
    if (t > 0.5f) { y = max(p.y - 3.0f, 0.0f); } else { y = min(p.y + 3.0f, 63.0f); }
    r = g[y][p.x];
}

kernel void four_rows_up(float g[][], float n, out float r<>)
{
    float2 p = indexof(r).xy;
    float y = p.y;
    float sum = 0.0f;
    for (float i = 0.0f; i < n; i += 1.0f) {
        sum += g[y][p.x];
        y = max(p.y - 4.0f, 0.0f);
    }
    r = sum;
}

reduce void sum(float a<>, reduce float s<>) { s += a; }

reduce void product(float4 a<>, reduce float4 m<>)
{
    float4 l = m;
    m = float4(l.x * a.x + l.y * a.z, l.x * a.y + l.y * a.w,
               l.z * a.x + l.w * a.z, l.z * a.y + l.w * a.w);
}
";

fn groups() -> Vec<Device> {
    let mut specs = vec!["interp:0+interp:1", "cpu:0+cpu:0"];
    match Device::of_type("cuda").unwrap_or_default().len() {
        0 => println!("device_group: no CUDA device: GPU groups skipped"),
        1 => specs.push("cuda:0+cuda:0"),
        _ => specs.extend(["cuda:all", "cuda:0+cuda:0"]),
    }
    let mut groups: Vec<Device> = specs
        .into_iter()
        .map(|s| Device::from_spec(s).expect(s))
        .collect();
    // Three ranks of an MPI-style job whose ranks are threads: the members of ranks 1 and 2
    // are served through the job's protocol.
    let job = brook::raw::local_job(3, "interp").expect("a job of threads");
    groups.push(Device::from_raw(job));
    groups
}

/// Runs `f` on the interpreter and on every group; each must give the interpreter's result.
fn same_on_groups<T: PartialEq + std::fmt::Debug>(f: impl Fn(&Device) -> T) {
    let reference = f(&Device::interp());
    for group in groups() {
        assert_eq!(group.type_name(), "group");
        assert_eq!(f(&group), reference, "{} differs", group.info());
    }
}

fn program() -> Program {
    Program::from_source("group.br", KERNELS).expect("compiles")
}

#[test]
fn chained_maps_gather_what_other_members_wrote() {
    let program = program();
    let (h, w) = (37, 29);
    let start = wobbly(h * w, 1);
    same_on_groups(|d| {
        let smooth = program.kernel("smooth").expect("smooth");
        let a = Stream::from_slice(d, &[h, w], &start).expect("a");
        let b = Stream::<f32>::new(d, &[h, w]).expect("b");
        // Each step gathers the rows every member wrote in the step before.
        for _ in 0..3 {
            smooth
                .launch(args![&a, w as f32, h as f32, &b])
                .expect("smooth");
            smooth
                .launch(args![&b, w as f32, h as f32, &a])
                .expect("smooth back");
        }
        let saxpy = program.kernel("saxpy").expect("saxpy");
        let r = Stream::<f32>::new(d, &[h, w]).expect("r");
        saxpy.launch(args![0.5f32, &a, &b, &r]).expect("saxpy");
        bits(&r.to_vec().expect("r"))
    });
}

/// Instances that return before storing keep the output's contents: a member whose rows of
/// a launch were written by another member in the launch before (the region moved the
/// split) fetches them first rather than keep its own stale copy there.
#[test]
fn outputs_left_by_early_returns_keep_what_another_member_wrote() {
    let program = program();
    let (h, w) = (40, 8);
    let zeros = vec![0.0f32; h * w];
    let some = wobbly(h * w, 5);
    same_on_groups(|d| {
        let mark = program.kernel("mark").expect("mark");
        let r = Stream::from_slice(d, &[h, w], &vec![-1.0f32; h * w]).expect("r");
        let a = Stream::from_slice(d, &[h, w], &zeros).expect("a");
        let b = Stream::from_slice(d, &[h, w], &some).expect("b");
        mark.launch(args![&a, 1.0f32, &r]).expect("everywhere");
        mark.with_domain(&[h / 4, 0], &[h - h / 4, w])
            .launch(args![&b, 2.0f32, &r])
            .expect("where b is small");
        bits(&r.to_vec().expect("r"))
    });
}

/// A write large enough to go to the members in shares (each member gets only its block of
/// bytes, `group::upload_shares`): reading it back gives it whole, and a gather across the
/// shares' edges fetches what the member lacks.
#[test]
fn a_large_write_goes_in_shares_and_gathers_fetch_across_them() {
    let program = program();
    let (h, w) = (300, 200);
    let start = wobbly(h * w, 3);
    same_on_groups(|d| {
        let smooth = program.kernel("smooth").expect("smooth");
        let a = Stream::from_slice(d, &[h, w], &start).expect("a");
        let back = bits(&a.to_vec().expect("a back"));
        let b = Stream::<f32>::new(d, &[h, w]).expect("b");
        smooth
            .launch(args![&a, w as f32, h as f32, &b])
            .expect("smooth");
        (back, bits(&b.to_vec().expect("b")))
    });
}

/// Instance 0's `0u - 1u` wraps and the gather clamps it to the last element, which the other
/// member wrote: the first member must fetch it too.
#[test]
fn a_gather_index_that_wraps_reaches_the_far_end() {
    let program = program();
    let n = 64;
    same_on_groups(|d| {
        let saxpy = program.kernel("saxpy").expect("saxpy");
        let behind = program.kernel("behind").expect("behind");
        let x = Stream::from_slice(d, &[n], &wobbly(n, 12)).expect("x");
        let a = Stream::<f32>::new(d, &[n]).expect("a");
        saxpy.launch(args![3.0f32, &x, &x, &a]).expect("saxpy");
        let r = Stream::<f32>::new(d, &[n]).expect("r");
        behind.launch(args![&a, &r]).expect("behind");
        bits(&r.to_vec().expect("r"))
    });
}

/// `y` is read before its first store, so it is 0 there (every local starts at 0): every
/// member must fetch row 0, which the first member wrote.
#[test]
fn a_local_read_before_its_store_reaches_row_zero() {
    let program = program();
    let (h, w) = (64, 8);
    same_on_groups(|d| {
        let saxpy = program.kernel("saxpy").expect("saxpy");
        let first_row = program.kernel("first_row").expect("first_row");
        let x = Stream::from_slice(d, &[h, w], &wobbly(h * w, 5)).expect("x");
        let a = Stream::<f32>::new(d, &[h, w]).expect("a");
        saxpy.launch(args![3.0f32, &x, &x, &a]).expect("saxpy");
        let r = Stream::<f32>::new(d, &[h, w]).expect("r");
        first_row.launch(args![&a, &r]).expect("first_row");
        bits(&r.to_vec().expect("r"))
    });
}

/// Row indices stored on every path before their read (the declaration's 0 is never read),
/// and a store the loop's next trip reads: the members fetch the neighbouring rows those give
/// (`brook_ir::reaching`), and the results are the single device's.
#[test]
fn locals_stored_on_every_path_fetch_only_the_rows_they_reach() {
    let program = program();
    let (h, w) = (64, 8);
    same_on_groups(|d| {
        let either = program
            .kernel("either_neighbour")
            .expect("either_neighbour");
        let up = program.kernel("four_rows_up").expect("four_rows_up");
        let saxpy = program.kernel("saxpy").expect("saxpy");
        // Each member writes its own rows of `g`: the others' rows reach it only by the halo.
        let x = Stream::from_slice(d, &[h, w], &wobbly(h * w, 7)).expect("x");
        let g = Stream::<f32>::new(d, &[h, w]).expect("g");
        saxpy.launch(args![3.0f32, &x, &x, &g]).expect("saxpy");
        let t = Stream::from_slice(d, &[h, w], &wobbly(h * w, 8)).expect("t");
        let r = Stream::<f32>::new(d, &[h, w]).expect("r");
        either.launch(args![&g, &t, &r]).expect("either_neighbour");
        let mut out = vec![bits(&r.to_vec().expect("r"))];
        // A second array, so that no earlier halo brought its rows.
        let g2 = Stream::<f32>::new(d, &[h, w]).expect("g2");
        saxpy.launch(args![5.0f32, &x, &t, &g2]).expect("saxpy");
        up.launch(args![&g2, 3.0f32, &r]).expect("four_rows_up");
        out.push(bits(&r.to_vec().expect("r")));
        out
    });
}

#[test]
fn implicit_resize_regions_and_views_keep_global_positions() {
    let program = program();
    let small = wobbly(5 * 3, 2);
    same_on_groups(|d| {
        let stretch = program.kernel("stretch").expect("stretch");
        let s = Stream::from_slice(d, &[5, 3], &small).expect("small");
        let big = Stream::<f32>::new(d, &[23, 7]).expect("big");
        stretch.launch(args![&s, &big]).expect("resize");
        let mut out = vec![bits(&big.to_vec().expect("big"))];
        // A view written by a split launch: the elements around it keep their values.
        let window = big.domain(&[3, 2], &[20, 6]).expect("window");
        let patch = Stream::from_slice(d, &[2, 2], &small[..4]).expect("patch");
        stretch.launch(args![&patch, &window]).expect("into a view");
        out.push(bits(&big.to_vec().expect("big")));
        // Host reads into a view, assign between streams of the group and out of it.
        window.read(&wobbly(17 * 4, 3)).expect("read into the view");
        let copy = Stream::<f32>::new(d, &[23, 7]).expect("copy");
        copy.assign(&big).expect("assign");
        let elsewhere = Stream::<f32>::new(&Device::interp(), &[17, 4]).expect("elsewhere");
        elsewhere.assign(&window).expect("assign out of the group");
        out.push(bits(&copy.to_vec().expect("copy")));
        out.push(bits(&elsewhere.to_vec().expect("elsewhere")));
        out
    });
}

#[test]
fn reductions_and_scans_give_the_single_device_bits() {
    let program = program();
    let values = wobbly(10_001, 5);
    let matrices: Vec<f32> = wobbly(4 * 301, 9).iter().map(|v| v.signum()).collect();
    same_on_groups(|d| {
        let sum = program.kernel("sum").expect("sum");
        let mut out = Vec::new();
        // One target: aligned power-of-two pieces on the members, combined by one.
        let all = Stream::from_slice(d, &[10_001], &values).expect("all");
        let mut total = 0.0f32;
        sum.launch(args![&all, host_var(&mut total)]).expect("sum");
        out.push(vec![total.to_bits()]);
        let grid = Stream::from_slice(d, &[73, 137], &values[..73 * 137]).expect("grid");
        let one = Stream::<f32>::new(d, &[1]).expect("one");
        sum.launch(args![&grid, &one]).expect("grid sum");
        out.push(bits(&one.to_vec().expect("one")));
        // Rows split among the members, tiles, columns, and a view.
        let rows = Stream::<f32>::new(d, &[73]).expect("rows");
        sum.launch(args![&grid, &rows]).expect("rows");
        out.push(bits(&rows.to_vec().expect("rows")));
        let tiles = Stream::<f32>::new(d, &[73, 1]).expect("tiles");
        sum.launch(args![&grid, &tiles]).expect("tiles");
        out.push(bits(&tiles.to_vec().expect("tiles")));
        let columns = Stream::<f32>::new(d, &[1, 137]).expect("columns");
        sum.launch(args![&grid, &columns]).expect("columns");
        out.push(bits(&columns.to_vec().expect("columns")));
        let view = grid.domain(&[1, 3], &[70, 100]).expect("view");
        let mut part = 0.0f32;
        sum.launch(args![&view, host_var(&mut part)])
            .expect("view sum");
        out.push(vec![part.to_bits()]);
        // A non-commutative operator keeps operand order across the members' pieces.
        let product = program.kernel("product").expect("product");
        let m = Stream::<[f32; 4]>::new(d, &[301]).expect("m");
        let quads: Vec<[f32; 4]> = matrices
            .chunks(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect();
        m.read(&quads).expect("read");
        let p = Stream::<[f32; 4]>::new(d, &[1]).expect("p");
        product.launch(args![&m, &p]).expect("product");
        out.push(bits(&p.to_vec().expect("p")[0]));
        // Scans of rows (split) and of the whole stream (on one member).
        let prefixes = Stream::<f32>::new(d, &[73, 137]).expect("prefixes");
        sum.scan(&grid, &prefixes).expect("row scan");
        out.push(bits(&prefixes.to_vec().expect("prefixes")));
        sum.scan_with(ScanRequest::inclusive().whole_stream(), &grid, &prefixes)
            .expect("whole scan");
        out.push(bits(&prefixes.to_vec().expect("prefixes")));
        out
    });
}

#[test]
fn scatter_lands_where_the_single_device_puts_it() {
    let program = program();
    let n = 1000;
    let to: Vec<i32> = (0..n as i32).map(|i| (i * 7 + 3) % 1200 - 100).collect();
    same_on_groups(|d| {
        let place = program.kernel("place").expect("place");
        let v = Stream::from_slice(d, &[n], &wobbly(n, 6)).expect("v");
        let at = Stream::from_slice(d, &[n], &to).expect("to");
        let start = Stream::from_slice(d, &[1100], &wobbly(1100, 7)).expect("start");
        let t = Stream::<f32>::new(d, &[1100]).expect("t");
        // The target was last written by a split launch: its blocks are on two members.
        let saxpy = program.kernel("saxpy").expect("saxpy");
        saxpy
            .launch(args![2.0f32, &start, &start, &t])
            .expect("saxpy");
        place.launch(args![&v, &at, &t]).expect("scatter");
        bits(&t.to_vec().expect("t"))
    });
}

#[test]
fn a_stream_of_a_member_is_not_a_stream_of_the_group() {
    let program = program();
    let group = Device::from_spec("interp:0+interp:1").expect("group");
    let member = &group.members()[0];
    let x = Stream::from_slice(&group, &[8], &[1.0f32; 8]).expect("x");
    let y = Stream::from_slice(member, &[8], &[1.0f32; 8]).expect("y");
    let r = Stream::<f32>::new(&group, &[8]).expect("r");
    let e = program
        .kernel("saxpy")
        .expect("saxpy")
        .launch(args![1.0f32, &x, &y, &r])
        .expect_err("two devices");
    assert!(e.to_string().contains("device"), "{e}");
    assert_ne!(
        r.error(),
        brook::BError::NoError,
        "the output carries the error"
    );
}

#[test]
fn device_specs_name_groups_and_refuse_what_is_not_there() {
    let group = Device::from_spec("interp:0 + interp:1").expect("group");
    assert_eq!(group.info().to_string(), "interp:0+interp:1");
    assert_eq!(group.members().len(), 2);
    assert_eq!(
        Device::from_spec("interp:all")
            .expect("all")
            .members()
            .len(),
        2
    );
    assert_eq!(
        Device::from_spec("interp:1").expect("one").type_name(),
        "interp"
    );
    let e = Device::from_spec("interp:7").expect_err("no such device");
    assert!(e.to_string().contains("interp:7"), "{e}");
    let e = Device::from_spec("interp:x").expect_err("not an index");
    assert!(e.to_string().contains("NAME:INDEX"), "{e}");
    let e = Device::group(std::slice::from_ref(&group)).expect_err("nested");
    assert!(e.to_string().contains("member of another"), "{e}");
    let e = Device::group(&[]).expect_err("empty");
    assert!(e.to_string().contains("at least one"), "{e}");
}

/// A large sum whose second piece is ragged (2^23 leaves and 77): the single device's bits. On
/// the CPU twice against the CPU alone (the interpreter would take too long; the CPU's sums
/// are the interpreter's bits, `large_launches.rs`), and on the GPUs likewise.
#[test]
fn a_large_sum_with_a_ragged_piece_gives_the_single_device_bits() {
    let program = program();
    let n = (1 << 23) + 77;
    let values = wobbly(n, 11);
    let mut pairs = vec![("cpu:0", "cpu:0+cpu:0")];
    match Device::of_type("cuda").unwrap_or_default().len() {
        0 => {}
        1 => pairs.push(("cuda:0", "cuda:0+cuda:0")),
        _ => pairs.extend([("cuda:0", "cuda:all"), ("cuda:0", "cuda:0+cuda:0")]),
    }
    for (alone, group) in pairs {
        let total = |spec: &str| {
            let device = Device::from_spec(spec).expect(spec);
            let sum = program.kernel("sum").expect("sum");
            let all = Stream::from_slice(&device, &[n], &values).expect("all");
            let mut total = 0.0f32;
            sum.launch(args![&all, host_var(&mut total)]).expect("sum");
            total.to_bits()
        };
        assert_eq!(total(group), total(alone), "{group} against {alone}");
    }
}

/// A device whose launches fail (an interpreter otherwise), to see a member's failure.
/// A launch that fails on another rank is reported when the output is read, naming the rank
/// and its device; the next launch that works is not blamed for it.
#[test]
fn a_failure_on_another_rank_is_reported_naming_the_rank() {
    let open: std::sync::Arc<brook_runtime::remote::Opener> = std::sync::Arc::new(|_: &str| {
        let inner = Device::find("interp", 1).expect("interp:1").raw().clone();
        let mut info = inner.info().clone();
        info.description = "failing:1 (a test device)".into();
        let failing: std::sync::Arc<dyn brook_runtime::Device> =
            std::sync::Arc::new(Failing { inner, info });
        Ok(vec![failing])
    });
    let patience = std::time::Duration::from_secs(60);
    let group = brook::raw::local_job_of(2, "interp", open, patience).expect("a job of threads");
    let group = Device::from_raw(group);
    failing_launch_names(&group, "rank1:");
    let s = Stream::from_slice(&group, &[8], &[3.0f32; 8]).expect("s");
    assert_eq!(s.to_vec().expect("a later read"), vec![3.0f32; 8]);
}

/// A rank that works longer than rank 0's patience is not lost: it says it is alive while it
/// works. A rank that is gone (its thread ended before it answered) is an error naming it,
/// after the patience, never a hang.
#[test]
fn a_slow_rank_is_waited_for_and_a_gone_rank_is_named() {
    let slow: std::sync::Arc<brook_runtime::remote::Opener> = std::sync::Arc::new(|_: &str| {
        let inner = Device::find("interp", 1).expect("interp:1").raw().clone();
        let slow: std::sync::Arc<dyn brook_runtime::Device> = std::sync::Arc::new(Slow(inner));
        Ok(vec![slow])
    });
    let patience = std::time::Duration::from_millis(400);
    let group = brook::raw::local_job_of(2, "interp", slow, patience).expect("a job");
    let group = Device::from_raw(group);
    let program = program();
    let x = Stream::from_slice(&group, &[8], &[1.0f32; 8]).expect("x");
    let r = Stream::<f32>::new(&group, &[8]).expect("r");
    let saxpy = program.kernel("saxpy").expect("saxpy");
    saxpy.launch(args![2.0f32, &x, &x, &r]).expect("queued");
    assert_eq!(r.to_vec().expect("a slow rank's result"), vec![3.0f32; 8]);

    // A rank whose process ends before it answers (here: its serving thread).
    let vanishing: std::sync::Arc<brook_runtime::remote::Opener> =
        std::sync::Arc::new(|_: &str| std::panic::resume_unwind(Box::new("rank 1 ended")));
    let e = brook::raw::local_job_of(2, "interp", vanishing, patience)
        .err()
        .expect("rank 1 never answers");
    let text = e.to_string();
    assert!(
        text.contains("rank 1") && text.contains("BRT_MPI_TIMEOUT"),
        "{text}"
    );
}

/// An interpreter whose launches take 1.2 s.
struct Slow(std::sync::Arc<dyn brook_runtime::Device>);

impl brook_runtime::Device for Slow {
    fn info(&self) -> &brook_runtime::DeviceInfo {
        self.0.info()
    }
    fn queue(&self) -> &brook_runtime::queue::Queue {
        self.0.queue()
    }
    fn allocate(
        &self,
        bytes: usize,
    ) -> Result<std::sync::Arc<dyn brook_runtime::Buffer>, brook_runtime::RuntimeError> {
        self.0.allocate(bytes)
    }
    fn upload(
        &self,
        to: brook_runtime::buffer::Span<'_>,
        data: &[u8],
    ) -> Result<(), brook_runtime::RuntimeError> {
        self.0.upload(to, data)
    }
    fn download(
        &self,
        from: brook_runtime::buffer::Span<'_>,
        out: &mut [u8],
    ) -> Result<(), brook_runtime::RuntimeError> {
        self.0.download(from, out)
    }
    fn copy(
        &self,
        from: brook_runtime::buffer::Span<'_>,
        to: brook_runtime::buffer::Span<'_>,
    ) -> Result<(), brook_runtime::RuntimeError> {
        self.0.copy(from, to)
    }
    fn launch(&self, plan: &brook_runtime::LaunchPlan) -> Result<(), brook_runtime::LaunchProblem> {
        std::thread::sleep(std::time::Duration::from_millis(1200));
        self.0.launch(plan)
    }
    fn synchronize(&self) -> Result<(), brook_runtime::RuntimeError> {
        self.0.synchronize()
    }
}

struct Failing {
    inner: std::sync::Arc<dyn brook_runtime::Device>,
    info: brook_runtime::DeviceInfo,
}

impl brook_runtime::Device for Failing {
    fn info(&self) -> &brook_runtime::DeviceInfo {
        &self.info
    }
    fn queue(&self) -> &brook_runtime::queue::Queue {
        self.inner.queue()
    }
    fn allocate(
        &self,
        bytes: usize,
    ) -> Result<std::sync::Arc<dyn brook_runtime::Buffer>, brook_runtime::RuntimeError> {
        self.inner.allocate(bytes)
    }
    fn upload(
        &self,
        to: brook_runtime::buffer::Span<'_>,
        data: &[u8],
    ) -> Result<(), brook_runtime::RuntimeError> {
        self.inner.upload(to, data)
    }
    fn download(
        &self,
        from: brook_runtime::buffer::Span<'_>,
        out: &mut [u8],
    ) -> Result<(), brook_runtime::RuntimeError> {
        self.inner.download(from, out)
    }
    fn copy(
        &self,
        from: brook_runtime::buffer::Span<'_>,
        to: brook_runtime::buffer::Span<'_>,
    ) -> Result<(), brook_runtime::RuntimeError> {
        self.inner.copy(from, to)
    }
    fn launch(&self, _: &brook_runtime::LaunchPlan) -> Result<(), brook_runtime::LaunchProblem> {
        Err(brook_runtime::LaunchProblem::Execution(
            "the card fell off the bus".into(),
        ))
    }
    fn synchronize(&self) -> Result<(), brook_runtime::RuntimeError> {
        self.inner.synchronize()
    }
}

#[test]
fn a_failure_on_one_member_is_reported_on_the_outputs_naming_it() {
    let inner = Device::find("interp", 1).expect("interp:1").raw().clone();
    let mut info = inner.info().clone();
    info.description = "failing:1 (a test device)".into();
    let failing = Device::from_raw(std::sync::Arc::new(Failing { inner, info }));
    let group = Device::group(&[Device::interp(), failing]).expect("group");
    failing_launch_names(&group, "failing:1");
}

/// A saxpy on `group`, whose second member fails every launch: reading the output is an error
/// naming the member (`member`) and the failure, and the output stream holds an error.
fn failing_launch_names(group: &Device, member: &str) {
    let program = program();
    let x = Stream::from_slice(group, &[8], &[1.0f32; 8]).expect("x");
    let r = Stream::<f32>::new(group, &[8]).expect("r");
    program
        .kernel("saxpy")
        .expect("saxpy")
        .launch(args![2.0f32, &x, &x, &r])
        .expect("queued");
    let e = r.to_vec().expect_err("the second member failed");
    let text = e.to_string();
    assert!(
        text.contains("fell off the bus") && text.contains(member),
        "{text}"
    );
    assert_ne!(r.error(), brook::BError::NoError);
}
