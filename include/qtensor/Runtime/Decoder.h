//===- Decoder.h - Running an artifact's decoder program --------*- C++ -*-===//
//
// A loaded artifact (LoadOptions::decoder) run as a model: the decoder
// program's schedule (DecoderProgram.h) over persistent host buffers, the
// quantized linears through their admitted kernels, everything else through
// the program's model kernels, the KV cache in a KVCache the caller owns.
// Prefill runs T tokens per call (chunked at the buffers' size), decode one;
// the buffers, the cache and the logits are allocated once, so the decode
// loop allocates none of them (the host kernel calls still build their small
// argument descriptors per call).
//
// The cache is contiguous: per layer, K and V rows [capacity, kv width] in
// f32, row p holding position p. append happens in forward; truncate, fork
// (prefix reuse), reorder (beam search) and the position bookkeeping are
// the API seed M8.9 0x09E asks for.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_DECODER_H
#define QTENSOR_RUNTIME_DECODER_H

#include "qtensor/Formats/DecoderProgram.h"
#include "qtensor/Runtime/HostBackend.h"
#include "qtensor/Runtime/Loader.h"
#include "qtensor/Runtime/Sampler.h"
#include "qtensor/Support/Expected.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace qtensor {
class Tokenizer;
} // namespace qtensor

namespace qtensor::runtime {

class KVCache {
public:
  /// Storage for `capacity` positions of `width` values in `dtype` (f32
  /// or f16: the program's kv_cache); sizes are overflow-checked. Rows
  /// at size() and beyond hold no value until written (nothing reads
  /// them), so the memory is not touched up front: a cache sized for a
  /// model's whole context costs only the positions a sequence uses.
  static Expected<KVCache> create(int64_t layers, int64_t capacity,
                                  int64_t width,
                                  FloatType dtype = FloatType::F32);
  int64_t size() const { return tokens; } ///< positions held: 0..size()-1
  int64_t capacity() const { return cap; }
  int64_t layers() const { return layerCount; }
  int64_t width() const { return rowWidth; }
  FloatType dtype() const { return elementType; }
  /// Bytes the cache holds for every position of every layer, K and V.
  uint64_t bytesPerPosition() const {
    return 2 * uint64_t(layerCount) * uint64_t(rowWidth) * elementBytes();
  }
  /// Forgets positions n.. (n <= size()); their rows are overwritten later.
  Status truncate(int64_t n);
  /// A cache of the same capacity holding this one's first n positions
  /// (prefix reuse, another continuation of the same prompt).
  Expected<KVCache> fork(int64_t n) const;
  /// Layer `layer`'s [capacity, width] rows of dtype() values.
  uint8_t *keys(int64_t layer) { return &k[size_t(layer) * layerBytes()]; }
  uint8_t *values(int64_t layer) { return &v[size_t(layer) * layerBytes()]; }
  const uint8_t *keys(int64_t layer) const {
    return &k[size_t(layer) * layerBytes()];
  }
  const uint8_t *values(int64_t layer) const {
    return &v[size_t(layer) * layerBytes()];
  }
  /// Records that positions size()..size()+t-1 were written (Decoder).
  Status append(int64_t t);
  /// Beam search's reorder: beam i continues from what beams[parents[i]]
  /// held, for every i (a parent may be chosen by several beams or by
  /// none). A cache chosen once is moved, not copied. Every cache must
  /// have the same shape; on an error (a parent out of range, another
  /// shape, no memory for a copy) `beams` is unchanged.
  static Status reorder(std::vector<KVCache> &beams,
                        const std::vector<size_t> &parents);

private:
  size_t elementBytes() const { return elementType == FloatType::F16 ? 2 : 4; }
  size_t layerBytes() const {
    return size_t(cap) * size_t(rowWidth) * elementBytes();
  }
  int64_t layerCount = 0, cap = 0, rowWidth = 0, tokens = 0;
  FloatType elementType = FloatType::F32;
  /// Default-initialized (never zero-filled): fork copies and reorder
  /// moves only what a cache holds.
  std::unique_ptr<uint8_t[]> k, v;
};

/// Kernel launches per step kind, for the run's report (L5 observes them).
struct DecoderCounters {
  uint64_t modelKernelCalls = 0; ///< embed, norm, RoPE, attention, ...
  uint64_t quantizedLinearCalls = 0;
  uint64_t floatLinearCalls = 0;
  uint64_t forwards = 0;
};

struct GenerateOptions {
  int64_t maxTokens = 16;
  double temperature = 0; ///< 0: greedy (the argmax kernel)
  /// With temperature > 0: llama.cpp's cuts before the draw (Sampler.h);
  /// 0, 1 and 0 turn them off.
  int64_t topK = 0;
  double topP = 1.0, minP = 0.0;
  /// llama.cpp's repetition penalties over the last tokens (the prompt's
  /// included), before any cut and for greedy decoding too (Sampler.h).
  PenaltyOptions penalties;
  uint64_t seed = 0;
  /// Stop after a token of the tokenizer's end-of-generation set
  /// (Tokenizer::endOfGeneration: EOS, end of turn, ...); an artifact
  /// without a tokenizer never stops early.
  bool stopAtEos = true;
  /// Called with each generated token as soon as it is chosen.
  std::function<void(int32_t)> onToken;
};

struct GenerateResult {
  std::vector<int32_t> tokens;     ///< generated, the stopping token included
  std::vector<float> promptLogits; ///< after the last prompt token
  double prefillSeconds = 0, decodeSeconds = 0;
  int64_t prefillTokens = 0, decodeTokens = 0; ///< tokens run in each phase
  bool stoppedAtEos = false;
  bool stoppedAtContext = false; ///< the KV cache was full
};

/// The `k` largest logits as (token id, logit), largest first, a tie
/// broken by the lower id as the greedy argmax breaks it; fewer when there
/// are fewer logits.
std::vector<std::pair<int32_t, float>>
topLogits(const std::vector<float> &logits, size_t k);

class Decoder {
public:
  /// The decoder of `model` (loaded with LoadOptions::decoder), with
  /// buffers for up to `chunk` tokens per forward call.
  static Expected<std::unique_ptr<Decoder>> create(LoadedModel &model,
                                                   int64_t chunk = 64);
  ~Decoder();

