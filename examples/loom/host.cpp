// C++ host code calling LOOM kernels (seed 004) through the Brook+ C++ API:
//     cd examples/loom && brcc run host.cpp
// Each kernel is read from its .loom file (beside the working directory) and compiled for a
// grid; a program that does not compile prints its diagnostics and its launches fail.
#include <brook/brook.hpp>
#include <cstdio>

int main() {
    // The sum of squares of each block of 64 numbers.
    brook::LoomKernel sumOfSquares("sum_of_squares.loom", NULL, 256, 64);
    int data[256];
    for (int i = 0; i < 256; i++) data[i] = i % 10;
    unsigned int n[1] = {256}, blocks[1] = {4};
    brook::Stream<int> in(1, n), out(1, blocks);
    in.read(data);
    sumOfSquares(in, out);
    int sums[4];
    out.write(sums);
    std::printf("sums of squares: %d %d %d %d\n", sums[0], sums[1], sums[2], sums[3]);

    // Shift a vector left by one block of 4: the first block receives zeros.
    brook::LoomKernel shiftLeft("shift_left.loom", NULL, 12, 4);
    float values[12], shifted[12];
    for (int i = 0; i < 12; i++) values[i] = 1.5f * i;
    unsigned int twelve[1] = {12};
    brook::Stream<float> v(1, twelve), s(1, twelve);
    v.read(values);
    shiftLeft(v, s);
    s.write(shifted);
    std::printf("shifted:");
    for (int i = 0; i < 12; i++) std::printf(" %g", shifted[i]);
    std::printf("\n");
    return 0;
}
