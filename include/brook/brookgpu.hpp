// BrookGPU's C++ runtime API (its brt.hpp), for hand-written .cpp files of BrookGPU programs:
// untyped `brook::stream` and `brook::iter` objects made as BrookGPU's generated code made them
//     ::brook::stream a(::brook::getStreamType((float*)0), 10, 10, -1);
//     ::brook::stream b = ::brook::stream::create<float4>(height, width);
//     ::brook::iter it(::brook::__BRTFLOAT2, 4, 4, -1, 0.0f, 0.0f, 4.0f, 4.0f, -1);
// (dimensions slowest first, as declared in Brook), `brook::initialize(runtime)` and
// `finalize()`, and `BRTALIGNED`. A `brook::stream` shares its stream with the typed
// `brook::Stream<T>` objects it converts to and from, so kernel objects take it directly.
// brook.hpp includes this header; `brt.hpp` is its BrookGPU name.
#ifndef BROOK_BROOKGPU_HPP
#define BROOK_BROOKGPU_HPP

#include <stdarg.h>

#include <chrono>
#include <cstring>

#if defined(_MSC_VER)
#define BRTALIGNED __declspec(align(16))
#else
#define BRTALIGNED __attribute__((aligned(16)))
#endif

namespace brook {

/// BrookGPU's iterator stream:
/// `iter(__BRTFLOAT2, d0, d1, -1, start.x, start.y, end.x, end.y, -1)`.
class iter {
  public:
    iter(StreamType type, ...) : handle_(NULL) {
        unsigned int x_first[4] = {0, 0, 0, 0};
        float start[4] = {0, 0, 0, 0};
        float end[4] = {0, 0, 0, 0};
        unsigned int width = detail::float_width(type.name);
        va_list list;
        va_start(list, type);
        unsigned int rank = detail::varargs_dims(list, x_first);
        for (unsigned int i = 0; rank && i < width; i++)
            start[i] = static_cast<float>(va_arg(list, double));
        for (unsigned int i = 0; rank && i < width; i++)
            end[i] = static_cast<float>(va_arg(list, double));
        va_end(list);
        handle_ = brk_iter_new(type.name, rank, rank ? x_first : NULL, start, end);
    }
    iter(const iter& other) : handle_(brk_iter_share(other.handle_)) {}
    iter& operator=(const iter& other) {
        if (this != &other) {
            BrkIter* shared = brk_iter_share(other.handle_);
            brk_iter_free(handle_);
            handle_ = shared;
        }
        return *this;
    }
    ~iter() { brk_iter_free(handle_); }
    const BrkIter* handle() const { return handle_; }

  private:
    BrkIter* handle_;
};

namespace detail {
template <class T> Input<T>::Input(const stream& s) {
    BrkArg a = {0, s.handle(), 0, 0, 0};
    arg = a;
}
template <class T> Input<T>::Input(const iter& i) {
    BrkArg a = {3, 0, 0, 0, i.handle()};
    arg = a;
}
template <class T, unsigned D0, unsigned D1, unsigned D2, unsigned D3>
Gather<T, D0, D1, D2, D3>::Gather(const ::brook::stream& s) : held(Stream<T>(s)) {
    point();
}
} // namespace detail

inline void streamRead(stream s, const void* ptr) { s.read(ptr); }
inline void streamWrite(stream s, void* ptr) { s.write(ptr); }
inline void streamSwap(stream& a, stream& b) { a.swap(b); }

/// BrookGPU `brook::initialize(runtime)`: the device type the program runs on ("cpu"; "cuda",
/// or BrookGPU's GPU runtimes "ogl", "dx9", "cal", "gpu": the first NVIDIA GPU, else the CPU),
/// unless BRT_RUNTIME chooses. `context` is accepted and unused.
inline void initialize(const char* runtime, void* /*context*/ = NULL) {
    if (!runtime || std::strcmp(runtime, "cpu") == 0) {
        detail::select_targets("cpu");
        return;
    }
    detail::select_targets("cuda,cpu");
}
/// BrookGPU `brook::finalize()`: nothing to release early (streams free themselves).
inline void finalize() {}

/// BrookGPU `brook::finish()`: waits until every device has done the work queued on it (for
/// timing a loop of launches).
inline void finish() { brk_finish(); }

/// BrookGPU's 64-bit integer and clock: `brook::microseconds()` is a monotonic time in
/// microseconds (differences time code).
typedef long long int64;
inline int64 microseconds() {
    return (int64)std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/// BrookGPU `brook::runtimeTargets()`: the runtimes `brook::initialize` can use on this machine,
/// ending in NULL: "cpu", then "cuda" where a GPU is present.
inline const char** runtimeTargets() {
    static const char* targets[3] = {"cpu", NULL, NULL};
    if (brk_devices("cuda", NULL, 0) > 0) {
        targets[1] = "cuda";
    }
    return targets;
}

} // namespace brook

/// BrookGPU's C name for `brook::runtimeTargets()` (its runtime header declared both).
inline const char** brruntimes() { return ::brook::runtimeTargets(); }

/// The iterator parameter type BrookGPU's brcc wrote in kernel function signatures
/// (`const __BRTIter& it`), for headers that declare them by hand.
typedef ::brook::iter __BRTIter;

#endif
