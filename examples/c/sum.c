/* Brook from C99 through include/brook/brook_c.h: compile kernels from source, create
 * streams, run a map and a reduction, read the results, and check errors. Build and run
 * (after `cargo build --release`):
 *
 *     cc -std=c99 -Iinclude examples/c/sum.c target/release/libbrook_capi.a \
 *        -lpthread -ldl -lm -o sum && ./sum
 */
#include <brook/brook_c.h>
#include <stdio.h>

static const char* SOURCE =
    "kernel void scale(float k, float a<>, out float b<>) { b = k * a; }\n"
    "reduce void sum(float a<>, reduce float s<>) { s += a; }\n";

static BrkArg stream_arg(const BrkStream* s) {
    BrkArg a = {0, s, NULL, NULL, NULL};
    return a;
}

static BrkArg value_arg(const char* type, void* data, uint32_t kind) {
    BrkArg a = {kind, NULL, type, data, NULL};
    return a;
}

int main(void) {
    char* message = NULL;
    BrkProgram* program = brk_program_new("sum.br", SOURCE, 0, &message);
    if (!program) {
        fprintf(stderr, "compile: %s\n", message);
        brk_string_free(message);
        return 1;
    }
    uint32_t dims[1] = {8};
    float in[8], out[8], k = 0.5f, total = 0.0f;
    for (int i = 0; i < 8; i++) in[i] = (float)(i + 1);
    BrkStream* a = brk_stream_new("float", 1, dims);
    BrkStream* b = brk_stream_new("float", 1, dims);
    brk_stream_read(a, in, "");

    BrkArg scale[3] = {value_arg("float", &k, 1), stream_arg(a), stream_arg(b)};
    int code = brk_launch(program, "scale", scale, 3, NULL, NULL);
    brk_stream_write(b, out, "");
    printf("scale: %d, b = %g %g ... %g\n", code, out[0], out[1], out[7]);

    BrkArg sum[2] = {stream_arg(b), value_arg("float", &total, 2)};
    code = brk_launch(program, "sum", sum, 2, NULL, NULL);
    printf("sum: %d, total = %g\n", code, total);

    /* Bad use is an error code and a message, never a crash. */
    code = brk_launch(program, "missing", sum, 2, NULL, NULL);
    printf("missing kernel: %d (%s)\n", code, brk_program_message(program));
    printf("stream error: %d\n", brk_stream_error(b));

    brk_stream_free(a);
    brk_stream_free(b);
    brk_program_free(program);
    return 0;
}
