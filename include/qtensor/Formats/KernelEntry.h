//===- KernelEntry.h - The kernel contract's record -------------*- C++ -*-===//
//
// One `manifest.kernels[i]`: one compiled kernel of an artifact
// (docs/kernel-abi.md, normative). It says which registry kernel it
// implements, on which target, in which format, for which phase and T range;
// the local shape, dtypes, code and qparam contract; its entry points (one
// per T bucket), its ordered arguments and, for GPUs, its launch; and which
// manifest tensors use it.
//
// One struct, one writer (toJson) and one reader (kernelEntryFromJson): the
// compiler fills the struct, the manifest writes it, the runtime reads it back
// with the same code. The reader is strict, like the rest of the manifest:
// every field is type- and range-checked and checked against the entry's
// other fields before anything is sized from it, a field nobody reads is an
// error, and errors name `manifest.kernels[i].FIELD`. The manifest's
// validation adds what needs the rest of the manifest (the file is a listed
// kernel file, every op a quantized tensor); the planner adds the checks
// against the op an entry binds and against this build's registry.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_KERNELENTRY_H
#define QTENSOR_FORMATS_KERNELENTRY_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Descriptor/Mixed2416.h"
#include "qtensor/Kernels/Capability.h"
#include "qtensor/Support/Expected.h"
#include "qtensor/Support/HostCpu.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::artifact {

/// Element types of kernel arguments.
enum class ArgType : uint8_t { F16, BF16, F32, I32, I8, U8 };
const char *toString(ArgType t);
std::optional<ArgType> parseArgType(const std::string &s);
size_t byteWidth(ArgType t);
/// The argument type that holds values of a float dtype.
ArgType argTypeOf(FloatType t);

/// The role of one argument. An affine kernel's, in call order:
/// activations, packed codes, scales, a nested descriptor's second-level
/// scales (KernelEntry::nested), zero-points, its second-level mins, bias,
/// output. A mixed_2416 kernel (KernelEntry::mixed) takes its tensor's
/// streams instead, in the order of mixed2416ArgOrder: x, map, w2, w4, rw4,
/// qs, z1, s2, z2, sv, sc, sr, [b], y (Conversion/Mixed2416Kernel.h).
enum class ArgRole : uint8_t {
  X,
  W,
  S,
  S2,
  Z,
  Z2,
  B,
  Y,
  Map, ///< mixed_2416: the precision map (u8 bitmap)
  W2,  ///< the W2 code stream (i32 words)
  W4,  ///< the W4 code stream (i32 words)
  RW4, ///< W4 groups before each row (N + 1 i32, derived at load)
  QS,  ///< first-level scale codes (u8 [N, G])
  Z1,  ///< first-level zero-points (u8 [N, G])
  SV,  ///< outlier values
  SC,  ///< outlier columns (i32)
  SR,  ///< outlier row pointers (N + 1 i32)
  XQ,  ///< W8A8: the activations' int8 codes ([T, K], i8 or u8)
  SX,  ///< their scale per token ([T] f32)
  ZX,  ///< their zero-point per token ([T] i32; asymmetric only)
};
const char *toString(ArgRole r);

/// The dynamic T dimension in an argument shape.
constexpr int64_t kDynamic = -1;
/// Largest local N or K, T and argument dimension accepted.
constexpr int64_t kMaxDimension = int64_t(1) << 31;

struct KernelArg {
  ArgRole role = ArgRole::X;
  ArgType type = ArgType::F16;
  std::vector<int64_t> shape; ///< kDynamic only as the T of x and y
  bool operator==(const KernelArg &o) const {
    return role == o.role && type == o.type && shape == o.shape;
  }
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
  bool operator==(const LaunchConfig &o) const {
    return grid == o.grid && block == o.block && sharedBytes == o.sharedBytes &&
           tokenAxis == o.tokenAxis && tokensPerBlock == o.tokensPerBlock;
  }
};

/// One entry point of a kernel: a symbol and the T it accepts. A GEMV may
/// have one entry per T bucket (each with its own register allocation); the
/// buckets are disjoint.
struct EntryPoint {
  std::string symbol;
  kernels::TokenRange tokens; ///< max always set (kMaxDimension: unbounded)
  bool operator==(const EntryPoint &o) const {
    return symbol == o.symbol && tokens == o.tokens;
  }
};

/// `reference`: the full-dequant fallback, which has no code (no file, no
/// entries): the runtime runs the reference decoder.
enum class KernelFormat : uint8_t { Ptx, Cubin, HostSharedObject, Reference };
const char *toString(KernelFormat f);
std::optional<KernelFormat> parseKernelFormat(const std::string &s);

