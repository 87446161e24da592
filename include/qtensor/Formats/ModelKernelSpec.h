//===- ModelKernelSpec.h - What a decoder's model kernels are ---*- C++ -*-===//
//
// The decoder program's non-linear kernels (embedding, RMSNorm, RoPE,
// attention, SiLU gate, residual add, float linear, argmax) as plain specs:
// the compiler builds them (Conversion/ModelKernels.h), and the runtime
// derives the same specs from the program's config and tensors and checks
// that the program names exactly those symbols, so a kernel is never called
// on buffers of another shape or dtype than it was built for. MLIR-free.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_MODELKERNELSPEC_H
#define QTENSOR_FORMATS_MODELKERNELSPEC_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Formats/DecoderProgram.h"

#include <cstdint>
#include <optional>
#include <string>

namespace qtensor {

enum class ModelOp : uint8_t {
  Embed,       ///< (ids ?xi32, table VxD, out ?xD f32), rows x scale
  RmsNorm,     ///< (x ?xD, w D, y ?xD); in place allowed; y = x / rms(x)
               ///< x (w + weightOffset)
  RopeQ,       ///< (x ?xW, pos ?xi32, y ?xW f32)
  RopeK,       ///< (x ?xW, pos ?xi32, cache ?xW out): row pos[t]
  StoreV,      ///< (x ?xW, pos ?xi32, cache ?xW out): row pos[t]
  Attention,   ///< (q ?xQ f32, kc CxKV w, vc CxKV w, pos ?xi32,
               ///<  scores C f32, heads 2xi32, out ?xQ); C dynamic;
               ///<  q.k x scale, the last `window` positions when
               ///<  window > 0; only heads [heads[0], heads[1]) (clamped
               ///<  to [0, H]) are computed and written
  SiluMul,     ///< (gate ?xF, up ?xF, y ?xF)
  GeluMul,     ///< (gate ?xF, up ?xF, y ?xF): tanh GELU
  ResidualAdd, ///< (x ?xD f32, y ?xD): x += y (x += scale * y)
  FloatLinear, ///< (x ?xK, w ?xK, [b ?], y ?x? strided): y = x w^T (+ b)
               ///< on any range of w's N rows (b's and y's matching
               ///< range: y from that column, row stride N)
  Argmax,      ///< (logits ?xV f32, id 1xi32): of the last row
  Softcap,     ///< (x ?xV f32): x = c tanh(x / c) in place, c = softcap
  Scale,       ///< (x ?xV f32): x *= scale in place
  EmbedCodes,  ///< (ids ?xi32, codes VxS i8, scales VxG, [zeros VxG],
               ///< out ?xD f32): rows of a quantized table as stored (its
               ///< decode_gemv codes, offset binary, one per byte or two
               ///< per byte): q = u - offset, x = s * q (s * table[q] for
               ///< a codebook), s * (q - z) or s * q + m by the
               ///< zero-point kind, times the row scale
};

/// One model kernel: the op and the dimensions and dtypes it is built for.
struct ModelKernelSpec {
  ModelOp op = ModelOp::Embed;
  int64_t width = 0; ///< D, F or W; FloatLinear: K; Argmax/Embed: V
  int64_t rows = 0;  ///< Embed: D; FloatLinear: N (the cache's capacity C
                     ///< is a run-time size)
  int64_t heads = 0, kvHeads = 0, headDim = 0, ropeDim = 0;
  FloatType input = FloatType::F16;  ///< activations read (x, gate, y)
  FloatType weight = FloatType::F32; ///< table, norm or linear weight
  FloatType output = FloatType::F16; ///< activations written
  double eps = 1e-5, ropeBase = 10000.0;
  /// RmsNorm: added to each weight (gemma's 1 + w from Hugging Face).
  double weightOffset = 0;
  artifact::RopeStyle rope = artifact::RopeStyle::Interleaved;
  /// RoPE: the config's frequency divisors (empty: none), baked into the
  /// code.
  std::vector<double> ropeFreqFactors;
  double scale = 1.0; ///< Embed: row scale; Attention: q.k scale;
                      ///< RopeQ/RopeK: cos and sin's factor; ResidualAdd:
                      ///< y's factor; Scale: the factor
  /// Attention: each score s (after the scale) becomes c tanh(s / c);
  /// Softcap: its c. 0: none.
  double softcap = 0;
  int64_t window = 0; ///< Attention: sliding window (0: global)
  /// EmbedCodes: codes per scale, the stored offset (2^(bits-1) for signed
  /// codes) and the bytes of one stored row (S); `weight` is the scales'
  /// dtype (and the dtype of `float` and `min` zero-points; `integer`
  /// ones are U8).
  int64_t group = 0, codeOffset = 0, rowStride = 0;
  /// EmbedCodes: bits of one stored field (8: a code per byte; 4: two per
  /// byte, the low nibble first) and the zero-point kind.
  int64_t fieldBits = 8;
  ZeroPointKind zeroPoint = ZeroPointKind::None;
  /// EmbedCodes: a code's value is its entry in this table (IQ4_NL, NF4,
  /// E2M1, E4M3), baked into the code; then x = s * table[q].
  Codebook codebook = Codebook::None;
  /// FloatLinear: the bias's stored dtype (y = x w^T + b, b [N], qwen2's
  /// q, k and v kept float); none: no bias argument.
  std::optional<FloatType> bias;

