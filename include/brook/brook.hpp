// The Brook+ C++ API (seed 001 sections 1.7-1.10) over Brook's runtime (the C ABI of the
// `brook-capi` crate, linked as libbrook_capi.a). brcc's generated C++ includes this header;
// programs may use it directly.
//
// Dimensions and positions are x-first (fastest axis first), as in Brook+:
//     unsigned int dims[2] = {width, height};
//     brook::Stream<float> s(2, dims);
// Errors never throw: they are recorded on the stream (error(), errorLog()).
// BrookGPU's runtime API (brook::stream, brook::iter, initialize) is in brookgpu.hpp, included
// at the end.
#ifndef BROOK_BROOK_HPP
#define BROOK_BROOK_HPP

// The C headers BrookGPU's brt.hpp and Brook+'s brook.h brought into every program.
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <type_traits>
#include <vector>

// The Brook scalar type names, usable in host code (struct fields, host arrays).
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;

#include "brook_c.h"

extern "C" {
/// Defined by the C++ that `brcc build` writes for the `.loom` files it is given: embeds them
/// (brk_loom_embed). Weak: a program without embedded files does not define it.
__attribute__((weak)) void brk_loom_embed_files(void);
}

namespace brook {

/// Stream error codes (seed 001 section 1.7.1).
enum BError {
    BR_NO_ERROR = 0,
    BR_ERROR_DECLARATION,
    BR_ERROR_READ,
    BR_ERROR_WRITE,
    BR_ERROR_KERNEL,
    BR_ERROR_DOMAIN,
    BR_ERROR_INVALID_PARAMATER,
    BR_ERROR_NOT_SUPPORTED
};

// Host vector types with Brook's layout: .x .y .z .w, a constructor from components, and one
// that fills every component from one value.
#define BROOK_VECTOR2(T, N)                                                                    \
    struct N {                                                                                 \
        T x, y;                                                                                \
        N() : x(0), y(0) {}                                                                    \
        explicit N(T v) : x(v), y(v) {}                                                        \
        N(T x_, T y_) : x(x_), y(y_) {}                                                        \
    };
#define BROOK_VECTOR3(T, N)                                                                    \
    struct N {                                                                                 \
        T x, y, z;                                                                             \
        N() : x(0), y(0), z(0) {}                                                              \
        explicit N(T v) : x(v), y(v), z(v) {}                                                  \
        N(T x_, T y_, T z_) : x(x_), y(y_), z(z_) {}                                           \
    };
#define BROOK_VECTOR4(T, N)                                                                    \
    struct N {                                                                                 \
        T x, y, z, w;                                                                          \
        N() : x(0), y(0), z(0), w(0) {}                                                        \
        explicit N(T v) : x(v), y(v), z(v), w(v) {}                                            \
        N(T x_, T y_, T z_, T w_) : x(x_), y(y_), z(z_), w(w_) {}                              \
    };
#define BROOK_VECTORS(T, P)                                                                    \
    BROOK_VECTOR2(T, P##2) BROOK_VECTOR3(T, P##3) BROOK_VECTOR4(T, P##4)

BROOK_VECTORS(float, float)
BROOK_VECTORS(double, double)
BROOK_VECTORS(int32_t, int)
BROOK_VECTORS(uint32_t, uint)
BROOK_VECTORS(int8_t, char)
BROOK_VECTORS(uint8_t, uchar)
BROOK_VECTORS(int16_t, short)
BROOK_VECTORS(uint16_t, ushort)

namespace detail {
/// BrookGPU's unsigned normalized storage: an integer is the stored value itself; a float `v`
/// stores `(T)(clamp(v, 0, 1) * MAX + (ROUND ? 0.5 : 0))` (NaN stores 0), as a kernel's
/// output stores it.
template <class T, int MAX, int ROUND> struct Unorm {
    static T of(float v) {
        float c = v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f;
        return static_cast<T>(c * static_cast<float>(MAX) + (ROUND ? 0.5f : 0.0f));
    }
    static T of(double v) { return of(static_cast<float>(v)); }
    template <class I> static T of(I stored) { return static_cast<T>(stored); }
};
} // namespace detail

// BrookGPU's `fixed` (one unsigned byte a component) and `shortfixed` (one unsigned short):
// stored unsigned normalized, read by kernels as `stored / max`. `fixed(0.5f)` stores 127,
// `fixed((unsigned char)200)` and `fixed(200)` store 200; `.x .y .z .w` are the stored values.
#define BROOK_UNORM_OF(T, MAX, ROUND, v) ::brook::detail::Unorm<T, MAX, ROUND>::of(v)
#define BROOK_UNORM_TYPES(T, N, MAX, ROUND)                                                   \
    struct N {                                                                                 \
        T x;                                                                                   \
        N() : x(0) {}                                                                          \
        template <class A> N(A v) : x(BROOK_UNORM_OF(T, MAX, ROUND, v)) {}                     \
        float value() const { return static_cast<float>(x) / static_cast<float>(MAX); }        \
    };                                                                                         \
    struct N##2 {                                                                              \
        T x, y;                                                                                \
        N##2() : x(0), y(0) {}                                                                 \
        template <class A> explicit N##2(A v)                                                  \
            : x(BROOK_UNORM_OF(T, MAX, ROUND, v)), y(x) {}                                     \
        template <class A, class B>                                                            \
        N##2(A x_, B y_) : x(BROOK_UNORM_OF(T, MAX, ROUND, x_)), y(BROOK_UNORM_OF(T, MAX, ROUND, y_)) {} \
    };                                                                                         \
    struct N##3 {                                                                              \
        T x, y, z;                                                                             \
        N##3() : x(0), y(0), z(0) {}                                                           \
        template <class A> explicit N##3(A v)                                                  \
            : x(BROOK_UNORM_OF(T, MAX, ROUND, v)), y(x), z(x) {}                               \
        template <class A, class B, class C>                                                   \
        N##3(A x_, B y_, C z_)                                                                 \
            : x(BROOK_UNORM_OF(T, MAX, ROUND, x_)), y(BROOK_UNORM_OF(T, MAX, ROUND, y_)),      \
              z(BROOK_UNORM_OF(T, MAX, ROUND, z_)) {}                                          \
    };                                                                                         \
    struct N##4 {                                                                              \
        T x, y, z, w;                                                                          \
        N##4() : x(0), y(0), z(0), w(0) {}                                                     \
        template <class A> explicit N##4(A v)                                                  \
            : x(BROOK_UNORM_OF(T, MAX, ROUND, v)), y(x), z(x), w(x) {}                         \
        template <class A, class B, class C, class D>                                          \
        N##4(A x_, B y_, C z_, D w_)                                                           \
            : x(BROOK_UNORM_OF(T, MAX, ROUND, x_)), y(BROOK_UNORM_OF(T, MAX, ROUND, y_)),      \
              z(BROOK_UNORM_OF(T, MAX, ROUND, z_)), w(BROOK_UNORM_OF(T, MAX, ROUND, w_)) {}    \
    };
