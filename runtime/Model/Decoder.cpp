//===- Decoder.cpp - The decoder program's schedule -----------------------===//

#include "qtensor/Runtime/Decoder.h"

#include "qtensor/Formats/GGUF.h"
#include "qtensor/Formats/ModelKernelSpec.h"
#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/Runtime/ArtifactTokenizer.h"
#include "qtensor/Support/ThreadPool.h"
#include "qtensor/Tokenizer/Tokenizer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <new>
#include <random>

using namespace qtensor;
using namespace qtensor::runtime;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
      .count();
}

/// A [rows, cols] buffer of `dtype` whose capacity holds `rows` rows.
Expected<HostTensor> buffer(FloatType dtype, int64_t rows, int64_t cols) {
  return HostTensor::zeros(dtype, rows, cols);
}

/// Views the first t rows of a buffer (no reallocation: within capacity).
HostTensor &rowsOf(HostTensor &b, int64_t t) {
  b.rows = t;
  b.bytes.resize(size_t(t) * size_t(b.cols) *
                 HostTensor::elementBytes(b.dtype));
  return b;
}

} // namespace

//===----------------------------------------------------------------------===//
// KVCache
//===----------------------------------------------------------------------===//

Expected<KVCache> KVCache::create(int64_t layers, int64_t capacity,
                                  int64_t width, FloatType dtype) {
  if (layers < 1 || capacity < 1 || width < 1)
    return makeError("KV cache: layers, capacity and width must be positive");
  if (dtype != FloatType::F32 && dtype != FloatType::F16)
    return makeError("KV cache: values are f32 or f16, not ",
                     qtensor::toString(dtype));
  KVCache c;
  c.elementType = dtype;
  uint64_t values = uint64_t(layers) * uint64_t(capacity) * uint64_t(width);
  if (uint64_t(capacity) > (uint64_t(1) << 24) ||
      values > (uint64_t(1) << 36) / c.elementBytes())
    return makeError("KV cache: ", layers, " layers x ", capacity,
                     " positions x ", width, " values is too large");
  c.layerCount = layers;
  c.cap = capacity;
  c.rowWidth = width;
  // new uint8_t[n], not a zero-filled vector: a page is faulted in when a
  // position first writes it (Gemma 3's 32 K context: 1.2 GB zeroed for a
  // prompt of a few tokens, before).
  const size_t bytes = size_t(values) * c.elementBytes();
  c.k.reset(new (std::nothrow) uint8_t[bytes]);
  c.v.reset(new (std::nothrow) uint8_t[bytes]);
  if (!c.k || !c.v)
    return makeError("KV cache: no memory for ", layers, " layers x ", capacity,
                     " positions x ", width, " ", qtensor::toString(dtype),
                     " values");
  return c;
}

Status KVCache::truncate(int64_t n) {
  if (n < 0 || n > tokens)
    return makeError("KV cache: cannot truncate to ", n,
                     " positions; it holds ", tokens);
  tokens = n;
  return Status::ok();
}

Status KVCache::append(int64_t t) {
  if (t < 0 || tokens + t > cap)
    return makeError("KV cache: ", tokens, " + ", t,
                     " positions exceed its capacity of ", cap);
  tokens += t;
  return Status::ok();
}

Expected<KVCache> KVCache::fork(int64_t n) const {
  if (n < 0 || n > tokens)
    return makeError("KV cache: cannot fork ", n, " positions; it holds ",
                     tokens);
  QTENSOR_ASSIGN_OR_RETURN(KVCache c,
                           create(layerCount, cap, rowWidth, elementType));
  const size_t rows = size_t(n) * size_t(rowWidth) * elementBytes();
  for (int64_t l = 0; l < layerCount; ++l) {
    std::copy_n(keys(l), rows, c.keys(l));
    std::copy_n(values(l), rows, c.values(l));
  }
  c.tokens = n;
  return c;
}

