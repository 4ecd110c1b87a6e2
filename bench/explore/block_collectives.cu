// Exploration of block reduce and block scan shapes on one GPU (not part of the product):
// how close to copy bandwidth can a block collective of 2^26 floats in blocks of 256 get when
// each thread holds one element (LOOM's model: one LOOM thread per CUDA thread), and when a
// CUDA thread holds K elements (K LOOM blocks per CTA, their loads in flight together)? And
// what storing a block's sum from every thread costs against one thread storing it.
// Build and run: nvcc -O3 -arch=native block_collectives.cu -o bc && ./bc
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

static const int N = 1 << 26, BLOCK = 256, WARPS = BLOCK / 32;

__global__ void copy(const float* in, float* out) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  out[i] = in[i];
}

// The tree inside a warp (distances 1..16, pairs combined by their first lane), then warp 0
// over the warps' results: the canonical order.
__device__ __forceinline__ float warp_tree(float v, int lane, int count) {
  for (int d = 1; d < count; d *= 2) {
    float o = __shfl_down_sync(0xffffffffu, v, d);
    if ((lane & (2 * d - 1)) == 0 && lane + d < count) v += o;
  }
  return v;
}

// K LOOM blocks per CTA: thread t holds element t of blocks K*cta .. K*cta+K-1. Each warp's
// tree of each block goes to part[k][warp]; the caller synchronises.
template <int K>
__device__ __forceinline__ void warp_results(const float* in, float (*part)[WARPS]) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float v[K];
#pragma unroll
  for (int k = 0; k < K; k++) v[k] = in[(blockIdx.x * K + k) * BLOCK + threadIdx.x];
#pragma unroll
  for (int k = 0; k < K; k++) {
    v[k] = warp_tree(v[k], lane, 32);
    if (lane == 0) part[k][warp] = v[k];
  }
}

// Warp k combines block k's warp results and stores its sum.
template <int K>
__global__ void block_reduce(const float* in, float* out) {
  __shared__ float part[K][WARPS];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  warp_results<K>(in, part);
  __syncthreads();
  if (warp < K) {
    float t = lane < WARPS ? part[warp][lane] : 0.f;
    t = warp_tree(t, lane, WARPS);
    if (lane == 0) out[blockIdx.x * K + warp] = t;
  }
}

// Every thread combines every block's warp results; every thread stores each block's sum
// (what the generated code did), or only thread 0 does.
template <int K, bool ONE_STORE>
__global__ void block_reduce_stores(const float* in, float* out) {
  __shared__ float part[K][WARPS];
  warp_results<K>(in, part);
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; k++) {
    float t = 0.f;
    for (int w = 0; w < WARPS; w++) t += part[k][w];
    if (!ONE_STORE || threadIdx.x == 0) out[blockIdx.x * K + k] = t;
  }
}

template <int K>
__global__ void block_scan(const float* in, float* out) {
  __shared__ float tot[K][WARPS];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float v[K];
#pragma unroll
  for (int k = 0; k < K; k++) v[k] = in[(blockIdx.x * K + k) * BLOCK + threadIdx.x];
#pragma unroll
  for (int k = 0; k < K; k++) {
    for (int d = 1; d < 32; d *= 2) {
      float o = __shfl_up_sync(0xffffffffu, v[k], d);
      if (lane >= d) v[k] = o + v[k];
    }
    if (lane == 31) tot[k][warp] = v[k];
  }
  __syncthreads();
  if (warp < K) {
    float t = lane < WARPS ? tot[warp][lane] : 0.f;
    for (int d = 1; d < WARPS; d *= 2) {
      float o = __shfl_up_sync(0xffffffffu, t, d);
      if (lane >= d && lane < WARPS) t = o + t;
    }
    __syncwarp();
    if (lane < WARPS) tot[warp][lane] = t;
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; k++) {
    float r = warp > 0 ? tot[k][warp - 1] + v[k] : v[k];
    out[(blockIdx.x * K + k) * BLOCK + threadIdx.x] = r;
  }
}

template <typename F>
float median_ms(F launch) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  launch();
  CHECK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int r = 0; r < 21; r++) {
    CHECK(cudaEventRecord(a));
    for (int i = 0; i < 10; i++) launch();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms / 10);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  float *in, *out;
  CHECK(cudaMalloc(&in, N * 4));
  CHECK(cudaMalloc(&out, N * 4));
  std::vector<float> h(N);
  for (int i = 0; i < N; i++) h[i] = (float)(i % 17) - 8.f;
  CHECK(cudaMemcpy(in, h.data(), N * 4, cudaMemcpyHostToDevice));
  int blocks = N / BLOCK;
  float copy_ms = median_ms([&] { copy<<<blocks, BLOCK>>>(in, out); });
  double copy_gbs = 8.0 * N / copy_ms / 1e6;
  printf("%-34s %8s %8s %8s\n", "what", "ms", "GB/s", "% copy");
  printf("%-34s %8.3f %8.0f %8.1f\n", "copy, 1 element per thread", copy_ms, copy_gbs, 100.0);
  auto row = [&](const char* what, float ms, double bytes) {
    double gbs = bytes / ms / 1e6;
    printf("%-34s %8.3f %8.0f %8.1f\n", what, ms, gbs, 100.0 * gbs / copy_gbs);
  };
  double reduce_bytes = 4.0 * (N + N / BLOCK), scan_bytes = 8.0 * N;
  row("block reduce, K=1", median_ms([&] { block_reduce<1><<<blocks, BLOCK>>>(in, out); }), reduce_bytes);
  row("block reduce, K=2", median_ms([&] { block_reduce<2><<<blocks / 2, BLOCK>>>(in, out); }), reduce_bytes);
  row("block reduce, K=4", median_ms([&] { block_reduce<4><<<blocks / 4, BLOCK>>>(in, out); }), reduce_bytes);
  row("block reduce, K=8", median_ms([&] { block_reduce<8><<<blocks / 8, BLOCK>>>(in, out); }), reduce_bytes);
  row("reduce K=4, all threads store", median_ms([&] { block_reduce_stores<4, false><<<blocks / 4, BLOCK>>>(in, out); }), reduce_bytes);
  row("reduce K=4, thread 0 stores", median_ms([&] { block_reduce_stores<4, true><<<blocks / 4, BLOCK>>>(in, out); }), reduce_bytes);
  row("reduce K=1, all threads store", median_ms([&] { block_reduce_stores<1, false><<<blocks, BLOCK>>>(in, out); }), reduce_bytes);
  row("reduce K=1, thread 0 stores", median_ms([&] { block_reduce_stores<1, true><<<blocks, BLOCK>>>(in, out); }), reduce_bytes);
  row("block scan, K=1", median_ms([&] { block_scan<1><<<blocks, BLOCK>>>(in, out); }), scan_bytes);
  row("block scan, K=2", median_ms([&] { block_scan<2><<<blocks / 2, BLOCK>>>(in, out); }), scan_bytes);
  row("block scan, K=4", median_ms([&] { block_scan<4><<<blocks / 4, BLOCK>>>(in, out); }), scan_bytes);
  row("block scan, K=8", median_ms([&] { block_scan<8><<<blocks / 8, BLOCK>>>(in, out); }), scan_bytes);
  CHECK(cudaGetLastError());
  return 0;
}