BROOK_UNORM_TYPES(uint8_t, fixed, 255, 0)
BROOK_UNORM_TYPES(uint16_t, shortfixed, 65535, 1)

namespace detail {
/// The type whose bytes a stream of `T` holds: `T`, or for the fixed types the unsigned
/// integers they are stored as (a `fixed4` stream goes where a `uchar4` one is taken).
template <class T> struct Storage {
    typedef T type;
};
#define BROOK_STORAGE(T, S)                                                                    \
    template <> struct Storage<T> {                                                            \
        typedef S type;                                                                        \
    };
BROOK_STORAGE(fixed, uint8_t)
BROOK_STORAGE(fixed2, uchar2)
BROOK_STORAGE(fixed3, uchar3)
BROOK_STORAGE(fixed4, uchar4)
BROOK_STORAGE(shortfixed, uint16_t)
BROOK_STORAGE(shortfixed2, ushort2)
BROOK_STORAGE(shortfixed3, ushort3)
BROOK_STORAGE(shortfixed4, ushort4)
} // namespace detail

namespace detail {
/// The Brook name of a host element type. A struct of a `.br` file gets its `get` defined by
/// that file's generated C++ (and header), emitted even where unused, so a C++ file that sees
/// only the struct (a BrookGPU host: `stream::create<Particle>(n)`) links to it.
template <class T> struct TypeName {
    static const char* get();
};
#if defined(__GNUC__)
#define BROOK_EMITTED __attribute__((used))
#else
#define BROOK_EMITTED
#endif
#define BROOK_TYPE_NAME(T, NAME)                                                               \
    template <> struct TypeName<T> {                                                           \
        static const char* get() { return NAME; }                                              \
    };
#define BROOK_TYPE_NAMES(T, P, NAME)                                                           \
    BROOK_TYPE_NAME(T, NAME) BROOK_TYPE_NAME(P##2, NAME "2") BROOK_TYPE_NAME(P##3, NAME "3")     \
        BROOK_TYPE_NAME(P##4, NAME "4")
BROOK_TYPE_NAMES(float, float, "float")
BROOK_TYPE_NAMES(double, double, "double")
BROOK_TYPE_NAMES(int32_t, int, "int")
BROOK_TYPE_NAMES(uint32_t, uint, "uint")
BROOK_TYPE_NAMES(int8_t, char, "char")
BROOK_TYPE_NAME(char, "char")
BROOK_TYPE_NAMES(uint8_t, uchar, "uchar")
BROOK_TYPE_NAMES(int16_t, short, "short")
BROOK_TYPE_NAMES(uint16_t, ushort, "ushort")
// A fixed stream is stored as its bytes: a kernel's fixed parameter is a uchar one in the IR.
BROOK_TYPE_NAMES(fixed, fixed, "uchar")
BROOK_TYPE_NAMES(shortfixed, shortfixed, "ushort")
} // namespace detail

/// A device (seed 001 section 1.16): `getType()` is "cpu", "interp" or "cuda" ("group" for the
/// default device when `BRT_RUNTIME` names several, as `cuda:all`).
class Device {
  public:
    Device() : index_(0) {}
    explicit Device(unsigned int index) : index_(index) {}
    const char* getType() const { return brk_device_type(index_); }
    /// Interoperability bindings (DX): none in this implementation.
    const char* getBindings() const { return ""; }
    unsigned int index() const { return index_; }

  private:
    unsigned int index_;
};

namespace detail {
inline Device* devices_in(std::vector<Device>& into, const std::vector<uint32_t>& indices) {
    into.clear();
    for (size_t i = 0; i < indices.size(); i++) into.push_back(Device(indices[i]));
    return into.empty() ? NULL : &into[0];
}
} // namespace detail

/// The devices of a type ("all", "cpu", "interp", "cuda", "cal"); the array belongs to the
/// library and is valid until the next call on this thread.
inline Device* getDevices(const char* deviceType, unsigned int* count) {
    static thread_local std::vector<Device> found;
    std::vector<uint32_t> indices(brk_devices(deviceType, NULL, 0));
    uint32_t n = brk_devices(deviceType, indices.empty() ? NULL : &indices[0],
                             static_cast<uint32_t>(indices.size()));
    indices.resize(n < indices.size() ? n : indices.size());
    if (count) *count = static_cast<unsigned int>(indices.size());
    return detail::devices_in(found, indices);
}

/// Makes `devices` this thread's devices: streams declared and kernels launched afterwards
/// use the first. Returns the previous ones (and their number) when `oldDeviceCount` is given.
inline Device* useDevices(Device* devices, unsigned int count, unsigned int* oldDeviceCount) {
    static thread_local std::vector<Device> previous;
    std::vector<uint32_t> old(brk_thread_devices(NULL, 0));
    if (!old.empty()) brk_thread_devices(&old[0], static_cast<uint32_t>(old.size()));
    std::vector<uint32_t> chosen;
    for (unsigned int i = 0; devices && i < count; i++) chosen.push_back(devices[i].index());
    brk_use_devices(chosen.empty() ? NULL : &chosen[0], static_cast<uint32_t>(chosen.size()));
    if (!oldDeviceCount) return NULL;
    *oldDeviceCount = static_cast<unsigned int>(old.size());
    return detail::devices_in(previous, old);
}

/// A device group: `devices` used as one device. Streams declared on it (after
/// `useDevices(&group, 1, NULL)`) are split into blocks of rows, one per member, and each
/// launch runs on every member over its block, with the single device's results. `getType()`
/// is "group"; an invalid list gives a device whose `getType()` is "" (and a message on
/// stderr).
inline Device makeDeviceGroup(const Device* devices, unsigned int count) {
    std::vector<uint32_t> indices;
    for (unsigned int i = 0; devices && i < count; i++) indices.push_back(devices[i].index());
    return Device(brk_device_group(indices.empty() ? NULL : &indices[0],
                                   static_cast<uint32_t>(indices.size())));
}

/// The device a runtime spec names, as `BRT_RUNTIME` takes it: "cuda:all", "cpu:0+cuda:0",
/// or "mpi:cuda" (every rank's GPU of an MPI job, docs/GUIDE.md "Programs over MPI"). A spec
/// naming no device gives a device whose `getType()` is "" (and a message on stderr).
inline Device deviceFromSpec(const char* spec) { return Device(brk_device_from_spec(spec)); }

/// Tags the constructor brcc's generated code uses for `float a<10, 20>;` (dimensions as
/// declared, slowest first), with the declaration's `.br` file and line for error messages.
struct Declared {
    const char* file;
    unsigned line;
    Declared() : file(NULL), line(0) {}
    Declared(const char* file_, unsigned line_) : file(file_), line(line_) {}
};
static const Declared declared = Declared();

class iter; // BrookGPU's untyped iterator (brookgpu.hpp)
} // namespace brook

#include "untyped_stream.hpp"

namespace brook {

/// A stream of `T` on the calling thread's device (Brook+ `brook::Stream<T>`). Copies share
/// the stream, as Brook+ stream objects do. It is a BrookGPU `brook::stream` (its base), so it
/// goes wherever BrookGPU code takes `brook::stream&`.
template <class T> class Stream : public stream {
  public:
    /// The stream a BrookGPU `brook::stream` names (shared).
    Stream(const stream& untyped) : stream(untyped) {}
    /// A typed stream of another element type is not this one (a compile error, as before
    /// `Stream<T>` had the untyped base), unless both store the same bytes (`fixed4`, `uchar4`).
    template <class U>
    Stream(const Stream<U>&,
           typename std::enable_if<!std::is_same<typename detail::Storage<U>::type,
                                                 typename detail::Storage<T>::type>::value,
                                   int>::type = 0) = delete;
    /// A declaration's dimensions, slowest first (`float a<rows, columns>`).
    Stream(Declared at, std::initializer_list<unsigned int> slowest_first) {
        declare(at, detail::TypeName<T>::get(), slowest_first);
    }
    /// The same for an element type described for the runtime (a struct of the program:
    /// `"struct pair{a:float;b:float2}"`).
    Stream(Declared at, const char* description,
           std::initializer_list<unsigned int> slowest_first) {
        declare(at, description, slowest_first);
    }
    Stream(unsigned short rank, unsigned int* dimensions)
        : stream(brk_stream_new(detail::TypeName<T>::get(), rank, dimensions), Adopt()) {}
    /// The interoperability constructor: no interoperability type exists in this
    /// implementation, so the stream is made as usual and `setProperty` reports that.
    Stream(unsigned short rank, unsigned int* dimensions, const char* /*type*/)
        : stream(brk_stream_new(detail::TypeName<T>::get(), rank, dimensions), Adopt()) {}
    Stream(const Stream& other) : stream(other) {}
    Stream& operator=(const Stream& other) {
        stream::operator=(other);
        return *this;
    }

    void read(const void* ptr, const char* flags = NULL) { brk_stream_read(handle_, ptr, flags); }
    void write(void* ptr, const char* flags = NULL) const {
        brk_stream_write(handle_, ptr, flags);
    }
    void assign(Stream<T> source) { brk_stream_assign(handle_, source.handle_); }
    Stream<T> domain(unsigned int* start, unsigned int* end) const {
        return Stream<T>(brk_stream_domain(handle_, start, end));
    }
    /// Interoperability properties (DX): none exist here, so this records
    /// BR_ERROR_NOT_SUPPORTED on the stream.
    void setProperty(const char* name, void* /*value*/) { brk_stream_set_property(handle_, name); }
    bool isSync() { return brk_stream_is_sync(handle_) != 0; }
    bool finish() { return brk_stream_finish(handle_) != 0; }
    BError error() { return static_cast<BError>(brk_stream_error(handle_)); }
    const char* errorLog() { return brk_stream_error_log(handle_); }

    /// For generated code: the runtime's handle.
    BrkStream* handle() const { return handle_; }
    /// Exchanges the streams two objects name (BrookGPU `streamSwap`).
    void swap(Stream& other) { stream::swap(other); }
    unsigned int rank() const { return brk_stream_rank(handle_); }
    unsigned int dim(unsigned int axis) const { return brk_stream_dim(handle_, axis); }

    // The legacy (Brook+ 1.3 and BrookGPU-era) API, always available.
    Stream<T> domain(int start, int end) const {
        unsigned int s[1] = {static_cast<unsigned int>(start)};
        unsigned int e[1] = {static_cast<unsigned int>(end)};
        return domain_n(s, e, 1);
    }
    Stream<T> domain(int2 start, int2 end) const {
        unsigned int s[2] = {static_cast<unsigned int>(start.x), static_cast<unsigned int>(start.y)};
        unsigned int e[2] = {static_cast<unsigned int>(end.x), static_cast<unsigned int>(end.y)};
        return domain_n(s, e, 2);
    }
    Stream<T> domain(int3 start, int3 end) const {
        unsigned int s[3] = {static_cast<unsigned int>(start.x), static_cast<unsigned int>(start.y),
                             static_cast<unsigned int>(start.z)};
        unsigned int e[3] = {static_cast<unsigned int>(end.x), static_cast<unsigned int>(end.y),
                             static_cast<unsigned int>(end.z)};
        return domain_n(s, e, 3);
    }
    Stream<T> domain(int4 start, int4 end) const {
        unsigned int s[4] = {static_cast<unsigned int>(start.x), static_cast<unsigned int>(start.y),
                             static_cast<unsigned int>(start.z), static_cast<unsigned int>(start.w)};
        unsigned int e[4] = {static_cast<unsigned int>(end.x), static_cast<unsigned int>(end.y),
                             static_cast<unsigned int>(end.z), static_cast<unsigned int>(end.w)};
        return domain_n(s, e, 4);
    }
    Stream<T> execDomain(int numThreads) const {
        unsigned int s[1] = {0};
        unsigned int e[1] = {static_cast<unsigned int>(numThreads)};
        return domain_n(s, e, 1);
    }

  private:
    explicit Stream(BrkStream* handle) : stream(handle, Adopt()) {}
    Stream<T> domain_n(unsigned int* start, unsigned int* end, size_t count) const {
        return Stream<T>(brk_stream_domain_n(handle_, start, end, count));
    }
    void declare(Declared at, const char* type_name,
                 std::initializer_list<unsigned int> slowest_first) {
        unsigned int x_first[4] = {0, 0, 0, 0};
        unsigned int rank = static_cast<unsigned int>(slowest_first.size());
        unsigned int i = 0;
        for (const unsigned int* d = slowest_first.begin(); d != slowest_first.end(); ++d, ++i)
            if (i < 4) x_first[rank - 1 - i] = *d;
        char where[512] = {0};
        if (at.file) std::snprintf(where, sizeof where, "%s:%u", at.file, at.line);
        handle_ = brk_stream_new_at(type_name, rank, x_first, at.file ? where : NULL);
    }
};

/// An iterator stream (`iter float2 s<4, 4> = iter(float2(0, 0), float2(4, 10));`): values
/// from `start` to `end` over the dimensions, computed where a kernel reads them. `T` is float,
/// float2, float3 or float4.
template <class T> class Iter {
  public:
    Iter(Declared, std::initializer_list<unsigned int> slowest_first, T start, T end) {
        unsigned int x_first[4] = {0, 0, 0, 0};
        unsigned int rank = static_cast<unsigned int>(slowest_first.size());
        unsigned int i = 0;
        for (const unsigned int* d = slowest_first.begin(); d != slowest_first.end(); ++d, ++i)
            if (i < 4) x_first[rank - 1 - i] = *d;
        handle_ = brk_iter_new(detail::TypeName<T>::get(), rank, x_first,
                               reinterpret_cast<const float*>(&start),
                               reinterpret_cast<const float*>(&end));
    }
    Iter(const Iter& other) : handle_(brk_iter_share(other.handle_)) {}
    Iter& operator=(const Iter& other) {
        if (this != &other) {
            BrkIter* shared = brk_iter_share(other.handle_);
            brk_iter_free(handle_);
            handle_ = shared;
        }
        return *this;
    }
    ~Iter() { brk_iter_free(handle_); }
    const BrkIter* handle() const { return handle_; }

  private:
    BrkIter* handle_;
};

namespace detail {
/// A kernel input: a stream or an iterator of the element type.
template <class T> struct Input {
    BrkArg arg;
    Input(const Stream<T>& s) {
        BrkArg a = {0, s.handle(), 0, 0, 0};
        arg = a;
    }
    Input(const Iter<T>& i) {
        BrkArg a = {3, 0, 0, 0, i.handle()};
        arg = a;
    }
    Input(const stream& s);
    Input(const iter& i);
};

/// A sized gather parameter (`float c[3][2]`, dimensions slowest first): a stream, or a plain
/// host array of those dimensions, as Brook+ generated `const float c[3][2]` for it. The host
/// array is read into a stream of its own when the kernel is called.
template <class T, unsigned D0, unsigned D1 = 0, unsigned D2 = 0, unsigned D3 = 0> struct Gather {
    Stream<T> held;
    BrkArg arg;
    Gather(const Stream<T>& s) : held(s) { point(); }
    Gather(const ::brook::stream& s);
    Gather(const void* host) : held(make()) {
        held.read(host);
        point();
    }

  private:
    void point() {
        BrkArg a = {0, held.handle(), 0, 0, 0};
        arg = a;
    }
    static Stream<T> make() {
        unsigned int slowest[4] = {D0, D1, D2, D3};
        unsigned int rank = D3 ? 4 : D2 ? 3 : D1 ? 2 : 1;
        unsigned int x_first[4] = {0, 0, 0, 0};
        for (unsigned int i = 0; i < rank; i++) x_first[i] = slowest[rank - 1 - i];
        return Stream<T>(rank, x_first);
    }
};
} // namespace detail

namespace detail {
/// Where the program's host code calls a kernel (its `.br` file and line), for messages.
struct CallSite {
    const char* file;
    unsigned line;
};
inline CallSite& next_call_site() {
    static thread_local CallSite site = {NULL, 0};
    return site;
}
/// brcc writes each kernel call of a `.br` file's host code as
/// `(::brook::detail::at_("sum.br", 33), add)(a, b, c)`: the launch's errors then name the line.
inline int at_(const char* file, unsigned line) {
    CallSite& site = next_call_site();
    site.file = file;
    site.line = line;
    return 0;
}
} // namespace detail

/// What every kernel object has (seed 001 section 1.9): the execution domain of its next
/// launches. `domainOffset`/`domainSize` take x-first positions; unused components 0.
class KernelInterface {
  public:
    KernelInterface() : has_offset_(false), has_size_(false) {
        for (int i = 0; i < 4; i++) offset_[i] = size_[i] = 0;
    }
    void domainOffset(uint4 offset) {
        offset_[0] = offset.x; offset_[1] = offset.y; offset_[2] = offset.z; offset_[3] = offset.w;
        has_offset_ = true;
    }
    void domainSize(uint4 size) {
        size_[0] = size.x; size_[1] = size.y; size_[2] = size.z; size_[3] = size.w;
        has_size_ = true;
    }

