//===- ReferenceDecoder.cpp - The decoder in float64 ----------------------===//

#include "qtensor/Runtime/ReferenceDecoder.h"

#include "qtensor/Runtime/Reference.h"

#include <algorithm>
#include <cmath>

using namespace qtensor;
using namespace qtensor::runtime;

namespace {

using Matrix = std::vector<double>; // row-major

/// A plain [N, K] float tensor widened a block of rows at a time, from its
/// mapped bytes: a weight kept in float (a 262144-row head included) is
/// never whole in float64.
class PlainWeightRows : public WeightRows {
public:
  PlainWeightRows(const safetensors::TensorView &v, int64_t n, int64_t k)
      : v(v), n(n), k(k),
        esize(n > 0 && k > 0 ? v.byteSize() / uint64_t(n * k) : 0) {}
  int64_t rows() const override { return n; }
  int64_t cols() const override { return k; }
  Status fill(int64_t first, int64_t count, double *out) const override {
    safetensors::TensorView rows = v;
    rows.shape = {count, k};
    rows.data = v.data + uint64_t(first) * uint64_t(k) * esize;
    rows.begin = 0;
    rows.end = uint64_t(count) * uint64_t(k) * esize;
    QTENSOR_ASSIGN_OR_RETURN(std::vector<double> values,
                             safetensors::toFloat64(rows));
    std::copy(values.begin(), values.end(), out);
    return Status::ok();
  }

private:
  const safetensors::TensorView &v;
  int64_t n, k;
  uint64_t esize;
};

class Reference {
public:
  Reference(const LoadedModel &m, const ReferenceWeights &weights,
            std::optional<int64_t> singleTokenFrom)
      : m(m), p(*m.program()), c(p.config), weights(weights),
        singleTokenFrom(singleTokenFrom) {}

  Expected<std::vector<double>> run(const std::vector<int32_t> &ids,
                                    int64_t positions) {
    const int64_t t = int64_t(ids.size());
    if (t < 1)
      return makeError("reference decoder: no tokens");
    const int64_t d = c.hidden;
    Matrix h(size_t(t * d));
    for (int64_t i = 0; i < t; ++i) {
      if (ids[size_t(i)] < 0 || ids[size_t(i)] >= c.vocab)
        return makeError("reference decoder: token ", ids[size_t(i)],
                         " is outside the vocabulary");
      QTENSOR_ASSIGN_OR_RETURN(Matrix values, embeddingRow(ids[size_t(i)]));
      std::copy(values.begin(), values.end(), h.begin() + i * d);
    }
    for (double &x : h)
      x *= c.embedScale;
    for (size_t li = 0; li < p.layers.size(); ++li) {
      const artifact::ProgramLayer &l = p.layers[li];
      QTENSOR_ASSIGN_OR_RETURN(Matrix x, norm(h, d, l.attnNorm));
      QTENSOR_ASSIGN_OR_RETURN(Matrix q, linear(x, t, l.q));
      QTENSOR_ASSIGN_OR_RETURN(Matrix k, linear(x, t, l.k));
      QTENSOR_ASSIGN_OR_RETURN(Matrix v, linear(x, t, l.v));
      if (l.qNorm) { // each head's RMSNorm
        QTENSOR_ASSIGN_OR_RETURN(q, norm(q, c.headDim, *l.qNorm));
        QTENSOR_ASSIGN_OR_RETURN(k, norm(k, c.headDim, *l.kNorm));
      }
      const double base = c.ropeBaseOf(int64_t(li));
      // One forward from position 0: LongRoPE's choice by its length.
      const std::vector<double> &factors =
          c.usesLongRope(t) ? c.ropeFreqFactorsLong
                            : c.ropeFreqFactorsOf(int64_t(li));
      rope(q, t, c.heads, base, factors);
      rope(k, t, c.kvHeads, base, factors);
      Matrix a = attention(q, k, v, t, c.windowOf(int64_t(li)));
      QTENSOR_ASSIGN_OR_RETURN(Matrix o, linear(a, t, l.o));
      if (l.postAttnNorm) {
        QTENSOR_ASSIGN_OR_RETURN(o, norm(o, d, *l.postAttnNorm));
      }
      for (size_t i = 0; i < h.size(); ++i)
        h[i] += c.residualScale * o[i];
      QTENSOR_ASSIGN_OR_RETURN(x, norm(h, d, l.ffnNorm));
      QTENSOR_ASSIGN_OR_RETURN(Matrix g, linear(x, t, l.gate));
      QTENSOR_ASSIGN_OR_RETURN(Matrix u, linear(x, t, l.up));
      for (size_t i = 0; i < g.size(); ++i)
        g[i] = gate(g[i]) * u[i];
      QTENSOR_ASSIGN_OR_RETURN(Matrix down, linear(g, t, l.down));
      if (l.postFfnNorm) {
        QTENSOR_ASSIGN_OR_RETURN(down, norm(down, d, *l.postFfnNorm));
      }
      for (size_t i = 0; i < h.size(); ++i)
        h[i] += c.residualScale * down[i];
    }
    positions = std::clamp<int64_t>(positions, 1, t);
    Matrix last(h.end() - positions * d, h.end());
    QTENSOR_ASSIGN_OR_RETURN(Matrix x, norm(last, d, p.finalNorm));
    // The decoder's head is a T = 1 call for every row it computes.
    QTENSOR_ASSIGN_OR_RETURN(Matrix logits,
                             linear(x, positions, p.head, t - positions, true));
    for (double &z : logits)
      z = softcap(z, c.finalSoftcap) / c.logitScale;
    return logits;
  }

private:
  Expected<Matrix> plain(const std::string &name) const {
    const safetensors::TensorView *v = m.plainTensor(name);
    if (!v)
      return makeError("reference decoder: ", name, " is not loaded");
    return safetensors::toFloat64(*v);
  }

