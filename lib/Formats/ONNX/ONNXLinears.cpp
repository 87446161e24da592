//===- ONNXLinears.cpp - MatMulNBits and DequantizeLinear -> MatMul -------===//
//
// Finds the quantized linears of an ONNX graph in the two forms of ONNX.h,
// checks every attribute and initializer they read, and spells each as a
// descriptor; unpack moves the stored codes out of their bytes.
//
//===----------------------------------------------------------------------===//

#include "ONNXDetail.h"

#include "qtensor/Support/CheckedMath.h"

#include <cmath>
#include <cstring>
#include <set>

using namespace qtensor;
using namespace qtensor::onnxmodel;
using safetensors::DType;
using safetensors::TensorView;

namespace {

constexpr int64_t kMaxDim = int64_t(1) << 31;

std::string nodeName(const ::onnx::NodeProto &n) {
  if (!n.name().empty())
    return n.name();
  return n.output_size() > 0 ? n.output(0) : n.op_type();
}

std::string inputOf(const ::onnx::NodeProto &n, int i) {
  return i < n.input_size() ? n.input(i) : std::string();
}

/// Integer attribute `name` of `n`, or `fallback` when absent (none:
/// required).
Expected<int64_t> intAttribute(const ::onnx::NodeProto &n, const char *name,
                               std::optional<int64_t> fallback,
                               const std::string &context) {
  for (const ::onnx::AttributeProto &a : n.attribute()) {
    if (a.name() != name)
      continue;
    if (a.type() != ::onnx::AttributeProto::INT)
      return makeError(context, ": attribute ", name,
                       " is not an integer (type ", int(a.type()), ")");
    return a.i();
  }
  if (!fallback)
    return makeError(context, ": attribute ", name, " is missing");
  return *fallback;
}

bool isFloat(DType d) {
  return d == DType::F32 || d == DType::F16 || d == DType::BF16;
}

FloatType floatTypeOf(DType d) {
  return d == DType::F16    ? FloatType::F16
         : d == DType::BF16 ? FloatType::BF16
                            : FloatType::F32;
}

/// Element `i` of an integer tensor: bytes, or 4-bit values packed two to
/// a byte, low nibble first; signed (two's complement) or not.
int32_t integerAt(const TensorView &t, int64_t i, unsigned bits,
                  bool isSigned) {
  if (bits == 4) {
    uint8_t byte = t.data[size_t(i / 2)];
    int32_t v = (i % 2) ? byte >> 4 : byte & 15;
    return isSigned ? (v ^ 8) - 8 : v;
  }
  uint8_t byte = t.data[size_t(i)];
  return isSigned ? int32_t(int8_t(byte)) : int32_t(byte);
}

int64_t groupsOf(const QuantizedLinear &l) {
  return l.blockSize > 0
             ? int64_t(ceilDiv(uint64_t(l.k), uint64_t(l.blockSize)))
             : 1;
}

/// Qparams in the logical order: [N, groups], [N] or [1].
int64_t qparamCount(const QuantizedLinear &l) {
  return l.blockSize < 0 ? 1 : l.n * groupsOf(l);
}

/// Where qparam i (logical order) is stored in the scale (and zero-point)
/// tensor.
int64_t storedQparamIndex(const QuantizedLinear &l, int64_t i) {
  if (l.form == QuantizedLinear::Form::MatMulNBits || l.blockSize <= 0)
    return i; // [N, blocks] row-major, [N] or the scalar
  const int64_t groups = groupsOf(l), row = i / groups, g = i % groups;
  return g * l.n + row; // DequantizeLinear blocks: [blocks, N]
}

/// The stored zero-point of qparam i (logical order), before any code
/// offset: MatMulNBits' absent zero-points are 2^(bits-1), DequantizeLinear's
/// are 0.
Expected<int32_t> storedZero(const QuantizedLinear &l, bool storedSigned,
                             int64_t i) {
  if (!l.zeros)
    return l.form == QuantizedLinear::Form::MatMulNBits
               ? int32_t(1) << (l.bits - 1)
               : 0;
  const int64_t at = storedQparamIndex(l, i);
  if (isFloat(l.zeros->dtype)) {
    float z = safetensors::floatAt(*l.zeros, at);
    if (!(z >= 0 && z < float(1u << l.bits)) || z != std::floor(z))
      return makeError(l.node, ": zero-point ", i, " is ", z,
                       "; only integer zero-points in [0, ", 1u << l.bits,
                       ") are read");
    return int32_t(z);
  }
  if (l.form == QuantizedLinear::Form::MatMulNBits) {
    const int64_t groups = groupsOf(l), row = i / groups, g = i % groups;
    const int64_t perRow = int64_t(ceilDiv(uint64_t(groups) * l.bits, 8)),
                  bit = g * l.bits;
    uint8_t byte = l.zeros->data[size_t(row * perRow + bit / 8)];
    return int32_t(byte >> (bit % 8)) & ((1 << l.bits) - 1);
  }
  return integerAt(*l.zeros, at, l.bits, storedSigned);
}

} // namespace

