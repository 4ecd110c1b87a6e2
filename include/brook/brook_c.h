/* Brook's C interface: the runtime's C ABI (the `brook-capi` crate, linked as
 * libbrook_capi.a or libbrook_capi.so), for C99 programs and for other languages' bindings.
 * The Brook+ C++ API (brook.hpp) is written over it.
 *
 * Handles (BrkStream, BrkIter, BrkProgram) are opaque; every function accepts a null handle
 * and then does nothing or returns an error. Dimensions and positions are x-first (fastest
 * axis first). Errors never abort: a stream records them (brk_stream_error,
 * brk_stream_error_log) and every error is printed once on stderr (or to BRT_LOG_FILE).
 * Error codes are Brook+'s BError values: 0 no error, 1 declaration, 2 read, 3 write,
 * 4 kernel, 5 domain, 6 invalid parameter, 7 not supported.
 *
 * A test (crates/brook-capi/tests/c_header.rs) checks every declaration here against the
 * Rust definitions, and compiles and runs examples/c/sum.c with a C99 compiler.
 */
#ifndef BROOK_BROOK_C_H
#define BROOK_BROOK_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct BrkStream BrkStream;
typedef struct BrkIter BrkIter;
typedef struct BrkProgram BrkProgram;

typedef struct BrkArg {
    uint32_t kind; /* 0 stream, 1 value, 2 host reduction target, 3 iterator */
    const BrkStream* stream;
    const char* type_name;
    void* data;
    const BrkIter* iter;
} BrkArg;

uint32_t brk_devices(const char* type_name, uint32_t* out, uint32_t capacity);
const char* brk_device_type(uint32_t index);
void brk_use_devices(const uint32_t* indices, uint32_t count);
uint32_t brk_thread_devices(uint32_t* out, uint32_t capacity);
uint32_t brk_device_group(const uint32_t* indices, uint32_t count);
/* The device a runtime spec names ("cuda:all", "mpi:cpu"); UINT32_MAX when there is none. */
uint32_t brk_device_from_spec(const char* spec);
/* 1 when the library was built with MPI support (the `mpi` feature). */
int brk_mpi_available(void);

BrkIter* brk_iter_new(const char* type_name, uint32_t rank, const uint32_t* dims,
                      const float* start, const float* end);
BrkIter* brk_iter_share(const BrkIter* iter);
void brk_iter_free(BrkIter* iter);

BrkStream* brk_stream_new(const char* type_name, uint32_t rank, const uint32_t* dims);
BrkStream* brk_stream_new_at(const char* type_name, uint32_t rank, const uint32_t* dims,
                             const char* site);
BrkStream* brk_stream_of_iter(const BrkIter* iter);
BrkStream* brk_stream_share(const BrkStream* stream);
void brk_stream_free(BrkStream* stream);
uint32_t brk_stream_rank(const BrkStream* stream);
uint32_t brk_stream_dim(const BrkStream* stream, uint32_t axis);
void brk_stream_read(BrkStream* stream, const void* ptr, const char* flags);
void brk_stream_write(BrkStream* stream, void* ptr, const char* flags);
int brk_stream_is_sync(BrkStream* stream);
int brk_stream_finish(BrkStream* stream);
int brk_finish(void);
int brk_stream_error(BrkStream* stream);
const char* brk_stream_error_log(BrkStream* stream);
void brk_stream_assign(BrkStream* stream, const BrkStream* source);
BrkStream* brk_stream_domain(const BrkStream* stream, const uint32_t* start, const uint32_t* end);
BrkStream* brk_stream_domain_n(const BrkStream* stream, const uint32_t* start, const uint32_t* end,
                               size_t count);
void brk_stream_set_property(BrkStream* stream, const char* name);
void brk_stream_fail(const BrkStream* stream, const char* message);

BrkProgram* brk_program_new(const char* file, const char* source, int relaxed, char** error);
BrkProgram* brk_program_new_flags(const char* file, const char* source, const char* flags, char** error);
void brk_program_free(BrkProgram* program);
const char* brk_program_message(const BrkProgram* program);
int brk_program_has_kernel(const BrkProgram* program, const char* kernel);
void brk_string_free(char* text);
int brk_launch(const BrkProgram* program, const char* kernel, const BrkArg* args, size_t count,
               const uint32_t* offset, const uint32_t* size);
int brk_launch_at(const BrkProgram* program, const char* kernel, const BrkArg* args, size_t count,
                  const uint32_t* offset, const uint32_t* size, const char* call_site);
int brk_scatter_op(const BrkStream* s, const BrkStream* index, const BrkStream* array, uint32_t op,
                   const BrkProgram* program, const char* kernel);
int brk_gather_op(const BrkStream* t, const BrkStream* index, const BrkStream* array, uint32_t op,
                  const BrkProgram* program, const char* kernel);
int brk_scan(const BrkStream* input, const BrkStream* output, const BrkProgram* program,
             const char* kernel, uint32_t flags, const char* init_type, const void* init_data);
BrkProgram* brk_loom_program_new(const char* file, const char* source, const uint32_t* threads,
                                 const uint32_t* block, char** error);
int brk_loom_launch(const BrkProgram* program, const BrkArg* args, size_t count);
int brk_loom_embed(const char* path, const char* text);

#ifdef __cplusplus
}
#endif

#endif /* BROOK_BROOK_C_H */
