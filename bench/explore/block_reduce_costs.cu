// Exploration (not part of the product): which parts of the PTX that Brook generates for a
// LOOM block reduce (2^26 floats, blocks of 256, four blocks per CTA) cost time: clamped
// loads, a second barrier to publish the four totals to every thread. Measured on an H100:
// 0.094-0.096 ms for all four forms (docs/PERFORMANCE.md).
// Build and run: nvcc -O3 -arch=native block_reduce_costs.cu -o brc && ./brc
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
static const int N = 1 << 26, BLOCK = 256, WARPS = 8, K = 4;
__device__ __forceinline__ float warp_tree(float v, int lane) {
  for (int d = 1; d < 32; d *= 2) {
    float o = __shfl_down_sync(0xffffffffu, v, d);
    if ((lane & (2 * d - 1)) == 0) v += o;
  }
  return v;
}
template <bool CLAMP, bool TWO_BARRIERS>
__global__ void ours(const float* in, float* out, int n, int pitch, int offset, int outs) {
  __shared__ float part[K][WARPS];
  __shared__ float totals[K];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float v[K];
#pragma unroll
  for (int k = 0; k < K; k++) {
    int i = (blockIdx.x * K + k) * BLOCK + threadIdx.x;
    if (CLAMP) i = min((unsigned)max(i, 0), (unsigned)(n - 1));
    v[k] = in[(long)(i * pitch + offset)];
  }
#pragma unroll
  for (int k = 0; k < K; k++) {
    v[k] = warp_tree(v[k], lane);
    if (lane == 0) part[k][warp] = v[k];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; k++) {
    if (warp == k) {
      float4 a = *(float4*)&part[k][0], b = *(float4*)&part[k][4];
      float t = ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w));
      if (lane == 0) {
        if (TWO_BARRIERS) totals[k] = t;
        else if (blockIdx.x * K + k < outs) out[blockIdx.x * K + k] = t;
      }
    }
  }
  if (TWO_BARRIERS) {
    __syncthreads();
    if (threadIdx.x == 0)
      for (int k = 0; k < K; k++)
        if (blockIdx.x * K + k < outs) out[blockIdx.x * K + k] = totals[k];
  }
}
template <typename F> float median_ms(F launch) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  launch(); cudaDeviceSynchronize();
  std::vector<float> t;
  for (int r = 0; r < 21; r++) {
    cudaEventRecord(a); for (int i = 0; i < 10; i++) launch(); cudaEventRecord(b);
    cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms / 10);
  }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
int main() {
  float *in, *out; cudaMalloc(&in, N * 4); cudaMalloc(&out, N * 4); cudaMemset(in, 0, N * 4);
  int grid = N / BLOCK / K, outs = N / BLOCK;
  printf("clamp+2 barriers  %.3f ms\n", median_ms([&] { ours<true, true><<<grid, BLOCK>>>(in, out, N, 1, 0, outs); }));
  printf("clamp, 1 barrier  %.3f ms\n", median_ms([&] { ours<true, false><<<grid, BLOCK>>>(in, out, N, 1, 0, outs); }));
  printf("2 barriers        %.3f ms\n", median_ms([&] { ours<false, true><<<grid, BLOCK>>>(in, out, N, 1, 0, outs); }));
  printf("1 barrier         %.3f ms\n", median_ms([&] { ours<false, false><<<grid, BLOCK>>>(in, out, N, 1, 0, outs); }));
  return 0;
}
