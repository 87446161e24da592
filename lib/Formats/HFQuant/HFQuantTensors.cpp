//===- HFQuantTensors.cpp - One quantized linear's stored tensors ---------===//
//
// Checks each stored tensor against the scheme and the linear's [N, K],
// then moves the codes out of their int32 words unchanged (no value is
// re-quantized). Packing conventions: HFQuantized.h.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/HFQuantized.h"

#include "qtensor/Descriptor/ScaleFormat.h"

#include <cmath>
#include <cstring>

using namespace qtensor;
using namespace qtensor::hfquant;
using safetensors::DType;
using safetensors::TensorView;

namespace {

/// AWQ's gemm packing: nibble i of a word holds column 8c + kAWQOrder[i].
constexpr int kAWQOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool isPacked(const WeightScheme &s) {
  return s.storage != Storage::Int8 && s.storage != Storage::Float8E4M3 &&
         s.storage != Storage::NVFP4Packed;
}
bool isFP8(const WeightScheme &s) { return s.storage == Storage::Float8E4M3; }

/// A symmetric packed 4-bit code is read as the signed offset-binary code
/// it is (ggml Q4_0's form); other widths stay unsigned, with the zero-point
/// 2^(b-1) symmetry implies stored as an integer zero-point, the form the
/// kernels read 8-bit offset codes in.
bool offsetBinary(const WeightScheme &s) {
  return s.symmetric && isPacked(s) && s.bits == 4;
}
bool impliedZero(const WeightScheme &s) {
  return s.symmetric && isPacked(s) && !offsetBinary(s);
}

/// Codes per int32 word.
int64_t perWord(const WeightScheme &s) { return 32 / int64_t(s.bits); }

/// Scale groups along K: one per group, or one for a per-channel or
/// per-tensor scheme.
int64_t scaleGroups(const WeightScheme &s, int64_t k) {
  return s.groupSize > 0 ? ceilDiv(k, s.groupSize) : 1;
}

int32_t word(const TensorView &t, int64_t i) {
  int32_t v;
  std::memcpy(&v, t.data + size_t(i) * 4, 4);
  return v;
}

uint32_t field(const TensorView &t, int64_t wordIndex, int64_t slot,
               unsigned bits) {
  return (uint32_t(word(t, wordIndex)) >> (bits * unsigned(slot))) &
         ((1u << bits) - 1);
}

int8_t byteAt(const TensorView &t, int64_t i) {
  return static_cast<int8_t>(t.data[size_t(i)]);
}

Status expectTensor(const TensorView *t, const std::string &module,
                    const std::string &suffix,
                    std::initializer_list<DType> dtypes,
                    std::initializer_list<std::vector<int64_t>> shapes) {
  std::string name = module + "." + suffix;
  if (!t)
    return makeError(name,
                     ": missing (the checkpoint's quantization_config "
                     "says ",
                     module, " is quantized)");
  bool dtypeOk = false;
  std::string wanted;
  for (DType d : dtypes) {
    dtypeOk |= t->dtype == d;
    wanted +=
        (wanted.empty() ? "" : " or ") + std::string(safetensors::dtypeName(d));
  }
  bool shapeOk = false;
  std::string shapesText;
  for (const std::vector<int64_t> &s : shapes) {
    shapeOk |= t->shape == s;
    shapesText += (shapesText.empty() ? "" : " or ") + shapeToString(s);
  }
  if (!dtypeOk || !shapeOk)
    return makeError(name, ": expected ", wanted, " ", shapesText, ", got ",
                     safetensors::dtypeName(t->dtype), " ",
                     shapeToString(t->shape));
  return Status::ok();
}

/// The qparams' expected stored shapes.
std::vector<std::vector<int64_t>> scaleShapes(const WeightScheme &s, int64_t n,
                                              int64_t k) {
  int64_t g = scaleGroups(s, k);
  if (s.blockRows > 0)
    return {{ceilDiv(n, s.blockRows), g}};
  if (s.method != Method::CompressedTensors)
    return {{g, n}};
  if (s.groupSize > 0)
    return {{n, g}};
  if (s.groupSize == 0)
    return {{n, 1}};
  if (isFP8(s)) // AutoFP8 wrote a per-tensor scale as a scalar
    return {{1}, {1, 1}, {}};
  return {{1}, {1, 1}};
}

/// The group order of input columns from a g_idx, or none when it is
/// k / G (no act-order). Every group but the last must hold exactly G
/// columns: that is what makes the groups contiguous in that order.
Expected<std::optional<std::vector<int64_t>>>
permutationOf(const TensorView &gIdx, const WeightScheme &s, int64_t k,
              const std::string &name) {
  const int64_t groups = scaleGroups(s, k);
  const int64_t size = s.groupSize > 0 ? s.groupSize : k;
  std::vector<int64_t> count(static_cast<size_t>(groups), 0);
  bool identity = true;
  for (int64_t c = 0; c < k; ++c) {
    int32_t g = word(gIdx, c);
    if (g < 0 || g >= groups)
      return makeError(name, "[", c, "] = ", g,
                       ": a group index must be in [0, ", groups, ")");
    ++count[size_t(g)];
    identity &= g == c / size;
  }
  if (identity)
    return std::optional<std::vector<int64_t>>();
  for (int64_t g = 0; g < groups; ++g) {
    int64_t want = g + 1 < groups ? size : k - size * (groups - 1);
    if (count[size_t(g)] != want)
      return makeError(name, ": group ", g, " has ", count[size_t(g)],
                       " input columns, expected ", want,
                       " (act-order groups are contiguous in group order)");
  }
  std::vector<int64_t> next(static_cast<size_t>(groups));
  for (int64_t g = 0; g < groups; ++g)
    next[size_t(g)] = g * size;
  std::vector<int64_t> order(static_cast<size_t>(k));
  for (int64_t c = 0; c < k; ++c)
    order[size_t(next[size_t(word(gIdx, c))]++)] = c;
  return std::optional<std::vector<int64_t>>(std::move(order));
}

/// NVFP4's one f32 divisor, which must be finite and positive.
Expected<float> globalScaleOf(const TensorView &g, const std::string &name) {
  const float v = safetensors::floatAt(g, 0);
  if (!std::isfinite(v) || !(v > 0))
    return makeError(name, " = ", v, ": expected a finite positive divisor");
  return v;
}

Expected<QuantizedTensorDescriptor> describeNVFP4(const WeightScheme &s,
                                                  const PackedTensors &t,
                                                  int64_t n, int64_t k,
                                                  const std::string &module) {
  const ComponentNames names = componentNames(s);
  if (k % 16)
    return makeError(module, ": K = ", k,
                     " is not a multiple of NVFP4's groups of 16");
  QTENSOR_TRY(
      expectTensor(t.codes, module, names.codes, {DType::U8}, {{n, k / 2}}));
  QTENSOR_TRY(expectTensor(t.scales, module, names.scales, {DType::F8_E4M3},
                           {{n, k / 16}}));
  QTENSOR_TRY(expectTensor(t.globalScale, module, names.globalScale,
                           {DType::F32}, {{1}, {}}));
  if (auto g = globalScaleOf(*t.globalScale, module + "." + names.globalScale);
      !g)
    return g.error();
  QuantizedTensorDescriptor out;
  out.shape = {n, k};
  out.elementType = FloatType::F16;
  // The scales are stored as the f32 values they fold to (unpackNVFP4).
  out.descriptor = e2m1GroupDescriptor(16, ScaleFormat::Plain);
  QTENSOR_TRY(verifyTensorDescriptor(out));
  return out;
}

/// E2M1 codes, two a byte (the even column low), and each group's scale
/// fl32(e4m3(c) / g) as compressed-tensors computes it.
Expected<LogicalParts> unpackNVFP4(const WeightScheme &s,
                                   const PackedTensors &t, int64_t n, int64_t k,
                                   const std::string &module) {
  const ComponentNames names = componentNames(s);
  QTENSOR_ASSIGN_OR_RETURN(
      float g, globalScaleOf(*t.globalScale, module + "." + names.globalScale));
  LogicalParts out;
  out.codes.resize(size_t(n) * size_t(k));
  for (size_t i = 0; i < out.codes.size(); i += 2) {
    const uint8_t b = uint8_t(t.codes->data[i / 2]);
    out.codes[i] = b & 0xF;
    out.codes[i + 1] = b >> 4;
  }
  const int64_t groups = k / 16;
  out.scales.resize(size_t(n) * size_t(groups));
  for (size_t i = 0; i < out.scales.size(); ++i) {
    const float c = safetensors::floatAt(*t.scales, int64_t(i));
    if (!std::isfinite(c))
      return makeError(module, ".", names.scales, "[", int64_t(i) / groups,
                       ", ", int64_t(i) % groups,
                       "] is NaN in E4M3; expected a finite scale");
    out.scales[i] = c / g; // an f32 division, as compressed-tensors does
  }
  return out;
}

} // namespace

