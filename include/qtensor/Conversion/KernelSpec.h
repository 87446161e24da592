//===- KernelSpec.h - What a generated kernel is made for -------*- C++ -*-===//
//
// The static configuration the kernel generators specialize a quantized
// linear kernel for (seed M8.9 0x07A): family, code width, symmetry, group
// size, activation, scale and output dtypes, the bias epilogue, rows T
// (static, or dynamic: one instance for every T of its phase), the weight
// shape [N, K] and the split-K factor. A spec has a one-line text form used
// by pass options and a canonical kernel name used for symbols and `.ptx`
// file names. Validation happens here, before any IR is built, so that bad
// options get a sentence rather than a crash in the NVPTX backend.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_CONVERSION_KERNELSPEC_H
#define QTENSOR_CONVERSION_KERNELSPEC_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Numerics/ActivationQuant.h"
#include "qtensor/Numerics/KernelLayout.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qtensor {

enum class KernelFamily : uint8_t {
  DecodeGemv, ///< T = 1..16 rows: 128-bit code loads, warp-shuffle reduction
  PrefillMma, ///< tensor-core GEMM: mma.sync m16n8k16, cp.async staging
  /// The CPU's own GEMV/GEMM (host only): vector-dialect rows over the
  /// decode_gemv layout, any T, callable on any slice of output rows.
  HostGemm,
};

/// The most groups a row of a host GEMM with nested scales has: its decoded
/// scales and mins are two f32 stack rows of that length (64 KiB).
constexpr int64_t kMaxNestedGroupsPerRow = 8192;

/// `rows` of a spec whose T is a dynamic dimension of x and y.
constexpr int64_t kDynamicRows = 0;

struct QuantKernelSpec {
  KernelFamily family = KernelFamily::DecodeGemv;
  /// 4 or 8, or 2, 3, 5 or 6 (one per byte field; every family).
  unsigned bits = 4;
  bool symmetric = true; ///< signed codes, no zero-points
  /// Unsigned codes with a float `min` per group in the scale dtype,
  /// x = s * q + m (ggml Q4_1, Q5_1, Q4_K, Q5_K), instead of a u8
  /// zero-point.
  bool minZero = false;
  /// Unsigned codes that index this value table, x = s * table[q], with
  /// no zero-point (ggml IQ4_NL; `symmetric` and `minZero` false). The
  /// tensor-core GEMM takes only tables exact in the activation type.
  Codebook codebook = Codebook::None;
  /// 32, 64, 128, or 0 for per-channel (G = K); 16 for the tensor-core
  /// GEMM, and for the row kernels' byte codes (ggml Q6_K) or W4 codes
  /// without a zero-point.
  int64_t groupSize = 128;
  /// The dtypes are the descriptor's one float enum (Descriptor.h).
  /// Activations: f16 or bf16.
  FloatType activation = FloatType::F16;
  /// Scale (and float zero-point) dtype; unset means the activation's (a
  /// bf16 model may well carry f16 scales, so the two are independent).
  /// f32 holds the exact products of ggml K-quants' (and IQ4_XS's) two
  /// scale levels.
  std::optional<FloatType> scale;
  /// A nested descriptor's first level read as stored (ggml K-quants,
  /// IQ4_XS) rather than decoded at load. s holds one-byte scale codes and
  /// s2 a second-level scale per `superGroupSize` codes; with a min, z the
  /// min codes (unsigned) and z2 the second-level mins. The kernels decode
  /// second level first, s = s2 * code, m = -(z2 * code), in f32: the
  /// exact products the load-time decoder gives (NestedQParams), so
  /// `scale` is f32. The host GEMM decodes a row's groups once into f32
  /// stack rows; the GPU kernels decode each group where they load it (the
  /// decode GEMV per chunk, the tensor-core GEMM per staged k-tile).
  struct NestedScales {
    int64_t superGroupSize = 256;
    bool signedCodes = false; ///< i8 scale codes (Q3_K, Q6_K); else u8
    FloatType superType = FloatType::F16;
    bool operator==(const NestedScales &o) const {
      return superGroupSize == o.superGroupSize &&
             signedCodes == o.signedCodes && superType == o.superType;
    }
  };
  std::optional<NestedScales> nested;
  /// Output (and bias) dtype: the linear's result type.
  FloatType output = FloatType::F32;
  bool bias = false; ///< y += b[n], b: [N] in the output dtype
  int64_t rows = 1;  ///< T, or kDynamicRows
  int64_t n = 0;     ///< output features (weight rows)
  int64_t k = 0;     ///< input features (weight columns)
  int64_t splitK = 1;
  /// Host GEMM only: at T = 1 the kernel quantizes X to int8 per block of
  /// kActivationBlock (ggml Q8_0's rule, Numerics/ActivationQuant.h) and
  /// multiplies codes and activations as integers, scaling each chunk's
  /// sum once; T > 1 keeps X in f32 (built for x86-64-v4-amx, the forms
  /// of kernels::hostGemmUsesInt8Tiles quantize it too and run T > 1 on
  /// AMX tiles). Signed codes without a zero-point or
  /// codebook, groups whole chunks, K at most kMaxQuantizedActivationRow.
  bool quantizedActivations = false;

