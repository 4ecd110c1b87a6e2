// A device group from the C++ API: brook::makeDeviceGroup of two devices (the runtime's first
// two, or the first twice where there is one), streams and launches on it after useDevices,
// a stencil step that gathers rows the other member wrote, a sum, and an invalid group.
// Prints what it sees (the same on every BRT_RUNTIME: groups give one device's results).
#include <brook/brook.hpp>
#include <cstdio>

static const char* SOURCE =
    "kernel void add(float a<>, float b<>, out float c<>) { c = a + b; }\n"
    "kernel void blur(float g[], float n, out float r<>) {\n"
    "    float i = indexof(r).x;\n"
    "    r = g[max(i - 1.0f, 0.0f)] + g[i] + g[min(i + 1.0f, n - 1.0f)];\n"
    "}\n"
    "reduce void sum(float a<>, reduce float s<>) { s += a; }\n";

static BrkArg stream(const BrkStream* s) { BrkArg a = {0, s, NULL, NULL, NULL}; return a; }
static BrkArg value(const char* type, void* data) { BrkArg a = {1, NULL, type, data, NULL}; return a; }
static BrkArg host(const char* type, void* data) { BrkArg a = {2, NULL, type, data, NULL}; return a; }

static void launch(BrkProgram* p, const char* kernel, BrkArg* args, size_t n) {
    int code = brk_launch(p, kernel, args, n, NULL, NULL);
    if (code != 0) std::printf("launch %s: error %d: %s\n", kernel, code, brk_program_message(p));
}

int main() {
    char* message = NULL;
    BrkProgram* program = brk_program_new("group.br", SOURCE, 0, &message);
    if (!program) { std::printf("compile: %s\n", message); return 1; }

    unsigned int count = 0;
    brook::Device* all = brook::getDevices("interp", &count);
    brook::Device members[2] = {all[0], all[count > 1 ? 1 : 0]};
    brook::Device group = brook::makeDeviceGroup(members, 2);
    std::printf("type %s\n", group.getType());
    brook::useDevices(&group, 1, NULL);

    unsigned int n = 1000;
    brook::Stream<float> a(1, &n), b(1, &n), c(1, &n), d(1, &n);
    float ramp[1000], ones[1000], out[1000];
    for (int i = 0; i < 1000; i++) { ramp[i] = (float)i; ones[i] = 1.0f; }
    a.read(ramp);
    b.read(ones);
    BrkArg add_args[3] = {stream(a.handle()), stream(b.handle()), stream(c.handle())};
    launch(program, "add", add_args, 3);
    float size = 1000.0f;
    BrkArg blur_args[3] = {stream(c.handle()), value("float", &size), stream(d.handle())};
    launch(program, "blur", blur_args, 3);
    d.write(out);
    std::printf("blur %.1f %.1f %.1f %.1f %.1f\n", out[0], out[1], out[499], out[500], out[999]);
    float total = 0.0f;
    BrkArg sum_args[2] = {stream(d.handle()), host("float", &total)};
    launch(program, "sum", sum_args, 2);
    std::printf("total %.1f, error %d\n", total, (int)d.error());

    brook::Device nested = brook::makeDeviceGroup(&group, 1);
    std::printf("a group inside a group: type '%s'\n", nested.getType());
    brook::useDevices(NULL, 0, NULL);
    brk_program_free(program);
    return 0;
}