ComponentNames hfquant::componentNames(const WeightScheme &s) {
  ComponentNames c;
  if (s.method == Method::FineGrainedFP8) {
    c.codes = "weight";
    c.scales = "weight_scale_inv";
  } else if (s.method != Method::CompressedTensors) {
    c.codes = "qweight";
    c.zeros = "qzeros";
    c.scales = "scales";
    c.groupIndex = s.method == Method::GPTQ ? "g_idx" : "";
  } else if (s.storage == Storage::Int8) {
    c.codes = "weight";
    c.zeros = "weight_zero_point";
    c.scales = "weight_scale";
    c.groupIndex = "weight_g_idx";
  } else if (isFP8(s)) {
    c.codes = "weight";
    c.scales = "weight_scale";
  } else if (s.storage == Storage::NVFP4Packed) {
    c.codes = "weight_packed";
    c.scales = "weight_scale";
    c.globalScale = "weight_global_scale";
    c.unused = "input_global_scale";
  } else {
    c.codes = "weight_packed";
    c.zeros = "weight_zero_point";
    c.scales = "weight_scale";
    c.groupIndex = "weight_g_idx";
    c.shape = "weight_shape";
  }
  return c;
}

Expected<QuantizedTensorDescriptor>
hfquant::describe(const WeightScheme &s, const PackedTensors &t, int64_t n,
                  int64_t k, const std::string &module) {
  const ComponentNames names = componentNames(s);
  if (s.storage == Storage::NVFP4Packed)
    return describeNVFP4(s, t, n, k, module);
  const int64_t p = perWord(s), groups = scaleGroups(s, k);
  switch (s.storage) {
  case Storage::NVFP4Packed: // described above
    break;
  case Storage::PackedAlongK:
    if (k % p)
      return makeError(module, ": K = ", k, " is not a multiple of the ", p,
                       " codes of an int32 word");
    QTENSOR_TRY(
        expectTensor(t.codes, module, names.codes, {DType::I32}, {{k / p, n}}));
    break;
  case Storage::PackedAlongN:
    if (n % 8)
      return makeError(module, ": N = ", n,
                       " is not a multiple of the 8 codes of an int32 word");
    QTENSOR_TRY(
        expectTensor(t.codes, module, names.codes, {DType::I32}, {{k, n / 8}}));
    break;
  case Storage::PackedOffsetK:
    QTENSOR_TRY(expectTensor(t.codes, module, names.codes, {DType::I32},
                             {{n, ceilDiv(k, p)}}));
    if (t.shape) {
      QTENSOR_TRY(expectTensor(t.shape, module, names.shape,
                               {DType::I32, DType::I64}, {{2}}));
      int64_t d[2];
      for (int i = 0; i < 2; ++i)
        d[i] = t.shape->dtype == DType::I32 ? word(*t.shape, i) : [&] {
          int64_t v;
          std::memcpy(&v, t.shape->data + 8 * i, 8);
          return v;
        }();
      if (d[0] != n || d[1] != k)
        return makeError(module, ".", names.shape, ": records [", d[0], ", ",
                         d[1], "], the model's config says [", n, ", ", k, "]");
    }
    break;
  case Storage::Int8:
    QTENSOR_TRY(
        expectTensor(t.codes, module, names.codes, {DType::I8}, {{n, k}}));
    break;
  case Storage::Float8E4M3:
    QTENSOR_TRY(
        expectTensor(t.codes, module, names.codes, {DType::F8_E4M3}, {{n, k}}));
    break;
  }
  std::vector<std::vector<int64_t>> shapes = scaleShapes(s, n, k);
  auto expectShapes = [&](const TensorView *v, const std::string &suffix,
                          std::initializer_list<DType> dtypes) -> Status {
    for (const std::vector<int64_t> &shape : shapes)
      if (v && v->shape == shape)
        return expectTensor(v, module, suffix, dtypes, {shape});
    return expectTensor(v, module, suffix, dtypes, {shapes[0]});
  };
  QTENSOR_TRY(expectShapes(t.scales, names.scales,
                           {DType::F16, DType::BF16, DType::F32}));

  // Zero-points: packed like the codes (gptq, awq; compressed-tensors per
  // group or channel), else one I8 per scale.
  if (!s.symmetric || (s.method == Method::GPTQ && t.zeros)) {
    if (s.method == Method::GPTQ) {
      if (n % p)
        return makeError(module, ": N = ", n, " is not a multiple of the ", p,
                         " zero-points of an int32 word");
      QTENSOR_TRY(expectTensor(t.zeros, module, names.zeros, {DType::I32},
                               {{groups, n / p}}));
    } else if (s.method == Method::AWQ) {
      QTENSOR_TRY(expectTensor(t.zeros, module, names.zeros, {DType::I32},
                               {{groups, n / 8}}));
    } else if (isPacked(s) && s.groupSize >= 0) {
      QTENSOR_TRY(expectTensor(t.zeros, module, names.zeros, {DType::I32},
                               {{ceilDiv(n, p), groups}}));
    } else {
      QTENSOR_TRY(expectShapes(t.zeros, names.zeros, {DType::I8}));
    }
  } else if (s.storage == Storage::Int8 && t.zeros) {
    QTENSOR_TRY(expectShapes(t.zeros, names.zeros, {DType::I8}));
  }

  QuantizedTensorDescriptor out;
  out.shape = {n, k};
  out.elementType = FloatType::F16;
  AffineDescriptor &d = out.descriptor;
  if (isFP8(s)) {
    // Unsigned E4M3 codes under one scale per output channel (a per-tensor
    // scale repeated) or per group of a row (a block's scale repeated for
    // each of its rows: HFQuantized.h).
    d.code = {8, false};
    d.scheme = QuantScheme::Symmetric;
    d.zeroPoint = ZeroPointKind::None;
    d.codebook = Codebook::E4M3;
    if (s.blockRows > 0) {
      d.granularity = Granularity::Group;
      d.axis = 1;
      d.groupSize = s.groupSize;
      d.tail = TailRule::Partial;
    } else {
      d.granularity = Granularity::PerAxis;
      d.axis = 0;
    }
    d.scaleType = t.scales->dtype == DType::F16    ? FloatType::F16
                  : t.scales->dtype == DType::BF16 ? FloatType::BF16
                                                   : FloatType::F32;
    QTENSOR_TRY(verifyTensorDescriptor(out));
    return out;
  }
  const bool symmetric = s.symmetric && !impliedZero(s);
  d.code.bits = s.bits;
  d.code.isSigned = offsetBinary(s) || s.storage == Storage::Int8;
  d.encoding = offsetBinary(s) ? SignedEncoding::OffsetBinary
                               : SignedEncoding::TwosComplement;
  d.scheme = symmetric ? QuantScheme::Symmetric : QuantScheme::Asymmetric;
  d.zeroPoint = symmetric ? ZeroPointKind::None : ZeroPointKind::Integer;
  if (s.groupSize > 0) {
    d.granularity = Granularity::Group;
    d.axis = 1;
    d.groupSize = s.groupSize;
    d.tail = TailRule::Partial;
  } else if (s.groupSize == 0) {
    d.granularity = Granularity::PerAxis;
    d.axis = 0;
  } else {
    d.granularity = Granularity::PerTensor;
  }
  d.scaleType = t.scales->dtype == DType::F16    ? FloatType::F16
                : t.scales->dtype == DType::BF16 ? FloatType::BF16
                                                 : FloatType::F32;
  if (t.groupIndex) {
    QTENSOR_TRY(expectTensor(t.groupIndex, module, names.groupIndex,
                             {DType::I32}, {{k}}));
    QTENSOR_ASSIGN_OR_RETURN(
        d.permutation,
        permutationOf(*t.groupIndex, s, k, module + "." + names.groupIndex));
  }
  QTENSOR_TRY(verifyTensorDescriptor(out));
  return out;
}