  FloatType scaleType() const { return scale.value_or(activation); }
  /// Whether the kernel takes a zero-point (or min) operand z: unsigned
  /// codes without a codebook.
  bool takesZeroPoints() const {
    return !symmetric && codebook == Codebook::None;
  }
  /// Width of the field a code is stored in: 4 for 4-bit codes, else 8.
  unsigned fieldBits() const { return bits == 4 ? 4 : 8; }
  bool dynamicRows() const { return rows == kDynamicRows; }
  /// The group size the kernel indexes with: K for per-channel.
  int64_t effectiveGroupSize() const { return groupSize == 0 ? k : groupSize; }
  int64_t groupsPerRow() const;
  /// Second-level qparams per row (nested only): K / superGroupSize.
  int64_t superGroupsPerRow() const;
  /// Codes one decode lane reads per 128-bit load: 128 / fieldBits().
  int64_t chunkCodes() const { return 128 / fieldBits(); }
  /// The kernel-native layout this kernel reads its codes in.
  KernelLayoutSpec layout() const;
  /// e.g. qt_decode_gemv_w4sym_g128_f16_t4_n4096_k4096_s1 (`w4iq4_nl` for
  /// a codebook's codes), with suffixes
  /// for what differs from the defaults: `_scbf16` (scale dtype other than
  /// the activation's), `_of16` / `_obf16` (output other than f32),
  /// `_bias`, `_xq8` (quantizedActivations), `_sup256u8f16` (nested: the
  /// super-group, the scale codes' type, the second level's dtype); `tdyn`
  /// for dynamic T.
  std::string name() const;
};

/// Threads per block and output rows per block of the decode kernel: one
/// warp per output feature.
constexpr int64_t kDecodeWarpsPerBlock = 4;
constexpr int64_t kWarpSize = 32;

/// Parses `family:wB:gG|gch:CODES:f16|bf16:tT|tdyn:nN:kK[:OPT]...` with
/// CODES `sym` (signed codes), `asym` (unsigned, u8 zero-points), `min`
/// (unsigned, a float min) or a codebook's name (`iq4_nl`, `nf4`: unsigned
/// indices into that table),
/// with OPT one of `sS` (split-K), `scf16|scbf16|scf32` (scale dtype),
/// `of16|obf16|of32`
/// (output dtype, default f32), `bias`, `xq8` (int8 activations),
/// `supS{i8|u8}{f16|bf16}` (nested scales, e.g. `sup256u8f16`); e.g.
/// `decode_gemv:w4:g128:sym:bf16:tdyn:n4096:k4096:scf16:obf16:bias`. Each
/// option at most once. `prefill_mma` and `host_gemm` specs may leave T out
/// (`prefill_mma:w4:g128:sym:f16:n4096:k4096:of16`), which means tdyn.
/// Validates the result.
Expected<QuantKernelSpec> parseQuantKernelSpec(std::string_view text);

/// Checks the limits of the generated kernels; the message names the field.
Status validateQuantKernelSpec(const QuantKernelSpec &spec);

} // namespace qtensor

#endif // QTENSOR_CONVERSION_KERNELSPEC_H