  protected:
    /// `outputs`: a bit per argument that the kernel writes; without a program (none defines
    /// the kernel) they get the error, so results are never silently stale.
    void launch_(BrkProgram* program, const char* kernel, const BrkArg* args, size_t count,
                 unsigned long long outputs) const {
        detail::CallSite site = detail::next_call_site();
        detail::next_call_site().file = NULL;
        char where[512] = {0};
        if (site.file) std::snprintf(where, sizeof where, "%s:%u", site.file, site.line);
        if (!program || !brk_program_has_kernel(program, kernel)) {
            char message[768];
            std::snprintf(message, sizeof message,
                          "kernel `%s`%s%s%s did not run: %s", kernel,
                          site.file ? " (called at " : "", where, site.file ? ")" : "",
                          program ? "its program has no kernel of that name (was part of the "
                                    "program's source lost?)"
                                  : "no .br file linked into this program defines it (or its "
                                    "program did not compile)");
            fail_outputs_(args, count, outputs, message);
            return;
        }
        // Once the kernel is known, the library marks the outputs of every launch it refuses
        // (and prints the reason once).
        brk_launch_at(program, kernel, args, count, has_offset_ ? offset_ : NULL,
                      has_size_ ? size_ : NULL, site.file ? where : NULL);
    }

  private:
    /// Marks each output stream of a launch that did not run with `message`, or prints it when
    /// no output is a stream (a host variable has no error state).
    static void fail_outputs_(const BrkArg* args, size_t count, unsigned long long outputs,
                              const char* message) {
        bool said = false;
        for (size_t i = 0; i < count && i < 64; i++) {
            if (!(outputs >> i & 1ull) || args[i].kind != 0) continue;
            said = true;
            brk_stream_fail(args[i].stream, message);
        }
        if (!said) std::fprintf(stderr, "brook: error: BR_ERROR_KERNEL: %s\n", message);
    }

