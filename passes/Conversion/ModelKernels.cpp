//===- ModelKernels.cpp - Embedding, norm, RoPE, attention, ... -----------===//
//
// Host builders of the decoder's non-linear kernels (ModelKernels.h). Every
// loop is an scf.for over memrefs; arithmetic is f32 whatever the stored
// dtypes (f16/bf16 are extended on load and rounded once on store), so the
// kernels compute what the float64 reference forward computes, up to f32
// rounding. Indices that come from data (token ids, positions) are clamped
// into the table or cache, so a bad id cannot address outside a buffer;
// the runtime rejects such ids before it calls.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/ModelKernels.h"

#include "CodebookLookup.h"
#include "RowDots.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cmath>
#include <limits>

using namespace mlir;
using QFloat = qtensor::FloatType;
using qtensor::ModelKernelSpec;
using qtensor::ModelOp;

namespace {

Type mlirType(MLIRContext *ctx, QFloat t) {
  switch (t) {
  case QFloat::F16:
    return Float16Type::get(ctx);
  case QFloat::BF16:
    return BFloat16Type::get(ctx);
  case QFloat::F32:
    return Float32Type::get(ctx);
  }
  return Float32Type::get(ctx);
}

/// Small helpers over one ImplicitLocOpBuilder.
struct Emitter {
  ImplicitLocOpBuilder &b;
  Type f32 = b.getF32Type();

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value f32c(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(float(v)));
  }
  Value dim(Value memref, int64_t d) {
    return memref::DimOp::create(b, memref, d);
  }
  Value load(Value memref, ValueRange at) {
    Value v = memref::LoadOp::create(b, memref, at);
    return v.getType() == f32 ? v : arith::ExtFOp::create(b, f32, v);
  }
  void store(Value v, Value memref, ValueRange at) {
    Type t = cast<MemRefType>(memref.getType()).getElementType();
    if (t != f32)
      v = arith::TruncFOp::create(b, t, v);
    memref::StoreOp::create(b, v, memref, at);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value fdiv(Value x, Value y) { return arith::DivFOp::create(b, x, y); }
  /// An i32 from memory as an index clamped to [0, limit - 1].
  Value clampedIndex(Value memref, ValueRange at, int64_t limit) {
    return clampedIndex(memref, at, index(limit));
  }
  Value clampedIndex(Value memref, ValueRange at, Value limit) {
    Value v = memref::LoadOp::create(b, memref, at);
    Value i = arith::IndexCastUIOp::create(b, b.getIndexType(), v);
    return arith::MinUIOp::create(b, i,
                                  arith::SubIOp::create(b, limit, index(1)));
  }

  /// for iv in [lo, hi): body(iv).
  void loop(Value lo, Value hi, function_ref<void(Value)> body) {
    auto f = scf::ForOp::create(b, lo, hi, index(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(f.getBody());
    body(f.getInductionVar());
  }
  void loop(int64_t n, function_ref<void(Value)> body) {
    loop(index(0), index(n), body);
  }
  /// A loop carrying values: returns the results.
  SmallVector<Value>
  reduce(Value lo, Value hi, ValueRange init,
         function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto f = scf::ForOp::create(b, lo, hi, index(1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(f.getBody());
      SmallVector<Value> next =
          body(f.getInductionVar(), f.getRegionIterArgs());
      scf::YieldOp::create(b, next);
    }
    return SmallVector<Value>(f.getResults());
  }
};

MemRefType memref2(MLIRContext *ctx, int64_t rows, int64_t cols, Type t) {
  return MemRefType::get({rows, cols}, t);
}
constexpr int64_t kDyn = ShapedType::kDynamic;

void buildEmbed(Emitter &e, const ModelKernelSpec &s, ValueRange a) {
  // a: ids, table [V, D], out [T, D]
  e.loop(e.index(0), e.dim(a[0], 0), [&](Value t) {
    Value id = e.clampedIndex(a[0], {t}, s.width);
    e.loop(s.rows, [&](Value d) {
      Value x = e.load(a[1], {id, d});
      e.store(s.scale == 1.0 ? x : e.fmul(x, e.f32c(s.scale)), a[2], {t, d});
    });
  });
}

void buildEmbedCodes(Emitter &e, const ModelKernelSpec &s, ValueRange a) {
  // a: ids, codes [V, S] i8 (offset binary fields: a byte each, or two a
  // byte with the low nibble first), scales [V, D / G], [zeros [V, D / G]],
  // out [T, D]. q = u - offset is exact in f32; then x = s * q (s *
  // table[q] for a codebook), s * (q - z) or s * q + m, as the descriptor's
  // reconstruction orders it.
  using qtensor::ZeroPointKind;
  Type i32 = e.b.getI32Type();
  auto i32c = [&](int64_t v) {
    return arith::ConstantOp::create(e.b, e.b.getI32IntegerAttr(int32_t(v)));
  };
  Value offset = i32c(s.codeOffset);
  const bool zeros = s.zeroPoint != ZeroPointKind::None;
  Value out = a[zeros ? 4 : 3];
  e.loop(e.index(0), e.dim(a[0], 0), [&](Value t) {
    Value id = e.clampedIndex(a[0], {t}, s.width);
    e.loop(s.rows, [&](Value d) {
      Value u;
      if (s.fieldBits == 4) {
        Value byte = memref::LoadOp::create(
            e.b, a[1],
            ValueRange{id, arith::DivUIOp::create(e.b, d, e.index(2))});
        Value odd = arith::IndexCastOp::create(
            e.b, i32, arith::RemUIOp::create(e.b, d, e.index(2)));
        Value shift = arith::MulIOp::create(e.b, odd, i32c(4));
        u = arith::AndIOp::create(
            e.b,
            arith::ShRUIOp::create(e.b, arith::ExtUIOp::create(e.b, i32, byte),
                                   shift),
            i32c(15));
      } else {
        u = arith::ExtUIOp::create(
            e.b, i32, memref::LoadOp::create(e.b, a[1], ValueRange{id, d}));
      }
      Value q = arith::SubIOp::create(e.b, u, offset);
      Value g = arith::DivUIOp::create(e.b, d, e.index(s.group));
      Value scale = e.load(a[2], {id, g});
      Value x;
      switch (s.zeroPoint) {
      case ZeroPointKind::None:
        if (s.codebook != qtensor::Codebook::None) {
          // The linears' lookup (an unsigned index below the table's
          // size), on one lane.
          Value lane =
              vector::BroadcastOp::create(e.b, VectorType::get({1}, i32), q);
          Value value =
              qtensor::conversion::emitCodebookLookup(e.b, lane, s.codebook);
          x = e.fmul(scale, vector::ExtractOp::create(e.b, value,
                                                      ArrayRef<int64_t>{0}));
          break;
        }
        x = e.fmul(scale, arith::SIToFPOp::create(e.b, e.f32, q));
        break;
      case ZeroPointKind::Integer: { // (q - z) is an exact integer
        Value z = arith::ExtUIOp::create(
            e.b, i32, memref::LoadOp::create(e.b, a[3], ValueRange{id, g}));
        x = e.fmul(scale, arith::SIToFPOp::create(
                              e.b, e.f32, arith::SubIOp::create(e.b, q, z)));
        break;
      }
      case ZeroPointKind::Float:
        x = e.fmul(scale, e.fsub(arith::SIToFPOp::create(e.b, e.f32, q),
                                 e.load(a[3], {id, g})));
        break;
      case ZeroPointKind::Min:
        x = e.fadd(e.fmul(scale, arith::SIToFPOp::create(e.b, e.f32, q)),
                   e.load(a[3], {id, g}));
        break;
      }
      e.store(s.scale == 1.0 ? x : e.fmul(x, e.f32c(s.scale)), out, {t, d});
    });
  });
}

void buildRmsNorm(Emitter &e, const ModelKernelSpec &s, ValueRange a) {
  // a: x [T, D], w [D], y [T, D] (y may be x)
  e.loop(e.index(0), e.dim(a[0], 0), [&](Value t) {
    Value sum = e.reduce(e.index(0), e.index(s.width), {e.f32c(0)},
                         [&](Value d, ValueRange acc) -> SmallVector<Value> {
                           Value x = e.load(a[0], {t, d});
                           return {e.fadd(acc[0], e.fmul(x, x))};
                         })[0];
    Value mean = e.fdiv(sum, e.f32c(double(s.width)));
    Value scale = math::RsqrtOp::create(e.b, e.fadd(mean, e.f32c(s.eps)));
    e.loop(s.width, [&](Value d) {
      Value x = e.fmul(e.load(a[0], {t, d}), scale);
      Value w = e.load(a[1], {d});
      if (s.weightOffset) // gemma's 1 + w, in f32 as transformers does
        w = e.fadd(w, e.f32c(s.weightOffset));
      e.store(e.fmul(x, w), a[2], {t, d});
    });
  });
}

/// RoPE of row t of x into row `outRow` of y, every head.
void emitRope(Emitter &e, const ModelKernelSpec &s, Value x, Value t,
              Value position, Value y, Value outRow) {
  const int64_t half = s.ropeDim / 2;
  // The frequency divisors as one constant vector, read by i.
  Value factors;
  if (!s.ropeFreqFactors.empty()) {
    std::vector<float> f(s.ropeFreqFactors.begin(), s.ropeFreqFactors.end());
    auto type = VectorType::get({half}, e.f32);
    factors = arith::ConstantOp::create(
        e.b, DenseElementsAttr::get(type, ArrayRef<float>(f)));
  }
  // theta_i = p * base^(-2i / ropeDim) (/ f_i), as ggml computes it, in f32.
  Value p = arith::UIToFPOp::create(
      e.b, e.f32,
      arith::IndexCastUIOp::create(e.b, e.b.getI32Type(), position));
  e.loop(s.heads, [&](Value h) {
    Value base = e.mul(h, e.index(s.headDim));
    e.loop(half, [&](Value i) {
      Value fi = arith::UIToFPOp::create(
          e.b, e.f32, arith::IndexCastUIOp::create(e.b, e.b.getI32Type(), i));
      Value exponent = e.fmul(fi, e.f32c(-2.0 / double(s.ropeDim)));
      Value freq = math::PowFOp::create(e.b, e.f32c(s.ropeBase), exponent);
      if (!s.ropeFreqFactors.empty()) // RoPE scaling: freq_i / f_i
        freq = e.fdiv(freq, vector::ExtractOp::create(
                                e.b, factors, ArrayRef<OpFoldResult>{i}));
      Value theta = e.fmul(p, freq);
      Value c = math::CosOp::create(e.b, theta);
      Value sn = math::SinOp::create(e.b, theta);
      if (s.scale != 1.0) { // YaRN's or LongRoPE's factor on cos and sin
        c = e.fmul(c, e.f32c(s.scale));
        sn = e.fmul(sn, e.f32c(s.scale));
      }
      Value i0, i1;
      if (s.rope == qtensor::artifact::RopeStyle::Interleaved) {
        i0 = e.add(base, e.mul(i, e.index(2)));
        i1 = e.add(i0, e.index(1));
      } else {
        i0 = e.add(base, i);
        i1 = e.add(i0, e.index(half));
      }
      Value x0 = e.load(x, {t, i0}), x1 = e.load(x, {t, i1});
      e.store(e.fsub(e.fmul(x0, c), e.fmul(x1, sn)), y, {outRow, i0});
      e.store(e.fadd(e.fmul(x0, sn), e.fmul(x1, c)), y, {outRow, i1});
    });
    // Dimensions past ropeDim pass through.
    e.loop(e.index(s.ropeDim), e.index(s.headDim), [&](Value d) {
      Value at = e.add(base, d);
      e.store(e.load(x, {t, at}), y, {outRow, at});
    });
  });
}

void buildRope(Emitter &e, const ModelKernelSpec &s, ValueRange a,
               bool intoCache) {
  // a: x [T, W], pos [T], y [T, W] (q) or cache [C, W] (k)
  e.loop(e.index(0), e.dim(a[0], 0), [&](Value t) {
    Value position = intoCache ? e.clampedIndex(a[1], {t}, e.dim(a[2], 0))
                               : e.clampedIndex(a[1], {t}, int64_t(1) << 30);
    emitRope(e, s, a[0], t, position, a[2], intoCache ? position : t);
  });
}

void buildStoreV(Emitter &e, const ModelKernelSpec &s, ValueRange a) {
  // a: x [T, W], pos [T], cache [C, W]
  e.loop(e.index(0), e.dim(a[0], 0), [&](Value t) {
    Value row = e.clampedIndex(a[1], {t}, e.dim(a[2], 0));
    e.loop(s.width,
           [&](Value d) { e.store(e.load(a[0], {t, d}), a[2], {row, d}); });
  });
}

/// The cache rows [first, n) token t attends to: causal up to pos[t], and
/// with a sliding window the last `window` of them only.
std::pair<Value, Value> attendedRows(Emitter &e, const ModelKernelSpec &s,
                                     ValueRange a, Value t) {
  Value last = e.clampedIndex(a[3], {t}, e.dim(a[1], 0));
  Value n = e.add(last, e.index(1));
  Value first = e.index(0);
  if (s.window > 0) {
    Value w = e.index(s.window);
    Value past = arith::CmpIOp::create(e.b, arith::CmpIPredicate::ugt, n, w);
    first = arith::SelectOp::create(e.b, past, arith::SubIOp::create(e.b, n, w),
                                    e.index(0));
  }
  return {first, n};
}

/// Scalar loops: any head dim.
/// c tanh(x / c) with c = s.softcap (gemma2's logit soft-capping, as
/// llama.cpp computes it: scale, tanh, scale), or x when there is none.
Value softcapped(Emitter &e, const ModelKernelSpec &s, Value x) {
  if (!s.softcap)
    return x;
  Value t = math::TanhOp::create(e.b, e.fmul(x, e.f32c(1.0 / s.softcap)));
  return e.fmul(t, e.f32c(s.softcap));
}

/// The heads [first, end) a call computes (a[5], clamped to [0, H]): the
/// runtime splits one token's heads across threads.
void headLoop(Emitter &e, const ModelKernelSpec &s, ValueRange a,
              function_ref<void(Value)> body) {
  Value first = e.clampedIndex(a[5], {e.index(0)}, s.heads + 1);
  Value end = e.clampedIndex(a[5], {e.index(1)}, s.heads + 1);
  e.loop(first, end, body);
}

void buildAttentionScalar(Emitter &e, const ModelKernelSpec &s, ValueRange a) {
  // a: q [T, H*hd] f32, kc [C, KV*hd], vc [C, KV*hd], pos [T], scores [C],
  //    heads [2] i32, out [T, H*hd]
  const int64_t group = s.heads / s.kvHeads;
  const double scale = s.scale;
  Value q = a[0], kc = a[1], vc = a[2], scores = a[4], out = a[6];
  e.loop(e.index(0), e.dim(q, 0), [&](Value t) {
    std::pair<Value, Value> rows = attendedRows(e, s, a, t);
    Value first = rows.first, n = rows.second;
    headLoop(e, s, a, [&](Value h) {
      Value qBase = e.mul(h, e.index(s.headDim));
      Value kvBase = e.mul(arith::DivUIOp::create(e.b, h, e.index(group)),
                           e.index(s.headDim));
      Value lowest = e.f32c(-std::numeric_limits<float>::infinity());
      Value max = e.reduce(
          first, n, {lowest}, [&](Value j, ValueRange m) -> SmallVector<Value> {
            Value dot =
                e.reduce(e.index(0), e.index(s.headDim), {e.f32c(0)},
                         [&](Value d, ValueRange acc) -> SmallVector<Value> {
                           Value qv = e.load(q, {t, e.add(qBase, d)});
                           Value kv = e.load(kc, {j, e.add(kvBase, d)});
                           return {e.fadd(acc[0], e.fmul(qv, kv))};
                         })[0];
            Value sc = softcapped(e, s, e.fmul(dot, e.f32c(scale)));
            memref::StoreOp::create(e.b, sc, scores, ValueRange{j});
            return {arith::MaximumFOp::create(e.b, m[0], sc)};
          })[0];
      Value sum =
          e.reduce(first, n, {e.f32c(0)},
                   [&](Value j, ValueRange acc) -> SmallVector<Value> {
                     Value p = math::ExpOp::create(
                         e.b, e.fsub(e.load(scores, {j}), max));
                     memref::StoreOp::create(e.b, p, scores, ValueRange{j});
                     return {e.fadd(acc[0], p)};
                   })[0];
      Value inv = e.fdiv(e.f32c(1), sum);
      e.loop(s.headDim, [&](Value d) {
        Value acc =
            e.reduce(first, n, {e.f32c(0)},
                     [&](Value j, ValueRange r) -> SmallVector<Value> {
                       Value v = e.load(vc, {j, e.add(kvBase, d)});
                       return {e.fadd(r[0], e.fmul(e.load(scores, {j}), v))};
                     })[0];
        e.store(e.fmul(acc, inv), out, {t, e.add(qBase, d)});
      });
    });
  });
}

/// Head dims that are a multiple of 8: the q.k dots and the weighted sum of
/// V rows in 8-lane vectors, V read row by row (contiguous) into an f32
/// accumulator row on the stack, scaled by 1 / sum once at the end.
void buildAttentionVector(Emitter &e, const ModelKernelSpec &s, ValueRange a) {
  constexpr int64_t kLanes = 8;
  ImplicitLocOpBuilder &b = e.b;
  auto lanes = VectorType::get({kLanes}, e.f32);
  const int64_t group = s.heads / s.kvHeads, hd = s.headDim;
  Value q = a[0], kc = a[1], vc = a[2], scores = a[4], out = a[6];
  Value acc = memref::AllocaOp::create(b, MemRefType::get({hd}, e.f32));
  Value zero = arith::ConstantOp::create(
      b, SplatElementsAttr::get(lanes, b.getF32FloatAttr(0.0)));
  // 8 lanes of f32 from any memref: an f16 cache is widened as it is read.
  auto vload = [&](Value m, ValueRange at) -> Value {
    Type element = cast<MemRefType>(m.getType()).getElementType();
    if (element == e.f32)
      return vector::LoadOp::create(b, lanes, m, at);
    Value narrow =
        vector::LoadOp::create(b, VectorType::get({kLanes}, element), m, at);
    return arith::ExtFOp::create(b, lanes, narrow);
  };
  auto vloop = [&](function_ref<void(Value)> body) {
    auto f = scf::ForOp::create(b, e.index(0), e.index(hd), e.index(kLanes));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(f.getBody());
    body(f.getInductionVar());
  };
  e.loop(e.index(0), e.dim(q, 0), [&](Value t) {
    std::pair<Value, Value> rows = attendedRows(e, s, a, t);
    Value first = rows.first, n = rows.second;
    headLoop(e, s, a, [&](Value h) {
      Value qBase = e.mul(h, e.index(hd));
      Value kvBase =
          e.mul(arith::DivUIOp::create(b, h, e.index(group)), e.index(hd));
      Value lowest = e.f32c(-std::numeric_limits<float>::infinity());
      Value max = e.reduce(
          first, n, {lowest}, [&](Value j, ValueRange m) -> SmallVector<Value> {
            auto f = scf::ForOp::create(b, e.index(0), e.index(hd),
                                        e.index(kLanes), ValueRange{zero});
            {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(f.getBody());
              Value d = f.getInductionVar();
              Value prod = vector::FMAOp::create(
                  b, vload(q, {t, e.add(qBase, d)}),
                  vload(kc, {j, e.add(kvBase, d)}), f.getRegionIterArgs()[0]);
              scf::YieldOp::create(b, prod);
            }
            Value dot = vector::ReductionOp::create(
                b, vector::CombiningKind::ADD, f.getResult(0),
                arith::FastMathFlags::reassoc);
            Value sc = softcapped(e, s, e.fmul(dot, e.f32c(s.scale)));
            memref::StoreOp::create(b, sc, scores, ValueRange{j});
            return {arith::MaximumFOp::create(b, m[0], sc)};
          })[0];
      vloop([&](Value d) { vector::StoreOp::create(b, zero, acc, d); });
      Value sum = e.reduce(
          first, n, {e.f32c(0)},
          [&](Value j, ValueRange total) -> SmallVector<Value> {
            Value p = math::ExpOp::create(b, e.fsub(e.load(scores, {j}), max));
            Value ps = vector::BroadcastOp::create(b, lanes, p);
            vloop([&](Value d) {
              Value next = vector::FMAOp::create(
                  b, ps, vload(vc, {j, e.add(kvBase, d)}), vload(acc, {d}));
              vector::StoreOp::create(b, next, acc, d);
            });
            return {e.fadd(total[0], p)};
          })[0];
      Value inv = e.fdiv(e.f32c(1), sum);
      e.loop(hd, [&](Value d) {
        e.store(e.fmul(e.load(acc, {d}), inv), out, {t, e.add(qBase, d)});
      });
    });
  });
}

void buildAttention(Emitter &e, const ModelKernelSpec &s, ValueRange a) {
  // a: q [T, H*hd] f32, kc [C, KV*hd], vc [C, KV*hd], pos [T], scores [C],
  //    heads [2] i32, out [T, H*hd]
  if (s.headDim % 8 == 0)
    buildAttentionVector(e, s, a);
  else
    buildAttentionScalar(e, s, a);
}

void buildSiluMul(Emitter &e, const ModelKernelSpec &s, ValueRange a) {
  // a: gate [T, F], up [T, F], y [T, F]: y = gate * sigmoid(gate) * up
  e.loop(e.index(0), e.dim(a[0], 0), [&](Value t) {
    e.loop(s.width, [&](Value f) {
      Value g = e.load(a[0], {t, f});
      Value sig = e.fdiv(
          e.f32c(1),
          e.fadd(e.f32c(1),
                 math::ExpOp::create(e.b, arith::NegFOp::create(e.b, g))));
      e.store(e.fmul(e.fmul(g, sig), e.load(a[1], {t, f})), a[2], {t, f});
    });
  });
}

void buildGeluMul(Emitter &e, const ModelKernelSpec &s, ValueRange a) {
  // a: gate [T, F], up [T, F], y [T, F]: y = gelu_tanh(gate) * up, with
  // gelu_tanh(g) = g/2 (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))).
  e.loop(e.index(0), e.dim(a[0], 0), [&](Value t) {
    e.loop(s.width, [&](Value f) {
      Value g = e.load(a[0], {t, f});
      Value cube = e.fmul(e.fmul(g, g), g);
      Value inner = e.fmul(e.f32c(0.7978845608028654),
                           e.fadd(g, e.fmul(e.f32c(0.044715), cube)));
      Value gelu = e.fmul(e.fmul(e.f32c(0.5), g),
                          e.fadd(e.f32c(1), math::TanhOp::create(e.b, inner)));
      e.store(e.fmul(gelu, e.load(a[1], {t, f})), a[2], {t, f});
    });
  });
}

void buildSoftcap(Emitter &e, const ModelKernelSpec &s, ValueRange a) {
  // a: x [T, V] f32, capped in place.
  e.loop(e.index(0), e.dim(a[0], 0), [&](Value t) {
    e.loop(s.width, [&](Value v) {
      e.store(softcapped(e, s, e.load(a[0], {t, v})), a[0], {t, v});
    });
  });
}

void buildScale(Emitter &e, const ModelKernelSpec &s, ValueRange a) {
  // a: x [T, V] f32, scaled in place.
  Value c = e.f32c(s.scale);
  e.loop(e.index(0), e.dim(a[0], 0), [&](Value t) {
    e.loop(s.width, [&](Value v) {
      e.store(e.fmul(e.load(a[0], {t, v}), c), a[0], {t, v});
    });
  });
}

void buildResidualAdd(Emitter &e, const ModelKernelSpec &s, ValueRange a) {
  // a: x [T, D] f32 (updated), y [T, D]; granite scales y first, rounded
  // to f32 once as llama.cpp's ggml_scale does.
  Value c = s.scale != 1.0 ? e.f32c(s.scale) : Value();
  e.loop(e.index(0), e.dim(a[0], 0), [&](Value t) {
    e.loop(s.width, [&](Value d) {
      Value y = e.load(a[1], {t, d});
      if (c)
        y = e.fmul(y, c);
      e.store(e.fadd(e.load(a[0], {t, d}), y), a[0], {t, d});
    });
  });
}

/// y[t0 + r, n] = x[t0 + r] . w[n] (+ b[n]) for `rows` activation rows.
void floatLinearRows(Emitter &e, const ModelKernelSpec &s, ValueRange a,
                     Value n, Value t0, int64_t rows) {
  SmallVector<Value> sums =
      qtensor::conversion::emitRowDots(e.b, a[0], t0, rows, a[1], {n}, s.width);
  // The bias is added in f32 to the f32 sum, then rounded once, as a
  // quantized op's bias epilogue does.
  Value bias = s.bias ? e.load(a[2], {n}) : Value();
  for (int64_t r = 0; r < rows; ++r)
    e.store(bias ? e.fadd(sums[size_t(r)], bias) : sums[size_t(r)], a.back(),
            {e.add(t0, e.index(r)), n});
}

void buildFloatLinear(Emitter &e, const ModelKernelSpec &s, ValueRange a) {
  // a: x [T, K], w [n, K] (any range of the N rows), [b [n], the same
  // range], y [T, n] with the whole output's row stride. Row by row, so a
  // weight row is read from memory once and reused from cache for four
  // activation rows at a time.
  constexpr int64_t kRowBlock = 4;
  Value tokens = e.dim(a[0], 0);
  Value blocked = arith::SubIOp::create(
      e.b, tokens, arith::RemUIOp::create(e.b, tokens, e.index(kRowBlock)));
  e.loop(e.index(0), e.dim(a[1], 0), [&](Value n) {
    auto f = scf::ForOp::create(e.b, e.index(0), blocked, e.index(kRowBlock));
    {
      OpBuilder::InsertionGuard guard(e.b);
      e.b.setInsertionPointToStart(f.getBody());
      floatLinearRows(e, s, a, n, f.getInductionVar(), kRowBlock);
    }
    e.loop(blocked, tokens,
           [&](Value t) { floatLinearRows(e, s, a, n, t, 1); });
  });
}

void buildArgmax(Emitter &e, const ModelKernelSpec &s, ValueRange a) {
  // a: logits [T, V] f32, id [1] i32: the first maximum of the last row.
  Value row = arith::SubIOp::create(e.b, e.dim(a[0], 0), e.index(1));
  Value lowest = e.f32c(-std::numeric_limits<float>::infinity());
  SmallVector<Value> best =
      e.reduce(e.index(0), e.index(s.width), {lowest, e.index(0)},
               [&](Value v, ValueRange r) -> SmallVector<Value> {
                 Value x = e.load(a[0], {row, v});
                 Value better = arith::CmpFOp::create(
                     e.b, arith::CmpFPredicate::OGT, x, r[0]);
                 return {arith::SelectOp::create(e.b, better, x, r[0]),
                         arith::SelectOp::create(e.b, better, v, r[1])};
               });
  Value id = arith::IndexCastUIOp::create(e.b, e.b.getI32Type(), best[1]);
  memref::StoreOp::create(e.b, id, a[1], ValueRange{e.index(0)});
}

SmallVector<Type> argumentTypes(MLIRContext *ctx, const ModelKernelSpec &s) {
  Type in = mlirType(ctx, s.input), w = mlirType(ctx, s.weight),
       out = mlirType(ctx, s.output), f32 = Float32Type::get(ctx),
       i32 = IntegerType::get(ctx, 32);
  auto ids = MemRefType::get({kDyn}, i32);
  const int64_t q = s.heads * s.headDim, kv = s.kvHeads * s.headDim;
  switch (s.op) {
  case ModelOp::Embed:
    return {ids, memref2(ctx, s.width, s.rows, w),
            memref2(ctx, kDyn, s.rows, f32)};
  case ModelOp::RmsNorm:
    return {memref2(ctx, kDyn, s.width, in), MemRefType::get({s.width}, w),
            memref2(ctx, kDyn, s.width, out)};
  case ModelOp::RopeQ:
    return {memref2(ctx, kDyn, q, in), ids, memref2(ctx, kDyn, q, f32)};
  case ModelOp::RopeK:
    // Into the cache, in its dtype (`output`).
    return {memref2(ctx, kDyn, kv, in), ids, memref2(ctx, kDyn, kv, out)};
  case ModelOp::StoreV:
    return {memref2(ctx, kDyn, s.width, in), ids,
            memref2(ctx, kDyn, s.width, out)};
  case ModelOp::Attention:
    // The cache (in its dtype, `weight`) and the scores row have the
    // session's capacity C; the scores row must hold at least C values.
    return {memref2(ctx, kDyn, q, f32),   memref2(ctx, kDyn, kv, w),
            memref2(ctx, kDyn, kv, w),    ids,
            MemRefType::get({kDyn}, f32), MemRefType::get({2}, i32),
            memref2(ctx, kDyn, q, out)};
  case ModelOp::SiluMul:
  case ModelOp::GeluMul:
    return {memref2(ctx, kDyn, s.width, in), memref2(ctx, kDyn, s.width, in),
            memref2(ctx, kDyn, s.width, out)};
  case ModelOp::ResidualAdd:
    return {memref2(ctx, kDyn, s.width, f32), memref2(ctx, kDyn, s.width, in)};
  case ModelOp::FloatLinear:
    // Callable on any range of the N weight rows (the runtime splits them
    // across threads): the rows and y's columns are dynamic, y strided.
    {
      SmallVector<Type> args = {memref2(ctx, kDyn, s.width, in),
                                memref2(ctx, kDyn, s.width, w)};
      if (s.bias)
        args.push_back(MemRefType::get({kDyn}, mlirType(ctx, *s.bias)));
      args.push_back(MemRefType::get(
          {kDyn, kDyn}, out, StridedLayoutAttr::get(ctx, 0, {kDyn, 1})));
      return args;
    }
  case ModelOp::Argmax:
    return {memref2(ctx, kDyn, s.width, f32), MemRefType::get({1}, i32)};
  case ModelOp::Softcap:
  case ModelOp::Scale:
    return {memref2(ctx, kDyn, s.width, f32)};
  case ModelOp::EmbedCodes: {
    const int64_t groups = s.rows / s.group;
    SmallVector<Type> args = {
        ids, memref2(ctx, s.width, s.rowStride, IntegerType::get(ctx, 8)),
        memref2(ctx, s.width, groups, w)};
    if (s.zeroPoint == qtensor::ZeroPointKind::Integer) // U8, one a byte
      args.push_back(memref2(ctx, s.width, groups, IntegerType::get(ctx, 8)));
    else if (s.zeroPoint != qtensor::ZeroPointKind::None)
      args.push_back(memref2(ctx, s.width, groups, w));
    args.push_back(memref2(ctx, kDyn, s.rows, f32));
    return args;
  }
  }
  return {};
}

} // namespace

LogicalResult qtensor::buildModelKernel(ModuleOp module,
                                        const ModelKernelSpec &spec) {
  const std::string name = spec.name();
  if (module.lookupSymbol(name))
    return success();
  MLIRContext *ctx = module.getContext();
  ImplicitLocOpBuilder b(NameLoc::get(StringAttr::get(ctx, name)), ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(
      b, name, FunctionType::get(ctx, argumentTypes(ctx, spec), {}));
  fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  b.setInsertionPointToStart(fn.addEntryBlock());
  Emitter e{b};
  ValueRange a = fn.getArguments();
  switch (spec.op) {
  case ModelOp::Embed:
    buildEmbed(e, spec, a);
    break;
  case ModelOp::RmsNorm:
    buildRmsNorm(e, spec, a);
    break;
  case ModelOp::RopeQ:
    buildRope(e, spec, a, /*intoCache=*/false);
    break;
  case ModelOp::RopeK:
    buildRope(e, spec, a, /*intoCache=*/true);
    break;
  case ModelOp::StoreV:
    buildStoreV(e, spec, a);
    break;
  case ModelOp::Attention:
    buildAttention(e, spec, a);
    break;
  case ModelOp::SiluMul:
    buildSiluMul(e, spec, a);
    break;
  case ModelOp::GeluMul:
    buildGeluMul(e, spec, a);
    break;
  case ModelOp::ResidualAdd:
    buildResidualAdd(e, spec, a);
    break;
  case ModelOp::FloatLinear:
    buildFloatLinear(e, spec, a);
    break;
  case ModelOp::Argmax:
    buildArgmax(e, spec, a);
    break;
  case ModelOp::EmbedCodes:
    buildEmbedCodes(e, spec, a);
    break;
  case ModelOp::Softcap:
    buildSoftcap(e, spec, a);
    break;
  case ModelOp::Scale:
    buildScale(e, spec, a);
    break;
  }
  func::ReturnOp::create(b);
  return success();
}
