// Exploration of column-sum kernel shapes on one GPU (not part of the product): which
// structure reads an 8192x8192 float matrix column-wise closest to copy bandwidth?
// Build and run: nvcc -O3 -arch=native column_sums.cu -o cs && ./cs
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

static const int R = 8192, C = 8192;

__device__ __forceinline__ float4 add4(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

template <bool NC>
__device__ __forceinline__ float4 load(const float4 *p) {
  if (NC) return __ldg(p);
  return *p;
}

// The sum of P rows of 4 columns from `p` (rows C/4 float4s apart), 8 rows loaded at once.
template <int P, bool NC>
__device__ __forceinline__ float4 rows_sum(const float4 *p) {
  float4 acc = make_float4(0, 0, 0, 0);
#pragma unroll
  for (int b = 0; b < P; b += 8) {
    float4 v[8];
#pragma unroll
    for (int k = 0; k < 8; k++) v[k] = load<NC>(p + (long)(b + k) * (C / 4));
    float4 s = add4(add4(add4(v[0], v[1]), add4(v[2], v[3])), add4(add4(v[4], v[5]), add4(v[6], v[7])));
    acc = add4(acc, s);
  }
  return acc;
}

// A: a thread per 4 columns and P rows; g -> (quad = g % quads, piece = g / quads).
// Partial sums go to part[piece][column].
template <int P, bool NC>
__global__ void quad_piece(const float *m, float *part) {
  long g = (long)blockIdx.x * blockDim.x + threadIdx.x;
  int quads = C / 4;
  int q = g % quads, j = g / quads;
  if (j >= R / P) return;
  const float4 *p = (const float4 *)(m + (long)j * P * C) + q;
  float4 acc = rows_sum<P, NC>(p);
  ((float4 *)(part + (long)j * C))[q] = acc;
}

// B: a block of W warps covers 32 quads (512 bytes of a row) and W*P rows: warp w reduces
// P rows, the W results combine in shared memory. Partial sums to part[blockrow][column].
template <int P, int W>
__global__ void block_combine(const float *m, float *part) {
  __shared__ float4 sh[W][32];
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  int strips = C / 128;
  int strip = blockIdx.x % strips, brow = blockIdx.x / strips;
  int q = strip * 32 + lane;
  long row0 = (long)brow * W * P + w * P;
  const float4 *p = (const float4 *)(m + row0 * C) + q;
  float4 acc = rows_sum<P, true>(p);
  sh[w][lane] = acc;
  __syncthreads();
  if (w == 0) {
    float4 t = sh[0][lane];
    for (int k = 1; k < W; k++) t = add4(t, sh[k][lane]);
    ((float4 *)(part + (long)brow * C))[q] = t;
  }
}

// C: like A with a thread per 8 columns (two 16-byte loads per row).
template <int P>
__global__ void octo_piece(const float *m, float *part) {
  long g = (long)blockIdx.x * blockDim.x + threadIdx.x;
  int units = C / 8;
  int q = g % units, j = g / units;
  if (j >= R / P) return;
  const float4 *p = (const float4 *)(m + (long)j * P * C) + 2 * q;
  float4 a0 = make_float4(0, 0, 0, 0), a1 = a0;
#pragma unroll
  for (int b = 0; b < P; b += 4) {
    float4 v[8];
#pragma unroll
    for (int k = 0; k < 4; k++) {
      v[2 * k] = __ldg(p + (long)(b + k) * (C / 4));
      v[2 * k + 1] = __ldg(p + (long)(b + k) * (C / 4) + 1);
    }
    a0 = add4(a0, add4(add4(v[0], v[2]), add4(v[4], v[6])));
    a1 = add4(a1, add4(add4(v[1], v[3]), add4(v[5], v[7])));
  }
  ((float4 *)(part + (long)j * C))[2 * q] = a0;
  ((float4 *)(part + (long)j * C))[2 * q + 1] = a1;
}

// D: like A with a grid-stride loop over (quad, piece) items on a grid of resident blocks.
template <int P>
__global__ void quad_persistent(const float *m, float *part, long items) {
  int quads = C / 4;
  for (long g = (long)blockIdx.x * blockDim.x + threadIdx.x; g < items; g += (long)gridDim.x * blockDim.x) {
    int q = g % quads, j = g / quads;
    const float4 *p = (const float4 *)(m + (long)j * P * C) + q;
    float4 acc = rows_sum<P, true>(p);
    ((float4 *)(part + (long)j * C))[q] = acc;
  }
}

// Second pass: a thread per column sums `pieces` partial rows.
__global__ void finish(const float *part, float *out, int pieces) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C) return;
  float s = 0;
  for (int j = 0; j < pieces; j++) s += part[(long)j * C + c];
  out[c] = s;
}