struct KernelEntry {
  std::string id;                  ///< non-empty, unique; opaque
  std::optional<std::string> file; ///< a listed kernel file; none: reference
  std::string registryId; ///< the lib/Kernels registry kernel it implements
  kernels::Target target{"host", kernels::Backend::Host, 0};
  KernelFormat format = KernelFormat::HostSharedObject;
  kernels::Phase phase = kernels::Phase::Decode;
  /// The T this entry serves (max always set; kMaxDimension: unbounded).
  kernels::TokenRange tokens{1, kMaxDimension};
  int64_t n = 0, k = 0; ///< local shape
  FloatType activation = FloatType::F16;
  FloatType output = FloatType::F16;
  bool bias = false;
  // Native only:
  std::string layout;     ///< layout family the kernel reads
  unsigned codeBits = 4;  ///< 2 to 8, not 7
  bool codeSigned = true; ///< symmetric signed; else unsigned + u8 zeros
  /// Whether the kernel takes z: unsigned codes without a codebook.
  bool takesZeroPoints() const {
    return !codeSigned && codebook == Codebook::None;
  }
  /// Unsigned codes with a float min per group (z in the scale dtype,
  /// x = s * q + m) rather than u8 zero-points.
  bool minZero = false;
  /// Unsigned codes that index this table (x = s * table[q]), no z.
  Codebook codebook = Codebook::None;
  int64_t groupSize = 0; ///< 0: per output channel
  /// The dtype the kernel computes its scales (and mins) in.
  FloatType scale = FloatType::F16;
  /// A nested descriptor's qparams read as stored (the host GEMM, the
  /// decode GEMV, the tensor-core GEMM): s holds
  /// one-byte first-level scale codes (i8 or u8), s2 one second-level scale
  /// per `superGroupSize` codes in `superType`; with a min, z holds the
  /// unsigned min codes and z2 the second-level mins. The kernel decodes
  /// s = s2 * code and m = -(z2 * code) in `scale` (f32).
  struct NestedScales {
    int64_t superGroupSize = 0;
    FloatType superType = FloatType::F16;
    bool operator==(const NestedScales &o) const {
      return superGroupSize == o.superGroupSize && superType == o.superType;
    }
  };
  std::optional<NestedScales> nested;
  /// layout "mixed_2416" (no code, group_size, scale or nested): the
  /// tensor-independent fields of the mixed 2/4/16 descriptor the kernel
  /// was specialized for. Its entry points each take one T of [1, 16] (the
  /// kernel's T is static); the runtime runs a larger T in chunks.
  struct MixedStreams {
    int64_t firstGroupSize = 64;  ///< G1
    int64_t secondGroupSize = 16; ///< G2
    FloatType secondType = FloatType::F16;
    FloatType sparseType = FloatType::F16;
    SparseSemantics sparse = SparseSemantics::Replacement;
    bool operator==(const MixedStreams &o) const {
      return firstGroupSize == o.firstGroupSize &&
             secondGroupSize == o.secondGroupSize &&
             secondType == o.secondType && sparseType == o.sparseType &&
             sparse == o.sparse;
    }
  };
  std::optional<MixedStreams> mixed;
  /// A kernel that quantizes its activations per token before its integer
  /// GEMV (W8A8, kernels::ActivationQuant; Conversion/W8A8Kernel.h): the
  /// quantizer's entry points, one per T as the GEMV's `entries` (the same
  /// Ts), and on a GPU its launch (grid over T). The quantizer's arguments
  /// are fixed: x [T, K] in `activation`, then xq, sx, [zx] as the GEMV
  /// takes them; the record's `args` are the GEMV's: xq, sx, [zx], w, s,
  /// [z], [b], y.
  struct ActivationQuantizer {
    bool symmetric = true; ///< i8 codes; else u8 codes and a zero-point
    std::vector<EntryPoint> entries;
    std::optional<LaunchConfig> launch;
    bool operator==(const ActivationQuantizer &o) const {
      return symmetric == o.symmetric && entries == o.entries &&
             launch == o.launch;
    }
  };
  std::optional<ActivationQuantizer> activationQuant;
  /// Ascending, disjoint, covering `tokens` (the GEMM's one entry point
  /// accepts any T; each phase's manifest entry narrows it).
  std::vector<EntryPoint> entries;
  /// In call order: x, w, s, [s2], [z], [z2], [b], y; a mixed kernel's as
  /// mixed2416ArgOrder gives them.
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
  bool operator==(const KernelEntry &o) const;
  bool operator!=(const KernelEntry &o) const { return !(*this == o); }
};

/// The layout family of the mixed 2/4/16 kernels.
inline constexpr const char *kMixed2416Layout = "mixed_2416";

/// A mixed_2416 kernel's arguments in call order (with or without a bias).
std::vector<ArgRole> mixed2416ArgOrder(bool bias);
/// A W8A8 GEMV's arguments in call order (KernelEntry::activationQuant).
std::vector<ArgRole> w8a8ArgOrder(bool symmetricActivations,
                                  bool weightZeroPoints, bool bias);

/// The entry as manifest.json spells it (docs/manifest.schema.json).
nlohmann::json toJson(const KernelEntry &e);

/// Reads and checks one entry; `where` ("manifest.kernels[3]") prefixes every
/// error. Checks everything the entry says about itself; not the file's
/// listing or the ops' tensors (validateManifest does).
Expected<KernelEntry> kernelEntryFromJson(const nlohmann::json &j,
                                          const std::string &where);

} // namespace qtensor::artifact

#endif // QTENSOR_FORMATS_KERNELENTRY_H
