// The driver's floor for launch overhead on this machine (not part of the product): 2000
// launches of an empty one-parameter kernel through cuLaunchKernel, then one wait.
// Build and run: nvcc -O3 -arch=native launch_floor.cu -lcuda -o lf && ./lf
#include <chrono>
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void nothing(float *r) { if (threadIdx.x == 0 && blockIdx.x == 0) r[0] = 1.0f; }

int main() {
  float *r;
  cudaMalloc(&r, 4);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  void *args[] = {&r};
  for (int rep = 0; rep < 5; rep++) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 2000; i++) cudaLaunchKernel((void *)nothing, 1, 32, args, 0, s);
    auto t1 = std::chrono::steady_clock::now();
    cudaStreamSynchronize(s);
    auto t2 = std::chrono::steady_clock::now();
    printf("launch floor: calls %.2f us each, to finished %.2f us each\n",
           std::chrono::duration<double, std::micro>(t1 - t0).count() / 2000,
           std::chrono::duration<double, std::micro>(t2 - t0).count() / 2000);
  }
  return 0;
}
