//===- HostBackend.cpp - Running compiled host kernels --------------------===//

#include "qtensor/Runtime/HostBackend.h"

#include "qtensor/Support/FileIO.h"
#include "qtensor/Support/ThreadPool.h"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>
#include <utility>

using namespace qtensor;
using namespace qtensor::runtime;

static_assert(sizeof(void *) == sizeof(int64_t),
              "memref descriptors are built as 64-bit words");

namespace {

/// All of `bytes` into `fd` (writeAll, which names `what` and the offset).
Status writeWhole(int fd, const uint8_t *bytes, size_t size,
                  const std::string &what) {
  uint64_t offset = 0;
  return writeAll(fd, bytes, size, what, offset);
}

/// An anonymous memory file holding `bytes`, sealed against change.
int memoryFile(const uint8_t *bytes, size_t size, const std::string &name,
               std::string &error) {
#ifdef MFD_CLOEXEC
  int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    error = std::string("memfd_create: ") + std::strerror(errno);
    return -1;
  }
  if (Status s = writeWhole(fd, bytes, size, name); !s) {
    error = s.message();
    ::close(fd);
    return -1;
  }
  // Best effort: the seals make the file immutable for everyone holding it.
  (void)::fcntl(fd, F_ADD_SEALS,
                F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  return fd;
#else
  error = "memfd_create is not available";
  return -1;
#endif
}

} // namespace

Expected<std::unique_ptr<HostKernelLibrary>>
HostKernelLibrary::load(const uint8_t *bytes, size_t size,
                        const std::string &name) {
  std::unique_ptr<HostKernelLibrary> lib(new HostKernelLibrary());
  lib->libName = name;
  std::string memfdError;
  int fd = memoryFile(bytes, size, "qtensor-host-kernels", memfdError);
  if (fd >= 0) {
    std::string path = "/proc/self/fd/" + std::to_string(fd);
    lib->handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    const char *why = lib->handle ? nullptr : ::dlerror();
    std::string reason = why ? why : "";
    // The descriptor stays open while the library is loaded: dlopen matches
    // already loaded objects by name, and a reused descriptor number would
    // otherwise name another library's code.
    if (lib->handle) {
      lib->memfd = fd;
      return lib;
    }
    ::close(fd);
    // /proc may be missing (a minimal container): try a private file below.
    if (reason.find("/proc/self/fd") == std::string::npos)
      return makeError(name, ": cannot load host kernels: ", reason);
    memfdError = reason;
  }
  // A private temporary file, unlinked as soon as it is loaded.
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/qtensor-kernels-XXXXXX";
  std::vector<char> path(pattern.begin(), pattern.end());
  path.push_back('\0');
  int tfd = ::mkstemp(path.data());
  if (tfd < 0)
    return makeError(name, ": cannot stage host kernels (", memfdError,
                     "; mkstemp: ", std::strerror(errno), ")");
  Status written = writeWhole(tfd, bytes, size, path.data());
  ::close(tfd);
  if (written)
    lib->handle = ::dlopen(path.data(), RTLD_NOW | RTLD_LOCAL);
  const char *why = lib->handle ? nullptr : ::dlerror();
  ::unlink(path.data());
  if (!written)
    return makeError(name, ": cannot stage host kernels: ", written.message());
  if (!lib->handle)
    return makeError(name, ": cannot load host kernels: ",
                     why ? why : "unknown dlopen error");
  lib->loadedVia = "temporary file";
  return lib;
}

HostKernelLibrary::~HostKernelLibrary() {
  if (handle)
    ::dlclose(handle);
  if (memfd >= 0)
    ::close(memfd);
}

Expected<void *> HostKernelLibrary::resolve(const std::string &symbol) const {
  ::dlerror();
  void *p = ::dlsym(handle, symbol.c_str());
  if (!p) {
    const char *why = ::dlerror();
    return makeError(libName, ": symbol ", symbol, " is not exported",
                     why ? std::string(" (") + why + ")" : std::string());
  }
  return p;
}

