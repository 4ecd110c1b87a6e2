// The hand-written half of brookgpu_runtime_api: BrookGPU's runtime API as its apps used it.
#include <brt.hpp>
#include <stdio.h>

void run_saxpy(float a, ::brook::stream x, ::brook::stream y, ::brook::stream result);
float run_sum(::brook::stream v);
void run_ramp(::brook::stream value);

typedef struct BRTALIGNED {
    float4 position;
} Aligned;

int main(int argc, char** argv)
{
    brook::initialize(argc > 1 ? argv[1] : "cpu");
    float4 xs[4], ys[4], out[4];
    for (int i = 0; i < 4; i++) {
        xs[i] = float4((float)i, 1.0f, 2.0f, 3.0f);
        ys[i] = float4(10.0f, 20.0f, 30.0f, (float)-i);
    }
    ::brook::stream x(::brook::getStreamType((float4*)0), 4, -1);
    ::brook::stream y = ::brook::stream::create<float4>(4);
    ::brook::stream result = ::brook::stream::create<float4>(4);
    streamRead(x, xs);
    y.read(ys);
    run_saxpy(2.0f, x, y, result);
    streamWrite(result, out);
    for (int i = 0; i < 4; i++)
        printf("saxpy[%d] = %g %g %g %g\n", i, out[i].x, out[i].y, out[i].z, out[i].w);

    float values[2][3] = {{1, 2, 3}, {4, 5, 6}};
    ::brook::stream v(::brook::getStreamType((float*)0), 2, 3, -1);
    v.read(values);
    printf("sum = %g (rank %u, %u x %u)\n", run_sum(v), v.rank(), v.dim(1), v.dim(0));

    ::brook::stream ramp = ::brook::stream::create<float>(2, 3);
    run_ramp(ramp);
    float ramped[6];
    ramp.write(ramped);
    printf("ramp = %g %g %g %g %g %g\n", ramped[0], ramped[1], ramped[2], ramped[3], ramped[4], ramped[5]);

    ::brook::iter it(::brook::__BRTFLOAT, 4, -1, 0.0f, 8.0f, -1);
    ::brook::stream a = ::brook::stream::create<float>(2), b = ::brook::stream::create<float>(2);
    float one[2] = {1, 1}, two[2] = {2, 2};
    a.read(one);
    b.read(two);
    ::brook::streamSwap(a, b);
    a.write(one);
    printf("swapped: %g, iterator made: %s, aligned: %d\n", one[0], it.handle() ? "yes" : "no",
           (int)(sizeof(Aligned) % 16));
    ::brook::stream bad(::brook::getStreamType((float*)0), -1);
    printf("a stream without dimensions: error %d\n", (int)bad.error());
    brook::finalize();
    return 0;
}