  /// The function's name, unique per distinct spec ("qt_model_...").
  std::string name() const;
  /// The C-interface symbol the runtime resolves.
  std::string symbol() const { return "_mlir_ciface_" + name(); }
};

/// Every field, as the decoder graph's declarations carry a spec
/// (`qtensor.model_kernel`). Strict: every key required, no other;
/// `where` prefixes errors. A parsed spec is only trusted once its name()
/// is the one it was declared under.
nlohmann::json toJson(const ModelKernelSpec &spec);
Expected<ModelKernelSpec> modelKernelSpecFromJson(const nlohmann::json &j,
                                                  const std::string &where);

/// The kernels of a decoder with `config`: the linears' activation dtype and
/// the stored dtypes of the embedding table and the norm weights.
struct DecoderKernelSet {
  ModelKernelSpec embed, norm, storeV, gateMul, residualAdd, argmax;
  /// gemma3: per-head q/k norm and the attention/MLP output norm, both on
  /// activations in place.
  ModelKernelSpec headNorm, outputNorm;
  /// gemma2: the logits' soft cap (config.finalSoftcap > 0).
  ModelKernelSpec finalSoftcap;
  /// granite: the logits times 1 / config.logitScale (not 1).
  ModelKernelSpec logitScale;
};
/// `kvCache`: the KV cache's dtype (DecoderProgram::kvCache), which
/// store_v writes.
DecoderKernelSet decoderKernels(const artifact::DecoderConfig &config,
                                FloatType activation, FloatType embed,
                                FloatType norm,
                                FloatType kvCache = FloatType::F32);
/// Layer `layer`'s RoPE and attention kernels (its window and base).
struct LayerKernelSet {
  ModelKernelSpec ropeQ, ropeK, attention;
  /// LongRoPE (config.ropeFreqFactorsLong): RoPE over the long divisors.
  std::optional<ModelKernelSpec> ropeQLong, ropeKLong;
};
/// RoPE for k writes the cache in `kvCache`; attention reads it (its
/// `weight` dtype).
LayerKernelSet layerKernels(const artifact::DecoderConfig &config,
                            int64_t layer, FloatType activation,
                            FloatType kvCache = FloatType::F32);
/// The embedding kernel that gathers rows of the quantized tensor `table`
/// ([vocab, hidden]) from its stored codes: codes of 2 to 8 bits (not 7) in
/// the decode_gemv layout, scales per group along the row (a nested or
/// scale-format first level as the loader decodes it, f32), any zero-point
/// kind or a codebook, no permutation. Otherwise an error saying what does
/// not fit.
Expected<ModelKernelSpec>
embedCodesKernel(const artifact::DecoderConfig &config,
                 const QuantizedTensorDescriptor &table);
/// The program's embedding kernel: Embed on a plain table, EmbedCodes on a
/// quantized one (a validated program against its manifest).
Expected<ModelKernelSpec> programEmbedKernel(const artifact::DecoderProgram &p,
                                             const artifact::Manifest &m);

/// y[T, N] = x[T, K] w[N, K]^T (+ b[N] stored as `bias`), x in
/// `activation`, y in `output`.
ModelKernelSpec floatLinearKernel(int64_t n, int64_t k, FloatType activation,
                                  FloatType weight, FloatType output,
                                  std::optional<FloatType> bias = std::nullopt);

/// The program names exactly the kernels its config, activation dtype and
/// tensors' stored dtypes imply (a validated program against its
/// manifest); checked before any kernel code is loaded, so no kernel is
/// called on buffers of another shape or dtype than it was built for.
/// `name` prefixes errors.
Status checkProgramKernels(const artifact::DecoderProgram &program,
                           const artifact::Manifest &manifest,
                           const std::string &name);

/// The distinct kernels a program checked by checkProgramKernels calls:
/// what a trusted rebuild of its host code builds (Runtime/ArtifactCode.h).
std::vector<ModelKernelSpec>
programKernelSpecs(const artifact::DecoderProgram &program,
                   const artifact::Manifest &manifest);

} // namespace qtensor

#endif // QTENSOR_FORMATS_MODELKERNELSPEC_H
