//===- HFQuantized.h - GPTQ, AWQ and compressed-tensors linears -*- C++ -*-===//
//
// Hugging Face checkpoints whose config.json carries a `quantization_config`
// store each quantized linear as a few integer tensors instead of `weight`.
// Their codes are kept as stored (seed M8.9 0x04A), read by the published
// conventions:
//
//   gptq   qweight I32 [K/p, N]: code (k, n) in bits b*(k%p) of word
//          (k/p, n), p = 32/b; qzeros I32 [G, N/p] the same along N;
//          scales [G, N]; g_idx I32 [K], the group of input column k.
//          checkpoint_format "gptq" (v1) stores zero-1, "gptq_v2" the zero.
//   awq    (version "gemm") qweight I32 [K, N/8] and qzeros I32 [G, N/8]
//          packed along N in the order 0 2 4 6 1 3 5 7; scales [G, N].
//   compressed-tensors
//          pack-quantized: weight_packed I32 [N, K/p] along K, codes stored
//          as q + 2^(b-1); weight_zero_point I32 [N/p, G] packed along N in
//          the same form; weight_scale [N, G]; weight_g_idx I32 [K];
//          int-quantized / naive-quantized: weight I8 [N, K] holds q.
//          float-quantized (FP8): weight F8_E4M3 [N, K] holds OCP E4M3
//          codes, weight_scale [N, 1] (channel), [1] / [] (tensor) or
//          [ceil(N/bn), ceil(K/bk)] (block, `block_structure` [bn, bk]):
//          x = s * e4m3(q), read as ui8 codes of the `e4m3` codebook. A
//          per-tensor scale is stored once per output channel (the same
//          value N times): every kernel reads per-channel scales and the
//          reconstruction is the same.
//          nvfp4-pack-quantized (NVFP4): weight_packed U8 [N, K/2], two
//          E2M1 codes a byte, the even column in the low nibble;
//          weight_scale F8_E4M3 [N, K/16]; weight_global_scale F32 [1]:
//          x = e2m1(q) * s with s = fl32(e4m3(c) / g), the f32 scale
//          compressed-tensors computes itself. The codes are kept (the
//          `e2m1` codebook); the scales are stored as those f32 values, one
//          per 16 weights (6 bits a weight where the checkpoint stores
//          4.5: the kernels read f32 scales), and the report says so.
//          input_global_scale (W4A4 checkpoints) is read past: their FP4
//          activations run in 16 bits, as FP8_DYNAMIC's do.
//   fp8    (transformers' fine-grained FP8, DeepSeek-V3's format) weight
//          F8_E4M3 [N, K] and weight_scale_inv [ceil(N/bn), ceil(K/bk)]
//          for `weight_block_size` [bn, bk]: despite its name the stored
//          value multiplies, x = s * e4m3(q), as DeepSeek's weight_dequant
//          computes it.
//
// A 2-D block scale becomes groups of bk input columns per output row, the
// block's scale stored once for each of its bn rows: the kernels read
// per-row group scales, and every reconstructed value is the same (the
// rate claims count the repeated scales).
//
// x = s * (q - z) throughout. A symmetric scheme becomes a signed code
// with no zero-point: offset binary (packed, 4-bit) or two's complement
// (I8); packed 2- and 8-bit codes stay unsigned with the implied
// zero-point 2^(b-1). An asymmetric scheme is an unsigned code with integer
// zero-points. A g_idx that
// is not k / G is act-order: the descriptor's permutation lists the input
// columns in group order, every group but the last holding exactly G.
// Everything read here is untrusted: each tensor's dtype, shape, code and
// group index is checked, and errors name the module and the tensor.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_HFQUANTIZED_H
#define QTENSOR_FORMATS_HFQUANTIZED_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Support/Expected.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::hfquant {

enum class Method : uint8_t { GPTQ, AWQ, CompressedTensors, FineGrainedFP8 };