namespace qtensor::onnxmodel {
namespace {

/// What the graph says about one value: the initializer of that name, and
/// the node producing it.
struct GraphIndex {
  std::map<std::string, const ::onnx::TensorProto *> initializers;
  std::map<std::string, const ::onnx::NodeProto *> producers;
};

class LinearFinder {
public:
  LinearFinder(const std::string &file, Model::State &state,
               const GraphIndex &graph)
      : file(file), state(state), graph(graph) {}

  std::set<std::string> read; ///< initializers the linears read

  Expected<QuantizedLinear> matMulNBits(const ::onnx::NodeProto &n);
  Expected<std::optional<QuantizedLinear>>
  dequantizeMatMul(const ::onnx::NodeProto &n);

private:
  /// The initializer feeding input `role` (`name`) of the node `context`.
  Expected<const TensorView *> initializer(const std::string &name,
                                           const char *role,
                                           const std::string &context) {
    auto it = graph.initializers.find(name);
    if (it == graph.initializers.end())
      return makeError(context, ": input ", role, " (", name,
                       ") is not an initializer: a weight computed in the "
                       "graph is not compiled");
    read.insert(name);
    return state.view(*it->second, context);
  }

  /// Decides the code the descriptor names and fills it in, reading every
  /// zero-point (ONNX.h: symmetric when they are all the symmetric value).
  Status describe(QuantizedLinear &l, bool storedSigned,
                  const std::string &context);

