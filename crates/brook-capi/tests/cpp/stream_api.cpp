// The Brook+ C++ API through include/brook/brook.hpp: declarations, read/write (also async),
// kernel launches as brcc's generated code makes them, reductions into a host variable and a
// stream, views, assign, and the error state of bad use. Prints what it sees.
#include <brook/brook.hpp>
#include <cstdio>
#include <cstring>

static const char* SOURCE =
    "kernel void add(float a<>, float b<>, out float c<>) { c = a + b; }\n"
    "kernel void scale(float k, float4 a<>, out float4 b<>) { b = float4(k, k, k, k) * a; }\n"
    "reduce void sum(float a<>, reduce float s<>) { s += a; }\n";

static int launch(BrkProgram* p, const char* kernel, BrkArg* args, size_t n) {
    int code = brk_launch(p, kernel, args, n, NULL, NULL);
    if (code != 0) std::printf("launch %s: error %d: %s\n", kernel, code, brk_program_message(p));
    return code;
}

static BrkArg stream(const BrkStream* s) { BrkArg a = {0, s, NULL, NULL}; return a; }

// A kernel object as brcc generates one, for a kernel its program may lack.
struct GeneratedKernel : brook::KernelInterface {
    BrkProgram* program;
    const char* name;
    void operator()(brook::Stream<float>& in, brook::Stream<float>& out) const {
        BrkArg args[3] = {stream(in.handle()), stream(in.handle()), stream(out.handle())};
        launch_(program, name, args, 3, 4ull);
    }
};
static BrkArg value(const char* type, void* data) { BrkArg a = {1, NULL, type, data}; return a; }
static BrkArg host(const char* type, void* data) { BrkArg a = {2, NULL, type, data}; return a; }

