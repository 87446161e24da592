//===- KernelInstance.h - One compiled kernel of an artifact ----*- C++ -*-===//
//
// `manifest.kernels[i]` describes one kernel entry of the artifact
// (docs/kernel-abi.md, normative): which registry kernel it implements, on
// which target, in which format, for which phase and T range, local shape,
// dtypes, code and qparam contract, its entry points (one per T bucket),
// its ordered arguments and, for GPUs, its launch. The manifest parser
// leaves `capability` free-form; here every field the runtime relies on is
// checked (type, range, internal consistency) before anything is sized from
// it, and errors name `manifest.kernels[i].capability.FIELD`. Fields the
// runtime does not read are allowed (forward compatibility); a field it
// reads is never guessed. The checks against the op the entry binds (N, K,
// packed words, qparam shapes) are the planner's (Plan.h).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_KERNELINSTANCE_H
#define QTENSOR_RUNTIME_KERNELINSTANCE_H

#include "qtensor/Formats/Manifest.h"
#include "qtensor/Kernels/Capability.h"
#include "qtensor/Support/Expected.h"
#include "qtensor/Support/HostCpu.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::runtime {

/// Element types of kernel arguments.
enum class ArgType : uint8_t { F16, BF16, F32, I32, I8, U8 };
const char *toString(ArgType t);
std::optional<ArgType> parseArgType(const std::string &s);
size_t byteWidth(ArgType t);

/// The role of one argument: activations, packed codes, scales, zero-points,
/// bias, output.
enum class ArgRole : uint8_t { X, W, S, Z, B, Y };
const char *toString(ArgRole r);

/// The dynamic T dimension in an argument shape.
constexpr int64_t kDynamic = -1;
/// Largest local N or K, T and argument dimension accepted.
constexpr int64_t kMaxDimension = int64_t(1) << 31;

struct KernelArg {
  ArgRole role = ArgRole::X;
  ArgType type = ArgType::F16;
  std::vector<int64_t> shape; ///< kDynamic only as the T of x and y
};

/// A GPU launch configuration.
struct LaunchConfig {
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> block{1, 1, 1};
  uint64_t sharedBytes = 0;
  /// A kernel tiled over T: grid[tokenAxis] = ceil(T / tokensPerBlock) at
  /// run time (docs/kernel-abi.md); -1 when the grid does not depend on T.
  int tokenAxis = -1;
  int64_t tokensPerBlock = 0;

  /// The grid for T rows.
  std::array<int64_t, 3> gridFor(int64_t tokens) const;
};

/// One entry point of an instance: a symbol and the T it accepts. A GEMV
/// instance may have one entry per T bucket (each with its own register
/// allocation); the buckets are disjoint.
struct EntryPoint {
  std::string symbol;
  kernels::TokenRange tokens; ///< max always set (kMaxDimension: unbounded)
};

/// `reference`: the full-dequant fallback, which has no code (no file, no
/// entries): the runtime runs the reference decoder.
enum class KernelFormat : uint8_t { Ptx, Cubin, HostSharedObject, Reference };
const char *toString(KernelFormat f);

struct KernelInstance {
  size_t index = 0;       ///< position in manifest.kernels
  std::string id;         ///< opaque
  std::string file;       ///< a listed kernel file; empty for `reference`
  std::string registryId; ///< the lib/Kernels registry kernel it implements
  kernels::Target target;
  KernelFormat format = KernelFormat::HostSharedObject;
  kernels::Phase phase = kernels::Phase::Decode;
  /// The T this entry serves (max always set; kMaxDimension: unbounded).
  kernels::TokenRange tokens;
  int64_t n = 0, k = 0; ///< local shape
  FloatType activation = FloatType::F16;
  FloatType output = FloatType::F16;
  bool bias = false;
  // Native only:
  std::string layout;     ///< layout family the kernel reads
  unsigned codeBits = 4;  ///< 4, 5, 6 or 8
  bool codeSigned = true; ///< symmetric signed; else unsigned + u8 zeros
  /// Unsigned codes with a float min per group (z in the scale dtype,
  /// x = s * q + m) rather than u8 zero-points.
  bool minZero = false;
  int64_t groupSize = 0; ///< 0: per output channel
  FloatType scale = FloatType::F16;
  /// Ascending, disjoint, covering `tokens` (the GEMM's one entry point
  /// accepts any T; each phase's manifest entry narrows it).
  std::vector<EntryPoint> entries;
  std::vector<KernelArg> args;
  std::optional<LaunchConfig> launch; ///< GPU formats only
  int64_t splitK = 1;
  bool zeroOutput = false;
  /// Host: may be called on any contiguous range of output rows (w, s, z,
  /// b from the range's first row, y from its first column with the whole
  /// row's stride), so the runtime splits N across threads.
  bool rowSplit = false;
  /// Host: the CPU level the code was built for (Support/HostCpu.h).
  HostCpuLevel cpu = HostCpuLevel::Generic;
  std::vector<std::string> ops; ///< manifest tensors using this entry

  /// The argument with `role`, or nullptr.
  const KernelArg *arg(ArgRole role) const;
  /// The entry point for T rows, or nullptr when T is outside `tokens`.
  const EntryPoint *entryFor(int64_t tokens) const;
  bool isHost() const { return format == KernelFormat::HostSharedObject; }
  bool isGpu() const {
    return format == KernelFormat::Ptx || format == KernelFormat::Cubin;
  }
  bool isReference() const { return format == KernelFormat::Reference; }
  /// "manifest.kernels[3] (qt_decode_...)" for messages.
  std::string where() const;
};

/// Parses and checks `manifest.kernels[index]` against the manifest (the
/// file is listed with role kernel; every op is a quantized tensor).
Expected<KernelInstance> parseKernelInstance(const artifact::Manifest &m,
                                             size_t index);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_KERNELINSTANCE_H
