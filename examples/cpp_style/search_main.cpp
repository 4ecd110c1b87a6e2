// A C++-API-style program (seed 001 section 1.10): the host code is plain C++, the kernel is in
// search.br, and `brcc search.br` writes search.h with it as a callable object.
//   brcc search.br && c++ -I ../../include -I . search_main.cpp ../../target/release/libbrook_capi.a \
//       -lpthread -ldl -lm -lrt -lutil && ./a.out
#include "search.h"
#include <cstdio>

int main() {
    unsigned int length = 16, count = 4;
    float sorted[16], keys[4] = {4, 5, 28, 30}, found[4];
    for (int i = 0; i < 16; i++) sorted[i] = 2.0f * i;
    brook::Stream<float> array(1, &length), searchKeys(1, &count), indices(1, &count);
    array.read(sorted);
    searchKeys.read(keys);
    search(searchKeys, array, indices, (float)length, 4);
    indices.write(found);
    if (indices.error()) {
        std::printf("error: %s\n", indices.errorLog());
        return 1;
    }
    for (int i = 0; i < 4; i++) std::printf("%g at %g\n", keys[i], found[i]);
    return 0;
}
