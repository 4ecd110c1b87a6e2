// The host half of brookgpu_raytrace: its own copies of the structs (as the ray tracer's main.h
// had), the kernels declared as BrookGPU's brcc defined them.
#include <brook/brook.hpp>
#include <cstdio>
typedef struct Ray_t { float3 o; float3 d; } Ray;
typedef struct Tri_t { float3 v0; float3 v1; float3 v2; } Triangle;
typedef float4 Hit;
void krnGenRays(const __BRTIter& film, const float3 eye, ::brook::stream& r);
void krnIntersect(const ::brook::stream& ray, const ::brook::stream& tris, const ::brook::stream& trilist, const float which, ::brook::stream& h);
int main() {
    using namespace brook;
    iter film(::brook::__BRTFLOAT2, 4, 4, -1, -0.5f, -0.5f, 0.5f, 0.5f, -1);
    stream rays = stream::create<Ray>(4, 4);
    krnGenRays(film, float3(0, 0, -5), rays);
    Triangle tv[2];
    tv[0].v0 = float3(-1, -1, 0); tv[0].v1 = float3(1, -1, 0); tv[0].v2 = float3(0, 1, 0);
    tv[1].v0 = float3(-9, -9, 3); tv[1].v1 = float3(-8, -9, 3); tv[1].v2 = float3(-9, -8, 3);
    stream tris = stream::create<Triangle>(2);
    tris.read(tv);
    float lv[2] = {1, 0};
    stream trilist = stream::create<float>(2);
    trilist.read(lv);
    stream hits = stream::create<Hit>(4, 4);
    krnIntersect(rays, tris, trilist, 1.0f, hits);
    Hit hv[16];
    hits.write(hv);
    int n = 0;
    for (int i = 0; i < 16; i++) n += hv[i].x > 0;
    printf("hits %d of 16; first t %.3f idx %g\n", n, hv[5].x, hv[5].w);
    return 0;
}
