// The harness of the gather matmul explorations (not part of the product): two random n x n
// matrices A and B, C = A B, and a timer that prints the mean of three launches after a
// warm-up, TFLOP/s and a checksum of row 1234 (equal checksums: the same products).
#pragma once
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(float* x, size_t n, unsigned seed) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    x[i] = (float)(h & 0xffff) / 65536.0f - 0.5f;
  }
}

struct Harness {
  int n;
  float *A, *B, *C;
  cudaEvent_t e0, e1;

  explicit Harness(int n) : n(n) {
    size_t bytes = (size_t)n * n * 4;
    cudaMalloc(&A, bytes); cudaMalloc(&B, bytes); cudaMalloc(&C, bytes);
    cudaMemset(C, 0xff, bytes);
    fill<<<n * n / 256, 256>>>(A, (size_t)n * n, 1u);
    fill<<<n * n / 256, 256>>>(B, (size_t)n * n, 2u);
    cudaEventCreate(&e0); cudaEventCreate(&e1);
  }

  template <class Launch>
  void time(const char* what, Launch launch) {
    launch();
    cudaEventRecord(e0);
    for (int r = 0; r < 3; r++) launch();
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); ms /= 3;
    static float host[4096];
    cudaMemcpy(host, C + (size_t)1234 * n, sizeof(float) * n, cudaMemcpyDeviceToHost);
    double check = 0;
    for (int j = 0; j < n; j++) check += host[j] * (j % 7 + 1);
    printf("%-28s %8.2f ms  %6.2f TFLOP/s  (row 1234 check %.6f)\n", what, ms,
           2.0 * n * n * (double)n / ms / 1e9, check);
  }

  // Prints the last launch error, if any.
  void report() {
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) printf("error: %s\n", cudaGetErrorString(err));
  }
};
