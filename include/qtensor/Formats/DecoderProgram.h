//===- DecoderProgram.h - The whole decoder an artifact runs ----*- C++ -*-===//
//
// The record that makes an artifact a model: the decoder's hyperparameters,
// which manifest tensor plays which part (embedding, norms, every linear,
// the head), the model kernels (symbols in the artifact's host kernel
// library) and the tokenizer file. The compiler writes it as the file with
// role "program" (program.json); the runtime reads it with the same code
// (programFromJson, then validateProgram against the manifest), so the
// schedule the runtime executes is the one the compiler recorded.
//
// The schedule itself is the llama family's (docs/model.md): per layer
// norm, q/k/v, RoPE into the KV cache, attention, o, residual, norm,
// gate/up, SiLU-gate, down, residual; then the final norm, the head and the
// argmax. A linear either names a quantized tensor (run by the kernels its
// op was admitted with) or a plain [N, K] tensor with the float linear
// kernel that reads it.
//
// Every field is untrusted: dimensions are bounded, the products the
// runtime sizes buffers from are checked, tensors must exist with the
// shapes the config implies, kernels must be C-interface symbols.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_DECODERPROGRAM_H
#define QTENSOR_FORMATS_DECODERPROGRAM_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Support/Expected.h"
#include "qtensor/Support/HostCpu.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::artifact {

struct Manifest;

inline constexpr const char *kProgramSchema = "qtensor.decoder-program.v1";
/// Largest program.json accepted.
inline constexpr uint64_t kMaxProgramBytes = 16ull << 20;

/// How RoPE pairs the dimensions of a head: ggml's "normal" mode rotates
/// (2i, 2i+1) (GGUF llama, whose q/k rows the converter permuted); NeoX /
/// Hugging Face rotate (i, i + d/2).
enum class RopeStyle : uint8_t { Interleaved, Half };
const char *toString(RopeStyle s);
std::optional<RopeStyle> parseRopeStyle(const std::string &s);

/// The gate of the MLP: SwiGLU (llama family) or GeGLU with the tanh GELU
/// (gemma3).
enum class GateActivation : uint8_t { Silu, GeluTanh };
const char *toString(GateActivation a);
std::optional<GateActivation> parseGateActivation(const std::string &s);

struct DecoderConfig {
  std::string architecture; ///< a family of Models/Architecture.h
  int64_t hidden = 0, intermediate = 0, layers = 0, heads = 0, kvHeads = 0,
          headDim = 0, vocab = 0;
  int64_t context = 0; ///< the trained context length
  int64_t ropeDim = 0; ///< dimensions of a head that RoPE rotates (even)
  double rmsEps = 1e-5, ropeBase = 10000.0;
  RopeStyle rope = RopeStyle::Interleaved;
  double embedScale = 1.0;   ///< the embedding rows are multiplied by it
  double attentionScale = 0; ///< q.k scale; 0: 1/sqrt(headDim)
  GateActivation gate = GateActivation::Silu;
  /// Sliding-window attention: every layer l with (l + 1) % slidingPattern
  /// != 0 attends to the last slidingWindow positions only, with RoPE base
  /// ropeBaseLocal; the others are global (gemma3). slidingPattern 0: every
  /// layer is windowed (mistral). slidingWindow 0: every layer global.
  int64_t slidingWindow = 0, slidingPattern = 0;
  /// Only layers from slidingFrom on are windowed (qwen2's and qwen3's
  /// max_window_layers); 0: the pattern alone decides. sliding_from.
  int64_t slidingFrom = 0;
  double ropeBaseLocal = 10000.0;
  /// RoPE scaling as llama.cpp's rope_freqs spells it: empty, or ropeDim / 2
  /// divisors of each frequency (theta_i = p * base^(-2i/d) / f_i). Linear
  /// scaling is every f_i = factor; llama3 scales the low frequencies only.
  std::vector<double> ropeFreqFactors;
  /// Whether the windowed layers' RoPE is scaled too (false: gemma3, whose
  /// local layers keep their own base unscaled, as llama.cpp's
  /// rope_freq_scale_train_swa = 1 and transformers' local RoPE do).
  bool ropeScalesLocal = true;
  /// LongRoPE (phi3's 128k models): a forward whose positions reach
  /// ropeLongFrom (the original context) or beyond rotates with these
  /// divisors instead of ropeFreqFactors (the short ones), as transformers'
  /// longrope frequency update does; empty: one set. rope_freq_factors_long,
  /// rope_long_from.
  std::vector<double> ropeFreqFactorsLong;
  int64_t ropeLongFrom = 0;
  /// The factor on cos and sin (rope_mscale; 1: none): LongRoPE's
  /// attention factor, which scales the rotated dimensions only, so it is
  /// not attentionScale's when RoPE rotates part of a head.
  double ropeMscale = 1.0;
  /// Logit soft-capping (gemma2): each attention score s becomes
  /// c tanh(s / c) with c = attnSoftcap, and each output logit likewise
  /// with finalSoftcap; 0: none.
  double attnSoftcap = 0, finalSoftcap = 0;
  /// Every RMSNorm multiplies by (w + normWeightOffset): 1 for a Hugging
  /// Face gemma, whose norm weights store w - 1 (llama.cpp's converter
  /// adds the 1 into a GGUF file's norms); 0 otherwise.
  double normWeightOffset = 0;
  /// granite: each attention and MLP output is multiplied by residualScale
  /// before its residual add, and the logits are divided by logitScale
  /// (llama.cpp's f_residual_scale, f_logit_scale); 1: none.
  double residualScale = 1.0, logitScale = 1.0;
  int64_t qWidth() const { return heads * headDim; }
  int64_t kvWidth() const { return kvHeads * headDim; }
  double qkScale() const;
  /// Layer l's attention window (0: global) and RoPE base.
  int64_t windowOf(int64_t layer) const;
  double ropeBaseOf(int64_t layer) const;
  /// Layer l's RoPE divisors: ropeFreqFactors, or none for a windowed layer
  /// when !ropeScalesLocal.
  const std::vector<double> &ropeFreqFactorsOf(int64_t layer) const;
  /// Whether a forward over positions [.., end) uses the long divisors.
  bool usesLongRope(int64_t positionsEnd) const {
    return !ropeFreqFactorsLong.empty() && positionsEnd > ropeLongFrom;
  }
  bool operator==(const DecoderConfig &o) const;
};