  double gate(double g) const {
    if (c.gate == artifact::GateActivation::Silu)
      return g / (1.0 + std::exp(-g));
    const double k = std::sqrt(2.0 / M_PI);
    return 0.5 * g * (1.0 + std::tanh(k * (g + 0.044715 * g * g * g)));
  }

  /// Row `id` of the embedding: a plain table's values, or a quantized
  /// table's (or tied head's) reconstruction from its stored codes, as the
  /// parity ladder reconstructs weights (not the kernel's code path).
  Expected<Matrix> embeddingRow(int64_t id) {
    const int64_t d = c.hidden;
    const artifact::TensorEntry *e = m.manifest().findTensor(p.embed);
    if (e && e->quantized()) {
      if (!embedRows) {
        QTENSOR_ASSIGN_OR_RETURN(embedRows, m.referenceRows(p.embed));
      }
      if (embedRows->rows() != c.vocab || embedRows->cols() != d)
        return makeError("reference decoder: the embedding ", p.embed,
                         " is not [", c.vocab, ", ", d, "]");
      Matrix out(static_cast<size_t>(d));
      QTENSOR_TRY(embedRows->fill(id, 1, out.data()));
      return out;
    }
    const safetensors::TensorView *table = m.plainTensor(p.embed);
    if (!table)
      return makeError("reference decoder: ", p.embed, " is not loaded");
    const size_t esize = table->byteSize() / size_t(c.vocab * d);
    safetensors::TensorView row = *table;
    row.shape = {d};
    row.data = table->data + size_t(id) * size_t(d) * esize;
    row.begin = 0;
    row.end = uint64_t(d) * esize;
    return safetensors::toFloat64(row);
  }

  /// RMSNorm of each run of `d` values (rows, or heads of rows).
  Expected<Matrix> norm(const Matrix &x, int64_t d, const std::string &w) {
    QTENSOR_ASSIGN_OR_RETURN(Matrix weight, plain(w));
    const int64_t t = int64_t(x.size()) / d;
    Matrix y(x.size());
    for (int64_t i = 0; i < t; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < d; ++j)
        sum += x[size_t(i * d + j)] * x[size_t(i * d + j)];
      double scale = 1.0 / std::sqrt(sum / double(d) + c.rmsEps);
      for (int64_t j = 0; j < d; ++j)
        y[size_t(i * d + j)] = x[size_t(i * d + j)] * scale *
                               (weight[size_t(j)] + c.normWeightOffset);
    }
    return y;
  }

  /// y = x W^T (+ b) with W [n, k]: the reference reconstruction (and the
  /// op's bias) for a quantized op, the stored values (and bias) for a
  /// plain weight.
  /// `first`: the position of x's row 0; `head`: every row is a T = 1
  /// call's (singleTokenFrom then applies to all of them).
  Expected<Matrix> linear(const Matrix &xIn, int64_t t,
                          const artifact::ProgramLinear &l, int64_t first = 0,
                          bool head = false) {
    const artifact::TensorEntry *e = m.manifest().findTensor(l.tensor);
    if (e && (e->isQuantized() || e->mixed2416())) {
      QTENSOR_ASSIGN_OR_RETURN(size_t i, m.opIndex(l.tensor));
      const Matrix &x =
          singleTokenFrom
              ? singleTokenActivations(xIn, t, m.plan().ops[i],
                                       head ? 0 : *singleTokenFrom - first)
              : xIn;
      std::optional<std::vector<float>> other;
      if (weights) {
        QTENSOR_ASSIGN_OR_RETURN(other, weights(l.tensor));
      }
      QTENSOR_ASSIGN_OR_RETURN(Matrix bias, m.referenceBias(m.plan().ops[i]));
      // A block of rows at a time: the float64 weight is never whole (8
      // bytes a weight).
      if (other) {
        const std::vector<int64_t> &shape = e->logicalShape();
        auto rows = FloatWeightRows::make(
            std::move(*other), shape[0], shape[1],
            "reference decoder: the float weights given for " + l.tensor);
        if (!rows)
          return rows.error();
        return referenceLinear(x, **rows, t, bias);
      }
      QTENSOR_ASSIGN_OR_RETURN(std::unique_ptr<WeightRows> rows,
                               m.referenceRows(m.plan().ops[i]));
      return referenceLinear(x, *rows, t, bias);
    }
    const Matrix &x = xIn;
    const safetensors::TensorView *w = m.plainTensor(l.tensor);
    if (!w || w->shape.size() != 2)
      return makeError("reference decoder: ", l.tensor,
                       " is not a loaded plain [N, K] tensor");
    Matrix bias;
    if (l.bias) {
      QTENSOR_ASSIGN_OR_RETURN(bias, plain(*l.bias));
    }
    return referenceLinear(x, PlainWeightRows(*w, w->shape[0], w->shape[1]), t,
                           bias);
  }

