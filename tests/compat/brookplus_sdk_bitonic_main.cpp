// The host half of brookplus_sdk_bitonic: the SDK samples' C++ (a class with run(), streams
// in a block, ping-pong between two streams, errors checked after the last write).
#include "brookgenfiles/brookplus_sdk_bitonic.h"
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <vector>

class BitonicSort {
  public:
    explicit BitonicSort(unsigned int length) : _length(length), _array(length) {
        unsigned int seed = 12345;
        for (unsigned int i = 0; i < _length; ++i) {
            seed = seed * 1103515245u + 12345u;
            _array[i] = (float)((seed >> 8) % 100000) / 100.0f - 500.0f;
        }
    }
    int run();
    bool verify() const {
        std::vector<float> expected(_array0);
        std::sort(expected.begin(), expected.end());
        return expected == _array;
    }
    float at(unsigned int i) const { return _array[i]; }

  private:
    unsigned int _length;
    std::vector<float> _array;
    std::vector<float> _array0;
};

int BitonicSort::run() {
    int retVal = 0;
    _array0 = _array;
    // Brook code block
    {
        unsigned int dim[] = {_length};
        ::brook::Stream<float> stream0(1, dim);
        ::brook::Stream<float> stream1(1, dim);
        ::brook::Stream<float>* buffers[2] = {&stream0, &stream1};
        int current = 0;
        stream0.read(&_array[0]);
        unsigned int numStages = 0;
        for (unsigned int temp = _length; temp > 1; temp >>= 1) ++numStages;
        for (unsigned int stage = 1; stage <= numStages; ++stage) {
            float stageWidth = (float)(1 << stage);
            for (unsigned int pass = 0; pass < stage; ++pass) {
                float offset = (float)(1 << (stage - pass - 1));
                bitonic(*buffers[current], *buffers[1 - current], stageWidth, offset,
                        2.0f * offset);
                current = 1 - current;
            }
        }
        buffers[current]->write(&_array[0]);
        if (buffers[current]->error()) {
            std::cout << "Error occurred" << std::endl;
            std::cout << buffers[current]->errorLog() << std::endl;
            retVal = -1;
        }
    }
    return retVal;
}

int main(int argc, char** argv) {
    BitonicSort sorter(4096);
    if (sorter.run() != 0) return 1;
    std::cout << "4096 floats sorted: " << (sorter.verify() ? "same as std::sort" : "WRONG")
              << std::endl;
    std::cout << "first " << sorter.at(0) << " last " << sorter.at(4095) << std::endl;
    return 0;
}