int main() {
    char* message = NULL;
    BrkProgram* program = brk_program_new("api.br", SOURCE, 0, &message);
    if (!program) { std::printf("compile: %s\n", message); return 1; }

    // 4 columns, 3 rows (x-first).
    unsigned int dims[2] = {4, 3};
    brook::Stream<float> a(2, dims), b(2, dims), c(2, dims);
    float left[12], right[12], out[12];
    for (int i = 0; i < 12; i++) { left[i] = (float)i; right[i] = 100.0f * (float)(i / 4); }
    a.read(left);
    b.read(right, "async nocopy");
    BrkArg add_args[3] = {stream(a.handle()), stream(b.handle()), stream(c.handle())};
    launch(program, "add", add_args, 3);
    c.write(out);
    for (int row = 0; row < 3; row++) {
        for (int col = 0; col < 4; col++) std::printf("%6.1f", out[row * 4 + col]);
        std::printf("\n");
    }
    std::printf("rank %u, dims %u x %u, error %d\n", c.rank(), c.dim(0), c.dim(1), (int)c.error());

    // A value argument and vector elements.
    unsigned int n4 = 2;
    brook::Stream<float4> v(1, &n4), w(1, &n4);
    float4 data[2] = {float4(1, 2, 3, 4), float4(0.5f)};
    v.read(data);
    float k = 2.0f;
    BrkArg scale_args[3] = {value("float", &k), stream(v.handle()), stream(w.handle())};
    launch(program, "scale", scale_args, 3);
    float4 scaled[2];
    w.write(scaled, "async");
    w.finish();
    std::printf("scaled %.1f %.1f %.1f %.1f | %.1f\n", scaled[0].x, scaled[0].y, scaled[0].z,
                scaled[0].w, scaled[1].w);

    // Reductions: into a host float, and row sums into a stream of 3.
    float total = 0.0f;
    BrkArg sum_host[2] = {stream(c.handle()), host("float", &total)};
    launch(program, "sum", sum_host, 2);
    unsigned int three = 3;
    brook::Stream<float> rows(1, &three);
    BrkArg sum_rows[2] = {stream(c.handle()), stream(rows.handle())};
    launch(program, "sum", sum_rows, 2);
    float row_sums[3];
    rows.write(row_sums);
    std::printf("total %.1f, rows %.1f %.1f %.1f\n", total, row_sums[0], row_sums[1], row_sums[2]);

    // A view (columns 1-2 of rows 1-2) and assign.
    unsigned int start[2] = {1, 1}, end[2] = {3, 3};
    brook::Stream<float> view = c.domain(start, end);
    float corner[4];
    view.write(corner);
    std::printf("view %.1f %.1f %.1f %.1f\n", corner[0], corner[1], corner[2], corner[3]);
    brook::Stream<float> copy(2, dims);
    copy.assign(c);
    copy.write(out);
    std::printf("copy %.1f %.1f\n", out[0], out[11]);

    // "nocopy" (memory pinning, seed 001 section 1.14): 256-byte-aligned memory is read and
    // written in place when the transfer runs; the caller waits with isSync() / finish().
    {
        alignas(256) static float pinned_in[12];
        alignas(256) static float pinned_out[12];
        for (int i = 0; i < 12; i++) pinned_in[i] = 0.5f * (float)i;
        brook::Stream<float> p(2, dims), q(2, dims);
        p.read(pinned_in, "nocopy");
        while (!p.isSync()) {
        }
        BrkArg args[3] = {stream(p.handle()), stream(p.handle()), stream(q.handle())};
        launch(program, "add", args, 3);
        q.write(pinned_out, "async nocopy");
        q.finish();
        float unaligned[13];
        q.write(unaligned + 1, "nocopy");
        std::printf("nocopy %.1f %.1f %.1f, unaligned %.1f\n", pinned_out[0], pinned_out[1],
                    pinned_out[11], unaligned[12]);
    }

    // A stream released while a launch that reads it is queued: the launch still completes.
    {
        brook::Stream<float> temporary(2, dims);
        temporary.read(left);
        BrkArg args[3] = {stream(temporary.handle()), stream(b.handle()), stream(c.handle())};
        launch(program, "add", args, 3);
    }
    c.write(out);
    std::printf("after releasing an input: %.1f %.1f\n", out[0], out[11]);

    // Bad use: error codes and logs, never a crash.
    a.read(left, "sideways");
    std::printf("bad flag: %d\n", (int)a.error());
    a.read(NULL);
    int code = (int)a.error();
    std::printf("null pointer: %d, log mentions it: %d\n", code,
                std::strstr(a.errorLog(), "null") != NULL);
    unsigned int bad_start[2] = {3, 0}, bad_end[2] = {1, 3};
    brook::Stream<float> bad_view = c.domain(bad_start, bad_end);
    std::printf("bad domain: %d\n", (int)bad_view.error());
    std::printf("bad domain, on the stream it views: %d\n", (int)c.error());
    unsigned int odd[2] = {5, 3};
    brook::Stream<float> other(2, odd);
    other.assign(c);
    std::printf("assign of another shape: %d\n", (int)other.error());
    BrkStream* nothing = brk_stream_new("float5", 1, &n4);
    std::printf("unknown type: %d\n", brk_stream_error(nothing));
    brk_stream_free(nothing);
    c.setProperty("D3D10Resource", NULL);
    std::printf("setProperty: %d\n", (int)c.error());
    BrkArg too_few[1] = {stream(a.handle())};
    std::printf("wrong argument count: %d\n", brk_launch(program, "add", too_few, 1, NULL, NULL));
    std::printf("unknown kernel: %d\n", brk_launch(program, "nope", too_few, 1, NULL, NULL));
    std::printf("no program: %d\n", brk_launch(NULL, "add", too_few, 1, NULL, NULL));
    std::printf("null stream handle: %d %d\n", brk_stream_error(NULL), brk_stream_is_sync(NULL));
    BrkArg null_stream[3] = {stream(NULL), stream(b.handle()), stream(c.handle())};
    std::printf("a null stream argument: %d\n", brk_launch(program, "add", null_stream, 3, NULL, NULL));


    // Refused launches through the C++ API mark their outputs (nothing silently stale).
    GeneratedKernel missing = {};
    missing.program = program;
    missing.name = "vanished";
    brook::Stream<float> fresh(2, dims);
    fresh.read(left);
    missing(a, fresh);
    std::printf("a kernel its program lacks: %d\n", (int)fresh.error());
    GeneratedKernel add = {};
    add.program = program;
    add.name = "add";
    unsigned int huge[2] = {4000000000u, 4000000000u};
    brook::Stream<float> never(2, huge);
    std::printf("an output never created: %d\n", (int)never.error());
    std::printf("reported once: %d\n", (int)never.error());
    add(a, never);
    std::printf("a launch into it reports it again: %d\n", (int)never.error());
    brk_stream_assign(c.handle(), NULL);
    std::printf("assign from a null handle: %d\n", (int)c.error());

    brk_program_free(program);
    return 0;
}