  /// x with its rows from `from` on as `op`'s T = 1 kernel multiplies
  /// them: quantized, where that kernel quantizes its activations (every
  /// row, where its kernels quantize per token at every T).
  const Matrix &singleTokenActivations(const Matrix &x, int64_t t,
                                       const OpPlan &op, int64_t from) {
    if (!op.quantizesActivations(1))
      return x;
    const int64_t k = t > 0 ? int64_t(x.size()) / t : 0;
    scratch = x;
    // A kernel that quantizes per token at every T (W8A8) quantized the
    // prompt's rows too.
    const bool everyT = op.quantizesActivations(kernels::kMaxDecodeTokens + 1);
    for (int64_t r = everyT ? 0 : std::max<int64_t>(from, 0); r < t; ++r) {
      auto row = scratch.begin() + r * k;
      std::vector<double> q = op.kernelActivations({row, row + k}, 1);
      std::copy(q.begin(), q.end(), row);
    }
    return scratch;
  }

  /// Rotates each head of each row (position = row index).
  void rope(Matrix &x, int64_t t, int64_t heads, double base,
            const std::vector<double> &factors) const {
    const int64_t hd = c.headDim, half = c.ropeDim / 2;
    const int64_t width = heads * hd;
    for (int64_t pos = 0; pos < t; ++pos)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < half; ++i) {
          double theta = double(pos) *
                         std::pow(base, -2.0 * double(i) / double(c.ropeDim));
          if (!factors.empty())
            theta /= factors[size_t(i)];
          int64_t base = pos * width + h * hd;
          int64_t i0 = c.rope == artifact::RopeStyle::Interleaved ? base + 2 * i
                                                                  : base + i;
          int64_t i1 =
              c.rope == artifact::RopeStyle::Interleaved ? i0 + 1 : i0 + half;
          double x0 = x[size_t(i0)], x1 = x[size_t(i1)];
          const double cs = std::cos(theta) * c.ropeMscale,
                       sn = std::sin(theta) * c.ropeMscale;
          x[size_t(i0)] = x0 * cs - x1 * sn;
          x[size_t(i1)] = x0 * sn + x1 * cs;
        }
  }

  /// gemma2's soft cap: cap tanh(x / cap); none when cap is 0.
  static double softcap(double x, double cap) {
    return cap > 0 ? cap * std::tanh(x / cap) : x;
  }

  Matrix attention(const Matrix &q, const Matrix &k, const Matrix &v, int64_t t,
                   int64_t window) const {
    const int64_t hd = c.headDim, qw = c.qWidth(), kw = c.kvWidth();
    const int64_t group = c.heads / c.kvHeads;
    Matrix out(size_t(t * qw));
    std::vector<double> s(static_cast<size_t>(t));
    for (int64_t i = 0; i < t; ++i)
      for (int64_t h = 0; h < c.heads; ++h) {
        const int64_t kv = h / group;
        double top = -INFINITY;
        // A sliding window sees positions i - window + 1 .. i.
        const int64_t first = window && i + 1 > window ? i + 1 - window : 0;
        for (int64_t j = first; j <= i; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < hd; ++e)
            dot += q[size_t(i * qw + h * hd + e)] *
                   k[size_t(j * kw + kv * hd + e)];
          s[size_t(j)] = softcap(dot * c.qkScale(), c.attnSoftcap);
          top = std::max(top, s[size_t(j)]);
        }
        double sum = 0;
        for (int64_t j = first; j <= i; ++j)
          sum += (s[size_t(j)] = std::exp(s[size_t(j)] - top));
        for (int64_t e = 0; e < hd; ++e) {
          double acc = 0;
          for (int64_t j = first; j <= i; ++j)
            acc += s[size_t(j)] * v[size_t(j * kw + kv * hd + e)];
          out[size_t(i * qw + h * hd + e)] = acc / sum;
        }
      }
    return out;
  }

  const LoadedModel &m;
  const artifact::DecoderProgram &p;
  const artifact::DecoderConfig &c;
  const ReferenceWeights &weights;
  std::optional<int64_t> singleTokenFrom;
  Matrix scratch;                        ///< singleTokenActivations' result
  std::unique_ptr<WeightRows> embedRows; ///< a quantized embedding
};

} // namespace

Expected<std::vector<double>> qtensor::runtime::referenceLogits(
    const LoadedModel &model, const std::vector<int32_t> &ids,
    int64_t positions, const ReferenceWeights &weights,
    std::optional<int64_t> singleTokenFrom) {
  if (!model.program())
    return makeError("reference decoder: the model was loaded without its "
                     "decoder program");
  return Reference(model, weights, singleTokenFrom).run(ids, positions);
}