namespace {

// Every argument is a pointer, so the C calling convention for N pointer
// arguments is the same whatever the memrefs' element types.
// A symbol from dlsym carries no type information, so UBSan's
// -fsanitize=function check (calls through a pointer of a different
// function type) cannot apply to it.
template <size_t... I>
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void callWithPointers(void *function, void *const *a,
                      std::index_sequence<I...>) {
  using P = void *;
  reinterpret_cast<void (*)(decltype((void)I, P())...)>(function)(a[I]...);
}

template <size_t N> void callWith(void *function, void *const *a) {
  callWithPointers(function, a, std::make_index_sequence<N>{});
}

using Caller = void (*)(void *, void *const *);
template <size_t... N>
constexpr std::array<Caller, sizeof...(N)>
makeCallers(std::index_sequence<N...>) {
  return {&callWith<N + 1>...};
}
/// kCallers[n - 1] calls a function of n pointer arguments.
constexpr std::array<Caller, kMaxKernelArgs> kCallers =
    makeCallers(std::make_index_sequence<kMaxKernelArgs>{});

} // namespace

// The call through `function` happens in callWithPointers (a symbol from
// dlsym carries no type information for UBSan's -fsanitize=function
// check; the C interface's signature is checked against the capability
// instead: argument count and ranks, docs/kernel-abi.md).
Status qtensor::runtime::callMlirCInterface(void *function,
                                            const HostOperand *operands,
                                            size_t count) {
  if (!function)
    return makeError("host kernel call: null function");
  if (count == 0 || count > kMaxKernelArgs)
    return makeError("host kernel call: ", count, " arguments, expected 1 to ",
                     kMaxKernelArgs);
  // One descriptor per operand as 64-bit words: allocated, aligned, offset,
  // sizes[R], strides[R] (MLIR's StridedMemRefType layout), on the stack.
  int64_t descriptors[kMaxKernelArgs][3 + 2 * kMaxMemRefRank];
  for (size_t i = 0; i < count; ++i) {
    const HostOperand &o = operands[i];
    size_t rank = o.shape.size();
    if (rank == 0 || rank > kMaxMemRefRank)
      return makeError("host kernel call: argument ", i, " has rank ", rank,
                       ", expected 1 to ", kMaxMemRefRank);
    if (!o.data)
      return makeError("host kernel call: argument ", i, " has no data");
    int64_t *d = descriptors[i];
    int64_t ptr = static_cast<int64_t>(reinterpret_cast<intptr_t>(o.data));
    d[0] = ptr;
    d[1] = ptr;
    d[2] = 0;
    if (!o.strides.empty() && o.strides.size() != rank)
      return makeError("host kernel call: argument ", i, " has ",
                       o.strides.size(), " strides for rank ", rank);
    int64_t stride = 1;
    for (size_t j = rank; j-- > 0;) {
      if (o.shape[j] < 0 || (!o.strides.empty() && o.strides[j] < 0))
        return makeError("host kernel call: argument ", i, " dimension ", j,
                         " is negative");
      d[3 + j] = o.shape[j];
      d[3 + rank + j] = o.strides.empty() ? stride : o.strides[j];
      stride *= o.shape[j];
    }
  }
  void *a[kMaxKernelArgs] = {};
  for (size_t i = 0; i < count; ++i)
    a[i] = descriptors[i];
  kCallers[count - 1](function, a);
  return Status::ok();
}

Status qtensor::runtime::forRowRanges(
    int64_t n, int64_t k, const std::function<Status(int64_t, int64_t)> &rows) {
  std::mutex failureMutex;
  Status failure = Status::ok();
  defaultThreadPool().parallelRanges(
      n, n * k, kMinSplitWeights, [&](int64_t n0, int64_t n1) {
        Status s = rows(n0, n1);
        if (!s) {
          std::lock_guard<std::mutex> lock(failureMutex);
          if (failure)
            failure = std::move(s);
        }
      });
  return failure;
}