    uint32_t offset_[4], size_[4];
    bool has_offset_, has_size_;
};

namespace detail {
/// brcc -p: unless BRT_RUNTIME chooses, the calling thread uses the first device of the first
/// of `types` ("cuda,cpu") that this machine has. Generated code calls it once at start-up.
inline int select_targets(const char* types) {
    const char* chosen = std::getenv("BRT_RUNTIME");
    if (chosen && *chosen) return 0;
    const char* at = types;
    while (*at) {
        const char* end = at;
        while (*end && *end != ',') ++end;
        char type[16] = {0};
        size_t length = static_cast<size_t>(end - at) < sizeof(type) - 1
                            ? static_cast<size_t>(end - at)
                            : sizeof(type) - 1;
        for (size_t i = 0; i < length; i++) type[i] = at[i];
        unsigned int count = 0;
        Device* found = getDevices(type, &count);
        if (count > 0) {
            useDevices(found, 1, NULL);
            return 1;
        }
        at = *end ? end + 1 : end;
    }
    return 0;
}

/// Compiles a program's embedded Brook text with the brcc flags it was built with (generated
/// code calls it once); a failure, which brcc has already ruled out, is printed and its
/// launches then fail with an error code.
inline BrkProgram* compile(const char* file, const char* source, const char* flags) {
    char* message = NULL;
    BrkProgram* program = brk_program_new_flags(file, source, flags, &message);
    if (!program) {
        std::fprintf(stderr, "brook: %s\n", message ? message : "the program does not compile");
        brk_string_free(message);
    }
    return program;
}
} // namespace detail

namespace detail {
/// The programs linked into this executable: each generated `.cpp` registers its program at
/// start-up, so a kernel declared in one `.br` file and defined in another is found by name.
typedef BrkProgram* (*ProgramFunction)();
struct ProgramRegistry {
    ProgramFunction functions[1024];
    int count;
};
inline ProgramRegistry& program_registry() {
    static ProgramRegistry registry = {{0}, 0};
    return registry;
}
inline bool register_program(ProgramFunction function) {
    ProgramRegistry& r = program_registry();
    for (int i = 0; i < r.count; i++)
        if (r.functions[i] == function) return true;
    if (r.count < 1024) r.functions[r.count++] = function;
    return true;
}
/// The linked program that defines `kernel` (compiling programs on first use), or null (the
/// launches then mark their outputs with the error).
inline BrkProgram* program_defining(const char* kernel) {
    ProgramRegistry& r = program_registry();
    for (int i = 0; i < r.count; i++) {
        BrkProgram* program = r.functions[i]();
        if (program && brk_program_has_kernel(program, kernel)) return program;
    }
    return NULL;
}
} // namespace detail

template <class T> void streamRead(Stream<T> stream, void* ptr) { stream.read(ptr); }
template <class T> void streamWrite(Stream<T> stream, void* ptr) { stream.write(ptr); }

/// BrookGPU `streamSwap(a, b)`: `a` names `b`'s stream and `b` names `a`'s (ping-pong buffers).
template <class T> void streamSwap(Stream<T>& a, Stream<T>& b) { a.swap(b); }

/// BrookGPU `brmalloc`/`brfree`: host memory for stream transfers (the system allocator's
/// alignment, 16 bytes on the platforms Brook runs on).
inline void* brmalloc(size_t bytes) { return std::malloc(bytes ? bytes : 1); }
inline void brfree(void* memory) { std::free(memory); }

namespace detail {
/// One component as BrookGPU's runtime printed it (`SEMANTICS.md`, "Dialects"): `%3.2f`, a
/// finite value of magnitude below 1e-6 as `0.00`, NaN as `NaN`, infinities as `inf`.
inline void print_component(double x) {
    if (x != x) std::printf("NaN");
    else if (x > 1.7976931348623157e308 || x < -1.7976931348623157e308) std::printf("inf");
    else if (std::fabs(x) < .000001) std::printf("0.00");
    else std::printf("%3.2f", x);
}
/// A scalar element: its component and a space.
template <class S>
typename std::enable_if<std::is_arithmetic<S>::value>::type print_value(S v) {
    print_component(static_cast<double>(v));
    std::printf(" ");
}
/// A struct element: its bytes in hexadecimal, as stored (its fields are the runtime's).
template <class S>
typename std::enable_if<!std::is_arithmetic<S>::value>::type print_value(const S& v) {
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(&v);
    std::printf("{");
    for (size_t i = 0; i < sizeof(S); i++) std::printf(i ? " %02x" : "%02x", bytes[i]);
    std::printf("}");
}
#define BROOK_PRINT_VECTORS(P)                                                                 \
    inline void print_value(const P##2& v) {                                                   \
        std::printf("{"); print_component(v.x); std::printf(", "); print_component(v.y);       \
        std::printf("}");                                                                      \
    }                                                                                          \
    inline void print_value(const P##3& v) {                                                   \
        std::printf("{"); print_component(v.x); std::printf(", "); print_component(v.y);       \
        std::printf(", "); print_component(v.z); std::printf("}");                             \
    }                                                                                          \
    inline void print_value(const P##4& v) {                                                   \
        std::printf("{"); print_component(v.x); std::printf(", "); print_component(v.y);       \
        std::printf(", "); print_component(v.z); std::printf(", "); print_component(v.w);      \
        std::printf("}");                                                                      \
    }
BROOK_PRINT_VECTORS(float)
BROOK_PRINT_VECTORS(double)
BROOK_PRINT_VECTORS(int)
BROOK_PRINT_VECTORS(uint)
BROOK_PRINT_VECTORS(char)
BROOK_PRINT_VECTORS(uchar)
BROOK_PRINT_VECTORS(short)
BROOK_PRINT_VECTORS(ushort)
#undef BROOK_PRINT_VECTORS
} // namespace detail

/// BrookGPU `streamPrint(s)`: the stream's elements on stdout as BrookGPU's runtime printed
/// them (`SEMANTICS.md`, "Dialects"): a scalar as `%3.2f` and a space, a vector as `{a, b}`,
/// a newline after every row of the fastest axis. `flatten` is accepted and, as in the last
/// BrookGPU release, changes nothing. A stream in error prints its error instead. (Struct
/// elements print their bytes in hexadecimal: the C++ side does not know their fields.)
template <class T> void streamPrint(const Stream<T>& s, bool flatten = false) {
    (void)flatten;
    size_t count = 1;
    for (unsigned int axis = 0; axis < s.rank(); axis++) count *= s.dim(axis);
    unsigned int row = s.rank() ? s.dim(0) : 1;
    std::vector<T> elements(count ? count : 1);
    s.write(&elements[0]);
    int code = brk_stream_error(s.handle());
    if (code != 0) {
        std::printf("<stream in error %d: %s>\n", code, brk_stream_error_log(s.handle()));
        return;
    }
    for (size_t i = 0; i < count; i++) {
        detail::print_value(elements[i]);
        if (row && (i + 1) % row == 0) std::printf("\n");
    }
}

/// The operators of streamScatterOp and streamGatherOp (BrookGPU): built in, or a kernel
/// object (a reduce kernel for scatter, a kernel of one input and one output for gather).
struct ScatterBuiltin {
    uint32_t code;
};
struct GatherBuiltin {
    uint32_t code;
};

namespace detail {
/// An operator as the C ABI takes it.
struct OpRef {
    uint32_t code;
    const BrkProgram* program;
    const char* kernel;
};
inline OpRef op_of(ScatterBuiltin op) { OpRef r = {op.code, NULL, NULL}; return r; }
inline OpRef op_of(GatherBuiltin op) { OpRef r = {op.code, NULL, NULL}; return r; }
/// A kernel object brcc generated (it knows its program and name).
template <class K> OpRef op_of(const K& kernel) {
    OpRef r = {3, kernel.brook_program(), kernel.brook_name()};
    return r;
}

/// The extents of a host array type, x first (`float g[R][C]` gives {C, R}).
template <class A, unsigned K = 0, bool More = (K < std::rank<A>::value)> struct Extents {
    static void fill(unsigned int* x_first) {
        x_first[std::rank<A>::value - 1 - K] = static_cast<unsigned int>(std::extent<A, K>::value);
        Extents<A, K + 1>::fill(x_first);
    }
};
template <class A, unsigned K> struct Extents<A, K, false> {
    static void fill(unsigned int*) {}
};

/// A host array (`float table[1024]`, `float grid[32][32]`) as a temporary stream of its
/// elements and its shape (a 2-D array is a 2-D stream: a `float2` index is (column, row)),
/// written back when done. An array whose element type is not `T` is one row of `T`s.
template <class T, class A> struct ArrayStream {
    enum { count = sizeof(A) / sizeof(T), rank = std::rank<A>::value };
    A& array;
    Stream<T> stream;
    explicit ArrayStream(A& a) : array(a), stream(make()) { stream.read(&array); }
    void write_back() { stream.write(&array); }
    static Stream<T> make() {
        unsigned int dims[4] = {static_cast<unsigned int>(count), 1, 1, 1};
        bool shaped = rank >= 1 && rank <= 4 &&
                      sizeof(typename std::remove_all_extents<A>::type) == sizeof(T);
        if (shaped) Extents<A>::fill(dims);
        return Stream<T>(static_cast<unsigned short>(shaped ? rank : 1), dims);
    }
};

/// An index stream of the stream operators: a stream, or an iterator's values in a stream of
/// their own for the call (`brk_stream_of_iter`).
struct IndexStream {
    BrkStream* owned;
    const BrkStream* handle;
    explicit IndexStream(const BrkStream* s) : owned(NULL), handle(s) {}
    explicit IndexStream(const BrkIter* i) : owned(brk_stream_of_iter(i)), handle(owned) {}
    ~IndexStream() {
        if (owned) brk_stream_free(owned);
    }

