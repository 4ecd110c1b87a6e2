// Does a 2-D tile of threads per block speed up seed 001's simple gather matmul? (not part of
// the product). Each thread computes one C[i][j] = sum_k A[i][k] * B[k][j] with plain loads,
// as Brook's simple_matmult does. Mapping (a): 256 consecutive j of one row per block (what
// the CUDA device does today for a rank-2 map); (b): blocks of 32 columns x 8 rows.
// Build and run: nvcc -O3 -arch=native gather_tiles.cu -o gt && ./gt
#include "matmul_harness.cuh"

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

int main() {
  Harness h(4096);
  const int n = h.n;
  float *A = h.A, *B = h.B, *C = h.C;
  auto time = [&](const char* what, auto launch) { h.time(what, launch); };
  int blocks = n * n / 256;
  time("rows of 256", [&] { rows<<<blocks, 256>>>(A, B, C, n); });
  time("tiles 32x8", [&] { tiles<32, 8><<<blocks, 256>>>(A, B, C, n); });
  time("tiles 16x16", [&] { tiles<16, 16><<<blocks, 256>>>(A, B, C, n); });
  time("tiles 64x4", [&] { tiles<64, 4><<<blocks, 256>>>(A, B, C, n); });
  time("tiles 32x16 (512)", [&] { tiles<32, 16><<<n * n / 512, 512>>>(A, B, C, n); });
  h.report();
  return 0;
}