  const std::string &file;
  Model::State &state;
  const GraphIndex &graph;
};

Status LinearFinder::describe(QuantizedLinear &l, bool storedSigned,
                              const std::string &context) {
  const int32_t half = int32_t(1) << (l.bits - 1);
  const int32_t symmetricZero = storedSigned ? 0 : half;
  bool symmetric = true;
  for (int64_t i = 0; i < qparamCount(l) && symmetric; ++i) {
    QTENSOR_ASSIGN_OR_RETURN(int32_t z, storedZero(l, storedSigned, i));
    symmetric = z == symmetricZero;
  }
  QuantizedTensorDescriptor &out = l.descriptor;
  out.shape = {l.n, l.k};
  out.elementType = FloatType::F16;
  AffineDescriptor &d = out.descriptor;
  d.code.bits = l.bits;
  // A symmetric code is signed: two's complement as stored (int8), or
  // offset binary for 4 bits (q - 8: ggml Q4_0's form, which the kernels
  // read; the integers are the same, only their spelling differs). Other
  // unsigned widths keep their implied zero-point 2^(bits-1) as integers.
  const bool offsetBinary = symmetric && l.bits == 4;
  const bool signedCode = offsetBinary || (storedSigned && symmetric);
  const bool integerZeros = !signedCode;
  d.code.isSigned = signedCode || storedSigned;
  d.encoding = offsetBinary ? SignedEncoding::OffsetBinary
                            : SignedEncoding::TwosComplement;
  d.scheme = integerZeros ? QuantScheme::Asymmetric : QuantScheme::Symmetric;
  d.zeroPoint = integerZeros ? ZeroPointKind::Integer : ZeroPointKind::None;
  if (l.blockSize > 0) {
    d.granularity = Granularity::Group;
    d.axis = 1;
    d.groupSize = l.blockSize;
    d.tail = TailRule::Partial;
  } else if (l.blockSize == 0) {
    d.granularity = Granularity::PerAxis;
    d.axis = 0;
  } else {
    d.granularity = Granularity::PerTensor;
  }
  d.scaleType = floatTypeOf(l.scales->dtype);
  if (Status s = verifyTensorDescriptor(out); !s)
    return makeError(
        context, ": its quantization has no descriptor here: ", s.message());
  l.storedSigned = storedSigned;
  return Status::ok();
}

Expected<QuantizedLinear>
LinearFinder::matMulNBits(const ::onnx::NodeProto &n) {
  const std::string context = file + ": node " + nodeName(n) + " (MatMulNBits)";
  QuantizedLinear l;
  l.form = QuantizedLinear::Form::MatMulNBits;
  l.node = nodeName(n);
  QTENSOR_ASSIGN_OR_RETURN(l.k, intAttribute(n, "K", std::nullopt, context));
  QTENSOR_ASSIGN_OR_RETURN(l.n, intAttribute(n, "N", std::nullopt, context));
  QTENSOR_ASSIGN_OR_RETURN(int64_t bits,
                           intAttribute(n, "bits", int64_t(4), context));
  QTENSOR_ASSIGN_OR_RETURN(
      l.blockSize, intAttribute(n, "block_size", std::nullopt, context));
  if (l.k < 1 || l.k > kMaxDim || l.n < 1 || l.n > kMaxDim)
    return makeError(context, ": K = ", l.k, ", N = ", l.n,
                     " (each must be in [1, 2^31])");
  if (bits != 2 && bits != 4 && bits != 8)
    return makeError(context, ": bits = ", bits,
                     " is not read (2-, 4- and 8-bit codes are)");
  l.bits = unsigned(bits);
  if (l.blockSize < 16 || l.blockSize > 65536 ||
      (l.blockSize & (l.blockSize - 1)))
    return makeError(context, ": block_size = ", l.blockSize,
                     " (expected a power of two, at least 16)");
  if (n.output_size() < 1 || n.input_size() < 3)
    return makeError(context, ": expected inputs A, B, scales and output Y");
  l.input = n.input(0);
  l.output = n.output(0);
  if (!inputOf(n, 4).empty())
    return makeError(context, ": input g_idx (", inputOf(n, 4),
                     ", MatMulNBits' deprecated act-order form) is not read");

  const int64_t blocks = int64_t(ceilDiv(uint64_t(l.k), uint64_t(l.blockSize)));
  const int64_t blob = l.blockSize * int64_t(l.bits) / 8;
  l.weight = n.input(1);
  QTENSOR_ASSIGN_OR_RETURN(l.codes, initializer(n.input(1), "B", context));
  if (l.codes->dtype != DType::U8 ||
      l.codes->shape != std::vector<int64_t>{l.n, blocks, blob} ||
      l.codes->byteSize() != uint64_t(l.n * blocks * blob))
    return makeError(context, ": B (", l.weight, ") is ",
                     safetensors::dtypeName(l.codes->dtype), " ",
                     shapeToString(l.codes->shape), ", expected uint8 [", l.n,
                     ", ", blocks, ", ", blob, "] for K = ", l.k,
                     ", block_size = ", l.blockSize, ", bits = ", l.bits);

  auto expectQparams = [&](const TensorView *t, const char *role,
                           int64_t perRow) -> Status {
    std::vector<int64_t> flat = {l.n * perRow}, rows = {l.n, perRow};
    if (t->shape != flat && t->shape != rows)
      return makeError(context, ": ", role, " (", t->name, ") is ",
                       shapeToString(t->shape), ", expected ",
                       shapeToString(rows), " or ", shapeToString(flat));
    return Status::ok();
  };
  QTENSOR_ASSIGN_OR_RETURN(l.scales,
                           initializer(n.input(2), "scales", context));
  if (!isFloat(l.scales->dtype))
    return makeError(context, ": scales (", l.scales->name, ") is ",
                     safetensors::dtypeName(l.scales->dtype),
                     ", expected float, float16 or bfloat16");
  QTENSOR_TRY(expectQparams(l.scales, "scales", blocks));
  if (std::string z = inputOf(n, 3); !z.empty()) {
    QTENSOR_ASSIGN_OR_RETURN(l.zeros, initializer(z, "zero_points", context));
    if (l.zeros->dtype == DType::U8) {
      QTENSOR_TRY(
          expectQparams(l.zeros, "zero_points",
                        int64_t(ceilDiv(uint64_t(blocks) * l.bits, 8))));
    } else if (l.zeros->dtype == l.scales->dtype) {
      QTENSOR_TRY(expectQparams(l.zeros, "zero_points", blocks));
    } else {
      return makeError(context, ": zero_points (", z, ") is ",
                       safetensors::dtypeName(l.zeros->dtype),
                       ", expected uint8 or the scales' type");
    }
  }
  if (std::string b = inputOf(n, 5); !b.empty()) {
    QTENSOR_ASSIGN_OR_RETURN(l.bias, initializer(b, "bias", context));
    if (!isFloat(l.bias->dtype) || l.bias->shape != std::vector<int64_t>{l.n})
      return makeError(context, ": bias (", b, ") is ",
                       safetensors::dtypeName(l.bias->dtype), " ",
                       shapeToString(l.bias->shape), ", expected a float [",
                       l.n, "]");
  }
  l.storedType = "ONNX_MATMULNBITS_UINT" + std::to_string(l.bits);
  QTENSOR_TRY(describe(l, /*storedSigned=*/false, context));
  return l;
}

Expected<std::optional<QuantizedLinear>>
LinearFinder::dequantizeMatMul(const ::onnx::NodeProto &n) {
  if (n.input_size() != 2 || n.output_size() != 1)
    return std::optional<QuantizedLinear>();
  auto producer = graph.producers.find(n.input(1));
  if (producer == graph.producers.end() ||
      producer->second->op_type() != "DequantizeLinear")
    return std::optional<QuantizedLinear>(); // a float MatMul: not ours
  const ::onnx::NodeProto &dq = *producer->second;
  const std::string context = file + ": node " + nodeName(dq) +
                              " (DequantizeLinear, read by MatMul " +
                              nodeName(n) + ")";
  if (dq.input_size() < 2 || !graph.initializers.count(dq.input(0)))
    return std::optional<QuantizedLinear>(); // activations, not a weight
  QuantizedLinear l;
  l.form = QuantizedLinear::Form::DequantizeMatMul;
  l.node = nodeName(n);
  l.input = n.input(0);
  l.output = n.output(0);
  l.weight = dq.input(0);
  QTENSOR_ASSIGN_OR_RETURN(l.codes, initializer(dq.input(0), "x", context));
  const ::onnx::TensorProto &w = *graph.initializers.at(dq.input(0));
  QTENSOR_ASSIGN_OR_RETURN(TensorKind kind, kindOf(w.data_type()));
  bool storedSigned = kind.dtype == DType::I8;
  if (kind.dtype != DType::I8 && kind.dtype != DType::U8)
    return makeError(context, ": the weight ", l.weight, " is ",
                     safetensors::dtypeName(kind.dtype),
                     ", expected int4, uint4, int8 or uint8");
  l.bits = kind.nibbles ? 4 : 8;
  if (l.codes->shape.size() != 2)
    return makeError(context, ": the weight ", l.weight, " is ",
                     shapeToString(l.codes->shape),
                     "; a MatMul weight is 2-D [K, N]");
  l.k = l.codes->shape[0];
  l.n = l.codes->shape[1];
  if (l.k < 1 || l.k > kMaxDim || l.n < 1 || l.n > kMaxDim)
    return makeError(context, ": the weight ", l.weight, " is ",
                     shapeToString(l.codes->shape),
                     " (each dimension in [1, 2^31])");
  QTENSOR_ASSIGN_OR_RETURN(int64_t axis,
                           intAttribute(dq, "axis", int64_t(1), context));
  QTENSOR_ASSIGN_OR_RETURN(int64_t block,
                           intAttribute(dq, "block_size", int64_t(0), context));
  if (axis < 0)
    axis += 2;
  QTENSOR_ASSIGN_OR_RETURN(l.scales,
                           initializer(dq.input(1), "x_scale", context));
  if (!isFloat(l.scales->dtype))
    return makeError(context, ": x_scale (", l.scales->name, ") is ",
                     safetensors::dtypeName(l.scales->dtype),
                     ", expected float, float16 or bfloat16");
  const std::vector<int64_t> &s = l.scales->shape;
  const bool scalar = s.empty() || s == std::vector<int64_t>{1};
  if (block > 0 && axis == 0 &&
      s == std::vector<int64_t>{
               int64_t(ceilDiv(uint64_t(l.k), uint64_t(block))), l.n}) {
    l.blockSize = block;
  } else if (block == 0 && axis == 1 && s == std::vector<int64_t>{l.n}) {
    l.blockSize = 0;
  } else if (block == 0 && scalar) {
    l.blockSize = -1;
  } else {
    return makeError(context, ": axis ", axis, ", block_size ", block,
                     " and x_scale ", shapeToString(s), " over the weight ",
                     shapeToString(l.codes->shape),
                     ": only blocks along K (axis 0, x_scale [ceil(K/bs), "
                     "N]), one scale per output channel (axis 1, [N]) or "
                     "one per tensor are read");
  }
  if (std::string z = inputOf(dq, 2); !z.empty()) {
    QTENSOR_ASSIGN_OR_RETURN(l.zeros, initializer(z, "x_zero_point", context));
    const ::onnx::TensorProto &zt = *graph.initializers.at(z);
    if (zt.data_type() != w.data_type() || l.zeros->shape != s)
      return makeError(context, ": x_zero_point (", z,
                       ") must have the weight's type and x_scale's shape ",
                       shapeToString(s), ", got type ", zt.data_type(), " ",
                       shapeToString(l.zeros->shape));
  }
  static const char *kNames[2][2] = {{"UINT8", "INT8"}, {"UINT4", "INT4"}};
  l.storedType = std::string("ONNX_QDQ_") + kNames[kind.nibbles][storedSigned];
  QTENSOR_TRY(describe(l, storedSigned, context));
  return std::optional<QuantizedLinear>(std::move(l));
}

} // namespace

Status Model::findLinears() {
  const ::onnx::GraphProto &g = state->model->graph();
  GraphIndex graph;
  for (const ::onnx::TensorProto &t : g.initializer()) {
    if (t.name().empty())
      return makeError(file, ": an initializer has no name");
    if (!graph.initializers.emplace(t.name(), &t).second)
      return makeError(file, ": initializer ", t.name(), " is defined twice");
  }
  for (const ::onnx::NodeProto &n : g.node())
    for (const std::string &out : n.output())
      if (!out.empty() && !graph.producers.emplace(out, &n).second)
        return makeError(file, ": value ", out, " is produced twice");

  LinearFinder finder(file, *state, graph);
  std::set<std::string> weights;
  auto add = [&](QuantizedLinear l) -> Status {
    if (!weights.insert(l.weight).second)
      return makeError(file, ": the quantized weight ", l.weight,
                       " is read by more than one node; each is compiled "
                       "once, as one linear");
    found.push_back(std::move(l));
    return Status::ok();
  };
  for (const ::onnx::NodeProto &n : g.node()) {
    if (n.op_type() == "MatMulNBits" && n.domain() == "com.microsoft") {
      QTENSOR_ASSIGN_OR_RETURN(QuantizedLinear l, finder.matMulNBits(n));
      QTENSOR_TRY(add(std::move(l)));
    } else if (n.op_type() == "MatMul" &&
               (n.domain().empty() || n.domain() == "ai.onnx")) {
      QTENSOR_ASSIGN_OR_RETURN(std::optional<QuantizedLinear> l,
                               finder.dequantizeMatMul(n));
      if (l)
        QTENSOR_TRY(add(std::move(*l)));
    }
  }
  for (const ::onnx::TensorProto &t : g.initializer())
    if (!finder.read.count(t.name()))
      others.push_back(t.name());
  return Status::ok();
}

} // namespace qtensor::onnxmodel

