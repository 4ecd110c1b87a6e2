// LOOM kernels from C++ through include/brook/brook.hpp: a block reduce and scan compiled for
// a 1-D grid, a 2-D kernel, values as arguments, a wrong array shape and a program that does
// not compile (its launches mark their streams). Prints what it sees.
#include <brook/brook.hpp>
#include <cstdio>
#include <cstring>

static const char* COLLECTIVES =
    "func add(x: Float32, y: Float32): Float32\n"
    "  return x + y\n"
    "\n"
    "kernel collectives(in: Float32[THREADS], sums: Float32[BLOCKS], scans: Float32[THREADS], k: Float32)\n"
    "  sums[B] <- add /. in\n"
    "  scans <- add /: in\n"
    "  scans[T] <- scans[T] * k\n"
    "  return\n";

static const char* IDS =
    "kernel ids(out: Int32[X_THREADS, Y_THREADS])\n"
    "  out[X_T, Y_T] <- X_T * 10 + Y_T\n"
    "  return\n";

int main() {
    brook::LoomKernel collectives("collectives.loom", COLLECTIVES, 8, 4);
    std::printf("compiled: %d\n", collectives.ok() ? 1 : 0);
    float input[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    unsigned int eight[1] = {8}, two[1] = {2};
    brook::Stream<float> in(1, eight), scans(1, eight), sums(1, two);
    in.read(input);
    int code = collectives(in, sums, scans, 10.0f);
    float s[2], c[8];
    sums.write(s);
    scans.write(c);
    std::printf("launch: %d\nsums: %g %g\nscans:", code, s[0], s[1]);
    for (int i = 0; i < 8; i++) std::printf(" %g", c[i]);
    std::printf("\n");

    brook::LoomKernel ids("ids.loom", IDS, 4, 2, 2, 2);
    unsigned int grid[2] = {2, 4}; // x-first: 2 columns (Y), 4 rows (X)
    brook::Stream<int> out(2, grid);
    std::printf("2-D launch: %d\nids:", ids(out));
    int got[8];
    out.write(got);
    for (int i = 0; i < 8; i++) std::printf(" %d", got[i]);
    std::printf("\n");

    // An array of the wrong shape is refused, with a message naming the extents.
    brook::Stream<float> short_in(1, two);
    code = collectives(short_in, sums, scans, 1.0f);
    std::printf("wrong shape: %d (%s)\n", code != 0 ? 1 : 0,
                std::strstr(collectives.message(), "[8]") ? "names [8]" : collectives.message());

    // A program that does not compile: diagnostics once on stderr, launches fail.
    brook::LoomKernel broken("broken.loom", "kernel k(a: Int32[THREADS])\n  a[T] <- y\n  return\n", 8, 4);
    brook::Stream<int> a(1, eight);
    code = broken(a);
    std::printf("broken: ok %d, launch %d, stream error %d\n", broken.ok() ? 1 : 0, code,
                a.error() != 0 ? 1 : 0);
    return 0;
}