  private:
    IndexStream(const IndexStream&);
    IndexStream& operator=(const IndexStream&);
};
} // namespace detail

/// `streamScatterOp(s, index, array, op)`: for each element i of `s`, in order,
/// `array[index[i]] = op(s[i], array[index[i]])`. `index` is a stream or an iterator: scalars
/// are linear offsets, vectors one coordinate per axis (`float2(column, row)`). `array` is a
/// stream or a host array (of its shape).
template <class T, class Ix, class Op>
int streamScatterOp(const Stream<T>& s, const Ix& index, const Stream<T>& array, const Op& op) {
    detail::OpRef r = detail::op_of(op);
    detail::IndexStream ix(index.handle());
    return brk_scatter_op(s.handle(), ix.handle, array.handle(), r.code, r.program, r.kernel);
}
template <class T, class Ix, class A, class Op>
typename std::enable_if<std::is_array<A>::value, int>::type
streamScatterOp(const Stream<T>& s, const Ix& index, A& array, const Op& op) {
    detail::ArrayStream<T, A> target(array);
    int code = streamScatterOp(s, index, target.stream, op);
    target.write_back();
    return code;
}

/// `streamGatherOp(t, index, array, op)`: for each element i of `t`, in order,
/// `t[i] = array[index[i]]`, then `op` updates that array element (`index` and `array` as for
/// streamScatterOp).
template <class T, class Ix, class Op>
int streamGatherOp(const Stream<T>& t, const Ix& index, const Stream<T>& array, const Op& op) {
    detail::OpRef r = detail::op_of(op);
    detail::IndexStream ix(index.handle());
    return brk_gather_op(t.handle(), ix.handle, array.handle(), r.code, r.program, r.kernel);
}
template <class T, class Ix, class A, class Op>
typename std::enable_if<std::is_array<A>::value, int>::type
streamGatherOp(const Stream<T>& t, const Ix& index, A& array, const Op& op) {
    detail::ArrayStream<T, A> source(array);
    int code = streamGatherOp(t, index, source.stream, op);
    source.write_back();
    return code;
}

/// Flags of `streamScan` and `streamScanExclusive`.
enum ScanFlags {
    /// Along the last axis: each row is scanned on its own (the default).
    ScanRows = 0,
    /// Over the whole stream, in row-major order, as one row.
    ScanWholeStream = 2
};

/// `streamScan(in, out, reduceKernel)`: the inclusive prefixes of `in` under the reduce
/// kernel's operator into `out` (of `in`'s shape): `out[i] = in[0] op ... op in[i]` along each
/// row (or, with `ScanWholeStream`, the whole stream). The canonical order makes a float scan
/// give the same bits on every device. Returns the error code (also recorded on `out`).
template <class T, class K>
int streamScan(const Stream<T>& in, const Stream<T>& out, const K& reduceKernel,
               ScanFlags flags = ScanRows) {
    return brk_scan(in.handle(), out.handle(), reduceKernel.brook_program(),
                    reduceKernel.brook_name(), static_cast<uint32_t>(flags), NULL, NULL);
}

/// `streamScanExclusive(in, out, init, reduceKernel)`: each row starts from `init`, and
/// `out[i] = init op in[0] op ... op in[i - 1]`.
template <class T, class K>
int streamScanExclusive(const Stream<T>& in, const Stream<T>& out, const T& init,
                        const K& reduceKernel, ScanFlags flags = ScanRows) {
    return brk_scan(in.handle(), out.handle(), reduceKernel.brook_program(),
                    reduceKernel.brook_name(), static_cast<uint32_t>(flags) | 1u,
                    detail::TypeName<T>::get(), &init);
}

namespace detail {
/// A LOOM kernel argument: a stream for an array, a value for the rest.
template <class T> BrkArg loom_arg(const Stream<T>& s) {
    BrkArg a = {0, s.handle(), 0, 0, 0};
    return a;
}
template <class T> BrkArg loom_arg(const T& value) {
    BrkArg a = {1, 0, TypeName<T>::get(), const_cast<T*>(&value), 0};
    return a;
}
} // namespace detail

/// A LOOM kernel (seed 004) compiled for a grid: `LoomKernel k("scale.loom", NULL, 1024, 256)`
/// reads and compiles `scale.loom` for 1024 threads in blocks of 256 (the 2-D form takes X and
/// Y threads, then X and Y block sizes); `k(in, out, 2.0f)` launches it with streams of the
/// declared extents for arrays and values for the rest, and returns the error code. A program
/// that does not compile prints its diagnostics once; its launches then mark their streams
/// with the error. `.loom` files given to `brcc build` are embedded in the program and found
/// first, by path or file name, from any working directory.
class LoomKernel {
  public:
    LoomKernel(const char* file, const char* source, unsigned threads, unsigned block) {
        init(file, source, threads, 1, block, 1);
    }
    LoomKernel(const char* file, const char* source, unsigned threads_x, unsigned threads_y,
               unsigned block_x, unsigned block_y) {
        init(file, source, threads_x, threads_y, block_x, block_y);
    }
    ~LoomKernel() { brk_program_free(program_); }
    LoomKernel(const LoomKernel&) = delete;
    LoomKernel& operator=(const LoomKernel&) = delete;