/// Every dimension in range, heads a multiple of kvHeads, ropeDim even and
/// at most headDim, eps and base finite and positive. `where` prefixes
/// errors.
Status validateDecoderConfig(const DecoderConfig &c, const std::string &where);

struct ProgramLinear {
  std::string tensor; ///< a manifest tensor: quantized op, or plain [N, K]
  /// Plain weights: the float linear kernel's symbol. Quantized: none (the
  /// op's admitted kernels run it).
  std::optional<std::string> kernel;
  /// Plain weights only: a plain [N] bias the float linear kernel adds
  /// (a quantized op carries its bias as its epilogue).
  std::optional<std::string> bias;
  bool operator==(const ProgramLinear &o) const;
};

struct ProgramLayer {
  std::string attnNorm, ffnNorm; ///< plain [hidden]
  ProgramLinear q, k, v, o, gate, up, down;
  /// qwen3, gemma3: RMSNorm of each q and k head ([headDim]); gemma3: of
  /// the attention and MLP outputs before their residual adds ([hidden]).
  std::optional<std::string> qNorm, kNorm, postAttnNorm, postFfnNorm;
  /// This layer's kernels: RoPE and attention depend on its window and
  /// base (config.windowOf, ropeBaseOf).
  std::string ropeQ, ropeK, attention;
  /// LongRoPE: the same kernels over the long divisors.
  std::optional<std::string> ropeQLong, ropeKLong;
  bool operator==(const ProgramLayer &o) const;
};

/// The symbols of the per-model kernels (docs/model.md has their ABI).
struct ModelKernelSymbols {
  std::string embed, norm, finalNorm, storeV, gateMul, residualAdd, argmax;
  /// gemma3: the per-head norm (in place) and the output norm.
  std::optional<std::string> headNorm, outputNorm;
  /// gemma2: the logits' soft cap (in place), when config.finalSoftcap.
  std::optional<std::string> finalSoftcap;
  /// granite: the logits times 1 / config.logitScale (in place), when it
  /// is not 1.
  std::optional<std::string> logitScale;
  bool operator==(const ModelKernelSymbols &o) const;
};

struct DecoderProgram {
  DecoderConfig config;
  /// The dtype between the norms, linears and attention (the quantized
  /// linears' activation and output dtype); the residual stream, the KV
  /// cache and the logits are f32.
  FloatType activation = FloatType::F16;
  /// The KV cache's values: f32, or f16 (half the memory and the bytes
  /// attention reads; V is stored exactly from f16 activations, K rounds
  /// once after RoPE). kv_cache.
  FloatType kvCache = FloatType::F32;
  std::string kernelFile; ///< the host kernel library (role "kernel")
  /// The CPU level kernelFile was built for (checked before it is loaded).
  HostCpuLevel hostCpu = HostCpuLevel::Generic;
  ModelKernelSymbols kernels;
  /// Plain [vocab, hidden], or the quantized head's tensor: a tied head's
  /// codes are the embedding's rows, read as stored.
  std::string embed;
  std::string finalNorm; ///< plain [hidden]
  ProgramLinear head;    ///< [vocab, hidden]; tied: the embedding
  std::vector<ProgramLayer> layers;
  std::optional<std::string> tokenizerFile; ///< role "tokenizer" (GGUF)

  /// The head, then every layer's q, k, v, o, gate, up, down.
  std::vector<const ProgramLinear *> linears() const;
  /// Every tensor the program reads (repeats kept, e.g. a tied head).
  std::vector<std::string> tensors() const;
  /// The model kernels' symbols (not the float linears'), repeats kept.
  std::vector<std::string> modelKernelSymbols() const;
  bool operator==(const DecoderProgram &o) const;
};

/// The config alone (program.json's "config"; the decoder graph's
/// `qtensor.decoder` attribute): strict, then validateDecoderConfig;
/// `where` prefixes errors.
nlohmann::json decoderConfigToJson(const DecoderConfig &c);
Expected<DecoderConfig> decoderConfigFromJson(const nlohmann::json &j,
                                              const std::string &where);

nlohmann::json toJson(const DecoderProgram &p);
/// Strict: every field required, no unknown keys, then
/// validateDecoderConfig. `name` prefixes errors (the file).
Expected<DecoderProgram> programFromJson(const nlohmann::json &j,
                                         const std::string &name);
/// Parses program.json text (bounded, strict JSON), then programFromJson.
Expected<DecoderProgram> parseProgram(std::string_view text,
                                      const std::string &name);
/// The program against its manifest: layer count, files with their roles,
/// every tensor present with the shape the config implies (a plain weight
/// in F32, F16 or BF16; a quantized one with logical shape [N, K]), float
/// linears only on plain tensors and quantized ones without a kernel.
Status validateProgram(const DecoderProgram &p, const Manifest &m,
                       const std::string &name);

} // namespace qtensor::artifact

#endif // QTENSOR_FORMATS_DECODERPROGRAM_H