Status KVCache::reorder(std::vector<KVCache> &beams,
                        const std::vector<size_t> &parents) {
  if (parents.size() != beams.size())
    return makeError("KV cache reorder: ", uint64_t(parents.size()),
                     " parents for ", uint64_t(beams.size()), " beams");
  std::vector<size_t> uses(beams.size(), 0);
  for (size_t i = 0; i < parents.size(); ++i) {
    if (parents[i] >= beams.size())
      return makeError("KV cache reorder: beam ", uint64_t(i),
                       " continues beam ", uint64_t(parents[i]),
                       ", but there are ", uint64_t(beams.size()));
    const KVCache &p = beams[parents[i]], &b = beams.front();
    if (p.layerCount != b.layerCount || p.cap != b.cap ||
        p.rowWidth != b.rowWidth || p.elementType != b.elementType)
      return makeError("KV cache reorder: the beams' caches differ in shape");
    ++uses[parents[i]];
  }
  // Copies first (a parent chosen more than once), while every parent is
  // still in place; then the moves. Nothing changes before all copies are
  // made.
  std::vector<std::optional<KVCache>> next(beams.size());
  for (size_t i = 0; i < parents.size(); ++i)
    if (uses[parents[i]] > 1) {
      const KVCache &p = beams[parents[i]];
      QTENSOR_ASSIGN_OR_RETURN(KVCache copy, p.fork(p.size()));
      next[i] = std::move(copy);
    }
  for (size_t i = 0; i < parents.size(); ++i)
    if (uses[parents[i]] == 1)
      next[i] = std::move(beams[parents[i]]);
  for (size_t i = 0; i < beams.size(); ++i)
    beams[i] = std::move(*next[i]);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Decoder
//===----------------------------------------------------------------------===//

struct Decoder::Linear {
  std::string tensor;
  bool quantized = false;
  size_t op = 0;              ///< quantized: the plan's op index
  void *fn = nullptr;         ///< plain: the float linear kernel
  const uint8_t *w = nullptr; ///< plain: the weight [n, k]
  size_t wBytes = 0;          ///< plain: bytes of one weight element
  const uint8_t *b = nullptr; ///< plain: the bias [n], or none
  size_t bBytes = 0;          ///< plain: bytes of one bias element
  int64_t n = 0, k = 0;
};

struct Decoder::Layer {
  const uint8_t *attnNorm = nullptr, *ffnNorm = nullptr;
  /// gemma3 (null otherwise): per-head q/k norms, output norms.
  const uint8_t *qNorm = nullptr, *kNorm = nullptr, *postAttnNorm = nullptr,
                *postFfnNorm = nullptr;
  Linear q, k, v, o, gate, up, down;
  void *ropeQ = nullptr, *ropeK = nullptr, *attention = nullptr;
  /// LongRoPE (null otherwise): RoPE over the long divisors.
  void *ropeQLong = nullptr, *ropeKLong = nullptr;
};

std::vector<std::pair<int32_t, float>>
qtensor::runtime::topLogits(const std::vector<float> &logits, size_t k) {
  std::vector<std::pair<int32_t, float>> top;
  top.reserve(logits.size());
  for (size_t i = 0; i < logits.size(); ++i)
    top.push_back({int32_t(i), logits[i]});
  k = std::min(k, top.size());
  std::partial_sort(top.begin(), top.begin() + long(k), top.end(),
                    [](const auto &x, const auto &y) {
                      return x.second > y.second ||
                             (x.second == y.second && x.first < y.first);
                    });
  top.resize(k);
  return top;
}

Decoder::Decoder(LoadedModel &model) : model(model) {}
Decoder::~Decoder() = default;

Expected<std::unique_ptr<Decoder>> Decoder::create(LoadedModel &model,
                                                   int64_t chunk) {
  if (!model.program())
    return makeError("the model was loaded without its decoder program "
                     "(LoadOptions::decoder)");
  if (model.backend() != "host")
    return makeError("the decoder program runs on the host backend only; "
                     "this model runs on ",
                     model.backend(),
                     " (the model kernels have no NVPTX build yet)");
  if (chunk < 1 || chunk > 4096)
    return makeError("decoder: a chunk of ", chunk,
                     " tokens is outside [1, 4096]");
  std::unique_ptr<Decoder> d(new Decoder(model));
  QTENSOR_TRY(d->init(chunk));
  return d;
}

Expected<const uint8_t *> Decoder::plainData(const std::string &name) {
  const safetensors::TensorView *v = model.plainTensor(name);
  if (!v)
    return makeError("decoder: plain tensor \"", name, "\" is not loaded");
  return alignedData(*v, name);
}

const uint8_t *Decoder::alignedData(const safetensors::TensorView &v,
                                    const std::string &key) {
  // The kernels load naturally aligned elements: a payload the shard placed
  // off its element size is copied, once per tensor (a tied head shares
  // the embedding's copy).
  const size_t element = v.byteSize() / std::max<uint64_t>(1, v.elementCount());
  if (element && reinterpret_cast<uintptr_t>(v.data) % element == 0)
    return v.data;
  auto &copy = aligned[key];
  if (copy.empty())
    copy.assign(v.data, v.data + v.byteSize());
  return copy.data();
}

Status Decoder::init(int64_t chunk) {
  program = *model.program();
  const artifact::DecoderConfig &c = program.config;
  const artifact::Manifest &m = model.manifest();
  const FloatType act = program.activation;
  maxT = std::min<int64_t>(chunk, c.context);

  // Loader::readProgram checked the symbols (checkProgramKernels).
  const artifact::ModelKernelSymbols &s = program.kernels;
  auto resolve = [&](const std::string &symbol, void *&out) -> Status {
    out = model.modelKernel(symbol);
    if (!out)
      return makeError("decoder: kernel ", symbol, " was not resolved");
    return Status::ok();
  };
  QTENSOR_TRY(resolve(s.embed, fn.embed));
  QTENSOR_TRY(resolve(s.norm, fn.norm));
  QTENSOR_TRY(resolve(s.finalNorm, fn.finalNorm));
  QTENSOR_TRY(resolve(s.storeV, fn.storeV));
  QTENSOR_TRY(resolve(s.gateMul, fn.gateMul));
  QTENSOR_TRY(resolve(s.residualAdd, fn.residualAdd));
  QTENSOR_TRY(resolve(s.argmax, fn.argmax));
  if (s.headNorm)
    QTENSOR_TRY(resolve(*s.headNorm, fn.headNorm));
  if (s.outputNorm)
    QTENSOR_TRY(resolve(*s.outputNorm, fn.outputNorm));
  if (s.finalSoftcap)
    QTENSOR_TRY(resolve(*s.finalSoftcap, fn.finalSoftcap));
  if (s.logitScale)
    QTENSOR_TRY(resolve(*s.logitScale, fn.logitScale));

  // Every linear reads and writes the program's activation dtype, but the
  // head, which writes f32 logits.
  auto linear = [&](const artifact::ProgramLinear &pl, int64_t n, int64_t k,
                    FloatType output) -> Expected<Linear> {
    Linear l;
    l.tensor = pl.tensor;
    l.n = n;
    l.k = k;
    const artifact::TensorEntry *t = m.findTensor(pl.tensor);
    if (t->isQuantized() || t->mixed2416()) {
      l.quantized = true;
      QTENSOR_ASSIGN_OR_RETURN(l.op, model.opIndex(pl.tensor));
      const OpPlan &op = model.plan().ops[l.op];
      if (op.activation != act || op.output != output)
        return makeError("decoder: op \"", pl.tensor, "\" takes ",
                         toString(op.activation), " and writes ",
                         toString(op.output), "; the program needs ",
                         toString(act), " in and ", toString(output), " out");
      return l; // a bias (qwen2's q, k, v) is the kernel's epilogue
    }
    l.fn = model.modelKernel(*pl.kernel);
    if (!l.fn)
      return makeError("decoder: kernel ", *pl.kernel, " was not resolved");
    QTENSOR_ASSIGN_OR_RETURN(l.w, plainData(pl.tensor));
    l.wBytes = safetensors::dtypeSize(model.plainTensor(pl.tensor)->dtype);
    if (pl.bias) {
      QTENSOR_ASSIGN_OR_RETURN(l.b, plainData(*pl.bias));
      l.bBytes = safetensors::dtypeSize(model.plainTensor(*pl.bias)->dtype);
    }
    return l;
  };

  if (const artifact::TensorEntry *e = m.findTensor(program.embed);
      e && e->quantized()) {
    // A quantized table or a tied head's codes (checkProgramKernels built
    // EmbedCodes for them).
    QTENSOR_ASSIGN_OR_RETURN(ModelKernelSpec spec,
                             programEmbedKernel(program, m));
    const safetensors::TensorView *codes =
        model.quantizedPart(program.embed, "codes");
    const safetensors::TensorView *scales =
        model.quantizedPart(program.embed, "scales");
    embedStride = spec.rowStride;
    embedGroups = spec.rows / spec.group;
    if (!codes || !scales ||
        codes->byteSize() != uint64_t(c.vocab) * uint64_t(embedStride) ||
        scales->elementCount() != uint64_t(c.vocab) * uint64_t(embedGroups))
      return makeError("decoder: the codes and scales of ", program.embed,
                       " are not the [", c.vocab, ", ", embedStride,
                       "] bytes and [", c.vocab, ", ", embedGroups,
                       "] scales its embedding kernel reads");
    embedTable = codes->data;
    embedScales = alignedData(*scales, program.embed + ".scales");
    if (spec.zeroPoint != ZeroPointKind::None) {
      const safetensors::TensorView *zeros =
          model.quantizedPart(program.embed, "zeros");
      // U8 integer zero-points, or floats in the scales' dtype.
      const safetensors::DType dtype = spec.zeroPoint == ZeroPointKind::Integer
                                           ? safetensors::DType::U8
                                           : artifact::floatDType(spec.weight);
      if (!zeros || zeros->dtype != dtype ||
          zeros->elementCount() != uint64_t(c.vocab) * uint64_t(embedGroups))
        return makeError("decoder: the zero-points of ", program.embed,
                         " are not the [", c.vocab, ", ", embedGroups,
                         "] values its embedding kernel reads");
      embedZeros = alignedData(*zeros, program.embed + ".zeros");
    }
  } else {
    QTENSOR_ASSIGN_OR_RETURN(embedTable, plainData(program.embed));
  }
  QTENSOR_ASSIGN_OR_RETURN(finalNormW, plainData(program.finalNorm));
  for (const artifact::ProgramLayer &pl : program.layers) {
    Layer l;
    QTENSOR_ASSIGN_OR_RETURN(l.attnNorm, plainData(pl.attnNorm));
    QTENSOR_ASSIGN_OR_RETURN(l.ffnNorm, plainData(pl.ffnNorm));
    if (pl.qNorm) { // validateProgram: all four, or none
      QTENSOR_ASSIGN_OR_RETURN(l.qNorm, plainData(*pl.qNorm));
      QTENSOR_ASSIGN_OR_RETURN(l.kNorm, plainData(*pl.kNorm));
    }
    if (pl.postAttnNorm) {
      QTENSOR_ASSIGN_OR_RETURN(l.postAttnNorm, plainData(*pl.postAttnNorm));
      QTENSOR_ASSIGN_OR_RETURN(l.postFfnNorm, plainData(*pl.postFfnNorm));
    }
    QTENSOR_TRY(resolve(pl.ropeQ, l.ropeQ));
    QTENSOR_TRY(resolve(pl.ropeK, l.ropeK));
    QTENSOR_TRY(resolve(pl.attention, l.attention));
    if (pl.ropeQLong) { // checkProgramKernels: both, exactly for LongRoPE
      QTENSOR_TRY(resolve(*pl.ropeQLong, l.ropeQLong));
      QTENSOR_TRY(resolve(*pl.ropeKLong, l.ropeKLong));
    }
    QTENSOR_ASSIGN_OR_RETURN(l.q, linear(pl.q, c.qWidth(), c.hidden, act));
    QTENSOR_ASSIGN_OR_RETURN(l.k, linear(pl.k, c.kvWidth(), c.hidden, act));
    QTENSOR_ASSIGN_OR_RETURN(l.v, linear(pl.v, c.kvWidth(), c.hidden, act));
    QTENSOR_ASSIGN_OR_RETURN(l.o, linear(pl.o, c.hidden, c.qWidth(), act));
    QTENSOR_ASSIGN_OR_RETURN(l.gate,
                             linear(pl.gate, c.intermediate, c.hidden, act));
    QTENSOR_ASSIGN_OR_RETURN(l.up,
                             linear(pl.up, c.intermediate, c.hidden, act));
    QTENSOR_ASSIGN_OR_RETURN(l.down,
                             linear(pl.down, c.hidden, c.intermediate, act));
    layers.push_back(std::move(l));
  }
  QTENSOR_ASSIGN_OR_RETURN(Linear headLinear, linear(program.head, c.vocab,
                                                     c.hidden, FloatType::F32));
  head = std::make_unique<Linear>(std::move(headLinear));

  hidden.assign(size_t(maxT) * size_t(c.hidden), 0.0f);
  qf.assign(size_t(maxT) * size_t(c.qWidth()), 0.0f);
  logits.assign(size_t(c.vocab), 0.0f);
  ids.assign(size_t(maxT), 0);
  positions.assign(size_t(maxT), 0);
  QTENSOR_ASSIGN_OR_RETURN(xa, buffer(act, maxT, c.hidden));
  QTENSOR_ASSIGN_OR_RETURN(q, buffer(act, maxT, c.qWidth()));
  QTENSOR_ASSIGN_OR_RETURN(k, buffer(act, maxT, c.kvWidth()));
  QTENSOR_ASSIGN_OR_RETURN(v, buffer(act, maxT, c.kvWidth()));
  QTENSOR_ASSIGN_OR_RETURN(attn, buffer(act, maxT, c.qWidth()));
  QTENSOR_ASSIGN_OR_RETURN(o, buffer(act, maxT, c.hidden));
  QTENSOR_ASSIGN_OR_RETURN(gate, buffer(act, maxT, c.intermediate));
  QTENSOR_ASSIGN_OR_RETURN(up, buffer(act, maxT, c.intermediate));
  QTENSOR_ASSIGN_OR_RETURN(h, buffer(act, maxT, c.intermediate));
  QTENSOR_ASSIGN_OR_RETURN(down, buffer(act, maxT, c.hidden));
  QTENSOR_ASSIGN_OR_RETURN(headIn, buffer(act, 1, c.hidden));
  QTENSOR_ASSIGN_OR_RETURN(headOut, buffer(FloatType::F32, 1, c.vocab));
  return Status::ok();
}

Expected<KVCache> Decoder::newCache(int64_t capacity) const {
  const artifact::DecoderConfig &c = program.config;
  return KVCache::create(c.layers, capacity ? capacity : c.context, c.kvWidth(),
                         program.kvCache);
}

Status Decoder::call(void *f, const HostOperand *operands, size_t n) {
  ++count.modelKernelCalls;
  return callMlirCInterface(f, operands, n);
}

Status Decoder::forParts(
    int64_t items, int64_t work, int64_t minWork,
    const std::function<Status(size_t, int64_t, int64_t)> &range) {
  // Each range writes its own slot; the slots are reused, not reallocated,
  // from one call to the next.
  partStatus.resize(defaultThreadPool().threads(), Status::ok());
  for (Status &s : partStatus)
    s = Status::ok();
  defaultThreadPool().parallelParts(items, work, minWork,
                                    [&](size_t part, int64_t i0, int64_t i1) {
                                      partStatus[part] = range(part, i0, i1);
                                    });
  for (Status &s : partStatus)
    if (!s)
      return std::move(s);
  return Status::ok();
}

Status Decoder::normInPlace(void *f, HostTensor &x, int64_t rows, int64_t width,
                            const uint8_t *weight) {
  // x's bytes viewed as [rows, width]: rows of a buffer, or heads of rows.
  return call(f, {{x.bytes.data(), {rows, width}},
                  {const_cast<uint8_t *>(weight), {width}},
                  {x.bytes.data(), {rows, width}}});
}

Status Decoder::runLinear(const Linear &l, const HostTensor &x, HostTensor &y) {
  if (l.quantized) {
    ++count.quantizedLinearCalls;
    return model.runInto(l.op, x, y, /*record=*/false);
  }
  rowsOf(y, x.rows);
  return floatLinear(l, x.bytes.data(), x.rows, y.bytes.data(),
                     HostTensor::elementBytes(y.dtype));
}

Status Decoder::floatLinear(const Linear &l, const uint8_t *x, int64_t t,
                            uint8_t *y, size_t yBytes) {
  ++count.floatLinearCalls;
  // The kernel takes any range of the weight's rows, and the same range of
  // the bias (ModelKernelSpec.h).
  return forRowRanges(l.n, l.k, [&](int64_t n0, int64_t n1) {
    HostOperand operands[4] = {
        {const_cast<uint8_t *>(x), {t, l.k}},
        {const_cast<uint8_t *>(l.w) + size_t(n0) * size_t(l.k) * l.wBytes,
         {n1 - n0, l.k}}};
    size_t count = 2;
    if (l.b)
      operands[count++] = {const_cast<uint8_t *>(l.b) + size_t(n0) * l.bBytes,
                           {n1 - n0}};
    operands[count++] = {y + size_t(n0) * yBytes, {t, n1 - n0}, {l.n, 1}};
    return callMlirCInterface(l.fn, operands, count);
  });
}

Status Decoder::runChunk(const int32_t *tokenIds, int64_t t, KVCache &cache,
                         bool longRope) {
  const artifact::DecoderConfig &c = program.config;
  const int64_t p0 = cache.size();
  for (int64_t i = 0; i < t; ++i) {
    ids[size_t(i)] = tokenIds[i];
    positions[size_t(i)] = int32_t(p0 + i);
  }
  const int64_t cap = cache.capacity();
  const MemRefDims rowsT = {t};
  // The table's rows: plain [V, D], or codes [V, S] with their scales
  // (and zero-points) for EmbedCodes.
  HostOperand embed[5] = {{ids.data(), rowsT},
                          {const_cast<uint8_t *>(embedTable),
                           {c.vocab, embedScales ? embedStride : c.hidden}}};
  size_t embedArgs = 2;
  for (const uint8_t *qparams : {embedScales, embedZeros})
    if (qparams)
      embed[embedArgs++] = {const_cast<uint8_t *>(qparams),
                            {c.vocab, embedGroups}};
  embed[embedArgs++] = {hidden.data(), {t, c.hidden}};
  QTENSOR_TRY(call(fn.embed, embed, embedArgs));
  // One row of scores per thread that may run attention (forParts): sized
  // once per capacity, a no-op after.
  scores.resize(size_t(cap) * defaultThreadPool().threads());
  for (size_t li = 0; li < layers.size(); ++li) {
    Layer &l = layers[li];
    uint8_t *kc = cache.keys(int64_t(li)), *vc = cache.values(int64_t(li));
    QTENSOR_TRY(call(fn.norm, {{hidden.data(), {t, c.hidden}},
                               {const_cast<uint8_t *>(l.attnNorm), {c.hidden}},
                               {rowsOf(xa, t).bytes.data(), {t, c.hidden}}}));
    QTENSOR_TRY(runLinear(l.q, xa, q));
    QTENSOR_TRY(runLinear(l.k, xa, k));
    QTENSOR_TRY(runLinear(l.v, xa, v));
    if (l.qNorm) { // each head's RMSNorm, in place
      QTENSOR_TRY(normInPlace(fn.headNorm, q, t * c.heads, c.headDim, l.qNorm));
      QTENSOR_TRY(
          normInPlace(fn.headNorm, k, t * c.kvHeads, c.headDim, l.kNorm));
    }
    QTENSOR_TRY(call(longRope ? l.ropeQLong : l.ropeQ,
                     {{q.bytes.data(), {t, c.qWidth()}},
                      {positions.data(), rowsT},
                      {qf.data(), {t, c.qWidth()}}}));
    QTENSOR_TRY(call(longRope ? l.ropeKLong : l.ropeK,
                     {{k.bytes.data(), {t, c.kvWidth()}},
                      {positions.data(), rowsT},
                      {kc, {cap, c.kvWidth()}}}));
    QTENSOR_TRY(call(fn.storeV, {{v.bytes.data(), {t, c.kvWidth()}},
                                 {positions.data(), rowsT},
                                 {vc, {cap, c.kvWidth()}}}));
    // Each query row and each head attends on its own (a row's position
    // bounds its keys, all of them in the cache by now): prefill splits
    // the rows across the threads, decode (fewer rows than threads) the
    // heads; each range has its own scores row.
    rowsOf(attn, t);
    const size_t attnBytes = HostTensor::elementBytes(attn.dtype);
    auto attend = [&](size_t part, int64_t t0, int64_t t1, int64_t h0,
                      int64_t h1) {
      const size_t q0 = size_t(t0) * size_t(c.qWidth());
      int32_t heads[2] = {int32_t(h0), int32_t(h1)};
      return callMlirCInterface(
          l.attention,
          {{qf.data() + q0, {t1 - t0, c.qWidth()}},
           {kc, {cap, c.kvWidth()}},
           {vc, {cap, c.kvWidth()}},
           {positions.data() + t0, {t1 - t0}},
           {scores.data() + part * size_t(cap), {cap}},
           {heads, {2}},
           {attn.bytes.data() + q0 * attnBytes, {t1 - t0, c.qWidth()}}});
    };
    ++count.modelKernelCalls; // one call, whatever the split
    if (t >= int64_t(defaultThreadPool().threads()))
      QTENSOR_TRY(forParts(t, t, 1, [&](size_t part, int64_t t0, int64_t t1) {
        return attend(part, t0, t1, 0, c.heads);
      }));
    else // q.k and p.v over the keys so far: about 2 (p0 + t) hd per head
      QTENSOR_TRY(forParts(c.heads, c.heads * 2 * (p0 + t) * c.headDim,
                           kMinSplitWeights,
                           [&](size_t part, int64_t h0, int64_t h1) {
                             return attend(part, 0, t, h0, h1);
                           }));
    QTENSOR_TRY(runLinear(l.o, attn, o));
    if (l.postAttnNorm)
      QTENSOR_TRY(normInPlace(fn.outputNorm, o, t, c.hidden, l.postAttnNorm));
    QTENSOR_TRY(call(fn.residualAdd, {{hidden.data(), {t, c.hidden}},
                                      {o.bytes.data(), {t, c.hidden}}}));
    QTENSOR_TRY(call(fn.norm, {{hidden.data(), {t, c.hidden}},
                               {const_cast<uint8_t *>(l.ffnNorm), {c.hidden}},
                               {rowsOf(xa, t).bytes.data(), {t, c.hidden}}}));
    QTENSOR_TRY(runLinear(l.gate, xa, gate));
    QTENSOR_TRY(runLinear(l.up, xa, up));
    rowsOf(h, t);
    ++count.modelKernelCalls;
    QTENSOR_TRY(forParts(t, t, 1, [&](size_t, int64_t t0, int64_t t1) {
      const size_t f0 = size_t(t0) * size_t(c.intermediate);
      auto at = [&](HostTensor &x) {
        return x.bytes.data() + f0 * HostTensor::elementBytes(x.dtype);
      };
      return callMlirCInterface(fn.gateMul,
                                {{at(gate), {t1 - t0, c.intermediate}},
                                 {at(up), {t1 - t0, c.intermediate}},
                                 {at(h), {t1 - t0, c.intermediate}}});
    }));
    QTENSOR_TRY(runLinear(l.down, h, down));
    if (l.postFfnNorm)
      QTENSOR_TRY(normInPlace(fn.outputNorm, down, t, c.hidden, l.postFfnNorm));
    QTENSOR_TRY(call(fn.residualAdd, {{hidden.data(), {t, c.hidden}},
                                      {down.bytes.data(), {t, c.hidden}}}));
  }
  QTENSOR_TRY(cache.append(t));
  // The head reads only the last position: generation needs its logits.
  float *last = &hidden[size_t(t - 1) * size_t(c.hidden)];
  QTENSOR_TRY(
      call(fn.finalNorm, {{last, {1, c.hidden}},
                          {const_cast<uint8_t *>(finalNormW), {c.hidden}},
                          {headIn.bytes.data(), {1, c.hidden}}}));
  if (head->quantized) {
    QTENSOR_TRY(runLinear(*head, headIn, headOut)); // f32 logits
    std::memcpy(logits.data(), headOut.bytes.data(),
                size_t(c.vocab) * sizeof(float));
  } else {
    // f32 logits straight into the logits row.
    QTENSOR_TRY(floatLinear(*head, headIn.bytes.data(), 1,
                            reinterpret_cast<uint8_t *>(logits.data()),
                            sizeof(float)));
  }
  if (fn.finalSoftcap) // gemma2: in place
    QTENSOR_TRY(call(fn.finalSoftcap, {{logits.data(), {1, c.vocab}}}));
  if (fn.logitScale) // granite: in place
    QTENSOR_TRY(call(fn.logitScale, {{logits.data(), {1, c.vocab}}}));
  return Status::ok();
}

Expected<const std::vector<float> *>
Decoder::forward(const std::vector<int32_t> &tokenIds, KVCache &cache) {
  const artifact::DecoderConfig &c = program.config;
  if (tokenIds.empty())
    return makeError("decoder: no tokens to run");
  if (cache.layers() != c.layers || cache.width() != c.kvWidth() ||
      cache.dtype() != program.kvCache)
    return makeError("decoder: the KV cache has ", cache.layers(),
                     " layers of width ", cache.width(), " in ",
                     qtensor::toString(cache.dtype()), "; this model needs ",
                     c.layers, " of width ", c.kvWidth(), " in ",
                     qtensor::toString(program.kvCache));
  if (int64_t(tokenIds.size()) > cache.capacity() - cache.size())
    return makeError("decoder: ", tokenIds.size(), " tokens after ",
                     cache.size(), " do not fit the KV cache's ",
                     cache.capacity(), " positions");
  for (size_t i = 0; i < tokenIds.size(); ++i)
    if (tokenIds[i] < 0 || tokenIds[i] >= c.vocab)
      return makeError("decoder: token ", i, " is ", tokenIds[i],
                       ", outside the vocabulary [0, ", c.vocab, ")");
  ++count.forwards;
  const int64_t start = cache.size();
  // LongRoPE's choice is the whole forward's, as transformers makes it by
  // the sequence's length, whatever the chunks.
  const bool longRope = c.usesLongRope(start + int64_t(tokenIds.size()));
  for (size_t at = 0; at < tokenIds.size(); at += size_t(maxT)) {
    int64_t t = std::min<int64_t>(maxT, int64_t(tokenIds.size() - at));
    if (Status s = runChunk(&tokenIds[at], t, cache, longRope); !s) {
      (void)cache.truncate(start); // a failed call leaves nothing half-added
      return s.error();
    }
  }
  return &logits;
}

Expected<int32_t> Decoder::argmax() {
  int32_t id = 0;
  QTENSOR_TRY(call(fn.argmax,
                   {{logits.data(), {1, program.config.vocab}}, {&id, {1}}}));
  return id;
}

Expected<GenerateResult> Decoder::generate(const std::vector<int32_t> &prompt,
                                           KVCache &cache,
                                           const GenerateOptions &options) {
  if (options.maxTokens < 0)
    return makeError("generate: a negative token count");
  if (!(options.temperature >= 0) || !std::isfinite(options.temperature))
    return makeError("generate: the temperature must be finite and >= 0");
  GenerateResult r;
  std::mt19937_64 rng(options.seed);
  const SamplerOptions sampler{options.temperature, options.topK, options.topP,
                               options.minP};
  if (options.temperature > 0)
    QTENSOR_TRY(validateSamplerOptions(sampler));
  else if (options.topK || options.topP != 1.0 || options.minP != 0.0)
    return makeError("generate: top-k, top-p and min-p cut what sampling "
                     "draws from; greedy decoding (temperature 0) takes none");
  QTENSOR_TRY(validatePenaltyOptions(options.penalties));
  // Penalized logits go to a copy (allocated once), so promptLogits and
  // the argmax kernel's buffer stay the model's own.
  std::vector<int32_t> history;
  std::vector<float> penalized;
  if (options.penalties.active()) {
    history = prompt;
    // At most the cache's positions can follow (maxTokens is the caller's).
    history.reserve(prompt.size() + size_t(std::min<int64_t>(
                                        options.maxTokens, cache.capacity())));
    penalized.reserve(logits.size());
  }
  auto pick = [&]() -> Expected<int32_t> {
    if (!options.penalties.active()) {
      if (options.temperature == 0)
        return argmax();
      return sampleToken(logits, sampler, rng);
    }
    penalized.assign(logits.begin(), logits.end());
    QTENSOR_TRY(applyPenalties(penalized, history, options.penalties));
    if (options.temperature == 0)
      return firstArgmax(penalized);
    return sampleToken(penalized, sampler, rng);
  };
  // The end-of-generation ids llama.cpp stops at (EOS, end of turn, ...);
  // none without a tokenizer (a program run on token ids).
  const Tokenizer *stops = nullptr;
  if (options.stopAtEos && model.tokenizerFile()) {
    QTENSOR_ASSIGN_OR_RETURN(stops, tokenizer());
  }

  auto start = std::chrono::steady_clock::now();
  if (auto ran = forward(prompt, cache); !ran)
    return ran.error();
  r.prefillSeconds = secondsSince(start);
  r.prefillTokens = int64_t(prompt.size());
  r.promptLogits = logits;
  start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < options.maxTokens; ++i) {
    QTENSOR_ASSIGN_OR_RETURN(int32_t next, pick());
    r.tokens.push_back(next);
    if (options.penalties.active())
      history.push_back(next);
    if (options.onToken)
      options.onToken(next);
    if (stops && stops->endsGeneration(next)) {
      r.stoppedAtEos = true;
      break;
    }
    if (i + 1 == options.maxTokens)
      break;
    if (cache.size() >= cache.capacity()) {
      r.stoppedAtContext = true; // the cache holds no further position
      break;
    }
    if (auto ran = forward({next}, cache); !ran)
      return ran.error();
    ++r.decodeTokens;
  }
  r.decodeSeconds = secondsSince(start);
  return r;
}

Expected<const Tokenizer *> Decoder::tokenizer() {
  if (tok)
    return tok.get();
  const MappedFile *file = model.tokenizerFile();
  if (!file)
    return makeError("the artifact carries no tokenizer (its source had "
                     "none the compiler could read; pass token ids)");
  const std::string name = model.program()->tokenizerFile.value_or("tokenizer");
  QTENSOR_ASSIGN_OR_RETURN(
      Tokenizer t, tokenizerFromArtifactFile(
                       *file, name, model.manifest().model.tokenizerSha256));
  tok = std::make_unique<Tokenizer>(std::move(t));
  return tok.get();
}
