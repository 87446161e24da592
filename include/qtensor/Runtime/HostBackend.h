//===- HostBackend.h - Running compiled host kernels ------------*- C++ -*-===//
//
// A host artifact carries one shared object, kernels-host.so, with every
// host kernel instance exported through MLIR's C interface
// (`llvm.emit_c_interface`): `void _mlir_ciface_<name>(D0 *, D1 *, ...)`
// where each argument points to a strided memref descriptor
//
//   struct { T *allocated; T *aligned; int64_t offset;
//            int64_t sizes[R]; int64_t strides[R]; }
//
// Loading it is loading native code: whoever produced the artifact runs
// code in this process, exactly as with any shared library (docs/runtime.md
// says so plainly). The loader verifies the file's SHA-256 against the
// manifest first, which proves the bytes are the ones the manifest names,
// not that their producer is benign. To load exactly the verified bytes,
// HostKernelLibrary copies them into a sealed anonymous memory file and
// dlopens that, never the path again (a file swapped after the hash check
// cannot be what runs).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_HOSTBACKEND_H
#define QTENSOR_RUNTIME_HOSTBACKEND_H

#include "qtensor/Support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace qtensor::runtime {

/// A shared object loaded from verified bytes.
class HostKernelLibrary {
public:
  /// Loads `size` bytes (already verified by the caller) named `name` for
  /// messages. Errors carry dlerror()'s text (a missing dependency, an
  /// undefined symbol, a file that is not an ELF shared object).
  static Expected<std::unique_ptr<HostKernelLibrary>>
  load(const uint8_t *bytes, size_t size, const std::string &name);
  ~HostKernelLibrary();
  HostKernelLibrary(const HostKernelLibrary &) = delete;
  HostKernelLibrary &operator=(const HostKernelLibrary &) = delete;

  /// The address of `symbol`; an error names the library and the symbol.
  Expected<void *> resolve(const std::string &symbol) const;
  const std::string &name() const { return libName; }
  /// "memfd" or "temporary file": how the bytes reached dlopen.
  const char *via() const { return loadedVia; }

private:
  HostKernelLibrary() = default;
  void *handle = nullptr;
  int memfd = -1; ///< kept open while loaded (see load)
  std::string libName;
  const char *loadedVia = "memfd";
};

/// The largest memref rank and argument count callMlirCInterface handles.
constexpr size_t kMaxMemRefRank = 4;
/// (14: the mixed 2/4/16 GEMV's x, ten streams, the derived row counts, a
/// bias and y; Conversion/Mixed2416Kernel.h).
constexpr size_t kMaxKernelArgs = 14;

/// A memref's sizes or strides, held in place: a decode step makes hundreds
/// of kernel calls, and none of them allocates. It keeps up to
/// kMaxMemRefRank values and counts any more (size() says how many were
/// given; callMlirCInterface refuses a rank it cannot describe before it
/// reads them).
class MemRefDims {
public:
  MemRefDims() = default;
  MemRefDims(std::initializer_list<int64_t> dims) {
    for (int64_t d : dims)
      push(d);
  }
  MemRefDims(const std::vector<int64_t> &dims) {
    for (int64_t d : dims)
      push(d);
  }
  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  /// i < min(size(), kMaxMemRefRank).
  int64_t &operator[](size_t i) { return values[i]; }
  int64_t operator[](size_t i) const { return values[i]; }

private:
  void push(int64_t d) {
    if (count < kMaxMemRefRank)
      values[count] = d;
    ++count;
  }
  int64_t values[kMaxMemRefRank] = {};
  size_t count = 0;
};

/// One memref argument: data, its shape and, when not row-major
/// contiguous, its strides in elements.
struct HostOperand {
  void *data = nullptr;
  MemRefDims shape;
  MemRefDims strides = {}; ///< empty: row-major contiguous
};

/// Calls `function` (an `_mlir_ciface_` symbol returning void) with one
/// descriptor per operand, in order: allocated = aligned = data, offset 0,
/// the operand's strides (row-major when it has none). Refuses more than
/// kMaxKernelArgs operands, ranks above kMaxMemRefRank, negative sizes or
/// strides, strides of another rank and null data.
Status callMlirCInterface(void *function, const HostOperand *operands,
                          size_t count);
inline Status callMlirCInterface(void *function,
                                 std::initializer_list<HostOperand> operands) {
  return callMlirCInterface(function, operands.begin(), operands.size());
}
inline Status callMlirCInterface(void *function,
                                 const std::vector<HostOperand> &operands) {
  return callMlirCInterface(function, operands.data(), operands.size());
}

/// The smallest share of a row-split call worth a thread of its own.
constexpr int64_t kMinSplitWeights = int64_t(1) << 16;

/// Calls `rows(n0, n1)` on contiguous ranges covering [0, n) of an [n, k]
/// weight, in parallel on the process's thread pool: ranges of at least
/// kMinSplitWeights weights, at most one per thread (a small weight runs
/// on the calling thread alone, as one range). Returns the first failure.
Status forRowRanges(int64_t n, int64_t k,
                    const std::function<Status(int64_t, int64_t)> &rows);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_HOSTBACKEND_H
