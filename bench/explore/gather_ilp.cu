// Is seed 001's simple gather matmul bound by loads in flight per thread? (not part of the
// product). One thread per C[i][j], rows of 256 threads, each form in strict IEEE single
// (no FMA, as Brook's kernels must be, for the interpreter's bits):
//   fma unrolled   — nvcc's own loop (FMA, unrolled): the 42 ms reference of gather_tiles.cu
//   strict unroll1 — mul then add, one iteration at a time
//   brook loop     — what the CUDA device emits: a counted fast loop that also tests the
//                    kernel's own float exit (`i0 > 0`) every iteration
//   prefetch U     — the same loop, with the loads of U iterations issued before the first
//                    of their exit tests (every address is in bounds for `limit` iterations);
//                    ptxas sinks each load back to its use, past the tests
//   predicated U   — the loads of U iterations, then U bodies under a predicate (selects)
//   strict unrolled — mul then add in nvcc's unrolled counted loop (no exit test)
// Build and run: nvcc -O3 -arch=native gather_ilp.cu -o gi && ./gi
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fma_unrolled(const float* __restrict__ A, const float* __restrict__ B, float* C, int n) {
  int linear = blockIdx.x * blockDim.x + threadIdx.x;
  int i = linear / n, j = linear % n;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < n; k++) acc += __ldg(&A[i * n + k]) * __ldg(&B[k * n + j]);
  C[i * n + j] = acc;
}

__global__ void strict_unroll1(const float* __restrict__ A, const float* __restrict__ B, float* C, int n) {
  int linear = blockIdx.x * blockDim.x + threadIdx.x;
  int i = linear / n, j = linear % n;
  if (i >= n) return;
  float acc = 0.0f;
#pragma unroll 1
  for (int k = 0; k < n; k++) acc = __fadd_rn(acc, __fmul_rn(__ldg(&A[i * n + k]), __ldg(&B[k * n + j])));
  C[i * n + j] = acc;
}

__global__ void brook_loop(const float* __restrict__ A, const float* __restrict__ B, float* C, int n, float width) {
  int linear = blockIdx.x * blockDim.x + threadIdx.x;
  int i = linear / n, j = linear % n;
  if (i >= n) return;
  float acc = 0.0f, i0 = width;
  unsigned ia = i * n, ib = j, t = 0, limit = n;
  while (t < limit) {
    if (!(i0 > 0.0f)) break;
    acc = __fadd_rn(acc, __fmul_rn(__ldg(&A[ia]), __ldg(&B[ib])));
    ia += 1; ib += n; i0 = __fsub_rn(i0, 1.0f); t++;
  }
  C[i * n + j] = acc;
}

template <int U>
__global__ void prefetch(const float* __restrict__ A, const float* __restrict__ B, float* C, int n, float width) {
  int linear = blockIdx.x * blockDim.x + threadIdx.x;
  int i = linear / n, j = linear % n;
  if (i >= n) return;
  float acc = 0.0f, i0 = width;
  unsigned ia = i * n, ib = j, t = 0, limit = n;
  while (t + U <= limit) {
    float a[U], b[U];
#pragma unroll
    for (int u = 0; u < U; u++) { a[u] = __ldg(&A[ia + u]); b[u] = __ldg(&B[ib + u * n]); }
#pragma unroll
    for (int u = 0; u < U; u++) {
      if (!(i0 > 0.0f)) goto done;
      acc = __fadd_rn(acc, __fmul_rn(a[u], b[u]));
      i0 = __fsub_rn(i0, 1.0f);
    }
    ia += U; ib += U * n; t += U;
  }
  while (t < limit) {
    if (!(i0 > 0.0f)) break;
    acc = __fadd_rn(acc, __fmul_rn(__ldg(&A[ia]), __ldg(&B[ib])));
    ia += 1; ib += n; i0 = __fsub_rn(i0, 1.0f); t++;
  }
done:
  C[i * n + j] = acc;
}

// The loads of U iterations, then U bodies executed under a predicate (selects, no branch),
// one exit test per group of U: nothing for ptxas to sink the loads past.
template <int U>
__global__ void predicated(const float* __restrict__ A, const float* __restrict__ B, float* C, int n, float width) {
  int linear = blockIdx.x * blockDim.x + threadIdx.x;
  int i = linear / n, j = linear % n;
  if (i >= n) return;
  float acc = 0.0f, i0 = width;
  unsigned ia = i * n, ib = j, t = 0, limit = n;
  bool alive = true;
  while (t + U <= limit) {
    float a[U], b[U];
#pragma unroll
    for (int u = 0; u < U; u++) { a[u] = __ldg(&A[ia + u]); b[u] = __ldg(&B[ib + u * n]); }
#pragma unroll
    for (int u = 0; u < U; u++) {
      alive = alive && (i0 > 0.0f);
      float next_acc = __fadd_rn(acc, __fmul_rn(a[u], b[u]));
      float next_i0 = __fsub_rn(i0, 1.0f);
      acc = alive ? next_acc : acc;
      i0 = alive ? next_i0 : i0;
    }
    if (!alive) goto done;
    ia += U; ib += U * n; t += U;
  }
  while (t < limit) {
    if (!(i0 > 0.0f)) break;
    acc = __fadd_rn(acc, __fmul_rn(__ldg(&A[ia]), __ldg(&B[ib])));
    ia += 1; ib += n; i0 = __fsub_rn(i0, 1.0f); t++;
  }
done:
  C[i * n + j] = acc;
}

__global__ void strict_unrolled(const float* __restrict__ A, const float* __restrict__ B, float* C, int n) {
  int linear = blockIdx.x * blockDim.x + threadIdx.x;
  int i = linear / n, j = linear % n;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < n; k++) acc = __fadd_rn(acc, __fmul_rn(__ldg(&A[i * n + k]), __ldg(&B[k * n + j])));
  C[i * n + j] = acc;
}

__global__ void fill(float* x, size_t n, unsigned seed) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    x[i] = (float)(h & 0xffff) / 65536.0f - 0.5f;
  }
}

int main() {
  const int n = 4096;
  size_t bytes = (size_t)n * n * 4;
  float *A, *B, *C;
  cudaMalloc(&A, bytes); cudaMalloc(&B, bytes); cudaMalloc(&C, bytes);
  cudaMemset(C, 0xff, bytes);
  fill<<<n * n / 256, 256>>>(A, (size_t)n * n, 1u);
  fill<<<n * n / 256, 256>>>(B, (size_t)n * n, 2u);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto time = [&](const char* what, auto launch) {
    launch();
    cudaEventRecord(e0);
    for (int r = 0; r < 3; r++) launch();
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); ms /= 3;
    static float host[4096];
    cudaMemcpy(host, C + (size_t)1234 * n, sizeof host, cudaMemcpyDeviceToHost);
    double check = 0;
    for (int j = 0; j < n; j++) check += host[j] * (j % 7 + 1);
    printf("%-28s %8.2f ms  %6.2f TFLOP/s  (row 1234 check %.6f)\n", what, ms,
           2.0 * n * n * (double)n / ms / 1e9, check);
  };
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
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) printf("error: %s\n", cudaGetErrorString(err));
  return 0;
}