  const artifact::DecoderConfig &config() const { return program.config; }
  /// A cache for this model; capacity 0: the trained context length.
  Expected<KVCache> newCache(int64_t capacity = 0) const;

  /// Runs `tokens` at positions cache.size()... and appends them to the
  /// cache; returns the logits (vocab floats) after the last one, valid
  /// until the next call. Token ids outside the vocabulary, a full cache
  /// or a cache of another shape are errors, and the cache is unchanged.
  Expected<const std::vector<float> *> forward(const std::vector<int32_t> &ids,
                                               KVCache &cache);
  /// The first maximum of the last logits (the program's argmax kernel).
  Expected<int32_t> argmax();

  /// Prefill `prompt`, then decode up to options.maxTokens tokens.
  Expected<GenerateResult> generate(const std::vector<int32_t> &prompt,
                                    KVCache &cache,
                                    const GenerateOptions &options);

  /// The artifact's tokenizer (built from its tokenizer file and checked
  /// against the manifest's tokenizer_sha256); an error when it has none.
  Expected<const Tokenizer *> tokenizer();

  const DecoderCounters &counters() const { return count; }

private:
  explicit Decoder(LoadedModel &model);
  struct Linear;
  struct Layer;
  Status init(int64_t chunk);
  /// `longRope`: rotate with the long RoPE divisors (the whole forward's
  /// choice, DecoderConfig::usesLongRope).
  Status runChunk(const int32_t *ids, int64_t t, KVCache &cache, bool longRope);
  Status runLinear(const Linear &l, const HostTensor &x, HostTensor &y);
  /// A plain linear on t rows of x into y (yBytes per element), its rows
  /// split across the thread pool.
  Status floatLinear(const Linear &l, const uint8_t *x, int64_t t, uint8_t *y,
                     size_t yBytes);
  Status call(void *fn, const HostOperand *operands, size_t count);
  Status call(void *fn, std::initializer_list<HostOperand> operands) {
    return call(fn, operands.begin(), operands.size());
  }
  /// Runs range(part, i0, i1) over [0, items) split into at most one
  /// contiguous range per pool thread, each of at least minWork of the
  /// `work` units (part indexes the range: its scratch), for the model
  /// kernels whose rows or heads are independent (attention, the gate);
  /// one range on the calling thread when the work is small. Returns the
  /// first failure.
  Status forParts(int64_t items, int64_t work, int64_t minWork,
                  const std::function<Status(size_t, int64_t, int64_t)> &range);
  /// The RMSNorm kernel `fn` over x in place (gemma3's head and output norms).
  Status normInPlace(void *fn, HostTensor &x, int64_t rows, int64_t width,
                     const uint8_t *weight);
  Expected<const uint8_t *> plainData(const std::string &name);
  /// A mapped tensor's bytes at its element alignment (copied once, under
  /// `key`, when the shard placed them off it).
  const uint8_t *alignedData(const safetensors::TensorView &v,
                             const std::string &key);

  LoadedModel &model;
  artifact::DecoderProgram program;
  std::vector<Layer> layers;
  std::unique_ptr<Linear> head;
  struct Kernels {
    void *embed, *norm, *finalNorm, *storeV, *gateMul, *residualAdd, *argmax;
    void *headNorm, *outputNorm; ///< null when the program has none
    void *finalSoftcap;          ///< likewise
    void *logitScale;            ///< likewise (granite)
  } fn{};
  const uint8_t *embedTable = nullptr, *finalNormW = nullptr;
  /// A quantized embedding (EmbedCodes: a table of its own or a tied
  /// head's codes): embedTable is its [vocab, embedStride] code bytes and
  /// these its [vocab, embedGroups] scales and zero-points (null without
  /// one); null for a plain table.
  const uint8_t *embedScales = nullptr, *embedZeros = nullptr;
  int64_t embedStride = 0, embedGroups = 0;
  int64_t maxT = 0;
  // Persistent buffers (sized for maxT tokens).
  std::vector<float> hidden, qf, scores, logits;
  std::vector<int32_t> ids, positions;
  /// forParts' result per range, sized once to the pool's threads.
  std::vector<Status> partStatus;
  HostTensor xa, q, k, v, attn, o, gate, up, h, down, headIn, headOut;
  /// Plain tensors copied to their element alignment, by name.
  std::map<std::string, std::vector<uint8_t>> aligned;
  std::unique_ptr<Tokenizer> tok;
  DecoderCounters count;
};

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_DECODER_H