__global__ void copy_kernel(const float4 *a, float4 *b, long n) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i];
}

struct Timer {
  cudaEvent_t a, b;
  Timer() { CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b)); }
  template <class F> float ms(F f, int reps = 20) {
    f();
    CHECK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int r = 0; r < reps; r++) {
      CHECK(cudaEventRecord(a));
      f();
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float x; CHECK(cudaEventElapsedTime(&x, a, b)); t.push_back(x);
    }
    std::sort(t.begin(), t.end());
    CHECK(cudaGetLastError());
    return t[reps / 2];
  }
};

#include <algorithm>
static float *M, *part, *out;
static std::vector<double> ref;

static void check(const char *what) {
  std::vector<float> h(C);
  CHECK(cudaMemcpy(h.data(), out, C * 4, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int c = 0; c < C; c++) worst = std::max(worst, fabs(h[c] - ref[c]) / (fabs(ref[c]) + 1));
  if (worst > 1e-3) printf("%s WRONG: rel err %g\n", what, worst);
}

static void row(const char *what, float pass1, float total) {
  double bytes = (double)R * C * 4;
  printf("%-34s pass1 %7.4f ms (%5.2f TB/s)  total %7.4f ms (%5.2f TB/s)\n", what, pass1,
         bytes / pass1 / 1e9, total, bytes / total / 1e9);
}

template <class K1>
static void run(const char *what, K1 k1, int pieces) {
  Timer t;
  CHECK(cudaMemset(out, 0xff, C * 4));
  float p1 = t.ms(k1);
  float tot = t.ms([&] { k1(); finish<<<C / 256, 256>>>(part, out, pieces); });
  check(what);
  row(what, p1, tot);
}

int main() {
  CHECK(cudaMalloc(&M, (size_t)R * C * 4));
  CHECK(cudaMalloc(&part, (size_t)R * C * 4 / 8));
  CHECK(cudaMalloc(&out, C * 4));
  std::vector<float> h((size_t)R * C);
  ref.assign(C, 0);
  srand(7);
  for (size_t i = 0; i < h.size(); i++) { h[i] = (rand() % 2001 - 1000) / 1000.0f; ref[i % C] += h[i]; }
  CHECK(cudaMemcpy(M, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  int sms; CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  {
    Timer t; float *dst; CHECK(cudaMalloc(&dst, (size_t)R * C * 4));
    long n = (long)R * C / 4;
    float ms = t.ms([&] { copy_kernel<<<(n + 255) / 256, 256>>>((float4 *)M, (float4 *)dst, n); });
    printf("copy 256 MiB: %.4f ms (%.2f TB/s read+write)\n", ms, 2.0 * R * C * 4 / ms / 1e9);
    CHECK(cudaFree(dst));
  }
#define A(P, B, NC) run("A quad P=" #P " block=" #B " nc=" #NC, [&] { \
    long th = (long)(C / 4) * (R / P); quad_piece<P, NC><<<(th + B - 1) / B, B>>>(M, part); }, R / P)
  A(16, 256, true); A(32, 256, true); A(64, 256, true); A(128, 256, true); A(256, 256, true); A(512, 256, true);
  A(256, 128, true); A(512, 128, true); A(256, 512, true); A(128, 128, true);
  A(64, 256, false); A(32, 128, true); A(64, 128, true); A(32, 512, true); A(64, 512, true);
#define BC(P, W) run("B block-combine P=" #P " W=" #W, [&] { \
    block_combine<P, W><<<(C / 128) * (R / (P * W)), 32 * W>>>(M, part); }, R / (P * W))
  BC(8, 8); BC(16, 8); BC(32, 8); BC(64, 8); BC(128, 8); BC(64, 4); BC(128, 4); BC(256, 4); BC(16, 4); BC(32, 4); BC(8, 16); BC(16, 16);
#define O(P) run("C octo P=" #P, [&] { \
    long th = (long)(C / 8) * (R / P); octo_piece<P><<<(th + 255) / 256, 256>>>(M, part); }, R / P)
  O(16); O(32); O(64);
#define D(P, PER_SM) run("D persistent P=" #P " blocks/SM=" #PER_SM, [&] { \
    long items = (long)(C / 4) * (R / P); quad_persistent<P><<<sms * PER_SM, 256>>>(M, part, items); }, R / P)
  D(16, 4); D(32, 4); D(128, 2); D(256, 2); D(128, 3); D(16, 8); D(32, 8); D(64, 8);
  return 0;
}
