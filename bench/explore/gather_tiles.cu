// Does a 2-D tile of threads per block speed up seed 001's simple gather matmul? (not part of
// the product). Each thread computes one C[i][j] = sum_k A[i][k] * B[k][j] with plain loads,
// as Brook's simple_matmult does. Mapping (a): 256 consecutive j of one row per block (what
// the CUDA device does today for a rank-2 map); (b): blocks of 32 columns x 8 rows.
// Build and run: nvcc -O3 -arch=native gather_tiles.cu -o gt && ./gt
#include <cstdio>
#include <cuda_runtime.h>

__global__ void rows(const float* __restrict__ A, const float* __restrict__ B, float* C, int n) {
  int linear = blockIdx.x * blockDim.x + threadIdx.x;
  int i = linear / n, j = linear % n;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < n; k++) acc += __ldg(&A[i * n + k]) * __ldg(&B[k * n + j]);
  C[i * n + j] = acc;
}

template <int TW, int TH>
__global__ void tiles(const float* __restrict__ A, const float* __restrict__ B, float* C, int n) {
  int tilesPerRow = (n + TW - 1) / TW;
  int tile = blockIdx.x, within = threadIdx.x;
  int i = (tile / tilesPerRow) * TH + within / TW, j = (tile % tilesPerRow) * TW + within % TW;
  if (i >= n || j >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < n; k++) acc += __ldg(&A[i * n + k]) * __ldg(&B[k * n + j]);
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
  time("rows of 256", [&] { rows<<<blocks, 256>>>(A, B, C, n); });
  time("tiles 32x8", [&] { tiles<32, 8><<<blocks, 256>>>(A, B, C, n); });
  time("tiles 16x16", [&] { tiles<16, 16><<<blocks, 256>>>(A, B, C, n); });
  time("tiles 64x4", [&] { tiles<64, 4><<<blocks, 256>>>(A, B, C, n); });
  time("tiles 32x16 (512)", [&] { tiles<32, 16><<<n * n / 512, 512>>>(A, B, C, n); });
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) printf("error: %s\n", cudaGetErrorString(err));
  return 0;
}
