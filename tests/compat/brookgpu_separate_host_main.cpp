// The host half of brookgpu_separate_host: plain C++ calling the kernels through the
// BrookGPU-style header, with `brook::stream`s and a `brook::iter`.
#include <brook/brook.hpp>
#include <iostream>
#include "brookgpu_separate_host_types.brh"
#include "brookgpu_separate_host.hpp"

int main(int argc, char* argv[]) {
    using namespace brook;
    const int size = 4;
    stream inStream = stream::create<float>(size, size);
    stream outStream = stream::create<float>(size, size);
    float data[16], back[16];
    for (int i = 0; i < 16; i++) data[i] = (float)i;
    inStream.read(data);
    krn_CopyStream(inStream, outStream);
    krn_Scale(outStream, 2.0f, inStream);
    inStream.write(back);
    std::cout << back[0] << " " << back[15] << std::endl;
    float total = 0;
    krn_Sum(inStream, total);
    std::cout << "sum " << total << std::endl;
    stream rows = stream::create<float>(size, 1);
    krn_Sum(inStream, rows);
    float rv[4];
    rows.write(rv);
    std::cout << "rows " << rv[0] << " " << rv[3] << std::endl;
    iter it(::brook::__BRTFLOAT2, 2, 2, -1, 0.0f, 0.0f, 2.0f, 2.0f, -1);
    stream coords = stream::create<float2>(2, 2);
    krn_Coords(it, coords);
    float2 cv[4];
    coords.write(cv);
    std::cout << "coords " << cv[3].x << "," << cv[3].y << std::endl;
    stream table = stream::create<float>(8);
    float tv[8] = {10, 11, 12, 13, 14, 15, 16, 17};
    table.read(tv);
    stream where = stream::create<float2>(2);
    float2 wv[2] = {float2(3, 0), float2(6, 0)};
    where.read(wv);
    stream picked = stream::create<float>(2);
    krn_Pick(table, where, picked);
    float pv[2];
    picked.write(pv);
    std::cout << "picked " << pv[0] << " " << pv[1] << std::endl;
    stream particles = stream::create<Particle>(3);
    stream moved = stream::create<Particle>(3);
    Particle ps[3];
    for (int i = 0; i < 3; i++) {
        ps[i].pos = float3((float)i, 1.0f, 2.0f);
        ps[i].mass = 1.0f + i;
    }
    particles.read(ps);
    krn_Move(particles, 0.5f, moved);
    moved.write(ps);
    std::cout << "moved " << ps[2].pos.x << " " << ps[2].pos.y << " " << ps[2].mass << std::endl;
    return 0;
}
