// Is seed 001's simple gather matmul bound by loads in flight per thread? (not part of the
// product). One thread per C[i][j], rows of 256 threads, each form in strict IEEE single
// (no FMA, as Brook's kernels must be, for the interpreter's bits):
//   fma unrolled    — nvcc's own loop (FMA, unrolled): the 42 ms reference of gather_tiles.cu
//   strict unroll1  — mul then add, one iteration at a time
//   brook loop      — what the CUDA device emitted: a counted fast loop that also tests the
//                     kernel's own float exit (`i0 > 0`) every iteration
//   prefetch U      — the same loop, with the loads of U iterations issued before the first
//                     of their exit tests (every address is in bounds for `limit` iterations);
//                     ptxas sinks each load back to its use, past the tests (as written
//                     here, a `goto` out of the group; ending the group with a flag and
//                     `break` instead measured 49.5 / 66.7 / 100.4 ms for U = 2 / 4 / 8)
//   predicated U    — the loads of U iterations, then U bodies under a predicate (selects)
//   strict unrolled — mul then add in nvcc's unrolled counted loop (no exit test)
// Build and run: nvcc -O3 -arch=native gather_ilp.cu -o gi && ./gi
#include "matmul_harness.cuh"

// C[i][j]'s thread: its row and column, or false past the matrix.
__device__ bool element(int n, int* i, int* j) {
  int linear = blockIdx.x * blockDim.x + threadIdx.x;
  *i = linear / n; *j = linear % n;
  return *i < n;
}

// The state of seed 001's loop: the sum, its float counter `i0`, the element indices of A's
// row and B's column, and the iterations done of `limit` in range.
struct Walk {
  float acc, i0;
  unsigned ia, ib, t;
};

// One iteration at a time while `t < limit` and `i0 > 0` (the loop as the device emitted it).
__device__ void one_at_a_time(const float* __restrict__ A, const float* __restrict__ B, int n,
                              unsigned limit, Walk& w) {
  while (w.t < limit) {
    if (!(w.i0 > 0.0f)) break;
    w.acc = __fadd_rn(w.acc, __fmul_rn(__ldg(&A[w.ia]), __ldg(&B[w.ib])));
    w.ia += 1; w.ib += n; w.i0 = __fsub_rn(w.i0, 1.0f); w.t++;
  }
}

__global__ void fma_unrolled(const float* __restrict__ A, const float* __restrict__ B, float* C, int n) {
  int i, j;
  if (!element(n, &i, &j)) return;
  float acc = 0.0f;
  for (int k = 0; k < n; k++) acc += __ldg(&A[i * n + k]) * __ldg(&B[k * n + j]);
  C[i * n + j] = acc;
}

__global__ void strict_unroll1(const float* __restrict__ A, const float* __restrict__ B, float* C, int n) {
  int i, j;
  if (!element(n, &i, &j)) return;
  float acc = 0.0f;
#pragma unroll 1
  for (int k = 0; k < n; k++) acc = __fadd_rn(acc, __fmul_rn(__ldg(&A[i * n + k]), __ldg(&B[k * n + j])));
  C[i * n + j] = acc;
}

__global__ void strict_unrolled(const float* __restrict__ A, const float* __restrict__ B, float* C, int n) {
  int i, j;
  if (!element(n, &i, &j)) return;
  float acc = 0.0f;
  for (int k = 0; k < n; k++) acc = __fadd_rn(acc, __fmul_rn(__ldg(&A[i * n + k]), __ldg(&B[k * n + j])));
  C[i * n + j] = acc;
}

__global__ void brook_loop(const float* __restrict__ A, const float* __restrict__ B, float* C, int n, float width) {
  int i, j;
  if (!element(n, &i, &j)) return;
  Walk w = {0.0f, width, (unsigned)(i * n), (unsigned)j, 0};
  one_at_a_time(A, B, n, n, w);
  C[i * n + j] = w.acc;
}

template <int U>
__global__ void prefetch(const float* __restrict__ A, const float* __restrict__ B, float* C, int n, float width) {
  int i, j;
  if (!element(n, &i, &j)) return;
  Walk w = {0.0f, width, (unsigned)(i * n), (unsigned)j, 0};
  while (w.t + U <= (unsigned)n) {
    float a[U], b[U];
#pragma unroll
    for (int u = 0; u < U; u++) { a[u] = __ldg(&A[w.ia + u]); b[u] = __ldg(&B[w.ib + u * n]); }
#pragma unroll
    for (int u = 0; u < U; u++) {
      if (!(w.i0 > 0.0f)) goto done;
      w.acc = __fadd_rn(w.acc, __fmul_rn(a[u], b[u]));
      w.i0 = __fsub_rn(w.i0, 1.0f);
    }
    w.ia += U; w.ib += U * n; w.t += U;
  }
  one_at_a_time(A, B, n, n, w);
done:
  C[i * n + j] = w.acc;
}

// The loads of U iterations, then U bodies executed under a predicate (selects, no branch),
// one exit test per group of U: nothing for ptxas to sink the loads past.
template <int U>
__global__ void predicated(const float* __restrict__ A, const float* __restrict__ B, float* C, int n, float width) {
  int i, j;
  if (!element(n, &i, &j)) return;
  Walk w = {0.0f, width, (unsigned)(i * n), (unsigned)j, 0};
  bool alive = true;
  while (alive && w.t + U <= (unsigned)n) {
    float a[U], b[U];
#pragma unroll
    for (int u = 0; u < U; u++) { a[u] = __ldg(&A[w.ia + u]); b[u] = __ldg(&B[w.ib + u * n]); }
#pragma unroll
    for (int u = 0; u < U; u++) {
      alive = alive && (w.i0 > 0.0f);
      float next_acc = __fadd_rn(w.acc, __fmul_rn(a[u], b[u]));
      float next_i0 = __fsub_rn(w.i0, 1.0f);
      w.acc = alive ? next_acc : w.acc;
      w.i0 = alive ? next_i0 : w.i0;
    }
    w.ia += U; w.ib += U * n; w.t += U;
  }
  if (alive) one_at_a_time(A, B, n, n, w);
  C[i * n + j] = w.acc;
}

int main() {
  Harness h(4096);
  const int n = h.n;
  float *A = h.A, *B = h.B, *C = h.C;
  auto time = [&](const char* what, auto launch) { h.time(what, launch); };
  int blocks = n * n / 256;
  float w = (float)n;
  time("fma unrolled", [&] { fma_unrolled<<<blocks, 256>>>(A, B, C, n); });
  time("strict unroll1", [&] { strict_unroll1<<<blocks, 256>>>(A, B, C, n); });
  time("brook loop", [&] { brook_loop<<<blocks, 256>>>(A, B, C, n, w); });
  time("prefetch 2", [&] { prefetch<2><<<blocks, 256>>>(A, B, C, n, w); });
  time("prefetch 4", [&] { prefetch<4><<<blocks, 256>>>(A, B, C, n, w); });
  time("prefetch 8", [&] { prefetch<8><<<blocks, 256>>>(A, B, C, n, w); });
  time("strict unrolled", [&] { strict_unrolled<<<blocks, 256>>>(A, B, C, n); });
  time("predicated 2", [&] { predicated<2><<<blocks, 256>>>(A, B, C, n, w); });
  time("predicated 4", [&] { predicated<4><<<blocks, 256>>>(A, B, C, n, w); });
  time("predicated 8", [&] { predicated<8><<<blocks, 256>>>(A, B, C, n, w); });
  time("predicated 16", [&] { predicated<16><<<blocks, 256>>>(A, B, C, n, w); });
  h.report();
  return 0;
}
