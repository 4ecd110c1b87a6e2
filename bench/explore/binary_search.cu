// Seed 001's binary search in CUDA C (not part of the product), to see what its time on the
// GPU depends on: 2^24 sorted keys (0, 1, 2, ... as floats), 2^24 queries in gpu_bench's
// order (i * 2654435761 mod 2^24, every other one + 0.5), one thread per query.
// Variants: the seed's float index with Brook's clamped gather (floor(f + 0.25), clamped to
// the array) and 27 loads; the same without the clamps; integer indices; and torch's
// lower_bound (24-25 loads) and a branch-free lower bound (25 loads), launched as a thread per query or as one wave of threads that
// each take queries a grid apart. Prints the median of 11 launches and a checksum.
// Build and run: nvcc -O3 -arch=native binary_search.cu -o bs && ./bs
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>

constexpr int N = 1 << 24;

__device__ __forceinline__ int clamped(float f) {
  int i = (int)floorf(f + 0.25f);
  return min((unsigned)max(i, 0), (unsigned)(N - 1));
}
__device__ __forceinline__ int unclamped(float f) { return (int)floorf(f + 0.25f); }

// The seed kernel as Brook compiles it; `Index` turns the float index into an element.
template <int (*Index)(float), bool NC>
__global__ void seed(const float* __restrict__ q, const float* __restrict__ a, float* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= N) return;
  auto load = [&](float f) { return NC ? __ldg(a + Index(f)) : a[Index(f)]; };
  float v = q[t];
  float stride = floorf(N * 0.5f + 0.5f), idx = stride;
  for (int i = 0; i < 24; i++) {
    stride = floorf(stride * 0.5f + 0.5f);
    float c = load(idx);
    idx = __fadd_rn(idx, __fmul_rn(v <= c ? -1.0f : 1.0f, stride));
  }
  idx = idx + (v <= load(idx) ? -1.0f : 1.0f);
  idx = idx + (v <= load(idx) ? 0.0f : 1.0f);
  if (idx < 0.0f) idx = 0.0f;
  out[t] = v == load(idx) ? idx : -1.0f;
}

// The same walk on integers: the compare selects +stride or -stride.
__global__ void seed_int(const float* __restrict__ q, const float* __restrict__ a, float* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= N) return;
  float v = q[t];
  int stride = N / 2, idx = stride;
  for (int i = 0; i < 24; i++) {
    stride = (stride + 1) / 2;
    idx += v <= __ldg(a + idx) ? -stride : stride;
  }
  idx += v <= __ldg(a + idx) ? -1 : 1;
  idx += v <= __ldg(a + idx) ? 0 : 1;
  idx = max(idx, 0);
  out[t] = v == __ldg(a + idx) ? (float)idx : -1.0f;
}

// torch.searchsorted's lower_bound (int64 indices, plain loads).
__device__ float lower_bound_at(const float* q, const float* a, int t) {
  float v = q[t];
  long long start = 0, end = N;
  while (start < end) {
    long long mid = start + ((end - start) >> 1);
    if (!(a[mid] >= v)) start = mid + 1; else end = mid;
  }
  return start < N && a[start] == v ? (float)start : -1.0f;
}

__global__ void lower_bound(const float* q, const float* a, float* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < N) out[t] = lower_bound_at(q, a, t);
}

// The same, each thread taking queries a grid apart (as torch launches it: blocks of 512, four
// blocks per SM, so the grid is one wave).
__global__ void lower_bound_strided(const float* q, const float* a, float* out) {
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < N; t += blockDim.x * gridDim.x)
    out[t] = lower_bound_at(q, a, t);
}

// A branch-free lower bound: every query takes the same 24 halvings of the range, then one
// more compare (25 loads, no divergence).
__global__ void branch_free(const float* __restrict__ q, const float* __restrict__ a, float* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= N) return;
  float v = q[t];
  int base = 0, n = N;
  while (n > 1) {
    int half = n / 2;
    base = __ldg(a + base + half) < v ? base + half : base;
    n -= half;
  }
  float at = __ldg(a + base);
  if (at < v) at = __ldg(a + ++base);
  out[t] = base < N && at == v ? (float)base : -1.0f;
}

__global__ void fill(float* keys, float* q) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  keys[i] = (float)i;
  q[i] = (float)((unsigned long long)i * 2654435761ull % N) + (i % 2 ? 0.5f : 0.0f);
}

template <class K>
void time(const char* what, K kernel, const float* q, const float* a, float* out,
          int blocks = N / 256, int threads = 256) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  float ms[11];
  for (int r = -1; r < 11; r++) {
    cudaEventRecord(e0);
    kernel<<<blocks, threads>>>(q, a, out);
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    if (r >= 0) cudaEventElapsedTime(&ms[r], e0, e1);
  }
  std::sort(ms, ms + 11);
  static float host[N];
  cudaMemcpy(host, out, sizeof(float) * N, cudaMemcpyDeviceToHost);
  double check = 0;
  for (int i = 0; i < N; i += 97) check += host[i];
  printf("%-34s %7.3f ms  checksum %.0f\n", what, ms[5], check);
}

int main() {
  float *keys, *q, *out;
  cudaMalloc(&keys, N * 4); cudaMalloc(&q, N * 4); cudaMalloc(&out, N * 4);
  fill<<<N / 256, 256>>>(keys, q);
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (int rep = 0; rep < 2; rep++) {
    time("seed, clamped, __ldg", seed<clamped, true>, q, keys, out);
    time("seed, clamped, plain loads", seed<clamped, false>, q, keys, out);
    time("seed, unclamped, __ldg", seed<unclamped, true>, q, keys, out);
    time("seed on int indices, __ldg", seed_int, q, keys, out);
    time("torch's lower_bound", lower_bound, q, keys, out);
    time("torch's lower_bound, blocks of 512", lower_bound, q, keys, out, N / 512, 512);
    time("branch-free lower bound", branch_free, q, keys, out);
    time("torch's, one wave of 4 x 512 per SM", lower_bound_strided, q, keys, out, sms * 4, 512);
    time("torch's, one wave of 8 x 256 per SM", lower_bound_strided, q, keys, out, sms * 8, 256);
  }
  return 0;
}