    /// Whether the program compiled.
    bool ok() const { return program_ != NULL; }
    /// The message of the last failed launch ("" if none), or why the program did not compile.
    const char* message() const { return program_ ? brk_program_message(program_) : error_; }

    template <class... A> int operator()(const A&... args) const {
        BrkArg list[sizeof...(A) + 1] = {detail::loom_arg(args)..., BrkArg()};
        if (!program_) {
            for (size_t i = 0; i < sizeof...(A); i++)
                if (list[i].kind == 0) brk_stream_fail(list[i].stream, "the LOOM program did not compile");
            return BR_ERROR_KERNEL;
        }
        return brk_loom_launch(program_, list, sizeof...(A));
    }

  private:
    void init(const char* file, const char* source, unsigned tx, unsigned ty, unsigned bx,
              unsigned by) {
        uint32_t threads[2] = {tx, ty}, block[2] = {bx, by};
        // Before the first kernel, whatever the order of static initialisation.
        if (brk_loom_embed_files) brk_loom_embed_files();
        char* message = NULL;
        program_ = brk_loom_program_new(file, source, threads, block, &message);
        error_[0] = 0;
        if (!program_) {
            std::fprintf(stderr, "brook: %s\n", message ? message : "the LOOM program does not compile");
            std::snprintf(error_, sizeof error_, "%s", message ? message : "does not compile");
            brk_string_free(message);
        }
    }

