// BrookGPU's untyped `brook::stream`, the base class of the typed `brook::Stream<T>` (brook.hpp
// includes this header before it defines `Stream<T>`; brookgpu.hpp has the rest of BrookGPU's
// runtime API).
#ifndef BROOK_UNTYPED_STREAM_HPP
#define BROOK_UNTYPED_STREAM_HPP

#include <stdarg.h>

#include <cstring>

namespace brook {

/// A stream's element type, as `getStreamType((float4*)0)` gives it.
struct StreamType {
    const char* name;
};
template <class T> StreamType getStreamType(T*) {
    StreamType type = {detail::TypeName<T>::get()};
    return type;
}
static const StreamType __BRTFLOAT = {"float"};
static const StreamType __BRTFLOAT2 = {"float2"};
static const StreamType __BRTFLOAT3 = {"float3"};
static const StreamType __BRTFLOAT4 = {"float4"};

namespace detail {
/// The dimensions a BrookGPU varargs constructor lists before its -1 (at most four, slowest
/// first), as x-first values; returns the rank (0 when none or more than four are given).
inline unsigned int varargs_dims(va_list& list, unsigned int x_first[4]) {
    int slowest[5] = {0, 0, 0, 0, 0};
    unsigned int rank = 0;
    for (;;) {
        int d = va_arg(list, int);
        if (d == -1) break;
        if (rank == 5) return 0;
        slowest[rank++] = d;
    }
    if (rank > 4) return 0;
    for (unsigned int i = 0; i < rank; i++)
        x_first[i] = static_cast<unsigned int>(slowest[rank - 1 - i]);
    return rank;
}
/// The component count of a float type name (`float3`: 3).
inline unsigned int float_width(const char* name) {
    size_t n = std::strlen(name);
    char last = n ? name[n - 1] : '\0';
    return last >= '2' && last <= '4' ? static_cast<unsigned int>(last - '0') : 1;
}
} // namespace detail

/// BrookGPU's untyped stream handle, and the base of every typed `Stream<T>`: a typed stream
/// is a `brook::stream` (it binds to `brook::stream&`, as BrookGPU's streams all were), and
/// `Stream<T>(untyped)` names the same stream typed. Copies share the stream.
class stream {
  public:
    stream() : handle_(NULL) {}
    /// `stream(getStreamType((float*)0), d0, d1, ..., -1)`: dimensions slowest first.
    stream(StreamType type, ...) : handle_(NULL) {
        unsigned int x_first[4] = {0, 0, 0, 0};
        va_list list;
        va_start(list, type);
        unsigned int rank = detail::varargs_dims(list, x_first);
        va_end(list);
        handle_ = brk_stream_new(type.name, rank, rank ? x_first : NULL);
    }
    stream(const stream& other) : handle_(other.handle_ ? brk_stream_share(other.handle_) : NULL) {}
    stream& operator=(const stream& other) {
        if (this != &other) {
            BrkStream* shared = other.handle_ ? brk_stream_share(other.handle_) : NULL;
            brk_stream_free(handle_);
            handle_ = shared;
        }
        return *this;
    }
    ~stream() { brk_stream_free(handle_); }

    /// `stream::create<float4>(rows, columns)`: dimensions slowest first.
    template <class T> static stream create(int d0) { return make<T>(1, d0, 0, 0, 0); }
    template <class T> static stream create(int d0, int d1) { return make<T>(2, d0, d1, 0, 0); }
    template <class T> static stream create(int d0, int d1, int d2) {
        return make<T>(3, d0, d1, d2, 0);
    }
    template <class T> static stream create(int d0, int d1, int d2, int d3) {
        return make<T>(4, d0, d1, d2, d3);
    }

    void read(const void* ptr) { brk_stream_read(handle_, ptr, NULL); }
    void write(void* ptr) const { brk_stream_write(handle_, ptr, NULL); }
    void swap(stream& other) {
        BrkStream* mine = handle_;
        handle_ = other.handle_;
        other.handle_ = mine;
    }
    unsigned int rank() const { return handle_ ? brk_stream_rank(handle_) : 0; }
    unsigned int dim(unsigned int axis) const { return handle_ ? brk_stream_dim(handle_, axis) : 0; }
    BError error() { return static_cast<BError>(handle_ ? brk_stream_error(handle_) : 0); }
    const char* errorLog() { return handle_ ? brk_stream_error_log(handle_) : ""; }
    BrkStream* handle() const { return handle_; }

  protected:
    /// Takes `adopted` as this object's handle (no new share).
    struct Adopt {};
    stream(BrkStream* adopted, Adopt) : handle_(adopted) {}
    BrkStream* handle_;

  private:
    template <class T> static stream make(unsigned int rank, int d0, int d1, int d2, int d3) {
        int slowest[4] = {d0, d1, d2, d3};
        unsigned int x_first[4] = {0, 0, 0, 0};
        for (unsigned int i = 0; i < rank; i++)
            x_first[i] = static_cast<unsigned int>(slowest[rank - 1 - i]);
        stream made;
        made.handle_ = brk_stream_new(detail::TypeName<T>::get(), rank, x_first);
        return made;
    }
};

} // namespace brook

#endif
