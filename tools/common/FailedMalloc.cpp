//===- FailedMalloc.cpp - A failed malloc is the tool's out-of-memory error ===//
//
// Parts of MLIR and LLVM allocate with a malloc whose result they do not
// check (MLIR's interface models, for one): under a memory or address-space
// limit that is a NULL dereference, a SIGSEGV, where a tool owes the user
// an error. The tool's malloc, calloc and realloc interpose glibc's (ELF
// symbol interposition: the executable's definition wins for every
// library) and forward to glibc's own entry points, so the allocator is
// unchanged; only a NULL result for a nonzero size becomes the tool's
// out-of-memory error (toolOutOfMemory, ToolMemory.h). Code that checks its
// allocations and can recover does not use malloc for them
// (MappedFile::readCopy maps its buffer). The price: what would have
// retried smaller after a NULL (operator new(nothrow),
// std::get_temporary_buffer, glibc's pthread_create) ends the tool with
// that error instead, which at that point is the truth.
//
// Not built under a sanitizer, whose runtime interposes malloc itself.
//
//===----------------------------------------------------------------------===//

#include <cerrno>
#include <cstddef> // and __GLIBC__

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||     \
    __has_feature(memory_sanitizer) || __has_feature(leak_sanitizer) ||        \
    __has_feature(hwaddress_sanitizer)
#define QTC_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define QTC_SANITIZED 1
#endif

#if !defined(QTC_SANITIZED) && defined(__GLIBC__)

#include "ToolMemory.h"

extern "C" {
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *p, size_t size);

void *malloc(size_t size) {
  void *p = __libc_malloc(size);
  if (!p && size)
    qtensor::tools::toolOutOfMemory();
  return p;
}

void *calloc(size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM; // not a shortage of memory: the caller's size is wrong
    return nullptr;
  }
  void *p = __libc_calloc(count, size);
  if (!p && bytes)
    qtensor::tools::toolOutOfMemory();
  return p;
}

void *realloc(void *old, size_t size) {
  void *p = __libc_realloc(old, size);
  if (!p && size)
    qtensor::tools::toolOutOfMemory();
  return p;
}
}

#endif