    BrkProgram* program_;
    char error_[1024];
};

} // namespace brook

#include "brookgpu.hpp"

// BrookGPU's built-in stream operators.
static const brook::ScatterBuiltin STREAM_SCATTER_ASSIGN = {0};
static const brook::ScatterBuiltin STREAM_SCATTER_ADD = {1};
static const brook::ScatterBuiltin STREAM_SCATTER_MUL = {2};
static const brook::ScatterBuiltin STREAM_SCATTER_FLOAT_ADD = {1};
static const brook::ScatterBuiltin STREAM_SCATTER_FLOAT_MUL = {2};
static const brook::ScatterBuiltin STREAM_SCATTER_INTEGER_ADD = {1};
static const brook::ScatterBuiltin STREAM_SCATTER_INTEGER_MUL = {2};
static const brook::GatherBuiltin STREAM_GATHER_FETCH = {0};
static const brook::GatherBuiltin STREAM_GATHER_INC = {1};
using brook::streamGatherOp;
using brook::streamScatterOp;

using brook::BError;
using brook::BR_NO_ERROR;
using brook::BR_ERROR_DECLARATION;
using brook::BR_ERROR_READ;
using brook::BR_ERROR_WRITE;
using brook::BR_ERROR_KERNEL;
using brook::BR_ERROR_DOMAIN;
using brook::BR_ERROR_INVALID_PARAMATER;
using brook::BR_ERROR_NOT_SUPPORTED;
using brook::brfree;
using brook::brmalloc;

#ifndef BROOK_NO_GLOBAL_TYPES
using brook::float2; using brook::float3; using brook::float4;
using brook::double2; using brook::double3; using brook::double4;
using brook::int2; using brook::int3; using brook::int4;
using brook::uint2; using brook::uint3; using brook::uint4;
using brook::char2; using brook::char3; using brook::char4;
using brook::uchar2; using brook::uchar3; using brook::uchar4;
using brook::short2; using brook::short3; using brook::short4;
using brook::ushort2; using brook::ushort3; using brook::ushort4;
using brook::fixed; using brook::fixed2; using brook::fixed3; using brook::fixed4;
using brook::shortfixed; using brook::shortfixed2; using brook::shortfixed3;
using brook::shortfixed4;
#endif

#endif
