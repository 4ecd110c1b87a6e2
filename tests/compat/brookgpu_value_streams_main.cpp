// The host half of brookgpu_value_streams.
#include <stdio.h>
#include <string.h>
#include "brook/brook.hpp"

extern void benchmark(::brook::stream out, ::brook::stream in);
extern void total(::brook::stream v, float4& s);

int main(void)
{
    using namespace brook;
    const char** targets = brook::runtimeTargets();
    bool haveCPU = false;
    for (const char** t = targets; *t; ++t)
        if (!strncmp(*t, "cpu", 3)) haveCPU = true;
    printf("cpu among the runtime targets: %s\n", haveCPU ? "yes" : "no");
    {
        stream out = stream::create<float4>(32, 32);
        stream in = stream::create<float4>(32, 32);
        float4* data = (float4*)brmalloc(sizeof(float4) * 32 * 32);
        for (int i = 0; i < 32 * 32; i++) data[i] = float4((float)i, 1.0f, -1.0f, 0.0f);
        brook::int64 start = brook::microseconds();
        in.read(data);
        brook::finish();
        benchmark(out, in);
        brook::finish();
        out.write(data);
        brook::int64 end = brook::microseconds();
        float4 sum;
        total(out, sum);
        printf("%g %g %g %g | sum %g %g %g %g | clock runs forward: %s\n", data[7].x, data[7].y,
               data[7].z, data[7].w, sum.x, sum.y, sum.z, sum.w, end >= start ? "yes" : "no");
        brfree(data);
    }
    finalize();
    return 0;
}