/// How one linear's codes and qparams are stored.
enum class Storage : uint8_t {
  PackedAlongK,  ///< gptq qweight [K/p, N]
  PackedAlongN,  ///< awq qweight [K, N/8], interleaved
  PackedOffsetK, ///< compressed-tensors weight_packed [N, K/p], q + 2^(b-1)
  Int8,          ///< compressed-tensors weight I8 [N, K]
  Float8E4M3,    ///< compressed-tensors weight F8_E4M3 [N, K]
  NVFP4Packed,   ///< compressed-tensors weight_packed U8 [N, K/2] (E2M1)
};

/// The quantization one linear declares.
struct WeightScheme {
  Method method = Method::GPTQ;
  Storage storage = Storage::PackedAlongK;
  unsigned bits = 4;
  /// > 0: groups along K; 0: one scale per output channel; -1: per tensor.
  int64_t groupSize = 0;
  /// > 0 (FP8 only): one scale per block of blockRows rows and groupSize
  /// columns, stored [ceil(N / blockRows), ceil(K / groupSize)].
  int64_t blockRows = 0;
  bool symmetric = false;
  bool zeroMinusOne = false; ///< gptq v1 stores zero - 1
};

/// A checkpoint's quantization_config.
struct QuantizationConfig {
  Method method = Method::GPTQ;
  std::string text; ///< "gptq 4-bit g128 desc_act", for reports
  struct Group {
    std::vector<std::string> targets; ///< "Linear", "re:REGEX" or a name
    WeightScheme scheme;
  };
  std::vector<Group> groups;       ///< gptq/awq: one
  std::vector<std::string> ignore; ///< compressed-tensors modules kept float

  /// The scheme of module `module` (`model.layers.0.self_attn.q_proj`):
  /// the first group whose targets match it. None when it is ignored or no
  /// group targets it; an error when two groups do.
  Expected<std::optional<WeightScheme>>
  schemeFor(const std::string &module) const;
};

/// Parses `quantization_config` of config.json (`file` names it in
/// errors). Methods and options this reader does not implement (3-bit
/// gptq, awq gemv/marlin packings, E5M2 or static FP8 activations,
/// integer activation quantization, ...) are refused by name.
Expected<QuantizationConfig>
parseQuantizationConfig(const nlohmann::json &config, const std::string &file);

/// The tensor suffixes a linear stores under `scheme`, in the order of
/// PackedTensors' fields; empty strings for those it has none of.
struct ComponentNames {
  std::string codes, zeros, scales, groupIndex, shape;
  std::string globalScale; ///< NVFP4's per-tensor divisor
  std::string unused;      ///< stored but read past (NVFP4's input scale)
};
ComponentNames componentNames(const WeightScheme &scheme);

/// The stored tensors of one quantized linear (null where absent).
struct PackedTensors {
  const safetensors::TensorView *codes = nullptr;
  const safetensors::TensorView *zeros = nullptr;
  const safetensors::TensorView *scales = nullptr;
  const safetensors::TensorView *groupIndex = nullptr;
  const safetensors::TensorView *shape = nullptr;
  const safetensors::TensorView *globalScale = nullptr;
};

/// The logical descriptor of the [n, k] linear `module` (logical layout,
/// the element type left F16): checks every tensor's dtype and shape, and
/// reads only the group index and the recorded shape.
Expected<QuantizedTensorDescriptor> describe(const WeightScheme &scheme,
                                             const PackedTensors &tensors,
                                             int64_t n, int64_t k,
                                             const std::string &module);

/// The stored codes and qparams in logical form: codes [N, K] row-major,
/// one scale (and zero) per qparam of `described` (qparamShape).
struct LogicalParts {
  std::vector<int32_t> codes;
  std::vector<float> scales;
  std::vector<int32_t> zeros; ///< empty for a symmetric scheme
};
Expected<LogicalParts> unpack(const WeightScheme &scheme,
                              const PackedTensors &tensors,
                              const QuantizedTensorDescriptor &described,
                              const std::string &module);

/// "GPTQ_INT4", "AWQ_INT4", "CT_INT8": how reports name the stored dtype.
std::string storedTypeName(const WeightScheme &scheme);

} // namespace qtensor::hfquant

#endif // QTENSOR_FORMATS_HFQUANTIZED_H