Expected<LogicalParts> hfquant::unpack(const WeightScheme &s,
                                       const PackedTensors &t,
                                       const QuantizedTensorDescriptor &desc,
                                       const std::string &module) {
  const ComponentNames names = componentNames(s);
  const int64_t n = desc.shape[0], k = desc.shape[1];
  if (s.storage == Storage::NVFP4Packed)
    return unpackNVFP4(s, t, n, k, module);
  const int64_t p = perWord(s), groups = scaleGroups(s, k);
  const unsigned b = s.bits;
  const int32_t offset = int32_t(1) << (b - 1);
  LogicalParts out;
  out.codes.resize(size_t(n) * size_t(k));

  // Codes: the stored unsigned field, or the signed value it encodes.
  const int32_t shift = offsetBinary(s) ? offset : 0;
  switch (s.storage) {
  case Storage::NVFP4Packed: // unpacked above
    break;
  case Storage::PackedAlongK:
    for (int64_t w = 0; w < k / p; ++w)
      for (int64_t c = 0; c < n; ++c)
        for (int64_t j = 0; j < p; ++j)
          out.codes[size_t(c * k + w * p + j)] =
              int32_t(field(*t.codes, w * n + c, j, b)) - shift;
    break;
  case Storage::PackedAlongN:
    for (int64_t r = 0; r < k; ++r)
      for (int64_t w = 0; w < n / 8; ++w)
        for (int64_t j = 0; j < 8; ++j)
          out.codes[size_t((w * 8 + kAWQOrder[j]) * k + r)] =
              int32_t(field(*t.codes, r * (n / 8) + w, j, b)) - shift;
    break;
  case Storage::PackedOffsetK: {
    const int64_t words = ceilDiv(k, p);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c)
        out.codes[size_t(r * k + c)] =
            int32_t(field(*t.codes, r * words + c / p, c % p, b)) - shift;
    break;
  }
  case Storage::Float8E4M3:
    for (int64_t i = 0; i < n * k; ++i) {
      const int32_t q = int32_t(uint8_t(byteAt(*t.codes, i)));
      if ((q & 0x7f) == 0x7f) // S.1111.111: E4M3's NaN names no weight
        return makeError(module, ".", names.codes, "[", i / k, ", ", i % k,
                         "] = 0x", q == 0x7f ? "7f" : "ff",
                         " is NaN in E4M3; expected a finite value");
      out.codes[size_t(i)] = q;
    }
    break;
  case Storage::Int8:
    for (int64_t i = 0; i < n * k; ++i) {
      int32_t q = byteAt(*t.codes, i);
      if (q < -offset || q >= offset)
        return makeError(module, ".", names.codes, "[", i / k, ", ", i % k,
                         "] = ", q, " is outside the ", b, "-bit range [",
                         -offset, ", ", offset - 1, "]");
      out.codes[size_t(i)] = q;
    }
    break;
  }

  // Scales in the logical qparam order: [N, groups], [N] or [1]; an FP8
  // per-tensor scale once per row, an FP8 block's once per row of it.
  const bool transposed = s.method == Method::GPTQ || s.method == Method::AWQ;
  const bool repeated = isFP8(s) && s.groupSize < 0;
  const int64_t count = s.groupSize < 0 && !repeated ? 1 : n * groups;
  out.scales.resize(size_t(count));
  for (int64_t i = 0; i < count; ++i) {
    int64_t row = i / groups, g = i % groups;
    float v = safetensors::floatAt(
        *t.scales, repeated          ? 0
                   : s.blockRows > 0 ? (row / s.blockRows) * groups + g
                   : transposed      ? g * n + row
                                     : i);
    if (!std::isfinite(v))
      return makeError(module, ".", names.scales, ": the scale of row ", row,
                       ", group ", g, " is not finite");
    out.scales[size_t(i)] = v;
  }

  // Zero-points, one per scale, in the codes' domain.
  auto zeroAt = [&](int64_t row, int64_t g) -> int32_t {
    switch (s.method) {
    case Method::GPTQ:
      return int32_t(field(*t.zeros, g * (n / p) + row / p, row % p, b)) +
             (s.zeroMinusOne ? 1 : 0);
    case Method::AWQ: {
      int64_t slot = 0;
      while (kAWQOrder[slot] != row % 8)
        ++slot;
      return int32_t(field(*t.zeros, g * (n / 8) + row / 8, slot, b));
    }
    case Method::FineGrainedFP8: // symmetric: never asked
    case Method::CompressedTensors:
      if (isPacked(s) && s.groupSize >= 0)
        return int32_t(field(*t.zeros, (row / p) * groups + g, row % p, b));
      return int32_t(byteAt(*t.zeros, s.groupSize < 0 ? 0 : row * groups + g)) +
             (isPacked(s) ? offset : 0);
    }
    return 0;
  };
  if (!s.symmetric) {
    out.zeros.resize(size_t(count));
    for (int64_t i = 0; i < count; ++i)
      out.zeros[size_t(i)] = zeroAt(i / groups, i % groups);
  } else if (impliedZero(s)) {
    out.zeros.assign(size_t(count), offset);
  }
  if (s.symmetric && t.zeros && (s.method == Method::GPTQ || !isPacked(s))) {
    // A symmetric scheme whose zero-points are stored anyway: they must be
    // the ones symmetry implies, or the codes would be misread.
    const int32_t implied = s.method == Method::GPTQ ? offset : 0;
    for (int64_t i = 0; i < count; ++i)
      if (int32_t z = zeroAt(i / groups, i % groups); z != implied)
        return makeError(module, ".", names.zeros, ": row ", i / groups,
                         ", group ", i % groups, " has zero-point ", z,
                         ", but the scheme is symmetric (zero-point ", implied,
                         ")");
  }
  return out;
}