Expected<hfquant::LogicalParts> onnxmodel::unpack(const QuantizedLinear &l) {
  const int64_t n = l.n, k = l.k;
  const AffineDescriptor &d = l.descriptor.descriptor;
  // Unsigned codes read as the signed offset-binary code they are.
  const int32_t shift =
      (!l.storedSigned && d.code.isSigned) ? int32_t(1) << (l.bits - 1) : 0;
  hfquant::LogicalParts out;
  out.codes.resize(size_t(n) * size_t(k));
  if (l.form == QuantizedLinear::Form::MatMulNBits) {
    const int64_t blocks = groupsOf(l);
    const int64_t blob = l.blockSize * int64_t(l.bits) / 8;
    const int32_t mask = (1 << l.bits) - 1;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c) {
        const int64_t bit = (c % l.blockSize) * int64_t(l.bits);
        uint8_t byte =
            l.codes
                ->data[size_t((r * blocks + c / l.blockSize) * blob + bit / 8)];
        out.codes[size_t(r * k + c)] =
            (int32_t(byte >> (bit % 8)) & mask) - shift;
      }
  } else {
    // W [K, N]: element (c, r) is code (r, c) of W^T.
    for (int64_t c = 0; c < k; ++c)
      for (int64_t r = 0; r < n; ++r)
        out.codes[size_t(r * k + c)] =
            integerAt(*l.codes, c * n + r, l.bits, l.storedSigned) - shift;
  }
  const int64_t count = qparamCount(l);
  out.scales.resize(size_t(count));
  for (int64_t i = 0; i < count; ++i) {
    float v = safetensors::floatAt(*l.scales, storedQparamIndex(l, i));
    if (!std::isfinite(v))
      return makeError(l.node, ": scale ", i, " of ", l.scales->name,
                       " is not finite");
    out.scales[size_t(i)] = v;
  }
  if (d.zeroPoint == ZeroPointKind::Integer) {
    out.zeros.resize(size_t(count));
    for (int64_t i = 0; i < count; ++i) {
      QTENSOR_ASSIGN_OR_RETURN(out.zeros[size_t(i)],
                               storedZero(l, l.storedSigned, i));
    }
  }
  return out;
}
