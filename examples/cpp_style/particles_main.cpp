// C++-API style with a struct: brook::Stream<particle> written by hand, the kernel from
// particles.h (brcc particles.br).
#include "particles.h"
#include <cstdio>
int main() {
    unsigned int n = 2;
    particle in[2], out[2];
    in[0].position = float3(1, 2, 3); in[0].mass = 1;
    in[1].position = float3(4, 5, 6); in[1].mass = 2;
    box b; b.lo = float2(10, 20); b.hi = float2(30, 40);
    brook::Stream<particle> s(1, &n), t(1, &n);
    s.read(in);
    move(s, b, t);
    t.write(out);
    std::printf("%g %g %g %g | %g\n", out[0].position.x, out[0].position.y, out[0].position.z, out[0].mass, out[1].mass);
    return 0;
}
